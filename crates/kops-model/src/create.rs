//! `create cluster`: kOps' `NewCluster`, typed, with what its command sets after it.
//!
//! One subnet per zone (the region's one on GCE; a utility subnet per zone for a private
//! topology, a dual-stack one for IPv6), one control-plane group per control-plane
//! instance, one node group per zone (or one Karpenter group), the etcd clusters with a
//! member per control-plane group, and each setting where kOps puts it, so that the
//! stored spec is the one `kops create cluster` stores: no DNS unless a zone is named,
//! `Master` groups labelled with their name, etcd's requests, cilium without kube-proxy.
//! [`perform_assignments`] then stores the CIDRs the completed spec assigns, as kOps'
//! `PerformAssignments` does.
//!
//! `create instancegroup`: [`new_instance_group`], one more group for a stored cluster.

// The spec is built field by field as kOps' `NewCluster` sets it, on defaulted
// generated types.
#![allow(clippy::field_reassign_with_default)]

use std::collections::BTreeMap;

use kops_api::v1alpha2::{self, ObjectMeta};
use kops_api::validation::region_of_zone;

use crate::error::{Result, invalid};

/// The cloud of a new cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cloud {
    /// Amazon Web Services.
    #[default]
    Aws,
    /// Google Compute Engine.
    Gce,
    /// Hetzner Cloud (one location per cluster; kOps rates it beta).
    Hetzner,
}

/// Where the cluster's machines live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Topology {
    /// Public subnets.
    #[default]
    Public,
    /// Private subnets behind NAT, with utility subnets for load balancers.
    Private,
}

/// The cluster's DNS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DnsType {
    /// A public DNS zone.
    #[default]
    Public,
    /// A private DNS zone.
    Private,
    /// No DNS: the API is reached through its load balancer.
    None,
}

/// How the API authorizes requests (`spec.authorization`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Authorization {
    /// Kubernetes RBAC.
    #[default]
    Rbac,
    /// Every request allowed (test clusters only).
    AlwaysAllow,
}

/// What manages the nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceManager {
    /// An autoscaling group (or managed instance group) per node group.
    #[default]
    CloudGroups,
    /// Karpenter (AWS; needs a discovery store).
    Karpenter,
}

/// What [`new_cluster`] builds: kOps' `NewClusterOptions` and the `create cluster` flags
/// its command applies to the result.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct NewClusterOptions {
    /// Cluster name (`demo.example.com`).
    pub name: String,
    /// State store URL; the config base is `<state_store>/<name>`.
    pub state_store: String,
    /// Cloud.
    pub cloud: Cloud,
    /// Zones for nodes (and the control plane, unless `control_plane_zones`).
    pub zones: Vec<String>,
    /// Zones for the control plane.
    pub control_plane_zones: Vec<String>,
    /// Number of control-plane instances (default: one per control-plane zone, else 1).
    pub control_plane_count: Option<u32>,
    /// Total number of nodes, split between the zones (default: one per zone).
    pub node_count: Option<u32>,
    /// Node machine type; several, comma-separated, make a mixed-instances policy (AWS).
    pub node_size: Option<String>,
    /// Control-plane machine type; several, comma-separated, as `node_size`.
    pub control_plane_size: Option<String>,
    /// Number of API-server instances (kOps' `--api-server-count`, its APIServerNodes
    /// feature): split between the zones as the nodes are, in `apiserver-<zone>` groups
    /// that run only kube-apiserver behind the API's load balancer (default: none).
    pub api_server_count: Option<u32>,
    /// API-server machine type (default: the nodes').
    pub api_server_size: Option<String>,
    /// Image for every group.
    pub image: Option<String>,
    /// Image of the nodes (wins over `image`).
    pub node_image: Option<String>,
    /// Image of the control plane (wins over `image`).
    pub control_plane_image: Option<String>,
    /// Image of the bastions (wins over `image`).
    pub bastion_image: Option<String>,
    /// CNI (`cilium`, `calico`, `amazon-vpc-routed-eni`, `cilium-eni`, ...).
    pub networking: String,
    /// Topology (default: private with `ipv6`, else public).
    pub topology: Option<Topology>,
    /// DNS (default: public when `dns_zone` is given, else none, as kOps).
    pub dns: Option<DnsType>,
    /// DNS zone.
    pub dns_zone: Option<String>,
    /// VPC CIDR.
    pub network_cidr: Option<String>,
    /// More VPC CIDRs (`spec.additionalNetworkCIDRs`), each with one more subnet, in the
    /// zones in turn.
    pub additional_network_cidrs: Vec<String>,
    /// An existing VPC (or GCE network) to build in (`spec.networkID`).
    pub network_id: Option<String>,
    /// Existing subnets, by zone (`--subnets`, resolved to their zones), used instead of
    /// new ones; on GCE one subnet, under any zone.
    pub subnet_ids: BTreeMap<String, String>,
    /// Existing utility subnets, by zone (`--utility-subnets`).
    pub utility_subnet_ids: BTreeMap<String, String>,
    /// The CIDRs of existing subnets, by ID, as the cloud reports them: kOps stores them
    /// with the subnets.
    pub subnet_cidrs: BTreeMap<String, String>,
    /// Egress of the subnets (`nat-...`, `i-...`, `External`).
    pub egress: Option<String>,
    /// An IPv6 cluster (AWS): IPv6 subnets, pods and services.
    pub ipv6: bool,
    /// Leave the subnets untagged (`spec.DisableSubnetTags`).
    pub disable_subnet_tags: bool,
    /// Kubernetes version (`v1.34.1`); default the recommendation of the shipped
    /// channel ([`channel::default_kubernetes_version`](crate::channel::default_kubernetes_version)).
    pub kubernetes_version: Option<String>,
    /// The GCE project (`spec.project`); required for GCE.
    pub project: Option<String>,
    /// The GCE service account of the machines (`spec.cloudConfig.gceServiceAccount`).
    pub gce_service_account: Option<String>,
    /// Add a `bastions` group of one machine, the only way in by SSH (private topology
    /// only), named `bastion.<cluster>` in DNS unless DNS is `None`.
    pub bastion: bool,
    /// The API load balancer's type; set, the API is always behind a load balancer
    /// (default: one only for a private topology or DNS `None`, public).
    pub api_load_balancer_type: Option<LoadBalancerType>,
    /// An ACM certificate for the API load balancer (which it then gets).
    pub api_ssl_certificate: Option<String>,
    /// The API's public name (`spec.masterPublicName`).
    pub api_public_name: Option<String>,
    /// How the API authorizes requests.
    pub authorization: Authorization,
    /// Kubernetes feature gates for every component: `Name`, `+Name` (on) or `-Name` (off).
    pub kubernetes_feature_gates: Vec<String>,
    /// Where the service-account issuer's discovery documents are published
    /// (`s3://bucket/path`); on AWS it also gives pods IAM roles (IRSA).
    pub discovery_store: Option<String>,
    /// What manages the nodes.
    pub instance_manager: InstanceManager,
    /// CIDRs that may reach the API (`spec.kubernetesApiAccess`; default: anywhere, IPv4
    /// and IPv6).
    pub admin_access: Vec<String>,
    /// CIDRs that may reach the machines by SSH (`spec.sshAccess`; default: as
    /// `admin_access`).
    pub ssh_access: Vec<String>,
    /// Tags or labels on every cloud object (`spec.cloudLabels`).
    pub cloud_labels: BTreeMap<String, String>,
    /// The channel (`spec.channel`; default `stable`).
    pub channel: Option<String>,
    /// Root volume size of the nodes, GB.
    pub node_volume_size: Option<u32>,
    /// Root volume size of the control plane's machines, GB.
    pub control_plane_volume_size: Option<u32>,
    /// Root volume type of the nodes (`gp3`, `io1`, ...).
    pub node_volume_type: Option<String>,
    /// Root volume type of the control plane's machines.
    pub control_plane_volume_type: Option<String>,
    /// Tenancy of the nodes (AWS: `default`, `dedicated`, `host`).
    pub node_tenancy: Option<String>,
    /// Tenancy of the control plane's machines.
    pub control_plane_tenancy: Option<String>,
    /// More security groups of the nodes.
    pub node_security_groups: Vec<String>,
    /// More security groups of the control plane's machines.
    pub control_plane_security_groups: Vec<String>,
    /// Whether every group's machines get a public IP.
    pub associate_public_ip: Option<bool>,
    /// The etcd clusters (default `main` and `events`).
    pub etcd_clusters: Vec<String>,
    /// etcd's volume type.
    pub etcd_storage_type: Option<String>,
    /// Whether etcd's volumes are encrypted (default: yes on AWS).
    pub encrypt_etcd_storage: Option<bool>,
}

