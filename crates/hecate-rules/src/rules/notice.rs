//! What people are told, and when (issue 54, DECISION 166).
//!
//! Two judgements, both pure:
//!
//! - [`of_gate`]: what a Gate has to tell — what happened to its crossings (started,
//!   crossed, failed, aborted, verification said no, rolled back) within
//!   [`HORIZON`], and what waits on a person now (an approval, a rejection to
//!   withdraw, a crossing running long, a rollout halted, a Bundle waiting for its
//!   window). The words are Explain's and the Overview's: this reads their answers.
//! - [`due`] and [`settle`]: given one Notifier's record of what it sent, what it
//!   sends now (new notices, retries that are due, reminders), and how its record
//!   reads after. The record is the Notifier's status, so a restart neither loses a
//!   notice nor sends one twice under one key.

use std::collections::HashSet;

use hecate_types::{
    Gate, NoticeKind, NoticeOutcome, NoticeRecord, Notifier, NotifierSpec, NotifierType, Passage,
    PassagePhase, Time, VerificationPhase, duration,
};
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;

use super::attention::Pending;
use super::promotion::CrossingKind;
use super::snapshot::NamespaceSnapshot;
use super::{explain, rollback, version};
use crate::model::{
    AttentionKind, BlockerKind, Explanation, Notice, Notifications, NotifierSummary, Remedy,
    SentNotice,
};

/// What happened longer ago than this is not news: a Notifier created today, or a
/// controller that was down for a day, does not announce yesterday's crossings.
pub const HORIZON: SignedDuration = SignedDuration::from_hours(1);
/// How long a record is kept once what it is about no longer holds.
pub const KEPT_FOR: SignedDuration = SignedDuration::from_hours(24);
/// How many times a notice is tried before it is given up.
pub const MAX_ATTEMPTS: i32 = 8;
/// The wait before the first retry; each next one doubles, up to [`LONGEST_WAIT`].
const FIRST_WAIT: SignedDuration = SignedDuration::from_secs(10);
const LONGEST_WAIT: SignedDuration = SignedDuration::from_mins(10);
/// How many of a Gate's newest Passages are looked at for news.
const PASSAGES_LOOKED_AT: usize = 20;

/// What `gate` has to tell at `now`, oldest first; `explanation` is Explain's answer
/// for it over `snapshot`.
pub fn of_gate(
    snapshot: &NamespaceSnapshot,
    gate: &Gate,
    explanation: &Explanation,
    now: Timestamp,
) -> Vec<Notice> {
    let namespace = snapshot.namespace();
    let name = gate.name_any();
    let since = now - HORIZON;
    let mut out = Vec::new();
    for passage in snapshot.passages_of(&name).take(PASSAGES_LOOKED_AT) {
        out.extend(crossing_news(snapshot, passage, since));
    }
    out.extend(halted(snapshot, &name, explanation));
    let pending = Pending::gather(snapshot, [(gate, explanation)]);
    for attention in pending.at(now) {
        let kind = match attention.kind {
            AttentionKind::Approval => NoticeKind::ApprovalWanted,
            AttentionKind::Rejected => NoticeKind::Rejected,
            AttentionKind::Slow => NoticeKind::Stuck,
            AttentionKind::Scheduled => NoticeKind::WaitingForWindow,
            // A failure is told as the crossing's own news, above.
            AttentionKind::Failed => continue,
        };
        let subject = attention
            .passage
            .as_deref()
            .or(attention.bundle.as_deref())
            .unwrap_or_default();
        let mut notice = Notice::new(
            format!("{namespace}/{name}/{subject}/{}", kind.as_str()),
            kind,
            namespace,
            &name,
            format!("{name}: {}", attention.detail),
        );
        notice.bundle = attention.bundle.clone();
        notice.version = attention
            .bundle
            .as_deref()
            .and_then(|b| version_of(snapshot, b));
        notice.passage = attention.passage.clone();
        notice.with_action(attention.action);
        out.push(notice);
    }
    out.sort_by_key(|n| n.at.as_ref().map_or(now, |t| t.0));
    out
}

