//! Gate-time validation of a step list (controller spec §3.9) and what the Gate alone
//! decides, judged once for Explain, promote and the controller.

use hecate_types::{PassageTemplate, Step};
use pretty_assertions::assert_eq;

use crate::rules::fixtures::*;
use crate::rules::gate::{Obstacle, obstacle};
use crate::rules::promotion::judge_gate;
use crate::rules::refusal::RefusalCode;
use crate::rules::steps::{BUILT_IN, problems, structural};

fn aliased(uses: &str, alias: &str) -> Step {
    Step {
        alias: alias.into(),
        ..step(uses)
    }
}

#[test]
fn every_built_in_step_is_known() {
    let steps: Vec<Step> = BUILT_IN.iter().map(|uses| step(uses)).collect();
    assert_eq!(structural(&steps), Vec::<String>::new());
    assert_eq!(BUILT_IN.len(), 15);
}

#[test]
fn every_problem_is_reported_with_its_index_and_step() {
    let steps = vec![
        aliased("git-clone", "repo"),
        step(""),
        step("git-klone"),
        aliased("edit-yaml", "repo"),
    ];
    let found = structural(&steps);
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
fn a_step_s_own_check_is_reported_after_the_structure() {
    let steps = vec![step("http"), step("flux-wait")];
    let found = problems(&steps, |s| {
        if s.uses == "http" {
            Err("with.url is required".into())
        } else {
            Ok(())
        }
    });
    assert_eq!(
        found,
        vec!["steps[0] (http): with.url is required".to_string()]
    );
    // An unknown step is never handed to the step checks.
    let found = problems(&[step("nope")], |_| Err("checked".into()));
    assert!(!found[0].contains("checked"), "{found:?}");
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
fn the_controller_s_report_counts_when_the_structure_is_sound() {
    let g = with_condition(
        gate("staging"),
        hecate_types::ConditionStatus::False,
        "InvalidSteps",
        "steps[0] (flux-wait): with.resources is required",
    );
    assert_eq!(
        obstacle(&g),
        Some(Obstacle::InvalidSteps(
            "steps[0] (flux-wait): with.resources is required".into()
        ))
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
    assert_eq!(structural(&[nested(MAX_WITH_DEPTH)]), Vec::<String>::new());
    let found = structural(&[step("git-clone"), nested(MAX_WITH_DEPTH + 1)]);
    assert_eq!(
        found,
        [format!(
            "steps[1] (http): with nests {} deep; the most is {MAX_WITH_DEPTH}: flatten it",
            MAX_WITH_DEPTH + 1
        )]
    );
    // Past anything a decoder hands over (128 levels).
    assert_eq!(structural(&[nested(1_000)]).len(), 1);
}

#[test]
fn more_steps_than_one_crossing_may_run_is_a_problem_of_the_list() {
    let most = hecate_types::limits::MAX_STEPS;
    assert_eq!(structural(&vec![step("http"); most]), Vec::<String>::new());
    assert_eq!(
        structural(&vec![step("http"); 5_000]),
        ["steps: 5000 steps, more than the 100 one crossing may run: shorten the list"]
    );
}
