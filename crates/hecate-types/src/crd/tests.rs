//! The generated CRDs against the checked-in files and against the Go reference.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

/// Kinds the reference does not have, as (plural, why): additive, each with its
/// DECISION. They are checked against their generated files, never against a reference.
const KINDS_OF_OUR_OWN: &[(&str, &str)] = &[(
    "notifiers",
    "who is told what happens to a namespace's releases (DECISION 166)",
)];

/// The generated CRDs the reference has too.
fn shared_with_the_reference() -> impl Iterator<Item = CustomResourceDefinition> {
    all().into_iter().filter(|crd| {
        !KINDS_OF_OUR_OWN
            .iter()
            .any(|(plural, _)| crd.spec.names.plural == *plural)
    })
}

#[test]
fn kinds_of_our_own_are_not_in_the_reference() {
    for (plural, _) in KINDS_OF_OUR_OWN {
        let path = reference_dir().join(format!("hecate.dev_{plural}.yaml"));
        assert!(
            !path.exists(),
            "{} exists: compare {plural} with it",
            path.display()
        );
        assert!(
            all().iter().any(|crd| crd.spec.names.plural == *plural),
            "{plural} is listed as ours and is not generated"
        );
    }
}

/// Differences from the reference's schemas that we make on purpose, as
/// (`<plural>:<json path>`, why): additive, optional fields, each with its DECISION.
const DELIBERATE_DIFFERENCES: &[(&str, &str)] = &[
    (
        "gates:schema.properties.spec.properties.admits.items.properties.approvals",
        "approval policies (DECISION 137)",
    ),
    (
        "bundles:schema.properties.status.properties.approvals",
        "every approval under a policy, with the approver's groups (DECISION 137)",
    ),
    (
        "bundles:schema.properties.status.properties.rejections",
        "a \"no\" that holds a Bundle until withdrawn (DECISION 137)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.author",
        "a commit's author, for policies that exclude the author (DECISION 137)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.author",
        "a commit's author, as the Beacon discovered it (DECISION 137)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.committedAt",
        "a Bundle's commit: commit time, where lead time starts (DECISION 140)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.commits",
        "a Bundle's commit: the commits it brings since the previous Bundle (DECISION 140)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.moreCommits",
        "a Bundle's commit: how many more it brings than it lists (DECISION 140)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.commitsSince",
        "a Bundle's commit: the previous commit those count from (DECISION 140)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.committedAt",
        "a discovered commit: commit time, where lead time starts (DECISION 140)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.commits",
        "a discovered commit: the commits it brings since the previous Bundle (DECISION 140)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.moreCommits",
        "a discovered commit: how many more it brings than it lists (DECISION 140)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.commitsSince",
        "a discovered commit: the previous commit those count from (DECISION 140)",
    ),
    (
        "gates:schema.properties.spec.properties.rollback",
        "automatic rollback (DECISION 139)",
    ),
    (
        "passages:schema.properties.status.properties.verification",
        "how far a crossing's verification has got (DECISION 139)",
    ),
    (
        "bundles:schema.properties.status.properties.unverified",
        "crossings whose verification said no (DECISION 139)",
    ),
    (
        "gates:schema.properties.spec.properties.targets",
        "fan-out: the places a Gate spans, listed or chosen by label (DECISION 151), a cluster's kubeconfig under the key its clusterRef names (DECISION 154)",
    ),
    (
        "gates:schema.properties.spec.properties.rollout",
        "fan-out: the waves a crossing reaches its targets in, with budgets (DECISION 151)",
    ),
    (
        "passages:schema.properties.status.properties.steps.items.properties.log",
        "a step's log: what it said over its attempts (DECISION 170)",
    ),
    (
        "passages:schema.properties.status.properties.rollout",
        "fan-out: each target's crossing and the rollout's phase (DECISION 151)",
    ),
    (
        "passages:schema.properties.spec.properties.rollout",
        "fan-out: retries and acceptances asked of a halted rollout, each in its asker's name (DECISION 157)",
    ),
    (
        "passages:schema.properties.spec.properties.targets",
        "fan-out: a crossing of some of a Gate's targets, a rollback or a catch-up (DECISION 163)",
    ),
];

