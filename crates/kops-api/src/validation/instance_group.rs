//! The instance group's rules, one function per rule.
//!
//! [`instance_group_errors`] holds the rules of a group on its own,
//! [`cross_errors`] those that need its cluster; each runs its rules in a
//! fixed order (the order of the problems is part of the output).
//!
//! | kOps (pkg/apis/kops/validation/) | here |
//! |---|---|
//! | `instancegroup.go` `ValidateInstanceGroupName` | `validate_instance_group_name` |
//! | `instancegroup.go` `ValidateInstanceGroup` (role), `ValidateControlPlaneInstanceGroup` | `validate_role` |
//! | `instancegroup.go` `ValidateInstanceGroup` (manager, minSize, maxSize) | `validate_manager_and_sizes` |
//! | `instancegroup.go` `ValidateInstanceGroup` (image, machineType) | `validate_image_and_machine_type` |
//! | `instancegroup.go` `ValidateInstanceGroup` (rootVolume) | `validate_root_volume` |
//! | `instancegroup.go` `ValidateInstanceGroup` (tenancy) | `validate_tenancy` |
//! | `aws.go` `awsValidateInstanceMetadata` | `validate_instance_metadata` |
//! | `instancegroup.go` `validateVolumeSpec` | `validate_volumes` |
//! | `aws.go` `awsValidateAdditionalSecurityGroups` | `validate_additional_security_groups` |
//! | `aws.go` `awsValidateMixedInstancesPolicy` | `validate_mixed_instances_policy` |
//! | `instancegroup.go` `ValidateInstanceGroup` (maxPrice) | `validate_max_price` |
//! | `instancegroup.go` `validateExternalLoadBalancer` | `validate_external_load_balancers` |
//! | `instancegroup.go` `validateIGCloudLabels` | `validate_instance_group_cloud_labels` |
//! | `gce.go` `gceValidateInstanceGroup` (zones) | `validate_gce_zones` |
//! | `instancegroup.go` `CrossValidateInstanceGroup` (subnets) | `validate_subnets_exist` |
//! | `instancegroup.go` `CrossValidateInstanceGroup` (APIServer role) | `validate_api_server_role` |
//! | `instancegroup.go` `CrossValidateInstanceGroup` (etcd members) | `validate_etcd_membership` |
//! | `instancegroup.go` `validateKarpenterInstanceGroup` | `validate_karpenter_group` |
//! | `aws.go` `awsValidateInstanceGroup` (root volume type), `validation.go` `validateWarmPool` | `validate_aws_root_volume_type`, `validate_warm_pool` |

use std::collections::{BTreeMap, BTreeSet};

use super::{ValidationErrors, is_dns_subdomain, region_of_zone};
use crate::internal::{
    CloudProvider, Cluster, InstanceGroup, InstanceGroupRole, InstanceGroupSpec,
};

const AWS_ROOT_VOLUME_TYPES: [&str; 5] = ["standard", "gp3", "gp2", "io1", "io2"];

/// Every problem of an instance group on its own, in the order users read them.
pub(super) fn instance_group_errors(ig: &InstanceGroup) -> ValidationErrors {
    let mut errs = ValidationErrors::default();
    let e = &mut errs;
    let s = &ig.spec;
    validate_instance_group_name(ig, e);
    validate_role(s, e);
    validate_manager_and_sizes(s, e);
    validate_image_and_machine_type(s, e);
    validate_root_volume(s, e);
    validate_tenancy(s, e);
    validate_instance_metadata(s, e);
    validate_volumes(s, e);
    validate_additional_security_groups(s, e);
    validate_mixed_instances_policy(s, e);
    validate_max_price(s, e);
    validate_external_load_balancers(s, e);
    validate_instance_group_cloud_labels(ig, e);
    errs
}

/// The group's rules that need its cluster, in the order users read them.
pub(super) fn cross_errors(ig: &InstanceGroup, c: &Cluster, errs: &mut ValidationErrors) {
    let provider = c.spec.cloud_provider.provider();
    validate_gce_zones(ig, c, provider, errs);
    if provider != Some(CloudProvider::Aws) && ig.spec.mixed_instances_policy.is_some() {
        errs.push(
            "spec.mixedInstancesPolicy",
            "mixed instances policies are only supported on AWS",
        );
    }
    validate_subnets_exist(ig, c, errs);
    validate_api_server_role(ig, c, provider, errs);
    validate_etcd_membership(ig, c, errs);
    validate_karpenter_group(ig, provider, errs);
    if provider == Some(CloudProvider::Aws) {
        validate_aws_root_volume_type(&ig.spec, errs);
        validate_warm_pool(ig, c, errs);
    } else if ig.spec.warm_pool.is_some() {
        errs.push("spec.warmPool", "warm pools are only supported on AWS");
    }
}

