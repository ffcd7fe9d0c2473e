//! `oci-push` and `oci-pull` (spec controller.md §5.12): a directory of the work
//! directory to and from an OCI registry as a Flux-compatible artifact — the shape
//! `flux push artifact` makes and a Flux `OCIRepository` reads.
//!
//! The artifact is an OCI image manifest with an empty JSON config
//! (`application/vnd.cncf.flux.config.v1+json`) and one layer, the directory as a
//! deterministic gzip tar (`application/vnd.cncf.flux.content.v1.tar+gzip`, see
//! [`archive`]), annotated with the Passage's start (`org.opencontainers.image.created`)
//! and, when given, `source` and `revision`. Its times come from the Passage's start,
//! so pushing the same directory again gives the same digest; blobs the registry
//! already holds are not sent again. `oci-pull` empties `out`, then unpacks the
//! manifest's last layer into it.
//!
//! Both talk to registries through the controller's one client and credentials reader
//! ([`hecate_sources::oci`]). The archive work runs on `spawn_blocking`, through an unnamed
//! temporary file outside the work directory, so neither a large directory nor a large
//! layer is held in memory. What `oci-pull` takes is bounded: a manifest of at most
//! [`hecate_sources::oci::client::MAX_MANIFEST`], a layer of at most [`MAX_LAYER`] (checked
//! against the manifest before the download, and the download against the manifest),
//! and what it unpacks by [`archive::MAX_FILE`], [`archive::MAX_UNPACKED`] and
//! [`archive::MAX_ENTRIES`].

pub mod archive;

use std::collections::BTreeMap;
use std::io::{Seek as _, SeekFrom};
use std::path::{Component, Path};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use hecate_sources::oci::{self, Basic, ErrorKind, Registry, Repository};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::runner::{StepContext, StepError, StepKind, StepResult};
use crate::Tools;
use crate::reason::Reason;

/// The manifest's media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config blob's media type, as Flux writes it.
pub const FLUX_CONFIG: &str = "application/vnd.cncf.flux.config.v1+json";
/// The content layer's media type, as Flux writes it.
pub const FLUX_CONTENT: &str = "application/vnd.cncf.flux.content.v1.tar+gzip";
/// Annotation: when the artifact was made (the Passage's start).
pub const CREATED: &str = "org.opencontainers.image.created";
/// Annotation: where its content comes from (`source`).
pub const SOURCE: &str = "org.opencontainers.image.source";
/// Annotation: the revision of that source (`revision`).
pub const REVISION: &str = "org.opencontainers.image.revision";

/// The largest layer `oci-pull` downloads (compressed, as the manifest declares it):
/// 256 MiB. A larger one is refused before a byte of it is read.
pub const MAX_LAYER: u64 = 256 * 1024 * 1024;

/// The config blob: Flux's artifacts carry an empty one.
const EMPTY_CONFIG: &[u8] = b"{}";

/// What `oci-pull` asks for: the image manifests, and indexes too — a registry
/// answers 404 for an index not asked for, and "this is an index" says more.
const PULL_TYPES: &str = hecate_sources::oci::client::MANIFEST_TYPES;

