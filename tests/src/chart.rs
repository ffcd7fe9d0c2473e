//! The Helm chart, `charts/hecate`, rendered by the real `helm` ([`crate::Tool::Helm`]);
//! and `deploy/`, the plain manifests made from it.
//!
//! Nothing in `deploy/` is written by hand. It is the chart rendered with its default
//! values as release [`RELEASE`] in namespace [`NAMESPACE`], one file per component
//! ([`DEPLOY_FILES`]) headed by the Namespace (what `helm install --create-namespace`
//! makes), and the chart's CRDs as they are. `cargo xtask manifests` writes it from
//! [`deploy_files`]; a test fails while the two differ.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize as _;

/// The release name `deploy/` is rendered as: resources are called `hecate-controller`,
/// `hecate-api`.
pub const RELEASE: &str = "hecate";
/// The namespace `deploy/` installs into.
pub const NAMESPACE: &str = "hecate-system";

/// Which `deploy/` file each template's documents go to, by the template's path in
/// the chart, and whether the file starts with the Namespace. Every document of the
/// default rendering must have a home here.
pub const DEPLOY_FILES: &[(&str, &str, bool)] = &[
    (
        "templates/controller/",
        "deploy/hecate-controller/hecate-controller.yaml",
        true,
    ),
    ("templates/api/", "deploy/hecate-api/hecate-api.yaml", true),
    (
        "templates/user-roles.yaml",
        "deploy/rbac/user-roles.yaml",
        false,
    ),
    (
        "templates/records-policy.yaml",
        "deploy/rbac/records-policy.yaml",
        false,
    ),
];

/// The top of every generated file.
const HEADER: &str = "\
# Generated from charts/hecate by `cargo xtask manifests`: the chart's default values,
# release hecate in namespace hecate-system. Edit the chart and run it again (a test
# fails while this file and the chart disagree); `helm install` takes the same chart.
";

/// The namespace `helm install --create-namespace` would make.
const NAMESPACE_DOCUMENT: &str = "\
apiVersion: v1
kind: Namespace
metadata:
  name: hecate-system
  labels:
    app.kubernetes.io/part-of: hecate
";

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `charts/hecate`.
pub fn chart_dir() -> PathBuf {
    repo_root().join("charts/hecate")
}

/// The values file that turns every option on (`charts/hecate/ci/`, the chart-testing
/// convention; not packaged).
pub fn everything_values() -> PathBuf {
    chart_dir().join("ci/everything-values.yaml")
}

/// Runs `helm` with `args` in the repository's root and an empty environment (so no
/// `HELM_*` variable of the machine changes the answer); its stdout, or an error
/// carrying what it said on stderr.
pub fn helm(helm: &Path, args: &[&str]) -> anyhow::Result<String> {
    helm_with(helm, args, &[])
}

