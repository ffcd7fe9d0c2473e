//! Whether a Bundle's approvals let it cross a Gate: `requireApproval`'s one approval
//! from anyone, or an approval policy's rules — distinct people, from named groups or
//! by name, for as long as an approval lasts, never its author, an upstream promoter
//! or the promoter — and whether a "no" holds it (docs/DECISIONS.md 137).
//!
//! One judgement, [`judge`], answers every question asked of approvals: eligibility
//! (and through it Explain, promote and the controller), the approvals queue, and
//! approve's own refusal ([`may_count`]). Who is in a group is what the cluster said of
//! the approver when they approved (`status.approvals[].groups`), never a name typed in.

use hecate_types::{
    Admission, ApprovalPolicy, ApprovalRule, Bundle, Gate, PolicyApproval, Rejection, Time,
};
use jiff::{SignedDuration, Timestamp};

use super::eligibility::{self, Code};
use super::snapshot::NamespaceSnapshot;
use crate::model::{
    ApprovalProgress, NotCounted, Person, QueuedApproval, RejectionView, RuleProgress, Uncounted,
    WindowHold, YourTurn,
};

/// The actor automatic crossings record: not a person, never excluded as a promoter.
pub const CONTROLLER: &str = "controller";

/// How far ahead of this clock an approval's time may be and still count: the
/// writer's clock may run a little fast.
const CLOCK_SKEW: SignedDuration = SignedDuration::from_mins(5);

fn later(t: Timestamp, by: SignedDuration) -> Timestamp {
    t.checked_add(by).unwrap_or(Timestamp::MAX)
}

/// What an admission asks of approvals, if anything.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Asked<'a> {
    /// Nothing: no approval is needed.
    Nothing,
    /// `requireApproval` alone: one approval, from anyone.
    One,
    /// An approval policy.
    Policy(&'a ApprovalPolicy),
}

impl<'a> Asked<'a> {
    /// What `admission` asks. A policy implies `requireApproval`.
    pub fn of(admission: &'a Admission) -> Self {
        match (&admission.approvals, admission.require_approval) {
            (Some(policy), _) => Self::Policy(policy),
            (None, true) => Self::One,
            (None, false) => Self::Nothing,
        }
    }
}

/// How `bundle` stands against what `asked` of approvals for `gate` at `now`, when
/// `promoter` (if known) asks to cross: `None` when nothing is asked.
pub fn judge(
    asked: Asked<'_>,
    gate: &str,
    bundle: &Bundle,
    promoter: Option<&str>,
    now: Timestamp,
) -> Option<ApprovalProgress> {
    let rejected = standing_rejection(asked, gate, bundle).map(|r| RejectionView {
        by: r.actor.clone(),
        at: r.at.clone(),
        reason: r.reason.clone(),
    });
    let policy = match asked {
        Asked::Nothing => {
            // A "no" holds a Bundle wherever it was given, asked for approvals or not.
            return rejected.map(|rejected| ApprovalProgress {
                satisfied: false,
                summary: summarise(&[], &[], &[], Some(&rejected)),
                rules: Vec::new(),
                any_of: Vec::new(),
                not_counted: Vec::new(),
                rejected: Some(rejected),
                expires_at: None,
            });
        }
        Asked::One => None,
        Asked::Policy(policy) => Some(policy),
    };
    let lifetime = policy.and_then(lifetime);
    let mut counted: Vec<PolicyApproval> = Vec::new();
    let mut not_counted = Vec::new();
    let mut expires_at: Option<Timestamp> = None;
    for approval in approvals(gate, bundle, policy.is_some()) {
        let expiry = lifetime.and_then(|life| approval.at.0.checked_add(life).ok());
        let why = if approval.at.0 > later(now, CLOCK_SKEW) {
            Some(Uncounted::Future)
        } else if expiry.is_some_and(|at| at <= now) {
            Some(Uncounted::Expired)
        } else {
            policy
                .and_then(|policy| excluded(policy, bundle, gate, &approval.actor))
                .or_else(|| {
                    (promoter == Some(approval.actor.as_str())).then_some(Uncounted::Promoter)
                })
                .or_else(|| {
                    policy
                        .filter(|policy| !every_rule(policy).any(|rule| names(rule, &approval)))
                        .map(|_| Uncounted::NotNamed)
                })
        };
        match why {
            Some(why) => not_counted.push(NotCounted {
                actor: approval.actor.clone(),
                why,
            }),
            None => {
                expires_at = expires_at.into_iter().chain(expiry).min();
                counted.push(approval);
            }
        }
    }
    let anyone = [ApprovalRule {
        count: 1,
        ..ApprovalRule::default()
    }];
    let progress = |rules: &[ApprovalRule]| -> Vec<RuleProgress> {
        rules
            .iter()
            .map(|rule| rule_progress(rule, &counted, policy, bundle, gate))
            .collect()
    };
    let (rules, any_of) = match policy {
        Some(policy) if !policy.required.is_empty() || !policy.any_of.is_empty() => (
            progress(&policy.required),
            policy
                .any_of
                .iter()
                .map(|alternative| progress(&alternative.required))
                .collect(),
        ),
        // `requireApproval`, or a policy that names no rule: one from anyone.
        _ => (progress(&anyone), Vec::new()),
    };
    let holds = |rules: &[RuleProgress]| rules.iter().all(|rule| rule.holds);
    let satisfied = rejected.is_none()
        && holds(&rules)
        && (any_of.is_empty() || any_of.iter().any(|alternative| holds(alternative)));
    let summary = summarise(&rules, &any_of, &not_counted, rejected.as_ref());
    Some(ApprovalProgress {
        satisfied,
        summary,
        rules,
        any_of,
        not_counted,
        rejected,
        expires_at: expires_at.map(Time),
    })
}

