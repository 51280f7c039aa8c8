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
//!
//! # JSON
//!
//! The types serialise with kOps' internal JSON names (`networking.networkCIDR`,
//! `configStore.base`, `cloudProvider.aws`, `api.publicName`,
//! `controlPlaneKubelet`, role `ControlPlane`), skip unset fields and reject
//! unknown ones. The component types they reuse from [`crate::v1alpha2`] keep
//! their v1alpha2 serde. A few fields kOps' internal types do not serialise are
//! kept so that a JSON round trip loses nothing: `containerRuntime`, `docker`,
//! `legacyConfigStore` (v1alpha2's unused `configStore` string),
//! `rootVolumeDeleteOnTermination` and the topology's `masters` and `nodes`.
//! [`crate::schema`] describes these types as data.

mod conversion;
mod generated;
mod paths;

pub use generated::{ClusterSpec, InstanceGroupSpec};
pub use paths::{cluster_path, instance_group_path};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::v1alpha2::{self, ObjectMeta};

/// A cluster in the internal layout.
///
/// In JSON it is `{"metadata": ..., "spec": ...}`: an internal object is never
/// stored or sent to an API server, so it carries no `apiVersion` or `kind`
/// (and reading one rejects them as unknown fields).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Cluster {
    /// Name (the cluster's DNS name), labels, annotations, creation time.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The specification.
    #[serde(default)]
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
///
/// In JSON it is `{"metadata": ..., "spec": ...}`, without `apiVersion` or
/// `kind`, as [`Cluster`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InstanceGroup {
    /// Name, labels (`kops.k8s.io/cluster`), creation time.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The specification.
    #[serde(default)]
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConfigStoreSpec {
    /// Base path of the cluster in the state store (`s3://bucket/name`).
    #[serde(rename = "base", default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Where keypairs are stored; defaults to `<base>/pki`.
    #[serde(rename = "keypairs", default, skip_serializing_if = "Option::is_none")]
    pub keypairs: Option<String>,
    /// Where secrets are stored; defaults to `<base>/secrets`.
    #[serde(rename = "secrets", default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<String>,
}

/// The cloud a cluster runs on, as one member per provider; exactly one
/// should be set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CloudProviderSpec {
    /// Amazon Web Services.
    #[serde(rename = "aws", default, skip_serializing_if = "Option::is_none")]
    pub aws: Option<AwsSpec>,
    /// Google Compute Engine.
    #[serde(rename = "gce", default, skip_serializing_if = "Option::is_none")]
    pub gce: Option<GceSpec>,
    /// Azure (settings stay in `cloud_config.azure`).
    #[serde(rename = "azure", default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<OtherCloudSpec>,
    /// DigitalOcean (`do` in JSON, as kOps' internal API has it).
    #[serde(rename = "do", default, skip_serializing_if = "Option::is_none")]
    pub digitalocean: Option<OtherCloudSpec>,
    /// Hetzner.
    #[serde(rename = "hetzner", default, skip_serializing_if = "Option::is_none")]
    pub hetzner: Option<OtherCloudSpec>,
    /// OpenStack (settings stay in `cloud_config.openstack`).
    #[serde(rename = "openstack", default, skip_serializing_if = "Option::is_none")]
    pub openstack: Option<OtherCloudSpec>,
    /// Scaleway.
    #[serde(rename = "scaleway", default, skip_serializing_if = "Option::is_none")]
    pub scaleway: Option<OtherCloudSpec>,
    /// Linode.
    #[serde(rename = "linode", default, skip_serializing_if = "Option::is_none")]
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

/// A provider without settings of its own in the internal layout (`{}` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OtherCloudSpec {}

