//! Leaf certificates signed by a keyset's primary keypair, as kOps' `pki.IssueCert` makes
//! them: a fresh RSA-2048 key, a `BuildPKISerial` serial, the usages of the request's type
//! (`client` or `server`), and alternate names that are IP addresses when they parse and
//! DNS names otherwise.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use kops_api::keyset::Keyset;

use super::{Certificate, PrivateKeyPem};
use crate::{Error, Result};

/// What an issued certificate is for (kOps' request types `client` and `server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateUse {
    /// Client authentication (an admin credential, a kubelet client).
    Client,
    /// TLS serving (the API server's `master` certificate).
    Server,
}

/// A certificate to issue from a keyset.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CertificateRequest {
    /// The subject's common name.
    pub common_name: String,
    /// The subject's organizations (Kubernetes groups for a client certificate).
    pub organizations: Vec<String>,
    /// Client or server.
    pub usage: CertificateUse,
    /// Subject alternative names: IP addresses where they parse, DNS names otherwise.
    pub alternate_names: Vec<String>,
    /// Validity from the issuing time.
    pub lifetime: Duration,
    /// Append the signing CA's certificate to the returned PEM (kOps'
    /// `IncludeRootCertificate`, which the API server's certificate sets).
    pub include_root: bool,
}

impl CertificateRequest {
    /// A client certificate for `common_name`, valid for one year.
    pub fn client(common_name: impl Into<String>) -> Self {
        Self::new(common_name, CertificateUse::Client)
    }

    /// A serving certificate for `common_name`, valid for one year.
    pub fn server(common_name: impl Into<String>) -> Self {
        Self::new(common_name, CertificateUse::Server)
    }

    fn new(common_name: impl Into<String>, usage: CertificateUse) -> Self {
        CertificateRequest {
            common_name: common_name.into(),
            organizations: Vec::new(),
            usage,
            alternate_names: Vec::new(),
            lifetime: Duration::from_secs(365 * 24 * 3600),
            include_root: false,
        }
    }

    /// Adds an organization to the subject.
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organizations.push(organization.into());
        self
    }

    /// Sets the subject alternative names.
    pub fn with_alternate_names(mut self, names: Vec<String>) -> Self {
        self.alternate_names = names;
        self
    }

    /// Sets the validity.
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// Appends the CA's certificate to the issued PEM.
    pub fn including_root(mut self) -> Self {
        self.include_root = true;
        self
    }
}

/// A certificate issued by [`issue_certificate`]. `Debug` does not show the key.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IssuedCertificate {
    /// The certificate PEM, followed by the CA's when the request included the root.
    pub certificate_pem: String,
    /// Its private key, PKCS#8 PEM.
    pub private_key: PrivateKeyPem,
    /// End of validity.
    pub not_after: SystemTime,
}

fn ca_error(keyset: &str, message: impl Into<String>) -> Error {
    Error::Invalid {
        field: format!("keyset {keyset}"),
        message: message.into(),
    }
}

/// Issues `request` from the primary keypair of `ca` (named `ca_name` in errors; it must
/// hold its private key), valid from `now`. The key never reaches an error message: only
/// the signing library's error kind does.
pub fn issue_certificate(
    ca: &Keyset,
    ca_name: &str,
    request: &CertificateRequest,
    now: SystemTime,
) -> Result<IssuedCertificate> {
    use rcgen::{
        CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyPair,
        KeyUsagePurpose, PKCS_RSA_SHA256, SanType, SerialNumber,
    };
    let fail = |message: String| ca_error(ca_name, message);
    let (issuer, ca_cert_pem) = primary_issuer(ca, ca_name)?;
    let key = KeyPair::generate_for(&PKCS_RSA_SHA256)
        .map_err(|e| fail(format!("generating a key: {e}")))?;
    let mut dn = DistinguishedName::new();
    for o in &request.organizations {
        dn.push(DnType::OrganizationName, o.as_str());
    }
    dn.push(DnType::CommonName, request.common_name.as_str());
    let mut params = CertificateParams::default();
    params.distinguished_name = dn;
    let serial = super::build_pki_serial(now);
    params.serial_number = Some(SerialNumber::from_slice(serial.to_be_bytes()));
    params.not_before = now.into();
    let not_after = now + request.lifetime;
    params.not_after = not_after.into();
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![match request.usage {
        CertificateUse::Client => ExtendedKeyUsagePurpose::ClientAuth,
        CertificateUse::Server => ExtendedKeyUsagePurpose::ServerAuth,
    }];
    for name in &request.alternate_names {
        let san = match name.parse::<IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName(
                name.as_str()
                    .try_into()
                    .map_err(|_| fail(format!("alternate name {name:?} is not a DNS name")))?,
            ),
        };
        params.subject_alt_names.push(san);
    }
    // Without an authority key identifier the chain is found by name, whatever key id
    // method made the CA (Go changed it in 1.25).
    params.use_authority_key_identifier_extension = false;
    let cert = params
        .signed_by(&key, &issuer)
        .map_err(|e| fail(format!("signing the certificate: {e}")))?;
    let mut certificate_pem = cert.pem();
    if request.include_root {
        certificate_pem.push_str(&ca_cert_pem);
    }
    Ok(IssuedCertificate {
        certificate_pem,
        private_key: PrivateKeyPem::new(key.serialize_pem())?,
        not_after,
    })
}

/// The signer of the primary keypair of `ca`, with its subject rebuilt from the CA
/// certificate (the issuer name must equal it), and the CA certificate as PEM.
fn primary_issuer(
    ca: &Keyset,
    ca_name: &str,
) -> Result<(rcgen::Issuer<'static, rcgen::KeyPair>, String)> {
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, PKCS_RSA_SHA256};
    let fail = |message: &str| ca_error(ca_name, message);
    let primary = ca.primary().ok_or_else(|| fail("has no primary keypair"))?;
    let ca_cert_pem = primary
        .public_material
        .as_deref()
        .ok_or_else(|| fail("primary keypair has no certificate"))?;
    let ca_key_pem = primary
        .private_material
        .as_deref()
        .ok_or_else(|| fail("primary keypair has no private key (not readable?)"))?;
    let ca_cert = Certificate::from_pem(ca_cert_pem)?;
    let ca_key_pem =
        std::str::from_utf8(ca_key_pem).map_err(|_| fail("private key is not PEM text"))?;
    let ca_key = KeyPair::from_pem_and_sign_algo(ca_key_pem, &PKCS_RSA_SHA256)
        .map_err(|e| ca_error(ca_name, format!("reading the private key: {e}")))?;

    // `SERIALNUMBER=...,CN=...` prints the last RDN first.
    let mut issuer_dn = DistinguishedName::new();
    for part in ca_cert.subject.split(',').rev() {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let t = match k {
            "CN" => DnType::CommonName,
            "O" => DnType::OrganizationName,
            "OU" => DnType::OrganizationalUnitName,
            "C" => DnType::CountryName,
            "L" => DnType::LocalityName,
            "ST" => DnType::StateOrProvinceName,
            "SERIALNUMBER" => DnType::CustomDnType(vec![2, 5, 4, 5]),
            _ => continue,
        };
        let value = rcgen::string::PrintableString::try_from(v)
            .map(rcgen::DnValue::PrintableString)
            .unwrap_or_else(|_| rcgen::DnValue::Utf8String(v.to_string()));
        issuer_dn.push(t, value);
    }
    let mut issuer_params = CertificateParams::default();
    issuer_params.distinguished_name = issuer_dn;
    Ok((rcgen::Issuer::new(issuer_params, ca_key), ca_cert.to_pem()))
}
