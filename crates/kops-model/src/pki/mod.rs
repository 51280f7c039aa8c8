//! kOps' PKI: the CA keysets a cluster needs, generated and rotated as kOps
//! does, in kOps' state-store format, and what nodeup configs and IRSA read
//! from them.
//!
//! - [`keyset_names`]: every keyset kOps creates for a spec (`kubernetes-ca`,
//!   `apiserver-aggregator-ca`, `service-account`, `discovery-ca` with a
//!   discovery service, `etcd-manager-ca-<c>` and `etcd-peers-ca-<c>` per
//!   etcd cluster, `etcd-clients-ca`, `etcd-clients-ca-cilium` with a
//!   `cilium` etcd cluster); [`ensure_keysets`] creates the missing ones
//!   (idempotent, for create and the first update).
//! - [`issue_ca`]: a self-signed RSA-2048 CA as kOps makes one: serial
//!   `(UnixNano << 32) | random32` ([`build_pki_serial`]), `NotBefore` 48 hours
//!   ago, `NotAfter` in 3650 days, BasicConstraints CA (critical), KeyUsage
//!   CertSign and CRLSign (critical); the key in PKCS#1 PEM
//!   (`RSA PRIVATE KEY`), the certificate in PEM.
//! - Rotation ([`create_keypair`], [`promote_keypair`], [`distrust_keypair`],
//!   [`trust_keypair`], [`list_keypairs`]) with kOps' id rules ([`add_item`]).
//! - [`issue_certificate`]: a client or serving certificate signed by a keyset's primary
//!   keypair, as kOps' `IssueCert` makes one (alternate names are IPs where they parse).
//! - [`nodeup_pki`]: the `CAs`, `KeypairIDs`, service-account public keys and
//!   config-server CA certificates a nodeup config carries for a role.
//! - [`oidc_discovery_json`] and [`jwks_json`]: the IRSA discovery document and
//!   `keys.json`, byte for byte as kOps writes them.
//!
//! Private keys are held as [`PrivateKeyPem`], whose `Debug` and `Display`
//! never show the key; errors never carry key material.
//!
//! ```
//! use std::time::SystemTime;
//! use kops_model::pki;
//!
//! let ca = pki::issue_ca("kubernetes-ca", false, pki::build_pki_serial(SystemTime::now()), SystemTime::now())?;
//! assert!(ca.certificate_pem.starts_with("-----BEGIN CERTIFICATE-----\n"));
//! assert_eq!(format!("{}", ca.private_key), "<redacted private key>");
//! let cert = pki::Certificate::from_pem(ca.certificate_pem.as_bytes())?;
//! assert!(cert.is_ca && cert.subject == "CN=kubernetes-ca" && cert.key_bits == 2048);
//! # Ok::<(), kops_model::Error>(())
//! ```

mod der;
mod issue;
mod oidc;
pub(crate) mod rotation;

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::{Error, Result};

pub use issue::{CertificateRequest, CertificateUse, IssuedCertificate, issue_certificate};
pub use oidc::{jwks_json, oidc_discovery_json};
pub use rotation::{
    KeypairListing, NodeRole, NodeupPki, add_item, create_keypair, distrust_keypair,
    ensure_keysets, is_rotatable, keyset_names, list_keypairs, new_keyset, nodeup_pki,
    promote_keypair, public_keys_pem, trust_keypair, trusted_certificates,
};

/// Where a keyset lives under the cluster's config base (`configStore.keypairs`
/// is `<configBase>/pki`).
pub fn keyset_path(name: &str) -> String {
    format!("pki/private/{name}/keyset.yaml")
}

pub(crate) fn pki_error(keyset: &str, message: impl Into<String>) -> Error {
    Error::Invalid {
        field: format!("keyset {keyset}"),
        message: message.into(),
    }
}

/// A certificate serial number (or keyset item id): an unsigned big-endian
/// integer of any size, shown in decimal as kOps shows ids.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Serial(Vec<u8>);

impl Serial {
    /// From big-endian magnitude bytes.
    pub fn from_be_bytes(bytes: &[u8]) -> Serial {
        let mut b = bytes;
        while b.len() > 1 && b[0] == 0 {
            b = &b[1..];
        }
        Serial(if b.is_empty() { vec![0] } else { b.to_vec() })
    }

