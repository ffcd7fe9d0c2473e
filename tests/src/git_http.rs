//! A directory of bare git repositories served over git's smart HTTP protocol on
//! loopback, as a forge serves them: each request is handed to the real
//! `git http-backend` as a CGI program, so what Flux's source-controller (go-git) and the
//! git CLI (Hecate's controller) fetch and push is git's own answer, never a stand-in's.
//!
//! Each connection carries one request and is closed after the answer, which both
//! clients cope with. A request body is read by `Content-Length` or de-chunked
//! (`Transfer-Encoding: chunked`, as the git CLI sends a push bigger than its
//! `http.postBuffer`); gzipped bodies are passed on as they came, for `http-backend`
//! inflates them itself. Pushes are allowed: the backend is told an authenticated user
//! asked ([`REMOTE_USER`]). A bad request is answered 400 (or 413, 500) and logged; it
//! never stops the server. The server keeps what it answered, so a test sees what a
//! client asked on the wire.
//!
//! ```no_run
//! # async fn example() -> anyhow::Result<()> {
//! use hecate_testenv::git_http::GitHttp;
//! let root = tempfile::tempdir()?; // holds `fleet.git`, a bare repository
//! let server = GitHttp::start(root.path()).await?;
//! let url = server.url("fleet.git"); // http://127.0.0.1:<port>/fleet.git
//! # Ok(())
//! # }
//! ```

use std::ffi::OsString;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

/// The most bytes of a request's head read.
const MAX_HEAD: usize = 64 * 1024;

/// The most bytes of a request's body read, de-chunked: a push of a large repository.
const MAX_BODY: usize = 256 * 1024 * 1024;

/// The longest chunk-size or trailer line of a chunked body.
const MAX_CHUNK_LINE: usize = 4096;

/// How long one connection may take, request and answer: a client that stalls, or a
/// backend that hangs, is let go rather than kept for ever.
const CONNECTION_LIMIT: Duration = Duration::from_secs(300);

/// Who `http-backend` is told is asking. It refuses `git-receive-pack` (a push) to an
/// anonymous user unless the repository sets `http.receivepack`; any user will do.
pub const REMOTE_USER: &str = "hecate-testenv";

/// One request as the server answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// `GET`, `POST`, …; empty when the request's head could not be read (a 400).
    pub method: String,
    /// The path and query, as sent (`/fleet.git/info/refs?service=git-upload-pack`);
    /// empty with the method.
    pub target: String,
    /// Whether the body came chunked.
    pub chunked: bool,
    /// The body's length, de-chunked (still compressed when the client gzipped it).
    pub body_len: usize,
    /// The status answered.
    pub status: u16,
}

/// A running server over one directory of bare repositories; it stops when dropped,
/// ending the requests in flight.
pub struct GitHttp {
    addr: SocketAddr,
    served: Arc<Mutex<Vec<Exchange>>>,
    serving: tokio::task::JoinHandle<()>,
}

impl GitHttp {
    /// Serves the bare repositories under `root` (`<root>/fleet.git` as
    /// `/fleet.git`) on a free loopback port.
    ///
    /// # Errors
    ///
    /// When `root` is not a directory, git has no `http-backend`, or no port is bound.
    pub async fn start(root: &Path) -> anyhow::Result<Self> {
        // The backend joins `PATH_INFO` to it: it must not depend on a working directory.
        let root = std::fs::canonicalize(root)
            .with_context(|| format!("the repositories' directory {}", root.display()))?;
        anyhow::ensure!(root.is_dir(), "{} is not a directory", root.display());
        backend_installed().await?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding a loopback port")?;
        let addr = listener.local_addr().context("the port bound")?;
        let served = Arc::new(Mutex::new(Vec::new()));
        let serving = tokio::spawn(accept(listener, Arc::new(root), served.clone()));
        Ok(Self {
            addr,
            served,
            serving,
        })
    }

    /// `http://127.0.0.1:<port>/<repo>`: what a client clones, fetches and pushes.
    pub fn url(&self, repo: &str) -> String {
        format!("{}/{}", self.base(), repo.trim_start_matches('/'))
    }

