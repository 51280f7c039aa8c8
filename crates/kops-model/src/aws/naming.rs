//! AWS resource names as kOps computes them: hashed truncation for length-limited names
//! (load balancers, target groups, queues, rules) and SSH key fingerprints.

use base64::Engine as _;
use md5::{Digest as _, Md5};

/// FNV-1a, 32 bits.
pub(crate) fn fnv32(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// The first `len` characters of the lower-case base32 (extended hex alphabet) encoding
/// of `s`'s FNV-1a hash.
pub(crate) fn hash_string(s: &str, len: usize) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    // 32 bits -> seven 5-bit groups, the last padded with three zero bits.
    let bits = u64::from(fnv32(s)) << 3;
    (0..7)
        .rev()
        .map(|i| char::from(ALPHABET[((bits >> (i * 5)) & 0x1f) as usize]))
        .take(len)
        .collect()
}

/// kOps' `TruncateString`: `s` when it fits in `max` (and no hash is forced); otherwise
/// its first characters, `-` and a 6-character hash of the whole string.
pub(crate) fn truncate(s: &str, max: usize, always_hash: bool) -> String {
    if !always_hash && s.len() <= max {
        return s.to_owned();
    }
    let hash = hash_string(s, 6);
    let keep = max.saturating_sub(hash.len() + 1);
    let base: String = s.chars().take(keep).collect();
    format!("{base}-{hash}")
}

/// kOps' `GetResourceName32`: `<prefix>-<cluster with dashes>`, cut to 32 characters with
/// a hash always appended (load balancers, target groups).
pub(crate) fn resource_name_32(cluster: &str, prefix: &str) -> String {
    truncate(&format!("{prefix}-{}", cluster.replace('.', "-")), 32, true)
}

/// The SQS queue name of node-termination-handler: `<cluster, dots to dashes>-nth`, the
/// cluster part cut to 75 characters.
pub(crate) fn nth_queue_name(cluster: &str) -> String {
    let base = cluster.replace('.', "-");
    format!("{}-nth", truncate(&base, 75, false))
}

/// The EventBridge rule name: `<cluster cut to 40>-<event>`.
pub(crate) fn event_rule_name(cluster: &str, event: &str) -> String {
    format!("{}-{event}", truncate(cluster, 40, false))
}

/// The MD5 fingerprint of an OpenSSH public key line (`ssh-rsa AAAA... comment`) as
/// colon-separated hex, as AWS shows for imported keys; `None` when the line has no
/// decodable key.
pub(crate) fn ssh_key_fingerprint(public_key: &str) -> Option<String> {
    let b64 = public_key.split_whitespace().nth(1)?;
    let der = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let digest = Md5::digest(&der);
    Some(
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":"),
    )
}

/// The default key-pair name: `kubernetes.<cluster>-<fingerprint>`.
pub(crate) fn ssh_key_name(cluster: &str, fingerprint: &str) -> String {
    format!("kubernetes.{cluster}-{fingerprint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_are_hashed_to_32() {
        // Values computed independently from kOps' algorithm (FNV-1a, base32hex).
        assert_eq!(
            resource_name_32("privatecalico.example.com", "api"),
            "api-privatecalico-example-0uch4k"
        );
        assert_eq!(
            resource_name_32("privatecalico.example.com", "tcp"),
            "tcp-privatecalico-example-lveo5b"
        );
        assert_eq!(resource_name_32("a.b", "api").len(), "api-a-b".len() + 7);
        assert!(
            resource_name_32("a-very-long-cluster-name.subdomain.example.com", "api").len() <= 32
        );
    }

    #[test]
    fn truncation_keeps_short_names() {
        assert_eq!(truncate("short", 10, false), "short");
        let t = truncate(&"x".repeat(50), 20, false);
        assert_eq!(t.len(), 20);
        assert!(t.starts_with("xxxxxxxxxxxxx-"));
        assert_eq!(nth_queue_name("a.example.com"), "a-example-com-nth");
        assert_eq!(
            event_rule_name("a.example.com", "SpotInterruption"),
            "a.example.com-SpotInterruption"
        );
    }

    #[test]
    fn fnv_matches_reference() {
        assert_eq!(
            fnv32("arn:aws-test:iam::123456789000:policy/test-policy"),
            1_544_513_530
        );
        assert_eq!(fnv32(""), 0x811c_9dc5);
    }

    #[test]
    fn fingerprint_is_md5_of_key_blob() {
        // "AAAA" decodes to three zero bytes; md5(00 00 00) is known.
        let fp = ssh_key_fingerprint("ssh-rsa AAAA test").unwrap();
        assert_eq!(fp, "69:3e:9a:f8:4d:3d:fc:c7:1e:64:0e:00:5b:dc:5e:2e");
        assert!(ssh_key_fingerprint("garbage").is_none());
        assert_eq!(ssh_key_name("c", "aa:bb"), "kubernetes.c-aa:bb");
    }
}
