//! The settings page's rules, pure: what a probe's answer means, which roles a grant
//! may grant and what its binding is called, what a settings write may say, and the
//! shapes the settings answers take (surfaces spec §2.9–2.10).
//!
//! `crate::settings` fetches, probes and writes; this module decides.

use std::collections::{BTreeMap, BTreeSet};

use hecate_types::names::is_dns_subdomain;
use hecate_types::{Gate, GateSpec, LocalSecretRef};
use kube::ResourceExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The roles a grant may bind: the people's roles the chart ships, except
/// `hecate-poker` (a CI identity's role, bound by whoever installs the CI).
pub const GRANTABLE_ROLES: [&str; 4] = [
    "hecate-viewer",
    "hecate-promoter",
    "hecate-approver",
    "hecate-flux-operator",
];

/// The label on what the settings writes create.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "hecate");
/// The label that marks a Secret as a connected cluster's kubeconfig (which opts it in
/// as one, DECISION 147).
pub const CLUSTER_LABEL: (&str, &str) = (hecate_types::wellknown::LABEL_CLUSTER, "true");
/// Who granted a role (on the ClusterRoleBinding).
pub const GRANTED_BY: &str = "hecate.dev/granted-by";
/// Who connected a cluster (on the Secret).
pub const CREATED_BY: &str = "hecate.dev/created-by";
/// The Secret key holding a connected cluster's kubeconfig.
pub const KUBECONFIG_KEY: &str = "value";

/// What the settings page shows: who is asking, the Fides servers and clusters the
/// readable Gates use (each probed), telemetry and where Hecate runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The server's build.
    pub version: String,
    /// The caller, as the cluster knows them.
    pub identity: SettingsIdentity,
    /// Each Fides server a readable Gate names, by URL.
    pub fides: Vec<FidesServer>,
    /// Each connected cluster (a Secret), by `namespace/name`.
    pub clusters: Vec<ConnectedCluster>,
    /// Where traces go.
    pub telemetry: Telemetry,
    /// The cluster Hecate itself runs in.
    pub home: HomeCluster,
}

/// The caller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct SettingsIdentity {
    /// Their username.
    pub name: String,
    /// Their groups; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// A Fides server, the Gates that use it, and whether it answers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FidesServer {
    /// Its URL, as the Gates name it.
    #[serde(rename = "serverURL")]
    pub server_url: String,
    /// `namespace/gate`, sorted.
    pub gates: Vec<String>,
    /// The Fides environments those Gates check against, sorted, each once; absent
    /// when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<String>,
    /// Whether it answered (any answer below 500, a 401 included).
    pub reachable: bool,
    /// Why not; absent when it answered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// A connected cluster: a Secret holding a kubeconfig, the Gates that watch through
/// it, and whether it answers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ConnectedCluster {
    /// `namespace/name` of the Secret.
    pub secret: String,
    /// `namespace/gate` of the Gates whose watch names it, sorted; empty when none.
    pub gates: Vec<String>,
    /// Whether the cluster answered with these credentials.
    pub reachable: bool,
    /// What went wrong, in words; absent when it answered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Where traces go: `OTEL_EXPORTER_OTLP_ENDPOINT`, only reported.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Telemetry {
    /// The endpoint; absent when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// Whether one is set.
    pub configured: bool,
}

/// The cluster Hecate runs in, when it runs in one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HomeCluster {
    /// Whether Hecate runs inside a cluster.
    pub in_cluster: bool,
    /// The in-cluster API server, `https://host:port`; absent outside one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
    /// The namespace Hecate runs in; absent when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// One subject bound to a grantable role.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The ClusterRoleBinding.
    pub binding: String,
    /// The role it binds.
    pub role: String,
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// Who (a ServiceAccount as `namespace/name`).
    pub subject: String,
    /// Who granted it through Hecate; absent when it was bound some other way.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub granted_by: String,
}