/// The type of the API's load balancer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadBalancerType {
    /// Reachable from the internet.
    #[default]
    Public,
    /// Reachable from inside the network only.
    Internal,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $field:ident: $ty:ty;)*) => {
        $($(#[$doc])* pub fn $name(mut self, v: $ty) -> Self { self.$field = v; self })*
    };
}

impl NewClusterOptions {
    /// Options for cluster `name` stored in `state_store`: AWS, public topology, no DNS,
    /// cilium, a node per zone.
    pub fn new(name: impl Into<String>, state_store: impl Into<String>) -> Self {
        NewClusterOptions {
            name: name.into(),
            state_store: state_store.into().trim_end_matches('/').to_owned(),
            networking: "cilium".into(),
            ..Default::default()
        }
    }

    /// Sets the zones.
    pub fn with_zones<S: Into<String>>(mut self, zones: impl IntoIterator<Item = S>) -> Self {
        self.zones = zones.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the control-plane zones.
    pub fn with_control_plane_zones<S: Into<String>>(
        mut self,
        zones: impl IntoIterator<Item = S>,
    ) -> Self {
        self.control_plane_zones = zones.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the Kubernetes version.
    pub fn with_kubernetes_version(mut self, v: impl Into<String>) -> Self {
        self.kubernetes_version = Some(v.into());
        self
    }

    /// Sets the CNI.
    pub fn with_networking(mut self, v: impl Into<String>) -> Self {
        self.networking = v.into();
        self
    }

    /// Sets the total number of nodes.
    pub fn with_node_count(mut self, n: u32) -> Self {
        self.node_count = Some(n);
        self
    }

    /// Sets the topology.
    pub fn with_topology(mut self, t: Topology) -> Self {
        self.topology = Some(t);
        self
    }

    /// Sets the DNS type.
    pub fn with_dns(mut self, d: DnsType) -> Self {
        self.dns = Some(d);
        self
    }

    setters! {
        /// Sets the cloud.
        with_cloud: cloud: Cloud;
        /// Sets the number of control-plane instances.
        with_control_plane_count: control_plane_count: Option<u32>;
        /// Sets the node machine type(s).
        with_node_size: node_size: Option<String>;
        /// Sets the control-plane machine type(s).
        with_control_plane_size: control_plane_size: Option<String>;
        /// Sets the number of API-server instances.
        with_api_server_count: api_server_count: Option<u32>;
        /// Sets the API-server machine type.
        with_api_server_size: api_server_size: Option<String>;
        /// Sets the image of every group.
        with_image: image: Option<String>;
        /// Sets the DNS zone.
        with_dns_zone: dns_zone: Option<String>;
        /// Sets the VPC CIDR.
        with_network_cidr: network_cidr: Option<String>;
        /// Sets the GCE project.
        with_project: project: Option<String>;
        /// Adds a bastion group (private topology only).
        with_bastion: bastion: bool;
        /// Sets the API load balancer's type.
        with_api_load_balancer_type: api_load_balancer_type: Option<LoadBalancerType>;
        /// Sets the CIDRs that may reach the API.
        with_admin_access: admin_access: Vec<String>;
        /// Sets the CIDRs that may reach the machines by SSH.
        with_ssh_access: ssh_access: Vec<String>;
        /// Sets the labels of every cloud object.
        with_cloud_labels: cloud_labels: BTreeMap<String, String>;
        /// Sets the channel.
        with_channel: channel: Option<String>;
        /// Sets the nodes' root volume size (GB).
        with_node_volume_size: node_volume_size: Option<u32>;
        /// Sets the control plane's root volume size (GB).
        with_control_plane_volume_size: control_plane_volume_size: Option<u32>;
        /// Sets whether etcd's volumes are encrypted.
        with_encrypt_etcd_storage: encrypt_etcd_storage: Option<bool>;
    }
}

fn clean(zones: &[String]) -> Vec<String> {
    zones
        .iter()
        .map(|z| z.trim().to_owned())
        .filter(|z| !z.is_empty())
        .collect()
}

/// The region of an AWS or GCE zone, or of a Hetzner location (its network zone), or an
/// error naming `field`.
fn region_in(zone: &str, cloud: Cloud, field: &str) -> Result<String> {
    let provider = match cloud {
        Cloud::Aws => kops_api::internal::CloudProvider::Aws,
        Cloud::Gce => kops_api::internal::CloudProvider::Gce,
        Cloud::Hetzner => {
            return kops_cloud_hetzner::cloud::network_zone(zone)
                .map(str::to_owned)
                .ok_or_else(|| {
                    let known: Vec<&str> = kops_cloud_hetzner::cloud::LOCATIONS
                        .iter()
                        .map(|(l, _)| *l)
                        .collect();
                    invalid(
                        field,
                        format!(
                            "{zone:?} is not a Hetzner location (known: {})",
                            known.join(", ")
                        ),
                    )
                });
        }
    };
    let r = region_of_zone(zone, Some(provider));
    let ok = !r.is_empty() && r.len() < zone.len() && r.ends_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(r)
    } else {
        Err(invalid(
            field,
            format!("{zone:?} is not a zone name (expected e.g. us-east-1a)"),
        ))
    }
}

/// The networking kOps' `NewCluster` sets for a CNI name, and whether kube-proxy is off.
fn networking(name: &str) -> Result<(v1alpha2::NetworkingSpec, bool)> {
    let mut n = v1alpha2::NetworkingSpec::default();
    let cilium = || {
        let mut c = v1alpha2::CiliumNetworkingSpec::default();
        c.enable_node_port = Some(true);
        c
    };
    let flannel = |backend: &str| {
        let mut f = v1alpha2::FlannelNetworkingSpec::default();
        f.backend = Some(backend.to_owned());
        f
    };
    let mut no_kube_proxy = false;
    match name {
        "cilium" | "" => {
            n.cilium = Some(cilium());
            no_kube_proxy = true;
        }
        "cilium-etcd" => {
            let mut c = cilium();
            c.etcd_managed = Some(true);
            n.cilium = Some(c);
            no_kube_proxy = true;
        }
        "cilium-eni" => {
            let mut c = cilium();
            c.ipam = Some("eni".into());
            n.cilium = Some(c);
            no_kube_proxy = true;
        }
        "amazonvpc" | "amazon-vpc-routed-eni" => n.amazonvpc = Some(Default::default()),
        "calico" => n.calico = Some(Default::default()),
        "canal" => n.canal = Some(Default::default()),
        "flannel" | "flannel-vxlan" => n.flannel = Some(flannel("vxlan")),
        "flannel-udp" => n.flannel = Some(flannel("udp")),
        "kindnet" => n.kindnet = Some(Default::default()),
        "kopeio" | "kopeio-vxlan" => n.kopeio = Some(Default::default()),
        "kubenet" => n.kubenet = Some(Default::default()),
        "kube-router" | "kuberouter" => {
            n.kuberouter = Some(Default::default());
            no_kube_proxy = true;
        }
        "cni" => n.cni = Some(Default::default()),
        "external" => n.external = Some(Default::default()),
        "gce" | "gcp" => n.gce = Some(Default::default()),
        other => {
            return Err(invalid(
                "networking",
                format!(
                    "unknown CNI {other:?} (known: cilium, cilium-etcd, cilium-eni, calico, canal, flannel, flannel-udp, kindnet, kopeio, kubenet, kube-router, amazon-vpc-routed-eni, cni, external, gce)"
                ),
            ));
        }
    }
    Ok((n, no_kube_proxy))
}

fn subnet(
    name: &str,
    zone: Option<&str>,
    region: Option<&str>,
    ty: &str,
) -> v1alpha2::ClusterSubnetSpec {
    let mut s = v1alpha2::ClusterSubnetSpec::default();
    s.name = Some(name.to_owned());
    s.zone = zone.map(str::to_owned);
    s.region = region.map(str::to_owned);
    s.type_ = Some(ty.to_owned());
    s
}

/// A feature gate as `--kubernetes-feature-gates` names it: `Name` or `+Name` on, `-Name`
/// off.
fn feature_gate(text: &str) -> Result<(String, bool)> {
    let t = text.trim();
    let (name, on) = match t.as_bytes().first() {
        Some(b'+') => (t[1..].trim(), true),
        Some(b'-') => (t[1..].trim(), false),
        _ => (t, true),
    };
    if name.is_empty() {
        return Err(invalid(
            "kubernetesFeatureGates",
            format!("{text:?} names no feature gate"),
        ));
    }
    Ok((name.to_owned(), on))
}

/// The etcd member names of the control-plane groups, as kOps names them: the group's
/// name without `control-plane-`, then without the prefix all names share (one character
/// at a time, at least one left), and `etcd-` before a name that starts with a digit.
fn etcd_member_names(groups: &[String]) -> Vec<String> {
    let mut names: Vec<String> = groups
        .iter()
        .map(|g| {
            g.strip_prefix("control-plane-")
                .or_else(|| g.strip_prefix("master-"))
                .unwrap_or(g)
                .to_owned()
        })
        .collect();
    while names.first().is_some_and(|n| n.chars().count() > 1) {
        let Some(first) = names.first().and_then(|n| n.chars().next()) else {
            break;
        };
        if !names.iter().all(|n| n.starts_with(first)) {
            break;
        }
        for n in &mut names {
            n.drain(..first.len_utf8());
        }
    }
    for n in &mut names {
        if n.starts_with(|c: char| c.is_ascii_digit()) {
            n.insert_str(0, "etcd-");
        }
    }
    names
}

/// The share of `total` machines of the `i`th of `zones` zones, as kOps splits them: an
/// even share, and one more for each of the first `total % zones`.
fn zone_share(total: u32, zones: usize, i: usize) -> u32 {
    let n = u32::try_from(zones).unwrap_or(u32::MAX).max(1);
    let i = u32::try_from(i).unwrap_or(u32::MAX);
    total / n + u32::from(i < total % n)
}

/// Machine types as a group takes them: the first is its machine type; several make a
/// mixed-instances policy on AWS.
fn sizes(text: Option<&String>) -> Vec<String> {
    text.map(|t| clean(&t.split(',').map(str::to_owned).collect::<Vec<_>>()))
        .unwrap_or_default()
}

/// The Cluster and InstanceGroups `kops create cluster` stores, before the assignments
/// ([`perform_assignments`]): kOps' `NewCluster` and the flags its command applies.
pub fn new_cluster(
    o: &NewClusterOptions,
) -> Result<(v1alpha2::Cluster, Vec<v1alpha2::InstanceGroup>)> {
    let name = o.name.as_str();
    if name.is_empty() {
        return Err(invalid("metadata.name", "the cluster needs a name"));
    }
    let zones = clean(&o.zones);
    let Some(first) = zones.first() else {
        return Err(invalid("zones", "at least one zone is required"));
    };
    let region = region_in(first, o.cloud, "zones")?;
    for z in &zones {
        if region_in(z, o.cloud, "zones")? != region {
            return Err(invalid(
                "zones",
                format!("{z} is not in region {region} (all zones must be in one region)"),
            ));
        }
    }
    let mut cp_zones = clean(&o.control_plane_zones);
    for z in &cp_zones {
        if region_in(z, o.cloud, "controlPlaneZones")? != region {
            return Err(invalid(
                "controlPlaneZones",
                format!("{z} is not in region {region}"),
            ));
        }
    }
    let count = match o.control_plane_count {
        Some(0) => return Err(invalid("controlPlaneCount", "must be at least 1")),
        Some(n) if !cp_zones.is_empty() && (n as usize) < cp_zones.len() => {
            return Err(invalid(
                "controlPlaneCount",
                format!(
                    "{n} control-plane instances in {} control-plane zones: give as many instances as zones",
                    cp_zones.len()
                ),
            ));
        }
        Some(n) => n as usize,
        None if !cp_zones.is_empty() => cp_zones.len(),
        None => 1,
    };
    if cp_zones.is_empty() {
        cp_zones = zones.clone();
    }
    let gce = o.cloud == Cloud::Gce;
    let aws = o.cloud == Cloud::Aws;
    let hetzner = o.cloud == Cloud::Hetzner;
    let topology = o.topology.unwrap_or(if o.ipv6 {
        Topology::Private
    } else {
        Topology::Public
    });
    let private = topology == Topology::Private;
    if o.bastion && !private {
        return Err(invalid(
            "bastion",
            "a bastion needs the private topology (--topology private)",
        ));
    }
    if o.ipv6 && !aws {
        return Err(invalid("ipv6", "IPv6 clusters are supported on AWS only"));
    }
    let (networking, no_kube_proxy) = networking(&o.networking)?;
    if private && networking.kubenet.is_some() {
        return Err(invalid(
            "networking",
            "kubenet does not support the private topology",
        ));
    }
    if o.instance_manager == InstanceManager::Karpenter && o.discovery_store.is_none() {
        return Err(invalid(
            "instanceManager",
            "karpenter needs a discovery store (--discovery-store)",
        ));
    }

    // Every zone once, sorted (kOps keeps them in a set).
    let mut all_zones = zones.clone();
    all_zones.extend(cp_zones.iter().cloned());
    all_zones.sort();
    all_zones.dedup();
    if hetzner && all_zones.len() > 1 {
        return Err(invalid(
            "zones",
            format!(
                "a Hetzner cluster lives in one location, not {}",
                all_zones.join(", ")
            ),
        ));
    }

    // Subnets: on GCE the region's one; elsewhere one per zone, then one per additional
    // network CIDR, in the zones in turn.
    let mut subnets: Vec<v1alpha2::ClusterSubnetSpec> = Vec::new();
    let mut zone_subnets: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if gce {
        if o.subnet_ids.len() > 1 {
            return Err(invalid(
                "subnets",
                format!("a GCE cluster takes one subnet, not {}", o.subnet_ids.len()),
            ));
        }
        let mut s = subnet(&region, None, Some(&region), "");
        s.id = o.subnet_ids.values().next().cloned();
        subnets.push(s);
        for z in &all_zones {
            zone_subnets.insert(z.clone(), vec![region.clone()]);
        }
    } else {
        for z in &all_zones {
            let mut s = subnet(z, Some(z), None, "");
            s.egress.clone_from(&o.egress);
            s.id = o.subnet_ids.get(z).cloned();
            subnets.push(s);
            zone_subnets.insert(z.clone(), vec![z.clone()]);
        }
        for (i, cidr) in clean(&o.additional_network_cidrs).iter().enumerate() {
            let z = &zones[i % zones.len()];
            let n = format!("{z}-{}", i + 1);
            let mut s = subnet(&n, Some(z), None, "");
            s.cidr = Some(cidr.clone());
            s.egress.clone_from(&o.egress);
            s.id = o.subnet_ids.get(z).cloned();
            subnets.push(s);
            zone_subnets.entry(z.clone()).or_default().push(n);
        }
    }
    for s in &mut subnets {
        s.type_ = Some(if private { "Private" } else { "Public" }.into());
    }
    if private {
        let privates: Vec<v1alpha2::ClusterSubnetSpec> = subnets.clone();
        let derived = |prefix: &str, ty: &str, ids: &BTreeMap<String, String>| {
            privates
                .iter()
                .map(|p| {
                    let mut s = subnet(
                        &format!("{prefix}{}", p.name.as_deref().unwrap_or("")),
                        p.zone.as_deref(),
                        p.region.as_deref(),
                        ty,
                    );
                    s.id = p.zone.as_ref().and_then(|z| ids.get(z)).cloned();
                    s
                })
                .collect::<Vec<_>>()
        };
        if o.ipv6 {
            subnets.extend(derived("dualstack-", "DualStack", &o.utility_subnet_ids));
        }
        if !gce {
            subnets.extend(derived("utility-", "Utility", &o.utility_subnet_ids));
        }
    }
    for s in &mut subnets {
        if s.cidr.is_none()
            && let Some(cidr) = s.id.as_ref().and_then(|id| o.subnet_cidrs.get(id))
        {
            s.cidr = Some(cidr.clone());
        }
    }
    if o.ipv6 {
        for (i, s) in subnets.iter_mut().enumerate() {
            s.ipv6_cidr = Some(format!("/64#{i:x}"));
        }
    }

    // Control-plane groups: one per instance, spread over the zones.
    let mut cp_groups: Vec<(String, String)> = Vec::new();
    for i in 0..count {
        let z = &cp_zones[i % cp_zones.len()];
        let name = if count > cp_zones.len() {
            format!("control-plane-{z}-{}", i / cp_zones.len() + 1)
        } else {
            format!("control-plane-{z}")
        };
        cp_groups.push((name, z.clone()));
    }

    // etcd: a member per control-plane group in each cluster.
    let encrypt = o.encrypt_etcd_storage.unwrap_or(aws);
    let member_names =
        etcd_member_names(&cp_groups.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>());
    let members: Vec<v1alpha2::EtcdMemberSpec> = cp_groups
        .iter()
        .zip(&member_names)
        .map(|((g, _), n)| {
            let mut m = v1alpha2::EtcdMemberSpec::default();
            m.name = Some(n.clone());
            m.instance_group = Some(g.clone());
            m.encrypted_volume = encrypt.then_some(true);
            m.volume_type.clone_from(&o.etcd_storage_type);
            m
        })
        .collect();
    let mut etcd_names = clean(&o.etcd_clusters);
    if etcd_names.is_empty() {
        etcd_names = vec!["main".into(), "events".into()];
    }
    if o.networking == "cilium-etcd" {
        etcd_names.push("cilium".into());
    }
    let etcd: Vec<v1alpha2::EtcdClusterSpec> = etcd_names
        .iter()
        .map(|n| {
            let mut e = v1alpha2::EtcdClusterSpec::default();
            e.name = Some(n.clone());
            e.etcd_members = Some(members.clone());
            let mut m = v1alpha2::EtcdManagerSpec::default();
            m.backup_retention_days = Some(90);
            e.manager = Some(m);
            e.cpu_request = Some(v1alpha2::Quantity(
                if n == "main" { "200m" } else { "100m" }.into(),
            ));
            e.memory_request = Some(v1alpha2::Quantity("100Mi".into()));
            e
        })
        .collect();

    let dns = o.dns.unwrap_or(if o.dns_zone.is_some() {
        DnsType::Public
    } else {
        DnsType::None
    });
    let dns_type = match dns {
        DnsType::Public => "Public",
        DnsType::Private => "Private",
        DnsType::None => "None",
    };
    let mut api = v1alpha2::APISpec::default();
    let load_balancer = o.api_load_balancer_type.is_some()
        || o.api_ssl_certificate.is_some()
        || private
        || dns == DnsType::None;
    if load_balancer {
        let mut lb = v1alpha2::LoadBalancerAccessSpec::default();
        lb.type_ = Some(
            match o.api_load_balancer_type.unwrap_or_default() {
                LoadBalancerType::Public => "Public",
                LoadBalancerType::Internal => "Internal",
            }
            .into(),
        );
        lb.ssl_certificate.clone_from(&o.api_ssl_certificate);
        // A load balancer class is AWS' (an NLB); GCE has none.
        if aws {
            lb.class = Some("Network".into());
        }
        api.load_balancer = Some(lb);
    } else {
        api.dns = Some(Default::default());
    }
    let mut cluster = v1alpha2::Cluster::new(name);
    let spec = &mut cluster.spec;
    spec.api = Some(api);
    let mut authz = v1alpha2::AuthorizationSpec::default();
    match o.authorization {
        Authorization::Rbac => authz.rbac = Some(Default::default()),
        Authorization::AlwaysAllow => authz.always_allow = Some(Default::default()),
    }
    spec.authorization = Some(authz);
    spec.channel = Some(
        o.channel
            .clone()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| "stable".into()),
    );
    if !o.cloud_labels.is_empty() {
        spec.cloud_labels = Some(o.cloud_labels.clone());
    }
    spec.cloud_provider = Some(
        match o.cloud {
            Cloud::Aws => "aws",
            Cloud::Gce => "gce",
            Cloud::Hetzner => "hetzner",
        }
        .into(),
    );
    spec.config_base = Some(format!("{}/{name}", o.state_store.trim_end_matches('/')));
    spec.etcd_clusters = Some(etcd);
    let mut iam = v1alpha2::IAMSpec::default();
    iam.allow_container_registry = Some(true);
    iam.legacy = Some(false);
    let mut kubelet = v1alpha2::KubeletConfigSpec::default();
    kubelet.anonymous_auth = Some(false);
    if no_kube_proxy {
        let mut kp = v1alpha2::KubeProxyConfig::default();
        kp.enabled = Some(false);
        spec.kube_proxy = Some(kp);
    }
    if !o.kubernetes_feature_gates.is_empty() {
        let mut gates = BTreeMap::new();
        for g in &o.kubernetes_feature_gates {
            let (n, on) = feature_gate(g)?;
            gates.insert(n, on.to_string());
        }
        kubelet.feature_gates = Some(gates.clone());
        spec.kube_api_server
            .get_or_insert_with(Default::default)
            .feature_gates = Some(gates.clone());
        spec.kube_controller_manager
            .get_or_insert_with(Default::default)
            .feature_gates = Some(gates.clone());
        spec.kube_proxy
            .get_or_insert_with(Default::default)
            .feature_gates = Some(gates.clone());
        spec.kube_scheduler
            .get_or_insert_with(Default::default)
            .feature_gates = Some(gates);
    }
    spec.kubelet = Some(kubelet);
    if let Some(store) = o.discovery_store.as_deref().map(str::trim) {
        let mut d = v1alpha2::ServiceAccountIssuerDiscoveryConfig::default();
        d.discovery_store = Some(format!("{}/{name}", store.trim_end_matches('/')));
        if aws {
            d.enable_awsoidc_provider = Some(true);
            iam.use_service_account_external_permissions = Some(true);
        }
        spec.service_account_issuer_discovery = Some(d);
    }
    spec.iam = Some(iam);
    if o.instance_manager == InstanceManager::Karpenter {
        let mut k = v1alpha2::KarpenterConfig::default();
        k.enabled = Some(true);
        spec.karpenter = Some(k);
    }
    let admin = match clean(&o.admin_access) {
        a if a.is_empty() => vec!["0.0.0.0/0".to_owned(), "::/0".to_owned()],
        a => a,
    };
    let ssh = match clean(&o.ssh_access) {
        s if s.is_empty() => admin.clone(),
        s => s,
    };
    spec.kubernetes_api_access = Some(admin);
    spec.kubernetes_version = o
        .kubernetes_version
        .clone()
        .or_else(|| crate::channel::default_kubernetes_version(&crate::channel::stable()));
    spec.networking = Some(networking);
    spec.ssh_access = Some(ssh);
    spec.subnets = Some(subnets.clone());
    spec.network_id = o.network_id.clone().filter(|n| !n.trim().is_empty());
    if o.ipv6 {
        spec.non_masquerade_cidr = Some("::/0".into());
        spec.cloud_controller_manager = Some(Default::default());
    }
    let mut dns_spec = v1alpha2::DNSSpec::default();
    dns_spec.type_ = Some(dns_type.into());
    let mut topology_spec = v1alpha2::TopologySpec::default();
    topology_spec.dns = Some(dns_spec);
    if o.bastion && dns != DnsType::None {
        let mut b = v1alpha2::BastionSpec::default();
        b.bastion_public_name = Some(format!("bastion.{name}"));
        topology_spec.bastion = Some(b);
    }
    spec.topology = Some(topology_spec);
    spec.dns_zone = o.dns_zone.clone();
    spec.network_cidr = o.network_cidr.clone();
    // A Hetzner cluster's network needs a range: kOps' Azure and Hetzner default.
    if hetzner && spec.network_cidr.is_none() {
        spec.network_cidr = Some("10.0.0.0/16".into());
    }
    let additional = clean(&o.additional_network_cidrs);
    spec.additional_network_cidrs = (!additional.is_empty()).then_some(additional);
    if o.disable_subnet_tags {
        spec.disable_subnet_tags = Some(true);
    }
    spec.master_public_name = o.api_public_name.clone();
    if gce {
        match o.project.as_deref().map(str::trim) {
            Some(p) if !p.is_empty() => spec.project = Some(p.to_owned()),
            _ => {
                return Err(invalid(
                    "project",
                    "a GCE cluster needs its project (--project)",
                ));
            }
        }
        let mut cc = v1alpha2::CloudConfiguration::default();
        cc.gce_service_account = o.gce_service_account.clone();
        spec.cloud_config = Some(cc);
    }

    // The groups: the control plane, the nodes, the bastions.
    let group = |ig_name: &str, role: GroupRole, (min, max): (u32, u32)| {
        let mut g = v1alpha2::InstanceGroup::new(ig_name);
        let mut labels = BTreeMap::new();
        labels.insert("kops.k8s.io/cluster".to_owned(), name.to_owned());
        g.metadata = ObjectMeta::named(ig_name);
        g.metadata.labels = Some(labels);
        g.spec.role = Some(role.as_str().to_owned());
        g.spec.min_size = Some(i32::try_from(min).unwrap_or(i32::MAX));
        g.spec.max_size = Some(i32::try_from(max).unwrap_or(i32::MAX));
        let mut node_labels = BTreeMap::new();
        node_labels.insert("kops.k8s.io/instancegroup".to_owned(), ig_name.to_owned());
        g.spec.node_labels = Some(node_labels);
        g
    };
    let with_sizes = |g: &mut v1alpha2::InstanceGroup, sizes: &[String]| {
        g.spec.machine_type = sizes.first().cloned();
        if aws && sizes.len() > 1 {
            let mut m = v1alpha2::MixedInstancesPolicySpec::default();
            m.instances = Some(sizes.to_vec());
            g.spec.mixed_instances_policy = Some(m);
        }
    };
    let mut groups = Vec::new();
    let cp_sizes = sizes(o.control_plane_size.as_ref());
    for (g, z) in &cp_groups {
        let mut ig = group(g, GroupRole::ControlPlane, (1, 1));
        let main = zone_subnets
            .get(z)
            .and_then(|s| s.first())
            .cloned()
            .unwrap_or_else(|| z.clone());
        ig.spec.subnets = Some(vec![if o.ipv6 && private {
            format!("dualstack-{main}")
        } else {
            main
        }]);
        if gce {
            ig.spec.zones = Some(vec![z.clone()]);
        }
        with_sizes(&mut ig, &cp_sizes);
        ig.spec.image = o.control_plane_image.clone();
        groups.push(ig);
    }
    // API servers: as kOps' setupAPIServers, one group per zone in every subnet of the
    // zone, the count split between them; none unless asked for.
    let total = o.api_server_count.unwrap_or(0);
    if total > 0 {
        let api_sizes = sizes(o.api_server_size.as_ref());
        for (i, z) in zones.iter().enumerate() {
            let share = zone_share(total, zones.len(), i);
            let mut ig = group(
                &format!("apiserver-{z}"),
                GroupRole::ApiServer,
                (share, share),
            );
            ig.spec.subnets = zone_subnets.get(z).cloned();
            if gce {
                ig.spec.zones = Some(vec![z.clone()]);
            }
            with_sizes(&mut ig, &api_sizes);
            groups.push(ig);
        }
    }
    // Nodes: one group per zone, the count split between them (one node per zone by
    // default); a zone's extra subnets are theirs, its main one the control plane's.
    let node_sizes = sizes(o.node_size.as_ref());
    if o.instance_manager == InstanceManager::Karpenter {
        let mut ig = group("nodes", GroupRole::Node, (0, 0));
        ig.spec.min_size = o
            .node_count
            .filter(|n| *n > 0)
            .map(|n| i32::try_from(n).unwrap_or(i32::MAX));
        ig.spec.max_size = None;
        ig.spec.manager = Some("Karpenter".into());
        ig.spec.image = o.node_image.clone();
        with_sizes(&mut ig, &node_sizes);
        groups.push(ig);
    } else {
        let total = o
            .node_count
            .unwrap_or(u32::try_from(zones.len()).unwrap_or(u32::MAX));
        for (i, z) in zones.iter().enumerate() {
            let share = zone_share(total, zones.len(), i);
            let mut ig = group(&format!("nodes-{z}"), GroupRole::Node, (share, share));
            let own = zone_subnets.get(z).cloned().unwrap_or_default();
            ig.spec.subnets = Some(if own.len() > 1 {
                own[1..].to_vec()
            } else {
                own
            });
            if gce {
                ig.spec.zones = Some(vec![z.clone()]);
            }
            with_sizes(&mut ig, &node_sizes);
            ig.spec.image = o.node_image.clone();
            groups.push(ig);
        }
    }
    if o.bastion {
        let mut ig = group("bastions", GroupRole::Bastion, (1, 1));
        if o.ipv6 {
            let dual: Vec<String> = subnets
                .iter()
                .filter(|s| s.type_.as_deref() == Some("DualStack"))
                .filter_map(|s| s.name.clone())
                .collect();
            ig.spec.subnets = Some(dual);
        }
        if gce {
            ig.spec.zones = Some(all_zones.clone());
        }
        ig.spec.image = o.bastion_image.clone();
        groups.push(ig);
    }
    // A group without subnets gets the cluster's, but for utility (and dual-stack) ones.
    for g in &mut groups {
        if g.spec.subnets.as_ref().is_none_or(Vec::is_empty) {
            let mut picked: Vec<String> = subnets
                .iter()
                .filter(|s| !matches!(s.type_.as_deref(), Some("Utility" | "DualStack")))
                .filter_map(|s| s.name.clone())
                .collect();
            if picked.is_empty() {
                picked = subnets
                    .iter()
                    .filter(|s| s.type_.as_deref() != Some("Utility"))
                    .filter_map(|s| s.name.clone())
                    .collect();
            }
            g.spec.subnets = Some(picked);
        }
        if g.spec.image.is_none() {
            g.spec.image.clone_from(&o.image);
        }
    }
    // What kOps' command sets on the groups after `NewCluster`.
    for g in &mut groups {
        let control_plane = g.spec.role.as_deref() == Some(GroupRole::ControlPlane.as_str());
        let node = g.spec.role.as_deref() == Some(GroupRole::Node.as_str());
        if o.associate_public_ip.is_some() {
            g.spec.associate_public_ip = o.associate_public_ip;
        }
        let (tenancy, security_groups, size, volume_type) = if control_plane {
            (
                &o.control_plane_tenancy,
                &o.control_plane_security_groups,
                o.control_plane_volume_size,
                &o.control_plane_volume_type,
            )
        } else if node {
            (
                &o.node_tenancy,
                &o.node_security_groups,
                o.node_volume_size,
                &o.node_volume_type,
            )
        } else {
            continue;
        };
        if tenancy.is_some() {
            g.spec.tenancy.clone_from(tenancy);
        }
        let security_groups = clean(security_groups);
        if !security_groups.is_empty() {
            g.spec.additional_security_groups = Some(security_groups);
        }
        if size.is_some() {
            g.spec.root_volume_size = size.map(|v| i32::try_from(v).unwrap_or(i32::MAX));
        }
        if volume_type.is_some() {
            g.spec.root_volume_type.clone_from(volume_type);
        }
    }
    Ok((cluster, groups))
}

/// kOps' `PerformAssignments` on a new cluster, from its completed spec (`complete`):
/// the network CIDR (AWS), the non-masquerade CIDR, each subnet's CIDR, the pod and
/// service ranges of GCE's IP aliases, and the API's public name when DNS is public. Stored with the cluster,
/// so that a later change of the defaults never moves a subnet.
pub fn perform_assignments(cluster: &mut v1alpha2::Cluster, completed: &v1alpha2::Cluster) {
    let spec = &mut cluster.spec;
    let full = &completed.spec;
    let aws = spec.cloud_provider.as_deref() == Some("aws");
    if aws && spec.network_cidr.is_none() {
        spec.network_cidr.clone_from(&full.network_cidr);
    }
    if spec.non_masquerade_cidr.is_none() {
        spec.non_masquerade_cidr
            .clone_from(&full.non_masquerade_cidr);
    }
    // GCE's IP aliases (the `gce` and `kindnet` CNIs) get their ranges assigned.
    let ip_alias = spec
        .networking
        .as_ref()
        .is_some_and(|n| n.gce.is_some() || n.kindnet.is_some());
    if spec.cloud_provider.as_deref() == Some("gce") && ip_alias {
        if spec.pod_cidr.is_none() {
            spec.pod_cidr.clone_from(&full.pod_cidr);
        }
        if spec.service_cluster_ip_range.is_none() {
            spec.service_cluster_ip_range
                .clone_from(&full.service_cluster_ip_range);
        }
    }
    let public_dns = spec
        .topology
        .as_ref()
        .and_then(|t| t.dns.as_ref())
        .and_then(|d| d.type_.as_deref())
        == Some("Public");
    if public_dns && spec.master_public_name.is_none() {
        spec.master_public_name.clone_from(&full.master_public_name);
    }
    let assigned = full.subnets.as_deref().unwrap_or(&[]);
    for s in spec.subnets.iter_mut().flatten() {
        if s.cidr.is_none()
            && let Some(f) = assigned.iter().find(|f| f.name == s.name)
        {
            s.cidr.clone_from(&f.cidr);
        }
    }
}

/// The role of a new instance group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupRole {
    /// Worker nodes.
    #[default]
    Node,
    /// The control plane (API server, etcd, controllers).
    ControlPlane,
    /// SSH bastions.
    Bastion,
    /// Machines that run only kube-apiserver (kOps' APIServerNodes feature), behind the
    /// API's load balancer beside the control plane.
    ApiServer,
}

