//! `oci-push` and `oci-pull` against a real registry — CNCF Distribution on loopback
//! with htpasswd authentication ([`hecate_testenv::registry`]) — with credentials read
//! from Secrets by the controller's own identity under its deployed role: round trips,
//! the same digest for the same input, the artifact as Flux reads it (checked by raw
//! HTTP), and each failure with its reason.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use hecate_steps::oci::{self, OciPull, OciPush};
use hecate_steps::runner::{Runner, StepContext, StepError, StepResult};
use hecate_testenv::TestEnv;
use hecate_testenv::registry::{Distribution, OCI_MANIFEST, PASSWORD, USER};
use hecate_types::{Bundle, BundleSpec};
use jiff::Timestamp;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use pretty_assertions::assert_eq;

use super::git_steps::{as_controller, secret};
use hecate_steps::reason::Reason;

/// 2026-01-01T00:00:00Z: when the Passage started.
const STARTED: i64 = 1_767_225_600;

/// A namespace with the controller's client, a registry that wants `bot`, a work
/// directory, and two Secrets: `registry` (a docker config for the registry) and
/// `wrong` (a username and a wrong password).
struct Fixture {
    env: TestEnv,
    client: kube::Client,
    registry: Distribution,
    work: tempfile::TempDir,
    bundle: Bundle,
    outputs: BTreeMap<String, Value>,
}

impl Fixture {
    async fn new() -> Self {
        let env = TestEnv::new().await;
        let registry = Distribution::start(true).await;
        let config = json!({"auths": {format!("http://{}", registry.addr): {
            "auth": base64_encode(&format!("{USER}:{PASSWORD}"))
        }}});
        env.create(secret(
            "registry",
            &[(".dockerconfigjson", &config.to_string())],
        ))
        .await;
        env.create(secret("wrong", &[("username", USER), ("password", "nope")]))
            .await;
        let client = as_controller(&env).await;
        Self {
            env,
            client,
            registry,
            work: tempfile::tempdir().unwrap(),
            bundle: Bundle::new("app-0123456789ab", BundleSpec::default()),
            outputs: BTreeMap::new(),
        }
    }

    fn push(&self) -> OciPush {
        OciPush::new(self.client.clone(), oci::registry())
    }

    fn pull(&self) -> OciPull {
        OciPull::new(self.client.clone(), oci::registry())
    }

    fn dir(&self) -> &Path {
        self.work.path()
    }

    /// Runs `step` once in the work directory, the Passage having started at `started`.
    async fn run_at(
        &self,
        step: &dyn Runner,
        config: Value,
        started: i64,
    ) -> Result<StepResult, StepError> {
        let ctx = StepContext {
            namespace: &self.env.namespace,
            gate: "dev",
            passage: "dev-1",
            bundle: &self.bundle,
            actor: "controller",
            work_dir: self.work.path(),
            config,
            outputs: &self.outputs,
            attempt: 0,
            failed: false,
            traceparent: "",
            started_at: Timestamp::from_second(started).unwrap(),
        };
        step.run(&ctx).await
    }

    async fn run(&self, step: &dyn Runner, config: Value) -> Result<StepResult, StepError> {
        self.run_at(step, config, STARTED).await
    }

    /// Pushes `path` to `<registry>/<repo>:<tag>` with the `registry` Secret; the
    /// step's outputs.
    async fn pushed(&self, path: &str, repo: &str, tag: &str, started: i64) -> Value {
        let config = json!({
            "path": path, "repo": self.registry.repo(repo), "tag": tag,
            "source": "https://github.com/acme/fleet", "revision": "main@sha1:0123abcd",
            "credentialsRef": {"name": "registry"},
        });
        self.run_at(&self.push(), config, started)
            .await
            .unwrap_or_else(|e| panic!("push {path}: {} {}", e.reason, e.message))
            .output
            .unwrap()
    }
}

