//! Gate-time validation of a step list (controller spec §3.9) and what the Gate alone
//! decides, judged once for Explain, promote and the controller.

use hecate_types::{PassageTemplate, Step};
use pretty_assertions::assert_eq;

use crate::catalogue;
use crate::rules::fixtures::*;
use crate::rules::gate::{Obstacle, obstacle};
use crate::rules::promotion::judge_gate;
use crate::rules::refusal::RefusalCode;
use crate::rules::steps::problems;

fn aliased(uses: &str, alias: &str) -> Step {
    Step {
        alias: alias.into(),
        ..step(uses)
    }
}

#[test]
fn every_built_in_step_is_known() {
    let steps: Vec<Step> = catalogue::Step::ALL
        .iter()
        .map(|s| step(s.name()))
        .collect();
    assert_eq!(problems(&steps), Vec::<String>::new());
    assert_eq!(steps.len(), 15);
}

#[test]
fn every_problem_is_reported_with_its_index_and_step() {
    let steps = vec![
        aliased("git-clone", "repo"),
        step(""),
        step("git-klone"),
        aliased("edit-yaml", "repo"),
    ];
    let found = problems(&steps);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with("steps[1] (): uses is empty"),
        "{}",
        found[0]
    );
    assert!(
        found[1].starts_with(r#"steps[2] (git-klone): no step is called "git-klone""#)
            && found[1].contains("git-clone, git-commit"),
        "{}",
        found[1]
    );
    assert_eq!(
        found[2],
        r#"steps[3] (edit-yaml): as "repo" is already the name of steps[0]"#
    );
}

#[test]
fn a_step_s_own_configuration_is_judged_by_the_catalogue() {
    let bare = |uses: &str| Step {
        uses: uses.into(),
        ..Step::default()
    };
    let found = problems(&[bare("http"), step("flux-wait"), bare("nope")]);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("steps[0] (http): ") && found[0].contains("url"),
        "{}",
        found[0]
    );
    assert!(found[1].starts_with(r#"steps[2] (nope): no step is called "nope""#));
    // timeout and if are the step's too.
    let mut timed = step("flux-wait");
    timed.timeout = "0s".into();
    timed.condition = "${{ failure( }}".into();
    let found = problems(&[timed]);
    assert_eq!(
        found,
        [r#"steps[0] (flux-wait): timeout "0s" must be longer than zero"#]
    );
}

#[test]
fn the_gate_alone_decides_in_order_suspended_invalid_steps_no_steps() {
    let mut g = gate("staging");
    assert_eq!(obstacle(&g), None);

    g.spec.passage = Some(PassageTemplate {
        steps: vec![step("nope")],
    });
    assert!(
        matches!(obstacle(&g), Some(Obstacle::InvalidSteps(p)) if p.contains("steps[0] (nope)"))
    );
    let refusal = judge_gate(&g).unwrap_err();
    assert_eq!(refusal.code, RefusalCode::InvalidSteps);
    assert!(
        refusal.reason.contains("steps[0] (nope)"),
        "{}",
        refusal.reason
    );

    g.spec.suspend = true;
    assert_eq!(obstacle(&g), Some(Obstacle::Suspended));
    assert_eq!(judge_gate(&g).unwrap_err().code, RefusalCode::Suspended);

    g.spec.suspend = false;
    g.spec.passage = None;
    assert_eq!(obstacle(&g), Some(Obstacle::NoSteps));
    assert_eq!(judge_gate(&g).unwrap_err().code, RefusalCode::NoSteps);
}

#[test]
fn the_controller_s_report_is_not_read_back() {
    // What ops judges is the Gate itself: a stale condition the controller wrote once
    // neither adds a problem nor hides one.
    let g = with_condition(
        gate("staging"),
        hecate_types::ConditionStatus::False,
        "InvalidSteps",
        "steps[0] (flux-wait): with.resources is required",
    );
    assert_eq!(obstacle(&g), None);
}

#[test]
fn verifications_and_health_checks_are_judged_before_a_crossing() {
    use hecate_types::{HealthCheck, Verification};
    use serde_json::json;
    let mut g = gate("staging");
    g.spec.verify = vec![
        Verification {
            uses: "http".into(),
            with: Some(json!({"url": "https://shop.example/ready"})),
        },
        Verification {
            uses: "argo-rollouts".into(),
            with: None,
        },
        Verification {
            uses: "prometheus".into(),
            with: Some(
                json!({"address": "http://prom:9090", "query": "up", "successIf": "up > 1"}),
            ),
        },
    ];
    g.spec.watch = vec![
        HealthCheck {
            uses: "flux".into(),
            with: Some(json!({"resources": [{"kind": "Kustomization", "name": "app"}]})),
        },
        HealthCheck {
            uses: "flux".into(),
            with: Some(json!({"resources": "app"})),
        },
        HealthCheck {
            uses: "pingdom".into(),
            with: None,
        },
    ];
    let Some(Obstacle::InvalidSteps(said)) = obstacle(&g) else {
        panic!("{:?}", obstacle(&g));
    };
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 4, "{said}");
    assert_eq!(
        lines[0],
        r#"verify[1] (argo-rollouts): no verifier is called "argo-rollouts"; the verifiers are flagger, http, prometheus, soak"#
    );
    assert!(
        lines[1].starts_with(r#"verify[2] (prometheus): successIf: "up > 1" is not of the form"#),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("watch[1] (flux): "), "{}", lines[2]);
    assert_eq!(
        lines[3],
        r#"watch[2] (pingdom): no health checker is called "pingdom"; the checkers are flux"#
    );
    let refusal = judge_gate(&g).unwrap_err();
    assert_eq!(refusal.code, RefusalCode::InvalidSteps);
    assert!(
        refusal.reason.contains("verify[1] (argo-rollouts)"),
        "{}",
        refusal.reason
    );
}

#[test]
fn a_with_nested_past_the_limit_is_a_problem_of_its_step() {
    use hecate_types::limits::MAX_WITH_DEPTH;
    let nested = |depth: usize| {
        let mut with = serde_json::json!("leaf");
        for i in 0..depth {
            // Maps and lists both count.
            with = if i % 2 == 0 {
                serde_json::json!({ "a": with, "b": 1 })
            } else {
                serde_json::json!([0, with])
            };
        }
        Step {
            with: Some(with),
            ..step("http")
        }
    };
    // At the limit the nesting is not the problem (the http step's own check is).
    assert!(
        problems(&[nested(MAX_WITH_DEPTH)])
            .iter()
            .all(|p| !p.contains("nests")),
    );
    let found = problems(&[step("git-clone"), nested(MAX_WITH_DEPTH + 1)]);
    assert_eq!(
        found,
        [format!(
            "steps[1] (http): with nests {} deep; the most is {MAX_WITH_DEPTH}: flatten it",
            MAX_WITH_DEPTH + 1
        )]
    );
    // Past anything a decoder hands over (128 levels).
    assert_eq!(problems(&[nested(1_000)]).len(), 1);
}

#[test]
fn more_steps_than_one_crossing_may_run_is_a_problem_of_the_list() {
    let most = hecate_types::limits::MAX_STEPS;
    assert_eq!(problems(&vec![step("http"); most]), Vec::<String>::new());
    assert_eq!(
        problems(&vec![step("http"); 5_000]),
        ["steps: 5000 steps, more than the 100 one crossing may run: shorten the list"]
    );
}
