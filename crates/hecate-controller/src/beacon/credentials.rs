//! The credentials a Beacon's sources use, read from Secrets in the Beacon's namespace
//! (spec controller.md §1.5, §5.2).
//!
//! Git (§5.2) is read by the git steps' own reading of a `credentialsRef` Secret
//! ([`GitCredentials::from_secret`]: one reading for every git user, as the spec
//! requires) and turned here into what `git ls-remote` needs: nothing, or an HTTPS
//! user and password — a GitHub App's installation token (from the steps' shared
//! token cache) is such a password. SSH keys are refused as unsupported by Beacons for
//! now, never silently tried anonymously.
//!
//! Registries and chart repositories (§1.5): a `.dockerconfigjson` whose `auths` entry
//! matches the repository or its host, or `username` + `password` for any registry.
//!
//! Secrets are read with a direct GET each time (no cluster-wide Secret cache), and
//! their values never reach a message, a log line or a process argument.

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use serde::Deserialize;

use super::source::ResolveError;
use crate::steps::git::{AppTokens, GitCredentials};

/// A Secret's data, decoded.
pub type SecretData = BTreeMap<String, ByteString>;

/// How to authenticate to a Git remote.
#[derive(Clone, PartialEq, Eq)]
pub enum GitAuth {
    /// No credentials: anonymous, or whatever the remote lets anyone read.
    Anonymous,
    /// HTTP basic authentication.
    Basic {
        /// The user name.
        username: String,
        /// The password or token.
        password: String,
    },
}

impl std::fmt::Debug for GitAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Anonymous => f.write_str("Anonymous"),
            Self::Basic { username, .. } => write!(f, "Basic({username}, ***)"),
        }
    }
}

/// A registry user name and password.
#[derive(Clone, PartialEq, Eq)]
pub struct Basic {
    /// The user name.
    pub username: String,
    /// The password or token.
    pub password: String,
}

impl std::fmt::Debug for Basic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Basic({}, ***)", self.username)
    }
}

/// Reads Secret `name` in `namespace`.
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<SecretData, ResolveError> {
    match Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
    {
        Ok(Some(secret)) => Ok(secret.data.unwrap_or_default()),
        Ok(None) => Err(ResolveError::failed(format!(
            "credentials Secret {name} does not exist in namespace {namespace}"
        ))),
        Err(error) => Err(ResolveError::failed(format!(
            "reading credentials Secret {name}: {error}"
        ))),
    }
}

fn text(data: &SecretData, key: &str) -> Option<String> {
    data.get(key)
        .map(|v| {
            String::from_utf8_lossy(&v.0)
                .trim_end_matches(['\n', '\r'])
                .to_string()
        })
        .filter(|v| !v.is_empty())
}

/// What `git ls-remote` authenticates with, from Secret `name`'s `data`.
pub async fn git(name: &str, data: &SecretData, apps: &AppTokens) -> Result<GitAuth, ResolveError> {
    let credentials = GitCredentials::from_secret(data)
        .map_err(|why| ResolveError::failed(format!("credentials Secret {name}: {why}")))?;
    match credentials {
        GitCredentials::Anonymous => Ok(GitAuth::Anonymous),
        GitCredentials::Https(basic) => Ok(GitAuth::Basic {
            username: basic.username,
            password: basic.password,
        }),
        GitCredentials::GitHubApp(app) => match apps.token(&app).await {
            Ok(token) => Ok(GitAuth::Basic {
                username: "x-access-token".into(),
                password: token,
            }),
            Err(error) => Err(ResolveError::failed(format!(
                "credentials Secret {name}: no GitHub App token: {}",
                error.message
            ))),
        },
        GitCredentials::Ssh(_) => Err(ResolveError::unsupported(format!(
            "credentials Secret {name} holds an SSH key (identity), which Beacons do not \
             support yet; use an HTTPS URL with a token as password"
        ))),
    }
}

/// `.dockerconfigjson`'s shape.
#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, DockerAuth>,
}

#[derive(Deserialize)]
struct DockerAuth {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    auth: String,
}

