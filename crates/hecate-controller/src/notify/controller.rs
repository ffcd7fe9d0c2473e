//! The notifier's loop: Notifiers watched, and a round whenever a Gate offered
//! something new, a Notifier changed, or [`TICK`] passed (a retry or a reminder
//! falls due).
//!
//! A round gives each Notifier what it hears of the [`Outbox`], asks hecate-ops what
//! is due ([`notice::due`]), sends it (at most [`Notifiers::per_minute`] a minute per
//! Notifier), and writes what became of it to the Notifier's status — one write per
//! Notifier per round, only when something changed. Sending never holds up a Gate:
//! Gates only offer.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::{FutureExt as _, StreamExt as _};
use hecate_ops::model::Notice;
use hecate_ops::rules::notice;
use hecate_steps::clock::Clock;
use hecate_steps::reach::Reach;
use hecate_types::lenient::Lenient;
use hecate_types::{NoticeOutcome, Notifier, NotifierStatus};
use kube::ResourceExt as _;
use kube::api::{Api, PostParams};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt as _, watcher};

use super::outbox::{Listening, Outbox};
use super::render::Links;
use super::send::Destination;
use crate::condition;
use crate::metrics::Metrics;
use crate::scope::{self, Scope};

/// How often a round runs with nothing new: what a retry or a reminder waits on.
pub const TICK: Duration = Duration::from_secs(10);
/// How many Notifiers send at once.
const CONCURRENCY: usize = 8;
/// What gathers before a round starts: a crossing's burst of changes is one round.
const SETTLE: Duration = Duration::from_millis(200);

/// The notifier and what it needs.
#[derive(Clone)]
pub struct Notifiers {
    /// The client it reads Secrets and writes status with.
    pub client: kube::Client,
    /// What Gates offer.
    pub outbox: Outbox,
    /// Where a destination may be (the reach of `http` steps).
    pub reach: Reach,
    /// Where the UI is.
    pub links: Links,
    /// The controller's own namespace: its Notifiers may hear every namespace.
    pub platform: String,
    /// How many notices one Notifier sends a minute, at most.
    pub per_minute: usize,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// When each Notifier's last sends were: its rate limit.
    sent: Arc<Mutex<SentLately>>,
    /// Each Notifier as this process last wrote it. Its status is the record, and
    /// only this loop writes it: the watch may not have brought a write back by the
    /// next round, and a round on the older record would send again what it holds.
    written: Arc<Mutex<HashMap<(String, String), Notifier>>>,
}

/// When each Notifier (namespace, name) sent in the last minute, oldest first.
type SentLately = HashMap<(String, String), VecDeque<Instant>>;

