//! The CustomResourceDefinitions, generated from the Rust types.
//!
//! `cargo xtask crds` writes them to the Helm chart (`charts/hecate/files/crds/`, which the chart's templates install and upgrade) and
//! `deploy/crds/`; tests keep the checked-in files equal to what this module generates,
//! and the generated schemas wire-compatible with the Go reference's.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::CustomResourceExt;

use crate::{Beacon, Bundle, Gate, Notifier, Passage};

/// The CRDs, in the order Beacon, Bundle, Gate, Passage, then Notifier (Hecate's own).
pub fn all() -> Vec<CustomResourceDefinition> {
    [
        Beacon::crd(),
        Bundle::crd(),
        Gate::crd(),
        Passage::crd(),
        Notifier::crd(),
    ]
    .into_iter()
    .map(finish)
    .collect()
}

/// The file a CRD is kept in: `hecate.dev_<plural>.yaml`, as controller-gen names it.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// A CRD as a YAML document, the way it is checked in.
pub fn to_yaml(crd: &CustomResourceDefinition) -> Result<String, serde_yaml_ng::Error> {
    Ok(format!("---\n{}", serde_yaml_ng::to_string(crd)?))
}

/// Makes a derived CRD look like a hand-written one: `names.listKind` is explicit,
/// and the root schema declares `apiVersion`, `kind` and `metadata` as the API server
/// expects and carries no schemars `title`.
fn finish(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let names = &mut crd.spec.names;
    names
        .list_kind
        .get_or_insert_with(|| format!("{}List", names.kind));
    for version in &mut crd.spec.versions {
        let Some(root) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        root.title = None;
        let properties = root.properties.get_or_insert_with(Default::default);
        properties.insert(
            "apiVersion".into(),
            string_property("The versioned schema of this object: hecate.dev/v1alpha1."),
        );
        properties.insert("kind".into(), string_property("The kind of this object."));
        properties.insert(
            "metadata".into(),
            JSONSchemaProps {
                type_: Some("object".into()),
                ..Default::default()
            },
        );
    }
    crd
}

fn string_property(description: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("string".into()),
        description: Some(description.into()),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
