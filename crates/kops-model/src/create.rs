//! `create cluster`: kOps' `NewCluster`, typed.
//!
//! One subnet per zone (plus a utility subnet per zone for a private topology), one
//! control-plane group per control-plane instance, one node group per zone, and the
//! `main` and `events` etcd clusters with a member per control-plane group. The result is
//! the unpopulated spec kOps stores; complete it with [`crate::complete`].
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

/// What [`new_cluster`] builds.
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
    /// Total number of nodes, split between the zones.
    pub node_count: u32,
    /// Node machine type.
    pub node_size: Option<String>,
    /// Control-plane machine type.
    pub control_plane_size: Option<String>,
    /// Image for every group.
    pub image: Option<String>,
    /// CNI (`cilium`, `calico`, `amazon-vpc-routed-eni`, `cilium-eni`, ...).
    pub networking: String,
    /// Topology.
    pub topology: Topology,
    /// DNS.
    pub dns: DnsType,
    /// DNS zone.
    pub dns_zone: Option<String>,
    /// VPC CIDR.
    pub network_cidr: Option<String>,
    /// Kubernetes version (`v1.34.1`).
    pub kubernetes_version: Option<String>,
    /// The GCE project (`spec.project`); required for GCE.
    pub project: Option<String>,
    /// Add a `bastions` group of one machine, the only way in by SSH (private topology
    /// only), named `bastion.<cluster>` in DNS unless DNS is `None`.
    pub bastion: bool,
    /// The API load balancer's type; set, the API is always behind a load balancer
    /// (default: one only for a private topology or DNS `None`, public).
    pub api_load_balancer_type: Option<LoadBalancerType>,
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
    /// Whether etcd's volumes are encrypted (default: yes).
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
    /// Options for cluster `name` stored in `state_store`: AWS, public topology and DNS,
    /// cilium, one node.
    pub fn new(name: impl Into<String>, state_store: impl Into<String>) -> Self {
        NewClusterOptions {
            name: name.into(),
            state_store: state_store.into().trim_end_matches('/').to_owned(),
            networking: "cilium".into(),
            node_count: 1,
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

    setters! {
        /// Sets the cloud.
        with_cloud: cloud: Cloud;
        /// Sets the number of control-plane instances.
        with_control_plane_count: control_plane_count: Option<u32>;
        /// Sets the total number of nodes.
        with_node_count: node_count: u32;
        /// Sets the node machine type.
        with_node_size: node_size: Option<String>;
        /// Sets the control-plane machine type.
        with_control_plane_size: control_plane_size: Option<String>;
        /// Sets the image of every group.
        with_image: image: Option<String>;
        /// Sets the topology.
        with_topology: topology: Topology;
        /// Sets the DNS type.
        with_dns: dns: DnsType;
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

/// The region of an AWS or GCE zone, or an error naming `field`.
fn region_in(zone: &str, cloud: Cloud, field: &str) -> Result<String> {
    let provider = match cloud {
        Cloud::Aws => kops_api::internal::CloudProvider::Aws,
        Cloud::Gce => kops_api::internal::CloudProvider::Gce,
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

fn networking(name: &str) -> Result<v1alpha2::NetworkingSpec> {
    let mut n = v1alpha2::NetworkingSpec::default();
    match name {
        "cilium" | "cilium-etcd" => n.cilium = Some(Default::default()),
        "cilium-eni" => {
            let mut c = v1alpha2::CiliumNetworkingSpec::default();
            c.ipam = Some("eni".into());
            n.cilium = Some(c);
        }
        "amazonvpc" | "amazon-vpc-routed-eni" => n.amazonvpc = Some(Default::default()),
        "calico" => n.calico = Some(Default::default()),
        "canal" => n.canal = Some(Default::default()),
        "flannel" => n.flannel = Some(Default::default()),
        "kindnet" => n.kindnet = Some(Default::default()),
        "kopeio" | "kopeio-vxlan" => n.kopeio = Some(Default::default()),
        "kubenet" => n.kubenet = Some(Default::default()),
        "kube-router" | "kuberouter" => n.kuberouter = Some(Default::default()),
        "cni" => n.cni = Some(Default::default()),
        "external" => n.external = Some(Default::default()),
        "gce" | "gcp" => n.gce = Some(Default::default()),
        other => {
            return Err(invalid(
                "networking",
                format!(
                    "unknown CNI {other:?} (known: cilium, cilium-etcd, cilium-eni, calico, canal, flannel, kindnet, kopeio, kubenet, kube-router, amazon-vpc-routed-eni, cni, external, gce)"
                ),
            ));
        }
    }
    Ok(n)
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

/// The Cluster and InstanceGroups `kops create cluster` stores.
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
        Some(n) => n as usize,
        None if !cp_zones.is_empty() => cp_zones.len(),
        None => 1,
    };
    if cp_zones.is_empty() {
        cp_zones = zones.iter().take(count).cloned().collect();
    }
    // Control-plane groups: one per instance, spread over the zones.
    let mut cp_groups: Vec<(String, String)> = Vec::new();
    if count <= cp_zones.len() {
        for z in cp_zones.iter().take(count) {
            cp_groups.push((format!("control-plane-{z}"), z.clone()));
        }
    } else {
        for i in 0..count {
            let z = &cp_zones[i % cp_zones.len()];
            let n = i / cp_zones.len() + 1;
            cp_groups.push((format!("control-plane-{z}-{n}"), z.clone()));
        }
    }
    let gce = o.cloud == Cloud::Gce;
    let private = o.topology == Topology::Private;
    if o.bastion && !private {
        return Err(invalid(
            "bastion",
            "a bastion needs the private topology (--topology private)",
        ));
    }

    let mut subnets = Vec::new();
    let mut all_zones = zones.clone();
    for z in &cp_zones {
        if !all_zones.contains(z) {
            all_zones.push(z.clone());
        }
    }
    let subnet_of = |zone: &str| -> String { if gce { region.clone() } else { zone.to_owned() } };
    if gce {
        let ty = if private { "Private" } else { "Public" };
        subnets.push(subnet(&region, None, Some(&region), ty));
    } else {
        let ty = if private { "Private" } else { "Public" };
        for z in &all_zones {
            subnets.push(subnet(z, Some(z), None, ty));
        }
        if private {
            for z in &all_zones {
                subnets.push(subnet(&format!("utility-{z}"), Some(z), None, "Utility"));
            }
        }
    }

    // etcd: main and events, a member per control-plane group named after its zone.
    let members: Vec<v1alpha2::EtcdMemberSpec> = cp_groups
        .iter()
        .map(|(g, _)| {
            let mut m = v1alpha2::EtcdMemberSpec::default();
            m.name = Some(
                g.strip_prefix(&format!("control-plane-{region}"))
                    .unwrap_or(g)
                    .to_owned(),
            );
            m.instance_group = Some(g.clone());
            m.encrypted_volume = Some(o.encrypt_etcd_storage.unwrap_or(true));
            m
        })
        .collect();
    let etcd: Vec<v1alpha2::EtcdClusterSpec> = ["main", "events"]
        .iter()
        .map(|n| {
            let mut e = v1alpha2::EtcdClusterSpec::default();
            e.name = Some((*n).to_owned());
            e.etcd_members = Some(members.clone());
            let mut m = v1alpha2::EtcdManagerSpec::default();
            m.backup_retention_days = Some(90);
            e.manager = Some(m);
            e
        })
        .collect();

    let dns_type = match o.dns {
        DnsType::Public => "Public",
        DnsType::Private => "Private",
        DnsType::None => "None",
    };
    let mut api = v1alpha2::APISpec::default();
    if private || o.dns == DnsType::None || o.api_load_balancer_type.is_some() {
        let mut lb = v1alpha2::LoadBalancerAccessSpec::default();
        lb.type_ = Some(
            match o.api_load_balancer_type.unwrap_or_default() {
                LoadBalancerType::Public => "Public",
                LoadBalancerType::Internal => "Internal",
            }
            .into(),
        );
        // A load balancer class is AWS' (an NLB); GCE has none.
        if !gce {
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
    authz.rbac = Some(Default::default());
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
    spec.cloud_provider = Some(if gce { "gce" } else { "aws" }.into());
    spec.config_base = Some(format!("{}/{name}", o.state_store.trim_end_matches('/')));
    spec.etcd_clusters = Some(etcd);
    let mut iam = v1alpha2::IAMSpec::default();
    iam.allow_container_registry = Some(true);
    iam.legacy = Some(false);
    spec.iam = Some(iam);
    let mut kubelet = v1alpha2::KubeletConfigSpec::default();
    kubelet.anonymous_auth = Some(false);
    spec.kubelet = Some(kubelet);
    let admin = match clean(&o.admin_access) {
        a if a.is_empty() => vec!["0.0.0.0/0".to_owned(), "::/0".to_owned()],
        a => a,
    };
    let ssh = match clean(&o.ssh_access) {
        s if s.is_empty() => admin.clone(),
        s => s,
    };
    spec.kubernetes_api_access = Some(admin);
    spec.kubernetes_version = o.kubernetes_version.clone();
    spec.networking = Some(networking(&o.networking)?);
    spec.ssh_access = Some(ssh);
    spec.subnets = Some(subnets);
    let mut dns = v1alpha2::DNSSpec::default();
    dns.type_ = Some(dns_type.into());
    let mut topology = v1alpha2::TopologySpec::default();
    topology.dns = Some(dns);
    if o.bastion && o.dns != DnsType::None {
        let mut b = v1alpha2::BastionSpec::default();
        b.bastion_public_name = Some(format!("bastion.{name}"));
        topology.bastion = Some(b);
    }
    spec.topology = Some(topology);
    spec.dns_zone = o.dns_zone.clone();
    spec.network_cidr = o.network_cidr.clone();
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
    }

    let group = |ig_name: &str,
                 role: &str,
                 size: Option<&String>,
                 (min, max): (u32, u32),
                 volume: Option<u32>,
                 subnets: Vec<String>,
                 zones: Option<Vec<String>>| {
        let mut g = v1alpha2::InstanceGroup::new(ig_name);
        let mut labels = BTreeMap::new();
        labels.insert("kops.k8s.io/cluster".to_owned(), name.to_owned());
        g.metadata = ObjectMeta {
            labels: Some(labels),
            ..ObjectMeta::named(ig_name)
        };
        g.spec.role = Some(role.to_owned());
        g.spec.min_size = Some(i32::try_from(min).unwrap_or(i32::MAX));
        g.spec.max_size = Some(i32::try_from(max).unwrap_or(i32::MAX));
        g.spec.subnets = Some(subnets);
        g.spec.machine_type = size.cloned();
        g.spec.image = o.image.clone();
        g.spec.zones = zones;
        g.spec.root_volume_size = volume.map(|v| i32::try_from(v).unwrap_or(i32::MAX));
        g
    };
    let mut groups = Vec::new();
    for (g, z) in &cp_groups {
        let zones = gce.then(|| vec![z.clone()]);
        groups.push(group(
            g,
            "ControlPlane",
            o.control_plane_size.as_ref(),
            (1, 1),
            o.control_plane_volume_size,
            vec![subnet_of(z)],
            zones,
        ));
    }
    // Nodes: one group per zone, the count split between them.
    let n = u32::try_from(zones.len()).unwrap_or(u32::MAX);
    for (i, z) in zones.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let share = o.node_count / n + u32::from(i < o.node_count % n);
        if share == 0 && o.node_count > 0 {
            continue;
        }
        let zones = gce.then(|| vec![z.clone()]);
        groups.push(group(
            &format!("nodes-{z}"),
            "Node",
            o.node_size.as_ref(),
            (share, share),
            o.node_volume_size,
            vec![subnet_of(z)],
            zones,
        ));
    }
    if o.bastion {
        // In the utility subnets (the public ones of a private topology); on GCE in every
        // zone of the region's one subnet.
        let subnets: Vec<String> = if gce {
            vec![region.clone()]
        } else {
            all_zones.iter().map(|z| format!("utility-{z}")).collect()
        };
        let zones = gce.then(|| all_zones.clone());
        groups.push(group(
            "bastions",
            "Bastion",
            None,
            (1, 1),
            None,
            subnets,
            zones,
        ));
    }
    Ok((cluster, groups))
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
}

impl GroupRole {
    /// Parses a role as `kops create instancegroup --role` takes it, in any case: `node`,
    /// `control-plane` (also `controlplane` and `master`) or `bastion`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "node" => Ok(GroupRole::Node),
            "control-plane" | "controlplane" | "master" => Ok(GroupRole::ControlPlane),
            "bastion" => Ok(GroupRole::Bastion),
            "apiserver" => Err(invalid(
                "role",
                "API server groups need kOps' APIServerNodes feature, which is not supported",
            )),
            other => Err(invalid(
                "role",
                format!("unknown role {other:?}; one of node, control-plane, bastion"),
            )),
        }
    }

    /// The role as a stored instance group names it (`Node`, `ControlPlane`, `Bastion`).
    pub fn as_str(self) -> &'static str {
        match self {
            GroupRole::Node => "Node",
            GroupRole::ControlPlane => "ControlPlane",
            GroupRole::Bastion => "Bastion",
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
    g.metadata = ObjectMeta {
        labels: Some(labels),
        ..ObjectMeta::named(name)
    };
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
