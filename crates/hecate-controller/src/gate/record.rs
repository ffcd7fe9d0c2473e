//! Recording what a finished crossing did, once per Passage (spec controller.md §2.4):
//! a success makes the Bundle the Gate's occupant and, once verified, marks it cleared;
//! a failure or an abort marks it blocked. Pure edits of the statuses; each says
//! whether it changed anything, so a reconcile that sees the same Passage again writes
//! nothing.

use hecate_types::{Bundle, BundleStatus, GateCrossing, GateOccupant, GateStatus, Passage, Time};
use jiff::Timestamp;
use kube::ResourceExt as _;

/// How many failures a Bundle keeps per list, newest first (eligibility never reads
/// them; people and automation's "never retry" only need the newest).
pub const BLOCKED_CAP: usize = 10;
/// How many occupants a Gate's history keeps, newest first.
pub const HISTORY_CAP: usize = 10;

/// Records a failed or aborted `passage` of `gate` on the Bundle, newest first.
pub fn record_blocked(
    status: &mut BundleStatus,
    gate: &str,
    passage: &Passage,
    now: Timestamp,
) -> bool {
    if recorded(&status.blocked, passage) {
        return false;
    }
    let reason = passage
        .status
        .as_ref()
        .map(|s| s.message.clone())
        .unwrap_or_default();
    status
        .blocked
        .insert(0, crossing(gate, passage, now, reason));
    status.blocked.truncate(BLOCKED_CAP);
    true
}

/// Records that the Bundle crossed `gate` by `passage` and passed verification. Never
/// capped: downstream eligibility reads this list.
pub fn record_cleared(
    status: &mut BundleStatus,
    gate: &str,
    passage: &Passage,
    now: Timestamp,
) -> bool {
    if recorded(&status.cleared, passage) {
        return false;
    }
    status
        .cleared
        .push(crossing(gate, passage, now, String::new()));
    true
}

/// Whether `list` already records `passage`.
fn recorded(list: &[GateCrossing], passage: &Passage) -> bool {
    let name = passage.name_any();
    list.iter().any(|c| c.passage == name)
}

/// The record of `passage` crossing (or failing to cross) `gate`.
fn crossing(gate: &str, passage: &Passage, now: Timestamp, reason: String) -> GateCrossing {
    GateCrossing {
        gate: gate.into(),
        passage: passage.name_any(),
        at: Time(now),
        actor: passage.spec.actor.clone(),
        reason,
    }
}

/// Makes `bundle` the Gate's occupant by `passage`, and prepends it to the history.
pub fn record_occupant(
    status: &mut GateStatus,
    bundle: &Bundle,
    passage: &Passage,
    now: Timestamp,
) -> bool {
    let name = passage.name_any();
    if status.current.as_ref().is_some_and(|c| c.passage == name) {
        return false;
    }
    let occupant = GateOccupant {
        bundle: bundle.name_any(),
        digest: bundle.spec.digest.clone(),
        passage: name,
        entered_at: Time(now),
        actor: passage.spec.actor.clone(),
        verified: None,
    };
    status.history.insert(0, occupant.clone());
    status.history.truncate(HISTORY_CAP);
    status.current = Some(occupant);
    true
}

/// Marks the current occupant verified, or — `false` — that its verification said no
/// (the reference never sets it; we do, so readers can tell a verified occupant from
/// one still being judged and from one that failed, DECISION 139).
pub fn mark_verified(status: &mut GateStatus, verified: bool) -> bool {
    match status.current.as_mut() {
        Some(current) if current.verified != Some(verified) => {
            current.verified = Some(verified);
            if let Some(first) = status.history.first_mut()
                && first.passage == current.passage
            {
                first.verified = Some(verified);
            }
            true
        }
        _ => false,
    }
}

/// Records that the verification of the Bundle's crossing of `gate` by `passage` said
/// no, `why`; newest first, capped as `blocked` is. Downstream Gates read it to say
/// "not verified in `gate`" rather than "not cleared".
pub fn record_unverified(
    status: &mut BundleStatus,
    gate: &str,
    passage: &Passage,
    why: &str,
    now: Timestamp,
) -> bool {
    if recorded(&status.unverified, passage) {
        return false;
    }
    status
        .unverified
        .insert(0, crossing(gate, passage, now, why.into()));
    status.unverified.truncate(BLOCKED_CAP);
    true
}
