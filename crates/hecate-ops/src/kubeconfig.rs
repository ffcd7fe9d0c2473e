//! A kubeconfig kept in a Secret (Flux's `kubeConfig.secretRef`: the key the reference
//! names, else `value`, else `value.yaml`), made into a client: for the `flux` checker and the `flux-*` steps' `clusterRef`, and for
//! Settings' probe of a connected cluster. One way, so both refuse the same things and
//! say what is wrong the same way.
//!
//! Whoever may write a Secret in a namespace writes this text, and the errors go where
//! people who may not read Secrets read them (a Passage's status, a Gate's health, an
//! Event, the Settings page). A parser's error quotes the text it failed on (a YAML
//! error prints the line: `1 | <the Secret's value>`), so no error of the parsers or
//! of kube's loading is passed on: each is said in our words, with at most where in
//! the text it is (DECISION 146).

pub mod exec;

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::ByteString;
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError, LoadDataError};

/// Whether a kubeconfig's `exec` credential plugin may run: the operator's choice
/// (`--insecure-kubeconfig-exec`, as Flux's controllers name it), refused by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exec {
    /// A kubeconfig that asks to run a program is refused.
    #[default]
    Refused,
    /// The current user's plugin runs, bounded ([`exec`]), for a token.
    Allowed,
}

/// A client made from a kubeconfig, and when its credential expires: a plugin's
/// token is asked for again before then.
#[derive(Clone)]
pub struct Connection {
    /// The client.
    pub client: kube::Client,
    /// When its credential expires; `None`: it does not.
    pub expires_at: Option<Timestamp>,
}

pub use hecate_types::secrets::{DEFAULT_KEYS, check_key};

/// The kubeconfig in a Secret's `data`: under `key` when the reference names one, else
/// under the first of [`DEFAULT_KEYS`] it has. An empty value counts as none. `Err`
/// says which key is missing — the reference's words, never the Secret's.
pub fn pick<'a>(
    data: &'a BTreeMap<String, ByteString>,
    key: Option<&str>,
) -> Result<&'a [u8], String> {
    let present = |key: &str| {
        data.get(key)
            .map(|value| value.0.as_slice())
            .filter(|value| !value.is_empty())
    };
    match key {
        Some(key) => present(key).ok_or_else(|| format!("it has no key {key:?}")),
        None => DEFAULT_KEYS
            .iter()
            .find_map(|key| present(key))
            .ok_or_else(|| {
                format!(
                    "it has neither key {:?} nor {:?}",
                    DEFAULT_KEYS[0], DEFAULT_KEYS[1]
                )
            }),
    }
}

