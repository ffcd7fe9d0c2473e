//! What image and chart watches cost on the wire, counted where the requests arrive:
//! the registry's own access log (CNCF Distribution, [`Distribution::requests`]), a
//! paging front over it, and a Helm repository over HTTPS with a CA of its own
//! ([`Https`]). An unchanged source costs one request per poll; a change is still seen
//! on the next poll; the controller trusts a private CA the way the platform does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, Method, Uri, header};
use hecate_controller::beacon::resolver::USER_AGENT;
use hecate_controller::beacon::{BeaconReconciler, Resolver};
use hecate_controller::events::Events;
use hecate_sources::git::AppTokens;
use hecate_steps::clock::SystemClock;
use hecate_testenv::https::{Https, Reply};
use hecate_testenv::registry::{Distribution, PASSWORD};
use hecate_types::TagSelection;
use pretty_assertions::assert_eq;

use super::sources::{base64_encode, chart, image, secret, with_secret};
use super::*;
use crate::process::Controller;

/// The registry's requests from the controller since it had served `before` of them.
fn asked_since(registry: &Distribution, before: usize) -> Vec<String> {
    registry.requests(USER_AGENT)[before..].to_vec()
}

/// §1.3 `image`, SemVer: the first poll lists the tags and looks up the chosen tag's
/// digest; an unchanged repository then costs the tag list alone; a new tag is seen on
/// the very next poll (and its digest looked up once); a second Beacon on the same
/// repository finds the digest known. With credentials, the registry's challenge is
/// answered once, not on every poll.
#[tokio::test]
async fn an_unchanged_repository_costs_one_request_per_poll() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    for version in ["1.0.0", "1.1.0", "2.0.0-rc.1"] {
        registry.image("team/app", version, version).await;
    }
    b.create("app", spec(vec![image(&repo, "", &[])])).await;

    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        [
            "GET /v2/team/app/tags/list?n=1000 200",
            "HEAD /v2/team/app/manifests/1.1.0 200"
        ]
    );
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        ["GET /v2/team/app/tags/list?n=1000 200"],
        "an unchanged repository: the tag list, nothing else"
    );
    assert_eq!(b.bundles("app").await.len(), 1);

    let (digest, _) = registry.image("team/app", "1.2.0", "1.2.0").await;
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        [
            "GET /v2/team/app/tags/list?n=1000 200",
            "HEAD /v2/team/app/manifests/1.2.0 200"
        ]
    );
    assert_eq!(
        image_of(&b, "app").await,
        Some(("1.2.0".to_string(), digest.clone()))
    );
    assert_eq!(
        b.bundles("app").await.len(),
        2,
        "the new tag is a new Bundle"
    );

    // Another Beacon on the repository: the digest of 1.2.0 is known.
    b.create("twin", spec(vec![image(&repo, "^1", &[])])).await;
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("twin").await;
    assert_eq!(
        asked_since(&registry, before),
        ["GET /v2/team/app/tags/list?n=1000 200"]
    );
    assert_eq!(
        image_of(&b, "twin").await,
        Some(("1.2.0".to_string(), digest))
    );

    // Behind basic authentication: the challenge is answered on the first poll only.
    let guarded = Distribution::start(true).await;
    guarded.image("team/app", "1.0.0", "one").await;
    secret(
        &b,
        "registry",
        &[("username", "bot"), ("password", PASSWORD)],
    )
    .await;
    let repo = guarded.repo("team/app");
    b.create(
        "guarded",
        spec(vec![with_secret(image(&repo, "", &[]), "registry")]),
    )
    .await;
    b.reconcile("guarded").await;
    assert_eq!(
        asked_since(&guarded, 0),
        [
            "GET /v2/team/app/tags/list?n=1000 401",
            "GET /v2/team/app/tags/list?n=1000 200",
            "HEAD /v2/team/app/manifests/1.0.0 200"
        ]
    );
    let before = guarded.requests(USER_AGENT).len();
    b.reconcile("guarded").await;
    assert_eq!(
        asked_since(&guarded, before),
        ["GET /v2/team/app/tags/list?n=1000 200"]
    );
    assert_eq!(b.ready("guarded").await.reason, "Discovered");
}

