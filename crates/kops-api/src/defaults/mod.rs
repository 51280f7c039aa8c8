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
//!
//! Where kOps' steps are here, one function per step or option builder, run
//! in kOps' order (the order matters: later steps read what earlier ones set):
//!
//! | kOps | here |
//! |---|---|
//! | `upup/pkg/fi/cloudup/populate_cluster_spec.go` `PopulateClusterSpec` | [`populate_cluster`] (the steps in order) |
//! | `populateClusterSpec.run` (version, channel) | `cluster::populate_kubernetes_version` |
//! | `pkg/apis/kops/v1alpha2/defaults.go` `SetDefaults_ClusterSpec` (topology, authorization, flannel) | `cluster::populate_topology_and_authorization` |
//! | `populateClusterSpec.run` (etcd sanity checks), `pkg/model/components/etcd.go` `EtcdOptionsBuilder` | `cluster::populate_etcd_clusters` |
//! | `populateClusterSpec.assignSubnets`, `upup/pkg/fi/cloudup/subnets.go` `assignCIDRsToSubnets` | `network::populate_networks`, [`assign_subnet_cidrs`] |
//! | `populateClusterSpec.run` (API DNS or load balancer, public name, external DNS provider) | `cluster::populate_api_endpoint` |
//! | `populateClusterSpec.run` (key and secret stores, DNS zone) | `cluster::populate_state_store`, `cluster::populate_dns_zone` |
//! | `pkg/model/components/defaults.go` `DefaultsOptionsBuilder` (cluster DNS domain) | `components::populate_components` (its first step) |
//! | `kubedns.go` `KubeDnsOptionsBuilder` | `components::populate_kube_dns` |
//! | `kubelet.go` `KubeletOptionsBuilder` | `components::populate_kubelets` |
//! | `kubeapiserver/model.go`, `apiserver.go` `KubeAPIServerOptionsBuilder` | `components::populate_kube_api_server` |
//! | `kubecontrollermanager.go` `KubeControllerManagerOptionsBuilder` | `components::populate_kube_controller_manager` |
//! | `kubescheduler.go` `KubeSchedulerOptionsBuilder` | `components::populate_kube_scheduler` |
//! | `kubeproxy.go` `KubeProxyOptionsBuilder` | `components::populate_kube_proxy` |
//! | `containerd.go` `ContainerdOptionsBuilder` | `components::populate_containerd` |
//! | `etcdmanager/options.go` `EtcdManagerOptionsBuilder` (backups) | `addons::populate_etcd_backups` |
//! | `cloudconfiguration.go` `CloudConfigurationOptionsBuilder` | `addons::populate_cloud_configuration` |
//! | `awscloudcontrollermanager.go`, `gcpcloudcontrollermanager.go`, `hetznercloudcontrollermanager.go` | `addons::populate_{aws,gcp,hetzner}_cloud_controller_manager` |
//! | `discovery.go` `DiscoveryOptionsBuilder` | `addons::populate_service_account_issuer` |
//! | `awsebscsidriver.go`, `aws.go`, `nodeterminationhandler.go` | `addons::populate_aws_ebs_csi_driver`, `addons::populate_node_termination_handler` |
//! | `gcppdcsidriver.go` `GCPPDCSIDriverOptionsBuilder` | `addons::populate_gcp_pd_csi_driver` |
//! | `calico.go`, `kindnet.go`, `cilium.go` | `addons::populate_calico`, `addons::populate_kindnet`, `addons::populate_cilium` |
//! | `nodeproblemdetector.go`, `karpenter.go`, `clusterautoscaler.go` | `addons::populate_node_problem_detector`, `addons::populate_karpenter`, `addons::populate_cluster_autoscaler` |
//! | `upup/pkg/fi/cloudup/populate_instancegroup_spec.go` `PopulateInstanceGroupSpec`, `defaultMachineType` | [`populate_instance_group`] (`instance_group.rs`) |

mod addons;
mod cluster;
mod components;
mod instance_group;
mod network;

use crate::channel::Channel;
use crate::internal::{CloudProvider, Cluster, InstanceGroup};
use crate::v1alpha2 as v;
use crate::{Error, Result};

pub use instance_group::{
    is_aws_gpu_machine_type, machine_architecture, populate_instance_group, root_volume,
};
pub use network::{assign_subnet_cidrs, well_known_service_ip};

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

/// Completes a cluster spec as kOps' `PopulateClusterSpec` does: each step in
/// kOps' order (see the table above); the first problem stops it.
pub fn populate_cluster(input: &Cluster, opts: &PopulateOptions) -> Result<Cluster> {
    let mut c = input.clone();
    let name = c.name().to_string();
    if name.is_empty() {
        return Err(populate_error("metadata.name", "cluster name is required"));
    }
    let provider = c.spec.cloud_provider.provider();
    let aws = provider == Some(CloudProvider::Aws);
    let gce = provider == Some(CloudProvider::Gce);

    let k8s = cluster::populate_kubernetes_version(&mut c)?;
    let dns_type = cluster::populate_topology_and_authorization(&mut c);
    let none_dns = c.uses_none_dns();
    cluster::populate_etcd_clusters(&mut c, &k8s)?;
    network::populate_networks(&mut c, aws, gce, opts)?;
    cluster::populate_api_endpoint(&mut c, &name, &dns_type, aws, none_dns, opts);
    cluster::populate_state_store(&mut c);
    cluster::populate_dns_zone(&mut c, &name, &dns_type, none_dns, opts)?;
    cluster::populate_iam(&mut c);
    cluster::populate_container_runtime(&mut c)?;
    components::populate_components(&mut c, provider, gce, &k8s)?;
    addons::populate_addons(&mut c, provider, &k8s);
    Ok(c)
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

#[cfg(test)]
mod tests {
    use ipnet::IpNet;

    use super::network::upper_half;
    use super::*;
    use crate::channel::Architecture;
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
