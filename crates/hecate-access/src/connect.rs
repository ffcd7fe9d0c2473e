//! Reaching the cluster the way kubectl does, for every binary alike.

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// Where and as whom to connect: each field overrides what the environment says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connection {
    /// A kubeconfig file; else `$KUBECONFIG`, else `~/.kube/config`, else in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// A context of the kubeconfig; else its current one.
    pub context: Option<String>,
    /// The namespace; else the context's, else `default`.
    pub namespace: Option<String>,
    /// A user to impersonate (`--as`).
    pub impersonate: Option<String>,
    /// Groups to impersonate with that user (`--as-group`, kubectl's; they need a
    /// user).
    pub impersonate_groups: Vec<String>,
    /// How long one request may take, connecting included (`--request-timeout`);
    /// `None`: the client's own limits.
    pub request_timeout: Option<Duration>,
}

/// A client, and what it was set up with.
pub struct Connected {
    /// The client.
    pub client: kube::Client,
    /// The namespace a call naming none acts in.
    pub namespace: String,
    /// The API server's URL, to name it when it cannot be reached.
    pub server: String,
}

/// Why no client could be set up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No kubeconfig (or in-cluster configuration) could be read or used.
    #[error("no usable Kubernetes configuration: {0}")]
    Config(String),
    /// Groups to impersonate without a user to impersonate them with.
    #[error("--as-group needs --as: groups are impersonated with a user")]
    GroupsWithoutUser,
    /// The configuration was read, but a client could not be built from it.
    #[error("cannot set up a client for {server}: {message}")]
    Client {
        /// The API server's URL.
        server: String,
        /// Why not.
        message: String,
    },
}

/// Connects as kubectl would: `kubeconfig`, else `$KUBECONFIG`, else `~/.kube/config`,
/// else the in-cluster service account; in `context`, else the current one.
pub async fn connect(connection: &Connection) -> Result<Connected, ConnectError> {
    if connection.impersonate.is_none() && !connection.impersonate_groups.is_empty() {
        return Err(ConnectError::GroupsWithoutUser);
    }
    let options = KubeConfigOptions {
        context: connection.context.clone(),
        cluster: None,
        user: None,
    };
    let config = match (&connection.kubeconfig, &connection.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| {
                ConnectError::Config(format!("cannot read {}: {e}", path.display()))
            })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| e.to_string())
        }
        (None, Some(_)) => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| e.to_string()),
        (None, None) => kube::Config::infer().await.map_err(|e| e.to_string()),
    };
    let mut config = config.map_err(ConnectError::Config)?;
    configure(&mut config, connection);
    let namespace = connection
        .namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|e| ConnectError::Client {
        server: server.clone(),
        message: e.to_string(),
    })?;
    Ok(Connected {
        client,
        namespace,
        server,
    })
}

/// What `connection` says on top of the kubeconfig: whom to impersonate, and how long
/// a request may take.
fn configure(config: &mut kube::Config, connection: &Connection) {
    if let Some(user) = &connection.impersonate {
        config.auth_info.impersonate = Some(user.clone());
        if !connection.impersonate_groups.is_empty() {
            config.auth_info.impersonate_groups = Some(connection.impersonate_groups.clone());
        }
    }
    if let Some(limit) = connection.request_timeout {
        config.connect_timeout = Some(limit);
        config.read_timeout = Some(limit);
        config.write_timeout = Some(limit);
        // The limit counts from when a request is sent, not from when its pooled
        // connection went idle.
        config.reset_reader_on_write = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> kube::Config {
        kube::Config::new("https://127.0.0.1:6443".parse().expect("a URL"))
    }

    #[test]
    fn impersonation_and_the_request_timeout_reach_the_client_configuration() {
        let mut plain = config();
        configure(&mut plain, &Connection::default());
        assert_eq!(plain.auth_info.impersonate, None);
        assert_eq!(plain.read_timeout, config().read_timeout);

        let mut as_bob = config();
        configure(
            &mut as_bob,
            &Connection {
                impersonate: Some("bob".into()),
                impersonate_groups: vec!["release-managers".into(), "sre".into()],
                request_timeout: Some(Duration::from_secs(5)),
                ..Connection::default()
            },
        );
        assert_eq!(as_bob.auth_info.impersonate.as_deref(), Some("bob"));
        assert_eq!(
            as_bob.auth_info.impersonate_groups,
            Some(vec!["release-managers".to_string(), "sre".to_string()])
        );
        let five = Some(Duration::from_secs(5));
        assert_eq!(
            (
                as_bob.connect_timeout,
                as_bob.read_timeout,
                as_bob.write_timeout
            ),
            (five, five, five)
        );
    }

    #[tokio::test]
    async fn groups_without_a_user_are_refused_before_anything_is_read() {
        let refused = connect(&Connection {
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
            impersonate_groups: vec!["sre".into()],
            ..Connection::default()
        })
        .await
        .err()
        .expect("refused");
        assert!(
            matches!(refused, ConnectError::GroupsWithoutUser),
            "{refused}"
        );
        assert_eq!(
            refused.to_string(),
            "--as-group needs --as: groups are impersonated with a user"
        );
    }
}
