//! `spec.subnets` (kOps' `validateSubnets`, `validateSubnet` and the AWS
//! subnet checks such as `awsValidateAdditionalRoutes`).

use std::collections::BTreeSet;

use ipnet::IpNet;

use super::super::{ValidationErrors, overlaps, parse_cidr, region_of_zone};
use super::Cloud;
use super::networking::NetworkRanges;
use crate::internal::{Cluster, NetworkingSpec};
use crate::v1alpha2::ClusterSubnetSpec;

const SUBNET_TYPES: [&str; 4] = ["Public", "Private", "DualStack", "Utility"];

/// What the subnets before this one established: names, CIDRs, whether they
/// are existing ones (with ids), and the region.
struct SubnetsSoFar<'a> {
    names: BTreeSet<&'a str>,
    parsed: Vec<(usize, IpNet)>,
    has_id: bool,
    region: Option<(usize, String)>,
}

/// What every subnet is checked against.
struct SubnetContext<'a> {
    net: &'a NetworkingSpec,
    cloud: Cloud,
    ranges: &'a NetworkRanges,
}

/// `spec.subnets`: at least one on AWS and GCE, then each subnet in turn.
pub(super) fn validate_subnets(
    c: &Cluster,
    cloud: Cloud,
    ranges: &NetworkRanges,
    errs: &mut ValidationErrors,
) {
    let net = &c.spec.networking;
    let subnets = net.subnets.as_deref().unwrap_or(&[]);
    if subnets.is_empty() && (cloud.aws || cloud.gce) {
        errs.push("spec.subnets", "at least one subnet is required (one per zone, e.g. name: us-east-1a, zone: us-east-1a, type: Public)");
    }
    let ctx = SubnetContext { net, cloud, ranges };
    let mut so_far = SubnetsSoFar {
        names: BTreeSet::new(),
        parsed: Vec::new(),
        has_id: subnets.first().is_some_and(|s| s.id.is_some()),
        region: None,
    };
    for (i, s) in subnets.iter().enumerate() {
        validate_subnet(i, s, &ctx, &mut so_far, errs);
    }
}

/// One subnet's rules, in their order.
fn validate_subnet<'a>(
    i: usize,
    s: &'a ClusterSubnetSpec,
    ctx: &SubnetContext<'_>,
    so_far: &mut SubnetsSoFar<'a>,
    errs: &mut ValidationErrors,
) {
    let p = format!("spec.subnets[{i}]");
    validate_subnet_name(&p, s, so_far, errs);
    if s.id.is_some() != so_far.has_id {
        errs.push(
            format!("{p}.id"),
            "cannot mix subnets with and without id: either all subnets are existing ones or none",
        );
    }
    validate_subnet_type(&p, s, ctx.net, errs);
    validate_subnet_cidr(i, &p, s, ctx, so_far, errs);
    validate_subnet_ipv6_cidr(&p, s, ctx.cloud, errs);
    validate_subnet_egress(&p, s, errs);
    validate_subnet_additional_routes(&p, s, ctx.cloud, errs);
    validate_subnet_region(i, &p, s, ctx.cloud, so_far, errs);
}

/// `name`: required and unique.
fn validate_subnet_name<'a>(
    p: &str,
    s: &'a ClusterSubnetSpec,
    so_far: &mut SubnetsSoFar<'a>,
    errs: &mut ValidationErrors,
) {
    let name = s.name.as_deref().unwrap_or("");
    if name.is_empty() {
        errs.push(format!("{p}.name"), "subnet name is required");
    } else if !so_far.names.insert(name) {
        errs.push(
            format!("{p}.name"),
            format!("duplicate subnet name {name:?}"),
        );
    }
}

/// `type`: required, known, DualStack only on IPv6.
fn validate_subnet_type(
    p: &str,
    s: &ClusterSubnetSpec,
    net: &NetworkingSpec,
    errs: &mut ValidationErrors,
) {
    match s.type_.as_deref() {
        None => errs.push(format!("{p}.type"), "required: Public, Private or Utility"),
        Some(t) if !SUBNET_TYPES.contains(&t) => errs.push(
            format!("{p}.type"),
            format!("unsupported value {t:?}: use Public, Private, Utility or DualStack"),
        ),
        Some("DualStack") if !net.is_ipv6_only() => errs.push(
            format!("{p}.type"),
            "DualStack subnets may only be used in IPv6 clusters (nonMasqueradeCIDR ::/0)",
        ),
        _ => {}
    }
}