/// How far `rule` has come with the approvals that count.
fn rule_progress(
    rule: &ApprovalRule,
    counted: &[PolicyApproval],
    policy: Option<&ApprovalPolicy>,
    bundle: &Bundle,
    gate: &str,
) -> RuleProgress {
    let approved_by: Vec<String> = counted
        .iter()
        .filter(|approval| names(rule, approval))
        .map(|approval| approval.actor.clone())
        .collect();
    let holds = approved_by.len() >= required(rule);
    // A rule of named people only: can enough of them still count?
    let eligible = rule
        .users
        .iter()
        .filter(|user| {
            policy
                .and_then(|policy| excluded(policy, bundle, gate, user))
                .is_none()
        })
        .count();
    RuleProgress {
        count: required(rule),
        groups: rule.groups.clone(),
        users: rule.users.clone(),
        impossible: !holds
            && rule.groups.is_empty()
            && !rule.users.is_empty()
            && eligible < required(rule),
        holds,
        approved_by,
    }
}

/// Every rule of `policy`: those that must hold, then each alternative's.
fn every_rule(policy: &ApprovalPolicy) -> impl Iterator<Item = &ApprovalRule> {
    policy
        .required
        .iter()
        .chain(policy.any_of.iter().flat_map(|a| a.required.iter()))
}

/// Whether an approval by `person` of `bundle` for `gate` would count at `now` (the
/// promoter aside, who is not known yet): `Err` says why not — what approve refuses
/// with, and what the approvals queue tells a person before they click. Under
/// `requireApproval` alone anyone's approval counts.
pub fn may_count(
    asked: Asked<'_>,
    gate: &str,
    bundle: &Bundle,
    person: &Person,
) -> Result<(), Uncounted> {
    let Asked::Policy(policy) = asked else {
        return Ok(());
    };
    if let Some(why) = excluded(policy, bundle, gate, &person.name) {
        return Err(why);
    }
    let as_approval = PolicyApproval {
        gate: gate.to_string(),
        actor: person.name.clone(),
        groups: person.groups.clone(),
        at: Time(Timestamp::UNIX_EPOCH),
    };
    let no_rules = policy.required.is_empty() && policy.any_of.is_empty();
    if no_rules || every_rule(policy).any(|rule| names(rule, &as_approval)) {
        Ok(())
    } else {
        Err(Uncounted::NotNamed)
    }
}

/// Whether `person` may withdraw a rejection holding `bundle` from `gate`: one they
/// gave, or any, when the admission's policy names them (a user of a rule, or a
/// member of a rule's group).
pub fn may_withdraw(asked: Asked<'_>, gate: &str, bundle: &Bundle, person: &Person) -> bool {
    let mut standing = bundle
        .rejections_for(gate)
        .filter(|r| stands(asked, r))
        .peekable();
    if standing.peek().is_none() {
        return false;
    }
    may_withdraw_all(asked, person) || standing.any(|r| r.actor == person.name)
}

