//! Address ranges: the network, pod and service ranges, GCE networks and
//! AWS subnet CIDRs (kOps' `populateClusterSpec.assignSubnets`,
//! `assignCIDRsToSubnets` in `upup/pkg/fi/cloudup/subnets.go`, and the GCE
//! subnet allocation).

use ipnet::{IpNet, Ipv4Net};

use super::{
    DEFAULT_AWS_NETWORK_CIDR, DEFAULT_NON_MASQUERADE_CIDR, DEFAULT_SERVICE_CLUSTER_IP_RANGE,
    DEFAULT_SERVICE_CLUSTER_IP_RANGE_IPV6, PopulateOptions, populate_error,
};
use crate::Result;
use crate::internal::Cluster;
use crate::v1alpha2 as v;

/// Networks: pod and service ranges from a given non-masquerade CIDR first
/// (kOps' assignSubnets), then the cloud's network assignments: GCE networks,
/// the AWS VPC CIDR (the shared VPC's when `networkID` is set), the
/// non-masquerade CIDR, and AWS subnet CIDRs.
pub(super) fn populate_networks(
    c: &mut Cluster,
    aws: bool,
    gce: bool,
    opts: &PopulateOptions,
) -> Result<()> {
    pod_and_service_ranges(c)?;
    if gce {
        assign_gce_networks(c, &opts.used_cidrs)?;
    }
    let net = &mut c.spec.networking;
    if aws && net.network_cidr.is_none() {
        if net.network_id.is_some() {
            let cidr = opts.shared_network_cidr.clone().ok_or_else(|| {
                populate_error(
                    "spec.networkCIDR",
                    "the cluster uses an existing VPC (networkID): give its CIDR in networkCIDR",
                )
            })?;
            net.network_cidr = Some(cidr);
        } else {
            net.network_cidr = Some(DEFAULT_AWS_NETWORK_CIDR.to_string());
        }
        if net.amazonvpc.is_some() && net.non_masquerade_cidr.as_deref() != Some("::/0") {
            net.non_masquerade_cidr = net.network_cidr.clone();
        }
    }
    if net.non_masquerade_cidr.is_none() {
        net.non_masquerade_cidr = Some(DEFAULT_NON_MASQUERADE_CIDR.to_string());
    }
    pod_and_service_ranges(c)?;
    if aws {
        assign_subnet_cidrs(c)?;
    }
    Ok(())
}

/// podCIDR (upper half of an IPv4 non-masquerade CIDR) and
/// serviceClusterIPRange defaults, when a non-masquerade CIDR is known.
fn pod_and_service_ranges(c: &mut Cluster) -> Result<()> {
    let net = &mut c.spec.networking;
    let Some(text) = net.non_masquerade_cidr.clone() else {
        return Ok(());
    };
    let non_masq: IpNet = text
        .parse()
        .map_err(|_| populate_error("spec.nonMasqueradeCIDR", format!("{text:?} is not a CIDR")))?;
    if net.pod_cidr.is_none()
        && let IpNet::V4(nm) = non_masq
    {
        net.pod_cidr = Some(upper_half(nm).to_string());
    }
    if net.service_cluster_ip_range.is_none() {
        net.service_cluster_ip_range = Some(
            match non_masq {
                IpNet::V4(_) => DEFAULT_SERVICE_CLUSTER_IP_RANGE,
                IpNet::V6(_) => DEFAULT_SERVICE_CLUSTER_IP_RANGE_IPV6,
            }
            .to_string(),
        );
    }
    Ok(())
}

/// Hands out aligned blocks of `10.0.0.0/8` that overlap nothing handed out
/// before, as kOps does for GCE networks (without existing subnetworks to
/// avoid, since nothing here asks the cloud).
struct BlockAllocator {
    parent: Ipv4Net,
    used: Vec<Ipv4Net>,
}

