//! `render-kustomize` (spec §5.10): `kustomize build` of a kustomization directory in
//! the checkout, into one file, in kustomize's own (stable) order.

use std::ffi::OsString;
use std::path::PathBuf;

use futures::future::BoxFuture;
use serde_json::json;

use super::{Program, Render, is_empty, with_newline};
use crate::Tools;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The controller flag that allows `loadRestrictionsNone`.
pub const ALLOW_LOAD_RESTRICTIONS_NONE: &str = "--allow-kustomize-load-restrictions-none";

/// The names kustomize looks for in a kustomization directory.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The `render-kustomize` step. Outputs `changed` (whether the file was written),
/// `file` (the configured `out`) and `resources` (how many objects it holds).
/// `loadRestrictionsNone` is refused (`NotAllowed`) unless the controller was started
/// with [`ALLOW_LOAD_RESTRICTIONS_NONE`].
#[derive(Clone, Debug)]
pub struct RenderKustomize {
    program: PathBuf,
    limit: std::time::Duration,
    /// `--allow-kustomize-load-restrictions-none`.
    load_restrictions_none: bool,
}

impl RenderKustomize {
    /// Runs the `kustomize` at `program` (`--kustomize-path`; a bare name is looked up
    /// on PATH).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            limit: super::RUN_LIMIT,
            load_restrictions_none: false,
        }
    }

    /// The same, with `loadRestrictionsNone` allowed (`allowed`) or refused — the
    /// operator's choice, [`ALLOW_LOAD_RESTRICTIONS_NONE`].
    #[must_use]
    pub fn allowing_load_restrictions_none(mut self, allowed: bool) -> Self {
        self.load_restrictions_none = allowed;
        self
    }

    /// The same, the program killed (with all it started) after `limit` rather than
    /// [`super::RUN_LIMIT`].
    #[must_use]
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> Self {
        self.limit = limit;
        self
    }
}

impl StepKind for RenderKustomize {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::RenderKustomize;
    type With = crate::config::render::RenderKustomizeConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(&tools.kustomize)
            .allowing_load_restrictions_none(tools.allow_kustomize_load_restrictions_none)
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            // kustomize would read any file the controller may: its kubeconfig, its
            // ServiceAccount token. Whether a Gate may ask is the operator's call
            // (docs/DECISIONS.md 99).
            if config.load_restrictions_none && !self.load_restrictions_none {
                return Err(StepError::terminal(
                    Reason::NotAllowed,
                    format!(
                        "loadRestrictionsNone would let kustomize read files outside {} \
                         (anywhere the controller can read), and this controller does not \
                         allow it; its operator may, with {ALLOW_LOAD_RESTRICTIONS_NONE}",
                        config.path
                    ),
                ));
            }
            let render = Render::new(ctx).await?;
            let result = async {
                let dir = render.existing(ctx, "path", &config.path).await?;
                if !tokio::fs::metadata(&dir).await.is_ok_and(|m| m.is_dir()) {
                    return Err(StepError::terminal(
                        Reason::FileNotFound,
                        format!(
                            "path: {} is not a directory; name the kustomization's directory",
                            config.path
                        ),
                    ));
                }
                let mut found = false;
                for name in KUSTOMIZATION_FILES {
                    found |= tokio::fs::try_exists(dir.join(name)).await.unwrap_or(false);
                }
                if !found {
                    return Err(StepError::terminal(
                        Reason::FileNotFound,
                        format!(
                            "path: {} holds no kustomization ({})",
                            config.path,
                            KUSTOMIZATION_FILES.join(", ")
                        ),
                    ));
                }
                let program = Program {
                    name: "kustomize",
                    flag: "--kustomize-path",
                    path: &self.program,
                };
                let output = render
                    .run(
                        program,
                        &arguments(dir, config.load_restrictions_none),
                        self.limit,
                    )
                    .await?;
                if is_empty(&output) {
                    return Err(StepError::terminal(
                        Reason::NothingRendered,
                        format!("kustomize build of {} rendered nothing", config.path),
                    ));
                }
                let output = with_newline(output);
                let resources = count_resources(&String::from_utf8_lossy(&output));
                let changed = render.write(ctx, &config.out, &output).await?;
                let (path, out) = (&config.path, &config.out);
                let message = if changed {
                    format!("rendered {path} into {out} ({resources} resources)")
                } else {
                    format!("{out} already holds the rendering of {path} ({resources} resources)")
                };
                Ok(StepResult::done(
                    message,
                    json!({"changed": changed, "file": out, "resources": resources}),
                ))
            }
            .await;
            render.finish().await;
            result
        })
    }
}

/// `kustomize build`'s arguments: the load restrictor always named, so kustomize's
/// default never decides it.
fn arguments(dir: PathBuf, load_restrictions_none: bool) -> Vec<OsString> {
    let restrictor = if load_restrictions_none {
        "--load-restrictor=LoadRestrictionsNone"
    } else {
        "--load-restrictor=LoadRestrictionsRootOnly"
    };
    vec!["build".into(), restrictor.into(), dir.into()]
}

/// How many objects kustomize's output holds: it writes one document per object,
/// separated by `---` lines (a `---` inside a value is always indented).
fn count_resources(output: &str) -> usize {
    output
        .split('\n')
        .collect::<Vec<_>>()
        .split(|line| *line == "---")
        .filter(|document| document.iter().any(|line| !line.trim().is_empty()))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_restrictor_is_always_named() {
        let dir = PathBuf::from("/w/repo/envs/dev");
        assert_eq!(
            arguments(dir.clone(), false),
            [
                "build",
                "--load-restrictor=LoadRestrictionsRootOnly",
                "/w/repo/envs/dev"
            ]
            .map(OsString::from)
        );
        assert_eq!(
            arguments(dir, true)[1],
            OsString::from("--load-restrictor=LoadRestrictionsNone")
        );
    }

    #[test]
    fn resources_are_the_documents_of_the_output() {
        let cases = [
            ("", 0),
            ("apiVersion: v1\nkind: Namespace\n", 1),
            (
                "apiVersion: v1\nkind: ConfigMap\ndata:\n  doc: |\n    ---\n    x\n---\napiVersion: v1\nkind: Service\n",
                2,
            ),
            ("a: 1\n---\nb: 2\n---\nc: 3\n", 3),
        ];
        for (output, count) in cases {
            assert_eq!(count_resources(output), count, "{output}");
        }
    }
}
