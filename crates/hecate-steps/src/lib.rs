//! `hecate-steps`: what a crossing does (spec controller.md §3, §5, §6) — the step
//! contract, the engine that runs a Passage's steps, the fifteen built-in steps with
//! their strict configurations, the judgement of a step list before any crossing
//! starts, and the Flux client and health checkers the steps and Gates share.
//!
//! - [`runner`]: the contract every step keeps ([`runner::Runner`]; a kind of built-in
//!   step is a [`runner::StepKind`]: its name, its configuration, how it is built),
//!   its context, results and errors; [`reason`]: the stable reason of each failure;
//! - [`builtin`]: each step of ops' catalogue (`hecate_ops::catalogue::Step`, the one
//!   list of names) bound to its runner by an exhaustive match; [`by_name`]: things
//!   registered under their `uses:` names (steps, health checkers, verifiers);
//! - [`engine`]: advancing a Passage one step per call through the registered
//!   [`engine::Steps`], resumable from its status alone, behind a [`engine::Fence`]
//!   (the controller's Lease);
//! - [`config`]: each step's typed `with:` and [`validate`], [`check`], [`timeout`]:
//!   re-exported from ops' catalogue and rules, which judge a Gate before any crossing
//!   (the engine decodes each run's `with:` with the same types);
//! - the steps: [`git`], [`yaml`], [`render`], [`oci`], [`forge`], [`http`],
//!   [`flux_reconcile`], [`flux_wait`], [`evidence`]; [`runners`] builds them all;
//! - [`flux`]: reaching Flux objects and the `flux` health checker; [`health`]: the
//!   checker contract and a Gate's merged assessment;
//! - [`reach`]: which addresses an `http` step may reach; [`clock`]: where every
//!   decision reads the time.
//!
//! What it needs from the process comes in as values or traits the controller
//! implements: [`Tools`], the [`flux_wait::Wake`] that wakes a waiting step, the
//! [`engine::Fence`] of leadership. It knows nothing of kube-runtime controllers,
//! Events, metrics or tracing.

pub mod builtin;
pub mod by_name;
pub mod clock;
pub mod engine;
pub mod evidence;
pub mod flux;
pub mod flux_reconcile;
pub mod flux_wait;
pub mod forge;
pub mod git;
pub mod health;
pub mod http;
pub mod oci;
pub mod reach;
pub mod reason;
pub mod render;
pub mod runner;
pub mod yaml;

use hecate_types::Step;

pub use builtin::{Tools, runners};
/// Each step's typed `with:` — the catalogue's, which ops judges a Gate by.
pub use hecate_ops::catalogue::config;
/// One step judged before any crossing, and its `timeout:` — ops' rules.
pub use hecate_ops::rules::steps::{check, timeout};

/// Every problem with `steps`, one line each as `steps[<i>] (<uses>): <problem>`, in
/// list order; empty when the list can run (ops' [`hecate_ops::rules::steps::problems`]).
pub fn validate(steps: &[Step]) -> Vec<String> {
    hecate_ops::rules::steps::problems(steps)
}

#[cfg(test)]
mod tests {

    use hecate_ops::catalogue::Step as Catalogued;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn step(uses: &str, with: Value) -> Step {
        Step {
            uses: uses.into(),
            with: Some(with),
            ..Step::default()
        }
    }

    #[test]
    fn every_step_refuses_an_unknown_key() {
        for catalogued in Catalogued::ALL {
            let uses = catalogued.name();
            let mut with = catalogued.example();
            with.as_object_mut()
                .expect("an object")
                .insert("notAKey".into(), json!(1));
            let why = check(&step(uses, with)).expect_err(uses);
            assert!(why.contains("unknown field `notAKey`"), "{uses}: {why}");
        }
    }

    #[test]
    fn absent_with_is_an_empty_mapping() {
        let push = Step {
            uses: "git-push".into(),
            ..Step::default()
        };
        assert_eq!(check(&push), Ok(()));
        let clone = Step {
            uses: "git-clone".into(),
            ..Step::default()
        };
        assert_eq!(check(&clone), Err("missing field `repo`".to_string()));
    }