/// Whose approval would help `progress` on: the users, then the groups, of the rules
/// that do not hold yet, each once; empty when any approver would (no names given).
pub fn missing_from(progress: &ApprovalProgress) -> Vec<String> {
    let holds = |rules: &[RuleProgress]| rules.iter().all(|rule| rule.holds);
    let mut open: Vec<&RuleProgress> = progress.rules.iter().filter(|r| !r.holds).collect();
    if !progress.any_of.iter().any(|alternative| holds(alternative)) {
        open.extend(progress.any_of.iter().flatten().filter(|r| !r.holds));
    }
    if open
        .iter()
        .any(|r| r.users.is_empty() && r.groups.is_empty())
    {
        return Vec::new();
    }
    let mut who: Vec<String> = Vec::new();
    for name in open
        .iter()
        .flat_map(|r| r.users.iter())
        .chain(open.iter().flat_map(|r| r.groups.iter()))
    {
        if !who.contains(name) {
            who.push(name.clone());
        }
    }
    who
}

/// Who may withdraw the rejection holding `bundle` from `gate`: the one who gave it,
/// then the people and groups the admission's policy names.
pub fn withdrawers(gate: &Gate, bundle: &Bundle) -> Vec<String> {
    let gate_name = gate.metadata.name.as_deref().unwrap_or_default();
    let admission = gate.admission_for(&bundle.spec.beacon);
    let asked = admission.map_or(Asked::Nothing, Asked::of);
    let mut who: Vec<String> = standing_rejection(asked, gate_name, bundle)
        .map(|r| r.actor.clone())
        .into_iter()
        .collect();
    let policy = admission.and_then(|a| a.approvals.as_ref());
    for rule in policy.into_iter().flat_map(every_rule) {
        for name in rule.users.iter().chain(rule.groups.iter()) {
            if !who.contains(name) {
                who.push(name.clone());
            }
        }
    }
    who
}

/// Who approved `bundle` for `gate` in a way that counts at `now`, in the order they
/// approved: the people a crossing must then be asked for by someone else than.
pub fn approvers(gate: &Gate, bundle: &Bundle, now: Timestamp) -> Vec<String> {
    let gate_name = gate.metadata.name.as_deref().unwrap_or_default();
    let Some(admission) = gate.admission_for(&bundle.spec.beacon) else {
        return Vec::new();
    };
    let Some(progress) = judge(Asked::of(admission), gate_name, bundle, None, now) else {
        return Vec::new();
    };
    let mut who: Vec<String> = Vec::new();
    for name in progress
        .rules
        .iter()
        .chain(progress.any_of.iter().flatten())
        .flat_map(|r| r.approved_by.iter())
    {
        if !who.contains(name) {
            who.push(name.clone());
        }
    }
    who
}

/// The next instant after `now` at which an approval of one of `bundles` for `gate`
/// stops counting: when what Explain says of it changes with the clock alone.
pub fn next_expiry<'a>(
    gate: &Gate,
    bundles: impl IntoIterator<Item = &'a Bundle>,
    now: Timestamp,
) -> Option<Timestamp> {
    let expiring = gate.spec.admits.iter().any(|a| {
        a.approvals
            .as_ref()
            .is_some_and(|p| !p.expire_after.trim().is_empty())
    });
    if !expiring {
        return None;
    }
    let gate_name = gate.metadata.name.as_deref().unwrap_or_default();
    bundles
        .into_iter()
        .filter_map(|bundle| {
            let admission = gate.admission_for(&bundle.spec.beacon)?;
            let progress = judge(Asked::of(admission), gate_name, bundle, None, now)?;
            progress.expires_at.map(|t| t.0).filter(|at| *at > now)
        })
        .min()
}

/// Whether the admission's policy names `person` (a rule's user, or a member of a
/// rule's group): they may withdraw anyone's rejection, not only their own.
pub fn may_withdraw_all(asked: Asked<'_>, person: &Person) -> bool {
    names_person(asked, &person.name, &person.groups)
}

fn names_person(asked: Asked<'_>, name: &str, groups: &[String]) -> bool {
    let Asked::Policy(policy) = asked else {
        return false;
    };
    every_rule(policy).any(|rule| {
        rule.users.iter().any(|u| u == name) || rule.groups.iter().any(|g| groups.contains(g))
    })
}

/// Whether `rejection` still holds its Bundle under what `asked`: it does until
/// withdrawn by someone who may withdraw it — the one who gave it, or someone the
/// policy names, by name or by the groups recorded when they withdrew it. A
/// withdrawal written by anyone else is in the record and changes nothing: anyone
/// who may write a Bundle's status may write one in their own name (DECISION 148).
pub fn stands(asked: Asked<'_>, rejection: &Rejection) -> bool {
    if !rejection.is_withdrawn() {
        return true;
    }
    let by = rejection.withdrawn_by.as_str();
    !(by == rejection.actor || names_person(asked, by, &rejection.withdrawn_groups))
}

