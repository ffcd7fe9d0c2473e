//! The one OCI registry client of the controller: Beacons read tags and digests through
//! it, `oci-push` and `oci-pull` move artifacts through it, and all of them authenticate
//! the same way (docs/DECISIONS.md: one registry client, one credential reader).
//!
//! - [`Repository`]: a repository reference as people write it (`ghcr.io/acme/api`,
//!   `localhost:5000/app`, `nginx`), with Docker's defaults and the scheme to use;
//! - [`client`]: the distribution API over reqwest — tags, manifest digests, manifests
//!   and blobs both ways — answering the registry's authentication challenge (basic,
//!   or a Bearer token from its token service, anonymous when there are no
//!   credentials);
//! - [`credentials`]: what a `credentialsRef` Secret holds for a registry (spec
//!   controller.md §1.5): a `.dockerconfigjson` entry for the repository or its host,
//!   or `username` + `password`;
//! - [`cache`]: what Beacons remember between polls (how to authenticate, the digests
//!   of tags), so that an unchanged repository costs one request per poll, and polls of
//!   one repository at the same moment share an answer.
//!
//! Failures carry an [`ErrorKind`], so each user decides what they mean: a Beacon
//! reports them all as `ResolveFailed`, a step tells refused credentials (terminal) from
//! an unreachable registry (worth another crossing).

pub mod cache;
pub mod client;
pub mod credentials;

pub use cache::{Cache, Recheck};
pub use client::{Registry, Session};
pub use credentials::Basic;

use sha2::{Digest as _, Sha256};

/// How a registry conversation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The reference, digest or Secret is unusable as written: nothing was asked.
    Invalid,
    /// No answer: the registry or its token service could not be reached, or the
    /// connection broke.
    Unreachable,
    /// The registry or its token service refused these credentials (or their absence):
    /// 401 or 403.
    Denied,
    /// The registry has no such tag, manifest or blob.
    NotFound,
    /// Any other answer: a 5xx, a malformed body, content that does not match its
    /// digest.
    Failed,
    /// This machine could not read or write a file the conversation needed.
    Local,
    /// The registry's answer (a manifest, a tag list, a token, a layer) is larger than
    /// this controller reads: asking again gets the same answer.
    TooLarge,
}

/// A registry failure, in words, with its kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What happened.
    pub message: String,
}

impl Error {
    /// A failure of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }
}

/// A repository on a registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// `https` or, when the watch opts in, `http`.
    pub scheme: &'static str,
    /// The registry's API host (`registry-1.docker.io` for Docker Hub), with port.
    pub host: String,
    /// The registry as people name it (`docker.io`), for credentials lookups.
    pub registry: String,
    /// The repository path (`library/nginx`).
    pub path: String,
}

impl Repository {
    /// Parses `repo` (`ghcr.io/acme/api`, `localhost:5000/app`, `nginx`), with the
    /// scheme `insecure` asks for.
    pub fn parse(repo: &str, insecure: bool) -> Result<Self, Error> {
        let bad = |why: &str| Error::invalid(format!("{repo:?} is not a repository: {why}"));
        if repo.is_empty() || repo.contains("://") || repo.contains('@') {
            return Err(bad("expected host/path, without a scheme, tag or digest"));
        }
        let (first, rest) = match repo.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_string(), rest.to_string())
            }
            _ => ("docker.io".to_string(), repo.to_string()),
        };
        let path = if first == "docker.io" && !rest.contains('/') {
            format!("library/{rest}")
        } else {
            rest
        };
        let valid = path.split('/').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        });
        if !valid || path.contains(':') {
            return Err(bad(
                "path components are lower-case letters, digits, '.', '_' and '-'",
            ));
        }
        let host = if first == "docker.io" {
            "registry-1.docker.io".to_string()
        } else {
            first.clone()
        };
        Ok(Self {
            scheme: if insecure || is_loopback(&first) {
                "http"
            } else {
                "https"
            },
            host,
            registry: first,
            path,
        })
    }

    /// The API URL of `rest` (`tags/list`, `manifests/<ref>`, `blobs/<digest>`) in this
    /// repository.
    pub fn url(&self, rest: &str) -> String {
        format!("{}://{}/v2/{}/{rest}", self.scheme, self.host, self.path)
    }

    /// The registry's origin (`http://127.0.0.1:5000`), for relative locations.
    fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.host)
    }
}

