//! The settings routes (surfaces spec §2.2 routes 6, 8–11, §2.9–2.10) through the API
//! with real identities on the real API server: Fides probed as wiremock (reachable,
//! failing) and an address nothing listens on; connected clusters whose kubeconfigs
//! point at the test control plane with good, rejected (401) and forbidden (403)
//! credentials; the writes authorised as the caller and carried out with the RBAC the
//! chart gives the server when `api.settings.writable` is on. Acceptance cases §5
//! #91–94 (the pure cases #75–80 are hecate-ops' `rules::settings` tests).

use hecate_testenv::Identity::{self, *};
use hecate_testenv::{TestEnv, apply_manifest};
use hecate_types::{EvidenceConfig, Gate, HealthCheck, LocalSecretRef};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::harness::*;

const SETTINGS: &str = "/api/v1alpha1/settings";
const GRANTS: &str = "/api/v1alpha1/rbac/grants";
const CLUSTERS: &str = "/api/v1alpha1/namespaces/{ns}/clusters";
const ENVIRONMENT: &str = "0b9e4a52-1c3d-4e5f-8a9b-0c1d2e3f4a5b";

/// Gives the `hecate-api` identity the settings writes' RBAC exactly as the chart
/// renders it with `api.settings.writable=true` (off by default, so `deploy/` has
/// none), and waits until the cluster applies it.
pub(crate) async fn writable(env: &TestEnv) {
    use hecate_testenv::{Tool, chart};
    let helm = Tool::Helm.locate_or_build().unwrap();
    let rendered =
        chart::template(&helm, "hecate-system", &[], &["api.settings.writable=true"]).unwrap();
    let role = rendered
        .split("\n---\n")
        .find(|d| d.contains("kind: ClusterRole\n") && d.contains("name: hecate-api-settings\n"))
        .expect("the chart's settings ClusterRole");
    apply_manifest(&env.admin, role, false).await.unwrap();
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some("hecate-api-settings-local".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "hecate-api-settings".into(),
        },
        subjects: Some(vec![hecate_testenv::rbac::subject(HecateApi)]),
    };
    Api::<ClusterRoleBinding>::all(env.admin.clone())
        .patch(
            "hecate-api-settings-local",
            &PatchParams::apply("hecate-api-tests").force(),
            &Patch::Apply(&binding),
        )
        .await
        .unwrap();
    hecate_testenv::rbac::await_access(env, HecateApi, "update", "gates", "").await;
}

/// A kubeconfig for the test control plane as `who` — with `token` instead of theirs
/// when given, impersonating `as_user` when given.
fn kubeconfig(
    server: &Server,
    who: Identity,
    token: Option<&str>,
    as_user: Option<&str>,
) -> String {
    let yaml = server.env.endpoint().kubeconfig_yaml(who);
    let mut config: Value = serde_yaml_ng::from_str(&yaml).unwrap();
    let users = config["users"].as_array().unwrap().clone();
    let mut user = users
        .into_iter()
        .find(|u| u["name"] == who.username())
        .unwrap();
    if let Some(token) = token {
        user["user"]["token"] = json!(token);
    }
    if let Some(as_user) = as_user {
        user["user"]["as"] = json!(as_user);
    }
    config["users"] = json!([user]);
    config["contexts"] = json!(
        config["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == who.username())
            .collect::<Vec<_>>()
    );
    serde_json::to_string(&config).unwrap()
}

/// Secret `name` in the test's namespace with `data` (key → text), labelled
/// `label=true` when given: `hecate.dev/cluster` marks a connected cluster,
/// `hecate.dev/usable` opts any Secret in (DECISION 147).
async fn secret(server: &Server, name: &str, data: &[(&str, &str)], label: Option<&str>) {
    let labels = label.map(|label| [(label.to_string(), "true".to_string())].into());
    server
        .env
        .create(Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels,
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        })
        .await;
}

/// The label of a connected cluster's Secret.
const CLUSTER: Option<&str> = Some("hecate.dev/cluster");

/// Gate `name` with evidence at `server_url` and a `flux` check through `cluster`.
async fn gate(server: &Server, name: &str, server_url: &str, cluster: Option<&str>) {
    let mut spec = hecate_testenv::fixtures::gate_spec(&[], false);
    spec.evidence = Some(EvidenceConfig {
        fides_environment: ENVIRONMENT.into(),
        server_url: server_url.into(),
        credentials_ref: None,
    });
    if let Some(cluster) = cluster {
        spec.watch = vec![HealthCheck {
            uses: "flux".into(),
            with: Some(
                json!({"resources": [{"kind": "Kustomization", "name": "app"}], "clusterRef": {"name": cluster}}),
            ),
        }];
    }
    hecate_testenv::fixtures::gate(&server.env, name, spec).await;
}