    /// `http://127.0.0.1:<port>`, with no slash after it.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests it has answered.
    pub fn requests(&self) -> usize {
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The requests answered so far, oldest first.
    pub fn served(&self) -> Vec<Exchange> {
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for GitHttp {
    fn drop(&mut self) {
        // The connections are the accept task's: they end with it, and their backends
        // are killed with them.
        self.serving.abort();
    }
}

/// Fails with a sentence saying what to install when git has no `http-backend` (some
/// distributions package it apart from git itself).
async fn backend_installed() -> anyhow::Result<()> {
    let output = clean_git()
        .arg("--exec-path")
        .output()
        .await
        .context("running git (is it installed?)")?;
    anyhow::ensure!(output.status.success(), "git --exec-path failed");
    let exec_path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let backend = exec_path.join("git-http-backend");
    anyhow::ensure!(
        backend.is_file(),
        "git has no http-backend at {} (install git's full package)",
        backend.display()
    );
    Ok(())
}

/// `git` with none of the machine's or the user's configuration.
fn clean_git() -> Command {
    let mut command = Command::new("git");
    command
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        )
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

/// Accepts connections until aborted, serving each on a task of its own.
async fn accept(listener: TcpListener, root: Arc<PathBuf>, served: Arc<Mutex<Vec<Exchange>>>) {
    // Owned here so that aborting this task aborts the connections too.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors, say: a passing condition, not the end.
                eprintln!("git-http: accepting a connection: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (root, served) = (root.clone(), served.clone());
        connections.spawn(async move {
            let serving = connection(stream, peer, &root, &served);
            if tokio::time::timeout(CONNECTION_LIMIT, serving)
                .await
                .is_err()
            {
                eprintln!("git-http: a connection from {peer} took over {CONNECTION_LIMIT:?}");
            }
        });
    }
}

/// Reads one request from `stream`, answers it and closes the connection.
async fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    root: &Path,
    served: &Mutex<Vec<Exchange>>,
) {
    let (read, mut write) = stream.split();
    let mut reader = tokio::io::BufReader::new(read);
    let (exchange, reply) = match read_head(&mut reader).await {
        // Connected and closed without asking: nothing to answer.
        Ok(None) => return,
        Ok(Some(head)) => {
            let (reply, body_len) = match answer(&head, &mut reader, &mut write, peer, root).await {
                Ok(answered) => answered,
                Err(failure) => {
                    eprintln!(
                        "git-http: {} {}: {:#}",
                        head.method, head.target, failure.error
                    );
                    (Reply::error(failure.status), 0)
                }
            };
            let exchange = Exchange {
                method: head.method.clone(),
                target: head.target.clone(),
                chunked: head.chunked(),
                body_len,
                status: reply.status,
            };
            (exchange, reply)
        }
        Err(error) => {
            eprintln!("git-http: a request from {peer}: {error:#}");
            let exchange = Exchange {
                method: String::new(),
                target: String::new(),
                chunked: false,
                body_len: 0,
                status: 400,
            };
            (exchange, Reply::error(400))
        }
    };
    let head_only = exchange.method == "HEAD";
    served
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(exchange);
    // The client may have gone: there is no one left to tell.
    let _ = write.write_all(&reply.encode(head_only)).await;
    let _ = write.shutdown().await;
}

/// A request's head.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Head {
    method: String,
    /// The path and query, as sent.
    target: String,
    /// Names in lower case, in the order sent.
    headers: Vec<(String, String)>,
}

impl Head {
    /// The value of header `name` (lower case), if sent.
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the body is chunked: the last transfer coding says so.
    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .and_then(|codings| codings.rsplit(',').next())
            .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
    }
}

