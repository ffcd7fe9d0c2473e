//! The UI's routes, over HTTP: the shell for every page route, the assets with their
//! types and validators, security headers on everything, the 404 page for unknown
//! paths — and `/api/…` still answering JSON. No browser and no cluster needed: the
//! UI's routes never reach Kubernetes.

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use reqwest::header::HeaderMap;

/// A server whose Kubernetes client points nowhere: enough for routes that never
/// use it.
async fn server() -> String {
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let app = hecate_api::router(hecate_api::AppState::new(client, vec![]));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

/// The headers every UI answer carries.
fn assert_secure(headers: &HeaderMap, what: &str) {
    let csp = header(headers, "content-security-policy");
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(
            csp.contains(directive),
            "{what}: {directive} missing from {csp}"
        );
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{what}: {csp}"
    );
    assert_eq!(
        header(headers, "x-content-type-options"),
        "nosniff",
        "{what}"
    );
    assert_eq!(header(headers, "referrer-policy"), "no-referrer", "{what}");
    assert_eq!(header(headers, "x-frame-options"), "DENY", "{what}");
}

#[tokio::test]
async fn every_page_route_answers_the_shell() {
    let base = server().await;
    for path in [
        "/",
        "/gates/",
        "/gates/?name=production&namespace=shop",
        "/bundles/",
        "/bundles/?name=shop-abc&namespace=shop",
        "/passages/",
        "/passages/?name=production-3&namespace=shop",
        "/beacons/",
        "/beacons/?name=shop&namespace=shop",
        "/approvals/?namespace=shop",
        "/audit/?namespace=shop&kind=refused",
    ] {
        let answer = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        let headers = answer.headers().clone();
        assert_eq!(
            header(&headers, "content-type"),
            "text/html; charset=utf-8",
            "{path}"
        );
        assert_eq!(header(&headers, "cache-control"), "no-cache", "{path}");
        assert!(headers.contains_key("etag"), "{path}");
        assert_secure(&headers, path);
        let body = answer.text().await.unwrap();
        assert!(
            body.contains(r#"<script type="module" src="/ui/js/main.js"></script>"#),
            "{path}: {body}"
        );
        assert!(body.contains(r#"<main id="main""#), "{path}");
    }
}

#[tokio::test]
async fn page_routes_without_the_slash_redirect_keeping_the_query() {
    let base = server().await;
    let answer = http()
        .get(format!("{base}/gates?name=production&namespace=shop"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 308);
    assert_eq!(
        header(answer.headers(), "location"),
        "/gates/?name=production&namespace=shop"
    );
    let answer = http().get(format!("{base}/audit")).send().await.unwrap();
    assert_eq!(
        (
            answer.status().as_u16(),
            header(answer.headers(), "location")
        ),
        (308, "/audit/")
    );
}

/// Every module the shell loads, followed through its imports, is served as
/// JavaScript: a file missing from the embedded table would break the page.
#[tokio::test]
async fn assets_are_served_with_their_types_and_validators() {
    let base = server().await;
    let mut seen = BTreeSet::new();
    let mut queue = vec!["/ui/js/main.js".to_string()];
    while let Some(path) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let answer = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        let headers = answer.headers().clone();
        assert_eq!(
            header(&headers, "content-type"),
            "text/javascript; charset=utf-8",
            "{path}"
        );
        assert_secure(&headers, &path);
        let body = answer.text().await.unwrap();
        let dir = &path[..path.rfind('/').unwrap()];
        for line in body.lines().filter(|l| l.starts_with("import ")) {
            let spec = line.rsplit('"').nth(1).unwrap();
            let mut parts: Vec<&str> = dir.split('/').collect();
            for part in spec.split('/') {
                match part {
                    "." => {}
                    ".." => {
                        parts.pop();
                    }
                    p => parts.push(p),
                }
            }
            queue.push(parts.join("/"));
        }
    }
    assert!(
        seen.len() >= 20,
        "the shell loads every page module: {seen:?}"
    );

    for (path, kind) in [
        ("/ui/hecate.css", "text/css; charset=utf-8"),
        ("/ui/favicon.svg", "image/svg+xml"),
    ] {
        let answer = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        assert_eq!(header(answer.headers(), "content-type"), kind, "{path}");
        assert_eq!(
            header(answer.headers(), "cache-control"),
            "no-cache",
            "{path}"
        );
        // The validator lets a browser revalidate without downloading again.
        let etag = header(answer.headers(), "etag").to_string();
        let again = http()
            .get(format!("{base}{path}"))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{path}");
        assert_eq!(header(again.headers(), "etag"), etag);
        assert!(again.bytes().await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn unknown_paths_answer_the_not_found_page_and_api_paths_json() {
    let base = server().await;
    for path in [
        "/nope",
        "/gates/extra",
        "/ui/nope.js",
        "/ui/",
        "/index.html",
    ] {
        let answer = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(answer.status(), 404, "{path}");
        let headers = answer.headers().clone();
        assert_eq!(
            header(&headers, "content-type"),
            "text/html; charset=utf-8",
            "{path}"
        );
        assert_secure(&headers, path);
        let body = answer.text().await.unwrap();
        assert!(body.contains("<h1>Not found</h1>"), "{path}: {body}");
        assert!(
            !body.contains("main.js"),
            "{path}: the 404 page is not the app"
        );
    }
    for path in ["/api/nope", "/api/v1alpha1/nope", "/api"] {
        let answer = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(answer.status(), 404, "{path}");
        assert!(
            header(answer.headers(), "content-type").starts_with("application/json"),
            "{path}"
        );
        let body: serde_json::Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
        assert_eq!(body["error"], "no such API route", "{path}");
    }
    // /healthz (the footer's version) needs no sign-in.
    let health = http()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let health: serde_json::Value = serde_json::from_str(&health).unwrap();
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    // The sign-in page asks how to sign in: a server without a provider answers too
    // (never a 404 in the browser's console).
    let config = http()
        .get(format!("{base}/auth/config"))
        .send()
        .await
        .unwrap();
    assert_eq!(config.status(), 200);
    let config: serde_json::Value = serde_json::from_str(&config.text().await.unwrap()).unwrap();
    assert_eq!(config, serde_json::json!({"oidc": false}));
}