/// `cidr`: present on AWS for new subnets; within the network; apart from the
/// pod and service ranges and from the subnets before it.
fn validate_subnet_cidr(
    i: usize,
    p: &str,
    s: &ClusterSubnetSpec,
    ctx: &SubnetContext<'_>,
    so_far: &mut SubnetsSoFar<'_>,
    errs: &mut ValidationErrors,
) {
    let net = ctx.net;
    let Some(cidr) = s.cidr.as_deref() else {
        if ctx.cloud.aws && s.id.is_none() && !(net.is_ipv6_only() && s.ipv6_cidr.is_some()) {
            errs.push(
                format!("{p}.cidr"),
                "subnet has no cidr (it is assigned when the spec is populated)",
            );
        }
        return;
    };
    let Some(n) = parse_cidr(errs, &format!("{p}.cidr"), cidr) else {
        return;
    };
    let network_cidrs = &ctx.ranges.network_cidrs;
    if !network_cidrs.is_empty() && !network_cidrs.iter().any(|nc| nc.contains(&n)) {
        let extra = if network_cidrs.len() > 1 {
            " (or an additionalNetworkCIDR)"
        } else {
            ""
        };
        errs.push(
            format!("{p}.cidr"),
            format!(
                "must be within spec.networkCIDR {}{extra}",
                net.network_cidr.as_deref().unwrap_or("")
            ),
        );
    }
    if let Some(pc) = ctx.ranges.pod
        && net.amazonvpc.is_none()
        && overlaps(&n, &pc)
    {
        errs.push(
            format!("{p}.cidr"),
            format!("{cidr} must not overlap podCIDR {pc}"),
        );
    }
    if let Some(sc) = ctx.ranges.service
        && overlaps(&n, &sc)
    {
        errs.push(
            format!("{p}.cidr"),
            format!("{cidr} must not overlap serviceClusterIPRange {sc}"),
        );
    }
    for (j, other) in &so_far.parsed {
        if overlaps(&n, other) {
            errs.push(
                format!("{p}.cidr"),
                format!("{cidr} overlaps spec.subnets[{j}].cidr {other}"),
            );
        }
    }
    so_far.parsed.push((i, n));
}

/// `ipv6CIDR`: AWS only; a CIDR unless it is a size (`/64`, `::/64`) for AWS to pick.
fn validate_subnet_ipv6_cidr(
    p: &str,
    s: &ClusterSubnetSpec,
    cloud: Cloud,
    errs: &mut ValidationErrors,
) {
    let Some(v6) = s.ipv6_cidr.as_deref() else {
        return;
    };
    if !cloud.aws {
        errs.push(
            format!("{p}.ipv6CIDR"),
            "ipv6CIDR can only be specified on AWS",
        );
    } else if !v6.starts_with('/') && !v6.starts_with("::/") {
        parse_cidr(errs, &format!("{p}.ipv6CIDR"), v6);
    }
}

/// `egress`: a known kind of egress, on a subnet that routes through one.
fn validate_subnet_egress(p: &str, s: &ClusterSubnetSpec, errs: &mut ValidationErrors) {
    let Some(egress) = s.egress.as_deref() else {
        return;
    };
    let kind = egress.split('-').next().unwrap_or("");
    if !["nat", "eipalloc", "i", "tgw", "External"].contains(&kind) {
        errs.push(format!("{p}.egress"), format!("{egress:?} is not a NAT gateway (nat-), elastic IP (eipalloc-), NAT instance (i-), transit gateway (tgw-) or External"));
    }
    let t = s.type_.as_deref().unwrap_or("");
    if egress != "External"
        && t != "Private"
        && t != "DualStack"
        && !(t == "Public" && s.ipv6_cidr.is_some())
    {
        errs.push(
            format!("{p}.egress"),
            "egress can only be set on Private (or IPv6-capable Public) subnets",
        );
    }
}

/// AWS `additionalRoutes`: only on new Private subnets.
fn validate_subnet_additional_routes(
    p: &str,
    s: &ClusterSubnetSpec,
    cloud: Cloud,
    errs: &mut ValidationErrors,
) {
    if s.additional_routes.is_none() || !cloud.aws {
        return;
    }
    if s.id.is_some() {
        errs.push(
            format!("{p}.additionalRoutes"),
            "additional routes cannot be added to a shared subnet (one with id)",
        );
    } else if s.type_.as_deref() != Some("Private") {
        errs.push(
            format!("{p}.additionalRoutes"),
            "additional routes can only be added to Private subnets",
        );
    }
}

/// `zone`/`region`: zones belong to the cluster's one region; AWS needs a zone.
fn validate_subnet_region(
    i: usize,
    p: &str,
    s: &ClusterSubnetSpec,
    cloud: Cloud,
    so_far: &mut SubnetsSoFar<'_>,
    errs: &mut ValidationErrors,
) {
    if let Some(zone) = s.zone.as_deref() {
        let r = s
            .region
            .clone()
            .unwrap_or_else(|| region_of_zone(zone, cloud.provider));
        if cloud.gce && !zone.starts_with(&format!("{r}-")) {
            errs.push(
                format!("{p}.zone"),
                format!("zone {zone:?} is not in region {r:?}"),
            );
        }
        match &so_far.region {
            None => so_far.region = Some((i, r)),
            Some((j, first)) if *first != r => errs.push(format!("{p}.zone"), format!("zone {zone:?} is in region {r:?} but spec.subnets[{j}] is in region {first:?}: a cluster cannot span regions")),
            _ => {}
        }
    } else if let Some(r) = s.region.as_deref() {
        match &so_far.region {
            None => so_far.region = Some((i, r.to_string())),
            Some((j, first)) if first != r => errs.push(format!("{p}.region"), format!("region {r:?} differs from spec.subnets[{j}] region {first:?}: a cluster cannot span regions")),
            _ => {}
        }
    } else if cloud.aws && s.id.is_none() {
        errs.push(format!("{p}.zone"), "required on AWS (e.g. us-east-1a)");
    }
}
