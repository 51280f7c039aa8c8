//! Completing a spec: kOps' cluster and instance-group population.
//!
//! [`populate_cluster`] and [`populate_instance_group`] do what kOps'
//! `PopulateClusterSpec` and `PopulateInstanceGroupSpec` do for AWS and GCE,
//! without talking to a cloud:
//!
//! - Kubernetes version normalisation (`v1.34.0` -> `1.34.0`), channel `stable`;
//! - topology DNS `Public`, authorization `rbac`, `externalDns.provider`
//!   `dns-controller` (unless DNS is `None`);
//! - networking: AWS `networkCIDR` `172.20.0.0/16` (or the shared VPC's CIDR
//!   given in [`PopulateOptions::with_shared_network_cidr`]),
//!   `nonMasqueradeCIDR` `100.64.0.0/10` (the VPC CIDR with Amazon VPC CNI),
//!   `podCIDR` = upper half of the non-masquerade CIDR,
//!   `serviceClusterIPRange` `100.64.0.0/13` (`fd00:5e4f:ce::/108` on IPv6),
//!   subnet CIDRs on AWS with kOps' allocation ([`assign_subnet_cidrs`]);
//! - API: `masterPublicName` `api.<cluster>`; DNS or a load balancer chosen
//!   from the control-plane subnets (a Private one means a load balancer);
//!   load balancer type `Public` and, on AWS, class `Network`;
//! - state: `keyStore` `<configBase>/pki`, `secretStore` `<configBase>/secrets`;
//! - etcd: manager with 90 days of backups, version by Kubernetes version,
//!   sanity checks (names, instance groups, odd member count);
//! - components, as kOps' option builders fill them: cluster DNS domain,
//!   CoreDNS and node-local DNS, kubelet and control-plane kubelet,
//!   kube-apiserver (etcd servers, admission plugins, service-account
//!   issuer), kube-controller-manager, kube-scheduler, kube-proxy,
//!   containerd, cloud controller manager, EBS / PD CSI drivers, node
//!   termination handler, Cilium / Calico / kindnet, cluster autoscaler,
//!   node problem detector, Karpenter; etcd backup stores;
//! - instance groups: sizes (control plane and bastions 1/1, nodes 2/2),
//!   machine type, image from the channel by architecture, subnets, manager
//!   `CloudGroup`, and the kubelet merged from the cluster's with the role's
//!   node labels and taints (GPU label and taint for GPU machines).
//!
//! For every conformance case the completed cluster spec equals kOps'
//! `cluster-completed.spec` and each group's kubelet equals the one in kOps'
//! nodeup configuration (see the `populate_cases` tests).
//!
//! Differences from kOps, all because nothing here calls a cloud: the DNS
//! zone is chosen from the zones given in [`PopulateOptions::with_dns_zones`]
//! (or set with [`PopulateOptions::with_dns_zone`]) and left unset otherwise;
//! the default AWS machine type is fixed (`t3.medium`, bastions `t3.micro`)
//! instead of the first type the region offers; a shared VPC's CIDR must be
//! given; GPU machine types are recognised by their family name; GCE subnet
//! CIDRs avoid only the ranges given in [`PopulateOptions::with_used_cidrs`];
//! and the API load-balancer class defaults to `Network` (kOps writes
//! `Classic` and then rejects it).
//!
//! Root volumes are not written into the spec (kOps leaves them empty too);
//! [`root_volume`] gives the effective values.

use ipnet::{IpNet, Ipv4Net};

use crate::channel::{Architecture, Channel};
use crate::internal::{
    CloudProvider, Cluster, InstanceGroup, InstanceGroupRole, InstanceRootVolumeSpec, TopologySpec,
};
use crate::v1alpha2 as v;
use crate::version::{normalize_kubernetes_version, parse_kubernetes_version};
use crate::{Error, Result};

/// Default AWS VPC CIDR.
pub const DEFAULT_AWS_NETWORK_CIDR: &str = "172.20.0.0/16";
/// Default non-masquerade CIDR (IPv4).
pub const DEFAULT_NON_MASQUERADE_CIDR: &str = "100.64.0.0/10";
/// Default service CIDR (IPv4).
pub const DEFAULT_SERVICE_CLUSTER_IP_RANGE: &str = "100.64.0.0/13";
/// Default service CIDR (IPv6).
pub const DEFAULT_SERVICE_CLUSTER_IP_RANGE_IPV6: &str = "fd00:5e4f:ce::/108";
/// etcd 3.5 release used below Kubernetes 1.34.
pub const ETCD_35_VERSION: &str = "3.5.31";
/// The sandbox (pause) image containerd runs, as populate names it before remapping it
/// into `spec.containerd.sandboxImage`.
pub const SANDBOX_IMAGE: &str = "registry.k8s.io/pause:3.10.1";

/// The image of Kubernetes component `component` (`kube-apiserver`, `kube-proxy`, ...) of
/// `version` (`1.34.1`), as populate names it before remapping it into the spec.
pub fn component_image(component: &str, version: &str) -> String {
    format!(
        "registry.k8s.io/{component}:v{}",
        version.trim_start_matches('v')
    )
}
/// etcd 3.6 release used from Kubernetes 1.34 up to 1.36.
pub const ETCD_36_VERSION: &str = "3.6.12";
/// etcd 3.7 release used from Kubernetes 1.37.
pub const ETCD_37_VERSION: &str = "3.7.0";

/// What population needs besides the spec.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PopulateOptions {
    /// The channel that provides default images.
    pub channel: Option<Channel>,
    /// The cluster's instance groups (they decide between DNS and a load
    /// balancer for the API).
    pub instance_groups: Vec<InstanceGroup>,
    /// The CIDR of an existing VPC (`networkID`), which kOps would look up.
    pub shared_network_cidr: Option<String>,
    /// The DNS zone to use when the spec names none (kOps finds it in the
    /// cloud's DNS by the cluster name).
    pub dns_zone: Option<String>,
    /// CIDRs already used in a GCE network, which new subnets must avoid.
    pub used_cidrs: Vec<String>,
    /// The cloud's DNS zones, to find the cluster's zone as kOps does
    /// ([`find_dns_zone`]) when the spec names none.
    pub dns_zones: Option<Vec<DnsZoneInfo>>,
}

/// A DNS zone of the cloud, as far as choosing a cluster's zone needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DnsZoneInfo {
    /// Zone id (`/hostedzone/Z123` or `Z123` on AWS).
    pub id: String,
    /// Zone name (`example.com.`).
    pub name: String,
    /// Whether the zone is private; `None` when the cloud does not say.
    pub private: Option<bool>,
}

impl DnsZoneInfo {
    /// A zone with this id, name and privacy.
    pub fn new(id: impl Into<String>, name: impl Into<String>, private: Option<bool>) -> Self {
        DnsZoneInfo {
            id: id.into(),
            name: name.into(),
            private,
        }
    }
}

/// Chooses the cluster's DNS zone among the cloud's zones as kOps does: the
/// zones whose name is a suffix of the cluster name (and whose privacy
/// matches `dns_type` `Public`/`Private`, when known), longest name wins; the
/// id is returned without its `/hostedzone/` prefix. No match, or several
/// equally long matches, is an error.
pub fn find_dns_zone(cluster_name: &str, dns_type: &str, zones: &[DnsZoneInfo]) -> Result<String> {
    let cluster = format!(".{}", cluster_name.trim_end_matches('.'));
    let matching: Vec<&DnsZoneInfo> = zones
        .iter()
        .filter(|z| cluster.ends_with(&format!(".{}", z.name.trim_end_matches('.'))))
        .filter(|z| match (dns_type, z.private) {
            ("Public", Some(p)) => !p,
            ("Private", Some(p)) => p,
            _ => true,
        })
        .collect();
    let longest = matching
        .iter()
        .map(|z| z.name.trim_end_matches('.').len())
        .max();
    let best: Vec<&&DnsZoneInfo> = matching
        .iter()
        .filter(|z| Some(z.name.trim_end_matches('.').len()) == longest)
        .collect();
    match best.as_slice() {
        [one] => Ok(one.id.trim_start_matches("/hostedzone/").to_string()),
        [] => Err(populate_error(
            "spec.dnsZone",
            format!(
                "no {dns_type} DNS zone matches {cluster_name:?}; create one (e.g. for its parent domain) or set spec.dnsZone"
            ),
        )),
        _ => Err(populate_error(
            "spec.dnsZone",
            format!(
                "several DNS zones match {cluster_name:?}; set spec.dnsZone to the id of the one to use"
            ),
        )),
    }
}

