//! The settings page's reads and writes (surfaces spec §2.9–2.10), over the server's
//! own client: the Fides servers and clusters the readable Gates use, each probed;
//! the role grants; connecting a cluster; a Gate's evidence settings. What a probe's
//! answer means and what a write may say is [`crate::rules::settings`]'.
//!
//! The caller's access is the surface's to check first: these calls act with the
//! identity `Ops` was built with.

use std::collections::BTreeMap;
use std::time::Duration;

use hecate_types::Gate;
use hecate_types::secrets::{self, SecretUse};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kube::api::{Api, ListParams, ObjectMeta, PostParams};

use crate::error::{Error, Kind, Result};
use crate::ops::Ops;
use crate::rules::settings::{
    self as rules, CLUSTER_LABEL, CREATED_BY, ClusterProbe, GRANTABLE_ROLES, GRANTED_BY,
    KUBECONFIG_KEY, MANAGED_BY, Uses,
};
pub use crate::rules::settings::{
    ClusterConnected, ConnectedCluster, EvidenceSet, EvidenceUpdate, FidesServer, Grant,
    GrantRequest, Granted, Grants, HomeCluster, Settings, SettingsIdentity, Telemetry,
};

/// How long a Fides server has to answer a probe.
pub const FIDES_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a cluster has to connect, and to answer each read, in a probe.
pub const CLUSTER_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a cluster probe may take in all.
pub const CLUSTER_PROBE_LIMIT: Duration = Duration::from_secs(8);

/// Where the server runs, as its environment says: read once per request by the
/// surface, passed in so tests can say it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub otlp_endpoint: String,
    /// `KUBERNETES_SERVICE_HOST`.
    pub service_host: String,
    /// `KUBERNETES_SERVICE_PORT`.
    pub service_port: String,
    /// The service account's namespace file's contents.
    pub namespace: String,
}

impl Environment {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        Self {
            otlp_endpoint: var("OTEL_EXPORTER_OTLP_ENDPOINT"),
            service_host: var("KUBERNETES_SERVICE_HOST"),
            service_port: var("KUBERNETES_SERVICE_PORT"),
            namespace: std::fs::read_to_string(
                "/var/run/secrets/kubernetes.io/serviceaccount/namespace",
            )
            .unwrap_or_default(),
        }
    }
}

impl Ops {
    /// The settings `identity` sees: in each of `namespaces` (those they may read),
    /// the Gates' Fides servers and clusters, and the Secrets labelled
    /// `hecate.dev/cluster=true` — each server and cluster probed, all at once.
    /// Two LISTs per namespace (a Secret list that fails is skipped), a GET per
    /// cluster Secret a Gate names that the list did not hold, a probe per server and
    /// cluster.
    pub async fn settings(
        &self,
        namespaces: &[String],
        identity: SettingsIdentity,
        version: &str,
        environment: &Environment,
    ) -> Result<Settings> {
        let mut uses = Uses::default();
        let mut secrets: BTreeMap<String, Secret> = BTreeMap::new();
        for namespace in namespaces {
            let gates: Vec<Gate> = self.gates(namespace).await?;
            uses.add(namespace, &gates);
            let labelled = Api::<Secret>::namespaced(self.client(), namespace)
                .list(
                    &ListParams::default()
                        .labels(&format!("{}={}", CLUSTER_LABEL.0, CLUSTER_LABEL.1)),
                )
                .await;
            match labelled {
                Ok(list) => {
                    for secret in list.items {
                        let name = secret.metadata.name.clone().unwrap_or_default();
                        uses.add_cluster_secret(namespace, &name);
                        secrets.insert(format!("{namespace}/{name}"), secret);
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, namespace, "listing cluster Secrets; skipped");
                }
            }
        }
        let fides = futures::future::join_all(uses.fides.into_iter().map(
            |(url, (gates, environments))| async move {
                let probed = match hecate_fides::probe(&url, FIDES_PROBE_TIMEOUT).await {
                    hecate_fides::Probe::Answered { status, line } => {
                        rules::FidesProbe::Answered { status, line }
                    }
                    hecate_fides::Probe::Failed(why) => {
                        rules::FidesProbe::Failed(hecate_types::error_chain(&why))
                    }
                };
                let (reachable, detail) = rules::fides_reachability(&probed);
                FidesServer {
                    server_url: url,
                    gates: gates.into_iter().collect(),
                    environments: rules::dedupe(environments),
                    reachable,
                    detail,
                }
            },
        ))
        .await;
        let clusters = futures::future::join_all(uses.clusters.into_iter().map(|(key, gates)| {
            let listed = secrets.remove(&key);
            async move {
                let probed = self.probe_cluster(&key, listed).await;
                let (reachable, detail) = rules::cluster_reachability(&probed);
                ConnectedCluster {
                    secret: key,
                    gates: gates.into_iter().collect(),
                    reachable,
                    detail,
                }
            }
        }))
        .await;
        Ok(Settings {
            version: version.to_string(),
            identity,
            fides,
            clusters,
            telemetry: rules::telemetry(&environment.otlp_endpoint),
            home: rules::home_cluster(
                &environment.service_host,
                &environment.service_port,
                &environment.namespace,
            ),
        })
    }

