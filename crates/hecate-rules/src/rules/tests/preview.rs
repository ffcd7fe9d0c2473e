//! Issue 55: a crossing's preview — promote's own judgement for the one asking, and the
//! steps as they would run, `with:` resolved against the Bundle and the Gate's vars.

use hecate_types::{Step, Var};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::catalogue::step::Effect;
use crate::rules::fixtures::{bundle, gate, gate_with_steps, t0, window};
use crate::rules::preview;

/// `actor`'s preview of crossing `gate` with `bundle`, nothing crossed before.
fn preview_of(
    gate: &hecate_types::Gate,
    bundle: &hecate_types::Bundle,
    actor: &str,
) -> crate::model::CrossingPreview {
    let passage = preview::passage(gate, bundle, &[], actor, t0());
    preview::of(gate, bundle, &passage, &[], t0())
}
use crate::rules::refusal::RefusalCode;

fn step(uses: &str, alias: &str, with: serde_json::Value) -> Step {
    Step {
        uses: uses.into(),
        alias: alias.into(),
        with: Some(with),
        ..Step::default()
    }
}

#[test]
fn a_preview_resolves_each_step_against_the_bundle_and_the_gates_vars() {
    let mut staging = gate_with_steps(
        gate("staging"),
        vec![
            step(
                "git-clone",
                "repo",
                json!({"repo": "${{ vars.repo }}", "branch": "env/${{ gate }}"}),
            ),
            step(
                "set-image",
                "",
                json!({"path": "repo/apps/kustomization.yaml", "image": "ghcr.io/acme/app", "tag": "${{ bundle.image('ghcr.io/acme/app').tag }}"}),
            ),
            step(
                "git-commit",
                "commit",
                json!({"message": "${{ bundle.name }} to ${{ gate }}"}),
            ),
            step("git-push", "push", json!({})),
            Step {
                condition: "${{ steps.push.pushed }}".into(),
                ..step(
                    "flux-wait",
                    "",
                    json!({"resources": [{"kind": "Kustomization", "name": "app"}], "expectedRevision": "${{ steps.push.sha }}"}),
                )
            },
        ],
    );
    staging.spec.vars = vec![Var {
        name: "repo".into(),
        value: "https://git.example/fleet.git".into(),
    }];
    let p = preview_of(&staging, &bundle("b1", 0), "bob");
    assert_eq!(p.refused, None, "bob may cross");
    let plan: Vec<_> = p
        .steps
        .iter()
        .map(|s| {
            (
                s.uses.as_str(),
                s.runs,
                s.with.clone(),
                s.awaits.clone(),
                s.effect,
            )
        })
        .collect();
    assert_eq!(
        plan,
        [
            (
                "git-clone",
                Some(true),
                json!({"repo": "https://git.example/fleet.git", "branch": "env/staging"}),
                vec![],
                Some(Effect::WorkDir)
            ),
            (
                "set-image",
                Some(true),
                json!({"path": "repo/apps/kustomization.yaml", "image": "ghcr.io/acme/app", "tag": "1.0.0"}),
                vec![],
                Some(Effect::WorkDir)
            ),
            (
                "git-commit",
                Some(true),
                json!({"message": "b1 to staging"}),
                vec![],
                Some(Effect::WorkDir)
            ),
            (
                "git-push",
                Some(true),
                json!({}),
                vec![],
                Some(Effect::Pushes)
            ),
            // What reads an earlier step's output is known once it runs.
            (
                "flux-wait",
                None,
                json!({"resources": [{"kind": "Kustomization", "name": "app"}], "expectedRevision": "${{ steps.push.sha }}"}),
                vec!["push".to_string()],
                Some(Effect::Cluster)
            ),
        ]
    );
    assert!(p.steps.iter().all(|s| s.problem.is_none()));
    // Each effect in the catalogue's words, which every surface shows.
    assert_eq!(p.steps[3].effect_words, Effect::Pushes.words());
    let unknown = gate_with_steps(gate("staging"), vec![step("nonesuch", "", json!({}))]);
    assert_eq!(
        preview_of(&unknown, &bundle("b1", 0), "bob").steps[0].effect_words,
        "not a step Hecate knows"
    );
    assert_eq!(p.bundle.name, "b1");
}

#[test]
fn a_preview_is_refused_as_promote_would_refuse_it_and_still_shows_the_steps() {
    // A freeze all day, every day.
    let mut frozen = gate("production");
    frozen.spec.windows = vec![hecate_types::Window {
        deny: true,
        ..window("0 0 * * *", "24h")
    }];
    let p = preview_of(&frozen, &bundle("b1", 0), "bob");
    let refused = p.refused.expect("the freeze refuses it");
    assert_eq!(refused.code, RefusalCode::WindowClosed);
    assert_eq!(p.steps.len(), 1, "the steps are shown all the same");
    // Nobody: refused before anything else, as promote refuses it.
    let p = preview_of(&gate("staging"), &bundle("b1", 0), "");
    assert_eq!(p.refused.map(|r| r.code), Some(RefusalCode::NoActor));
}

#[test]
fn an_expression_that_fails_on_this_bundle_is_said_and_an_if_judged_now() {
    let staging = gate_with_steps(
        gate("staging"),
        vec![
            step(
                "set-image",
                "",
                json!({"path": "k.yaml", "image": "x", "tag": "${{ bundle.image('ghcr.io/acme/other').tag }}"}),
            ),
            Step {
                condition: "gate == 'production'".into(),
                ..step(
                    "http",
                    "",
                    json!({"url": "https://hooks.example/${{ gate }}"}),
                )
            },
            Step {
                condition: "failed".into(),
                ..step("http", "", json!({"url": "https://hooks.example/failed"}))
            },
        ],
    );
    let p = preview_of(&staging, &bundle("b1", 0), "bob");
    let problem = p.steps[0].problem.clone().unwrap_or_default();
    assert!(problem.starts_with("with: "), "{problem}");
    assert_eq!(
        (p.steps[1].runs, p.steps[1].effect),
        (Some(false), Some(Effect::Calls))
    );
    assert_eq!(
        p.steps[2].runs, None,
        "`failed` is known as the crossing goes"
    );
    // An `if:` that only names a word like it is judged now.
    let named = gate_with_steps(
        gate("staging"),
        vec![Step {
            condition: "gate != 'failed-over'".into(),
            ..step("http", "", json!({"url": "https://hooks.example/x"}))
        }],
    );
    assert_eq!(
        preview_of(&named, &bundle("b1", 0), "bob").steps[0].runs,
        Some(true)
    );
}

#[test]
fn the_steps_that_stay_in_the_work_directory() {
    use crate::catalogue::step::Step as Kind;
    let previewed: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| k.effect() == Effect::WorkDir)
        .map(|k| k.name())
        .collect();
    assert_eq!(
        previewed,
        [
            "git-clone",
            "git-commit",
            "edit-yaml",
            "set-image",
            "render-kustomize",
            "render-helm",
            "oci-pull"
        ]
    );
}