/// Whether `registry` (host and optional port) is this machine: served over plain HTTP
/// without `insecure`, as the reference's registry library does (it goes further and
/// includes private networks; this does not).
fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => registry.split(':').next().unwrap_or(registry),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Checks a content digest as written (`sha256:<64 hex>` or `sha512:<128 hex>`, lower
/// case): one that is not goes into no URL.
pub fn check_digest(digest: &str) -> Result<(), String> {
    let valid = match digest.split_once(':') {
        Some(("sha256", hex)) => is_lower_hex(hex, 64),
        Some(("sha512", hex)) => is_lower_hex(hex, 128),
        _ => false,
    };
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{digest:?} is not a digest (sha256:<64 hex digits> or sha512:<128>)"
        ))
    }
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks a tag as the distribution spec allows it: a letter, digit or `_`, then up to
/// 127 letters, digits, `_`, `.` or `-`.
pub fn check_tag(tag: &str) -> Result<(), String> {
    let mut bytes = tag.bytes();
    let first = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    let rest = bytes.all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if first && rest && tag.len() <= 128 {
        Ok(())
    } else {
        Err(format!(
            "{tag:?} is not a tag (up to 128 letters, digits, '_', '.' and '-', not starting \
             with '.' or '-')"
        ))
    }
}

/// The `sha256:` digest of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_default_as_docker_does() {
        let cases = [
            (
                "nginx",
                "https",
                "registry-1.docker.io",
                "docker.io",
                "library/nginx",
            ),
            (
                "acme/api",
                "https",
                "registry-1.docker.io",
                "docker.io",
                "acme/api",
            ),
            (
                "docker.io/nginx",
                "https",
                "registry-1.docker.io",
                "docker.io",
                "library/nginx",
            ),
            (
                "ghcr.io/acme/api",
                "https",
                "ghcr.io",
                "ghcr.io",
                "acme/api",
            ),
            ("localhost/app", "http", "localhost", "localhost", "app"),
            (
                "127.0.0.1:5000/team/app",
                "http",
                "127.0.0.1:5000",
                "127.0.0.1:5000",
                "team/app",
            ),
            ("[::1]:5000/app", "http", "[::1]:5000", "[::1]:5000", "app"),
            (
                "10.0.0.8:5000/app",
                "https",
                "10.0.0.8:5000",
                "10.0.0.8:5000",
                "app",
            ),
        ];
        for (repo, scheme, host, registry, path) in cases {
            let parsed = Repository::parse(repo, false).unwrap_or_else(|e| panic!("{repo}: {e}"));
            assert_eq!(
                (
                    parsed.scheme,
                    parsed.host.as_str(),
                    parsed.registry.as_str(),
                    parsed.path.as_str()
                ),
                (scheme, host, registry, path),
                "{repo}"
            );
        }
        assert_eq!(
            Repository::parse("registry.lan:5000/app", true).map(|r| r.scheme),
            Ok("http")
        );
        for bad in [
            "",
            "https://ghcr.io/acme/api",
            "oci://ghcr.io/acme/api",
            "ghcr.io/acme/api:1.0",
            "ghcr.io/Acme/api",
            "ghcr.io//api",
            "x@sha256:aa",
        ] {
            let error = Repository::parse(bad, false).expect_err(bad);
            assert_eq!(error.kind, ErrorKind::Invalid, "{bad:?}");
        }
    }

    #[test]
    fn digests_and_tags_are_checked_before_they_reach_a_url() {
        let sha256 = format!("sha256:{}", "ab".repeat(32));
        let sha512 = format!("sha512:{}", "0f".repeat(64));
        assert_eq!(check_digest(&sha256), Ok(()));
        assert_eq!(check_digest(&sha512), Ok(()));
        for bad in [
            "",
            "sha256:",
            "sha256:AB",
            &format!("sha256:{}", "AB".repeat(32)),
            &format!("sha256:{}/../x", "ab".repeat(31)),
            &format!("md5:{}", "ab".repeat(16)),
            &format!("sha512:{}", "ab".repeat(32)),
        ] {
            assert!(check_digest(bad).is_err(), "{bad:?}");
        }
        for good in ["dev", "1.2.3", "v1.0.0-rc.1", "_x", "A_b-c.d"] {
            assert_eq!(check_tag(good), Ok(()), "{good}");
        }
        let long = "a".repeat(129);
        for bad in ["", ".x", "-x", "a/b", "a:b", "a b", long.as_str()] {
            assert!(check_tag(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sha256_digests_are_prefixed() {
        assert_eq!(
            sha256_digest(b"{}"),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