/// Reads a request's head (the request line and headers); `None` when the client
/// closed the connection before sending a byte.
async fn read_head<R: AsyncBufRead + Unpin>(reader: &mut R) -> anyhow::Result<Option<Head>> {
    let mut raw = Vec::new();
    loop {
        let start = raw.len();
        let room = (MAX_HEAD - raw.len()) as u64;
        let n = (&mut *reader)
            .take(room)
            .read_until(b'\n', &mut raw)
            .await
            .context("reading the request head")?;
        if n == 0 {
            if raw.is_empty() {
                return Ok(None);
            }
            anyhow::ensure!(
                raw.len() < MAX_HEAD,
                "the request head is over {MAX_HEAD} bytes"
            );
            anyhow::bail!("the connection closed within the request head");
        }
        let line = &raw[start..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw);
    let mut lines = text.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        anyhow::bail!("a malformed request line {request_line:?}");
    };
    anyhow::ensure!(
        version.starts_with("HTTP/1."),
        "an unsupported protocol {version:?}"
    );
    anyhow::ensure!(
        !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase()),
        "a malformed method {method:?}"
    );
    anyhow::ensure!(
        target.starts_with('/'),
        "a request target {target:?} that is not a path"
    );
    let mut headers = Vec::new();
    for line in lines.take_while(|line| !line.is_empty()) {
        let (name, value) = line
            .split_once(':')
            .with_context(|| format!("a header line without a colon: {line:?}"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Some(Head {
        method: method.to_string(),
        target: target.to_string(),
        headers,
    }))
}

/// A request refused: the status answered, and why (logged).
#[derive(Debug)]
struct Failure {
    status: u16,
    error: anyhow::Error,
}

impl Failure {
    fn bad_request(error: anyhow::Error) -> Self {
        Self { status: 400, error }
    }

    fn internal(error: anyhow::Error) -> Self {
        Self { status: 500, error }
    }
}

/// Reads the body of the request `head` begins and answers it with `git http-backend`;
/// the answer and the body's length.
async fn answer<R, W>(
    head: &Head,
    reader: &mut R,
    write: &mut W,
    peer: SocketAddr,
    root: &Path,
) -> Result<(Reply, usize), Failure>
where
    R: AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    if head
        .header("expect")
        .is_some_and(|expect| expect.eq_ignore_ascii_case("100-continue"))
    {
        // curl waits a second for this before sending the body anyway; no need to
        // make it.
        write
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .context("writing 100 Continue")
            .map_err(Failure::bad_request)?;
    }
    let body = read_body(head, reader).await?;
    let body_len = body.len();
    let output = run_backend(head, body, peer, root)
        .await
        .map_err(Failure::internal)?;
    let reply = parse_cgi(&output.stdout)
        .with_context(|| {
            format!(
                "git http-backend's answer ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )
        })
        .map_err(Failure::internal)?;
    if !output.status.success() || reply.status >= 500 {
        // Its own words on why: the answer's body says little more than the status.
        eprintln!(
            "git-http: {} {}: git http-backend {} ({}): {}",
            head.method,
            head.target,
            reply.status,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok((reply, body_len))
}

/// Reads the body `head` announces: chunked, by `Content-Length`, or none.
async fn read_body<R: AsyncBufRead + Unpin>(
    head: &Head,
    reader: &mut R,
) -> Result<Vec<u8>, Failure> {
    if let Some(codings) = head.header("transfer-encoding") {
        if !head.chunked() {
            return Err(Failure {
                status: 501,
                error: anyhow::anyhow!("an unsupported transfer coding {codings:?}"),
            });
        }
        return read_chunked(reader).await;
    }
    let Some(length) = head.header("content-length") else {
        return Ok(Vec::new());
    };
    let length: usize = length
        .parse()
        .with_context(|| format!("a malformed content-length {length:?}"))
        .map_err(Failure::bad_request)?;
    if length > MAX_BODY {
        return Err(too_large());
    }
    let mut body = Vec::new();
    // Grown as the bytes arrive, not allocated at the length announced.
    (&mut *reader)
        .take(length as u64)
        .read_to_end(&mut body)
        .await
        .context("reading the body")
        .map_err(Failure::bad_request)?;
    if body.len() < length {
        return Err(Failure::bad_request(anyhow::anyhow!(
            "the connection closed after {} of the {length} bytes announced",
            body.len()
        )));
    }
    Ok(body)
}

fn too_large() -> Failure {
    Failure {
        status: 413,
        error: anyhow::anyhow!("a body over {MAX_BODY} bytes"),
    }
}

/// Reads a chunked body, de-chunked; trailers are read and dropped.
async fn read_chunked<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader).await.map_err(Failure::bad_request)?;
        // Chunk extensions (`;name=value`) mean nothing here.
        let size = line.split(';').next().unwrap_or_default().trim();
        if size.is_empty() || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Failure::bad_request(anyhow::anyhow!(
                "a malformed chunk size {line:?}"
            )));
        }
        let size = usize::from_str_radix(size, 16).map_err(|_| too_large())?;
        if size == 0 {
            break;
        }
        if size > MAX_BODY - body.len() {
            return Err(too_large());
        }
        let before = body.len();
        (&mut *reader)
            .take(size as u64)
            .read_to_end(&mut body)
            .await
            .context("reading a chunk")
            .map_err(Failure::bad_request)?;
        if body.len() - before < size {
            return Err(Failure::bad_request(anyhow::anyhow!(
                "the connection closed within a chunk"
            )));
        }
        let end = read_line(reader).await.map_err(Failure::bad_request)?;
        if !end.is_empty() {
            return Err(Failure::bad_request(anyhow::anyhow!(
                "a chunk longer than its size says"
            )));
        }
    }
    let mut trailers = 0;
    loop {
        let line = read_line(reader).await.map_err(Failure::bad_request)?;
        if line.is_empty() {
            return Ok(body);
        }
        trailers += line.len();
        if trailers > MAX_HEAD {
            return Err(Failure::bad_request(anyhow::anyhow!(
                "trailers over {MAX_HEAD} bytes"
            )));
        }
    }
}

