//! Which Secrets Hecate uses on an author's behalf (DECISION 147).
//!
//! A Gate or a Beacon names a Secret (`credentialsRef`, `secretRef`, `secretHeaders`,
//! `clusterRef`, `evidence.credentialsRef`) and Hecate reads it with an identity of its
//! own, then sends what it holds where the object says. Whoever may write Gates and
//! Beacons need not be able to read Secrets, so a Secret is used this way only when
//! it says so: the label [`LABEL_USABLE`]` = "true"`, as Argo CD's repository
//! Secrets opt in with a label. A connected cluster's Secret ([`LABEL_CLUSTER`]` =
//! "true"`, written by the settings page) opts in as a kubeconfig, and as nothing
//! else. Every reader — the controller's steps, verifiers, checks and Beacons, and ops
//! for Fides and the settings page — asks [`judge`] before it looks at the data.

use std::collections::BTreeMap;

use crate::wellknown::{LABEL_CLUSTER, LABEL_USABLE};

/// What a Secret is read for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretUse {
    /// Credentials sent to a server: tokens, passwords, keys, registry logins.
    Credentials,
    /// Another cluster's kubeconfig, to reach that cluster.
    Kubeconfig,
}

impl SecretUse {
    /// The word for such a Secret in a message: "credentials", "kubeconfig".
    pub fn noun(self) -> &'static str {
        match self {
            Self::Credentials => "credentials",
            Self::Kubeconfig => "kubeconfig",
        }
    }
}

/// Whether a Secret with `labels` may be used for `used_as` on an author's behalf.
pub fn opted_in(labels: Option<&BTreeMap<String, String>>, used_as: SecretUse) -> bool {
    let says = |label: &str| labels.and_then(|l| l.get(label)).map(String::as_str) == Some("true");
    says(LABEL_USABLE) || (used_as == SecretUse::Kubeconfig && says(LABEL_CLUSTER))
}

/// [`opted_in`], or why not: names Secret `name` of `namespace` and the label that
/// would let it be used (never anything it holds).
pub fn judge(
    namespace: &str,
    name: &str,
    labels: Option<&BTreeMap<String, String>>,
    used_as: SecretUse,
) -> Result<(), String> {
    if opted_in(labels, used_as) {
        return Ok(());
    }
    let label = match used_as {
        SecretUse::Credentials => LABEL_USABLE,
        SecretUse::Kubeconfig => LABEL_CLUSTER,
    };
    Err(format!(
        "{} Secret {name} in namespace {namespace} is not labelled {label}=true: Hecate uses \
         a Secret that a Gate or Beacon names only once it opts in \
         (kubectl -n {namespace} label secret {name} {label}=true)",
        used_as.noun()
    ))
}

/// The keys a kubeconfig is looked for under, in this order, when the reference names
/// none: Flux's (`kubeConfig.secretRef.key`'s default), so a Secret written for Flux's
/// `Kustomization` serves a Gate as it is.
pub const DEFAULT_KEYS: [&str; 2] = ["value", "value.yaml"];

/// The longest key a Secret's `data` may have (a DNS subdomain's length).
const MAX_KEY_LENGTH: usize = 253;

/// Whether `key` could be a key of a Secret's `data`, as the API server judges one:
/// alphanumerics, `-`, `_` and `.`, at most 253 characters, not `.` or `..`. `Err`
/// says why not, in our words.
pub fn check_key(key: &str) -> Result<(), String> {
    let valid = !key.is_empty()
        && key.len() <= MAX_KEY_LENGTH
        && key != "."
        && key != ".."
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "key {key:?} is not a Secret key (letters, digits, '-', '_' and '.', at most \
             {MAX_KEY_LENGTH})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_secret_opts_in_with_its_label_and_a_cluster_only_as_a_kubeconfig() {
        use SecretUse::{Credentials, Kubeconfig};
        let usable = labels(&[(LABEL_USABLE, "true")]);
        let cluster = labels(&[(LABEL_CLUSTER, "true")]);
        let no = labels(&[(LABEL_USABLE, "yes"), ("app", "x")]);
        for (labels, credentials, kubeconfig) in [
            (Some(&usable), true, true),
            (Some(&cluster), false, true),
            (Some(&no), false, false),
            (None, false, false),
        ] {
            assert_eq!(opted_in(labels, Credentials), credentials, "{labels:?}");
            assert_eq!(opted_in(labels, Kubeconfig), kubeconfig, "{labels:?}");
        }
    }

    #[test]
    fn the_refusal_names_the_secret_and_the_label_to_add() {
        assert_eq!(
            judge("shop", "prom", None, SecretUse::Credentials),
            Err("credentials Secret prom in namespace shop is not labelled \
                 hecate.dev/usable=true: Hecate uses a Secret that a Gate or Beacon names \
                 only once it opts in (kubectl -n shop label secret prom \
                 hecate.dev/usable=true)"
                .into())
        );
        let refused = judge("shop", "edge", None, SecretUse::Kubeconfig).unwrap_err();
        assert!(
            refused.starts_with("kubeconfig Secret edge")
                && refused.ends_with("label secret edge hecate.dev/cluster=true)"),
            "{refused}"
        );
        assert_eq!(
            judge(
                "shop",
                "ok",
                Some(&labels(&[(LABEL_USABLE, "true")])),
                SecretUse::Credentials
            ),
            Ok(())
        );
    }
}