/// Keeps the servers and clusters of namespace `ns` only, and of their Gates only
/// this namespace's (wiremock reuses the servers of finished tests, whose Gates may
/// name the same URL).
fn mine(settings: &mut Value, ns: &str) {
    let prefix = format!("{ns}/");
    let ours = |text: &Value| text.as_str().is_some_and(|s| s.starts_with(&prefix));
    for key in ["fides", "clusters"] {
        let kept: Vec<Value> = settings[key]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| {
                ours(&item["secret"]) || item["gates"].as_array().unwrap().iter().any(ours)
            })
            .cloned()
            .map(|mut item| {
                let gates: Vec<Value> = item["gates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|g| ours(g))
                    .cloned()
                    .collect();
                item["gates"] = Value::Array(gates);
                item
            })
            .collect();
        settings[key] = Value::Array(kept);
    }
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|item| item[key] == value)
        .unwrap_or_else(|| panic!("{key} {value} in {list}"))
}

/// `GET /settings`: every Fides server and cluster the caller's Gates use, probed —
/// a Fides answering 401 is reachable, one answering 503 and one not listening are
/// not; a cluster with good credentials is reachable, rejected ones say the token
/// has expired, forbidden ones that the credentials were accepted, and a missing
/// Secret, a Secret without a kubeconfig and an unparsable kubeconfig say so. A
/// labelled Secret no Gate uses is listed with no Gates.
#[tokio::test]
async fn settings_probe_what_the_callers_gates_use() {
    let server = Server::start().await;
    // The labelled Secrets are listed with the settings RBAC (api.settings.writable).
    writable(&server.env).await;
    let ns = server.ns().to_string();
    let fides = MockServer::start().await;
    // Each server under a path of this test's own: wiremock hands finished tests'
    // servers to new ones, and their Gates would share the URL.
    let flows = format!("/{ns}/api/v1/flows");
    Mock::given(method("GET"))
        .and(path(flows.as_str()))
        .respond_with(ResponseTemplate::new(401))
        // Once by this test; other tests' admins and alice read this namespace too.
        .expect(1..)
        .mount(&fides)
        .await;
    let failing = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(flows.as_str()))
        .respond_with(ResponseTemplate::new(503))
        .expect(1..)
        .mount(&failing)
        .await;
    // Nothing listens on port 1 (tests only take ports the system hands out).
    let closed = "http://127.0.0.1:1".to_string();
    let (fides_url, failing_url) = (
        format!("{}/{ns}", fides.uri()),
        format!("{}/{ns}", failing.uri()),
    );
    gate(&server, "production", &fides_url, Some("good")).await;
    gate(&server, "staging", &fides_url, Some("rejected")).await;
    gate(&server, "dev", &failing_url, Some("forbidden")).await;
    gate(&server, "qa", &closed, Some("ghost")).await;
    secret(
        &server,
        "good",
        &[("value", &kubeconfig(&server, Alice, None, None))],
        CLUSTER,
    )
    .await;
    secret(
        &server,
        "rejected",
        &[(
            "value",
            &kubeconfig(&server, Alice, Some("expired-token"), None),
        )],
        CLUSTER,
    )
    .await;
    secret(
        &server,
        "forbidden",
        &[("value", &kubeconfig(&server, Alice, None, Some("bob")))],
        Some("hecate.dev/usable"),
    )
    .await;
    // Named by a Gate, but not opted in: never used as a kubeconfig (DECISION 147).
    gate(&server, "canary", &closed, Some("unlabelled")).await;
    secret(
        &server,
        "unlabelled",
        &[("value", &kubeconfig(&server, Alice, None, None))],
        None,
    )
    .await;
    secret(&server, "empty", &[("other", "x")], CLUSTER).await;
    secret(&server, "garbled", &[("value", "clusters: [[[")], CLUSTER).await;

    let answer = server.get(SETTINGS, Some(Alice)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mut settings = answer.json();
    assert_eq!(settings["identity"]["name"], "alice");
    // Alice reads every test's namespace: keep this one's.
    mine(&mut settings, &ns);
    assert_eq!(settings["version"], env!("CARGO_PKG_VERSION"));

    let servers = &settings["fides"];
    assert_eq!(servers.as_array().unwrap().len(), 3, "{servers}");
    let reachable = find(servers, "serverURL", &fides_url);
    assert_eq!(
        reachable["reachable"], true,
        "a 401 is an answer: {reachable}"
    );
    assert_eq!(
        reachable["gates"],
        json!([format!("{ns}/production"), format!("{ns}/staging")])
    );
    assert_eq!(reachable["environments"], json!([ENVIRONMENT]), "each once");
    assert!(reachable.get("detail").is_none(), "{reachable}");
    let failed = find(servers, "serverURL", &failing_url);
    assert_eq!(failed["reachable"], false);
    assert!(
        failed["detail"].as_str().unwrap().contains("503"),
        "{failed}"
    );
    let down = find(servers, "serverURL", &closed);
    assert_eq!(down["reachable"], false);
    assert!(!down["detail"].as_str().unwrap().is_empty(), "{down}");
    let urls: Vec<&str> = servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["serverURL"].as_str().unwrap())
        .collect();
    let mut sorted = urls.clone();
    sorted.sort_unstable();
    assert_eq!(urls, sorted, "by URL");

    let clusters = &settings["clusters"];
    let secrets: Vec<&str> = clusters
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["secret"].as_str().unwrap())
        .collect();
    assert_eq!(
        secrets,
        [
            "empty",
            "forbidden",
            "garbled",
            "ghost",
            "good",
            "rejected",
            "unlabelled"
        ]
        .map(|s| format!("{ns}/{s}")),
        "every labelled Secret and every Secret a Gate names, by name"
    );
    let cluster = |name: &str| find(clusters, "secret", &format!("{ns}/{name}")).clone();
    let good = cluster("good");
    assert_eq!(good["reachable"], true, "{good}");
    assert_eq!(good["gates"], json!([format!("{ns}/production")]));
    let detail = |name: &str| {
        let c = cluster(name);
        assert_eq!(c["reachable"], false, "{c}");
        c["detail"].as_str().unwrap().to_string()
    };
    let rejected = detail("rejected");
    assert!(rejected.contains("expired"), "{rejected}");
    assert!(!rejected.contains("asked for the client to provide credentials"));
    let forbidden = detail("forbidden");
    assert!(
        forbidden.starts_with("credentials accepted but may not read this cluster: "),
        "{forbidden}"
    );
    assert!(
        forbidden.contains("impersonate"),
        "the cluster's own reason: {forbidden}"
    );
    assert!(detail("ghost").contains("could not be read"));
    // The API server's sentence, not the client library's dump of its status.
    assert!(
        detail("ghost").contains(r#"secrets "ghost" not found (404)"#)
            && !detail("ghost").contains("Status {"),
        "{}",
        detail("ghost")
    );
    assert!(detail("empty").contains("`value`"));
    let unlabelled = detail("unlabelled");
    assert!(
        unlabelled.starts_with("kubeconfig Secret unlabelled in namespace")
            && unlabelled.contains("hecate.dev/cluster=true"),
        "{unlabelled}"
    );
    assert!(detail("garbled").contains("unusable"));
    assert_eq!(cluster("empty")["gates"], json!([]), "used by no Gate");

    // Read from the test's own environment, as the server reads it.
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default();
    assert_eq!(settings["telemetry"]["configured"], !endpoint.is_empty());
    assert_eq!(
        settings["home"]["inCluster"],
        std::env::var("KUBERNETES_SERVICE_HOST").is_ok_and(|h| !h.is_empty())
    );
}

