//! `cargo xtask check-layers`: the dependency rules of `docs/ARCHITECTURE.md`, checked
//! against `cargo metadata` and, for the one rule that is about code, the sources.
//!
//! - `hecate-expr` (the expression language) depends on no hecate crate and names
//!   nothing that does I/O;
//! - `hecate-types` depends on `hecate-expr` only (its bound on an expression's
//!   length is the language's), `hecate-fides` on no hecate crate;
//! - `hecate-rules` (the rules and their answers, pure) depends on expr, types and
//!   fides only, names nothing that does I/O — kube for its derive only, Fides without its
//!   `client` feature — and its sources spawn, sleep, read no clock and touch no file
//!   or socket;
//! - `hecate-ops` depends on rules, types and fides only;
//! - `hecate-access` (who a caller is, what they may do, reaching the cluster) depends on
//!   ops and types only, and nothing below a surface depends on it;
//! - `hecate-sources` (git, registries, outbound trust, Secrets: what steps and Beacons
//!   use to reach sources) depends on types at most — never on the controller, on ops or
//!   on a surface;
//! - `hecate-steps` (the step contract, the engine, the built-in steps, the Flux client
//!   and health checkers) depends on expr, types, fides, ops and sources — never on the
//!   controller, on a surface or on `hecate-access`;
//! - `hecate-controller` depends on those and on steps — never on a surface or on
//!   `hecate-access`;
//! - the surfaces (`hecate-cli`, `hecate-api`, `hecate-mcp`) depend on ops, types and
//!   access, never on each other or on fides;
//! - every `hecate-*` crate has a rule here: one this check does not know fails it;
//! - `hecate-fides` and `hecate-types` do no Kubernetes I/O (fides names no kube at all;
//!   types takes kube for the derive only);
//! - only `hecate-mcp` names rmcp;
//! - libraries never choose a k8s-openapi version feature (binaries and test code do);
//! - no surface (nor `hecate-access`) builds an `Api<Gate|Bundle|Passage|Beacon>`: only
//!   ops touches those.

use std::path::Path;

use serde_json::Value;

const LIBRARIES: [&str; 8] = [
    "hecate-expr",
    "hecate-types",
    "hecate-fides",
    "hecate-rules",
    "hecate-ops",
    "hecate-access",
    "hecate-sources",
    "hecate-steps",
];
/// Crates that do I/O (or bring a runtime for it), which `hecate-expr` and
/// `hecate-rules` must not name.
const DOES_IO: [&str; 7] = [
    "kube",
    "k8s-openapi",
    "tokio",
    "reqwest",
    "hyper",
    "nix",
    "git2",
];
/// Crates whose sources must not build an `Api` over a Hecate kind.
const NOT_OPS: [&str; 4] = ["hecate-cli", "hecate-api", "hecate-mcp", "hecate-access"];
const KINDS: [&str; 4] = ["Gate", "Bundle", "Passage", "Beacon"];

/// What a crate may depend on among the hecate crates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    /// Product code: these hecate crates only (normal and build edges).
    Product(&'static [&'static str]),
    /// Not product code (the test environment): unchecked.
    Support,
}

/// The layer of each crate this check knows; `None` for a `hecate-*` crate it does
/// not (which fails the check: a new crate must be given its layer here).
fn layer(package: &str) -> Option<Layer> {
    match package {
        "hecate-expr" | "hecate-fides" => Some(Layer::Product(&[])),
        "hecate-types" => Some(Layer::Product(&["hecate-expr"])),
        "hecate-rules" => Some(Layer::Product(&[
            "hecate-expr",
            "hecate-types",
            "hecate-fides",
        ])),
        "hecate-ops" => Some(Layer::Product(&[
            "hecate-rules",
            "hecate-types",
            "hecate-fides",
        ])),
        "hecate-access" => Some(Layer::Product(&["hecate-ops", "hecate-types"])),
        "hecate-sources" => Some(Layer::Product(&["hecate-types"])),
        "hecate-steps" => Some(Layer::Product(&[
            "hecate-expr",
            "hecate-types",
            "hecate-fides",
            "hecate-rules",
            "hecate-ops",
            "hecate-sources",
        ])),
        "hecate-controller" => Some(Layer::Product(&[
            "hecate-expr",
            "hecate-types",
            "hecate-fides",
            "hecate-rules",
            "hecate-ops",
            "hecate-sources",
            "hecate-steps",
        ])),
        "hecate-cli" | "hecate-api" | "hecate-mcp" => Some(Layer::Product(&[
            "hecate-ops",
            "hecate-types",
            "hecate-access",
        ])),
        "hecate-testenv" => Some(Layer::Support),
        _ => None,
    }
}

