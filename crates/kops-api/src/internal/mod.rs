//! The internal (hub) API: kOps' internal layout, which defaulting,
//! validation and the infrastructure model work on.
//!
//! It differs from [`crate::v1alpha2`] where kOps' internal API differs:
//! network settings live under [`NetworkingSpec`] (`networkID`, CIDRs,
//! subnets, topology), the API endpoint under [`ApiSpec`] (`publicName`,
//! `access`), the cloud is a struct with one member per provider
//! ([`CloudProviderSpec`]), state locations are grouped in
//! [`ConfigStoreSpec`], instance-group roles are an enum with
//! [`InstanceGroupRole::ControlPlane`], and root-volume settings are one
//! [`InstanceRootVolumeSpec`]. Component settings (kubelet, kube-apiserver,
//! CNI plug-ins, ...) have the same shape in both versions and reuse the
//! v1alpha2 types.
//!
//! Conversions are explicit: `TryFrom<&v1alpha2::Cluster> for Cluster` (it
//! fails when provider-specific settings name another cloud) and
//! `From<&Cluster> for v1alpha2::Cluster`; the same for instance groups.
//! Like kOps, converting to internal renames the policy key `master` to
//! `control-plane`, the role `Master` to `ControlPlane` and drops the fields
//! kOps drops (`rootVolume` blocks, `serviceOIDCProvider`, the unused
//! `masterInternalName`).

mod conversion;
mod generated;

pub use generated::{ClusterSpec, InstanceGroupSpec};

use crate::v1alpha2::{self, ObjectMeta};

/// A cluster in the internal layout.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Cluster {
    /// Name (the cluster's DNS name), labels, annotations, creation time.
    pub metadata: ObjectMeta,
    /// The specification.
    pub spec: ClusterSpec,
}

impl Cluster {
    /// The cluster's name, or `""`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    /// The cloud, when exactly one is set.
    pub fn cloud_provider(&self) -> Option<CloudProvider> {
        self.spec.cloud_provider.provider()
    }

    /// The DNS topology (`Public` when unset, as kOps reads it).
    pub fn dns_type(&self) -> &str {
        self.spec
            .networking
            .topology
            .as_ref()
            .and_then(|t| t.dns.as_deref())
            .unwrap_or("Public")
    }

    /// Whether the topology asks for no DNS (`topology.dns.type: None`, in any case).
    /// The one definition of kOps' `UsesNoneDNS`.
    pub fn uses_none_dns(&self) -> bool {
        self.dns_type().eq_ignore_ascii_case("none")
    }

    /// Whether the cluster has a gossip name (`*.k8s.local`): like DNS `None`, it has no
    /// DNS zone. The one definition of kOps' `IsGossip`.
    pub fn is_gossip(&self) -> bool {
        self.name().trim_end_matches('.').ends_with(".k8s.local")
    }

    /// The name nodes use to reach the API inside the cluster (`api.internal.<name>`).
    pub fn api_internal_name(&self) -> String {
        format!("api.internal.{}", self.name())
    }

    /// Whether pods and services are IPv6 (non-masquerade CIDR `::/0`).
    pub fn is_ipv6_only(&self) -> bool {
        self.spec.networking.is_ipv6_only()
    }

    /// The cloud region: a subnet's `region`, else derived from its zone
    /// (`us-east-1a` -> `us-east-1` on AWS, `us-central1-a` -> `us-central1` on GCE).
    pub fn region(&self) -> Option<String> {
        let provider = self.cloud_provider();
        self.spec.networking.subnets.iter().flatten().find_map(|s| {
            s.region.clone().or_else(|| {
                s.zone
                    .as_deref()
                    .map(|z| crate::validation::region_of_zone(z, provider))
            })
        })
    }
}

/// An instance group in the internal layout.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct InstanceGroup {
    /// Name, labels (`kops.k8s.io/cluster`), creation time.
    pub metadata: ObjectMeta,
    /// The specification.
    pub spec: InstanceGroupSpec,
}

impl InstanceGroup {
    /// The group's name, or `""`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    /// Whether the group runs the control plane.
    pub fn is_control_plane(&self) -> bool {
        self.spec.role == Some(InstanceGroupRole::ControlPlane)
    }
}

/// Where the cluster's state lives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ConfigStoreSpec {
    /// Base path of the cluster in the state store (`s3://bucket/name`).
    pub base: Option<String>,
    /// Where keypairs are stored; defaults to `<base>/pki`.
    pub keypairs: Option<String>,
    /// Where secrets are stored; defaults to `<base>/secrets`.
    pub secrets: Option<String>,
}

