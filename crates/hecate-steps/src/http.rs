//! `http` (spec §5.15): one request whose answer decides the step — a webhook, a smoke
//! test, a change system. The response is recorded (status, the first 4 KiB of the
//! body, and the body as JSON when it parses) even when the step fails.
//!
//! Where a request may go is the operator's ([`crate::reach`]): never the controller's
//! own metrics or probes, and this host's own addresses (loopback, link-local, its
//! interfaces') only with `--allow-local-http`; a refused URL fails `NotAllowed`.
//!
//! The request itself ([`Http::admit`], [`Http::exchange`]) is shared with the
//! controller's `http` verifier, so both go where the same reach allows.

use std::time::Duration;

use futures::future::BoxFuture;
use hecate_sources::tls::error_text;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::config::fields::Deferred;
use super::runner::{StepContext, StepError, StepKind, StepResult};
use crate::Tools;
use crate::reach::{Reach, Redirects, Refused};
use crate::reason::Reason;

/// How much of a response body is kept.
const BODY_LIMIT: usize = 4096;

/// The `http` step.
pub struct Http {
    client: kube::Client,
    /// What requests may reach: each is sent by a client of its own that judges every
    /// address it connects to ([`Reach::client`]).
    reach: Reach,
}

impl Http {
    /// Reads secret headers through `client`; reaches neither this host's addresses
    /// nor the controller's own listeners.
    pub fn new(client: kube::Client) -> Self {
        Self::reaching(client, Reach::default())
    }

    /// Reads secret headers through `client`; requests go where `reach` allows.
    pub fn reaching(client: kube::Client, reach: Reach) -> Self {
        Self { client, reach }
    }

    async fn secret_value(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
    ) -> Result<String, StepError> {
        let data = hecate_sources::secrets::read(&self.client, namespace, name)
            .await
            .map_err(StepError::config)?;
        hecate_sources::secrets::text(&data, key)
            .ok_or_else(|| StepError::config(format!("Secret {name} has no {key:?}")))
    }
}

/// A request to send through [`Http::exchange`], its URL admitted by [`Http::admit`].
pub struct Outgoing<'r> {
    /// Where to send it.
    pub url: &'r str,
    /// The method.
    pub method: reqwest::Method,
    /// The headers, each name once.
    pub headers: HeaderMap,
    /// The body, if any.
    pub body: Option<String>,
    /// How long the request may take, the answer read.
    pub timeout: Duration,
    /// Whether the headers hold Secrets' values: redirects then stay within the origin.
    pub carries_secrets: bool,
}

/// What a server answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The first 4 KiB of the body, as text (bytes that are not UTF-8 replaced).
    pub text: String,
    /// Whether the body was longer than what [`Answer::text`] keeps.
    pub truncated: bool,
    /// The body as JSON, when what was kept parses.
    pub json: Option<Value>,
}

/// Why a request has no answer to judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoAnswer {
    /// The operator's reach refused where the request led: a redirect, or a name that
    /// resolved to this host when sent.
    NotAllowed(Refused),
    /// The server could not be reached, or its answer not read; the words say why
    /// (without the URL).
    Unreachable(String),
    /// A request carrying Secrets' values was redirected to another origin, this one.
    OtherOrigin(String),
}

impl Http {
    /// Whether the operator's reach lets a request go to `url`, judged before sending:
    /// its literal address, or every address its name resolves to now. A URL that does
    /// not parse is left to the request, which fails on it.
    pub async fn admit(&self, url: &str) -> Result<(), Refused> {
        match reqwest::Url::parse(url) {
            Ok(target) => self.reach.judge_url(&target).await,
            Err(_) => Ok(()),
        }
    }

    /// Sends one request and reads its answer, whatever its status: the `http` step's
    /// exchange, shared with the `http` verifier.
    pub async fn exchange(&self, outgoing: Outgoing<'_>) -> Result<Answer, NoAnswer> {
        // A secret `X-Api-Key` must not follow a redirect to another origin.
        let redirects = if outgoing.carries_secrets {
            Redirects::SameOrigin
        } else {
            Redirects::Anywhere
        };
        let url = reqwest::Url::parse(outgoing.url)
            .map_err(|e| NoAnswer::Unreachable(format!("not a URL: {e}")))?;
        let http = self
            .reach
            .client(&url, redirects)
            .map_err(|e| NoAnswer::Unreachable(error_text(&e)))?;
        let mut request = http
            .request(outgoing.method, url)
            .timeout(outgoing.timeout)
            .headers(outgoing.headers);
        if let Some(body) = outgoing.body {
            request = request.body(body);
        }
        let response = request.send().await.map_err(|e| {
            match crate::reach::refusal(&e) {
                // A redirect, or a name that resolved here this time.
                Some(refused) => NoAnswer::NotAllowed(refused.clone()),
                None => NoAnswer::Unreachable(error_text(&e)),
            }
        })?;
        let status = response.status().as_u16();
        if outgoing.carries_secrets && response.status().is_redirection() {
            let leads = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .and_then(|location| response.url().join(location).ok());
            if let Some(to) = leads.filter(|to| to.origin() != response.url().origin()) {
                return Err(NoAnswer::OtherOrigin(to.origin().ascii_serialization()));
            }
        }
        let (body, truncated) = read_limited(response).await.map_err(|e| {
            NoAnswer::Unreachable(format!("reading the answer: {}", error_text(&e)))
        })?;
        Ok(Answer {
            status,
            text: String::from_utf8_lossy(&body).into_owned(),
            truncated,
            json: serde_json::from_slice(&body).ok(),
        })
    }
}

