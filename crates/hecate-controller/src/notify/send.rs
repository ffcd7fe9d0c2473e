//! Sending one notice to one destination, under the reach rules `http` steps obey
//! (never the controller's own listeners; this host only with `--allow-local-http`).
//!
//! Errors are said without the URL: a Slack or Teams webhook URL is itself a
//! credential, and an error ends up in the Notifier's status.

use std::time::Duration;

use hecate_ops::model::Notice;
use hecate_steps::reach::{Reach, Redirects};
use hecate_types::secrets::{self, SecretUse};
use hecate_types::{NoticeKind, NoticeThread, Notifier, NotifierType, THREADS_KEPT, error_chain};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt as _;
use kube::api::Api;
use serde_json::{Value, json};

use super::render::{self, Links};

/// How long one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);
const GITHUB_API: &str = "https://api.github.com";
const SLACK_API: &str = "https://slack.com/api";
/// The header that carries a notice's idempotency key.
pub const DELIVERY_HEADER: &str = "X-Hecate-Delivery";
/// The header that carries a notice's kind.
pub const EVENT_HEADER: &str = "X-Hecate-Event";
/// The header that carries a `generic-hmac` body's signature, as Flux's generic-hmac
/// provider names it: `sha256=<hex>`.
pub const SIGNATURE_HEADER: &str = "X-Signature";

/// Where one Notifier sends, its credentials read.
pub struct Destination {
    kind: Kind,
    url: reqwest::Url,
    token: Option<String>,
    channel: String,
    repository: String,
}

/// How a destination is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    SlackWebhook,
    SlackBot,
    Teams,
    Generic,
    GenericHmac,
    GitHub,
}