/// A tag's digest is remembered for an hour: the same tag pushed again is not noticed
/// by routine polls within it (the price of an unchanged repository costing one
/// request), but a poll someone asks for (`hecate poll`: a new `requestedAt`) looks the
/// digest up again, and the new digest is a new Bundle.
#[tokio::test]
async fn a_requested_poll_looks_a_remembered_digest_up_again() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    let (first, _) = registry.image("team/app", "1.0.0", "one").await;
    b.create("app", spec(vec![image(&repo, "", &[])])).await;
    b.reconcile("app").await;
    let (again, _) = registry.image("team/app", "1.0.0", "two").await;
    assert_ne!(first, again);

    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        ["GET /v2/team/app/tags/list?n=1000 200"]
    );
    assert_eq!(
        image_of(&b, "app").await,
        Some(("1.0.0".to_string(), first))
    );

    b.poke("app", "look-now").await;
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        [
            "GET /v2/team/app/tags/list?n=1000 200",
            "HEAD /v2/team/app/manifests/1.0.0 200"
        ]
    );
    assert_eq!(
        image_of(&b, "app").await,
        Some(("1.0.0".to_string(), again.clone()))
    );
    assert_eq!(b.bundles("app").await.len(), 2);

    // The request is answered: the next poll is routine again.
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("app").await;
    assert_eq!(
        asked_since(&registry, before),
        ["GET /v2/team/app/tags/list?n=1000 200"]
    );
    assert_eq!(
        b.beacon("app")
            .await
            .status
            .unwrap()
            .last_handled_reconcile_at,
        "look-now"
    );
}

/// `select: Digest` follows one tag that moves: each poll asks for that tag's digest
/// and nothing else — one request — and a move is a new Bundle on the next poll. A tag
/// that is not there is "nothing matches", as it was when the list was read.
#[tokio::test]
async fn a_followed_tag_costs_one_request_per_poll() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let repo = registry.repo("team/app");
    let (first, _) = registry.image("team/app", "stable", "one").await;
    registry.image("team/app", "9.9.9", "other").await;
    let follow = |tag: &str| {
        let mut watch = image(&repo, tag, &[]);
        if let Some(image) = &mut watch.image {
            image.select = Some(TagSelection::Digest);
        }
        watch
    };
    b.create("stable", spec(vec![follow("stable")])).await;

    for _ in 0..2 {
        let before = registry.requests(USER_AGENT).len();
        b.reconcile("stable").await;
        assert_eq!(
            asked_since(&registry, before),
            ["HEAD /v2/team/app/manifests/stable 200"]
        );
    }
    assert_eq!(
        image_of(&b, "stable").await,
        Some(("stable".to_string(), first))
    );
    assert_eq!(b.bundles("stable").await.len(), 1);

    let (moved, _) = registry.image("team/app", "stable", "two").await;
    b.reconcile("stable").await;
    assert_eq!(
        image_of(&b, "stable").await,
        Some(("stable".to_string(), moved))
    );
    assert_eq!(
        b.bundles("stable").await.len(),
        2,
        "the move is a new Bundle"
    );

    b.create("nightly", spec(vec![follow("nightly")])).await;
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("nightly").await;
    assert_eq!(
        asked_since(&registry, before),
        ["HEAD /v2/team/app/manifests/nightly 404"]
    );
    let message = b.refused("nightly", "NoMatchingArtifact").await;
    assert!(message.contains("\"nightly\""), "{}", message);

    // A tag is checked before it goes into a URL.
    b.create("bad", spec(vec![follow("../../stable")])).await;
    let before = registry.requests(USER_AGENT).len();
    b.reconcile("bad").await;
    assert_eq!(asked_since(&registry, before), Vec::<String>::new());
    assert_eq!(b.ready("bad").await.reason, "ResolveFailed");
}

