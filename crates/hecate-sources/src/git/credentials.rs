//! Git credentials (spec §5.2): what a `credentialsRef` Secret holds, and how the git
//! CLI is given it.
//!
//! One reading of the Secret serves every git user — `git-clone`, `git-push` and the
//! Beacon's git watch — so [`GitCredentials::from_secret`] is a pure function over the
//! Secret's data and [`GitCredentials::read`] the thin GET around it; and one hand-over,
//! [`apply`], gives it to git for all of them.
//!
//! Nothing secret reaches git's command line or a message: an HTTPS password is handed
//! over by a credential helper that prints it from the child's environment, an SSH key
//! (and its `known_hosts`) is a 0600 file in a [`Scratch`] directory of the caller's
//! private area that is removed after use, a key's passphrase reaches ssh through an
//! askpass program reading the environment, and every value is registered with
//! [`Git::hide`] so failures are redacted.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use k8s_openapi::ByteString;
use tokio::io::AsyncWriteExt as _;

use super::Error;
use super::command::{Git, private_dir, shell_quote};
use super::github_app::AppTokens;

/// How git authenticates to a remote.
#[derive(Clone, PartialEq, Eq)]
pub enum GitCredentials {
    /// No `credentialsRef`: whatever the remote allows without credentials.
    Anonymous,
    /// A GitHub App installation: a short-lived token, used as an HTTPS password.
    GitHubApp(GitHubApp),
    /// An SSH private key.
    Ssh(SshKey),
    /// An HTTPS user name and password (or token).
    Https(Basic),
}

/// A GitHub App installation's keys (Secret keys `privateKey`, `clientID` or `appID`,
/// `installationID`, `baseURL`).
#[derive(Clone, PartialEq, Eq)]
pub struct GitHubApp {
    /// The app's PEM private key.
    pub private_key: String,
    /// Who signs the token request: the client ID when given, else the app ID.
    pub issuer: String,
    /// The installation the token is for.
    pub installation_id: String,
    /// The API to ask (`https://api.github.com`, or a GitHub Enterprise Server's
    /// `https://host/api/v3`).
    pub base_url: String,
}

/// An SSH identity (Secret keys `identity`, `password`, `known_hosts`, `username`).
#[derive(Clone, PartialEq, Eq)]
pub struct SshKey {
    /// The private key, as OpenSSH reads it.
    pub identity: String,
    /// The key's passphrase, when it has one.
    pub passphrase: Option<String>,
    /// Host keys to verify the server against; none = accept the host's key.
    pub known_hosts: Option<String>,
    /// The SSH user (`git` unless the Secret says otherwise).
    pub user: String,
}

/// HTTPS basic credentials (Secret keys `username`, `password`).
#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    /// The user name (`git` unless the Secret says otherwise).
    pub username: String,
    /// The password or token.
    pub password: String,
}

/// The user name used when a Secret names none.
const DEFAULT_USER: &str = "git";

/// The API a GitHub App's token is minted at when the Secret names no `baseURL`.
pub const GITHUB_API: &str = "https://api.github.com";

impl GitCredentials {
    /// The credentials in a Secret's `data`, in the precedence of spec §5.2: a GitHub
    /// App (`privateKey`), then SSH (`identity`), then HTTPS (`password`). An empty
    /// value counts as absent. `Err` says what is missing.
    pub fn from_secret(data: &BTreeMap<String, ByteString>) -> Result<Self, String> {
        if let Some(private_key) = text(data, "privateKey")? {
            let issuer = match text(data, "clientID")? {
                Some(client) => client,
                None => text(data, "appID")?
                    .ok_or("a GitHub App Secret (privateKey) needs clientID or appID as well")?,
            };
            let installation_id = text(data, "installationID")?
                .ok_or("a GitHub App Secret (privateKey) needs installationID as well")?;
            let base_url = text(data, "baseURL")?.unwrap_or_else(|| GITHUB_API.to_string());
            return Ok(Self::GitHubApp(GitHubApp {
                private_key,
                issuer: issuer.trim().to_string(),
                installation_id: installation_id.trim().to_string(),
                base_url: base_url.trim().trim_end_matches('/').to_string(),
            }));
        }
        let user = line(data, "username")?.unwrap_or_else(|| DEFAULT_USER.to_string());
        if let Some(identity) = text(data, "identity")? {
            return Ok(Self::Ssh(SshKey {
                identity,
                passphrase: line(data, "password")?,
                known_hosts: text(data, "known_hosts")?,
                user,
            }));
        }
        if let Some(password) = line(data, "password")? {
            return Ok(Self::Https(Basic {
                username: user,
                password,
            }));
        }
        Err(
            "no usable credentials: expected privateKey (a GitHub App), identity (SSH) \
             or password (HTTPS)"
                .to_string(),
        )
    }

