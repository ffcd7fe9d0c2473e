//! Reaching the cluster the way kubectl does: kubeconfig, context, namespace,
//! impersonation — and who the cluster says the caller is.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cli::ClusterArgs;
use crate::failure::Failure;

/// A connection to one cluster, in one namespace.
pub(crate) struct Context {
    /// The client, as the caller (or whoever `--as` names).
    pub(crate) client: kube::Client,
    /// The namespace: `-n`, else the context's, else `default`.
    pub(crate) namespace: String,
    /// The API server's URL, to name it when it cannot be reached.
    pub(crate) server: String,
}

impl Context {
    /// Connects as kubectl would: `--kubeconfig`, else `$KUBECONFIG`, else
    /// `~/.kube/config`, else the in-cluster service account.
    pub(crate) async fn connect(args: &ClusterArgs) -> Result<Self, Failure> {
        let options = KubeConfigOptions {
            context: args.context.clone(),
            cluster: None,
            user: None,
        };
        let config = match (&args.kubeconfig, &args.context) {
            (Some(path), _) => match Kubeconfig::read_from(path) {
                Ok(kubeconfig) => kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            },
            (None, Some(_)) => kube::Config::from_kubeconfig(&options)
                .await
                .map_err(|e| e.to_string()),
            (None, None) => kube::Config::infer().await.map_err(|e| e.to_string()),
        };
        let mut config = config.map_err(|e| {
            Failure::unreachable(format!("no usable Kubernetes configuration: {e}"))
        })?;
        if let Some(user) = &args.impersonate {
            config.auth_info.impersonate = Some(user.clone());
        }
        let namespace = args
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| {
            Failure::unreachable(format!("cannot set up a client for {server}: {e}"))
        })?;
        Ok(Self {
            client,
            namespace,
            server,
        })
    }

    /// Who the cluster says the caller is (a SelfSubjectReview): the actor every write
    /// records. Never a name the caller merely claims.
    pub(crate) async fn whoami(&self) -> Result<String, Failure> {
        let review = Api::<SelfSubjectReview>::all(self.client.clone())
            .create(&PostParams::default(), &SelfSubjectReview::default())
            .await
            .map_err(|e| Failure::from_kube(&self.server, "asking the cluster who you are", e))?;
        review
            .status
            .and_then(|s| s.user_info)
            .and_then(|u| u.username)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| {
                Failure::could_not_tell(
                    "the cluster did not say who you are; writes must record an actor",
                )
            })
    }
}