/// The cloud a cluster runs on, as one member per provider; exactly one
/// should be set.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CloudProviderSpec {
    /// Amazon Web Services.
    pub aws: Option<AwsSpec>,
    /// Google Compute Engine.
    pub gce: Option<GceSpec>,
    /// Azure (settings stay in `cloud_config.azure`).
    pub azure: Option<OtherCloudSpec>,
    /// DigitalOcean.
    pub digitalocean: Option<OtherCloudSpec>,
    /// Hetzner.
    pub hetzner: Option<OtherCloudSpec>,
    /// OpenStack (settings stay in `cloud_config.openstack`).
    pub openstack: Option<OtherCloudSpec>,
    /// Scaleway.
    pub scaleway: Option<OtherCloudSpec>,
    /// Linode.
    pub linode: Option<OtherCloudSpec>,
}

/// Which cloud a cluster runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CloudProvider {
    /// Amazon Web Services (`aws`).
    Aws,
    /// Google Compute Engine (`gce`).
    Gce,
    /// Azure (`azure`).
    Azure,
    /// DigitalOcean (`digitalocean`).
    DigitalOcean,
    /// Hetzner (`hetzner`).
    Hetzner,
    /// OpenStack (`openstack`).
    OpenStack,
    /// Scaleway (`scaleway`).
    Scaleway,
    /// Linode (`linode`).
    Linode,
}

impl CloudProvider {
    /// The v1alpha2 spelling (`aws`, `gce`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CloudProvider::Aws => "aws",
            CloudProvider::Gce => "gce",
            CloudProvider::Azure => "azure",
            CloudProvider::DigitalOcean => "digitalocean",
            CloudProvider::Hetzner => "hetzner",
            CloudProvider::OpenStack => "openstack",
            CloudProvider::Scaleway => "scaleway",
            CloudProvider::Linode => "linode",
        }
    }

    /// Parses the v1alpha2 spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "aws" => CloudProvider::Aws,
            "gce" => CloudProvider::Gce,
            "azure" => CloudProvider::Azure,
            "digitalocean" => CloudProvider::DigitalOcean,
            "hetzner" => CloudProvider::Hetzner,
            "openstack" => CloudProvider::OpenStack,
            "scaleway" => CloudProvider::Scaleway,
            "linode" => CloudProvider::Linode,
            _ => return None,
        })
    }
}

impl CloudProviderSpec {
    /// Every provider that is set, in a fixed order.
    pub fn set(&self) -> Vec<CloudProvider> {
        let mut v = Vec::new();
        if self.aws.is_some() {
            v.push(CloudProvider::Aws);
        }
        if self.gce.is_some() {
            v.push(CloudProvider::Gce);
        }
        if self.azure.is_some() {
            v.push(CloudProvider::Azure);
        }
        if self.digitalocean.is_some() {
            v.push(CloudProvider::DigitalOcean);
        }
        if self.hetzner.is_some() {
            v.push(CloudProvider::Hetzner);
        }
        if self.openstack.is_some() {
            v.push(CloudProvider::OpenStack);
        }
        if self.scaleway.is_some() {
            v.push(CloudProvider::Scaleway);
        }
        if self.linode.is_some() {
            v.push(CloudProvider::Linode);
        }
        v
    }

