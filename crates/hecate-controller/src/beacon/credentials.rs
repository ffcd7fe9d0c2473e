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
//! Registries (§1.5) are read by [`crate::oci::credentials`], the one reading the OCI
//! steps share; chart repositories take `username` + `password` ([`basic`]).
//!
//! Secrets are read with a direct GET each time (no cluster-wide Secret cache), and
//! their values never reach a message, a log line or a process argument.

use super::source::ResolveError;
use crate::oci::Basic;
pub use crate::secrets::SecretData;
use crate::secrets::text;
use crate::steps::git::{AppTokens, GitCredentials};

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

/// Reads Secret `name` in `namespace`.
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<SecretData, ResolveError> {
    crate::secrets::read(client, namespace, name)
        .await
        .map_err(ResolveError::failed)
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
    use k8s_openapi::ByteString;

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
