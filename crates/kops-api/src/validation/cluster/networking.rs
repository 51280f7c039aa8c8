//! The cluster's address ranges and its CNI (kOps' `ValidateCluster` range
//! checks, `validateNetworking`, `validateNetworkingCilium`).

use std::net::IpAddr;

use ipnet::IpNet;

use super::super::{ValidationErrors, overlaps, parse_cidr};
use super::Cloud;
use crate::internal::Cluster;
use crate::version::parse_kubernetes_version;

/// CNIs kOps no longer offers.
const REMOVED_CNIS: [&str; 5] = ["classic", "external", "lyftvpc", "romana", "weave"];
/// CNIs that cannot run an IPv6-only cluster.
const IPV4_ONLY_CNIS: [&str; 6] = [
    "kubenet",
    "kopeio",
    "kuberouter",
    "amazonvpc",
    "flannel",
    "canal",
];

/// The cluster's ranges that parsed, for the subnet rules to check against.
#[derive(Debug, Default)]
pub(super) struct NetworkRanges {
    /// `networkCIDR` then each `additionalNetworkCIDRs` entry.
    pub(super) network_cidrs: Vec<IpNet>,
    /// `podCIDR`.
    pub(super) pod: Option<IpNet>,
    /// `serviceClusterIPRange`.
    pub(super) service: Option<IpNet>,
}

/// The address ranges in their order: network, non-masquerade, pod, service,
/// the controller manager's cluster CIDR and the DNS service address.
pub(super) fn validate_network_ranges(
    c: &Cluster,
    cloud: Cloud,
    errs: &mut ValidationErrors,
) -> NetworkRanges {
    let network_cidrs = validate_network_cidrs(c, cloud, errs);
    let non_masq = validate_non_masquerade_cidr(c, &network_cidrs, errs);
    let pod = validate_pod_cidr(c, non_masq, errs);
    let service = validate_service_cluster_ip_range(c, pod, errs);
    validate_kube_controller_manager_cluster_cidr(c, non_masq, errs);
    validate_kube_dns_server_ip(c, service, errs);
    NetworkRanges {
        network_cidrs,
        pod,
        service,
    }
}

/// `spec.networkCIDR` (required on AWS) and `spec.additionalNetworkCIDRs`: CIDRs.
fn validate_network_cidrs(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) -> Vec<IpNet> {
    let net = &c.spec.networking;
    let mut network_cidrs: Vec<IpNet> = Vec::new();
    match net.network_cidr.as_deref() {
        None | Some("") => {
            if cloud.aws {
                errs.push(
                    "spec.networkCIDR",
                    "required: the CIDR of the VPC (e.g. 172.20.0.0/16)",
                );
            }
        }
        Some(cidr) => {
            if let Some(n) = parse_cidr(errs, "spec.networkCIDR", cidr) {
                network_cidrs.push(n);
            }
        }
    }
    for (i, cidr) in net.additional_network_cidrs.iter().flatten().enumerate() {
        if let Some(n) = parse_cidr(errs, &format!("spec.additionalNetworkCIDRs[{i}]"), cidr) {
            network_cidrs.push(n);
        }
    }
    network_cidrs
}

/// `spec.nonMasqueradeCIDR`: required, `::/0` on IPv6, apart from the network
/// unless the pods live in it (Amazon VPC CNI, Cilium ENI).
fn validate_non_masquerade_cidr(
    c: &Cluster,
    network_cidrs: &[IpNet],
    errs: &mut ValidationErrors,
) -> Option<IpNet> {
    let net = &c.spec.networking;
    let cidr = match net.non_masquerade_cidr.as_deref() {
        None | Some("") => {
            errs.push(
                "spec.nonMasqueradeCIDR",
                "required (e.g. 100.64.0.0/10, or ::/0 for IPv6)",
            );
            return None;
        }
        Some(cidr) => cidr,
    };
    let n = parse_cidr(errs, "spec.nonMasqueradeCIDR", cidr);
    if cidr.contains(':') && cidr != "::/0" {
        errs.push(
            "spec.nonMasqueradeCIDR",
            "IPv6 clusters must use nonMasqueradeCIDR ::/0",
        );
    }
    let eni = net.cilium.as_ref().and_then(|c| c.ipam.as_deref()) == Some("eni");
    if let (Some(nm), Some(first)) = (n, network_cidrs.first())
        && net.amazonvpc.is_none()
        && !eni
        && !cidr.contains(':')
        && overlaps(&nm, first)
    {
        errs.push(
            "spec.nonMasqueradeCIDR",
            format!(
                "{cidr} must not overlap networkCIDR {}",
                net.network_cidr.as_deref().unwrap_or("")
            ),
        );
    }
    n
}

/// `spec.podCIDR`: within the non-masquerade CIDR.
fn validate_pod_cidr(
    c: &Cluster,
    non_masq: Option<IpNet>,
    errs: &mut ValidationErrors,
) -> Option<IpNet> {
    let cidr = c.spec.networking.pod_cidr.as_deref()?;
    let n = parse_cidr(errs, "spec.podCIDR", cidr)?;
    if let Some(nm) = non_masq
        && !nm.contains(&n)
    {
        errs.push(
            "spec.podCIDR",
            format!("{cidr} must be within nonMasqueradeCIDR {nm}"),
        );
    }
    Some(n)
}

/// `spec.serviceClusterIPRange`: apart from the pod CIDR.
fn validate_service_cluster_ip_range(
    c: &Cluster,
    pod: Option<IpNet>,
    errs: &mut ValidationErrors,
) -> Option<IpNet> {
    let cidr = c.spec.networking.service_cluster_ip_range.as_deref()?;
    let n = parse_cidr(errs, "spec.serviceClusterIPRange", cidr)?;
    if let Some(p) = pod
        && overlaps(&p, &n)
    {
        errs.push(
            "spec.serviceClusterIPRange",
            format!("{cidr} must not overlap podCIDR {p}"),
        );
    }
    Some(n)
}