/// The rejection holding `bundle` from `gate` under what `asked`, if any: the first
/// given of those that [`stands`].
pub fn standing_rejection<'a>(
    asked: Asked<'_>,
    gate: &'a str,
    bundle: &'a Bundle,
) -> Option<&'a Rejection> {
    bundle.rejections_for(gate).find(|r| stands(asked, r))
}

/// The approvals that may count for `gate`: under a policy, `status.approvals`, and the
/// `approvedFor` entry of someone not among them (an approval a reference tool
/// recorded, without groups); under `requireApproval`, the `approvedFor` entry alone,
/// as before policies. One per person: their latest.
fn approvals(gate: &str, bundle: &Bundle, policy: bool) -> Vec<PolicyApproval> {
    let legacy = bundle.approval_for(gate).map(|a| PolicyApproval {
        gate: a.gate.clone(),
        actor: a.actor.clone(),
        groups: Vec::new(),
        at: a.at.clone(),
    });
    if !policy {
        return legacy.into_iter().collect();
    }
    let mut latest: Vec<PolicyApproval> = Vec::new();
    for approval in bundle.policy_approvals_for(gate) {
        match latest.iter_mut().find(|a| a.actor == approval.actor) {
            Some(known) if known.at.0 < approval.at.0 => *known = approval.clone(),
            Some(_) => {}
            None => latest.push(approval.clone()),
        }
    }
    if let Some(legacy) = legacy
        && !latest.iter().any(|a| a.actor == legacy.actor)
    {
        latest.push(legacy);
    }
    latest
}

/// Why the policy excludes `actor` whoever promotes: the Bundle's author, or someone
/// who promoted it through another Gate.
fn excluded(
    policy: &ApprovalPolicy,
    bundle: &Bundle,
    gate: &str,
    actor: &str,
) -> Option<Uncounted> {
    if policy.exclude_author && is_author(bundle, actor) {
        return Some(Uncounted::Author);
    }
    if policy.exclude_upstream_promoters && promoted_upstream(bundle, gate, actor) {
        return Some(Uncounted::UpstreamPromoter);
    }
    None
}

/// Whether `actor` authored one of the Bundle's commits, as its Beacon recorded the
/// author (`Name <email>`): by email (any case) or by name.
pub fn is_author(bundle: &Bundle, actor: &str) -> bool {
    bundle
        .spec
        .artifacts
        .iter()
        .filter_map(|a| a.commit.as_ref())
        .any(|commit| {
            let author = commit.author.trim();
            if author.is_empty() || actor.is_empty() {
                return false;
            }
            let (name, email) = match author.split_once('<') {
                Some((name, rest)) => (name.trim(), rest.trim_end_matches('>').trim()),
                None => (author, ""),
            };
            name == actor || (!email.is_empty() && email.eq_ignore_ascii_case(actor))
        })
}

/// Whether `actor` asked for one of the crossings that cleared the Bundle through a
/// Gate other than `gate`.
pub fn promoted_upstream(bundle: &Bundle, gate: &str, actor: &str) -> bool {
    actor != CONTROLLER
        && bundle
            .status
            .iter()
            .flat_map(|s| s.cleared.iter())
            .any(|crossing| crossing.gate != gate && crossing.actor == actor)
}

/// Whether `rule` names the approver: no groups and no users (anyone), one of its users,
/// or a member of one of its groups when they approved.
fn names(rule: &ApprovalRule, approval: &PolicyApproval) -> bool {
    (rule.groups.is_empty() && rule.users.is_empty())
        || rule.users.contains(&approval.actor)
        || rule.groups.iter().any(|g| approval.groups.contains(g))
}

/// How many a rule asks for: at least one, whatever an older CRD let through.
fn required(rule: &ApprovalRule) -> usize {
    usize::try_from(rule.count).unwrap_or(0).max(1)
}

/// How long an approval counts, when the policy says. The CRD admits only Go
/// durations (a cluster without our CRD has no policies at all), so an unreadable or
/// zero one is not met here; it reads as no expiry.
fn lifetime(policy: &ApprovalPolicy) -> Option<SignedDuration> {
    let text = policy.expire_after.trim();
    if text.is_empty() {
        return None;
    }
    hecate_types::duration::parse(text)
        .ok()
        .filter(|d| d.is_positive())
}