/// What happened to `passage` since `since`: its start, its end, its verification's
/// "no".
fn crossing_news(snapshot: &NamespaceSnapshot, passage: &Passage, since: Timestamp) -> Vec<Notice> {
    let Some(status) = passage.status.as_ref() else {
        return Vec::new();
    };
    let recent = |t: Option<&Time>| t.filter(|t| t.0 >= since).cloned();
    let namespace = snapshot.namespace();
    let gate = passage.spec.gate.as_str();
    let bundle = passage.spec.bundle.as_str();
    let named = version_of(snapshot, bundle).unwrap_or_else(|| bundle.to_string());
    let crossing = CrossingKind::of(passage);
    let actor = passage.spec.actor.as_str();
    let mut out = Vec::new();
    let mut news = |kind: NoticeKind, at: Time, summary: String, action: Option<Remedy>| {
        let mut notice = Notice::new(
            format!(
                "{namespace}/{gate}/{}@{}/{}",
                passage.name_any(),
                uid_prefix(passage),
                kind.as_str()
            ),
            kind,
            namespace,
            gate,
            summary,
        );
        notice.bundle = Some(bundle.to_string());
        notice.version = version_of(snapshot, bundle);
        notice.revision = revision_of(snapshot, bundle);
        notice.passage = Some(passage.name_any());
        notice.actor = (!actor.is_empty()).then(|| actor.to_string());
        notice.at = Some(at);
        notice.with_action(action);
        out.push(notice);
    };
    let undone = rollback::of(passage, |name| {
        snapshot.passages_of(gate).find(|p| p.name_any() == name)
    });
    let by = match actor {
        "" => String::new(),
        hecate_types::wellknown::ACTOR_CONTROLLER => " (by itself)".to_string(),
        person => format!(" (by {person})"),
    };
    if let Some(started) = recent(status.started_at.as_ref()) {
        let summary = match (&crossing, &undone) {
            (CrossingKind::Rollback, Some(undone)) => {
                format!("{gate}: rolling back to {named}{by}: {}", undone.why)
            }
            (CrossingKind::CatchUp, _) => format!(
                "{gate}: bringing {} up to {named}{by}",
                passage.spec.targets.join(", ")
            ),
            _ => format!("{gate}: {named} started crossing{by}"),
        };
        news(NoticeKind::CrossingStarted, started, summary, None);
    }
    if let Some(finished) = recent(status.finished_at.as_ref()) {
        let inspect = Some(Remedy::InspectPassage {
            passage: passage.name_any(),
        });
        match passage.phase() {
            PassagePhase::Succeeded if crossing == CrossingKind::Rollback => {
                let why = undone.map(|u| format!(": {}", u.why)).unwrap_or_default();
                news(
                    NoticeKind::RolledBack,
                    finished,
                    format!("{gate} rolled back to {named}{by}{why}"),
                    None,
                );
            }
            PassagePhase::Succeeded => {
                let targets = if crossing == CrossingKind::CatchUp {
                    format!(" on {}", passage.spec.targets.join(", "))
                } else {
                    String::new()
                };
                news(
                    NoticeKind::Crossed,
                    finished,
                    format!("{named} crossed {gate}{targets}{by}"),
                    None,
                );
            }
            PassagePhase::Failed => {
                let words = explain::failure_words(passage);
                news(
                    NoticeKind::CrossingFailed,
                    finished,
                    format!("{gate}: the crossing of {named} {words}"),
                    inspect,
                );
            }
            PassagePhase::Aborted => {
                let by = passage
                    .annotations()
                    .get(hecate_types::wellknown::ANNOTATION_ABORTED_BY)
                    .map(|who| format!(" by {who}"))
                    .unwrap_or_default();
                news(
                    NoticeKind::CrossingAborted,
                    finished,
                    format!("{gate}: the crossing of {named} was aborted{by}"),
                    None,
                );
            }
            PassagePhase::Pending | PassagePhase::Running => {}
        }
    }
    if let Some(verification) = status
        .verification
        .as_ref()
        .filter(|v| v.phase == VerificationPhase::Failed)
        && let Some(at) = recent(verification.finished_at.as_ref())
    {
        let why = if verification.message.is_empty() {
            String::new()
        } else {
            format!(": {}", verification.message)
        };
        news(
            NoticeKind::VerificationFailed,
            at,
            format!("{gate}: {named} crossed and was not verified{why}"),
            Some(Remedy::Rollback {
                gate: gate.to_string(),
            }),
        );
    }
    out
}

