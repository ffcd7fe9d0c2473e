//! Fan-out (DECISION 151): which targets a Gate spans, their waves and budgets, and
//! what a rollout does next — progression, budgets as numbers and percentages, the
//! canary, halts and their fixes, acceptance, retry, catch-up, departures, deadlines —
//! and the occupant in words.

use std::collections::BTreeMap;

use hecate_types::{
    AcceptedFailures, ClusterSecretRef, CountOrPercent, GateSpec, Health, LabelSelector,
    LabelSelectorRequirement, Rollout, RolloutPhase, RolloutStatus, SelectorOperator, Target,
    TargetPhase, TargetStatus, Targets, Time, Var, Wave, WaveTargets,
};
use jiff::{SignedDuration, Timestamp};
use pretty_assertions::assert_eq;

use crate::rules::fixtures::*;
use crate::rules::rollout::*;

// ---------------------------------------------------------------------------
// Fixtures: five clusters, a canary among them.

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn cluster(name: &str, pairs: &[(&str, &str)]) -> Cluster {
    Cluster {
        name: name.into(),
        labels: labels(pairs),
    }
}

/// eu-1 (the canary), eu-2, us-1, us-2, and ap-1 (labelled retired).
fn fleet() -> Vec<Cluster> {
    vec![
        cluster("us-2", &[("region", "us"), ("tier", "prod")]),
        cluster("eu-1", &[("region", "eu"), ("tier", "canary")]),
        cluster("eu-2", &[("region", "eu"), ("tier", "prod")]),
        cluster("us-1", &[("region", "us"), ("tier", "prod")]),
        cluster("ap-1", &[("region", "ap"), ("retired", "yes")]),
    ]
}

fn match_labels(pairs: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: labels(pairs),
        ..LabelSelector::default()
    }
}

fn expression(key: &str, operator: SelectorOperator, values: &[&str]) -> LabelSelector {
    LabelSelector {
        match_expressions: vec![LabelSelectorRequirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }],
        ..LabelSelector::default()
    }
}

/// Every connected cluster not labelled retired.
fn selected() -> Targets {
    Targets {
        list: Vec::new(),
        selector: Some(expression("retired", SelectorOperator::DoesNotExist, &[])),
    }
}

fn listed(name: &str, cluster: Option<&str>) -> Target {
    Target {
        name: name.into(),
        cluster_ref: cluster.map(|c| ClusterSecretRef {
            name: c.into(),
            key: None,
        }),
        vars: Vec::new(),
    }
}

fn wave(name: &str) -> Wave {
    Wave {
        name: name.into(),
        ..Wave::default()
    }
}

fn by_labels(mut wave: Wave, pairs: &[(&str, &str)]) -> Wave {
    wave.targets = Some(WaveTargets {
        names: Vec::new(),
        selector: Some(match_labels(pairs)),
    });
    wave
}

fn by_names(mut wave: Wave, names: &[&str]) -> Wave {
    wave.targets = Some(WaveTargets {
        names: names.iter().map(|n| n.to_string()).collect(),
        selector: None,
    });
    wave
}

fn count(n: i64) -> Option<CountOrPercent> {
    Some(CountOrPercent::Count(n))
}

fn text(t: &str) -> Option<CountOrPercent> {
    Some(CountOrPercent::Text(t.into()))
}

fn spec(targets: Targets, waves: Vec<Wave>) -> GateSpec {
    GateSpec {
        targets: Some(targets),
        rollout: (!waves.is_empty()).then_some(Rollout { waves }),
        ..GateSpec::default()
    }
}

/// The span of `spec` over `clusters`, which must have no problem.
fn span_of(spec: &GateSpec, clusters: &[Cluster]) -> Span {
    span(spec, clusters)
        .expect("no problem")
        .expect("the Gate has targets")
}

/// The canary wave (eu-1, soaking 30 minutes), then the rest two at a time, one
/// failure allowed, 20 minutes each at most.
fn canary_then_rest() -> Span {
    let mut canary = by_labels(wave("canary"), &[("tier", "canary")]);
    canary.min_success_time = "30m".into();
    let mut rest = wave("rest");
    rest.max_concurrency = count(2);
    rest.max_failures = count(1);
    rest.progress_deadline = "20m".into();
    span_of(&spec(selected(), vec![canary, rest]), &fleet())
}

fn at(m: i64) -> Timestamp {
    t0() + SignedDuration::from_mins(m)
}

/// A target's record: in `phase`, started at T0 + `started`, finished at
/// T0 + `finished` (for a terminal phase).
fn record(name: &str, phase: TargetPhase, started: i64, finished: Option<i64>) -> TargetStatus {
    TargetStatus {
        name: name.into(),
        phase,
        attempt: 1,
        started_at: Some(Time(at(started))),
        finished_at: finished.map(|m| Time(at(m))),
        ..TargetStatus::default()
    }
}

fn ok(name: &str, started: i64, finished: i64) -> TargetStatus {
    record(name, TargetPhase::Succeeded, started, Some(finished))
}

fn failed(name: &str, started: i64, finished: i64, step: i32, reason: &str) -> TargetStatus {
    TargetStatus {
        current_step: step,
        reason: reason.into(),
        ..record(name, TargetPhase::Failed, started, Some(finished))
    }
}

fn running(name: &str, started: i64) -> TargetStatus {
    record(name, TargetPhase::Running, started, None)
}

