//! kOps' GCE names (`upup/pkg/fi/cloudup/gce/utils.go`, `pkg/truncate`): "safe" names
//! (dots as dashes), names suffixed or prefixed with the cluster and cut to GCE's length
//! limits with a hash, and the label encoding of etcd disks.
//!
//! Two cuts exist: [`cluster_suffixed_name`] and [`cluster_prefixed_name`] cut only the
//! cluster part and hash it alone (so every shortened name of one cluster ends in the
//! same hash), [`limited_length_name`] cuts and hashes the whole string (instance group
//! managers, template name prefixes).

use kops_api::naming::truncate_with_hash;

pub(crate) use kops_cloud_gce::cloud::safe_cluster_name;

/// The longest GCE resource name.
pub(crate) const MAX_NAME: usize = 63;

/// kOps' `TruncateString` with a 6-character hash: `s` when it fits in `max`, else its
/// first `max - 7` characters, `-` and the hash of all of `s`.
pub(crate) fn limited_length_name(s: &str, max: usize) -> String {
    truncate_with_hash(s, max, false, 6)
}

/// `<object>-<cluster>`, the cluster part (dots as dashes) cut and hashed so the whole
/// fits in `max`.
pub(crate) fn cluster_suffixed_name(object: &str, cluster: &str, max: usize) -> String {
    let room = max.saturating_sub(object.len() + 1).max(10);
    format!(
        "{object}-{}",
        limited_length_name(&safe_cluster_name(cluster), room)
    )
}

/// `<cluster>-<object>`, the cluster part cut and hashed so the whole fits in `max`.
pub(crate) fn cluster_prefixed_name(object: &str, cluster: &str, max: usize) -> String {
    kops_api::naming::cluster_prefixed_name(object, cluster, max)
}

/// `<name>-<cluster>` with dots as dashes, not cut (a template's Terraform name).
pub(crate) fn safe_object_name(name: &str, cluster: &str) -> String {
    safe_cluster_name(&format!("{name}-{cluster}"))
}

/// The network of a cluster: its safe name, cut to 63.
pub(crate) fn network_name(cluster: &str) -> String {
    limited_length_name(&safe_cluster_name(cluster), MAX_NAME)
}

/// A per-cluster object (firewall rule, router, health check, address, subnet, disk...).
pub(crate) fn suffixed(object: &str, cluster: &str) -> String {
    cluster_suffixed_name(object, cluster, MAX_NAME)
}

/// The instance group manager of group `ig` in `zone`: `<zone letter>-<ig>-<cluster>`,
/// cut and hashed as a whole.
pub(crate) fn instance_group_manager_name(cluster: &str, ig: &str, zone: &str) -> String {
    let short = zone.rsplit('-').next().unwrap_or(zone);
    limited_length_name(
        &safe_object_name(&format!("{short}.{ig}"), cluster),
        MAX_NAME,
    )
}

/// The network tag of a role (`control-plane`, `master`, `node`, `bastion`,
/// `apiserver`): `<cluster>-k8s-io-role-<role>`.
pub(crate) fn tag_for_role(cluster: &str, role: &str) -> String {
    cluster_prefixed_name(&format!("k8s-io-role-{role}"), cluster, MAX_NAME)
}

/// The account ID of a role's service account (30 characters at most).
pub(crate) fn service_account_name(role: &str, cluster: &str) -> String {
    cluster_suffixed_name(role, cluster, 30)
}

/// kOps' `EncodeGCELabel`: `0-9` and `a-z` stay, every other byte becomes `-` and two
/// lowercase hex digits (`a/a` -> `a-2fa`).
pub(crate) fn encode_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_digit() || b.is_ascii_lowercase() {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("-{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &str = "minimal-gce-with-a-very-very-very-very-very-long-name.example.com";

    #[test]
    fn names_match_kops_golden_output() {
        assert_eq!(
            service_account_name("control-plane", "minimal-gce.example.com"),
            "control-plane-minimal-g-fu1mg6"
        );
        assert_eq!(
            service_account_name("node", "minimal-gce.example.com"),
            "node-minimal-gce-example-com"
        );
        assert_eq!(
            limited_length_name("master-us-test1-a-minimal-gce-example-com", 32),
            "master-us-test1-a-minimal-do16cp"
        );
        assert_eq!(
            instance_group_manager_name("minimal-gce.example.com", "nodes", "us-test1-b"),
            "b-nodes-minimal-gce-example-com"
        );
        assert_eq!(
            instance_group_manager_name(LONG, "master-us-test1-a", "us-test1-a"),
            "a-master-us-test1-a-minimal-gce-with-a-very-very-very-ve-j0fh8f"
        );
        assert_eq!(
            suffixed(
                "nodeport-external-to-node-ipv6",
                "minimal-gce-ilb-cilium-etcd.example.com"
            ),
            "nodeport-external-to-node-ipv6-minimal-gce-ilb-cilium-et-eqdptu"
        );
        assert_eq!(
            network_name(LONG),
            "minimal-gce-with-a-very-very-very-very-very-long-name-ex-96dqvi"
        );
        assert_eq!(
            tag_for_role(LONG, "control-plane"),
            "minimal-gce-with-a-very-very-v-96dqvi-k8s-io-role-control-plane"
        );
        assert_eq!(encode_label("a/a"), "a-2fa");
        assert_eq!(encode_label("Foo"), "-46oo");
    }
}
