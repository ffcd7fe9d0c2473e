//! `edit-yaml` (spec §5.8): set existing scalars in one YAML or JSON file, all edits
//! or none, touching only the scalars' own text.

use futures::future::BoxFuture;
use serde_json::json;

use super::surgery;
use super::{read, refused, resolve, write};
use crate::Tools;
use crate::config::yaml::parse_key;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The `edit-yaml` step. Outputs `changed` (whether the file was written) and `file`
/// (the configured path).
#[derive(Clone, Copy, Debug, Default)]
pub struct EditYaml;

impl StepKind for EditYaml {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::EditYaml;
    type With = crate::config::yaml::EditYamlConfig;

    fn build(_: &Tools) -> Self {
        Self
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            // Keys are judged again: an interpolated key was only known now.
            let mut changes = Vec::with_capacity(config.edits.len());
            for (i, edit) in config.edits.iter().enumerate() {
                let key = parse_key(&edit.key)
                    .map_err(|why| StepError::config(format!("edits[{i}].key: {why}")))?;
                changes.push((key, edit.value.clone()));
            }

            let file = &config.path;
            let real = resolve(ctx, file).await?;
            let before = read(&real, file).await?;
            let after = surgery::apply(&before, &changes).map_err(|r| refused(file, r))?;
            let changed = after != before;
            if changed {
                write(&real, file, &after).await?;
            }
            let keys = changes
                .iter()
                .map(|(key, _)| surgery::display_key(key))
                .collect::<Vec<_>>()
                .join(", ");
            let message = if changed {
                format!("set {keys} in {file}")
            } else {
                format!("{file} already holds the values for {keys}")
            };
            Ok(StepResult::done(
                message,
                json!({"changed": changed, "file": file}),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::test_support::Work;
    use super::*;
    use crate::reason::Reason;
    use crate::runner::Progress;

    /// The fleet repository's values file of the first milestone (spec §10.1).
    const FLEET_VALUES: &str = "\
# Values for the dev environment. Hecate promotes app.revision.
app:
  name: app
  # The commit of the application repository to deploy.
  revision: 0000000000000000000000000000000000000000   # set by Hecate
  replicas: 1

flux:
  interval: 1m
";

    const SHA: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

    fn scenario_config() -> serde_json::Value {
        json!({
            "path": "repo/values.yaml",
            "edits": [{"key": "app.revision", "value": SHA}],
        })
    }

    #[tokio::test]
    async fn the_first_milestone_edit_changes_only_the_revision() {
        let work = Work::new(Vec::new());
        work.write("repo/values.yaml", FLEET_VALUES);

        let result = work.run(&EditYaml, scenario_config()).await.expect("edits");
        assert_eq!(result.progress, Progress::Succeeded);
        assert_eq!(
            result.output,
            Some(json!({"changed": true, "file": "repo/values.yaml"}))
        );
        assert_eq!(
            work.read("repo/values.yaml"),
            FLEET_VALUES.replace("0000000000000000000000000000000000000000", SHA)
        );

        // Re-running finds the work done and writes nothing.
        let again = work
            .run(&EditYaml, scenario_config())
            .await
            .expect("re-runs");
        assert_eq!(
            again.output,
            Some(json!({"changed": false, "file": "repo/values.yaml"}))
        );
        assert!(again.message.contains("already holds"), "{}", again.message);
    }

    #[tokio::test]
    async fn an_unchanged_file_is_not_rewritten() {
        let work = Work::new(Vec::new());
        work.write("repo/values.yaml", FLEET_VALUES);
        let file = work.path().join("repo/values.yaml");
        let mtime = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .expect("mtime");
        let config = json!({
            "path": "repo/values.yaml",
            "edits": [{"key": "app.replicas", "value": 1}, {"key": "flux.interval", "value": "1m"}],
        });
        let result = work.run(&EditYaml, config).await.expect("runs");
        assert_eq!(
            result.output,
            Some(json!({"changed": false, "file": "repo/values.yaml"}))
        );
        assert_eq!(work.read("repo/values.yaml"), FLEET_VALUES);
        let later = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(mtime, later);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;

        let work = Work::new(Vec::new());
        work.write("repo/values.yaml", FLEET_VALUES);
        let file = work.path().join("repo/values.yaml");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        work.run(&EditYaml, scenario_config()).await.expect("edits");
        let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let leftovers: Vec<_> = std::fs::read_dir(work.path().join("repo"))
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("values.yaml")]);
    }

    #[tokio::test]
    async fn failures_are_terminal_with_their_reason_and_write_nothing() {
        let work = Work::new(Vec::new());
        work.write("repo/values.yaml", FLEET_VALUES);
        work.write("repo/block.yaml", "script: |\n  echo hello\n");
        let cases = [
            (
                json!({"path": "repo/missing.yaml", "edits": [{"key": "a", "value": 1}]}),
                Reason::FileNotFound,
                "repo/missing.yaml",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [
                    {"key": "app.revision", "value": SHA},
                    {"key": "app.image.tag", "value": "1.0"},
                ]}),
                Reason::KeyNotFound,
                "app has no key \"image\"",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [{"key": "app", "value": "x"}]}),
                Reason::EditFailed,
                "a mapping",
            ),
            (
                json!({"path": "repo/block.yaml", "edits": [{"key": "script", "value": "x"}]}),
                Reason::EditFailed,
                "block",
            ),
            (
                json!({"path": "../escape.yaml", "edits": [{"key": "a", "value": 1}]}),
                Reason::InvalidConfig,
                "work directory",
            ),
            (
                json!({"path": "/etc/hosts", "edits": [{"key": "a", "value": 1}]}),
                Reason::InvalidConfig,
                "work directory",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [{"key": "a", "value": 1}], "backup": true}),
                Reason::InvalidConfig,
                "unknown field `backup`",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [{"key": "a", "value": 1, "create": true}]}),
                Reason::InvalidConfig,
                "unknown field `create`",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [{"key": "a..b", "value": 1}]}),
                Reason::InvalidConfig,
                "edits[0].key",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": [{"key": "a", "value": [1]}]}),
                Reason::InvalidConfig,
                "edits[0].value",
            ),
            (
                json!({"path": "repo/values.yaml", "edits": []}),
                Reason::InvalidConfig,
                "edits",
            ),
        ];
        for (config, reason, says) in cases {
            let error = work
                .run(&EditYaml, config.clone())
                .await
                .expect_err("fails");
            assert_eq!(error.reason, reason, "{config}: {error}");
            assert!(error.terminal, "{config}");
            assert!(error.message.contains(says), "{config}: {error}");
        }
        assert_eq!(work.read("repo/values.yaml"), FLEET_VALUES);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symbolic_link_out_of_the_work_directory_is_refused() {
        let outside = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(outside.path().join("values.yaml"), "a: 1\n").expect("write");
        let work = Work::new(Vec::new());
        std::fs::create_dir_all(work.path().join("repo")).expect("mkdir");
        std::os::unix::fs::symlink(
            outside.path().join("values.yaml"),
            work.path().join("repo/values.yaml"),
        )
        .expect("symlink");
        let error = work
            .run(
                &EditYaml,
                json!({"path": "repo/values.yaml", "edits": [{"key": "a", "value": 2}]}),
            )
            .await
            .expect_err("refused");
        assert_eq!(error.reason, Reason::InvalidConfig, "{error}");
        assert_eq!(
            std::fs::read_to_string(outside.path().join("values.yaml")).expect("read"),
            "a: 1\n"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symbolic_link_inside_the_work_directory_is_followed() {
        let work = Work::new(Vec::new());
        work.write("repo/real.yaml", "a: 1 # kept\n");
        std::os::unix::fs::symlink("real.yaml", work.path().join("repo/link.yaml"))
            .expect("symlink");
        work.run(
            &EditYaml,
            json!({"path": "repo/link.yaml", "edits": [{"key": "a", "value": 2}]}),
        )
        .await
        .expect("edits");
        assert_eq!(work.read("repo/real.yaml"), "a: 2 # kept\n");
        let link = std::fs::symlink_metadata(work.path().join("repo/link.yaml")).expect("stat");
        assert!(link.file_type().is_symlink());
    }
}