/// AWS settings (moved from `cloudConfig` and top-level v1alpha2 fields).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AwsSpec {
    /// `cloudConfig.awsEBSCSIDriver`.
    #[serde(
        rename = "ebsCSIDriver",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ebs_csi_driver: Option<v1alpha2::EBSCSIDriverSpec>,
    /// `cloudConfig.disableSecurityGroupIngress`.
    #[serde(
        rename = "disableSecurityGroupIngress",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_security_group_ingress: Option<bool>,
    /// `cloudConfig.elbSecurityGroup`.
    #[serde(
        rename = "elbSecurityGroup",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub elb_security_group: Option<String>,
    /// `cloudConfig.nlbSecurityGroupMode`.
    #[serde(
        rename = "nlbSecurityGroupMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub nlb_security_group_mode: Option<String>,
    /// `cloudConfig.nodeIPFamilies`.
    #[serde(
        rename = "nodeIPFamilies",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_ip_families: Option<Vec<String>>,
    /// `cloudConfig.spotinstOrientation`.
    #[serde(
        rename = "spotinstOrientation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spotinst_orientation: Option<String>,
    /// `cloudConfig.spotinstProduct`.
    #[serde(
        rename = "spotinstProduct",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spotinst_product: Option<String>,
    /// `cloudConfig.useIPBasedNodeNames`.
    #[serde(
        rename = "useIPBasedNodeNames",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub use_ip_based_node_names: Option<bool>,
    /// `nodeTerminationHandler`.
    #[serde(
        rename = "nodeTerminationHandler",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_termination_handler: Option<v1alpha2::NodeTerminationHandlerSpec>,
    /// `awsLoadBalancerController`.
    #[serde(
        rename = "loadBalancerController",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub load_balancer_controller: Option<v1alpha2::LoadBalancerControllerSpec>,
    /// `podIdentityWebhook`.
    #[serde(
        rename = "podIdentityWebhook",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pod_identity_webhook: Option<v1alpha2::PodIdentityWebhookSpec>,
    /// `warmPool` (cluster-wide default).
    #[serde(rename = "warmPool", default, skip_serializing_if = "Option::is_none")]
    pub warm_pool: Option<v1alpha2::WarmPoolSpec>,
}

/// GCE settings (moved from `project` and `cloudConfig`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GceSpec {
    /// `project`.
    #[serde(rename = "project", default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `cloudConfig.gceServiceAccount`.
    #[serde(
        rename = "serviceAccount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub service_account: Option<String>,
    /// `cloudConfig.gceUseStartupScript`.
    #[serde(
        rename = "useStartupScript",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub use_startup_script: Option<bool>,
    /// `cloudConfig.gcpPDCSIDriver`.
    #[serde(
        rename = "pdCSIDriver",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pd_csi_driver: Option<v1alpha2::PDCSIDriver>,
    /// `cloudConfig.multizone`.
    #[serde(rename = "multizone", default, skip_serializing_if = "Option::is_none")]
    pub multizone: Option<bool>,
    /// `cloudConfig.nodeTags`.
    #[serde(rename = "nodeTags", default, skip_serializing_if = "Option::is_none")]
    pub node_tags: Option<String>,
    /// `cloudConfig.nodeInstancePrefix`.
    #[serde(
        rename = "nodeInstancePrefix",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub node_instance_prefix: Option<String>,
}

