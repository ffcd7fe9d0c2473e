//! Flux API discovery at startup (spec controller.md §0.6, warn-only): a Gate's health
//! checks and the `flux-*` steps read Flux objects at the versions below; if the
//! cluster serves a group at another version, or not at all, say so once at start
//! rather than in every Gate's health.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroupList;

/// The Flux API versions Hecate reads by default.
pub const DEFAULT_VERSIONS: [(&str, &str); 3] = [
    ("kustomize.toolkit.fluxcd.io", "v1"),
    ("helm.toolkit.fluxcd.io", "v2"),
    ("source.toolkit.fluxcd.io", "v1"),
];

/// One warning per default Flux group the cluster does not serve at Hecate's version.
pub fn missing(groups: &APIGroupList) -> Vec<String> {
    DEFAULT_VERSIONS
        .iter()
        .filter_map(|(group, version)| {
            let served = groups.groups.iter().find(|g| g.name == *group);
            match served {
                None => Some(format!("{group} is not served: Flux objects of it cannot be watched or waited on")),
                Some(g) if g.versions.iter().any(|v| v.version == *version) => None,
                Some(g) => Some(format!(
                    "{group} is served at {} but Hecate reads {version}: name an apiVersion in the Gate's watch to use another",
                    g.versions.iter().map(|v| v.version.as_str()).collect::<Vec<_>>().join(", ")
                )),
            }
        })
        .collect()
}

/// Logs [`missing`]'s warnings; never fails.
pub async fn warn_about_missing(client: &kube::Client) {
    match client.list_api_groups().await {
        Ok(groups) => {
            for warning in missing(&groups) {
                tracing::warn!("{warning}");
            }
        }
        Err(error) => tracing::warn!(%error, "could not list the cluster's API groups"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, GroupVersionForDiscovery};

    fn group(name: &str, versions: &[&str]) -> APIGroup {
        APIGroup {
            name: name.into(),
            versions: versions
                .iter()
                .map(|v| GroupVersionForDiscovery {
                    group_version: format!("{name}/{v}"),
                    version: (*v).into(),
                })
                .collect(),
            ..APIGroup::default()
        }
    }

    #[test]
    fn absent_and_other_versions_are_named_and_served_ones_are_not() {
        let groups = APIGroupList {
            groups: vec![
                group("kustomize.toolkit.fluxcd.io", &["v1"]),
                group("helm.toolkit.fluxcd.io", &["v2beta2"]),
            ],
        };
        let warnings = missing(&groups);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("helm.toolkit.fluxcd.io is served at v2beta2"));
        assert!(warnings[1].contains("source.toolkit.fluxcd.io is not served"));
    }
}