/// `{"grants": [...]}`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct Grants {
    /// Every subject bound to a grantable role, by role, kind and subject.
    pub grants: Vec<Grant>,
}

/// What a grant did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct Granted {
    /// The ClusterRoleBinding's name.
    pub binding: String,
    /// Whether it was created now (`false`: it existed already).
    pub created: bool,
}

/// What connecting a cluster did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ClusterConnected {
    /// `namespace/name` of the Secret.
    pub secret: String,
    /// Whether it was created now (`false`: its kubeconfig was replaced).
    pub created: bool,
}

/// What setting a Gate's evidence did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct EvidenceSet {
    /// `namespace/name` of the Gate.
    pub gate: String,
    /// What to keep in mind.
    pub note: String,
}

/// The note every evidence write answers with.
pub const EVIDENCE_NOTE: &str = "the Gate's evidence settings are changed in the cluster; if the Gate is applied from git (Flux), Flux will restore it: change it in git too";

/// A subject's kind in a grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubjectKind {
    /// A person.
    User,
    /// A group of people.
    Group,
}

impl SubjectKind {
    /// As RBAC spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "User",
            Self::Group => "Group",
        }
    }
}

/// A grant, checked: a role on the list, a subject, a kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantRequest {
    /// Who.
    pub subject: String,
    /// A user or a group.
    pub kind: SubjectKind,
    /// One of [`GRANTABLE_ROLES`].
    pub role: &'static str,
}

impl GrantRequest {
    /// Checks a grant as asked: the subject non-blank (trimmed), the kind `User`,
    /// `Group` or empty (a user), the role one of [`GRANTABLE_ROLES`]. The refusal
    /// says what is wrong.
    pub fn check(subject: &str, kind: &str, role: &str) -> Result<Self, String> {
        let role = GRANTABLE_ROLES
            .into_iter()
            .find(|r| *r == role)
            .ok_or_else(|| {
                format!(
                    "{} is not a role Hecate grants; one of: {}",
                    shown(role),
                    GRANTABLE_ROLES.join(", ")
                )
            })?;
        let kind = match kind {
            "" | "User" => SubjectKind::User,
            "Group" => SubjectKind::Group,
            other => {
                return Err(format!(
                    "{} is not a subject kind; User or Group",
                    shown(other)
                ));
            }
        };
        let subject = subject.trim();
        if subject.is_empty() {
            return Err("a grant needs a subject: the user or group to grant the role to".into());
        }
        if subject.chars().count() > 253 || subject.chars().any(|c| c.is_ascii_control()) {
            return Err("the subject is not a user or group name".into());
        }
        Ok(Self {
            subject: subject.to_string(),
            kind,
            role,
        })
    }

    /// The binding's name: [`binding_name`].
    pub fn binding(&self) -> String {
        binding_name(self.role, self.kind.as_str(), &self.subject)
    }
}

/// `<role>-<kind>-<subject>`, lower-case, every character outside `a-z0-9-` of the
/// subject a `-`, cut to 253 characters, without `-` at either end: one name per
/// role and subject, so granting twice finds the first binding.
pub fn binding_name(role: &str, kind: &str, subject: &str) -> String {
    let subject: String = subject
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '-' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    let name = format!("{role}-{}-{subject}", kind.to_lowercase());
    let cut: String = name.chars().take(253).collect();
    cut.trim_matches('-').to_string()
}

/// A client's value in a refusal: quoted, and short.
fn shown(value: &str) -> String {
    let short: String = value.chars().take(64).collect();
    format!("{short:?}")
}

/// A cluster connection, checked: a Secret name and a kubeconfig (whose contents
/// are not judged: the probe will say whether it works).
pub fn check_cluster(name: &str, kubeconfig: &str) -> Result<(), String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("a cluster needs a name: the Secret that will hold its kubeconfig".into());
    }
    if !is_dns_subdomain(name) {
        return Err(format!(
            "{} is not a Secret name (lower-case letters, digits, '-' and '.')",
            shown(name)
        ));
    }
    if kubeconfig.trim().is_empty() {
        return Err("a cluster needs a kubeconfig".into());
    }
    Ok(())
}