impl BlockAllocator {
    /// Like kOps' allocator, the search starts at the second block of the
    /// parent (the first one is never handed out).
    fn allocate(&mut self, prefix: u8) -> Result<Ipv4Net> {
        let overlaps =
            |a: &Ipv4Net, b: &Ipv4Net| a.contains(&b.network()) || b.contains(&a.network());
        let block = self
            .parent
            .subnets(prefix)
            .map_err(|_| {
                populate_error(
                    "spec.networkCIDR",
                    format!("cannot cut /{prefix} blocks from {}", self.parent),
                )
            })?
            .skip(1)
            .find(|b| !self.used.iter().any(|u| overlaps(u, b)))
            .ok_or_else(|| {
                populate_error(
                    "spec.subnets",
                    format!("no free /{prefix} block left in {}", self.parent),
                )
            })?;
        self.used.push(block);
        Ok(block)
    }
}

/// GCE network assignments: with IP aliases (the `gce` or `kindnet` CNI) one
/// subnet gets a /19 for nodes plus a /14 for pods and a /16 for services, and
/// the non-masquerade CIDR becomes 10.0.0.0/8; otherwise each new subnet
/// without a CIDR gets a /20.
fn assign_gce_networks(c: &mut Cluster, used: &[String]) -> Result<()> {
    let mut alloc = BlockAllocator {
        parent: Ipv4Net::new(std::net::Ipv4Addr::new(10, 0, 0, 0), 8)
            .map_err(|_| populate_error("spec", "bad parent network"))?,
        used: used.iter().filter_map(|u| u.parse().ok()).collect(),
    };
    let net = &mut c.spec.networking;
    let subnets = net.subnets.get_or_insert_with(Vec::new);
    if net.gce.is_some() || net.kindnet.is_some() {
        if subnets.len() != 1 {
            return Err(populate_error(
                "spec.subnets",
                "GCE IP aliases (networking gce or kindnet) need exactly one subnet",
            ));
        }
        if net.pod_cidr.is_some()
            && net.service_cluster_ip_range.is_some()
            && subnets[0].cidr.is_some()
        {
            return Ok(());
        }
        let pod = alloc.allocate(14)?;
        let service = alloc.allocate(16)?;
        let node = alloc.allocate(19)?;
        subnets[0].cidr = Some(node.to_string());
        net.pod_cidr = Some(pod.to_string());
        net.service_cluster_ip_range = Some(service.to_string());
        net.non_masquerade_cidr = Some(alloc.parent.to_string());
        return Ok(());
    }
    for s in subnets.iter_mut() {
        if s.id.is_none() && s.cidr.is_none() {
            s.cidr = Some(alloc.allocate(20)?.to_string());
        }
    }
    Ok(())
}

pub(super) fn upper_half(nm: Ipv4Net) -> Ipv4Net {
    let prefix = nm.prefix_len();
    if prefix >= 32 {
        return nm;
    }
    let base = u32::from(nm.network()) | (0x8000_0000u32 >> prefix);
    Ipv4Net::new(base.into(), prefix + 1).unwrap_or(nm)
}

/// The `n`-th address of the service range (10 is the cluster DNS service).
pub fn well_known_service_ip(service_range: &str, n: u32) -> Result<std::net::IpAddr> {
    let net: IpNet = service_range.parse().map_err(|_| {
        populate_error(
            "spec.serviceClusterIPRange",
            format!("{service_range:?} is not a CIDR"),
        )
    })?;
    Ok(match net {
        IpNet::V4(v4) => std::net::IpAddr::V4((u32::from(v4.network()).wrapping_add(n)).into()),
        IpNet::V6(v6) => {
            std::net::IpAddr::V6((u128::from(v6.network()).wrapping_add(u128::from(n))).into())
        }
    })
}

