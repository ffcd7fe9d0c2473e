//! A small OCI distribution client for Beacons: list a repository's tags and resolve
//! a tag to the digest a node would pull — for a multi-arch image, the index's.
//!
//! Authentication follows the registry's challenge: anonymous first; on `401` with a
//! `Bearer` challenge, a token from the named realm (with basic credentials when the
//! Beacon has some, anonymously otherwise — the anonymous token flow public registries
//! use); on a `Basic` challenge, the credentials directly. A token is kept for the
//! rest of one resolution. Repository names default as Docker does: `nginx` is
//! `docker.io/library/nginx`, served by `registry-1.docker.io`. Registries speak HTTPS
//! unless the watch says `insecure` or the registry is this machine (loopback).

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, LINK, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::credentials::Basic;
use super::source::ResolveError;

/// What a manifest request accepts: indexes first, so a multi-arch tag resolves to its
/// index, the digest every node pulls from.
const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// The most tag-list pages followed (at 1000 tags a page).
const MAX_PAGES: usize = 100;

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
    pub fn parse(repo: &str, insecure: bool) -> Result<Self, ResolveError> {
        let bad = |why: &str| ResolveError::failed(format!("{repo:?} is not a repository: {why}"));
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

    fn url(&self, rest: &str) -> String {
        format!("{}://{}/v2/{}/{rest}", self.scheme, self.host, self.path)
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

/// Talks to registries.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    http: reqwest::Client,
}

impl Registry {
    /// A registry client over `http` (its TLS roots, timeouts, proxies).
    pub fn new(http: reqwest::Client) -> Self {
        Self { http }
    }

    /// A conversation about `repo` with `auth` (none: anonymous): the token one request
    /// earns serves the next, so a poll asks the token service once.
    pub fn session<'a>(&'a self, repo: &'a Repository, auth: Option<&'a Basic>) -> Session<'a> {
        Session {
            http: &self.http,
            repo,
            basic: auth,
            authorization: None,
        }
    }
}

impl Session<'_> {
    /// Every tag of the repository.
    pub async fn tags(&mut self) -> Result<Vec<String>, ResolveError> {
        #[derive(Deserialize)]
        struct TagList {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let repo = self.repo;
        let mut url = repo.url("tags/list?n=1000");
        let mut tags = Vec::new();
        for _ in 0..MAX_PAGES {
            let response = self.send(Method::GET, &url, None).await?;
            let next = next_page(response.headers(), &url);
            let body = response.bytes().await.map_err(|e| {
                ResolveError::failed(format!("reading the tags of {}: {e}", repo.path))
            })?;
            let list: TagList = serde_json::from_slice(&body).map_err(|e| {
                ResolveError::failed(format!("the tag list of {} is not valid: {e}", repo.path))
            })?;
            tags.extend(list.tags.unwrap_or_default());
            match next {
                Some(next) => url = next,
                None => return Ok(tags),
            }
        }
        Ok(tags)
    }

    /// The digest of the manifest (or index) `tag` names.
    pub async fn digest(&mut self, tag: &str) -> Result<String, ResolveError> {
        let repo = self.repo;
        let url = repo.url(&format!("manifests/{tag}"));
        let response = self.send(Method::HEAD, &url, Some(MANIFEST_TYPES)).await?;
        if let Some(digest) = content_digest(response.headers()) {
            return Ok(digest);
        }
        // Not every registry says on HEAD: fetch the manifest and hash it.
        let response = self.send(Method::GET, &url, Some(MANIFEST_TYPES)).await?;
        if let Some(digest) = content_digest(response.headers()) {
            return Ok(digest);
        }
        let body = response.bytes().await.map_err(|e| {
            ResolveError::failed(format!("reading manifest {tag} of {}: {e}", repo.path))
        })?;
        Ok(format!("sha256:{}", hex::encode(Sha256::digest(&body))))
    }
}

fn content_digest(headers: &HeaderMap) -> Option<String> {
    headers
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|d| d.starts_with("sha256:") || d.starts_with("sha512:"))
        .map(String::from)
}

/// The next page of a paginated list: a `Link: <…>; rel="next"` header, relative to
/// `current`'s origin.
fn next_page(headers: &HeaderMap, current: &str) -> Option<String> {
    let link = headers.get(LINK)?.to_str().ok()?;
    let target = link
        .split(',')
        .find(|part| part.contains("rel=\"next\"") || part.contains("rel=next"))?;
    let start = target.find('<')? + 1;
    let end = target.find('>')?;
    let target = target.get(start..end)?;
    if target.contains("://") {
        return Some(target.to_string());
    }
    let origin_end = current.find("://").map(|i| i + 3)?;
    let host_end = current[origin_end..]
        .find('/')
        .map_or(current.len(), |i| origin_end + i);
    Some(format!("{}{target}", &current[..host_end]))
}

/// One resolution's conversation with a registry: the token it earned, kept.
pub struct Session<'a> {
    http: &'a reqwest::Client,
    repo: &'a Repository,
    basic: Option<&'a Basic>,
    authorization: Option<String>,
}