impl PopulateOptions {
    /// Uses this channel for images.
    pub fn with_channel(mut self, channel: Channel) -> Self {
        self.channel = Some(channel);
        self
    }

    /// Gives the cluster's instance groups.
    pub fn with_instance_groups(mut self, igs: Vec<InstanceGroup>) -> Self {
        self.instance_groups = igs;
        self
    }

    /// Gives the DNS zone (id or name) for a spec that names none.
    pub fn with_dns_zone(mut self, zone: impl Into<String>) -> Self {
        self.dns_zone = Some(zone.into());
        self
    }

    /// Gives the cloud's DNS zones, to choose the cluster's zone from.
    pub fn with_dns_zones(mut self, zones: Vec<DnsZoneInfo>) -> Self {
        self.dns_zones = Some(zones);
        self
    }

    /// Gives CIDRs already in use in the (GCE) network.
    pub fn with_used_cidrs(mut self, cidrs: Vec<String>) -> Self {
        self.used_cidrs = cidrs;
        self
    }

    /// Gives the CIDR of the existing VPC named by `networkID`.
    pub fn with_shared_network_cidr(mut self, cidr: impl Into<String>) -> Self {
        self.shared_network_cidr = Some(cidr.into());
        self
    }
}

fn populate_error(path: &str, message: impl Into<String>) -> Error {
    Error::Populate {
        path: path.to_string(),
        message: message.into(),
    }
}

/// Populates a cluster and all its instance groups (the instance groups in
/// `opts` are replaced by `igs`).
pub fn populate(
    cluster: &Cluster,
    igs: &[InstanceGroup],
    opts: &PopulateOptions,
) -> Result<(Cluster, Vec<InstanceGroup>)> {
    let mut opts = opts.clone();
    opts.instance_groups = igs.to_vec();
    let full = populate_cluster(cluster, &opts)?;
    let groups = igs
        .iter()
        .map(|ig| populate_instance_group(&full, ig, &opts))
        .collect::<Result<Vec<_>>>()?;
    Ok((full, groups))
}

