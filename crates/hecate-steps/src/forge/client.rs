//! Talking to a forge's REST API: the host API token from the credentials Secret (spec
//! §5.2), the headers each forge expects, one HTTP client with bounded waits, and the
//! mapping of an answer to the steps' reasons.

use std::time::Duration;

use hecate_sources::git::{AppTokens, GitCredentials};
use hecate_sources::tls::error_text;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use super::known;
use super::repo::{Repo, default_base_url, infer};
use crate::config::fields::{Deferred, HttpUrl};
use crate::config::host::Provider;
use crate::reason::Reason;
use crate::runner::StepError;

/// How long one request may take, answer included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of what a forge said a failure message keeps.
const SAID_LIMIT: usize = 300;

/// What the forge steps share from the process: the client that reads credentials
/// Secrets, the GitHub App token cache (shared with the git steps and Beacons), and one
/// HTTP client. Clones share all three.
#[derive(Clone)]
pub struct Forge {
    client: kube::Client,
    tokens: AppTokens,
    http: reqwest::Client,
}

impl Forge {
    /// Reads Secrets through `client` and mints GitHub App tokens with `tokens`.
    pub fn new(client: kube::Client, tokens: AppTokens) -> Self {
        let http = hecate_sources::tls::client_builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("hecate-controller/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Self {
            client,
            tokens,
            http,
        }
    }

    /// The API of the forge `target` names, authenticated with the host API token in
    /// Secret `secret` of `namespace`.
    pub(crate) async fn connect(
        &self,
        namespace: &str,
        secret: &str,
        target: Target,
    ) -> Result<Host<'_>, StepError> {
        let token = self.token(namespace, secret).await?;
        let mut headers = HeaderMap::new();
        let secret_value = |value: String| {
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                StepError::config(format!(
                    "credentials Secret {secret:?}: the token is not usable in an HTTP header"
                ))
            })?;
            value.set_sensitive(true);
            Ok::<_, StepError>(value)
        };
        match target.provider {
            Provider::Github => {
                headers.insert(AUTHORIZATION, secret_value(format!("Bearer {token}"))?);
                headers.insert(
                    ACCEPT,
                    HeaderValue::from_static("application/vnd.github+json"),
                );
                headers.insert(
                    HeaderName::from_static("x-github-api-version"),
                    HeaderValue::from_static("2022-11-28"),
                );
            }
            Provider::Gitlab => {
                headers.insert(
                    HeaderName::from_static("private-token"),
                    secret_value(token)?,
                );
            }
        }
        Ok(Host {
            http: &self.http,
            target,
            headers,
        })
    }

    /// The host API token (spec §5.2): a GitHub App installation token when the Secret
    /// holds an App's key, else `token`, else `password`.
    async fn token(&self, namespace: &str, name: &str) -> Result<String, StepError> {
        let data = hecate_sources::secrets::read(&self.client, namespace, name)
            .await
            .map_err(StepError::config)?;
        if hecate_sources::secrets::text(&data, "privateKey").is_some() {
            let app = match GitCredentials::from_secret(&data) {
                Ok(GitCredentials::GitHubApp(app)) => app,
                Ok(_) => {
                    return Err(StepError::config(format!(
                        "credentials Secret {name:?} holds privateKey but no GitHub App"
                    )));
                }
                Err(why) => {
                    return Err(StepError::config(format!(
                        "credentials Secret {name:?}: {why}"
                    )));
                }
            };
            return match self.tokens.token(&app).await.map_err(StepError::from) {
                Ok(token) => Ok(token),
                // A key that cannot sign is a configuration mistake.
                Err(error) if error.reason == Reason::InvalidConfig => Err(StepError::config(
                    format!("credentials Secret {name:?}: {}", error.message),
                )),
                // Minting goes over the network: un-coded and retryable (spec §5.6).
                Err(error) => Err(StepError::retryable(
                    Reason::Unknown,
                    format!(
                        "cannot mint a GitHub App token with Secret {name:?}: {}",
                        error.message
                    ),
                )),
            };
        }
        if let Some(token) = ["token", "password"]
            .into_iter()
            .find_map(|key| hecate_sources::secrets::text(&data, key))
        {
            return Ok(token);
        }
        Err(StepError::config(format!(
            "credentials Secret {name:?} holds no host API token: expected token, password \
             or a GitHub App key (privateKey)"
        )))
    }
}

