//! `cargo xtask crds`: writes the generated CRDs to `deploy/crds/`.

use std::path::Path;

use anyhow::Context as _;

/// Writes one file per CRD and prints what changed.
pub(crate) fn write(root: &Path) -> anyhow::Result<()> {
    let dir = root.join("deploy/crds");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for crd in hecate_types::crd::all() {
        let path = dir.join(hecate_types::crd::file_name(&crd));
        let yaml = hecate_types::crd::to_yaml(&crd)?;
        let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| old == yaml);
        if !unchanged {
            std::fs::write(&path, yaml).with_context(|| format!("writing {}", path.display()))?;
        }
        let state = if unchanged { "unchanged" } else { "written" };
        println!(
            "{state:>9}  {}",
            path.strip_prefix(root).unwrap_or(&path).display()
        );
    }
    Ok(())
}