/// Registry credentials from Secret `name`'s `data` for repository `repo` (as the
/// watch writes it, e.g. `ghcr.io/acme/api`) on registry `host` (`ghcr.io`): the
/// `.dockerconfigjson` entry for the repository or its host, else `username` +
/// `password`. `None`: the config has no entry for this registry (anonymous).
pub fn registry(
    name: &str,
    data: &SecretData,
    repo: &str,
    host: &str,
) -> Result<Option<Basic>, ResolveError> {
    if let Some(json) = data.get(".dockerconfigjson") {
        let config: DockerConfig = serde_json::from_slice(&json.0).map_err(|e| {
            ResolveError::failed(format!(
                "Secret {name}: .dockerconfigjson is not valid: {e}"
            ))
        })?;
        let entry = config.auths.iter().find_map(|(key, auth)| {
            let key = key
                .strip_prefix("https://")
                .or_else(|| key.strip_prefix("http://"))
                .unwrap_or(key)
                .trim_end_matches('/');
            // Docker Hub's entries are written for its old index.
            let key = match key {
                "index.docker.io/v1" | "index.docker.io" | "registry-1.docker.io" => "docker.io",
                key => key,
            };
            (key == repo || key == host).then_some(auth)
        });
        let Some(auth) = entry else {
            return Ok(None);
        };
        if !auth.username.is_empty() || !auth.password.is_empty() {
            return Ok(Some(Basic {
                username: auth.username.clone(),
                password: auth.password.clone(),
            }));
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.auth.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        return match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((username, password)) => Ok(Some(Basic {
                username: username.into(),
                password: password.into(),
            })),
            None => Err(ResolveError::failed(format!(
                "Secret {name}: the .dockerconfigjson entry for {host} has no usable auth"
            ))),
        };
    }
    match (text(data, "username"), text(data, "password")) {
        (Some(username), Some(password)) => Ok(Some(Basic { username, password })),
        _ => Err(ResolveError::failed(format!(
            "Secret {name} holds no registry credentials: set .dockerconfigjson, or \
             username and password"
        ))),
    }
}

/// Basic credentials for an HTTPS chart repository: `username` and/or `password`.
pub fn basic(name: &str, data: &SecretData) -> Result<Basic, ResolveError> {
    match (text(data, "username"), text(data, "password")) {
        (None, None) => Err(ResolveError::failed(format!(
            "Secret {name} holds neither username nor password"
        ))),
        (username, password) => Ok(Basic {
            username: username.unwrap_or_default(),
            password: password.unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::Class;
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> SecretData {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
            .collect()
    }

    #[tokio::test]
    async fn git_credentials_in_precedence() {
        let apps = AppTokens::default();
        assert_eq!(
            git(
                "s",
                &data(&[("username", "bot"), ("password", "tok\n")]),
                &apps
            )
            .await,
            Ok(GitAuth::Basic {
                username: "bot".into(),
                password: "tok".into()
            })
        );
        assert_eq!(
            git("s", &data(&[("password", "tok")]), &apps).await,
            Ok(GitAuth::Basic {
                username: "git".into(),
                password: "tok".into()
            })
        );
        let class =
            async |pairs: &[(&str, &str)]| git("s", &data(pairs), &apps).await.map_err(|e| e.class);
        assert_eq!(
            class(&[("identity", "k"), ("password", "p")]).await,
            Err(Class::Unsupported)
        );
        // A GitHub App Secret without its installation is a plain failure.
        assert_eq!(
            class(&[("privateKey", "k"), ("appID", "1")]).await,
            Err(Class::Failed)
        );
        assert_eq!(class(&[("username", "bot")]).await, Err(Class::Failed));
        assert_eq!(class(&[]).await, Err(Class::Failed));
        // The password never appears in a debug rendering.
        let shown = format!(
            "{:?}",
            git("s", &data(&[("password", "hunter2")]), &apps).await
        );
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn registry_credentials() {
        let config = r#"{"auths": {
            "https://ghcr.io": {"auth": "Ym90OnRvaw=="},
            "registry.example.com/team/app": {"username": "u", "password": "p"}
        }}"#;
        let secret = data(&[(".dockerconfigjson", config)]);
        let basic = |username: &str, password: &str| {
            Ok(Some(Basic {
                username: username.into(),
                password: password.into(),
            }))
        };
        assert_eq!(
            registry("s", &secret, "ghcr.io/acme/api", "ghcr.io"),
            basic("bot", "tok")
        );
        assert_eq!(
            registry(
                "s",
                &secret,
                "registry.example.com/team/app",
                "registry.example.com"
            ),
            basic("u", "p")
        );
        assert_eq!(
            registry(
                "s",
                &secret,
                "registry.example.com/other",
                "registry.example.com"
            ),
            Ok(None)
        );
        assert_eq!(registry("s", &secret, "nginx", "docker.io"), Ok(None));
        let hub = data(&[(
            ".dockerconfigjson",
            r#"{"auths": {"https://index.docker.io/v1/": {"username": "me", "password": "pw"}}}"#,
        )]);
        assert_eq!(registry("s", &hub, "nginx", "docker.io"), basic("me", "pw"));
        assert_eq!(
            registry(
                "s",
                &data(&[("username", "a"), ("password", "b")]),
                "any.io/x",
                "any.io"
            ),
            basic("a", "b")
        );
        assert!(registry("s", &data(&[("username", "a")]), "any.io/x", "any.io").is_err());
        assert!(
            registry(
                "s",
                &data(&[(".dockerconfigjson", "{")]),
                "any.io/x",
                "any.io"
            )
            .is_err()
        );
    }

    #[test]
    fn chart_repository_credentials() {
        assert!(basic("s", &data(&[])).is_err());
        assert_eq!(
            basic("s", &data(&[("password", "p")])),
            Ok(Basic {
                username: String::new(),
                password: "p".into()
            })
        );
    }
}