impl Session<'_> {
    /// Sends a request, answering one authentication challenge; anything but a
    /// success is an error in words.
    async fn send(
        &mut self,
        method: Method,
        url: &str,
        accept: Option<&str>,
    ) -> Result<reqwest::Response, ResolveError> {
        let mut answered = false;
        loop {
            let mut request = self.http.request(method.clone(), url);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(authorization) = &self.authorization {
                request = request.header(AUTHORIZATION, authorization);
            }
            let response = request.send().await.map_err(|e| {
                ResolveError::failed(format!(
                    "{} is unreachable: {}",
                    self.repo.registry,
                    describe(&e)
                ))
            })?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            if status == StatusCode::UNAUTHORIZED && !answered {
                answered = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                self.authorization = Some(self.answer(&challenge).await?);
                continue;
            }
            return Err(self.refusal(status, url));
        }
    }

    fn refusal(&self, status: StatusCode, url: &str) -> ResolveError {
        let what = url.rsplit("/v2/").next().unwrap_or(url);
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ResolveError::failed(format!(
                "{} refused access to {} ({status}){}",
                self.repo.registry,
                self.repo.path,
                if self.basic.is_some() {
                    ": check the credentials Secret"
                } else {
                    ": it needs credentials (credentialsRef)"
                }
            )),
            StatusCode::NOT_FOUND => {
                ResolveError::failed(format!("{} has no {what}", self.repo.registry))
            }
            _ => ResolveError::failed(format!(
                "{} answered {status} for {what}",
                self.repo.registry
            )),
        }
    }

    /// The `Authorization` value that answers `challenge`.
    async fn answer(&self, challenge: &str) -> Result<String, ResolveError> {
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            return match self.basic {
                Some(basic) => Ok(basic_header(basic)),
                None => Err(ResolveError::failed(format!(
                    "{} wants a user name and password: set credentialsRef",
                    self.repo.registry
                ))),
            };
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ResolveError::failed(format!(
                "{} asks for authentication this controller does not speak ({challenge:?})",
                self.repo.registry
            )));
        }
        let realm = params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("realm"))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                ResolveError::failed(format!(
                    "{}: a Bearer challenge without a realm",
                    self.repo.registry
                ))
            })?;
        let mut query: Vec<(String, String)> = params
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("service"))
            .cloned()
            .collect();
        let scope = params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("scope"))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| format!("repository:{}:pull", self.repo.path));
        query.push(("scope".into(), scope));
        let mut request = self.http.get(&realm).query(&query);
        if let Some(basic) = self.basic {
            request = request.header(AUTHORIZATION, basic_header(basic));
        }
        let response = request.send().await.map_err(|e| {
            ResolveError::failed(format!(
                "the token service of {} is unreachable: {}",
                self.repo.registry,
                describe(&e)
            ))
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(ResolveError::failed(format!(
                "{} refused a token for {} ({status}){}",
                self.repo.registry,
                self.repo.path,
                if self.basic.is_some() {
                    ": check the credentials Secret"
                } else {
                    ""
                }
            )));
        }
        #[derive(Deserialize)]
        struct Token {
            #[serde(default)]
            token: String,
            #[serde(default)]
            access_token: String,
        }
        let body = response.bytes().await.map_err(|e| {
            ResolveError::failed(format!("reading a token from {}: {e}", self.repo.registry))
        })?;
        let token: Token = serde_json::from_slice(&body).map_err(|e| {
            ResolveError::failed(format!(
                "a token from {} is not valid: {e}",
                self.repo.registry
            ))
        })?;
        let token = if token.token.is_empty() {
            token.access_token
        } else {
            token.token
        };
        if token.is_empty() {
            return Err(ResolveError::failed(format!(
                "{} gave an empty token",
                self.repo.registry
            )));
        }
        Ok(format!("Bearer {token}"))
    }
}

fn basic_header(basic: &Basic) -> String {
    use base64::Engine as _;
    let pair = format!("{}:{}", basic.username, basic.password);
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// A request error in words, with its cause (reqwest's own text is terse).
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `Bearer realm="…",service="…",scope="…"` into its scheme and parameters.
fn parse_challenge(header: &str) -> (String, Vec<(String, String)>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.peek().copied() {
                if c == ',' {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        params.push((key.trim().to_string(), value.trim().to_string()));
    }
    (scheme.to_string(), params)
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

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
            "ghcr.io/acme/api:1.0",
            "ghcr.io/Acme/api",
            "ghcr.io//api",
            "x@sha256:aa",
        ] {
            assert!(Repository::parse(bad, false).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn challenges_parse() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull,push""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(
            params,
            [
                (
                    "realm".to_string(),
                    "https://auth.docker.io/token".to_string()
                ),
                ("service".into(), "registry.docker.io".into()),
                ("scope".into(), "repository:library/nginx:pull,push".into()),
            ]
        );
        let (scheme, params) = parse_challenge(r#"Basic realm="Registry Realm""#);
        assert_eq!((scheme.as_str(), params.len()), ("Basic", 1));
        assert_eq!(parse_challenge("").1, []);
    }

    #[test]
    fn pages_follow_the_link_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            LINK,
            HeaderValue::from_static(r#"</v2/app/tags/list?n=1000&last=v9>; rel="next""#),
        );
        assert_eq!(
            next_page(&headers, "http://127.0.0.1:5000/v2/app/tags/list?n=1000").as_deref(),
            Some("http://127.0.0.1:5000/v2/app/tags/list?n=1000&last=v9")
        );
        assert_eq!(next_page(&HeaderMap::new(), "http://x/v2/a"), None);
    }
}
