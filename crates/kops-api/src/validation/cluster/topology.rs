//! `spec.topology`: the DNS type and where the control plane and nodes run
//! (kOps' `validateTopology`, `validateCloudDNSTopology`, `usesLegacyGossip`).

use super::super::ValidationErrors;
use super::Cloud;
use crate::internal::Cluster;

const DNS_TYPES: [&str; 3] = ["Public", "Private", "None"];

/// The topology rules in their order: DNS type, removed gossip, subnet types.
pub(super) fn validate_topology(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    validate_dns_type(c, cloud, errs);
    validate_no_gossip(c, errs);
    validate_topology_subnets(c, errs);
}

/// `spec.topology.dns.type`: a known type, and `None` on clouds without a DNS service here.
fn validate_dns_type(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    let net = &c.spec.networking;
    let Some(d) = net.topology.as_ref().and_then(|t| t.dns.as_deref()) else {
        return;
    };
    if !DNS_TYPES.contains(&d) {
        errs.push(
            "spec.topology.dns.type",
            format!("unsupported value {d:?}: use Public, Private or None"),
        );
    } else if !cloud.aws && !cloud.gce && cloud.provider.is_some() && !c.uses_none_dns() {
        errs.push(
            "spec.topology.dns.type",
            format!(
                "cloud provider {:?} only supports dns type None",
                cloud.provider.map(|p| p.as_str()).unwrap_or("")
            ),
        );
    }
}

/// A `.k8s.local` name needs dns type None: gossip DNS is gone.
fn validate_no_gossip(c: &Cluster, errs: &mut ValidationErrors) {
    if c.is_gossip() && !c.uses_none_dns() {
        errs.push("spec.topology.dns.type", "gossip DNS (*.k8s.local) was removed in kOps 1.37: set topology.dns.type: None or use a hosted DNS zone");
    }
}

/// `spec.topology.masters`, `spec.topology.nodes`: public or private, with a subnet of that type.
fn validate_topology_subnets(c: &Cluster, errs: &mut ValidationErrors) {
    let net = &c.spec.networking;
    for (field, v) in [
        (
            "masters",
            net.topology.as_ref().and_then(|t| t.masters.as_deref()),
        ),
        (
            "nodes",
            net.topology.as_ref().and_then(|t| t.nodes.as_deref()),
        ),
    ] {
        let Some(v) = v else {
            continue;
        };
        if v != "public" && v != "private" {
            errs.push(
                format!("spec.topology.{field}"),
                format!("unsupported value {v:?}: use public or private"),
            );
        } else {
            let wanted = if v == "private" { "Private" } else { "Public" };
            if !net
                .subnets
                .iter()
                .flatten()
                .any(|s| s.type_.as_deref() == Some(wanted))
            {
                errs.push(
                    format!("spec.topology.{field}"),
                    format!("topology {v} needs at least one subnet of type {wanted}"),
                );
            }
        }
    }
}
