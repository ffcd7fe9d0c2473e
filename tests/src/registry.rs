//! A real OCI registry on loopback for tests: CNCF Distribution, as Debian packages it
//! (`docker-registry`; `cargo xtask test` installs it), with its own storage in a
//! temporary directory and, when asked, htpasswd authentication for one user,
//! [`USER`] with [`PASSWORD`].
//!
//! Besides starting and stopping it, [`Distribution`] writes to it by raw HTTP — blobs,
//! manifests, one-layer images, multi-arch indexes, and many tags of one image at the
//! cost of one small request each — so a test sets up exactly the content it needs
//! without any client under test. Its access log (kept in the registry's directory,
//! across restarts) says what every client asked: [`Distribution::requests`] lists
//! one client's requests by its `User-Agent`, so a test can count them on the wire.
//!
//! ```no_run
//! # async fn example() {
//! let registry = hecate_testenv::registry::Distribution::start(true).await;
//! let (digest, _) = registry.image("team/app", "1.0.0", "one").await;
//! let repo = registry.repo("team/app"); // 127.0.0.1:<port>/team/app
//! # }
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

/// The one user of a registry started with authentication.
pub const USER: &str = "bot";
/// [`USER`]'s password.
pub const PASSWORD: &str = "s3cret";
/// `bot:<bcrypt of s3cret, cost 4>`.
const HTPASSWD: &str = "bot:$2b$04$BGt7ZGXUt.14I0teunacWeiZdVM1mhf9xiqwjJgWN9ECGJZ0qmaIq\n";

/// The OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI image index media type.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// Where Debian installs Distribution.
const BINARY: &str = "/usr/bin/docker-registry";

/// The access log's file, in the registry's directory.
const ACCESS_LOG: &str = "access.log";

/// A `docker-registry` process with its own storage, on a loopback port. It is killed
/// when dropped.
pub struct Distribution {
    dir: tempfile::TempDir,
    /// Where it listens.
    pub addr: SocketAddr,
    auth: bool,
    child: Option<tokio::process::Child>,
    http: reqwest::Client,
}

