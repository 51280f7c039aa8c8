//! Kubernetes version parsing.

/// The oldest Kubernetes version kOps (and so this crate) supports.
pub const OLDEST_SUPPORTED_KUBERNETES_VERSION: &str = "1.32.0";

/// Normalises a Kubernetes version as kOps does: trims spaces and one leading `v`.
///
/// ```
/// assert_eq!(kops_api::version::normalize_kubernetes_version(" v1.34.0 "), "1.34.0");
/// ```
pub fn normalize_kubernetes_version(v: &str) -> String {
    let t = v.trim();
    t.strip_prefix('v').unwrap_or(t).to_string()
}

/// Parses a Kubernetes version (`1.34.0`, `v1.34.0`, `1.35.0-alpha.1`,
/// also `1.34` as `1.34.0`); `None` when it is not one.
pub fn parse_kubernetes_version(v: &str) -> Option<semver::Version> {
    let n = normalize_kubernetes_version(v);
    if let Ok(sv) = semver::Version::parse(&n) {
        return Some(sv);
    }
    let parts: Vec<&str> = n.split('.').collect();
    if parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        return semver::Version::parse(&format!("{n}.0")).ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_and_parses() {
        assert_eq!(normalize_kubernetes_version("v1.32.0"), "1.32.0");
        assert_eq!(normalize_kubernetes_version("1.32.0"), "1.32.0");
        assert_eq!(normalize_kubernetes_version("vv1"), "v1");
        assert_eq!(
            parse_kubernetes_version("v1.35.0-alpha.1").map(|v| v.pre.to_string()),
            Some("alpha.1".to_string())
        );
        assert_eq!(
            parse_kubernetes_version("1.34"),
            Some(semver::Version::new(1, 34, 0))
        );
        assert_eq!(parse_kubernetes_version("latest"), None);
        assert_eq!(parse_kubernetes_version("1.x.0"), None);
    }
}
