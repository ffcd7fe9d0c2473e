//! How a crossing's verification adds up (DECISION 139): each of a Gate's
//! `spec.verify[]` looks at the environment now and then, and its looks become a
//! verdict by one rule, whatever the verifier — a query, a request, a Canary, a soak.
//!
//! - A look passes, fails, cannot judge (the server is down, no data, a query error:
//!   never a pass), or waits for a time it names (a soak's end).
//! - `successes` passing looks **in a row** pass the verification; `failures` failing
//!   looks in all fail it; a look that cannot judge resets the run of passes and backs
//!   off. With a `timeout`, a verification still undecided that long after the crossing
//!   says no: a verifier that never answers does not pass by silence.
//! - A verification decided stays decided; the crossing is `Verified` when all pass and
//!   `Failed` as soon as one says no. Both are final for that crossing.
//! - A newer crossing of the Gate cuts an undecided verification short: `Superseded`,
//!   final, neither a pass nor a no ([`superseded`], DECISION 150).
//!
//! The controller looks and writes what this returns; Explain, the CLI, the API, MCP and
//! the UI read the same record from the Passage.

use std::time::Duration;

use hecate_types::limits::MAX_VERIFICATION_RESTARTS;
use hecate_types::{
    Gate, Time, VerificationPhase, VerificationRestart, VerificationStatus, VerifierStatus,
    duration as go_duration,
};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use serde_json::Value;

/// How often a verification looks when its `with` does not say.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// The shortest `interval` a verification may ask for. Each look is a request or a
/// query, and a Gate may list 100 verifications: at 1 ms they sent 10,000 requests a
/// crossing (#50); at this floor, 100 verifications send at most 20 a second.
pub const MIN_INTERVAL: Duration = Duration::from_secs(5);

/// The longest a look that cannot judge backs off to.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);

/// The most passes or failures a verification may ask for.
pub const MAX_COUNT: u32 = 100;

/// How a verification's looks add up: the fields every verifier shares in its `with`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cadence {
    /// Between looks.
    pub interval: Duration,
    /// Passing looks in a row that pass.
    pub successes: u32,
    /// Failing looks that fail.
    pub failures: u32,
    /// How long after the crossing an undecided verification says no; none: never.
    pub timeout: Option<Duration>,
}

impl Default for Cadence {
    fn default() -> Self {
        Self {
            interval: DEFAULT_INTERVAL,
            successes: 1,
            failures: 1,
            timeout: None,
        }
    }
}

impl Cadence {
    /// The cadence a verification's `with` asks for: `interval` (at least
    /// [`MIN_INTERVAL`]) and `timeout` as Go durations (`30s`, `5m`), `successes` and
    /// `failures` as counts from 1 to 100. Absent fields take the defaults; a present
    /// field that cannot be read is an error, never a default — a look that cannot
    /// judge, sent to no one.
    pub fn of(with: Option<&Value>) -> Result<Self, String> {
        let mut cadence = Self::default();
        let Some(with) = with else {
            return Ok(cadence);
        };
        if let Some(interval) = duration(with, "interval")? {
            if interval < MIN_INTERVAL {
                let asked = with
                    .get("interval")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return Err(format!(
                    "interval: {} is too often; looks are at least {} apart",
                    asked.trim(),
                    words(MIN_INTERVAL)
                ));
            }
            cadence.interval = interval;
        }
        cadence.timeout = duration(with, "timeout")?;
        if let Some(successes) = count(with, "successes")? {
            cadence.successes = successes;
        }
        if let Some(failures) = count(with, "failures")? {
            cadence.failures = failures;
        }
        Ok(cadence)
    }
}

fn duration(with: &Value, field: &str) -> Result<Option<Duration>, String> {
    match with.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => {
            let parsed = go_duration::parse(text).map_err(|e| format!("{field}: {e}"))?;
            Duration::try_from(parsed)
                .map(Some)
                .map_err(|_| format!("{field}: must not be negative"))
        }
        Some(_) => Err(format!("{field}: a duration such as \"30s\" or \"5m\"")),
    }
}

fn count(with: &Value, field: &str) -> Result<Option<u32>, String> {
    match with.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .map(Some)
            .ok_or_else(|| format!("{field}: a whole number from 1 to {MAX_COUNT}")),
    }
}

