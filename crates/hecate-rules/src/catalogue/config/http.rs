//! `http` (spec §5.15): one HTTP(S) request whose answer decides the step.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::StepConfig;
use super::fields::{
    Deferred, GoDuration, HttpUrl, SecretRef, Textual, blank_is_unset, is_expression, required,
};

/// `http`: call an endpoint, e.g. a webhook, a smoke test or a change system.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpConfig {
    /// Where to send the request.
    pub url: Deferred<HttpUrl>,
    /// The method; unset = `GET`, or `POST` when there is a body (see [`HttpConfig::method`]).
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub method: Option<Deferred<HttpMethod>>,
    /// Plain headers. Never put secrets here: they are stored in the Passage.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Headers whose values come from Secrets, set after the plain ones.
    #[serde(default)]
    pub secret_headers: Vec<SecretHeader>,
    /// A body, sent as JSON.
    #[serde(default)]
    pub body: Option<Value>,
    /// The statuses that count as success; empty = any 2xx.
    #[serde(default)]
    pub expect_status: Vec<u16>,
    /// A boolean expression over `status`, `body` and `json` that must hold as well.
    #[serde(default)]
    pub success_if: String,
    /// How long the request may take; unset = 30 seconds.
    #[serde(default, deserialize_with = "blank_is_unset")]
    pub timeout: Option<Deferred<GoDuration>>,
}

impl HttpConfig {
    /// The method to send: the configured one, else `POST` with a body and `GET`
    /// without.
    pub fn method(&self) -> Deferred<HttpMethod> {
        self.method.clone().unwrap_or_else(|| {
            let method = if self.body.is_some() { "POST" } else { "GET" };
            Deferred::Known(HttpMethod(method.to_string()))
        })
    }

    /// How long the request may take.
    pub fn timeout(&self) -> Deferred<GoDuration> {
        self.timeout.clone().unwrap_or(GoDuration::secs(30))
    }
}

impl StepConfig for HttpConfig {
    fn check(&self) -> Result<(), String> {
        for (i, header) in self.secret_headers.iter().enumerate() {
            required(&format!("secretHeaders[{i}].name"), &header.name)?;
            header
                .secret_ref
                .check(&format!("secretHeaders[{i}].secretRef"))?;
        }
        for status in &self.expect_status {
            if !(100..=599).contains(status) {
                return Err(format!(
                    "expectStatus: {status} is not an HTTP status (100-599)"
                ));
            }
        }
        // `successIf` is compiled here, so a Gate reports a broken one before a crossing
        // sends a request it could not judge; one holding `${{ … }}` is only known once
        // substituted (spec §3.9), and is compiled when the step runs.
        if !self.success_if.trim().is_empty() && !is_expression(&self.success_if) {
            hecate_expr::compile_success_if(&self.success_if)
                .map_err(|why| format!("successIf: {why}"))?;
        }
        Ok(())
    }
}

/// A request method, upper-cased (`get` sends `GET`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpMethod(pub String);

impl Textual for HttpMethod {
    fn from_text(text: &str) -> Result<Self, String> {
        let is_token_char = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if text.chars().all(is_token_char) && !text.is_empty() {
            Ok(HttpMethod(text.to_ascii_uppercase()))
        } else {
            Err(format!("{text:?} is not an HTTP method"))
        }
    }
}

/// A header whose value is read from a Secret when the request is sent.
#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecretHeader {
    /// The header's name, e.g. `Authorization`.
    pub name: String,
    /// Text put before the secret value, e.g. `Bearer `.
    #[serde(default)]
    pub prefix: String,
    /// The Secret holding the value.
    pub secret_ref: SecretRef,
    /// The key in the Secret; blank = `token` (see [`SecretHeader::key`]).
    #[serde(default)]
    pub key: String,
}

impl SecretHeader {
    /// The key in the Secret to read.
    pub fn key(&self) -> &str {
        if self.key.trim().is_empty() {
            "token"
        } else {
            &self.key
        }
    }
}

