//! The verifiers a Gate's `verify[].uses` may name — the one list — each with its
//! typed `with:` and the checks that need no cluster.
//!
//! One decoder serves two moments, as for steps: ops judges a Gate's verifications
//! before any crossing (a `with` whose text holds `${{ … }}` is judged once
//! substituted, so only the rest is checked then), and the controller decodes each
//! look's substituted `with` with the same types before it looks.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::rules::verification::Cadence;
use hecate_expr::is_expression;
use hecate_types::duration as go_duration;

/// A kind of verification (spec controller.md §7, DECISION 139).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verifier {
    /// `flagger`: a Flagger Canary's phase.
    Flagger,
    /// `http`: a URL's answer.
    Http,
    /// `prometheus`: a query's value.
    Prometheus,
    /// `soak`: time spent healthy.
    Soak,
}

impl Verifier {
    /// Every verifier, by name.
    pub const ALL: &'static [Verifier] = &[
        Verifier::Flagger,
        Verifier::Http,
        Verifier::Prometheus,
        Verifier::Soak,
    ];

    /// Its `uses:` name.
    pub const fn name(self) -> &'static str {
        match self {
            Verifier::Flagger => "flagger",
            Verifier::Http => "http",
            Verifier::Prometheus => "prometheus",
            Verifier::Soak => "soak",
        }
    }

    /// The verifier called `uses`, if there is one.
    pub fn named(uses: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == uses)
    }

    /// Whether `with` is a verification this verifier can run, judged before any
    /// crossing: the cadence every verifier shares, then its own configuration;
    /// `Err` says which field and what is wrong.
    pub fn check(self, with: Option<&Value>) -> Result<(), String> {
        if let Some(with) = with
            && !with.is_null()
            && !with.is_object()
        {
            return Err("with must be a mapping of settings".into());
        }
        Cadence::of(with)?;
        match self {
            Verifier::Flagger => FlaggerConfig::decode(with).map(drop),
            Verifier::Http => HttpConfig::decode(with).map(drop),
            Verifier::Prometheus => PrometheusConfig::decode(with).map(drop),
            Verifier::Soak => soak_duration(with).map(drop),
        }
    }
}

impl std::fmt::Display for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every verifier's name, comma-separated: how a message lists them.
pub fn names() -> String {
    super::listed(Verifier::ALL, Verifier::name)
}

/// Decodes `with` leniently (unknown keys, the cadence's among them, are ignored);
/// absent or null is the default.
fn lenient<T: for<'de> Deserialize<'de> + Default>(with: Option<&Value>) -> Result<T, String> {
    match with {
        None | Some(Value::Null) => Ok(T::default()),
        Some(with) => T::deserialize(with).map_err(|e| e.to_string()),
    }
}

/// Whether `text` is to be judged now: not blank and not waiting for substitution.
fn known(text: &str) -> bool {
    !is_expression(text)
}

/// `http://` or `https://` with a host, as [`url::Url`] reads it.
fn check_http_url(field: &str, text: &str) -> Result<(), String> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(format!(
            "{field}: {text:?} is not an http:// or https:// URL"
        )),
    }
}

/// An HTTP token (RFC 9110 §5.6.2): what a method or a header's name may be.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// What a header's value may hold: visible ASCII, spaces and tabs.
fn is_header_value(text: &str) -> bool {
    text.bytes().all(|b| b == b'\t' || (32..127).contains(&b))
}

/// The `with` of a `flagger` verification. Unknown keys are ignored.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FlaggerConfig {
    /// The Canary's name; required.
    #[serde(default)]
    pub name: String,
    /// The Canary's namespace; the Gate's when empty.
    #[serde(default)]
    pub namespace: String,
}

impl FlaggerConfig {
    /// Decodes a verification's `with` and checks that it names a Canary.
    pub fn decode(with: Option<&Value>) -> Result<Self, String> {
        let config: Self = lenient(with)?;
        if config.name.trim().is_empty() {
            return Err("name is required".into());
        }
        Ok(config)
    }
}