    /// Big-endian magnitude bytes (at least one).
    pub fn to_be_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The next integer.
    pub(crate) fn successor(&self) -> Serial {
        let mut b = self.0.clone();
        for byte in b.iter_mut().rev() {
            if *byte == 0xff {
                *byte = 0;
            } else {
                *byte += 1;
                return Serial(b);
            }
        }
        b.insert(0, 1);
        Serial(b)
    }

    /// Parses a decimal id; `None` when `s` is not a non-negative decimal.
    pub fn from_decimal(s: &str) -> Option<Serial> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut bytes: Vec<u8> = vec![0];
        for d in s.bytes() {
            let mut carry = (d - b'0') as u32;
            for byte in bytes.iter_mut().rev() {
                let v = *byte as u32 * 10 + carry;
                *byte = (v & 0xff) as u8;
                carry = v >> 8;
            }
            while carry > 0 {
                bytes.insert(0, (carry & 0xff) as u8);
                carry >>= 8;
            }
        }
        Some(Serial::from_be_bytes(&bytes))
    }
}

impl From<u128> for Serial {
    fn from(v: u128) -> Serial {
        Serial::from_be_bytes(&v.to_be_bytes())
    }
}

impl Ord for Serial {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for Serial {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits: Vec<u8> = Vec::new();
        let mut n = self.0.clone();
        while n.iter().any(|b| *b != 0) {
            let mut rem = 0u32;
            for byte in n.iter_mut() {
                let v = (rem << 8) | *byte as u32;
                *byte = (v / 10) as u8;
                rem = v % 10;
            }
            digits.push(b'0' + rem as u8);
        }
        if digits.is_empty() {
            digits.push(b'0');
        }
        digits.reverse();
        f.write_str(std::str::from_utf8(&digits).unwrap_or("0"))
    }
}

impl fmt::Debug for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Serial({self})")
    }
}

/// kOps' `BuildPKISerial`: the Unix time in nanoseconds shifted left 32 bits,
/// or-ed with 32 random bits, so that later serials compare higher.
pub fn build_pki_serial(now: SystemTime) -> Serial {
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Serial::from((nanos << 32) | rand::random::<u32>() as u128)
}

/// A PEM private key (kOps writes PKCS#1 `RSA PRIVATE KEY`). `Debug` and
/// `Display` show `<redacted private key>`, never the key.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKeyPem(String);

impl PrivateKeyPem {
    /// Wraps PEM text (checked to hold a private key block).
    pub fn new(pem: impl Into<String>) -> Result<PrivateKeyPem> {
        let pem = pem.into();
        let ok = der::pem_blocks(&pem)
            .iter()
            .any(|(label, _)| label.ends_with("PRIVATE KEY"));
        if ok {
            Ok(PrivateKeyPem(pem))
        } else {
            Err(Error::Invalid {
                field: "private key".into(),
                message: "no PEM private key block".into(),
            })
        }
    }

    /// The PEM text, for storing it in a keyset or writing it to a file.
    pub fn expose_pem(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PrivateKeyPem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrivateKeyPem(<redacted>)")
    }
}

impl fmt::Display for PrivateKeyPem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted private key>")
    }
}

/// A newly issued CA: certificate, private key and serial.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IssuedCa {
    /// The certificate, PEM.
    pub certificate_pem: String,
    /// The private key, PKCS#1 PEM.
    pub private_key: PrivateKeyPem,
    /// The certificate's serial.
    pub serial: Serial,
}

/// What kOps reads from a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Certificate {
    /// Serial number.
    pub serial: Serial,
    /// Subject as Go prints a `pkix.Name` (`CN=kubernetes-ca`,
    /// `SERIALNUMBER=...,CN=...`).
    pub subject: String,
    /// The subject's common name.
    pub common_name: Option<String>,
    /// Issuer, printed like the subject.
    pub issuer: String,
    /// Start of validity, Unix seconds.
    pub not_before: i64,
    /// End of validity, Unix seconds.
    pub not_after: i64,
    /// BasicConstraints CA flag.
    pub is_ca: bool,
    /// RSA modulus size in bits (0 for other key types).
    pub key_bits: usize,
    /// The `SubjectPublicKeyInfo` (PKIX) DER.
    pub public_key_der: Vec<u8>,
    /// The certificate DER.
    pub der: Vec<u8>,
}