    /// The credentials of Secret `name` in `namespace`, read with a direct GET; no
    /// name = [`GitCredentials::Anonymous`]. A Secret that is missing, unreadable or
    /// holds nothing usable is a [`Kind::Config`](super::Kind::Config) error naming it.
    pub async fn read(
        client: &kube::Client,
        namespace: &str,
        name: Option<&str>,
    ) -> Result<Self, Error> {
        let Some(name) = name else {
            return Ok(Self::Anonymous);
        };
        let data = crate::secrets::read(client, namespace, name)
            .await
            .map_err(Error::config)?;
        Self::from_secret(&data)
            .map_err(|why| Error::config(format!("credentials Secret {name:?}: {why}")))
    }
}

/// The value of `key` as text; absent or empty = `None`.
fn text(data: &BTreeMap<String, ByteString>, key: &str) -> Result<Option<String>, String> {
    match data.get(key) {
        None => Ok(None),
        Some(ByteString(bytes)) if bytes.is_empty() => Ok(None),
        Some(ByteString(bytes)) => String::from_utf8(bytes.clone())
            .map(Some)
            .map_err(|_| format!("{key} is not UTF-8 text")),
    }
}

/// [`text`] for one-line values (user names, passwords): a trailing line break — what
/// `kubectl create secret --from-file` keeps from an editor — is dropped, since no
/// user name or password can carry one.
fn line(data: &BTreeMap<String, ByteString>, key: &str) -> Result<Option<String>, String> {
    let value = text(data, key)?.map(|v| v.trim_end_matches(['\n', '\r']).to_string());
    match value {
        Some(v) if v.is_empty() => Ok(None),
        Some(v) if v.contains(['\n', '\r', '\0']) => Err(format!("{key} holds a line break")),
        other => Ok(other),
    }
}

/// Where one user of credentials (a step, a Beacon's resolution) keeps its files:
/// `<private area>/credentials/<user>`, removed by [`Scratch::remove`].
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty scratch directory (mode 0700) for `user`.
    pub async fn new(git: &Git, user: &str) -> Result<Self, Error> {
        let dir = git.private().join("credentials").join(user);
        remove_dir(&dir).await;
        private_dir(&dir).await?;
        Ok(Self(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Removes the directory and the keys in it.
    pub async fn remove(self) {
        remove_dir(&self.0).await;
    }
}

/// Removes `dir` and everything in it; a directory that is already gone is fine, and
/// a failure only leaves files the Passage's cleanup removes with the work directory.
async fn remove_dir(dir: &Path) {
    if let Err(error) = tokio::fs::remove_dir_all(dir).await
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), %error, "cannot remove a credentials directory");
    }
}

/// Prints the user name and password from the child's environment when git asks
/// (`get`), and ignores `store` and `erase`. `printf`, not `echo`: dash's `echo`
/// would read backslashes in a password as escapes.
const CREDENTIAL_HELPER: &str = "!f() { test \"$1\" = get || exit 0; \
     printf 'username=%s\\npassword=%s\\n' \"$HECATE_GIT_USERNAME\" \"$HECATE_GIT_PASSWORD\"; }; f";

/// Prints the SSH key's passphrase from the environment when ssh asks for it.
const ASKPASS: &str = "#!/bin/sh\nprintf '%s\\n' \"$HECATE_SSH_PASSPHRASE\"\n";

/// Gives `git` what it needs to authenticate to `remote` with `credentials`; files go
/// to `scratch`. GitHub App tokens come from `apps`. Whatever the credentials, ssh is
/// configured (without a key unless they hold one), so no host's ssh configuration or
/// agent takes part.
pub async fn apply(
    credentials: &GitCredentials,
    remote: &str,
    git: &mut Git,
    scratch: &Scratch,
    apps: &AppTokens,
) -> Result<(), Error> {
    match credentials {
        GitCredentials::Anonymous => ssh_command(git, scratch, None, None).await,
        GitCredentials::Https(basic) => {
            https(git, remote, basic);
            ssh_command(git, scratch, None, None).await
        }
        GitCredentials::GitHubApp(app) => {
            git.hide(&app.private_key);
            let token = apps.token(app).await?;
            https(
                git,
                remote,
                &Basic {
                    username: "x-access-token".into(),
                    password: token,
                },
            );
            ssh_command(git, scratch, None, None).await
        }
        GitCredentials::Ssh(key) => ssh_command(git, scratch, Some(key), None).await,
    }
}