impl GroupRole {
    /// Parses a role as `kops create instancegroup --role` takes it, in any case: `node`,
    /// `control-plane` (also `controlplane` and `master`), `bastion` or `apiserver`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "node" => Ok(GroupRole::Node),
            "control-plane" | "controlplane" | "master" => Ok(GroupRole::ControlPlane),
            "bastion" => Ok(GroupRole::Bastion),
            "apiserver" => Ok(GroupRole::ApiServer),
            other => Err(invalid(
                "role",
                format!("unknown role {other:?}; one of node, control-plane, bastion, apiserver"),
            )),
        }
    }

    /// The role as a stored (v1alpha2) instance group names it: `Node`, `Master` (the
    /// control plane), `Bastion`, `APIServer`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupRole::Node => "Node",
            // The v1alpha2 name kOps writes.
            GroupRole::ControlPlane => "Master",
            GroupRole::Bastion => "Bastion",
            GroupRole::ApiServer => "APIServer",
        }
    }
}

/// What `kops create instancegroup` takes.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct NewInstanceGroupOptions {
    /// The group's name.
    pub name: String,
    /// Its role.
    pub role: GroupRole,
    /// The cluster subnets its machines run in (default: as kOps infers them, every subnet
    /// that is neither a utility nor a dual-stack one; a control-plane group must name
    /// them).
    pub subnets: Vec<String>,
    /// The zones its machines run in (required on GCE).
    pub zones: Vec<String>,
}