/// Network layout and CNI (v1alpha2 keeps most of this at the top of the spec).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct NetworkingSpec {
    /// Existing VPC/network to use (`networkID`).
    #[serde(rename = "networkID", default, skip_serializing_if = "Option::is_none")]
    pub network_id: Option<String>,
    /// The VPC CIDR (`networkCIDR`).
    #[serde(
        rename = "networkCIDR",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub network_cidr: Option<String>,
    /// More VPC CIDRs (`additionalNetworkCIDRs`).
    #[serde(
        rename = "additionalNetworkCIDRs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub additional_network_cidrs: Option<Vec<String>>,
    /// Subnets (`subnets`).
    #[serde(rename = "subnets", default, skip_serializing_if = "Option::is_none")]
    pub subnets: Option<Vec<v1alpha2::ClusterSubnetSpec>>,
    /// Whether subnets are tagged (the negation of v1alpha2 `DisableSubnetTags`).
    #[serde(
        rename = "tagSubnets",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tag_subnets: Option<bool>,
    /// Topology: DNS and bastion (`topology`).
    #[serde(rename = "topology", default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// HTTP proxy for egress (`egressProxy`).
    #[serde(
        rename = "egressProxy",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub egress_proxy: Option<v1alpha2::EgressProxySpec>,
    /// CIDR that is not masqueraded (`nonMasqueradeCIDR`).
    #[serde(
        rename = "nonMasqueradeCIDR",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub non_masquerade_cidr: Option<String>,
    /// Pod CIDR (`podCIDR`).
    #[serde(rename = "podCIDR", default, skip_serializing_if = "Option::is_none")]
    pub pod_cidr: Option<String>,
    /// Service CIDR (`serviceClusterIPRange`).
    #[serde(
        rename = "serviceClusterIPRange",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub service_cluster_ip_range: Option<String>,
    /// Isolate the control plane (`isolateMasters`).
    #[serde(
        rename = "isolateControlPlane",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub isolate_control_plane: Option<bool>,
    /// CNI: Amazon VPC (`amazonVPC` in JSON; `amazonvpc` in v1alpha2).
    #[serde(rename = "amazonVPC", default, skip_serializing_if = "Option::is_none")]
    pub amazonvpc: Option<v1alpha2::AmazonVPCNetworkingSpec>,
    /// CNI: Calico.
    #[serde(rename = "calico", default, skip_serializing_if = "Option::is_none")]
    pub calico: Option<v1alpha2::CalicoNetworkingSpec>,
    /// CNI: Canal (removed in newer Kubernetes).
    #[serde(rename = "canal", default, skip_serializing_if = "Option::is_none")]
    pub canal: Option<v1alpha2::CanalNetworkingSpec>,
    /// CNI: Cilium.
    #[serde(rename = "cilium", default, skip_serializing_if = "Option::is_none")]
    pub cilium: Option<v1alpha2::CiliumNetworkingSpec>,
    /// CNI: classic (removed).
    #[serde(rename = "classic", default, skip_serializing_if = "Option::is_none")]
    pub classic: Option<v1alpha2::ClassicNetworkingSpec>,
    /// CNI: user-installed (`cni: {}`).
    #[serde(rename = "cni", default, skip_serializing_if = "Option::is_none")]
    pub cni: Option<v1alpha2::CNINetworkingSpec>,
    /// CNI: external (removed).
    #[serde(rename = "external", default, skip_serializing_if = "Option::is_none")]
    pub external: Option<v1alpha2::ExternalNetworkingSpec>,
    /// CNI: Flannel.
    #[serde(rename = "flannel", default, skip_serializing_if = "Option::is_none")]
    pub flannel: Option<v1alpha2::FlannelNetworkingSpec>,
    /// CNI: GCP native (`gcp` in JSON; `gce` in v1alpha2).
    #[serde(rename = "gcp", default, skip_serializing_if = "Option::is_none")]
    pub gce: Option<v1alpha2::GCPNetworkingSpec>,
    /// CNI: kindnet.
    #[serde(rename = "kindnet", default, skip_serializing_if = "Option::is_none")]
    pub kindnet: Option<v1alpha2::KindnetNetworkingSpec>,
    /// CNI: kopeio.
    #[serde(rename = "kopeio", default, skip_serializing_if = "Option::is_none")]
    pub kopeio: Option<v1alpha2::KopeioNetworkingSpec>,
    /// CNI: kubenet.
    #[serde(rename = "kubenet", default, skip_serializing_if = "Option::is_none")]
    pub kubenet: Option<v1alpha2::KubenetNetworkingSpec>,
    /// CNI: kube-router (`kubeRouter` in JSON; `kuberouter` in v1alpha2).
    #[serde(
        rename = "kubeRouter",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kuberouter: Option<v1alpha2::KuberouterNetworkingSpec>,
    /// CNI: Lyft VPC (removed).
    #[serde(rename = "lyftvpc", default, skip_serializing_if = "Option::is_none")]
    pub lyftvpc: Option<v1alpha2::LyftVPCNetworkingSpec>,
    /// CNI: Romana (removed).
    #[serde(rename = "romana", default, skip_serializing_if = "Option::is_none")]
    pub romana: Option<v1alpha2::RomanaNetworkingSpec>,
    /// CNI: Weave (removed).
    #[serde(rename = "weave", default, skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TopologySpec {
    /// DNS type: `Public`, `Private` or `None` (v1alpha2 `dns.type`).
    #[serde(rename = "dns", default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<String>,
    /// Bastion settings.
    #[serde(rename = "bastion", default, skip_serializing_if = "Option::is_none")]
    pub bastion: Option<v1alpha2::BastionSpec>,
    /// Legacy control-plane topology (`public`/`private`); unused, and not in kOps' internal type.
    #[serde(rename = "masters", default, skip_serializing_if = "Option::is_none")]
    pub masters: Option<String>,
    /// Legacy node topology (`public`/`private`); unused, and not in kOps' internal type.
    #[serde(rename = "nodes", default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
}