/// A front that lists a real registry's tags a page at a time, as registries that cap
/// their pages do (at most `page` tags, `?n=&last=`, a `Link` to the next page, tags in
/// lexical order as Distribution 3 gives them), and forwards everything else. What it
/// was asked, as `METHOD path?query`.
async fn paging_front(
    registry: SocketAddr,
    page: usize,
) -> (
    SocketAddr,
    Arc<Mutex<Vec<String>>>,
    tokio::task::JoinHandle<()>,
) {
    use axum::body::{Body, Bytes};
    use axum::response::Response;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let http = reqwest::Client::new();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let (log, http) = (log.clone(), http.clone());
        async move {
            log.lock().unwrap().push(format!("{method} {uri}"));
            let path = uri.path().to_string();
            if method == Method::GET && path.ends_with("/tags/list") {
                let list = http
                    .get(format!("http://{registry}{path}"))
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
                let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
                let mut tags: Vec<String> =
                    serde_json::from_value(list["tags"].clone()).unwrap_or_default();
                tags.sort();
                let query: Vec<(String, String)> =
                    serde_urlencoded_pairs(uri.query().unwrap_or_default());
                let value =
                    |key: &str| query.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
                let n = value("n")
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(page)
                    .clamp(1, page);
                let start = value("last").map_or(0, |last| tags.partition_point(|t| *t <= last));
                let end = (start + n).min(tags.len());
                let mut response =
                    Response::builder().header(header::CONTENT_TYPE, "application/json");
                if end < tags.len() {
                    response = response.header(
                        header::LINK,
                        format!("<{path}?n={n}&last={}>; rel=\"next\"", tags[end - 1]),
                    );
                }
                let body = serde_json::json!({"name": list["name"], "tags": &tags[start..end]});
                return response.body(Body::from(body.to_string())).unwrap();
            }
            let mut forwarded = http
                .request(method, format!("http://{registry}{uri}"))
                .body(body);
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
    (addr, asked, serving)
}

/// `a=1&b=x` into its pairs (the front's queries carry no escapes).
fn serde_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// 500 tags from a registry that pages at 100: every page is read (five requests per
/// poll, the list having no validator), and the highest version is found wherever its
/// page is.
#[tokio::test]
async fn tag_lists_are_read_page_by_page() {
    let b = Beacons::new().await;
    let registry = Distribution::start(false).await;
    let tags: Vec<String> = (0..500)
        .map(|i| format!("1.{}.{}", i / 50, i % 50))
        .collect();
    let digest = registry.tag_all("team/app", &tags).await;
    let (front, asked, serving) = paging_front(registry.addr, 100).await;
    let repo = format!("{front}/team/app");
    b.create("app", spec(vec![image(&repo, "", &[])])).await;

    b.reconcile("app").await;
    let first: Vec<String> = asked.lock().unwrap().drain(..).collect();
    assert_eq!(
        first,
        [
            "GET /v2/team/app/tags/list?n=1000",
            "GET /v2/team/app/tags/list?n=100&last=1.1.9",
            "GET /v2/team/app/tags/list?n=100&last=1.3.9",
            "GET /v2/team/app/tags/list?n=100&last=1.5.9",
            "GET /v2/team/app/tags/list?n=100&last=1.7.9",
            "HEAD /v2/team/app/manifests/1.9.49",
        ]
    );
    assert_eq!(
        image_of(&b, "app").await,
        Some(("1.9.49".to_string(), digest))
    );
    b.reconcile("app").await;
    assert_eq!(
        asked.lock().unwrap().len(),
        5,
        "an unchanged list: its five pages"
    );
    serving.abort();
}

/// The image artifact Beacon `name` discovered: (tag, digest).
async fn image_of(b: &Beacons, name: &str) -> Option<(String, String)> {
    b.beacon(name)
        .await
        .status
        .unwrap_or_default()
        .discovered
        .into_iter()
        .next()
        .and_then(|a| a.image)
        .map(|image| (image.tag, image.digest))
}

// ---------------------------------------------------------------------------------
// A Helm repository over HTTPS.

const INDEX_V1: &str = "apiVersion: v1\nentries:\n  api:\n    - version: 1.1.0\n    - version: 1.2.0\n    - version: 1.2.5\n    - version: 1.3.0\n    - version: 2.0.0-rc.1\n  web:\n    - version: 0.1.0\n";
const INDEX_V2: &str = "apiVersion: v1\nentries:\n  api:\n    - version: 1.1.0\n    - version: 1.2.0\n    - version: 1.2.5\n    - version: 1.2.7\n    - version: 1.3.0\n";

/// A Helm repository at `/stable` behind basic authentication (`bot`/[`PASSWORD`]), over
/// HTTPS with a CA of its own, serving `index` with its ETag (`(etag, body)`, which the
/// test may change) and answering `If-None-Match` with `304`.
async fn helm_over_https(index: Arc<Mutex<(String, String)>>) -> Https {
    let expected = format!("Basic {}", base64_encode(&format!("bot:{PASSWORD}")));
    Https::start(move |request| {
        if request.path != "/stable/index.yaml" {
            return Reply::status(404);
        }
        if request.header("authorization") != Some(expected.as_str()) {
            return Reply::status(401).header("www-authenticate", "Basic realm=\"charts\"");
        }
        let (etag, body) = index.lock().unwrap().clone();
        if request.header("if-none-match") == Some(etag.as_str()) {
            return Reply::status(304).header("etag", &etag);
        }
        Reply::ok(body)
            .header("etag", &etag)
            .header("last-modified", "Tue, 01 Dec 2026 05:00:00 GMT")
    })
    .await
}

/// A Beacon reconciler whose HTTP client also trusts the PEM CA `ca`.
pub(super) fn trusting(env: &TestEnv, ca: &str) -> BeaconReconciler {
    let http = hecate_sources::tls::client_builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .user_agent(USER_AGENT)
        .build()
        .unwrap();
    BeaconReconciler {
        client: env.admin.clone(),
        sources: Arc::new(Resolver {
            client: env.admin.clone(),
            git: Git::new(Duration::from_secs(30)).within(hecate_sources::git::Limits::local()),
            app_tokens: AppTokens::default(),
            http,
            registries: Default::default(),
            indexes: Default::default(),
        }),
        clock: Arc::new(SystemClock),
        events: Events::new(env.admin.clone(), "beacon-controller", None),
        metrics: Default::default(),
    }
}

/// §1.3 `chart` over HTTPS, the repository's certificate signed by a CA of its own: not
/// trusted by default (a readable `ResolveFailed`, nothing asked); trusted, the version
/// the range picks is one Bundle, with basic authentication (§1.5); an unchanged index
/// is asked for conditionally and answers `304` with nothing to read; a new version is
/// seen on the next poll; a wrong password is refused in words.
#[tokio::test]
async fn a_helm_repository_over_https_with_its_own_ca() {
    let b = Beacons::new().await;
    let index = Arc::new(Mutex::new(("\"v1\"".to_string(), INDEX_V1.to_string())));
    let server = helm_over_https(index.clone()).await;
    let repo = server.url("/stable");
    secret(&b, "helm", &[("username", "bot"), ("password", PASSWORD)]).await;
    secret(&b, "wrong", &[("username", "bot"), ("password", "nope")]).await;
    let watch = |secret: &str| with_secret(chart(&repo, "api", "~1.2"), secret);
    b.create("api", spec(vec![watch("helm")])).await;

    // The controller as it comes: the web PKI and the platform's CAs, not this one.
    b.reconcile("api").await;
    let message = b.refused("api", "ResolveFailed").await;
    assert!(
        message.contains("not signed by a CA this controller trusts")
            && message.contains("SSL_CERT_FILE"),
        "{}",
        message
    );
    assert!(server.served().is_empty(), "nothing was asked");
    assert!(b.bundles("api").await.is_empty());

    // Trusting the CA.
    let trusted = trusting(&b.env, server.ca_pem());
    let reconcile = |name: &'static str| {
        let (trusted, ns) = (&trusted, b.env.namespace.clone());
        async move { trusted.reconcile_named(&ns, name).await.unwrap() }
    };
    reconcile("api").await;
    assert_eq!(b.ready("api").await.reason, "Discovered");
    let bundles = b.bundles("api").await;
    assert_eq!(bundles.len(), 1);
    assert_eq!(
        bundles[0].spec.artifacts,
        [Artifact::chart(repo.clone(), "api", "1.2.5")]
    );
    reconcile("api").await;
    let served = server.served();
    assert_eq!(
        served.iter().map(|(_, status)| *status).collect::<Vec<_>>(),
        [200, 304],
        "an unchanged index is not sent again"
    );
    let conditional = &served[1].0;
    assert_eq!(conditional.header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        conditional.header("if-modified-since"),
        Some("Tue, 01 Dec 2026 05:00:00 GMT")
    );
    assert_eq!(b.bundles("api").await.len(), 1);
    assert_eq!(b.ready("api").await.reason, "Discovered");

    *index.lock().unwrap() = ("\"v2\"".to_string(), INDEX_V2.to_string());
    reconcile("api").await;
    assert_eq!(server.served().last().map(|(_, status)| *status), Some(200));
    let latest = b.beacon("api").await.status.unwrap().latest_bundle;
    let newest = b.env.api::<Bundle>().get(&latest).await.unwrap();
    assert_eq!(
        newest.spec.artifacts,
        [Artifact::chart(repo.clone(), "api", "1.2.7")]
    );

    b.create("refused", spec(vec![watch("wrong")])).await;
    reconcile("refused").await;
    let ready = b.ready("refused").await;
    assert_eq!(ready.reason, "ResolveFailed");
    assert!(
        ready.message.contains("refused access (401 Unauthorized)")
            && ready.message.contains("check the credentials Secret"),
        "{}",
        ready.message
    );
    assert!(!ready.message.contains("nope"), "{}", ready.message);
}

