//! The steps a Gate's `passage.steps[].uses` may name — the one list — each with the
//! type its `with:` decodes to.

use std::any::TypeId;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config;

macro_rules! steps {
    ($($variant:ident = $name:literal => $config:ty,)+) => {
        /// A built-in step (spec controller.md §5.1), in the order the specification
        /// lists them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Step {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )+
        }

        impl Step {
            /// Every built-in step, in the specification's order.
            pub const ALL: &'static [Step] = &[$(Step::$variant),+];

            /// Its `uses:` name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Step::$variant => $name,)+
                }
            }

            /// The step called `uses`, if there is one.
            pub fn named(uses: &str) -> Option<Self> {
                match uses {
                    $($name => Some(Step::$variant),)+
                    _ => None,
                }
            }

            /// Whether `with` (absent: `{}`) is a configuration this step takes, decoded
            /// strictly as its runs decode it; `Err` says where and what is wrong.
            pub fn check(self, with: Option<&Value>) -> Result<(), String> {
                match self {
                    $(Step::$variant => config::decode::<$config>(with).map(drop),)+
                }
            }

            /// The type its `with:` decodes to: hecate-steps holds each runner to it.
            pub fn config_type(self) -> TypeId {
                match self {
                    $(Step::$variant => TypeId::of::<$config>(),)+
                }
            }
        }
    };
}

steps! {
    GitClone = "git-clone" => config::git::GitCloneConfig,
    GitCommit = "git-commit" => config::git::GitCommitConfig,
    GitPush = "git-push" => config::git::GitPushConfig,
    GitPullRequest = "git-pull-request" => config::host::GitPullRequestConfig,
    CommitStatus = "commit-status" => config::host::CommitStatusConfig,
    EditYaml = "edit-yaml" => config::yaml::EditYamlConfig,
    SetImage = "set-image" => config::yaml::SetImageConfig,
    RenderKustomize = "render-kustomize" => config::render::RenderKustomizeConfig,
    RenderHelm = "render-helm" => config::render::RenderHelmConfig,
    OciPush = "oci-push" => config::oci::OciPushConfig,
    OciPull = "oci-pull" => config::oci::OciPullConfig,
    FluxReconcile = "flux-reconcile" => config::flux::FluxReconcileConfig,
    FluxWait = "flux-wait" => config::flux::FluxWaitConfig,
    Http = "http" => config::http::HttpConfig,
    EvidenceGate = "evidence-gate" => config::evidence::EvidenceGateConfig,
}

impl Step {
    /// The smallest `with:` this step takes, as the manual and tests show it.
    pub fn example(self) -> Value {
        use serde_json::json;
        match self {
            Step::GitClone => json!({"repo": "https://example.com/fleet.git"}),
            Step::GitCommit => json!({"message": "promote"}),
            Step::GitPush => json!({}),
            Step::GitPullRequest | Step::CommitStatus => {
                json!({"credentialsRef": {"name": "gh"}})
            }
            Step::EditYaml => {
                json!({"path": "repo/v.yaml", "edits": [{"key": "a", "value": 1}]})
            }
            Step::SetImage => json!({"path": "repo/kustomization.yaml", "image": "app"}),
            Step::RenderKustomize => json!({"path": "repo/envs/dev", "out": "out.yaml"}),
            Step::RenderHelm => {
                json!({"chart": "repo/chart", "out": "out.yaml", "releaseName": "app"})
            }
            Step::OciPush => json!({"path": "out", "repo": "ghcr.io/o/m", "tag": "dev"}),
            Step::OciPull => json!({"repo": "ghcr.io/o/m", "tag": "dev", "out": "m"}),
            Step::FluxReconcile | Step::FluxWait => {
                json!({"resources": [{"kind": "Kustomization", "name": "app"}]})
            }
            Step::Http => json!({"url": "https://example.com/hook"}),
            Step::EvidenceGate => json!({"gates": ["assert"]}),
        }
    }
}

/// What a step does beyond the crossing's work directory: what a preview runs, and what
/// it only lists (issue 55).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Effect {
    /// It reads (a clone, a pull) and changes only the work directory.
    WorkDir,
    /// It pushes to a remote: a git branch or an OCI registry.
    Pushes,
    /// It asks a forge to do something: open a pull request, set a commit status.
    Forge,
    /// It asks Flux, in a cluster, to act or waits for it.
    Cluster,
    /// It calls an endpoint.
    Calls,
    /// It asks Fides for evidence.
    Evidence,
}

impl Effect {
    /// What it does, in words a preview shows beside a step it lists.
    pub const fn words(self) -> &'static str {
        match self {
            Self::WorkDir => "works in the crossing's own directory",
            Self::Pushes => "pushes to a remote",
            Self::Forge => "asks a forge (a pull request, a commit status)",
            Self::Cluster => "asks Flux in a cluster",
            Self::Calls => "calls an endpoint",
            Self::Evidence => "asks Fides for evidence",
        }
    }
}

impl Step {
    /// What it does beyond the work directory.
    pub const fn effect(self) -> Effect {
        match self {
            Step::GitClone
            | Step::GitCommit
            | Step::EditYaml
            | Step::SetImage
            | Step::RenderKustomize
            | Step::RenderHelm
            | Step::OciPull => Effect::WorkDir,
            Step::GitPush | Step::OciPush => Effect::Pushes,
            Step::GitPullRequest | Step::CommitStatus => Effect::Forge,
            Step::FluxReconcile | Step::FluxWait => Effect::Cluster,
            Step::Http => Effect::Calls,
            Step::EvidenceGate => Effect::Evidence,
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every step's name, comma-separated: how a message lists them.
pub fn names() -> String {
    super::listed(Step::ALL, Step::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_finds_its_step() {
        assert_eq!(Step::ALL.len(), 15);
        for step in Step::ALL {
            assert_eq!(Step::named(step.name()), Some(*step));
        }
        assert_eq!(Step::named("git-clone "), None);
        assert_eq!(Step::named("Git-Clone"), None);
    }

    #[test]
    fn every_example_is_taken() {
        for step in Step::ALL {
            assert_eq!(step.check(Some(&step.example())), Ok(()), "{step}");
        }
    }
}