impl StepKind for Http {
    const STEP: hecate_ops::catalogue::Step = hecate_ops::catalogue::Step::Http;
    type With = crate::config::http::HttpConfig;

    fn build(tools: &Tools) -> Self {
        Self::reaching(tools.client.clone(), tools.reach.clone())
    }

    fn run_with<'a>(
        &'a self,
        ctx: &'a StepContext<'a>,
        config: Self::With,
    ) -> BoxFuture<'a, Result<StepResult, StepError>> {
        Box::pin(async move {
            let url = known(&config.url, "url")?.0.clone();
            let method = known(&config.method(), "method")?.0.clone();
            let timeout: Duration = known(&config.timeout(), "timeout")?
                .0
                .try_into()
                .map_err(|_| StepError::config("timeout must be positive"))?;
            let method = reqwest::Method::from_bytes(method.as_bytes())
                .map_err(|_| StepError::config(format!("{method:?} is not an HTTP method")))?;
            self.admit(&url)
                .await
                .map_err(|refused| not_allowed(&url, &refused))?;
            // One map, each name set once: a secret header replaces a plain header of
            // the same name rather than being sent beside it (spec §5.15).
            let mut headers = HeaderMap::new();
            for (name, value) in &config.headers {
                let value = HeaderValue::from_str(value).map_err(|_| {
                    StepError::config(format!("headers: {value:?} is not a header value"))
                })?;
                headers.insert(header_name(name)?, value);
            }
            let body = config.body.as_ref().map(Value::to_string);
            if body.is_some() && !headers.contains_key(CONTENT_TYPE) {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            // Secret headers last: they override plain ones of the same name.
            for header in &config.secret_headers {
                let secret = &header.secret_ref.name;
                let value = self
                    .secret_value(ctx.namespace, secret, header.key())
                    .await?;
                let mut value = HeaderValue::from_str(&format!("{}{value}", header.prefix))
                    .map_err(|_| {
                        StepError::config(format!(
                            "secretHeaders: the value for {} (Secret {secret}) cannot be sent \
                             in a header",
                            header.name
                        ))
                    })?;
                value.set_sensitive(true);
                headers.insert(header_name(&header.name)?, value);
            }
            let outgoing = Outgoing {
                url: &url,
                method,
                headers,
                body,
                timeout,
                carries_secrets: !config.secret_headers.is_empty(),
            };
            let Answer {
                status,
                text,
                truncated,
                json: parsed,
            } = self.exchange(outgoing).await.map_err(|missing| match missing {
                NoAnswer::NotAllowed(refused) => not_allowed(&url, &refused),
                NoAnswer::Unreachable(why) => {
                    StepError::retryable(Reason::HttpUnreachable, format!("{url}: {why}"))
                }
                NoAnswer::OtherOrigin(origin) => StepError::terminal(
                    Reason::HttpFailed,
                    format!(
                        "{url} redirected to another origin ({origin}); a step's secret headers \
                         are only ever sent to the origin it names"
                    ),
                ),
            })?;
            let mut output = json!({"status": status, "body": text, "truncated": truncated});
            if let Some(parsed) = &parsed {
                output["json"] = parsed.clone();
            }
            let accepted = if config.expect_status.is_empty() {
                (200..300).contains(&status)
            } else {
                config.expect_status.contains(&status)
            };
            if !accepted {
                let message = format!("{url} answered {status}");
                let error = if status >= 500 {
                    StepError::retryable(Reason::HttpFailed, message)
                } else {
                    StepError::terminal(Reason::HttpFailed, message)
                };
                return Err(error.with_output(output));
            }
            if !config.success_if.trim().is_empty() {
                match hecate_expr::success_if(&config.success_if, status, &text, parsed.as_ref()) {
                    Ok(true) => {}
                    Ok(false) => {
                        return Err(StepError::terminal(
                            Reason::HttpFailed,
                            format!(
                                "{url} answered {status}, but {:?} does not hold",
                                config.success_if
                            ),
                        )
                        .with_output(output));
                    }
                    Err(error) => {
                        return Err(
                            StepError::config(format!("successIf: {error}")).with_output(output)
                        );
                    }
                }
            }
            Ok(StepResult::done(format!("{url} answered {status}"), output))
        })
    }
}

/// The terminal failure of a request the operator's reach refuses.
fn not_allowed(url: &str, refused: &Refused) -> StepError {
    StepError::terminal(Reason::NotAllowed, format!("{url}: {refused}"))
}

/// A configured header name, or `InvalidConfig`.
fn header_name(name: &str) -> Result<HeaderName, StepError> {
    HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| StepError::config(format!("{name:?} is not a header name")))
}

/// A value that must be known by now (expressions are substituted before a step runs).
fn known<'c, T>(value: &'c Deferred<T>, what: &str) -> Result<&'c T, StepError> {
    value.known().ok_or_else(|| {
        StepError::config(format!("{what} is still an expression after substitution"))
    })
}

/// At most `BODY_LIMIT + 1` bytes of the body, and whether there was more.
async fn read_limited(mut response: reqwest::Response) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > BODY_LIMIT {
            break;
        }
    }
    let truncated = body.len() > BODY_LIMIT;
    body.truncate(BODY_LIMIT);
    Ok((body, truncated))
}
