//! What tests of git users share: real bare repositories seeded with commits, git run
//! as the tests' own user, and a real smart-HTTP git server (`git http-backend` behind
//! basic authentication) on a loopback port. Built for this crate's tests, and for the
//! tests of crates that use it with the `testing` feature.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use tokio::io::AsyncWriteExt as _;

use super::GitFailure;

/// A `git push` that failed with exit code 128, saying `detail` (as git's stderr would).
pub fn failure(detail: &str) -> GitFailure {
    GitFailure {
        what: "git push".into(),
        detail: detail.into(),
        exit: Some(128),
    }
}

/// A bare repository `<root>/<name>.git` whose `main` holds `README.md` and
/// `app/values.yaml`, and whose `env/dev` branch adds `dev.yaml`.
pub async fn bare_repo(root: &Path, name: &str) -> PathBuf {
    let bare = root.join(format!("{name}.git"));
    git(root, &["init", "-q", "--bare", "-b", "main", &path(&bare)]).await;
    let seed = root.join(format!("{name}-seed"));
    git(root, &["clone", "-q", &path(&bare), &path(&seed)]).await;
    write(&seed.join("README.md"), "fleet\n").await;
    write(&seed.join("app/values.yaml"), "image: app:1.0.0\n").await;
    git(&seed, &["add", "-A"]).await;
    git(&seed, &["commit", "-q", "-m", "seed"]).await;
    git(&seed, &["push", "-q", "origin", "main"]).await;
    git(&seed, &["checkout", "-q", "-b", "env/dev"]).await;
    write(&seed.join("dev.yaml"), "replicas: 1\n").await;
    git(&seed, &["add", "-A"]).await;
    git(&seed, &["commit", "-q", "-m", "dev"]).await;
    git(&seed, &["push", "-q", "origin", "env/dev"]).await;
    bare
}

/// `path` as a string argument.
pub fn path(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Writes `text` to `file`, creating its directory.
pub async fn write(file: &Path, text: &str) {
    if let Some(dir) = file.parent() {
        tokio::fs::create_dir_all(dir).await.expect("a directory");
    }
    tokio::fs::write(file, text).await.expect("a written file");
}

/// `git <args>` in `dir` as the tests' own user (no global configuration), which must
/// succeed; returns stdout.
pub async fn git(dir: &Path, args: &[&str]) -> String {
    let output = tokio::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Someone")
        .env("GIT_AUTHOR_EMAIL", "someone@example.com")
        .env("GIT_COMMITTER_NAME", "Someone")
        .env("GIT_COMMITTER_EMAIL", "someone@example.com")
        .output()
        .await
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A smart-HTTP git server for the repositories under `root`, answering only requests
/// with `username:password` as basic credentials; returns its base URL.
pub async fn http_git(root: &Path, username: &str, password: &str) -> String {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"))
    );
    let state = Backend {
        root: root.to_path_buf(),
        expected,
        user: username.to_string(),
    };
    let app = axum::Router::new().fallback(serve).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[derive(Clone)]
struct Backend {
    root: PathBuf,
    expected: String,
    user: String,
}

/// One request, run through `git http-backend` as CGI.
async fn serve(State(backend): State<Backend>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    if header("authorization") != backend.expected {
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                "WWW-Authenticate",
                HeaderValue::from_static("Basic realm=\"git\""),
            )
            .body(Body::empty())
            .expect("a response");
    }
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .expect("the request body");
    let mut child = tokio::process::Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &backend.root)
        .env("GIT_PROJECT_ROOT", &backend.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or_default())
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("REMOTE_USER", &backend.user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git http-backend runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(&body)
        .await
        .expect("the body is handed over");
    drop(stdin);
    let output = child.wait_with_output().await.expect("http-backend ends");
    let out = output.stdout;
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, at + 4))
        .or_else(|| {
            out.windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, at + 2))
        })
        .expect("CGI headers");
    let head = String::from_utf8_lossy(&out[..split.0]).into_owned();
    let mut response = Response::builder();
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code: u16 = value[..3].parse().expect("a status code");
            response = response.status(code);
        } else {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from(out[split.1..].to_vec()))
        .expect("a response")
}
