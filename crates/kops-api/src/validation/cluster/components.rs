//! Component settings that must agree with the cluster's networks (kOps'
//! `ValidateCluster` checks of kube-apiserver and the kubelets).

use super::super::ValidationErrors;
use crate::internal::Cluster;

/// `spec.kubeAPIServer.serviceClusterIPRange`: equal to `spec.serviceClusterIPRange`.
pub(super) fn validate_kube_api_server_service_range(c: &Cluster, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    if let (Some(a), Some(range)) = (
        spec.kube_api_server
            .as_ref()
            .and_then(|a| a.service_cluster_ip_range.as_deref()),
        spec.networking.service_cluster_ip_range.as_deref(),
    ) && a != range
    {
        errs.push(
            "spec.kubeAPIServer.serviceClusterIPRange",
            format!(
                "{a} differs from spec.serviceClusterIPRange {range}; remove it or make them equal"
            ),
        );
    }
}

/// `spec.kubelet.clusterDNS`, `spec.masterKubelet.clusterDNS`: the DNS service
/// address or the node-local DNS address.
pub(super) fn validate_kubelet_cluster_dns(c: &Cluster, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    let Some(dns_ip) = spec.kube_dns.as_ref().and_then(|d| d.server_ip.as_deref()) else {
        return;
    };
    let local = spec
        .kube_dns
        .as_ref()
        .and_then(|d| d.node_local_dns.as_ref())
        .filter(|n| n.enabled == Some(true))
        .and_then(|n| n.local_ip.as_deref());
    for (field, k) in [
        ("kubelet", &spec.kubelet),
        ("masterKubelet", &spec.master_kubelet),
    ] {
        if let Some(cd) = k.as_ref().and_then(|k| k.cluster_dns.as_deref())
            && cd != dns_ip
            && Some(cd) != local
        {
            errs.push(format!("spec.{field}.clusterDNS"), format!("{cd} differs from spec.kubeDNS.serverIP {dns_ip} (and the node-local DNS address)"));
        }
    }
}
