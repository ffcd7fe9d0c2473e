//! Reaching the cluster the way kubectl does, for every binary alike.

use std::path::PathBuf;

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
    if let Some(user) = &connection.impersonate {
        config.auth_info.impersonate = Some(user.clone());
    }
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