/// One line of at most [`MAX_CHUNK_LINE`] bytes, without its line ending.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> anyhow::Result<String> {
    let mut line = Vec::new();
    (&mut *reader)
        .take(MAX_CHUNK_LINE as u64)
        .read_until(b'\n', &mut line)
        .await
        .context("reading a chunked body")?;
    anyhow::ensure!(
        line.ends_with(b"\n"),
        "a chunked body cut short, or a line in it over {MAX_CHUNK_LINE} bytes"
    );
    line.pop();
    if line.ends_with(b"\r") {
        line.pop();
    }
    String::from_utf8(line).context("a chunked body's line that is not text")
}

/// Runs `git http-backend` for the request `head`, `body` on its standard input.
async fn run_backend(
    head: &Head,
    body: Vec<u8>,
    peer: SocketAddr,
    root: &Path,
) -> anyhow::Result<std::process::Output> {
    let (path, query) = head
        .target
        .split_once('?')
        .unwrap_or((head.target.as_str(), ""));
    let mut command = clean_git();
    command
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("REQUEST_METHOD", &head.method)
        // A web server hands CGI the path decoded; the backend refuses `..` in it.
        .env("PATH_INFO", OsString::from_vec(percent_decode(path)))
        .env("QUERY_STRING", query)
        .env("REMOTE_ADDR", peer.ip().to_string())
        .env("REMOTE_USER", REMOTE_USER)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // The connection ended (timed out, or the server dropped): so does the backend.
        .kill_on_drop(true);
    if head.method == "POST" || !body.is_empty() {
        // Without it the backend reads its input to the end, which it can do too — but
        // the length is what CGI promises.
        command.env("CONTENT_LENGTH", body.len().to_string());
    }
    for (header, variable) in [
        ("content-type", "CONTENT_TYPE"),
        // A gzipped upload-pack request: the backend inflates it.
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        // `version=2`: without it the backend speaks protocol v0.
        ("git-protocol", "HTTP_GIT_PROTOCOL"),
    ] {
        if let Some(value) = head.header(header) {
            command.env(variable, value);
        }
    }
    let mut child = command.spawn().context("starting git http-backend")?;
    let stdin = child.stdin.take();
    // Fed while its output is read, so neither side waits on a full pipe. The backend
    // may answer without reading (a repository not found): the broken pipe is no
    // error then.
    let feed = async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&body).await;
        }
    };
    let ((), output) = tokio::join!(feed, child.wait_with_output());
    output.context("waiting for git http-backend")
}

/// `%XX` escapes decoded; a `%` not followed by two hex digits is kept as it is.
fn percent_decode(path: &str) -> Vec<u8> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}

/// An answer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reply {
    status: u16,
    reason: String,
    /// Headers besides `content-length` and `connection`.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    /// `status` with its reason as the body, in plain text.
    fn error(status: u16) -> Self {
        let reason = reason(status).to_string();
        Self {
            status,
            headers: vec![("Content-Type".to_string(), "text/plain".to_string())],
            body: format!("{reason}\n").into_bytes(),
            reason,
        }
    }

    /// The answer on the wire, closing the connection after it.
    fn encode(&self, head_only: bool) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.status,
            self.reason,
            self.body.len()
        );
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        bytes
    }
}

/// The reason phrase of the statuses this server answers.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        _ => "Status",
    }
}