#[cfg(test)]
mod tests {
    use jiff::SignedDuration;
    use serde_json::json;

    use super::super::fields::{Deferred, GoDuration, HttpUrl};
    use super::super::test_support::{accepted, refuses};
    use super::HttpMethod;

    fn http(with: serde_json::Value) -> super::HttpConfig {
        accepted("http", with)
    }

    #[test]
    fn defaults() {
        let get = http(json!({"url": "https://example.com/health"}));
        assert_eq!(
            get.url,
            Deferred::Known(HttpUrl("https://example.com/health".into()))
        );
        assert_eq!(get.method(), Deferred::Known(HttpMethod("GET".into())));
        assert_eq!(
            get.timeout(),
            Deferred::Known(GoDuration(SignedDuration::from_secs(30)))
        );
        let post = http(json!({"url": "http://127.0.0.1:18080/hook", "body": {"a": 1}}));
        assert_eq!(post.method(), Deferred::Known(HttpMethod("POST".into())));
        let put = http(json!({"url": "http://h", "method": "put"}));
        assert_eq!(put.method(), Deferred::Known(HttpMethod("PUT".into())));
    }

    #[test]
    fn full_configuration() {
        let call = http(json!({
            "url": "https://change.example/api",
            "method": "PATCH",
            "headers": {"X-Gate": "${{ gate }}"},
            "secretHeaders": [{"name": "Authorization", "prefix": "Bearer ",
                               "secretRef": {"name": "change-api"}}],
            "body": ["any", "json"],
            "expectStatus": [200, 201],
            "successIf": "json.ok == true",
            "timeout": "1m",
        }));
        assert_eq!(call.secret_headers[0].key(), "token");
    }

    #[test]
    fn expressions_are_left_for_run_time() {
        http(
            json!({"url": "${{ vars.hook }}", "method": "${{ vars.method }}",
                    "timeout": "${{ vars.timeout }}"}),
        );
        http(json!({"url": "${{ vars.base }}/hook"}));
    }

    #[test]
    fn refusals() {
        refuses("http", json!({}), &["missing field `url`"]);
        refuses("http", json!({"url": ""}), &["url", "http://"]);
        refuses(
            "http",
            json!({"url": "ftp://example.com"}),
            &["url", "http://"],
        );
        refuses("http", json!({"url": "127.0.0.1:18080/hook"}), &["url"]);
        refuses(
            "http",
            json!({"url": "http://h", "uri": "x"}),
            &["unknown field `uri`"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "method": "GET /"}),
            &["method"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "timeout": "30"}),
            &["timeout"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "timeout": "0s"}),
            &["timeout"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "headers": {"X-N": 1}}),
            &["headers"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "expectStatus": [200, 42]}),
            &["expectStatus"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "expectStatus": 200}),
            &["expectStatus"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "secretHeaders": [{"secretRef": {"name": "s"}}]}),
            &["secretHeaders[0]", "missing field `name`"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "secretHeaders": [{"name": "", "secretRef": {"name": "s"}}]}),
            &["secretHeaders[0].name must not be empty"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "secretHeaders": [{"name": "A"}]}),
            &["secretHeaders[0]", "missing field `secretRef`"],
        );
        refuses(
            "http",
            json!({"url": "http://h",
                   "secretHeaders": [{"name": "A", "secretRef": {"name": "s"}, "value": "x"}]}),
            &["unknown field `value`"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "successIf": "status =="}),
            &["successIf", "invalid expression"],
        );
        refuses(
            "http",
            json!({"url": "http://h", "successIf": "gate == 'dev'"}),
            &["successIf", "unknown name \"gate\""],
        );
    }

    #[test]
    fn success_if_is_compiled_unless_it_holds_an_expression() {
        http(json!({"url": "http://h", "successIf": "status == 200 && json.ok"}));
        http(json!({"url": "http://h", "successIf": "json.version == '${{ vars.v }}'"}));
    }
}