/// The client the OCI steps talk to registries with: no limit on a whole request (a
/// large layer takes its time), but a connection must open within 10 s and a stalled
/// transfer ends after 60 s; the servers trusted are those Beacons trust
/// ([`hecate_sources::tls`]).
pub fn registry() -> Registry {
    let http = hecate_sources::tls::client_builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(60))
        .user_agent(concat!("hecate-controller/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default();
    Registry::new(http)
}

/// The `oci-push` step.
pub struct OciPush {
    client: kube::Client,
    registry: Registry,
}

impl OciPush {
    /// Reads credentials Secrets through `client`; talks to registries through
    /// `registry`.
    pub fn new(client: kube::Client, registry: Registry) -> Self {
        Self { client, registry }
    }
}

/// The `oci-pull` step.
pub struct OciPull {
    client: kube::Client,
    registry: Registry,
}

impl OciPull {
    /// Reads credentials Secrets through `client`; talks to registries through
    /// `registry`.
    pub fn new(client: kube::Client, registry: Registry) -> Self {
        Self { client, registry }
    }
}

impl StepKind for OciPush {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::OciPush;
    type With = crate::config::oci::OciPushConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(tools.client.clone(), registry())
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let repository =
                Repository::parse(&config.repo, config.insecure).map_err(registry_error)?;
            oci::check_tag(&config.tag).map_err(|why| StepError::config(format!("tag: {why}")))?;
            let dir = ctx.in_work_dir(&config.path)?;
            match std::fs::metadata(&dir) {
                Ok(metadata) if metadata.is_dir() => {}
                Ok(_) => {
                    return Err(StepError::terminal(
                        Reason::FileNotFound,
                        format!("path {:?} is not a directory", config.path),
                    ));
                }
                Err(_) => {
                    return Err(StepError::terminal(
                        Reason::FileNotFound,
                        format!(
                            "path {:?} does not exist in the work directory",
                            config.path
                        ),
                    ));
                }
            }
            stays_inside(ctx.work_dir, &dir, "path")?;
            let auth = credentials(
                &self.client,
                ctx,
                config.credentials_ref.as_ref().map(|r| r.name.as_str()),
                &config.repo,
                &repository,
            )
            .await
            .map_err(registry_error)?;

            let mtime = u64::try_from(ctx.started_at.as_second()).unwrap_or(0);
            let (layer, packed) = tokio::task::spawn_blocking(move || {
                let mut file =
                    tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
                let packed = archive::pack(&dir, mtime, &mut file)?;
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| format!("rereading the archive: {e}"))?;
                Ok::<_, String>((file, packed))
            })
            .await
            .map_err(|e| local(format!("packing stopped: {e}")))?
            .map_err(|why| local(format!("packing {:?}: {why}", config.path)))?;

            let manifest = manifest(&packed, &annotations(ctx, &config.source, &config.revision));
            let mut session = self.registry.session(&repository, auth.as_ref()).for_push();
            session
                .push_blob(
                    &packed.digest,
                    packed.size,
                    tokio::fs::File::from_std(layer),
                )
                .await
                .map_err(registry_error)?;
            session
                .push_blob(
                    &oci::sha256_digest(EMPTY_CONFIG),
                    EMPTY_CONFIG.len() as u64,
                    EMPTY_CONFIG,
                )
                .await
                .map_err(registry_error)?;
            let digest = session
                .put_manifest(&config.tag, OCI_MANIFEST, manifest)
                .await
                .map_err(registry_error)?;
            Ok(StepResult::done(
                format!(
                    "pushed {} files ({} bytes) to {}:{} as {digest}",
                    packed.files, packed.size, config.repo, config.tag
                ),
                json!({
                    "repo": config.repo,
                    "tag": config.tag,
                    "digest": digest,
                    "url": format!("oci://{}", config.repo),
                }),
            ))
        })
    }
}

impl StepKind for OciPull {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::OciPull;
    type With = crate::config::oci::OciPullConfig;

    fn build(tools: &Tools) -> Self {
        Self::new(tools.client.clone(), registry())
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let repository =
                Repository::parse(&config.repo, config.insecure).map_err(registry_error)?;
            let by_digest = !config.digest.trim().is_empty();
            let reference = if by_digest {
                oci::check_digest(&config.digest)
                    .map_err(|why| StepError::config(format!("digest: {why}")))?;
                config.digest.clone()
            } else {
                oci::check_tag(&config.tag)
                    .map_err(|why| StepError::config(format!("tag: {why}")))?;
                config.tag.clone()
            };
            let out = ctx.in_work_dir(&config.out)?;
            if is_work_dir_itself(&config.out) {
                return Err(StepError::config(format!(
                    "out {:?} is the work directory itself; name a directory inside it",
                    config.out
                )));
            }
            let auth = credentials(
                &self.client,
                ctx,
                config.credentials_ref.as_ref().map(|r| r.name.as_str()),
                &config.repo,
                &repository,
            )
            .await
            .map_err(registry_error)?;

            let mut session = self.registry.session(&repository, auth.as_ref());
            let manifest = session
                .manifest(&reference, PULL_TYPES)
                .await
                .map_err(registry_error)?;
            // Fetched by digest, the client checked the bytes against it.
            let digest = if by_digest {
                reference.clone()
            } else {
                oci::sha256_digest(&manifest.bytes)
            };
            let layer = last_layer(&manifest.bytes, manifest.media_type.as_deref())
                .map_err(|why| local(format!("{}@{digest}: {why}", config.repo)))?;
            if layer.size > MAX_LAYER {
                return Err(local(format!(
                    "{}@{digest}: its layer is {} bytes, more than the {} oci-pull takes; \
                     nothing was downloaded",
                    config.repo,
                    layer.size,
                    hecate_sources::oci::client::size(MAX_LAYER)
                )));
            }

            let file = tempfile::tempfile().map_err(|e| local(format!("a temporary file: {e}")))?;
            let mut download = tokio::fs::File::from_std(file);
            session
                .fetch_blob(&layer.digest, layer.size, &mut download)
                .await
                .map_err(registry_error)?;
            let mut file = download.into_std().await;

            let work_dir = ctx.work_dir.to_path_buf();
            let target = out.clone();
            let shown = format!("{}@{digest}", config.repo);
            let files = tokio::task::spawn_blocking(move || {
                std::fs::create_dir_all(&work_dir)
                    .map_err(|e| Here::Failed(format!("creating the work directory: {e}")))?;
                // `out` itself may be a link (removed, never followed); what holds it
                // must not be one that leads away.
                stays_inside(&work_dir, target.parent().unwrap_or(&work_dir), "out")?;
                empty_dir(&target).map_err(Here::Failed)?;
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| Here::Failed(format!("rereading the layer: {e}")))?;
                archive::unpack(std::io::BufReader::new(file), &target).map_err(|why| {
                    // Half an artifact is worse than none.
                    let _ = std::fs::remove_dir_all(&target);
                    Here::Failed(format!("unpacking {shown}: {why}"))
                })
            })
            .await
            .map_err(|e| local(format!("unpacking stopped: {e}")))??;