fn status(records: Vec<TargetStatus>) -> RolloutStatus {
    RolloutStatus {
        targets: records,
        ..RolloutStatus::default()
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

fn start(wave: usize, targets: &[&str]) -> Decision {
    Decision::Start {
        wave,
        targets: names(targets),
    }
}

fn crossing(wave: usize, targets: &[&str]) -> Decision {
    Decision::Wait {
        wave,
        why: Waiting::Crossing {
            targets: names(targets),
        },
    }
}

// ---------------------------------------------------------------------------
// Targets

#[test]
fn targets_are_the_listed_then_the_selected_by_name() {
    let mut targets = selected();
    targets.list = vec![
        Target {
            vars: vec![Var {
                name: "replicas".into(),
                value: "5".into(),
            }],
            ..listed("us-1", Some("us-1"))
        },
        listed("local", None),
    ];
    let resolved = resolve(&targets, &fleet()).unwrap();
    let summary: Vec<(&str, Option<&str>, Origin, usize)> = resolved
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.cluster.as_deref(),
                t.origin,
                t.vars.len(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            // A listed target for a selected cluster is that cluster, once, with its vars.
            ("us-1", Some("us-1"), Origin::Listed, 1),
            ("local", None, Origin::Listed, 0),
            ("eu-1", Some("eu-1"), Origin::Selected, 0),
            ("eu-2", Some("eu-2"), Origin::Selected, 0),
            ("us-2", Some("us-2"), Origin::Selected, 0),
        ]
    );
    // A listed target reads its connected cluster's labels, for the waves' selectors.
    assert_eq!(
        resolved[0].labels,
        labels(&[("region", "us"), ("tier", "prod")])
    );
    assert!(resolved[1].labels.is_empty());
}

#[test]
fn targets_that_cannot_be_told_apart_or_named_are_problems() {
    let long = "c".repeat(64);
    let cases: Vec<(&str, Targets, Vec<Cluster>, Vec<&str>)> = vec![
        (
            "nothing named",
            Targets::default(),
            fleet(),
            vec!["targets: names no place; list targets, or select connected clusters by label"],
        ),
        (
            "a bad name and a duplicate",
            Targets {
                list: vec![
                    listed("EU_1", None),
                    listed("eu-1", None),
                    listed("eu-1", Some("eu-1")),
                ],
                selector: None,
            },
            fleet(),
            vec![
                "targets.list[0]: \"EU_1\" is not a target name: a Secret name of at most 63 characters",
                "targets: two targets are called eu-1; a target's name says which it is",
            ],
        ),
        (
            "a listed name that is another cluster's",
            Targets {
                list: vec![listed("eu-2", None)],
                selector: Some(match_labels(&[("region", "eu")])),
            },
            fleet(),
            vec!["targets: two targets are called eu-2; a target's name says which it is"],
        ),
        (
            "a selector that matches nothing",
            Targets {
                list: Vec::new(),
                selector: Some(match_labels(&[("region", "mars")])),
            },
            fleet(),
            vec![
                "targets.selector matches none of the 5 clusters connected to the namespace (Secrets labelled hecate.dev/cluster=true)",
            ],
        ),
        (
            "a selector the API server would refuse",
            Targets {
                list: Vec::new(),
                selector: Some(expression("region", SelectorOperator::In, &[])),
            },
            fleet(),
            vec!["targets.selector: matchExpressions[0]: In needs values to compare with"],
        ),
        (
            "a cluster whose name cannot be a target's",
            Targets {
                list: Vec::new(),
                selector: Some(LabelSelector::default()),
            },
            vec![cluster(&long, &[])],
            vec![],
        ),
        (
            "more than a Gate spans",
            Targets {
                list: Vec::new(),
                selector: Some(LabelSelector::default()),
            },
            (0..101)
                .map(|i| cluster(&format!("c-{i:03}"), &[]))
                .collect(),
            vec!["targets: 101 targets, more than the 100 one Gate spans; split them across Gates"],
        ),
    ];
    for (case, targets, clusters, expected) in cases {
        let problems: Vec<String> = resolve(&targets, &clusters)
            .expect_err(case)
            .iter()
            .map(ToString::to_string)
            .collect();
        if expected.is_empty() {
            // The long name: said with the way out.
            assert_eq!(problems.len(), 1, "{case}: {problems:?}");
            assert!(
                problems[0].contains("is not a target name")
                    && problems[0].contains(&format!("clusterRef: {{name: {long}}}")),
                "{case}: {problems:?}"
            );
        } else {
            assert_eq!(problems, expected, "{case}");
        }
    }
}

#[test]
fn a_gate_without_targets_is_one_place_as_before() {
    assert_eq!(span(&GateSpec::default(), &fleet()), Ok(None));
    let waves_alone = GateSpec {
        rollout: Some(Rollout {
            waves: vec![wave("canary")],
        }),
        ..GateSpec::default()
    };
    assert_eq!(
        span(&waves_alone, &fleet()),
        Err(vec![Problem::Plan(PlanProblem::WithoutTargets)])
    );
}

// ---------------------------------------------------------------------------
// Waves and budgets

/// A wave as the tables write it: index, kind, targets, concurrency, failures allowed.
type WaveRow = (usize, WaveKind, Vec<String>, usize, usize);

fn waves_of(span: &Span) -> Vec<WaveRow> {
    span.plan
        .waves
        .iter()
        .map(|w| {
            (
                w.index,
                w.kind,
                w.targets.clone(),
                w.max_concurrency,
                w.max_failures,
            )
        })
        .collect()
}

#[test]
fn each_target_goes_in_the_first_wave_that_selects_it() {
    // No waves: one wave of every target, all at once, tolerating none.
    let whole = span_of(&spec(selected(), vec![]), &fleet());
    assert_eq!(
        waves_of(&whole),
        [(
            0,
            WaveKind::Whole,
            names(&["eu-1", "eu-2", "us-1", "us-2"]),
            4,
            0
        )]
    );
    assert_eq!(whole.plan.waves[0].label(), "the one wave");

    // The canary, Europe, and nothing for the US: the US goes last, on its own.
    let europe = by_labels(wave("eu"), &[("region", "eu")]);
    let canary = by_names(wave("canary"), &["eu-1"]);
    let span = span_of(&spec(selected(), vec![canary, europe]), &fleet());
    assert_eq!(
        waves_of(&span),
        [
            (0, WaveKind::Listed, names(&["eu-1"]), 1, 0),
            (1, WaveKind::Listed, names(&["eu-2"]), 1, 0),
            (2, WaveKind::Rest, names(&["us-1", "us-2"]), 2, 0),
        ]
    );
    let labels: Vec<String> = span.plan.waves.iter().map(|w| w.label()).collect();
    assert_eq!(
        labels,
        [
            "wave 1 (canary)",
            "wave 2 (eu)",
            "the last wave (targets no wave selects)"
        ]
    );

    // A wave without targets takes the rest; an empty "rest" is no wave at all.
    let all_but_canary = wave("");
    let span = span_of(
        &spec(
            selected(),
            vec![
                by_names(wave("canary"), &["eu-1"]),
                all_but_canary,
                wave("none-left"),
            ],
        ),
        &fleet(),
    );
    assert_eq!(
        waves_of(&span),
        [
            (0, WaveKind::Listed, names(&["eu-1"]), 1, 0),
            (1, WaveKind::Listed, names(&["eu-2", "us-1", "us-2"]), 3, 0),
        ]
    );
    assert_eq!(span.plan.waves[1].label(), "wave 2");
}

#[test]
fn budgets_as_numbers_and_percentages() {
    // (value, wave size, failures allowed, at once)
    let cases: [(CountOrPercent, usize, usize, usize); 10] = [
        (CountOrPercent::Count(0), 4, 0, 1),
        (CountOrPercent::Count(1), 4, 1, 1),
        (CountOrPercent::Count(9), 4, 9, 4),
        (CountOrPercent::Text("2".into()), 4, 2, 2),
        // A failure budget rounds down: 10% of 5 is none, 25% of 8 is 2, 25% of 9 is 2.
        (CountOrPercent::Text("10%".into()), 5, 0, 1),
        (CountOrPercent::Text("25%".into()), 8, 2, 2),
        (CountOrPercent::Text("25%".into()), 9, 2, 3),
        (CountOrPercent::Text("50%".into()), 1, 0, 1),
        (CountOrPercent::Text("100%".into()), 3, 3, 3),
        // At once rounds up, to at least one: 1% of 3 is one.
        (CountOrPercent::Text("1%".into()), 3, 0, 1),
    ];
    for (value, size, failures, at_once) in cases {
        let budget = Budget::parse(&value).unwrap();
        assert_eq!(
            (budget.failures(size), budget.concurrency(size)),
            (failures, at_once),
            "{value} of {size}"
        );
    }
    for bad in [
        CountOrPercent::Count(-1),
        CountOrPercent::Text("101%".into()),
        CountOrPercent::Text("12.5%".into()),
        CountOrPercent::Text("%".into()),
        CountOrPercent::Text("one".into()),
        CountOrPercent::Text("-1".into()),
    ] {
        assert!(Budget::parse(&bad).is_err(), "{bad}");
    }
}

#[test]
fn waves_that_cannot_be_followed_are_problems() {
    let problems = |waves: Vec<Wave>, targets: Targets| -> Vec<String> {
        span(&spec(targets, waves), &fleet())
            .expect_err("problems")
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let mut bad = wave("bad");
    bad.max_concurrency = text("0%");
    bad.max_failures = text("half");
    bad.min_success_time = "-5m".into();
    bad.progress_deadline = "0".into();
    assert_eq!(
        problems(vec![bad, wave("bad")], selected()),
        [
            "rollout.waves[0].maxConcurrency: 0% would start no target; at least 1",
            "rollout.waves[0].maxFailures: \"half\" is neither a number of targets nor a whole percentage up to 100% (\"25%\")",
            "rollout.waves[0].minSuccessTime: -5m is negative",
            "rollout.waves[0].progressDeadline: 0 fails every target at once; give a time, or None",
            "rollout.waves: two waves are called bad",
        ]
    );

    // A canary wave that selects nothing would send the release everywhere at once.
    let canary = by_labels(wave("canary"), &[("tier", "canary"), ("region", "us")]);
    assert_eq!(
        problems(vec![canary], selected()),
        [
            "rollout.waves[0].targets: selects no target that an earlier wave has not taken; the rollout would go on without it"
        ]
    );

    // A name no target has: a typo where targets are all listed …
    let listed_only = Targets {
        list: vec![listed("eu-1", Some("eu-1")), listed("eu-2", Some("eu-2"))],
        selector: None,
    };
    assert_eq!(
        problems(
            vec![by_names(wave("canary"), &["eu-1", "eu-3"])],
            listed_only
        ),
        [
            "rollout.waves[0].targets.names: eu-3 is not one of the Gate's targets; the targets are eu-1 and eu-2"
        ]
    );
    // … and no problem where clusters come and go by label.
    let span = span_of(
        &spec(
            selected(),
            vec![by_names(wave("canary"), &["eu-1", "eu-3"])],
        ),
        &fleet(),
    );
    assert_eq!(span.plan.waves[0].targets, names(&["eu-1"]));

    // "None" is no deadline, as Open Cluster Management writes it.
    let mut none = wave("");
    none.progress_deadline = "None".into();
    let span = span_of(&spec(selected(), vec![none]), &fleet());
    assert_eq!(span.plan.waves[0].progress_deadline, None);
}

// ---------------------------------------------------------------------------
// What a rollout does next

#[test]
fn waves_progress_in_order_at_their_pace() {
    let span = canary_then_rest();
    let plan = &span.plan;
    // (case, records, minutes after T0, decision)
    let cases: Vec<(&str, Vec<TargetStatus>, i64, Decision)> = vec![
        ("nothing yet: the canary", vec![], 0, start(0, &["eu-1"])),
        (
            "the canary crossing",
            vec![running("eu-1", 0)],
            5,
            crossing(0, &["eu-1"]),
        ),
        (
            "the canary soaking",
            vec![ok("eu-1", 0, 10)],
            39,
            Decision::Wait {
                wave: 0,
                why: Waiting::Soaking { until: at(40) },
            },
        ),
        (
            "the soak over: two of the rest at once",
            vec![ok("eu-1", 0, 10)],
            40,
            start(1, &["eu-2", "us-1"]),
        ),
        (
            "one slot free",
            vec![ok("eu-1", 0, 10), ok("eu-2", 40, 45), running("us-1", 40)],
            46,
            start(1, &["us-2"]),
        ),
        (
            "no slot free",
            vec![ok("eu-1", 0, 10), running("eu-2", 40), running("us-1", 40)],
            46,
            crossing(1, &["eu-2", "us-1"]),
        ),
        (
            "all crossed",
            vec![
                ok("eu-1", 0, 10),
                ok("eu-2", 40, 45),
                ok("us-1", 40, 50),
                ok("us-2", 46, 52),
            ],
            53,
            Decision::Completed,
        ),
        (
            "one failure is within the last wave's budget",
            vec![
                ok("eu-1", 0, 10),
                ok("eu-2", 40, 45),
                failed("us-1", 40, 50, 1, "GitRejected"),
                ok("us-2", 46, 52),
            ],
            53,
            Decision::Completed,
        ),
    ];
    for (case, records, minutes, expected) in cases {
        let next = next(plan, &status(records), at(minutes));
        assert_eq!(next.decision, expected, "{case}");
        assert!(
            next.timed_out.is_empty() && next.departed.is_empty(),
            "{case}"
        );
    }
}

#[test]
fn a_wave_that_is_degraded_holds_the_next() {
    let span = canary_then_rest();
    let mut canary = ok("eu-1", 0, 10);
    canary.health = Some(Health::Degraded);
    let next = next(&span.plan, &status(vec![canary]), at(60));
    assert_eq!(
        next.decision,
        Decision::Wait {
            wave: 0,
            why: Waiting::Unhealthy {
                targets: names(&["eu-1"])
            }
        }
    );
    assert_eq!(next.decision.phase(), RolloutPhase::Progressing);
}

#[test]
fn the_canary_tolerates_no_failure_and_the_halt_names_the_fixes() {
    let span = canary_then_rest();
    let records = vec![failed("eu-1", 0, 4, 1, "GitRejected")];
    let next = next(&span.plan, &status(records), at(5));
    let Decision::Halted(halt) = &next.decision else {
        panic!("not halted: {:?}", next.decision);
    };
    assert_eq!(
        halt.words(),
        "eu-1 failed at step 2 (GitRejected); wave 1 (canary) tolerates none"
    );
    assert_eq!(
        halt.fixes,
        [
            Fix::RetryFailed {
                targets: names(&["eu-1"])
            },
            Fix::RollBackFailed {
                targets: names(&["eu-1"])
            },
            Fix::RollBackAll {
                targets: names(&["eu-1"])
            },
            Fix::AcceptFailures {
                targets: names(&["eu-1"])
            },
        ]
    );
    assert!(!next.decision.clears());
    assert_eq!(next.decision.phase(), RolloutPhase::Halted);
}

#[test]
fn failures_past_the_budget_halt_and_later_waves_do_not_start() {
    // The rest tolerates one failure: a second halts it. What succeeded stays, what
    // crosses goes on, and nothing more starts.
    let span = canary_then_rest();
    let records = vec![
        ok("eu-1", 0, 10),
        failed("eu-2", 40, 45, 3, "HealthCheckFailed"),
        failed("us-1", 40, 47, 0, "GitRejected"),
    ];
    let halted = next(&span.plan, &status(records.clone()), at(48)).decision;
    let Decision::Halted(halt) = &halted else {
        panic!("not halted: {halted:?}");
    };
    assert_eq!(
        halt.words(),
        "eu-2 failed at step 4 (HealthCheckFailed); us-1 failed at step 1 (GitRejected); wave 2 (rest) tolerates 1 failure"
    );
    // us-2 never started: rolling back "all" is what the rollout reached.
    assert_eq!(
        halt.fixes[2],
        Fix::RollBackAll {
            targets: names(&["eu-1", "eu-2", "us-1"])
        }
    );

    // Percentages: "25%" of the rest's three is none — the first failure halts.
    let mut canary = by_labels(wave("canary"), &[("tier", "canary")]);
    canary.max_failures = text("50%");
    let mut rest = wave("rest");
    rest.max_failures = text("25%");
    let span = span_of(&spec(selected(), vec![canary, rest]), &fleet());
    let one = vec![
        ok("eu-1", 0, 1),
        failed("eu-2", 2, 3, 0, "GitRejected"),
        running("us-1", 2),
    ];
    assert!(matches!(
        next(&span.plan, &status(one), at(4)).decision,
        Decision::Halted(Halt { allowed: 0, .. })
    ));
    // "50%" of the one canary is none too: rounding down keeps the canary strict.
    let canary_failed = vec![failed("eu-1", 0, 1, 0, "GitRejected")];
    assert!(matches!(
        next(&span.plan, &status(canary_failed), at(2)).decision,
        Decision::Halted(Halt { wave: 0, .. })
    ));

    // An earlier wave whose target fails late (its verification said no) halts the
    // rollout though a later wave is under way.
    let span = canary_then_rest();
    let mut late = ok("eu-1", 0, 10);
    late.phase = TargetPhase::Failed;
    late.verification = Some(hecate_types::VerificationPhase::Failed);
    let late_no = next(&span.plan, &status(vec![late, running("eu-2", 40)]), at(50));
    let Decision::Halted(halt) = late_no.decision else {
        panic!("not halted");
    };
    assert_eq!(
        halt.words(),
        "eu-1 failed (VerificationFailed); wave 1 (canary) tolerates none"
    );
}

#[test]
fn accepted_failures_let_the_rollout_go_on_on_the_record() {
    let span = canary_then_rest();
    let plan = &span.plan;
    let mut record = status(vec![failed("eu-1", 0, 4, 1, "GitRejected")]);

    for (by, reason, refusal) in [
        ("", "known flake", ActionRefusal::NoActor),
        ("carol", "  ", ActionRefusal::NoReason),
    ] {
        assert_eq!(accept(plan, &record, by, reason, at(5)), Err(refusal));
    }
    let acceptance = accept(plan, &record, "carol", "eu-1 is being rebuilt", at(5)).unwrap();
    assert_eq!(
        acceptance,
        AcceptedFailures {
            by: "carol".into(),
            at: Time(at(5)),
            reason: "eu-1 is being rebuilt".into(),
            targets: names(&["eu-1"]),
        }
    );
    record.accepted.push(acceptance);

    // Accepted: no more halt; the canary had no success, so no soak: the rest starts.
    assert_eq!(
        next(plan, &record, at(5)).decision,
        start(1, &["eu-2", "us-1"])
    );
    assert_eq!(
        accept(plan, &record, "carol", "again", at(5)),
        Err(ActionRefusal::NotHalted {
            phase: RolloutPhase::Progressing
        })
    );
    // The rest crossed: the rollout finished because of the acceptance, and says so.
    record
        .targets
        .extend([ok("eu-2", 5, 9), ok("us-1", 5, 9), ok("us-2", 9, 12)]);
    let done = next(plan, &record, at(13)).decision;
    assert_eq!(
        done,
        Decision::Accepted {
            targets: names(&["eu-1"])
        }
    );
    assert!(done.clears());

    // A failure after the acceptance (a retry that failed again) is a new one.
    record.targets[0] = failed("eu-1", 20, 25, 1, "GitRejected");
    assert!(matches!(
        next(plan, &record, at(26)).decision,
        Decision::Halted(_)
    ));
}

#[test]
fn a_retry_restarts_the_failed_targets_only() {
    let span = canary_then_rest();
    let plan = &span.plan;
    let mut record = status(vec![
        ok("eu-1", 0, 10),
        failed("eu-2", 40, 45, 3, "HealthCheckFailed"),
        failed("us-1", 40, 47, 0, "GitRejected"),
        running("us-2", 46),
    ]);
    assert_eq!(retry(plan, &record, at(48)), Ok(names(&["eu-2", "us-1"])));
    for target in record
        .targets
        .iter_mut()
        .filter(|t| t.phase == TargetPhase::Failed)
    {
        restart(target);
    }
    assert_eq!(record.targets[1].phase, TargetPhase::Pending);
    assert_eq!(record.targets[1].attempt, 1, "the start counts the next");
    assert_eq!(record.targets[1].reason, "");
    // Back to progressing: us-2 is under way, one slot is free.
    assert_eq!(next(plan, &record, at(48)).decision, start(1, &["eu-2"]));
    begin(&mut record.targets[1], 1, at(48));
    assert_eq!(
        (record.targets[1].phase, record.targets[1].attempt),
        (TargetPhase::Running, 2)
    );
    assert_eq!(record.targets[1].started_at, Some(Time(at(48))));

    assert_eq!(
        retry(plan, &status(vec![ok("eu-1", 0, 10)]), at(48)),
        Err(ActionRefusal::NothingFailed { action: "retry" })
    );
    // Rolling back: the failed ones, everything the rollout reached, or those named
    // — read from the record as written, as a rollback reads a finished rollout.
    let halted = status(vec![ok("eu-1", 0, 10), failed("eu-2", 40, 45, 3, "X")]);
    assert_eq!(
        rollback_targets(&halted, &RollBack::Failed),
        Ok(names(&["eu-2"]))
    );
    assert_eq!(
        rollback_targets(&halted, &RollBack::All),
        Ok(names(&["eu-1", "eu-2"]))
    );
    assert_eq!(
        rollback_targets(&halted, &RollBack::parse(" eu-1 ")),
        Ok(names(&["eu-1"]))
    );
    assert_eq!(
        rollback_targets(&halted, &RollBack::parse("eu-1,us-1,us-9")),
        Err(ActionRefusal::NotReached {
            names: names(&["us-1", "us-9"])
        })
    );
    assert_eq!(
        rollback_targets(&status(vec![ok("eu-1", 0, 10)]), &RollBack::parse("failed")),
        Err(ActionRefusal::NothingFailed {
            action: "roll back"
        })
    );
    assert_eq!(
        rollback_targets(&status(vec![]), &RollBack::parse("all")),
        Err(ActionRefusal::NothingReached)
    );
    // More names than a Gate spans are refused before any is looked at.
    let many: Vec<String> = (0..=100).map(|i| format!("c-{i}")).collect();
    assert_eq!(
        rollback_targets(&halted, &RollBack::parse(&many.join(","))),
        Err(ActionRefusal::TooManyNames { count: 101 })
    );
}

#[test]
fn a_crossing_of_some_targets_follows_their_waves_and_tolerates_no_failure() {
    let whole = canary_then_rest();
    let rest = |targets: &[&str], width: usize| (1, WaveKind::Listed, names(targets), width, 0);
    // (asked, waves followed): each wave keeps its number and soak, narrows to what
    // is asked, and allows no failure; a name the Gate does not span is nobody.
    let table: [(&[&str], Vec<WaveRow>); 4] = [
        (&["us-2"], vec![rest(&["us-2"], 1)]),
        (
            &["eu-2", "eu-1", "us-1"],
            vec![
                (0, WaveKind::Listed, names(&["eu-1"]), 1, 0),
                rest(&["eu-2", "us-1"], 2),
            ],
        ),
        // In the Gate's order, whatever the order asked.
        (
            &["us-2", "eu-2", "us-1"],
            vec![rest(&["eu-2", "us-1", "us-2"], 2)],
        ),
        (&["ap-1"], vec![]),
    ];
    for (asked, waves) in table {
        let only = whole.clone().only(&names(asked));
        assert_eq!(waves_of(&only), waves, "{asked:?}");
        assert!(
            only.targets
                .iter()
                .all(|t| asked.contains(&t.name.as_str()))
        );
    }
    let canary = whole.clone().only(&names(&["eu-1"]));
    assert_eq!(
        canary.plan.waves[0].min_success_time, whole.plan.waves[0].min_success_time,
        "a wave's soak still holds"
    );
    assert_eq!(whole.clone().only(&[]), whole, "no names: every target");
}

#[test]
fn a_cluster_that_leaves_is_no_longer_waited_on() {
    // us-1 was crossing when it was relabelled retired: the rest completes without it.
    let mut clusters = fleet();
    clusters[3].labels.insert("retired".into(), "yes".into());
    let span = {
        let mut rest = wave("rest");
        rest.max_concurrency = count(2);
        let canary = by_labels(wave("canary"), &[("tier", "canary")]);
        span_of(&spec(selected(), vec![canary, rest]), &clusters)
    };
    let records = vec![
        ok("eu-1", 0, 10),
        ok("eu-2", 40, 45),
        running("us-1", 40),
        ok("us-2", 45, 50),
    ];
    let next = next(&span.plan, &status(records), at(51));
    assert_eq!(next.decision, Decision::Completed);
    assert_eq!(next.departed, names(&["us-1"]));

    // Once marked, it is not named again.
    let mut marked = running("us-1", 40);
    marked.departed_at = Some(Time(at(51)));
    let again = self::next(&span.plan, &status(vec![ok("eu-1", 0, 10), marked]), at(52));
    assert!(again.departed.is_empty());
}

#[test]
fn a_laggard_past_its_deadline_fails() {
    let span = canary_then_rest();
    let plan = &span.plan;
    let records = vec![ok("eu-1", 0, 10), running("eu-2", 40), running("us-1", 45)];
    // Before the deadline: wait, and look again when eu-2's 20 minutes are up.
    let before = next(plan, &status(records.clone()), at(55));
    assert_eq!(before.decision, crossing(1, &["eu-2", "us-1"]));
    assert_eq!(before.recheck_at, Some(at(60)));
    // At it: eu-2 has failed, within the rest's budget of one; its slot goes to us-2.
    let at_deadline = next(plan, &status(records.clone()), at(60));
    assert_eq!(at_deadline.timed_out, names(&["eu-2"]));
    assert_eq!(at_deadline.decision, start(1, &["us-2"]));
    // Both past it: two failures halt the rest, the laggards named with their reason.
    let both = next(plan, &status(records), at(65));
    assert_eq!(both.timed_out, names(&["eu-2", "us-1"]));
    let Decision::Halted(halt) = both.decision else {
        panic!("not halted");
    };
    let reasons: Vec<&str> = halt.failed.iter().map(|f| f.reason.as_str()).collect();
    assert_eq!(reasons, ["ProgressDeadlineExceeded"; 2]);
}

#[test]
fn a_target_that_joins_after_the_rollout_is_caught_up() {
    let span = canary_then_rest();
    let mut finished = status(vec![
        ok("eu-1", 0, 10),
        ok("eu-2", 40, 45),
        failed("us-1", 40, 47, 0, "GitRejected"),
    ]);
    finished.phase = RolloutPhase::Completed;
    // us-2 joined after: it alone needs a crossing; us-1 failed within budget, which
    // is a person's retry, not a catch-up.
    assert_eq!(catch_up(&span.plan, &finished), names(&["us-2"]));

    // A target that left and came back crosses again too.
    finished.targets[1].departed_at = Some(Time(at(50)));
    assert_eq!(catch_up(&span.plan, &finished), names(&["eu-2", "us-2"]));

    // A rollout under way reaches its new targets itself.
    finished.phase = RolloutPhase::Progressing;
    assert!(catch_up(&span.plan, &finished).is_empty());
}

/// A Passage of production moving `bundle`, in `phase`, reaching `targets` (all when
/// empty), with `records` as its rollout's.
fn production(
    name: &str,
    bundle: &str,
    phase: hecate_types::PassagePhase,
    targets: &[&str],
    records: Vec<TargetStatus>,
) -> hecate_types::Passage {
    let mut passage = hecate_types::Passage::new(
        name,
        hecate_types::PassageSpec {
            gate: "production".into(),
            bundle: bundle.into(),
            targets: names(targets),
            ..hecate_types::PassageSpec::default()
        },
    );
    passage.status = Some(hecate_types::PassageStatus {
        phase: Some(phase),
        rollout: Some(RolloutStatus {
            phase: RolloutPhase::Completed,
            ..status(records)
        }),
        ..hecate_types::PassageStatus::default()
    });
    passage
}

#[test]
fn a_catch_up_is_due_once_per_target_after_the_rollout_the_gate_holds() {
    use hecate_types::PassagePhase::{Aborted, Running, Succeeded};
    use hecate_types::wellknown::{ANNOTATION_CATCH_UP_OF, ANNOTATION_ROLLBACK_OF};
    let plan = canary_then_rest().plan;
    let reached = || vec![ok("eu-1", 0, 10), ok("eu-2", 40, 45), ok("us-1", 40, 47)];
    let rollout = production("production-1", "b1", Succeeded, &[], reached());
    let belonging = |name: &str, key: &str, phase, targets: &[&str]| {
        let mut p = production(name, "b1", phase, targets, vec![]);
        p.metadata.annotations = Some([(key.to_string(), "production-1".to_string())].into());
        p
    };
    let caught = belonging("production-2", ANNOTATION_CATCH_UP_OF, Aborted, &["us-2"]);
    let rolled = belonging("production-2", ANNOTATION_ROLLBACK_OF, Succeeded, &["us-2"]);
    let elsewhere = production("production-2", "b1", Succeeded, &["us-2"], vec![]);
    let running = production("production-2", "b2", Running, &[], vec![]);
    let due = |occupant: &str, passages: &[&hecate_types::Passage]| {
        view::catch_up(&plan, occupant, passages).map(|c| (c.bundle, c.rollout, c.targets))
    };
    let us_2 = Some((
        "b1".to_string(),
        "production-1".to_string(),
        names(&["us-2"]),
    ));
    // (the crossing the Gate holds, the Gate's Passages newest first) → due
    let table: [(&str, Vec<&hecate_types::Passage>, _); 7] = [
        // us-2 joined after the rollout the Gate holds.
        ("production-1", vec![&rollout], us_2.clone()),
        // A crossing of some targets of it since asked for us-2, whatever came of it:
        // automation never retries a failure.
        ("production-1", vec![&caught, &rollout], None),
        ("production-1", vec![&rolled, &rollout], None),
        // One that names another rollout is not this one's.
        ("production-1", vec![&elsewhere, &rollout], us_2),
        // Anything under way: not now.
        ("production-1", vec![&running, &rollout], None),
        // The Gate holds another crossing's Bundle (a rollback of every target).
        ("production-0", vec![&rollout], None),
        // No rollout at all.
        ("production-1", vec![], None),
    ];
    for (i, (occupant, passages, expected)) in table.into_iter().enumerate() {
        assert_eq!(due(occupant, &passages), expected, "case {i}");
    }
    // A rollout that did not cross (aborted after a halt) is the person's to finish.
    let aborted = production("production-1", "b1", Aborted, &[], reached());
    assert_eq!(due("production-1", &[&aborted]), None);
}

#[test]
fn departed_records_give_way_to_the_bound() {
    let mut record = status((0..100).map(|i| ok(&format!("c-{i:03}"), 0, 1)).collect());
    for (i, minutes) in [(7, 30), (3, 10), (5, 20)] {
        let mut gone = ok(&format!("gone-{i}"), 0, 1);
        gone.departed_at = Some(Time(at(minutes)));
        record.targets.push(gone);
    }
    assert_eq!(keep_within_bounds(&mut record), 3);
    assert_eq!(record.targets.len(), 100);
    assert_eq!(record.omitted_targets, 3);
    assert!(record.targets.iter().all(|t| t.departed_at.is_none()));

    let mut small = status(vec![ok("a", 0, 1)]);
    assert_eq!(keep_within_bounds(&mut small), 0);
    assert_eq!(small.omitted_targets, 0);
}

// ---------------------------------------------------------------------------
// The occupant, per target

#[test]
fn the_occupant_in_words() {
    let span = canary_then_rest();
    let plan = &span.plan;
    let cases: Vec<(Vec<TargetStatus>, &str)> = vec![
        (
            vec![
                ok("eu-1", 0, 10),
                failed("eu-2", 40, 45, 1, "GitRejected"),
                ok("us-1", 40, 46),
                running("us-2", 45),
            ],
            "v1.4.0 on 2 of 4 targets; eu-2 failed; us-2 crossing",
        ),
        (
            vec![
                ok("eu-1", 0, 10),
                failed("eu-2", 40, 45, 1, "GitRejected"),
                failed("us-1", 40, 46, 1, "GitRejected"),
            ],
            "v1.4.0 on 1 of 4 targets; eu-2 and us-1 failed; halted",
        ),
        (
            vec![
                ok("eu-1", 0, 10),
                ok("eu-2", 40, 45),
                ok("us-1", 40, 46),
                ok("us-2", 46, 50),
            ],
            "v1.4.0 on all 4 targets",
        ),
    ];
    for (records, words) in cases {
        assert_eq!(
            occupancy("v1.4.0", plan, &status(records), at(60)).words(),
            words
        );
    }

    // The example: five targets, three on the release, eu-2 failed.
    let fleet_of_five = {
        let mut clusters = fleet();
        clusters[4].labels.remove("retired");
        let mut rest = wave("");
        rest.max_failures = count(1);
        span_of(
            &spec(selected(), vec![by_names(wave("canary"), &["eu-1"]), rest]),
            &clusters,
        )
    };
    let records = vec![
        ok("eu-1", 0, 10),
        ok("ap-1", 40, 45),
        failed("eu-2", 40, 45, 1, "GitRejected"),
        ok("us-1", 40, 46),
    ];
    let occupancy = occupancy("v1.4.0", &fleet_of_five.plan, &status(records), at(50));
    assert_eq!(occupancy.on, names(&["eu-1", "ap-1", "us-1"]));
    assert_eq!(
        occupancy.phase,
        RolloutPhase::Progressing,
        "us-2 is still to go"
    );
    assert_eq!(occupancy.words(), "v1.4.0 on 3 of 5 targets; eu-2 failed");

    // Read from the record alone, as Explain reads a Passage: the controller wrote a
    // record for every present target (us-2 still Pending) and the phase it judged;
    // a record marked departed is no target.
    let mut written = status(vec![
        ok("eu-1", 0, 10),
        ok("ap-1", 40, 45),
        failed("eu-2", 40, 45, 1, "GitRejected"),
        ok("us-1", 40, 46),
        record("us-2", TargetPhase::Pending, 0, None),
        {
            let mut gone = failed("ap-9", 0, 5, 0, "GitRejected");
            gone.departed_at = Some(Time(at(20)));
            gone
        },
    ]);
    written.phase = RolloutPhase::Progressing;
    let read = recorded("v1.4.0", &written);
    assert_eq!(read.words(), occupancy.words());
    assert_eq!(read.failed, occupancy.failed);
    assert_eq!(
        read.failed[0].words(),
        "eu-2 failed at step 2 (GitRejected)"
    );

    let accepted = Occupancy {
        version: "v1.4.0".into(),
        phase: RolloutPhase::Accepted,
        of: 1,
        on: vec![],
        crossing: vec![],
        failed: vec![],
        accepted: names(&["eu-1"]),
    };
    assert_eq!(
        accepted.words(),
        "v1.4.0 on 0 of 1 target; eu-1 failed (accepted)"
    );
}

#[test]
fn names_in_a_sentence() {
    let cases: [(&[&str], &str); 5] = [
        (&[], ""),
        (&["a"], "a"),
        (&["a", "b"], "a and b"),
        (&["a", "b", "c"], "a, b and c"),
        (&["a", "b", "c", "d", "e"], "a, b, c and 2 more"),
    ];
    for (list, words) in cases {
        assert_eq!(crate::rules::rollout::listed(&names(list)), words);
    }
}

/// The Gate's `Ready` message for a crossing halted across its targets says the halt in
/// the controller's words and the two things a person may do, in their commands.
#[test]
fn a_halted_rollout_is_said_in_the_ready_message_with_what_a_person_may_do() {
    let mut halted = passage(
        "production",
        "b1",
        Some(hecate_types::PassagePhase::Running),
        0,
    );
    let mut record = status(vec![
        failed("canary", 0, 2, 1, "GitRejected"),
        record("eu-1", TargetPhase::Pending, 0, None),
    ]);
    record.phase = RolloutPhase::Halted;
    record.message =
        "halted: canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none".into();
    halted.status.get_or_insert_with(Default::default).rollout = Some(record);
    let name = kube::ResourceExt::name_any(&halted);
    assert_eq!(
        crate::rules::standing::crossing_message(&halted),
        format!(
            "{name}'s rollout halted: canary failed at step 2 (GitRejected); wave 1 (canary) tolerates none; \
             a person decides: cross the failed targets again: hecate retry {name} -n {NS}, \
             accept the failures and go on: hecate accept-failures {name} --reason <why> -n {NS}, \
             or stop the rollout and roll the failed targets back: hecate abort {name} -n {NS}, \
             then hecate rollback {gate} --targets failed -n {NS}",
            gate = halted.spec.gate
        )
    );
}