/// A rollout stopped at its failure budget, while it stays stopped: Explain's blocker,
/// with its fix.
fn halted(snapshot: &NamespaceSnapshot, gate: &str, explanation: &Explanation) -> Option<Notice> {
    let blocker = explanation
        .blockers
        .iter()
        .find(|b| b.kind == BlockerKind::RolloutHalted)?;
    let crossing = explanation.crossing.as_ref()?;
    let passage = snapshot
        .passages_of(gate)
        .find(|p| p.name_any() == crossing.passage)?;
    let wave = passage
        .status
        .as_ref()
        .and_then(|s| s.rollout.as_ref())
        .map_or(0, |r| r.wave);
    let namespace = snapshot.namespace();
    let mut notice = Notice::new(
        format!(
            "{namespace}/{gate}/{}@{}/{}/wave-{wave}",
            passage.name_any(),
            uid_prefix(passage),
            NoticeKind::RolloutHalted.as_str()
        ),
        NoticeKind::RolloutHalted,
        namespace,
        gate,
        format!("{gate}: {}", blocker.detail),
    );
    notice.bundle = Some(passage.spec.bundle.clone());
    notice.version = version_of(snapshot, &passage.spec.bundle);
    notice.passage = Some(passage.name_any());
    notice.with_action(blocker.action.clone());
    Some(notice)
}

fn version_of(snapshot: &NamespaceSnapshot, bundle: &str) -> Option<String> {
    snapshot
        .bundles()
        .find(|b| b.metadata.name.as_deref() == Some(bundle))
        .map(version::of)
        .filter(|v| !v.is_empty())
}

/// The first commit `bundle` pins.
fn revision_of(snapshot: &NamespaceSnapshot, bundle: &str) -> Option<String> {
    snapshot
        .bundles()
        .find(|b| b.metadata.name.as_deref() == Some(bundle))?
        .spec
        .artifacts
        .iter()
        .find_map(|a| a.commit.as_ref())
        .map(|c| c.sha.clone())
        .filter(|sha| !sha.is_empty())
}

/// The first eight characters of a Passage's uid: a name used again after a deletion
/// is another crossing, with other news.
fn uid_prefix(passage: &Passage) -> &str {
    let uid = passage.metadata.uid.as_deref().unwrap_or_default();
    uid.get(..8).unwrap_or(uid)
}

impl Notice {
    /// A notice of `kind` about `gate`, with nothing else known yet.
    pub fn new(
        key: String,
        kind: NoticeKind,
        namespace: &str,
        gate: &str,
        summary: String,
    ) -> Self {
        Self {
            key,
            kind,
            severity: kind.severity(),
            namespace: namespace.to_string(),
            gate: gate.to_string(),
            bundle: None,
            version: None,
            passage: None,
            revision: None,
            actor: None,
            at: None,
            summary,
            action: None,
            command: None,
        }
    }

    fn with_action(&mut self, action: Option<Remedy>) {
        self.command = action.as_ref().map(|a| a.fix(&self.namespace));
        self.action = action;
    }
}