/// How the Kubernetes API is reached.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ApiSpec {
    /// Reach the API through DNS records of the control-plane nodes.
    #[serde(rename = "dns", default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<v1alpha2::DNSAccessSpec>,
    /// Reach the API through a load balancer.
    #[serde(
        rename = "loadBalancer",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub load_balancer: Option<v1alpha2::LoadBalancerAccessSpec>,
    /// Public DNS name of the API (`masterPublicName`).
    #[serde(
        rename = "publicName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub public_name: Option<String>,
    /// Extra names in the API certificate (`additionalSans`).
    #[serde(
        rename = "additionalSANs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub additional_sans: Option<Vec<String>>,
    /// CIDRs allowed to reach the API (`kubernetesApiAccess`).
    #[serde(rename = "access", default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Vec<String>>,
}

/// What an instance group's machines do.
///
/// In JSON it is kOps' internal spelling, a string: `ControlPlane`, `Node`,
/// `Bastion`, `APIServer`, or an unknown role as written. Reading also accepts
/// the v1alpha2 `Master`.
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

    /// kOps' internal spelling (`ControlPlane` for the control plane), as in JSON.
    fn as_internal(&self) -> &str {
        match self {
            InstanceGroupRole::ControlPlane => "ControlPlane",
            other => other.as_v1alpha2(),
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

impl Serialize for InstanceGroupRole {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_internal())
    }
}

impl<'de> Deserialize<'de> for InstanceGroupRole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| InstanceGroupRole::parse(&s))
    }
}

