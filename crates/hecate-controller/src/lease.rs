//! Leader election with a `coordination.k8s.io` Lease: of several replicas, exactly one
//! runs the controllers; when it goes, another takes over once the Lease expires (or at
//! once, when the leader stops cleanly and hands the Lease back).
//!
//! The protocol is client-go's:
//!
//! - The holder renews `renewTime` every retry period. Each renewal is bounded: if the
//!   leader has not renewed within the renew deadline since its last success (an
//!   attempt that hangs is cut off there), it stops leading, and the process exits.
//! - Expiry is judged by each candidate on its own monotonic clock, from when *it* last
//!   saw the record change ([`Observer`]): a Lease is taken only once it has stayed the
//!   same for `leaseDurationSeconds`. The holder's `renewTime` is written for people
//!   and never compared with the local clock, so clock skew between replicas cannot
//!   hand a Lease out early.
//! - Every write carries the resourceVersion it read, so of two candidates taking an
//!   expired Lease at once the API server accepts exactly one (DECISION 49: no
//!   maintained crate supports our kube version, and the one closest to it takes over
//!   with an unguarded merge patch, which lets two replicas lead at once).
//! - [`Leadership`] is the fence (DECISION 112): "leading until" the start of the last
//!   successful renewal plus the renew deadline, which the passage engine asks
//!   immediately before each step's side effects. A leader frozen (`SIGSTOP`, a long
//!   pause) past its Lease runs no further step when it wakes.
//!
//! [`Observer::decide`] is the pure rule and [`hold`] the leader's loop; [`Elector`]
//! does the reads and writes.

use std::fmt::Display;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;

/// Timings, with controller-runtime's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timings {
    /// How long a Lease holds without renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading.
    pub renew_deadline: Duration,
    /// How often candidates try, and the leader renews.
    pub retry_period: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl Timings {
    /// Whether these timings can keep one leader (client-go's rules): the renew
    /// deadline shorter than the Lease — the difference is the margin by which a
    /// leader stops before anyone may take over — and longer than the retry period.
    pub fn check(&self) -> Result<(), String> {
        if self.renew_deadline >= self.lease_duration {
            return Err(format!(
                "the leader election renew deadline ({:?}) must be shorter than the lease duration ({:?})",
                self.renew_deadline, self.lease_duration
            ));
        }
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(format!(
                "the leader election retry period ({:?}) must be positive and shorter than the renew deadline ({:?})",
                self.retry_period, self.renew_deadline
            ));
        }
        Ok(())
    }
}

/// What a candidate does with the Lease it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// There is none: create it, held by us.
    Create,
    /// We hold it: renew it.
    Renew,
    /// It expired (or was handed back): take it.
    Take,
    /// Someone else holds it.
    Wait {
        /// Who.
        holder: String,
    },
}

/// The Lease as one candidate last read it: everything but the metadata that changes
/// by itself, and the resourceVersion (any write changes it).
#[derive(Clone, Debug, PartialEq)]
struct Record {
    spec: Option<LeaseSpec>,
    resource_version: Option<String>,
}

/// What one candidate has seen of the Lease: the record, and when it first saw it as it
/// is, on this process's monotonic clock (client-go's `observedRecord` and
/// `observedTime`).
#[derive(Clone, Debug, Default)]
pub struct Observer {
    seen: Option<(Record, Instant)>,
}

impl Observer {
    /// What `me` does with `lease`, read at `now`. A Lease held by another expires
    /// `leaseDurationSeconds` after this candidate first saw its record as it is now: a
    /// renewal (or any other write) restarts the count, and `renewTime` itself is never
    /// compared with the local clock.
    pub fn decide(&mut self, lease: Option<&Lease>, me: &str, now: Instant) -> Step {
        let Some(lease) = lease else {
            self.seen = None;
            return Step::Create;
        };
        let record = Record {
            spec: lease.spec.clone(),
            resource_version: lease.metadata.resource_version.clone(),
        };
        let since = match &self.seen {
            Some((seen, at)) if *seen == record => *at,
            _ => now,
        };
        let spec = record.spec.clone().unwrap_or_default();
        self.seen = Some((record, since));
        let holder = spec.holder_identity.unwrap_or_default();
        if holder.is_empty() {
            return Step::Take;
        }
        if holder == me {
            return Step::Renew;
        }
        let duration = u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0);
        match since.checked_add(Duration::from_secs(duration)) {
            Some(expires) if now >= expires => Step::Take,
            _ => Step::Wait { holder },
        }
    }
}