            Ok(StepResult::done(
                format!(
                    "pulled {}@{digest}: {files} files into {}",
                    config.repo, config.out
                ),
                json!({
                    "digest": digest,
                    "out": out.display().to_string(),
                    "files": files,
                }),
            ))
        })
    }
}

/// The credentials `secret` (if any) holds for `repo`; an unreadable or unusable
/// Secret is [`ErrorKind::Invalid`] (`InvalidConfig`).
async fn credentials(
    client: &kube::Client,
    ctx: &StepContext<'_>,
    secret: Option<&str>,
    repo: &str,
    repository: &Repository,
) -> Result<Option<Basic>, oci::Error> {
    let Some(secret) = secret else {
        return Ok(None);
    };
    oci::credentials::for_repository(client, ctx.namespace, secret, repo, repository).await
}

/// A registry failure as a step failure: a refusal of the credentials is terminal,
/// a registry that is away or failing is worth another crossing, a mistake in the
/// configuration or Secret is `InvalidConfig`, a local one terminal.
fn registry_error(error: oci::Error) -> StepError {
    match error.kind {
        ErrorKind::Invalid => StepError::config(error.message),
        ErrorKind::Denied => StepError::terminal(Reason::RegistryAuthFailed, error.message),
        ErrorKind::Unreachable | ErrorKind::NotFound | ErrorKind::Failed => {
            StepError::retryable(Reason::RegistryFailed, error.message)
        }
        ErrorKind::Local | ErrorKind::TooLarge => local(error.message),
    }
}

/// Packing or unpacking failed here: terminal, another try would fail the same way.
fn local(message: String) -> StepError {
    StepError::terminal(Reason::RegistryFailed, message)
}

/// A failure of the work done on this machine.
#[derive(Debug)]
enum Here {
    /// The named field's path leads out of the work directory through a symbolic link
    /// (`InvalidConfig`).
    Escapes(&'static str),
    /// Reading, packing, writing or unpacking failed (terminal `RegistryFailed`).
    Failed(String),
}

impl From<Here> for StepError {
    fn from(failure: Here) -> Self {
        match failure {
            Here::Escapes(field) => StepError::config(format!(
                "{field} leads out of the work directory through a symbolic link"
            )),
            Here::Failed(why) => local(why),
        }
    }
}

/// `path` (inside the work directory by its text) is inside it also once symbolic
/// links are followed ([`stays_inside`](crate::runner::stays_inside)): a
/// checkout could otherwise hand the controller's own files to a registry, or have
/// them replaced.
fn stays_inside(work_dir: &Path, path: &Path, field: &'static str) -> Result<(), Here> {
    match crate::runner::stays_inside(work_dir, path) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Here::Escapes(field)),
        Err(e) => Err(Here::Failed(format!("{field}: {e}"))),
    }
}

