//! `cargo xtask manifests`: writes `deploy/` from the Helm chart — the chart rendered
//! by the real `helm` with its default values, split by component, and its CRDs
//! (`hecate_testenv::chart` says how; a test there fails while `deploy/` is stale).

use std::path::Path;

use anyhow::Context as _;
use hecate_testenv::{Tool, chart};

/// Writes every file of `deploy/`, removes the ones the chart no longer makes, and
/// prints what changed.
pub(crate) fn write(root: &Path) -> anyhow::Result<()> {
    let helm = Tool::Helm.locate_or_build()?;
    let files = chart::deploy_files(&helm)?;
    for (relative, text) in &files {
        crate::crds::write_if_changed(root, &root.join(relative), text)?;
    }
    for found in chart::files_in_deploy()? {
        if files.iter().all(|(relative, _)| *relative != found) {
            let path = root.join(&found);
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            println!("{:>9}  {}", "removed", found.display());
        }
    }
    Ok(())
}
