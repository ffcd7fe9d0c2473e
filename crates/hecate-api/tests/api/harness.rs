//! A server per test, listening on loopback, acting as the `hecate-api` identity with
//! the ClusterRole from `deploy/`; alice, bob and carol bound to the user roles from
//! `deploy/`.

use hecate_api::AppState;
use hecate_testenv::fixtures::{bundle, gate, gate_spec};
use hecate_testenv::{Identity, RequestLog, TestEnv};
use hecate_types::Gate;
use serde_json::Value;

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

    /// A server reading directly, whose client records every request it sends to
    /// the API server (TokenReviews and SubjectAccessReviews included).
    pub(crate) async fn start_recording() -> (Self, RequestLog) {
        let env = TestEnv::new().await;
        hecate_testenv::rbac::grant_deployed_roles(&env).await;
        let (client, log) = env
            .endpoint()
            .recording_client(Identity::HecateApi)
            .await
            .unwrap();
        (
            Self::serve(env, client, false, hecate_api::Limits::default()).await,
            log,
        )
    }

    /// A server acting as `who` (the deployed roles granted as usual), reading from
    /// its cache when `cached`, keeping `limits`; its client records every request it
    /// sends to the API server.
    pub(crate) async fn start_with(
        who: Identity,
        cached: bool,
        limits: hecate_api::Limits,
    ) -> (Self, RequestLog) {
        let env = TestEnv::new().await;
        hecate_testenv::rbac::grant_deployed_roles(&env).await;
        let (client, log) = env.endpoint().recording_client(who).await.unwrap();
        (Self::serve(env, client, cached, limits).await, log)
    }

    /// Waits until `/readyz` says ready (a cached server has listed everything).
    pub(crate) async fn ready(&self) {
        for _ in 0..100 {
            if self.get("/readyz", None).await.status == 200 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the server never became ready");
    }

    async fn launch(cached: bool) -> Self {
        let env = TestEnv::new().await;
        hecate_testenv::rbac::grant_deployed_roles(&env).await;
        let client = env.client(Identity::HecateApi).await;
        Self::serve(env, client, cached, hecate_api::Limits::default()).await
    }

    async fn serve(
        env: TestEnv,
        client: kube::Client,
        cached: bool,
        limits: hecate_api::Limits,
    ) -> Self {
        let state = AppState::new(client, vec![]).with_limits(limits);
        let state = if cached { state.cached() } else { state };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = hecate_api::router(state.clone());
        // As the binary serves: its timeouts are the server's, not the router's.
        tokio::spawn(hecate_api::serve(
            listener,
            app,
            limits,
            std::future::pending(),
        ));
        Self {
            base,
            state,
            http: reqwest::Client::new(),
            env,
        }
    }

    pub(crate) fn ns(&self) -> &str {
        &self.env.namespace
    }

    pub(crate) fn token(&self, who: Identity) -> String {
        self.env.endpoint().tokens[&who].clone()
    }

    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> Answer {
        let path = path.replace("{ns}", self.ns());
        let reads = method == reqwest::Method::GET;
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        } else if !reads {
            // A write with nothing to say still says it in JSON, as the UI does.
            request = request.header("content-type", "application/json");
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
        gate(&self.env, "staging", gate_spec(&[], false)).await;
        bundle(&self.env, "b1").await;
    }
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