impl Certificate {
    /// Reads the first `CERTIFICATE` block of PEM text.
    pub fn from_pem(pem: &[u8]) -> Result<Certificate> {
        let text = std::str::from_utf8(pem).map_err(|_| cert_error("not UTF-8 PEM"))?;
        let der = der::pem_blocks(text)
            .into_iter()
            .find(|(label, _)| label == "CERTIFICATE")
            .map(|(_, der)| der)
            .ok_or_else(|| cert_error("no CERTIFICATE block"))?;
        Certificate::from_der(&der)
    }

    /// Reads a DER certificate.
    pub fn from_der(bytes: &[u8]) -> Result<Certificate> {
        parse_certificate(bytes).ok_or_else(|| cert_error("malformed X.509 certificate"))
    }

    /// The certificate as Go's `pem.Encode` writes it.
    pub fn to_pem(&self) -> String {
        der::pem_encode("CERTIFICATE", &self.der)
    }

    /// The public key as kOps' `ToPublicKeys` writes it: PKIX DER in a block
    /// labelled `RSA PUBLIC KEY` (kOps' label, not the PKCS#1 layout).
    pub fn public_key_pem(&self) -> String {
        der::pem_encode("RSA PUBLIC KEY", &self.public_key_der)
    }

    /// RSA modulus and public exponent, big-endian.
    pub fn rsa_public_key(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        der::rsa_public_key(&self.public_key_der)
    }
}

fn cert_error(message: &str) -> Error {
    Error::Invalid {
        field: "certificate".into(),
        message: message.into(),
    }
}

fn parse_certificate(bytes: &[u8]) -> Option<Certificate> {
    let (cert, _) = der::read(bytes)?;
    let parts = der::children(cert.content)?;
    let tbs = der::children(parts.first()?.content)?;
    let mut i = 0;
    if tbs.first()?.tag == 0xa0 {
        i = 1; // explicit version
    }
    let serial = tbs.get(i)?;
    if serial.tag != 0x02 {
        return None;
    }
    let issuer = tbs.get(i + 2)?;
    let validity = der::children(tbs.get(i + 3)?.content)?;
    let subject = tbs.get(i + 4)?;
    let spki = tbs.get(i + 5)?;
    let mut is_ca = false;
    for t in &tbs[i + 6..] {
        if t.tag != 0xa3 {
            continue;
        }
        let (exts, _) = der::read(t.content)?;
        for ext in der::children(exts.content)? {
            let fields = der::children(ext.content)?;
            if der::oid(fields.first()?.content) != "2.5.29.19" {
                continue;
            }
            let value = fields.last()?;
            let (bc, _) = der::read(value.content)?;
            if let Some(flag) = der::children(bc.content)?.first()
                && flag.tag == 0x01
            {
                is_ca = flag.content.first().is_some_and(|b| *b != 0);
            }
        }
    }
    let (subject_text, common_name) = name(subject)?;
    let (issuer_text, _) = name(issuer)?;
    let key_bits = der::rsa_public_key(spki.raw)
        .map(|(n, _)| {
            let lead = n
                .first()
                .map(|b| 8 - b.leading_zeros() as usize)
                .unwrap_or(0);
            (n.len().saturating_sub(1)) * 8 + lead
        })
        .unwrap_or(0);
    Some(Certificate {
        serial: Serial::from_be_bytes(der::unsigned(serial.content)),
        subject: subject_text,
        common_name,
        issuer: issuer_text,
        not_before: der::time(validity.first()?)?,
        not_after: der::time(validity.get(1)?)?,
        is_ca,
        key_bits,
        public_key_der: spki.raw.to_vec(),
        der: cert.raw.to_vec(),
    })
}