/// The HTTPS password, handed over by the credential helper for `remote`'s host only.
fn https(git: &mut Git, remote: &str, basic: &Basic) {
    git.hide(&basic.password);
    git.set_env("HECATE_GIT_USERNAME", &basic.username);
    git.set_env("HECATE_GIT_PASSWORD", &basic.password);
    let key = match origin_of(remote) {
        Some(origin) => format!("credential.{origin}.helper"),
        None => "credential.helper".to_string(),
    };
    git.set_config(key, CREDENTIAL_HELPER);
}

/// `scheme://host[:port]` of an HTTP(S) URL, without user information; `None` for
/// anything else.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!host.is_empty()).then(|| format!("{}://{host}", scheme.to_ascii_lowercase()))
}

/// The ssh command git runs for `ssh://` and `user@host:path` remotes: no ssh
/// configuration files, no agent, bounded waits; with `key`, only that identity
/// (written 0600 into `scratch`) as the Secret's user, and the host verified against
/// the Secret's `known_hosts` when it has one (otherwise the host's key is accepted,
/// as spec §5.2 says). `extra` is appended verbatim (tests).
async fn ssh_command(
    git: &mut Git,
    scratch: &Scratch,
    key: Option<&SshKey>,
    extra: Option<&str>,
) -> Result<(), Error> {
    let dir = scratch.path();
    let mut options: Vec<String> = vec![
        "IdentityAgent=none".into(),
        "ConnectTimeout=30".into(),
        "ServerAliveInterval=15".into(),
        "ServerAliveCountMax=4".into(),
    ];
    let known_hosts = dir.join("known_hosts");
    match key.and_then(|k| k.known_hosts.as_deref()) {
        Some(hosts) => {
            write_private(&known_hosts, hosts.as_bytes(), 0o600).await?;
            options.push("StrictHostKeyChecking=yes".into());
            options.push("GlobalKnownHostsFile=/dev/null".into());
        }
        None => options.push("StrictHostKeyChecking=accept-new".into()),
    }
    // ssh reads an option's value up to a space unless it is in double quotes.
    options.push(format!("UserKnownHostsFile=\"{}\"", known_hosts.display()));
    let mut identity_file = None;
    match key {
        None => options.push("BatchMode=yes".into()),
        Some(key) => {
            git.hide(&key.identity);
            let identity = dir.join("identity");
            let mut text = key.identity.clone();
            // OpenSSH refuses a key file whose last line has no line break.
            if !text.ends_with('\n') {
                text.push('\n');
            }
            write_private(&identity, text.as_bytes(), 0o600).await?;
            options.push("IdentitiesOnly=yes".into());
            options.push(format!("User=\"{}\"", key.user));
            match &key.passphrase {
                // Batch mode would keep ssh from asking the passphrase program.
                None => options.push("BatchMode=yes".into()),
                Some(passphrase) => {
                    git.hide(passphrase);
                    let askpass = dir.join("askpass");
                    write_private(&askpass, ASKPASS.as_bytes(), 0o700).await?;
                    git.set_env("SSH_ASKPASS", askpass.as_os_str());
                    git.set_env("SSH_ASKPASS_REQUIRE", "force");
                    git.set_env("HECATE_SSH_PASSPHRASE", passphrase);
                }
            }
            identity_file = Some(identity);
        }
    }
    let mut command = vec!["ssh".to_string(), "-F".into(), "/dev/null".into()];
    for option in options {
        command.push("-o".into());
        command.push(shell_quote(OsStr::new(&option)));
    }
    if let Some(identity) = identity_file {
        command.push("-i".into());
        command.push(shell_quote(identity.as_os_str()));
    }
    if let Some(extra) = extra {
        command.push(extra.to_string());
    }
    git.set_env("GIT_SSH_COMMAND", command.join(" "));
    git.set_env("GIT_SSH_VARIANT", "ssh");
    Ok(())
}

/// Writes `contents` to a new file at `path` with `mode`, replacing any old one.
async fn write_private(path: &Path, contents: &[u8], mode: u32) -> Result<(), Error> {
    let failed = |e: std::io::Error| Error::local(format!("cannot write {}: {e}", path.display()));
    if let Err(e) = tokio::fs::remove_file(path).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Err(failed(e));
    }
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .await
        .map_err(failed)?;
    file.write_all(contents).await.map_err(failed)?;
    file.flush().await.map_err(failed)?;
    Ok(())
}