    /// Probes the cluster the Secret `ns/name` (`listed`, when the list held it)
    /// holds a kubeconfig for: its version, asked with those credentials.
    async fn probe_cluster(&self, key: &str, listed: Option<Secret>) -> ClusterProbe {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let secret = match listed {
            Some(secret) => secret,
            None => {
                match Api::<Secret>::namespaced(self.client(), namespace)
                    .get(name)
                    .await
                {
                    Ok(secret) => secret,
                    Err(error) => {
                        return ClusterProbe::SecretUnreadable(crate::error::in_words(&error));
                    }
                }
            }
        };
        // A Gate's `clusterRef` may name any Secret of its namespace: it is used as a
        // kubeconfig only once it opts in, as the controller's checks require.
        if let Err(why) = secrets::judge(
            namespace,
            name,
            secret.metadata.labels.as_ref(),
            SecretUse::Kubeconfig,
        ) {
            return ClusterProbe::NotOptedIn(why);
        }
        // The keys Flux reads (`value`, then `value.yaml`): a connected cluster is any
        // Secret a Gate's `clusterRef` could name without a `key`.
        let Some(kubeconfig) = secret
            .data
            .as_ref()
            .and_then(|data| crate::kubeconfig::pick(data, None).ok())
        else {
            return ClusterProbe::NoKubeconfig;
        };
        let probe = probe_kubeconfig(kubeconfig, self.kubeconfig_exec());
        match tokio::time::timeout(CLUSTER_PROBE_LIMIT, probe).await {
            Ok(probed) => probed,
            Err(_) => ClusterProbe::Failed(format!(
                "the cluster did not answer within {}s",
                CLUSTER_PROBE_LIMIT.as_secs()
            )),
        }
    }