/// Which repository, on which kind of forge, through which API root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// The repository.
    pub(crate) repo: Repo,
    /// The kind of forge.
    pub(crate) provider: Provider,
    /// The API root (`https://api.github.com`, `https://gitlab.example/api/v4`).
    pub(crate) base: Url,
}

impl Target {
    /// The target of repository URL `url`: `provider` when configured, else inferred
    /// from the host; `base_url` when configured, else the forge's public API. Every
    /// problem is a terminal `InvalidConfig`.
    pub(crate) fn resolve(
        url: &str,
        provider: Option<&Deferred<Provider>>,
        base_url: Option<&Deferred<HttpUrl>>,
    ) -> Result<Self, StepError> {
        let repo = Repo::parse(url).map_err(|why| StepError::config(format!("repo: {why}")))?;
        let provider = match provider {
            Some(provider) => *known(provider, "provider")?,
            None => infer(&repo.host).ok_or_else(|| {
                StepError::config(format!(
                    "cannot tell whether {} is GitHub or GitLab; set provider",
                    repo.host
                ))
            })?,
        };
        if provider == Provider::Github && repo.owner.contains('/') {
            return Err(StepError::config(format!(
                "repo: a GitHub repository is owner/name, not {}",
                repo.path()
            )));
        }
        let base = match base_url {
            Some(url) => known(url, "baseURL")?.0.as_str(),
            None => default_base_url(provider),
        };
        let base = Url::parse(base.trim_end_matches('/'))
            .ok()
            .filter(|url| !url.cannot_be_a_base())
            .ok_or_else(|| StepError::config(format!("baseURL {base:?} is not a usable URL")))?;
        Ok(Self {
            repo,
            provider,
            base,
        })
    }
}

/// A forge's API, ready to be asked about one repository.
pub(crate) struct Host<'a> {
    http: &'a reqwest::Client,
    target: Target,
    headers: HeaderMap,
}

impl Host<'_> {
    /// The kind of forge.
    pub(crate) fn provider(&self) -> Provider {
        self.target.provider
    }

    /// The repository.
    pub(crate) fn repo(&self) -> &Repo {
        &self.target.repo
    }

    /// The URL of `tail` under the repository (`repos/{owner}/{name}/…` on GitHub,
    /// `projects/{url-escaped path}/…` on GitLab), each segment escaped, with `query`.
    pub(crate) fn url(&self, tail: &[&str], query: &[(&str, &str)]) -> Url {
        let repo = &self.target.repo;
        let path = repo.path();
        let head: Vec<&str> = match self.target.provider {
            Provider::Github => vec!["repos", &repo.owner, &repo.name],
            Provider::Gitlab => vec!["projects", &path],
        };
        let mut url = self.target.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(head).extend(tail);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// Sends `body` (as JSON, when given) to `url` and returns the answer as JSON
    /// (`null` when empty). Anything but a 2xx is a [`Failure`].
    pub(crate) async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let what = format!("{method} {}", url.path());
        let mut request = self.http.request(method, url).headers(self.headers.clone());
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::unusable(format!("{what} got no answer: {}", error_text(&e))))?;
        let status = response.status();
        let rate_limited = response
            .headers()
            .get("x-ratelimit-remaining")
            .is_some_and(|v| v.as_bytes() == b"0")
            || response.headers().contains_key("retry-after");
        let bytes = response.bytes().await.map_err(|e| {
            Failure::unusable(format!(
                "{what} answered {status}, and reading the answer failed: {}",
                error_text(&e)
            ))
        })?;
        let parsed: Option<Value> = if bytes.iter().all(u8::is_ascii_whitespace) {
            Some(Value::Null)
        } else {
            serde_json::from_slice(&bytes).ok()
        };
        if status.is_success() {
            return parsed.ok_or_else(|| {
                Failure::unusable(format!("{what} answered {status} with something not JSON"))
            });
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        Err(Failure {
            what,
            status: Some(status),
            said: parsed.as_ref().map(said).unwrap_or_default(),
            body,
            rate_limited,
        })
    }
}