/// `metadata.name`: required, a DNS subdomain.
fn validate_instance_group_name(ig: &InstanceGroup, errs: &mut ValidationErrors) {
    match ig.metadata.name.as_deref() {
        None | Some("") => errs.push("metadata.name", "instance group name is required"),
        Some(n) if !is_dns_subdomain(n) => errs.push(
            "metadata.name",
            format!("{n:?} is not a valid name: use lower-case letters, digits, '-' and '.'"),
        ),
        _ => {}
    }
}

/// `spec.role`: known; a control-plane group has subnets and one instance.
fn validate_role(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    match &s.role {
        None => errs.push("spec.role", "required: Master, Node, Bastion or APIServer"),
        Some(InstanceGroupRole::Unknown(r)) => errs.push(
            "spec.role",
            format!("unsupported value {r:?}: use Master, Node, Bastion or APIServer"),
        ),
        Some(InstanceGroupRole::ControlPlane) => {
            if s.subnets.as_ref().is_none_or(|v| v.is_empty()) {
                errs.push(
                    "spec.subnets",
                    "a control-plane instance group must name at least one subnet",
                );
            }
            if s.min_size.unwrap_or(0) > 1 {
                errs.push("spec.minSize", "a control-plane instance group must have minSize 1; add more instance groups instead");
            }
            if s.max_size.unwrap_or(0) > 1 {
                errs.push("spec.maxSize", "a control-plane instance group must have maxSize 1; add more instance groups instead");
            }
        }
        Some(_) => {}
    }
}

/// The manager's name.
fn manager(s: &InstanceGroupSpec) -> &str {
    s.manager.as_deref().unwrap_or("CloudGroup")
}

/// `spec.manager`: CloudGroup or Karpenter; a CloudGroup has sizes; sizes in order.
fn validate_manager_and_sizes(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    let manager = manager(s);
    if manager != "CloudGroup" && manager != "Karpenter" {
        errs.push(
            "spec.manager",
            format!("unsupported value {manager:?}: use CloudGroup or Karpenter"),
        );
    }
    if manager == "CloudGroup" {
        if s.min_size.is_none() {
            errs.push("spec.minSize", "required");
        }
        if s.max_size.is_none() {
            errs.push("spec.maxSize", "required");
        }
    }
    if let Some(min) = s.min_size
        && min < 0
    {
        errs.push("spec.minSize", format!("must not be negative (is {min})"));
    }
    if let (Some(min), Some(max)) = (s.min_size, s.max_size)
        && max < min
    {
        errs.push(
            "spec.maxSize",
            format!("maxSize {max} must be greater than or equal to minSize {min}"),
        );
    }
}

/// `spec.image` always, `spec.machineType` for a CloudGroup.
fn validate_image_and_machine_type(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    if s.image.as_deref().unwrap_or("").is_empty() {
        errs.push(
            "spec.image",
            "image is required (it is filled from the channel when the spec is populated)",
        );
    }
    if manager(s) == "CloudGroup" && s.machine_type.as_deref().unwrap_or("").is_empty() {
        errs.push(
            "spec.machineType",
            "machine type is required (e.g. t3.medium or e2-medium)",
        );
    }
}

/// `spec.rootVolume*`: IOPS, throughput and size not negative (size above 0).
fn validate_root_volume(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    let Some(rv) = &s.root_volume else {
        return;
    };
    if rv.iops.is_some_and(|v| v < 0) {
        errs.push("spec.rootVolumeIops", "IOPS must be greater than 0");
    }
    if rv.throughput.is_some_and(|v| v < 0) {
        errs.push(
            "spec.rootVolumeThroughput",
            "throughput must be greater than 0",
        );
    }
    if rv.size.is_some_and(|v| v <= 0) {
        errs.push("spec.rootVolumeSize", "size must be greater than 0 GB");
    }
}

/// `spec.tenancy`: default, dedicated or host.
fn validate_tenancy(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    if let Some(t) = s.tenancy.as_deref()
        && !["default", "dedicated", "host"].contains(&t)
    {
        errs.push(
            "spec.tenancy",
            format!("unsupported value {t:?}: use default, dedicated or host"),
        );
    }
}

/// `spec.instanceMetadata`: known token mode, hop limit 1 to 64.
fn validate_instance_metadata(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    let Some(md) = &s.instance_metadata else {
        return;
    };
    if let Some(t) = md.http_tokens.as_deref()
        && t != "optional"
        && t != "required"
    {
        errs.push(
            "spec.instanceMetadata.httpTokens",
            format!("unsupported value {t:?}: use optional or required"),
        );
    }
    if let Some(h) = md.http_put_response_hop_limit
        && !(1..=64).contains(&h)
    {
        errs.push(
            "spec.instanceMetadata.httpPutResponseHopLimit",
            format!("must be between 1 and 64 (is {h})"),
        );
    }
}