/// What the caller may not read is not shown: ci-bot reads nothing, so sees no
/// servers and no clusters. (Other tests' callers read this namespace and probe its
/// Fides, so the mock's calls are not counted.)
#[tokio::test]
async fn settings_skip_namespaces_the_caller_may_not_read() {
    let server = Server::start().await;
    let fides = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&fides)
        .await;
    gate(&server, "production", &fides.uri(), Some("good")).await;
    secret(&server, "good", &[("value", "x")], CLUSTER).await;
    let answer = server.get(SETTINGS, Some(CiBot)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let mut settings = answer.json();
    // Other tests may let ci-bot read their namespaces; never this one.
    mine(&mut settings, server.ns());
    assert_eq!(settings["fides"], json!([]));
    assert_eq!(settings["clusters"], json!([]));
    assert_eq!(settings["identity"]["name"], "ci-bot");
    assert_eq!(server.get(SETTINGS, None).await.status, 401);
}

/// Surfaces §5 case 91: a role off the list is a 400 for a caller who may bind
/// roles, and nothing is bound.
#[tokio::test]
async fn case_91_binding_an_arbitrary_role_is_refused() {
    let server = Server::start().await;
    writable(&server.env).await;
    let subject = format!("{}-case91", server.ns());
    for role in [
        "cluster-admin",
        "edit",
        "hecate-promoter-but-not-really",
        "",
        "hecate-poker",
    ] {
        let body = json!({"subject": subject, "kind": "User", "role": role}).to_string();
        let answer = server.post(GRANTS, Some(Admin), Some(&body)).await;
        assert_eq!(answer.status, 400, "{role}: {}", answer.body);
        assert!(
            answer.json()["error"]
                .as_str()
                .unwrap()
                .contains("not a role Hecate grants")
        );
    }
    for (body, why) in [
        (
            json!({"subject": " ", "role": "hecate-viewer"}),
            "blank subject",
        ),
        (
            json!({"subject": subject, "kind": "ServiceAccount", "role": "hecate-viewer"}),
            "kind",
        ),
        (
            json!({"subject": subject, "role": "hecate-viewer", "actor": "x"}),
            "unknown field",
        ),
    ] {
        let answer = server
            .post(GRANTS, Some(Admin), Some(&body.to_string()))
            .await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
    }
    let answer = server.post(GRANTS, Some(Admin), Some("")).await;
    assert_eq!(answer.status, 400, "an empty body");
    let grants = server.get(GRANTS, Some(Admin)).await.json();
    assert!(
        !grants.to_string().contains(&subject),
        "nothing was bound: {grants}"
    );
}

