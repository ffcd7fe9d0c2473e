//! `edit-yaml` and `set-image` (spec §5.8, §5.9): the steps that change values in a
//! file of the checkout without reformatting it.
//!
//! Both are one read, a pure edit in [`surgery`], and at most one write: the file is
//! written only when its bytes change, so re-running a step that already did its work
//! finds the values in place and answers `changed: false` without touching the file
//! (and a later `git-commit` finds a clean tree). Every failure here is terminal: a
//! missing key or an unreadable file does not heal by waiting.

mod edit;
mod image;
pub mod surgery;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

pub use edit::EditYaml;
pub use image::SetImage;

use super::runner::{StepContext, StepError};
use crate::reason::Reason;
use surgery::Refusal;

/// `relative` resolved inside the work directory, symbolic links followed: a link
/// that leads out of the work directory is refused like `../`.
async fn resolve(ctx: &StepContext<'_>, relative: &str) -> Result<PathBuf, StepError> {
    let path = ctx.in_work_dir(relative)?;
    let real = match tokio::fs::canonicalize(&path).await {
        Ok(real) => real,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(StepError::terminal(
                Reason::FileNotFound,
                format!("{relative} does not exist in the work directory"),
            ));
        }
        Err(e) => {
            return Err(StepError::terminal(
                Reason::EditFailed,
                format!("cannot open {relative}: {e}"),
            ));
        }
    };
    let root = tokio::fs::canonicalize(ctx.work_dir).await.map_err(|e| {
        StepError::terminal(
            Reason::EditFailed,
            format!("cannot open the work directory: {e}"),
        )
    })?;
    if !real.starts_with(&root) {
        return Err(StepError::config(format!(
            "path {relative:?} leads out of the work directory through a symbolic link"
        )));
    }
    Ok(real)
}

/// The text of the file at `real` (shown as `relative`).
async fn read(real: &Path, relative: &str) -> Result<String, StepError> {
    let bytes = tokio::fs::read(real).await.map_err(|e| {
        StepError::terminal(Reason::EditFailed, format!("cannot read {relative}: {e}"))
    })?;
    String::from_utf8(bytes).map_err(|_| {
        StepError::terminal(Reason::EditFailed, format!("{relative} is not UTF-8 text"))
    })
}

/// Replaces the file at `real` with `text`, keeping its permissions. The text goes to
/// a sibling first and is renamed over the file, so a crash leaves the old file or
/// the new one, never half of each.
async fn write(real: &Path, relative: &str, text: &str) -> Result<(), StepError> {
    let failed = |e: std::io::Error| {
        StepError::terminal(Reason::EditFailed, format!("cannot write {relative}: {e}"))
    };
    let permissions = tokio::fs::metadata(real)
        .await
        .map_err(failed)?
        .permissions();
    let name = real
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sibling = real.with_file_name(format!(".{name}.hecate-edit"));
    let written = async {
        tokio::fs::write(&sibling, text).await?;
        tokio::fs::set_permissions(&sibling, permissions).await?;
        tokio::fs::rename(&sibling, real).await
    }
    .await;
    if let Err(e) = written {
        // Best effort: the sibling is scratch, and the step fails either way.
        let _ = tokio::fs::remove_file(&sibling).await;
        return Err(failed(e));
    }
    Ok(())
}

/// A refusal from the surgery as the step's failure, naming the file.
fn refused(relative: &str, refusal: Refusal) -> StepError {
    StepError::terminal(refusal.reason, format!("{relative}: {}", refusal.message))
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A work directory in a temporary folder and a [`StepContext`] over it.

    use std::collections::BTreeMap;
    use std::path::Path;

    use hecate_types::{Artifact, Bundle, BundleSpec};
    use jiff::Timestamp;
    use serde_json::Value;

    use crate::runner::{Runner, StepContext, StepError, StepResult};

    /// A scratch work directory and the Bundle a step sees.
    pub(crate) struct Work {
        pub(crate) dir: tempfile::TempDir,
        pub(crate) bundle: Bundle,
        outputs: BTreeMap<String, Value>,
    }

    impl Work {
        pub(crate) fn new(artifacts: Vec<Artifact>) -> Self {
            Self {
                dir: tempfile::tempdir().expect("a temporary directory"),
                bundle: Bundle::new(
                    "app-0123456789ab",
                    BundleSpec {
                        beacon: "app".into(),
                        artifacts,
                        ..BundleSpec::default()
                    },
                ),
                outputs: BTreeMap::new(),
            }
        }

        pub(crate) fn path(&self) -> &Path {
            self.dir.path()
        }

        pub(crate) fn write(&self, relative: &str, text: &str) {
            let path = self.path().join(relative);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }

        pub(crate) fn read(&self, relative: &str) -> String {
            std::fs::read_to_string(self.path().join(relative)).expect("read")
        }

        pub(crate) fn ctx(&self, config: Value) -> StepContext<'_> {
            StepContext {
                namespace: "demo",
                gate: "dev",
                passage: "dev-app-0123456789ab",
                bundle: &self.bundle,
                actor: "controller",
                work_dir: self.path(),
                config,
                outputs: &self.outputs,
                attempt: 0,
                failed: false,
                traceparent: "",
                started_at: Timestamp::UNIX_EPOCH,
            }
        }

        pub(crate) async fn run(
            &self,
            runner: &dyn Runner,
            config: Value,
        ) -> Result<StepResult, StepError> {
            let ctx = self.ctx(config);
            runner.run(&ctx).await
        }
    }
}
