//! The web UI's routes. Until the UI is built into the binary, every page is a short
//! placeholder that says so (200, so probes do not read it as an error).

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

use crate::state::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new().fallback(placeholder)
}

async fn placeholder() -> Response {
    (
        [(header::CACHE_CONTROL, "no-cache")],
        Html(
            "<!doctype html><title>Hecate</title><h1>Hecate API</h1>\
             <p>The API is running; the web UI is not in this build. \
             Build it with <code>cargo xtask ui</code>, or use the API at <code>/api/v1alpha1</code> \
             (its description is <a href=\"/api/openapi.json\">/api/openapi.json</a>).</p>",
        ),
    )
        .into_response()
}
