//! The little DER and PEM reading and writing the PKI needs: certificate
//! fields kOps reads (serial, subject, issuer, validity, CA flag, public key),
//! RSA public key parts for JWKS, and PKCS#8 to PKCS#1 for kOps' private
//! key format.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// A DER element: tag byte and content.
#[derive(Clone, Copy)]
pub(crate) struct Tlv<'a> {
    pub tag: u8,
    pub content: &'a [u8],
    /// The whole element, header included.
    pub raw: &'a [u8],
}

/// Reads one element from the front of `input`; returns it and the rest.
pub(crate) fn read(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let tag = *input.first()?;
    if tag & 0x1f == 0x1f {
        return None; // multi-byte tags do not occur in what we read
    }
    let first = *input.get(1)? as usize;
    let (len, header) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *input.get(2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let end = header.checked_add(len)?;
    if end > input.len() {
        return None;
    }
    Some((
        Tlv {
            tag,
            content: &input[header..end],
            raw: &input[..end],
        },
        &input[end..],
    ))
}

/// The elements inside a constructed element's content.
pub(crate) fn children(content: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut out = Vec::new();
    let mut rest = content;
    while !rest.is_empty() {
        let (t, r) = read(rest)?;
        out.push(t);
        rest = r;
    }
    Some(out)
}

/// An INTEGER's magnitude bytes (leading zero octets removed).
pub(crate) fn unsigned(content: &[u8]) -> &[u8] {
    let mut c = content;
    while c.len() > 1 && c[0] == 0 {
        c = &c[1..];
    }
    c
}

/// A dotted OID from its content bytes.
pub(crate) fn oid(content: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut v: u64 = 0;
    for (i, b) in content.iter().enumerate() {
        v = (v << 7) | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            if parts.is_empty() && i < content.len() {
                let (a, b) = if v < 40 {
                    (0, v)
                } else if v < 80 {
                    (1, v - 40)
                } else {
                    (2, v - 80)
                };
                parts.push(a);
                parts.push(b);
            } else {
                parts.push(v);
            }
            v = 0;
        }
    }
    parts
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

/// UTCTime or GeneralizedTime (`...Z`) as Unix seconds.
pub(crate) fn time(t: &Tlv<'_>) -> Option<i64> {
    let s = std::str::from_utf8(t.content).ok()?;
    let s = s.strip_suffix('Z')?;
    let (year, rest) = match t.tag {
        0x17 => {
            let yy: i64 = s.get(0..2)?.parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, s.get(2..)?)
        }
        0x18 => (s.get(0..4)?.parse().ok()?, s.get(4..)?),
        _ => return None,
    };
    let n = |i: usize| -> Option<i64> { rest.get(i..i + 2)?.parse().ok() };
    let (mo, d, h, mi, sec) = (n(0)?, n(2)?, n(4)?, n(6)?, n(8)?);
    Some(days_from_civil(year, mo, d) * 86400 + h * 3600 + mi * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The parts of an RSA `SubjectPublicKeyInfo`: modulus and exponent bytes.
pub(crate) fn rsa_public_key(spki: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let (seq, _) = read(spki)?;
    let parts = children(seq.content)?;
    let bits = parts.get(1)?;
    if bits.tag != 0x03 || bits.content.first() != Some(&0) {
        return None;
    }
    let (rsa, _) = read(&bits.content[1..])?;
    let nums = children(rsa.content)?;
    Some((
        unsigned(nums.first()?.content).to_vec(),
        unsigned(nums.get(1)?.content).to_vec(),
    ))
}

/// The PKCS#1 `RSAPrivateKey` inside a PKCS#8 `PrivateKeyInfo`.
pub(crate) fn pkcs8_to_pkcs1(pkcs8: &[u8]) -> Option<Vec<u8>> {
    let (seq, _) = read(pkcs8)?;
    let parts = children(seq.content)?;
    let key = parts.get(2)?;
    (key.tag == 0x04).then(|| key.content.to_vec())
}

/// PEM blocks of `text`: (label, DER).
pub(crate) fn pem_blocks(text: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let mut b64 = String::new();
        let mut closed = false;
        for l in lines.by_ref() {
            let l = l.trim();
            if l == end {
                closed = true;
                break;
            }
            if !l.contains(':') {
                b64.push_str(l);
            }
        }
        if closed && let Ok(der) = B64.decode(b64.as_bytes()) {
            out.push((label.to_string(), der));
        }
    }
    out
}

/// Go's `pem.Encode`: 64-column base64 between BEGIN and END lines.
pub(crate) fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = B64.encode(der);
    let mut s = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        s.push_str(std::str::from_utf8(chunk).unwrap_or(""));
        s.push('\n');
    }
    s.push_str(&format!("-----END {label}-----\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_oids() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2021, 7, 7), 18815);
        assert_eq!(oid(&[0x55, 0x04, 0x03]), "2.5.4.3");
        assert_eq!(
            oid(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]),
            "1.2.840.113549.1.1.1"
        );
        let t = Tlv {
            tag: 0x17,
            content: b"210707070800Z",
            raw: &[],
        };
        assert_eq!(time(&t), Some(18815 * 86400 + 7 * 3600 + 8 * 60));
    }
}
