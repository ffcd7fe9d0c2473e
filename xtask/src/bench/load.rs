//! HTTP load on `hecate-api`, from this process while the server runs in its own:
//! requests per second and latency percentiles at several concurrencies, and what the
//! server asked of the API server meanwhile (from the API server's counter).

use std::path::Path;
use std::time::{Duration, Instant};

use hecate_testenv::{Endpoint, Identity};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use serde::Serialize;

use super::apiserver;

/// One load level's results.
#[derive(Serialize)]
pub(crate) struct Level {
    pub(crate) route: String,
    pub(crate) concurrency: usize,
    pub(crate) requests: usize,
    pub(crate) errors: usize,
    pub(crate) requests_per_second: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
}

/// The server under load, and what it cost the API server.
#[derive(Serialize)]
pub(crate) struct ApiResults {
    /// From starting the process to `/readyz` answering 200 (its cache listed).
    pub(crate) ready_ms: f64,
    pub(crate) levels: Vec<Level>,
    /// Successful requests over all levels, and how long the load lasted.
    pub(crate) requests: usize,
    pub(crate) load_seconds: f64,
    /// What the API server served while the load ran.
    pub(crate) apiserver: apiserver::Counts,
    pub(crate) token_reviews_per_1000: f64,
    pub(crate) access_reviews_per_1000: f64,
    /// TokenReviews for the one token used, per token-cache period (10 s).
    pub(crate) token_reviews_per_period: f64,
    /// The server's peak resident set (VmHWM).
    pub(crate) peak_rss_mib: f64,
}

/// How long hecate-api keeps a TokenReview's answer.
const TOKEN_CACHE_PERIOD: Duration = Duration::from_secs(10);

const CONCURRENCY: [usize; 3] = [1, 8, 32];
const LEVEL_DURATION: Duration = Duration::from_secs(10);

/// Starts `hecate-api` as its own process (the `hecate-api` identity), grants alice
/// the viewer role in `namespace`, and loads `routes` as alice.
pub(crate) async fn run(
    root: &Path,
    endpoint: &Endpoint,
    admin: &kube::Client,
    namespace: &str,
    routes: &[String],
) -> anyhow::Result<ApiResults> {
    let admin = admin.clone();
    grant_viewer(&admin, Identity::Alice, Some(namespace)).await?;

    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let server = crate::api_server::start(
        &super::binary(root, "hecate-api"),
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        &endpoint.dir.join("kubeconfig"),
        None,
    )
    .await?;
    let base = server.base.clone();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;
    let token = endpoint.tokens[&Identity::Alice].clone();
    // Warm up (and wait for the RoleBinding to take effect).
    for route in routes {
        warm(&http, &base, route, &token).await?;
    }
    let before = apiserver::counts(&admin).await?;
    let load_started = Instant::now();
    let mut levels = Vec::new();
    for route in routes {
        for concurrency in CONCURRENCY {
            levels.push(level(&http, &base, route, &token, concurrency, LEVEL_DURATION).await);
        }
    }
    let load_seconds = load_started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let served = before.until(apiserver::counts(&admin).await?);
    let requests: usize = levels.iter().map(|l| l.requests).sum();
    let per_1000 = |count: f64| count * 1000.0 / requests.max(1) as f64;
    let peak_rss_mib = std::fs::read_to_string(format!("/proc/{}/status", server.pid()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0);
    Ok(ApiResults {
        ready_ms: server.ready_after.as_secs_f64() * 1000.0,
        levels,
        requests,
        load_seconds,
        apiserver: served,
        token_reviews_per_1000: per_1000(served.token_reviews),
        access_reviews_per_1000: per_1000(served.access_reviews),
        token_reviews_per_period: served.token_reviews
            / (load_seconds / TOKEN_CACHE_PERIOD.as_secs_f64()),
        peak_rss_mib,
    })
}

/// Waits until `route` answers `token` with a success (a RoleBinding takes a moment).
pub(crate) async fn warm(
    http: &reqwest::Client,
    base: &str,
    route: &str,
    token: &str,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = http
            .get(format!("{base}{route}"))
            .bearer_auth(token)
            .send()
            .await?
            .status();
        if status.is_success() {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "{route} answers {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Installs the roles `deploy/` ships and binds `who` to `hecate-viewer` in `namespace`,
/// or in every namespace for `None` (idempotent: server-side apply).
pub(crate) async fn grant_viewer(
    admin: &kube::Client,
    who: Identity,
    namespace: Option<&str>,
) -> anyhow::Result<()> {
    hecate_testenv::rbac::install_deployed_roles(admin).await?;
    let params = PatchParams::apply("hecate-bench").force();
    let name = match namespace {
        Some(_) => format!("{who}-viewer"),
        None => format!("{who}-viewer-everywhere"),
    };
    let metadata = ObjectMeta {
        name: Some(name.clone()),
        ..ObjectMeta::default()
    };
    let role_ref = RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: "ClusterRole".into(),
        name: "hecate-viewer".into(),
    };
    let subjects = Some(vec![Subject {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: "User".into(),
        name: who.username().into(),
        ..Subject::default()
    }]);
    match namespace {
        Some(namespace) => {
            let binding = RoleBinding {
                metadata,
                role_ref,
                subjects,
            };
            Api::<RoleBinding>::namespaced(admin.clone(), namespace)
                .patch(&name, &params, &Patch::Apply(&binding))
                .await?;
        }
        None => {
            let binding = ClusterRoleBinding {
                metadata,
                role_ref,
                subjects,
            };
            Api::<ClusterRoleBinding>::all(admin.clone())
                .patch(&name, &params, &Patch::Apply(&binding))
                .await?;
        }
    }
    Ok(())
}

/// `concurrency` clients asking `route` as `token` for `duration`.
pub(crate) async fn level(
    http: &reqwest::Client,
    base: &str,
    route: &str,
    token: &str,
    concurrency: usize,
    duration: Duration,
) -> Level {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let workers = (0..concurrency).map(|_| {
        let (http, url, token) = (http.clone(), format!("{base}{route}"), token.to_string());
        tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0;
            while Instant::now() < deadline {
                let sent = Instant::now();
                match http.get(&url).bearer_auth(&token).send().await {
                    Ok(response) if response.status().is_success() => {
                        let _ = response.bytes().await;
                        latencies.push(sent.elapsed());
                    }
                    _ => errors += 1,
                }
            }
            (latencies, errors)
        })
    });
    let mut latencies = Vec::new();
    let mut errors = 0;
    for worker in futures::future::join_all(workers)
        .await
        .into_iter()
        .flatten()
    {
        latencies.extend(worker.0);
        errors += worker.1;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort();
    let percentile = |p: f64| super::percentile_ms(&latencies, p);
    Level {
        route: route.into(),
        concurrency,
        requests: latencies.len(),
        errors,
        requests_per_second: latencies.len() as f64 / elapsed,
        p50_ms: percentile(0.50),
        p99_ms: percentile(0.99),
    }
}
