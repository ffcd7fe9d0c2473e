//! The OpenAPI 3 document of the API, generated from the very types the handlers
//! serialise (their JSON Schemas come from schemars), so clients and fuzzers built from
//! it see what the server sends.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use hecate_types::names;

use crate::routes::{Answer, Guard, ROUTES, Route};

/// The error body every failure answers with.
#[derive(serde::Serialize, JsonSchema)]
#[allow(dead_code)] // documentation only: the server builds the same shape in error.rs
struct ErrorBody {
    /// What went wrong, in words.
    error: String,
    /// The HTTP status, in lower-case words (`not found`).
    status: String,
    /// For 409: the stable refusal code (`AwaitingApproval`, `SelfApproved`, …).
    code: Option<String>,
}

/// One route's entry in the document.
fn operation(generator: &mut SchemaGenerator, route: &Route) -> Value {
    let method = route.method.as_str();
    let mut parameters = Vec::new();
    // Names are checked before anything else (400): declared as the DNS names they are.
    let names = [
        (
            "ns",
            "The namespace (a DNS-1123 label).",
            names::DNS_LABEL_PATTERN,
            names::DNS_LABEL_MAX,
        ),
        (
            "name",
            "The object's name (a DNS-1123 subdomain).",
            names::DNS_SUBDOMAIN_PATTERN,
            names::DNS_SUBDOMAIN_MAX,
        ),
    ];
    for (name, description, pattern, max) in names {
        if route.path.contains(&format!("{{{name}}}")) {
            parameters.push(json!({"name": name, "in": "path", "required": true, "description": description,
                "schema": {"type": "string", "minLength": 1, "maxLength": max, "pattern": pattern}}));
        }
    }
    for name in route.query {
        parameters.push(
            json!({"name": name, "in": "query", "required": false, "schema": query_schema(name)}),
        );
    }
    let error = serde_json::to_value(generator.subschema_for::<ErrorBody>()).unwrap_or(Value::Null);
    let error_response = |description: &str| json!({"description": description, "content": {"application/json": {"schema": error.clone()}}});
    let content = match route.answer {
        Answer::Json(schema) => json!({"application/json": {"schema": schema(generator)}}),
        // Each event of the stream (`: ping` comments are not events).
        Answer::EventStream => json!({"text/event-stream": {"schema": {
            "type": "object",
            "required": ["event", "data"],
            "properties": {
                "event": {"type": "string", "enum": ["open", "changed", "error", "reconnect"]},
                "data": {"type": "string", "description": "JSON: {namespace} for open and reconnect, {namespace, kind, name} for changed, {error} for error"},
            },
        }}}),
    };
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({"description": "Success", "content": content}),
    );
    if route.guard != Guard::Open {
        responses.insert(
            "401".into(),
            error_response("No bearer token, or one the cluster does not accept"),
        );
        responses.insert("500".into(), error_response("The cluster or Fides failed"));
    }
    if route.path == "/readyz" {
        responses.insert(
            "503".into(),
            error_response(
                "Not ready: the cache is still listing, or the Kubernetes API does not answer",
            ),
        );
    }
    if matches!(route.answer, Answer::EventStream) {
        responses.insert(
            "429".into(),
            error_response("The caller, or the server, has as many event streams open as it may"),
        );
    }
    if let Guard::Cluster(operation) = route.guard {
        responses.insert(
            "403".into(),
            error_response(&format!(
                "The caller may not {} cluster-wide (a SubjectAccessReview said no)",
                operation.permission()
            )),
        );
        if route.method.writes() {
            responses.insert("400".into(), error_response("A malformed body"));
        }
    }
    if route.guard == Guard::Caller && route.path.contains("{ns}") {
        responses.insert("400".into(), error_response("A malformed namespace name"));
    }
    if let Guard::Namespaced(operation) = route.guard {
        responses.insert(
            "403".into(),
            error_response(&format!(
                "The caller may not {} here (a SubjectAccessReview said no)",
                operation.permission()
            )),
        );
        responses.insert("404".into(), error_response("No such object"));
        responses.insert(
            "400".into(),
            error_response("A malformed name, query or body"),
        );
    }
    if route.method.writes() {
        responses.insert(
            "409".into(),
            error_response("Refused by the rules; `code` says which"),
        );
        responses.insert(
            "413".into(),
            error_response("The body is larger than 1 MiB"),
        );
        responses.insert(
            "415".into(),
            error_response("The body is not sent as application/json"),
        );
        responses.insert(
            "408".into(),
            error_response("The body did not arrive in time"),
        );
        let forbidden = responses
            .get("403")
            .and_then(|r| r["description"].as_str())
            .map_or_else(
                || "The caller may not do this here".to_string(),
                str::to_string,
            );
        responses.insert(
            "403".into(),
            error_response(&format!(
                "{forbidden}; or the session cookie signed a write sent from another site"
            )),
        );
    }
    let mut entry = json!({
        "summary": route.summary,
        "operationId": format!("{method}{}", route.path.replace(['/', '{', '}', '.', '-'], "_")),
        "parameters": parameters,
        "responses": responses,
    });
    if route.guard != Guard::Open {
        entry["security"] = json!([{"bearer": []}]);
    }
    match route.request {
        Some(request) => {
            entry["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": request(generator)}}});
        }
        // A write with nothing to say still sends JSON (`{}`): a browser sends other
        // bodies across sites without asking.
        None if route.method.writes() => {
            entry["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": false}}}});
        }
        None => {}
    }
    entry
}

/// The document, as served at `/api/openapi.json`: one entry per row of the route
/// table.
pub fn document() -> Value {
    let mut generator = SchemaGenerator::new(
        SchemaSettings::openapi3().with(|s| s.definitions_path = "#/components/schemas/".into()),
    );
    let mut paths = Map::new();
    for route in ROUTES {
        let entry = operation(&mut generator, route);
        paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}))[route.method.as_str()] = entry;
    }
    let schemas = generator.take_definitions(true);
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Hecate API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Release promotion on Kubernetes. Every /api route needs a Kubernetes bearer token; \
                            each action is authorised as the caller by a SubjectAccessReview.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "A token the Kubernetes API server accepts"}},
        },
    })
}

/// A query parameter's schema: object names as Kubernetes spells them, a period as
/// ops parses it (every value the schema allows is accepted; ops also takes Go
/// durations).
fn query_schema(name: &str) -> Value {
    match name {
        "gate" | "bundle" | "against" => {
            json!({"type": "string", "maxLength": names::DNS_SUBDOMAIN_MAX,
            "pattern": format!("^$|{}", names::DNS_SUBDOMAIN_PATTERN)})
        }
        "since" => json!({"type": "string",
            "description": "How far back: days (30d), weeks (2w), hours (12h) or minutes (90m)",
            "pattern": hecate_ops::rules::delivery::PERIOD_PATTERN}),
        "dryRun" => json!({"type": "boolean"}),
        _ => json!({"type": "string"}),
    }
}
