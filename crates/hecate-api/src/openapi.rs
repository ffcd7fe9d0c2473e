//! The OpenAPI 3 document of the API, generated from the very types the handlers
//! serialise (their JSON Schemas come from schemars), so clients and fuzzers built from
//! it see what the server sends.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

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
    for (name, description) in [("ns", "The namespace."), ("name", "The object's name.")] {
        if route.path.contains(&format!("{{{name}}}")) {
            parameters.push(json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string"}}));
        }
    }
    for name in route.query {
        parameters.push(
            json!({"name": name, "in": "query", "required": false, "schema": {"type": "string"}}),
        );
    }
    let error = serde_json::to_value(generator.subschema_for::<ErrorBody>()).unwrap_or(Value::Null);
    let error_response = |description: &str| json!({"description": description, "content": {"application/json": {"schema": error.clone()}}});
    let content = match route.answer {
        Answer::Json(schema) => json!({"application/json": {"schema": schema(generator)}}),
        Answer::EventStream => json!({"text/event-stream": {"schema": {"type": "string"}}}),
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
        if operation.writes() {
            responses.insert(
                "409".into(),
                error_response("Refused by the rules; `code` says which"),
            );
            responses.insert(
                "413".into(),
                error_response("The body is larger than 1 MiB"),
            );
        }
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
    if let Some(request) = route.request {
        entry["requestBody"] = json!({"required": false, "content": {"application/json": {"schema": request(generator)}}});
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