/// A request the forge did not answer with a usable 2xx.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    /// `POST /repos/acme/fleet/pulls`.
    what: String,
    /// The status, when the forge refused; `None` when there was no usable answer.
    pub(crate) status: Option<StatusCode>,
    /// What the forge said (its `message` and errors), or why there was no answer.
    said: String,
    /// The whole body, for the answers a step recognises by their words.
    pub(crate) body: String,
    /// The forge said its rate limit is spent (a 403 that is not about credentials).
    rate_limited: bool,
}

impl Failure {
    /// No answer, or one the step cannot use; `said` says which.
    pub(crate) fn unusable(said: String) -> Self {
        Self {
            what: String::new(),
            status: None,
            said,
            body: String::new(),
            rate_limited: false,
        }
    }

    /// Whether the forge answered `status` and its body says `words`.
    pub(crate) fn says(&self, status: u16, words: &str) -> bool {
        self.status.is_some_and(|s| s.as_u16() == status) && self.body.contains(words)
    }

    /// The step's reason for it: credentials refused (401, 403) are terminal
    /// `ProviderAuthFailed`; a repository or pull request not found (404) a terminal
    /// `ProviderFailed`; anything else — no answer, a 5xx, a spent rate limit — a
    /// retryable `ProviderFailed`.
    pub(crate) fn step_error(self, doing: &str) -> StepError {
        match self.status {
            None => StepError::retryable(Reason::ProviderFailed, format!("{doing}: {}", self.said)),
            Some(status) => {
                let said = if self.said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.said)
                };
                let message = format!("{doing}: {} answered {status}{said}", self.what);
                match status.as_u16() {
                    403 if self.rate_limited => {
                        StepError::retryable(Reason::ProviderFailed, message)
                    }
                    401 | 403 => StepError::terminal(
                        Reason::ProviderAuthFailed,
                        format!("{message} (check the token and what it may do)"),
                    ),
                    404 => StepError::terminal(
                        Reason::ProviderFailed,
                        format!("{message} (check the repository and that the token can see it)"),
                    ),
                    _ => StepError::retryable(Reason::ProviderFailed, message),
                }
            }
        }
    }
}