/// `spec.kubeControllerManager.clusterCIDR`: within the non-masquerade CIDR.
fn validate_kube_controller_manager_cluster_cidr(
    c: &Cluster,
    non_masq: Option<IpNet>,
    errs: &mut ValidationErrors,
) {
    if let Some(kcm) = c
        .spec
        .kube_controller_manager
        .as_ref()
        .and_then(|k| k.cluster_cidr.as_deref())
        && let Some(n) = parse_cidr(errs, "spec.kubeControllerManager.clusterCIDR", kcm)
        && let Some(nm) = non_masq
        && !nm.contains(&n)
    {
        errs.push(
            "spec.kubeControllerManager.clusterCIDR",
            format!("{kcm} must be within nonMasqueradeCIDR {nm}"),
        );
    }
}

/// `spec.kubeDNS.serverIP`: an address within the service range.
fn validate_kube_dns_server_ip(c: &Cluster, service: Option<IpNet>, errs: &mut ValidationErrors) {
    let Some(ip) = c
        .spec
        .kube_dns
        .as_ref()
        .and_then(|k| k.server_ip.as_deref())
    else {
        return;
    };
    match ip.parse::<IpAddr>() {
        Err(_) => errs.push(
            "spec.kubeDNS.serverIP",
            format!("{ip:?} is not an IP address"),
        ),
        Ok(addr) => {
            if let Some(s) = service
                && !s.contains(&addr)
            {
                errs.push(
                    "spec.kubeDNS.serverIP",
                    format!("{ip} must be within serviceClusterIPRange {s}"),
                );
            }
        }
    }
}

/// `spec.networking`: exactly one CNI, and that one fits the cluster.
pub(super) fn validate_networking(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    let cnis = c.spec.networking.cni_options();
    match cnis.as_slice() {
        [] => errs.push(
            "spec.networking",
            "a networking option is required (e.g. networking: {cilium: {}})",
        ),
        [one] => validate_cni(c, cloud, one, errs),
        many => errs.push(
            "spec.networking",
            format!(
                "only one networking option permitted, found {}",
                many.join(", ")
            ),
        ),
    }
}

/// The one CNI: still offered, on its cloud, able to run IPv6 if asked, on a
/// Kubernetes version it supports, and kube-router without kube-proxy.
fn validate_cni(c: &Cluster, cloud: Cloud, one: &str, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    if REMOVED_CNIS.contains(&one) {
        errs.push(format!("spec.networking.{one}"), format!("{one} networking is no longer supported; choose cilium, calico, kindnet, amazonvpc or cni"));
    }
    if one == "amazonvpc" && !cloud.aws {
        errs.push(
            "spec.networking.amazonvpc",
            "amazonvpc networking is only supported on AWS",
        );
    }
    if one == "gce" && !cloud.gce {
        errs.push(
            "spec.networking.gce",
            "gce networking is only supported on GCE",
        );
    }
    if spec.networking.is_ipv6_only() && IPV4_ONLY_CNIS.contains(&one) {
        errs.push(
            format!("spec.networking.{one}"),
            format!("{one} does not support IPv6 clusters"),
        );
    }
    if one == "canal"
        && let Some(v) = spec
            .kubernetes_version
            .as_deref()
            .and_then(parse_kubernetes_version)
        && (v.major, v.minor) >= (1, 28)
    {
        errs.push(
            "spec.networking.canal",
            "canal is not supported on Kubernetes 1.28 and later; migrate to calico or cilium",
        );
    }
    if one == "kuberouter" && spec.kube_proxy.as_ref().and_then(|k| k.enabled) != Some(false) {
        errs.push(
            "spec.kubeProxy.enabled",
            "kube-router replaces kube-proxy: set kubeProxy.enabled: false",
        );
    }
}

/// Cilium's settings kOps checks: encryption (not on IPv6, a known type, the type only
/// with encryption on) and the ingress controller's load-balancer mode.
pub(super) fn validate_cilium(cluster: &Cluster, errs: &mut ValidationErrors) {
    const P: &str = "spec.networking.cilium";
    let Some(c) = cluster.spec.networking.cilium.as_ref() else {
        return;
    };
    let ipv6 = cluster.spec.networking.is_ipv6_only();
    let encryption = c.enable_encryption == Some(true);
    if encryption && ipv6 {
        errs.push(
            format!("{P}.enableEncryption"),
            "encryption is not supported on IPv6 clusters",
        );
    }
    if let Some(t) = c.encryption_type.as_deref().filter(|t| !t.is_empty()) {
        if !encryption {
            errs.push(
                format!("{P}.encryptionType"),
                "encryptionType requires enableEncryption",
            );
        }
        if !matches!(t, "ipsec" | "wireguard") {
            errs.push(
                format!("{P}.encryptionType"),
                format!("unsupported value {t:?}: use ipsec or wireguard"),
            );
        }
    }
    // A given `ingress` block is on unless it says otherwise (kOps' default).
    if let Some(i) = c.ingress.as_ref().filter(|i| i.enabled != Some(false))
        && let Some(mode) = i
            .default_load_balancer_mode
            .as_deref()
            .filter(|m| !m.is_empty())
        && !matches!(mode, "shared" | "dedicated")
    {
        errs.push(
            format!("{P}.ingress.defaultLoadBalancerMode"),
            format!("unsupported value {mode:?}: use shared or dedicated"),
        );
    }
}
