//! The credentials a Beacon's sources use, read from Secrets in the Beacon's namespace
//! (spec controller.md §1.5, §5.2).
//!
//! Git (§5.2) is not here: a git watch's `credentialsRef` is read and handed to git by
//! [`hecate_sources::git`] — one reading and one hand-over for every git user, the git steps
//! included, as the spec requires (GitHub App, SSH key, HTTPS password).
//!
//! Registries (§1.5) are read by [`hecate_sources::oci::credentials`], the one reading the OCI
//! steps share; chart repositories take `username` + `password` ([`basic`]).
//!
//! Secrets are read with a direct GET each time (no cluster-wide Secret cache), and
//! their values never reach a message, a log line or a process argument.

use hecate_sources::oci::Basic;
use hecate_sources::secrets::{SecretData, text};

use super::source::ResolveError;

/// Reads Secret `name` in `namespace`.
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<SecretData, ResolveError> {
    hecate_sources::secrets::read(client, namespace, name)
        .await
        .map_err(ResolveError::failed)
}

/// Basic credentials for an HTTPS chart repository: `username` and/or `password`.
pub fn basic(name: &str, data: &SecretData) -> Result<Basic, ResolveError> {
    match (text(data, "username"), text(data, "password")) {
        (None, None) => Err(ResolveError::failed(format!(
            "Secret {name} holds neither username nor password"
        ))),
        (username, password) => Ok(Basic {
            username: username.unwrap_or_default(),
            password: password.unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use hecate_sources::secrets::data_of as data;

    #[test]
    fn chart_repository_credentials() {
        assert!(basic("s", &data(&[])).is_err());
        assert_eq!(
            basic("s", &data(&[("password", "p")])),
            Ok(Basic {
                username: String::new(),
                password: "p".into()
            })
        );
    }
}