/// The progress in words: what is missing, who counted, and who did not — "1 of 2
/// from release-managers; carol approved"; alternatives as "either … or …".
fn summarise(
    rules: &[RuleProgress],
    any_of: &[Vec<RuleProgress>],
    not_counted: &[NotCounted],
    rejected: Option<&RejectionView>,
) -> String {
    if let Some(rejected) = rejected {
        return format!("rejected by {}: {}", rejected.by, rejected.reason);
    }
    let missing =
        |rules: &[RuleProgress]| -> Vec<String> {
            rules
            .iter()
            .filter(|rule| !rule.holds)
            .map(|rule| {
                let progress =
                    format!("{} of {} {}", rule.approved_by.len(), rule.count, from(rule));
                if rule.impossible {
                    format!(
                        "{progress}, which no one can complete: too few of those it names may count"
                    )
                } else {
                    progress
                }
            })
            .collect()
        };
    let mut wanted = missing(rules);
    let alternative_holds = any_of.iter().any(|a| a.iter().all(|rule| rule.holds));
    if !any_of.is_empty() && !alternative_holds {
        let alternatives: Vec<String> = any_of.iter().map(|a| missing(a).join(" and ")).collect();
        wanted.push(format!("either {}", alternatives.join(" or ")));
    }
    let mut parts: Vec<String> = Vec::new();
    if wanted.is_empty() {
        parts.push("approved".into());
    } else {
        parts.push(wanted.join(", "));
    }
    let mut approvers: Vec<&str> = rules
        .iter()
        .chain(any_of.iter().flatten())
        .flat_map(|rule| rule.approved_by.iter().map(String::as_str))
        .collect();
    approvers.sort_unstable();
    approvers.dedup();
    if !approvers.is_empty() {
        parts.push(format!("{} approved", approvers.join(", ")));
    }
    for uncounted in not_counted {
        parts.push(format!(
            "{}'s approval does not count ({})",
            uncounted.actor,
            uncounted.why.words()
        ));
    }
    parts.join("; ")
}

/// Who a rule counts, in words: "from release-managers", "from carol or sre", "from
/// anyone".
fn from(rule: &RuleProgress) -> String {
    let mut who: Vec<&str> = rule.users.iter().map(String::as_str).collect();
    who.extend(rule.groups.iter().map(String::as_str));
    if who.is_empty() {
        "from anyone".into()
    } else {
        format!("from {}", who.join(" or "))
    }
}

/// Every Bundle of `snapshot` waiting on a person for a Gate — approvals still
/// missing, or a "no" that stands — as `viewer` sees it at `now`: where each stands,
/// and what their own approval (or withdrawal) would do. Gates upstream first, each
/// one's Bundles newest first; what a Gate runs now is neither waiting nor queued.
pub fn queue(snapshot: &NamespaceSnapshot, viewer: &Person, now: Timestamp) -> Vec<QueuedApproval> {
    let mut queue = Vec::new();
    for (gate, stage) in super::pipeline::upstream_first(snapshot.gates()) {
        let gate_name = gate.metadata.name.as_deref().unwrap_or_default();
        // Said where the decision is made: an approval into a frozen window waits.
        let windows = super::window::judge(&gate.spec.windows, now);
        let held = (!windows.allowed).then(|| WindowHold {
            reason: windows.reason_in_words(),
            until: windows.next_change.map(Time),
            unattended: gate.spec.auto,
        });
        let reach = super::rollout::reach(&gate.spec).unwrap_or_default();
        let running: Vec<&str> = snapshot
            .passages_of(gate_name)
            .filter(|p| !p.is_terminal())
            .map(|p| p.spec.bundle.as_str())
            .collect();
        for candidate in eligibility::evaluate(gate, snapshot.bundles(), None, now) {
            let Some(why) = &candidate.blocked else {
                continue;
            };
            let (Some(progress), Code::AwaitingApproval | Code::Rejected) =
                (&why.approvals, why.code)
            else {
                continue;
            };
            let bundle = candidate.bundle;
            if running.contains(&bundle.metadata.name.as_deref().unwrap_or_default()) {
                continue;
            }
            let Some(admission) = gate.admission_for(&bundle.spec.beacon) else {
                continue;
            };
            let asked = Asked::of(admission);
            let already = progress
                .rules
                .iter()
                .any(|rule| rule.approved_by.contains(&viewer.name));
            let verdict = may_count(asked, gate_name, bundle, viewer);
            queue.push(QueuedApproval {
                gate: gate_name.to_string(),
                stage: stage.clone(),
                bundle: bundle.metadata.name.clone().unwrap_or_default(),
                version: super::version::of(bundle),
                progress: progress.clone(),
                you: YourTurn {
                    can_approve: verdict.is_ok() && !already,
                    approved: already,
                    not_counted: verdict.err(),
                    why_not: verdict
                        .err()
                        .map(Uncounted::to_you)
                        .unwrap_or_default()
                        .into(),
                    can_withdraw: may_withdraw(asked, gate_name, bundle, viewer),
                },
                held: held.clone(),
                reach: reach.clone(),
            });
        }
    }
    queue
}
