//! A real SSH server on loopback for tests of git over SSH: OpenSSH's `sshd`, as Debian
//! packages it (`openssh-server`; `cargo xtask test` installs it), run as the tests' own
//! user with a host key of its own and an `authorized_keys` file in a temporary
//! directory. Git reaches repositories through it as `ssh://127.0.0.1:<port>/<path>`,
//! running `git-upload-pack`/`git-receive-pack` from the `PATH` of the login.
//!
//! ```no_run
//! # async fn example() {
//! use hecate_testenv::sshd::{KeyPair, Sshd};
//! let key = KeyPair::generate(None);
//! let sshd = Sshd::start(&[&key]).await;
//! let url = sshd.url(std::path::Path::new("/srv/app.git"));
//! let known_hosts = sshd.known_hosts(); // `[127.0.0.1]:<port> ssh-ed25519 …`
//! # }
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;

/// Where Debian installs the server.
const BINARY: &str = "/usr/sbin/sshd";

/// An ed25519 key pair in OpenSSH's formats.
#[derive(Clone, Debug)]
pub struct KeyPair {
    /// The private key file's text (`-----BEGIN OPENSSH PRIVATE KEY-----` …).
    pub private: String,
    /// The public key line (`ssh-ed25519 AAAA… comment`).
    pub public: String,
}

impl KeyPair {
    /// A fresh key made by `ssh-keygen`, protected by `passphrase` when given.
    ///
    /// # Panics
    ///
    /// When `ssh-keygen` is missing or fails.
    pub fn generate(passphrase: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("key");
        keygen(&file, passphrase.unwrap_or_default());
        Self {
            private: std::fs::read_to_string(&file).expect("the private key"),
            public: std::fs::read_to_string(file.with_extension("pub"))
                .expect("the public key")
                .trim()
                .to_string(),
        }
    }
}

/// An `sshd` process on a loopback port, letting in the keys it was started with as
/// the current user. It is killed when dropped.
pub struct Sshd {
    dir: tempfile::TempDir,
    /// Where it listens.
    pub addr: SocketAddr,
    user: String,
    host_key: String,
    child: std::process::Child,
}

impl Sshd {
    /// Starts a server that lets in `authorized` (public keys only), as the user the
    /// tests run as.
    ///
    /// # Panics
    ///
    /// When OpenSSH's server is not installed or does not answer within 10 s.
    pub async fn start(authorized: &[&KeyPair]) -> Self {
        let binary = PathBuf::from(BINARY);
        assert!(
            binary.exists(),
            "these tests need OpenSSH's server: apt-get install -y openssh-server \
             (cargo xtask test installs it)"
        );
        let user = id(&["-un"]);
        if id(&["-u"]) == "0" {
            // sshd started by root drops privileges into this empty directory, which
            // Debian's service scripts create and a package install does not.
            std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation directory");
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let host_key = dir.path().join("host_key");
        keygen(&host_key, "");
        let host_public =
            std::fs::read_to_string(host_key.with_extension("pub")).expect("the host's public key");
        let keys: String = authorized
            .iter()
            .map(|key| format!("{}\n", key.public))
            .collect();
        let authorized_keys = dir.path().join("authorized_keys");
        std::fs::write(&authorized_keys, keys).expect("writing authorized_keys");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\n\
                 ListenAddress 127.0.0.1\n\
                 HostKey {host_key}\n\
                 PidFile none\n\
                 UsePAM no\n\
                 StrictModes no\n\
                 AuthorizedKeysFile {authorized_keys}\n\
                 AllowUsers {user}\n\
                 PubkeyAuthentication yes\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 PermitRootLogin prohibit-password\n\
                 LogLevel VERBOSE\n",
                host_key = host_key.display(),
                authorized_keys = authorized_keys.display(),
            ),
        )
        .expect("writing sshd_config");
        let log = std::fs::File::create(dir.path().join("sshd.log")).expect("a log file");
        let child = Command::new(&binary)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting sshd");
        let sshd = Self {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            user,
            host_key: host_public.trim().to_string(),
            child,
            dir,
        };
        sshd.wait_for_banner().await;
        sshd
    }

    /// Waits until the server greets a connection.
    async fn wait_for_banner(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut stream) = tokio::net::TcpStream::connect(self.addr).await {
                let mut banner = [0u8; 8];
                let read =
                    tokio::time::timeout(Duration::from_secs(2), stream.read_exact(&mut banner))
                        .await;
                if matches!(read, Ok(Ok(_))) && &banner == b"SSH-2.0-" {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "sshd did not answer on {} within 10 s: {}",
                self.addr,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The user keys are let in as (the tests' own).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// `ssh://127.0.0.1:<port><path>`: the repository at absolute `path`, with no user
    /// in the URL (the client names it).
    pub fn url(&self, path: &Path) -> String {
        format!("ssh://{}{}", self.addr, path.display())
    }

    /// How `known_hosts` names this server: `[127.0.0.1]:<port>`.
    pub fn host(&self) -> String {
        format!("[{}]:{}", self.addr.ip(), self.addr.port())
    }

    /// A `known_hosts` line for this server's host key.
    pub fn known_hosts(&self) -> String {
        format!("{} {}\n", self.host(), self.host_key)
    }

    /// What the server logged so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Only the listener: each connection's own process ends with its connection.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ssh-keygen` writes an ed25519 key to `file` (and `file.pub`).
fn keygen(file: &Path, passphrase: &str) {
    let output = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-C",
            "hecate-test",
            "-N",
            passphrase,
            "-f",
        ])
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("ssh-keygen runs (apt-get install -y openssh-client)");
    assert!(
        output.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `id <args>`: who the tests run as.
fn id(args: &[&str]) -> String {
    let output = Command::new("id").args(args).output().expect("id runs");
    assert!(output.status.success(), "id {args:?} failed");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}