/// kOps' subnet CIDR allocation (`assignCIDRsToSubnets`): subnets without a
/// CIDR get one carved from `networkCIDR`.
///
/// Public, Private and DualStack subnets get equal "big" blocks: the network
/// is split into 1, 2, 4 or 8 parts (enough for them, plus one part that is
/// split into 8 "little" blocks when there are Utility subnets). Blocks that
/// overlap a CIDR already given are skipped. Subnets are served in zone order
/// (stable for equal zones). Private subnets with an IPv6 CIDR need no IPv4
/// block.
pub fn assign_subnet_cidrs(c: &mut Cluster) -> Result<()> {
    let net = &mut c.spec.networking;
    let Some(subnets) = net.subnets.as_mut() else {
        return Ok(());
    };
    // A subnet with an id exists already: its CIDR is the cloud's, not ours to choose.
    let needs = |s: &v::ClusterSubnetSpec| {
        s.cidr.is_none()
            && s.id.is_none()
            && !(s.ipv6_cidr.is_some() && s.type_.as_deref() == Some("Private"))
    };
    if !subnets.iter().any(needs) {
        return Ok(());
    }
    let text = net.network_cidr.clone().unwrap_or_default();
    let network: IpNet = text.parse().map_err(|_| {
        populate_error(
            "spec.networkCIDR",
            format!("{text:?} is not a CIDR; cannot assign subnet CIDRs"),
        )
    })?;

    let mut big: Vec<usize> = Vec::new();
    let mut little: Vec<usize> = Vec::new();
    let mut reserved: Vec<IpNet> = Vec::new();
    for (i, s) in subnets.iter().enumerate() {
        let name = s.name.clone().unwrap_or_default();
        if let Some(cidr) = &s.cidr {
            let n: IpNet = cidr.parse().map_err(|_| {
                populate_error(
                    &format!("spec.subnets[{i}].cidr"),
                    format!("subnet {name:?} has an invalid CIDR {cidr:?}"),
                )
            })?;
            if !network.contains(&n.network()) {
                continue;
            }
            reserved.push(n);
        }
        match s.type_.as_deref() {
            Some("Public") | Some("Private") | Some("DualStack") => big.push(i),
            Some("Utility") => little.push(i),
            other => {
                return Err(populate_error(
                    &format!("spec.subnets[{i}].type"),
                    format!(
                        "subnet {name:?} has unknown type {:?}; use Public, Private or Utility",
                        other.unwrap_or("")
                    ),
                ));
            }
        }
    }
    let zone = |i: &usize| subnets[*i].zone.clone().unwrap_or_default();
    big.sort_by_key(zone);
    little.sort_by_key(zone);

    let count = big.len() + usize::from(!little.is_empty());
    let bits = match count {
        0 | 1 => 0,
        2 => 1,
        3 | 4 => 2,
        _ => 3,
    };
    let overlaps = |a: &IpNet, b: &IpNet| a.contains(&b.network()) || b.contains(&a.network());
    let mut blocks: Vec<IpNet> = split(network, bits)?
        .into_iter()
        .filter(|b| !reserved.iter().any(|r| overlaps(r, b)))
        .collect();
    if blocks.is_empty() {
        return Err(populate_error(
            "spec.networkCIDR",
            format!(
                "no free block in {text} for subnets without a CIDR; give their cidr explicitly"
            ),
        ));
    }
    if !little.is_empty() {
        let mut small = split(blocks.remove(0), 3)?.into_iter();
        for i in little {
            if subnets[i].cidr.is_some() {
                continue;
            }
            let b = small.next().ok_or_else(|| {
                populate_error(
                    &format!("spec.subnets[{i}].cidr"),
                    "no small block left for this Utility subnet; give its cidr explicitly",
                )
            })?;
            subnets[i].cidr = Some(b.to_string());
        }
    }
    let mut blocks = blocks.into_iter();
    for i in big {
        if !needs(&subnets[i]) {
            continue;
        }
        let b = blocks.next().ok_or_else(|| {
            populate_error(
                &format!("spec.subnets[{i}].cidr"),
                "no block left in networkCIDR for this subnet; give its cidr explicitly",
            )
        })?;
        subnets[i].cidr = Some(b.to_string());
    }
    Ok(())
}

fn split(net: IpNet, bits: u8) -> Result<Vec<IpNet>> {
    if bits == 0 {
        return Ok(vec![net]);
    }
    let prefix = net.prefix_len() + bits;
    net.subnets(prefix).map(|s| s.collect()).map_err(|_| {
        populate_error(
            "spec.networkCIDR",
            format!("{net} is too small to split into {} subnets", 1u32 << bits),
        )
    })
}
