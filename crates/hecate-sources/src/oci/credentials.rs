//! Registry credentials from a `credentialsRef` Secret (spec controller.md §1.5), for
//! Beacons' image and OCI chart watches and for `oci-push` / `oci-pull`: a
//! `.dockerconfigjson` whose `auths` entry matches the repository or its host, or
//! `username` + `password` for any registry.
//!
//! Secrets are read with a direct GET each time (no cluster-wide Secret cache), and
//! their values never reach a message, a log line or a process argument.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;

use super::{Error, Repository};
pub use crate::secrets::SecretData;
use crate::secrets::{read, text};

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

/// What Secret `name` in `namespace` holds for `repo` (as written, e.g.
/// `ghcr.io/acme/api`): [`registry`] over a fresh read. A Secret that cannot be read
/// or holds nothing usable is [`super::ErrorKind::Invalid`].
pub async fn for_repository(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    repo: &str,
    repository: &Repository,
) -> Result<Option<Basic>, Error> {
    let data = read(client, namespace, name)
        .await
        .map_err(Error::invalid)?;
    registry(name, &data, repo, &repository.registry)
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
/// user writes it, e.g. `ghcr.io/acme/api`) on registry `host` (`ghcr.io`): the
/// `.dockerconfigjson` entry for the repository or its host, else `username` +
/// `password`. `None`: the config has no entry for this registry (anonymous).
pub fn registry(
    name: &str,
    data: &SecretData,
    repo: &str,
    host: &str,
) -> Result<Option<Basic>, Error> {
    if let Some(json) = data.get(".dockerconfigjson") {
        // serde's words quote the value they met ("invalid type: string \"…\""):
        // only where, never what (DECISION 146).
        let config: DockerConfig = serde_json::from_slice(&json.0).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Data => "not a Docker config",
                _ => "not JSON",
            };
            Error::invalid(format!(
                "Secret {name}: .dockerconfigjson is {what} (at line {}, column {})",
                e.line(),
                e.column()
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
            None => Err(Error::invalid(format!(
                "Secret {name}: the .dockerconfigjson entry for {host} has no usable auth"
            ))),
        };
    }
    match (text(data, "username"), text(data, "password")) {
        (Some(username), Some(password)) => Ok(Some(Basic { username, password })),
        _ => Err(Error::invalid(format!(
            "Secret {name} holds no registry credentials: set .dockerconfigjson, or \
             username and password"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::secrets::data_of as data;

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
        for unusable in [
            data(&[("username", "a")]),
            data(&[(".dockerconfigjson", "{")]),
            data(&[(
                ".dockerconfigjson",
                r#"{"auths": {"any.io": {"auth": "bm8tY29sb24="}}}"#,
            )]),
        ] {
            let error = registry("s", &unusable, "any.io/x", "any.io").expect_err("unusable");
            assert_eq!(error.kind, super::super::ErrorKind::Invalid);
        }
    }

    /// serde quotes the value it met; the Secret's text is never repeated.
    #[test]
    fn a_config_that_cannot_be_read_is_said_without_its_text() {
        for (config, said) in [
            (
                r#""TOPSECRET-1""#,
                "is not a Docker config (at line 1, column 13)",
            ),
            (
                r#"{"auths": "TOPSECRET-2"}"#,
                "is not a Docker config (at line 1, column 23)",
            ),
            ("TOPSECRET-3", "is not JSON (at line 1, column 1)"),
        ] {
            let error = registry(
                "s",
                &data(&[(".dockerconfigjson", config)]),
                "a.io/x",
                "a.io",
            )
            .expect_err("unusable");
            assert!(error.message.ends_with(said), "{config}: {}", error.message);
            assert!(!error.message.contains("TOPSECRET"), "{}", error.message);
        }
    }

    #[test]
    fn passwords_are_never_shown() {
        let basic = Basic {
            username: "bot".into(),
            password: "hunter2".into(),
        };
        assert_eq!(format!("{basic:?}"), "Basic(bot, ***)");
    }
}