/// Surfaces §5 case 92: the caller's own right to bind is asked (create
/// clusterrolebindings, cluster-wide), not the server's, and a refusal binds
/// nothing. Listing grants is asked too.
#[tokio::test]
async fn case_92_binding_a_role_checks_the_caller_not_the_server() {
    let server = Server::start().await;
    writable(&server.env).await;
    let subject = format!("{}-case92", server.ns());
    let body = json!({"subject": subject, "kind": "User", "role": "hecate-promoter"}).to_string();
    let answer = server.post(GRANTS, Some(Alice), Some(&body)).await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.json()["error"],
        "alice may not create clusterrolebindings cluster-wide"
    );
    let listed = server.get(GRANTS, Some(Alice)).await;
    assert_eq!(listed.status, 403, "{}", listed.body);
    assert_eq!(
        listed.json()["error"],
        "alice may not list clusterrolebindings cluster-wide"
    );
    let bindings: Api<ClusterRoleBinding> = Api::all(server.env.admin.clone());
    let name = format!("hecate-promoter-user-{subject}");
    assert!(bindings.get_opt(&name).await.unwrap().is_none());
    assert_eq!(server.post(GRANTS, None, Some(&body)).await.status, 401);
}

/// Surfaces §5 case 93: granting twice answers 200 both times, `created` true then
/// false; the binding is the spec's, and the grants list shows who granted it.
#[tokio::test]
async fn case_93_binding_a_role_is_idempotent() {
    let server = Server::start().await;
    writable(&server.env).await;
    let subject = format!("Ops Team {}", server.ns());
    let body = json!({"subject": subject, "kind": "Group", "role": "hecate-approver"}).to_string();
    let first = server.post(GRANTS, Some(Admin), Some(&body)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let binding = format!("hecate-approver-group-ops-team-{}", server.ns());
    assert_eq!(first.json(), json!({"binding": binding, "created": true}));
    let second = server.post(GRANTS, Some(Admin), Some(&body)).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.json(), json!({"binding": binding, "created": false}));

    let bindings: Api<ClusterRoleBinding> = Api::all(server.env.admin.clone());
    let made = bindings.get(&binding).await.unwrap();
    assert_eq!(made.role_ref.name, "hecate-approver");
    assert_eq!(
        made.metadata.labels.unwrap()["app.kubernetes.io/managed-by"],
        "hecate"
    );
    assert_eq!(
        made.metadata.annotations.unwrap()["hecate.dev/granted-by"],
        "admin"
    );
    let subjects = made.subjects.unwrap();
    assert_eq!(
        (subjects[0].kind.as_str(), subjects[0].name.as_str()),
        ("Group", subject.as_str())
    );

    let grants = server.get(GRANTS, Some(Admin)).await;
    assert_eq!(grants.status, 200, "{}", grants.body);
    let row = find(&grants.json()["grants"], "binding", &binding).clone();
    assert_eq!(
        row,
        json!({"binding": binding, "role": "hecate-approver", "kind": "Group", "subject": subject, "grantedBy": "admin"})
    );
    bindings
        .delete(&binding, &Default::default())
        .await
        .unwrap();
}

