//! The built-in steps (spec §5.1), listed once. A kind of step is one file implementing
//! [`StepKind`] and one line in [`ALL`]: that line registers it with the engine
//! ([`runners`]), makes its name one a Gate may use, and judges its `with:` at Gate
//! time ([`crate::check`]) with the decoder its runs use.

use std::sync::Arc;

use hecate_sources::git::Limits;
use serde_json::Value;

use crate::by_name::Duplicate;
use crate::engine::Steps;
use crate::runner::{Runner, StepKind};
use crate::{config, evidence, flux, flux_reconcile, flux_wait, forge, git, http, oci};
use crate::{reach, render, yaml};

/// One built-in step: its name, the check of its `with:`, how the process builds it.
pub struct BuiltIn {
    /// Its `uses:` name.
    pub uses: &'static str,
    check: fn(Option<&Value>) -> Result<(), String>,
    build: fn(&Tools) -> Arc<dyn Runner>,
}

impl BuiltIn {
    const fn of<S: StepKind>() -> Self {
        Self {
            uses: S::USES,
            check: check_with::<S>,
            build: build::<S>,
        }
    }

    /// Whether `with` (absent: `{}`) is a configuration this step takes; `Err` says
    /// where and what is wrong.
    pub fn check(&self, with: Option<&Value>) -> Result<(), String> {
        (self.check)(with)
    }

    /// The step as this process runs it.
    pub fn build(&self, tools: &Tools) -> Arc<dyn Runner> {
        (self.build)(tools)
    }
}

fn check_with<S: StepKind>(with: Option<&Value>) -> Result<(), String> {
    config::decode::<S::With>(with).map(drop)
}

fn build<S: StepKind>(tools: &Tools) -> Arc<dyn Runner> {
    Arc::new(S::build(tools))
}

/// Every built-in step, in the order the specification lists them (ops'
/// `rules::steps::BUILT_IN`, the names Explain and promote judge a list by, is held
/// equal to it by a test: ops sits below the steps and cannot read this list).
pub static ALL: [BuiltIn; 15] = [
    BuiltIn::of::<git::GitClone>(),
    BuiltIn::of::<git::GitCommit>(),
    BuiltIn::of::<git::GitPush>(),
    BuiltIn::of::<forge::GitPullRequest>(),
    BuiltIn::of::<forge::CommitStatus>(),
    BuiltIn::of::<yaml::EditYaml>(),
    BuiltIn::of::<yaml::SetImage>(),
    BuiltIn::of::<render::RenderKustomize>(),
    BuiltIn::of::<render::RenderHelm>(),
    BuiltIn::of::<oci::OciPush>(),
    BuiltIn::of::<oci::OciPull>(),
    BuiltIn::of::<flux_reconcile::FluxReconcile>(),
    BuiltIn::of::<flux_wait::FluxWait>(),
    BuiltIn::of::<http::Http>(),
    BuiltIn::of::<evidence::EvidenceGate>(),
];

/// The built-in step called `uses`, if there is one.
pub fn find(uses: &str) -> Option<&'static BuiltIn> {
    ALL.iter().find(|kind| kind.uses == uses)
}

/// The engine's registry: every built-in step, built from `tools`, each once.
pub fn runners(tools: &Tools) -> Result<Steps, Duplicate> {
    let mut registry = Steps::new();
    for kind in &ALL {
        registry.register(kind.build(tools))?;
    }
    Ok(registry)
}

/// What the steps need from the process: one value, built once by the controller, from
/// which each kind of step builds itself ([`StepKind::build`]), so a new step adds a
/// field here rather than a parameter everywhere.
#[derive(Clone)]
pub struct Tools {
    /// The controller's client (Secrets, Flux objects).
    pub client: kube::Client,
    /// `flux-wait` judges through the same checker Gates use.
    pub flux: Arc<crate::flux::FluxChecker>,
    /// `--no-cross-namespace-refs`.
    pub refuse_cross_namespace: bool,
    /// GitHub App installation tokens, shared by the git and forge steps and Beacons.
    pub app_tokens: hecate_sources::git::AppTokens,
    /// `--fides-server`: the Fides a Gate's evidence uses when it names none.
    pub fides_server: Option<String>,
    /// `--kustomize-path`.
    pub kustomize: std::path::PathBuf,
    /// `--helm-path`.
    pub helm: std::path::PathBuf,
    /// `--allow-kustomize-load-restrictions-none`: `render-kustomize` may read outside
    /// its kustomization when a step asks.
    pub allow_kustomize_load_restrictions_none: bool,
    /// `--allow-local-git` and `--max-checkout-size`: what the git steps may do.
    pub git: Limits,
    /// Where `http` steps may go: `--allow-local-http`, and the controller's own
    /// listeners, which they may never call.
    pub reach: reach::Reach,
    /// Wakes a waiting `flux-wait` when its object changes ([`flux_wait::TimerOnly`]:
    /// nothing does, each wait ends on its timer).
    pub wake: Arc<dyn flux_wait::Wake>,
}

