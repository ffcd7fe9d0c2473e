//! The `hecate.dev/v1alpha1` API: the kinds Hecate is made of, and nothing that
//! does I/O.
//!
//! | kind | what it is |
//! |---|---|
//! | [`Beacon`] | watches artifact sources and emits Bundles |
//! | [`Bundle`] | an immutable, content-addressed set of artifact versions; the unit that moves |
//! | [`Gate`] | an environment and the threshold a Bundle must cross to enter it |
//! | [`Passage`] | one attempt to move one Bundle through one Gate; a permanent record |
//! | [`Notifier`] | who is told what happens to a namespace's releases (Hecate's own, DECISION 166) |
//!
//! The Rust types are wire-compatible with the Go reference implementation's CRDs:
//! same field names, types and enums ([`crd`] generates the CRDs, and a test compares
//! them with the reference's). Objects written by either implementation deserialize
//! and re-serialize without loss, because every field the reference omits when empty
//! is omitted here too.
//!
//! Besides the kinds this crate holds the small pure rules that belong to the data
//! itself: the Bundle content address ([`digest`]), [`Health::merge`], phase
//! terminality ([`PassagePhase::is_terminal`], [`StepPhase::is_terminal`]), Kubernetes'
//! name rules ([`names`]), how a label selector matches ([`LabelSelector::matches`]),
//! which Secrets may be used on an author's behalf
//! ([`secrets`]) and the well-known label, annotation and condition names
//! ([`wellknown`]); and one rule of words, how an error and its causes are said
//! ([`error_chain`]).

mod beacon;
mod bundle;
mod common;
pub mod crd;
pub mod digest;
pub mod duration;
mod error_chain;
mod gate;
mod health;
pub mod lenient;
pub mod limits;
pub mod names;
mod notifier;
mod passage;
mod rollout;
#[cfg(test)]
mod roundtrip;
mod schema;
pub mod secrets;
pub mod wellknown;

pub use beacon::{
    Beacon, BeaconSpec, BeaconStatus, ChartWatch, EmitPolicy, GitWatch, ImageWatch, ProviderWatch,
    TagSelection, TagWatch, WatchSource, WatchSourceRef,
};
pub use bundle::{
    Artifact, ArtifactRef, Bundle, BundleApproval, BundleSpec, BundleStatus, ChartArtifact,
    CommitArtifact, CommitSummary, GateCrossing, ImageArtifact, PolicyApproval, Rejection,
};
pub use common::{Condition, ConditionStatus, HealthCheck, LocalSecretRef, Step, Var};
pub use error_chain::error_chain;
pub use gate::{
    Admission, ApprovalAlternative, ApprovalPolicy, ApprovalRule, BundleOrigin,
    DEFAULT_PASSAGES_RETAINED, EvidenceConfig, EvidenceRef, Gate, GateOccupant, GateSpec,
    GateStatus, HealthReport, PassageTemplate, RollbackPolicy, Verification, Window,
};
pub use health::Health;
pub use notifier::{
    DELIVERIES_KEPT, NoticeKind, NoticeOutcome, NoticeRecord, NoticeThread, Notifier, NotifierSpec,
    NotifierStatus, NotifierType, Severity, THREADS_KEPT,
};
pub use passage::{
    Passage, PassagePhase, PassageSpec, PassageStatus, StepLogLine, StepPhase, StepStatus,
    VerificationPhase, VerificationRestart, VerificationStatus, VerifierStatus,
};
pub use rollout::{
    AcceptedFailures, ClusterSecretRef, CountOrPercent, LabelSelector, LabelSelectorRequirement,
    Rollout, RolloutPhase, RolloutRequest, RolloutRequests, RolloutStatus, SelectorOperator,
    Target, TargetPhase, TargetStatus, Targets, Wave, WaveTargets,
};

/// The API group of every Hecate kind.
pub const GROUP: &str = "hecate.dev";
/// The one API version Hecate serves.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` as written on every Hecate object.
pub const API_VERSION: &str = "hecate.dev/v1alpha1";

/// Re-exported so callers name times the way the types do.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
