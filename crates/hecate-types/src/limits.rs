//! Bounds the CRDs put on a Gate's and a Passage's lists and expressions, beyond the
//! reference's (docs/DECISIONS.md 98): generous for any real pipeline, and small enough
//! that the controller can always parse, judge and record whatever the API server
//! admits. One Gate author must not be able to stop the controller for everyone.

/// The most steps one list holds: a Gate's `spec.passage.steps` and a Passage's
/// `spec.steps` (a copy of them). Real pipelines have a handful.
pub const MAX_STEPS: usize = 100;

/// The most checks a Gate's `spec.verify` holds.
pub const MAX_VERIFICATIONS: usize = 100;

/// The most rules one approval policy holds (`admits[].approvals.required`).
pub const MAX_APPROVAL_RULES: usize = 20;

/// The most approvals, and the most rejections, one Bundle records (`status.approvals`,
/// `status.rejections`): one per person and Gate, so a pipeline would need hundreds of
/// approvers to come near it, and the Bundle stays small enough to list by the
/// thousand.
pub const MAX_APPROVALS: usize = 200;

/// The longest reason a rejection records, in characters.
pub const MAX_REASON_CHARS: usize = 1000;

/// The deepest a step's `with` may nest, counting each map and list. The API server
/// cannot bound nesting in a free-form field (DECISIONS 110), so the controller
/// judges it with the Gate's steps; no reader decodes an object much past 120.
pub const MAX_WITH_DEPTH: usize = 32;

/// The longest expression, in characters (as the API server counts `maxLength`): a
/// step's `if:` is refused at admission beyond it, and the controller refuses any
/// longer expression — a `${{ … }}` in `with:`, a `successIf` — before parsing it.
pub const MAX_EXPRESSION_LENGTH: usize = hecate_expr::MAX_LENGTH;

/// The most a Passage's status may take, in bytes of JSON: the controller cuts what its
/// steps report (messages, outputs) so that whatever a crossing does, its status is
/// recordable (docs/DECISIONS.md 111). etcd refuses a request over 1.5 MiB by default.
pub const MAX_PASSAGE_STATUS_BYTES: usize = 512 * 1024;

/// The largest Passage the controller records, in bytes of JSON — metadata, spec and
/// status — a third under etcd's default 1.5 MiB request limit. A Passage whose
/// metadata and spec alone leave less than [`MAX_PASSAGE_STATUS_BYTES`] of it is
/// refused before its first step.
pub const MAX_PASSAGE_BYTES: usize = 1024 * 1024;

/// The most commits a commit artifact lists as what its Bundle brings
/// (`commits`; the rest are counted in `moreCommits`, DECISION 140).
pub const MAX_BUNDLE_COMMITS: usize = 20;

/// The longest commit subject a Beacon records, in bytes (cut on a character
/// boundary): a subject is one line for people, and a Bundle lists up to
/// [`MAX_BUNDLE_COMMITS`] of them.
pub const MAX_SUBJECT_BYTES: usize = 200;

/// The most targets one Gate spans (`spec.targets`, listed and selected together),
/// and the most target records a Passage's rollout keeps (DECISION 151). A fleet
/// larger than this is several Gates; a selector matching more is a problem of the
/// Gate, and its rollout does not start.
pub const MAX_TARGETS: usize = 100;

/// The longest target name: a Secret name short enough to be a label value too.
pub const MAX_TARGET_NAME: usize = 63;

/// The most vars one target adds to its Gate's.
pub const MAX_TARGET_VARS: usize = 32;

/// The most waves a rollout has, and the most acceptances of failures its record
/// keeps. Real rollouts have two to five (a canary, a region, the rest).
pub const MAX_WAVES: usize = 10;

/// The most `matchLabels` pairs, `matchExpressions` requirements, or values of one
/// requirement, a label selector holds.
pub const MAX_SELECTOR_TERMS: usize = 16;

/// The longest message one target's record keeps, in bytes: a line, where the
/// Passage's own message says the rest.
pub const MAX_TARGET_MESSAGE_BYTES: usize = 256;

/// The longest message a rollout's record keeps, in bytes.
pub const MAX_ROLLOUT_MESSAGE_BYTES: usize = 1024;

/// The longest revision a target's record keeps (what its steps pushed, what Flux
/// applied): a branch, `@`, and a digest.
pub const MAX_REVISION_CHARS: usize = 256;

/// The longest failure code a target's record keeps.
pub const MAX_REASON_CODE_CHARS: usize = 128;

/// The longest name of a person (or program) a record keeps: Kubernetes user names,
/// service accounts included.
pub const MAX_ACTOR_CHARS: usize = 512;

/// The most of a Passage's status ([`MAX_PASSAGE_STATUS_BYTES`]) a rollout's record
/// takes, with every bounded field at its bound: [`MAX_TARGETS`] records and
/// [`MAX_WAVES`] acceptances (DECISION 151). What is left is the steps'.
pub const MAX_ROLLOUT_STATUS_BYTES: usize = 224 * 1024;

/// `text` cut to at most `max` bytes, on a character boundary: how every bounded text
/// the controller writes (a condition's message, an Event's note, a step's message) is
/// cut.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        assert_eq!(truncate("hecate", 10), "hecate");
        assert_eq!(truncate("hecate", 3), "hec");
        // "é" takes two bytes: cutting inside it keeps neither.
        assert_eq!(truncate("caé", 3), "ca");
        assert_eq!(truncate("", 0), "");
    }
}