/// Whether this replica may act now: the passage engine asks immediately before each
/// step's side effects (DECISION 112). Without leader election it always may. With it,
/// it may until the start of its last successful renewal plus the renew deadline, on
/// the monotonic clock — which passes before any other candidate can see the Lease as
/// expired (those wait a whole Lease from when they saw that renewal).
#[derive(Clone, Debug, Default)]
pub struct Leadership(Option<watch::Receiver<Option<Instant>>>);

impl Leadership {
    /// Always leads: no election, one replica.
    pub fn unelected() -> Self {
        Self(None)
    }

    /// Leads while the instant `until` holds is in the future (`None`: not leading).
    pub fn new(until: watch::Receiver<Option<Instant>>) -> Self {
        Self(Some(until))
    }

    /// Whether this replica leads now.
    pub fn leads(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|until| until.borrow().is_some_and(|until| Instant::now() < until))
    }
}

/// The steps' fence: a step's side effects happen only while this replica leads.
impl hecate_steps::engine::Fence for Leadership {
    fn holds(&self, _: &str) -> bool {
        self.leads()
    }
}

/// The leader's loop: every retry period, one renewal `attempt`, cut off at the renew
/// deadline since the last success. A success (begun at `t`) publishes "leading until
/// `t` + renew deadline" in `leading`; the loop ends — publishing `None` — when the
/// Lease is someone else's (`Ok(false)`) or that deadline passes without a success.
/// `leading` holds the deadline of the success that made us leader when it starts.
pub async fn hold<F, Fut, E>(
    timings: Timings,
    leading: &watch::Sender<Option<Instant>>,
    mut attempt: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<bool, E>>,
    E: Display,
{
    loop {
        tokio::time::sleep(timings.retry_period).await;
        let Some(until) = *leading.borrow() else {
            break;
        };
        let started = Instant::now();
        if started >= until {
            tracing::warn!("the leader Lease was not renewed within the renew deadline");
            break;
        }
        match tokio::time::timeout(until - started, attempt()).await {
            Ok(Ok(true)) => {
                leading.send_replace(Some(started + timings.renew_deadline));
            }
            Ok(Ok(false)) => {
                tracing::warn!("the leader Lease is held by another replica");
                break;
            }
            Ok(Err(error)) => tracing::warn!(%error, "could not renew the leader Lease"),
            Err(_) => {
                tracing::warn!(
                    "renewing the leader Lease did not finish within the renew deadline"
                );
                break;
            }
        }
    }
    leading.send_replace(None);
}

/// Reads and writes one Lease as one candidate.
pub struct Elector {
    api: Api<Lease>,
    name: String,
    identity: String,
    timings: Timings,
    observer: Mutex<Observer>,
    leading: watch::Sender<Option<Instant>>,
}

impl Elector {
    /// Candidate `identity` for Lease `namespace/name`.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: &str,
        timings: Timings,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            timings,
            observer: Mutex::default(),
            leading: watch::Sender::new(None),
        }
    }

    /// Whether this candidate leads now, for the passage engine to ask.
    pub fn leadership(&self) -> Leadership {
        Leadership::new(self.leading.subscribe())
    }

    /// One attempt to acquire or renew; whether we hold the Lease afterwards.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let current = self.api.get_opt(&self.name).await?;
        let step = self
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .decide(current.as_ref(), &self.identity, Instant::now());
        // Written for people (and the reference's tools); no candidate judges by it.
        let now = Timestamp::now();
        let seconds = i32::try_from(self.timings.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let result = match (step, current) {
            (Step::Wait { .. }, _) => return Ok(false),
            (Step::Create, _) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.identity.clone()),
                        lease_duration_seconds: Some(seconds),
                        acquire_time: Some(MicroTime(now)),
                        renew_time: Some(MicroTime(now)),
                        lease_transitions: Some(0),
                        ..LeaseSpec::default()
                    }),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            (step, Some(mut lease)) => {
                let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
                if step == Step::Take {
                    spec.holder_identity = Some(self.identity.clone());
                    spec.acquire_time = Some(MicroTime(now));
                    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
                }
                spec.renew_time = Some(MicroTime(now));
                spec.lease_duration_seconds = Some(seconds);
                // Carries the resourceVersion read above: a concurrent taker loses.
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
            (_, None) => return Ok(false),
        };
        match result {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Hands the Lease back if we hold it, so another candidate takes it at once.
    pub async fn release(&self) -> Result<(), kube::Error> {
        self.leading.send_replace(None);
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Waits until this candidate holds the Lease; leads from then until the renew
    /// deadline (each attempt is cut off there too).
    pub async fn acquire(&self) {
        loop {
            let started = Instant::now();
            let attempt =
                tokio::time::timeout(self.timings.renew_deadline, self.try_acquire_or_renew());
            match attempt.await {
                Ok(Ok(true)) => {
                    self.leading
                        .send_replace(Some(started + self.timings.renew_deadline));
                    return;
                }
                Ok(Ok(false)) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, lease = %self.name, "could not read or write the leader Lease")
                }
                Err(_) => {
                    tracing::warn!(lease = %self.name, "reading or writing the leader Lease took too long")
                }
            }
            tokio::time::sleep(self.timings.retry_period).await;
        }
    }

    /// Renews the Lease every retry period ([`hold`]); returns when leadership is lost
    /// (the Lease taken by another, or not renewed within the renew deadline).
    pub async fn keep(&self) {
        hold(self.timings, &self.leading, || self.try_acquire_or_renew()).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use jiff::SignedDuration;

    use super::*;

    fn lease(holder: &str, renewed: Timestamp, seconds: i32, version: &str) -> Lease {
        Lease {
            metadata: ObjectMeta {
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: (!holder.is_empty()).then(|| holder.to_string()),
                renew_time: Some(MicroTime(renewed)),
                lease_duration_seconds: Some(seconds),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn the_lease_rule() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let renewed = Timestamp::now();
        let mut a = Observer::default();
        assert_eq!(a.decide(None, "a", t0), Step::Create);
        assert_eq!(
            a.decide(Some(&lease("a", renewed, 15, "1")), "a", at(100)),
            Step::Renew
        );
        // Handed back: free at once, whatever the times say.
        let mut a = Observer::default();
        assert_eq!(
            a.decide(Some(&lease("", renewed, 15, "1")), "a", t0),
            Step::Take
        );
        // Held by b: taken a whole Lease after a first saw it as it is.
        let mut a = Observer::default();
        let held = lease("b", renewed, 15, "1");
        let wait = Step::Wait { holder: "b".into() };
        assert_eq!(a.decide(Some(&held), "a", t0), wait);
        assert_eq!(a.decide(Some(&held), "a", at(14)), wait);
        assert_eq!(a.decide(Some(&held), "a", at(15)), Step::Take);
        // A Lease nobody ever renewed is judged the same way.
        let mut never = held.clone();
        never.spec.as_mut().unwrap().renew_time = None;
        let mut a = Observer::default();
        assert_eq!(a.decide(Some(&never), "a", t0), wait);
        assert_eq!(a.decide(Some(&never), "a", at(15)), Step::Take);
    }

    #[test]
    fn expiry_counts_from_when_this_candidate_saw_the_record_change() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let wait = Step::Wait { holder: "b".into() };
        // b's clock is an hour behind ours: its renewTime looks long expired, but we
        // have just seen it renewed, so it holds for a whole Lease from now.
        let an_hour_ago = Timestamp::now() - SignedDuration::from_hours(1);
        let mut a = Observer::default();
        let skewed = lease("b", an_hour_ago, 15, "7");
        assert_eq!(a.decide(Some(&skewed), "a", t0), wait);
        assert_eq!(a.decide(Some(&skewed), "a", at(14)), wait);
        // b renews (a new renewTime, a new resourceVersion) at 10 s: the count restarts.
        let renewed = lease("b", an_hour_ago + SignedDuration::from_secs(10), 15, "8");
        assert_eq!(a.decide(Some(&renewed), "a", at(10)), wait);
        assert_eq!(a.decide(Some(&renewed), "a", at(24)), wait);
        assert_eq!(a.decide(Some(&renewed), "a", at(25)), Step::Take);
        // Any write counts as a change, even one that keeps renewTime (its clock may
        // have stood still): only the resourceVersion moved.
        let mut a = Observer::default();
        assert_eq!(a.decide(Some(&skewed), "a", t0), wait);
        let rewritten = lease("b", an_hour_ago, 15, "9");
        assert_eq!(a.decide(Some(&rewritten), "a", at(14)), wait);
        assert_eq!(a.decide(Some(&rewritten), "a", at(28)), wait);
        assert_eq!(a.decide(Some(&rewritten), "a", at(29)), Step::Take);
        // And a renewTime in the future (b's clock ahead) does not hold it longer.
        let ahead = lease(
            "b",
            Timestamp::now() + SignedDuration::from_hours(1),
            15,
            "3",
        );
        let mut a = Observer::default();
        assert_eq!(a.decide(Some(&ahead), "a", t0), wait);
        assert_eq!(a.decide(Some(&ahead), "a", at(15)), Step::Take);
        // A Lease deleted and recreated is new.
        assert_eq!(a.decide(None, "a", at(16)), Step::Create);
        assert_eq!(a.decide(Some(&ahead), "a", at(17)), wait);
    }

    #[test]
    fn timings_must_leave_a_margin() {
        assert_eq!(Timings::default().check(), Ok(()));
        let t = |lease, renew, retry| Timings {
            lease_duration: Duration::from_millis(lease),
            renew_deadline: Duration::from_millis(renew),
            retry_period: Duration::from_millis(retry),
        };
        assert_eq!(t(4000, 3000, 250).check(), Ok(()));
        assert!(t(4000, 4000, 250).check().is_err());
        assert!(t(4000, 3000, 3000).check().is_err());
        assert!(t(4000, 3000, 0).check().is_err());
    }

    const TIMINGS: Timings = Timings {
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
    };

    /// Leading as a fresh acquisition leaves it: until the renew deadline from now.
    fn leading() -> (watch::Sender<Option<Instant>>, Leadership) {
        let (send, receive) = watch::channel(Some(Instant::now() + TIMINGS.renew_deadline));
        (send, Leadership::new(receive))
    }

    #[tokio::test(start_paused = true)]
    async fn a_renewal_that_hangs_is_cut_off_at_the_renew_deadline() {
        let (send, leadership) = leading();
        let start = Instant::now();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        // Three renewals succeed (at 2, 4 and 6 s), then the API server never answers.
        hold(TIMINGS, &send, move || {
            let n = counted.fetch_add(1, Ordering::Relaxed);
            async move {
                if n >= 3 {
                    std::future::pending::<()>().await;
                }
                Ok::<_, String>(true)
            }
        })
        .await;
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        // The last success began at 6 s: not leading from 16 s, and not a moment later.
        assert_eq!(start.elapsed(), Duration::from_secs(16));
        assert!(!leadership.leads());
        assert_eq!(*send.borrow(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn failing_renewals_end_leadership_at_the_renew_deadline() {
        let (send, leadership) = leading();
        let start = Instant::now();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let seen = leadership.clone();
        // Every renewal fails at once (the API server refuses): tried every retry
        // period, leading all the while until the deadline, then no longer.
        hold(TIMINGS, &send, move || {
            counted.fetch_add(1, Ordering::Relaxed);
            assert!(seen.leads(), "leading until the deadline");
            async { Err::<bool, _>("503") }
        })
        .await;
        assert_eq!(calls.load(Ordering::Relaxed), 4, "at 2, 4, 6 and 8 s");
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        assert!(!leadership.leads());
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_taken_by_another_ends_leadership_at_once() {
        let (send, leadership) = leading();
        let start = Instant::now();
        hold(TIMINGS, &send, || async { Ok::<_, String>(false) }).await;
        assert_eq!(start.elapsed(), TIMINGS.retry_period);
        assert!(!leadership.leads());
    }

    #[tokio::test(start_paused = true)]
    async fn leadership_lapses_on_the_monotonic_clock_without_the_loop() {
        // The loop never gets to run (the process frozen, a starved runtime): the
        // deadline alone ends leadership.
        let (_send, leadership) = leading();
        assert!(leadership.leads());
        tokio::time::advance(Duration::from_millis(9_999)).await;
        assert!(leadership.leads());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(!leadership.leads());
        assert!(Leadership::unelected().leads(), "without election, always");
    }
}