impl Destination {
    /// `notifier`'s destination, its Secret read (it must opt in, as every Secret
    /// named on an author's behalf does). The error says what is missing, never what a
    /// Secret holds.
    pub async fn of(client: &kube::Client, notifier: &Notifier) -> Result<Self, String> {
        let namespace = notifier.namespace().unwrap_or_default();
        let spec = &notifier.spec;
        let (mut address, mut token) = (spec.address.clone(), None);
        if let Some(secret_ref) = &spec.secret_ref {
            let secret = Api::<Secret>::namespaced(client.clone(), &namespace)
                .get_opt(&secret_ref.name)
                .await
                .map_err(|e| format!("reading Secret {}: {}", secret_ref.name, error_chain(&e)))?
                .ok_or_else(|| format!("Secret {} not found in {namespace}", secret_ref.name))?;
            secrets::judge(
                &namespace,
                &secret_ref.name,
                secret.metadata.labels.as_ref(),
                SecretUse::Credentials,
            )?;
            let value = |key: &str| {
                secret
                    .data
                    .as_ref()
                    .and_then(|d| d.get(key))
                    .and_then(|v| String::from_utf8(v.0.clone()).ok())
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
            };
            if let Some(from_secret) = value("address") {
                address = from_secret;
            }
            token = value("token");
        }
        let kind = match spec.type_ {
            NotifierType::Slack if token.is_some() && !spec.channel.is_empty() => Kind::SlackBot,
            NotifierType::Slack => Kind::SlackWebhook,
            NotifierType::MsTeams => Kind::Teams,
            NotifierType::Generic => Kind::Generic,
            NotifierType::GenericHmac => Kind::GenericHmac,
            NotifierType::GitHub => Kind::GitHub,
        };
        if address.is_empty() {
            address = match kind {
                Kind::GitHub => GITHUB_API.to_string(),
                Kind::SlackBot => SLACK_API.to_string(),
                _ => return Err("no address: set spec.address or the Secret's address".into()),
            };
        }
        if matches!(kind, Kind::GenericHmac | Kind::GitHub) && token.is_none() {
            return Err(format!(
                "type {} needs a token in its Secret",
                serde_json::to_value(spec.type_)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ));
        }
        let url = reqwest::Url::parse(address.trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "https" | "http"))
            .ok_or("the address is not an http(s) URL")?;
        Ok(Self {
            kind,
            url,
            token,
            channel: spec.channel.clone(),
            repository: spec.repository.clone(),
        })
    }

    /// Sends `notice`. A crossing's Slack message and GitHub deployment are found in,
    /// and recorded to, `threads`.
    pub async fn send(
        &self,
        reach: &Reach,
        links: &Links,
        notice: &Notice,
        threads: &mut Vec<NoticeThread>,
    ) -> Result<(), String> {
        let body = match self.kind {
            Kind::SlackWebhook => render::slack(notice, links),
            Kind::Teams => render::teams(notice, links),
            Kind::Generic | Kind::GenericHmac => render::generic(notice, links),
            Kind::SlackBot => return self.slack_bot(reach, links, notice, threads).await,
            Kind::GitHub => return self.github(reach, links, notice, threads).await,
        };
        self.post(reach, self.url.clone(), &body, notice)
            .await
            .map(drop)
    }

    /// One message per crossing, updated in place as it moves, each notice in its
    /// thread; what is not about a crossing is a message of its own.
    async fn slack_bot(
        &self,
        reach: &Reach,
        links: &Links,
        notice: &Notice,
        threads: &mut Vec<NoticeThread>,
    ) -> Result<(), String> {
        let mut message = render::slack(notice, links);
        message["channel"] = json!(self.channel);
        let Some(passage) = &notice.passage else {
            return self
                .slack_call(reach, "chat.postMessage", &message, notice)
                .await
                .map(drop);
        };
        match thread(threads, &notice.namespace, passage) {
            None => {
                let answer = self
                    .slack_call(reach, "chat.postMessage", &message, notice)
                    .await?;
                let ts = answer["ts"].as_str().unwrap_or_default().to_string();
                let channel = answer["channel"]
                    .as_str()
                    .unwrap_or(&self.channel)
                    .to_string();
                remember(threads, &notice.namespace, passage, ts, channel);
                Ok(())
            }
            Some(found) => {
                let (ts, channel) = (found.id.clone(), found.channel.clone());
                let mut update = message.clone();
                update["channel"] = json!(channel);
                update["ts"] = json!(ts);
                self.slack_call(reach, "chat.update", &update, notice)
                    .await?;
                message["channel"] = json!(channel);
                message["thread_ts"] = json!(ts);
                self.slack_call(reach, "chat.postMessage", &message, notice)
                    .await
                    .map(drop)
            }
        }
    }

    /// A Slack Web API call: an answer of 200 says `ok: false` when it failed.
    async fn slack_call(
        &self,
        reach: &Reach,
        method: &str,
        body: &Value,
        notice: &Notice,
    ) -> Result<Value, String> {
        let url = self.joined(&[method])?;
        let answer = self.post(reach, url, body, notice).await?;
        if answer["ok"].as_bool() == Some(true) {
            Ok(answer)
        } else {
            Err(format!(
                "Slack {method}: {}",
                answer["error"].as_str().unwrap_or("no ok in its answer")
            ))
        }
    }

    /// One GitHub deployment per crossing (environment = the Gate), its statuses
    /// following it: `in_progress` when it starts, `success`, `failure` or `error`
    /// when it ends, `failure` when its verification says no.
    async fn github(
        &self,
        reach: &Reach,
        links: &Links,
        notice: &Notice,
        threads: &mut Vec<NoticeThread>,
    ) -> Result<(), String> {
        let Some(passage) = &notice.passage else {
            return Ok(());
        };
        let state = match notice.kind {
            NoticeKind::CrossingStarted => "in_progress",
            NoticeKind::Crossed | NoticeKind::RolledBack => "success",
            NoticeKind::CrossingFailed | NoticeKind::VerificationFailed => "failure",
            NoticeKind::CrossingAborted | NoticeKind::RolloutHalted => "error",
            NoticeKind::Stuck
            | NoticeKind::ApprovalWanted
            | NoticeKind::Rejected
            | NoticeKind::WaitingForWindow => return Ok(()),
        };
        let id = match thread(threads, &notice.namespace, passage) {
            Some(found) => found.id.clone(),
            None => {
                let revision = match &notice.revision {
                    Some(revision) => revision.clone(),
                    None => self.default_branch(reach, notice).await?,
                };
                let url = self.joined(&["repos", &self.owner()?, &self.name()?, "deployments"])?;
                let body = json!({
                    "ref": revision,
                    "environment": notice.gate,
                    "description": cut(&notice.summary, 140),
                    "auto_merge": false,
                    "required_contexts": [],
                    "payload": {
                        "namespace": notice.namespace,
                        "passage": passage,
                        "bundle": notice.bundle,
                        "version": notice.version,
                    },
                });
                let answer = self.post(reach, url, &body, notice).await?;
                let id = answer["id"]
                    .as_u64()
                    .ok_or("GitHub's answer to a deployment has no id")?
                    .to_string();
                remember(
                    threads,
                    &notice.namespace,
                    passage,
                    id.clone(),
                    String::new(),
                );
                id
            }
        };
        let url = self.joined(&[
            "repos",
            &self.owner()?,
            &self.name()?,
            "deployments",
            &id,
            "statuses",
        ])?;
        let mut body = json!({
            "state": state,
            "description": cut(&notice.summary, 140),
        });
        if let Some(link) = links.of(notice) {
            body["log_url"] = json!(link);
        }
        self.post(reach, url, &body, notice).await.map(drop)
    }

    /// The repository's default branch: what a Bundle that pins no commit deploys.
    async fn default_branch(&self, reach: &Reach, notice: &Notice) -> Result<String, String> {
        let url = self.joined(&["repos", &self.owner()?, &self.name()?])?;
        let answer = self.request(reach, url, None, notice).await?;
        answer["default_branch"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| {
                format!(
                    "GitHub's answer for {} has no default branch",
                    self.repository
                )
            })
    }

    fn owner(&self) -> Result<String, String> {
        self.repository
            .split('/')
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| "repository is not owner/name".to_string())
    }

    fn name(&self) -> Result<String, String> {
        self.repository
            .split('/')
            .nth(1)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| "repository is not owner/name".to_string())
    }

    /// The address with `segments` added, each escaped.
    fn joined(&self, segments: &[&str]) -> Result<reqwest::Url, String> {
        let mut url = self.url.clone();
        url.path_segments_mut()
            .map_err(|()| "the address cannot take a path".to_string())?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    async fn post(
        &self,
        reach: &Reach,
        url: reqwest::Url,
        body: &Value,
        notice: &Notice,
    ) -> Result<Value, String> {
        self.request(reach, url, Some(body), notice).await
    }

    /// One request: the body (if any) as JSON, the notice's kind and key in headers,
    /// the signature or the token each kind asks for. Its answer, as JSON (`null`
    /// when it is not JSON).
    async fn request(
        &self,
        reach: &Reach,
        url: reqwest::Url,
        body: Option<&Value>,
        notice: &Notice,
    ) -> Result<Value, String> {
        // Judged before the request (a literal address is resolved by nobody), then
        // by the client at every connection.
        reach.judge_url(&url).await.map_err(|refused| refused.0)?;
        let client = reach
            .client(&url, Redirects::None)
            .map_err(|e| error_chain(&e.without_url()))?;
        let bytes = body.map(|b| b.to_string().into_bytes());
        let mut request = match &bytes {
            Some(bytes) => client
                .post(url)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
            None => client.get(url),
        }
        .timeout(TIMEOUT)
        .header(
            http::header::USER_AGENT,
            concat!("hecate-controller/", env!("CARGO_PKG_VERSION")),
        )
        .header(EVENT_HEADER, notice.kind.as_str())
        .header(DELIVERY_HEADER, &notice.key);
        match (self.kind, &self.token) {
            (Kind::GenericHmac, Some(key)) => {
                let signature = sign(key.as_bytes(), bytes.as_deref().unwrap_or_default());
                request = request.header(SIGNATURE_HEADER, format!("sha256={signature}"));
            }
            (Kind::GitHub, Some(token)) => {
                request = request
                    .bearer_auth(token)
                    .header(http::header::ACCEPT, "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28");
            }
            (Kind::SlackBot, Some(token)) => request = request.bearer_auth(token),
            _ => {}
        }
        let response = request
            .send()
            .await
            .map_err(|e| error_chain(&e.without_url()))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| error_chain(&e.without_url()))?;
        if !status.is_success() {
            let said = cut(text.trim(), 200);
            return Err(if said.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: {said}")
            });
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// HMAC-SHA256 of `body` under `key`, in lower-case hex.
pub fn sign(key: &[u8], body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    hex::encode(ring::hmac::sign(&key, body).as_ref())
}

fn thread<'a>(
    threads: &'a [NoticeThread],
    namespace: &str,
    passage: &str,
) -> Option<&'a NoticeThread> {
    threads
        .iter()
        .find(|t| t.namespace == namespace && t.passage == passage)
}

/// Records a crossing's thread, newest first, keeping [`THREADS_KEPT`].
fn remember(
    threads: &mut Vec<NoticeThread>,
    namespace: &str,
    passage: &str,
    id: String,
    channel: String,
) {
    threads.insert(
        0,
        NoticeThread {
            namespace: namespace.to_string(),
            passage: passage.to_string(),
            id,
            channel,
        },
    );
    threads.truncate(THREADS_KEPT);
}

/// At most `max` characters of `text`.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_hmac_sha256_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_description_is_cut_to_what_github_takes() {
        assert_eq!(cut("abc", 2), "ab…");
        assert_eq!(cut("ab", 2), "ab");
    }
}