impl Tools {
    /// The defaults a test or a bare process starts from: programs looked up on PATH,
    /// cross-namespace references refused, no default Fides, waits woken by their timers
    /// only; the flags' defaults for
    /// what steps may reach (no local git, no local HTTP, clones of at most
    /// [`hecate_sources::git::DEFAULT_MAX_CHECKOUT_SIZE`]).
    pub fn new(client: kube::Client) -> Self {
        let access = std::sync::Arc::new(flux::access::FluxAccess::new(client.clone()));
        Self {
            flux: std::sync::Arc::new(flux::FluxChecker::new(access, true)),
            wake: std::sync::Arc::new(flux_wait::TimerOnly),
            client,
            refuse_cross_namespace: true,
            app_tokens: hecate_sources::git::AppTokens::default(),
            fides_server: None,
            kustomize: "kustomize".into(),
            helm: "helm".into(),
            allow_kustomize_load_restrictions_none: false,
            git: Limits::default(),
            reach: reach::Reach::default(),
        }
    }
}

/// The smallest configuration each built-in step accepts, for tests.
#[cfg(test)]
pub(crate) fn minimal(uses: &str) -> serde_json::Value {
    use serde_json::json;
    match uses {
        "git-clone" => json!({"repo": "https://example.com/fleet.git"}),
        "git-commit" => json!({"message": "promote"}),
        "git-push" => json!({}),
        "git-pull-request" | "commit-status" => json!({"credentialsRef": {"name": "gh"}}),
        "edit-yaml" => json!({"path": "repo/v.yaml", "edits": [{"key": "a", "value": 1}]}),
        "set-image" => json!({"path": "repo/kustomization.yaml", "image": "app"}),
        "render-kustomize" => json!({"path": "repo/envs/dev", "out": "out.yaml"}),
        "render-helm" => {
            json!({"chart": "repo/chart", "out": "out.yaml", "releaseName": "app"})
        }
        "oci-push" => json!({"path": "out", "repo": "ghcr.io/o/m", "tag": "dev"}),
        "oci-pull" => json!({"repo": "ghcr.io/o/m", "tag": "dev", "out": "m"}),
        "flux-reconcile" | "flux-wait" => {
            json!({"resources": [{"kind": "Kustomization", "name": "app"}]})
        }
        "http" => json!({"url": "https://example.com/hook"}),
        "evidence-gate" => json!({"gates": ["assert"]}),
        other => panic!("no minimal configuration for {other}"),
    }
}

#[cfg(test)]
mod tests {
    use hecate_ops::rules::steps::BUILT_IN;
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_list_is_ops_list_of_names_in_the_specifications_order() {
        let names: Vec<&str> = ALL.iter().map(|kind| kind.uses).collect();
        assert_eq!(names, BUILT_IN);
    }

    #[tokio::test]
    async fn the_registry_runs_exactly_the_fifteen_built_in_steps() {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
        let client = kube::Client::try_from(config).expect("a client");
        let registry = runners(&Tools::new(client)).expect("unique names");
        let mut built_in = BUILT_IN.to_vec();
        built_in.sort_unstable();
        assert_eq!(registry.names().collect::<Vec<_>>(), built_in);
    }

    #[test]
    fn every_built_in_step_takes_its_minimal_configuration() {
        for kind in &ALL {
            let with = minimal(kind.uses);
            if let Err(why) = kind.check(Some(&with)) {
                panic!("{} refused its minimal configuration: {why}", kind.uses);
            }
        }
    }

    #[test]
    fn a_configuration_is_judged_by_its_own_step_only() {
        let clone = find("git-clone").expect("built in");
        let push = find("git-push").expect("built in");
        assert_eq!(push.check(None), Ok(()));
        assert_eq!(clone.check(None), Err("missing field `repo`".to_string()));
        assert!(find("git-klone").is_none());
    }
}
