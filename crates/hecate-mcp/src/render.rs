//! The `text` content of tool results: what a model (or a client that ignores
//! `structuredContent`) reads. Short, and carrying the same facts as the structured
//! answer; where a layout is given by the spec it is kept exactly.

use hecate_ops::{Aborted, Explanation, GateTargets, Promoted, RolledBack, RolloutAsked};
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
        for other in &blocker.alternatives {
            text.push_str(&format!("\n  or: {}", other.fix));
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
    // What ops adds to the reference's answer: the last failure of an eligible
    // Bundle here, the crossing's times, the windows in words.
    for failed in &explanation.failed_before {
        text.push_str(&format!(
            "\nfailed here before: {} ({}: {})",
            failed.bundle, failed.passage, failed.reason
        ));
    }
    if let Some(crossing) = &explanation.crossing {
        let when = |t: &Option<hecate_types::Time>| {
            t.as_ref()
                .map(|t| t.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                .unwrap_or_else(|| "unknown".into())
        };
        text.push_str(&format!("\ncrossing: {}", crossing.passage));
        match &crossing.started_at {
            Some(_) => text.push_str(&format!(", started {}", when(&crossing.started_at))),
            None => text.push_str(&format!(
                ", created {}, not started",
                when(&crossing.created_at)
            )),
        }
        if let Some(step) = &crossing.step {
            text.push_str(&format!(
                "\nstep: {} since {}, {}",
                step.uses,
                when(&step.started_at),
                step.invocations()
            ));
        }
    }
    for window in &explanation.windows {
        text.push_str(&format!("\nwindow: {}", window.text));
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

/// `preview_crossing`: whether it would start, then each step in a line.
pub fn preview(preview: &hecate_ops::model::CrossingPreview) -> String {
    let mut lines = vec![match &preview.refused {
        None => format!(
            "crossing {} with {} would start (nothing was created)",
            preview.gate, preview.bundle.version
        ),
        Some(refusal) => format!(
            "promote of {} through {} would be refused ({}): {}",
            preview.bundle.version,
            preview.gate,
            refusal.code.as_str(),
            refusal.reason
        ),
    }];
    for (i, step) in preview.steps.iter().enumerate() {
        let effect = &step.effect_words;
        let with = serde_json::to_string(&step.with).unwrap_or_default();
        lines.push(format!("{}. {} — {effect}: {with}", i + 1, step.uses));
    }
    lines.join("\n")
}

/// `rollback`.
pub fn rolled_back(rolled_back: &RolledBack) -> String {
    format!(
        "opened Passage {} to roll {} back to {} (undoing {})",
        rolled_back.passage, rolled_back.gate, rolled_back.bundle, rolled_back.rollback_of
    )
}

/// `abort`.
pub fn aborted(aborted: &Aborted) -> String {
    format!(
        "asked Passage {} to stop: its remaining steps will be marked aborted (work already done, such as a pushed commit, is not undone)",
        aborted.passage
    )
}

/// `retry_targets`.
pub fn rollout_asked(asked: &RolloutAsked) -> String {
    format!(
        "asked Passage {} to cross its failed targets again; the controller carries it out once (get_passage shows each target's attempt)",
        asked.passage
    )
}

/// `rollout_targets`: one line per target, by wave.
pub fn targets(targets: &GateTargets) -> String {
    let Some(rollout) = &targets.rollout else {
        return if targets.spans_targets {
            format!("{} spans targets; no rollout has begun", targets.gate)
        } else {
            format!("{} is one place: it spans no targets", targets.gate)
        };
    };
    let mut text = format!(
        "{} rolls {} out in Passage {}: {}",
        targets.gate, rollout.version, rollout.passage, rollout.now.occupancy
    );
    for target in &rollout.targets {
        text.push_str(&format!(
            "\nwave {} {}: {} (attempt {})",
            target.wave,
            target.name,
            target.phase.as_str(),
            target.attempt
        ));
        if !target.message.is_empty() {
            text.push_str(&format!(" — {}", target.message));
        }
    }
    for later in &rollout.since {
        let kind = later.kind_of_some();
        let names: Vec<&str> = later.targets.iter().map(|t| t.name.as_str()).collect();
        text.push_str(&format!(
            "\nsince: {} is a {kind} of {} to {}: {}",
            later.passage,
            names.join(", "),
            later.version,
            later.now.phase
        ));
    }
    for fix in &targets.fixes {
        text.push_str(&format!("\nfix: {}", fix.fix));
    }
    text
}

/// Any other answer: the structured value as 2-space indented JSON.
pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// `preflight`: one line per eligible Bundle.
pub fn preflight(list: &crate::schema::PreflightList) -> String {
    if list.bundles.is_empty() {
        return format!(
            "nothing to check: {} has no eligible Bundles, or does not gate on evidence",
            list.gate
        );
    }
    list.bundles
        .iter()
        .map(|v| {
            if !v.unknown.is_empty() {
                format!("{}: evidence unknown — {}", v.bundle, v.unknown)
            } else if v.compliant {
                format!("{}: evidence ready", v.bundle)
            } else {
                format!(
                    "{}: would be refused — needs {} (for {})",
                    v.bundle,
                    v.missing.join(", "),
                    v.policies.join(", ")
                )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `flux_resources`: one line per Flux object.
pub fn flux_resources(list: &crate::schema::FluxResourceList) -> String {
    if list.resources.is_empty() {
        return format!("Gate {} watches no Flux objects", list.gate);
    }
    list.resources
        .iter()
        .map(|r| {
            let health = if r.missing {
                "missing"
            } else {
                r.health.as_str()
            };
            let mut line = format!("{}/{}", r.kind, r.name);
            if !r.cluster.is_empty() {
                // As the controller last assessed it: nobody reads it live from here.
                line.push_str(&format!(" on cluster {} (as last assessed)", r.cluster));
            }
            line.push_str(&format!(": {health}"));
            if r.suspended {
                line.push_str(", suspended");
            }
            if !r.revision.is_empty() {
                line.push_str(&format!(" at {}", r.revision));
            }
            if !r.detail.is_empty() {
                line.push_str(&format!(" — {}", r.detail));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `suspend_flux` and `resume_flux`.
pub fn flux_suspended(answer: &hecate_ops::FluxSuspended) -> String {
    if answer.suspended {
        format!(
            "suspended {}/{}: Flux leaves it alone until it is resumed",
            answer.kind, answer.name
        )
    } else {
        format!(
            "resumed {}/{}: Flux reconciles it again",
            answer.kind, answer.name
        )
    }
}

/// `reconcile_flux`.
pub fn flux_reconciled(answer: &hecate_ops::FluxReconciled) -> String {
    format!(
        "asked Flux to reconcile {}/{} now (requestedAt {}); its lastHandled shows the same value once done",
        answer.kind, answer.name, answer.requested_at
    )
}

#[cfg(test)]
mod tests {
    use hecate_ops::model::GateSummary;
    use hecate_ops::{Blocker, BlockerKind, Remedy, State, Waiting};
    use hecate_types::Health;

    use super::*;

    /// A rollout's text names the crossings of some of its targets since, and what
    /// ops offers to do about them.
    #[test]
    fn targets_name_crossings_of_some_targets_and_the_fixes() {
        let record = |passage: &str, version: &str, targets: &[&str], phase: &str| {
            hecate_ops::model::RolloutRecord {
                passage: passage.into(),
                bundle: version.into(),
                version: version.into(),
                active: false,
                now: hecate_ops::model::RolloutNow {
                    phase: phase.into(),
                    message: String::new(),
                    occupancy: format!("{version} on 2 of 3 targets; eu-2 failed"),
                    of: 3,
                    on: Vec::new(),
                    crossing: Vec::new(),
                    failed: Vec::new(),
                    accepted: Vec::new(),
                },
                wave: 0,
                targets: targets
                    .iter()
                    .map(|t| hecate_types::TargetStatus {
                        name: t.to_string(),
                        ..hecate_types::TargetStatus::default()
                    })
                    .collect(),
                omitted_targets: 0,
                rollback_of: None,
                since: Vec::new(),
            }
        };
        let mut rollout = record("production-2", "1.1.0", &[], "Completed");
        let mut back = record("production-3", "1.0.0", &["eu-2"], "Completed");
        back.rollback_of = Some("production-2".into());
        rollout.since = vec![back, record("production-4", "1.1.0", &["us-2"], "Running")];
        let action = Remedy::RollbackFailedTargets {
            gate: "production".into(),
            targets: vec!["eu-2".into()],
        };
        let targets = GateTargets {
            gate: "production".into(),
            namespace: "shop".into(),
            spans_targets: true,
            rollout: Some(rollout),
            fixes: vec![hecate_ops::model::Alternative {
                fix: action.fix("shop"),
                action,
            }],
        };
        assert_eq!(
            super::targets(&targets),
            "production rolls 1.1.0 out in Passage production-2: 1.1.0 on 2 of 3 targets; eu-2 failed\n\
             since: production-3 is a rollback of eu-2 to 1.0.0: Completed\n\
             since: production-4 is a catch-up of us-2 to 1.1.0: Running\n\
             fix: roll the failed targets back to what they ran before the rollout: hecate rollback production --targets failed -n shop"
        );
    }

    /// A connected cluster's object says on which cluster, and that it is as last
    /// assessed.
    #[test]
    fn flux_resources_name_a_connected_clusters_objects_by_cluster() {
        let object = |cluster: &str, health| hecate_ops::FluxResource {
            kind: "Kustomization".into(),
            name: "apps".into(),
            namespace: "shop".into(),
            suspended: false,
            health,
            detail: String::new(),
            revision: "main@sha1:abc".into(),
            last_handled: String::new(),
            missing: false,
            cluster: cluster.into(),
            operable: cluster.is_empty(),
        };
        let list = crate::schema::FluxResourceList {
            namespace: "shop".into(),
            gate: "production".into(),
            resources: vec![
                object("", Health::Healthy),
                object("eu-1", Health::Degraded),
            ],
        };
        assert_eq!(
            flux_resources(&list),
            "Kustomization/apps: Healthy at main@sha1:abc\n\
             Kustomization/apps on cluster eu-1 (as last assessed): Degraded at main@sha1:abc"
        );
        let none = crate::schema::FluxResourceList {
            resources: vec![],
            ..list
        };
        assert_eq!(
            flux_resources(&none),
            "Gate production watches no Flux objects"
        );
    }

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
                        from: vec![],
                    }),
                    "shop",
                ),
                Blocker::new(BlockerKind::Unhealthy, "the app is Degraded", None, "shop"),
            ],
            current: Some("b1".into()),
            eligible: vec!["b2".into(), "b1".into()],
            ahead: 2,
            waiting: vec![Waiting {
                bundle: "b3".into(),
                reason: "awaiting approval".into(),
                kind: None,
                action: None,
                approvals: None,
                until: None,
            }],
            health: Some(Health::Degraded),
            evidence: None,
            crossing: None,
            failed_before: vec![],
            windows: vec![],
            versions: Default::default(),
            left_behind: None,
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
    fn why_stuck_says_what_failed_before_the_crossing_and_the_windows() {
        use hecate_ops::model::{CrossingNow, FailedBefore, Outcome, StepNow, WindowWords};
        let at = |t: &str| Some(hecate_types::Time(t.parse().unwrap()));
        let explanation = Explanation {
            gate: "production".into(),
            namespace: "shop".into(),
            state: State::Crossing,
            summary: "crossing b2".into(),
            blockers: vec![],
            current: None,
            eligible: vec!["b1".into()],
            ahead: 1,
            waiting: vec![],
            health: None,
            evidence: None,
            crossing: Some(CrossingNow {
                rollout: None,
                passage: "production-2".into(),
                bundle: "b2".into(),
                created_at: at("2026-12-01T07:00:00Z"),
                started_at: at("2026-12-01T07:00:02Z"),
                stalled: false,
                step: Some(StepNow {
                    uses: "git-commit".into(),
                    alias: String::new(),
                    started_at: at("2026-12-01T07:01:00Z"),
                    attempts: 3,
                }),
            }),
            failed_before: vec![FailedBefore {
                bundle: "b1".into(),
                passage: "production-1".into(),
                outcome: Outcome::Failed,
                at: None,
                reason: "failed at flux-wait".into(),
            }],
            windows: vec![WindowWords {
                text: "no crossings Sat 00:00 – Mon 00:00 UTC; next in force Sat 00:00".into(),
                deny: true,
                open: false,
                next: None,
                zone: "UTC".into(),
                opens: None,
                closes: None,
            }],
            versions: Default::default(),
            left_behind: None,
        };
        insta::assert_snapshot!(why_stuck(&explanation), @r"
        production is Crossing: crossing b2

        eligible: b1
        failed here before: b1 (production-1: failed at flux-wait)
        crossing: production-2, started 2026-12-01T07:00:02Z
        step: git-commit since 2026-12-01T07:01:00Z, looked 3 times
        window: no crossings Sat 00:00 – Mon 00:00 UTC; next in force Sat 00:00
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
            ahead: 0,
            running: None,
            suspended: false,
            auto: false,
            admits: vec![],
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