/// What one look saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The condition held.
    Pass,
    /// The condition did not hold, or the verifier said no outright.
    Fail,
    /// The verifier said no and its no is final at once (a Canary that failed): no
    /// count of failures to wait for.
    Refused,
    /// Nothing could be judged: the server down, no data, an error.
    Inconclusive,
    /// Not yet, by design, until the time given (a soak's end): no backoff, no
    /// failure.
    WaitUntil(Timestamp),
    /// Not yet, by the verifier's judgement (a Canary still progressing): look again
    /// at the interval.
    NotYet,
    /// Not yet, and its clock starts again: interrupted since the instant given (a
    /// soak's Gate not Healthy). Recorded once per interruption, with the look's
    /// message as why; looked at again at the interval.
    Interrupted(Timestamp),
}

/// One look: what it saw, the value it read (for people: `0.002`, `HTTP 200`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Look {
    /// What it saw.
    pub seen: Seen,
    /// The value read, in words; may be empty.
    pub value: String,
    /// Why, in words.
    pub message: String,
}

/// The verification of a crossing that finished at `started`, before any look: every
/// verification of `gate` undecided, each due at once.
pub fn begin(gate: &Gate, started: Timestamp) -> VerificationStatus {
    VerificationStatus {
        phase: if gate.spec.verify.is_empty() {
            VerificationPhase::Verified
        } else {
            VerificationPhase::Verifying
        },
        started_at: Some(Time(started)),
        finished_at: gate.spec.verify.is_empty().then_some(Time(started)),
        message: String::new(),
        verifiers: gate
            .spec
            .verify
            .iter()
            .map(|verification| VerifierStatus {
                uses: verification.uses.clone(),
                phase: VerificationPhase::Verifying,
                passes: 0,
                failures: 0,
                inconclusive: 0,
                last_value: String::new(),
                last_look_at: None,
                next_look_at: Some(Time(started)),
                message: String::new(),
                restarts: Vec::new(),
            })
            .collect(),
    }
}

/// Whether `verifier` is to look at `now`: undecided, and its next look has come.
pub fn is_due(verifier: &VerifierStatus, now: Timestamp) -> bool {
    verifier.phase == VerificationPhase::Verifying
        && verifier.next_look_at.as_ref().is_none_or(|at| at.0 <= now)
}

/// `verifier` after `look` at `now`, by `cadence`, for a crossing whose verification
/// began at `started`.
pub fn record(
    verifier: &mut VerifierStatus,
    cadence: &Cadence,
    look: Look,
    started: Timestamp,
    now: Timestamp,
) {
    verifier.last_look_at = Some(Time(now));
    verifier.last_value = look.value;
    verifier.message = look.message;
    let mut next = later(now, cadence.interval);
    match look.seen {
        Seen::Pass => {
            verifier.passes += 1;
            verifier.inconclusive = 0;
            if count_reached(verifier.passes, cadence.successes) {
                verifier.phase = VerificationPhase::Verified;
            }
        }
        Seen::Fail => {
            verifier.passes = 0;
            verifier.inconclusive = 0;
            verifier.failures += 1;
            if count_reached(verifier.failures, cadence.failures) {
                verifier.phase = VerificationPhase::Failed;
            }
        }
        Seen::Refused => {
            verifier.passes = 0;
            verifier.failures += 1;
            verifier.phase = VerificationPhase::Failed;
        }
        Seen::Inconclusive => {
            verifier.passes = 0;
            verifier.inconclusive += 1;
            next = later(now, backoff(cadence.interval, verifier.inconclusive));
        }
        Seen::WaitUntil(at) => next = at.max(now),
        Seen::NotYet => {}
        Seen::Interrupted(since) => {
            verifier.passes = 0;
            restarted(verifier, since);
        }
    }
    if verifier.phase == VerificationPhase::Verifying
        && let Some(timeout) = cadence.timeout
    {
        let deadline = later(started, timeout);
        if now >= deadline {
            verifier.phase = VerificationPhase::Failed;
            verifier.message = format!(
                "no verdict within {} of the crossing; last: {}",
                words(timeout),
                if verifier.message.is_empty() {
                    "nothing seen"
                } else {
                    &verifier.message
                }
            );
        } else {
            // The deadline is a look of its own: a verifier never waits past it.
            next = next.min(deadline);
        }
    }
    verifier.next_look_at = (verifier.phase == VerificationPhase::Verifying).then_some(Time(next));
}

