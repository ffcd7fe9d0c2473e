//! The `text` content of tool results: what a model (or a client that ignores
//! `structuredContent`) reads. Short, and carrying the same facts as the structured
//! answer; where a layout is given by the spec it is kept exactly.

use hecate_ops::{Aborted, Explanation, Promoted};
use serde::Serialize;

use crate::schema::GateList;

/// `why_stuck`: the state and summary, each blocker with its fix, then the Bundles
/// that could cross and those waiting.
///
/// ```text
/// <gate> is <State>: <summary>
/// [<Kind>] <detail>
///   fix: <fix>
///
/// eligible: a, b
/// waiting: <b> — <reason>
/// ```
pub fn why_stuck(explanation: &Explanation) -> String {
    let mut text = format!(
        "{} is {}: {}",
        explanation.gate,
        explanation.state.as_str(),
        explanation.summary
    );
    for blocker in &explanation.blockers {
        text.push_str(&format!("\n[{}] {}", blocker.kind.as_str(), blocker.detail));
        if !blocker.fix.is_empty() {
            text.push_str(&format!("\n  fix: {}", blocker.fix));
        }
    }
    if !explanation.eligible.is_empty() {
        text.push_str(&format!(
            "\n\neligible: {}",
            explanation.eligible.join(", ")
        ));
    }
    for waiting in &explanation.waiting {
        text.push_str(&format!(
            "\nwaiting: {} — {}",
            waiting.bundle, waiting.reason
        ));
    }
    text
}

/// `list_gates`: one line per Gate, `<gate>: <State> — <summary>`.
pub fn gate_list(list: &GateList) -> String {
    if list.gates.is_empty() {
        return format!("no Gates in {}", list.namespace);
    }
    list.gates
        .iter()
        .map(|gate| format!("{}: {} — {}", gate.name, gate.state.as_str(), gate.summary))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `promote`.
pub fn promoted(promoted: &Promoted) -> String {
    format!(
        "opened Passage {} to cross {} through {}",
        promoted.passage, promoted.bundle, promoted.gate
    )
}

/// `abort`.
pub fn aborted(aborted: &Aborted) -> String {
    format!(
        "asked Passage {} to stop: its remaining steps will be marked aborted (work already done, such as a pushed commit, is not undone)",
        aborted.passage
    )
}

/// Any other answer: the structured value as 2-space indented JSON.
pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use hecate_ops::model::GateSummary;
    use hecate_ops::{Blocker, BlockerKind, Remedy, State, Waiting};
    use hecate_types::Health;

    use super::*;

    #[test]
    fn why_stuck_follows_the_layout() {
        let explanation = Explanation {
            gate: "production".into(),
            namespace: "shop".into(),
            state: State::Blocked,
            summary: "b3 is waiting for an approval".into(),
            blockers: vec![
                Blocker::new(
                    BlockerKind::NotApproved,
                    "b3 needs an approval for production",
                    Some(Remedy::Approve {
                        gate: "production".into(),
                        bundle: "b3".into(),
                    }),
                    "shop",
                ),
                Blocker::new(BlockerKind::Unhealthy, "the app is Degraded", None, "shop"),
            ],
            current: Some("b1".into()),
            eligible: vec!["b2".into(), "b1".into()],
            waiting: vec![Waiting {
                bundle: "b3".into(),
                reason: "awaiting approval".into(),
                kind: None,
                action: None,
            }],
            health: Some(Health::Degraded),
            evidence: None,
        };
        insta::assert_snapshot!(why_stuck(&explanation), @r"
        production is Blocked: b3 is waiting for an approval
        [AwaitingApproval] b3 needs an approval for production
          fix: hecate approve b3 --gate production -n shop
        [Unhealthy] the app is Degraded

        eligible: b2, b1
        waiting: b3 — awaiting approval
        ");
    }

    #[test]
    fn gate_lists_are_one_line_each() {
        let empty = GateList {
            namespace: "shop".into(),
            gates: vec![],
        };
        assert_eq!(gate_list(&empty), "no Gates in shop");
        let summary = |name: &str, state| GateSummary {
            stage: Default::default(),
            name: name.into(),
            state,
            summary: format!("{name} summary"),
            blockers: vec![],
            health: Health::Healthy,
            issues: vec![],
            current: None,
            eligible: 0,
            running: None,
            suspended: false,
        };
        let list = GateList {
            namespace: "shop".into(),
            gates: vec![
                summary("dev", State::Idle),
                summary("staging", State::Ready),
            ],
        };
        assert_eq!(
            gate_list(&list),
            "dev: Idle — dev summary\nstaging: Ready — staging summary"
        );
    }
}
