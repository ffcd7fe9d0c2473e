//! The demo's receiver of notices (issue 54): a loopback webhook that a
//! `generic-hmac` Notifier of the demo namespace posts to. It checks each notice's
//! signature over the raw body — as a user's receiver would — and prints what
//! people would be told as it arrives.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The largest notice it reads; a notice is a few KiB.
const MAX_BODY: usize = 256 * 1024;

/// One notice as it arrived.
#[derive(Clone, Debug)]
pub(crate) struct Heard {
    pub(crate) kind: String,
    pub(crate) summary: String,
    /// Whether its signature was the one the shared key makes.
    pub(crate) signed: bool,
}

/// The running receiver; it stops when dropped.
pub(crate) struct Receiver {
    pub(crate) addr: SocketAddr,
    /// The HMAC key the Notifier signs with.
    pub(crate) key: String,
    heard: Arc<Mutex<Vec<Heard>>>,
    task: JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Starts on a loopback port, with a key of its own.
    pub(crate) async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let key = hex::encode(rand_bytes()?);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let task = {
            let (key, heard) = (key.clone(), heard.clone());
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let (key, heard) = (key.clone(), heard.clone());
                    tokio::spawn(async move {
                        if let Ok(Some(notice)) = receive(stream, &key).await {
                            eprintln!("{}", said(&notice));
                            if let Ok(mut heard) = heard.lock() {
                                heard.push(notice.heard);
                            }
                        }
                    });
                }
            })
        };
        Ok(Self {
            addr,
            key,
            heard,
            task,
        })
    }

    /// Where the Notifier posts.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/notices", self.addr)
    }

    /// What arrived so far.
    pub(crate) fn heard(&self) -> Vec<Heard> {
        self.heard.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// Waits until a notice of each of `kinds` has arrived, signed.
    pub(crate) async fn wait_for(&self, kinds: &[&str], within: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            let heard = self.heard();
            if let Some(forged) = heard.iter().find(|h| !h.signed) {
                anyhow::bail!("a notice arrived with a wrong signature: {forged:?}");
            }
            let missing: Vec<&&str> = kinds
                .iter()
                .filter(|k| !heard.iter().any(|h| h.kind == **k))
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            if started.elapsed() > within {
                let got: Vec<&str> = heard.iter().map(|h| h.kind.as_str()).collect();
                anyhow::bail!(
                    "the receiver was not told of {missing:?} within {within:?}; it heard {got:?}"
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// A notice and what the console shows of it.
struct Notice {
    heard: Heard,
    command: Option<String>,
}

/// The line printed for a notice: its kind, what happened, the command that settles it.
fn said(notice: &Notice) -> String {
    let mut line = format!("[told] {}: {}", notice.heard.kind, notice.heard.summary);
    if let Some(command) = &notice.command {
        line.push_str(" — ");
        line.push_str(command);
    }
    if !notice.heard.signed {
        line.push_str(" (WRONG SIGNATURE)");
    }
    line
}

/// Reads one request, answers 204 and closes; a notice when it was one.
async fn receive(stream: TcpStream, key: &str) -> anyhow::Result<Option<Notice>> {
    let mut stream = BufReader::new(stream);
    let mut line = String::new();
    stream.read_line(&mut line).await?;
    let posted = line.starts_with("POST /notices ");
    let (mut length, mut signature) = (0usize, String::new());
    loop {
        line.clear();
        if stream.read_line(&mut line).await? == 0 || line == "\r\n" {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().context("a Content-Length")?;
        } else if name.eq_ignore_ascii_case("x-signature") {
            signature = value.to_string();
        }
    }
    anyhow::ensure!(length <= MAX_BODY, "a body of {length} bytes");
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await?;
    let status = if posted {
        "204 No Content"
    } else {
        "404 Not Found"
    };
    stream
        .get_mut()
        .write_all(
            format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
    stream.get_mut().shutdown().await.ok();
    if !posted {
        return Ok(None);
    }
    let signed = signature == format!("sha256={}", sign(key, &body));
    let json: serde_json::Value = serde_json::from_slice(&body).context("a notice's JSON")?;
    let text = |field: &str| json[field].as_str().unwrap_or_default().to_string();
    Ok(Some(Notice {
        heard: Heard {
            kind: text("kind"),
            summary: text("summary"),
            signed,
        },
        command: json["command"].as_str().map(str::to_string),
    }))
}

/// HMAC-SHA256 of `body` under `key`, in hex: what the Notifier's `X-Signature` says.
fn sign(key: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes());
    hex::encode(ring::hmac::sign(&key, body).as_ref())
}

fn rand_bytes() -> anyhow::Result<[u8; 16]> {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| anyhow::anyhow!("no randomness for the receiver's key"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_one_line_with_its_command() {
        let notice = Notice {
            heard: Heard {
                kind: "ApprovalWanted".into(),
                summary: "production: 1.3.0: waits for 1 more approval; an approval from dave would count".into(),
                signed: true,
            },
            command: Some("hecate approve shop-3 --gate production -n demo (by dave)".into()),
        };
        assert_eq!(
            said(&notice),
            "[told] ApprovalWanted: production: 1.3.0: waits for 1 more approval; an approval from \
             dave would count — hecate approve shop-3 --gate production -n demo (by dave)"
        );
    }
}