/// Whether a Notifier `spec` in `namespace` hears `notice`: its namespace (or every
/// namespace, for a Notifier in the controller's own `platform` namespace that says
/// so), the Gates and kinds it names, and at least its severity.
pub fn hears(spec: &NotifierSpec, namespace: &str, platform: &str, notice: &Notice) -> bool {
    // A GitHub deployment follows a crossing; what waits on a person is not one.
    if spec.type_ == NotifierType::GitHub && notice.passage.is_none() {
        return false;
    }
    let reaches = notice.namespace == namespace || (spec.all_namespaces && namespace == platform);
    reaches
        && (spec.events.is_empty() || spec.events.contains(&notice.kind))
        && (spec.gates.is_empty() || spec.gates.contains(&notice.gate))
        && notice.severity >= spec.event_severity
}

/// What is wrong with a Notifier's spec, in words, if anything: a Notifier that would
/// fail every delivery says so once, on its condition.
pub fn judge_spec(spec: &NotifierSpec, namespace: &str, platform: &str) -> Result<(), String> {
    if spec.all_namespaces && namespace != platform {
        return Err(format!(
            "allNamespaces is honoured only for a Notifier in {platform}, the controller's namespace"
        ));
    }
    if !spec.reminder.is_empty() {
        let every = duration::parse(&spec.reminder)
            .map_err(|e| format!("reminder {:?}: {e}", spec.reminder))?;
        if every < SignedDuration::from_mins(1) {
            return Err(format!(
                "reminder {:?} is shorter than a minute",
                spec.reminder
            ));
        }
    }
    if spec.type_ == NotifierType::GitHub
        && spec.repository.split('/').filter(|p| !p.is_empty()).count() != 2
    {
        return Err("type github needs repository: owner/name".to_string());
    }
    Ok(())
}

/// One notice to send now, and under which key: a reminder is the notice's key with
/// `#2`, `#3`, ….
#[derive(Clone, Debug, PartialEq)]
pub struct Due {
    /// The notice, its key the one it is sent under.
    pub notice: Notice,
}

/// What a Notifier sends at `now`, oldest first: the notices it hears (`heard`,
/// already filtered by [`hears`]) that its `records` do not hold, those whose retry is
/// due, and the approvals a reminder re-announces. What happened before the Notifier
/// was `created`, or before [`HORIZON`], is not sent.
pub fn due(
    spec: &NotifierSpec,
    created: Timestamp,
    records: &[NoticeRecord],
    heard: &[Notice],
    now: Timestamp,
) -> Vec<Due> {
    if spec.suspend {
        return Vec::new();
    }
    let since = created.max(now - HORIZON);
    let reminder = duration::parse(&spec.reminder).ok();
    let mut out = Vec::new();
    for notice in heard {
        if notice.at.as_ref().is_some_and(|at| at.0 < since) {
            continue;
        }
        let mine: Vec<&NoticeRecord> = records
            .iter()
            .filter(|r| base_key(&r.key) == notice.key)
            .collect();
        let Some(latest) = mine
            .iter()
            .max_by_key(|r| r.last_attempt.as_ref().map(|t| t.0))
        else {
            out.push(Due {
                notice: notice.clone(),
            });
            continue;
        };
        match latest.outcome {
            NoticeOutcome::Retrying => {
                if latest.next_attempt.as_ref().is_none_or(|t| t.0 <= now) {
                    let mut notice = notice.clone();
                    notice.key.clone_from(&latest.key);
                    out.push(Due { notice });
                }
            }
            NoticeOutcome::Sent if notice.kind == NoticeKind::ApprovalWanted => {
                let last = latest.last_attempt.as_ref().map(|t| t.0);
                if let (Some(every), Some(last)) = (reminder, last)
                    && now >= last + every
                {
                    let mut notice = notice.clone();
                    notice.key = format!("{}#{}", notice.key, mine.len() + 1);
                    out.push(Due { notice });
                }
            }
            NoticeOutcome::Sent | NoticeOutcome::Failed => {}
        }
    }
    out
}

/// The key a record's notice has: its key without a reminder's `#n`.
fn base_key(key: &str) -> &str {
    match key.rsplit_once('#') {
        Some((base, n)) if n.parse::<u32>().is_ok() => base,
        _ => key,
    }
}