/// Surfaces §5 case 94: connecting a cluster asks for create secrets in the path's
/// namespace, as the caller; a refusal stores nothing.
#[tokio::test]
async fn case_94_connecting_a_cluster_checks_secret_rights() {
    let server = Server::start().await;
    writable(&server.env).await;
    let body = json!({"name": "remote", "kubeconfig": "apiVersion: v1"}).to_string();
    let answer = server.post(CLUSTERS, Some(Bob), Some(&body)).await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.json()["error"],
        format!("bob may not create secrets in {}", server.ns())
    );
    let secrets: Api<Secret> = server.env.api();
    assert!(secrets.get_opt("remote").await.unwrap().is_none());
}

/// Connecting a cluster stores its kubeconfig as the spec's Secret; connecting it
/// again rotates the kubeconfig only; the settings page then probes it. Bad input is
/// a 400 before anything is asked or stored.
#[tokio::test]
async fn connecting_a_cluster_stores_and_rotates_its_kubeconfig() {
    let server = Server::start().await;
    writable(&server.env).await;
    // The settings page looks in namespaces holding Gates.
    server.pipeline().await;
    let secrets: Api<Secret> = server.env.api();
    for (body, why) in [
        (json!({"name": "", "kubeconfig": "x"}), "no name"),
        (
            json!({"name": "remote", "kubeconfig": "  "}),
            "no kubeconfig",
        ),
        (
            json!({"name": "Not_A_Name", "kubeconfig": "x"}),
            "a bad name",
        ),
        (
            json!({"name": "remote", "kubeconfig": "x", "namespace": "y"}),
            "unknown field",
        ),
    ] {
        let answer = server
            .post(CLUSTERS, Some(Bob), Some(&body.to_string()))
            .await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
    }
    assert!(secrets.get_opt("remote").await.unwrap().is_none());

    let rejected = kubeconfig(&server, Alice, Some("expired-token"), None);
    let body = json!({"name": "remote", "kubeconfig": rejected}).to_string();
    let first = server.post(CLUSTERS, Some(Admin), Some(&body)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let key = format!("{}/remote", server.ns());
    assert_eq!(first.json(), json!({"secret": key, "created": true}));
    let stored = secrets.get("remote").await.unwrap();
    let labels = stored.metadata.labels.clone().unwrap();
    assert_eq!(labels["hecate.dev/cluster"], "true");
    assert_eq!(labels["app.kubernetes.io/managed-by"], "hecate");
    assert_eq!(
        stored.metadata.annotations.clone().unwrap()["hecate.dev/created-by"],
        "admin"
    );
    assert_eq!(stored.type_.as_deref(), Some("Opaque"));
    assert_eq!(stored.data.clone().unwrap()["value"].0, rejected.as_bytes());

    let mut settings = server.get(SETTINGS, Some(Admin)).await.json();
    mine(&mut settings, server.ns());
    let probed = find(&settings["clusters"], "secret", &key).clone();
    assert_eq!(probed["reachable"], false, "{probed}");

    let good = kubeconfig(&server, Alice, None, None);
    let body = json!({"name": "remote", "kubeconfig": good}).to_string();
    let again = server.post(CLUSTERS, Some(Admin), Some(&body)).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json(), json!({"secret": key, "created": false}));
    let rotated = secrets.get("remote").await.unwrap();
    assert_eq!(rotated.data.unwrap()["value"].0, good.as_bytes());
    assert_eq!(
        rotated.metadata.labels, stored.metadata.labels,
        "only the kubeconfig changes"
    );
    let mut settings = server.get(SETTINGS, Some(Admin)).await.json();
    mine(&mut settings, server.ns());
    let probed = find(&settings["clusters"], "secret", &key).clone();
    assert_eq!(probed["reachable"], true, "{probed}");
}

