//! Reading the Secrets that steps, verifiers, checks and Beacons name
//! (`credentialsRef`, `secretRef`, `secretHeaders`, `clusterRef`): one direct GET each
//! time — no cluster-wide Secret cache — only of Secrets that opt in to such use
//! (`hecate_types::secrets`, DECISION 147), and values that never reach a message, a
//! log line or a process argument.

use std::collections::BTreeMap;

pub use hecate_types::secrets::SecretUse;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

/// A Secret's data, decoded.
pub type SecretData = BTreeMap<String, ByteString>;

/// Reads the credentials in Secret `name` of `namespace`: [`read_as`] for
/// [`SecretUse::Credentials`].
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<SecretData, String> {
    read_as(client, namespace, name, SecretUse::Credentials).await
}

/// Reads Secret `name` in `namespace` to use it as `used_as` on behalf of the object
/// that names it: refused unless the Secret opts in. The error says which Secret and
/// why (never what it holds).
pub async fn read_as(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    used_as: SecretUse,
) -> Result<SecretData, String> {
    let noun = used_as.noun();
    match Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
    {
        Ok(Some(secret)) => {
            hecate_types::secrets::judge(
                namespace,
                name,
                secret.metadata.labels.as_ref(),
                used_as,
            )?;
            Ok(secret.data.unwrap_or_default())
        }
        Ok(None) => Err(format!(
            "{noun} Secret {name} does not exist in namespace {namespace}"
        )),
        Err(kube::Error::Api(status)) => Err(format!(
            "cannot read {noun} Secret {name}: {}",
            status.message
        )),
        Err(error) => Err(format!("cannot read {noun} Secret {name}: {error}")),
    }
}

/// The text of `key`, without the line ending a file-made Secret often has; `None`
/// when absent or empty. Bytes that are not UTF-8 are replaced.
pub fn text(data: &SecretData, key: &str) -> Option<String> {
    data.get(key)
        .map(|v| {
            String::from_utf8_lossy(&v.0)
                .trim_end_matches(['\n', '\r'])
                .to_string()
        })
        .filter(|v| !v.is_empty())
}

/// A Secret's data from text pairs, for tests (here, and with the `testing` feature).
#[cfg(any(test, feature = "testing"))]
pub fn data_of(pairs: &[(&str, &str)]) -> SecretData {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_loses_its_line_ending_and_empty_is_absent() {
        let data = data_of(&[
            ("token", "t0k\n"),
            ("crlf", "v\r\n"),
            ("empty", ""),
            ("inner", "a\nb"),
        ]);
        assert_eq!(text(&data, "token").as_deref(), Some("t0k"));
        assert_eq!(text(&data, "crlf").as_deref(), Some("v"));
        assert_eq!(text(&data, "inner").as_deref(), Some("a\nb"));
        assert_eq!(text(&data, "empty"), None);
        assert_eq!(text(&data, "absent"), None);
    }
}