/// The `with` of an `http` verification. Unknown keys — the cadence's among them — are
/// ignored.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// Where to send the request; required, `http://` or `https://`.
    #[serde(default)]
    pub url: String,
    /// The method, upper-cased; `GET` when empty.
    #[serde(default)]
    pub method: String,
    /// The statuses that pass; empty: any 2xx.
    #[serde(default)]
    pub expect_status: Vec<u16>,
    /// A boolean expression over `status`, `body` and `json` that must hold as well;
    /// empty: none.
    #[serde(default)]
    pub success_if: String,
    /// Plain headers to send.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl HttpConfig {
    /// Decodes a verification's `with` and checks it: a URL, a method, statuses that
    /// exist, headers that can be sent, a `successIf` that compiles.
    pub fn decode(with: Option<&Value>) -> Result<Self, String> {
        let mut config: Self = lenient(with)?;
        config.url = config.url.trim().to_string();
        if config.url.is_empty() {
            return Err("url is required".into());
        }
        if known(&config.url) {
            check_http_url("url", &config.url)?;
        }
        config.method = match config.method.trim() {
            "" => "GET".to_string(),
            given => given.to_ascii_uppercase(),
        };
        if known(&config.method) && !is_token(&config.method) {
            return Err(format!("method: {:?} is not an HTTP method", config.method));
        }
        if let Some(status) = config
            .expect_status
            .iter()
            .find(|s| !(100..=599).contains(*s))
        {
            return Err(format!(
                "expectStatus: {status} is not an HTTP status (100-599)"
            ));
        }
        if !config.success_if.trim().is_empty() {
            hecate_expr::compile_success_if(&config.success_if)
                .map_err(|why| format!("successIf: {why}"))?;
        }
        for (name, value) in &config.headers {
            if known(name) && !is_token(name) {
                return Err(format!("headers: {name:?} is not a header name"));
            }
            if known(value) && !is_header_value(value) {
                return Err(format!("headers: {value:?} is not a header value"));
            }
        }
        Ok(config)
    }
}

/// The `with` of a `prometheus` verification. Unknown keys — the cadence's among them —
/// are ignored.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PrometheusConfig {
    /// Prometheus' base URL, e.g. `http://prometheus.monitoring:9090`; required.
    #[serde(default)]
    pub address: String,
    /// The PromQL query; required.
    #[serde(default)]
    pub query: String,
    /// The condition the query's value must meet, e.g. `result < 0.01`; required.
    #[serde(default)]
    pub success_if: String,
    /// A Secret in the Gate's namespace holding a bearer token to send.
    #[serde(default)]
    pub secret_ref: Option<TokenRef>,
}

/// Where a bearer token is kept: a Secret in the Gate's namespace and a key in it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenRef {
    /// The Secret's name; required.
    #[serde(default)]
    pub name: String,
    /// The key holding the token; `token` when empty (see [`TokenRef::key`]).
    #[serde(default)]
    pub key: String,
}

impl TokenRef {
    /// The key to read.
    pub fn key(&self) -> &str {
        match self.key.trim() {
            "" => "token",
            key => key,
        }
    }
}

impl PrometheusConfig {
    /// Decodes a verification's `with` and checks it: an address, a query, a
    /// `successIf` of the one form ([`PrometheusConfig::condition`]), a Secret named.
    pub fn decode(with: Option<&Value>) -> Result<Self, String> {
        let mut config: Self = lenient(with)?;
        config.address = config.address.trim().trim_end_matches('/').to_string();
        if config.address.is_empty() {
            return Err("address is required".into());
        }
        if known(&config.address) {
            check_http_url("address", &config.address)?;
        }
        if config.query.trim().is_empty() {
            return Err("query is required".into());
        }
        if config.success_if.trim().is_empty() {
            return Err(format!("successIf is required, e.g. {:?}", "result < 0.01"));
        }
        if known(&config.success_if) {
            config.condition()?;
        }
        if let Some(secret) = &config.secret_ref
            && secret.name.trim().is_empty()
        {
            return Err("secretRef.name is required".into());
        }
        Ok(config)
    }

    /// Its `successIf`, read.
    pub fn condition(&self) -> Result<Condition, String> {
        Condition::parse(&self.success_if).map_err(|why| format!("successIf: {why}"))
    }
}

/// How a query's value is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Less,
    /// `<=`
    AtMost,
    /// `>`
    Greater,
    /// `>=`
    AtLeast,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
}

