//! The built-in steps' runners. Which steps exist, and the type each one's `with:`
//! decodes to, is the catalogue's ([`Step`], in hecate-rules, which ops judges a Gate
//! by); here each is bound to the code that runs it by an exhaustive match ([`of`]),
//! so a step the catalogue lists without a runner does not compile, and a test holds
//! each runner to the catalogue's type for its `with:`. Adding a step is a line in the
//! catalogue, a file implementing [`StepKind`] and an arm here.

use std::any::TypeId;
use std::sync::Arc;

use hecate_ops::catalogue::Step;
use hecate_sources::git::Limits;

use crate::by_name::Duplicate;
use crate::engine::Steps;
use crate::runner::{Runner, StepKind};
use crate::{evidence, flux, flux_reconcile, flux_wait, forge, git, http, oci};
use crate::{reach, render, yaml};

/// One built-in step's runner: the step it runs, the type it decodes its `with:` to,
/// and how the process builds it.
#[derive(Clone, Copy)]
pub struct BuiltIn {
    /// The step, as the catalogue names it.
    pub step: Step,
    with_type: fn() -> TypeId,
    build: fn(&Tools) -> Arc<dyn Runner>,
}

impl BuiltIn {
    fn of<S: StepKind>() -> Self {
        Self {
            step: S::STEP,
            with_type: TypeId::of::<S::With>,
            build: build::<S>,
        }
    }

    /// The step as this process runs it.
    pub fn build(&self, tools: &Tools) -> Arc<dyn Runner> {
        (self.build)(tools)
    }
}

fn build<S: StepKind>(tools: &Tools) -> Arc<dyn Runner> {
    Arc::new(S::build(tools))
}

/// The runner of `step`.
pub fn of(step: Step) -> BuiltIn {
    match step {
        Step::GitClone => BuiltIn::of::<git::GitClone>(),
        Step::GitCommit => BuiltIn::of::<git::GitCommit>(),
        Step::GitPush => BuiltIn::of::<git::GitPush>(),
        Step::GitPullRequest => BuiltIn::of::<forge::GitPullRequest>(),
        Step::CommitStatus => BuiltIn::of::<forge::CommitStatus>(),
        Step::EditYaml => BuiltIn::of::<yaml::EditYaml>(),
        Step::SetImage => BuiltIn::of::<yaml::SetImage>(),
        Step::RenderKustomize => BuiltIn::of::<render::RenderKustomize>(),
        Step::RenderHelm => BuiltIn::of::<render::RenderHelm>(),
        Step::OciPush => BuiltIn::of::<oci::OciPush>(),
        Step::OciPull => BuiltIn::of::<oci::OciPull>(),
        Step::FluxReconcile => BuiltIn::of::<flux_reconcile::FluxReconcile>(),
        Step::FluxWait => BuiltIn::of::<flux_wait::FluxWait>(),
        Step::Http => BuiltIn::of::<http::Http>(),
        Step::EvidenceGate => BuiltIn::of::<evidence::EvidenceGate>(),
    }
}

/// The engine's registry: every built-in step, built from `tools`, each once.
pub fn runners(tools: &Tools) -> Result<Steps, Duplicate> {
    let mut registry = Steps::new();
    for step in Step::ALL {
        let built_in = of(*step);
        debug_assert!(
            (built_in.with_type)() == step.config_type(),
            "{step}: its runner decodes another type than the catalogue judges"
        );
        registry.register(built_in.build(tools))?;
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn each_runner_runs_its_step_with_the_catalogue_s_configuration() {
        for step in Step::ALL {
            let built_in = of(*step);
            assert_eq!(built_in.step, *step);
            assert!(
                (built_in.with_type)() == step.config_type(),
                "{step}: its runner decodes another type than the catalogue judges"
            );
        }
    }

    #[tokio::test]
    async fn the_registry_runs_exactly_the_fifteen_built_in_steps() {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
        let client = kube::Client::try_from(config).expect("a client");
        let registry = runners(&Tools::new(client)).expect("unique names");
        let mut built_in: Vec<&str> = Step::ALL.iter().map(|s| s.name()).collect();
        built_in.sort_unstable();
        assert_eq!(registry.names().collect::<Vec<_>>(), built_in);
    }
}