/// The controller as users run it trusts a private CA the way the platform does: the
/// file `SSL_CERT_FILE` names (or the directories in `SSL_CERT_DIR`). Given the Helm
/// repository's CA that way, the Beacon resolves over HTTPS and emits its Bundle.
#[tokio::test]
async fn the_controller_trusts_the_ca_in_ssl_cert_file() {
    let b = Beacons::new().await;
    let ns = b.env.namespace.clone();
    join_shard(&b.env, &ns, &ns).await;
    let index = Arc::new(Mutex::new(("\"v1\"".to_string(), INDEX_V1.to_string())));
    let server = helm_over_https(index).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, server.ca_pem()).unwrap();
    let _controller =
        Controller::start_with_env(&b.env, &ns, &[], &[("SSL_CERT_FILE", ca.to_str().unwrap())])
            .await;
    secret(&b, "helm", &[("username", "bot"), ("password", PASSWORD)]).await;
    let repo = server.url("/stable");
    b.create(
        "api",
        spec(vec![with_secret(chart(&repo, "api", "^1"), "helm")]),
    )
    .await;

    let status = eventually(Duration::from_secs(30), "the Bundle", || async {
        b.beacon("api")
            .await
            .status
            .filter(|s| !s.latest_bundle.is_empty())
    })
    .await;
    let bundle = b
        .env
        .api::<Bundle>()
        .get(&status.latest_bundle)
        .await
        .unwrap();
    assert_eq!(
        bundle.spec.artifacts,
        [Artifact::chart(repo, "api", "1.3.0")]
    );
    assert_eq!(b.ready("api").await.reason, "Discovered");
}
