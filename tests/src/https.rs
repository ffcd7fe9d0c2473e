//! A small HTTPS server on loopback with a CA of its own, for clients that must trust
//! it only when told to (a Helm repository behind a private CA, say).
//!
//! Each connection carries one request, answered by the test's handler and closed; the
//! server keeps the requests it answered, so a test counts what a client asked on the
//! wire. A request body is read when its `content-length` says it is small (a form
//! `POST`, as an OAuth token request is).
//!
//! ```no_run
//! # async fn example() {
//! use hecate_testenv::https::{Https, Reply};
//! let server = Https::start(|request| match request.path.as_str() {
//!     "/index.yaml" => Reply::ok("apiVersion: v1\nentries: {}\n"),
//!     _ => Reply::status(404),
//! })
//! .await;
//! let url = server.url("/index.yaml"); // https://127.0.0.1:<port>/index.yaml
//! let ca = server.ca_pem(); // what a client trusts it with
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::pki::Loopback;

/// The most bytes of a request's head read.
const MAX_HEAD: usize = 64 * 1024;

/// One request as the server read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, …
    pub method: String,
    /// The path and query, as sent.
    pub path: String,
    /// The headers, names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body, when one of at most 64 KiB was announced.
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers besides `content-length` and `connection`.
    pub headers: Vec<(String, String)>,
    /// The body (not sent for `HEAD` and `304`).
    pub body: Vec<u8>,
}

impl Reply {
    /// `200` with `body`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// `status` with no body.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// This reply with header `name: value` too.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// A running server; it stops when dropped.
pub struct Https {
    /// Where it listens.
    pub addr: SocketAddr,
    ca_pem: String,
    served: Arc<Mutex<Vec<(Request, u16)>>>,
    serving: tokio::task::JoinHandle<()>,
}

impl Https {
    /// Starts a server on a free loopback port, with a new CA and a certificate for
    /// `127.0.0.1` and `localhost`, answering every request with `handler`.
    ///
    /// # Panics
    ///
    /// When no certificate can be made or no port bound.
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let pki = Loopback::generate("hecate test HTTPS CA", "hecate test HTTPS server")
            .expect("a CA and a server certificate");
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(pki.cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.serialize_der())),
            )
            .expect("a server configuration");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("the port bound");
        let served = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = served.clone();
        let serving = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, handler, log) = (acceptor.clone(), handler.clone(), log.clone());
                tokio::spawn(async move {
                    // A client that does not trust the CA ends the handshake: nothing
                    // was asked.
                    let Ok(mut stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let Some(request) = read_request(&mut stream).await else {
                        return;
                    };
                    let reply = handler(&request);
                    let status = reply.status;
                    let head_only = request.method == "HEAD" || status == 304;
                    if let Ok(mut served) = log.lock() {
                        served.push((request, status));
                    }
                    let _ = stream.write_all(&encode(&reply, head_only)).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self {
            addr,
            ca_pem: pki.ca_cert.pem(),
            served,
            serving,
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The CA certificate (PEM) that signed the server's certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The requests answered so far, oldest first, with the status each got.
    pub fn served(&self) -> Vec<(Request, u16)> {
        self.served.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for Https {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// Reads a request's head (the request line and headers).
async fn read_request<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> Option<Request> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buffer[..n]);
    }
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let mut body = head.split_off(end);
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_HEAD);
    while body.len() < length {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&buffer[..n]);
    }
    body.truncate(length);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// `reply` on the wire, closing the connection after it.
fn encode(reply: &Reply, head_only: bool) -> Vec<u8> {
    let reason = match reply.status {
        200 => "OK",
        304 => "Not Modified",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\nconnection: close\r\n",
        reply.status
    );
    if reply.status != 304 {
        out.push_str(&format!("content-length: {}\r\n", reply.body.len()));
    }
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if !head_only {
        bytes.extend_from_slice(&reply.body);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_encoded_without_a_body_when_there_is_none_to_send() {
        let reply = Reply::ok("hello").header("etag", "\"1\"");
        assert_eq!(
            String::from_utf8(encode(&reply, false)).unwrap_or_default(),
            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 5\r\netag: \"1\"\r\n\r\nhello"
        );
        assert_eq!(
            String::from_utf8(encode(&Reply::status(304), true)).unwrap_or_default(),
            "HTTP/1.1 304 Not Modified\r\nconnection: close\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn requests_are_read_up_to_their_head() {
        let raw =
            b"GET /stable/index.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \"a\"\r\n\r\n";
        let request = read_request(&mut raw.as_slice()).await;
        assert_eq!(
            request
                .as_ref()
                .map(|r| (r.method.as_str(), r.path.as_str())),
            Some(("GET", "/stable/index.yaml"))
        );
        assert_eq!(
            request.as_ref().and_then(|r| r.header("if-none-match")),
            Some("\"a\"")
        );
        assert_eq!(
            read_request(&mut b"GET / HTTP/1.1\r\n".as_slice()).await,
            None
        );
    }
}