/// `PUT …/gates/{name}/evidence`: checked input (400, nothing written), then the
/// caller's update on gates (403), then the Gate (404); the environment and server
/// are set (the server even when empty), a named Secret replaces the credentials and
/// none keeps them.
#[tokio::test]
async fn a_gates_evidence_settings_are_written_for_a_caller_who_may_update_it() {
    let server = Server::start().await;
    writable(&server.env).await;
    gate(&server, "production", "https://fides.old.example", None).await;
    let gates: Api<Gate> = server.env.api();
    let mut with_secret = gates.get("production").await.unwrap();
    if let Some(evidence) = with_secret.spec.evidence.as_mut() {
        evidence.credentials_ref = Some(LocalSecretRef {
            name: "fides".into(),
        });
    }
    with_secret.metadata.managed_fields = None;
    gates
        .replace("production", &Default::default(), &with_secret)
        .await
        .unwrap();
    let path = "/api/v1alpha1/namespaces/{ns}/gates/production/evidence";
    let put = |who: Identity, body: Value| {
        let (server, token) = (&server, server.token(who));
        async move {
            server
                .send(
                    reqwest::Method::PUT,
                    path,
                    Some(&token),
                    Some(&body.to_string()),
                )
                .await
        }
    };
    for (body, why) in [
        (
            json!({"serverURL": "https://f", "fidesEnvironment": " "}),
            "blank environment",
        ),
        (
            json!({"serverURL": "https://f", "fidesEnvironment": "staging"}),
            "not a UUID",
        ),
        (
            json!({"serverURL": "ftp://f", "fidesEnvironment": ENVIRONMENT}),
            "not http",
        ),
        (
            json!({"fidesEnvironment": ENVIRONMENT, "gate": "x"}),
            "unknown field",
        ),
    ] {
        let answer = put(Admin, body).await;
        assert_eq!(answer.status, 400, "{why}: {}", answer.body);
    }
    let unchanged = gates
        .get("production")
        .await
        .unwrap()
        .spec
        .evidence
        .unwrap();
    assert_eq!(unchanged.server_url, "https://fides.old.example");

    let refused = put(
        Carol,
        json!({"serverURL": "", "fidesEnvironment": ENVIRONMENT}),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.json()["error"],
        format!("carol may not update gates in {}", server.ns())
    );
    let missing = server
        .send(
            reqwest::Method::PUT,
            "/api/v1alpha1/namespaces/{ns}/gates/ghost/evidence",
            Some(&server.token(Admin)),
            Some(&json!({"fidesEnvironment": ENVIRONMENT}).to_string()),
        )
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);

    let environment = "11111111-2222-4333-8444-555555555555";
    let answer = put(
        Admin,
        json!({"serverURL": "", "fidesEnvironment": environment}),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answered = answer.json();
    assert_eq!(answered["gate"], format!("{}/production", server.ns()));
    assert!(
        answered["note"].as_str().unwrap().contains("Flux"),
        "{answered}"
    );
    let evidence = gates
        .get("production")
        .await
        .unwrap()
        .spec
        .evidence
        .unwrap();
    assert_eq!(evidence.fides_environment, environment);
    assert_eq!(evidence.server_url, "", "set, even when empty");
    assert_eq!(
        evidence.credentials_ref.unwrap().name,
        "fides",
        "kept when none is named"
    );

    let answer = put(
        Admin,
        json!({"serverURL": "https://fides.example", "fidesEnvironment": environment, "credentialsRef": {"name": "fides-key"}}),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let evidence = gates
        .get("production")
        .await
        .unwrap()
        .spec
        .evidence
        .unwrap();
    assert_eq!(evidence.server_url, "https://fides.example");
    assert_eq!(evidence.credentials_ref.unwrap().name, "fides-key");
}

/// The settings writes' RBAC is the chart's opt-in (`api.settings.writable`, off by
/// default, so `deploy/` holds none): it grants exactly what the writes do — list and
/// create ClusterRoleBindings, bind only the grantable roles, list, create and patch
/// Secrets, update Gates — bound to the server's ServiceAccount.
#[test]
fn the_settings_rbac_is_opt_in_and_narrow() {
    use hecate_testenv::{Tool, chart};
    let helm = Tool::Helm.locate_or_build().unwrap();
    let defaults = chart::template(&helm, "hecate-system", &[], &[]).unwrap();
    assert!(!defaults.contains("hecate-api-settings"), "off by default");
    let deployed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy/hecate-api/hecate-api.yaml"),
    )
    .unwrap();
    assert!(
        !deployed.contains("hecate-api-settings"),
        "deploy/ is the defaults"
    );
    let on = chart::template(&helm, "hecate-system", &[], &["api.settings.writable=true"]).unwrap();
    let objects = chart::objects(&on).unwrap();
    let named = |kind: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == "hecate-api-settings")
            .unwrap_or_else(|| panic!("{kind} hecate-api-settings"))
            .clone()
    };
    let rules: Vec<Value> = named("ClusterRole")["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!([
                r["apiGroups"],
                r["resources"],
                r["verbs"],
                r.get("resourceNames").cloned().unwrap_or(Value::Null)
            ])
        })
        .collect();
    assert_eq!(
        rules,
        [
            json!([
                ["rbac.authorization.k8s.io"],
                ["clusterrolebindings"],
                ["list", "create"],
                null
            ]),
            json!([
                ["rbac.authorization.k8s.io"],
                ["clusterroles"],
                ["bind"],
                [
                    "hecate-viewer",
                    "hecate-promoter",
                    "hecate-approver",
                    "hecate-flux-operator"
                ]
            ]),
            json!([[""], ["secrets"], ["list", "create", "patch"], null]),
            json!([["hecate.dev"], ["gates"], ["update"], null]),
        ]
    );
    assert_eq!(
        named("ClusterRoleBinding")["subjects"],
        json!([{"kind": "ServiceAccount", "name": "hecate-api", "namespace": "hecate-system"}])
    );
    assert_eq!(
        hecate_ops::rules::settings::GRANTABLE_ROLES.to_vec(),
        [
            "hecate-viewer",
            "hecate-promoter",
            "hecate-approver",
            "hecate-flux-operator"
        ],
        "the roles the server may bind are the roles a grant may name"
    );
}