impl fmt::Debug for GitCredentials {
    /// Says which kind, never a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Anonymous => f.write_str("Anonymous"),
            Self::GitHubApp(app) => f
                .debug_struct("GitHubApp")
                .field("issuer", &app.issuer)
                .field("installation_id", &app.installation_id)
                .field("base_url", &app.base_url)
                .finish_non_exhaustive(),
            Self::Ssh(key) => f
                .debug_struct("Ssh")
                .field("user", &key.user)
                .field("passphrase", &key.passphrase.is_some())
                .field("known_hosts", &key.known_hosts.is_some())
                .finish_non_exhaustive(),
            Self::Https(basic) => f
                .debug_struct("Https")
                .field("username", &basic.username)
                .finish_non_exhaustive(),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    use crate::secrets::data_of as data;

    #[test]
    fn the_secret_is_read_in_precedence_order() {
        let app = GitCredentials::from_secret(&data(&[
            ("privateKey", "PEM"),
            ("appID", "42"),
            ("installationID", "7"),
            ("identity", "KEY"),
            ("password", "pw"),
        ]));
        assert_eq!(
            app,
            Ok(GitCredentials::GitHubApp(GitHubApp {
                private_key: "PEM".into(),
                issuer: "42".into(),
                installation_id: "7".into(),
                base_url: GITHUB_API.into(),
            }))
        );
        let by_client = GitCredentials::from_secret(&data(&[
            ("privateKey", "PEM"),
            ("appID", "42"),
            ("clientID", "Iv1.abc"),
            ("installationID", "7"),
            ("baseURL", "https://ghe.example.com/api/v3/"),
        ]));
        let Ok(GitCredentials::GitHubApp(by_client)) = by_client else {
            panic!("not an app: {by_client:?}")
        };
        assert_eq!(by_client.issuer, "Iv1.abc");
        assert_eq!(by_client.base_url, "https://ghe.example.com/api/v3");

        let ssh = GitCredentials::from_secret(&data(&[
            ("identity", "KEY"),
            ("password", "phrase\n"),
            ("known_hosts", "host ssh-ed25519 AAAA"),
        ]));
        assert_eq!(
            ssh,
            Ok(GitCredentials::Ssh(SshKey {
                identity: "KEY".into(),
                passphrase: Some("phrase".into()),
                known_hosts: Some("host ssh-ed25519 AAAA".into()),
                user: "git".into(),
            }))
        );

        let https = GitCredentials::from_secret(&data(&[("username", "bot"), ("password", "tok")]));
        assert_eq!(
            https,
            Ok(GitCredentials::Https(Basic {
                username: "bot".into(),
                password: "tok".into(),
            }))
        );
        let default_user = GitCredentials::from_secret(&data(&[("password", "tok\r\n")]));
        assert_eq!(
            default_user,
            Ok(GitCredentials::Https(Basic {
                username: "git".into(),
                password: "tok".into(),
            }))
        );
    }

    #[test]
    fn what_is_missing_is_named() {
        let cases: [(&[(&str, &str)], &str); 5] = [
            (&[], "no usable credentials"),
            (
                &[("username", "bot"), ("password", "")],
                "no usable credentials",
            ),
            (
                &[("privateKey", "PEM"), ("installationID", "7")],
                "needs clientID or appID",
            ),
            (
                &[("privateKey", "PEM"), ("appID", "1")],
                "needs installationID",
            ),
            (&[("password", "a\nb")], "password holds a line break"),
        ];
        for (pairs, words) in cases {
            let why = GitCredentials::from_secret(&data(pairs)).expect_err(words);
            assert!(why.contains(words), "{why:?} does not say {words:?}");
        }
        let mut binary = data(&[]);
        binary.insert("password".into(), ByteString(vec![0xff, 0xfe]));
        assert_eq!(
            GitCredentials::from_secret(&binary),
            Err("password is not UTF-8 text".to_string())
        );
    }

    #[test]
    fn debug_output_holds_no_secret() {
        for credentials in [
            GitCredentials::from_secret(&data(&[("password", "hunter2")])),
            GitCredentials::from_secret(&data(&[("identity", "hunter2"), ("password", "pp")])),
            GitCredentials::from_secret(&data(&[
                ("privateKey", "hunter2"),
                ("appID", "1"),
                ("installationID", "2"),
            ])),
        ] {
            let shown = format!("{credentials:?}");
            assert!(
                !shown.contains("hunter2") && !shown.contains("pp\""),
                "{shown}"
            );
        }
    }

    #[test]
    fn the_helper_is_scoped_to_the_remote_host() {
        assert_eq!(
            origin_of("https://bot:x@Git.Example.com:8443/o/r.git"),
            Some("https://Git.Example.com:8443".to_string())
        );
        assert_eq!(
            origin_of("HTTP://127.0.0.1:9/r.git"),
            Some("http://127.0.0.1:9".to_string())
        );
        assert_eq!(origin_of("git@github.com:o/r.git"), None);
        assert_eq!(origin_of("ssh://git@github.com/o/r.git"), None);
        assert_eq!(origin_of("file:///srv/r.git"), None);
        assert_eq!(origin_of("https:///nohost"), None);
    }

