//! `cargo xtask crds`: writes the generated CRDs into the Helm chart
//! (`charts/hecate/files/crds/`) and the plain manifests made from it (`deploy/crds/`).
//!
//! `cargo xtask reference-crds`: refreshes `compat/crds/`, the reference
//! implementation's CRDs the compatibility tests compare ours with, from a copy of
//! them — their schemas only (docs/DECISIONS.md 126).

use std::path::Path;

use anyhow::Context as _;

/// Where the CRDs go: the chart's, and `deploy/`'s copy of them (which
/// `cargo xtask manifests` would also make).
const DIRS: [&str; 2] = ["charts/hecate/files/crds", "deploy/crds"];

/// Writes one file per CRD into each of [`DIRS`] and prints what changed.
pub(crate) fn write(root: &Path) -> anyhow::Result<()> {
    for dir in DIRS {
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for crd in hecate_types::crd::all() {
            let path = dir.join(hecate_types::crd::file_name(&crd));
            write_if_changed(root, &path, &hecate_types::crd::to_yaml(&crd)?)?;
        }
    }
    Ok(())
}

/// Writes `text` to `path` unless it is there already, and says which it was.
pub(crate) fn write_if_changed(root: &Path, path: &Path, text: &str) -> anyhow::Result<()> {
    let unchanged = std::fs::read_to_string(path).is_ok_and(|old| old == text);
    if !unchanged {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let state = if unchanged { "unchanged" } else { "written" };
    println!(
        "{state:>9}  {}",
        path.strip_prefix(root).unwrap_or(path).display()
    );
    Ok(())
}

/// Where the reference's CRDs are kept, in the repository.
const REFERENCE_DIR: &str = "compat/crds";

/// What each file kept in [`REFERENCE_DIR`] starts with.
const REFERENCE_HEADER: &str = "\
# The Go reference implementation's CRD, its schema only: every description is left out
# (the compatibility tests compare fields, types, enums and what is required, never
# prose). Written by `cargo xtask reference-crds`; compat/README.md says how to refresh.
";

/// Writes into [`REFERENCE_DIR`] each `hecate.dev_*.yaml` CRD of `from` without its
/// descriptions, and says what changed.
pub(crate) fn vendor_reference(root: &Path, from: &Path) -> anyhow::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(from)
        .with_context(|| format!("reading {}", from.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.file_name()))
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.starts_with("hecate.dev_") && name.ends_with(".yaml"))
        .collect();
    names.sort();
    anyhow::ensure!(
        !names.is_empty(),
        "no hecate.dev_*.yaml CRDs in {}",
        from.display()
    );
    for name in names {
        let path = from.join(&name);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut crd: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)
            .with_context(|| format!("parsing {}", path.display()))?;
        strip_descriptions(&mut crd);
        let yaml = serde_yaml_ng::to_string(&crd)?;
        let kept = format!("{REFERENCE_HEADER}{yaml}");
        write_if_changed(root, &root.join(REFERENCE_DIR).join(&name), &kept)?;
    }
    Ok(())
}

/// Removes every schema `description` (a text) from `value`. A property that is
/// *called* `description` holds a schema, not a text, and stays.
fn strip_descriptions(value: &mut serde_yaml_ng::Value) {
    match value {
        serde_yaml_ng::Value::Mapping(map) => {
            map.retain(|key, value| !(key.as_str() == Some("description") && value.is_string()));
            for (_, value) in map.iter_mut() {
                strip_descriptions(value);
            }
        }
        serde_yaml_ng::Value::Sequence(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::strip_descriptions;

    #[test]
    fn descriptions_go_and_a_property_called_description_stays() {
        let mut schema: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            "description: the reference's words\n\
             properties:\n  description:\n    description: theirs\n    type: string\n\
             items:\n- description: more\n  type: integer\n",
        )
        .unwrap();
        strip_descriptions(&mut schema);
        let expected: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            "properties:\n  description:\n    type: string\nitems:\n- type: integer\n",
        )
        .unwrap();
        assert_eq!(schema, expected);
    }
}