/// Every rule broken by the workspace described by `metadata` (the output of
/// `cargo metadata --format-version 1 --no-deps`), one line each, naming the edge.
pub(crate) fn check_metadata(metadata: &Value) -> Vec<String> {
    let mut violations = Vec::new();
    let packages = metadata["packages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let allowed: &[&str] = match layer(name) {
            Some(Layer::Product(allowed)) => allowed,
            Some(Layer::Support) => continue,
            None if name.starts_with("hecate-") => {
                violations.push(format!(
                    "{name}: check-layers does not know this crate; give it a layer in xtask/src/layers.rs"
                ));
                continue;
            }
            None => continue, // xtask is not product code
        };
        let deps = package["dependencies"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for dep in deps {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let is_dev = dep["kind"].as_str() == Some("dev");
            let features: Vec<&str> = dep["features"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !is_dev && dep_name.starts_with("hecate-") && !allowed.contains(&dep_name) {
                violations.push(format!(
                    "{name} -> {dep_name}: {name} may depend only on {allowed:?}"
                ));
            }
            if dep_name == "rmcp" && name != "hecate-mcp" {
                violations.push(format!("{name} -> rmcp: only hecate-mcp may name rmcp"));
            }
            if !is_dev
                && name == "hecate-fides"
                && (dep_name == "kube" || dep_name == "k8s-openapi")
            {
                violations.push(format!(
                    "{name} -> {dep_name}: hecate-fides knows nothing of Kubernetes"
                ));
            }
            if !is_dev && name == "hecate-expr" && DOES_IO.contains(&dep_name) {
                violations.push(format!(
                    "{name} -> {dep_name}: hecate-expr does no I/O; it is data in, data out"
                ));
            }
            // kube (derive only, below) and k8s-openapi are its object types.
            let io_beyond_types =
                DOES_IO.contains(&dep_name) && dep_name != "kube" && dep_name != "k8s-openapi";
            if !is_dev && name == "hecate-rules" && io_beyond_types {
                violations.push(format!(
                    "{name} -> {dep_name}: hecate-rules does no I/O; hecate-ops fetches, the rules judge"
                ));
            }
            if !is_dev
                && (name == "hecate-types" || name == "hecate-rules")
                && dep_name == "kube"
                && let Some(extra) = features.iter().find(|f| **f != "derive")
            {
                violations.push(format!(
                    "{name} -> kube[{extra}]: {name} does no I/O; derive only"
                ));
            }
            if !is_dev
                && name == "hecate-rules"
                && dep_name == "hecate-fides"
                && (dep["uses_default_features"].as_bool() != Some(false)
                    || features.contains(&"client"))
            {
                violations.push(format!(
                    "{name} -> hecate-fides[client]: hecate-rules takes Fides' data, never its client"
                ));
            }
            if !is_dev
                && LIBRARIES.contains(&name)
                && dep_name == "k8s-openapi"
                && let Some(version) = features.iter().find(|f| is_version_feature(f))
            {
                violations.push(format!(
                    "{name} -> k8s-openapi[{version}]: a library must not choose the Kubernetes version; the binaries do"
                ));
            }
        }
    }
    violations
}

fn is_version_feature(feature: &str) -> bool {
    feature.starts_with("v1_") || feature == "earliest" || feature == "latest"
}

/// Every place a surface's source builds a kube `Api` over a Hecate kind.
pub(crate) fn check_sources(root: &Path) -> std::io::Result<Vec<String>> {
    let mut violations = Vec::new();
    for surface in NOT_OPS {
        for file in rust_files(&root.join("crates").join(surface).join("src"))? {
            let text = std::fs::read_to_string(&file)?;
            for (number, line) in text.lines().enumerate() {
                if let Some(kind) = KINDS.iter().find(|k| builds_api_over(line, k)) {
                    violations.push(format!(
                        "{}:{}: {surface} builds an Api<{kind}>; call hecate-ops instead",
                        file.strip_prefix(root).unwrap_or(&file).display(),
                        number + 1
                    ));
                }
            }
        }
    }
    Ok(violations)
}

/// What pure code never names: a clock, a file, a socket, a process, a thread, the
/// environment or an async runtime. `now` is always passed in.
const IMPURE: [&str; 10] = [
    "Timestamp::now",
    "SystemTime::now",
    "Instant::now",
    "std::fs",
    "std::net",
    "std::process",
    "std::thread",
    "std::env",
    "tokio::",
    "reqwest::",
];

/// Every line of `hecate-rules`' sources (comments aside) that names I/O.
pub(crate) fn check_pure_sources(root: &Path) -> std::io::Result<Vec<String>> {
    let mut violations = Vec::new();
    for file in rust_files(&root.join("crates/hecate-rules/src"))? {
        let text = std::fs::read_to_string(&file)?;
        for (number, line) in text.lines().enumerate() {
            if let Some(name) = impure(line) {
                violations.push(format!(
                    "{}:{}: hecate-rules is pure, yet names {name}; take it as an argument",
                    file.strip_prefix(root).unwrap_or(&file).display(),
                    number + 1
                ));
            }
        }
    }
    Ok(violations)
}

fn impure(line: &str) -> Option<&'static str> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return None;
    }
    IMPURE.iter().copied().find(|name| code.contains(name))
}