    /// The provider, when exactly one is set.
    pub fn provider(&self) -> Option<CloudProvider> {
        match self.set().as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// A provider without settings of its own in the internal layout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OtherCloudSpec {}

/// AWS settings (moved from `cloudConfig` and top-level v1alpha2 fields).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AwsSpec {
    /// `cloudConfig.awsEBSCSIDriver`.
    pub ebs_csi_driver: Option<v1alpha2::EBSCSIDriverSpec>,
    /// `cloudConfig.disableSecurityGroupIngress`.
    pub disable_security_group_ingress: Option<bool>,
    /// `cloudConfig.elbSecurityGroup`.
    pub elb_security_group: Option<String>,
    /// `cloudConfig.nlbSecurityGroupMode`.
    pub nlb_security_group_mode: Option<String>,
    /// `cloudConfig.nodeIPFamilies`.
    pub node_ip_families: Option<Vec<String>>,
    /// `cloudConfig.spotinstOrientation`.
    pub spotinst_orientation: Option<String>,
    /// `cloudConfig.spotinstProduct`.
    pub spotinst_product: Option<String>,
    /// `cloudConfig.useIPBasedNodeNames`.
    pub use_ip_based_node_names: Option<bool>,
    /// `nodeTerminationHandler`.
    pub node_termination_handler: Option<v1alpha2::NodeTerminationHandlerSpec>,
    /// `awsLoadBalancerController`.
    pub load_balancer_controller: Option<v1alpha2::LoadBalancerControllerSpec>,
    /// `podIdentityWebhook`.
    pub pod_identity_webhook: Option<v1alpha2::PodIdentityWebhookSpec>,
    /// `warmPool` (cluster-wide default).
    pub warm_pool: Option<v1alpha2::WarmPoolSpec>,
}

/// GCE settings (moved from `project` and `cloudConfig`).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct GceSpec {
    /// `project`.
    pub project: Option<String>,
    /// `cloudConfig.gceServiceAccount`.
    pub service_account: Option<String>,
    /// `cloudConfig.gceUseStartupScript`.
    pub use_startup_script: Option<bool>,
    /// `cloudConfig.gcpPDCSIDriver`.
    pub pd_csi_driver: Option<v1alpha2::PDCSIDriver>,
    /// `cloudConfig.multizone`.
    pub multizone: Option<bool>,
    /// `cloudConfig.nodeTags`.
    pub node_tags: Option<String>,
    /// `cloudConfig.nodeInstancePrefix`.
    pub node_instance_prefix: Option<String>,
}

/// Network layout and CNI (v1alpha2 keeps most of this at the top of the spec).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct NetworkingSpec {
    /// Existing VPC/network to use (`networkID`).
    pub network_id: Option<String>,
    /// The VPC CIDR (`networkCIDR`).
    pub network_cidr: Option<String>,
    /// More VPC CIDRs (`additionalNetworkCIDRs`).
    pub additional_network_cidrs: Option<Vec<String>>,
    /// Subnets (`subnets`).
    pub subnets: Option<Vec<v1alpha2::ClusterSubnetSpec>>,
    /// Whether subnets are tagged (the negation of v1alpha2 `DisableSubnetTags`).
    pub tag_subnets: Option<bool>,
    /// Topology: DNS and bastion (`topology`).
    pub topology: Option<TopologySpec>,
    /// HTTP proxy for egress (`egressProxy`).
    pub egress_proxy: Option<v1alpha2::EgressProxySpec>,
    /// CIDR that is not masqueraded (`nonMasqueradeCIDR`).
    pub non_masquerade_cidr: Option<String>,
    /// Pod CIDR (`podCIDR`).
    pub pod_cidr: Option<String>,
    /// Service CIDR (`serviceClusterIPRange`).
    pub service_cluster_ip_range: Option<String>,
    /// Isolate the control plane (`isolateMasters`).
    pub isolate_control_plane: Option<bool>,
    /// CNI: Amazon VPC.
    pub amazonvpc: Option<v1alpha2::AmazonVPCNetworkingSpec>,
    /// CNI: Calico.
    pub calico: Option<v1alpha2::CalicoNetworkingSpec>,
    /// CNI: Canal (removed in newer Kubernetes).
    pub canal: Option<v1alpha2::CanalNetworkingSpec>,
    /// CNI: Cilium.
    pub cilium: Option<v1alpha2::CiliumNetworkingSpec>,
    /// CNI: classic (removed).
    pub classic: Option<v1alpha2::ClassicNetworkingSpec>,
    /// CNI: user-installed (`cni: {}`).
    pub cni: Option<v1alpha2::CNINetworkingSpec>,
    /// CNI: external (removed).
    pub external: Option<v1alpha2::ExternalNetworkingSpec>,
    /// CNI: Flannel.
    pub flannel: Option<v1alpha2::FlannelNetworkingSpec>,
    /// CNI: GCP native (`gce`).
    pub gce: Option<v1alpha2::GCPNetworkingSpec>,
    /// CNI: kindnet.
    pub kindnet: Option<v1alpha2::KindnetNetworkingSpec>,
    /// CNI: kopeio.
    pub kopeio: Option<v1alpha2::KopeioNetworkingSpec>,
    /// CNI: kubenet.
    pub kubenet: Option<v1alpha2::KubenetNetworkingSpec>,
    /// CNI: kube-router.
    pub kuberouter: Option<v1alpha2::KuberouterNetworkingSpec>,
    /// CNI: Lyft VPC (removed).
    pub lyftvpc: Option<v1alpha2::LyftVPCNetworkingSpec>,
    /// CNI: Romana (removed).
    pub romana: Option<v1alpha2::RomanaNetworkingSpec>,
    /// CNI: Weave (removed).
    pub weave: Option<v1alpha2::WeaveNetworkingSpec>,
}

