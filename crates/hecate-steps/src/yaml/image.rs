//! `set-image` (spec §5.9): repin one image in a kustomization's `images:` list, by
//! the field the entry already uses (`newTag`, else `digest`), with the same in-place
//! surgery as `edit-yaml`.

use futures::future::BoxFuture;
use hecate_types::Bundle;
use serde_json::json;

use super::surgery::{self, PinField};
use super::{read, refused, resolve, write};
use crate::Tools;
use crate::config::yaml::EditValue;
use crate::reason::Reason;
use crate::runner::{StepContext, StepError, StepKind, StepResult};

/// The names kustomize looks for in a kustomization directory, in its order.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The `set-image` step. Outputs `changed`, `file` (the configured path), `image` and
/// `pinned` (the tag or digest now in the file).
#[derive(Clone, Copy, Debug, Default)]
pub struct SetImage;

impl StepKind for SetImage {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::SetImage;
    type With = crate::config::yaml::SetImageConfig;

    fn build(_: &Tools) -> Self {
        Self
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let (tag, digest) = version(&config.tag, &config.digest, &config.image, ctx.bundle)?;

            let file = &config.path;
            let mut real = resolve(ctx, file).await?;
            if tokio::fs::metadata(&real).await.is_ok_and(|m| m.is_dir()) {
                real = kustomization_in(ctx, file).await?;
            }
            let before = read(&real, file).await?;
            let pin = surgery::find_image(&before, &config.image).map_err(|r| refused(file, r))?;
            let pinned = match pin.field {
                PinField::NewTag => tag,
                PinField::Digest => digest,
            };
            if pinned.trim().is_empty() {
                return Err(StepError::config(format!(
                    "{file}: the images entry for {:?} pins by {}, and no {} was given",
                    config.image,
                    pin.field.name(),
                    match pin.field {
                        PinField::NewTag => "tag",
                        PinField::Digest => "digest",
                    }
                )));
            }
            let after = surgery::set(
                &before,
                Some(pin.document),
                &pin.key(),
                &EditValue::String(pinned.clone()),
            )
            .map_err(|r| refused(file, r))?;
            let changed = after != before;
            if changed {
                write(&real, file, &after).await?;
            }
            let message = if changed {
                format!("pinned {} to {pinned} in {file}", config.image)
            } else {
                format!("{file} already pins {} to {pinned}", config.image)
            };
            Ok(StepResult::done(
                message,
                json!({"changed": changed, "file": file, "image": config.image, "pinned": pinned}),
            ))
        })
    }
}

/// The tag and digest to pin: as configured, or — when both are blank — the Bundle's
/// image artifact for `image`.
fn version(
    tag: &str,
    digest: &str,
    image: &str,
    bundle: &Bundle,
) -> Result<(String, String), StepError> {
    if !tag.trim().is_empty() || !digest.trim().is_empty() {
        return Ok((tag.trim().to_string(), digest.trim().to_string()));
    }
    bundle
        .spec
        .artifacts
        .iter()
        .filter_map(|artifact| artifact.image.as_ref())
        .find(|artifact| artifact.repo == image)
        .map(|artifact| (artifact.tag.clone(), artifact.digest.clone()))
        .ok_or_else(|| {
            StepError::config(format!(
                "Bundle {} carries no image {image:?}; set tag or digest",
                bundle.metadata.name.as_deref().unwrap_or_default()
            ))
        })
}

/// The kustomization file of the directory `directory`, as kustomize would pick it.
async fn kustomization_in(
    ctx: &StepContext<'_>,
    directory: &str,
) -> Result<std::path::PathBuf, StepError> {
    for name in KUSTOMIZATION_FILES {
        let candidate = format!("{}/{name}", directory.trim_end_matches('/'));
        match resolve(ctx, &candidate).await {
            Ok(real) => return Ok(real),
            Err(error) if error.reason == Reason::FileNotFound => continue,
            Err(error) => return Err(error),
        }
    }
    Err(StepError::terminal(
        Reason::FileNotFound,
        format!("{directory} is a directory with no kustomization file"),
    ))
}

#[cfg(test)]
mod tests {
    use hecate_types::Artifact;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::test_support::Work;
    use super::*;

    const KUSTOMIZATION: &str = "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
images:
  - name: ghcr.io/acme/sidecar
    newTag: 0.9.0
  - name: ghcr.io/acme/api   # the service
    newTag: 1.0.0            # promoted by Hecate
";

    fn api(tag: &str, digest: &str) -> Artifact {
        Artifact::image("ghcr.io/acme/api", tag, digest)
    }