impl Op {
    /// Longer spellings first, so `<=` is not read as `<`.
    const ALL: [(&'static str, Op); 6] = [
        ("<=", Op::AtMost),
        (">=", Op::AtLeast),
        ("==", Op::Equal),
        ("!=", Op::NotEqual),
        ("<", Op::Less),
        (">", Op::Greater),
    ];

    fn symbol(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("?", |(symbol, _)| symbol)
    }
}

/// A `successIf`: `result <op> <number>`, with op one of `<`, `<=`, `>`, `>=`, `==`,
/// `!=`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Condition {
    /// The comparison.
    pub op: Op,
    /// What the value is compared with; finite.
    pub threshold: f64,
}

impl Condition {
    /// Reads `result < 0.01` and the like; the error says what is wrong in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let shape = || format!("{text:?} is not of the form \"result < 0.01\"");
        let rest = text
            .trim()
            .strip_prefix("result")
            .ok_or_else(shape)?
            .trim_start();
        let (op, number) = Op::ALL
            .iter()
            .find_map(|(symbol, op)| rest.strip_prefix(symbol).map(|number| (*op, number)))
            .ok_or_else(|| {
                format!("{text:?} compares with none of <, <=, >, >=, ==, != after \"result\"")
            })?;
        let number = number.trim();
        let threshold = number
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| format!("{number:?} in {text:?} is not a number"))?;
        Ok(Self { op, threshold })
    }

    /// Whether `value` meets the condition.
    pub fn holds(&self, value: f64) -> bool {
        let t = self.threshold;
        match self.op {
            Op::Less => value < t,
            Op::AtMost => value <= t,
            Op::Greater => value > t,
            Op::AtLeast => value >= t,
            Op::Equal => value == t,
            Op::NotEqual => value != t,
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "result {} {}", self.op.symbol(), self.threshold)
    }
}