/// What a grant may grant: Kubernetes lets someone bind a role only if they may
/// `bind` it (or hold all it grants); the server binds with its own `bind`, so the
/// caller is asked for `bind` on that ClusterRole too. A caller who may create
/// ClusterRoleBindings but not bind the role is refused, and nothing is bound.
#[tokio::test]
async fn granting_a_role_needs_bind_on_that_role() {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
    };
    use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
    let server = Server::start().await;
    writable(&server.env).await;
    // The controller's identity is no one's in these tests: it may create bindings.
    let name = format!("{}-binder", server.ns());
    let roles: Api<ClusterRole> = Api::all(server.env.admin.clone());
    roles
        .create(
            &Default::default(),
            &ClusterRole {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    ..ObjectMeta::default()
                },
                rules: Some(vec![PolicyRule {
                    api_groups: Some(vec!["rbac.authorization.k8s.io".into()]),
                    resources: Some(vec!["clusterrolebindings".into()]),
                    verbs: vec!["create".into()],
                    ..PolicyRule::default()
                }]),
                ..ClusterRole::default()
            },
        )
        .await
        .unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(server.env.admin.clone());
    bindings
        .create(
            &Default::default(),
            &ClusterRoleBinding {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    ..ObjectMeta::default()
                },
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "ClusterRole".into(),
                    name: name.clone(),
                },
                subjects: Some(vec![hecate_testenv::rbac::subject(HecateController)]),
            },
        )
        .await
        .unwrap();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(HecateController.username().into()),
            resource_attributes: Some(ResourceAttributes {
                group: Some("rbac.authorization.k8s.io".into()),
                resource: Some("clusterrolebindings".into()),
                verb: Some("create".into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let reviews: Api<SubjectAccessReview> = Api::all(server.env.admin.clone());
    for _ in 0..100 {
        let answer = reviews.create(&Default::default(), &review).await.unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let subject = format!("{}-case-bind", server.ns());
    let body = json!({"subject": subject, "role": "hecate-viewer"}).to_string();
    let answer = server
        .post(GRANTS, Some(HecateController), Some(&body))
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.json()["error"],
        "hecate-controller may not bind clusterroles cluster-wide"
    );
    let binding = format!("hecate-viewer-user-{subject}");
    assert!(bindings.get_opt(&binding).await.unwrap().is_none());
    bindings.delete(&name, &Default::default()).await.unwrap();
    roles.delete(&name, &Default::default()).await.unwrap();
}