fn builds_api_over(line: &str, kind: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    [format!("Api<{kind}>"), format!("Api::<{kind}>")]
        .iter()
        .any(|pattern| compact.contains(pattern.as_str()))
}

fn rust_files(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    if !dir.exists() {
        return Ok(files);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn package(name: &str, deps: Value) -> Value {
        json!({ "name": name, "dependencies": deps })
    }

    fn dep(name: &str, kind: Option<&str>, features: &[&str]) -> Value {
        json!({ "name": name, "kind": kind, "features": features })
    }

    #[test]
    fn the_workspace_keeps_its_layers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let output = std::process::Command::new(env!("CARGO"))
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(check_metadata(&metadata), Vec::<String>::new());
        assert_eq!(check_sources(&root).unwrap(), Vec::<String>::new());
        assert_eq!(check_pure_sources(&root).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn pure_code_naming_io_is_caught() {
        assert_eq!(
            impure("    let now = jiff::Timestamp::now();"),
            Some("Timestamp::now")
        );
        assert_eq!(impure("tokio::time::sleep(d).await;"), Some("tokio::"));
        assert_eq!(
            impure("    // never Timestamp::now: now is passed in"),
            None
        );
        assert_eq!(
            impure("pub fn explain(snapshot: &Snapshot, now: Timestamp)"),
            None
        );
    }

    #[test]
    fn every_wrong_edge_is_named() {
        let metadata = json!({ "packages": [
            package("hecate-types", json!([dep("hecate-ops", None, &[]), dep("kube", None, &["derive", "client"])])),
            package("hecate-fides", json!([dep("kube", None, &[])])),
            package("hecate-ops", json!([dep("hecate-cli", None, &[]), dep("k8s-openapi", None, &["v1_33"])])),
            package("hecate-cli", json!([dep("hecate-api", None, &[]), dep("rmcp", None, &[]), dep("k8s-openapi", None, &["v1_33"]), dep("hecate-access", None, &[])])),
            package("hecate-mcp", json!([dep("rmcp", None, &[]), dep("hecate-ops", None, &[])])),
            package("hecate-api", json!([dep("hecate-mcp", Some("dev"), &[]), dep("k8s-openapi", Some("dev"), &["v1_33"])])),
            package("xtask", json!([dep("hecate-cli", None, &[])])),
            package("hecate-access", json!([dep("hecate-ops", None, &[]), dep("hecate-types", None, &[]), dep("hecate-fides", None, &[]), dep("hecate-cli", None, &[]), dep("k8s-openapi", None, &["v1_33"])])),
            package("hecate-ops", json!([dep("hecate-access", None, &[])])),
            package("hecate-api", json!([dep("hecate-access", None, &[])])),
            package("hecate-controller", json!([dep("hecate-ops", None, &[]), dep("hecate-fides", None, &[]), dep("hecate-types", None, &[]), dep("hecate-access", None, &[]), dep("hecate-api", None, &[])])),
            package("hecate-testenv", json!([dep("hecate-cli", None, &[])])),
            package("hecate-expr", json!([dep("hecate-types", None, &[]), dep("tokio", None, &[]), dep("kube", Some("dev"), &[])])),
            package("hecate-sources", json!([dep("hecate-types", None, &[]), dep("kube", None, &["client"]), dep("hecate-controller", None, &[]), dep("hecate-ops", None, &[]), dep("hecate-api", None, &[]), dep("k8s-openapi", None, &["v1_33"]), dep("hecate-controller", Some("dev"), &[])])),
            package("hecate-controller", json!([dep("hecate-sources", None, &[]), dep("hecate-expr", None, &[])])),
            package("hecate-steps", json!([dep("hecate-sources", None, &[]), dep("hecate-controller", None, &[]), dep("hecate-controller", Some("dev"), &[])])),
            package("hecate-rules", json!([dep("hecate-ops", None, &[]), dep("kube", None, &["derive", "client"]), dep("tokio", None, &[]), json!({ "name": "hecate-fides", "kind": null, "features": [], "uses_default_features": true }), dep("k8s-openapi", Some("dev"), &["v1_33"])])),
            package("hecate-newcomer", json!([])),
        ]});
        assert_eq!(
            check_metadata(&metadata),
            [
                r#"hecate-types -> hecate-ops: hecate-types may depend only on ["hecate-expr"]"#,
                "hecate-types -> kube[client]: hecate-types does no I/O; derive only",
                "hecate-fides -> kube: hecate-fides knows nothing of Kubernetes",
                r#"hecate-ops -> hecate-cli: hecate-ops may depend only on ["hecate-rules", "hecate-types", "hecate-fides"]"#,
                "hecate-ops -> k8s-openapi[v1_33]: a library must not choose the Kubernetes version; the binaries do",
                r#"hecate-cli -> hecate-api: hecate-cli may depend only on ["hecate-ops", "hecate-types", "hecate-access"]"#,
                "hecate-cli -> rmcp: only hecate-mcp may name rmcp",
                r#"hecate-access -> hecate-fides: hecate-access may depend only on ["hecate-ops", "hecate-types"]"#,
                r#"hecate-access -> hecate-cli: hecate-access may depend only on ["hecate-ops", "hecate-types"]"#,
                "hecate-access -> k8s-openapi[v1_33]: a library must not choose the Kubernetes version; the binaries do",
                r#"hecate-ops -> hecate-access: hecate-ops may depend only on ["hecate-rules", "hecate-types", "hecate-fides"]"#,
                r#"hecate-controller -> hecate-access: hecate-controller may depend only on ["hecate-expr", "hecate-types", "hecate-fides", "hecate-rules", "hecate-ops", "hecate-sources", "hecate-steps"]"#,
                r#"hecate-controller -> hecate-api: hecate-controller may depend only on ["hecate-expr", "hecate-types", "hecate-fides", "hecate-rules", "hecate-ops", "hecate-sources", "hecate-steps"]"#,
                r#"hecate-expr -> hecate-types: hecate-expr may depend only on []"#,
                "hecate-expr -> tokio: hecate-expr does no I/O; it is data in, data out",
                r#"hecate-sources -> hecate-controller: hecate-sources may depend only on ["hecate-types"]"#,
                r#"hecate-sources -> hecate-ops: hecate-sources may depend only on ["hecate-types"]"#,
                r#"hecate-sources -> hecate-api: hecate-sources may depend only on ["hecate-types"]"#,
                "hecate-sources -> k8s-openapi[v1_33]: a library must not choose the Kubernetes version; the binaries do",
                r#"hecate-steps -> hecate-controller: hecate-steps may depend only on ["hecate-expr", "hecate-types", "hecate-fides", "hecate-rules", "hecate-ops", "hecate-sources"]"#,
                r#"hecate-rules -> hecate-ops: hecate-rules may depend only on ["hecate-expr", "hecate-types", "hecate-fides"]"#,
                "hecate-rules -> kube[client]: hecate-rules does no I/O; derive only",
                "hecate-rules -> tokio: hecate-rules does no I/O; hecate-ops fetches, the rules judge",
                "hecate-rules -> hecate-fides[client]: hecate-rules takes Fides' data, never its client",
                "hecate-newcomer: check-layers does not know this crate; give it a layer in xtask/src/layers.rs",
            ]
        );
    }

    #[test]
    fn a_surface_building_an_api_over_a_kind_is_caught() {
        assert!(builds_api_over(
            "let gates: Api<Gate> = Api::namespaced(client, ns);",
            "Gate"
        ));
        assert!(builds_api_over(
            "let p = Api::< Passage >::all(client);",
            "Passage"
        ));
        assert!(!builds_api_over(
            "let gates = ops.gates(ns).await?;",
            "Gate"
        ));
        assert!(!builds_api_over("let cm: Api<ConfigMap> = todo;", "Gate"));
    }
}