impl Notifiers {
    /// A notifier; [`Notifiers::run`] starts it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: kube::Client,
        outbox: Outbox,
        reach: Reach,
        links: Links,
        platform: String,
        per_minute: usize,
        clock: Arc<dyn Clock>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            client,
            outbox,
            reach,
            links,
            platform,
            per_minute,
            clock,
            metrics,
            sent: Arc::default(),
            written: Arc::default(),
        }
    }

    /// Watches Notifiers over `scope` and runs rounds until `shutdown` completes.
    pub async fn run(self, scope: Scope, shutdown: impl Future<Output = ()> + Send + 'static) {
        let (reader, writer) = reflector::store::<Notifier>();
        let client = self.client.clone();
        let mut changes = scope
            .watch(
                move |namespace| {
                    hecate_ops::lenient::watcher(
                        scope::api::<Lenient<Notifier>>(&client, namespace),
                        watcher::Config::default(),
                        |bad| hecate_ops::lenient::warn("Notifier", bad),
                    )
                },
                reader.clone(),
            )
            .reflect(writer)
            .boxed();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                _ = changes.next() => {},
                () = self.outbox.offered() => {},
                () = tokio::time::sleep(TICK) => {},
            }
            tokio::time::sleep(SETTLE).await;
            // Drain what else changed meanwhile: one round for all of it.
            while let Some(Some(_)) = changes.next().now_or_never() {}
            self.round(reader.state()).await;
        }
    }

    /// One round over `all`, every Notifier there is.
    pub async fn round(&self, all: Vec<Arc<Notifier>>) {
        self.outbox.listen(self.listening(&all));
        // A Notifier deleted is forgotten.
        let present: std::collections::HashSet<(String, String)> = all
            .iter()
            .map(|n| (n.namespace().unwrap_or_default(), n.name_any()))
            .collect();
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|key, _| present.contains(key));
        futures::stream::iter(all)
            .for_each_concurrent(CONCURRENCY, |notifier| async move {
                let notifier = self.newest(notifier);
                if let Err(error) = self.tell(&notifier).await {
                    tracing::warn!(
                        namespace = %notifier.namespace().unwrap_or_default(),
                        notifier = %notifier.name_any(),
                        %error,
                        "could not record what a Notifier sent"
                    );
                }
            })
            .await;
    }

    /// `watched`, or the copy this process wrote last when the watch has not brought
    /// it back yet: the same object (its UID) at a generation no older.
    fn newest(&self, watched: Arc<Notifier>) -> Arc<Notifier> {
        let key = (watched.namespace().unwrap_or_default(), watched.name_any());
        let written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        match written.get(&key) {
            Some(ours)
                if ours.metadata.uid == watched.metadata.uid
                    && ours.metadata.generation >= watched.metadata.generation =>
            {
                Arc::new(ours.clone())
            }
            _ => watched,
        }
    }

    /// The namespaces some Notifier hears.
    fn listening(&self, notifiers: &[Arc<Notifier>]) -> Listening {
        let mut listening = Listening::default();
        for notifier in notifiers.iter().filter(|n| !n.spec.suspend) {
            let namespace = notifier.namespace().unwrap_or_default();
            if notifier.spec.all_namespaces && namespace == self.platform {
                listening.all = true;
            }
            listening.namespaces.insert(namespace);
        }
        listening
    }

    /// Sends what `notifier` has due and records it in its status.
    async fn tell(&self, notifier: &Notifier) -> Result<(), kube::Error> {
        let namespace = notifier.namespace().unwrap_or_default();
        let name = notifier.name_any();
        let now = self.clock.now();
        let before = notifier.status.clone().unwrap_or_default();
        let mut status = before.clone();
        status.observed_generation = notifier.metadata.generation.unwrap_or_default();
        let problem = notice::judge_spec(&notifier.spec, &namespace, &self.platform).err();
        let heard: Vec<Notice> = if problem.is_some() {
            Vec::new()
        } else {
            let from = (!(notifier.spec.all_namespaces && namespace == self.platform))
                .then_some(namespace.as_str());
            self.outbox
                .notices(from)
                .into_iter()
                .filter(|n| notice::hears(&notifier.spec, &namespace, &self.platform, n))
                .collect()
        };
        let created = notifier
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(now, |t| t.0);
        let mut due = notice::due(&notifier.spec, created, &status.deliveries, &heard, now);
        due.truncate(self.budget(&namespace, &name));
        if !due.is_empty() {
            match Destination::of(&self.client, notifier).await {
                Err(why) => {
                    for one in &due {
                        self.settle(&mut status, notifier, one, Err(why.clone()), now);
                    }
                }
                Ok(destination) => {
                    for one in &due {
                        self.spend(&namespace, &name);
                        let sent = destination
                            .send(&self.reach, &self.links, &one.notice, &mut status.threads)
                            .await;
                        self.settle(&mut status, notifier, one, sent, self.clock.now());
                    }
                }
            }
        }
        notice::prune(&mut status.deliveries, &heard, now);
        let ready = notice::ready(problem.as_deref(), &status.deliveries);
        condition::set_ready(
            &mut status.conditions,
            ready.ready,
            ready.reason,
            &ready.message,
            status.observed_generation,
            now,
        );
        if status == before {
            return Ok(());
        }
        self.write(notifier, status).await
    }

    fn settle(
        &self,
        status: &mut NotifierStatus,
        notifier: &Notifier,
        due: &notice::Due,
        sent: Result<(), String>,
        now: jiff::Timestamp,
    ) {
        if let Err(error) = &sent {
            tracing::info!(
                namespace = %notifier.namespace().unwrap_or_default(),
                notifier = %notifier.name_any(),
                key = %due.notice.key,
                %error,
                "a notice was not sent"
            );
        }
        notice::settle(&mut status.deliveries, due, sent, now);
        let outcome = status
            .deliveries
            .iter()
            .find(|r| r.key == due.notice.key)
            .map_or(NoticeOutcome::Failed, |r| r.outcome)
            .as_str()
            .to_ascii_lowercase();
        self.metrics.count_notification(
            &notifier.namespace().unwrap_or_default(),
            &notifier.name_any(),
            due.notice.kind.as_str(),
            &outcome,
        );
    }

    /// Writes `status` over the one `notifier` was read with: a Notifier changed since
    /// is a conflict, and the next round reads it again from the watch (what was sent
    /// meanwhile is sent again under its key — at least once).
    async fn write(&self, notifier: &Notifier, status: NotifierStatus) -> Result<(), kube::Error> {
        let mut written = notifier.clone();
        written.status = Some(status);
        written.metadata.managed_fields = None;
        let namespace = notifier.namespace().unwrap_or_default();
        let key = (namespace.clone(), notifier.name_any());
        let answer = Api::<Notifier>::namespaced(self.client.clone(), &namespace)
            .replace_status(&key.1, &PostParams::default(), &written)
            .await;
        let mut kept = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        match answer {
            Ok(mut stored) => {
                stored.metadata.managed_fields = None;
                kept.insert(key, stored);
                Ok(())
            }
            Err(error) => {
                kept.remove(&key);
                Err(error)
            }
        }
    }

    /// How many notices Notifier `name` may send now: its rate limit less what it
    /// sent in the last minute.
    fn budget(&self, namespace: &str, name: &str) -> usize {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        let times = sent
            .entry((namespace.to_string(), name.to_string()))
            .or_default();
        while times
            .front()
            .is_some_and(|at| at.elapsed() >= Duration::from_secs(60))
        {
            times.pop_front();
        }
        self.per_minute.saturating_sub(times.len())
    }

    fn spend(&self, namespace: &str, name: &str) {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((namespace.to_string(), name.to_string()))
            .or_default()
            .push_back(Instant::now());
    }
}

/// The namespaces `listening` hears that `before` did not: their Gates are looked at
/// again so that what they have to tell is offered at once.
pub fn newly_heard(before: &Listening, now: &Listening) -> Option<BTreeSet<String>> {
    if now.all && !before.all {
        return None;
    }
    Some(
        now.namespaces
            .difference(&before.namespaces)
            .cloned()
            .collect(),
    )
}
