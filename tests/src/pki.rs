//! The control plane's keys: a CA, the API server's serving certificate (for
//! `127.0.0.1` and `localhost`), and the service-account signing key.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// PEM-encoded key material, written to the control plane's directory.
pub(crate) struct Pki {
    pub(crate) ca_cert: String,
    pub(crate) serving_cert: String,
    pub(crate) serving_key: String,
    pub(crate) service_account_key: String,
    pub(crate) service_account_public_key: String,
}

impl Pki {
    pub(crate) fn generate() -> Result<Self, rcgen::Error> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "hecate test control plane CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key)?;

        let serving_key = KeyPair::generate()?;
        let mut serving =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
        serving
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let serving_cert = serving.signed_by(&serving_key, &Issuer::from_params(&ca, &ca_key))?;

        let service_account = KeyPair::generate()?;
        Ok(Self {
            ca_cert: ca_cert.pem(),
            serving_cert: serving_cert.pem(),
            serving_key: serving_key.serialize_pem(),
            service_account_key: service_account.serialize_pem(),
            service_account_public_key: service_account.public_key_pem(),
        })
    }
}
