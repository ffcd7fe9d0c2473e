//! `render-helm` (spec §5.11): `helm template` of a chart in the checkout, into one
//! file — client-side only: no cluster, no hooks, no release history.
//!
//! Values come as Helm reads them: `valuesFiles` in order, then `values` last (written
//! as a JSON file in the scratch area and handed over as the last `--values`). Helm
//! merges them as the spec says — maps recursively, anything else, lists included,
//! replaced — so the merge is Helm's own, not a second reading of YAML that could
//! disagree with it (YAML 1.1 booleans, anchors, numbers).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::json;

use super::{Program, Render, is_empty, with_newline};
use crate::Tools;
use crate::config::render::RenderHelmConfig as Settings;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `render-helm` step. Outputs `changed` (whether the file was written) and `file`
/// (the configured `out`).
#[derive(Clone, Debug)]
pub struct RenderHelm {
    program: PathBuf,
    limit: std::time::Duration,
}

impl RenderHelm {
    /// Runs the `helm` at `program` (`--helm-path`; a bare name is looked up on PATH).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            limit: super::RUN_LIMIT,
        }
    }

    /// The same, the program killed (with all it started) after `limit` rather than
    /// [`super::RUN_LIMIT`].
    #[must_use]
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> Self {
        self.limit = limit;
        self
    }
}

impl StepKind for RenderHelm {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::RenderHelm;
    type With = Settings;

    fn build(tools: &Tools) -> Self {
        Self::new(&tools.helm)
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let mut render = Render::new(ctx).await?;
            let result = async {
                let chart = render.existing(ctx, "chart", &config.chart).await?;
                if tokio::fs::metadata(&chart).await.is_ok_and(|m| m.is_dir()) {
                    if !tokio::fs::try_exists(chart.join("Chart.yaml"))
                        .await
                        .unwrap_or(false)
                    {
                        return Err(StepError::terminal(
                            Reason::FileNotFound,
                            format!("chart: {} holds no Chart.yaml", config.chart),
                        ));
                    }
                    render.no_link_out("chart", &config.chart, &chart).await?;
                }
                let mut files = Vec::with_capacity(config.values_files.len() + 1);
                for (i, file) in config.values_files.iter().enumerate() {
                    files.push(
                        render
                            .existing(ctx, &format!("valuesFiles[{i}]"), file)
                            .await?,
                    );
                }
                if !config.values.is_empty() {
                    let inline = render.scratch.join("values.json");
                    let text = serde_json::to_vec_pretty(&config.values)
                        .map_err(|e| StepError::config(format!("values cannot be written: {e}")))?;
                    tokio::fs::write(&inline, text).await.map_err(|e| {
                        StepError::terminal(
                            Reason::RenderFailed,
                            format!("cannot write values: {e}"),
                        )
                    })?;
                    render.alias(&inline, "values");
                    files.push(inline);
                }
                let program = Program {
                    name: "helm",
                    flag: "--helm-path",
                    path: &self.program,
                };
                let namespace = match config.namespace.trim() {
                    "" => ctx.namespace,
                    namespace => namespace,
                };
                let args = arguments(&config, namespace, &chart, &files);
                let output = render.run(program, &args, self.limit).await?;
                if is_empty(&output) {
                    return Err(StepError::terminal(
                        Reason::NothingRendered,
                        format!("helm template of {} rendered nothing", config.chart),
                    ));
                }
                let output = with_newline(output);
                let changed = render.write(ctx, &config.out, &output).await?;
                let (chart, out) = (&config.chart, &config.out);
                let release = &config.release_name;
                let message = if changed {
                    format!("rendered {chart} as {release} in {namespace} into {out}")
                } else {
                    format!("{out} already holds {chart} as {release} in {namespace}")
                };
                Ok(StepResult::done(
                    message,
                    json!({"changed": changed, "file": out}),
                ))
            }
            .await;
            render.finish().await;
            result
        })
    }
}

/// `helm template`'s arguments: every option in its `--name=value` form and the two
/// names after `--`, so no value is ever read as a flag. Hooks are left out: what is
/// rendered is applied as it is, and a hook (a test Pod, a migration Job) is not a
/// resource to apply.
fn arguments(
    config: &Settings,
    namespace: &str,
    chart: &Path,
    values_files: &[PathBuf],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "template".into(),
        format!("--namespace={namespace}").into(),
        "--no-hooks".into(),
    ];
    if config.include_crds {
        args.push("--include-crds".into());
    }
    if !config.kube_version.trim().is_empty() {
        args.push(format!("--kube-version={}", config.kube_version.trim()).into());
    }
    for api in &config.api_versions {
        args.push(format!("--api-versions={api}").into());
    }
    for file in values_files {
        let mut arg = OsString::from("--values=");
        arg.push(file);
        args.push(arg);
    }
    args.push("--".into());
    args.push(config.release_name.clone().into());
    args.push(chart.into());
    args
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn settings(with: serde_json::Value) -> Settings {
        serde_json::from_value(with).expect("a render-helm configuration")
    }

    #[test]
    fn arguments_carry_every_option_then_the_names() {
        let config = settings(json!({
            "chart": "repo/chart", "out": "o.yaml", "releaseName": "-app",
            "includeCRDs": true, "kubeVersion": " 1.29.3 ",
            "apiVersions": ["monitoring.coreos.com/v1", "cert-manager.io/v1"],
        }));
        let files = [PathBuf::from("/w/a.yaml"), PathBuf::from("/w/-b.yaml")];
        let args = arguments(&config, "apps", Path::new("/w/repo/chart"), &files);
        assert_eq!(
            args,
            [
                "template",
                "--namespace=apps",
                "--no-hooks",
                "--include-crds",
                "--kube-version=1.29.3",
                "--api-versions=monitoring.coreos.com/v1",
                "--api-versions=cert-manager.io/v1",
                "--values=/w/a.yaml",
                "--values=/w/-b.yaml",
                "--",
                "-app",
                "/w/repo/chart",
            ]
            .map(OsString::from)
        );
    }

    #[test]
    fn unset_options_are_left_to_helm() {
        let config = settings(json!({"chart": "c", "out": "o", "releaseName": "app"}));
        let args = arguments(&config, "demo", Path::new("/w/c"), &[]);
        assert_eq!(
            args,
            [
                "template",
                "--namespace=demo",
                "--no-hooks",
                "--",
                "app",
                "/w/c"
            ]
            .map(OsString::from)
        );
    }
}
