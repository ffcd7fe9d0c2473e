//! The image, chart and provider sources against real servers on loopback: CNCF
//! Distribution (Debian's `docker-registry`, the test environment's shared
//! [`hecate_testenv::registry`]) with images pushed by raw HTTP, a Helm repository
//! served by axum, and a stand-in `ResourceSetInputProvider` CRD.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse as _;
use hecate_testenv::flux::StandIn;
use hecate_testenv::registry::{Distribution, PASSWORD};
use hecate_types::{ChartWatch, ImageWatch, LocalSecretRef, ProviderWatch};
use kube::ResourceExt as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};

use pretty_assertions::assert_eq;

use super::*;

pub(super) fn image(repo: &str, constraint: &str, ignore: &[&str]) -> WatchSource {
    WatchSource {
        image: Some(ImageWatch {
            repo: repo.into(),
            constraint: constraint.into(),
            ignore: ignore.iter().map(|s| s.to_string()).collect(),
            ..ImageWatch::default()
        }),
        ..WatchSource::default()
    }
}

pub(super) fn with_secret(mut watch: WatchSource, secret: &str) -> WatchSource {
    let reference = Some(LocalSecretRef {
        name: secret.into(),
    });
    if let Some(image) = &mut watch.image {
        image.credentials_ref = reference;
    } else if let Some(chart) = &mut watch.chart {
        chart.credentials_ref = reference;
    }
    watch
}

pub(super) async fn secret(b: &Beacons, name: &str, pairs: &[(&str, &str)]) {
    b.env
        .create(hecate_testenv::fixtures::usable_secret(name, pairs))
        .await;
}

async fn image_artifact(b: &Beacons, name: &str) -> Option<hecate_types::ImageArtifact> {
    b.beacon(name)
        .await
        .status
        .unwrap_or_default()
        .discovered
        .into_iter()
        .next()
        .and_then(|a| a.image)
}

// ---------------------------------------------------------------------------------
// Images.

/// A new tag is one Bundle with the tag's digest (a multi-arch tag's is its index's);
/// ignored tags are never chosen; two Beacons on one repository each emit their own.
#[tokio::test]
async fn images_new_tags_ignored_tags_and_two_beacons() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    let (v1, _) = registry.image("team/app", "1.0.0", "one").await;
    registry.image("team/app", "latest", "tip").await;
    b.create("app", spec(vec![image(&repo, "", &[])])).await;
    b.reconcile("app").await;
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 1);
    assert_eq!(
        bundles[0].spec.artifacts,
        [Artifact::image(repo.clone(), "1.0.0", v1.clone())]
    );
    b.reconcile("app").await;
    assert_eq!(b.bundles("app").await.len(), 1, "re-polling emits nothing");

    let index = registry.multi_arch("team/app", "1.1.0", "two").await;
    b.reconcile("app").await;
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 2);
    let latest = b.beacon("app").await.status.unwrap().latest_bundle;
    let newest = b.env.api::<Bundle>().get(&latest).await.unwrap();
    assert_eq!(
        newest.spec.artifacts,
        [Artifact::image(repo.clone(), "1.1.0", index)],
        "a multi-arch tag is followed by its index digest"
    );

    // A second Beacon on the same repository, ignoring 1.1.0: its own Bundle, of 1.0.0.
    b.create("pinned", spec(vec![image(&repo, "^1", &["1.1.0"])]))
        .await;
    b.reconcile("pinned").await;
    let pinned = b.bundles("pinned").await;
    assert_eq!(pinned.len(), 1);
    assert_eq!(
        pinned[0].spec.artifacts,
        [Artifact::image(repo.clone(), "1.0.0", v1)]
    );
    assert!(pinned[0].name_any().starts_with("pinned-"));
    assert_eq!(b.bundles("app").await.len(), 2, "each Beacon emits its own");

    // Nothing in range is a state, not a failure.
    b.create("future", spec(vec![image(&repo, "^2", &[])]))
        .await;
    b.reconcile("future").await;
    assert_eq!(b.ready("future").await.reason, "NoMatchingArtifact");
}