/// A client for the cluster `kubeconfig` (a Secret's value) names, with these
/// timeouts; `Err` says, in our words, why it cannot be used — never a part of it.
/// An `exec` plugin is refused.
pub async fn client(
    kubeconfig: &[u8],
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<kube::Client, String> {
    connect(kubeconfig, connect_timeout, read_timeout, Exec::Refused)
        .await
        .map(|connection| connection.client)
}

/// [`client`], with the current user's `exec` plugin run for a token where `exec`
/// allows it; the connection says when that token expires.
pub async fn connect(
    kubeconfig: &[u8],
    connect_timeout: Duration,
    read_timeout: Duration,
    exec: Exec,
) -> Result<Connection, String> {
    let text = std::str::from_utf8(kubeconfig).map_err(|_| "it is not UTF-8 text".to_string())?;
    let mut parsed = Kubeconfig::from_yaml(text).map_err(|e| problem(&e))?;
    let refused: Vec<String> = refused_parts(&parsed)
        .into_iter()
        .filter(|part| exec == Exec::Refused || !part.starts_with(RUN_A_PROGRAM))
        .collect();
    if !refused.is_empty() {
        return Err(format!(
            "it asks to {}; only inline credentials are accepted{}",
            refused.join(", "),
            match exec {
                // Named only where allowing plugins would make the kubeconfig usable.
                Exec::Refused if refused.iter().all(|part| part.starts_with(RUN_A_PROGRAM)) =>
                    " (an operator may allow exec plugins: --insecure-kubeconfig-exec)",
                _ => "",
            }
        ));
    }
    let expires_at = match exec {
        Exec::Allowed => run_plugin(&mut parsed).await?,
        Exec::Refused => None,
    };
    let mut config = kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
        .await
        .map_err(|e| problem(&e))?;
    config.connect_timeout = Some(connect_timeout);
    config.read_timeout = Some(read_timeout);
    // What fails here is the TLS setup from the credentials' certificates and keys.
    let client = kube::Client::try_from(config).map_err(|_| {
        "its certificates or keys cannot be used for TLS (certificate-authority-data, \
         client-certificate-data, client-key-data)"
            .to_string()
    })?;
    Ok(Connection { client, expires_at })
}

/// Runs the current context's user's `exec` plugin, if it has one, and puts the token
/// it answers in its place; when that token expires. Other users' plugins never run:
/// nothing reads them.
async fn run_plugin(kubeconfig: &mut Kubeconfig) -> Result<Option<Timestamp>, String> {
    let context = kubeconfig
        .current_context
        .as_deref()
        .and_then(|name| kubeconfig.contexts.iter().find(|c| c.name == name))
        .and_then(|c| c.context.clone());
    let Some(context) = context else {
        // kube says what is wrong with the contexts, in `problem`'s words.
        return Ok(None);
    };
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .map(|c| exec::ClusterInfo {
            server: c.server.clone().unwrap_or_default(),
            certificate_authority_data: c.certificate_authority_data.clone(),
        })
        .unwrap_or_default();
    let user = context.user.as_deref().and_then(|name| {
        kubeconfig
            .auth_infos
            .iter_mut()
            .find(|u| u.name == name)
            .and_then(|u| u.auth_info.as_mut())
    });
    let Some(user) = user else {
        return Ok(None);
    };
    let Some(plugin) = user.exec.take() else {
        return Ok(None);
    };
    let credential = exec::credential(&plugin, &cluster, exec::TIMEOUT).await?;
    user.token = Some(credential.token.into());
    Ok(credential.expires_at)
}

/// How [`refused_parts`] says a kubeconfig asks to run a program.
const RUN_A_PROGRAM: &str = "run a program (exec)";

/// What is wrong with a kubeconfig, in our words: which part, and for a YAML error the
/// line and column — never the text there, nor a name taken from it.
pub fn problem(error: &KubeconfigError) -> String {
    let data = |what: &str, e: &LoadDataError| match e {
        LoadDataError::DecodeBase64(_) => format!("its {what} is not base64"),
        LoadDataError::ReadFile(..) | LoadDataError::NoBase64DataOrFile => {
            format!("its {what} cannot be read")
        }
    };
    match error {
        KubeconfigError::Parse(e) => match e.location() {
            Some(at) => format!(
                "it is not a kubeconfig (YAML error at line {}, column {})",
                at.line(),
                at.column()
            ),
            None => "it is not a kubeconfig (a YAML error)".to_string(),
        },
        KubeconfigError::CurrentContextNotSet => "it names no current-context".to_string(),
        KubeconfigError::LoadContext(_) => {
            "its current-context is not one of its contexts".to_string()
        }
        KubeconfigError::LoadClusterOfContext(_) => {
            "the cluster its current context names is not one of its clusters".to_string()
        }
        KubeconfigError::MissingClusterUrl => "its cluster has no server".to_string(),
        KubeconfigError::ParseClusterUrl(_) => "its cluster's server is not a URL".to_string(),
        KubeconfigError::ParseProxyUrl(_) => "its cluster's proxy-url is not a URL".to_string(),
        KubeconfigError::LoadCertificateAuthority(e) => data("certificate-authority-data", e),
        KubeconfigError::LoadClientCertificate(e) => data("client-certificate-data", e),
        KubeconfigError::LoadClientKey(e) => data("client-key-data", e),
        KubeconfigError::ParseCertificates(_) => {
            "its certificate-authority-data holds no PEM certificate".to_string()
        }
        _ => "it cannot be loaded as a kubeconfig".to_string(),
    }
}

/// The parts of a kubeconfig that would make its reader run a program or read its
/// own files. Anyone who may write a Secret in a Gate's namespace can write this
/// kubeconfig, so it may carry credentials but not instructions (Flux refuses `exec`
/// in such kubeconfigs by default too).
pub fn refused_parts(kubeconfig: &Kubeconfig) -> Vec<String> {
    // What is refused, in order of first appearance, with whose entries ask for it.
    let mut refused: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut add = |what, name| match refused.iter_mut().find(|(w, _)| *w == what) {
        Some((_, names)) => names.push(name),
        None => refused.push((what, vec![name])),
    };
    for named in &kubeconfig.auth_infos {
        let Some(user) = &named.auth_info else {
            continue;
        };
        let parts = [
            (user.exec.is_some(), RUN_A_PROGRAM),
            (user.auth_provider.is_some(), "use an auth-provider plugin"),
            (user.token_file.is_some(), "read a token file"),
            (
                user.client_certificate.is_some(),
                "read a client-certificate file",
            ),
            (user.client_key.is_some(), "read a client-key file"),
        ];
        for (present, what) in parts {
            if present {
                add(what, named.name.as_str());
            }
        }
    }
    for named in &kubeconfig.clusters {
        if named
            .cluster
            .as_ref()
            .is_some_and(|c| c.certificate_authority.is_some())
        {
            add("read a certificate-authority file", named.name.as_str());
        }
    }
    refused
        .into_iter()
        .map(|(what, names)| format!("{what} (for {})", names.join(", ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(1);

    async fn problem_of(kubeconfig: &str) -> String {
        match client(kubeconfig.as_bytes(), WAIT, WAIT).await {
            Ok(_) => panic!("{kubeconfig:?} made a client"),
            Err(why) => why,
        }
    }

    /// A Secret's value is never in what is said of it.
    #[tokio::test]
    async fn what_is_wrong_is_said_without_the_secrets_text() {
        let secret = "TOPSECRET-PLAIN-789";
        let cases = [
            (
                secret.to_string(),
                "it is not a kubeconfig (YAML error at line 1, column 1)",
            ),
            (
                format!("apiVersion: v1\nkind: Config\nclusters: {secret}\n"),
                "it is not a kubeconfig (YAML error at line 3",
            ),
            (
                format!("apiVersion: v1\ncurrent-context: {secret}\n"),
                "its current-context is not one of its contexts",
            ),
            (
                format!(
                    "apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\n    certificate-authority-data: {secret}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\ncurrent-context: x\n"
                ),
                "its certificate-authority-data is not base64",
            ),
            (
                format!(
                    "apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: \"https://c.example/{secret} x\"\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\ncurrent-context: x\n"
                ),
                "its cluster's server is not a URL",
            ),
        ];
        for (kubeconfig, said) in cases {
            let why = problem_of(&kubeconfig).await;
            assert!(why.starts_with(said), "{kubeconfig:?}: {why}");
            assert!(!why.contains("TOPSECRET"), "{kubeconfig:?}: {why}");
        }
        assert_eq!(
            problem_of("\u{ff}\u{fe}").await,
            "it is not a kubeconfig (YAML error at line 1, column 1)"
        );
    }

    #[test]
    fn the_named_key_then_value_then_value_yaml_hold_the_kubeconfig() {
        let data = |pairs: &[(&str, &str)]| -> BTreeMap<String, ByteString> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect()
        };
        let both = data(&[("value", "a"), ("value.yaml", "b"), ("prod", "c")]);
        assert_eq!(pick(&both, None), Ok(&b"a"[..]));
        assert_eq!(pick(&both, Some("prod")), Ok(&b"c"[..]));
        assert_eq!(pick(&both, Some("value.yaml")), Ok(&b"b"[..]));
        let yaml_only = data(&[("value.yaml", "b")]);
        assert_eq!(pick(&yaml_only, None), Ok(&b"b"[..]));
        // An empty `value` does not hide `value.yaml`, as `kubectl create secret
        // --from-literal=value=` would otherwise make it.
        let empty_value = data(&[("value", ""), ("value.yaml", "b")]);
        assert_eq!(pick(&empty_value, None), Ok(&b"b"[..]));
        assert_eq!(
            pick(&data(&[("config", "TOPSECRET")]), None),
            Err(r#"it has neither key "value" nor "value.yaml""#.to_string())
        );
        assert_eq!(
            pick(&yaml_only, Some("prod")),
            Err(r#"it has no key "prod""#.to_string())
        );
    }

    #[test]
    fn a_key_is_judged_as_the_api_server_judges_secret_keys() {
        for good in ["value", "value.yaml", "prod_eu-1.kubeconfig", ".hidden"] {
            assert_eq!(check_key(good), Ok(()), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a b", &"k".repeat(254)] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_kubeconfig_with_inline_credentials_is_accepted() {
        let kubeconfig = Kubeconfig::from_yaml(
            r#"
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example.com:6443
    certificate-authority-data: Y2E=
users:
- name: hecate
  user:
    token: abc
- name: tls
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
contexts:
- name: prod
  context: {cluster: prod, user: hecate}
current-context: prod
"#,
        )
        .expect("a kubeconfig");
        assert_eq!(refused_parts(&kubeconfig), Vec::<String>::new());
    }

    #[test]
    fn a_kubeconfig_that_runs_programs_or_reads_files_is_refused() {
        let kubeconfig = Kubeconfig::from_yaml(
            r#"
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example.com:6443
    certificate-authority: /etc/ssl/ca.pem
users:
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/sh
      args: ["-c", "id"]
- name: exec-too
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /usr/bin/env
- name: files
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    client-certificate: /etc/cert.pem
    client-key: /etc/key.pem
contexts:
- name: prod
  context: {cluster: prod, user: exec}
current-context: prod
"#,
        )
        .expect("a kubeconfig");
        assert_eq!(
            refused_parts(&kubeconfig),
            [
                "run a program (exec) (for exec, exec-too)",
                "read a token file (for files)",
                "read a client-certificate file (for files)",
                "read a client-key file (for files)",
                "read a certificate-authority file (for prod)",
            ]
        );
    }

    /// Allowing `exec` lifts that refusal alone; the flag is named only where it
    /// would make the kubeconfig usable.
    #[tokio::test]
    async fn allowing_exec_lifts_only_the_exec_refusal() {
        let kubeconfig = |files: bool| {
            let ca = if files {
                "certificate-authority: /etc/ssl/ca.pem"
            } else {
                "insecure-skip-tls-verify: true"
            };
            format!(
                "apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://c.example\n    {ca}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user:\n    exec: {{apiVersion: client.authentication.k8s.io/v1, command: /nonexistent/plugin}}\ncurrent-context: x\n"
            )
        };
        let said = |text: String, exec: Exec| async move {
            match connect(text.as_bytes(), WAIT, WAIT, exec).await {
                Ok(_) => panic!("{text:?} made a client"),
                Err(why) => why,
            }
        };
        let exec_only = said(kubeconfig(false), Exec::Refused).await;
        assert!(
            exec_only.ends_with("(an operator may allow exec plugins: --insecure-kubeconfig-exec)"),
            "{exec_only}"
        );
        let with_files = said(kubeconfig(true), Exec::Refused).await;
        assert!(
            with_files.contains("run a program (exec)") && !with_files.contains("--insecure"),
            "{with_files}"
        );
        let allowed = said(kubeconfig(true), Exec::Allowed).await;
        assert_eq!(
            allowed,
            "it asks to read a certificate-authority file (for c); only inline credentials are accepted"
        );
        // Allowed and nothing else refused, the plugin is run: here it is not there.
        let runs = said(kubeconfig(false), Exec::Allowed).await;
        assert_eq!(
            runs,
            "its exec plugin cannot be started (is it installed where the controller runs?)"
        );
    }
}