/// `spec.volumes`: each with a device, no device twice.
fn validate_volumes(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    let mut devices = BTreeSet::new();
    for (i, v) in s.volumes.iter().flatten().enumerate() {
        let d = v.device.as_deref().unwrap_or("");
        if d.is_empty() {
            errs.push(format!("spec.volumes[{i}].device"), "device is required");
        } else if !devices.insert(d) {
            errs.push(
                format!("spec.volumes[{i}].device"),
                format!("duplicate device {d:?}"),
            );
        }
    }
}

/// `spec.additionalSecurityGroups`: security group IDs.
fn validate_additional_security_groups(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    for (i, sg) in s.additional_security_groups.iter().flatten().enumerate() {
        if !sg.starts_with("sg-") {
            errs.push(
                format!("spec.additionalSecurityGroups[{i}]"),
                format!("{sg:?} is not a security group ID (sg-...)"),
            );
        }
    }
}

/// `spec.mixedInstancesPolicy`: on-demand base within the group, percentage 0 to 100.
fn validate_mixed_instances_policy(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    let Some(m) = &s.mixed_instances_policy else {
        return;
    };
    if let Some(b) = m.on_demand_base
        && (b < 0 || s.max_size.is_some_and(|max| b > i64::from(max)))
    {
        errs.push(
            "spec.mixedInstancesPolicy.onDemandBase",
            format!("must be between 0 and maxSize (is {b})"),
        );
    }
    if let Some(a) = m.on_demand_above_base
        && !(0..=100).contains(&a)
    {
        errs.push(
            "spec.mixedInstancesPolicy.onDemandAboveBase",
            format!("must be a percentage between 0 and 100 (is {a})"),
        );
    }
}

/// `spec.maxPrice`: a positive price.
fn validate_max_price(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    if let Some(p) = s.max_price.as_deref()
        && p.parse::<f64>().map_or(true, |v| v.is_nan() || v <= 0.0)
    {
        errs.push(
            "spec.maxPrice",
            format!("{p:?} is not a positive price in USD per hour (e.g. \"0.05\")"),
        );
    }
}

/// `spec.externalLoadBalancers`: each names a load balancer or a target group.
fn validate_external_load_balancers(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    for (i, lb) in s.external_load_balancers.iter().flatten().enumerate() {
        if lb.load_balancer_name.is_some() == lb.target_group_arn.is_some() {
            errs.push(
                format!("spec.externalLoadBalancers[{i}]"),
                "set exactly one of loadBalancerName or targetGroupArn",
            );
        }
    }
}

/// `spec.cloudLabels`: kOps' instance-group tag, if given, names this group.
fn validate_instance_group_cloud_labels(ig: &InstanceGroup, errs: &mut ValidationErrors) {
    if let Some(v) = ig
        .spec
        .cloud_labels
        .as_ref()
        .and_then(|l| l.get("kops.k8s.io/instancegroup"))
        && v != ig.name()
    {
        errs.push(
            "spec.cloudLabels.kops.k8s.io/instancegroup",
            format!("must equal the instance group name {:?}", ig.name()),
        );
    }
}

/// GCE `spec.zones`: in the cluster's region.
fn validate_gce_zones(
    ig: &InstanceGroup,
    c: &Cluster,
    provider: Option<CloudProvider>,
    errs: &mut ValidationErrors,
) {
    if provider != Some(CloudProvider::Gce) {
        return;
    }
    let region = c.spec.networking.subnets.iter().flatten().find_map(|s| {
        s.region
            .clone()
            .or_else(|| s.zone.as_deref().map(|z| region_of_zone(z, provider)))
    });
    let Some(region) = region else {
        return;
    };
    for (i, z) in ig.spec.zones.iter().flatten().enumerate() {
        if !z.starts_with(&format!("{region}-")) {
            errs.push(
                format!("spec.zones[{i}]"),
                format!("zone {z:?} is not in the cluster's region {region:?}"),
            );
        }
    }
}

/// `spec.subnets`: subnets of the cluster, Utility ones for bastions only.
fn validate_subnets_exist(ig: &InstanceGroup, c: &Cluster, errs: &mut ValidationErrors) {
    let s = &ig.spec;
    let subnets: BTreeMap<&str, &crate::v1alpha2::ClusterSubnetSpec> = c
        .spec
        .networking
        .subnets
        .iter()
        .flatten()
        .filter_map(|s| Some((s.name.as_deref()?, s)))
        .collect();
    for (i, name) in s.subnets.iter().flatten().enumerate() {
        match subnets.get(name.as_str()) {
            None => errs.push(
                format!("spec.subnets[{i}]"),
                format!("subnet {name:?} does not exist in the cluster (known: {})", subnets.keys().cloned().collect::<Vec<_>>().join(", ")),
            ),
            Some(sn) if sn.type_.as_deref() == Some("Utility") && s.role != Some(InstanceGroupRole::Bastion) => errs.push(
                format!("spec.subnets[{i}]"),
                format!("subnet {name:?} is a Utility subnet (load balancers and NAT only); run instances in Public or Private subnets"),
            ),
            _ => {}
        }
    }
}

