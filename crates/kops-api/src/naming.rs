//! Name shortening as kOps does it, for cloud names with length limits.
//!
//! ```
//! use kops_api::naming::{cluster_prefixed_name, hash_string};
//! assert_eq!(cluster_prefixed_name("k8s-io-role-node", "a.example.com", 63), "a-example-com-k8s-io-role-node");
//! assert_eq!(hash_string("abc", 6).len(), 6);
//! ```

/// A short, stable hash of `s`: FNV-1a (32 bit), base32 (extended hex
/// alphabet, lower case), cut to `length` characters.
pub fn hash_string(s: &str, length: usize) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let bytes = h.to_be_bytes();
    // 32 bits in 5-bit groups, the last group padded with zero bits.
    let mut bits: u64 = u64::from(u32::from_be_bytes(bytes)) << 3;
    let mut out = [0u8; 7];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(bits & 0x1f) as usize];
        bits >>= 5;
    }
    let text: String = out.iter().map(|&c| char::from(c)).collect();
    text.chars().take(length.max(1)).collect()
}

/// Shortens `s` to at most `max_length` characters by cutting it and
/// appending `-` and a hash of the whole string; `always_hash` appends the
/// hash even when `s` fits.
pub fn truncate_with_hash(
    s: &str,
    max_length: usize,
    always_hash: bool,
    hash_length: usize,
) -> String {
    if !always_hash && s.len() <= max_length {
        return s.to_string();
    }
    let hash = hash_string(s, if hash_length == 0 { 6 } else { hash_length });
    let keep = max_length.saturating_sub(hash.len() + 1);
    let base: String = s.chars().take(keep).collect();
    format!("{base}-{hash}")
}

/// `<cluster name with dots as dashes>-<object>`, with the cluster part
/// shortened (and hashed) so the whole fits in `max_length`, as kOps names
/// GCE objects and tags.
pub fn cluster_prefixed_name(object: &str, cluster: &str, max_length: usize) -> String {
    let suffix = format!("-{object}");
    let prefix_length = max_length.saturating_sub(suffix.len()).max(10);
    let safe = cluster.replace('.', "-");
    format!(
        "{}{suffix}",
        truncate_with_hash(&safe, prefix_length, false, 6)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cluster_names_are_cut_and_hashed() {
        let name = cluster_prefixed_name(
            "k8s-io-role-node",
            "minimal-gce-with-a-very-very-very-very-very-long-name.example.com",
            63,
        );
        // Value kOps writes for this cluster in its conformance data.
        assert_eq!(
            name,
            "minimal-gce-with-a-very-very-very-very--96dqvi-k8s-io-role-node"
        );
        assert!(name.len() <= 63);
    }

    #[test]
    fn hashes_are_stable_and_short() {
        // FNV-1a of the empty string is its offset basis 0x811c9dc5.
        assert_eq!(hash_string("", 7), "g4e9rh8");
        assert_eq!(truncate_with_hash("abc", 10, false, 6), "abc");
        assert_eq!(truncate_with_hash("abc", 10, true, 6).len(), 10);
    }
}