impl Distribution {
    /// Starts a registry; with `auth`, only [`USER`] may read or write.
    ///
    /// # Panics
    ///
    /// When Distribution is not installed or does not start within 10 s.
    pub async fn start(auth: bool) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let mut registry = Self {
            dir: tempfile::tempdir().expect("a temporary directory"),
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            auth,
            child: None,
            http: reqwest::Client::new(),
        };
        registry.restart().await;
        registry
    }

    /// Starts the process again (after [`Distribution::stop`]), on the same port with
    /// the same storage.
    ///
    /// # Panics
    ///
    /// As [`Distribution::start`].
    pub async fn restart(&mut self) {
        let binary = PathBuf::from(BINARY);
        assert!(
            binary.exists(),
            "these tests need CNCF Distribution: apt-get install -y docker-registry \
             (cargo xtask test installs it)"
        );
        let dir = self.dir.path();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {}\n  secret: test\n",
            dir.join("storage").display(),
            self.addr
        );
        if self.auth {
            std::fs::write(dir.join("htpasswd"), HTPASSWD).expect("writing htpasswd");
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                dir.join("htpasswd").display()
            ));
        }
        std::fs::write(dir.join("config.yml"), config).expect("writing the registry config");
        // Distribution writes its access log (one line per request, after the handler
        // and before the response's last bytes) to stdout.
        let access_log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(ACCESS_LOG))
            .expect("opening the access log");
        let child = tokio::process::Command::new(binary)
            .arg("serve")
            .arg(dir.join("config.yml"))
            .stdout(access_log)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("starting docker-registry");
        self.child = Some(child);
        let url = format!("http://{}/v2/", self.addr);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(response) = self.http.get(&url).send().await
                && matches!(response.status().as_u16(), 200 | 401)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the registry did not answer on {url} within 10 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the process (the storage stays).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("stopping docker-registry");
        }
    }

    /// The requests whose `User-Agent` starts with `agent`, oldest first, as
    /// `<method> <path and query> <status>` (`GET /v2/team/app/tags/list?n=1000 200`):
    /// what the registry served that client, from its access log.
    pub fn requests(&self, agent: &str) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.path().join(ACCESS_LOG)).unwrap_or_default();
        log.lines()
            .filter_map(access)
            .filter(|(_, user_agent)| user_agent.starts_with(agent))
            .map(|(request, _)| request)
            .collect()
    }

    /// `127.0.0.1:<port>/<path>`: a repository as a watch or a step names it.
    pub fn repo(&self, path: &str) -> String {
        format!("{}/{path}", self.addr)
    }

    /// `http://127.0.0.1:<port>/v2/<path>/<rest>`.
    pub fn url(&self, path: &str, rest: &str) -> String {
        format!("http://{}/v2/{path}/{rest}", self.addr)
    }

    /// A request to the registry, as [`USER`] when it wants authentication.
    pub fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url);
        if self.auth {
            request.basic_auth(USER, Some(PASSWORD))
        } else {
            request
        }
    }

    /// The manifest `reference` (a tag or digest) of `path` names, exactly as stored:
    /// its bytes and `Content-Type`.
    ///
    /// # Panics
    ///
    /// When the registry does not serve it.
    pub async fn raw_manifest(&self, path: &str, reference: &str) -> (Vec<u8>, String) {
        let response = self
            .request(
                reqwest::Method::GET,
                &self.url(path, &format!("manifests/{reference}")),
            )
            .header(
                reqwest::header::ACCEPT,
                format!("{OCI_MANIFEST}, {OCI_INDEX}"),
            )
            .send()
            .await
            .expect("the registry answers");
        assert_eq!(response.status(), 200, "manifest {reference} of {path}");
        let media_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bytes = response.bytes().await.expect("the manifest's bytes");
        (bytes.to_vec(), media_type)
    }

    /// Blob `digest` of `path`, exactly as stored.
    ///
    /// # Panics
    ///
    /// When the registry does not serve it.
    pub async fn raw_blob(&self, path: &str, digest: &str) -> Vec<u8> {
        let response = self
            .request(
                reqwest::Method::GET,
                &self.url(path, &format!("blobs/{digest}")),
            )
            .send()
            .await
            .expect("the registry answers");
        assert_eq!(response.status(), 200, "blob {digest} of {path}");
        response.bytes().await.expect("the blob's bytes").to_vec()
    }

    /// Uploads a blob; its digest and size.
    ///
    /// # Panics
    ///
    /// When the registry refuses it.
    pub async fn blob(&self, path: &str, bytes: &[u8]) -> (String, usize) {
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(bytes)));
        let start = self
            .request(reqwest::Method::POST, &self.url(path, "blobs/uploads/"))
            .send()
            .await
            .expect("the registry answers");
        assert_eq!(start.status(), 202, "starting an upload");
        let location = start
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .expect("an upload location")
            .to_string();
        let location = if location.starts_with("http") {
            location
        } else {
            format!("http://{}{location}", self.addr)
        };
        let separator = if location.contains('?') { '&' } else { '?' };
        let done = self
            .request(
                reqwest::Method::PUT,
                &format!("{location}{separator}digest={digest}"),
            )
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes.to_vec())
            .send()
            .await
            .expect("the registry answers");
        assert_eq!(done.status(), 201, "finishing an upload");
        (digest, bytes.len())
    }

    /// Puts a manifest (or index) under `reference` (a tag or digest); its digest and
    /// size.
    ///
    /// # Panics
    ///
    /// When the registry refuses it.
    pub async fn manifest(
        &self,
        path: &str,
        reference: &str,
        media_type: &str,
        body: &serde_json::Value,
    ) -> (String, usize) {
        let bytes = serde_json::to_vec(body).expect("JSON");
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
        let response = self
            .request(
                reqwest::Method::PUT,
                &self.url(path, &format!("manifests/{reference}")),
            )
            .header(reqwest::header::CONTENT_TYPE, media_type)
            .body(bytes.clone())
            .send()
            .await
            .expect("the registry answers");
        let status = response.status();
        assert_eq!(status, 201, "{}", response.text().await.unwrap_or_default());
        (digest, bytes.len())
    }

    /// Pushes a one-layer image whose content depends on `seed`, tagged `tag`; the
    /// manifest's digest and size.
    pub async fn image(&self, path: &str, tag: &str, seed: &str) -> (String, usize) {
        let (config, config_size) = self
            .blob(
                path,
                format!(r#"{{"architecture":"amd64","os":"linux","seed":"{seed}"}}"#).as_bytes(),
            )
            .await;
        let (layer, layer_size) = self.blob(path, format!("layer {seed}").as_bytes()).await;
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config, "size": config_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer, "size": layer_size}],
        });
        self.manifest(path, tag, OCI_MANIFEST, &manifest).await
    }

    /// Pushes one small image (seeded by `path`) and tags it with every tag of `tags`:
    /// its blobs and manifest once, then one manifest `PUT` per tag. The manifest's
    /// digest.
    ///
    /// # Panics
    ///
    /// When the registry refuses a write.
    pub async fn tag_all(&self, path: &str, tags: &[String]) -> String {
        let Some((first, rest)) = tags.split_first() else {
            panic!("no tags to push to {path}");
        };
        self.image(path, first, path).await;
        let (manifest, media_type) = self.raw_manifest(path, first).await;
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(&manifest)));
        for tag in rest {
            let response = self
                .request(
                    reqwest::Method::PUT,
                    &self.url(path, &format!("manifests/{tag}")),
                )
                .header(reqwest::header::CONTENT_TYPE, &media_type)
                .body(manifest.clone())
                .send()
                .await
                .expect("the registry answers");
            assert_eq!(response.status(), 201, "tagging {path}:{tag}");
        }
        digest
    }

    /// Pushes a two-platform image under `tag`: the index's digest.
    pub async fn multi_arch(&self, path: &str, tag: &str, seed: &str) -> String {
        let amd64 = self
            .image(path, &format!("{tag}-amd64"), &format!("{seed}-amd64"))
            .await;
        let arm64 = self
            .image(path, &format!("{tag}-arm64"), &format!("{seed}-arm64"))
            .await;
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {"mediaType": OCI_MANIFEST, "digest": amd64.0, "size": amd64.1, "platform": {"architecture": "amd64", "os": "linux"}},
                {"mediaType": OCI_MANIFEST, "digest": arm64.0, "size": arm64.1, "platform": {"architecture": "arm64", "os": "linux"}},
            ],
        });
        self.manifest(path, tag, OCI_INDEX, &index).await.0
    }
}

/// One line of Distribution's access log (the combined log format: `host - user [time]
/// "METHOD URI PROTOCOL" status size "referer" "user agent"`) as (`METHOD URI status`,
/// user agent).
fn access(line: &str) -> Option<(String, String)> {
    let mut quoted = line.split('"');
    let _host_and_time = quoted.next()?;
    let request = quoted.next()?;
    let status = quoted.next()?.split_whitespace().next()?;
    let user_agent = line.rsplit('"').nth(1)?;
    let mut words = request.split_whitespace();
    let (method, uri) = (words.next()?, words.next()?);
    Some((format!("{method} {uri} {status}"), user_agent.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_log_lines_parse() {
        let line = r#"127.0.0.1 - - [01/Dec/2026:05:45:38 +0000] "GET /v2/app/tags/list?n=1000 HTTP/1.1" 200 6101 "" "hecate-controller/0.1.0""#;
        assert_eq!(
            access(line),
            Some((
                "GET /v2/app/tags/list?n=1000 200".to_string(),
                "hecate-controller/0.1.0".to_string()
            ))
        );
        assert_eq!(access("time=\"…\" level=info msg=x"), None);
    }
}