/// How long a soak lasts, from its `with: {duration}`.
pub fn soak_duration(with: Option<&Value>) -> Result<Duration, String> {
    let text = with
        .and_then(|w| w.get("duration"))
        .and_then(Value::as_str)
        .ok_or("duration is required, e.g. \"30m\"")?;
    let parsed = go_duration::parse(text).map_err(|e| format!("duration: {e}"))?;
    Duration::try_from(parsed)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "duration: must be more than 0s".into())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn check(uses: &str, with: Value) -> Result<(), String> {
        Verifier::named(uses)
            .unwrap_or_else(|| panic!("{uses} is not a verifier"))
            .check(Some(&with))
    }

    #[test]
    fn each_name_finds_its_verifier() {
        for verifier in Verifier::ALL {
            assert_eq!(Verifier::named(verifier.name()), Some(*verifier));
        }
        assert_eq!(Verifier::named("argo-rollouts"), None);
        assert_eq!(names(), "flagger, http, prometheus, soak");
    }

    #[test]
    fn good_configurations_pass_and_expressions_wait_for_substitution() {
        for (uses, with) in [
            ("flagger", json!({"name": "podinfo"})),
            (
                "http",
                json!({"url": "https://shop.example/ready", "interval": "30s"}),
            ),
            (
                "http",
                json!({"url": "${{ vars.readyURL }}", "method": "${{ vars.m }}"}),
            ),
            (
                "prometheus",
                json!({"address": "http://prom:9090", "query": "up", "successIf": "result >= 1"}),
            ),
            (
                "prometheus",
                json!({"address": "${{ vars.prom }}", "query": "up", "successIf": "${{ vars.slo }}"}),
            ),
            ("soak", json!({"duration": "30m", "timeout": "2h"})),
        ] {
            assert_eq!(check(uses, with.clone()), Ok(()), "{uses} {with}");
        }
    }

    #[test]
    fn each_bad_field_is_named() {
        for (uses, with, said) in [
            ("flagger", json!({}), "name is required"),
            ("flagger", json!({"name": 3}), "invalid type"),
            ("http", json!({}), "url is required"),
            (
                "http",
                json!({"url": "ftp://x"}),
                "url: \"ftp://x\" is not an http",
            ),
            (
                "http",
                json!({"url": "http://x", "method": "GE T"}),
                "method:",
            ),
            (
                "http",
                json!({"url": "http://x", "expectStatus": [700]}),
                "expectStatus: 700",
            ),
            (
                "http",
                json!({"url": "http://x", "successIf": "status =="}),
                "successIf:",
            ),
            (
                "http",
                json!({"url": "http://x", "headers": {"a b": "1"}}),
                "headers: \"a b\"",
            ),
            (
                "http",
                json!({"url": "http://x", "headers": {"a": "1\n2"}}),
                "is not a header value",
            ),
            (
                "http",
                json!({"url": "http://x", "interval": "1ms"}),
                "interval: 1ms is too often",
            ),
            (
                "http",
                json!({"url": "http://x", "successes": 0}),
                "successes",
            ),
            (
                "prometheus",
                json!({"query": "up", "successIf": "result < 1"}),
                "address is required",
            ),
            (
                "prometheus",
                json!({"address": "http://p", "successIf": "result < 1"}),
                "query is required",
            ),
            (
                "prometheus",
                json!({"address": "http://p", "query": "up"}),
                "successIf is required",
            ),
            (
                "prometheus",
                json!({"address": "http://p", "query": "up", "successIf": "result ~ 1"}),
                "compares with none",
            ),
            (
                "prometheus",
                json!({"address": "http://p", "query": "up", "successIf": "result < 1", "secretRef": {}}),
                "secretRef.name is required",
            ),
            ("soak", json!({}), "duration is required"),
            ("soak", json!({"duration": "0s"}), "more than 0s"),
            ("soak", json!({"duration": "soon"}), "duration:"),
            ("soak", json!(["30m"]), "with must be a mapping"),
        ] {
            let why = check(uses, with.clone()).expect_err(&format!("{uses} {with}"));
            assert!(why.contains(said), "{uses} {with}: {why:?} lacks {said:?}");
        }
    }

    fn below(threshold: f64) -> Condition {
        Condition {
            op: Op::Less,
            threshold,
        }
    }

    #[test]
    fn conditions_are_read_in_their_one_form() {
        let cases = [
            ("result < 0.01", Op::Less, 0.01),
            ("  result<=1", Op::AtMost, 1.0),
            ("result > -2.5", Op::Greater, -2.5),
            ("result >= 1e-3", Op::AtLeast, 0.001),
            ("result == 0", Op::Equal, 0.0),
            ("result != 3 ", Op::NotEqual, 3.0),
        ];
        for (text, op, threshold) in cases {
            assert_eq!(
                Condition::parse(text),
                Ok(Condition { op, threshold }),
                "{text}"
            );
        }
        assert_eq!(below(0.01).to_string(), "result < 0.01");
        assert_eq!(
            Condition::parse("result>=5")
                .expect("a condition")
                .to_string(),
            "result >= 5"
        );

        let refusals = [
            ("value < 1", "is not of the form"),
            ("", "is not of the form"),
            ("result", "compares with none"),
            ("result ~ 1", "compares with none"),
            ("result =< 1", "compares with none"),
            ("result < ", "\"\" in"),
            ("result < one", "\"one\" in"),
            ("result < NaN", "\"NaN\" in"),
            ("result < inf", "\"inf\" in"),
            ("result < 1 && result > 0", "is not a number"),
        ];
        for (text, problem) in refusals {
            let error = Condition::parse(text).expect_err(text);
            assert!(error.contains(problem), "{text}: {error}");
        }
        let c = Condition::parse("result<=0.5").unwrap();
        assert_eq!((c.op, c.threshold), (Op::AtMost, 0.5));
        assert_eq!(c.to_string(), "result <= 0.5");
        assert!(c.holds(0.5) && !c.holds(0.6));
        assert!(Condition::parse("rate < 1").is_err());
        assert!(Condition::parse("result < NaN").is_err());
    }

    #[test]
    fn each_comparison_holds_as_written() {
        let at = |op, value| Condition { op, threshold: 1.0 }.holds(value);
        assert!(at(Op::Less, 0.5) && !at(Op::Less, 1.0));
        assert!(at(Op::AtMost, 1.0) && !at(Op::AtMost, 1.5));
        assert!(at(Op::Greater, 1.5) && !at(Op::Greater, 1.0));
        assert!(at(Op::AtLeast, 1.0) && !at(Op::AtLeast, 0.5));
        assert!(at(Op::Equal, 1.0) && !at(Op::Equal, 0.5));
        assert!(at(Op::NotEqual, 0.5) && !at(Op::NotEqual, 1.0));
    }
}