/// A Name printed as Go's `pkix.Name.String()` (last RDN first), and its CN.
fn name(t: &der::Tlv<'_>) -> Option<(String, Option<String>)> {
    let mut parts = Vec::new();
    let mut cn = None;
    for rdn in der::children(t.content)? {
        for atv in der::children(rdn.content)? {
            let f = der::children(atv.content)?;
            let oid = der::oid(f.first()?.content);
            let value = String::from_utf8_lossy(f.get(1)?.content).to_string();
            let label = match oid.as_str() {
                "2.5.4.3" => {
                    cn = Some(value.clone());
                    "CN".to_string()
                }
                "2.5.4.5" => "SERIALNUMBER".into(),
                "2.5.4.6" => "C".into(),
                "2.5.4.7" => "L".into(),
                "2.5.4.8" => "ST".into(),
                "2.5.4.9" => "STREET".into(),
                "2.5.4.10" => "O".into(),
                "2.5.4.11" => "OU".into(),
                "2.5.4.17" => "POSTALCODE".into(),
                other => other.to_string(),
            };
            parts.push(format!("{label}={value}"));
        }
    }
    parts.reverse();
    Some((parts.join(","), cn))
}

/// Issues a self-signed RSA-2048 CA certificate with subject `CN=<common_name>`
/// (plus `serialNumber=<serial>` when `serial_in_subject`, as `kops create
/// keypair` does), valid from 48 hours before `now` for 3650 days.
pub fn issue_ca(
    common_name: &str,
    serial_in_subject: bool,
    serial: Serial,
    now: SystemTime,
) -> Result<IssuedCa> {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, DnValue, IsCa, KeyIdMethod,
        KeyPair, KeyUsagePurpose, PKCS_RSA_SHA256, SerialNumber,
    };
    let fail = |what: &str, e: rcgen::Error| pki_error(common_name, format!("{what}: {e}"));
    let key =
        KeyPair::generate_for(&PKCS_RSA_SHA256).map_err(|e| fail("generating an RSA key", e))?;

    let mut dn = DistinguishedName::new();
    let printable = |s: &str| {
        rcgen::string::PrintableString::try_from(s)
            .map(DnValue::PrintableString)
            .unwrap_or_else(|_| DnValue::Utf8String(s.to_string()))
    };
    dn.push(DnType::CommonName, printable(common_name));
    if serial_in_subject {
        dn.push(
            DnType::CustomDnType(vec![2, 5, 4, 5]),
            printable(&serial.to_string()),
        );
    }
    let mut params = CertificateParams::default();
    params.distinguished_name = dn;
    params.serial_number = Some(SerialNumber::from_slice(serial.to_be_bytes()));
    params.not_before = (now - Duration::from_secs(48 * 3600)).into();
    params.not_after = (now + Duration::from_secs(3650 * 24 * 3600)).into();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    // Current Go (1.25+) fills SubjectKeyId with the first 160 bits of the
    // SHA-256 of the public key bit string.
    let skid = Sha256::digest(key.public_key_raw());
    params.key_identifier_method = KeyIdMethod::PreSpecified(skid[..20].to_vec());
    params.use_authority_key_identifier_extension = false;
    let cert = params
        .self_signed(&key)
        .map_err(|e| fail("signing the certificate", e))?;
    let pkcs1 = der::pkcs8_to_pkcs1(&key.serialize_der())
        .ok_or_else(|| pki_error(common_name, "generated key has no PKCS#1 form"))?;
    Ok(IssuedCa {
        certificate_pem: der::pem_encode("CERTIFICATE", cert.der()),
        private_key: PrivateKeyPem(der::pem_encode("RSA PRIVATE KEY", &pkcs1)),
        serial,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serials_print_and_compare_as_numbers() {
        let s = Serial::from_decimal("6982820025135291416230495506").unwrap();
        assert_eq!(s.to_string(), "6982820025135291416230495506");
        assert_eq!(Serial::from(2u128).to_string(), "2");
        assert_eq!(Serial::from_decimal("0").unwrap().to_string(), "0");
        assert!(Serial::from(2u128) < Serial::from_decimal("10").unwrap());
        assert!(Serial::from_decimal("x").is_none());
        assert_eq!(Serial::from(255u128).successor().to_string(), "256");
        assert_eq!(Serial::from(7u128).successor().to_string(), "8");
        // BuildPKISerial for 2021-07-09 07:08:00.97 UTC decodes like the fixture.
        let t = UNIX_EPOCH + Duration::from_nanos(1_625_814_480_970_000_000);
        let hi = build_pki_serial(t).to_string();
        assert_eq!(hi.len(), 28);
        assert!(hi.starts_with("69828200"), "{hi}");
    }
}
