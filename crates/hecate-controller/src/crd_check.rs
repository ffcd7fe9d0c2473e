//! The CRD skew check at startup (spec controller.md §0.6): the API server silently
//! drops fields its installed CRD does not declare, so a controller newer than its
//! CRDs would write status that vanishes. Before anything runs, every property path
//! this binary knows must exist in the cluster's CRDs; extra paths in the cluster are
//! fine (an older binary against newer CRDs).

use std::collections::BTreeSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::Api;

/// Every property path of `crd`'s schemas, as `<version>:<a.b.c>`; arrays descend
/// into their items without adding a segment.
pub fn property_paths(crd: &CustomResourceDefinition) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    for version in &crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        {
            walk(schema, &format!("{}:", version.name), &mut paths);
        }
    }
    paths
}

fn walk(schema: &JSONSchemaProps, prefix: &str, paths: &mut BTreeSet<String>) {
    if let Some(properties) = &schema.properties {
        for (name, child) in properties {
            let path = if prefix.ends_with(':') {
                format!("{prefix}{name}")
            } else {
                format!("{prefix}.{name}")
            };
            paths.insert(path.clone());
            walk(child, &path, paths);
        }
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(items)) =
        &schema.items
    {
        walk(items, prefix, paths);
    }
}

/// What is missing from the cluster: whole CRDs (by name) and, for installed ones,
/// every path this binary knows that the cluster's CRD lacks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Skew {
    /// CRDs not installed.
    pub missing_crds: Vec<String>,
    /// `<crd name> <version>:<path>` for each path the cluster lacks.
    pub missing_paths: Vec<String>,
}

impl Skew {
    /// Whether the cluster has everything this binary writes.
    pub fn is_empty(&self) -> bool {
        self.missing_crds.is_empty() && self.missing_paths.is_empty()
    }
}

impl std::fmt::Display for Skew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.missing_crds.is_empty() {
            writeln!(
                f,
                "these CRDs are not installed: {}",
                self.missing_crds.join(", ")
            )?;
        }
        if !self.missing_paths.is_empty() {
            writeln!(
                f,
                "the installed CRDs lack {} field(s) this controller writes (the API server would drop them):",
                self.missing_paths.len()
            )?;
            for path in &self.missing_paths {
                writeln!(f, "  {path}")?;
            }
        }
        write!(
            f,
            "install this version's CRDs first: kubectl apply --server-side -f deploy/crds/"
        )
    }
}

/// Compares what this binary knows (`ours`) with what is installed (`installed`, by
/// name; `None` when absent).
pub fn compare<'a>(
    ours: &[CustomResourceDefinition],
    installed: impl Fn(&str) -> Option<&'a CustomResourceDefinition>,
) -> Skew {
    let mut skew = Skew::default();
    for crd in ours {
        let name = crd.metadata.name.clone().unwrap_or_default();
        match installed(&name) {
            None => skew.missing_crds.push(name),
            Some(theirs) => {
                let theirs = property_paths(theirs);
                skew.missing_paths.extend(
                    property_paths(crd)
                        .difference(&theirs)
                        .map(|path| format!("{name} {path}")),
                );
            }
        }
    }
    skew
}

/// Reads the installed Hecate CRDs and compares them with this binary's.
pub async fn check(client: &kube::Client) -> Result<Skew, kube::Error> {
    let api = Api::<CustomResourceDefinition>::all(client.clone());
    let ours = hecate_types::crd::all();
    let mut installed = Vec::new();
    for crd in &ours {
        if let Some(theirs) = api
            .get_opt(&crd.metadata.name.clone().unwrap_or_default())
            .await?
        {
            installed.push(theirs);
        }
    }
    Ok(compare(&ours, |name| {
        installed
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_crds_have_no_skew() {
        let ours = hecate_types::crd::all();
        let skew = compare(&ours, |name| {
            ours.iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
        });
        assert!(skew.is_empty(), "{skew}");
    }

    #[test]
    fn every_missing_path_and_crd_is_named() {
        let ours = hecate_types::crd::all();
        let mut older = ours.clone();
        // An older Gate CRD without `spec.retain` and `status.evidence`; no Beacon CRD.
        let gate = older
            .iter_mut()
            .find(|c| c.spec.names.kind == "Gate")
            .expect("a Gate CRD");
        let root = gate.spec.versions[0]
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .expect("a schema");
        let properties = root.properties.as_mut().expect("properties");
        properties
            .get_mut("spec")
            .and_then(|s| s.properties.as_mut())
            .expect("spec")
            .remove("retain");
        properties
            .get_mut("status")
            .and_then(|s| s.properties.as_mut())
            .expect("status")
            .remove("evidence");
        older.retain(|c| c.spec.names.kind != "Beacon");
        let skew = compare(&ours, |name| {
            older
                .iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
        });
        assert_eq!(skew.missing_crds, ["beacons.hecate.dev"]);
        assert!(
            skew.missing_paths
                .contains(&"gates.hecate.dev v1alpha1:spec.retain".to_string())
        );
        assert!(
            skew.missing_paths
                .contains(&"gates.hecate.dev v1alpha1:status.evidence.verdict".to_string()),
            "{:?}",
            skew.missing_paths
        );
        let text = skew.to_string();
        assert!(text.contains("kubectl apply --server-side"), "{text}");
        // Extra paths in the cluster are fine: the comparison is one-way.
        let reverse = compare(&older, |name| {
            ours.iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
        });
        assert!(reverse.is_empty(), "{reverse}");
    }
}
