//! The HTTP client: one method per Fides endpoint this project uses, no retries (the
//! caller decides whether an error is worth another try), a bearer token on every
//! request, a time limit on every call and a cap on every answer.

use std::time::Duration;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use url::Url;

use crate::error::Error;
use crate::model::{
    Approval, Artifact, Attestation, ChainVerdict, ChangeRequest, ChangeVerdict, PolicyCheck,
};

/// A call's default time limit, connection to last byte.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer that is read; a proxy's HTML login page must not balloon.
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// What a path segment must escape (RFC 3986 `pchar` minus what is safe).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Where Fides is and how to authenticate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The server root, e.g. `https://fides.acme.io` (a path prefix is kept).
    pub base_url: String,
    /// The API key, sent as a bearer token.
    pub token: String,
    /// A call's time limit; `None` is [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
}

/// A Fides client. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: String,
}

impl Client {
    /// A client for `config`, or [`Error::Misconfigured`] naming what is missing: a
    /// URL (http or https), a token.
    pub fn new(config: &Config) -> Result<Self, Error> {
        Self::trusting(config, &[])
    }

    /// [`Client::new`], trusting the CA certificates `roots` besides the web PKI's (a
    /// Fides behind a private CA: the controller hands over the platform's).
    pub fn trusting(config: &Config, roots: &[reqwest::Certificate]) -> Result<Self, Error> {
        let base_url = config.base_url.trim();
        if base_url.is_empty() {
            return Err(Error::Misconfigured("no server URL".into()));
        }
        if config.token.is_empty() {
            return Err(Error::Misconfigured("no API token".into()));
        }
        let base = Url::parse(base_url)
            .map_err(|e| Error::Misconfigured(format!("server URL {base_url:?}: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(Error::Misconfigured(format!(
                "server URL {base_url:?} must be http or https"
            )));
        }
        // Exactly one trailing slash, so relative paths resolve under any prefix.
        let base = Url::parse(&format!("{}/", base_url.trim_end_matches('/')))
            .map_err(|e| Error::Misconfigured(format!("server URL {base_url:?}: {e}")))?;
        let http = roots
            .iter()
            .cloned()
            .fold(reqwest::Client::builder(), |builder, root| {
                builder.add_root_certificate(root)
            })
            .timeout(config.timeout.unwrap_or(DEFAULT_TIMEOUT))
            // reqwest drops the Authorization header when a redirect leaves the host.
            .redirect(reqwest::redirect::Policy::limited(10))
            .build()
            .map_err(|e| Error::Misconfigured(format!("building the HTTP client: {e}")))?;
        Ok(Self {
            http,
            base,
            token: config.token.clone(),
        })
    }

    /// The server, for messages.
    pub fn server(&self) -> &str {
        self.base.as_str()
    }

    /// E1: whether a trail's hash chain is intact.
    pub async fn verify_chain(&self, trail: &str) -> Result<ChainVerdict, Error> {
        let trail = required(trail.trim(), "a trail id")?;
        self.get(&format!("api/v1/trails/{}/verify-chain", segment(trail)))
            .await
    }

    /// E2: an environment's policy verdict on a trail.
    pub async fn policy_check(&self, environment: &str, trail: &str) -> Result<PolicyCheck, Error> {
        let environment = required(environment, "an environment")?;
        let trail = required(trail, "a trail id")?;
        self.get(&format!(
            "api/v1/environments/{}/policy-check?{}",
            segment(environment),
            query(&[("trail", trail)])
        ))
        .await
    }

    /// E3: whether an environment's allowlist holds a digest.
    pub async fn allowlisted(&self, environment: &str, digest: &str) -> Result<bool, Error> {
        let environment = required(environment, "an environment")?;
        let digest = required(digest, "a digest")?;
        let sha = digest.strip_prefix("sha256:").unwrap_or(digest);
        let answer: Value = self
            .get(&format!(
                "api/v1/environments/{}/allowlist?{}",
                segment(environment),
                query(&[("sha", sha)])
            ))
            .await?;
        Ok(answer
            .get("approved")
            .and_then(Value::as_bool)
            .unwrap_or(false))
    }

    /// E4: the trail an artifact belongs to; `None` when Fides has never seen it.
    ///
    /// The server filters by prefix, so every row is checked against the digest.
    /// Servers from before the filter answered rows without `trail_id`: then the
    /// whole artifact list is read instead.
    pub async fn trail_for_artifact(&self, digest: &str) -> Result<Option<String>, Error> {
        let sha = bare_digest(digest);
        let sha = required(sha, "a digest")?;
        let path = format!("api/v1/search/artifacts?{}", query(&[("sha", sha)]));
        let rows: Vec<serde_json::Map<String, Value>> = self.get(&path).await?;
        for row in &rows {
            let Some(trail) = row.get("trail_id") else {
                return self.trail_from_full_list(sha).await;
            };
            if let Some(Value::String(found)) = row.get("sha256")
                && !found.eq_ignore_ascii_case(sha)
            {
                continue;
            }
            match trail {
                Value::String(trail) if !trail.is_empty() => return Ok(Some(trail.clone())),
                Value::String(_) | Value::Null => {}
                other => {
                    return Err(Error::Decode {
                        method: "GET".into(),
                        path,
                        message: format!("decoding trail_id: expected a string, found {other}"),
                    });
                }
            }
        }
        Ok(None)
    }

    /// E4b: the unfiltered artifact list of servers that predate the filter.
    async fn trail_from_full_list(&self, sha: &str) -> Result<Option<String>, Error> {
        #[derive(serde::Deserialize)]
        struct Row {
            #[serde(default)]
            sha256: String,
            #[serde(default)]
            trail_id: Option<String>,
        }
        let rows: Vec<Row> = self.get("api/v1/artifacts").await?;
        Ok(rows
            .into_iter()
            .find(|r| r.sha256.eq_ignore_ascii_case(sha))
            .and_then(|r| r.trail_id)
            .filter(|t| !t.is_empty()))
    }

    /// E5: appends an attestation to a trail (Fides chains it).
    pub async fn attest(&self, trail: &str, attestation: &Attestation) -> Result<(), Error> {
        let trail = required(trail, "a trail id")?;
        required(&attestation.name, "an attestation name")?;
        required(&attestation.type_name, "an attestation type")?;
        let body = json!({
            "trail_id": trail,
            "artifact_sha256": bare_digest(&attestation.artifact),
            "name": attestation.name,
            "type_name": attestation.type_name,
            // Fides takes the payload as a JSON document inside a string.
            "payload": attestation.payload.to_string(),
            "signed_by": if attestation.signed_by.is_empty() { "hecate" } else { attestation.signed_by.as_str() },
        });
        self.post::<Value>("api/v1/attestations", &body)
            .await
            .map(drop)
    }

    /// E6: whether an artifact complies with a policy (`policy` may be empty: all).
    pub async fn assert(&self, digest: &str, policy: &str) -> Result<(bool, Vec<String>), Error> {
        let sha = required(bare_digest(digest), "a digest")?;
        let answer: Value = self
            .get(&format!(
                "api/v1/compliance?{}",
                query(&[("policy", policy), ("sha256", sha)])
            ))
            .await?;
        let violations = answer
            .get("violations")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok((
            answer
                .get("compliant")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            violations,
        ))
    }

    /// E7: the change gate's verdict on a trail.
    pub async fn change_gate(&self, trail: &str) -> Result<ChangeVerdict, Error> {
        let trail = required(trail, "a trail id")?;
        self.get(&format!("api/v1/trails/{}/change-gate", segment(trail)))
            .await
    }

    /// E8: reports an artifact as part of a trail. Refused without a trail: Fides
    /// would overwrite the artifact's trail with nothing, detaching its evidence.
    pub async fn report_artifact(&self, artifact: &Artifact) -> Result<(), Error> {
        let sha = required(bare_digest(&artifact.sha256), "a digest")?;
        if artifact.trail.trim().is_empty() {
            return Err(Error::Misconfigured(
                "reporting an artifact without a trail would overwrite its trail in Fides, detaching the evidence CI recorded".into(),
            ));
        }
        let body = json!({"sha256": sha, "trail_id": artifact.trail, "name": artifact.name, "type": artifact.kind});
        self.post::<Value>("api/v1/artifacts", &body)
            .await
            .map(drop)
    }

    /// E9: records a person's approval on a trail, on their behalf. [`Error::Uncounted`]
    /// when Fides stored it as something its change gate will not count.
    pub async fn record_approval(&self, trail: &str, approval: &Approval) -> Result<(), Error> {
        let trail = required(trail.trim(), "a trail id")?;
        required(approval.by.trim(), "who approved")?;
        let body = json!({"role": approval.role.as_str(), "on_behalf_of": approval.by, "reason": approval.reason});
        let answer: Value = self
            .post(
                &format!("api/v1/trails/{}/approvals", segment(trail)),
                &body,
            )
            .await?;
        match answer.get("kind").and_then(Value::as_str) {
            Some(kind) if !kind.is_empty() && kind != "session" => Err(Error::Uncounted {
                kind: kind.into(),
                by: approval.by.clone(),
                role: approval.role.as_str().into(),
            }),
            _ => Ok(()),
        }
    }

    /// E10 + E11: the newest ITSM change request attested on a trail; `None` when
    /// there is none (most trails have no ITSM check).
    pub async fn change_request_for(&self, trail: &str) -> Result<Option<ChangeRequest>, Error> {
        let trail = required(trail, "a trail id")?;
        #[derive(serde::Deserialize)]
        struct Row {
            #[serde(default)]
            id: String,
            #[serde(default)]
            created_at: String,
        }
        let rows: Vec<Row> = self
            .get(&format!(
                "api/v1/search/attestations?{}",
                query(&[("type", "servicenow-change"), ("trail", trail)])
            ))
            .await?;
        // Newest by time, not by the server's order (or by string: fractions sort badly).
        let newest = rows.into_iter().max_by(|a, b| {
            match (
                a.created_at.parse::<jiff::Timestamp>(),
                b.created_at.parse::<jiff::Timestamp>(),
            ) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => a.created_at.cmp(&b.created_at),
            }
        });
        let Some(newest) = newest else {
            return Ok(None);
        };
        let path = format!("api/v1/attestations/{}", segment(&newest.id));
        let attestation: Value = self.get(&path).await?;
        let payload = attestation.get("payload").cloned().unwrap_or(Value::Null);
        let mut change: ChangeRequest = match payload {
            Value::Object(_) => serde_json::from_value(payload)
                .map_err(|e| decode_error("GET", &path, &e.to_string()))?,
            _ => {
                return Err(decode_error(
                    "GET",
                    &path,
                    "the attestation's payload is not a change request",
                ));
            }
        };
        change.compliant = attestation
            .get("is_compliant")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        change.at = attestation
            .get("created_at")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        Ok(Some(change))
    }

    async fn get<T: DeserializeOwned + Default>(&self, path: &str) -> Result<T, Error> {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn post<T: DeserializeOwned + Default>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, Error> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn send<T: DeserializeOwned + Default>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, Error> {
        let url = self
            .base
            .join(path)
            .map_err(|e| Error::Misconfigured(format!("building the URL for {path}: {e}")))?;
        let mut request = self
            .http
            .request(method.clone(), url)
            .bearer_auth(&self.token)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let transport = |e: reqwest::Error| Error::Transport {
            server: self.base.to_string(),
            message: e.without_url().to_string(),
        };
        let mut response = request.send().await.map_err(transport)?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            let room = MAX_RESPONSE_BYTES.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if bytes.len() >= MAX_RESPONSE_BYTES {
                break;
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if status.as_u16() >= 300 {
            let body = if text.trim().is_empty() {
                status.canonical_reason().unwrap_or("no reason").to_string()
            } else {
                text.trim().to_string()
            };
            return Err(Error::Http {
                status: status.as_u16(),
                method: method.to_string(),
                path: path.into(),
                body,
            });
        }
        if text.trim().is_empty() {
            return Ok(T::default());
        }
        if bytes.len() >= MAX_RESPONSE_BYTES {
            return Err(decode_error(
                method.as_str(),
                path,
                &format!("the answer is larger than {MAX_RESPONSE_BYTES} bytes"),
            ));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| decode_error(method.as_str(), path, &e.to_string()))
    }
}

fn decode_error(method: &str, path: &str, message: &str) -> Error {
    Error::Decode {
        method: method.into(),
        path: path.into(),
        message: message.into(),
    }
}

fn required<'a>(value: &'a str, what: &str) -> Result<&'a str, Error> {
    if value.trim().is_empty() {
        return Err(Error::Misconfigured(format!("the call needs {what}")));
    }
    Ok(value)
}

/// A digest as Fides stores it: bare hex, without `sha256:`.
pub fn bare_digest(digest: &str) -> &str {
    let digest = digest.trim();
    digest.strip_prefix("sha256:").unwrap_or(digest)
}

fn segment(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

fn query(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}