/// Bounds the reference lacks and we add (`crate::limits`, docs/DECISIONS.md 98; on
/// what a Bundle records of the outside world, 145), as
/// (`<plural>:<json path of the keyword>`, why). Each is tolerated only as a keyword
/// present in ours alone, and each must be there: any other bound still differs.
const ADDED_BOUNDS: &[(&str, &str)] = &[
    (
        "gates:schema.properties.spec.properties.passage.properties.steps.maxItems",
        "a step list the controller can always record",
    ),
    (
        "gates:schema.properties.spec.properties.passage.properties.steps.items.properties.if.maxLength",
        "a condition the controller can always parse",
    ),
    (
        "gates:schema.properties.spec.properties.verify.maxItems",
        "a verify list the controller can always record",
    ),
    (
        "passages:schema.properties.spec.properties.steps.maxItems",
        "a Passage holds its Gate's steps",
    ),
    (
        "passages:schema.properties.spec.properties.steps.items.properties.if.maxLength",
        "a Passage holds its Gate's steps",
    ),
    (
        "bundles:schema.properties.spec.properties.alias.maxLength",
        "a Bundle's alias, as long as an object's name (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.image.properties.repo.maxLength",
        "a repository name a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.image.properties.tag.maxLength",
        "a tag a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.chart.properties.repo.maxLength",
        "a repository name a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.chart.properties.name.maxLength",
        "a chart name a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.chart.properties.version.maxLength",
        "a chart version a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.repo.maxLength",
        "a repository URL a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.branch.maxLength",
        "a branch name a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.tag.maxLength",
        "a tag a Bundle records (DECISION 145)",
    ),
    (
        "bundles:schema.properties.spec.properties.artifacts.items.properties.commit.properties.message.maxLength",
        "a commit subject, as the Beacon cuts it a Bundle records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.image.properties.repo.maxLength",
        "a repository name a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.image.properties.tag.maxLength",
        "a tag a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.chart.properties.repo.maxLength",
        "a repository name a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.chart.properties.name.maxLength",
        "a chart name a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.chart.properties.version.maxLength",
        "a chart version a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.repo.maxLength",
        "a repository URL a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.branch.maxLength",
        "a branch name a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.tag.maxLength",
        "a tag a Beacon's status records (DECISION 145)",
    ),
    (
        "beacons:schema.properties.status.properties.discovered.items.properties.commit.properties.message.maxLength",
        "a commit subject, as the Beacon cuts it a Beacon's status records (DECISION 145)",
    ),
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The reference CRDs, kept in the repository in `compat/crds` (their schemas;
/// DECISIONS 126); `HECATE_COMPAT_CRDS` points elsewhere.
fn reference_dir() -> PathBuf {
    std::env::var_os("HECATE_COMPAT_CRDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("compat/crds"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Whether `value` holds a schema description (a text under `description`) anywhere.
fn holds_a_description(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, value)| {
            (key == "description" && value.is_string()) || holds_a_description(value)
        }),
        Value::Array(items) => items.iter().any(holds_a_description),
        _ => false,
    }
}

#[test]
fn the_kept_reference_crds_are_schemas_without_prose() {
    let dir = repo_root().join("compat/crds");
    for crd in shared_with_the_reference() {
        let path = dir.join(file_name(&crd));
        let reference: Value = serde_yaml_ng::from_str(&read(&path)).unwrap();
        assert_eq!(
            reference["kind"],
            "CustomResourceDefinition",
            "{}",
            path.display()
        );
        assert!(
            !holds_a_description(&reference),
            "{} holds the reference's descriptions: refresh it with `cargo xtask reference-crds`",
            path.display()
        );
    }
}

#[test]
fn checked_in_crds_are_what_the_code_generates() {
    // The Helm chart's, and deploy/'s copy of them.
    for dir in ["charts/hecate/files/crds", "deploy/crds"] {
        for crd in all() {
            let path = repo_root().join(dir).join(file_name(&crd));
            let generated = to_yaml(&crd).unwrap();
            assert!(
                read(&path) == generated,
                "{} is stale: run `cargo xtask crds` and commit the result",
                path.display()
            );
        }
    }
}

#[test]
fn crds_are_wire_compatible_with_the_reference() {
    let mut differences = Vec::new();
    for crd in shared_with_the_reference() {
        let path = reference_dir().join(file_name(&crd));
        let reference: Value = serde_yaml_ng::from_str(&read(&path)).unwrap();
        let ours = serde_json::to_value(&crd).unwrap();
        let plural = &crd.spec.names.plural;
        diff(
            plural,
            "metadata.name",
            &ours["metadata"]["name"],
            &reference["metadata"]["name"],
            &mut differences,
        );
        for key in ["group", "names", "scope"] {
            diff(
                plural,
                key,
                &ours["spec"][key],
                &reference["spec"][key],
                &mut differences,
            );
        }
        let ours_versions = ours["spec"]["versions"].as_array().unwrap();
        let reference_versions = reference["spec"]["versions"].as_array().unwrap();
        assert_eq!(
            ours_versions.len(),
            reference_versions.len(),
            "{plural}: number of versions"
        );
        for (o, r) in ours_versions.iter().zip(reference_versions) {
            for key in [
                "name",
                "served",
                "storage",
                "subresources",
                "additionalPrinterColumns",
            ] {
                diff(
                    plural,
                    key,
                    &normalise(&o[key]),
                    &normalise(&r[key]),
                    &mut differences,
                );
            }
            diff(
                plural,
                "schema",
                &normalise(&o["schema"]["openAPIV3Schema"]),
                &normalise(&r["schema"]["openAPIV3Schema"]),
                &mut differences,
            );
        }
    }
    for (bound, _) in ADDED_BOUNDS {
        let added = format!("{bound} only in ours");
        assert!(
            differences.contains(&added),
            "{bound} is listed as added, and is not: remove it from ADDED_BOUNDS"
        );
    }
    differences.retain(|d| !tolerated(d));
    assert!(
        differences.is_empty(),
        "schema differences from the reference:\n{}",
        differences.join("\n")
    );
}

/// Whether a difference is one made on purpose: a deliberate difference at its path, or
/// exactly an added bound.
fn tolerated(difference: &str) -> bool {
    DELIBERATE_DIFFERENCES
        .iter()
        .any(|(path, _)| difference.starts_with(&format!("{path} ")))
        || ADDED_BOUNDS
            .iter()
            .any(|(bound, _)| difference == format!("{bound} only in ours"))
}

#[test]
fn only_the_listed_bounds_are_tolerated() {
    let verify = "gates:schema.properties.spec.properties.verify";
    assert!(tolerated(&format!("{verify}.maxItems only in ours")));
    for untold in [
        // The bound changed, or the reference has one too.
        format!("{verify}.maxItems ours=100 reference=10"),
        format!("{verify}.maxItems only in the reference"),
        // Another keyword at the same place, the same keyword at another.
        format!("{verify}.minItems only in ours"),
        "gates:schema.properties.spec.properties.admits.maxItems only in ours".to_string(),
        format!("{verify}.items.properties.uses.maxLength only in ours"),
    ] {
        assert!(!tolerated(&untold), "{untold}");
    }
}

#[test]
fn the_comparison_notices_a_difference() {
    // The compatibility check must be able to fail: a renamed field, a lost enum value
    // and a lost `required` all show up, while descriptions and nullability do not.
    let reference = json!({"properties": {"a": {"type": "string", "enum": ["X", "Y"], "description": "theirs"}}, "required": ["a"]});
    let ours = json!({"properties": {"b": {"type": "string", "enum": ["X"], "nullable": true, "description": "ours"}}});
    let mut differences = Vec::new();
    diff(
        "things",
        "schema",
        &normalise(&ours),
        &normalise(&reference),
        &mut differences,
    );
    assert_eq!(
        differences,
        [
            "things:schema.properties.a only in the reference",
            "things:schema.properties.b only in ours",
            "things:schema.required only in the reference",
        ]
    );
    let mut none = Vec::new();
    diff(
        "things",
        "schema",
        &normalise(&json!({"minimum": 0.0, "nullable": true})),
        &normalise(&json!({"minimum": 0})),
        &mut none,
    );
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn schema_summary() {
    // One line per property: its path, type and constraints. Reviewing a change to the
    // API is reading a diff of this.
    let mut lines = Vec::new();
    for crd in all() {
        let version = &crd.spec.versions[0];
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        lines.push(format!(
            "# {} ({})",
            crd.spec.names.kind,
            crd.spec.names.short_names.as_ref().unwrap().join(",")
        ));
        summarise(
            &crd.spec.names.kind.to_lowercase(),
            &schema,
            false,
            &mut lines,
        );
    }
    insta::assert_snapshot!(lines.join("\n"));
}

/// Drops what may differ without changing the wire format: descriptions (ours are
/// our own words), `nullable` (kube-derive marks every `Option`; we never send null),
/// and integer-vs-float spelling of numbers.
fn normalise(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| {
                    *k != "description" && !(*k == "nullable" && **v == Value::Bool(true))
                })
                .map(|(k, v)| (k.clone(), normalise(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        Value::Number(n) => n.as_f64().map_or(value.clone(), |f| json!(f)),
        other => other.clone(),
    }
}

fn diff(plural: &str, path: &str, ours: &Value, reference: &Value, out: &mut Vec<String>) {
    match (ours, reference) {
        (Value::Object(o), Value::Object(r)) => {
            let mut keys: Vec<&String> = o.keys().chain(r.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child = format!("{path}.{key}");
                match (o.get(key), r.get(key)) {
                    (Some(a), Some(b)) => diff(plural, &child, a, b, out),
                    (Some(_), None) => out.push(format!("{plural}:{child} only in ours")),
                    (None, Some(_)) => out.push(format!("{plural}:{child} only in the reference")),
                    (None, None) => unreachable!(),
                }
            }
        }
        _ if ours == reference => {}
        _ => out.push(format!("{plural}:{path} ours={ours} reference={reference}")),
    }
}

fn summarise(path: &str, schema: &Value, required: bool, lines: &mut Vec<String>) {
    let mut facts = Vec::new();
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        facts.push(t.to_string());
    }
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        facts.push("any".into());
    }
    if required {
        facts.push("required".into());
    }
    for key in [
        "format",
        "enum",
        "default",
        "pattern",
        "minimum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
    ] {
        if let Some(v) = schema.get(key) {
            facts.push(format!("{key}={v}"));
        }
    }
    lines.push(format!("{path}: {}", facts.join(" ")));
    let required_children: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            summarise(
                &format!("{path}.{name}"),
                child,
                required_children.contains(&name.as_str()),
                lines,
            );
        }
    }
    if let Some(items) = schema.get("items") {
        summarise(&format!("{path}[]"), items, false, lines);
    }
}