    #[tokio::test]
    async fn the_entry_is_found_by_name_and_only_its_tag_changes() {
        let work = Work::new(Vec::new());
        work.write("repo/kustomization.yaml", KUSTOMIZATION);
        let config =
            json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/api", "tag": "2.0.0"});

        let result = work.run(&SetImage, config.clone()).await.expect("pins");
        assert_eq!(
            result.output,
            Some(json!({
                "changed": true,
                "file": "repo/kustomization.yaml",
                "image": "ghcr.io/acme/api",
                "pinned": "2.0.0",
            }))
        );
        assert_eq!(
            work.read("repo/kustomization.yaml"),
            KUSTOMIZATION.replace("newTag: 1.0.0 ", "newTag: 2.0.0 ")
        );

        let again = work.run(&SetImage, config).await.expect("re-runs");
        assert_eq!(again.output.expect("output")["changed"], json!(false));
        assert_eq!(
            work.read("repo/kustomization.yaml"),
            KUSTOMIZATION.replace("newTag: 1.0.0 ", "newTag: 2.0.0 ")
        );
    }

    #[tokio::test]
    async fn the_version_comes_from_the_bundle_when_none_is_configured() {
        let work = Work::new(vec![
            Artifact::image("ghcr.io/acme/other", "9.9.9", ""),
            api("3.1.4", "sha256:beef"),
        ]);
        work.write("repo/kustomization.yaml", KUSTOMIZATION);
        let result = work
            .run(
                &SetImage,
                json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/api"}),
            )
            .await
            .expect("pins");
        assert_eq!(result.output.expect("output")["pinned"], json!("3.1.4"));
        assert!(
            work.read("repo/kustomization.yaml")
                .contains("newTag: 3.1.4 ")
        );
    }

    #[tokio::test]
    async fn a_digest_pin_stays_a_digest_pin() {
        let work = Work::new(vec![api("3.1.4", "sha256:beef")]);
        let text = "images:\n  - name: ghcr.io/acme/api\n    digest: sha256:0000\n";
        work.write("repo/apps/dev/kustomization.yaml", text);
        // A directory names its kustomization file.
        let result = work
            .run(
                &SetImage,
                json!({"path": "repo/apps/dev", "image": "ghcr.io/acme/api"}),
            )
            .await
            .expect("pins");
        assert_eq!(
            result.output.expect("output")["file"],
            json!("repo/apps/dev")
        );
        assert_eq!(
            work.read("repo/apps/dev/kustomization.yaml"),
            text.replace("sha256:0000", "sha256:beef")
        );
    }

    #[tokio::test]
    async fn a_tag_that_reads_as_a_number_is_quoted() {
        let work = Work::new(Vec::new());
        work.write("k.yaml", "images:\n- name: app\n  newTag: v1\n");
        work.run(
            &SetImage,
            json!({"path": "k.yaml", "image": "app", "tag": "1.10"}),
        )
        .await
        .expect("pins");
        assert_eq!(
            work.read("k.yaml"),
            "images:\n- name: app\n  newTag: \"1.10\"\n"
        );
    }

    #[tokio::test]
    async fn refusals() {
        let work = Work::new(vec![Artifact::image("ghcr.io/acme/other", "1.0.0", "")]);
        work.write("repo/kustomization.yaml", KUSTOMIZATION);
        work.write("repo/empty/notes.txt", "no kustomization here\n");
        work.write(
            "repo/unpinned.yaml",
            "images:\n  - name: ghcr.io/acme/api\n",
        );
        work.write(
            "repo/twice.yaml",
            "images:\n- {name: ghcr.io/acme/api, newTag: a}\n- {name: ghcr.io/acme/api, newTag: b}\n",
        );
        let cases = [
            (
                json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/ghost", "tag": "1"}),
                Reason::KeyNotFound,
                "no images[] entry",
            ),
            (
                json!({"path": "repo/unpinned.yaml", "image": "ghcr.io/acme/api", "tag": "1"}),
                Reason::KeyNotFound,
                "neither newTag nor digest",
            ),
            (
                json!({"path": "repo/twice.yaml", "image": "ghcr.io/acme/api", "tag": "1"}),
                Reason::EditFailed,
                "2 images[] entries",
            ),
            (
                json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/api"}),
                Reason::InvalidConfig,
                "carries no image",
            ),
            (
                json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/api", "digest": "sha256:1"}),
                Reason::InvalidConfig,
                "no tag was given",
            ),
            (
                json!({"path": "repo/nope.yaml", "image": "ghcr.io/acme/api", "tag": "1"}),
                Reason::FileNotFound,
                "repo/nope.yaml",
            ),
            (
                json!({"path": "repo/empty", "image": "ghcr.io/acme/api", "tag": "1"}),
                Reason::FileNotFound,
                "no kustomization file",
            ),
            (
                json!({"path": "../k.yaml", "image": "ghcr.io/acme/api", "tag": "1"}),
                Reason::InvalidConfig,
                "work directory",
            ),
            (
                json!({"path": "repo/kustomization.yaml", "image": "ghcr.io/acme/api", "newTag": "1"}),
                Reason::InvalidConfig,
                "unknown field `newTag`",
            ),
        ];
        for (config, reason, says) in cases {
            let error = work
                .run(&SetImage, config.clone())
                .await
                .expect_err("fails");
            assert_eq!(error.reason, reason, "{config}: {error}");
            assert!(error.terminal, "{config}");
            assert!(error.message.contains(says), "{config}: {error}");
        }
        assert_eq!(work.read("repo/kustomization.yaml"), KUSTOMIZATION);
    }
}
