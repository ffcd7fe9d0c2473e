//! Well-known names: labels, annotations, condition types and reasons, and actors.
//!
//! These strings are interface: other tools select on the labels, Flux users already
//! set the annotation, and dashboards match the reasons. They are exact.

/// Label on a Bundle: the Beacon that emitted it.
pub const LABEL_BEACON: &str = "hecate.dev/beacon";
/// Label on a Passage: the Gate it crosses.
pub const LABEL_GATE: &str = "hecate.dev/gate";
/// Label on a Passage: the Bundle it moves.
pub const LABEL_BUNDLE: &str = "hecate.dev/bundle";

/// Label on a Secret: `"true"` lets Hecate use it for a Gate or a Beacon that names it
/// (a `credentialsRef`, `secretRef`, `secretHeaders`, `clusterRef`): whoever writes
/// those may not read Secrets, so the Secret must opt in (DECISION 147,
/// [`crate::secrets`]).
pub const LABEL_USABLE: &str = "hecate.dev/usable";
/// Label on a Secret: `"true"` marks it as a connected cluster's kubeconfig (the
/// settings page's "connect cluster" sets it), which opts it in as a kubeconfig only.
pub const LABEL_CLUSTER: &str = "hecate.dev/cluster";

/// Annotation that asks for an immediate reconcile (Flux's convention); the object
/// echoes the token in `status.lastHandledReconcileAt` once handled.
pub const ANNOTATION_RECONCILE_REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// Annotation on a Passage: who aborted it. The reference records no one; objects it
/// wrote simply lack it.
pub const ANNOTATION_ABORTED_BY: &str = "hecate.dev/aborted-by";
/// Annotation on a Passage: when it was aborted (RFC 3339).
pub const ANNOTATION_ABORTED_AT: &str = "hecate.dev/aborted-at";

/// Annotation on a Bundle or Passage: when its writer created it, to the nanosecond
/// (RFC 3339). `creationTimestamp` keeps only the second, and a Beacon can emit two
/// Bundles within one; "newer" reads this first. Objects without it (made by hand or by
/// the reference) are ordered by `creationTimestamp`.
pub const ANNOTATION_CREATED_AT: &str = "hecate.dev/created-at";

/// Annotation on a Passage: the `metadata.generation` of the Gate it was made from.
/// Only words depend on it — a Passage whose steps are no longer its Gate's is refused
/// either way; with it, the refusal can say the Gate changed since (promote again).
pub const ANNOTATION_GATE_GENERATION: &str = "hecate.dev/gate-generation";

/// Annotation on a Passage: it is a rollback, undoing the crossing of the Passage it
/// names (the one that failed, or whose verification said no, or — by hand — the
/// crossing of the Gate's current occupant). An automatic rollback is never undone by
/// another (DECISION 139).
pub const ANNOTATION_ROLLBACK_OF: &str = "hecate.dev/rollback-of";

/// Annotation on a Passage of some of a Gate's targets: it catches them up with the
/// rollout of the Passage it names, the crossing the Gate holds (DECISION 164).
pub const ANNOTATION_CATCH_UP_OF: &str = "hecate.dev/catch-up-of";

/// The actor recorded on Passages the controller starts by itself.
pub const ACTOR_CONTROLLER: &str = "controller";

/// Condition types.
pub mod condition {
    /// The one condition Beacons and Gates set.
    pub const READY: &str = "Ready";
    /// Declared for Kubernetes conventions; not set.
    pub const RECONCILING: &str = "Reconciling";
    /// Declared for Kubernetes conventions; not set.
    pub const STALLED: &str = "Stalled";
}

/// Reasons of a Gate's `Ready` condition.
pub mod gate_reason {
    /// The Gate is suspended.
    pub const SUSPENDED: &str = "Suspended";
    /// The Gate's step list does not validate.
    pub const INVALID_STEPS: &str = "InvalidSteps";
    /// A Passage is in progress.
    pub const CROSSING: &str = "Crossing";
    /// Nothing is crossing.
    pub const IDLE: &str = "Idle";
    /// An automatic Gate is outside its promotion windows.
    pub const WINDOW_CLOSED: &str = "WindowClosed";
    /// An automatic Gate will not retry a Bundle whose crossing failed.
    pub const CROSSING_FAILED: &str = "CrossingFailed";
    /// An automatic Gate could not create its Passage.
    pub const PASSAGE_FAILED: &str = "PassageFailed";
    /// The newest crossing succeeded and is not yet verified.
    pub const VERIFYING: &str = "Verifying";
    /// Gate: the newest crossing's verification said no (Hecate's own, DECISION 139).
    pub const VERIFICATION_FAILED: &str = "VerificationFailed";
    /// The Gate does not decode (nested too deep for any reader): the controller
    /// skips it (DECISIONS 110).
    pub const UNREADABLE: &str = "Unreadable";
}

/// Reasons of a Beacon's `Ready` condition.
pub mod beacon_reason {
    /// The Beacon is suspended.
    pub const SUSPENDED: &str = "Suspended";
    /// A source has no artifact matching its rules.
    pub const NO_MATCHING_ARTIFACT: &str = "NoMatchingArtifact";
    /// A source uses something that is not supported.
    pub const UNSUPPORTED_SOURCE: &str = "UnsupportedSource";
    /// A source could not be resolved.
    pub const RESOLVE_FAILED: &str = "ResolveFailed";
    /// Every source resolved.
    pub const DISCOVERED: &str = "Discovered";
    /// Creating the Bundle failed.
    pub const EMIT_FAILED: &str = "EmitFailed";
}