/// Whether `relative` names the work directory itself (`.`, `a/..`).
fn is_work_dir_itself(relative: &str) -> bool {
    let depth = Path::new(relative)
        .components()
        .fold(0i32, |depth, part| match part {
            Component::Normal(_) => depth + 1,
            Component::ParentDir => depth - 1,
            _ => depth,
        });
    depth <= 0
}

/// Removes whatever is at `dir` (a link itself, never its target) and makes it an
/// empty directory.
fn empty_dir(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(dir),
        Ok(_) => std::fs::remove_file(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .and_then(|()| std::fs::create_dir_all(dir))
    .map_err(|e| format!("emptying {}: {e}", dir.display()))
}

/// A content descriptor.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    #[serde(default)]
    media_type: String,
    digest: String,
    size: u64,
}

/// An image manifest, as much of it as these steps read and write.
#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ImageManifest {
    schema_version: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    media_type: String,
    config: Descriptor,
    layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<String, String>,
}

/// The manifest's annotations: the Passage's start, and `source` and `revision` when
/// given.
fn annotations(ctx: &StepContext<'_>, source: &str, revision: &str) -> BTreeMap<String, String> {
    let mut annotations = BTreeMap::from([(
        CREATED.to_string(),
        ctx.started_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )]);
    for (key, value) in [(SOURCE, source), (REVISION, revision)] {
        if !value.trim().is_empty() {
            annotations.insert(key.to_string(), value.to_string());
        }
    }
    annotations
}

/// The artifact's manifest (bytes as pushed: the same inputs, the same bytes).
fn manifest(layer: &archive::Packed, annotations: &BTreeMap<String, String>) -> Bytes {
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: OCI_MANIFEST.into(),
        config: Descriptor {
            media_type: FLUX_CONFIG.into(),
            digest: oci::sha256_digest(EMPTY_CONFIG),
            size: EMPTY_CONFIG.len() as u64,
        },
        layers: vec![Descriptor {
            media_type: FLUX_CONTENT.into(),
            digest: layer.digest.clone(),
            size: layer.size,
        }],
        annotations: annotations.clone(),
    };
    // A struct of strings, numbers and a map of strings always serialises.
    serde_json::to_vec(&manifest).unwrap_or_default().into()
}