    /// What `ssh` makes of the command we hand git, read back with `ssh -G` (which
    /// prints the effective configuration and connects nowhere).
    async fn effective_ssh_config(key: Option<&SshKey>) -> (String, PathBuf, tempfile::TempDir) {
        let work = tempfile::tempdir().expect("a temporary directory");
        let mut git = Git::new(work.path()).await.expect("a private area");
        let scratch = Scratch::new(&git, "git-clone").await.expect("scratch");
        ssh_command(&mut git, &scratch, key, Some("-G"))
            .await
            .expect("ssh command");
        let command = git
            .env_value("GIT_SSH_COMMAND")
            .expect("GIT_SSH_COMMAND is set");
        let output = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{command} example.com"))
            .output()
            .await
            .expect("sh runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let config = String::from_utf8_lossy(&output.stdout).into_owned();
        let dir = scratch.path().to_path_buf();
        (config, dir, work)
    }

    #[tokio::test]
    async fn an_ssh_key_is_the_only_identity_and_known_hosts_are_enforced() {
        let key = SshKey {
            identity: "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----"
                .into(),
            passphrase: None,
            known_hosts: Some("example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI".into()),
            user: "deploy".into(),
        };
        let (config, dir, _work) = effective_ssh_config(Some(&key)).await;
        let identity = dir.join("identity");
        for line in [
            "user deploy".to_string(),
            "identitiesonly yes".to_string(),
            format!("identityfile {}", identity.display()),
            "stricthostkeychecking true".to_string(),
            format!("userknownhostsfile {}", dir.join("known_hosts").display()),
            "globalknownhostsfile /dev/null".to_string(),
            "batchmode yes".to_string(),
            "identityagent none".to_string(),
        ] {
            assert!(
                config.lines().any(|l| l == line),
                "no {line:?} in\n{config}"
            );
        }
        use std::os::unix::fs::PermissionsExt as _;
        let meta = tokio::fs::metadata(&identity).await.expect("the key file");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let written = tokio::fs::read_to_string(&identity)
            .await
            .expect("readable");
        assert!(written.ends_with("-----END OPENSSH PRIVATE KEY-----\n"));
    }

    #[tokio::test]
    async fn without_known_hosts_a_new_host_is_accepted() {
        let key = SshKey {
            identity: "KEY\n".into(),
            passphrase: Some("it's a \\secret".into()),
            known_hosts: None,
            user: "git".into(),
        };
        let (config, dir, _work) = effective_ssh_config(Some(&key)).await;
        assert!(
            config
                .lines()
                .any(|l| l == "stricthostkeychecking accept-new"),
            "{config}"
        );
        assert!(config.lines().any(|l| l == "batchmode no"), "{config}");
        // The passphrase program prints the passphrase it is given, byte for byte.
        let output = tokio::process::Command::new(dir.join("askpass"))
            .arg("Enter passphrase for key:")
            .env_clear()
            .env("HECATE_SSH_PASSPHRASE", "it's a \\secret")
            .output()
            .await
            .expect("the askpass program runs");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "it's a \\secret\n");
    }

    #[tokio::test]
    async fn anonymous_ssh_never_prompts() {
        let (config, _, _work) = effective_ssh_config(None).await;
        for line in ["batchmode yes", "stricthostkeychecking accept-new"] {
            assert!(
                config.lines().any(|l| l == line),
                "no {line:?} in\n{config}"
            );
        }
        assert!(!config.lines().any(|l| l.starts_with("identitiesonly yes")));
    }

    #[tokio::test]
    async fn scratch_files_are_gone_after_the_step() {
        let work = tempfile::tempdir().expect("a temporary directory");
        let mut git = Git::new(work.path()).await.expect("a private area");
        let scratch = Scratch::new(&git, "git-push").await.expect("scratch");
        let key = SshKey {
            identity: "KEY".into(),
            passphrase: None,
            known_hosts: None,
            user: "git".into(),
        };
        ssh_command(&mut git, &scratch, Some(&key), None)
            .await
            .expect("ssh command");
        let dir = scratch.path().to_path_buf();
        assert!(
            tokio::fs::try_exists(dir.join("identity"))
                .await
                .expect("stat")
        );
        scratch.remove().await;
        assert!(!tokio::fs::try_exists(&dir).await.expect("stat"));
    }
}