impl NewInstanceGroupOptions {
    /// A node group named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        NewInstanceGroupOptions {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the role.
    pub fn with_role(mut self, role: GroupRole) -> Self {
        self.role = role;
        self
    }

    /// Sets the subnets.
    pub fn with_subnets<S: Into<String>>(mut self, subnets: impl IntoIterator<Item = S>) -> Self {
        self.subnets = subnets.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the zones.
    pub fn with_zones<S: Into<String>>(mut self, zones: impl IntoIterator<Item = S>) -> Self {
        self.zones = zones.into_iter().map(Into::into).collect();
        self
    }
}

/// kOps' `create instancegroup`: the instance group to store beside `existing` in
/// `cluster`. It carries what kOps' command writes: the role, subnets and zones, the
/// `kops.k8s.io/instancegroup` node label (and on GCE the metadata-proxy one), and the
/// machine type, image, sizes and manager the completed spec gives it (`populate` names
/// the channel). The cluster with all its groups must complete and validate; an error
/// names the field.
pub fn new_instance_group(
    cluster: &v1alpha2::Cluster,
    existing: &[v1alpha2::InstanceGroup],
    options: &NewInstanceGroupOptions,
    populate: &kops_api::defaults::PopulateOptions,
) -> Result<v1alpha2::InstanceGroup> {
    let cluster_name = cluster.name();
    let name = options.name.trim();
    if name.is_empty() {
        return Err(invalid("name", "the instance group needs a name"));
    }
    if existing.iter().any(|g| g.name() == name) {
        return Err(invalid(
            "name",
            format!("instance group {name:?} already exists in cluster {cluster_name}"),
        ));
    }
    let known: Vec<&str> = cluster
        .spec
        .subnets
        .iter()
        .flatten()
        .filter_map(|s| s.name.as_deref())
        .collect();
    let subnets = clean(&options.subnets);
    if let Some(unknown) = subnets.iter().find(|s| !known.contains(&s.as_str())) {
        return Err(invalid(
            "subnet",
            format!(
                "cluster {cluster_name} has no subnet {unknown:?}; its subnets: {}",
                known.join(", ")
            ),
        ));
    }
    let gce = cluster.spec.cloud_provider.as_deref() == Some("gce");
    let zones = clean(&options.zones);
    if gce && zones.is_empty() {
        return Err(invalid(
            "zone",
            "an instance group of a GCE cluster needs its zones (--zone)",
        ));
    }
    let mut g = v1alpha2::InstanceGroup::new(name);
    let mut labels = BTreeMap::new();
    labels.insert("kops.k8s.io/cluster".to_owned(), cluster_name.to_owned());
    g.metadata = ObjectMeta::named(name);
    g.metadata.labels = Some(labels);
    g.spec.role = Some(options.role.as_str().to_owned());
    g.spec.subnets = (!subnets.is_empty()).then_some(subnets);
    g.spec.zones = (!zones.is_empty()).then_some(zones);
    let mut node_labels = BTreeMap::new();
    node_labels.insert("kops.k8s.io/instancegroup".to_owned(), name.to_owned());
    if gce {
        node_labels.insert(
            "cloud.google.com/metadata-proxy-ready".to_owned(),
            "true".to_owned(),
        );
    }
    g.spec.node_labels = Some(node_labels);

    let mut all = existing.to_vec();
    all.push(g.clone());
    let (_, completed) = crate::complete(cluster, &all, populate)?;
    let full = completed
        .iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| invalid("name", format!("instance group {name:?} was not completed")))?;
    let spec = &mut g.spec;
    spec.machine_type.clone_from(&full.spec.machine_type);
    spec.image.clone_from(&full.spec.image);
    spec.min_size = full.spec.min_size;
    spec.max_size = full.spec.max_size;
    spec.manager.clone_from(&full.spec.manager);
    if spec.subnets.is_none() {
        spec.subnets.clone_from(&full.spec.subnets);
    }
    Ok(g)
}