/// Records that `verifier`'s clock started again, interrupted since `since`, with its
/// last look's message as why — once per interruption (one instant), the newest
/// [`MAX_VERIFICATION_RESTARTS`] kept, each reason cut to a line a person reads.
fn restarted(verifier: &mut VerifierStatus, since: Timestamp) {
    if verifier.restarts.last().is_some_and(|r| r.at.0 == since) {
        return;
    }
    verifier.restarts.push(VerificationRestart {
        at: Time(since),
        reason: cut(&verifier.message, RESTART_REASON_CHARS),
    });
    let excess = verifier
        .restarts
        .len()
        .saturating_sub(MAX_VERIFICATION_RESTARTS);
    verifier.restarts.drain(..excess);
}

/// The longest reason a restart keeps, in characters.
const RESTART_REASON_CHARS: usize = 300;

/// `text`, at most `most` characters, with an ellipsis where it was cut.
fn cut(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// Whether a soak's Gate changed health since `verifier` last looked: its clock may
/// have stopped or started again, so it looks now rather than at its end (the
/// restart is recorded with why, and the countdown moves).
pub fn health_changed(verifier: &VerifierStatus, gate: &Gate) -> bool {
    let since = gate
        .status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.since.as_ref())
        .map(|t| t.0);
    verifier.uses == crate::catalogue::Verifier::Soak.name()
        && verifier.phase == VerificationPhase::Verifying
        && match (since, verifier.last_look_at.as_ref()) {
            (Some(since), Some(looked)) => since > looked.0,
            _ => false,
        }
}

fn count_reached(count: i32, needed: u32) -> bool {
    u32::try_from(count).is_ok_and(|count| count >= needed)
}

/// The wait after `inconclusive` looks in a row that could not judge: the interval,
/// doubled for each after the first, at most [`MAX_BACKOFF`] (or the interval, if
/// that is longer).
pub fn backoff(interval: Duration, inconclusive: i32) -> Duration {
    let doublings = u32::try_from(inconclusive.saturating_sub(1))
        .unwrap_or(0)
        .min(16);
    interval
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF.max(interval))
}

/// Settles the crossing's phase from its verifications' at `now`: `Failed` as soon as
/// one said no (with its message), `Verified` when all passed.
pub fn settle(status: &mut VerificationStatus, now: Timestamp) {
    if status.phase.is_final() {
        return;
    }
    if let Some(failed) = status
        .verifiers
        .iter()
        .find(|v| v.phase == VerificationPhase::Failed)
    {
        status.phase = VerificationPhase::Failed;
        status.message = format!("{} verification said no: {}", failed.uses, failed.message);
    } else if status
        .verifiers
        .iter()
        .all(|v| v.phase == VerificationPhase::Verified)
    {
        status.phase = VerificationPhase::Verified;
        status.message = "every verification passed".into();
    } else {
        status.message = progress(status);
        return;
    }
    status.finished_at = Some(Time(now));
    for verifier in &mut status.verifiers {
        verifier.next_look_at = None;
    }
}

/// The verifications a newer crossing cut short: each Passage of `gate` that crossed
/// and whose verification is still undecided while a newer Passage of the same Gate
/// exists (any phase: once it opens, what the older one verified no longer runs
/// alone), with that newer Passage's name. Only the Gate's own records count
/// ([`crate::rules::passage::is_record_of`]; an active Passage by its spec).
/// DECISION 150.
pub fn superseded<'a>(
    passages: &'a [hecate_types::Passage],
    gate: &str,
) -> Vec<(&'a hecate_types::Passage, String)> {
    let mut own: Vec<&hecate_types::Passage> = passages
        .iter()
        .filter(|p| {
            if p.is_terminal() {
                crate::rules::passage::is_record_of(p, gate)
            } else {
                p.spec.gate == gate
            }
        })
        .collect();
    own.sort_by(|a, b| crate::rules::eligibility::passages_newest_first(a, b));
    own.iter()
        .enumerate()
        .skip(1)
        .filter(|(_, p)| undecided(p))
        .map(|(at, p)| (*p, own[at - 1].name_any()))
        .collect()
}

/// Whether `passage` crossed and its verification has not decided.
fn undecided(passage: &hecate_types::Passage) -> bool {
    passage.phase() == hecate_types::PassagePhase::Succeeded
        && passage
            .status
            .as_ref()
            .and_then(|s| s.verification.as_ref())
            .is_some_and(|v| !v.phase.is_final())
}

/// `status` cut short at `now` by `newer`, the crossing that began after it: every
/// undecided verification and the whole `Superseded`, in words that name it.
pub fn supersede(status: &mut VerificationStatus, newer: &str, now: Timestamp) {
    if status.phase.is_final() {
        return;
    }
    status.phase = VerificationPhase::Superseded;
    status.message = format!("cut short by {newer}, a newer crossing of the Gate");
    status.finished_at = Some(Time(now));
    for verifier in &mut status.verifiers {
        if verifier.phase == VerificationPhase::Verifying {
            verifier.phase = VerificationPhase::Superseded;
            verifier.next_look_at = None;
        }
    }
}

