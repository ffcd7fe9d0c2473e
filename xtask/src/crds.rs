//! `cargo xtask crds`: writes the generated CRDs into the Helm chart
//! (`charts/hecate/crds/`) and the plain manifests made from it (`deploy/crds/`).

use std::path::Path;

use anyhow::Context as _;

/// Where the CRDs go: the chart's, and `deploy/`'s copy of them (which
/// `cargo xtask manifests` would also make).
const DIRS: [&str; 2] = ["charts/hecate/crds", "deploy/crds"];

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