/// What a forge's error body says: GitHub's `message` and each of its `errors`,
/// GitLab's `message` (text, list or field map) or `error`, cut to [`SAID_LIMIT`].
fn said(body: &Value) -> String {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut parts: Vec<String> = ["message", "error", "error_description"]
        .iter()
        .filter_map(|key| body.get(key))
        .map(text)
        .collect();
    if let Some(errors) = body.get("errors").and_then(Value::as_array) {
        parts.extend(
            errors
                .iter()
                .map(|e| e.get("message").or_else(|| e.get("code")).unwrap_or(e))
                .map(text),
        );
    }
    super::repo::truncate(&parts.join("; "), SAID_LIMIT)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn target(url: &str, provider: Option<Provider>, base: Option<&str>) -> Result<Target, String> {
        Target::resolve(
            url,
            provider.map(Deferred::Known).as_ref(),
            base.map(|b| Deferred::Known(HttpUrl(b.to_string())))
                .as_ref(),
        )
        .map_err(|e| {
            assert_eq!((e.reason, e.terminal), (Reason::InvalidConfig, true));
            e.message
        })
    }

    #[test]
    fn the_target_is_inferred_or_configured() {
        let github = target("git@github.com:acme/fleet.git", None, None).expect("github");
        assert_eq!(github.provider, Provider::Github);
        assert_eq!(github.base.as_str(), "https://api.github.com/");
        let gitlab = target("https://gitlab.com/acme/platform/fleet", None, None).expect("gitlab");
        assert_eq!(gitlab.provider, Provider::Gitlab);
        assert_eq!(gitlab.base.as_str(), "https://gitlab.com/api/v4");
        let own = target(
            "https://git.acme.example/acme/platform/fleet.git",
            Some(Provider::Gitlab),
            Some("https://git.acme.example/api/v4/"),
        )
        .expect("self-managed");
        assert_eq!(own.base.as_str(), "https://git.acme.example/api/v4");

        let cases = [
            (
                "https://git.acme.example/acme/fleet",
                None,
                None,
                "set provider",
            ),
            (
                "https://github.com/acme/platform/fleet",
                None,
                None,
                "owner/name",
            ),
            ("/srv/git/fleet.git", Some(Provider::Github), None, "repo:"),
            (
                "https://github.com/acme/fleet",
                None,
                Some("http://exa mple"),
                "baseURL",
            ),
        ];
        for (url, provider, base, words) in cases {
            let why = target(url, provider, base).expect_err(url);
            assert!(why.contains(words), "{url}: {why}");
        }
        let expression = Target::resolve(
            "https://github.com/acme/fleet",
            Some(&Deferred::Expression("${{ vars.p }}".into())),
            None,
        )
        .expect_err("an expression left");
        assert!(
            expression.message.contains("provider"),
            "{}",
            expression.message
        );
    }

    #[test]
    fn api_urls_escape_each_segment() {
        let http = reqwest::Client::new();
        let host = |url: &str, provider, base: &str| Host {
            http: &http,
            target: Target {
                repo: Repo::parse(url).expect("a repo"),
                provider,
                base: Url::parse(base).expect("a base"),
            },
            headers: HeaderMap::new(),
        };
        let github = host(
            "https://github.com/acme/fleet",
            Provider::Github,
            "https://ghe.example/api/v3",
        );
        assert_eq!(
            github
                .url(
                    &["pulls"],
                    &[("state", "open"), ("head", "acme:hecate/dev-1")]
                )
                .as_str(),
            "https://ghe.example/api/v3/repos/acme/fleet/pulls?state=open&head=acme%3Ahecate%2Fdev-1"
        );
        let gitlab = host(
            "git@gitlab.com:acme/platform/fleet.git",
            Provider::Gitlab,
            "https://gitlab.com/api/v4",
        );
        assert_eq!(
            gitlab.url(&["statuses", "abc"], &[]).as_str(),
            "https://gitlab.com/api/v4/projects/acme%2Fplatform%2Ffleet/statuses/abc"
        );
    }

    #[test]
    fn failures_have_their_reasons() {
        let failure = |status: Option<u16>, rate_limited: bool| Failure {
            what: "GET /x".into(),
            status: status.map(|s| StatusCode::from_u16(s).expect("a status")),
            said: "no".into(),
            body: String::new(),
            rate_limited,
        };
        let cases = [
            (Some(401), false, Reason::ProviderAuthFailed, true),
            (Some(403), false, Reason::ProviderAuthFailed, true),
            (Some(403), true, Reason::ProviderFailed, false),
            (Some(404), false, Reason::ProviderFailed, true),
            (Some(409), false, Reason::ProviderFailed, false),
            (Some(422), false, Reason::ProviderFailed, false),
            (Some(429), true, Reason::ProviderFailed, false),
            (Some(500), false, Reason::ProviderFailed, false),
            (Some(503), false, Reason::ProviderFailed, false),
            (None, false, Reason::ProviderFailed, false),
        ];
        for (status, rate_limited, reason, terminal) in cases {
            let error = failure(status, rate_limited).step_error("opening");
            assert_eq!(
                (error.reason, error.terminal),
                (reason, terminal),
                "{status:?}"
            );
            assert!(
                error.message.starts_with("opening: ") && error.message.ends_with(": no")
                    || error.message.contains(": no ("),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn what_a_forge_said_is_read_from_either_shape() {
        let cases = [
            (
                json!({"message": "Validation Failed", "errors": [
                    {"resource": "PullRequest", "code": "custom",
                     "message": "A pull request already exists for acme:hecate/dev-1."}]}),
                "Validation Failed; A pull request already exists for acme:hecate/dev-1.",
            ),
            (json!({"message": "Bad credentials"}), "Bad credentials"),
            (
                json!({"message": ["Another open merge request already exists"]}),
                r#"["Another open merge request already exists"]"#,
            ),
            (json!({"error": "insufficient_scope"}), "insufficient_scope"),
            (
                json!({"errors": [{"code": "missing_field"}]}),
                "missing_field",
            ),
            (json!([1, 2]), ""),
        ];
        for (body, want) in cases {
            assert_eq!(said(&body), want, "{body}");
        }
    }
}
