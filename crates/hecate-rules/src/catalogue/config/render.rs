//! `render-kustomize` and `render-helm` (spec §5.10, §5.11): the steps that render
//! manifests from the checkout into one file, without touching a cluster.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::StepConfig;
use super::fields::{inside_work_dir, required};

/// `render-kustomize`: build a kustomization into one file.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderKustomizeConfig {
    /// The kustomization directory, relative to the work directory.
    pub path: String,
    /// The file to write, relative to the work directory.
    pub out: String,
    /// Let the kustomization read files outside its own directory.
    #[serde(default)]
    pub load_restrictions_none: bool,
}

impl StepConfig for RenderKustomizeConfig {
    fn check(&self) -> Result<(), String> {
        for (field, path) in [("path", &self.path), ("out", &self.out)] {
            required(field, path)?;
            inside_work_dir(field, path)?;
        }
        Ok(())
    }
}

/// `render-helm`: template a chart from the checkout into one file.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderHelmConfig {
    /// The chart directory, relative to the work directory.
    pub chart: String,
    /// The file to write, relative to the work directory.
    pub out: String,
    /// The release name the templates see; never defaulted.
    pub release_name: String,
    /// Values files in the checkout, applied in order.
    #[serde(default)]
    pub values_files: Vec<String>,
    /// Values applied after the files.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// The namespace the templates see; blank = the Gate's.
    #[serde(default)]
    pub namespace: String,
    /// Render the chart's CRDs too.
    #[serde(default, rename = "includeCRDs")]
    pub include_crds: bool,
    /// The Kubernetes version the templates see; blank = the engine's default.
    #[serde(default)]
    pub kube_version: String,
    /// Extra API versions the templates may test for.
    #[serde(default)]
    pub api_versions: Vec<String>,
}

impl StepConfig for RenderHelmConfig {
    fn check(&self) -> Result<(), String> {
        for (field, path) in [("chart", &self.chart), ("out", &self.out)] {
            required(field, path)?;
            inside_work_dir(field, path)?;
        }
        required("releaseName", &self.release_name)?;
        for (i, file) in self.values_files.iter().enumerate() {
            inside_work_dir(&format!("valuesFiles[{i}]"), file)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{accepted, accepts, refuses};

    #[test]
    fn render_kustomize() {
        let render: super::RenderKustomizeConfig = accepted(
            "render-kustomize",
            json!({"path": "repo/envs/dev", "out": "out/dev.yaml"}),
        );
        assert!(!render.load_restrictions_none);
        accepts(
            "render-kustomize",
            json!({"path": "repo/envs/${{ gate }}", "out": "out.yaml", "loadRestrictionsNone": true}),
        );

        refuses(
            "render-kustomize",
            json!({"out": "o.yaml"}),
            &["missing field `path`"],
        );
        refuses(
            "render-kustomize",
            json!({"path": "p"}),
            &["missing field `out`"],
        );
        refuses(
            "render-kustomize",
            json!({"path": "p", "out": " "}),
            &["out must not be empty"],
        );
        refuses(
            "render-kustomize",
            json!({"path": "p", "out": "../o"}),
            &["out"],
        );
        refuses(
            "render-kustomize",
            json!({"path": "p", "out": "o", "loadRestrictions": "none"}),
            &["unknown field `loadRestrictions`"],
        );
    }

    #[test]
    fn render_helm() {
        let helm: super::RenderHelmConfig = accepted(
            "render-helm",
            json!({"chart": "repo/charts/app", "out": "out/app.yaml", "releaseName": "app"}),
        );
        assert!(helm.values.is_empty() && !helm.include_crds);
        accepts(
            "render-helm",
            json!({"chart": "c", "out": "o", "releaseName": "app",
                   "valuesFiles": ["c/values-dev.yaml"], "values": {"image": {"tag": "1"}},
                   "namespace": "apps", "includeCRDs": true, "kubeVersion": "1.33.0",
                   "apiVersions": ["monitoring.coreos.com/v1"]}),
        );

        refuses(
            "render-helm",
            json!({"out": "o", "releaseName": "r"}),
            &["missing field `chart`"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "releaseName": "r"}),
            &["missing field `out`"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "out": "o"}),
            &["missing field `releaseName`"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "out": "o", "releaseName": ""}),
            &["releaseName must not be empty"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "out": "o", "releaseName": "r", "includeCrds": true}),
            &["unknown field `includeCrds`", "includeCRDs"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "out": "o", "releaseName": "r", "values": ["a"]}),
            &["values"],
        );
        refuses(
            "render-helm",
            json!({"chart": "c", "out": "o", "releaseName": "r", "valuesFiles": ["../v.yaml"]}),
            &["valuesFiles[0]"],
        );
    }
}
