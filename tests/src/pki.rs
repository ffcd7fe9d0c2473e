//! Keys and certificates the tests make: the control plane's (a CA, the API server's
//! serving certificate for `127.0.0.1` and `localhost`, and the service-account signing
//! key), and a CA with one loopback server certificate for any other TLS server a test
//! runs ([`Loopback`]).

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

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
        let serving = Loopback::generate("hecate test control plane CA", "kube-apiserver")?;
        let service_account = KeyPair::generate()?;
        Ok(Self {
            ca_cert: serving.ca_cert.pem(),
            serving_cert: serving.cert.pem(),
            serving_key: serving.key.serialize_pem(),
            service_account_key: service_account.serialize_pem(),
            service_account_public_key: service_account.public_key_pem(),
        })
    }
}

/// A CA of its own and a certificate it signed for `127.0.0.1` and `localhost`, with
/// the certificate's key.
pub(crate) struct Loopback {
    pub(crate) ca_cert: Certificate,
    pub(crate) cert: Certificate,
    pub(crate) key: KeyPair,
}

impl Loopback {
    /// A new CA named `ca_name` and a server certificate named `server_name`.
    pub(crate) fn generate(ca_name: &str, server_name: &str) -> Result<Self, rcgen::Error> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, ca_name);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key)?;

        let key = KeyPair::generate()?;
        let mut serving =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
        serving
            .distinguished_name
            .push(DnType::CommonName, server_name);
        let cert = serving.signed_by(&key, &Issuer::from_params(&ca, &ca_key))?;
        Ok(Self { ca_cert, cert, key })
    }
}
