//! The web UI: plain HTML, CSS and ES modules from `crates/hecate-api/ui/`, embedded in
//! the binary at compile time, so building and running it needs nothing but Cargo.
//!
//! - `/` and each page route (`/gates/`, `/bundles/`, …) answer the same shell
//!   (`ui/index.html`); the modules read the path and `?name=`/`?namespace=` and draw
//!   the page. `/gates` without the slash redirects, keeping the query.
//! - `/ui/<file>` answers the assets, with an ETag so a browser revalidates cheaply.
//! - Any other path that is not `/api/…` answers the 404 page (status 404), never the
//!   shell: a typo should not look like an empty page.
//!
//! Every answer carries a strict Content-Security-Policy (same-origin only, no inline
//! script or style, Trusted Types so no string can become HTML) and the usual headers
//! against framing and sniffing. The UI holds no secrets of the server's: it calls the
//! `/api` routes with the bearer token the person pasted, like any other client.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::{Path, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest as _, Sha256};

use crate::state::AppState;

/// The page routes; each answers the shell.
pub(crate) const PAGES: [&str; 9] = [
    "/",
    "/gates/",
    "/bundles/",
    "/passages/",
    "/beacons/",
    "/approvals/",
    "/audit/",
    "/delivery/",
    "/settings/",
];

/// Same origin for everything; nothing inline; no plugins, no `<base>`, no framing.
/// `require-trusted-types-for 'script'` with no policy makes the browser refuse any
/// string-to-HTML sink (`innerHTML` and friends): the UI builds its DOM with
/// `createElement`/`textContent` only, and this turns a slip into an error instead
/// of an injection.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; \
     object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; \
     require-trusted-types-for 'script'; trusted-types 'none'";

/// One embedded file.
struct Asset {
    /// Its path under `/ui/`.
    path: &'static str,
    body: &'static [u8],
}

/// Embeds files of `ui/` by their path there. A test checks that every file in `ui/`
/// (but the two pages) is listed.
macro_rules! assets {
    ($($path:literal),* $(,)?) => {
        &[$(Asset {
            path: $path,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/ui/", $path)),
        }),*]
    };
}

const ASSETS: &[Asset] = assets![
    "hecate.css",
    "favicon.svg",
    "js/main.js",
    "js/api.js",
    "js/sse.js",
    "js/live.js",
    "js/router.js",
    "js/session.js",
    "js/dom.js",
    "js/format.js",
    "js/notice.js",
    "js/actions.js",
    "js/components.js",
    "js/pipeline.js",
    "js/shell.js",
    "js/rights.js",
    "js/graph.js",
    "js/timeline.js",
    "js/diff.js",
    "js/preview.js",
    "js/menu.js",
    "js/rollout.js",
    "js/pages/signin.js",
    "js/pages/overview.js",
    "js/pages/gates.js",
    "js/pages/bundles.js",
    "js/pages/passages.js",
    "js/pages/beacons.js",
    "js/pages/approvals.js",
    "js/pages/audit.js",
    "js/pages/delivery.js",
    "js/pages/settings.js",
];

const SHELL: &str = include_str!("../ui/index.html");
const NOT_FOUND: &str = include_str!("../ui/404.html");

pub(crate) fn router() -> Router<AppState> {
    let mut router = Router::new();
    for page in PAGES {
        router = router.route(page, get(shell));
        if page != "/" {
            router = router.route(page.trim_end_matches('/'), get(add_slash));
        }
    }
    router
        .route("/ui/{*path}", get(asset))
        .route("/auth/config", get(sign_in))
        .fallback(not_found)
}

/// `GET /auth/config`: how the web UI signs people in — through the OIDC provider when
/// the server has one, else with a bearer token. Always answered, so a page's sign-in
/// never meets a 404 it has to ignore.
async fn sign_in(axum::extract::State(state): axum::extract::State<AppState>) -> Response {
    crate::oidc::config(state.oidc_sign_in)
}

/// The file's media type, by its extension.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

/// A strong validator per asset (and one for the shell), computed once: the files
/// are fixed for the life of the binary, but their names carry no hash (there is no
/// bundler to rename them), so browsers revalidate (`no-cache`) and get a 304.
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|asset| asset.body)
            .chain([SHELL.as_bytes()])
            .map(|body| format!("\"{}\"", &hex_digest(body)[..20]))
            .collect()
    })
}

fn hex_digest(body: &[u8]) -> String {
    Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The headers every UI answer carries.
fn secure(headers: &mut HeaderMap) {
    let set = |headers: &mut HeaderMap, name, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        CONTENT_SECURITY_POLICY,
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

/// `body` with its type, validator and the security headers; 304 when the browser
/// already holds it.
fn answer(
    request_headers: &HeaderMap,
    body: &'static [u8],
    kind: &'static str,
    etag: &str,
) -> Response {
    let fresh = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, body).into_response()
    };
    let headers = response.headers_mut();
    secure(headers);
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(etag) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, etag);
    }
    response
}

async fn shell(headers: HeaderMap) -> Response {
    let etag = etags().last().map_or("", String::as_str);
    answer(&headers, SHELL.as_bytes(), "text/html; charset=utf-8", etag)
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().position(|a| a.path == path) {
        Some(index) => {
            let asset = &ASSETS[index];
            let etag = etags().get(index).map_or("", String::as_str);
            answer(&headers, asset.body, content_type(asset.path), etag)
        }
        None => not_found().await,
    }
}

/// `/gates` → `/gates/`, keeping the query (`?name=…&namespace=…`).
async fn add_slash(request: Request) -> Response {
    let uri = request.uri();
    let target = match uri.query() {
        Some(query) => format!("{}/?{query}", uri.path()),
        None => format!("{}/", uri.path()),
    };
    let mut response = StatusCode::PERMANENT_REDIRECT.into_response();
    let headers = response.headers_mut();
    secure(headers);
    if let Ok(location) = HeaderValue::from_str(&target) {
        headers.insert(header::LOCATION, location);
    }
    response
}

async fn not_found() -> Response {
    let mut response = (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
    let headers = response.headers_mut();
    secure(headers);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `ui/` is embedded (a new module that is not listed would be
    /// a 404 in the browser, found only by clicking).
    #[test]
    fn every_ui_file_is_embedded() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("ui/ is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    walk(&path, root, found);
                } else {
                    let relative = path.strip_prefix(root).expect("under ui/");
                    found.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
        let mut found = Vec::new();
        walk(&root, &root, &mut found);
        found.retain(|f| f != "index.html" && f != "404.html");
        found.sort();
        let mut listed: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        listed.sort();
        assert_eq!(found, listed);
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("js/main.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("hecate.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("favicon.svg"), "image/svg+xml");
        assert_eq!(content_type("x"), "application/octet-stream");
    }

    /// The shell loads only same-origin files, and no script or style is inline.
    #[test]
    fn pages_have_nothing_inline() {
        for page in [SHELL, NOT_FOUND] {
            assert!(!page.contains("<script>"), "inline script");
            assert!(!page.contains("style="), "inline style");
            assert!(!page.contains("<style"), "inline style");
            assert!(!page.contains("http://") && !page.contains("https://"));
        }
        for asset in ASSETS {
            // The SVG namespace is a name, not an address anything fetches.
            let text =
                String::from_utf8_lossy(asset.body).replace("http://www.w3.org/2000/svg", "");
            assert!(
                !text.contains("innerHTML") && !text.contains("insertAdjacentHTML"),
                "{} builds HTML from strings",
                asset.path
            );
            assert!(
                !text.contains("https://") && !text.contains("http://"),
                "{} names another origin",
                asset.path
            );
        }
    }
}
