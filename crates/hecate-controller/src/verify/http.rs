//! The `http` verifier (spec controller.md §7): a crossing is verified while a URL
//! answers as expected — a health endpoint, a smoke test. Each look sends one request
//! through the `http` step's own machinery ([`hecate_steps::http::Http`]), so a
//! verification reaches only what the operator lets steps reach; [`judge`] decides from
//! the answer alone.

use std::time::Duration;

use futures::future::BoxFuture;
use hecate_steps::http::{Answer, Http, NoAnswer, Outgoing};
use hecate_steps::reach::Reach;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use hecate_ops::rules::verification::{Look, Seen};

use super::{Subject, Verifier, VerifyError};

/// How long one look's request may take. A verification's own `timeout` is how long it
/// may stay undecided, not this.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Verifies by a URL's answer.
pub struct HttpVerifier {
    http: Http,
}

/// The `with` of an `http` verification: the catalogue's, which ops judges a Gate by.
pub use hecate_ops::catalogue::verifier::HttpConfig;

/// The headers `config` sends, or why one cannot be.
fn headers(config: &HttpConfig) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("headers: {name:?} is not a header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("headers: {value:?} is not a header value"))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// The method `config` sends, or why it cannot be.
fn method(config: &HttpConfig) -> Result<reqwest::Method, String> {
    reqwest::Method::from_bytes(config.method.as_bytes())
        .map_err(|_| format!("method: {:?} is not an HTTP method", config.method))
}

impl HttpVerifier {
    /// The name verifications use.
    pub const NAME: &'static str = hecate_ops::catalogue::Verifier::Http.name();

    /// A verifier whose requests go where `reach` allows, as `http` steps' do.
    /// (`client` is what the step's machinery reads Secrets through; this verifier
    /// sends none.)
    pub fn new(client: kube::Client, reach: Reach) -> Self {
        Self {
            http: Http::reaching(client, reach),
        }
    }
}

fn config_error(problem: String) -> VerifyError {
    VerifyError::Config {
        verifier: HttpVerifier::NAME.into(),
        problem,
    }
}

impl Verifier for HttpVerifier {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn look<'a>(
        &'a self,
        config: Option<&'a Value>,
        _subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        Box::pin(async move {
            let config = HttpConfig::decode(config).map_err(config_error)?;
            let url = config.url.as_str();
            self.http
                .admit(url)
                .await
                .map_err(|refused| config_error(format!("{url}: {refused}")))?;
            let outgoing = Outgoing {
                url,
                method: method(&config).map_err(config_error)?,
                headers: headers(&config).map_err(config_error)?,
                body: None,
                timeout: REQUEST_TIMEOUT,
                carries_secrets: false,
            };
            let answer = self
                .http
                .exchange(outgoing)
                .await
                .map_err(|missing| match missing {
                    NoAnswer::NotAllowed(refused) => config_error(format!("{url}: {refused}")),
                    NoAnswer::Unreachable(why) => VerifyError::Unanswered(format!("{url}: {why}")),
                    NoAnswer::OtherOrigin(origin) => {
                        VerifyError::Unanswered(format!("{url}: redirected to {origin}"))
                    }
                })?;
            judge(&config, &answer).map_err(config_error)
        })
    }
}

/// Judges an answer to `config`'s request: a status other than those expected (any 2xx
/// when none are) fails, and so does a `successIf` that does not hold; otherwise it
/// passes. The status, as `HTTP 200`, is the look's value. A `successIf` that cannot be
/// evaluated on this answer is an error: the look cannot judge.
pub fn judge(config: &HttpConfig, answer: &Answer) -> Result<Look, String> {
    let url = &config.url;
    let status = answer.status;
    let value = format!("HTTP {status}");
    let expected = if config.expect_status.is_empty() {
        (200..300).contains(&status)
    } else {
        config.expect_status.contains(&status)
    };
    if !expected {
        let wanted = match config.expect_status.as_slice() {
            [] => "a 2xx status".to_string(),
            [one] => one.to_string(),
            many => {
                let many: Vec<String> = many.iter().map(u16::to_string).collect();
                format!("one of {}", many.join(", "))
            }
        };
        return Ok(Look {
            seen: Seen::Fail,
            value,
            message: format!("{url} answered {status}, not {wanted}"),
        });
    }
    let condition = config.success_if.trim();
    if !condition.is_empty() {
        let holds = hecate_expr::success_if(condition, status, &answer.text, answer.json.as_ref())
            .map_err(|error| format!("successIf: {error}"))?;
        if !holds {
            return Ok(Look {
                seen: Seen::Fail,
                value,
                message: format!("{url} answered {status}, but {condition:?} does not hold"),
            });
        }
    }
    Ok(Look {
        seen: Seen::Pass,
        value,
        message: format!("{url} answered {status}"),
    })
}

