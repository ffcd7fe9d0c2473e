//! Every route's happy path, orderings, empty lists, and the error mapping.

use hecate_testenv::Identity::*;
use hecate_types::{
    Beacon, BeaconSpec, Bundle, ImageWatch, Passage, PassageSpec, Step, WatchSource,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::harness::*;

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn reads_return_the_api_types_in_order() {
    let server = Server::start().await;
    server.pipeline().await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let newer = hecate_types::BundleSpec {
        beacon: "app".into(),
        artifacts: vec![hecate_types::Artifact::image("r", "2", "")],
        ..Default::default()
    };
    server.env.create(Bundle::new("b2", newer)).await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "r".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    server.env.create(Beacon::new("app", spec)).await;
    for (name, gate, bundle) in [("p-1", "staging", "b1"), ("p-2", "production", "b2")] {
        let spec = PassageSpec {
            gate: gate.into(),
            bundle: bundle.into(),
            steps: vec![Step {
                uses: "flux-wait".into(),
                ..Step::default()
            }],
            ..PassageSpec::default()
        };
        server.env.create(Passage::new(name, spec)).await;
    }
    let ns = "/api/v1alpha1/namespaces/{ns}";
    let gates = server.get(&format!("{ns}/gates"), Some(Alice)).await;
    assert_eq!(gates.status, 200);
    assert!(
        gates.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(names(&gates.json()), ["staging"]);
    // Beside the Gate, additively, its stage in the pipeline (ops').
    assert_eq!(gates.json()[0]["stage"], serde_json::json!({"index": 0}));
    assert_eq!(
        gates.json()[0]["spec"]["admits"][0]["from"]["beacon"],
        "app"
    );
    assert_eq!(
        names(
            &server
                .get(&format!("{ns}/bundles"), Some(Alice))
                .await
                .json()
        ),
        ["b2", "b1"],
        "newest first"
    );
    assert_eq!(
        names(
            &server
                .get(&format!("{ns}/beacons"), Some(Alice))
                .await
                .json()
        ),
        ["app"]
    );
    assert_eq!(
        names(
            &server
                .get(&format!("{ns}/passages?gate=staging"), Some(Alice))
                .await
                .json()
        ),
        ["p-1"]
    );
    assert_eq!(
        names(
            &server
                .get(&format!("{ns}/passages?bundle=b2"), Some(Alice))
                .await
                .json()
        ),
        ["p-2"]
    );
    for (kind, name) in [
        ("gates", "staging"),
        ("bundles", "b1"),
        ("beacons", "app"),
        ("passages", "p-1"),
    ] {
        let one = server
            .get(&format!("{ns}/{kind}/{name}"), Some(Alice))
            .await;
        assert_eq!(
            (one.status, one.json()["metadata"]["name"].as_str()),
            (200, Some(name)),
            "{kind}"
        );
    }
    let explain = server
        .get(&format!("{ns}/gates/staging/explain"), Some(Alice))
        .await
        .json();
    // Crossing b1; what else could cross stays listed (ops' choice, beyond the
    // reference), and the Passage just asked for is about to start.
    assert_eq!(
        (explain["state"].as_str(), explain["eligible"][0].as_str()),
        (Some("Crossing"), Some("b2"))
    );
    assert_eq!(explain["summary"], "crossing b1: p-1 is about to start");
    assert_eq!(explain["crossing"]["passage"], "p-1");
    let audit = server.get(&format!("{ns}/audit"), Some(Alice)).await;
    assert_eq!(audit.json().as_array().unwrap().len(), 2);
    let evidence = server
        .get(&format!("{ns}/bundles/b1/evidence"), Some(Alice))
        .await
        .json();
    assert_eq!(
        evidence["unavailable"],
        "no Gate in this namespace records evidence in Fides"
    );
}

#[tokio::test]
async fn empty_lists_are_arrays_never_null() {
    let server = Server::start().await;
    for kind in ["gates", "bundles", "passages", "beacons", "audit"] {
        let answer = server
            .get(
                &format!("/api/v1alpha1/namespaces/{{ns}}/{kind}"),
                Some(Alice),
            )
            .await;
        assert_eq!((answer.status, answer.body.as_str()), (200, "[]"), "{kind}");
    }
}

#[tokio::test]
async fn errors_map_to_their_statuses() {
    let server = Server::start().await;
    server.pipeline().await;
    let ns = "/api/v1alpha1/namespaces/{ns}";
    let missing = server.get(&format!("{ns}/gates/ghost"), Some(Alice)).await;
    assert_eq!(
        (missing.status, missing.json()["status"].as_str()),
        (404, Some("not found"))
    );
    assert_eq!(
        missing.json()["error"],
        format!("no Gate named ghost in {}", server.ns())
    );

    // A rule saying no: 409, with the stable code.
    let refused = server
        .post(
            &format!("{ns}/gates/staging/promote"),
            Some(Bob),
            Some(r#"{"bundle":"ghost"}"#),
        )
        .await;
    assert_eq!(
        refused.status, 404,
        "a missing Bundle is not found: {}",
        refused.body
    );
    server
        .env
        .api::<hecate_types::Gate>()
        .patch(
            "staging",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"spec": {"suspend": true}})),
        )
        .await
        .unwrap();
    let suspended = server
        .post(
            &format!("{ns}/gates/staging/promote"),
            Some(Bob),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await;
    assert_eq!(
        (suspended.status, suspended.json()["code"].as_str()),
        (409, Some("Suspended")),
        "{}",
        suspended.body
    );
    assert_eq!(
        suspended.json()["error"],
        "promote refused: Gate staging is suspended"
    );

    // Bodies: malformed, unknown fields, missing fields, too large — 4xx, nothing written.
    let promote = format!("{ns}/gates/staging/promote");
    for (body, status, fragment) in [
        ("{not json", 400, "not the expected JSON"),
        (
            r#"{"bundle":"b1","actor":"alice"}"#,
            400,
            "unknown field `actor`",
        ),
        (r#"{}"#, 400, "promote needs a bundle"),
        (r#"{"bundle":"Not A Name"}"#, 400, "not a valid object name"),
    ] {
        let answer = server.post(&promote, Some(Bob), Some(body)).await;
        assert_eq!(answer.status, status, "{body}: {}", answer.body);
        assert!(answer.body.contains(fragment), "{body}: {}", answer.body);
    }
    let big = format!(r#"{{"bundle":"{}"}}"#, "x".repeat(2 << 20));
    assert_eq!(
        server.post(&promote, Some(Bob), Some(&big)).await.status,
        413
    );
    let approve = server
        .post(
            &format!("{ns}/bundles/b1/approve"),
            Some(Carol),
            Some(r#"{"gate":"staging","actor":"alice"}"#),
        )
        .await;
    assert_eq!(
        approve.status, 400,
        "the actor is the caller, never the body: {}",
        approve.body
    );
    let passages: Vec<Passage> = server
        .env
        .api::<Passage>()
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert!(passages.is_empty(), "nothing was written");
    let bundle: Bundle = server.env.api().get("b1").await.unwrap();
    assert!(bundle.status.is_none(), "nothing was written");

    // Names that cannot be Kubernetes names, in the path.
    for path in [
        "/api/v1alpha1/namespaces/Bad_NS/gates",
        "/api/v1alpha1/namespaces/{ns}/gates/UPPER/explain",
    ] {
        let answer = server.get(path, Some(Alice)).await;
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
    }
    // Unknown API paths are JSON 404s; wrong methods 405.
    let unknown = server.get("/api/v1alpha1/nonsense", Some(Alice)).await;
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.headers["content-type"]
            .to_str()
            .unwrap()
            .contains("json")
    );
    let wrong = server
        .send(
            reqwest::Method::DELETE,
            &format!("{ns}/gates"),
            Some(&server.token(Alice)),
            None,
        )
        .await;
    assert_eq!(wrong.status, 405);
    let bad_query = server
        .get(&format!("{ns}/passages?colour=red"), Some(Alice))
        .await;
    assert_eq!(bad_query.status, 400, "{}", bad_query.body);
}

#[tokio::test]
async fn writes_are_idempotent_where_they_should_be() {
    let server = Server::start().await;
    server.pipeline().await;
    let ns = "/api/v1alpha1/namespaces/{ns}";
    let first = server
        .post(
            &format!("{ns}/bundles/b1/approve"),
            Some(Carol),
            Some(r#"{"gate":"staging"}"#),
        )
        .await;
    assert_eq!(
        (first.status, first.json()["recorded"].as_bool()),
        (200, Some(true))
    );
    let again = server
        .post(
            &format!("{ns}/bundles/b1/approve"),
            Some(Admin),
            Some(r#"{"gate":"staging"}"#),
        )
        .await;
    assert_eq!(
        (
            again.status,
            again.json()["recorded"].as_bool(),
            again.json()["approvedBy"].as_str()
        ),
        (200, Some(false), Some("carol"))
    );
    let passage = server
        .post(
            &format!("{ns}/gates/staging/promote"),
            Some(Bob),
            Some(r#"{"bundle":"b1"}"#),
        )
        .await
        .json();
    let name = passage["metadata"]["name"].as_str().unwrap();
    for _ in 0..2 {
        assert_eq!(
            server
                .post(
                    &format!("{ns}/passages/{name}/abort"),
                    Some(Bob),
                    Some("{}")
                )
                .await
                .status,
            200
        );
    }
}

#[tokio::test]
async fn operations_endpoints() {
    let server = Server::start().await;
    let health = server.get("/healthz", None).await;
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(server.get("/readyz", None).await.status, 200);
    server.get("/api/v1alpha1/namespaces", Some(Alice)).await;
    let metrics = server.get("/metrics", None).await;
    assert!(metrics.body.contains("hecate_api_requests_total{route=\"/api/v1alpha1/namespaces\",method=\"GET\",status=\"200\"}"), "{}", metrics.body);
    assert!(
        metrics
            .body
            .contains("hecate_api_request_duration_seconds_bucket")
    );
    let home = server.get("/", None).await;
    assert_eq!(home.status, 200);
    assert!(
        home.body
            .contains(r#"<script type="module" src="/ui/js/main.js">"#),
        "/ is the web UI's shell"
    );
}

/// The object each route's `{name}` names in [`the_openapi_document_covers_every_route`]'s
/// namespace, and the body a write needs.
fn concrete(path: &str, name: &str) -> (String, Option<&'static str>) {
    let kind = path
        .split('/')
        .rev()
        .skip_while(|segment| *segment != "{name}")
        .nth(1)
        .unwrap_or_default();
    let object = match kind {
        "gates" => "staging",
        "bundles" => "b1",
        "passages" => "p-1",
        "beacons" => "app",
        _ => "",
    };
    // A rollback needs a Gate that held something: `rolled`, holding b1; retrying or
    // accepting a rollout's failures, a rollout halted on them: `halted-1`.
    let object = if path.ends_with("/rollback") {
        "rolled"
    } else if path.ends_with("/retry") || path.ends_with("/accept-failures") {
        "halted-1"
    } else {
        object
    };
    let object = if name.is_empty() { object } else { name };
    let body = if path.ends_with("/promote") {
        Some(r#"{"bundle":"b1"}"#)
    } else if path.ends_with("/rollback") {
        Some(r#"{"to":"b1"}"#)
    } else if path.ends_with("/approve") || path.ends_with("/withdraw-rejection") {
        Some(r#"{"gate":"staging"}"#)
    } else if path.ends_with("/accept-failures") {
        Some(r#"{"reason":"the canary is being rebuilt"}"#)
    } else if path.ends_with("/reject") {
        Some(r#"{"gate":"staging","reason":"not this week"}"#)
    } else if path.ends_with("/flux/suspend") {
        Some(r#"{"kind":"Kustomization","name":"podinfo","suspend":true}"#)
    } else if path.ends_with("/flux/reconcile") {
        Some(r#"{"kind":"Kustomization","name":"podinfo"}"#)
    } else if path.ends_with("/rbac/grants") {
        Some(r#"{"subject":"coverage","kind":"User","role":"hecate-viewer"}"#)
    } else if path.ends_with("/clusters") {
        Some(r#"{"name":"remote","kubeconfig":"apiVersion: v1"}"#)
    } else if path.ends_with("/evidence") && name != "ghost" && !path.contains("/bundles/") {
        Some(r#"{"serverURL":"","fidesEnvironment":"0b9e4a52-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}"#)
    } else if path.ends_with("/evidence") && !path.contains("/bundles/") {
        Some(r#"{"fidesEnvironment":"0b9e4a52-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}"#)
    } else {
        None
    };
    (path.replace("{name}", object), body)
}

/// The document has every route of the table and nothing else, and each route answers
/// what it documents: 200 when it works; 401 with no token; for a namespace's routes
/// 403 (naming the permission its operation needs), 400 for a malformed namespace and
/// 404 for a missing object; for writes 409 when the rules refuse and 413 for an
/// oversize body. Every status seen is one the document lists for that route, and a
/// route failing in any other way (a 500 included) fails the test.
#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let server = Server::start().await;
    // The settings writes work only with the RBAC `api.settings.writable` gives.
    crate::settings::writable(&server.env).await;
    server.pipeline().await;
    let spec = BeaconSpec {
        watch: vec![WatchSource {
            image: Some(ImageWatch {
                repo: "r".into(),
                ..ImageWatch::default()
            }),
            ..WatchSource::default()
        }],
        ..BeaconSpec::default()
    };
    server.env.create(Beacon::new("app", spec)).await;
    let crossing = PassageSpec {
        gate: "production".into(),
        bundle: "b1".into(),
        steps: vec![Step {
            uses: "flux-wait".into(),
            ..Step::default()
        }],
        ..PassageSpec::default()
    };
    server.env.create(Passage::new("p-1", crossing)).await;
    crate::rollback::holding(&server, "rolled", "b1").await;
    hecate_testenv::fixtures::halted(&server.env, "halted-1", "production", "b1").await;
    // Staging depends on Kustomization podinfo, so the Flux routes have one to operate.
    crate::flux::kustomization(&server, "podinfo", json!({})).await;
    crate::flux::watch(
        &server,
        "staging",
        json!([{"kind": "Kustomization", "name": "podinfo"}]),
    )
    .await;
    let ns = server.ns().to_string();

    let doc = server.get("/api/openapi.json", None).await.json();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().unwrap();
    // The table the router and the document are built from: the spec's twenty routes
    // and the four of preflight and Flux.
    let routes = hecate_api::routes::ROUTES;
    // and the five of the settings page, and the caller's rights; and the approvals
    // queue, reject and withdraw (DECISION 137); and the delivery figures (DECISION
    // 138); and rollback (DECISION 139); and a Bundle's diff (DECISION 140); and what
    // the caller's own promote of each eligible Bundle would meet (DECISION 141); and
    // a Gate's targets, retrying a rollout and accepting its failures (DECISION 158);
    // and who is told about a Gate (DECISION 166).
    assert_eq!(routes.len(), 41);
    let mut seen = std::collections::BTreeSet::new();
    for route in routes {
        let (method, path) = (route.method.as_str(), route.path);
        let documented: Vec<u16> = paths
            .get(path)
            .and_then(|p| p.get(method))
            .unwrap_or_else(|| panic!("{method} {path} is documented"))["responses"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.parse().unwrap())
            .collect();
        let http_method = match route.method {
            hecate_api::routes::Method::Get => reqwest::Method::GET,
            hecate_api::routes::Method::Post => reqwest::Method::POST,
            hecate_api::routes::Method::Put => reqwest::Method::PUT,
        };
        let ask = |path: &str, token: Option<&str>, body: Option<&str>| {
            let (server, method) = (&server, http_method.clone());
            let (path, token, body) = (
                path.to_string(),
                token.map(String::from),
                body.map(String::from),
            );
            async move {
                server
                    .send(method, &path, token.as_deref(), body.as_deref())
                    .await
            }
        };
        let mut expect = |answer: Answer, status: u16, case: &str| {
            assert_eq!(
                answer.status, status,
                "{method} {path}, {case}: {}",
                answer.body
            );
            assert!(
                documented.contains(&status),
                "{method} {path} answers {status} ({case}) but documents only {documented:?}"
            );
            seen.insert(status);
            answer
        };
        let admin = server.token(Admin);
        let (working, body) = concrete(path, "");

        // Works: 200 (the event stream, which never ends, is only opened).
        if path.ends_with("/watch") {
            let response = server
                .http
                .get(format!("{}{}", server.base, working.replace("{ns}", &ns)))
                .bearer_auth(&admin)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{path}");
            assert!(documented.contains(&200));
            assert_eq!(response.headers()["content-type"], "text/event-stream");
        } else {
            let answer = expect(ask(&working, Some(&admin), body).await, 200, "working");
            assert!(
                answer.headers["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with("application/json"),
                "{path}"
            );
        }
        let Some(operation) = route.guard.operation() else {
            continue;
        };
        expect(ask(&working, None, body).await, 401, "no token");
        if !path.contains("{ns}") {
            continue;
        }
        let forbidden = expect(
            ask(&working, Some(&server.token(CiBot)), body).await,
            403,
            "no rights",
        );
        assert_eq!(
            forbidden.json()["error"],
            format!("ci-bot may not {} in {ns}", operation.permission()),
            "{path}"
        );
        let bad_namespace = working.replace("{ns}", "Not_A_Namespace");
        expect(
            ask(&bad_namespace, Some(&admin), body).await,
            400,
            "malformed namespace",
        );
        if path.contains("{name}") {
            let (missing, body) = concrete(path, "ghost");
            expect(
                ask(&missing, Some(&admin), body).await,
                404,
                "missing object",
            );
        }
        if operation.writes() {
            let big = format!(r#"{{"x":"{}"}}"#, "x".repeat(2 << 20));
            expect(
                ask(&working, Some(&admin), Some(&big)).await,
                413,
                "oversize body",
            );
            if path.ends_with("/promote") || path.ends_with("/rollback") {
                expect(
                    ask(&working, Some(&admin), body).await,
                    409,
                    "already crossing",
                );
            }
            if path.ends_with("/retry") || path.ends_with("/accept-failures") {
                let (one_place, body) = concrete(path, "p-1");
                expect(
                    ask(&one_place, Some(&admin), body).await,
                    409,
                    "no rollout to act on",
                );
            }
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [200, 400, 401, 403, 404, 409, 413],
        "every documented status but 500 was seen"
    );
    let documented: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(
        documented,
        routes.len(),
        "nothing undocumented, nothing extra"
    );
    // Every reference resolves.
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let text = doc.to_string();
    for reference in text
        .split("\"$ref\":\"")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
    {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{reference}"));
        assert!(schemas.contains_key(name), "{reference} resolves");
    }
    for name in [
        "Explanation",
        "Overview",
        "AuditEntry",
        "Evidence",
        "Gate",
        "Bundle",
        "Passage",
        "Beacon",
        "YourCrossings",
        "ErrorBody",
    ] {
        assert!(schemas.contains_key(name), "{name}");
    }
}