    /// Every subject bound, cluster-wide, to a role Hecate grants: one row per
    /// subject, by role, kind and subject. One LIST.
    pub async fn grants(&self) -> Result<Grants> {
        let bindings = Api::<ClusterRoleBinding>::all(self.client())
            .list(&ListParams::default())
            .await
            .map_err(Error::kubernetes("listing ClusterRoleBindings"))?;
        let mut grants: Vec<Grant> = bindings
            .items
            .into_iter()
            .filter(|binding| {
                binding.role_ref.kind == "ClusterRole"
                    && GRANTABLE_ROLES.contains(&binding.role_ref.name.as_str())
            })
            .flat_map(|binding| {
                let name = binding.metadata.name.clone().unwrap_or_default();
                let granted_by = binding
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(GRANTED_BY))
                    .cloned()
                    .unwrap_or_default();
                let role = binding.role_ref.name.clone();
                binding
                    .subjects
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |subject| Grant {
                        binding: name.clone(),
                        role: role.clone(),
                        subject: match subject.namespace.filter(|n| !n.is_empty()) {
                            Some(namespace) => format!("{namespace}/{}", subject.name),
                            None => subject.name,
                        },
                        kind: subject.kind,
                        granted_by: granted_by.clone(),
                    })
            })
            .collect();
        grants.sort_by(|a, b| {
            (&a.role, &a.kind, &a.subject, &a.binding)
                .cmp(&(&b.role, &b.kind, &b.subject, &b.binding))
        });
        Ok(Grants { grants })
    }

    /// Binds `grant`'s role to its subject cluster-wide, recording `actor` as who
    /// granted it; a binding of that name already there is left as it is
    /// (`created: false`).
    pub async fn grant(&self, grant: &GrantRequest, actor: &str) -> Result<Granted> {
        let name = grant.binding();
        let binding = ClusterRoleBinding {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(MANAGED_BY.0.into(), MANAGED_BY.1.into())].into()),
                annotations: Some([(GRANTED_BY.into(), actor.into())].into()),
                ..ObjectMeta::default()
            },
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: grant.role.into(),
            },
            subjects: Some(vec![Subject {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: grant.kind.as_str().into(),
                name: grant.subject.clone(),
                ..Subject::default()
            }]),
        };
        match Api::<ClusterRoleBinding>::all(self.client())
            .create(&PostParams::default(), &binding)
            .await
        {
            Ok(_) => Ok(Granted {
                binding: name,
                created: true,
            }),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Granted {
                binding: name,
                created: false,
            }),
            Err(error) => Err(Error::kubernetes(format!(
                "creating ClusterRoleBinding {name}"
            ))(error)),
        }
    }

    /// Stores `kubeconfig` as the connected cluster `name` in `namespace` (an Opaque
    /// Secret labelled `hecate.dev/cluster=true`, `actor` recorded as who connected
    /// it); an existing Secret of that name has its kubeconfig replaced (rotation,
    /// `created: false`). Call [`rules::check_cluster`] first.
    pub async fn connect_cluster(
        &self,
        namespace: &str,
        name: &str,
        kubeconfig: &str,
        actor: &str,
    ) -> Result<ClusterConnected> {
        let secrets = Api::<Secret>::namespaced(self.client(), namespace);
        let value = ByteString(kubeconfig.as_bytes().to_vec());
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(
                    [
                        (MANAGED_BY.0.into(), MANAGED_BY.1.into()),
                        (CLUSTER_LABEL.0.into(), CLUSTER_LABEL.1.into()),
                    ]
                    .into(),
                ),
                annotations: Some([(CREATED_BY.into(), actor.into())].into()),
                ..ObjectMeta::default()
            },
            type_: Some("Opaque".into()),
            data: Some([(KUBECONFIG_KEY.into(), value.clone())].into()),
            ..Secret::default()
        };
        let connected = |created| ClusterConnected {
            secret: format!("{namespace}/{name}"),
            created,
        };
        match secrets.create(&PostParams::default(), &secret).await {
            Ok(_) => return Ok(connected(true)),
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => {
                return Err(Error::kubernetes(format!(
                    "creating Secret {namespace}/{name}"
                ))(error));
            }
        }
        // Rotation: only the kubeconfig changes (a merge patch: nothing read, nothing
        // else overwritten).
        let patch = serde_json::json!({"data": {KUBECONFIG_KEY: value}});
        secrets
            .patch(
                name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .map_err(Error::kubernetes(format!(
                "replacing the kubeconfig in Secret {namespace}/{name}"
            )))?;
        Ok(connected(false))
    }

    /// Writes `update` into Gate `namespace/name`'s `spec.evidence` (an update
    /// conditional on the version read, read again on a conflict). Call
    /// [`EvidenceUpdate::check`] first.
    pub async fn set_gate_evidence(
        &self,
        namespace: &str,
        name: &str,
        update: &EvidenceUpdate,
    ) -> Result<EvidenceSet> {
        let gates = self.api::<Gate>(namespace);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut gate: Gate = self.get(Kind::Gate, namespace, name).await?;
            update.apply(&mut gate.spec);
            gate.metadata.managed_fields = None;
            match gates.replace(name, &PostParams::default(), &gate).await {
                Ok(_) => {
                    return Ok(EvidenceSet {
                        gate: format!("{namespace}/{name}"),
                        note: rules::EVIDENCE_NOTE.into(),
                    });
                }
                Err(kube::Error::Api(status)) if status.code == 409 && attempt < 5 => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    return Err(Error::NotFound {
                        kind: Kind::Gate,
                        namespace: namespace.into(),
                        name: name.into(),
                    });
                }
                Err(error) => {
                    return Err(Error::kubernetes(format!(
                        "updating Gate {namespace}/{name}'s evidence settings"
                    ))(error));
                }
            }
        }
    }
}

/// Asks the cluster a kubeconfig describes for its version, with its credentials.
async fn probe_kubeconfig(kubeconfig: &[u8], exec: crate::kubeconfig::Exec) -> ClusterProbe {
    let timeout = CLUSTER_PROBE_TIMEOUT;
    let client = match crate::kubeconfig::connect(kubeconfig, timeout, timeout, exec).await {
        Ok(connection) => connection.client,
        Err(why) => return ClusterProbe::Unusable(why),
    };
    match client.apiserver_version().await {
        Ok(_) => ClusterProbe::Answered,
        Err(kube::Error::Api(status)) => ClusterProbe::Refused(status.code, status.message),
        Err(error) => ClusterProbe::Failed(hecate_types::error_chain(&error)),
    }
}