#[cfg(test)]
mod tests {
    use hecate_ops::rules::verification::Seen;
    use hecate_steps::http::Answer;
    use serde_json::json;

    use super::{HttpConfig, judge};

    fn config(with: serde_json::Value) -> HttpConfig {
        HttpConfig::decode(Some(&with)).expect("a config")
    }

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            text: body.into(),
            truncated: false,
            json: serde_json::from_str(body).ok(),
        }
    }

    #[test]
    fn the_status_and_the_condition_decide() {
        let plain = config(json!({"url": "http://api.shop/healthz", "interval": "30s"}));
        let ready = config(json!({"url": "http://api.shop/healthz",
                                  "successIf": "json.ready == true"}));
        let created = config(json!({"url": "http://api.shop/healthz",
                                    "expectStatus": [201, 204]}));
        let cases = [
            (
                &plain,
                200,
                "ok",
                Seen::Pass,
                "http://api.shop/healthz answered 200",
            ),
            (
                &plain,
                503,
                "down",
                Seen::Fail,
                "http://api.shop/healthz answered 503, not a 2xx status",
            ),
            (
                &plain,
                302,
                "",
                Seen::Fail,
                "http://api.shop/healthz answered 302, not a 2xx status",
            ),
            (
                &ready,
                200,
                r#"{"ready": true}"#,
                Seen::Pass,
                "answered 200",
            ),
            (
                &ready,
                200,
                r#"{"ready": false}"#,
                Seen::Fail,
                "http://api.shop/healthz answered 200, but \"json.ready == true\" does not hold",
            ),
            (
                &ready,
                500,
                r#"{"ready": true}"#,
                Seen::Fail,
                "answered 500, not a 2xx status",
            ),
            (&created, 204, "", Seen::Pass, "answered 204"),
            (
                &created,
                200,
                "",
                Seen::Fail,
                "answered 200, not one of 201, 204",
            ),
        ];
        for (config, status, body, seen, message) in cases {
            let look = judge(config, &answer(status, body)).expect("a look");
            assert_eq!(look.seen, seen, "{look:?}");
            assert_eq!(look.value, format!("HTTP {status}"));
            assert!(
                look.message.ends_with(message),
                "{look:?} lacks {message:?}"
            );
        }
        let one = config(json!({"url": "http://h/", "expectStatus": [200]}));
        let look = judge(&one, &answer(404, "")).expect("a look");
        assert_eq!(look.message, "http://h/ answered 404, not 200");
    }

    #[test]
    fn a_condition_that_cannot_be_evaluated_cannot_judge() {
        let config = config(json!({"url": "http://h/", "successIf": "json.count > 3"}));
        let error = judge(&config, &answer(200, r#"{"count": "many"}"#)).expect_err("no verdict");
        assert!(error.starts_with("successIf: "), "{error}");
    }

    #[test]
    fn the_config_is_checked_and_defaults_to_get() {
        let config = config(json!({"url": " https://h/ready ", "method": "head",
                                   "headers": {"X-Probe": "hecate"}, "timeout": "5m"}));
        assert_eq!(config.url, "https://h/ready");
        assert_eq!(config.method, "HEAD");
        let get = super::HttpConfig::decode(Some(&json!({"url": "http://h/"}))).expect("a config");
        assert_eq!(get.method, "GET");

        let refusals = [
            (None, "url is required"),
            (Some(json!({})), "url is required"),
            (Some(json!({"url": "  "})), "url is required"),
            (
                Some(json!({"url": "ftp://h/"})),
                "url: \"ftp://h/\" is not an http",
            ),
            (
                Some(json!({"url": "h/ready"})),
                "url: \"h/ready\" is not an http",
            ),
            (
                Some(json!({"url": "http://h/", "method": "GET /"})),
                "method: \"GET /\" is not an HTTP method",
            ),
            (
                Some(json!({"url": "http://h/", "expectStatus": [200, 42]})),
                "expectStatus: 42 is not an HTTP status",
            ),
            (
                Some(json!({"url": "http://h/", "successIf": "status =="})),
                "successIf: ",
            ),
            (
                Some(json!({"url": "http://h/", "successIf": "gate == 'dev'"})),
                "successIf: ",
            ),
            (
                Some(json!({"url": "http://h/", "headers": {"X Y": "1"}})),
                "headers: \"X Y\" is not a header name",
            ),
            (Some(json!({"url": 3})), "invalid type"),
        ];
        for (with, problem) in refusals {
            let error = HttpConfig::decode(with.as_ref()).expect_err("refused");
            assert!(error.starts_with(problem), "{with:?}: {error}");
        }
    }
}
