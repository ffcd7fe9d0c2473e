//! The OCI distribution API over reqwest: list a repository's tags, resolve a tag to
//! the digest a node would pull (for a multi-arch image, the index's), and move
//! manifests and blobs both ways.
//!
//! Authentication follows the registry's challenge: anonymous first; on `401` with a
//! `Bearer` challenge, a token from the named realm (with basic credentials when there
//! are some, anonymously otherwise — the anonymous token flow public registries use);
//! on a `Basic` challenge, the credentials directly. A [`Session`] keeps its token for
//! the rest of the conversation and asks again when a later request needs more (a push
//! after a pull). What a session learned about authenticating ([`Authentication`]: the
//! header that worked, until when, and the challenge) can begin the next one, so that a
//! caller who remembers it ([`super::cache`]) neither repeats the anonymous `401` nor,
//! while a token lasts, asks the token service again.
//!
//! Repository names default as Docker does: `nginx` is `docker.io/library/nginx`,
//! served by `registry-1.docker.io`. Registries speak HTTPS unless the caller says
//! `insecure` or the registry is this machine (loopback); the servers trusted are the
//! ones [`crate::tls`] says.
//!
//! Blobs are streamed: an upload reads its content in [`CHUNK`]-sized pieces (one
//! request when it fits, chunked `PATCH`es otherwise) and a download is written out as
//! it arrives, checked against its digest and a size limit.

use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_RANGE, CONTENT_TYPE, HeaderMap, LINK, LOCATION, WWW_AUTHENTICATE,
};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use sha2::{Digest as _, Sha256, Sha512};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

use super::credentials::Basic;
use super::{Error, ErrorKind, Repository};

/// What a manifest request accepts: indexes first, so a multi-arch tag resolves to its
/// index, the digest every node pulls from.
pub const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// The most tag-list pages followed (at 1000 tags a page).
const MAX_PAGES: usize = 100;

/// The largest manifest read (Distribution's own limit is 4 MiB).
pub const MAX_MANIFEST: usize = 4 * 1024 * 1024;

/// The largest page of a tag list read (a registry that ignores `?n=` sends every tag
/// at once: 16 MiB is some 200,000 tags).
pub const MAX_TAG_PAGE: usize = 16 * 1024 * 1024;

/// The largest answer of a token service read (a token is a few KiB).
pub const MAX_TOKEN: usize = 1024 * 1024;

/// The most bytes of a blob sent in one request.
pub const CHUNK: usize = 8 * 1024 * 1024;

const OCTET_STREAM: &str = "application/octet-stream";

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
            expires: None,
            challenge: None,
            actions: "pull",
        }
    }
}

/// How a repository wanted to be authenticated, as one conversation learned it: the
/// `Authorization` value it accepted (a Bearer token until it expires, or basic
/// credentials) and the challenge that asked for it. Never shown: the value is a
/// secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Authentication {
    authorization: Option<String>,
    expires: Option<Instant>,
    challenge: Option<String>,
}

impl std::fmt::Debug for Authentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authentication")
            .field("authorization", &self.authorization.as_ref().map(|_| "***"))
            .field("expires", &self.expires)
            .field("challenge", &self.challenge)
            .finish()
    }
}

/// One conversation with a registry about one repository: the token it earned, kept.
pub struct Session<'a> {
    http: &'a reqwest::Client,
    repo: &'a Repository,
    basic: Option<&'a Basic>,
    authorization: Option<String>,
    /// When `authorization` (a token) stops being good; `None`: it does not expire.
    expires: Option<Instant>,
    /// The last authentication challenge the registry sent.
    challenge: Option<String>,
    /// The token scope's actions when a challenge names none.
    actions: &'static str,
}

/// A manifest as the registry stored it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Its bytes, exactly as served (its digest is theirs).
    pub bytes: Bytes,
    /// Its `Content-Type`, when the registry said.
    pub media_type: Option<String>,
}

/// One request, kept so it can be sent again after an authentication challenge.
struct Call<'u> {
    method: Method,
    url: &'u str,
    accept: Option<&'static str>,
    body: Option<(&'static str, Bytes)>,
    range: Option<String>,
}

impl<'u> Call<'u> {
    fn new(method: Method, url: &'u str) -> Self {
        Self {
            method,
            url,
            accept: None,
            body: None,
            range: None,
        }
    }

