//! The `prometheus` verifier (spec controller.md §7): a crossing is verified while a
//! PromQL query's value meets a threshold — an error ratio below 1%, a latency under a
//! bound. Each look runs one instant query (`GET {address}/api/v1/query`);
//! [`Condition`] is the `successIf` it is held to (`result < 0.01`), and [`judge`]
//! decides from Prometheus' answer alone. No data, a query Prometheus rejects, a server
//! that does not answer, or `NaN` is a look that cannot judge: never a pass.

use std::time::Duration;

use futures::future::BoxFuture;
use hecate_sources::tls::error_text;
use hecate_steps::reach::{Reach, Redirects};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::Value;

use hecate_ops::rules::verification::{Look, Seen};

use super::{Subject, Verifier, VerifyError};

/// How long one query may take. A verification's own `timeout` is how long it may stay
/// undecided, not this.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of an answer that is not Prometheus' is quoted in a message.
const QUOTED: usize = 200;

/// Verifies by a Prometheus query.
pub struct PrometheusVerifier {
    client: kube::Client,
    /// Where queries may go: where `http` steps may, and nothing more.
    reach: Reach,
}

/// The `with` of a `prometheus` verification and its `successIf`: the catalogue's,
/// which ops judges a Gate by.
pub use hecate_ops::catalogue::verifier::{Condition, Op, PrometheusConfig, TokenRef};

/// The URL of an instant query of `config`'s query.
pub fn query_url(config: &PrometheusConfig) -> Result<reqwest::Url, String> {
    let endpoint = format!("{}/api/v1/query", config.address);
    let mut url = match reqwest::Url::parse(&endpoint) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => {
            return Err(format!(
                "address: {:?} is not an http:// or https:// URL",
                config.address
            ));
        }
    };
    url.query_pairs_mut().append_pair("query", &config.query);
    Ok(url)
}

impl PrometheusVerifier {
    /// The name verifications use.
    pub const NAME: &'static str = hecate_ops::catalogue::Verifier::Prometheus.name();

    /// A verifier reading bearer tokens' Secrets through `client`, querying servers
    /// `reach` allows (the `http` step's rules: never the controller's own listeners,
    /// this host's addresses only with `--allow-local-http`). Redirects are not
    /// followed: Prometheus' API answers where it is asked.
    pub fn new(client: kube::Client, reach: Reach) -> Self {
        Self { client, reach }
    }

    /// The bearer token `secret` holds, from the Gate's `namespace`.
    async fn token(&self, namespace: &str, secret: &TokenRef) -> Result<HeaderValue, VerifyError> {
        let name = secret.name.trim();
        let data = hecate_sources::secrets::read(&self.client, namespace, name)
            .await
            .map_err(config_error)?;
        let token = hecate_sources::secrets::text(&data, secret.key())
            .ok_or_else(|| config_error(format!("Secret {name} has no {:?}", secret.key())))?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            config_error(format!(
                "the token in Secret {name} cannot be sent in a header"
            ))
        })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

fn config_error(problem: String) -> VerifyError {
    VerifyError::Config {
        verifier: PrometheusVerifier::NAME.into(),
        problem,
    }
}

impl Verifier for PrometheusVerifier {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn look<'a>(
        &'a self,
        config: Option<&'a Value>,
        subject: &'a Subject<'a>,
    ) -> BoxFuture<'a, Result<Look, VerifyError>> {
        Box::pin(async move {
            let config = PrometheusConfig::decode(config).map_err(config_error)?;
            let condition = config.condition().map_err(config_error)?;
            let url = query_url(&config).map_err(config_error)?;
            self.reach
                .judge_url(&url)
                .await
                .map_err(|refused| config_error(refused.0))?;
            let address = &config.address;
            let unanswered = |e: reqwest::Error| {
                VerifyError::Unanswered(format!("Prometheus at {address}: {}", error_text(&e)))
            };
            // Each look's own client judges the address it connects to, with its port.
            let http = self
                .reach
                .client(&url, Redirects::None)
                .map_err(unanswered)?;
            let mut request = http.get(url).timeout(REQUEST_TIMEOUT);
            if let Some(secret) = &config.secret_ref {
                request =
                    request.header(AUTHORIZATION, self.token(subject.namespace, secret).await?);
            }
            let response = request.send().await.map_err(unanswered)?;
            let status = response.status().as_u16();
            let body = response.text().await.map_err(unanswered)?;
            Ok(judge(&condition, status, &body))
        })
    }
}

/// What an instant query gave: one number, from how many series.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The value as Prometheus wrote it, e.g. `0.002`.
    pub text: String,
    /// The value.
    pub value: f64,
    /// How many series the result had (1 for a scalar); the first one's value is used.
    pub series: usize,
}

