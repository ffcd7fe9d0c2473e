//! The demo application's smoke endpoint. kwok runs the demo's pods without
//! containers, so nothing in the cluster answers HTTP: the demo answers for the
//! release a request names, as that release would — `GET /smoke/<version>` is `200`,
//! or `503` for the release that breaks checkout ([`super::pipeline::FAILS_IN_STAGING`]).
//! Staging's `http` verification asks it after each crossing.

use std::net::SocketAddr;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The running endpoint; it stops when dropped.
pub(crate) struct Smoke {
    /// Where it listens (loopback).
    pub(crate) addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Smoke {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What release `version`'s smoke test answers: its status and body.
pub(crate) fn answer(version: &str, broken: &str) -> (u16, String) {
    if version == broken {
        (
            503,
            format!("shop {version}: POST /checkout answered 500 in 3 of 10 tries\n"),
        )
    } else {
        (200, format!("shop {version}: checkout ok\n"))
    }
}

/// Starts the endpoint on a loopback port; `broken` is the release whose checkout fails.
pub(crate) async fn start(broken: &'static str) -> anyhow::Result<Smoke> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                let mut line = String::new();
                if stream.read_line(&mut line).await.is_err() {
                    return;
                }
                // `GET /smoke/1.3.1 HTTP/1.1`: the headers that follow are not needed.
                let path = line.split_whitespace().nth(1).unwrap_or_default();
                let (status, body) = match path
                    .strip_prefix("/smoke/v")
                    .or_else(|| path.strip_prefix("/smoke/"))
                {
                    Some(version) => answer(version, broken),
                    None => (404, "not found\n".to_string()),
                };
                let reason = match status {
                    200 => "OK",
                    503 => "Service Unavailable",
                    _ => "Not Found",
                };
                let response = format!(
                    "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.get_mut().write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(Smoke { addr, task })
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn each_release_answers_as_it_would() {
        let smoke = super::start("1.3.1").await.expect("started");
        let http = reqwest::Client::new();
        for (path, status) in [
            ("/smoke/v1.3.0", 200),
            ("/smoke/v1.3.1", 503),
            ("/other", 404),
        ] {
            let answered = http
                .get(format!("http://{}{path}", smoke.addr))
                .send()
                .await
                .expect("an answer");
            assert_eq!(answered.status().as_u16(), status, "{path}");
        }
    }
}
