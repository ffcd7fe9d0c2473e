//! The Passage controller's wiring on kube-runtime (spec controller.md §0.5): a Passage
//! wakes when it is created or its spec changes (an abort), never on its own status
//! writes (every step call raises `attempts`: waking on that would spin); a waiting
//! step is asked again after the delay it named, or sooner when the object it waits
//! for changes ([`super::wake`]). Few crossings run at once: a
//! checkout is heavy on a small machine.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use hecate_types::Passage;
use hecate_types::lenient::Lenient;
use kube::ResourceExt as _;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector;
use kube::runtime::watcher::Event;
use kube::runtime::{WatchStreamExt as _, watcher};

use super::{Error, PassageReconciler};
use crate::backoff;
use crate::metrics::Loop;
use crate::predicate;
use crate::scope::{self, Scope};
use crate::unreadable::Unreadable;

/// How many Passages advance at once.
pub const CONCURRENCY: u16 = 4;

/// Runs the Passage controller over the namespaces of `scope` until `shutdown`
/// completes, then lets steps under way finish.
pub async fn run(
    client: kube::Client,
    reconciler: PassageReconciler,
    wakes: super::wake::Wakes,
    scope: Scope,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (reader, writer) = reflector::store::<Passage>();
    // Each object read on its own: one that does not decode is reported and skipped.
    let unreadable = Unreadable::start(client.clone(), scope.clone(), reconciler.events.clone());
    let passages = scope
        .watch(
            move |namespace| {
                hecate_ops::lenient::watcher(
                    scope::api::<Lenient<Passage>>(&client, namespace),
                    watcher::Config::default(),
                    unreadable.of::<Passage>(),
                )
            },
            reader.clone(),
        )
        .filter_map({
            let finished = Finished::start(reconciler.work_root.clone());
            move |event| futures::future::ready(under_way(event, &finished))
        })
        .reflect(writer);
    let passages = predicate::changed(passages, |passage| {
        passage.metadata.generation.map(|g| g as u64)
    });
    let context = Arc::new(Context { reconciler, scope });
    Controller::for_stream(passages, reader)
        .with_config(controller::Config::default().concurrency(CONCURRENCY))
        .reconcile_on(wakes)
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "passage controller");
            }
        })
        .await;
}

/// What the Passage loop holds of an event: crossings under way only. A finished one is
/// never advanced again, and 100,000 of them are what a fleet's history holds (the Gate
/// loop keeps what it reads of them). So a finished Passage leaves the store as if
/// deleted, and its work directory goes (the reconcile that finished it removes it too;
/// this covers a process that stopped in between, and a crossing another replica
/// finished). Field managers go for all: this copy is written back with the status, and
/// `None`, not an empty list, leaves the object's field ownership alone.
fn under_way<E>(
    event: Result<Event<Passage>, E>,
    finished: &Finished,
) -> Option<Result<Event<Passage>, E>> {
    let mut event = match event {
        Ok(event) => event,
        Err(error) => return Some(Err(error)),
    };
    match &mut event {
        Event::Init | Event::InitDone | Event::Delete(_) => Some(Ok(event)),
        Event::InitApply(passage) | Event::Apply(passage) if passage.is_terminal() => {
            finished.remove_work_dir(passage);
            match event {
                Event::Apply(passage) => Some(Ok(Event::Delete(passage))),
                // Not listed: the list's end replaces the store with what it named.
                _ => None,
            }
        }
        Event::InitApply(passage) | Event::Apply(passage) => {
            passage.metadata.managed_fields = None;
            Some(Ok(event))
        }
    }
}

/// Removes finished crossings' work directories on a thread of its own: most are long
/// gone (a missing one costs a failed syscall), and none of it may block the watch.
struct Finished {
    uids: std::sync::mpsc::Sender<String>,
}

impl Finished {
    fn start(work_root: PathBuf) -> Self {
        let (uids, receiver) = std::sync::mpsc::channel::<String>();
        // Ends when the watch (the sender) does.
        let _ = std::thread::Builder::new()
            .name("work-dir-cleanup".into())
            .spawn(move || {
                for uid in receiver {
                    let dir = work_root.join(uid);
                    if let Err(error) = std::fs::remove_dir_all(&dir)
                        && error.kind() != std::io::ErrorKind::NotFound
                    {
                        tracing::warn!(dir = %dir.display(), %error, "could not remove a work directory");
                    }
                }
            });
        Self { uids }
    }

    fn remove_work_dir(&self, passage: &Passage) {
        // The uid names the directory (`PassageReconciler::work_dir`): a path of one
        // component, never `..` or a separator.
        let Some(uid) = passage.metadata.uid.as_deref() else {
            return;
        };
        if std::path::Path::new(uid).file_name() == Some(std::ffi::OsStr::new(uid)) {
            let _ = self.uids.send(uid.to_owned());
        }
    }
}