/// Whether `passage`'s verification said no.
pub fn said_no(passage: &hecate_types::Passage) -> bool {
    passage
        .status
        .as_ref()
        .and_then(|s| s.verification.as_ref())
        .is_some_and(|v| v.phase == VerificationPhase::Failed)
}

/// When the verification next looks, if it is undecided: its earliest verifier's next
/// look.
pub fn next_look(status: &VerificationStatus) -> Option<Timestamp> {
    if status.phase.is_final() {
        return None;
    }
    status
        .verifiers
        .iter()
        .filter(|v| v.phase == VerificationPhase::Verifying)
        .filter_map(|v| v.next_look_at.as_ref().map(|t| t.0))
        .min()
}

/// Where an undecided verification stands, in one line: the first undecided
/// verification's progress.
pub fn progress(status: &VerificationStatus) -> String {
    status
        .verifiers
        .iter()
        .find(|v| v.phase == VerificationPhase::Verifying)
        .map(|v| format!("{}: {}", v.uses, verifier_words(v)))
        .unwrap_or_else(|| status.phase.as_str().to_lowercase())
}

/// The verification of a crossing in one line, for a list of Passages: `Verifying
/// (prometheus: 2 passes in a row, last 0.002)`, `Verified`, or `Failed: <why>`.
pub fn summary(status: &VerificationStatus) -> String {
    let phase = status.phase.as_str();
    match status.phase {
        VerificationPhase::Verifying
            if status
                .verifiers
                .iter()
                .any(|v| v.phase == VerificationPhase::Verifying) =>
        {
            format!("{phase} ({})", progress(status))
        }
        VerificationPhase::Verifying => phase.into(),
        VerificationPhase::Verified => phase.into(),
        VerificationPhase::Failed | VerificationPhase::Superseded if status.message.is_empty() => {
            phase.into()
        }
        VerificationPhase::Failed | VerificationPhase::Superseded => {
            format!("{phase}: {}", status.message)
        }
    }
}

/// What an undecided verification waits on, in words that change only when a
/// verification decides — the Gate's `Ready` message, which a look must not rewrite
/// (the progress itself is the Passage's record): "verifying passage staging-3: http
/// and soak have not decided".
pub fn waiting_on(passage: &str, status: &VerificationStatus) -> String {
    let undecided: Vec<&str> = status
        .verifiers
        .iter()
        .filter(|v| v.phase == VerificationPhase::Verifying)
        .map(|v| v.uses.as_str())
        .collect();
    let list = match undecided.as_slice() {
        [] => return format!("verifying passage {passage}"),
        [one] => format!("{one} has"),
        [init @ .., last] => format!("{} and {last} have", init.join(", ")),
    };
    format!("verifying passage {passage}: {list} not decided")
}

/// One verification's progress in words: "2 passes in a row; last 0.002: …".
pub fn verifier_words(verifier: &VerifierStatus) -> String {
    let mut parts = Vec::new();
    if verifier.passes > 0 {
        parts.push(plural(verifier.passes, "pass in a row", "passes in a row"));
    }
    if verifier.failures > 0 {
        parts.push(plural(verifier.failures, "failure", "failures"));
    }
    if verifier.inconclusive > 0 {
        parts.push(plural(
            verifier.inconclusive,
            "look that could not judge",
            "looks that could not judge",
        ));
    }
    if !verifier.last_value.is_empty() {
        parts.push(format!("last {}", verifier.last_value));
    }
    let counts = parts.join(", ");
    match (counts.is_empty(), verifier.message.is_empty()) {
        (true, true) => "not looked yet".into(),
        (true, false) => verifier.message.clone(),
        (false, true) => counts,
        (false, false) => format!("{counts}: {}", verifier.message),
    }
}

fn plural(n: i32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A duration for people: `30s`, `5m`, `1h30m`.
pub fn words(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = String::new();
    if h > 0 {
        text.push_str(&format!("{h}h"));
    }
    if m > 0 {
        text.push_str(&format!("{m}m"));
    }
    if s > 0 || text.is_empty() {
        text.push_str(&format!("{s}s"));
    }
    text
}

/// `duration` after `at`, or the end of time for a duration past it.
pub fn later(at: Timestamp, duration: Duration) -> Timestamp {
    SignedDuration::try_from(duration)
        .ok()
        .and_then(|d| at.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}