impl NetworkingSpec {
    /// The wire names of the CNI options that are set.
    pub fn cni_options(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! check {
            ($($f:ident => $n:literal),*) => {$( if self.$f.is_some() { v.push($n); } )*};
        }
        check!(amazonvpc => "amazonvpc", calico => "calico", canal => "canal", cilium => "cilium",
            classic => "classic", cni => "cni", external => "external", flannel => "flannel",
            gce => "gce", kindnet => "kindnet", kopeio => "kopeio", kubenet => "kubenet",
            kuberouter => "kuberouter", lyftvpc => "lyftvpc", romana => "romana", weave => "weave");
        v
    }

    /// Whether the cluster is IPv6 (its non-masquerade CIDR is IPv6).
    pub fn is_ipv6_only(&self) -> bool {
        self.non_masquerade_cidr
            .as_deref()
            .is_some_and(|c| c.contains(':'))
    }
}

/// DNS and bastion topology.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TopologySpec {
    /// DNS type: `Public`, `Private` or `None` (v1alpha2 `dns.type`).
    pub dns: Option<String>,
    /// Bastion settings.
    pub bastion: Option<v1alpha2::BastionSpec>,
    /// Legacy control-plane topology (`public`/`private`).
    pub masters: Option<String>,
    /// Legacy node topology (`public`/`private`).
    pub nodes: Option<String>,
}

/// How the Kubernetes API is reached.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ApiSpec {
    /// Reach the API through DNS records of the control-plane nodes.
    pub dns: Option<v1alpha2::DNSAccessSpec>,
    /// Reach the API through a load balancer.
    pub load_balancer: Option<v1alpha2::LoadBalancerAccessSpec>,
    /// Public DNS name of the API (`masterPublicName`).
    pub public_name: Option<String>,
    /// Extra names in the API certificate (`additionalSans`).
    pub additional_sans: Option<Vec<String>>,
    /// CIDRs allowed to reach the API (`kubernetesApiAccess`).
    pub access: Option<Vec<String>>,
}

/// What an instance group's machines do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InstanceGroupRole {
    /// Control-plane nodes (`Master` in v1alpha2).
    ControlPlane,
    /// Worker nodes.
    Node,
    /// Bastion hosts.
    Bastion,
    /// Dedicated API servers (`APIServer`).
    ApiServer,
    /// A role this crate does not know, kept as written (validation rejects it).
    Unknown(String),
}

impl InstanceGroupRole {
    /// Parses the v1alpha2 spelling (`Master` and `ControlPlane` both mean control plane).
    pub fn parse(s: &str) -> Self {
        match s {
            "Master" | "ControlPlane" => InstanceGroupRole::ControlPlane,
            "Node" => InstanceGroupRole::Node,
            "Bastion" => InstanceGroupRole::Bastion,
            "APIServer" => InstanceGroupRole::ApiServer,
            other => InstanceGroupRole::Unknown(other.to_string()),
        }
    }

    /// The v1alpha2 spelling (`Master` for the control plane).
    pub fn as_v1alpha2(&self) -> &str {
        match self {
            InstanceGroupRole::ControlPlane => "Master",
            InstanceGroupRole::Node => "Node",
            InstanceGroupRole::Bastion => "Bastion",
            InstanceGroupRole::ApiServer => "APIServer",
            InstanceGroupRole::Unknown(s) => s,
        }
    }
}

/// The root volume of each machine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct InstanceRootVolumeSpec {
    /// Size in GB (`rootVolumeSize`).
    pub size: Option<i32>,
    /// Volume type, e.g. `gp3` or `pd-standard` (`rootVolumeType`).
    pub type_: Option<String>,
    /// Provisioned IOPS (`rootVolumeIops`).
    pub iops: Option<i32>,
    /// Throughput in MB/s (`rootVolumeThroughput`).
    pub throughput: Option<i32>,
    /// EBS optimisation (`rootVolumeOptimization`).
    pub optimization: Option<bool>,
    /// Encrypt the volume (`rootVolumeEncryption`).
    pub encryption: Option<bool>,
    /// Encryption key (`rootVolumeEncryptionKey`).
    pub encryption_key: Option<String>,
}