struct Context {
    reconciler: PassageReconciler,
    scope: Scope,
}

async fn reconcile(passage: Arc<Passage>, context: Arc<Context>) -> Result<Action, Error> {
    if !context
        .scope
        .contains(&passage.namespace().unwrap_or_default())
        .await
    {
        return Ok(Action::await_change());
    }
    // Read afresh, not from the watch's copy: a wake queued while the last reconcile ran
    // (its own flux-reconcile touching what flux-wait watches, say) can find that copy
    // older than the last status write, and would run finished steps — their side
    // effects — again from the older record.
    let reconciler = &context.reconciler;
    let (namespace, name) = (passage.namespace().unwrap_or_default(), passage.name_any());
    let outcome = reconciler
        .metrics
        .reconcile(Loop::Passage, reconciler.reconcile_named(&namespace, &name))
        .await?;
    Ok(match outcome.requeue_after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

fn error_policy(passage: Arc<Passage>, error: &Error, context: Arc<Context>) -> Action {
    context
        .reconciler
        .metrics
        .count_failure(Loop::Passage, error.kind());
    if let Error::Kube(error) = error
        && backoff::is_conflict(error)
    {
        // An abort (or another write) landed meanwhile: advance again with it.
        return Action::requeue(backoff::FIRST);
    }
    tracing::warn!(
        namespace = %passage.namespace().unwrap_or_default(),
        passage = %passage.name_any(),
        %error,
        "Passage reconcile failed"
    );
    Action::requeue(Duration::from_secs(5))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hecate_types::{PassagePhase, PassageSpec, PassageStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    fn passage(uid: &str, phase: PassagePhase) -> Passage {
        let mut passage = Passage::new("p", PassageSpec::default());
        passage.metadata.namespace = Some("shop".into());
        passage.metadata.uid = Some(uid.into());
        passage.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        passage.status = Some(PassageStatus {
            phase: Some(phase),
            ..PassageStatus::default()
        });
        passage
    }

    type Item = Result<Event<Passage>, ()>;

    /// Waits for the cleanup thread to have removed `dir`.
    fn gone(dir: &std::path::Path) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while dir.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        !dir.exists()
    }

    #[test]
    fn a_finished_crossing_leaves_the_store_and_its_work_directory_goes() {
        let root = tempfile::tempdir().expect("a temporary directory");
        for uid in ["listed", "applied", "running"] {
            std::fs::create_dir_all(root.path().join(uid).join("checkout")).expect("a work dir");
        }
        let finished = Finished::start(root.path().to_owned());

        let listed: Item = Ok(Event::InitApply(passage("listed", PassagePhase::Succeeded)));
        assert!(
            under_way(listed, &finished).is_none(),
            "not listed into the store"
        );

        let applied: Item = Ok(Event::Apply(passage("applied", PassagePhase::Failed)));
        let Some(Ok(Event::Delete(deleted))) = under_way(applied, &finished) else {
            panic!("a crossing that finished leaves the store as if deleted");
        };
        assert_eq!(deleted.metadata.uid.as_deref(), Some("applied"));

        let running: Item = Ok(Event::Apply(passage("running", PassagePhase::Running)));
        let Some(Ok(Event::Apply(kept))) = under_way(running, &finished) else {
            panic!("a crossing under way is held");
        };
        assert_eq!(kept.metadata.managed_fields, None, "field managers dropped");

        assert!(gone(&root.path().join("listed")));
        assert!(gone(&root.path().join("applied")));
        assert!(root.path().join("running").exists(), "under way: kept");
    }

    #[test]
    fn a_uid_that_is_not_one_path_component_removes_nothing() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&outside).expect("a directory");
        let work_root = root.path().join("work");
        let finished = Finished::start(work_root.clone());
        for uid in ["../outside", "/", ".."] {
            let event: Item = Ok(Event::Apply(passage(uid, PassagePhase::Succeeded)));
            assert!(matches!(
                under_way(event, &finished),
                Some(Ok(Event::Delete(_)))
            ));
        }
        // What was sent is handled in order: a marker sent last has been handled.
        std::fs::create_dir_all(work_root.join("marker")).expect("a marker");
        let marker: Item = Ok(Event::Apply(passage("marker", PassagePhase::Succeeded)));
        under_way(marker, &finished);
        assert!(gone(&work_root.join("marker")));
        assert!(outside.exists());
    }

    #[test]
    fn events_that_carry_no_passage_pass_through() {
        let finished = Finished::start(std::env::temp_dir().join("hecate-unused-work-root"));
        for event in [Event::Init, Event::InitDone] {
            assert!(matches!(
                under_way(Ok::<_, ()>(event), &finished),
                Some(Ok(Event::Init | Event::InitDone))
            ));
        }
        assert!(matches!(
            under_way(Err::<Event<Passage>, _>(()), &finished),
            Some(Err(()))
        ));
    }
}