/// A registry that wants credentials: refused without them and with wrong ones (a
/// readable condition each), served with a username/password Secret or a docker
/// config Secret.
#[tokio::test]
async fn images_behind_authentication() {
    let b = Beacons::new().await;
    let registry = Distribution::start(true).await;
    let repo = registry.repo("team/app");
    let (digest, _) = registry.image("team/app", "1.0.0", "one").await;

    b.create("anonymous", spec(vec![image(&repo, "", &[])]))
        .await;
    b.reconcile("anonymous").await;
    let message = b.refused("anonymous", "ResolveFailed").await;
    assert!(message.contains("credentials"), "{}", message);

    secret(&b, "wrong", &[("username", "bot"), ("password", "nope")]).await;
    b.create(
        "wrong",
        spec(vec![with_secret(image(&repo, "", &[]), "wrong")]),
    )
    .await;
    b.reconcile("wrong").await;
    let ready = b.ready("wrong").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(ready.message.contains("refused"), "{}", ready.message);

    secret(&b, "plain", &[("username", "bot"), ("password", PASSWORD)]).await;
    b.create(
        "plain",
        spec(vec![with_secret(image(&repo, "", &[]), "plain")]),
    )
    .await;
    b.reconcile("plain").await;
    assert_eq!(b.ready("plain").await.reason, "Discovered");
    assert_eq!(image_artifact(&b, "plain").await.unwrap().digest, digest);

    let config = serde_json::json!({"auths": {format!("http://{}", registry.addr): {
        "auth": base64_encode(&format!("bot:{PASSWORD}"))
    }}});
    secret(&b, "docker", &[(".dockerconfigjson", &config.to_string())]).await;
    b.create(
        "docker",
        spec(vec![with_secret(image(&repo, "", &[]), "docker")]),
    )
    .await;
    b.reconcile("docker").await;
    assert_eq!(b.ready("docker").await.reason, "Discovered");
    assert_eq!(image_artifact(&b, "docker").await.unwrap().digest, digest);
}

pub(super) fn base64_encode(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A token service in front of a real registry, as public registries run one: every
/// registry request needs a Bearer token, which anyone may have (the anonymous token
/// flow). Counts the tokens handed out.
async fn token_gate(
    registry: SocketAddr,
) -> (SocketAddr, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    use axum::body::{Body, Bytes};
    use axum::http::{Method, Uri};
    use axum::response::Response;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = Arc::new(AtomicUsize::new(0));
    let issued = tokens.clone();
    let http = reqwest::Client::new();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let issued = issued.clone();
        let http = http.clone();
        async move {
            if uri.path() == "/token" {
                let query = uri.query().unwrap_or_default();
                assert!(
                    query.contains("scope=repository%3Ateam%2Fapp%3Apull"),
                    "{query}"
                );
                issued.fetch_add(1, Ordering::SeqCst);
                return (StatusCode::OK, r#"{"token": "t-1"}"#).into_response();
            }
            if headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()) != Some(b"Bearer t-1") {
                let challenge = format!(
                    r#"Bearer realm="http://{addr}/token",service="test",scope="repository:team/app:pull""#
                );
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, challenge)],
                )
                    .into_response();
            }
            let url = format!("http://{registry}{uri}");
            let mut forwarded = http.request(method, url).body(body);
            if let Some(accept) = headers.get(header::ACCEPT) {
                forwarded = forwarded.header(header::ACCEPT, accept);
            }
            let answer = forwarded.send().await.unwrap();
            let mut response = Response::builder().status(answer.status().as_u16());
            for (name, value) in answer.headers() {
                response = response.header(name.as_str(), value.as_bytes());
            }
            response
                .body(Body::from(answer.bytes().await.unwrap()))
                .unwrap()
        }
    };
    let app = axum::Router::new().fallback(handler);
    let serving = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, tokens, serving)
}

