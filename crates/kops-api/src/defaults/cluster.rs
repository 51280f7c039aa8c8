//! The cluster-level steps of [`super::populate_cluster`], one function per
//! area, in the order kOps' `populateClusterSpec.run` takes them: version,
//! topology, etcd, the API endpoint, the state store, the DNS zone, IAM and
//! the container runtime (networks are in `network.rs`, components and
//! add-ons in `components.rs` and `addons.rs`).

use std::collections::BTreeSet;

use super::{
    ETCD_35_VERSION, ETCD_36_VERSION, ETCD_37_VERSION, PopulateOptions, find_dns_zone,
    populate_error,
};
use crate::Result;
use crate::internal::{Cluster, InstanceGroupRole, TopologySpec};
use crate::v1alpha2 as v;
use crate::version::{normalize_kubernetes_version, parse_kubernetes_version};

/// `spec.kubernetesVersion` normalised (`v1.34.0` -> `1.34.0`) and `spec.channel`
/// `stable`; returns the parsed version.
pub(super) fn populate_kubernetes_version(c: &mut Cluster) -> Result<semver::Version> {
    let version = match c.spec.kubernetes_version.as_deref() {
        None | Some("") => {
            return Err(populate_error(
                "spec.kubernetesVersion",
                "required (e.g. 1.34.0)",
            ));
        }
        Some(v) => normalize_kubernetes_version(v),
    };
    let k8s = parse_kubernetes_version(&version).ok_or_else(|| {
        populate_error(
            "spec.kubernetesVersion",
            format!("{version:?} is not a Kubernetes version"),
        )
    })?;
    c.spec.kubernetes_version = Some(version);
    if c.spec.channel.is_none() {
        c.spec.channel = Some("stable".to_string());
    }
    Ok(k8s)
}

/// Topology DNS `Public`, authorization `rbac` and flannel's `udp` backend
/// (kOps' v1alpha2 defaults); returns the DNS type.
pub(super) fn populate_topology_and_authorization(c: &mut Cluster) -> String {
    let topology = c
        .spec
        .networking
        .topology
        .get_or_insert_with(TopologySpec::default);
    if topology.dns.is_none() {
        topology.dns = Some("Public".to_string());
    }
    let dns_type = topology.dns.clone().unwrap_or_default();
    let authz = c.spec.authorization.get_or_insert_with(Default::default);
    if authz.rbac.is_none() && authz.always_allow.is_none() {
        authz.rbac = Some(v::RBACAuthorizationSpec::default());
    }
    if let Some(flannel) = c.spec.networking.flannel.as_mut()
        && flannel.backend.as_deref().unwrap_or("").is_empty()
    {
        flannel.backend = Some("udp".to_string());
    }
    dns_type
}

/// etcd clusters: the sanity checks kOps makes before filling them, then
/// etcd-manager with 90 days of backups and the etcd version for the
/// Kubernetes version (kOps' `EtcdOptionsBuilder`).
pub(super) fn populate_etcd_clusters(c: &mut Cluster, k8s: &semver::Version) -> Result<()> {
    for (i, etcd) in c.spec.etcd_clusters.iter_mut().flatten().enumerate() {
        check_etcd_cluster(i, etcd)?;
        let manager = etcd.manager.get_or_insert_with(Default::default);
        if manager.backup_retention_days.is_none() {
            manager.backup_retention_days = Some(90);
        }
        if etcd.version.is_none() {
            let v = if (k8s.major, k8s.minor) < (1, 34) {
                ETCD_35_VERSION
            } else if (k8s.major, k8s.minor) < (1, 37) {
                ETCD_36_VERSION
            } else {
                ETCD_37_VERSION
            };
            etcd.version = Some(v.to_string());
        }
    }
    Ok(())
}

/// One etcd cluster: named, its members named, unique and on an instance
/// group, an odd number of them.
fn check_etcd_cluster(i: usize, etcd: &v::EtcdClusterSpec) -> Result<()> {
    let ename = etcd.name.clone().unwrap_or_default();
    if ename.is_empty() {
        return Err(populate_error(
            &format!("spec.etcdClusters[{i}].name"),
            "etcd cluster has no name",
        ));
    }
    let members = etcd.etcd_members.as_deref().unwrap_or(&[]);
    let mut names = BTreeSet::new();
    for (j, m) in members.iter().enumerate() {
        let path = format!("spec.etcdClusters[{i}].etcdMembers[{j}]");
        let mname = m.name.as_deref().unwrap_or("");
        if mname.is_empty() {
            return Err(populate_error(
                &format!("{path}.name"),
                format!("member of etcd cluster {ename:?} has no name"),
            ));
        }
        if m.instance_group.as_deref().unwrap_or("").is_empty() {
            return Err(populate_error(
                &format!("{path}.instanceGroup"),
                format!("member {mname:?} of etcd cluster {ename:?} names no instance group"),
            ));
        }
        if !names.insert(mname.to_string()) {
            return Err(populate_error(
                &format!("{path}.name"),
                format!("two members named {mname:?} in etcd cluster {ename:?}"),
            ));
        }
    }
    if names.len().is_multiple_of(2) {
        return Err(populate_error(
            &format!("spec.etcdClusters[{i}].etcdMembers"),
            format!(
                "etcd cluster {ename:?} has {} members; there must be an odd number for quorum (1 tolerates 0 failures, 3 tolerate 1, 5 tolerate 2; 2 and 4 add nothing)",
                names.len()
            ),
        ));
    }
    Ok(())
}