/// The last layer of the image manifest `bytes` (served as `served`): the content of a
/// Flux artifact, or the top layer of anything else.
fn last_layer(bytes: &[u8], served: Option<&str>) -> Result<Descriptor, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Peek {
        #[serde(default)]
        media_type: String,
        #[serde(default)]
        manifests: Option<serde_json::Value>,
    }
    let peek: Peek =
        serde_json::from_slice(bytes).map_err(|e| format!("the manifest is not valid: {e}"))?;
    let media_type = if peek.media_type.is_empty() {
        served.unwrap_or_default()
    } else {
        peek.media_type.as_str()
    };
    if peek.manifests.is_some() || media_type.contains("index") || media_type.contains("list") {
        return Err("this is an index of several images, not one artifact".into());
    }
    let manifest: ImageManifest =
        serde_json::from_slice(bytes).map_err(|e| format!("the manifest is not valid: {e}"))?;
    let layer = manifest
        .layers
        .last()
        .cloned()
        .ok_or("the manifest has no layers: nothing to unpack")?;
    oci::check_digest(&layer.digest).map_err(|why| format!("its last layer: {why}"))?;
    Ok(layer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_is_a_flux_artifact() {
        let layer = archive::Packed {
            digest: format!("sha256:{}", "ab".repeat(32)),
            size: 123,
            files: 2,
        };
        let annotations = BTreeMap::from([
            (CREATED.to_string(), "2026-01-02T03:04:05Z".to_string()),
            (
                SOURCE.to_string(),
                "https://github.com/acme/fleet".to_string(),
            ),
        ]);
        let bytes = manifest(&layer, &annotations);
        assert_eq!(bytes, manifest(&layer, &annotations), "deterministic");
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(
            value,
            json!({
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {
                    "mediaType": FLUX_CONFIG,
                    "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
                    "size": 2
                },
                "layers": [{"mediaType": FLUX_CONTENT, "digest": layer.digest, "size": 123}],
                "annotations": {
                    CREATED: "2026-01-02T03:04:05Z",
                    SOURCE: "https://github.com/acme/fleet"
                }
            })
        );
        assert_eq!(last_layer(&bytes, None).expect("a layer").size, 123);
    }

    #[test]
    fn the_last_layer_is_the_content() {
        let two = json!({
            "schemaVersion": 2,
            "config": {"mediaType": "x", "digest": format!("sha256:{}", "00".repeat(32)), "size": 2},
            "layers": [
                {"mediaType": "a", "digest": format!("sha256:{}", "11".repeat(32)), "size": 1},
                {"mediaType": "b", "digest": format!("sha256:{}", "22".repeat(32)), "size": 2},
            ]
        });
        let layer = last_layer(two.to_string().as_bytes(), Some(OCI_MANIFEST)).expect("a layer");
        assert_eq!((layer.media_type.as_str(), layer.size), ("b", 2));

        let cases = [
            (json!({"schemaVersion": 2, "manifests": []}), "index"),
            (
                json!({"schemaVersion": 2, "config": two["config"], "layers": []}),
                "no layers",
            ),
            (
                json!({"schemaVersion": 2, "config": two["config"],
                       "layers": [{"mediaType": "a", "digest": "sha256:../../x", "size": 1}]}),
                "not a digest",
            ),
            (json!({"schemaVersion": 2}), "not valid"),
        ];
        for (manifest, words) in cases {
            let why = last_layer(manifest.to_string().as_bytes(), None).expect_err(words);
            assert!(why.contains(words), "{why}");
        }
        assert!(
            last_layer(
                two.to_string().as_bytes(),
                Some("application/vnd.oci.image.index.v1+json")
            )
            .is_err()
        );
    }

    #[test]
    fn out_must_be_inside_the_work_directory_not_it() {
        for itself in [".", "./", "a/..", "a/b/../.."] {
            assert!(is_work_dir_itself(itself), "{itself}");
        }
        for inside in ["out", "a/../b", "./m"] {
            assert!(!is_work_dir_itself(inside), "{inside}");
        }
    }

    #[test]
    fn failures_have_the_reasons_of_the_spec() {
        let cases = [
            (ErrorKind::Invalid, Reason::InvalidConfig, true),
            (ErrorKind::Denied, Reason::RegistryAuthFailed, true),
            (ErrorKind::Unreachable, Reason::RegistryFailed, false),
            (ErrorKind::NotFound, Reason::RegistryFailed, false),
            (ErrorKind::Failed, Reason::RegistryFailed, false),
            (ErrorKind::Local, Reason::RegistryFailed, true),
            (ErrorKind::TooLarge, Reason::RegistryFailed, true),
        ];
        for (kind, reason, terminal) in cases {
            let error = registry_error(oci::Error::new(kind, "m"));
            assert_eq!(
                (error.reason, error.terminal),
                (reason, terminal),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn links_out_of_the_work_directory_are_refused() {
        let work = tempfile::tempdir().expect("a temporary directory");
        let elsewhere = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(work.path().join("real")).expect("mkdir");
        std::os::unix::fs::symlink(elsewhere.path(), work.path().join("away")).expect("link");
        assert!(stays_inside(work.path(), &work.path().join("real"), "path").is_ok());
        assert!(
            stays_inside(work.path(), &work.path().join("real/not/yet"), "path").is_ok(),
            "judged on what exists"
        );
        let error = StepError::from(
            stays_inside(work.path(), &work.path().join("away/not/yet"), "path")
                .expect_err("outside"),
        );
        assert_eq!(
            (error.reason, error.terminal),
            (Reason::InvalidConfig, true)
        );
    }

    #[test]
    fn emptying_replaces_what_was_there() {
        let work = tempfile::tempdir().expect("a temporary directory");
        let out = work.path().join("out");
        std::fs::create_dir_all(out.join("old")).expect("mkdir");
        std::fs::write(out.join("old/x"), "x").expect("write");
        empty_dir(&out).expect("emptied");
        assert_eq!(std::fs::read_dir(&out).expect("a directory").count(), 0);
        // A link is removed, never followed.
        let elsewhere = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(elsewhere.path().join("keep"), "k").expect("write");
        let link = work.path().join("link");
        std::os::unix::fs::symlink(elsewhere.path(), &link).expect("link");
        empty_dir(&link).expect("emptied");
        assert!(elsewhere.path().join("keep").exists());
        assert!(std::fs::symlink_metadata(&link).expect("there").is_dir());
    }
}