/// A Gate's evidence settings as a write asks them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvidenceUpdate {
    /// The Fides server; empty: the one the controller is configured with.
    pub server_url: String,
    /// The Fides environment's UUID.
    pub fides_environment: String,
    /// The Secret with the Fides API key; empty leaves the Gate's as it is.
    pub credentials_ref: String,
}

impl EvidenceUpdate {
    /// Checks it: an environment that is a UUID (the CRD allows nothing else), a
    /// server URL that is http or https when given, a Secret name when given.
    pub fn check(self) -> Result<Self, String> {
        let update = Self {
            server_url: self.server_url.trim().to_string(),
            fides_environment: self.fides_environment.trim().to_string(),
            credentials_ref: self.credentials_ref.trim().to_string(),
        };
        if update.fides_environment.is_empty() {
            return Err("fidesEnvironment is required: the Fides environment's UUID".into());
        }
        if !is_uuid(&update.fides_environment) {
            return Err(format!(
                "fidesEnvironment {} is not a UUID",
                shown(&update.fides_environment)
            ));
        }
        let url = &update.server_url;
        if !url.is_empty()
            && (!(url.starts_with("https://") || url.starts_with("http://"))
                || url.chars().count() > 2048
                || url
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_ascii_control()))
        {
            return Err(format!(
                "serverURL {} is not an http or https URL",
                shown(url)
            ));
        }
        if !update.credentials_ref.is_empty() && !is_dns_subdomain(&update.credentials_ref) {
            return Err(format!(
                "credentialsRef {} is not a Secret name",
                shown(&update.credentials_ref)
            ));
        }
        Ok(update)
    }

    /// Writes it into `spec.evidence`: the environment and the server (even when
    /// empty) set, the credentials' Secret set only when named.
    pub fn apply(&self, spec: &mut GateSpec) {
        let evidence = spec.evidence.get_or_insert_with(Default::default);
        evidence
            .fides_environment
            .clone_from(&self.fides_environment);
        evidence.server_url.clone_from(&self.server_url);
        if !self.credentials_ref.is_empty() {
            evidence.credentials_ref = Some(LocalSecretRef {
                name: self.credentials_ref.clone(),
            });
        }
    }
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// What a Fides probe saw (hecate-ops asks Fides' client and hands the answer here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FidesProbe {
    /// The server answered: the status code and its status line.
    Answered {
        /// The status code.
        status: u16,
        /// The code and its reason phrase, e.g. `503 Service Unavailable`.
        line: String,
    },
    /// No answer, with why (the error and its causes, in words).
    Failed(String),
}

/// What a Fides probe means: any answer below 500 (a 401 included: the server is
/// there, it wants credentials) is reachable; a 5xx is not, with its status line;
/// no answer is not, with why.
pub fn fides_reachability(probe: &FidesProbe) -> (bool, String) {
    match probe {
        FidesProbe::Answered { status, .. } if *status < 500 => (true, String::new()),
        FidesProbe::Answered { line, .. } => (false, format!("the server answered {line}")),
        FidesProbe::Failed(why) => (false, why.clone()),
    }
}

/// What a cluster probe saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterProbe {
    /// The cluster answered its version.
    Answered,
    /// The Secret could not be read (the error).
    SecretUnreadable(String),
    /// The Secret may not be used as a kubeconfig: it has not opted in (why, naming
    /// the label to add; DECISION 147).
    NotOptedIn(String),
    /// The Secret has no kubeconfig under `value` or `value.yaml`
    /// (`hecate_ops::kubeconfig::DEFAULT_KEYS`).
    NoKubeconfig,
    /// The kubeconfig could not be used (the error).
    Unusable(String),
    /// The cluster answered with an HTTP error status (the code and its message).
    Refused(u16, String),
    /// Anything else (the error, unchanged).
    Failed(String),
}

