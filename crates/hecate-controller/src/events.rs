//! Kubernetes Events: what happened to an object, for `kubectl describe` and alerts.
//!
//! Reasons, actions and types are alerting contracts (spec controller.md §0.3): each is
//! a constant [`Kind`] here and nowhere else. Publishing never fails a reconcile — an
//! Event is a courtesy, the status is the record — and without a recorder (tests that
//! do not look at Events) it does nothing.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use hecate_types::limits::truncate;

/// An Event's action, reason and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// What the controller was doing.
    pub action: &'static str,
    /// What came of it.
    pub reason: &'static str,
    /// Whether it is a warning.
    pub warning: bool,
}

/// A Gate's steps cannot run.
pub const INVALID_STEPS: Kind = Kind {
    action: "Validating",
    reason: "InvalidSteps",
    warning: true,
};
/// An object does not decode, so the controller skips it.
pub const UNREADABLE: Kind = Kind {
    action: "Reading",
    reason: "Unreadable",
    warning: true,
};
/// A Gate opened a Passage by itself.
pub const PASSAGE_STARTED: Kind = Kind {
    action: "Crossing",
    reason: "PassageStarted",
    warning: false,
};
/// A Bundle crossed a Gate (and passed verification).
pub const BUNDLE_CROSSED: Kind = Kind {
    action: "Crossing",
    reason: "BundleCrossed",
    warning: false,
};
/// A crossing of a Gate failed or was aborted.
pub const CROSSING_FAILED: Kind = Kind {
    action: "Crossing",
    reason: "CrossingFailed",
    warning: true,
};
/// The verification of a crossing said no (Hecate's own, DECISION 139).
pub const VERIFICATION_FAILED: Kind = Kind {
    action: "Verifying",
    reason: "VerificationFailed",
    warning: true,
};
/// A Gate opened a rollback by itself (Hecate's own, DECISION 139).
pub const ROLLBACK_STARTED: Kind = Kind {
    action: "RollingBack",
    reason: "RollbackStarted",
    warning: true,
};
/// A Gate's health changed to something not worse than Progressing.
pub const HEALTH_CHANGED: Kind = Kind {
    action: "Monitoring",
    reason: "HealthChanged",
    warning: false,
};
/// A Gate's health changed to Degraded or Unknown.
pub const HEALTH_WORSENED: Kind = Kind {
    warning: true,
    ..HEALTH_CHANGED
};

/// A Passage succeeded.
pub const PASSAGE_SUCCEEDED: Kind = Kind {
    action: "Crossing",
    reason: "PassageSucceeded",
    warning: false,
};
/// A Passage failed.
pub const PASSAGE_FAILED: Kind = Kind {
    action: "Crossing",
    reason: "PassageFailed",
    warning: true,
};
/// A Passage was aborted.
pub const PASSAGE_ABORTED: Kind = Kind {
    action: "Crossing",
    reason: "PassageAborted",
    warning: true,
};
/// A Passage was refused before a step of it ran (its steps are not its Gate's, or its
/// crossing breaks a rule promote applies), or its spec changed while it ran.
pub const PASSAGE_REFUSED: Kind = Kind {
    action: "Validating",
    reason: "PassageRefused",
    warning: true,
};
/// A Passage's Bundle does not exist.
pub const BUNDLE_MISSING: Kind = Kind {
    action: "Resolving",
    reason: "BundleMissing",
    warning: true,
};

/// A finished Passage was not attested in Fides, and nothing broke: Fides has no trail
/// for the Bundle's artifacts, or the Gate could not be read.
pub const ATTESTATION_SKIPPED: Kind = Kind {
    action: "Attesting",
    reason: "AttestationSkipped",
    warning: true,
};
/// A finished Passage could not be attested in Fides: the promotion happened, its
/// evidence was not recorded.
pub const ATTESTATION_FAILED: Kind = Kind {
    action: "Attesting",
    reason: "AttestationFailed",
    warning: true,
};

/// A Beacon created a Bundle (not when the Bundle already existed).
pub const BUNDLE_EMITTED: Kind = Kind {
    action: "Emitting",
    reason: "BundleEmitted",
    warning: false,
};

/// The most a note may hold, in bytes.
const MAX_NOTE: usize = 1024;

/// Publishes Events as one controller (`gate-controller`, …).
#[derive(Clone)]
pub struct Events {
    recorder: Option<Recorder>,
}

impl Events {
    /// Events reported as `controller` from `instance` (this replica's Pod, when it
    /// runs in one), written through `client`.
    pub fn new(client: kube::Client, controller: &str, instance: Option<String>) -> Self {
        let reporter = Reporter {
            controller: controller.into(),
            instance,
        };
        Self {
            recorder: Some(Recorder::new(client, reporter)),
        }
    }

    /// Events that go nowhere.
    pub fn none() -> Self {
        Self { recorder: None }
    }

    /// Publishes `kind` about `object` with `note`; a failure is logged, not returned.
    pub async fn publish(&self, object: &ObjectReference, kind: Kind, note: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let event = Event {
            type_: if kind.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: kind.reason.into(),
            note: Some(truncate(note, MAX_NOTE).into()),
            action: kind.action.into(),
            secondary: None,
        };
        if let Err(error) = recorder.publish(&event, object).await {
            tracing::warn!(
                reason = kind.reason,
                object = object.name.as_deref().unwrap_or_default(),
                %error,
                "could not publish an Event"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ac062_events_without_a_recorder_go_nowhere_quietly() {
        Events::none()
            .publish(&ObjectReference::default(), PASSAGE_STARTED, "dev-1")
            .await;
        assert!(Events::none().recorder.is_none());
    }
}
