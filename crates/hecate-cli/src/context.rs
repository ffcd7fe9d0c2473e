//! Reaching the cluster the way kubectl does: kubeconfig, context, namespace,
//! impersonation — and who the cluster says the caller is.

use hecate_access::{ConnectError, Connection, connect};
use hecate_ops::Person;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, PostParams};

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
    /// Connects as kubectl would (hecate-access' [`connect`]): `--kubeconfig`, else
    /// `$KUBECONFIG`, else `~/.kube/config`, else the in-cluster service account.
    pub(crate) async fn connect(args: &ClusterArgs) -> Result<Self, Failure> {
        let connected = connect(&Connection {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.clone(),
            namespace: args.namespace.clone(),
            impersonate: args.impersonate.clone(),
            impersonate_groups: args.impersonate_groups.clone(),
            request_timeout: args.request_timeout(),
        })
        .await
        .map_err(|e| match e {
            ConnectError::GroupsWithoutUser => Failure::usage(e.to_string()),
            e => Failure::unreachable(e.to_string()),
        })?;
        Ok(Self {
            client: connected.client,
            namespace: connected.namespace,
            server: connected.server,
        })
    }

    /// Who the cluster says the caller is (a SelfSubjectReview), with the groups it
    /// says they are in: the actor every write records, and whom an approval policy
    /// counts. Never a name the caller merely claims.
    pub(crate) async fn whoami(&self) -> Result<Person, Failure> {
        let review = Api::<SelfSubjectReview>::all(self.client.clone())
            .create(&PostParams::default(), &SelfSubjectReview::default())
            .await
            .map_err(|e| Failure::from_kube(&self.server, "asking the cluster who you are", e))?;
        let user = review.status.and_then(|s| s.user_info).unwrap_or_default();
        let name = user.username.filter(|u| !u.is_empty()).ok_or_else(|| {
            Failure::could_not_tell(
                "the cluster did not say who you are; writes must record an actor",
            )
        })?;
        Ok(Person {
            name,
            groups: user.groups.unwrap_or_default(),
        })
    }
}