    #[test]
    fn with_must_be_a_mapping() {
        for with in [json!("repo"), json!(["repo"]), json!(3)] {
            let why = check(&step("git-push", with)).expect_err("refused");
            assert!(why.starts_with("with must be a mapping"), "{why}");
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names_there_are() {
        let why = check(&step("git-klone", json!({"x": 1}))).expect_err("refused");
        assert!(why.contains("the steps are git-clone,"), "{why}");
        let problems = validate(&[step("git-klone", json!({"x": 1}))]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("steps[0] (git-klone): no step is called \"git-klone\""),
            "{problems:?}"
        );
    }

    #[test]
    fn step_timeout_must_be_a_positive_duration() {
        let mut push = step("git-push", json!({}));
        assert_eq!(timeout(&push), Ok(None));
        push.timeout = "90s".into();
        assert_eq!(
            timeout(&push),
            Ok(Some(jiff::SignedDuration::from_secs(90)))
        );
        for bad in ["90", "0s", "-1m", "${{ vars.t }}"] {
            push.timeout = bad.into();
            let why = check(&push).expect_err(bad);
            assert!(why.starts_with("timeout"), "{bad}: {why}");
        }
    }

    #[test]
    fn a_misspelt_key_is_reported_with_its_step() {
        let steps = vec![step("git-commit", json!({"mesage": "promote"}))];
        let problems = validate(&steps);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("steps[0] (git-commit): unknown field `mesage`"),
            "{problems:?}"
        );
    }

    #[test]
    fn every_problem_of_a_list_is_reported_in_order() {
        let steps: Vec<Step> = serde_yaml_ng::from_str(
            r#"
- uses: git-clone
  as: fleet
  with: { repo: "https://example.com/fleet.git" }
- uses: git-clone
  as: fleet
  with: { branch: main }
- uses: ""
- uses: gitpush
- uses: commit-status
  with: { credentialsRef: { name: gh }, state: done }
- uses: http
  timeout: soon
  with: { url: "${{ vars.hook }}" }
- uses: evidence-gate
  with: { gates: [] }
"#,
        )
        .expect("valid YAML");
        let problems = validate(&steps);
        let expected_starts = [
            "steps[1] (git-clone): missing field `repo`",
            "steps[1] (git-clone): as \"fleet\" is already the name of steps[0]",
            "steps[2] (): uses is empty",
            "steps[3] (gitpush): no step is called \"gitpush\"",
            // Q9: commit-status's configuration is judged like every other step's.
            "steps[4] (commit-status): state: \"done\" is not one of Pending, Success, Failure",
            "steps[5] (http): timeout: invalid duration \"soon\"",
            "steps[6] (evidence-gate): gates must select at least one",
        ];
        assert_eq!(problems.len(), expected_starts.len(), "{problems:#?}");
        for (problem, start) in problems.iter().zip(expected_starts) {
            assert!(
                problem.starts_with(start),
                "{problem:?} does not start with {start:?}"
            );
        }
    }

    /// Q14: the reference's `examples/podinfo-pipeline.yaml` is no fixture — its
    /// `from`/`into` on `git-pull-request` and its `evidence-gate` without `gates` are
    /// refused at Gate time, as the reference's own validation refuses them.
    #[test]
    fn the_reference_examples_own_mistakes_are_refused() {
        let steps: Vec<Step> = serde_yaml_ng::from_str(
            r#"
- uses: git-pull-request
  with: { credentialsRef: { name: gh }, from: hecate/dev, into: main }
- uses: evidence-gate
  with: { maxRisk: 40 }
"#,
        )
        .expect("valid YAML");
        let problems = validate(&steps);
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].starts_with("steps[0] (git-pull-request): unknown field `from`"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("steps[1] (evidence-gate): missing field `gates`"),
            "{problems:?}"
        );
    }