/// Completes a cluster spec as kOps' `PopulateClusterSpec` does.
pub fn populate_cluster(input: &Cluster, opts: &PopulateOptions) -> Result<Cluster> {
    let mut c = input.clone();
    let name = c.name().to_string();
    if name.is_empty() {
        return Err(populate_error("metadata.name", "cluster name is required"));
    }
    let provider = c.spec.cloud_provider.provider();
    let aws = provider == Some(CloudProvider::Aws);
    let gce = provider == Some(CloudProvider::Gce);

    // Version.
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

    // Topology and authorization (kOps' v1alpha2 defaults).
    let topology = c
        .spec
        .networking
        .topology
        .get_or_insert_with(TopologySpec::default);
    if topology.dns.is_none() {
        topology.dns = Some("Public".to_string());
    }
    let dns_type = topology.dns.clone().unwrap_or_default();
    let none_dns = c.uses_none_dns();
    let authz = c.spec.authorization.get_or_insert_with(Default::default);
    if authz.rbac.is_none() && authz.always_allow.is_none() {
        authz.rbac = Some(v::RBACAuthorizationSpec::default());
    }
    if let Some(flannel) = c.spec.networking.flannel.as_mut()
        && flannel.backend.as_deref().unwrap_or("").is_empty()
    {
        flannel.backend = Some("udp".to_string());
    }

    // etcd.
    for (i, etcd) in c.spec.etcd_clusters.iter_mut().flatten().enumerate() {
        let ename = etcd.name.clone().unwrap_or_default();
        if ename.is_empty() {
            return Err(populate_error(
                &format!("spec.etcdClusters[{i}].name"),
                "etcd cluster has no name",
            ));
        }
        let members = etcd.etcd_members.as_deref().unwrap_or(&[]);
        let mut names = std::collections::BTreeSet::new();
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
        if names.len() % 2 == 0 {
            return Err(populate_error(
                &format!("spec.etcdClusters[{i}].etcdMembers"),
                format!(
                    "etcd cluster {ename:?} has {} members; there must be an odd number for quorum (1 tolerates 0 failures, 3 tolerate 1, 5 tolerate 2; 2 and 4 add nothing)",
                    names.len()
                ),
            ));
        }
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

    // Networks: pod and service ranges from a given non-masquerade CIDR
    // first (kOps' assignSubnets), then the cloud's network assignments.
    pod_and_service_ranges(&mut c)?;
    if gce {
        assign_gce_networks(&mut c, &opts.used_cidrs)?;
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
    pod_and_service_ranges(&mut c)?;
    if aws {
        assign_subnet_cidrs(&mut c)?;
    }

    // API endpoint.
    let net = &c.spec.networking;
    if dns_type == "Public" && c.spec.api.public_name.is_none() {
        c.spec.api.public_name = Some(format!("api.{name}"));
    }
    if c.spec.cloud_provider.openstack.is_none() {
        if c.spec.api.dns.is_none() && c.spec.api.load_balancer.is_none() {
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

    // State store.
    if let Some(base) = c.spec.config_store.base.clone() {
        let base = base.trim_end_matches('/');
        if c.spec.config_store.keypairs.is_none() {
            c.spec.config_store.keypairs = Some(format!("{base}/pki"));
        }
        if c.spec.config_store.secrets.is_none() {
            c.spec.config_store.secrets = Some(format!("{base}/secrets"));
        }
    }

    if c.spec.dns_zone.is_none() && !none_dns {
        c.spec.dns_zone = match (&opts.dns_zone, &opts.dns_zones) {
            (Some(zone), _) => Some(zone.clone()),
            (None, Some(zones)) => Some(find_dns_zone(&name, &dns_type, zones)?),
            (None, None) => None,
        };
        if c.spec.dns_zone.is_some() && c.spec.api.public_name.is_none() {
            c.spec.api.public_name = Some(format!("api.{name}"));
        }
    }
    // `iam.legacy` is always written once `iam` is present, as kOps writes it.
    if let Some(iam) = c.spec.iam.as_mut() {
        iam.legacy.get_or_insert(false);
    }
    // containerRuntime was removed from kOps: only containerd is accepted,
    // and the completed spec no longer carries the field.
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

    populate_components(&mut c, provider, gce, &k8s)?;
    populate_addons(&mut c, provider, &k8s);
    Ok(c)
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

fn upper_half(nm: Ipv4Net) -> Ipv4Net {
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

fn populate_components(
    c: &mut Cluster,
    provider: Option<CloudProvider>,
    gce: bool,
    k8s: &semver::Version,
) -> Result<()> {
    let spec = &mut c.spec;
    if spec.cluster_dns_domain.is_none() {
        spec.cluster_dns_domain = Some("cluster.local".to_string());
    }
    let domain = spec.cluster_dns_domain.clone();
    let service_range = spec
        .networking
        .service_cluster_ip_range
        .clone()
        .unwrap_or_default();
    let dns_ip = well_known_service_ip(&service_range, 10)?.to_string();
    let ipv6 = spec.networking.is_ipv6_only();

    // kube-dns / CoreDNS.
    let kd = spec.kube_dns.get_or_insert_with(Default::default);
    kd.provider.get_or_insert_with(|| "CoreDNS".into());
    kd.cache_max_size.get_or_insert(1000);
    kd.cache_max_concurrent.get_or_insert(150);
    kd.server_ip.get_or_insert_with(|| dns_ip.clone());
    if kd.domain.is_none() {
        kd.domain = domain.clone();
    }
    kd.memory_request.get_or_insert_with(|| "70Mi".into());
    kd.cpu_request.get_or_insert_with(|| "100m".into());
    kd.memory_limit.get_or_insert_with(|| "170Mi".into());
    if ipv6 && provider == Some(CloudProvider::Aws) && kd.upstream_nameservers.is_none() {
        kd.upstream_nameservers = Some(vec!["fd00:ec2::253".to_string()]);
    }
    let nl = kd.node_local_dns.get_or_insert_with(Default::default);
    let nl_enabled = *nl.enabled.get_or_insert(false);
    if nl_enabled {
        nl.local_ip.get_or_insert_with(|| {
            if ipv6 {
                "fd00:90de:d95::1"
            } else {
                "169.254.20.10"
            }
            .to_string()
        });
        nl.forward_to_kube_dns.get_or_insert(false);
    }
    nl.image
        .get_or_insert_with(|| "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0".into());
    nl.memory_request.get_or_insert_with(|| "5Mi".into());
    nl.cpu_request.get_or_insert_with(|| "25m".into());
    let cluster_dns = if nl_enabled {
        nl.local_ip.clone().unwrap_or_default()
    } else {
        dns_ip
    };

    // Kubelets.
    let amazon_vpc = spec.networking.amazonvpc.is_some();
    let anonymous_off = spec.kubelet.as_ref().and_then(|k| k.anonymous_auth) == Some(false);
    for (kubelet, control_plane) in [(&mut spec.kubelet, false), (&mut spec.master_kubelet, true)] {
        let k = kubelet.get_or_insert_with(Default::default);
        k.enable_debugging_handlers = Some(true);
        k.pod_manifest_path = Some("/etc/kubernetes/manifests".to_string());
        k.log_level = Some(2);
        k.cluster_domain = domain.clone();
        k.allow_privileged = None;
        k.cluster_dns.get_or_insert_with(|| cluster_dns.clone());
        k.eviction_hard.get_or_insert_with(|| {
            "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<10%,imagefs.inodesFree<5%".to_string()
        });
        k.kubeconfig_path = Some("/var/lib/kubelet/kubeconfig".to_string());
        k.cgroup_root = Some("/".to_string());
        k.cloud_provider = Some("external".to_string());
        if gce {
            k.hairpin_mode = Some("promiscuous-bridge".to_string());
        }
        k.cgroup_driver = Some("systemd".to_string());
        k.protect_kernel_defaults.get_or_insert(true);
        if amazon_vpc {
            k.shutdown_grace_period = Some("0s".to_string());
            k.shutdown_grace_period_critical_pods = Some("0s".to_string());
        } else if k.shutdown_grace_period.is_none() {
            k.shutdown_grace_period = Some("30s".to_string());
            k.shutdown_grace_period_critical_pods = Some("10s".to_string());
        }
        if (k8s.major, k8s.minor) < (1, 34) {
            k.register_schedulable = Some(true);
        }
        if control_plane && anonymous_off {
            k.anonymous_auth = Some(false);
        }
        // etcd-manager mounts its image as a volume on the control plane.
        if control_plane && (k8s.major, k8s.minor) >= (1, 32) && (k8s.major, k8s.minor) < (1, 36) {
            k.feature_gates
                .get_or_insert_with(Default::default)
                .entry("ImageVolume".to_string())
                .or_insert_with(|| "true".to_string());
        }
    }
    if gce && let Some(g) = spec.cloud_provider.gce.as_mut() {
        g.multizone = Some(true);
        let name = c.metadata.name.as_deref().unwrap_or("");
        let tag = crate::naming::cluster_prefixed_name("k8s-io-role-node", name, 63);
        g.node_tags = Some(tag);
    }

    let version = spec.kubernetes_version.clone().unwrap_or_default();
    let assets = spec_assets(&spec.assets);
    let image = |component: &str| remap_image(&assets, &component_image(component, &version));
    // kops-controller allocates pod CIDRs on IPv6 clusters.
    let kops_ipam = ipv6;

    // kube-apiserver.
    let main_members = spec
        .etcd_clusters
        .iter()
        .flatten()
        .find(|e| e.name.as_deref() == Some("main"))
        .map(|e| e.etcd_members.as_ref().map_or(0, Vec::len))
        .unwrap_or(0);
    let etcd_major = spec
        .etcd_clusters
        .iter()
        .flatten()
        .next()
        .and_then(|e| e.version.as_deref())
        .and_then(|v| semver::Version::parse(v.trim_start_matches('v')).ok())
        .map(|v| v.major);
    let etcd_names: Vec<String> = spec
        .etcd_clusters
        .iter()
        .flatten()
        .filter_map(|e| e.name.clone())
        .collect();
    let authz = spec.authorization.clone().unwrap_or_default();
    let kopeio_authn = spec
        .authentication
        .as_ref()
        .is_some_and(|a| a.kopeio.is_some());
    let metrics_server = spec.metrics_server.as_ref().and_then(|m| m.enabled) == Some(true);
    let service_range = spec.networking.service_cluster_ip_range.clone();
    let a = spec.kube_api_server.get_or_insert_with(Default::default);
    if a.api_server_count.is_none() && main_members > 0 {
        a.api_server_count = i32::try_from(main_members).ok();
    }
    if a.storage_backend.is_none()
        && let Some(major) = etcd_major
    {
        a.storage_backend = Some(format!("etcd{major}"));
    }
    a.kubelet_preferred_address_types
        .get_or_insert_with(|| vec!["InternalIP".into(), "Hostname".into(), "ExternalIP".into()]);
    if kopeio_authn {
        a.authentication_token_webhook_config_file = Some("/etc/kubernetes/authn.config".into());
    }
    if authz.always_allow.is_some() {
        a.authorization_mode = Some("AlwaysAllow".into());
    } else if authz.rbac.is_some() {
        a.authorization_mode = Some("Node,RBAC".into());
    }
    a.requestheader_allowed_names = Some(vec!["aggregator".into()]);
    a.requestheader_extra_header_prefixes = Some(vec!["X-Remote-Extra-".into()]);
    a.requestheader_group_headers = Some(vec!["X-Remote-Group".into()]);
    a.requestheader_username_headers = Some(vec!["X-Remote-User".into()]);
    a.image = Some(image("kube-apiserver"));
    if (k8s.major, k8s.minor) < (1, 33) {
        a.cloud_provider = Some("external".into());
    }
    a.log_level = Some(2);
    a.secure_port = Some(443);
    a.bind_address = Some(if ipv6 { "::" } else { "0.0.0.0" }.into());
    a.allow_privileged = Some(true);
    a.service_cluster_ip_range = service_range;
    let mut servers = Vec::new();
    let mut overrides = Vec::new();
    for name in &etcd_names {
        match name.as_str() {
            "main" => servers.push("https://127.0.0.1:4001".to_string()),
            "events" => overrides.push("/events#https://127.0.0.1:4002".to_string()),
            "leases" => {
                overrides.push("coordination.k8s.io/leases#https://127.0.0.1:4003".to_string())
            }
            _ => {}
        }
    }
    a.etcd_servers = (!servers.is_empty()).then_some(servers);
    a.etcd_servers_overrides = (!overrides.is_empty()).then_some(overrides);
    let mut plugins: Vec<String> = [
        "DefaultStorageClass",
        "DefaultTolerationSeconds",
        "LimitRanger",
        "MutatingAdmissionWebhook",
        "NamespaceLifecycle",
        "NodeRestriction",
        "ResourceQuota",
        "RuntimeClass",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    plugins.extend(a.append_admission_plugins.iter().flatten().cloned());
    a.enable_admission_plugins = Some(plugins);
    a.anonymous_auth = Some(false);
    a.insecure_bind_address = None;
    a.insecure_port = None;
    if metrics_server && a.enable_aggregator_routing.is_none() {
        a.enable_aggregator_routing = Some(true);
    }

    // kube-controller-manager.
    let pod_cidr = spec.networking.pod_cidr.clone();
    let net = &spec.networking;
    let routes = if net.kubenet.is_some() {
        Some(true)
    } else if net.cni_options().is_empty() {
        None
    } else {
        Some(false)
    };
    let gce_aliases = gce && (net.gce.is_some() || net.kindnet.is_some());
    let amazon_vpc = net.amazonvpc.is_some();
    let kcm = spec
        .kube_controller_manager
        .get_or_insert_with(Default::default);
    if kcm
        .attach_detach_reconcile_sync_period
        .as_deref()
        .is_none_or(|d| d == "0s")
    {
        kcm.attach_detach_reconcile_sync_period = Some("1m0s".into());
    }
    kcm.cluster_name = c.metadata.name.clone();
    kcm.cloud_provider = Some("external".into());
    kcm.log_level.get_or_insert(2);
    kcm.image = Some(image("kube-controller-manager"));
    kcm.leader_election = Some(v::LeaderElectionConfiguration {
        leader_elect: Some(true),
        ..Default::default()
    });
    kcm.allocate_node_cidrs = Some(!kops_ipam && !gce_aliases);
    if kcm.cluster_cidr.is_none() && !kops_ipam {
        kcm.cluster_cidr = pod_cidr;
    }
    if routes.is_some() {
        kcm.configure_cloud_routes = routes;
    }
    kcm.use_service_account_credentials.get_or_insert(true);
    if kops_ipam && kcm.controllers.as_ref().is_none_or(|c| c.is_empty()) {
        kcm.controllers = Some(vec!["*".into(), "-nodeipam".into()]);
    }
    let kcm_cidr = kcm.cluster_cidr.clone();

    // kube-scheduler.
    let sch = spec.kube_scheduler.get_or_insert_with(Default::default);
    sch.log_level.get_or_insert(2);
    sch.image.get_or_insert_with(|| image("kube-scheduler"));
    sch.leader_election
        .get_or_insert_with(|| v::LeaderElectionConfiguration {
            leader_elect: Some(true),
            ..Default::default()
        });

    // kube-proxy.
    let kp = spec.kube_proxy.get_or_insert_with(Default::default);
    kp.log_level.get_or_insert(2);
    kp.cpu_request.get_or_insert_with(|| "100m".into());
    kp.image = Some(image("kube-proxy"));
    if kp.cluster_cidr.is_none() && !kops_ipam && !amazon_vpc {
        kp.cluster_cidr = kcm_cidr.filter(|c| !c.is_empty());
    }

    // containerd.
    let ctr = spec.containerd.get_or_insert_with(Default::default);
    if ctr.version.as_deref().unwrap_or("").is_empty() {
        ctr.version = Some("2.3.4".into());
        ctr.runc = Some(v::Runc {
            version: Some("1.4.3".into()),
            ..Default::default()
        });
    }
    ctr.log_level = Some("info".into());
    if ctr.sandbox_image.as_deref().unwrap_or("").is_empty() {
        ctr.sandbox_image = Some(remap_image(&assets, SANDBOX_IMAGE));
    }
    if let Some(n) = ctr.nvidia_gpu.as_mut()
        && n.enabled == Some(true)
    {
        n.package
            .get_or_insert_with(|| "nvidia-driver-535-server".into());
        n.image
            .get_or_insert_with(|| "nvcr.io/nvidia/k8s-device-plugin:v0.17.3".into());
    }
    if let Some(g) = ctr.gvisor.as_mut()
        && g.enabled == Some(true)
    {
        g.platform.get_or_insert_with(|| "systrap".into());
    }
    Ok(())
}

/// Settings kOps' add-on option builders fill in: etcd backups, storage
/// classes, the cloud controller manager, service-account issuer, CSI
/// drivers, node termination handler, CNI plug-in and cluster autoscaler.
fn populate_addons(c: &mut Cluster, provider: Option<CloudProvider>, k8s: &semver::Version) {
    let name = c.name().to_string();
    let spec = &mut c.spec;
    let aws = provider == Some(CloudProvider::Aws);
    let gce = provider == Some(CloudProvider::Gce);
    let ipv6 = spec.networking.is_ipv6_only();

    // etcd backups live under the state store.
    let base = spec.config_store.base.clone().unwrap_or_default();
    for e in spec.etcd_clusters.iter_mut().flatten() {
        let backups = e.backups.get_or_insert_with(Default::default);
        if backups.backup_store.as_deref().unwrap_or("").is_empty() {
            let ename = e.name.clone().unwrap_or_default();
            backups.backup_store = Some(format!(
                "{}/backups/etcd/{ename}",
                base.trim_end_matches('/')
            ));
        }
    }

    // Storage classes.
    let cc = spec.cloud_config.get_or_insert_with(Default::default);
    cc.manage_storage_classes.get_or_insert(true);

    // Cloud controller manager.
    let pod_cidr = spec.networking.pod_cidr.clone();
    let routes = if spec.networking.kubenet.is_some() {
        Some(true)
    } else if spec.networking.cni_options().is_empty() {
        None
    } else {
        Some(false)
    };
    let gce_aliases = spec.networking.gce.is_some() || spec.networking.kindnet.is_some();
    if aws || gce {
        let ccm = spec
            .cloud_controller_manager
            .get_or_insert_with(Default::default);
        ccm.leader_election = Some(v::LeaderElectionConfiguration {
            leader_elect: Some(true),
            ..Default::default()
        });
        if aws {
            ccm.cluster_name = Some(name.clone());
            ccm.allocate_node_cidrs = Some(!ipv6);
            if ccm.cluster_cidr.is_none() && !ipv6 {
                ccm.cluster_cidr = pod_cidr.clone();
            }
            if routes.is_some() {
                ccm.configure_cloud_routes = routes;
            }
            ccm.image.get_or_insert_with(|| {
                "registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.1".into()
            });
        } else {
            ccm.cluster_name = Some(name.replace('.', "-"));
            ccm.allocate_node_cidrs = Some(true);
            ccm.cidr_allocator_type = Some("CloudAllocator".into());
            if ccm.cluster_cidr.is_none() {
                ccm.cluster_cidr = pod_cidr.clone();
            }
            if gce_aliases {
                ccm.configure_cloud_routes = Some(false);
            }
            if ccm.controllers.is_none() {
                let mut controllers = vec!["*".to_string()];
                if ipv6 {
                    controllers.push("-node-ipam-controller".into());
                    controllers.push("-node-route-controller".into());
                }
                ccm.controllers = Some(controllers);
            }
            ccm.image.get_or_insert_with(|| {
                "registry.k8s.io/cloud-provider-gcp/cloud-controller-manager:v35.0.0".into()
            });
        }
    }

    // kOps' `HetznerCloudControllerManagerOptionsBuilder`: hcloud's controller manager,
    // allocating node CIDRs from the pod range, with no routes and no leader election.
    if provider == Some(CloudProvider::Hetzner) {
        let ccm = spec
            .cloud_controller_manager
            .get_or_insert_with(Default::default);
        ccm.cloud_provider = Some("hcloud".into());
        ccm.allow_untagged_cloud = Some(true);
        ccm.leader_election = Some(v::LeaderElectionConfiguration {
            leader_elect: Some(false),
            ..Default::default()
        });
        if ccm.cluster_cidr.is_none() {
            ccm.cluster_cidr = pod_cidr.clone();
        }
        ccm.allocate_node_cidrs = Some(true);
        ccm.configure_cloud_routes = Some(false);
        ccm.image
            .get_or_insert_with(|| "hetznercloud/hcloud-cloud-controller-manager:v1.31.0".into());
    }

    // Service-account issuer discovery.
    let public_name = spec.api.public_name.clone();
    let said = spec.service_account_issuer_discovery.clone();
    let a = spec.kube_api_server.get_or_insert_with(Default::default);
    if a.api_audiences.as_ref().is_none_or(|v| v.is_empty()) {
        a.api_audiences = Some(vec!["kubernetes.svc.default".into()]);
    }
    if a.service_account_issuer.is_none() {
        let store = said.as_ref().and_then(|s| s.discovery_store.clone());
        let service = said
            .as_ref()
            .and_then(|s| s.discovery_service.as_ref())
            .and_then(|d| d.url.clone());
        let issuer = if let Some(store) = store {
            store_https_url(&store)
        } else if let Some(url) = service {
            url
        } else {
            let _ = public_name;
            format!("https://api.internal.{name}")
        };
        a.service_account_issuer = Some(issuer);
    }
    a.service_account_jwksuri = a
        .service_account_issuer
        .as_ref()
        .map(|i| format!("{i}/openid/v1/jwks"));

    // CSI drivers.
    if let Some(awsspec) = spec.cloud_provider.aws.as_mut() {
        let ebs = awsspec.ebs_csi_driver.get_or_insert_with(Default::default);
        ebs.version.get_or_insert_with(|| "v1.58.0".into());
        // kOps' completed spec never records `enabled` for this driver; an
        // explicit `false` is kept so the choice is not lost.
        if ebs.enabled == Some(true) {
            ebs.enabled = None;
        }
        if ipv6
            && awsspec
                .node_ip_families
                .as_ref()
                .is_none_or(|f| f.is_empty())
        {
            awsspec.node_ip_families = Some(vec!["ipv6".into(), "ipv4".into()]);
        }

        // Node termination handler (not with Karpenter).
        let karpenter = spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true);
        if !karpenter {
            let nth = awsspec
                .node_termination_handler
                .get_or_insert_with(Default::default);
            if *nth.enabled.get_or_insert(true) {
                nth.delete_sqs_msg_if_node_not_found.get_or_insert(false);
                nth.enable_spot_interruption_draining.get_or_insert(true);
                nth.enable_scheduled_event_draining.get_or_insert(true);
                nth.enable_rebalance_monitoring.get_or_insert(false);
                nth.enable_rebalance_draining.get_or_insert(false);
                nth.enable_out_of_service_taint.get_or_insert(false);
                nth.prometheus_enable.get_or_insert(false);
                nth.exclude_from_load_balancers.get_or_insert(true);
                nth.managed_asg_tag
                    .get_or_insert_with(|| "aws-node-termination-handler/managed".into());
                nth.pod_termination_grace_period.get_or_insert(-1);
                nth.taint_node.get_or_insert(false);
                nth.cpu_request.get_or_insert_with(|| "50m".into());
                nth.memory_request.get_or_insert_with(|| "64Mi".into());
                nth.version.get_or_insert_with(|| "v1.25.5".into());
            }
        }
    }
    if let Some(gcespec) = spec.cloud_provider.gce.as_mut() {
        let pd = gcespec.pd_csi_driver.get_or_insert_with(Default::default);
        pd.enabled.get_or_insert(true);
        pd.default_storage_class_name
            .get_or_insert_with(|| "balanced-csi".into());
        pd.version.get_or_insert_with(|| "v1.22.1".into());
    }

    // CNI plug-ins.
    let network_cidr = spec.networking.network_cidr.clone();
    let service_range = spec.networking.service_cluster_ip_range.clone();
    if let Some(calico) = spec.networking.calico.as_mut() {
        calico.encapsulation_mode = Some(if ipv6 { "none" } else { "ipip" }.into());
    }
    if let Some(kindnet) = spec.networking.kindnet.as_mut() {
        kindnet.version.get_or_insert_with(|| "v1.0.1".into());
        if kindnet.masquerade.is_none() {
            let mut m = v::KindnetMasqueradeSpec::default();
            if ipv6 {
                m.enabled = Some(false);
                if !aws {
                    kindnet.nat64 = Some(true);
                }
            } else {
                m.enabled = Some(true);
                let cidrs: Vec<String> = [network_cidr, pod_cidr, service_range]
                    .into_iter()
                    .flatten()
                    .collect();
                m.non_masquerade_cidrs = (!cidrs.is_empty()).then_some(cidrs);
            }
            kindnet.masquerade = Some(m);
        }
        kindnet.fast_path_threshold.get_or_insert(0);
        kindnet.log_level.get_or_insert(2);
    }
    if let Some(ci) = spec.networking.cilium.as_mut() {
        ci.version.get_or_insert_with(|| "v1.18.12".into());
        ci.enable_endpoint_health_checking.get_or_insert(true);
        ci.enable_host_firewall.get_or_insert(false);
        ci.identity_allocation_mode
            .get_or_insert_with(|| "crd".into());
        ci.identity_change_grace_period
            .get_or_insert_with(|| "5s".into());
        ci.bpf_ct_global_any_max.get_or_insert(262_144);
        ci.bpf_ct_global_tcp_max.get_or_insert(524_288);
        ci.bpf_lb_algorithm.get_or_insert_with(|| "random".into());
        ci.bpf_lb_maglev_table_size
            .get_or_insert_with(|| "16381".into());
        ci.bpf_nat_global_max.get_or_insert(524_288);
        ci.bpf_neigh_global_max.get_or_insert(524_288);
        ci.bpf_policy_map_max.get_or_insert(16_384);
        ci.bpf_lb_map_max.get_or_insert(65_536);
        ci.cluster_name.get_or_insert_with(|| "default".into());
        ci.monitor_aggregation
            .get_or_insert_with(|| "medium".into());
        ci.sidecar_istio_proxy_image
            .get_or_insert_with(|| "cilium/istio_proxy".into());
        ci.to_fqdns_dns_reject_response_code
            .get_or_insert_with(|| "refused".into());
        ci.agent_prometheus_port.get_or_insert(9090);
        let ipam = ci.ipam.get_or_insert_with(|| "kubernetes".into()).clone();
        // v1alpha2 spells kOps' `masquerade` as its negation.
        ci.disable_masquerade.get_or_insert(ipv6);
        ci.tunnel.get_or_insert_with(|| {
            if ipam == "eni" || ipv6 {
                "disabled"
            } else {
                "vxlan"
            }
            .into()
        });
        ci.enable_remote_node_identity.get_or_insert(true);
        ci.enable_unreachable_routes.get_or_insert(false);
        ci.enable_bpf_masquerade.get_or_insert(ipam == "eni");
        ci.enable_l7_proxy.get_or_insert(true);
        ci.enable_local_redirect_policy.get_or_insert(false);
        ci.disable_cnp_status_updates.get_or_insert(true);
        ci.cpu_request.get_or_insert_with(|| "25m".into());
        ci.memory_request.get_or_insert_with(|| "128Mi".into());
        if ci.enable_encryption == Some(true) && ci.encryption_type.is_none() {
            ci.encryption_type = Some("ipsec".into());
        }
        ci.cni_exclusive.get_or_insert(true);
        match ci.hubble.as_mut() {
            Some(h) => {
                h.enabled.get_or_insert(true);
            }
            None => {
                ci.hubble = Some(v::HubbleSpec {
                    enabled: Some(false),
                    ..Default::default()
                })
            }
        }
        match ci.ingress.as_mut() {
            Some(i) => {
                i.enabled.get_or_insert(true);
            }
            None => {
                ci.ingress = Some(v::CiliumIngressSpec {
                    enabled: Some(false),
                    ..Default::default()
                })
            }
        }
        match ci.gateway_api.as_mut() {
            Some(g) => {
                g.enabled.get_or_insert(true);
            }
            None => {
                ci.gateway_api = Some(v::CiliumGatewayAPISpec {
                    enabled: Some(false),
                    ..Default::default()
                })
            }
        }
    }

    if let Some(npd) = spec.node_problem_detector.as_mut() {
        npd.enabled.get_or_insert(false);
        npd.cpu_request.get_or_insert_with(|| "20m".into());
        npd.memory_request.get_or_insert_with(|| "100Mi".into());
        npd.memory_limit.get_or_insert_with(|| "100Mi".into());
        npd.image.get_or_insert_with(|| {
            "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.18".into()
        });
    }
    if let Some(k) = spec.karpenter.as_mut() {
        k.image
            .get_or_insert_with(|| "public.ecr.aws/karpenter/controller:1.13.0".into());
        k.log_encoding.get_or_insert_with(|| "console".into());
        k.log_level.get_or_insert_with(|| "debug".into());
    }

    // Cluster autoscaler, when enabled.
    if let Some(cas) = spec.cluster_autoscaler.as_mut()
        && cas.enabled == Some(true)
    {
        let image = match k8s.minor {
            32 => "v1.32.7",
            33 => "v1.33.5",
            34 => "v1.34.4",
            35 => "v1.35.1",
            _ => "v1.36.0",
        };
        cas.image.get_or_insert_with(|| {
            format!("registry.k8s.io/autoscaling/cluster-autoscaler:{image}")
        });
        if cas.expander.as_deref().unwrap_or("").is_empty() {
            cas.expander = Some("random".into());
        }
        cas.ignore_daemon_sets_utilization.get_or_insert(false);
        cas.scale_down_utilization_threshold
            .get_or_insert_with(|| "0.5".into());
        cas.skip_nodes_with_custom_controller_pods
            .get_or_insert(true);
        cas.skip_nodes_with_local_storage.get_or_insert(true);
        cas.skip_nodes_with_system_pods.get_or_insert(true);
        cas.balance_similar_node_groups.get_or_insert(false);
        cas.emit_per_nodegroup_metrics.get_or_insert(false);
        cas.aws_use_static_instance_list.get_or_insert(false);
        cas.new_pod_scale_up_delay
            .get_or_insert_with(|| "0s".into());
        cas.scale_down_delay_after_add
            .get_or_insert_with(|| "10m0s".into());
        cas.scale_down_unneeded_time
            .get_or_insert_with(|| "10m0s".into());
        cas.scale_down_unready_time
            .get_or_insert_with(|| "20m0s".into());
        if cas
            .max_node_provision_time
            .as_deref()
            .unwrap_or("")
            .is_empty()
        {
            cas.max_node_provision_time = Some("15m0s".into());
        }
        if cas.expander.as_deref() == Some("priority") {
            cas.create_priority_expander_config = Some(true);
        }
    }
}

/// The public HTTPS URL of a discovery store: `s3://bucket/path` becomes
/// `https://bucket.s3.amazonaws.com/path`, `gs://bucket/path` becomes
/// `https://storage.googleapis.com/bucket/path`, and the in-memory test store
/// `memfs://path` becomes `https://path`.
fn store_https_url(store: &str) -> String {
    let store = store.trim_end_matches('/');
    if let Some(rest) = store.strip_prefix("s3://") {
        let (bucket, path) = rest.split_once('/').unwrap_or((rest, ""));
        let path = if path.is_empty() {
            String::new()
        } else {
            format!("/{path}")
        };
        format!("https://{bucket}.s3.amazonaws.com{path}")
    } else if let Some(rest) = store.strip_prefix("gs://") {
        format!("https://storage.googleapis.com/{rest}")
    } else if let Some(rest) = store.strip_prefix("memfs://") {
        format!("https://{rest}")
    } else {
        store.to_string()
    }
}

type Assets = (Option<String>, Option<String>);

fn spec_assets(assets: &Option<v::AssetsSpec>) -> Assets {
    let a = assets.as_ref();
    (
        a.and_then(|a| a.container_registry.clone()),
        a.and_then(|a| a.container_proxy.clone()),
    )
}

/// Points an image at the cluster's registry (`assets.containerRegistry`) or
/// proxy (`assets.containerProxy`): either replaces the image's registry host.
fn remap_image(assets: &Assets, image: &str) -> String {
    remap_image_with(assets.0.as_deref(), assets.1.as_deref(), image)
}

/// An image reference as the cluster pulls it, kOps' `RemapImage`: with
/// `assets.containerRegistry` set its host replaces the image's registry; else with
/// `assets.containerProxy` set the proxy does (a Docker Hub short name such as
/// `nginx` or `library/nginx` keeps its path and gets the proxy in front). The one
/// definition of image remapping, used by defaulting and by the model.
pub fn remap_image_with(registry: Option<&str>, proxy: Option<&str>, image: &str) -> String {
    if let Some(registry) = registry {
        let rest = image.split_once('/').map_or(image, |(_, r)| r);
        return format!("{}/{rest}", registry.trim_end_matches('/'));
    }
    let Some(proxy) = proxy else {
        return image.to_string();
    };
    let proxy = proxy.trim_end_matches('/');
    let first = image.split('/').next().unwrap_or_default();
    let hub_short = image.matches('/').count() <= 1 && !first.contains(['.', ':']);
    if hub_short {
        format!("{proxy}/{image}")
    } else {
        match image.split_once('/') {
            Some((_, rest)) => format!("{proxy}/{rest}"),
            None => proxy.to_string(),
        }
    }
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

/// The CPU architecture of a machine type (ARM: AWS Graviton families such
/// as `m7g`, `t4g`, `c7gn`, `a1`; GCE `t2a`, `c4a`, `n4a`; everything else amd64).
pub fn machine_architecture(provider: Option<CloudProvider>, machine_type: &str) -> Architecture {
    let first = machine_type.split(',').next().unwrap_or("");
    match provider {
        Some(CloudProvider::Gce) => {
            let family = first.split('-').next().unwrap_or("");
            if matches!(family, "t2a" | "c4a" | "n4a") {
                Architecture::Arm64
            } else {
                Architecture::Amd64
            }
        }
        _ => {
            let family = first.split('.').next().unwrap_or("");
            if family == "a1" {
                return Architecture::Arm64;
            }
            // Family = letters, generation digits, then attribute letters ("m7gd").
            let attrs: String = family
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .to_string();
            if attrs.contains('g') && !family.starts_with('g') && !family.starts_with("p") {
                Architecture::Arm64
            } else {
                Architecture::Amd64
            }
        }
    }
}

fn default_machine_type(
    provider: Option<CloudProvider>,
    role: Option<&InstanceGroupRole>,
) -> Option<&'static str> {
    let bastion = role == Some(&InstanceGroupRole::Bastion);
    match provider {
        Some(CloudProvider::Aws) => Some(if bastion { "t3.micro" } else { "t3.medium" }),
        Some(CloudProvider::Gce) => Some(if bastion { "e2-micro" } else { "e2-medium" }),
        Some(CloudProvider::Hetzner) => Some("cx23"),
        _ => None,
    }
}

/// Completes an instance group as kOps' `PopulateInstanceGroupSpec` does,
/// for a cluster that has been populated.
pub fn populate_instance_group(
    cluster: &Cluster,
    input: &InstanceGroup,
    opts: &PopulateOptions,
) -> Result<InstanceGroup> {
    let mut ig = input.clone();
    let name = ig.name().to_string();
    let provider = cluster.spec.cloud_provider.provider();
    let role = ig.spec.role.clone();
    let Some(role_v) = role.clone() else {
        return Err(populate_error(
            "spec.role",
            format!("instance group {name:?} has no role"),
        ));
    };

    let karpenter = ig.spec.manager.as_deref() == Some("Karpenter");
    // Karpenter picks the machine types of its AWS groups itself: none by default.
    let karpenter_on_aws = karpenter && provider == Some(CloudProvider::Aws);
    if ig.spec.machine_type.is_none() && !karpenter_on_aws {
        ig.spec.machine_type = default_machine_type(provider, Some(&role_v)).map(str::to_string);
    }
    let (min, max) = match role_v {
        InstanceGroupRole::ControlPlane | InstanceGroupRole::Bastion => (Some(1), Some(1)),
        _ if karpenter => (None, None),
        _ => (Some(2), Some(2)),
    };
    if ig.spec.min_size.is_none() {
        ig.spec.min_size = min;
    }
    if ig.spec.max_size.is_none() {
        ig.spec.max_size = max;
    }

    if ig.spec.image.is_none() {
        let channel = opts.channel.as_ref().ok_or_else(|| {
            populate_error(
                "spec.image",
                format!(
                    "instance group {name:?} has no image and no channel was given to choose one"
                ),
            )
        })?;
        let version = cluster
            .spec
            .kubernetes_version
            .as_deref()
            .and_then(parse_kubernetes_version)
            .ok_or_else(|| {
                populate_error(
                    "spec.kubernetesVersion",
                    "the cluster has no valid Kubernetes version",
                )
            })?;
        let arch = machine_architecture(provider, ig.spec.machine_type.as_deref().unwrap_or(""));
        let p = provider.map(|p| p.as_str()).unwrap_or("");
        // Channels list no Hetzner images: kOps takes Ubuntu 24.04 there.
        let fallback = (provider == Some(CloudProvider::Hetzner)).then_some("ubuntu-24.04");
        let image = channel
            .find_image(p, &version, arch)
            .map(|i| i.name.clone())
            .or_else(|| fallback.map(str::to_owned))
            .ok_or_else(|| {
                populate_error(
                    "spec.image",
                    format!("the channel has no {} image for {p} and Kubernetes {version}; set spec.image for instance group {name:?}", arch.as_str()),
                )
            })?;
        ig.spec.image = Some(image);
    }

    let subnets = cluster.spec.networking.subnets.as_deref().unwrap_or(&[]);
    if ig.spec.subnets.as_ref().is_none_or(|s| s.is_empty()) {
        if role_v == InstanceGroupRole::ControlPlane {
            return Err(populate_error(
                "spec.subnets",
                format!("control-plane instance group {name:?} must name its subnets"),
            ));
        }
        let pick = |skip: &[&str]| -> Vec<String> {
            subnets
                .iter()
                .filter(|s| !skip.contains(&s.type_.as_deref().unwrap_or("")))
                .filter_map(|s| s.name.clone())
                .collect()
        };
        let mut chosen =
            if role_v == InstanceGroupRole::ApiServer && cluster.spec.networking.is_ipv6_only() {
                pick(&["Private", "Utility"])
            } else {
                pick(&["DualStack", "Utility"])
            };
        if chosen.is_empty() {
            chosen = pick(&["Utility"]);
        }
        if chosen.is_empty() {
            return Err(populate_error(
                "spec.subnets",
                format!(
                    "cannot choose subnets for instance group {name:?}: the cluster has no Public or Private subnet"
                ),
            ));
        }
        ig.spec.subnets = Some(chosen);
    }

    if ig.spec.manager.is_none() {
        ig.spec.manager = Some("CloudGroup".to_string());
    }
    // GPU machines get a label and a taint (kOps asks EC2 whether the type
    // has GPUs; here the instance family tells).
    let nvidia = |c: &Option<v::ContainerdConfig>| {
        c.as_ref()
            .and_then(|c| c.nvidia_gpu.as_ref())
            .and_then(|n| n.enabled)
            == Some(true)
    };
    if provider == Some(CloudProvider::Aws)
        && (nvidia(&cluster.spec.containerd) || nvidia(&ig.spec.containerd))
        && is_aws_gpu_machine_type(ig.spec.machine_type.as_deref().unwrap_or(""))
    {
        ig.spec
            .node_labels
            .get_or_insert_with(Default::default)
            .insert("kops.k8s.io/gpu".to_string(), "1".to_string());
        let taints = ig.spec.taints.get_or_insert_with(Vec::new);
        if !taints.iter().any(|t| t.starts_with("nvidia.com/gpu")) {
            taints.push("nvidia.com/gpu:NoSchedule".to_string());
        }
    }
    // APIServer groups need kOps' APIServerNodes feature, which also labels
    // the control plane as an API server.
    let api_server_nodes = opts
        .instance_groups
        .iter()
        .any(|g| g.spec.role == Some(InstanceGroupRole::ApiServer));
    ig.spec.kubelet = Some(instance_group_kubelet(cluster, &ig, api_server_nodes)?);
    Ok(ig)
}

/// Recursively overlays `overlay` on `base` as a JSON merge of Go structs
/// does: objects merge key by key, everything else (including lists) is
/// replaced.
fn json_merge(base: &mut serde_json::Value, overlay: &serde_json::Value) {
    match (base, overlay) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(existing) => json_merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn merge_kubelet(
    base: &v::KubeletConfigSpec,
    overlay: &v::KubeletConfigSpec,
) -> Result<v::KubeletConfigSpec> {
    let fail = |e: serde_json::Error| {
        populate_error("spec.kubelet", format!("merging kubelet settings: {e}"))
    };
    let mut b = serde_json::to_value(base).map_err(fail)?;
    let o = serde_json::to_value(overlay).map_err(fail)?;
    json_merge(&mut b, &o);
    serde_json::from_value(b).map_err(fail)
}

/// The kubelet settings of an instance group: the cluster's kubelet (or
/// control-plane kubelet) with the group's own settings on top, the role's
/// node labels and taints added.
/// Whether an AWS instance type has GPUs, by its family (`p3`, `g4dn`,
/// `g5g`, `gr6`, ...); for a mixed list, the first type decides.
pub fn is_aws_gpu_machine_type(machine_type: &str) -> bool {
    let first = machine_type.split(',').next().unwrap_or("").trim();
    let family = first.split('.').next().unwrap_or("");
    let letters: String = family
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let rest = &family[letters.len()..];
    matches!(letters.as_str(), "p" | "g" | "gr") && rest.starts_with(|c: char| c.is_ascii_digit())
}

fn instance_group_kubelet(
    cluster: &Cluster,
    ig: &InstanceGroup,
    api_server_nodes: bool,
) -> Result<v::KubeletConfigSpec> {
    let cp = ig.is_control_plane();
    let role = ig.spec.role.clone();
    let spec = &cluster.spec;
    let mut base = if cp {
        spec.master_kubelet.clone().unwrap_or_default()
    } else {
        spec.kubelet.clone().unwrap_or_default()
    };
    if cp && spec.kubelet.as_ref().and_then(|k| k.anonymous_auth) == Some(false) {
        base.anonymous_auth = Some(false);
    }
    let own = ig.spec.kubelet.clone().unwrap_or_default();

    // Node labels: kubelet labels, role labels, then the group's nodeLabels.
    let mut labels = merge_kubelet(&base, &own)?.node_labels.unwrap_or_default();
    match role {
        Some(InstanceGroupRole::ControlPlane) => {
            for l in [
                "node-role.kubernetes.io/control-plane",
                "kops.k8s.io/kops-controller-pki",
                "node.kubernetes.io/exclude-from-external-load-balancers",
            ] {
                labels.insert(l.to_string(), String::new());
            }
            if api_server_nodes {
                labels.insert(
                    "node-role.kubernetes.io/api-server".to_string(),
                    String::new(),
                );
            }
        }
        Some(InstanceGroupRole::ApiServer) => {
            labels.insert(
                "node-role.kubernetes.io/api-server".to_string(),
                String::new(),
            );
        }
        Some(InstanceGroupRole::Node) => {
            labels.insert("node-role.kubernetes.io/node".to_string(), String::new());
        }
        _ => {}
    }
    for (k, val) in ig.spec.node_labels.iter().flatten() {
        labels.insert(k.clone(), val.clone());
    }

    let secure = base.anonymous_auth == Some(true);
    let mut taints: std::collections::BTreeSet<String> =
        base.taints.iter().flatten().cloned().collect();
    taints.extend(ig.spec.taints.iter().flatten().cloned());
    taints.extend(own.taints.iter().flatten().cloned());
    taints.extend(
        spec.kubelet
            .as_ref()
            .and_then(|k| k.taints.clone())
            .unwrap_or_default(),
    );
    let mut k = merge_kubelet(&base, &own)?;
    match role {
        Some(InstanceGroupRole::ControlPlane) => {
            taints.insert("node-role.kubernetes.io/control-plane=:NoSchedule".to_string());
        }
        Some(InstanceGroupRole::ApiServer) => {
            taints.insert("node-role.kubernetes.io/api-server=:NoSchedule".to_string());
        }
        _ => {}
    }
    if ig.spec.manager.as_deref() == Some("Karpenter") {
        taints.insert("karpenter.sh/unregistered=:NoExecute".to_string());
    }
    k.node_labels = (!labels.is_empty()).then_some(labels);
    k.taints = (!taints.is_empty()).then(|| taints.into_iter().collect());
    if secure {
        k.anonymous_auth = Some(false);
    }
    Ok(k)
}

/// The effective root volume of an instance group: what it sets, else kOps'
/// defaults (64 GB for the control plane, 32 GB for bastions, 128 GB for
/// nodes; `gp3` with 3000 IOPS and 125 MB/s on AWS, `pd-standard` on GCE).
pub fn root_volume(cluster: &Cluster, ig: &InstanceGroup) -> InstanceRootVolumeSpec {
    let mut rv = ig.spec.root_volume.clone().unwrap_or_default();
    let provider = cluster.spec.cloud_provider.provider();
    if rv.size.is_none() {
        rv.size = Some(match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => 64,
            Some(InstanceGroupRole::Bastion) => 32,
            _ => 128,
        });
    }
    match provider {
        Some(CloudProvider::Aws) => {
            let t = rv.type_.get_or_insert_with(|| "gp3".to_string()).clone();
            if t == "gp3" {
                rv.iops.get_or_insert(3000);
                rv.throughput.get_or_insert(125);
            }
        }
        Some(CloudProvider::Gce) => {
            rv.type_.get_or_insert_with(|| "pd-standard".to_string());
        }
        _ => {}
    }
    rv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internal::NetworkingSpec;

    fn subnet(name: &str, zone: &str, ty: &str, cidr: Option<&str>) -> v::ClusterSubnetSpec {
        v::ClusterSubnetSpec {
            name: Some(name.into()),
            zone: Some(zone.into()),
            type_: Some(ty.into()),
            cidr: cidr.map(str::to_string),
            ..Default::default()
        }
    }

    fn cluster_with(subnets: Vec<v::ClusterSubnetSpec>) -> Cluster {
        let mut c = Cluster::default();
        c.spec.networking = NetworkingSpec {
            network_cidr: Some("172.20.0.0/16".into()),
            subnets: Some(subnets),
            ..Default::default()
        };
        c
    }

    fn cidrs(c: &Cluster) -> Vec<String> {
        c.spec
            .networking
            .subnets
            .iter()
            .flatten()
            .map(|s| s.cidr.clone().unwrap_or_default())
            .collect()
    }

    #[test]
    fn one_subnet_takes_the_whole_network() {
        let mut c = cluster_with(vec![subnet("a", "us-east-1a", "Public", None)]);
        assign_subnet_cidrs(&mut c).unwrap();
        assert_eq!(cidrs(&c), ["172.20.0.0/16"]);
    }

    #[test]
    fn three_public_subnets_get_quarters_in_zone_order() {
        let mut c = cluster_with(vec![
            subnet("c", "us-east-1c", "Public", None),
            subnet("a", "us-east-1a", "Public", None),
            subnet("b", "us-east-1b", "Public", None),
        ]);
        assign_subnet_cidrs(&mut c).unwrap();
        assert_eq!(
            cidrs(&c),
            ["172.20.128.0/18", "172.20.0.0/18", "172.20.64.0/18"]
        );
    }

    #[test]
    fn utility_subnets_share_one_block_split_in_eight() {
        let mut c = cluster_with(vec![
            subnet("a", "us-east-1a", "Private", None),
            subnet("b", "us-east-1b", "Private", None),
            subnet("utility-a", "us-east-1a", "Utility", None),
            subnet("utility-b", "us-east-1b", "Utility", None),
        ]);
        assign_subnet_cidrs(&mut c).unwrap();
        // 3 blocks needed -> quarters; the first quarter is cut in eighths for utility subnets.
        assert_eq!(
            cidrs(&c),
            [
                "172.20.64.0/18",
                "172.20.128.0/18",
                "172.20.0.0/21",
                "172.20.8.0/21"
            ]
        );
    }

    #[test]
    fn given_cidrs_are_kept_and_avoided() {
        let mut c = cluster_with(vec![
            subnet("a", "us-east-1a", "Public", Some("172.20.0.0/18")),
            subnet("b", "us-east-1b", "Public", None),
        ]);
        assign_subnet_cidrs(&mut c).unwrap();
        assert_eq!(cidrs(&c), ["172.20.0.0/18", "172.20.128.0/17"]);
    }

    #[test]
    fn too_many_subnets_is_an_error() {
        let subnets = (0..9)
            .map(|i| subnet(&format!("s{i}"), &format!("z{i}"), "Public", None))
            .collect();
        let mut c = cluster_with(subnets);
        let err = assign_subnet_cidrs(&mut c).unwrap_err();
        assert!(err.to_string().contains("spec.subnets["), "{err}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Whatever mix of subnets asks for CIDRs, allocation either fails
        /// with an error or hands out blocks inside the network that overlap
        /// neither each other nor the CIDRs already given.
        #[test]
        fn allocation_is_disjoint_and_inside_the_network(
            kinds in proptest::collection::vec((0usize..3, 0usize..4, proptest::bool::ANY), 1..12),
            prefix in 16u8..24,
        ) {
            let types = ["Public", "Private", "Utility"];
            let subnets: Vec<v::ClusterSubnetSpec> = kinds
                .iter()
                .enumerate()
                .map(|(i, (t, z, fixed))| {
                    // A fixed CIDR only for the first subnet, so given CIDRs never overlap each other.
                    let cidr = (*fixed && i == 0).then(|| format!("10.0.0.0/{}", prefix + 4));
                    subnet(&format!("s{i}"), &format!("zone-{z}"), types[*t], cidr.as_deref())
                })
                .collect();
            let mut c = cluster_with(subnets);
            c.spec.networking.network_cidr = Some(format!("10.0.0.0/{prefix}"));
            let network: IpNet = format!("10.0.0.0/{prefix}").parse().unwrap();
            if assign_subnet_cidrs(&mut c).is_ok() {
                let nets: Vec<IpNet> = cidrs(&c).iter().map(|s| s.parse().unwrap()).collect();
                for (i, a) in nets.iter().enumerate() {
                    proptest::prop_assert!(network.contains(a), "{a} outside {network}");
                    for b in &nets[i + 1..] {
                        proptest::prop_assert!(!(a.contains(&b.network()) || b.contains(&a.network())), "{a} overlaps {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn dns_zone_is_the_longest_matching_suffix_of_the_right_kind() {
        let zones = vec![
            DnsZoneInfo::new("/hostedzone/Z1", "example.com.", Some(false)),
            DnsZoneInfo::new("/hostedzone/Z2", "internal.example.com.", Some(true)),
            DnsZoneInfo::new("/hostedzone/Z3", "k8s.example.com.", Some(false)),
        ];
        assert_eq!(
            find_dns_zone("a.k8s.example.com", "Public", &zones).unwrap(),
            "Z3"
        );
        assert_eq!(
            find_dns_zone("a.example.com", "Public", &zones).unwrap(),
            "Z1"
        );
        assert_eq!(
            find_dns_zone("a.internal.example.com", "Private", &zones).unwrap(),
            "Z2"
        );
        assert_eq!(
            find_dns_zone("a.internal.example.com", "Public", &zones).unwrap(),
            "Z1"
        );
        assert!(find_dns_zone("a.example.org", "Public", &zones).is_err());
        // "xample.com" is not a domain suffix of "a.example.com".
        assert!(
            find_dns_zone(
                "a.example.com",
                "Public",
                &[DnsZoneInfo::new("Z9", "xample.com", None)]
            )
            .is_err()
        );
        let twins = vec![
            DnsZoneInfo::new("A", "example.com", None),
            DnsZoneInfo::new("B", "example.com.", None),
        ];
        assert!(find_dns_zone("a.example.com", "Public", &twins).is_err());
    }

    #[test]
    fn gpu_machine_types() {
        for t in [
            "p3.2xlarge",
            "g4dn.xlarge",
            "g5g.xlarge",
            "gr6.4xlarge",
            "p5.48xlarge,p4d.24xlarge",
        ] {
            assert!(is_aws_gpu_machine_type(t), "{t}");
        }
        for t in ["t3.medium", "m7g.large", "c5.large", "inf2.xlarge", ""] {
            assert!(!is_aws_gpu_machine_type(t), "{t}");
        }
    }

    #[test]
    fn pod_cidr_is_the_upper_half() {
        assert_eq!(
            upper_half("100.64.0.0/10".parse().unwrap()).to_string(),
            "100.96.0.0/11"
        );
        assert_eq!(
            upper_half("10.0.0.0/8".parse().unwrap()).to_string(),
            "10.128.0.0/9"
        );
    }

    #[test]
    fn service_ips() {
        assert_eq!(
            well_known_service_ip("100.64.0.0/13", 10)
                .unwrap()
                .to_string(),
            "100.64.0.10"
        );
        assert_eq!(
            well_known_service_ip("fd00:5e4f:ce::/108", 10)
                .unwrap()
                .to_string(),
            "fd00:5e4f:ce::a"
        );
    }

    #[test]
    fn architectures() {
        let aws = Some(CloudProvider::Aws);
        assert_eq!(machine_architecture(aws, "t3.medium"), Architecture::Amd64);
        assert_eq!(machine_architecture(aws, "m7g.large"), Architecture::Arm64);
        assert_eq!(
            machine_architecture(aws, "c7gn.xlarge"),
            Architecture::Arm64
        );
        assert_eq!(machine_architecture(aws, "t4g.small"), Architecture::Arm64);
        assert_eq!(
            machine_architecture(aws, "g4dn.xlarge"),
            Architecture::Amd64
        );
        assert_eq!(
            machine_architecture(aws, "p4d.24xlarge"),
            Architecture::Amd64
        );
        assert_eq!(
            machine_architecture(Some(CloudProvider::Gce), "t2a-standard-2"),
            Architecture::Arm64
        );
        assert_eq!(
            machine_architecture(Some(CloudProvider::Gce), "e2-medium"),
            Architecture::Amd64
        );
    }
}