/// `records` after `due` was tried at `now` with `result` (an error in words that
/// names no credential): sent, to be retried after a wait that doubles, or given up
/// after [`MAX_ATTEMPTS`].
pub fn settle(
    records: &mut Vec<NoticeRecord>,
    due: &Due,
    result: Result<(), String>,
    now: Timestamp,
) {
    let notice = &due.notice;
    let index = match records.iter().position(|r| r.key == notice.key) {
        Some(index) => index,
        None => {
            records.insert(
                0,
                NoticeRecord {
                    key: notice.key.clone(),
                    kind: notice.kind,
                    namespace: notice.namespace.clone(),
                    gate: notice.gate.clone(),
                    passage: notice.passage.clone().unwrap_or_default(),
                    summary: notice.summary.clone(),
                    at: notice.at.clone().unwrap_or(Time(now)),
                    outcome: NoticeOutcome::Retrying,
                    attempts: 0,
                    last_attempt: None,
                    next_attempt: None,
                    error: String::new(),
                },
            );
            0
        }
    };
    let record = &mut records[index];
    record.attempts += 1;
    record.last_attempt = Some(Time(now));
    match result {
        Ok(()) => {
            record.outcome = NoticeOutcome::Sent;
            record.next_attempt = None;
            record.error.clear();
        }
        Err(error) => {
            record.error = hecate_types::limits::truncate(&error, 1024).to_string();
            if record.attempts >= MAX_ATTEMPTS {
                record.outcome = NoticeOutcome::Failed;
                record.next_attempt = None;
            } else {
                record.outcome = NoticeOutcome::Retrying;
                record.next_attempt = Some(Time(now + wait_after(record.attempts)));
            }
        }
    }
}

/// The wait after the `attempts`th failed try.
fn wait_after(attempts: i32) -> SignedDuration {
    let doublings = u32::try_from(attempts.saturating_sub(1))
        .unwrap_or(0)
        .min(16);
    (FIRST_WAIT * 2_i32.pow(doublings)).min(LONGEST_WAIT)
}

/// Drops from `records` what no longer matters at `now`: a record older than
/// [`KEPT_FOR`] whose notice is not `heard` any more, and, past
/// [`hecate_types::DELIVERIES_KEPT`], the oldest. A notice still retrying that is no
/// longer heard (what it said stopped holding, or passed the horizon) is given up.
pub fn prune(records: &mut Vec<NoticeRecord>, heard: &[Notice], now: Timestamp) {
    let heard: HashSet<&str> = heard.iter().map(|n| n.key.as_str()).collect();
    for record in records.iter_mut() {
        if record.outcome == NoticeOutcome::Retrying && !heard.contains(base_key(&record.key)) {
            record.outcome = NoticeOutcome::Failed;
            record.next_attempt = None;
            if record.error.is_empty() {
                record.error = "what it said no longer holds".to_string();
            }
        }
    }
    records.retain(|r| {
        heard.contains(base_key(&r.key))
            || r.last_attempt.as_ref().unwrap_or(&r.at).0 + KEPT_FOR > now
    });
    records.sort_by(|a, b| {
        let when = |r: &NoticeRecord| r.last_attempt.as_ref().unwrap_or(&r.at).0;
        when(b).cmp(&when(a))
    });
    records.truncate(hecate_types::DELIVERIES_KEPT);
}

/// Where a Notifier stands, as its `Ready` condition says it: its spec's problem, or
/// its newest try — sent, or failing and why.
pub fn ready(problem: Option<&str>, records: &[NoticeRecord]) -> super::standing::Ready {
    use super::standing::Ready;
    if let Some(problem) = problem {
        return Ready::new(false, "InvalidSpec", problem);
    }
    let newest = records
        .iter()
        .filter(|r| r.last_attempt.is_some())
        .max_by_key(|r| r.last_attempt.as_ref().map(|t| t.0));
    match newest {
        None => Ready::new(true, "Listening", "nothing sent yet"),
        Some(r) if r.outcome == NoticeOutcome::Sent => Ready::new(
            true,
            "Delivered",
            format!("sent {} of {}/{}", r.kind.as_str(), r.namespace, r.gate),
        ),
        Some(r) => {
            let next = match &r.next_attempt {
                Some(at) => format!("; tried {} times, next at {}", r.attempts, at.0),
                None => format!("; given up after {} tries", r.attempts),
            };
            Ready::new(
                false,
                "DeliveryFailed",
                format!(
                    "{} of {}/{} was not sent: {}{next}",
                    r.kind.as_str(),
                    r.namespace,
                    r.gate,
                    r.error
                ),
            )
        }
    }
}