    #[test]
    fn messages_say_where_the_problem_is() {
        let cases = [
            (
                "git-commit",
                json!({"message": "m", "author": {"mail": "x"}}),
                "author: unknown field `mail`, expected `name` or `email`",
            ),
            (
                "edit-yaml",
                json!({"path": "f", "edits": [{"key": "a", "value": 1}, {"value": 2}]}),
                "edits[1]: missing field `key`",
            ),
            (
                "edit-yaml",
                json!({"path": "f", "edits": [{"key": "a", "value": null}]}),
                "edits[0].value: must be a string, number or boolean, not null",
            ),
            (
                "flux-wait",
                json!({"resources": [{"kind": "Deployment", "name": "a"}]}),
                "resources[0]: \"Deployment\" is not a Flux kind; set apiVersion for any other kind",
            ),
            (
                "http",
                json!({"url": "x"}),
                "url: \"x\" must start with http:// or https://",
            ),
            (
                "http",
                json!({"url": "http://x", "headers": {"a": 1}}),
                "headers.a: invalid type: integer `1`, expected a string",
            ),
            (
                "http",
                json!({"url": "http://x", "secretHeaders": [{"name": "a", "secretRef": {"nam": "x"}}]}),
                "secretHeaders[0].secretRef: unknown field `nam`, expected `name`",
            ),
            (
                "evidence-gate",
                json!({"gates": "assert"}),
                "gates: invalid type: string \"assert\", expected a sequence",
            ),
        ];
        for (uses, with, message) in cases {
            assert_eq!(check(&step(uses, with)), Err(message.to_string()), "{uses}");
        }
    }

    #[test]
    fn a_condition_must_compile() {
        let cases = [
            ("", Ok(())),
            ("always", Ok(())),
            ("failed || steps.commit.sha != ''", Ok(())),
            // Q10: one `${{ … }}` around the whole condition is accepted.
            ("${{ gate == 'production' }}", Ok(())),
            (
                "gate ==",
                Err(
                    "if: invalid expression \"gate ==\" at column 6: \"==\" needs something on its right",
                ),
            ),
            (
                "len(vars.x) > 0",
                Err(
                    "if: invalid expression \"len(vars.x) > 0\" at column 1: unknown function \"len\"",
                ),
            ),
        ];
        for (condition, want) in cases {
            let mut push = step("git-push", json!({}));
            push.condition = condition.into();
            assert_eq!(check(&push), want.map_err(str::to_string), "{condition}");
        }
        let mut push = step("git-push", json!({}));
        push.condition = "steps.".into();
        let problems = validate(&[push]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("steps[0] (git-push): if: invalid expression \"steps.\""),
            "{problems:?}"
        );
    }

    /// The dev Gate's steps of the first milestone's scenario (spec §10.1).
    const DEV_GATE_STEPS: &str = r#"
- uses: git-clone
  with: { repo: "${{ vars.fleet }}", branch: env/dev }
- uses: edit-yaml
  with:
    path: repo/values.yaml
    edits:
      - key: app.revision
        value: "${{ bundle.commit('file:///srv/git/app.git').sha }}"
- uses: git-commit
  as: commit
  with: { message: "dev: app ${{ bundle.name }}" }
- uses: git-push
- uses: flux-wait
  with:
    resources: [{ kind: Kustomization, name: app-dev }]
    expectedRevision: "${{ steps.commit.sha }}"
- uses: http
  if: always
  with:
    url: http://127.0.0.1:18080/hook
    body: { gate: "${{ gate }}", failed: "${{ failed }}" }
"#;

    #[test]
    fn the_first_milestone_dev_gate_is_valid() {
        let steps: Vec<Step> = serde_yaml_ng::from_str(DEV_GATE_STEPS).expect("valid YAML");
        assert_eq!(steps.len(), 6);
        assert_eq!(validate(&steps), Vec::<String>::new());
        let uses: Vec<&str> = steps
            .iter()
            .map(|s| Catalogued::named(&s.uses).expect("built in").name())
            .collect();
        assert_eq!(
            uses,
            [
                "git-clone",
                "edit-yaml",
                "git-commit",
                "git-push",
                "flux-wait",
                "http"
            ]
        );
    }
}
