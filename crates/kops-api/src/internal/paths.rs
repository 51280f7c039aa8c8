//! Field paths across the two layouts: where a field a v1alpha2 path names lives in
//! the internal layout, so that a problem found on the stored object (validation
//! reports v1alpha2 paths) can be shown on the field as the internal layout's users
//! wrote it (a Terraform attribute, a form field).

/// Moves of a v1alpha2 path's leading fields (after `spec.`) to the internal layout,
/// longest first where one is a prefix of another.
const CLUSTER_MOVES: &[(&str, &str)] = &[
    ("topology.dns.type", "networking.topology.dns"),
    (
        "cloudConfig.awsEBSCSIDriver",
        "cloudProvider.aws.ebsCSIDriver",
    ),
    (
        "cloudConfig.disableSecurityGroupIngress",
        "cloudProvider.aws.disableSecurityGroupIngress",
    ),
    (
        "cloudConfig.elbSecurityGroup",
        "cloudProvider.aws.elbSecurityGroup",
    ),
    (
        "cloudConfig.nlbSecurityGroupMode",
        "cloudProvider.aws.nlbSecurityGroupMode",
    ),
    (
        "cloudConfig.nodeIPFamilies",
        "cloudProvider.aws.nodeIPFamilies",
    ),
    (
        "cloudConfig.spotinstOrientation",
        "cloudProvider.aws.spotinstOrientation",
    ),
    (
        "cloudConfig.spotinstProduct",
        "cloudProvider.aws.spotinstProduct",
    ),
    (
        "cloudConfig.useIPBasedNodeNames",
        "cloudProvider.aws.useIPBasedNodeNames",
    ),
    (
        "cloudConfig.gceServiceAccount",
        "cloudProvider.gce.serviceAccount",
    ),
    (
        "cloudConfig.gceUseStartupScript",
        "cloudProvider.gce.useStartupScript",
    ),
    (
        "cloudConfig.gcpPDCSIDriver",
        "cloudProvider.gce.pdCSIDriver",
    ),
    ("cloudConfig.multizone", "cloudProvider.gce.multizone"),
    ("cloudConfig.nodeTags", "cloudProvider.gce.nodeTags"),
    (
        "cloudConfig.nodeInstancePrefix",
        "cloudProvider.gce.nodeInstancePrefix",
    ),
    ("configBase", "configStore.base"),
    ("keyStore", "configStore.keypairs"),
    ("secretStore", "configStore.secrets"),
    ("project", "cloudProvider.gce.project"),
    (
        "nodeTerminationHandler",
        "cloudProvider.aws.nodeTerminationHandler",
    ),
    (
        "awsLoadBalancerController",
        "cloudProvider.aws.loadBalancerController",
    ),
    ("warmPool", "cloudProvider.aws.warmPool"),
    ("podIdentityWebhook", "cloudProvider.aws.podIdentityWebhook"),
    ("networkID", "networking.networkID"),
    ("networkCIDR", "networking.networkCIDR"),
    (
        "additionalNetworkCIDRs",
        "networking.additionalNetworkCIDRs",
    ),
    ("subnets", "networking.subnets"),
    ("DisableSubnetTags", "networking.tagSubnets"),
    ("topology", "networking.topology"),
    ("egressProxy", "networking.egressProxy"),
    ("nonMasqueradeCIDR", "networking.nonMasqueradeCIDR"),
    ("podCIDR", "networking.podCIDR"),
    ("serviceClusterIPRange", "networking.serviceClusterIPRange"),
    ("isolateMasters", "networking.isolateControlPlane"),
    ("masterPublicName", "api.publicName"),
    ("additionalSans", "api.additionalSANs"),
    ("kubernetesApiAccess", "api.access"),
    ("masterKubelet", "controlPlaneKubelet"),
];

/// The same for an instance group's spec.
const GROUP_MOVES: &[(&str, &str)] = &[
    ("rootVolumeSize", "rootVolume.size"),
    ("rootVolumeType", "rootVolume.type"),
    ("rootVolumeIops", "rootVolume.iops"),
    ("rootVolumeThroughput", "rootVolume.throughput"),
    ("rootVolumeOptimization", "rootVolume.optimization"),
    ("rootVolumeEncryptionKey", "rootVolume.encryptionKey"),
    ("rootVolumeEncryption", "rootVolume.encryption"),
];