/// The anonymous token flow: a Bearer challenge answered with a token anyone gets,
/// fetched once (the tag list and the manifest share it) and kept for the next poll
/// while it lasts.
#[tokio::test]
async fn images_behind_an_anonymous_token_service() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let digest = registry.multi_arch("team/app", "2.0.0", "two").await;
    let (gate, tokens, serving) = token_gate(registry.addr).await;
    let repo = format!("{gate}/team/app");
    b.create("app", spec(vec![image(&repo, "", &[])])).await;
    b.reconcile("app").await;
    assert_eq!(b.ready("app").await.reason, "Discovered");
    assert_eq!(
        image_artifact(&b, "app").await.unwrap(),
        hecate_types::ImageArtifact {
            repo,
            tag: "2.0.0".into(),
            digest
        }
    );
    assert_eq!(tokens.load(Ordering::SeqCst), 1, "one token for the poll");
    b.reconcile("app").await;
    assert_eq!(b.ready("app").await.reason, "Discovered");
    assert_eq!(
        tokens.load(Ordering::SeqCst),
        1,
        "the token is kept while it lasts"
    );
    serving.abort();
}

/// The registry goes down: a condition (not a crash, not a backoff loop); it comes
/// back: the Beacon recovers on its next poll.
#[tokio::test]
async fn a_registry_that_goes_down_and_comes_back() {
    let b = Beacons::new().await;
    let mut registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    registry.image("team/app", "1.0.0", "one").await;
    b.create("app", spec(vec![image(&repo, "", &[])])).await;
    b.reconcile("app").await;
    assert_eq!(b.ready("app").await.reason, "Discovered");
    let latest = b.beacon("app").await.status.unwrap().latest_bundle;

    registry.stop().await;
    let outcome = b.reconcile("app").await;
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(3600)));
    let message = b.refused("app", "ResolveFailed").await;
    assert!(message.contains("unreachable"), "{}", message);
    assert_eq!(
        b.beacon("app").await.status.unwrap().latest_bundle,
        latest,
        "the last Bundle is still the latest"
    );

    registry.restart().await;
    b.reconcile("app").await;
    assert_eq!(b.ready("app").await.reason, "Discovered");
    assert_eq!(b.bundles("app").await.len(), 1);
}

// ---------------------------------------------------------------------------------
// Charts.

