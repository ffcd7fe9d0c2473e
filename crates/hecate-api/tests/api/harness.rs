//! A server per test, listening on loopback, acting as the `hecate-api` identity with
//! the ClusterRole from `deploy/`; alice, bob and carol bound to the user roles from
//! `deploy/`.

use std::time::Duration;

use hecate_api::AppState;
use hecate_testenv::{Identity, TestEnv, apply_manifest};
use hecate_types::{
    Admission, Artifact, Bundle, BundleOrigin, BundleSpec, Gate, GateSpec, PassageTemplate, Step,
};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, PostParams};
use serde_json::Value;

const USER_ROLES: &str = include_str!("../../../../deploy/rbac/user-roles.yaml");
const SERVER_MANIFEST: &str = include_str!("../../../../deploy/hecate-api/hecate-api.yaml");

pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) state: AppState,
    pub(crate) http: reqwest::Client,
    pub(crate) env: TestEnv,
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn subject(who: Identity) -> Subject {
    Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: "User".into(),
        name: who.username().into(),
        ..Subject::default()
    }
}

impl Server {
    /// A server reading from the API server directly: a read sees every write
    /// acknowledged before it, which keeps tests free of waiting.
    pub(crate) async fn start() -> Self {
        Self::launch(false).await
    }

    /// A server reading from its watch-backed cache, as `hecate-api` runs.
    pub(crate) async fn start_cached() -> Self {
        Self::launch(true).await
    }

    async fn launch(cached: bool) -> Self {
        let env = TestEnv::new().await;
        apply_manifest(&env.admin, USER_ROLES, false).await.unwrap();
        // Only the ClusterRole of the server's manifest; the server runs as the static
        // `hecate-api` user here, so bind that.
        let role = SERVER_MANIFEST
            .split("\n---\n")
            .find(|d| d.contains("kind: ClusterRole\n"))
            .unwrap();
        apply_manifest(&env.admin, role, false).await.unwrap();
        let binding = ClusterRoleBinding {
            metadata: ObjectMeta {
                name: Some("hecate-api-test".into()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: "hecate-api".into(),
            },
            subjects: Some(vec![subject(Identity::HecateApi)]),
        };
        let bindings = Api::<ClusterRoleBinding>::all(env.admin.clone());
        let _ = bindings.create(&PostParams::default(), &binding).await;
        for (who, role) in [
            (Identity::Alice, "hecate-viewer"),
            (Identity::Bob, "hecate-promoter"),
            (Identity::Carol, "hecate-approver"),
        ] {
            let binding = RoleBinding {
                metadata: ObjectMeta {
                    name: Some(role.into()),
                    ..ObjectMeta::default()
                },
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "ClusterRole".into(),
                    name: role.into(),
                },
                subjects: Some(vec![subject(who)]),
            };
            env.create(binding).await;
        }
        let client = env.client(Identity::HecateApi).await;
        let state = AppState::new(client, vec![]);
        let state = if cached { state.cached() } else { state };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = hecate_api::router(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let server = Self {
            base,
            state,
            http: reqwest::Client::new(),
            env,
        };
        // RBAC is cached in the API server from a watch: wait until the new bindings
        // answer, so no test reads a stale "forbidden".
        server
            .await_access(Identity::Carol, "update", "bundles", "status")
            .await;
        server
            .await_access(Identity::Bob, "create", "passages", "")
            .await;
        server
            .await_access(Identity::Alice, "list", "gates", "")
            .await;
        server
            .await_access(Identity::HecateApi, "create", "passages", "")
            .await;
        server
    }

    pub(crate) fn ns(&self) -> &str {
        &self.env.namespace
    }

    pub(crate) fn token(&self, who: Identity) -> String {
        self.env.endpoint().tokens[&who].clone()
    }

    async fn await_access(&self, who: Identity, verb: &str, resource: &str, subresource: &str) {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(who.username().into()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(self.ns().into()),
                    group: Some("hecate.dev".into()),
                    resource: Some(resource.into()),
                    subresource: (!subresource.is_empty()).then(|| subresource.into()),
                    verb: Some(verb.into()),
                    ..ResourceAttributes::default()
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        for _ in 0..100 {
            let answer = Api::<SubjectAccessReview>::all(self.env.admin.clone())
                .create(&PostParams::default(), &review)
                .await
                .unwrap();
            if answer.status.is_some_and(|s| s.allowed) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{who} never got {verb} {resource}");
    }

    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> Answer {
        let path = path.replace("{ns}", self.ns());
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        Answer {
            status,
            headers,
            body: response.text().await.unwrap(),
        }
    }

    pub(crate) async fn get(&self, path: &str, who: Option<Identity>) -> Answer {
        let token = who.map(|w| self.token(w));
        self.send(reqwest::Method::GET, path, token.as_deref(), None)
            .await
    }

    pub(crate) async fn post(
        &self,
        path: &str,
        who: Option<Identity>,
        body: Option<&str>,
    ) -> Answer {
        let token = who.map(|w| self.token(w));
        self.send(reqwest::Method::POST, path, token.as_deref(), body)
            .await
    }

    /// Gate `staging` (admits Beacon `app`) and Bundle `b1`.
    pub(crate) async fn pipeline(&self) {
        let spec = GateSpec {
            admits: vec![Admission {
                from: BundleOrigin {
                    beacon: "app".into(),
                },
                ..Admission::default()
            }],
            passage: Some(PassageTemplate {
                steps: vec![Step {
                    uses: "flux-wait".into(),
                    ..Step::default()
                }],
            }),
            ..GateSpec::default()
        };
        self.env.create(Gate::new("staging", spec)).await;
        let bundle = BundleSpec {
            beacon: "app".into(),
            artifacts: vec![Artifact::image("ghcr.io/acme/app", "1.0.0", "")],
            ..BundleSpec::default()
        };
        self.env.create(Bundle::new("b1", bundle)).await;
    }
}

impl Server {
    /// The demo pipeline (`shop`: dev → staging → production, with history) in this
    /// namespace, alice, bob and carol granted there.
    ///
    /// Production's weekend deny window is removed: with it, whether production may
    /// be crossed (and what its page says) would depend on the day the test runs.
    pub(crate) async fn demo(&self) {
        hecate_testenv::demo::load(&self.env.admin, self.ns(), jiff::Timestamp::now())
            .await
            .unwrap();
        hecate_testenv::demo::grant_people(&self.env.admin, self.ns())
            .await
            .unwrap();
        self.env
            .api::<Gate>()
            .patch(
                "production",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(serde_json::json!({"spec": {"windows": null}})),
            )
            .await
            .unwrap();
    }
}
