//! Bounds the CRDs put on a Gate's and a Passage's lists and expressions, beyond the
//! reference's (docs/DECISIONS.md 98): generous for any real pipeline, and small enough
//! that the controller can always parse, judge and record whatever the API server
//! admits. One Gate author must not be able to stop the controller for everyone.
//!
//! The same for what a Bundle records of the outside world (DECISION 145): a commit's
//! subject and author are cut ([`clean`]) to the lengths its CRD holds any writer to,
//! and the names it pins (repositories, tags) are bounded there too — so what a
//! repository says can neither make a Bundle too large to store nor stop its Beacon.

/// The most steps one list holds: a Gate's `spec.passage.steps` and a Passage's
/// `spec.steps` (a copy of them). Real pipelines have a handful.
pub const MAX_STEPS: usize = 100;

/// The most lines one step's log keeps (the newest), when the Passage has room: fewer
/// in a Passage of many steps, so all their logs together stay within
/// [`MAX_STEP_LOGS_BYTES`].
pub const MAX_STEP_LOG_LINES: usize = 10;

/// The longest line a step's log keeps, in bytes.
pub const MAX_STEP_LOG_LINE: usize = 256;

/// About the most every step's log of a Passage takes together, in bytes.
pub const MAX_STEP_LOGS_BYTES: usize = 64 * 1024;

/// The most checks a Gate's `spec.verify` holds.
pub const MAX_VERIFICATIONS: usize = 100;

/// The most restarts one verifier's record keeps (the newest): what a person reads
/// of a soak that kept being interrupted, bounded so the record can be written.
pub const MAX_VERIFICATION_RESTARTS: usize = 10;

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

/// The longest commit subject a Bundle records (`message`, `commits[].subject`): a
/// Beacon cuts it to this many bytes, on a character boundary (DECISION 145). A subject
/// is one line for people, and a Bundle lists up to [`MAX_BUNDLE_COMMITS`] of them.
pub const MAX_SUBJECT_BYTES: usize = 200;

/// The most characters the CRD admits in a commit's subject or author, from any writer:
/// looser than what our Beacon writes ([`MAX_SUBJECT_BYTES`], [`MAX_AUTHOR_BYTES`]), so a
/// Bundle the reference's controller writes (it does not cut) is still admitted, and
/// tight enough that 20 listed commits stay far under the API server's limit
/// (DECISION 145).
pub const MAX_COMMIT_TEXT_LENGTH: usize = 4096;

/// The longest commit author a Bundle records (`author`, `commits[].author`), cut as a
/// subject is: an e-mail address is at most 254 bytes (RFC 5321) and a name a few
/// dozen, so any real `Name <email>` fits (DECISION 145).
pub const MAX_AUTHOR_BYTES: usize = 320;

/// The longest `alias` a Bundle holds, in characters: a handle for people — a release
/// name, or the versions a Beacon derives from its artifacts, cut to it — as long as
/// a Kubernetes object's name may be (DECISION 145).
pub const MAX_ALIAS_LENGTH: usize = 253;

/// The longest repository an artifact names (`repo`), in characters: image
/// repositories and git URLs run to a hundred or so (the distribution spec stops a
/// repository's name at 255), so four times that is room for any real one. A Beacon
/// never cuts it — it is part of the Bundle's identity — but reports a watch that
/// resolves beyond it (DECISION 145).
pub const MAX_REPO_LENGTH: usize = 1024;

/// The longest tag, branch, chart name or chart version an artifact names, in
/// characters: OCI stops a tag at 128, and git refs and charts are files, whose names
/// stop at 255 on most file systems. A Beacon never picks a longer tag (DECISION 145).
pub const MAX_REF_LENGTH: usize = 255;

/// The most targets one Gate spans (`spec.targets`, listed and selected together),
/// and the most target records a Passage's rollout keeps (DECISION 151). A fleet
/// larger than this is several Gates; a selector matching more is a problem of the
/// Gate, and its rollout does not start.
pub const MAX_TARGETS: usize = 100;

/// The longest target name: a Secret name short enough to be a label value too.
pub const MAX_TARGET_NAME: usize = 63;

/// The most vars one target adds to its Gate's.
pub const MAX_TARGET_VARS: usize = 32;

/// The most requests of each kind (retries, acceptances) a rollout's Passage keeps
/// (DECISION 157): each is a person's action, and a crossing that needs more is
/// better crossed again.
pub const MAX_ROLLOUT_REQUESTS: usize = 10;

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

/// Whether `c` is a character that changes how text around it shows rather than
/// being shown: a C0 or C1 control or DEL (terminal escapes start with these), or a
/// bidirectional mark, embedding, override or isolate (they reorder what people
/// read: a SHA and a date shown reversed).
pub fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// Text from outside — a commit's subject or author, a provider's title — as a Bundle
/// records it (DECISION 145): without control characters ([`is_control`]; tabs and
/// line breaks become spaces, the others go), trimmed, and cut to at most `max` bytes
/// on a character boundary. Only as much of `text` is looked at as the answer needs.
pub fn clean(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max.saturating_add(4)));
    for c in text.chars() {
        if out.len() > max {
            // What follows cannot change the first `max` bytes.
            break;
        }
        let c = if c.is_whitespace() && c.is_control() {
            ' '
        } else {
            c
        };
        if is_control(c) || (out.is_empty() && c.is_whitespace()) {
            continue;
        }
        out.push(c);
    }
    truncate(&out, max).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::{clean, truncate};

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        assert_eq!(truncate("hecate", 10), "hecate");
        assert_eq!(truncate("hecate", 3), "hec");
        // "é" takes two bytes: cutting inside it keeps neither.
        assert_eq!(truncate("caé", 3), "ca");
        assert_eq!(truncate("", 0), "");
    }

    #[test]
    fn text_from_outside_loses_its_controls() {
        let said = "\u{1b}]52;c;aGk=\u{7}fix:\tlogin\u{1b}[2J \u{9b}6n\u{7f}done \u{202e}cba\u{2066}\u{200f}";
        assert_eq!(clean(said, 200), "]52;c;aGk=fix: login[2J 6ndone cba");
        assert_eq!(clean("  é\n", 200), "é");
        assert_eq!(clean(&"é".repeat(300), 201), "é".repeat(100));
        assert_eq!(clean(&"\u{0}".repeat(1000), 10), "");
        // Leading blanks, however many, take no room; a cut never ends in one.
        assert_eq!(clean(&format!("{}x", " \t".repeat(500)), 4), "x");
        assert_eq!(clean("ab \u{1b}cd", 3), "ab");
    }
}