/// What a cluster probe means, and the detail the page shows. A 401 says the
/// credentials were rejected and why that usually happens; a 403 that they were
/// accepted but may not read; any other failure is repeated unchanged.
pub fn cluster_reachability(probe: &ClusterProbe) -> (bool, String) {
    let detail = match probe {
        ClusterProbe::Answered => return (true, String::new()),
        ClusterProbe::SecretUnreadable(why) => format!("the Secret could not be read: {why}"),
        ClusterProbe::NoKubeconfig => {
            "the Secret has no `value` or `value.yaml` key holding a kubeconfig".to_string()
        }
        ClusterProbe::Unusable(why) => format!("the kubeconfig is unusable: {why}"),
        ClusterProbe::Refused(401, _) => "the cluster rejected the credentials (401 Unauthorized): a bound service-account token has most likely expired (they last an hour by default); connect the cluster again with a long-lived token".to_string(),
        ClusterProbe::Refused(403, why) => {
            format!("credentials accepted but may not read this cluster: {why}")
        }
        ClusterProbe::NotOptedIn(why)
        | ClusterProbe::Refused(_, why)
        | ClusterProbe::Failed(why) => why.clone(),
    };
    (false, detail)
}

/// Where Hecate runs, from `KUBERNETES_SERVICE_HOST` / `_PORT` and the
/// service account's namespace file: nothing when the host is unset.
pub fn home_cluster(host: &str, port: &str, namespace: &str) -> HomeCluster {
    let host = host.trim();
    if host.is_empty() {
        return HomeCluster::default();
    }
    let port = match port.trim() {
        "" => "443",
        port => port,
    };
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    HomeCluster {
        in_cluster: true,
        server: format!("https://{host}:{port}"),
        namespace: namespace.trim().to_string(),
    }
}

/// Telemetry as `OTEL_EXPORTER_OTLP_ENDPOINT` says (empty: unset).
pub fn telemetry(endpoint: &str) -> Telemetry {
    let endpoint = endpoint.trim();
    Telemetry {
        endpoint: endpoint.to_string(),
        configured: !endpoint.is_empty(),
    }
}

/// Sorted, each once.
pub fn dedupe(values: impl IntoIterator<Item = String>) -> Vec<String> {
    values
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// What the readable Gates use: Fides servers by URL (`ns/gate`s, environments) and
/// clusters by `ns/secret` (`ns/gate`s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// URL → (Gates, environments).
    pub fides: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
    /// `ns/secret` → Gates.
    pub clusters: BTreeMap<String, BTreeSet<String>>,
}

impl Uses {
    /// Adds what `gates` (of one namespace) use: `spec.evidence.serverURL`, and each
    /// `spec.watch[].with.clusterRef.name` (read tolerantly: `with` is free-form).
    pub fn add(&mut self, namespace: &str, gates: &[Gate]) {
        for gate in gates {
            let key = format!("{namespace}/{}", gate.name_any());
            if let Some(evidence) = &gate.spec.evidence
                && !evidence.server_url.is_empty()
            {
                let (gates, environments) =
                    self.fides.entry(evidence.server_url.clone()).or_default();
                gates.insert(key.clone());
                if !evidence.fides_environment.is_empty() {
                    environments.insert(evidence.fides_environment.clone());
                }
            }
            for check in &gate.spec.watch {
                let cluster = check
                    .with
                    .as_ref()
                    .and_then(|with| with.get("clusterRef"))
                    .and_then(|reference| reference.get("name"))
                    .and_then(|name| name.as_str())
                    .filter(|name| !name.is_empty());
                if let Some(name) = cluster {
                    self.clusters
                        .entry(format!("{namespace}/{name}"))
                        .or_default()
                        .insert(key.clone());
                }
            }
        }
    }

