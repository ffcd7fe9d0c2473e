//! The OpenAPI 3 document of the API, generated from the very types the handlers
//! serialise (their JSON Schemas come from schemars), so clients and fuzzers built from
//! it see what the server sends.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use hecate_ops::{Aborted, Approved, Polled};

use crate::routes::{ApproveRequest, Namespaces, PromoteRequest};

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

struct Doc {
    generator: SchemaGenerator,
    paths: Map<String, Value>,
}

/// Who may call a route.
#[derive(Clone, Copy)]
enum Guard {
    Open,
    Authenticated,
    Access(&'static str),
}

impl Doc {
    fn schema<T: JsonSchema>(&mut self) -> Value {
        serde_json::to_value(self.generator.subschema_for::<T>()).unwrap_or(Value::Null)
    }

    fn add(
        &mut self,
        method: &str,
        path: &str,
        summary: &str,
        guard: Guard,
        request: Option<Value>,
        response: Value,
    ) {
        let mut parameters = Vec::new();
        for name in ["ns", "name"] {
            if path.contains(&format!("{{{name}}}")) {
                let description = if name == "ns" {
                    "The namespace."
                } else {
                    "The object's name."
                };
                parameters.push(json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string"}}));
            }
        }
        let error = self.schema::<ErrorBody>();
        let error_response = |description: &str| json!({"description": description, "content": {"application/json": {"schema": error.clone()}}});
        let mut responses = Map::new();
        responses.insert("200".into(), json!({"description": "Success", "content": {"application/json": {"schema": response}}}));
        match guard {
            Guard::Open => {}
            Guard::Authenticated | Guard::Access(_) => {
                responses.insert(
                    "401".into(),
                    error_response("No bearer token, or one the cluster does not accept"),
                );
                responses.insert("500".into(), error_response("The cluster or Fides failed"));
            }
        }
        if let Guard::Access(access) = guard {
            responses.insert(
                "403".into(),
                error_response(&format!(
                    "The caller may not {access} here (a SubjectAccessReview said no)"
                )),
            );
            responses.insert("404".into(), error_response("No such object"));
            responses.insert(
                "400".into(),
                error_response("A malformed name, query or body"),
            );
            if method == "post" {
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
        let mut operation = json!({
            "summary": summary,
            "operationId": format!("{method}{}", path.replace(['/', '{', '}', '.', '-'], "_")),
            "parameters": parameters,
            "responses": responses,
        });
        if !matches!(guard, Guard::Open) {
            operation["security"] = json!([{"bearer": []}]);
        }
        if let Some(request) = request {
            operation["requestBody"] =
                json!({"required": false, "content": {"application/json": {"schema": request}}});
        }
        self.paths
            .entry(path.to_string())
            .or_insert_with(|| json!({}))[method] = operation;
    }
}

/// The document, as served at `/api/openapi.json`.
pub fn document() -> Value {
    let mut doc = Doc {
        generator: SchemaGenerator::new(
            SchemaSettings::openapi3()
                .with(|s| s.definitions_path = "#/components/schemas/".into()),
        ),
        paths: Map::new(),
    };
    let ns = "/api/v1alpha1/namespaces/{ns}";
    let list = |item: Value| json!({"type": "array", "items": item});
    let health = json!({"type": "object", "properties": {"status": {"type": "string"}, "version": {"type": "string"}}});
    doc.add(
        "get",
        "/healthz",
        "Liveness: the server answers",
        Guard::Open,
        None,
        health.clone(),
    );
    doc.add(
        "get",
        "/readyz",
        "Readiness: the Kubernetes API answers",
        Guard::Open,
        None,
        health,
    );
    let namespaces = doc.schema::<Namespaces>();
    doc.add(
        "get",
        "/api/v1alpha1/namespaces",
        "Namespaces holding Hecate objects that the caller may read",
        Guard::Authenticated,
        None,
        namespaces,
    );
    let overview = doc.schema::<hecate_ops::Overview>();
    doc.add(
        "get",
        "/api/v1alpha1/overview",
        "Every Gate the caller may read, at a glance",
        Guard::Authenticated,
        None,
        overview,
    );
    let gate = doc.schema::<hecate_types::Gate>();
    let gates = list(gate.clone());
    doc.add(
        "get",
        &format!("{ns}/gates"),
        "The Gates, by name",
        Guard::Access("read"),
        None,
        gates,
    );
    doc.add(
        "get",
        &format!("{ns}/gates/{{name}}"),
        "One Gate",
        Guard::Access("read"),
        None,
        gate,
    );
    let explanation = doc.schema::<hecate_ops::Explanation>();
    doc.add(
        "get",
        &format!("{ns}/gates/{{name}}/explain"),
        "Why the Gate is where it is",
        Guard::Access("read"),
        None,
        explanation,
    );
    let passage = doc.schema::<hecate_types::Passage>();
    let promote = doc.schema::<PromoteRequest>();
    doc.add(
        "post",
        &format!("{ns}/gates/{{name}}/promote"),
        "Start a crossing; the caller is the actor",
        Guard::Access("promote"),
        Some(promote),
        passage.clone(),
    );
    let bundle = doc.schema::<hecate_types::Bundle>();
    let bundles = list(bundle.clone());
    doc.add(
        "get",
        &format!("{ns}/bundles"),
        "The Bundles, newest first",
        Guard::Access("read"),
        None,
        bundles,
    );
    doc.add(
        "get",
        &format!("{ns}/bundles/{{name}}"),
        "One Bundle",
        Guard::Access("read"),
        None,
        bundle,
    );
    let evidence = doc.schema::<hecate_ops::Evidence>();
    doc.add(
        "get",
        &format!("{ns}/bundles/{{name}}/evidence"),
        "The Bundle's evidence in Fides",
        Guard::Access("read"),
        None,
        evidence,
    );
    let approve = doc.schema::<ApproveRequest>();
    let approved = doc.schema::<Approved>();
    doc.add(
        "post",
        &format!("{ns}/bundles/{{name}}/approve"),
        "Approve the Bundle for one Gate; the caller is the approver",
        Guard::Access("approve"),
        Some(approve),
        approved,
    );
    let passages = list(passage.clone());
    doc.add(
        "get",
        &format!("{ns}/passages"),
        "The Passages, newest first; `gate` and `bundle` filter",
        Guard::Access("read"),
        None,
        passages,
    );
    doc.paths[&format!("{ns}/passages")]["get"]["parameters"] = json!([
        {"name": "ns", "in": "path", "required": true, "schema": {"type": "string"}},
        {"name": "gate", "in": "query", "required": false, "schema": {"type": "string"}},
        {"name": "bundle", "in": "query", "required": false, "schema": {"type": "string"}},
    ]);
    doc.add(
        "get",
        &format!("{ns}/passages/{{name}}"),
        "One Passage",
        Guard::Access("read"),
        None,
        passage,
    );
    let aborted = doc.schema::<Aborted>();
    doc.add(
        "post",
        &format!("{ns}/passages/{{name}}/abort"),
        "Ask a crossing to stop",
        Guard::Access("abort"),
        None,
        aborted,
    );
    let beacon = doc.schema::<hecate_types::Beacon>();
    let beacons = list(beacon.clone());
    doc.add(
        "get",
        &format!("{ns}/beacons"),
        "The Beacons, by name",
        Guard::Access("read"),
        None,
        beacons,
    );
    doc.add(
        "get",
        &format!("{ns}/beacons/{{name}}"),
        "One Beacon",
        Guard::Access("read"),
        None,
        beacon,
    );
    let polled = doc.schema::<Polled>();
    doc.add(
        "post",
        &format!("{ns}/beacons/{{name}}/poll"),
        "Ask the Beacon to look now",
        Guard::Access("poll"),
        None,
        polled,
    );
    let entry = doc.schema::<hecate_ops::AuditEntry>();
    let audit = list(entry);
    doc.add(
        "get",
        &format!("{ns}/audit"),
        "What happened, newest first",
        Guard::Access("read"),
        None,
        audit,
    );
    doc.add(
        "get",
        &format!("{ns}/watch"),
        "Server-sent events: `open`, then `changed` ({kind, namespace, name}) per change, `: ping` keep-alives, `reconnect` after 30 minutes",
        Guard::Access("read"),
        None,
        json!({"type": "string", "description": "text/event-stream"}),
    );
    doc.paths[&format!("{ns}/watch")]["get"]["responses"]["200"]["content"] =
        json!({"text/event-stream": {"schema": {"type": "string"}}});
    let schemas = doc.generator.take_definitions(true);
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Hecate API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Release promotion on Kubernetes. Every /api route needs a Kubernetes bearer token; \
                            each action is authorised as the caller by a SubjectAccessReview.",
        },
        "paths": doc.paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "A token the Kubernetes API server accepts"}},
        },
    })
}