/// [`helm`], with `env` its only environment: `HOME`, `HELM_CONFIG_HOME` and the other
/// homes for a command that reaches a cluster (without them Helm and its discovery
/// cache keep their state under the working directory, the repository).
pub fn helm_with(helm: &Path, args: &[&str], env: &[(&str, &Path)]) -> anyhow::Result<String> {
    let output = Command::new(helm)
        .args(args)
        .current_dir(repo_root())
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value.as_os_str())))
        .output()
        .with_context(|| format!("running {}", helm.display()))?;
    if !output.status.success() {
        bail!(
            "helm {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).context("helm wrote something other than UTF-8")
}

/// `helm template hecate charts/hecate --namespace <namespace>`, with each of `values`
/// (`-f`) and each of `set` (`--set`); the CRDs come with it unless `crds.install` is
/// off.
pub fn template(
    program: &Path,
    namespace: &str,
    values: &[&Path],
    set: &[&str],
) -> anyhow::Result<String> {
    let chart = chart_dir();
    let mut args = vec![
        "template".to_string(),
        RELEASE.to_string(),
        path_arg(&chart)?,
        "--namespace".to_string(),
        namespace.to_string(),
    ];
    for file in values {
        args.extend(["--values".to_string(), path_arg(file)?]);
    }
    for assignment in set {
        args.extend(["--set".to_string(), assignment.to_string()]);
    }
    helm(
        program,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

fn path_arg(path: &Path) -> anyhow::Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// One document of a rendering.
#[derive(Clone, Debug)]
pub struct Document {
    /// The template it came from, as helm names it (`hecate/templates/api/rbac.yaml`).
    pub source: String,
    /// Its text, `# Source:` line included, without the separator.
    pub text: String,
}

/// The documents of `helm template`'s output, in its order.
pub fn documents(rendered: &str) -> Vec<Document> {
    format!("\n{rendered}")
        .split("\n---\n")
        .map(str::trim_end)
        .filter(|text| !text.trim().is_empty())
        .map(|text| Document {
            source: text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("# Source: "))
                .unwrap_or_default()
                .to_string(),
            text: format!("{text}\n"),
        })
        .collect()
}

/// The objects of a rendering (or any YAML stream), as JSON.
pub fn objects(rendered: &str) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut objects = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(rendered) {
        let value = serde_json::Value::deserialize(document)?;
        if !value.is_null() {
            objects.push(value);
        }
    }
    Ok(objects)
}

/// The arguments of the first container of Deployment `name` in a rendering: what the
/// program is started with.
pub fn container_args(rendered: &str, name: &str) -> anyhow::Result<Vec<String>> {
    let deployment = objects(rendered)?
        .into_iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
        .with_context(|| format!("no Deployment {name} in the rendering"))?;
    let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
    Ok(args
        .as_array()
        .with_context(|| format!("Deployment {name} starts its container without args"))?
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect())
}

/// What `deploy/` should hold, as (path from the repository's root, contents): the
/// chart rendered with its defaults and split by [`DEPLOY_FILES`], and the chart's
/// CRDs copied to `deploy/crds/`.
pub fn deploy_files(program: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let chart = chart_dir();
    // The CRDs are copied as files, below: `kubectl apply` needs no labels of Helm's.
    let rendered = template(program, NAMESPACE, &[], &["crds.install=false"])?;
    // Applied with kubectl, they are not Helm's to manage.
    let rendered: String = rendered
        .lines()
        .filter(|line| line.trim() != "app.kubernetes.io/managed-by: Helm")
        .flat_map(|line| [line, "\n"])
        .collect();
    let mut files: Vec<(PathBuf, String)> = DEPLOY_FILES
        .iter()
        .map(|(_, path, namespaced)| {
            let mut text = HEADER.to_string();
            if *namespaced {
                text.push_str("---\n");
                text.push_str(NAMESPACE_DOCUMENT);
            }
            (PathBuf::from(path), text)
        })
        .collect();
    for document in documents(&rendered) {
        let template = document
            .source
            .strip_prefix("hecate/")
            .with_context(|| format!("a document from outside the chart: {}", document.text))?;
        let home = DEPLOY_FILES
            .iter()
            .position(|(prefix, _, _)| template.starts_with(prefix))
            .with_context(|| {
                format!("{template} has no file in deploy/: add it to chart::DEPLOY_FILES")
            })?;
        files[home].1.push_str("---\n");
        files[home].1.push_str(&document.text);
    }
    let mut crds: Vec<PathBuf> = std::fs::read_dir(chart.join("files/crds"))
        .context("reading the chart's files/crds/")?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    crds.sort();
    for crd in crds {
        let name = crd.file_name().context("a CRD file has a name")?;
        let text =
            std::fs::read_to_string(&crd).with_context(|| format!("reading {}", crd.display()))?;
        files.push((Path::new("deploy/crds").join(name), text));
    }
    Ok(files)
}

/// Every file under `deploy/` now, as paths from the repository's root, sorted.
pub fn files_in_deploy() -> anyhow::Result<Vec<PathBuf>> {
    let root = repo_root();
    let mut found = Vec::new();
    let mut dirs = vec![root.join("deploy")];
    while let Some(dir) = dirs.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                found.push(path.strip_prefix(&root)?.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_split_at_separators_and_keep_their_source() {
        let rendered = "---\n# Source: hecate/templates/a.yaml\nkind: A\n\n---\n# Source: hecate/crds/b.yaml\nkind: B\n";
        let documents = documents(rendered);
        let sources: Vec<&str> = documents.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["hecate/templates/a.yaml", "hecate/crds/b.yaml"]);
        assert_eq!(
            documents[0].text,
            "# Source: hecate/templates/a.yaml\nkind: A\n"
        );
    }
}