/// Whether `path` is `prefix` or continues it with a field (`.`) or an index (`[`).
fn rest_after<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')).then_some(rest)
}

fn moved(path: &str, moves: &[(&str, &str)]) -> String {
    let Some(spec) = path.strip_prefix("spec.") else {
        return path.to_string();
    };
    for (from, to) in moves {
        if let Some(rest) = rest_after(spec, from) {
            return format!("spec.{to}{rest}");
        }
    }
    path.to_string()
}

/// Where the field at the v1alpha2 path of a Cluster (`spec.networkCIDR`,
/// `spec.subnets[1].cidr`, as [`crate::validation`] reports them) lives in the internal
/// layout (`spec.networking.networkCIDR`, `spec.networking.subnets[1].cidr`). Paths
/// of fields that keep their place come back as they are.
///
/// ```
/// use kops_api::internal::{cluster_path, instance_group_path};
///
/// assert_eq!(cluster_path("spec.networkCIDR"), "spec.networking.networkCIDR");
/// assert_eq!(cluster_path("spec.subnets[1].cidr"), "spec.networking.subnets[1].cidr");
/// assert_eq!(cluster_path("spec.topology.dns.type"), "spec.networking.topology.dns");
/// assert_eq!(cluster_path("spec.kubernetesVersion"), "spec.kubernetesVersion");
/// assert_eq!(instance_group_path("spec.rootVolumeSize"), "spec.rootVolume.size");
/// ```
pub fn cluster_path(v1alpha2_path: &str) -> String {
    moved(v1alpha2_path, CLUSTER_MOVES)
}

/// [`cluster_path`] for an InstanceGroup.
pub fn instance_group_path(v1alpha2_path: &str) -> String {
    moved(v1alpha2_path, GROUP_MOVES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internal::Cluster;

    /// Every move lands on a field the internal layout's JSON has: a cluster with the
    /// moved fields set, converted, serialised, has a value at each target.
    #[test]
    fn moved_fields_are_where_the_internal_json_has_them() {
        let yaml = "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: a.example.com\nspec:\n  cloudProvider: aws\n  configBase: s3://b/a.example.com\n  keyStore: s3://b/k\n  secretStore: s3://b/s\n  networkID: vpc-1\n  networkCIDR: 10.0.0.0/16\n  additionalNetworkCIDRs: [10.1.0.0/16]\n  subnets:\n  - name: a\n    zone: us-east-1a\n    type: Public\n  topology:\n    dns:\n      type: Public\n  nonMasqueradeCIDR: 100.64.0.0/10\n  podCIDR: 100.96.0.0/11\n  serviceClusterIPRange: 100.64.0.0/13\n  isolateMasters: true\n  masterPublicName: api.a.example.com\n  additionalSans: [x]\n  kubernetesApiAccess: [0.0.0.0/0]\n  masterKubelet:\n    maxPods: 10\n  warmPool:\n    minSize: 1\n  cloudConfig:\n    elbSecurityGroup: sg-1\n";
        let objects = crate::manifest::parse(yaml.as_bytes(), "test").unwrap();
        let Some(crate::manifest::Object::Cluster(v)) = objects.into_iter().next() else {
            panic!("not a cluster")
        };
        let internal = Cluster::try_from(&v).unwrap();
        let json = serde_json::to_value(&internal).unwrap();
        let checked = [
            "spec.configBase",
            "spec.keyStore",
            "spec.secretStore",
            "spec.networkID",
            "spec.networkCIDR",
            "spec.additionalNetworkCIDRs",
            "spec.subnets[0].zone",
            "spec.topology.dns.type",
            "spec.nonMasqueradeCIDR",
            "spec.podCIDR",
            "spec.serviceClusterIPRange",
            "spec.isolateMasters",
            "spec.masterPublicName",
            "spec.additionalSans",
            "spec.kubernetesApiAccess",
            "spec.masterKubelet.maxPods",
            "spec.warmPool.minSize",
            "spec.cloudConfig.elbSecurityGroup",
        ];
        for path in checked {
            let to = cluster_path(path);
            assert_ne!(to, path, "{path} has no move");
            let mut at = &json;
            for part in to.split('.') {
                let (name, index) = match part.split_once('[') {
                    Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
                    None => (part, None),
                };
                at = &at[name];
                if let Some(i) = index {
                    at = &at[i];
                }
            }
            assert!(!at.is_null(), "{path} -> {to}: nothing there in {json}");
        }
    }
}
