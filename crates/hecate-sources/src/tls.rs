//! Which servers the controller's HTTP clients trust — every one of them: registries
//! and chart repositories (Beacons, `oci-push`/`oci-pull`), the `http` step, the forge
//! steps and GitHub App tokens, Fides (`evidence-gate`, attestation on finish) and
//! OTLP over HTTP. The web PKI's roots, compiled in (so a bare image still reaches
//! public registries), and the platform's — the system's CA certificates, or the files `SSL_CERT_FILE` and the
//! directories `SSL_CERT_DIR` name when set. That is what the reference trusts (Go's
//! system pool reads the same two variables) and what git trusts for the controller's
//! git remotes, so a registry or a Helm repository behind a private CA is trusted the
//! way a git server behind it is: by adding the CA to the controller's trust store, not
//! to each Beacon (spec controller.md §1.3 and §1.5 give a chart or image watch no CA
//! field; docs/DECISIONS.md).
//!
//! The platform's certificates are read once per process; ones that cannot be read are
//! logged and skipped.
//!
//! How a failed request is said belongs here too, so that a step and a Beacon say it
//! alike: [`error_text`] (what went wrong, with its causes) and [`untrusted_hint`]
//! (what to do about a certificate this trust refused).

use std::sync::OnceLock;

/// What a failure to trust a server's certificate adds to the error's words.
pub const UNTRUSTED: &str = "; the server's certificate is not signed by a CA this controller \
     trusts — add the CA to its trust store (SSL_CERT_FILE or SSL_CERT_DIR)";

/// A client with reqwest's defaults that trusts the web PKI and the platform's CA
/// certificates.
pub fn client() -> reqwest::Client {
    // Building fails only when the TLS backend cannot start, where no client works.
    client_builder().build().unwrap_or_default()
}

/// A client builder that trusts the web PKI and the platform's CA certificates.
pub fn client_builder() -> reqwest::ClientBuilder {
    platform_roots()
        .iter()
        .cloned()
        .fold(reqwest::Client::builder(), |builder, root| {
            builder.add_root_certificate(root)
        })
}

/// The platform's CA certificates, read on first use (for a client this crate does
/// not build, such as Fides').
pub fn platform_roots() -> &'static [reqwest::Certificate] {
    static ROOTS: OnceLock<Vec<reqwest::Certificate>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::warn!(%error, "reading the platform's CA certificates");
        }
        let roots: Vec<reqwest::Certificate> = found
            .certs
            .iter()
            .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok())
            .collect();
        tracing::debug!(
            certificates = roots.len(),
            "trusting the platform's CA certificates"
        );
        roots
    })
}

/// [`UNTRUSTED`] when `error` (or a cause of it) is a server certificate this client
/// refused.
pub fn untrusted_hint(error: &reqwest::Error) -> Option<&'static str> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        // rustls' certificate errors read "invalid peer certificate: …"; they arrive
        // wrapped in an io::Error, which shows them as its own words.
        if error.to_string().contains("invalid peer certificate") {
            return Some(UNTRUSTED);
        }
        cause = error.source();
    }
    None
}

/// reqwest's error and its causes, without the request's URL repeated: what a step
/// (`http`, the forge steps) or a Beacon (a chart repository) says after the URL it
/// names itself.
pub fn error_text(error: &reqwest::Error) -> String {
    let what = if error.is_timeout() {
        "no answer in time"
    } else if error.is_connect() {
        "could not connect"
    } else {
        return hecate_types::error_chain(error);
    };
    match std::error::Error::source(error) {
        Some(cause) => format!("{what}: {}", hecate_types::error_chain(cause)),
        None => what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_connection_is_said_without_its_url() {
        let error = reqwest::Client::new()
            .get("http://127.0.0.1:1/index.yaml")
            .send()
            .await
            .expect_err("nothing listens on port 1");
        let text = error_text(&error);
        assert!(text.starts_with("could not connect: "), "{text}");
        assert!(!text.contains("index.yaml"), "{text}");
        assert_eq!(untrusted_hint(&error), None);
    }
}
