//! What a hostile or careless client can do (issue 21), one test per finding: labels
//! it chooses, streams it opens, time it takes, writes from other sites, reviews that
//! fail, a lower-case scheme, input it wants echoed, and what the document promises.

use std::time::{Duration, Instant};

use futures::StreamExt as _;
use hecate_api::Limits;
use hecate_testenv::Identity::{self, *};
use hecate_types::{Gate, GateStatus, Health, HealthReport, Passage};
use k8s_openapi::api::rbac::v1::RoleBinding;
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::harness::*;

/// The series of `hecate_api_requests` in `/metrics`.
async fn request_series(server: &Server) -> usize {
    let metrics = server.get("/metrics", None).await;
    assert_eq!(metrics.status, 200);
    metrics
        .body
        .lines()
        .filter(|line| line.starts_with("hecate_api_requests_total{"))
        .count()
}

/// Finding 1: a client choosing the method cannot grow `/metrics`. A thousand
/// requests with made-up methods are refused (405, JSON) and counted under one
/// `other` label.
#[tokio::test]
async fn made_up_methods_add_no_series() {
    let server = Server::start().await;
    let before = request_series(&server).await;
    for n in 0..1000 {
        let method = reqwest::Method::from_bytes(format!("X{n:040}").as_bytes()).unwrap();
        let answer = server.send(method, "/healthz", None, None).await;
        assert_eq!(answer.status, 405, "{}", answer.body);
        assert_eq!(answer.json()["status"], "method not allowed");
    }
    let after = request_series(&server).await;
    assert!(
        after <= before + 2,
        "{before} series before, {after} after a thousand made-up methods"
    );
    let metrics = server.get("/metrics", None).await.body;
    assert!(
        metrics.contains(r#"method="other""#) && !metrics.contains("X0000"),
        "{metrics}"
    );
}

/// The API server's open watches, as it counts them.
async fn apiserver_watches(server: &Server) -> f64 {
    let request = axum::http::Request::get("/metrics")
        .body(Vec::new())
        .unwrap();
    let text = server.env.admin.request_text(request).await.unwrap();
    text.lines()
        .filter(|line| {
            line.starts_with("apiserver_longrunning_requests{") && line.contains(r#"verb="WATCH""#)
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Opens an event stream as `who`: the status, and the stream when it opened.
async fn open_stream(
    server: &Server,
    who: Identity,
) -> (
    u16,
    Option<impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin + use<>>,
    String,
) {
    let response = server
        .http
        .get(format!(
            "{}/api/v1alpha1/namespaces/{}/watch",
            server.base,
            server.ns()
        ))
        .bearer_auth(server.token(who))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    if status == 200 {
        let mut stream = response.bytes_stream();
        let mut seen = String::new();
        while !seen.contains("event: open") {
            let chunk = tokio::time::timeout(Duration::from_secs(5), stream.next())
                .await
                .expect("open within 5s")
                .unwrap()
                .unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        (status, Some(stream), seen)
    } else {
        (status, None, response.text().await.unwrap())
    }
}

fn process_figures() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .unwrap_or("VmRSS: ?")
        .to_string();
    let files = std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count);
    format!("{rss}, {files} open files")
}

/// Finding 2: two hundred streams from one caller — the caller's share opens, the
/// rest get a JSON 429, the server's cap holds for everyone, and the streams cost the
/// API server no watch: they follow the server's one cache (its request log shows no
/// watch, and the API server counts none more). A change still reaches them.
#[tokio::test]
async fn event_streams_are_capped_and_follow_the_cache() {
    let limits = Limits {
        streams_per_caller: 16,
        streams: 24,
        ..Limits::default()
    };
    let (server, log) = Server::start_with(HecateApi, true, limits).await;
    server.pipeline().await;
    server.ready().await;
    let watches_before = apiserver_watches(&server).await;
    let figures_before = process_figures();
    log.clear();

    let mut open = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..200 {
        match open_stream(&server, Alice).await {
            (200, Some(stream), _) => open.push(stream),
            (status, _, body) => refused.push((status, body)),
        }
    }
    assert_eq!((open.len(), refused.len()), (16, 184));
    for (status, body) in &refused {
        assert_eq!(*status, 429, "{body}");
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["status"], "too many requests");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("\"alice\" already has 16 event streams open"),
            "{body}"
        );
    }
    // Bob has his own share, but the server's cap (24) holds for everyone.
    let mut bobs = Vec::new();
    for _ in 0..10 {
        let (status, stream, body) = open_stream(&server, Bob).await;
        match stream {
            Some(stream) => bobs.push(stream),
            None => {
                assert_eq!(status, 429);
                assert!(
                    body.contains("the server has 24 event streams open"),
                    "{body}"
                );
            }
        }
    }
    assert_eq!(bobs.len(), 8);
    assert_eq!(server.state.metrics().open_watch_streams(), 24);

    let watches = log
        .requests()
        .into_iter()
        .filter(|r| r.contains("watch=true") || r.contains("watch=1"))
        .collect::<Vec<_>>();
    assert_eq!(watches, Vec::<String>::new(), "no watch per stream");
    let watches_after = apiserver_watches(&server).await;
    eprintln!(
        "24 streams: API server watches {watches_before} → {watches_after}; test process {figures_before} → {}",
        process_figures()
    );
    // Other tests share the API server; per-stream watches would add 4 × 24 = 96.
    assert!(
        watches_after - watches_before < 24.0,
        "the API server's watches went from {watches_before} to {watches_after}"
    );

    // A change reaches every stream, from the one cache.
    let mut gate: Gate = server.env.api().get("staging").await.unwrap();
    gate.status = Some(GateStatus {
        health: Some(HealthReport {
            status: Health::Degraded,
            issues: vec![],
            details: None,
            observed_at: None,
            since: None,
        }),
        ..GateStatus::default()
    });
    server.env.write_status(&gate).await;
    for stream in open.iter_mut().chain(bobs.iter_mut()) {
        let mut seen = String::new();
        while !seen.contains("event: changed") {
            let chunk = tokio::time::timeout(Duration::from_secs(5), stream.next())
                .await
                .expect("the change within 5s")
                .unwrap()
                .unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains(r#""name":"staging""#), "{seen}");
    }

    // Closed streams free their places.
    drop(open);
    drop(bobs);
    for _ in 0..50 {
        if server.state.metrics().open_watch_streams() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(server.state.metrics().open_watch_streams(), 0);
    assert_eq!(open_stream(&server, Alice).await.0, 200);
}

/// Finding 2: an open stream whose caller loses the right to read is closed at the
/// next re-authorisation (`reconnect`; the reconnection is then refused).
#[tokio::test]
async fn a_stream_ends_when_its_caller_may_no_longer_read() {
    let limits = Limits {
        reauthorize_every: Duration::from_secs(1),
        // A stream is not an idle connection: it outlives the header timeout.
        header_read: Duration::from_secs(1),
        ..Limits::default()
    };
    let (server, _) = Server::start_with(HecateApi, true, limits).await;
    server.pipeline().await;
    server.ready().await;
    let (status, stream, _) = open_stream(&server, Alice).await;
    assert_eq!(status, 200);
    let mut stream = stream.unwrap();
    // Still allowed: the re-authorisations pass, the stream stays open.
    let quiet = tokio::time::timeout(Duration::from_millis(2500), stream.next()).await;
    assert!(quiet.is_err(), "the stream said something: {quiet:?}");

    server
        .env
        .api::<RoleBinding>()
        .delete("hecate-viewer", &Default::default())
        .await
        .unwrap();
    let revoked = Instant::now();
    let mut seen = String::new();
    // The read review is cached 5 s, the token's 10 s (but the token stays valid).
    let ended = tokio::time::timeout(Duration::from_secs(12), async {
        while let Some(chunk) = stream.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "still open 12 s after the revocation: {seen}"
    );
    assert!(seen.contains("event: reconnect"), "{seen}");
    eprintln!("stream closed {:?} after the revocation", revoked.elapsed());
    assert_eq!(open_stream(&server, Alice).await.0, 403);
}

/// Finding 3: a client sending its headers a line at a time, one that connects and
/// says nothing, one idle after a request, and one sending its body a byte at a time
/// are all cut off once their time is up.
#[tokio::test]
async fn slow_clients_are_cut_off() {
    let limits = Limits {
        header_read: Duration::from_secs(1),
        body_read: Duration::from_secs(1),
        ..Limits::default()
    };
    let (server, _) = Server::start_with(HecateApi, false, limits).await;
    let address = server.base.trim_start_matches("http://").to_string();

    /// Seconds until the server closes the connection, while `drip` sends a line
    /// every 200 ms (at most 10 s).
    async fn closed_after(address: &str, start: &[u8], drip: Option<&[u8]>) -> (f32, String) {
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        socket.write_all(start).await.unwrap();
        let began = Instant::now();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        while began.elapsed() < Duration::from_secs(10) {
            match tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buffer)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
                Err(_) => {
                    if let Some(drip) = drip
                        && socket.write_all(drip).await.is_err()
                    {
                        break;
                    }
                }
            }
        }
        (
            began.elapsed().as_secs_f32(),
            String::from_utf8_lossy(&answer).into_owned(),
        )
    }

    let (slow_headers, _) = closed_after(
        &address,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
        Some(b"X-Slow: 1\r\n"),
    )
    .await;
    let (silent, _) = closed_after(&address, b"", None).await;
    let (idle, first) =
        closed_after(&address, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", None).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let slow_post = format!(
        "POST /api/v1alpha1/namespaces/x/beacons/y/poll HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        server.token(Bob)
    );
    let (slow_body, answer) = closed_after(&address, slow_post.as_bytes(), Some(b" ")).await;
    eprintln!(
        "cut off after: slow headers {slow_headers}s, silent {silent}s, idle {idle}s, slow body {slow_body}s"
    );
    for (case, seconds) in [
        ("slow headers", slow_headers),
        ("silent", silent),
        ("idle", idle),
        ("slow body", slow_body),
    ] {
        assert!(seconds < 3.0, "{case}: still open after {seconds}s");
    }
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#""status":"request timeout""#), "{answer}");
}

/// Finding 4: a write from another site carrying the session cookie is refused —
/// as `text/plain` (what a page may send without asking) and as JSON — and nothing
/// is written; the same write from the server's own page works.
#[tokio::test]
async fn a_cross_site_cookie_write_is_refused_and_writes_nothing() {
    let server = Server::start().await;
    server.pipeline().await;
    let url = format!(
        "{}/api/v1alpha1/namespaces/{}/gates/staging/promote",
        server.base,
        server.ns()
    );
    let cookie = format!("hecate_session={}", server.token(Bob));
    let host = server.base.trim_start_matches("http://").to_string();
    let post = |content_type: &'static str, origin: String| {
        server
            .http
            .post(&url)
            .header("cookie", &cookie)
            .header("origin", origin)
            .header("content-type", content_type)
            .body(r#"{"bundle":"b1"}"#)
            .send()
    };
    let passages = || async {
        server
            .env
            .api::<Passage>()
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len()
    };

    let plain = post("text/plain", "https://evil.example".into())
        .await
        .unwrap();
    assert_eq!(plain.status(), 415);
    let json = post("application/json", "https://evil.example".into())
        .await
        .unwrap();
    assert_eq!(json.status(), 403);
    let body: serde_json::Value = serde_json::from_str(&json.text().await.unwrap()).unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("this server's own pages"),
        "{body}"
    );
    // A bearer token is not sent by a browser on its own: the type rule still holds.
    let bearer = server
        .http
        .post(&url)
        .bearer_auth(server.token(Bob))
        .header("content-type", "text/plain")
        .body(r#"{"bundle":"b1"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 415);
    assert_eq!(passages().await, 0, "nothing written");

    let same_site = post("application/json", format!("http://{host}"))
        .await
        .unwrap();
    assert_eq!(same_site.status(), 200, "{:?}", same_site.text().await);
    assert_eq!(passages().await, 1);
}

/// Finding 5: when the server cannot ask who is calling (here its identity may not
/// create TokenReviews), the caller gets a fixed sentence — not the server's identity,
/// not the RBAC message.
#[tokio::test]
async fn a_failing_review_tells_nothing_of_the_server() {
    let (server, _) = Server::start_with(CiBot, false, Limits::default()).await;
    let answer = server.get("/api/v1alpha1/namespaces", Some(Alice)).await;
    assert_eq!(answer.status, 500);
    assert_eq!(
        answer.json(),
        serde_json::json!({
            "error": hecate_api::auth::REVIEW_FAILED,
            "status": "internal server error",
        })
    );
    for leak in ["ci-bot", "tokenreviews", "forbidden", "Forbidden"] {
        assert!(!answer.body.contains(leak), "{leak}: {}", answer.body);
    }
}

/// Finding 6: the scheme of `Authorization` is case-insensitive.
#[tokio::test]
async fn a_lower_case_bearer_scheme_is_accepted() {
    let server = Server::start().await;
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let answer = server
            .http
            .get(format!("{}/api/v1alpha1/namespaces", server.base))
            .header("authorization", format!("{scheme} {}", server.token(Alice)))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{scheme}");
    }
}

/// Finding 8: bad input is quoted to a short prefix, however long it is.
#[tokio::test]
async fn bad_input_is_echoed_at_most_in_part() {
    let server = Server::start().await;
    server.pipeline().await;
    let long = "X".repeat(8 << 10);
    let ns = "/api/v1alpha1/namespaces/{ns}";
    let answers = [
        server.get(&format!("{ns}/gates/{long}"), Some(Alice)).await,
        server
            .get(
                &format!("/api/v1alpha1/namespaces/{long}/gates"),
                Some(Alice),
            )
            .await,
        server
            .post(
                &format!("{ns}/gates/staging/promote"),
                Some(Bob),
                Some(&format!(r#"{{"bundle":"{long}"}}"#)),
            )
            .await,
        server
            .post(
                &format!("{ns}/gates/staging/promote"),
                Some(Bob),
                Some(&format!(r#"{{"{long}":"b1"}}"#)),
            )
            .await,
        server
            .post(
                &format!("{ns}/gates/staging/promote"),
                Some(Bob),
                Some(&format!(r#"{{"bundle":5{long}}}"#)),
            )
            .await,
        server
            .get(&format!("{ns}/passages?{long}=1"), Some(Alice))
            .await,
    ];
    for answer in answers {
        assert_eq!(
            answer.status,
            400,
            "{}",
            &answer.body[..200.min(answer.body.len())]
        );
        assert!(
            answer.body.len() < 400,
            "{} bytes: {}",
            answer.body.len(),
            answer.body
        );
    }
}

/// Finding 7: the document declares what the handlers enforce — names as DNS names
/// (pattern and length, and the server agrees with the pattern), a promotion's
/// `bundle` required, JSON bodies for 413, a path that is not UTF-8, and `/readyz`'s
/// 503 — and those refusals answer the JSON error body.
#[tokio::test]
async fn the_document_declares_what_the_handlers_enforce() {
    let server = Server::start().await;
    let doc = server.get("/api/openapi.json", None).await.json();
    let explain = &doc["paths"]["/api/v1alpha1/namespaces/{ns}/gates/{name}/explain"]["get"];
    let parameter = |name: &str| {
        explain["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["schema"]
            .clone()
    };
    let (ns, name) = (parameter("ns"), parameter("name"));
    assert_eq!(ns["maxLength"], 63);
    assert_eq!(name["maxLength"], 253);
    let label = regex::Regex::new(ns["pattern"].as_str().unwrap()).unwrap();
    let subdomain = regex::Regex::new(name["pattern"].as_str().unwrap()).unwrap();
    for candidate in [
        "shop", "a", "a-b", "a.b", "1-2.3", "-a", "a-", "A", "a_b", "a..b", ".a", "a.", "é", "",
    ] {
        assert_eq!(
            label.is_match(candidate),
            hecate_types::names::is_dns_label(candidate),
            "{candidate:?}"
        );
        assert_eq!(
            subdomain.is_match(candidate),
            hecate_types::names::is_dns_subdomain(candidate),
            "{candidate:?}"
        );
    }

    let promote = &doc["paths"]["/api/v1alpha1/namespaces/{ns}/gates/{name}/promote"]["post"];
    assert_eq!(promote["requestBody"]["required"], true);
    let request = promote["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let schema = &doc["components"]["schemas"][request];
    assert_eq!(
        schema["required"],
        serde_json::json!(["bundle"]),
        "{schema}"
    );
    for status in ["413", "415", "400", "409"] {
        assert!(
            promote["responses"].get(status).is_some(),
            "promote {status}"
        );
    }
    assert!(
        doc["paths"]["/readyz"]["get"]["responses"]
            .get("503")
            .is_some()
    );
    assert!(
        doc["paths"]["/api/v1alpha1/namespaces/{ns}/watch"]["get"]["responses"]
            .get("429")
            .is_some()
    );

    // The refusals made below the handlers answer JSON too.
    let too_large = server
        .post(
            "/api/v1alpha1/namespaces/{ns}/gates/staging/promote",
            Some(Bob),
            Some(&format!(r#"{{"bundle":"{}"}}"#, "x".repeat(2 << 20))),
        )
        .await;
    assert_eq!(too_large.status, 413);
    assert_eq!(too_large.json()["status"], "payload too large");
    let chunked = server
        .http
        .post(format!(
            "{}/api/v1alpha1/namespaces/{}/gates/staging/promote",
            server.base,
            server.ns()
        ))
        .bearer_auth(server.token(Bob))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(
            (0..3).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1 << 20])),
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(chunked.status(), 413);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&chunked.text().await.unwrap()).unwrap()["status"],
        "payload too large"
    );
    let not_utf8 = server
        .get("/api/v1alpha1/namespaces/%FF%FE/gates", Some(Alice))
        .await;
    assert_eq!(not_utf8.status, 400);
    assert_eq!(not_utf8.json()["status"], "bad request");
    let wrong_method = server
        .send(reqwest::Method::DELETE, "/healthz", None, None)
        .await;
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.json()["status"], "method not allowed");
}