    /// A cluster Secret found by its label, used by no Gate or some.
    pub fn add_cluster_secret(&mut self, namespace: &str, name: &str) {
        self.clusters
            .entry(format!("{namespace}/{name}"))
            .or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Surfaces §5 case 75.
    #[test]
    fn case_75_a_rejected_credential_explains_an_expired_token() {
        let (reachable, detail) =
            cluster_reachability(&ClusterProbe::Refused(401, "Unauthorized".into()));
        assert!(!reachable);
        assert!(detail.contains("expired"), "{detail}");
        assert!(!detail.contains("asked for the client to provide credentials"));
    }

    /// Surfaces §5 case 76.
    #[test]
    fn case_76_an_unfamiliar_error_is_kept_intact() {
        let error = "dial tcp 10.0.0.1:443: i/o timeout";
        assert_eq!(
            cluster_reachability(&ClusterProbe::Failed(error.into())),
            (false, error.to_string())
        );
        let (_, forbidden) = cluster_reachability(&ClusterProbe::Refused(
            403,
            "users \"x\" is forbidden".into(),
        ));
        assert!(forbidden.starts_with("credentials accepted but may not read this cluster: "));
        assert!(forbidden.ends_with("users \"x\" is forbidden"));
    }

    /// Surfaces §5 cases 77–79.
    #[test]
    fn cases_77_to_79_the_home_cluster() {
        let home = home_cluster("10.0.0.1", "443", "hecate-system");
        assert!(home.in_cluster);
        assert_eq!(home.server, "https://10.0.0.1:443");
        assert_eq!(home.namespace, "hecate-system");
        assert_eq!(home_cluster("", "443", ""), HomeCluster::default());
        assert_eq!(
            serde_json::to_value(home_cluster("", "", "")).ok(),
            Some(serde_json::json!({"inCluster": false}))
        );
        assert_eq!(
            home_cluster("fd00::1", "443", "").server,
            "https://[fd00::1]:443"
        );
    }

    /// Surfaces §5 case 80.
    #[test]
    fn case_80_dedupe_sorts_and_removes_repeats() {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(dedupe(strings(&["b", "a", "b", "a"])), ["a", "b"]);
        assert_eq!(dedupe(strings(&["c", "a", "b"])), ["a", "b", "c"]);
        assert_eq!(dedupe(strings(&["only"])), ["only"]);
        assert!(dedupe(Vec::new()).is_empty());
        let server = FidesServer {
            server_url: "https://f".into(),
            environments: dedupe(Vec::new()),
            ..FidesServer::default()
        };
        let json = serde_json::to_value(server).unwrap_or_default();
        assert!(json.get("environments").is_none(), "{json}");
    }

    #[test]
    fn a_fides_probe_is_reachable_below_500() {
        let answered = |status: u16| FidesProbe::Answered {
            status,
            line: format!("{status} Reason"),
        };
        assert_eq!(fides_reachability(&answered(200)), (true, String::new()));
        assert_eq!(fides_reachability(&answered(401)), (true, String::new()));
        assert_eq!(
            fides_reachability(&answered(503)),
            (false, "the server answered 503 Reason".into())
        );
        assert_eq!(
            fides_reachability(&FidesProbe::Failed("no answer within 5s".into())),
            (false, "no answer within 5s".into())
        );
    }

    /// Part of surfaces §5 case 91: only the list's roles.
    #[test]
    fn a_grant_names_a_listed_role_a_kind_and_a_subject() {
        for role in [
            "cluster-admin",
            "edit",
            "hecate-promoter-but-not-really",
            "",
            "hecate-poker",
        ] {
            assert!(GrantRequest::check("ada", "User", role).is_err(), "{role}");
        }
        assert!(GrantRequest::check("  ", "User", "hecate-viewer").is_err());
        assert!(GrantRequest::check("ada", "ServiceAccount", "hecate-viewer").is_err());
        let grant = GrantRequest::check(" Ada@Example.com ", "", "hecate-promoter");
        assert_eq!(
            grant.as_ref().map(GrantRequest::binding).ok().as_deref(),
            Some("hecate-promoter-user-ada-example-com")
        );
        assert_eq!(grant.map(|g| g.kind).ok(), Some(SubjectKind::User));
    }

    #[test]
    fn binding_names_are_sanitised_cut_and_trimmed() {
        assert_eq!(
            binding_name("hecate-viewer", "Group", "Platform Team"),
            "hecate-viewer-group-platform-team"
        );
        assert_eq!(
            binding_name("hecate-viewer", "User", "--x--"),
            "hecate-viewer-user---x"
        );
        let long = binding_name("hecate-viewer", "User", &"a".repeat(400));
        assert_eq!(long.len(), 253);
        let trailing = binding_name("hecate-viewer", "User", &format!("{}-!", "a".repeat(234)));
        assert!(!trailing.ends_with('-'), "{trailing}");
    }

    #[test]
    fn evidence_updates_are_checked_and_applied() {
        let environment = "0b9e4a52-1c3d-4e5f-8a9b-0c1d2e3f4a5b";
        let ask = |url: &str, env: &str, secret: &str| EvidenceUpdate {
            server_url: url.into(),
            fides_environment: env.into(),
            credentials_ref: secret.into(),
        };
        assert!(ask("https://f", " ", "").check().is_err());
        assert!(ask("https://f", "not-a-uuid", "").check().is_err());
        assert!(ask("ftp://f", environment, "").check().is_err());
        assert!(ask("https://f", environment, "Bad_Name").check().is_err());
        let mut spec = GateSpec {
            evidence: Some(hecate_types::EvidenceConfig {
                fides_environment: "old".into(),
                server_url: "https://old".into(),
                credentials_ref: Some(LocalSecretRef {
                    name: "kept".into(),
                }),
            }),
            ..GateSpec::default()
        };
        let update = ask("", environment, "").check();
        assert!(update.is_ok());
        if let Ok(update) = update {
            update.apply(&mut spec);
        }
        let evidence = spec.evidence.unwrap_or_default();
        assert_eq!(evidence.fides_environment, environment);
        assert_eq!(evidence.server_url, "", "set even when empty");
        assert_eq!(
            evidence.credentials_ref.map(|r| r.name).as_deref(),
            Some("kept")
        );
    }

    #[test]
    fn gates_say_which_servers_and_clusters_they_use() {
        let mut gate = Gate::new("production", GateSpec::default());
        gate.spec.evidence = Some(hecate_types::EvidenceConfig {
            fides_environment: "e2".into(),
            server_url: "https://fides".into(),
            credentials_ref: None,
        });
        gate.spec.watch = vec![
            hecate_types::HealthCheck {
                uses: "flux".into(),
                with: Some(serde_json::json!({"clusterRef": {"name": "remote"}})),
            },
            hecate_types::HealthCheck {
                uses: "flux".into(),
                with: Some(serde_json::json!({"clusterRef": "not an object"})),
            },
        ];
        let mut uses = Uses::default();
        uses.add("shop", &[gate]);
        uses.add_cluster_secret("shop", "unused");
        assert_eq!(
            uses.fides
                .get("https://fides")
                .map(|(g, e)| (g.len(), e.len())),
            Some((1, 1))
        );
        assert_eq!(
            uses.clusters.keys().cloned().collect::<Vec<_>>(),
            ["shop/remote", "shop/unused"]
        );
    }

    #[test]
    fn cluster_names_and_kubeconfigs_are_required() {
        assert!(check_cluster("", "x").is_err());
        assert!(check_cluster("remote", " ").is_err());
        assert!(check_cluster("Not A Name", "x").is_err());
        assert!(check_cluster("remote", "apiVersion: v1").is_ok());
    }
}