/// Reads Prometheus' answer to an instant query (HTTP `status`, JSON `body`): the value
/// of a scalar, or of a vector's first sample. Why there is no value — an error
/// Prometheus reports, an empty vector, a range result, an answer not from Prometheus —
/// is the error, in words.
pub fn read(status: u16, body: &str) -> Result<Reading, String> {
    let Ok(answer) = serde_json::from_str::<Value>(body) else {
        let quoted: String = body.trim().chars().take(QUOTED).collect();
        return Err(if quoted.is_empty() {
            format!("Prometheus answered HTTP {status} with no body")
        } else {
            format!("Prometheus answered HTTP {status}, not with JSON: {quoted}")
        });
    };
    match answer["status"].as_str() {
        Some("success") => {}
        Some("error") => {
            let error = answer["error"].as_str().unwrap_or("no reason given");
            return Err(match answer["errorType"].as_str() {
                Some(kind) if !kind.is_empty() => {
                    format!("Prometheus refused the query ({kind}): {error}")
                }
                _ => format!("Prometheus refused the query: {error}"),
            });
        }
        _ => {
            return Err(format!(
                "Prometheus answered HTTP {status} without a query result"
            ));
        }
    }
    let data = &answer["data"];
    let (sample, series) = match data["resultType"].as_str() {
        Some("vector") => {
            let result = data["result"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            match result.first() {
                None => return Err("no data: the query matched no series".into()),
                Some(first) => (&first["value"], result.len()),
            }
        }
        Some("scalar") => (&data["result"], 1),
        Some("matrix") => {
            return Err(
                "range queries are not supported: the query must give one value per series, \
                 not a range of them"
                    .into(),
            );
        }
        Some(other) => return Err(format!("a {other} result has no number to judge")),
        None => return Err("Prometheus' answer has no resultType".into()),
    };
    // A sample is `[<unix time>, "<value>"]`.
    let text = sample[1]
        .as_str()
        .ok_or_else(|| "Prometheus' answer holds a sample without a value".to_string())?;
    let value = text
        .parse::<f64>()
        .map_err(|_| format!("Prometheus gave {text:?}, which is not a number"))?;
    Ok(Reading {
        text: text.to_string(),
        value,
        series,
    })
}

/// Judges Prometheus' answer (HTTP `status`, JSON `body`) by `condition`: a value that
/// meets it passes, one that does not fails, and no value — or `NaN`, which no
/// comparison can judge — cannot judge. The value, as Prometheus wrote it, is the
/// look's.
pub fn judge(condition: &Condition, status: u16, body: &str) -> Look {
    let reading = match read(status, body) {
        Ok(reading) => reading,
        Err(message) => {
            return Look {
                seen: Seen::Inconclusive,
                value: String::new(),
                message,
            };
        }
    };
    let gave = match reading.series {
        1 => format!("the query gave {}", reading.text),
        n => format!("the query gave {} (the first of {n} series)", reading.text),
    };
    let (seen, message) = if reading.value.is_nan() {
        (
            Seen::Inconclusive,
            format!("{gave}, which no threshold can judge"),
        )
    } else if condition.holds(reading.value) {
        (Seen::Pass, format!("{gave}; {condition} holds"))
    } else {
        (Seen::Fail, format!("{gave}; {condition} does not hold"))
    };
    Look {
        seen,
        value: reading.text,
        message,
    }
}

#[cfg(test)]
mod tests {
    use hecate_ops::rules::verification::Seen;
    use serde_json::json;

    use super::{Condition, Op, PrometheusConfig, judge, query_url, read};

    fn below(threshold: f64) -> Condition {
        Condition {
            op: Op::Less,
            threshold,
        }
    }

    fn vector(values: &[&str]) -> String {
        let result: Vec<_> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                json!({"metric": {"__name__": "app_errors_ratio", "pod": format!("api-{i}")},
                       "value": [1_767_000_000.123, v]})
            })
            .collect();
        json!({"status": "success", "data": {"resultType": "vector", "result": result}}).to_string()
    }

    #[test]
    fn a_vector_is_judged_by_its_first_sample() {
        let look = judge(&below(0.01), 200, &vector(&["0.002"]));
        assert_eq!(look.seen, Seen::Pass);
        assert_eq!(look.value, "0.002");
        assert_eq!(look.message, "the query gave 0.002; result < 0.01 holds");

        let look = judge(&below(0.01), 200, &vector(&["0.2", "0.001", "0"]));
        assert_eq!(look.seen, Seen::Fail);
        assert_eq!(look.value, "0.2");
        assert_eq!(
            look.message,
            "the query gave 0.2 (the first of 3 series); result < 0.01 does not hold"
        );

        let look = judge(&below(0.01), 200, &vector(&["+Inf"]));
        assert_eq!((look.seen, look.value.as_str()), (Seen::Fail, "+Inf"));
    }

    #[test]
    fn a_scalar_is_judged_by_its_value() {
        let body = json!({"status": "success",
                          "data": {"resultType": "scalar", "result": [1_767_000_000, "3"]}});
        let look = judge(&below(5.0), 200, &body.to_string());
        assert_eq!(look.seen, Seen::Pass);
        assert_eq!(look.value, "3");
        assert_eq!(look.message, "the query gave 3; result < 5 holds");
    }

    #[test]
    fn what_gives_no_number_cannot_judge() {
        let error = json!({"status": "error", "errorType": "bad_data",
                           "error": "invalid parameter \"query\": 1:5: parse error: unexpected \")\""});
        let matrix = json!({"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": {}, "values": [[1_767_000_000, "1"], [1_767_000_015, "2"]]}]}});
        let string = json!({"status": "success",
                            "data": {"resultType": "string", "result": [1_767_000_000, "up"]}});
        let cases = [
            (200, vector(&[]), "no data: the query matched no series"),
            (
                200,
                vector(&["NaN"]),
                "the query gave NaN, which no threshold can judge",
            ),
            (
                400,
                error.to_string(),
                "Prometheus refused the query (bad_data): invalid parameter \"query\": 1:5: \
                 parse error: unexpected \")\"",
            ),
            (
                422,
                json!({"status": "error", "error": "too many samples"}).to_string(),
                "Prometheus refused the query: too many samples",
            ),
            (200, matrix.to_string(), "range queries are not supported"),
            (
                200,
                string.to_string(),
                "a string result has no number to judge",
            ),
            (
                502,
                "<html>Bad Gateway</html>".to_string(),
                "Prometheus answered HTTP 502, not with JSON: <html>Bad Gateway</html>",
            ),
            (
                503,
                String::new(),
                "Prometheus answered HTTP 503 with no body",
            ),
            (
                200,
                json!({"healthy": true}).to_string(),
                "Prometheus answered HTTP 200 without a query result",
            ),
            (
                200,
                json!({"status": "success", "data": {"resultType": "vector",
                       "result": [{"metric": {}}]}})
                .to_string(),
                "Prometheus' answer holds a sample without a value",
            ),
            (
                200,
                vector(&["lots"]),
                "Prometheus gave \"lots\", which is not a number",
            ),
        ];
        for (status, body, message) in cases {
            let look = judge(&below(1.0), status, &body);
            assert_eq!(look.seen, Seen::Inconclusive, "{body}");
            assert!(
                look.message.starts_with(message),
                "{look:?} lacks {message:?}"
            );
        }
        assert!(read(200, &vector(&[])).is_err());
    }

    #[test]
    fn the_config_is_checked() {
        let config = PrometheusConfig::decode(Some(&json!({
            "address": " http://prometheus.monitoring:9090/ ",
            "query": "sum(rate(errors[5m])) / sum(rate(requests[5m]))",
            "successIf": "result < 0.01",
            "interval": "1m", "successes": 3,
        })))
        .expect("a config");
        assert_eq!(config.condition(), Ok(below(0.01)));
        assert_eq!(config.address, "http://prometheus.monitoring:9090");
        assert_eq!(
            query_url(&config).expect("a URL").as_str(),
            "http://prometheus.monitoring:9090/api/v1/query?query=sum%28rate%28errors%5B5m%5D%29%29+%2F+sum%28rate%28requests%5B5m%5D%29%29"
        );
        let config = PrometheusConfig::decode(Some(&json!({
            "address": "https://o.example/prometheus", "query": "up", "successIf": "result == 1",
            "secretRef": {"name": "prom-token"},
        })))
        .expect("a config");
        let secret = config.secret_ref.clone().expect("a secretRef");
        assert_eq!(
            (secret.name.as_str(), secret.key()),
            ("prom-token", "token")
        );
        assert!(
            query_url(&config)
                .expect("a URL")
                .as_str()
                .starts_with("https://o.example/prometheus/api/v1/query?")
        );

        let base = json!({"address": "http://p:9090", "query": "up", "successIf": "result > 0"});
        let with = |key: &str, value: serde_json::Value| {
            let mut with = base.clone();
            with[key] = value;
            with
        };
        let refusals = [
            (json!({}), "address is required"),
            (with("address", json!("")), "address is required"),
            (
                with("address", json!("p:9090")),
                "address: \"p:9090\" is not an http",
            ),
            (with("query", json!(" ")), "query is required"),
            (with("successIf", json!("")), "successIf is required"),
            (
                with("successIf", json!("up > 0")),
                "successIf: \"up > 0\" is not of the form",
            ),
            (
                with("secretRef", json!({"key": "t"})),
                "secretRef.name is required",
            ),
            (with("query", json!(7)), "invalid type"),
        ];
        for (with, problem) in refusals {
            let error = PrometheusConfig::decode(Some(&with)).expect_err("refused");
            assert!(error.starts_with(problem), "{with}: {error}");
        }
        assert!(PrometheusConfig::decode(None).is_err());
    }
}