fn base64_encode(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn write(root: &Path, relative: &str, content: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A rendered directory: files at two depths, an executable, an empty directory, and
/// two symbolic links (one leading out of the work directory) that are not content.
fn site(root: &Path) {
    write(root, "site/app.yaml", "kind: ConfigMap\n");
    write(root, "site/nested/deep/values.yaml", "replicas: 2\n");
    write(root, "site/run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(
        root.join("site/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("site/empty")).unwrap();
    std::os::unix::fs::symlink("app.yaml", root.join("site/alias.yaml")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("site/host")).unwrap();
}

fn assert_failure(result: Result<StepResult, StepError>, reason: Reason, terminal: bool) -> String {
    let error = result.expect_err("the step fails");
    assert_eq!(
        (error.reason, error.terminal),
        (reason, terminal),
        "{}",
        error.message
    );
    error.message
}

/// Push a directory, pull it back by tag and by digest: the same files and contents,
/// modes normalised (0644 files, 0755 directories), links left out, and whatever
/// `out` held before gone.
#[tokio::test]
async fn push_then_pull_round_trips_files_and_modes() {
    let f = Fixture::new().await;
    site(f.dir());
    let pushed = f.pushed("site", "fleet/dev", "dev", STARTED).await;
    let repo = f.registry.repo("fleet/dev");
    let digest = pushed["digest"].as_str().unwrap().to_string();
    assert!(digest.starts_with("sha256:"), "{digest}");
    assert_eq!(
        pushed,
        json!({"repo": repo, "tag": "dev", "digest": digest, "url": format!("oci://{repo}")})
    );

    write(f.dir(), "pulled/stale.yaml", "left over\n");
    let pulled = f
        .run(
            &f.pull(),
            json!({"repo": repo, "tag": "dev", "out": "pulled",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await
        .unwrap();
    let out = f.dir().join("pulled");
    assert_eq!(
        pulled.output.unwrap(),
        json!({"digest": digest, "out": out.display().to_string(), "files": 3})
    );
    assert_eq!(
        std::fs::read_to_string(out.join("app.yaml")).unwrap(),
        "kind: ConfigMap\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("nested/deep/values.yaml")).unwrap(),
        "replicas: 2\n"
    );
    assert_eq!(
        (
            mode(&out.join("app.yaml")),
            mode(&out.join("run.sh")),
            mode(&out.join("nested/deep")),
            mode(&out.join("empty")),
        ),
        (0o644, 0o644, 0o755, 0o755)
    );
    for absent in ["alias.yaml", "host", "stale.yaml"] {
        assert!(
            std::fs::symlink_metadata(out.join(absent)).is_err(),
            "{absent} is not there"
        );
    }

    // By digest, into another directory: the same content.
    let by_digest = f
        .run(
            &f.pull(),
            json!({"repo": repo, "digest": digest, "out": "again/here",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await
        .unwrap()
        .output
        .unwrap();
    assert_eq!(by_digest["digest"], json!(digest));
    assert_eq!(by_digest["files"], json!(3));
    assert_eq!(
        std::fs::read_to_string(f.dir().join("again/here/nested/deep/values.yaml")).unwrap(),
        "replicas: 2\n"
    );

    // A digest the repository does not have is the registry's answer, not a mistake.
    let absent = format!("sha256:{}", "0".repeat(64));
    assert_failure(
        f.run(
            &f.pull(),
            json!({"repo": repo, "digest": absent, "out": "none",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await,
        Reason::RegistryFailed,
        false,
    );
}

/// The same directory and Passage start give the same digest, whatever the files'
/// own times and modes (so a re-run pushes nothing new); another start, another one.
#[tokio::test]
async fn the_same_input_gives_the_same_digest() {
    let f = Fixture::new().await;
    site(f.dir());
    let first = f.pushed("site", "fleet/same", "one", STARTED).await["digest"].clone();

    // The same content written again later, with other modes on disk.
    std::fs::remove_dir_all(f.dir().join("site")).unwrap();
    site(f.dir());
    std::fs::set_permissions(
        f.dir().join("site/app.yaml"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let again = f.pushed("site", "fleet/same", "two", STARTED).await["digest"].clone();
    assert_eq!(again, first);
    let rerun = f.pushed("site", "fleet/same", "one", STARTED).await["digest"].clone();
    assert_eq!(rerun, first, "a re-run finds the work done");

    let later = f.pushed("site", "fleet/same", "three", STARTED + 1).await["digest"].clone();
    assert_ne!(later, first, "the Passage's start is in the content");
}

/// What the registry stores is the artifact Flux reads: an OCI manifest, Flux's config
/// and content media types, the annotations, and a layer that is the deterministic
/// archive (gzip header time 0, OS unknown; GNU tar entries owned by root, in lexical
/// order, at the Passage's start).
#[tokio::test]
async fn the_manifest_in_the_registry_is_a_flux_artifact() {
    let f = Fixture::new().await;
    site(f.dir());
    let pushed = f.pushed("site", "fleet/flux", "dev", STARTED).await;
    let (bytes, media_type) = f.registry.raw_manifest("fleet/flux", "dev").await;
    assert_eq!(media_type, OCI_MANIFEST);
    assert_eq!(
        pushed["digest"],
        json!(format!("sha256:{}", hex::encode(Sha256::digest(&bytes))))
    );
    let manifest: Value = serde_json::from_slice(&bytes).unwrap();
    let layer = manifest["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let blob = f.registry.raw_blob("fleet/flux", &layer).await;
    assert_eq!(
        manifest,
        json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": oci::FLUX_CONFIG,
                "digest": format!("sha256:{}", hex::encode(Sha256::digest(b"{}"))),
                "size": 2
            },
            "layers": [{"mediaType": oci::FLUX_CONTENT, "digest": layer, "size": blob.len()}],
            "annotations": {
                "org.opencontainers.image.created": "2026-01-01T00:00:00Z",
                "org.opencontainers.image.source": "https://github.com/acme/fleet",
                "org.opencontainers.image.revision": "main@sha1:0123abcd"
            }
        })
    );
    let config = f
        .registry
        .raw_blob("fleet/flux", manifest["config"]["digest"].as_str().unwrap())
        .await;
    assert_eq!(config, b"{}");

    assert_eq!(
        &blob[..10],
        &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255],
        "gzip: no name, time 0, OS unknown"
    );
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(blob.as_slice()));
    let mut entries = Vec::new();
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        let header = entry.header();
        assert!(header.as_gnu().is_some());
        assert_eq!((header.uid().unwrap(), header.gid().unwrap()), (0, 0));
        assert_eq!(header.mtime().unwrap(), STARTED as u64);
        entries.push(format!(
            "{} {:o}",
            String::from_utf8_lossy(&entry.path_bytes()),
            header.mode().unwrap()
        ));
    }
    assert_eq!(
        entries,
        [
            "app.yaml 644",
            "empty/ 755",
            "nested/ 755",
            "nested/deep/ 755",
            "nested/deep/values.yaml 644",
            "run.sh 644",
        ]
    );
}

/// Wrong credentials, and none at all, are refused by the registry: terminal, in the
/// registry's words (the status).
#[tokio::test]
async fn refused_credentials_are_terminal() {
    let f = Fixture::new().await;
    site(f.dir());
    let repo = f.registry.repo("fleet/auth");
    let push = |secret: Option<&str>| {
        let mut config = json!({"path": "site", "repo": repo, "tag": "dev"});
        if let Some(secret) = secret {
            config["credentialsRef"] = json!({"name": secret});
        }
        config
    };
    let message = assert_failure(
        f.run(&f.push(), push(Some("wrong"))).await,
        Reason::RegistryAuthFailed,
        true,
    );
    assert!(message.contains("401"), "{message}");
    let message = assert_failure(
        f.run(&f.push(), push(None)).await,
        Reason::RegistryAuthFailed,
        true,
    );
    assert!(message.contains("401"), "{message}");

    f.pushed("site", "fleet/auth", "dev", STARTED).await;
    let message = assert_failure(
        f.run(
            &f.pull(),
            json!({"repo": repo, "tag": "dev", "out": "m", "credentialsRef": {"name": "wrong"}}),
        )
        .await,
        Reason::RegistryAuthFailed,
        true,
    );
    assert!(message.contains("401"), "{message}");
}

/// No registry at the address: retryable (another crossing may find it up).
#[tokio::test]
async fn an_unreachable_registry_is_retryable() {
    let f = Fixture::new().await;
    site(f.dir());
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let repo = format!("{closed}/fleet/dev");
    let message = assert_failure(
        f.run(
            &f.push(),
            json!({"path": "site", "repo": repo, "tag": "dev"}),
        )
        .await,
        Reason::RegistryFailed,
        false,
    );
    assert!(message.contains("unreachable"), "{message}");
    assert_failure(
        f.run(&f.pull(), json!({"repo": repo, "tag": "dev", "out": "m"}))
            .await,
        Reason::RegistryFailed,
        false,
    );
}

/// A gzip tar whose entries are named exactly as given (the tar crate will not build
/// such names itself).
fn raw_layer(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gzip);
    for (name, content) in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_size(content.len() as u64);
        header.set_cksum();
        tar.append(&header, *content).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// Pushes a Flux-shaped artifact whose layer is `layer`, by raw HTTP, as `tag`.
async fn raw_artifact(registry: &Distribution, path: &str, tag: &str, layer: &[u8]) -> String {
    let (config, config_size) = registry.blob(path, b"{}").await;
    let (layer, layer_size) = registry.blob(path, layer).await;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": oci::FLUX_CONFIG, "digest": config, "size": config_size},
        "layers": [{"mediaType": oci::FLUX_CONTENT, "digest": layer, "size": layer_size}],
    });
    registry
        .manifest(path, tag, OCI_MANIFEST, &manifest)
        .await
        .0
}

/// An archive with an entry that climbs out, or an absolute one, is refused as a whole:
/// terminal, nothing written outside `out`, and no half-unpacked `out` left behind.
/// An index is not an artifact.
#[tokio::test]
async fn pull_refuses_entries_that_leave_out() {
    let f = Fixture::new().await;
    let repo = f.registry.repo("fleet/bad");
    let climbing = raw_layer(&[("./", b""), ("ok.yaml", b"ok\n"), ("../evil", b"evil\n")]);
    let absolute = raw_layer(&[("ok.yaml", b"ok\n"), ("/tmp/hecate-evil", b"evil\n")]);
    raw_artifact(&f.registry, "fleet/bad", "climbing", &climbing).await;
    raw_artifact(&f.registry, "fleet/bad", "absolute", &absolute).await;
    for (tag, words) in [
        ("climbing", "leads out of the destination"),
        ("absolute", "absolute"),
    ] {
        let message = assert_failure(
            f.run(
                &f.pull(),
                json!({"repo": repo, "tag": tag, "out": "m/out",
                       "credentialsRef": {"name": "registry"}}),
            )
            .await,
            Reason::RegistryFailed,
            true,
        );
        assert!(message.contains(words), "{tag}: {message}");
        assert!(!f.dir().join("m/out").exists(), "{tag}: nothing half-done");
        assert!(!f.dir().join("m/evil").exists(), "{tag}");
    }
    assert!(!Path::new("/tmp/hecate-evil").exists());

    f.registry.multi_arch("fleet/bad", "index", "x").await;
    let message = assert_failure(
        f.run(
            &f.pull(),
            json!({"repo": repo, "tag": "index", "out": "m/out",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await,
        Reason::RegistryFailed,
        true,
    );
    assert!(message.contains("index"), "{message}");
}

/// A blob larger than one request goes up in chunks and comes back whole.
#[tokio::test]
async fn a_layer_larger_than_one_request_goes_in_chunks() {
    let f = Fixture::new().await;
    // Incompressible: 9 MiB of xorshift output.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let noise: Vec<u8> = (0..9 * 1024 * 1024 / 8)
        .flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()
        })
        .collect();
    std::fs::create_dir_all(f.dir().join("big")).unwrap();
    std::fs::write(f.dir().join("big/noise.bin"), &noise).unwrap();
    let pushed = f.pushed("big", "fleet/big", "dev", STARTED).await;
    let (bytes, _) = f.registry.raw_manifest("fleet/big", "dev").await;
    let manifest: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        manifest["layers"][0]["size"].as_u64().unwrap() > 8 * 1024 * 1024,
        "more than one request's worth"
    );
    let pulled = f
        .run(
            &f.pull(),
            json!({"repo": f.registry.repo("fleet/big"), "digest": pushed["digest"],
                   "out": "back", "credentialsRef": {"name": "registry"}}),
        )
        .await
        .unwrap();
    assert_eq!(pulled.output.unwrap()["files"], json!(1));
    assert!(std::fs::read(f.dir().join("back/noise.bin")).unwrap() == noise);
}

/// Configuration mistakes, each terminal with its reason: no such directory, a file
/// for a directory, tag and digest together, a path out of the work directory, a
/// Secret that is not there.
#[tokio::test]
async fn mistakes_are_terminal_with_their_reasons() {
    let f = Fixture::new().await;
    write(f.dir(), "file.yaml", "a: 1\n");
    let repo = f.registry.repo("fleet/mistakes");
    let push = |path: &str| json!({"path": path, "repo": repo, "tag": "dev"});
    let message = assert_failure(
        f.run(&f.push(), push("missing")).await,
        Reason::FileNotFound,
        true,
    );
    assert!(message.contains("missing"), "{message}");
    assert_failure(
        f.run(&f.push(), push("file.yaml")).await,
        Reason::FileNotFound,
        true,
    );
    for path in ["../outside", "/etc"] {
        assert_failure(
            f.run(&f.push(), push(path)).await,
            Reason::InvalidConfig,
            true,
        );
    }
    std::os::unix::fs::symlink("/etc", f.dir().join("etc")).unwrap();
    let message = assert_failure(
        f.run(&f.push(), push("etc")).await,
        Reason::InvalidConfig,
        true,
    );
    assert!(message.contains("symbolic link"), "{message}");

    let digest = format!("sha256:{}", "a".repeat(64));
    let message = assert_failure(
        f.run(
            &f.pull(),
            json!({"repo": repo, "tag": "dev", "digest": digest, "out": "m"}),
        )
        .await,
        Reason::InvalidConfig,
        true,
    );
    assert!(message.contains("not both"), "{message}");
    for (with, words) in [
        (
            json!({"repo": repo, "digest": "sha256:short", "out": "m"}),
            "not a digest",
        ),
        (json!({"repo": repo, "tag": "dev", "out": "."}), "itself"),
        (
            json!({"repo": "https://registry.example.com/x", "tag": "dev", "out": "m"}),
            "not a repository",
        ),
        (
            json!({"repo": repo, "tag": "dev", "out": "m", "credentialsRef": {"name": "absent"}}),
            "does not exist",
        ),
    ] {
        let message = assert_failure(
            f.run(&f.pull(), with.clone()).await,
            Reason::InvalidConfig,
            true,
        );
        assert!(message.contains(words), "{with}: {message}");
    }
}

/// A gzip tar of raw entries `(name, type, link target, content)`, names and targets
/// written as they are.
fn raw_typed_layer(entries: &[(&str, tar::EntryType, &str, &[u8])]) -> Vec<u8> {
    let gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gzip);
    for (name, kind, target, content) in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.as_old_mut().linkname[..target.len()].copy_from_slice(target.as_bytes());
        header.set_entry_type(*kind);
        header.set_mode(0o644);
        header.set_size(content.len() as u64);
        header.set_cksum();
        tar.append(&header, *content).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// Links in an archive are never made, so nothing after them is written through one:
/// a symbolic link out of `out` followed by a file "inside" it, a link to an absolute
/// directory, a hard link to a file of the controller's. The files land as plain files
/// inside `out`, and nothing outside it is touched.
#[tokio::test]
async fn pull_never_writes_through_links_in_the_archive() {
    use tar::EntryType::{Directory, Link, Regular, Symlink};
    let f = Fixture::new().await;
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "mine\n").unwrap();
    let victim_name = victim.display().to_string();
    let outside_name = outside.path().display().to_string();
    let layer = raw_typed_layer(&[
        ("./", Directory, "", b""),
        ("up", Symlink, "../../..", b""),
        ("up/owned.yaml", Regular, "", b"owned\n"),
        ("abs", Symlink, &outside_name, b""),
        ("abs/victim", Regular, "", b"replaced\n"),
        ("hard", Link, &victim_name, b""),
        ("ok.yaml", Regular, "", b"ok\n"),
    ]);
    raw_artifact(&f.registry, "fleet/links", "dev", &layer).await;
    let pulled = f
        .run(
            &f.pull(),
            json!({"repo": f.registry.repo("fleet/links"), "tag": "dev", "out": "m/out",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {}", e.reason, e.message));
    assert_eq!(pulled.output.unwrap()["files"], json!(3));
    let out = f.dir().join("m/out");
    for dir in ["up", "abs"] {
        let metadata = std::fs::symlink_metadata(out.join(dir)).unwrap();
        assert!(metadata.is_dir(), "{dir} is a plain directory, not a link");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("up/owned.yaml")).unwrap(),
        "owned\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("abs/victim")).unwrap(),
        "replaced\n"
    );
    assert!(!out.join("hard").exists(), "no hard link is made");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    assert!(!f.dir().join("owned.yaml").exists());
    assert!(!f.dir().parent().unwrap().join("owned.yaml").exists());
}

/// A manifest that declares a layer larger than `oci-pull` takes is refused before the
/// layer is asked for: terminal, and `out` is left as it was (nothing emptied, nothing
/// half-written).
#[tokio::test]
async fn pull_refuses_a_layer_larger_than_it_takes_before_downloading_it() {
    let f = Fixture::new().await;
    let path = "fleet/huge";
    let (config, config_size) = f.registry.blob(path, b"{}").await;
    let (layer, _) = f
        .registry
        .blob(path, &raw_layer(&[("a.yaml", b"a: 1\n")]))
        .await;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": oci::FLUX_CONFIG, "digest": config, "size": config_size},
        "layers": [{"mediaType": oci::FLUX_CONTENT, "digest": layer, "size": oci::MAX_LAYER + 1}],
    });
    f.registry
        .manifest(path, "dev", OCI_MANIFEST, &manifest)
        .await;
    write(f.dir(), "out/keep.yaml", "kept\n");
    let message = assert_failure(
        f.run(
            &f.pull(),
            json!({"repo": f.registry.repo(path), "tag": "dev", "out": "out",
                   "credentialsRef": {"name": "registry"}}),
        )
        .await,
        Reason::RegistryFailed,
        true,
    );
    assert!(
        message.contains("more than the 256 MiB oci-pull takes"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(f.dir().join("out/keep.yaml")).unwrap(),
        "kept\n"
    );
    assert_eq!(std::fs::read_dir(f.dir().join("out")).unwrap().count(), 1);
    let asked = f.registry.requests("hecate-controller");
    assert!(
        !asked.iter().any(|r| r.contains("/blobs/")),
        "the layer was asked for: {asked:?}"
    );
}

/// A registry serving a manifest larger than the controller reads: refused, terminal.
#[tokio::test]
async fn pull_refuses_a_manifest_larger_than_it_reads() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let f = Fixture::new().await;
    let server = MockServer::start().await;
    let padding = "x".repeat(hecate_sources::oci::client::MAX_MANIFEST);
    let body = json!({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "padding": padding});
    Mock::given(method("GET"))
        .and(path("/v2/fleet/big/manifests/dev"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", OCI_MANIFEST)
                .set_body_bytes(body.to_string()),
        )
        .mount(&server)
        .await;
    let repo = format!("{}/fleet/big", server.address());
    let message = assert_failure(
        f.run(&f.pull(), json!({"repo": repo, "tag": "dev", "out": "out"}))
            .await,
        Reason::RegistryFailed,
        true,
    );
    assert!(
        message.contains("manifest dev of fleet/big is larger than the 4 MiB"),
        "{message}"
    );
    assert!(!f.dir().join("out").exists());
}