/// The API endpoint: `masterPublicName` `api.<cluster>`, DNS or a load
/// balancer chosen from the API servers' subnets, load balancer type `Public`
/// and (AWS) class `Network`, and dns-controller for external DNS.
pub(super) fn populate_api_endpoint(
    c: &mut Cluster,
    name: &str,
    dns_type: &str,
    aws: bool,
    none_dns: bool,
    opts: &PopulateOptions,
) {
    if dns_type == "Public" && c.spec.api.public_name.is_none() {
        c.spec.api.public_name = Some(format!("api.{name}"));
    }
    if c.spec.cloud_provider.openstack.is_none() {
        if c.spec.api.dns.is_none() && c.spec.api.load_balancer.is_none() {
            choose_api_access(c, opts);
        }
        if let Some(lb) = &mut c.spec.api.load_balancer
            && lb.type_.is_none()
        {
            lb.type_ = Some("Public".to_string());
        }
    }
    if aws
        && let Some(lb) = &mut c.spec.api.load_balancer
        && lb.class.is_none()
    {
        lb.class = Some("Network".to_string());
    }
    if !none_dns {
        if c.spec.dns_zone.is_some() && c.spec.api.public_name.is_none() {
            c.spec.api.public_name = Some(format!("api.{name}"));
        }
        let ext = c.spec.external_dns.get_or_insert_with(Default::default);
        if ext.provider.is_none() {
            ext.provider = Some("dns-controller".to_string());
        }
    }
}

/// DNS or a load balancer for the API: a load balancer when an API server
/// (the control plane unless there are APIServer groups) runs in a Private
/// subnet, else DNS when one runs in a Public subnet.
fn choose_api_access(c: &mut Cluster, opts: &PopulateOptions) {
    let net = &c.spec.networking;
    let subnet_type = |s: &str| {
        net.subnets
            .iter()
            .flatten()
            .find(|x| x.name.as_deref() == Some(s))
            .and_then(|x| x.type_.clone())
    };
    let igs = &opts.instance_groups;
    let have_api_servers = igs
        .iter()
        .any(|g| g.spec.role == Some(InstanceGroupRole::ApiServer));
    let (mut lb, mut dns) = (false, false);
    for g in igs {
        let serves_api = g.spec.role == Some(InstanceGroupRole::ApiServer)
            || (!have_api_servers && g.is_control_plane());
        if serves_api {
            for s in g.spec.subnets.iter().flatten() {
                match subnet_type(s).as_deref() {
                    Some("Private") => lb = true,
                    Some("Public") => dns = true,
                    _ => {}
                }
            }
        }
    }
    if lb {
        c.spec.api.load_balancer = Some(Default::default());
    } else if dns {
        c.spec.api.dns = Some(Default::default());
    }
}

/// State store: `keyStore` `<configBase>/pki`, `secretStore` `<configBase>/secrets`.
pub(super) fn populate_state_store(c: &mut Cluster) {
    if let Some(base) = c.spec.config_store.base.clone() {
        let base = base.trim_end_matches('/');
        if c.spec.config_store.keypairs.is_none() {
            c.spec.config_store.keypairs = Some(format!("{base}/pki"));
        }
        if c.spec.config_store.secrets.is_none() {
            c.spec.config_store.secrets = Some(format!("{base}/secrets"));
        }
    }
}

/// `spec.dnsZone`: the zone given, else the one found among the cloud's zones.
pub(super) fn populate_dns_zone(
    c: &mut Cluster,
    name: &str,
    dns_type: &str,
    none_dns: bool,
    opts: &PopulateOptions,
) -> Result<()> {
    if c.spec.dns_zone.is_none() && !none_dns {
        c.spec.dns_zone = match (&opts.dns_zone, &opts.dns_zones) {
            (Some(zone), _) => Some(zone.clone()),
            (None, Some(zones)) => Some(find_dns_zone(name, dns_type, zones)?),
            (None, None) => None,
        };
        if c.spec.dns_zone.is_some() && c.spec.api.public_name.is_none() {
            c.spec.api.public_name = Some(format!("api.{name}"));
        }
    }
    Ok(())
}

/// `iam.legacy` is always written once `iam` is present, as kOps writes it.
pub(super) fn populate_iam(c: &mut Cluster) {
    if let Some(iam) = c.spec.iam.as_mut() {
        iam.legacy.get_or_insert(false);
    }
}

/// containerRuntime was removed from kOps: only containerd is accepted,
/// and the completed spec no longer carries the field.
pub(super) fn populate_container_runtime(c: &mut Cluster) -> Result<()> {
    match c.spec.container_runtime.as_deref() {
        None | Some("") | Some("containerd") => c.spec.container_runtime = None,
        Some(other) => {
            return Err(populate_error(
                "spec.containerRuntime",
                format!(
                    "unsupported value {other:?}: only containerd is supported (remove the field)"
                ),
            ));
        }
    }
    Ok(())
}