    fn accept(mut self, accept: &'static str) -> Self {
        self.accept = Some(accept);
        self
    }

    fn body(mut self, content_type: &'static str, body: Bytes) -> Self {
        self.body = Some((content_type, body));
        self
    }
}

impl Session<'_> {
    /// The same conversation, allowed to write: a token it asks for covers pushing.
    #[must_use]
    pub fn for_push(mut self) -> Self {
        self.actions = "pull,push";
        self
    }

    /// The same conversation, begun with what an earlier one with the same repository
    /// and credentials learned.
    #[must_use]
    pub fn resume(mut self, learned: Authentication) -> Self {
        self.authorization = learned.authorization;
        self.expires = learned.expires;
        self.challenge = learned.challenge;
        self
    }

    /// What this conversation has learned about authenticating, for the next one.
    pub fn learned(&self) -> Authentication {
        Authentication {
            authorization: self.authorization.clone(),
            expires: self.expires,
            challenge: self.challenge.clone(),
        }
    }

    /// Every tag of the repository.
    pub async fn tags(&mut self) -> Result<Vec<String>, Error> {
        #[derive(Deserialize)]
        struct TagList {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let repo = self.repo;
        let mut url = repo.url("tags/list?n=1000");
        let mut tags = Vec::new();
        for _ in 0..MAX_PAGES {
            let response = self.send(Call::new(Method::GET, &url)).await?;
            let next = next_page(response.headers(), &url);
            let body = read_capped(response, MAX_TAG_PAGE)
                .await
                .map_err(|e| e.into_error(&format!("the tag list of {}", repo.path)))?;
            let list: TagList = serde_json::from_slice(&body).map_err(|e| {
                Error::new(
                    ErrorKind::Failed,
                    format!("the tag list of {} is not valid: {e}", repo.path),
                )
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
    pub async fn digest(&mut self, tag: &str) -> Result<String, Error> {
        let repo = self.repo;
        let url = repo.url(&format!("manifests/{tag}"));
        let response = self
            .send(Call::new(Method::HEAD, &url).accept(MANIFEST_TYPES))
            .await?;
        if let Some(digest) = content_digest(response.headers()) {
            return Ok(digest);
        }
        // Not every registry says on HEAD: fetch the manifest and hash it.
        let response = self
            .send(Call::new(Method::GET, &url).accept(MANIFEST_TYPES))
            .await?;
        if let Some(digest) = content_digest(response.headers()) {
            return Ok(digest);
        }
        let body = read_capped(response, MAX_MANIFEST)
            .await
            .map_err(|e| e.into_error(&format!("manifest {tag} of {}", repo.path)))?;
        Ok(super::sha256_digest(&body))
    }

    /// The manifest `reference` (a tag or a digest) names, as one of `accept`'s media
    /// types, at most [`MAX_MANIFEST`] bytes. Fetched by digest, it must hash to it.
    pub async fn manifest(
        &mut self,
        reference: &str,
        accept: &'static str,
    ) -> Result<Manifest, Error> {
        let url = self.repo.url(&format!("manifests/{reference}"));
        let response = self
            .send(Call::new(Method::GET, &url).accept(accept))
            .await?;
        let media_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        let body = read_capped(response, MAX_MANIFEST)
            .await
            .map_err(|e| match e {
                Capped::Broken(e) => self.broken(&url, &e),
                too_large => {
                    too_large.into_error(&format!("manifest {reference} of {}", self.repo.path))
                }
            })?;
        if super::check_digest(reference).is_ok() {
            let mut hasher = Hasher::for_digest(reference);
            hasher.update(&body);
            if hasher.digest() != reference {
                return Err(Error::new(
                    ErrorKind::Failed,
                    format!(
                        "{} served a manifest for {reference} that does not match that digest",
                        self.repo.registry
                    ),
                ));
            }
        }
        Ok(Manifest {
            bytes: body.into(),
            media_type,
        })
    }

    /// Stores `manifest` (of `media_type`) under `reference` (a tag or its digest); the
    /// manifest's digest.
    pub async fn put_manifest(
        &mut self,
        reference: &str,
        media_type: &'static str,
        manifest: Bytes,
    ) -> Result<String, Error> {
        let digest = super::sha256_digest(&manifest);
        let url = self.repo.url(&format!("manifests/{reference}"));
        self.send(Call::new(Method::PUT, &url).body(media_type, manifest))
            .await?;
        Ok(digest)
    }

    /// Whether the repository already holds blob `digest`.
    pub async fn has_blob(&mut self, digest: &str) -> Result<bool, Error> {
        let url = self.repo.url(&format!("blobs/{digest}"));
        let response = self.exchange(&Call::new(Method::HEAD, &url)).await?;
        match response.status() {
            status if status.is_success() => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            status => Err(self.refusal(status, &url)),
        }
    }

    /// Uploads blob `digest`, `size` bytes read from `content`, unless the repository
    /// already holds it; whether it was sent. One request carries up to [`CHUNK`]
    /// bytes: a small blob is a `POST` and a `PUT`, a larger one adds `PATCH`es.
    pub async fn push_blob<R: AsyncRead + Unpin>(
        &mut self,
        digest: &str,
        size: u64,
        mut content: R,
    ) -> Result<bool, Error> {
        if self.has_blob(digest).await? {
            return Ok(false);
        }
        let start = self.repo.url("blobs/uploads/");
        let response = self
            .send(Call::new(Method::POST, &start).body(OCTET_STREAM, Bytes::new()))
            .await?;
        let mut location = self.location(response.headers())?;
        let mut sent = 0u64;
        loop {
            let chunk = read_chunk(&mut content, CHUNK)
                .await
                .map_err(|e| Error::new(ErrorKind::Local, format!("reading blob {digest}: {e}")))?;
            let end = sent + chunk.len() as u64;
            if end > size || (chunk.is_empty() && end < size) {
                return Err(Error::new(
                    ErrorKind::Local,
                    format!("blob {digest} is not the {size} bytes it was said to be"),
                ));
            }
            if end == size {
                let separator = if location.contains('?') { '&' } else { '?' };
                let url = format!("{location}{separator}digest={digest}");
                self.send(Call::new(Method::PUT, &url).body(OCTET_STREAM, chunk))
                    .await?;
                return Ok(true);
            }
            let mut call = Call::new(Method::PATCH, &location).body(OCTET_STREAM, chunk);
            call.range = Some(format!("{sent}-{}", end - 1));
            let response = self.send(call).await?;
            location = self.location(response.headers())?;
            sent = end;
        }
    }

    /// Writes blob `digest` into `sink` as it arrives, refusing more than `limit` bytes
    /// and content that does not hash to `digest`; the number of bytes.
    pub async fn fetch_blob<W: AsyncWrite + Unpin>(
        &mut self,
        digest: &str,
        limit: u64,
        sink: &mut W,
    ) -> Result<u64, Error> {
        let url = self.repo.url(&format!("blobs/{digest}"));
        let mut response = self.send(Call::new(Method::GET, &url)).await?;
        if let Some(length) = response.content_length().filter(|length| *length > limit) {
            return Err(Error::new(
                ErrorKind::Failed,
                format!(
                    "{} would send {length} bytes for blob {digest}, which should have {limit}",
                    self.repo.registry
                ),
            ));
        }
        let mut hasher = Hasher::for_digest(digest);
        let mut size = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| self.broken(&url, &e))? {
            size += chunk.len() as u64;
            if size > limit {
                return Err(Error::new(
                    ErrorKind::Failed,
                    format!(
                        "{} served more than the {limit} bytes blob {digest} should have",
                        self.repo.registry
                    ),
                ));
            }
            hasher.update(&chunk);
            sink.write_all(&chunk)
                .await
                .map_err(|e| Error::new(ErrorKind::Local, format!("writing blob {digest}: {e}")))?;
        }
        sink.flush()
            .await
            .map_err(|e| Error::new(ErrorKind::Local, format!("writing blob {digest}: {e}")))?;
        if hasher.digest() != digest {
            return Err(Error::new(
                ErrorKind::Failed,
                format!(
                    "{} served content for blob {digest} that does not match that digest",
                    self.repo.registry
                ),
            ));
        }
        Ok(size)
    }

    /// An upload's next URL, from the answer's `Location` (absolute or relative).
    fn location(&self, headers: &HeaderMap) -> Result<String, Error> {
        let location = headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Failed,
                    format!(
                        "{} started an upload without saying where to send it",
                        self.repo.registry
                    ),
                )
            })?;
        if location.starts_with("http://") || location.starts_with("https://") {
            Ok(location.to_string())
        } else if location.starts_with('/') {
            Ok(format!("{}{location}", self.repo.origin()))
        } else {
            Err(Error::new(
                ErrorKind::Failed,
                format!(
                    "{} gave an upload location this client cannot follow: {location:?}",
                    self.repo.registry
                ),
            ))
        }
    }

    /// A response whose body broke off.
    fn broken(&self, url: &str, error: &reqwest::Error) -> Error {
        let what = url.rsplit("/v2/").next().unwrap_or(url);
        Error::new(
            ErrorKind::Unreachable,
            format!(
                "{} broke off while sending {what}: {}",
                self.repo.registry,
                describe(error)
            ),
        )
    }

    /// Sends `call`; anything but a success is an error in words.
    async fn send(&mut self, call: Call<'_>) -> Result<reqwest::Response, Error> {
        let response = self.exchange(&call).await?;
        let status = response.status();
        if status.is_success() {
            Ok(response)
        } else {
            Err(self.refusal(status, call.url))
        }
    }

    /// Sends `call`, answering one authentication challenge: the answer, whatever its
    /// status.
    async fn exchange(&mut self, call: &Call<'_>) -> Result<reqwest::Response, Error> {
        if self
            .expires
            .is_some_and(|expires| expires <= Instant::now())
        {
            self.authorization = None;
            self.expires = None;
        }
        if self.authorization.is_none()
            && let Some(challenge) = self.challenge.clone()
        {
            // Asked before: answer now rather than be refused first. Should the answer
            // fail, the request goes as it is and any challenge is answered as usual.
            if let Ok((authorization, lifetime)) = self.answer(&challenge).await {
                self.authorization = Some(authorization);
                self.expires = lifetime.map(|lifetime| Instant::now() + lifetime);
            }
        }
        let mut answered = false;
        loop {
            let mut request = self.http.request(call.method.clone(), call.url);
            if let Some(accept) = call.accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some((content_type, body)) = &call.body {
                request = request
                    .header(CONTENT_TYPE, *content_type)
                    .body(body.clone());
            }
            if let Some(range) = &call.range {
                request = request.header(CONTENT_RANGE, range);
            }
            if let Some(authorization) = &self.authorization {
                request = request.header(AUTHORIZATION, authorization);
            }
            let response = request.send().await.map_err(|e| {
                Error::new(
                    ErrorKind::Unreachable,
                    format!("{} is unreachable: {}", self.repo.registry, describe(&e)),
                )
            })?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !answered {
                answered = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let (authorization, lifetime) = self.answer(&challenge).await?;
                self.authorization = Some(authorization);
                self.expires = lifetime.map(|lifetime| Instant::now() + lifetime);
                self.challenge = Some(challenge);
                continue;
            }
            return Ok(response);
        }
    }

    fn refusal(&self, status: StatusCode, url: &str) -> Error {
        let what = url.rsplit("/v2/").next().unwrap_or(url);
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Error::new(
                ErrorKind::Denied,
                format!(
                    "{} refused access to {} ({status}){}",
                    self.repo.registry,
                    self.repo.path,
                    if self.basic.is_some() {
                        ": check the credentials Secret"
                    } else {
                        ": it needs credentials (credentialsRef)"
                    }
                ),
            ),
            StatusCode::NOT_FOUND => Error::new(
                ErrorKind::NotFound,
                format!("{} has no {what}", self.repo.registry),
            ),
            _ => Error::new(
                ErrorKind::Failed,
                format!("{} answered {status} for {what}", self.repo.registry),
            ),
        }
    }

    /// The `Authorization` value that answers `challenge`, and how long it is good for
    /// (`None`: as long as the credentials are).
    async fn answer(&self, challenge: &str) -> Result<(String, Option<Duration>), Error> {
        let registry = &self.repo.registry;
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            return match self.basic {
                Some(basic) => Ok((basic_header(basic), None)),
                None => Err(Error::new(
                    ErrorKind::Denied,
                    format!(
                        "{registry} answered 401 Unauthorized: it wants a user name and \
                         password; set credentialsRef"
                    ),
                )),
            };
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(Error::new(
                ErrorKind::Failed,
                format!(
                    "{registry} asks for authentication this controller does not speak \
                     ({challenge:?})"
                ),
            ));
        }
        let realm = params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("realm"))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Failed,
                    format!("{registry}: a Bearer challenge without a realm"),
                )
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
            .unwrap_or_else(|| format!("repository:{}:{}", self.repo.path, self.actions));
        query.push(("scope".into(), scope));
        let mut request = self.http.get(&realm).query(&query);
        if let Some(basic) = self.basic {
            request = request.header(AUTHORIZATION, basic_header(basic));
        }
        let response = request.send().await.map_err(|e| {
            Error::new(
                ErrorKind::Unreachable,
                format!(
                    "the token service of {registry} is unreachable: {}",
                    describe(&e)
                ),
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            let kind = if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                ErrorKind::Denied
            } else {
                ErrorKind::Failed
            };
            return Err(Error::new(
                kind,
                format!(
                    "{registry} refused a token for {} ({status}){}",
                    self.repo.path,
                    if self.basic.is_some() {
                        ": check the credentials Secret"
                    } else {
                        ""
                    }
                ),
            ));
        }
        #[derive(Deserialize)]
        struct Token {
            #[serde(default)]
            token: String,
            #[serde(default)]
            access_token: String,
            /// Seconds; the token specification's default is 60.
            #[serde(default)]
            expires_in: Option<u64>,
        }
        let body = read_capped(response, MAX_TOKEN)
            .await
            .map_err(|e| e.into_error(&format!("the token from {registry}")))?;
        let token: Token = serde_json::from_slice(&body).map_err(|e| {
            Error::new(
                ErrorKind::Failed,
                format!("a token from {registry} is not valid: {e}"),
            )
        })?;
        let lifetime = token_lifetime(token.expires_in);
        let token = if token.token.is_empty() {
            token.access_token
        } else {
            token.token
        };
        if token.is_empty() {
            return Err(Error::new(
                ErrorKind::Failed,
                format!("{registry} gave an empty token"),
            ));
        }
        Ok((format!("Bearer {token}"), Some(lifetime)))
    }
}