/// A Helm repository on loopback that wants `bot`/`PASSWORD`.
async fn helm_repository(index: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    let expected = format!("Basic {}", base64_encode(&format!("bot:{PASSWORD}")));
    let app = axum::Router::new().route(
        "/stable/index.yaml",
        axum::routing::get(move |headers: HeaderMap| {
            let expected = expected.clone();
            async move {
                match headers.get(header::AUTHORIZATION) {
                    Some(value) if value.as_bytes() == expected.as_bytes() => {
                        (StatusCode::OK, index).into_response()
                    }
                    _ => StatusCode::UNAUTHORIZED.into_response(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (format!("http://{addr}/stable"), serving)
}

pub(super) fn chart(repo: &str, name: &str, constraint: &str) -> WatchSource {
    WatchSource {
        chart: Some(ChartWatch {
            repo: repo.into(),
            name: name.into(),
            constraint: constraint.into(),
            credentials_ref: None,
        }),
        ..WatchSource::default()
    }
}

/// A Helm repository's index (behind basic auth) and an OCI chart repository.
#[tokio::test]
async fn charts_from_an_index_and_from_a_registry() {
    const INDEX: &str = "apiVersion: v1\nentries:\n  api:\n    - version: 1.2.0\n    - version: 1.10.0\n    - version: 2.0.0-rc.1\n  web:\n    - version: 0.1.0\n";
    let b = Beacons::new().await;
    let (repo, serving) = helm_repository(INDEX).await;
    secret(&b, "helm", &[("username", "bot"), ("password", PASSWORD)]).await;

    b.create(
        "api",
        spec(vec![with_secret(chart(&repo, "api", "^1"), "helm")]),
    )
    .await;
    b.reconcile("api").await;
    let bundles = b.bundles("api").await;
    assert_eq!(bundles.len(), 1);
    assert_eq!(
        bundles[0].spec.artifacts,
        [Artifact::chart(repo.clone(), "api", "1.10.0")]
    );

    b.create("refused", spec(vec![chart(&repo, "api", "")]))
        .await;
    b.reconcile("refused").await;
    let ready = b.ready("refused").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(ready.message.contains("credentials"), "{}", ready.message);

    b.create(
        "absent",
        spec(vec![with_secret(chart(&repo, "db", ""), "helm")]),
    )
    .await;
    b.reconcile("absent").await;
    let ready = b.ready("absent").await;
    assert_eq!(
        ready.reason, "ResolveFailed",
        "a chart the index lacks is not 'nothing matches'"
    );
    assert!(ready.message.contains("\"db\""), "{}", ready.message);
    serving.abort();

    // OCI: the repository's tags are the versions.
    let registry = Distribution::start(false).await;
    for version in ["0.3.0", "0.4.0", "0.5.0-rc.1"] {
        registry.image("charts/api", version, version).await;
    }
    let oci = format!("oci://{}", registry.repo("charts/api"));
    b.create("oci", spec(vec![chart(&oci, "", "")])).await;
    b.reconcile("oci").await;
    assert_eq!(
        b.bundles("oci").await[0].spec.artifacts,
        [Artifact::chart(oci.clone(), "", "0.4.0")]
    );
}

// ---------------------------------------------------------------------------------
// Providers.

pub(super) const PROVIDER: StandIn = StandIn {
    group: "fluxcd.controlplane.io",
    version: "v1",
    kind: "ResourceSetInputProvider",
    plural: "resourcesetinputproviders",
};

/// A Flux Operator provider (stand-in CRD): its first exported input, once Ready.
#[tokio::test]
async fn providers_export_their_first_input_once_ready() {
    let b = Beacons::new().await;
    hecate_testenv::flux::install(&b.env.admin, &[PROVIDER])
        .await
        .unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(
        b.env.admin.clone(),
        &b.env.namespace,
        &PROVIDER.api_resource(),
    );
    let object: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": PROVIDER.api_version(),
        "kind": PROVIDER.kind,
        "metadata": {"name": "prs"},
        "spec": {"type": "GitHubPullRequest", "url": "https://github.com/acme/app"},
    }))
    .unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
    let watch = WatchSource {
        provider: Some(ProviderWatch { name: "prs".into() }),
        ..WatchSource::default()
    };
    b.create("app", spec(vec![watch.clone()])).await;
    b.reconcile("app").await;
    assert_eq!(
        b.ready("app").await.reason,
        "NoMatchingArtifact",
        "not ready yet"
    );

    let status = serde_json::json!({"status": {
        "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                        "message": "ok", "lastTransitionTime": "2026-08-10T12:00:00Z"}],
        "exportedInputs": [
            {"id": "42", "sha": "0123456789abcdef0123456789abcdef01234567", "branch": "feature", "title": "Add things"},
            {"id": "41", "sha": "76543210fedcba9876543210fedcba9876543210"}
        ],
    }});
    api.patch_status("prs", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    b.reconcile("app").await;
    let bundles = b.bundles("app").await;
    assert_eq!(bundles.len(), 1);
    assert_eq!(
        bundles[0].spec.artifacts,
        [Artifact {
            commit: Some(CommitArtifact {
                repo: "https://github.com/acme/app".into(),
                sha: "0123456789abcdef0123456789abcdef01234567".into(),
                branch: "feature".into(),
                tag: String::new(),
                message: "Add things".into(),
                author: String::new(),
                ..CommitArtifact::default()
            }),
            ..Artifact::default()
        }]
    );

    let mut missing = watch;
    missing.provider = Some(ProviderWatch {
        name: "absent".into(),
    });
    b.create("missing", spec(vec![missing])).await;
    b.reconcile("missing").await;
    assert_eq!(b.ready("missing").await.reason, "ResolveFailed");
}