/// A CGI program's output as an answer: its headers (a `Status:` one the status,
/// else 200), a blank line, the body.
fn parse_cgi(stdout: &[u8]) -> anyhow::Result<Reply> {
    // The backend ends its lines with CRLF; CGI allows a bare LF.
    let crlf = stdout.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = stdout.windows(2).position(|w| w == b"\n\n");
    let (end, gap) = match (crlf, lf) {
        (Some(c), Some(l)) if l < c => (l, 2),
        (Some(c), _) => (c, 4),
        (None, Some(l)) => (l, 2),
        (None, None) => anyhow::bail!("no end to the headers in {} bytes", stdout.len()),
    };
    let mut reply = Reply {
        status: 200,
        reason: reason(200).to_string(),
        headers: Vec::new(),
        body: stdout[end + gap..].to_vec(),
    };
    for line in String::from_utf8_lossy(&stdout[..end]).lines() {
        let (name, value) = line
            .split_once(':')
            .with_context(|| format!("a header line without a colon: {line:?}"))?;
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("status") {
            let (code, phrase) = value.split_once(' ').unwrap_or((value, ""));
            reply.status = code
                .parse()
                .ok()
                .filter(|code| (100..600).contains(code))
                .with_context(|| format!("a malformed status {value:?}"))?;
            reply.reason = match phrase.trim() {
                "" => reason(reply.status).to_string(),
                phrase => phrase.to_string(),
            };
        } else if !["content-length", "connection", "transfer-encoding"]
            .iter()
            .any(|framing| name.eq_ignore_ascii_case(framing))
        {
            // This server frames the answer itself.
            reply.headers.push((name.to_string(), value.to_string()));
        }
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs git in `dir` with a clean environment (no configuration, no proxy, no
    /// prompt) and a fixed identity; its output, trimmed.
    async fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
        let output = clean_git()
            .args(args)
            .current_dir(dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "Dev")
            .env("GIT_AUTHOR_EMAIL", "dev@example.com")
            .env("GIT_COMMITTER_NAME", "Dev")
            .env("GIT_COMMITTER_EMAIL", "dev@example.com")
            .output()
            .await
            .context("running git (is it installed?)")?;
        anyhow::ensure!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// A bare `<name>.git` under `root`, its HEAD on `main`, and an empty work tree
    /// beside it to commit from.
    async fn repositories(root: &Path, name: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
        let bare = root.join(format!("{name}.git"));
        let bare_arg = bare.to_string_lossy().into_owned();
        git(
            root,
            &["init", "--bare", "--initial-branch=main", &bare_arg],
        )
        .await?;
        let work = root.join(format!("{name}-work"));
        let work_arg = work.to_string_lossy().into_owned();
        git(root, &["init", "--initial-branch=main", &work_arg]).await?;
        Ok((bare, work))
    }

    /// Commits `files` in `work`; the commit's SHA.
    async fn commit(work: &Path, files: &[(&str, &[u8])]) -> anyhow::Result<String> {
        for (name, contents) in files {
            std::fs::write(work.join(name), contents)?;
        }
        git(work, &["add", "--all"]).await?;
        git(work, &["commit", "--quiet", "--message", "files"]).await?;
        git(work, &["rev-parse", "HEAD"]).await
    }

    /// `request`'s answer, read to the close.
    async fn ask(server: &GitHttp, request: &[u8]) -> anyhow::Result<String> {
        let mut stream = TcpStream::connect(server.addr()).await?;
        stream.write_all(request).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }

    #[tokio::test]
    async fn a_push_over_http_is_cloned_and_listed_back() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let (bare, work) = repositories(root.path(), "fleet").await?;
        let server = GitHttp::start(root.path()).await?;
        let url = server.url("fleet.git");
        assert_eq!(url, format!("http://{}/fleet.git", server.addr()));

        let sha = commit(&work, &[("app.yaml", b"image: shop:1.2.3\n")]).await?;
        git(&work, &["push", "--quiet", &url, "HEAD:refs/heads/main"]).await?;
        // On disk, where the backend wrote it.
        assert_eq!(git(&bare, &["rev-parse", "refs/heads/main"]).await?, sha);

        let listed = git(root.path(), &["ls-remote", &url]).await?;
        assert!(
            listed
                .lines()
                .any(|l| l == format!("{sha}\trefs/heads/main")),
            "{listed}"
        );

        git(root.path(), &["clone", "--quiet", &url, "clone"]).await?;
        let clone = root.path().join("clone");
        assert_eq!(
            std::fs::read_to_string(clone.join("app.yaml"))?,
            "image: shop:1.2.3\n"
        );
        assert_eq!(git(&clone, &["rev-parse", "HEAD"]).await?, sha);

        // Smart HTTP, both ways, in protocol v2 for the fetches.
        let served = server.served();
        for service in ["git-receive-pack", "git-upload-pack"] {
            assert!(
                served.iter().any(|e| e.method == "POST"
                    && e.target == format!("/fleet.git/{service}")
                    && e.status == 200),
                "{served:#?}"
            );
        }
        assert!(served.iter().all(|e| e.status == 200), "{served:#?}");
        assert_eq!(server.requests(), served.len());
        Ok(())
    }

    #[tokio::test]
    async fn a_repository_that_is_not_there_is_not_found() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let server = GitHttp::start(root.path()).await?;

        let refused = git(
            root.path(),
            &["clone", "--quiet", &server.url("missing.git"), "clone"],
        )
        .await;
        let error = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            error.contains(&format!(
                "repository '{}/' not found",
                server.url("missing.git")
            )),
            "{error}"
        );
        assert!(!root.path().join("clone").exists());
        assert_eq!(
            server
                .served()
                .iter()
                .map(|e| (e.target.as_str(), e.status))
                .collect::<Vec<_>>(),
            [("/missing.git/info/refs?service=git-upload-pack", 404)]
        );
        Ok(())
    }

    #[tokio::test]
    async fn bad_requests_are_refused_and_the_server_serves_on() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let (_bare, work) = repositories(root.path(), "fleet").await?;
        let server = GitHttp::start(root.path()).await?;

        let garbage = ask(&server, b"hello there\r\n\r\n").await?;
        assert!(
            garbage.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{garbage}"
        );
        let bad_chunk = ask(
            &server,
            b"POST /fleet.git/git-upload-pack HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        )
        .await?;
        assert!(bad_chunk.starts_with("HTTP/1.1 400 "), "{bad_chunk}");
        let too_large = ask(
            &server,
            b"POST /fleet.git/git-upload-pack HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n",
        )
        .await?;
        assert!(too_large.starts_with("HTTP/1.1 413 "), "{too_large}");
        // Connected and gone without a word: nothing answered, nothing kept.
        drop(TcpStream::connect(server.addr()).await?);

        let sha = commit(&work, &[("app.yaml", b"replicas: 2\n")]).await?;
        git(
            &work,
            &["push", "--quiet", &server.url("fleet.git"), "HEAD:main"],
        )
        .await?;
        let advertised = ask(
            &server,
            b"GET /fleet.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await?;
        assert!(
            advertised.starts_with("HTTP/1.1 200 OK\r\n"),
            "{advertised}"
        );
        assert!(
            advertised.contains("Content-Type: application/x-git-upload-pack-advertisement"),
            "{advertised}"
        );
        assert!(
            advertised.contains(&format!("{sha} refs/heads/main")),
            "{advertised}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn protocol_v2_is_spoken_when_the_client_asks_for_it() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let (_bare, work) = repositories(root.path(), "fleet").await?;
        let server = GitHttp::start(root.path()).await?;
        commit(&work, &[("app.yaml", b"replicas: 2\n")]).await?;
        git(
            &work,
            &["push", "--quiet", &server.url("fleet.git"), "HEAD:main"],
        )
        .await?;

        // The git CLI asks for v2 in a header, which the backend reads from
        // `HTTP_GIT_PROTOCOL`; go-git asks for nothing and gets v0 (the refs listed).
        let v2 = ask(
            &server,
            b"GET /fleet.git/info/refs?service=git-upload-pack HTTP/1.1\r\n\
              Git-Protocol: version=2\r\n\r\n",
        )
        .await?;
        assert!(v2.starts_with("HTTP/1.1 200 OK\r\n"), "{v2}");
        assert!(v2.contains("000eversion 2\n"), "{v2}");
        assert!(!v2.contains("refs/heads/main"), "{v2}");
        Ok(())
    }

    #[tokio::test]
    async fn a_push_bigger_than_the_post_buffer_arrives_chunked() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let (bare, work) = repositories(root.path(), "fleet").await?;
        let server = GitHttp::start(root.path()).await?;
        let url = server.url("fleet.git");

        // Random bytes do not compress: the pack is over git's 1 MiB `http.postBuffer`.
        let mut blob = vec![0u8; 3 * 1024 * 1024];
        getrandom::fill(&mut blob).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
        let sha = commit(&work, &[("blob.bin", &blob)]).await?;
        git(&work, &["push", "--quiet", &url, "HEAD:refs/heads/main"]).await?;
        assert_eq!(git(&bare, &["rev-parse", "refs/heads/main"]).await?, sha);

        let served = server.served();
        assert!(
            served
                .iter()
                .any(|e| e.target == "/fleet.git/git-receive-pack"
                    && e.chunked
                    && e.body_len > blob.len()
                    && e.status == 200),
            "{served:#?}"
        );

        git(root.path(), &["clone", "--quiet", &url, "clone"]).await?;
        assert!(std::fs::read(root.path().join("clone/blob.bin"))? == blob);
        Ok(())
    }

    #[tokio::test]
    async fn chunked_bodies_are_read_de_chunked() {
        let head = Head {
            method: "POST".into(),
            target: "/a.git/git-receive-pack".into(),
            headers: vec![("transfer-encoding".into(), "chunked".into())],
        };
        let wire = b"4;ext=1\r\n0000\r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
        let mut reader = wire.as_slice();
        let body = read_body(&head, &mut reader).await.ok();
        assert_eq!(body.as_deref(), Some(b"00000123456789".as_slice()));
        assert_eq!(reader, b"NEXT");

        for wire in [
            b"4\r\n0000".as_slice(),
            b"4\r\n000000\r\n0\r\n\r\n",
            b"-1\r\n",
        ] {
            let status = read_body(&head, &mut { wire })
                .await
                .err()
                .map(|f| f.status);
            assert_eq!(status, Some(400), "{}", String::from_utf8_lossy(wire));
        }
        let huge = read_body(&head, &mut b"fffffffffff\r\n".as_slice()).await;
        assert_eq!(huge.err().map(|f| f.status), Some(413));
    }

    #[tokio::test]
    async fn heads_are_read_to_their_blank_line_and_no_further() {
        let wire = b"POST /a.git/git-upload-pack HTTP/1.1\r\nGit-Protocol: version=2\r\nContent-Length: 4\r\n\r\n0000";
        let mut reader = wire.as_slice();
        let head = read_head(&mut reader).await.ok().flatten();
        assert_eq!(
            head.as_ref().and_then(|h| h.header("git-protocol")),
            Some("version=2")
        );
        assert_eq!(reader, b"0000");
        assert!(
            read_head(&mut b"".as_slice())
                .await
                .is_ok_and(|h| h.is_none())
        );
        assert!(
            read_head(&mut b"GET / HTTP/1.1\r\n".as_slice())
                .await
                .is_err()
        );
        assert!(
            read_head(&mut b"GET / SPDY/3\r\n\r\n".as_slice())
                .await
                .is_err()
        );
        let endless = vec![b'a'; MAX_HEAD + 1];
        assert!(read_head(&mut endless.as_slice()).await.is_err());
    }

    #[test]
    fn cgi_answers_become_http_ones() -> anyhow::Result<()> {
        let reply = parse_cgi(
            b"Status: 404 Not Found\r\nExpires: Fri, 01 Jan 1980 00:00:00 GMT\r\nContent-Length: 3\r\n\r\nno\n",
        )?;
        assert_eq!((reply.status, reply.reason.as_str()), (404, "Not Found"));
        assert_eq!(
            String::from_utf8_lossy(&reply.encode(false)),
            "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 3\r\n\
             Expires: Fri, 01 Jan 1980 00:00:00 GMT\r\n\r\nno\n"
        );
        let plain = parse_cgi(b"Content-Type: text/plain\n\nhi")?;
        assert_eq!(
            (plain.status, plain.body.as_slice()),
            (200, b"hi".as_slice())
        );
        assert!(parse_cgi(b"Status: 200 OK\r\n").is_err());
        assert!(parse_cgi(b"Status: nope\r\n\r\n").is_err());
        Ok(())
    }

    #[test]
    fn paths_are_percent_decoded() {
        assert_eq!(
            percent_decode("/a%20b.git/info/refs"),
            b"/a b.git/info/refs"
        );
        assert_eq!(percent_decode("/100%/%zz%4"), b"/100%/%zz%4");
    }
}