/// How long a token said to last `expires_in` seconds (the token specification's 60
/// when it does not say) is used: nine tenths of it, so that it is not sent as it
/// expires.
fn token_lifetime(expires_in: Option<u64>) -> Duration {
    Duration::from_secs(expires_in.unwrap_or(60)) * 9 / 10
}

/// Why a body was not read whole.
enum Capped {
    /// It is larger than the limit (said so by its length, or found so on the way).
    TooLarge(usize),
    /// It broke off.
    Broken(reqwest::Error),
}

impl Capped {
    /// The failure to read `what`.
    fn into_error(self, what: &str) -> Error {
        match self {
            Self::TooLarge(limit) => Error::new(
                ErrorKind::TooLarge,
                format!(
                    "{what} is larger than the {} this controller reads",
                    size(u64::try_from(limit).unwrap_or(u64::MAX))
                ),
            ),
            Self::Broken(e) => Error::new(
                ErrorKind::Unreachable,
                format!("reading {what}: {}", describe(&e)),
            ),
        }
    }
}

/// The body of `response`, refused once it is known to be larger than `limit` bytes —
/// by its `Content-Length` before a byte is read, else as it arrives — so a registry
/// cannot make the controller hold more than that.
async fn read_capped(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Capped> {
    let limit_u64 = u64::try_from(limit).unwrap_or(u64::MAX);
    if response
        .content_length()
        .is_some_and(|length| length > limit_u64)
    {
        return Err(Capped::TooLarge(limit));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Capped::Broken)? {
        if body.len() + chunk.len() > limit {
            return Err(Capped::TooLarge(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `bytes` in words: `4 MiB`, `512 KiB`, `100 bytes`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Up to `limit` bytes from `content`; fewer only at its end.
async fn read_chunk<R: AsyncRead + Unpin>(content: &mut R, limit: usize) -> std::io::Result<Bytes> {
    let mut chunk = Vec::with_capacity(limit.min(64 * 1024));
    (&mut *content)
        .take(limit as u64)
        .read_to_end(&mut chunk)
        .await?;
    Ok(chunk.into())
}

/// A running digest of the algorithm a `sha256:`/`sha512:` digest names.
enum Hasher {
    Sha256(Sha256),
    Sha512(Sha512),
}

impl Hasher {
    fn for_digest(digest: &str) -> Self {
        if digest.starts_with("sha512:") {
            Self::Sha512(Sha512::new())
        } else {
            Self::Sha256(Sha256::new())
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha256(hasher) => hasher.update(bytes),
            Self::Sha512(hasher) => hasher.update(bytes),
        }
    }

    fn digest(self) -> String {
        match self {
            Self::Sha256(hasher) => format!("sha256:{}", hex::encode(hasher.finalize())),
            Self::Sha512(hasher) => format!("sha512:{}", hex::encode(hasher.finalize())),
        }
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

fn basic_header(basic: &Basic) -> String {
    use base64::Engine as _;
    let pair = format!("{}:{}", basic.username, basic.password);
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// A request error in words, with its cause (reqwest's own text is terse) and, for a
/// certificate the controller does not trust, what to do about it.
fn describe(error: &reqwest::Error) -> String {
    let mut text = hecate_types::error_chain(error);
    if let Some(hint) = crate::tls::untrusted_hint(error) {
        text.push_str(hint);
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
    fn tokens_are_used_for_nine_tenths_of_their_life() {
        assert_eq!(token_lifetime(None), Duration::from_secs(54));
        assert_eq!(token_lifetime(Some(300)), Duration::from_secs(270));
        assert_eq!(token_lifetime(Some(0)), Duration::ZERO);
    }

    #[test]
    fn authentication_is_never_shown() {
        let learned = Authentication {
            authorization: Some("Bearer s3cret".into()),
            expires: None,
            challenge: Some("Bearer realm=\"x\"".into()),
        };
        let shown = format!("{learned:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("***"),
            "{shown}"
        );
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

    #[test]
    fn upload_locations_may_be_relative() {
        let repo = Repository::parse("127.0.0.1:5000/team/app", false).expect("a repository");
        let registry = Registry::default();
        let session = registry.session(&repo, None);
        let at = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(LOCATION, HeaderValue::from_static(value));
            session.location(&headers)
        };
        assert_eq!(
            at("/v2/team/app/blobs/uploads/u-1?_state=s"),
            Ok("http://127.0.0.1:5000/v2/team/app/blobs/uploads/u-1?_state=s".into())
        );
        assert_eq!(
            at("https://cdn.example.com/up/1"),
            Ok("https://cdn.example.com/up/1".into())
        );
        assert_eq!(
            at("up/1").map_err(|e| e.kind),
            Err(ErrorKind::Failed),
            "a location relative to a path is not guessed at"
        );
        assert_eq!(
            session.location(&HeaderMap::new()).map_err(|e| e.kind),
            Err(ErrorKind::Failed)
        );
    }

    #[tokio::test]
    async fn chunks_are_full_until_the_last() {
        let content = vec![7u8; 10];
        let mut reader = content.as_slice();
        let sizes = [
            read_chunk(&mut reader, 4).await.expect("read").len(),
            read_chunk(&mut reader, 4).await.expect("read").len(),
            read_chunk(&mut reader, 4).await.expect("read").len(),
            read_chunk(&mut reader, 4).await.expect("read").len(),
        ];
        assert_eq!(sizes, [4, 4, 2, 0]);
    }

    #[tokio::test]
    async fn bodies_are_read_up_to_their_limit() {
        let response = |body: &'static str| {
            reqwest::Response::from(http::Response::new(reqwest::Body::from(body)))
        };
        assert_eq!(
            read_capped(response("0123456789"), 10).await.ok(),
            Some(b"0123456789".to_vec())
        );
        let refused = read_capped(response("0123456789"), 9)
            .await
            .expect_err("too large")
            .into_error("the tag list of team/app");
        assert_eq!(refused.kind, ErrorKind::TooLarge);
        assert_eq!(
            refused.message,
            "the tag list of team/app is larger than the 9 bytes this controller reads"
        );
        assert_eq!(size(MAX_MANIFEST as u64), "4 MiB");
        assert_eq!(size(MAX_TOKEN as u64), "1 MiB");
        assert_eq!(size(1536), "1536 bytes");
        assert_eq!(size(2048), "2 KiB");
    }

    #[test]
    fn hashers_follow_the_digest_algorithm() {
        let mut sha256 = Hasher::for_digest("sha256:x");
        sha256.update(b"{}");
        assert_eq!(sha256.digest(), crate::oci::sha256_digest(b"{}"));
        let mut sha512 = Hasher::for_digest("sha512:x");
        sha512.update(b"");
        assert!(sha512.digest().starts_with("sha512:cf83e135"));
    }
}