/// The root volume of each machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct InstanceRootVolumeSpec {
    /// Size in GB (`rootVolumeSize`).
    #[serde(rename = "size", default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// Volume type, e.g. `gp3` or `pd-standard` (`rootVolumeType`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Provisioned IOPS (`rootVolumeIops`).
    #[serde(rename = "iops", default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i32>,
    /// Throughput in MB/s (`rootVolumeThroughput`).
    #[serde(
        rename = "throughput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub throughput: Option<i32>,
    /// EBS optimisation (`rootVolumeOptimization`).
    #[serde(
        rename = "optimization",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub optimization: Option<bool>,
    /// Encrypt the volume (`rootVolumeEncryption`).
    #[serde(
        rename = "encryption",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub encryption: Option<bool>,
    /// Encryption key (`rootVolumeEncryptionKey`).
    #[serde(
        rename = "encryptionKey",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub encryption_key: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn v1alpha2_cluster() -> v1alpha2::Cluster {
        serde_json::from_value(json!({
            "apiVersion": "kops.k8s.io/v1alpha2",
            "kind": "Cluster",
            "metadata": {"name": "demo.example.com"},
            "spec": {
                "cloudProvider": "aws",
                "configBase": "s3://state/demo.example.com",
                "networkCIDR": "172.20.0.0/16",
                "networkID": "vpc-1",
                "DisableSubnetTags": true,
                "isolateMasters": false,
                "subnets": [{"name": "us-east-1a", "zone": "us-east-1a", "type": "Public"}],
                "topology": {"dns": {"type": "Private"}},
                "networking": {"amazonvpc": {}, "kuberouter": {}, "gce": {}},
                "masterPublicName": "api.demo.example.com",
                "additionalSans": ["api.other"],
                "kubernetesApiAccess": ["0.0.0.0/0"],
                "masterKubelet": {"maxPods": 10},
                "externalDns": {"provider": "dns-controller"},
                "cloudConfig": {"awsEBSCSIDriver": {"enabled": true}},
                "containerRuntime": "containerd",
                "configStore": "legacy"
            }
        }))
        .unwrap()
    }

    /// The written JSON has kOps' internal names, not v1alpha2's.
    #[test]
    fn cluster_json_uses_internal_names() {
        let cluster = Cluster::try_from(&v1alpha2_cluster()).unwrap();
        let v = serde_json::to_value(&cluster).unwrap();
        let at = |p: &str| {
            v.pointer(p)
                .unwrap_or_else(|| panic!("{p} missing in {v:#}"))
        };
        assert_eq!(at("/metadata/name"), "demo.example.com");
        assert_eq!(at("/spec/configStore/base"), "s3://state/demo.example.com");
        assert_eq!(at("/spec/cloudProvider/aws/ebsCSIDriver/enabled"), true);
        assert_eq!(at("/spec/networking/networkCIDR"), "172.20.0.0/16");
        assert_eq!(at("/spec/networking/networkID"), "vpc-1");
        assert_eq!(at("/spec/networking/tagSubnets"), false);
        assert_eq!(at("/spec/networking/isolateControlPlane"), false);
        assert_eq!(at("/spec/networking/subnets/0/zone"), "us-east-1a");
        assert_eq!(at("/spec/networking/topology/dns"), "Private");
        assert_eq!(at("/spec/networking/amazonVPC"), &json!({}));
        assert_eq!(at("/spec/networking/kubeRouter"), &json!({}));
        assert_eq!(at("/spec/networking/gcp"), &json!({}));
        assert_eq!(at("/spec/api/publicName"), "api.demo.example.com");
        assert_eq!(at("/spec/api/additionalSANs/0"), "api.other");
        assert_eq!(at("/spec/api/access/0"), "0.0.0.0/0");
        assert_eq!(at("/spec/controlPlaneKubelet/maxPods"), 10);
        assert_eq!(at("/spec/externalDNS/provider"), "dns-controller");
        assert_eq!(at("/spec/containerRuntime"), "containerd");
        assert_eq!(at("/spec/legacyConfigStore"), "legacy");
        assert!(v.pointer("/apiVersion").is_none() && v.pointer("/kind").is_none());
        for v1alpha2_only in [
            "masterPublicName",
            "networkCIDR",
            "configBase",
            "masterKubelet",
        ] {
            assert!(v["spec"].get(v1alpha2_only).is_none(), "{v1alpha2_only}");
        }
        let again: Cluster = serde_json::from_value(v).unwrap();
        assert_eq!(again, cluster);
    }

    #[test]
    fn instance_group_json_uses_internal_names() {
        let ig: v1alpha2::InstanceGroup = serde_json::from_value(json!({
            "apiVersion": "kops.k8s.io/v1alpha2",
            "kind": "InstanceGroup",
            "metadata": {"name": "control-plane"},
            "spec": {"role": "Master", "associatePublicIp": true, "rootVolumeSize": 20, "rootVolumeType": "gp3"}
        }))
        .unwrap();
        let ig = InstanceGroup::from(&ig);
        let v = serde_json::to_value(&ig).unwrap();
        assert_eq!(
            v["spec"],
            json!({"role": "ControlPlane", "rootVolume": {"size": 20, "type": "gp3"}, "associatePublicIP": true})
        );
        assert_eq!(serde_json::from_value::<InstanceGroup>(v).unwrap(), ig);
    }

    #[test]
    fn roles_read_and_write_internal_spellings() {
        for (text, role) in [
            ("ControlPlane", InstanceGroupRole::ControlPlane),
            ("Node", InstanceGroupRole::Node),
            ("Bastion", InstanceGroupRole::Bastion),
            ("APIServer", InstanceGroupRole::ApiServer),
            ("Etcd", InstanceGroupRole::Unknown("Etcd".into())),
        ] {
            assert_eq!(serde_json::to_value(&role).unwrap(), text);
            assert_eq!(
                serde_json::from_value::<InstanceGroupRole>(json!(text)).unwrap(),
                role
            );
        }
        let master: InstanceGroupRole = serde_json::from_value(json!("Master")).unwrap();
        assert_eq!(master, InstanceGroupRole::ControlPlane);
        assert!(serde_json::from_value::<InstanceGroupRole>(json!(1)).is_err());
    }

    #[test]
    fn unknown_fields_and_type_meta_are_rejected() {
        for bad in [
            json!({"apiVersion": "kops.k8s.io/v1alpha2", "spec": {}}),
            json!({"spec": {"masterPublicName": "api.example.com"}}),
            json!({"spec": {"networking": {"networkCidr": "10.0.0.0/16"}}}),
            json!({"spec": {"cloudProvider": {"digitalocean": {}}}}),
        ] {
            let err = serde_json::from_value::<Cluster>(bad.clone()).unwrap_err();
            assert!(err.to_string().contains("unknown field"), "{bad}: {err}");
        }
        let empty: Cluster = serde_json::from_value(json!({})).unwrap();
        assert_eq!(empty, Cluster::default());
        let d: Cluster =
            serde_json::from_value(json!({"spec": {"cloudProvider": {"do": {}}}})).unwrap();
        assert_eq!(d.cloud_provider(), Some(CloudProvider::DigitalOcean));
    }
}
