//! Bounds the CRDs put on a Gate's and a Passage's lists and expressions, beyond the
//! reference's (docs/DECISIONS.md 98): generous for any real pipeline, and small enough
//! that the controller can always parse, judge and record whatever the API server
//! admits. One Gate author must not be able to stop the controller for everyone.

/// The most steps one list holds: a Gate's `spec.passage.steps` and a Passage's
/// `spec.steps` (a copy of them). Real pipelines have a handful.
pub const MAX_STEPS: usize = 100;

/// The most checks a Gate's `spec.verify` holds.
pub const MAX_VERIFICATIONS: usize = 100;

/// The longest expression, in characters (as the API server counts `maxLength`): a
/// step's `if:` is refused at admission beyond it, and the controller refuses any
/// longer expression — a `${{ … }}` in `with:`, a `successIf` — before parsing it.
pub const MAX_EXPRESSION_LENGTH: usize = 4096;