/// Role APIServer: on AWS (with a DNS) and GCE only.
fn validate_api_server_role(
    ig: &InstanceGroup,
    c: &Cluster,
    provider: Option<CloudProvider>,
    errs: &mut ValidationErrors,
) {
    if ig.spec.role != Some(InstanceGroupRole::ApiServer) {
        return;
    }
    match provider {
        Some(CloudProvider::Aws) => {
            if c.uses_none_dns() {
                errs.push(
                    "spec.role",
                    "APIServer instance groups cannot be used with topology.dns.type None",
                );
            }
        }
        Some(CloudProvider::Gce) => {}
        _ => errs.push(
            "spec.role",
            "APIServer instance groups are only supported on AWS and GCE",
        ),
    }
}

/// A control-plane group has a member in every etcd cluster.
fn validate_etcd_membership(ig: &InstanceGroup, c: &Cluster, errs: &mut ValidationErrors) {
    if !ig.is_control_plane() {
        return;
    }
    for e in c.spec.etcd_clusters.iter().flatten() {
        let has = e
            .etcd_members
            .iter()
            .flatten()
            .any(|m| m.instance_group.as_deref() == Some(ig.name()));
        if !has {
            errs.push(
                "metadata.name",
                format!("control-plane instance group {:?} has no member in etcd cluster {:?}; add an etcdMembers entry with instanceGroup: {}", ig.name(), e.name.as_deref().unwrap_or(""), ig.name()),
            );
        }
    }
}

/// Manager Karpenter: AWS only, role Node only.
fn validate_karpenter_group(
    ig: &InstanceGroup,
    provider: Option<CloudProvider>,
    errs: &mut ValidationErrors,
) {
    let s = &ig.spec;
    if s.manager.as_deref() != Some("Karpenter") {
        return;
    }
    if provider != Some(CloudProvider::Aws) {
        errs.push("spec.manager", "Karpenter is only supported on AWS");
    }
    if s.role != Some(InstanceGroupRole::Node) {
        errs.push("spec.role", "Karpenter instance groups must have role Node");
    }
}

/// AWS `spec.rootVolumeType`: an EBS volume type kOps supports.
fn validate_aws_root_volume_type(s: &InstanceGroupSpec, errs: &mut ValidationErrors) {
    if let Some(t) = s.root_volume.as_ref().and_then(|r| r.type_.as_deref())
        && !AWS_ROOT_VOLUME_TYPES.contains(&t)
    {
        errs.push(
            "spec.rootVolumeType",
            format!("unsupported value {t:?}: use gp3, gp2, io1, io2 or standard"),
        );
    }
}

/// AWS warm pool (the group's, else the cluster's for nodes and API servers):
/// nodes and API servers only, no spot, sizes in order.
fn validate_warm_pool(ig: &InstanceGroup, c: &Cluster, errs: &mut ValidationErrors) {
    let s = &ig.spec;
    let cluster_pool = c
        .spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.warm_pool.as_ref());
    // As kOps resolves it: the cluster-wide pool applies to nodes and API servers only.
    let applies = !matches!(
        s.role,
        Some(InstanceGroupRole::ControlPlane) | Some(InstanceGroupRole::Bastion)
    );
    let pool = s
        .warm_pool
        .as_ref()
        .or(if applies { cluster_pool } else { None });
    let Some(p) = pool else {
        return;
    };
    let max = p.max_size;
    let min = p.min_size.unwrap_or(0);
    if max != Some(0) {
        if !matches!(
            s.role,
            Some(InstanceGroupRole::Node) | Some(InstanceGroupRole::ApiServer)
        ) {
            errs.push(
                "spec.warmPool",
                "a warm pool is only allowed on instance groups with role Node or APIServer",
            );
        }
        if s.max_price.is_some() {
            errs.push(
                "spec.warmPool",
                "a warm pool cannot be used with spot instances (maxPrice)",
            );
        }
    }
    if let Some(max) = max {
        if max < 0 {
            errs.push("spec.warmPool.maxSize", "must not be negative");
        } else if min > max {
            errs.push(
                "spec.warmPool.maxSize",
                format!("must not be lower than warmPool.minSize {min}"),
            );
        }
    }
    if min < 0 {
        errs.push("spec.warmPool.minSize", "must not be negative");
    }
}