/// Who is told about `namespace`'s releases — about `gate`'s, when one is named — and
/// what they sent, newest first.
pub fn listing(namespace: &str, notifiers: &[Notifier], gate: Option<&str>) -> Notifications {
    let mut listed: Vec<&Notifier> = notifiers
        .iter()
        .filter(|n| {
            gate.is_none_or(|g| n.spec.gates.is_empty() || n.spec.gates.iter().any(|x| x == g))
        })
        .collect();
    listed.sort_by_key(|n| n.name_any());
    let mut sent: Vec<SentNotice> = listed
        .iter()
        .flat_map(|n| {
            let status = n.status.as_ref();
            status
                .into_iter()
                .flat_map(|s| &s.deliveries)
                .filter(|r| gate.is_none_or(|g| r.gate == g))
                .map(|r| SentNotice {
                    namespace: namespace.to_string(),
                    notifier: n.name_any(),
                    destination: destination(n.spec.type_).to_string(),
                    kind: r.kind,
                    about_namespace: r.namespace.clone(),
                    gate: r.gate.clone(),
                    passage: r.passage.clone(),
                    summary: r.summary.clone(),
                    outcome: r.outcome,
                    attempts: r.attempts,
                    at: r.at.clone(),
                    last_attempt: r.last_attempt.clone(),
                    error: r.error.clone(),
                })
        })
        .collect();
    sent.sort_by(|a, b| {
        let when = |s: &SentNotice| s.last_attempt.as_ref().unwrap_or(&s.at).0;
        when(b).cmp(&when(a))
    });
    let notifiers = listed
        .iter()
        .map(|n| {
            let ready = n.status.as_ref().and_then(|s| {
                s.conditions
                    .iter()
                    .find(|c| c.type_ == hecate_types::wellknown::condition::READY)
            });
            NotifierSummary {
                name: n.name_any(),
                destination: destination(n.spec.type_).to_string(),
                ready: ready.map(|c| c.status == hecate_types::ConditionStatus::True),
                reason: ready.map(|c| c.reason.clone()).unwrap_or_default(),
                message: ready.map(|c| c.message.clone()).unwrap_or_default(),
                hears: hears_words(&n.spec),
                suspended: n.spec.suspend,
            }
        })
        .collect();
    Notifications {
        namespace: namespace.to_string(),
        gate: gate.map(str::to_string),
        notifiers,
        sent,
    }
}

/// A destination's type as written in `spec.type`.
fn destination(kind: NotifierType) -> &'static str {
    match kind {
        NotifierType::Slack => "slack",
        NotifierType::MsTeams => "msteams",
        NotifierType::Generic => "generic",
        NotifierType::GenericHmac => "generic-hmac",
        NotifierType::GitHub => "github",
    }
}

/// What a Notifier hears, in words.
fn hears_words(spec: &NotifierSpec) -> String {
    let mut words = Vec::new();
    if spec.all_namespaces {
        words.push("every namespace".to_string());
    }
    words.push(if spec.gates.is_empty() {
        "every Gate".to_string()
    } else {
        format!("Gates {}", spec.gates.join(", "))
    });
    words.push(if spec.events.is_empty() {
        "every kind".to_string()
    } else {
        spec.events
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    });
    if spec.event_severity == hecate_types::Severity::Error {
        words.push("errors only".to_string());
    }
    if !spec.reminder.is_empty() {
        words.push(format!("reminds every {}", spec.reminder));
    }
    words.join("; ")
}

#[cfg(test)]
mod tests;
