//! EC2: VPCs, subnets, route tables, gateways, addresses, DHCP options, security groups,
//! volumes, key pairs, images, launch templates, instances and tags.

use std::collections::{BTreeMap, BTreeSet};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

use crate::MockAws;
use crate::error::{Error, Result};
use crate::filter::{Filter, Filterable, Tags, matches, validate};
use crate::state::State;

/// A CIDR block associated with a VPC or subnet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidrAssociation {
    /// Association id (`vpc-cidr-assoc-N`, `subnet-cidr-assoc-N`).
    pub association_id: String,
    /// The block.
    pub cidr_block: String,
    /// `associated`.
    pub state: String,
}

/// A VPC.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Vpc {
    /// `vpc-N`.
    pub id: String,
    /// The primary IPv4 block.
    pub cidr_block: String,
    /// Every IPv4 block, the primary first.
    pub cidr_block_associations: Vec<CidrAssociation>,
    /// IPv6 blocks.
    pub ipv6_cidr_block_associations: Vec<CidrAssociation>,
    /// Associated DHCP options (`default` when none).
    pub dhcp_options_id: String,
    /// DNS hostnames attribute.
    pub enable_dns_hostnames: bool,
    /// DNS support attribute.
    pub enable_dns_support: bool,
    /// Whether this is the region's default VPC.
    pub is_default: bool,
    /// Tags.
    pub tags: Tags,
}

/// Subnet attributes that can be modified after creation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubnetAttributes {
    /// Assign a public IPv4 address to instances at launch.
    pub map_public_ip_on_launch: Option<bool>,
    /// Assign an IPv6 address to instances at launch.
    pub assign_ipv6_address_on_creation: Option<bool>,
    /// DNS64.
    pub enable_dns64: Option<bool>,
    /// Resource-name DNS A records.
    pub enable_resource_name_dns_a_record_on_launch: Option<bool>,
    /// Resource-name DNS AAAA records.
    pub enable_resource_name_dns_aaaa_record_on_launch: Option<bool>,
    /// `ip-name` or `resource-name`.
    pub private_dns_hostname_type_on_launch: Option<String>,
}

/// A subnet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subnet {
    /// `subnet-N`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Its zone.
    pub availability_zone: String,
    /// IPv4 block (none for an IPv6-only subnet).
    pub cidr_block: Option<String>,
    /// IPv6 blocks.
    pub ipv6_cidr_block_associations: Vec<CidrAssociation>,
    /// IPv6-only.
    pub ipv6_native: bool,
    /// Modifiable attributes (unset = AWS default).
    pub attributes: SubnetAttributes,
    /// Tags.
    pub tags: Tags,
}

/// Where a route sends traffic.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Route {
    /// IPv4 destination.
    pub destination_cidr_block: Option<String>,
    /// IPv6 destination.
    pub destination_ipv6_cidr_block: Option<String>,
    /// Prefix-list destination.
    pub destination_prefix_list_id: Option<String>,
    /// Internet gateway (or `local`).
    pub gateway_id: Option<String>,
    /// NAT gateway.
    pub nat_gateway_id: Option<String>,
    /// Egress-only internet gateway.
    pub egress_only_internet_gateway_id: Option<String>,
    /// Instance.
    pub instance_id: Option<String>,
    /// Transit gateway.
    pub transit_gateway_id: Option<String>,
    /// Network interface.
    pub network_interface_id: Option<String>,
    /// VPC peering connection.
    pub vpc_peering_connection_id: Option<String>,
}

impl Route {
    /// The route's destination, for matching.
    pub fn destination(&self) -> Option<&str> {
        self.destination_cidr_block
            .as_deref()
            .or(self.destination_ipv6_cidr_block.as_deref())
            .or(self.destination_prefix_list_id.as_deref())
    }
}

/// An association of a route table with a subnet (or the VPC's main association).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RouteTableAssociation {
    /// `rtbassoc-N`.
    pub id: String,
    /// The subnet, for an explicit association.
    pub subnet_id: Option<String>,
    /// Whether this is the VPC's main route table.
    pub main: bool,
}

/// A route table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RouteTable {
    /// `rtb-N`.
    pub id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Routes, the VPC-local ones first.
    pub routes: Vec<Route>,
    /// Associations.
    pub associations: Vec<RouteTableAssociation>,
    /// Tags.
    pub tags: Tags,
}

/// An internet gateway.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InternetGateway {
    /// `igw-N`.
    pub id: String,
    /// The VPC it is attached to.
    pub attached_vpc_id: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// An egress-only internet gateway.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EgressOnlyInternetGateway {
    /// `eigw-N`.
    pub id: String,
    /// The VPC it is attached to.
    pub vpc_id: String,
    /// Tags.
    pub tags: Tags,
}

/// An elastic IP address.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Address {
    /// `eipalloc-N`.
    pub allocation_id: String,
    /// The address.
    pub public_ip: String,
    /// `vpc`.
    pub domain: String,
    /// The NAT gateway using it.
    pub nat_gateway_id: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// A NAT gateway.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NatGateway {
    /// `nat-N`.
    pub id: String,
    /// Its subnet.
    pub subnet_id: String,
    /// Its VPC.
    pub vpc_id: String,
    /// The elastic IP (public connectivity).
    pub allocation_id: Option<String>,
    /// The elastic IP's address.
    pub public_ip: Option<String>,
    /// `public` or `private`.
    pub connectivity_type: String,
    /// `available`.
    pub state: String,
    /// Tags.
    pub tags: Tags,
}

/// A DHCP options set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DhcpOptions {
    /// `dopt-N`.
    pub id: String,
    /// Option name (`domain-name`, `domain-name-servers`, ...) to values.
    pub configurations: BTreeMap<String, Vec<String>>,
    /// Tags.
    pub tags: Tags,
}

/// A security group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SecurityGroup {
    /// `sg-N`.
    pub id: String,
    /// Group name, unique within the VPC.
    pub name: String,
    /// Description.
    pub description: String,
    /// Its VPC.
    pub vpc_id: String,
    /// Tags.
    pub tags: Tags,
}

/// What a security group rule allows (one source or destination per rule).
#[derive(Debug, Clone, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct RuleSpec {
    /// `tcp`, `udp`, `icmp`, `icmpv6`, a protocol number, or `-1` for all.
    pub ip_protocol: String,
    /// First port (or ICMP type); `None` for all.
    pub from_port: Option<i32>,
    /// Last port (or ICMP code); `None` for all.
    pub to_port: Option<i32>,
    /// IPv4 peer.
    pub cidr_ipv4: Option<String>,
    /// IPv6 peer.
    pub cidr_ipv6: Option<String>,
    /// Prefix-list peer.
    pub prefix_list_id: Option<String>,
    /// Security-group peer.
    pub referenced_group_id: Option<String>,
    /// Description.
    pub description: Option<String>,
}

/// A security group rule.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SecurityGroupRule {
    /// `sgr-N`.
    pub id: String,
    /// The group it belongs to.
    pub group_id: String,
    /// Egress (true) or ingress.
    pub is_egress: bool,
    /// What it allows.
    pub spec: RuleSpec,
    /// Tags.
    pub tags: Tags,
}

/// Parameters of a new volume.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateVolume {
    /// Zone.
    pub availability_zone: String,
    /// Size in GiB.
    pub size: i32,
    /// `gp3`, `gp2`, `io1`, ...
    pub volume_type: String,
    /// Provisioned IOPS.
    pub iops: Option<i32>,
    /// Provisioned throughput (MiB/s).
    pub throughput: Option<i32>,
    /// Encrypted.
    pub encrypted: bool,
    /// KMS key.
    pub kms_key_id: Option<String>,
    /// Tags.
    pub tags: Tags,
}

/// An EBS volume.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Volume {
    /// `vol-N`.
    pub id: String,
    /// Zone.
    pub availability_zone: String,
    /// Size in GiB.
    pub size: i32,
    /// Type.
    pub volume_type: String,
    /// IOPS.
    pub iops: Option<i32>,
    /// Throughput.
    pub throughput: Option<i32>,
    /// Encrypted.
    pub encrypted: bool,
    /// KMS key.
    pub kms_key_id: Option<String>,
    /// `available`.
    pub state: String,
    /// Tags.
    pub tags: Tags,
}

/// A key pair.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyPair {
    /// `key-N`.
    pub id: String,
    /// Name.
    pub name: String,
    /// Fingerprint of the imported material (MD5, colon-separated; computed over the
    /// public key text, not AWS' DER encoding).
    pub fingerprint: String,
    /// The public key as imported.
    pub public_key: String,
    /// Tags.
    pub tags: Tags,
}

/// A machine image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Image {
    /// `ami-N`.
    pub id: String,
    /// Name.
    pub name: String,
    /// Owner account.
    pub owner_id: String,
    /// Owner alias (`amazon`, ...), if any.
    pub owner_alias: Option<String>,
    /// `x86_64` or `arm64`.
    pub architecture: String,
    /// Root device.
    pub root_device_name: String,
    /// `ebs`.
    pub root_device_type: String,
    /// ISO-8601 creation date.
    pub creation_date: String,
    /// `available`.
    pub state: String,
    /// Tags.
    pub tags: Tags,
}

/// A block device of a launch template.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockDeviceMapping {
    /// Device name.
    pub device_name: String,
    /// Instance-store virtual name (`ephemeral0`).
    pub virtual_name: Option<String>,
    /// Size in GiB.
    pub volume_size: Option<i32>,
    /// Type.
    pub volume_type: Option<String>,
    /// IOPS.
    pub iops: Option<i32>,
    /// Throughput.
    pub throughput: Option<i32>,
    /// Delete with the instance.
    pub delete_on_termination: Option<bool>,
    /// Encrypted.
    pub encrypted: Option<bool>,
    /// KMS key.
    pub kms_key_id: Option<String>,
}

/// A network interface of a launch template.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetworkInterfaceSpec {
    /// Device index.
    pub device_index: i32,
    /// Public IPv4.
    pub associate_public_ip_address: Option<bool>,
    /// Delete with the instance.
    pub delete_on_termination: Option<bool>,
    /// Security groups.
    pub groups: Vec<String>,
    /// IPv6 address count.
    pub ipv6_address_count: Option<i32>,
}

/// Instance metadata service options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataOptions {
    /// `optional` or `required`.
    pub http_tokens: Option<String>,
    /// Hop limit.
    pub http_put_response_hop_limit: Option<i32>,
    /// `enabled` or `disabled`.
    pub http_endpoint: Option<String>,
    /// `enabled` or `disabled`.
    pub http_protocol_ipv6: Option<String>,
    /// `enabled` or `disabled`.
    pub instance_metadata_tags: Option<String>,
}

/// Spot market options of a launch template.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpotOptions {
    /// Maximum price.
    pub max_price: Option<String>,
    /// `one-time` or `persistent`.
    pub spot_instance_type: Option<String>,
}

/// The data of a launch template version. On a version created from a source version,
/// every field left unset here is taken from the source.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchTemplateData {
    /// Image.
    pub image_id: Option<String>,
    /// Instance type.
    pub instance_type: Option<String>,
    /// Key pair.
    pub key_name: Option<String>,
    /// Instance profile name.
    pub iam_instance_profile: Option<String>,
    /// Security groups (when no network interfaces are given).
    pub security_group_ids: Vec<String>,
    /// Base64 user data.
    pub user_data: Option<String>,
    /// Block devices.
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    /// Network interfaces.
    pub network_interfaces: Vec<NetworkInterfaceSpec>,
    /// Metadata options.
    pub metadata_options: Option<MetadataOptions>,
    /// Tags per resource type (`instance`, `volume`, `network-interface`).
    pub tag_specifications: BTreeMap<String, Tags>,
    /// Detailed monitoring.
    pub monitoring: Option<bool>,
    /// EBS optimised.
    pub ebs_optimized: Option<bool>,
    /// Spot options (market type `spot` when set).
    pub spot_options: Option<SpotOptions>,
    /// `standard` or `unlimited`.
    pub cpu_credits: Option<String>,
}

impl LaunchTemplateData {
    /// `self` over `base`: fields set in `self` win, the rest come from `base`.
    fn over(self, base: &LaunchTemplateData) -> LaunchTemplateData {
        fn pick<T: Clone>(a: Option<T>, b: &Option<T>) -> Option<T> {
            a.or_else(|| b.clone())
        }
        fn pick_vec<T: Clone>(a: Vec<T>, b: &[T]) -> Vec<T> {
            if a.is_empty() { b.to_vec() } else { a }
        }
        LaunchTemplateData {
            image_id: pick(self.image_id, &base.image_id),
            instance_type: pick(self.instance_type, &base.instance_type),
            key_name: pick(self.key_name, &base.key_name),
            iam_instance_profile: pick(self.iam_instance_profile, &base.iam_instance_profile),
            security_group_ids: pick_vec(self.security_group_ids, &base.security_group_ids),
            user_data: pick(self.user_data, &base.user_data),
            block_device_mappings: pick_vec(
                self.block_device_mappings,
                &base.block_device_mappings,
            ),
            network_interfaces: pick_vec(self.network_interfaces, &base.network_interfaces),
            metadata_options: pick(self.metadata_options, &base.metadata_options),
            tag_specifications: if self.tag_specifications.is_empty() {
                base.tag_specifications.clone()
            } else {
                self.tag_specifications
            },
            monitoring: pick(self.monitoring, &base.monitoring),
            ebs_optimized: pick(self.ebs_optimized, &base.ebs_optimized),
            spot_options: pick(self.spot_options, &base.spot_options),
            cpu_credits: pick(self.cpu_credits, &base.cpu_credits),
        }
    }
}

/// One version of a launch template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchTemplateVersion {
    /// Template id.
    pub launch_template_id: String,
    /// Template name.
    pub launch_template_name: String,
    /// Version number, from 1.
    pub version_number: i64,
    /// Description.
    pub description: Option<String>,
    /// Whether it is the default version.
    pub default_version: bool,
    /// The data.
    pub data: LaunchTemplateData,
}

/// A launch template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchTemplate {
    /// `lt-N`.
    pub id: String,
    /// Name.
    pub name: String,
    /// Default version.
    pub default_version_number: i64,
    /// Latest version.
    pub latest_version_number: i64,
    /// Tags.
    pub tags: Tags,
}

/// Identifies a launch template by id or name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateRef {
    /// By `lt-N`.
    Id(String),
    /// By name.
    Name(String),
}

/// Parameters of `RunInstances`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunInstances {
    /// Launch template and version (`$Latest`, `$Default` or a number).
    pub launch_template: Option<(TemplateRef, String)>,
    /// Image (overrides the template's).
    pub image_id: Option<String>,
    /// Instance type (overrides the template's).
    pub instance_type: Option<String>,
    /// Subnet.
    pub subnet_id: String,
    /// How many.
    pub count: u32,
    /// Instance tags (merged over the template's instance tags).
    pub tags: Tags,
}

/// An instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Instance {
    /// `i-N`.
    pub id: String,
    /// Image.
    pub image_id: String,
    /// Type.
    pub instance_type: String,
    /// Subnet.
    pub subnet_id: String,
    /// VPC.
    pub vpc_id: String,
    /// Zone.
    pub availability_zone: String,
    /// `running` or `terminated`.
    pub state: String,
    /// Security groups.
    pub security_group_ids: Vec<String>,
    /// Key pair.
    pub key_name: Option<String>,
    /// Instance profile.
    pub iam_instance_profile: Option<String>,
    /// Launch template id and version it was started from.
    pub launch_template: Option<(String, i64)>,
    /// Tags.
    pub tags: Tags,
    /// The primary private IPv4 address, from the subnet's range.
    pub private_ip: String,
}

/// An EC2 tag as `DescribeTags` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TagDescription {
    /// The tagged resource.
    pub resource_id: String,
    /// Its type (`vpc`, `subnet`, `security-group`, ...).
    pub resource_type: String,
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}

/// A new VPC CIDR block for `AssociateVpcCidrBlock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VpcCidr {
    /// An additional IPv4 block.
    Ipv4(String),
    /// An Amazon-provided /56 IPv6 block.
    AmazonIpv6,
    /// A specific IPv6 block (from a pool).
    Ipv6(String),
}

// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
pub(crate) struct Ec2State {
    pub(crate) vpcs: BTreeMap<String, Vpc>,
    pub(crate) subnets: BTreeMap<String, Subnet>,
    pub(crate) route_tables: BTreeMap<String, RouteTable>,
    pub(crate) igws: BTreeMap<String, InternetGateway>,
    pub(crate) eigws: BTreeMap<String, EgressOnlyInternetGateway>,
    pub(crate) addresses: BTreeMap<String, Address>,
    pub(crate) nat_gateways: BTreeMap<String, NatGateway>,
    pub(crate) dhcp_options: BTreeMap<String, DhcpOptions>,
    pub(crate) security_groups: BTreeMap<String, SecurityGroup>,
    pub(crate) sg_rules: BTreeMap<String, SecurityGroupRule>,
    pub(crate) volumes: BTreeMap<String, Volume>,
    pub(crate) key_pairs: BTreeMap<String, KeyPair>,
    pub(crate) images: BTreeMap<String, Image>,
    pub(crate) launch_templates: BTreeMap<String, LaunchTemplate>,
    pub(crate) lt_versions: BTreeMap<(String, i64), LaunchTemplateVersion>,
    pub(crate) instances: BTreeMap<String, Instance>,
    /// Fixed answers to `default_instance_type`, by role (see
    /// [`MockAws::set_default_instance_type`]).
    pub(crate) default_instance_types: BTreeMap<kops_cloud_aws::cloud::MachineRole, String>,
    next_ipv6: u32,
    next_public_ip: u32,
}

impl Ec2State {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.vpcs.keys().cloned());
        out.extend(self.subnets.keys().cloned());
        out.extend(self.route_tables.keys().cloned());
        out.extend(self.igws.keys().cloned());
        out.extend(self.eigws.keys().cloned());
        out.extend(self.addresses.keys().cloned());
        out.extend(self.nat_gateways.keys().cloned());
        out.extend(self.dhcp_options.keys().cloned());
        out.extend(self.security_groups.keys().cloned());
        out.extend(self.sg_rules.keys().cloned());
        out.extend(self.volumes.keys().cloned());
        out.extend(
            self.key_pairs
                .values()
                .map(|k| format!("key-pair/{}", k.name)),
        );
        out.extend(self.images.keys().cloned());
        out.extend(self.launch_templates.keys().cloned());
        out.extend(
            self.instances
                .values()
                .filter(|i| i.state != "terminated")
                .map(|i| i.id.clone()),
        );
    }

    pub(crate) fn public_ip(&mut self) -> String {
        self.next_public_ip += 1;
        let n = self.next_public_ip;
        // 203.0.113.0/24 and 198.51.100.0/24 are documentation ranges.
        let (net, host) = if n < 255 {
            (113, n)
        } else {
            (100, n % 254 + 1)
        };
        if net == 113 {
            format!("203.0.113.{host}")
        } else {
            format!("198.51.100.{host}")
        }
    }

    fn tags_mut(&mut self, id: &str) -> Option<(&'static str, &mut Tags)> {
        macro_rules! look {
            ($map:ident, $ty:expr) => {
                if let Some(o) = self.$map.get_mut(id) {
                    return Some(($ty, &mut o.tags));
                }
            };
        }
        look!(vpcs, "vpc");
        look!(subnets, "subnet");
        look!(route_tables, "route-table");
        look!(igws, "internet-gateway");
        look!(eigws, "egress-only-internet-gateway");
        look!(addresses, "elastic-ip");
        look!(nat_gateways, "natgateway");
        look!(dhcp_options, "dhcp-options");
        look!(security_groups, "security-group");
        look!(sg_rules, "security-group-rule");
        look!(volumes, "volume");
        look!(images, "image");
        look!(launch_templates, "launch-template");
        look!(instances, "instance");
        if let Some(k) = self.key_pairs.values_mut().find(|k| k.id == id) {
            return Some(("key-pair", &mut k.tags));
        }
        None
    }

    fn all_tags(&self) -> Vec<TagDescription> {
        let mut out = Vec::new();
        let mut add = |id: &str, ty: &str, tags: &Tags| {
            for (k, v) in tags {
                out.push(TagDescription {
                    resource_id: id.to_owned(),
                    resource_type: ty.to_owned(),
                    key: k.clone(),
                    value: v.clone(),
                });
            }
        };
        macro_rules! each {
            ($map:ident, $ty:expr) => {
                for (id, o) in &self.$map {
                    add(id, $ty, &o.tags);
                }
            };
        }
        each!(vpcs, "vpc");
        each!(subnets, "subnet");
        each!(route_tables, "route-table");
        each!(igws, "internet-gateway");
        each!(eigws, "egress-only-internet-gateway");
        each!(addresses, "elastic-ip");
        each!(nat_gateways, "natgateway");
        each!(dhcp_options, "dhcp-options");
        each!(security_groups, "security-group");
        each!(sg_rules, "security-group-rule");
        each!(volumes, "volume");
        each!(images, "image");
        each!(launch_templates, "launch-template");
        each!(instances, "instance");
        for k in self.key_pairs.values() {
            add(&k.id, "key-pair", &k.tags);
        }
        out
    }
}

/// Generic describe: every requested id must exist; then filters.
pub(crate) fn describe<T: Filterable + Clone>(
    op: &str,
    kind: &'static str,
    map: &BTreeMap<String, T>,
    ids: &[String],
    filters: &[Filter],
) -> Result<Vec<T>> {
    validate::<T>(op, filters)?;
    if let Some(missing) = ids.iter().find(|id| !map.contains_key(*id)) {
        return Err(Error::not_found(op, kind, missing.clone()));
    }
    Ok(map
        .iter()
        .filter(|(k, _)| ids.is_empty() || ids.contains(k))
        .filter(|(_, v)| matches(*v, filters))
        .map(|(_, v)| v.clone())
        .collect())
}

fn opt(v: &Option<String>) -> Vec<String> {
    v.iter().cloned().collect()
}

fn one(v: &str) -> Vec<String> {
    vec![v.to_owned()]
}

impl Filterable for Vpc {
    const FILTERS: &'static [&'static str] = &[
        "vpc-id",
        "cidr",
        "cidr-block-association.cidr-block",
        "ipv6-cidr-block-association.ipv6-cidr-block",
        "dhcp-options-id",
        "is-default",
        "state",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "vpc-id" => one(&self.id),
            "cidr" => one(&self.cidr_block),
            "cidr-block-association.cidr-block" => self
                .cidr_block_associations
                .iter()
                .map(|a| a.cidr_block.clone())
                .collect(),
            "ipv6-cidr-block-association.ipv6-cidr-block" => self
                .ipv6_cidr_block_associations
                .iter()
                .map(|a| a.cidr_block.clone())
                .collect(),
            "dhcp-options-id" => one(&self.dhcp_options_id),
            "is-default" => one(&self.is_default.to_string()),
            "state" => one("available"),
            _ => vec![],
        }
    }
}

impl Filterable for Subnet {
    const FILTERS: &'static [&'static str] = &[
        "subnet-id",
        "vpc-id",
        "availability-zone",
        "cidr-block",
        "ipv6-cidr-block-association.ipv6-cidr-block",
        "state",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "subnet-id" => one(&self.id),
            "vpc-id" => one(&self.vpc_id),
            "availability-zone" => one(&self.availability_zone),
            "cidr-block" => opt(&self.cidr_block),
            "ipv6-cidr-block-association.ipv6-cidr-block" => self
                .ipv6_cidr_block_associations
                .iter()
                .map(|a| a.cidr_block.clone())
                .collect(),
            "state" => one("available"),
            _ => vec![],
        }
    }
}

impl Filterable for RouteTable {
    const FILTERS: &'static [&'static str] = &[
        "route-table-id",
        "vpc-id",
        "association.subnet-id",
        "association.route-table-association-id",
        "association.main",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "route-table-id" => one(&self.id),
            "vpc-id" => one(&self.vpc_id),
            "association.subnet-id" => self
                .associations
                .iter()
                .filter_map(|a| a.subnet_id.clone())
                .collect(),
            "association.route-table-association-id" => {
                self.associations.iter().map(|a| a.id.clone()).collect()
            }
            "association.main" => one(&self.associations.iter().any(|a| a.main).to_string()),
            _ => vec![],
        }
    }
}

impl Filterable for InternetGateway {
    const FILTERS: &'static [&'static str] = &["internet-gateway-id", "attachment.vpc-id"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "internet-gateway-id" => one(&self.id),
            "attachment.vpc-id" => opt(&self.attached_vpc_id),
            _ => vec![],
        }
    }
}

impl Filterable for EgressOnlyInternetGateway {
    const FILTERS: &'static [&'static str] = &["egress-only-internet-gateway-id"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "egress-only-internet-gateway-id" => one(&self.id),
            _ => vec![],
        }
    }
}

impl Filterable for Address {
    const FILTERS: &'static [&'static str] = &["allocation-id", "public-ip", "domain"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "allocation-id" => one(&self.allocation_id),
            "public-ip" => one(&self.public_ip),
            "domain" => one(&self.domain),
            _ => vec![],
        }
    }
}

impl Filterable for NatGateway {
    const FILTERS: &'static [&'static str] = &["nat-gateway-id", "subnet-id", "vpc-id", "state"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "nat-gateway-id" => one(&self.id),
            "subnet-id" => one(&self.subnet_id),
            "vpc-id" => one(&self.vpc_id),
            "state" => one(&self.state),
            _ => vec![],
        }
    }
}

impl Filterable for DhcpOptions {
    const FILTERS: &'static [&'static str] = &["dhcp-options-id", "key", "value"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "dhcp-options-id" => one(&self.id),
            "key" => self.configurations.keys().cloned().collect(),
            "value" => self.configurations.values().flatten().cloned().collect(),
            _ => vec![],
        }
    }
}

impl Filterable for SecurityGroup {
    const FILTERS: &'static [&'static str] = &["group-id", "group-name", "vpc-id", "description"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "group-id" => one(&self.id),
            "group-name" => one(&self.name),
            "vpc-id" => one(&self.vpc_id),
            "description" => one(&self.description),
            _ => vec![],
        }
    }
}

impl Filterable for SecurityGroupRule {
    const FILTERS: &'static [&'static str] = &["group-id", "security-group-rule-id"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "group-id" => one(&self.group_id),
            "security-group-rule-id" => one(&self.id),
            _ => vec![],
        }
    }
}

impl Filterable for Volume {
    const FILTERS: &'static [&'static str] = &[
        "volume-id",
        "availability-zone",
        "status",
        "volume-type",
        "size",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "volume-id" => one(&self.id),
            "availability-zone" => one(&self.availability_zone),
            "status" => one(&self.state),
            "volume-type" => one(&self.volume_type),
            "size" => one(&self.size.to_string()),
            _ => vec![],
        }
    }
}

impl Filterable for KeyPair {
    const FILTERS: &'static [&'static str] = &["key-name", "key-pair-id", "fingerprint"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "key-name" => one(&self.name),
            "key-pair-id" => one(&self.id),
            "fingerprint" => one(&self.fingerprint),
            _ => vec![],
        }
    }
}

impl Filterable for Image {
    const FILTERS: &'static [&'static str] = &[
        "image-id",
        "name",
        "owner-id",
        "owner-alias",
        "architecture",
        "state",
        "root-device-type",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "image-id" => one(&self.id),
            "name" => one(&self.name),
            "owner-id" => one(&self.owner_id),
            "owner-alias" => opt(&self.owner_alias),
            "architecture" => one(&self.architecture),
            "state" => one(&self.state),
            "root-device-type" => one(&self.root_device_type),
            _ => vec![],
        }
    }
}

impl Filterable for LaunchTemplate {
    const FILTERS: &'static [&'static str] = &["launch-template-id", "launch-template-name"];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "launch-template-id" => one(&self.id),
            "launch-template-name" => one(&self.name),
            _ => vec![],
        }
    }
}

impl Filterable for Instance {
    const FILTERS: &'static [&'static str] = &[
        "instance-id",
        "instance-state-name",
        "subnet-id",
        "vpc-id",
        "availability-zone",
        "instance-type",
        "image-id",
    ];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "instance-id" => one(&self.id),
            "instance-state-name" => one(&self.state),
            "subnet-id" => one(&self.subnet_id),
            "vpc-id" => one(&self.vpc_id),
            "availability-zone" => one(&self.availability_zone),
            "instance-type" => one(&self.instance_type),
            "image-id" => one(&self.image_id),
            _ => vec![],
        }
    }
}

impl Filterable for TagDescription {
    const FILTERS: &'static [&'static str] = &["resource-id", "resource-type", "key", "value"];
    fn tags(&self) -> &Tags {
        static EMPTY: Tags = Tags::new();
        &EMPTY
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "resource-id" => one(&self.resource_id),
            "resource-type" => one(&self.resource_type),
            "key" => one(&self.key),
            "value" => one(&self.value),
            _ => vec![],
        }
    }
}

fn parse_v4(op: &str, field: &str, cidr: &str) -> Result<Ipv4Net> {
    cidr.parse::<Ipv4Net>()
        .map(|n| n.trunc())
        .map_err(|_| Error::invalid(op, field, format!("{cidr:?} is not an IPv4 CIDR block")))
}

fn parse_v6(op: &str, field: &str, cidr: &str) -> Result<Ipv6Net> {
    cidr.parse::<Ipv6Net>()
        .map(|n| n.trunc())
        .map_err(|_| Error::invalid(op, field, format!("{cidr:?} is not an IPv6 CIDR block")))
}

fn overlaps(a: IpNet, b: IpNet) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

fn key_fingerprint(material: &str) -> String {
    use md5::{Digest, Md5};
    let digest = Md5::digest(material.trim().as_bytes());
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Parameters of `CreateSubnet`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateSubnet {
    /// VPC.
    pub vpc_id: String,
    /// Zone.
    pub availability_zone: String,
    /// IPv4 block (must lie in one of the VPC's blocks and not overlap another subnet).
    pub cidr_block: Option<String>,
    /// IPv6 block (must lie in the VPC's IPv6 block).
    pub ipv6_cidr_block: Option<String>,
    /// IPv6-only.
    pub ipv6_native: bool,
    /// Tags.
    pub tags: Tags,
}

fn check_subnet_range(
    ec2: &Ec2State,
    op: &str,
    vpc: &Vpc,
    exclude: Option<&str>,
    cidr: Option<&str>,
    ipv6: Option<&str>,
) -> Result<()> {
    if let Some(c) = cidr {
        let net = parse_v4(op, "CidrBlock", c)?;
        let inside = vpc.cidr_block_associations.iter().any(|a| {
            a.cidr_block
                .parse::<Ipv4Net>()
                .is_ok_and(|v| v.contains(&net))
        });
        if !inside {
            return Err(Error::invalid(
                op,
                "CidrBlock",
                format!(
                    "the CIDR {c} is invalid for VPC {} (InvalidSubnet.Range)",
                    vpc.id
                ),
            ));
        }
        for s in ec2.subnets.values() {
            if s.vpc_id != vpc.id || Some(s.id.as_str()) == exclude {
                continue;
            }
            if let Some(other) = s
                .cidr_block
                .as_deref()
                .and_then(|o| o.parse::<Ipv4Net>().ok())
                && overlaps(IpNet::V4(other), IpNet::V4(net))
            {
                return Err(Error::conflict(
                    op,
                    "subnet",
                    s.id.clone(),
                    format!("the CIDR {c} conflicts with {other} (InvalidSubnet.Conflict)"),
                ));
            }
        }
    }
    if let Some(c) = ipv6 {
        let net = parse_v6(op, "Ipv6CidrBlock", c)?;
        let inside = vpc.ipv6_cidr_block_associations.iter().any(|a| {
            a.cidr_block
                .parse::<Ipv6Net>()
                .is_ok_and(|v| v.contains(&net))
        });
        if !inside {
            return Err(Error::invalid(
                op,
                "Ipv6CidrBlock",
                format!(
                    "the IPv6 CIDR {c} is not within VPC {}'s IPv6 blocks",
                    vpc.id
                ),
            ));
        }
    }
    Ok(())
}

fn default_sg_id(ec2: &Ec2State, vpc_id: &str) -> Option<String> {
    ec2.security_groups
        .values()
        .find(|g| g.vpc_id == vpc_id && g.name == "default")
        .map(|g| g.id.clone())
}

pub(crate) fn resolve_template<'a>(
    ec2: &'a Ec2State,
    op: &str,
    r: &TemplateRef,
) -> Result<&'a LaunchTemplate> {
    match r {
        TemplateRef::Id(id) => ec2
            .launch_templates
            .get(id)
            .ok_or_else(|| Error::not_found(op, "launch-template", id.clone())),
        TemplateRef::Name(n) => ec2
            .launch_templates
            .values()
            .find(|t| &t.name == n)
            .ok_or_else(|| Error::not_found(op, "launch-template", n.clone())),
    }
}

pub(crate) fn version_number(op: &str, lt: &LaunchTemplate, v: &str) -> Result<i64> {
    match v {
        "$Latest" => Ok(lt.latest_version_number),
        "$Default" => Ok(lt.default_version_number),
        n => n.parse::<i64>().map_err(|_| {
            Error::invalid(
                op,
                "Versions",
                format!("{n:?} is not a launch template version"),
            )
        }),
    }
}

pub(crate) fn insert_vpc(st: &mut State, mut vpc: Vpc, defaults: bool) -> Vpc {
    if vpc.cidr_block_associations.is_empty() {
        let assoc = st.ids.next("vpc-cidr-assoc");
        vpc.cidr_block_associations.push(CidrAssociation {
            association_id: assoc,
            cidr_block: vpc.cidr_block.clone(),
            state: "associated".into(),
        });
    }
    if vpc.dhcp_options_id.is_empty() {
        vpc.dhcp_options_id = "default".into();
    }
    if defaults {
        let rtb = st.ids.next("rtb");
        let assoc = st.ids.next("rtbassoc");
        let mut routes = vec![Route {
            destination_cidr_block: Some(vpc.cidr_block.clone()),
            gateway_id: Some("local".into()),
            ..Route::default()
        }];
        for a in &vpc.ipv6_cidr_block_associations {
            routes.push(Route {
                destination_ipv6_cidr_block: Some(a.cidr_block.clone()),
                gateway_id: Some("local".into()),
                ..Route::default()
            });
        }
        st.ec2.route_tables.insert(
            rtb.clone(),
            RouteTable {
                id: rtb,
                vpc_id: vpc.id.clone(),
                routes,
                associations: vec![RouteTableAssociation {
                    id: assoc,
                    subnet_id: None,
                    main: true,
                }],
                tags: Tags::new(),
            },
        );
        let sg = st.ids.next("sg");
        st.ec2.security_groups.insert(
            sg.clone(),
            SecurityGroup {
                id: sg.clone(),
                name: "default".into(),
                description: "default VPC security group".into(),
                vpc_id: vpc.id.clone(),
                tags: Tags::new(),
            },
        );
        let rule = st.ids.next("sgr");
        st.ec2.sg_rules.insert(
            rule.clone(),
            SecurityGroupRule {
                id: rule,
                group_id: sg,
                is_egress: true,
                spec: RuleSpec {
                    ip_protocol: "-1".into(),
                    cidr_ipv4: Some("0.0.0.0/0".into()),
                    ..RuleSpec::default()
                },
                tags: Tags::new(),
            },
        );
    }
    st.ec2.vpcs.insert(vpc.id.clone(), vpc.clone());
    vpc
}

fn allocate_ipv6(st: &mut State) -> String {
    st.ec2.next_ipv6 += 1;
    format!("2001:db8:{:x}::/56", st.ec2.next_ipv6)
}

impl MockAws {
    // ----- VPCs -------------------------------------------------------------------------

    /// `CreateVpc`: a VPC with `cidr_block`, optionally an Amazon-provided IPv6 block. Like
    /// AWS, this also creates the VPC's main route table and its `default` security group
    /// (unless turned off with [`crate::MockOptions::with_vpc_defaults`]).
    pub fn create_vpc(&self, cidr_block: &str, amazon_ipv6: bool, tags: Tags) -> Result<Vpc> {
        let defaults = self.options().vpc_defaults;
        self.call("ec2:CreateVpc", |st, op| {
            let net = parse_v4(op, "CidrBlock", cidr_block)?;
            if !(16..=28).contains(&net.prefix_len()) {
                return Err(Error::invalid(
                    op,
                    "CidrBlock",
                    format!("{cidr_block}: the prefix length must be between /16 and /28"),
                ));
            }
            let id = st.ids.next("vpc");
            let mut vpc = Vpc {
                id,
                cidr_block: net.to_string(),
                enable_dns_support: true,
                tags,
                ..Vpc::default()
            };
            if amazon_ipv6 {
                let block = allocate_ipv6(st);
                vpc.ipv6_cidr_block_associations.push(CidrAssociation {
                    association_id: st.ids.next("vpc-cidr-assoc"),
                    cidr_block: block,
                    state: "associated".into(),
                });
            }
            Ok(insert_vpc(st, vpc, defaults))
        })
    }

    /// `DescribeVpcs`.
    pub fn describe_vpcs(&self, ids: &[String], filters: &[Filter]) -> Result<Vec<Vpc>> {
        self.call("ec2:DescribeVpcs", |st, op| {
            describe(op, "vpc", &st.ec2.vpcs, ids, filters)
        })
    }

    /// `ModifyVpcAttribute`: sets the DNS attributes given.
    pub fn modify_vpc_attribute(
        &self,
        vpc_id: &str,
        enable_dns_hostnames: Option<bool>,
        enable_dns_support: Option<bool>,
    ) -> Result<()> {
        self.call("ec2:ModifyVpcAttribute", |st, op| {
            let vpc = st
                .ec2
                .vpcs
                .get_mut(vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", vpc_id))?;
            if let Some(v) = enable_dns_hostnames {
                vpc.enable_dns_hostnames = v;
            }
            if let Some(v) = enable_dns_support {
                vpc.enable_dns_support = v;
            }
            Ok(())
        })
    }

    /// `AssociateVpcCidrBlock`.
    pub fn associate_vpc_cidr_block(&self, vpc_id: &str, cidr: VpcCidr) -> Result<CidrAssociation> {
        self.call("ec2:AssociateVpcCidrBlock", |st, op| {
            if !st.ec2.vpcs.contains_key(vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc_id));
            }
            let (block, v6) = match &cidr {
                VpcCidr::Ipv4(c) => (parse_v4(op, "CidrBlock", c)?.to_string(), false),
                VpcCidr::Ipv6(c) => (parse_v6(op, "Ipv6CidrBlock", c)?.to_string(), true),
                VpcCidr::AmazonIpv6 => (allocate_ipv6(st), true),
            };
            let assoc = CidrAssociation {
                association_id: st.ids.next("vpc-cidr-assoc"),
                cidr_block: block.clone(),
                state: "associated".into(),
            };
            let vpc = st
                .ec2
                .vpcs
                .get_mut(vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", vpc_id))?;
            let list = if v6 {
                &mut vpc.ipv6_cidr_block_associations
            } else {
                &mut vpc.cidr_block_associations
            };
            if list.iter().any(|a| a.cidr_block == block) {
                return Err(Error::exists(op, "vpc-cidr-block", block));
            }
            list.push(assoc.clone());
            Ok(assoc)
        })
    }

    /// `DisassociateVpcCidrBlock`. The primary IPv4 block cannot be removed.
    pub fn disassociate_vpc_cidr_block(&self, association_id: &str) -> Result<()> {
        self.call("ec2:DisassociateVpcCidrBlock", |st, op| {
            for vpc in st.ec2.vpcs.values_mut() {
                if let Some(i) = vpc
                    .ipv6_cidr_block_associations
                    .iter()
                    .position(|a| a.association_id == association_id)
                {
                    vpc.ipv6_cidr_block_associations.remove(i);
                    return Ok(());
                }
                if let Some(i) = vpc
                    .cidr_block_associations
                    .iter()
                    .position(|a| a.association_id == association_id)
                {
                    if i == 0 {
                        return Err(Error::invalid(
                            op,
                            "AssociationId",
                            "the primary CIDR block of a VPC cannot be disassociated",
                        ));
                    }
                    vpc.cidr_block_associations.remove(i);
                    return Ok(());
                }
            }
            Err(Error::not_found(op, "vpc-cidr-association", association_id))
        })
    }

    /// `DeleteVpc`: fails with a conflict while subnets, gateways, non-main route tables
    /// or non-default security groups remain.
    pub fn delete_vpc(&self, vpc_id: &str) -> Result<()> {
        self.call("ec2:DeleteVpc", |st, op| {
            if !st.ec2.vpcs.contains_key(vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc_id));
            }
            let e = &st.ec2;
            let mut deps: Vec<String> = Vec::new();
            deps.extend(
                e.subnets
                    .values()
                    .filter(|s| s.vpc_id == vpc_id)
                    .map(|s| s.id.clone()),
            );
            deps.extend(
                e.igws
                    .values()
                    .filter(|g| g.attached_vpc_id.as_deref() == Some(vpc_id))
                    .map(|g| g.id.clone()),
            );
            deps.extend(
                e.eigws
                    .values()
                    .filter(|g| g.vpc_id == vpc_id)
                    .map(|g| g.id.clone()),
            );
            deps.extend(
                e.route_tables
                    .values()
                    .filter(|r| r.vpc_id == vpc_id && !r.associations.iter().any(|a| a.main))
                    .map(|r| r.id.clone()),
            );
            deps.extend(
                e.security_groups
                    .values()
                    .filter(|g| g.vpc_id == vpc_id && g.name != "default")
                    .map(|g| g.id.clone()),
            );
            if !deps.is_empty() {
                return Err(Error::conflict(
                    op,
                    "vpc",
                    vpc_id,
                    format!("has dependencies: {}", deps.join(", ")),
                ));
            }
            let e = &mut st.ec2;
            e.route_tables.retain(|_, r| r.vpc_id != vpc_id);
            let groups: Vec<String> = e
                .security_groups
                .values()
                .filter(|g| g.vpc_id == vpc_id)
                .map(|g| g.id.clone())
                .collect();
            e.sg_rules.retain(|_, r| !groups.contains(&r.group_id));
            e.security_groups.retain(|_, g| g.vpc_id != vpc_id);
            e.vpcs.remove(vpc_id);
            Ok(())
        })
    }

    // ----- Subnets ----------------------------------------------------------------------

    /// `CreateSubnet`.
    pub fn create_subnet(&self, req: CreateSubnet) -> Result<Subnet> {
        let zones = self.options().zones.clone();
        self.call("ec2:CreateSubnet", |st, op| {
            let vpc = st
                .ec2
                .vpcs
                .get(&req.vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", req.vpc_id.clone()))?
                .clone();
            if !zones.is_empty() && !zones.contains(&req.availability_zone) {
                return Err(Error::invalid(
                    op,
                    "AvailabilityZone",
                    format!("{:?} is not a zone of this region", req.availability_zone),
                ));
            }
            if req.cidr_block.is_none() && !(req.ipv6_native && req.ipv6_cidr_block.is_some()) {
                return Err(Error::invalid(
                    op,
                    "CidrBlock",
                    "a CIDR block is required unless the subnet is IPv6-native with an IPv6 block",
                ));
            }
            let cidr = match &req.cidr_block {
                Some(c) => Some(parse_v4(op, "CidrBlock", c)?.to_string()),
                None => None,
            };
            let ipv6 = match &req.ipv6_cidr_block {
                Some(c) => Some(parse_v6(op, "Ipv6CidrBlock", c)?.to_string()),
                None => None,
            };
            check_subnet_range(&st.ec2, op, &vpc, None, cidr.as_deref(), ipv6.as_deref())?;
            let id = st.ids.next("subnet");
            let mut subnet = Subnet {
                id: id.clone(),
                vpc_id: req.vpc_id.clone(),
                availability_zone: req.availability_zone.clone(),
                cidr_block: cidr,
                ipv6_native: req.ipv6_native,
                tags: req.tags.clone(),
                ..Subnet::default()
            };
            if let Some(b) = ipv6 {
                subnet.ipv6_cidr_block_associations.push(CidrAssociation {
                    association_id: st.ids.next("subnet-cidr-assoc"),
                    cidr_block: b,
                    state: "associated".into(),
                });
            }
            st.ec2.subnets.insert(id, subnet.clone());
            Ok(subnet)
        })
    }

    /// `DescribeSubnets`.
    pub fn describe_subnets(&self, ids: &[String], filters: &[Filter]) -> Result<Vec<Subnet>> {
        self.call("ec2:DescribeSubnets", |st, op| {
            describe(op, "subnet", &st.ec2.subnets, ids, filters)
        })
    }

    /// `ModifySubnetAttribute`: applies the attributes that are set.
    pub fn modify_subnet_attribute(&self, subnet_id: &str, attrs: SubnetAttributes) -> Result<()> {
        self.call("ec2:ModifySubnetAttribute", |st, op| {
            let s = st
                .ec2
                .subnets
                .get_mut(subnet_id)
                .ok_or_else(|| Error::not_found(op, "subnet", subnet_id))?;
            let a = &mut s.attributes;
            macro_rules! set {
                ($f:ident) => {
                    if attrs.$f.is_some() {
                        a.$f = attrs.$f.clone();
                    }
                };
            }
            set!(map_public_ip_on_launch);
            set!(assign_ipv6_address_on_creation);
            set!(enable_dns64);
            set!(enable_resource_name_dns_a_record_on_launch);
            set!(enable_resource_name_dns_aaaa_record_on_launch);
            set!(private_dns_hostname_type_on_launch);
            Ok(())
        })
    }

    /// `AssociateSubnetCidrBlock` (IPv6).
    pub fn associate_subnet_cidr_block(
        &self,
        subnet_id: &str,
        ipv6_cidr_block: &str,
    ) -> Result<CidrAssociation> {
        self.call("ec2:AssociateSubnetCidrBlock", |st, op| {
            let s = st
                .ec2
                .subnets
                .get(subnet_id)
                .ok_or_else(|| Error::not_found(op, "subnet", subnet_id))?;
            let vpc = st
                .ec2
                .vpcs
                .get(&s.vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", s.vpc_id.clone()))?
                .clone();
            let block = parse_v6(op, "Ipv6CidrBlock", ipv6_cidr_block)?.to_string();
            check_subnet_range(&st.ec2, op, &vpc, Some(subnet_id), None, Some(&block))?;
            let assoc = CidrAssociation {
                association_id: st.ids.next("subnet-cidr-assoc"),
                cidr_block: block,
                state: "associated".into(),
            };
            if let Some(s) = st.ec2.subnets.get_mut(subnet_id) {
                s.ipv6_cidr_block_associations.push(assoc.clone());
            }
            Ok(assoc)
        })
    }

    /// `DeleteSubnet`: fails while NAT gateways, running instances or load balancers use
    /// it. Removes its route table associations.
    pub fn delete_subnet(&self, subnet_id: &str) -> Result<()> {
        self.call("ec2:DeleteSubnet", |st, op| {
            if !st.ec2.subnets.contains_key(subnet_id) {
                return Err(Error::not_found(op, "subnet", subnet_id));
            }
            let mut deps: Vec<String> = st
                .ec2
                .nat_gateways
                .values()
                .filter(|n| n.subnet_id == subnet_id)
                .map(|n| n.id.clone())
                .collect();
            deps.extend(
                st.ec2
                    .instances
                    .values()
                    .filter(|i| i.subnet_id == subnet_id && i.state != "terminated")
                    .map(|i| i.id.clone()),
            );
            deps.extend(st.elbv2.load_balancers_in_subnet(subnet_id));
            if !deps.is_empty() {
                return Err(Error::conflict(
                    op,
                    "subnet",
                    subnet_id,
                    format!("has dependencies: {}", deps.join(", ")),
                ));
            }
            for rt in st.ec2.route_tables.values_mut() {
                rt.associations
                    .retain(|a| a.subnet_id.as_deref() != Some(subnet_id));
            }
            st.ec2.subnets.remove(subnet_id);
            Ok(())
        })
    }

    // ----- Route tables -----------------------------------------------------------------

    /// `CreateRouteTable`: a table with the VPC's local routes.
    pub fn create_route_table(&self, vpc_id: &str, tags: Tags) -> Result<RouteTable> {
        self.call("ec2:CreateRouteTable", |st, op| {
            let vpc = st
                .ec2
                .vpcs
                .get(vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", vpc_id))?;
            let mut routes: Vec<Route> = vpc
                .cidr_block_associations
                .iter()
                .map(|a| Route {
                    destination_cidr_block: Some(a.cidr_block.clone()),
                    gateway_id: Some("local".into()),
                    ..Route::default()
                })
                .collect();
            routes.extend(vpc.ipv6_cidr_block_associations.iter().map(|a| Route {
                destination_ipv6_cidr_block: Some(a.cidr_block.clone()),
                gateway_id: Some("local".into()),
                ..Route::default()
            }));
            let id = st.ids.next("rtb");
            let rt = RouteTable {
                id: id.clone(),
                vpc_id: vpc_id.to_owned(),
                routes,
                associations: Vec::new(),
                tags,
            };
            st.ec2.route_tables.insert(id, rt.clone());
            Ok(rt)
        })
    }

    /// `DescribeRouteTables`.
    pub fn describe_route_tables(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<RouteTable>> {
        self.call("ec2:DescribeRouteTables", |st, op| {
            describe(op, "route-table", &st.ec2.route_tables, ids, filters)
        })
    }

    /// `AssociateRouteTable`: returns the association id. A subnet has at most one
    /// explicit association.
    pub fn associate_route_table(&self, route_table_id: &str, subnet_id: &str) -> Result<String> {
        self.call("ec2:AssociateRouteTable", |st, op| {
            let subnet = st
                .ec2
                .subnets
                .get(subnet_id)
                .ok_or_else(|| Error::not_found(op, "subnet", subnet_id))?;
            let rt = st
                .ec2
                .route_tables
                .get(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?;
            if rt.vpc_id != subnet.vpc_id {
                return Err(Error::invalid(
                    op,
                    "SubnetId",
                    format!("{subnet_id} and {route_table_id} belong to different VPCs"),
                ));
            }
            if let Some(other) = st.ec2.route_tables.values().find(|r| {
                r.associations
                    .iter()
                    .any(|a| a.subnet_id.as_deref() == Some(subnet_id))
            }) {
                return Err(Error::exists(
                    op,
                    "route-table-association",
                    format!("{subnet_id} (associated with {})", other.id),
                ));
            }
            let id = st.ids.next("rtbassoc");
            if let Some(rt) = st.ec2.route_tables.get_mut(route_table_id) {
                rt.associations.push(RouteTableAssociation {
                    id: id.clone(),
                    subnet_id: Some(subnet_id.to_owned()),
                    main: false,
                });
            }
            Ok(id)
        })
    }

    /// `DisassociateRouteTable`.
    pub fn disassociate_route_table(&self, association_id: &str) -> Result<()> {
        self.call("ec2:DisassociateRouteTable", |st, op| {
            for rt in st.ec2.route_tables.values_mut() {
                if let Some(i) = rt.associations.iter().position(|a| a.id == association_id) {
                    if rt.associations[i].main {
                        return Err(Error::invalid(
                            op,
                            "AssociationId",
                            "the main route table association cannot be removed",
                        ));
                    }
                    rt.associations.remove(i);
                    return Ok(());
                }
            }
            Err(Error::not_found(
                op,
                "route-table-association",
                association_id,
            ))
        })
    }

    /// `ReplaceRouteTableAssociation`: moves an explicit association to another route
    /// table of the same VPC; returns the new association id (AWS gives the moved
    /// association a new one).
    pub fn replace_route_table_association(
        &self,
        association_id: &str,
        route_table_id: &str,
    ) -> Result<String> {
        self.call("ec2:ReplaceRouteTableAssociation", |st, op| {
            let target_vpc = st
                .ec2
                .route_tables
                .get(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?
                .vpc_id
                .clone();
            let Some((from, i)) = st.ec2.route_tables.values().find_map(|rt| {
                rt.associations
                    .iter()
                    .position(|a| a.id == association_id)
                    .map(|i| (rt.id.clone(), i))
            }) else {
                return Err(Error::not_found(
                    op,
                    "route-table-association",
                    association_id,
                ));
            };
            let mut assoc = match st.ec2.route_tables.get_mut(&from) {
                Some(rt) if rt.vpc_id == target_vpc => rt.associations.remove(i),
                _ => {
                    return Err(Error::invalid(
                        op,
                        "RouteTableId",
                        format!("{route_table_id} is not in the VPC of {from}"),
                    ));
                }
            };
            assoc.id = st.ids.next("rtbassoc");
            let id = assoc.id.clone();
            if let Some(rt) = st.ec2.route_tables.get_mut(route_table_id) {
                rt.associations.push(assoc);
            }
            Ok(id)
        })
    }

    /// `CreateRoute`: fails if the destination already has a route; the target must exist.
    pub fn create_route(&self, route_table_id: &str, route: Route) -> Result<()> {
        self.call("ec2:CreateRoute", |st, op| {
            check_route_target(&st.ec2, op, &route)?;
            let rt = st
                .ec2
                .route_tables
                .get_mut(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?;
            let dest = route
                .destination()
                .ok_or_else(|| {
                    Error::invalid(op, "DestinationCidrBlock", "a destination is required")
                })?
                .to_owned();
            if rt
                .routes
                .iter()
                .any(|r| r.destination() == Some(dest.as_str()))
            {
                return Err(Error::exists(
                    op,
                    "route",
                    format!("{route_table_id} {dest}"),
                ));
            }
            rt.routes.push(route);
            Ok(())
        })
    }

    /// `ReplaceRoute`: the destination must already have a route.
    pub fn replace_route(&self, route_table_id: &str, route: Route) -> Result<()> {
        self.call("ec2:ReplaceRoute", |st, op| {
            check_route_target(&st.ec2, op, &route)?;
            let rt = st
                .ec2
                .route_tables
                .get_mut(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?;
            let dest = route.destination().map(str::to_owned);
            let slot = rt
                .routes
                .iter_mut()
                .find(|r| r.destination().map(str::to_owned) == dest)
                .ok_or_else(|| {
                    Error::not_found(op, "route", format!("{route_table_id} {dest:?}"))
                })?;
            *slot = route;
            Ok(())
        })
    }

    /// `DeleteRoute` by destination.
    pub fn delete_route(&self, route_table_id: &str, destination: &str) -> Result<()> {
        self.call("ec2:DeleteRoute", |st, op| {
            let rt = st
                .ec2
                .route_tables
                .get_mut(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?;
            let i = rt
                .routes
                .iter()
                .position(|r| r.destination() == Some(destination))
                .ok_or_else(|| {
                    Error::not_found(op, "route", format!("{route_table_id} {destination}"))
                })?;
            rt.routes.remove(i);
            Ok(())
        })
    }

    /// `DeleteRouteTable`: fails while it has associations.
    pub fn delete_route_table(&self, route_table_id: &str) -> Result<()> {
        self.call("ec2:DeleteRouteTable", |st, op| {
            let rt = st
                .ec2
                .route_tables
                .get(route_table_id)
                .ok_or_else(|| Error::not_found(op, "route-table", route_table_id))?;
            if !rt.associations.is_empty() {
                return Err(Error::conflict(
                    op,
                    "route-table",
                    route_table_id,
                    "has associations",
                ));
            }
            st.ec2.route_tables.remove(route_table_id);
            Ok(())
        })
    }

    // ----- Internet gateways ------------------------------------------------------------

    /// `CreateInternetGateway`.
    pub fn create_internet_gateway(&self, tags: Tags) -> Result<InternetGateway> {
        self.call("ec2:CreateInternetGateway", |st, _| {
            let id = st.ids.next("igw");
            let g = InternetGateway {
                id: id.clone(),
                attached_vpc_id: None,
                tags,
            };
            st.ec2.igws.insert(id, g.clone());
            Ok(g)
        })
    }

    /// `AttachInternetGateway`.
    pub fn attach_internet_gateway(&self, igw_id: &str, vpc_id: &str) -> Result<()> {
        self.call("ec2:AttachInternetGateway", |st, op| {
            if !st.ec2.vpcs.contains_key(vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc_id));
            }
            if let Some(other) = st
                .ec2
                .igws
                .values()
                .find(|g| g.attached_vpc_id.as_deref() == Some(vpc_id) && g.id != igw_id)
            {
                return Err(Error::conflict(
                    op,
                    "vpc",
                    vpc_id,
                    format!("already has internet gateway {} attached", other.id),
                ));
            }
            let g = st
                .ec2
                .igws
                .get_mut(igw_id)
                .ok_or_else(|| Error::not_found(op, "internet-gateway", igw_id))?;
            match &g.attached_vpc_id {
                Some(v) if v != vpc_id => Err(Error::conflict(
                    op,
                    "internet-gateway",
                    igw_id,
                    format!("is attached to {v}"),
                )),
                _ => {
                    g.attached_vpc_id = Some(vpc_id.to_owned());
                    Ok(())
                }
            }
        })
    }

    /// `DetachInternetGateway`.
    pub fn detach_internet_gateway(&self, igw_id: &str, vpc_id: &str) -> Result<()> {
        self.call("ec2:DetachInternetGateway", |st, op| {
            let g = st
                .ec2
                .igws
                .get_mut(igw_id)
                .ok_or_else(|| Error::not_found(op, "internet-gateway", igw_id))?;
            if g.attached_vpc_id.as_deref() != Some(vpc_id) {
                return Err(Error::invalid(
                    op,
                    "VpcId",
                    format!("{igw_id} is not attached to {vpc_id}"),
                ));
            }
            g.attached_vpc_id = None;
            Ok(())
        })
    }

    /// `DescribeInternetGateways`.
    pub fn describe_internet_gateways(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<InternetGateway>> {
        self.call("ec2:DescribeInternetGateways", |st, op| {
            describe(op, "internet-gateway", &st.ec2.igws, ids, filters)
        })
    }

    /// `DeleteInternetGateway`: fails while attached.
    pub fn delete_internet_gateway(&self, igw_id: &str) -> Result<()> {
        self.call("ec2:DeleteInternetGateway", |st, op| {
            let g = st
                .ec2
                .igws
                .get(igw_id)
                .ok_or_else(|| Error::not_found(op, "internet-gateway", igw_id))?;
            if let Some(v) = &g.attached_vpc_id {
                return Err(Error::conflict(
                    op,
                    "internet-gateway",
                    igw_id,
                    format!("is attached to {v}"),
                ));
            }
            st.ec2.igws.remove(igw_id);
            Ok(())
        })
    }

    /// `CreateEgressOnlyInternetGateway`.
    pub fn create_egress_only_internet_gateway(
        &self,
        vpc_id: &str,
        tags: Tags,
    ) -> Result<EgressOnlyInternetGateway> {
        self.call("ec2:CreateEgressOnlyInternetGateway", |st, op| {
            if !st.ec2.vpcs.contains_key(vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc_id));
            }
            let id = st.ids.next("eigw");
            let g = EgressOnlyInternetGateway {
                id: id.clone(),
                vpc_id: vpc_id.to_owned(),
                tags,
            };
            st.ec2.eigws.insert(id, g.clone());
            Ok(g)
        })
    }

    /// `DescribeEgressOnlyInternetGateways`.
    pub fn describe_egress_only_internet_gateways(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<EgressOnlyInternetGateway>> {
        self.call("ec2:DescribeEgressOnlyInternetGateways", |st, op| {
            describe(
                op,
                "egress-only-internet-gateway",
                &st.ec2.eigws,
                ids,
                filters,
            )
        })
    }

    /// `DeleteEgressOnlyInternetGateway`.
    pub fn delete_egress_only_internet_gateway(&self, id: &str) -> Result<()> {
        self.call("ec2:DeleteEgressOnlyInternetGateway", |st, op| {
            st.ec2
                .eigws
                .remove(id)
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "egress-only-internet-gateway", id))
        })
    }

    // ----- Elastic IPs and NAT gateways -------------------------------------------------

    /// `AllocateAddress` (VPC domain).
    pub fn allocate_address(&self, tags: Tags) -> Result<Address> {
        self.call("ec2:AllocateAddress", |st, _| {
            let id = st.ids.next("eipalloc");
            let a = Address {
                allocation_id: id.clone(),
                public_ip: st.ec2.public_ip(),
                domain: "vpc".into(),
                nat_gateway_id: None,
                tags,
            };
            st.ec2.addresses.insert(id, a.clone());
            Ok(a)
        })
    }

    /// `DescribeAddresses` by allocation id.
    pub fn describe_addresses(
        &self,
        allocation_ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<Address>> {
        self.call("ec2:DescribeAddresses", |st, op| {
            describe(op, "elastic-ip", &st.ec2.addresses, allocation_ids, filters)
        })
    }

    /// `ReleaseAddress`: fails while a NAT gateway uses it.
    pub fn release_address(&self, allocation_id: &str) -> Result<()> {
        self.call("ec2:ReleaseAddress", |st, op| {
            let a = st
                .ec2
                .addresses
                .get(allocation_id)
                .ok_or_else(|| Error::not_found(op, "elastic-ip", allocation_id))?;
            if let Some(n) = &a.nat_gateway_id {
                return Err(Error::conflict(
                    op,
                    "elastic-ip",
                    allocation_id,
                    format!("is in use by {n}"),
                ));
            }
            st.ec2.addresses.remove(allocation_id);
            Ok(())
        })
    }

    /// `CreateNatGateway`: public when `allocation_id` is given, private otherwise.
    pub fn create_nat_gateway(
        &self,
        subnet_id: &str,
        allocation_id: Option<&str>,
        tags: Tags,
    ) -> Result<NatGateway> {
        self.call("ec2:CreateNatGateway", |st, op| {
            let subnet = st
                .ec2
                .subnets
                .get(subnet_id)
                .ok_or_else(|| Error::not_found(op, "subnet", subnet_id))?
                .clone();
            let mut public_ip = None;
            if let Some(a) = allocation_id {
                let addr = st
                    .ec2
                    .addresses
                    .get(a)
                    .ok_or_else(|| Error::not_found(op, "elastic-ip", a))?;
                if let Some(n) = &addr.nat_gateway_id {
                    return Err(Error::conflict(
                        op,
                        "elastic-ip",
                        a,
                        format!("is in use by {n}"),
                    ));
                }
                public_ip = Some(addr.public_ip.clone());
            }
            let id = st.ids.next("nat");
            if let Some(a) = allocation_id
                && let Some(addr) = st.ec2.addresses.get_mut(a)
            {
                addr.nat_gateway_id = Some(id.clone());
            }
            let n = NatGateway {
                id: id.clone(),
                subnet_id: subnet_id.to_owned(),
                vpc_id: subnet.vpc_id,
                allocation_id: allocation_id.map(str::to_owned),
                public_ip,
                connectivity_type: if allocation_id.is_some() {
                    "public"
                } else {
                    "private"
                }
                .into(),
                state: "available".into(),
                tags,
            };
            st.ec2.nat_gateways.insert(id, n.clone());
            Ok(n)
        })
    }

    /// `DescribeNatGateways`.
    pub fn describe_nat_gateways(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<NatGateway>> {
        self.call("ec2:DescribeNatGateways", |st, op| {
            describe(op, "nat-gateway", &st.ec2.nat_gateways, ids, filters)
        })
    }

    /// `DeleteNatGateway`: removes it (AWS keeps a `deleted` gateway visible for a while;
    /// the mock does not) and frees its elastic IP.
    pub fn delete_nat_gateway(&self, id: &str) -> Result<()> {
        self.call("ec2:DeleteNatGateway", |st, op| {
            let n = st
                .ec2
                .nat_gateways
                .remove(id)
                .ok_or_else(|| Error::not_found(op, "nat-gateway", id))?;
            if let Some(a) = n.allocation_id.and_then(|a| st.ec2.addresses.get_mut(&a)) {
                a.nat_gateway_id = None;
            }
            Ok(())
        })
    }

    // ----- DHCP options -----------------------------------------------------------------

    /// `CreateDhcpOptions`.
    pub fn create_dhcp_options(
        &self,
        configurations: BTreeMap<String, Vec<String>>,
        tags: Tags,
    ) -> Result<DhcpOptions> {
        self.call("ec2:CreateDhcpOptions", |st, _| {
            let id = st.ids.next("dopt");
            let d = DhcpOptions {
                id: id.clone(),
                configurations,
                tags,
            };
            st.ec2.dhcp_options.insert(id, d.clone());
            Ok(d)
        })
    }

    /// `DescribeDhcpOptions`.
    pub fn describe_dhcp_options(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<DhcpOptions>> {
        self.call("ec2:DescribeDhcpOptions", |st, op| {
            describe(op, "dhcp-options", &st.ec2.dhcp_options, ids, filters)
        })
    }

    /// `AssociateDhcpOptions` (`default` restores the default options).
    pub fn associate_dhcp_options(&self, dhcp_options_id: &str, vpc_id: &str) -> Result<()> {
        self.call("ec2:AssociateDhcpOptions", |st, op| {
            if dhcp_options_id != "default" && !st.ec2.dhcp_options.contains_key(dhcp_options_id) {
                return Err(Error::not_found(op, "dhcp-options", dhcp_options_id));
            }
            let vpc = st
                .ec2
                .vpcs
                .get_mut(vpc_id)
                .ok_or_else(|| Error::not_found(op, "vpc", vpc_id))?;
            vpc.dhcp_options_id = dhcp_options_id.to_owned();
            Ok(())
        })
    }

    /// `DeleteDhcpOptions`: fails while a VPC uses them.
    pub fn delete_dhcp_options(&self, id: &str) -> Result<()> {
        self.call("ec2:DeleteDhcpOptions", |st, op| {
            if !st.ec2.dhcp_options.contains_key(id) {
                return Err(Error::not_found(op, "dhcp-options", id));
            }
            if let Some(v) = st.ec2.vpcs.values().find(|v| v.dhcp_options_id == id) {
                return Err(Error::conflict(
                    op,
                    "dhcp-options",
                    id,
                    format!("is associated with {}", v.id),
                ));
            }
            st.ec2.dhcp_options.remove(id);
            Ok(())
        })
    }

    // ----- Security groups --------------------------------------------------------------

    /// `CreateSecurityGroup`. Like AWS, a new group has one egress rule allowing all IPv4
    /// traffic.
    pub fn create_security_group(
        &self,
        name: &str,
        description: &str,
        vpc_id: &str,
        tags: Tags,
    ) -> Result<SecurityGroup> {
        self.call("ec2:CreateSecurityGroup", |st, op| {
            if !st.ec2.vpcs.contains_key(vpc_id) {
                return Err(Error::not_found(op, "vpc", vpc_id));
            }
            if st
                .ec2
                .security_groups
                .values()
                .any(|g| g.vpc_id == vpc_id && g.name == name)
            {
                return Err(Error::exists(
                    op,
                    "security-group",
                    format!("{name} in {vpc_id}"),
                ));
            }
            let id = st.ids.next("sg");
            let g = SecurityGroup {
                id: id.clone(),
                name: name.to_owned(),
                description: description.to_owned(),
                vpc_id: vpc_id.to_owned(),
                tags,
            };
            st.ec2.security_groups.insert(id.clone(), g.clone());
            let rule = st.ids.next("sgr");
            st.ec2.sg_rules.insert(
                rule.clone(),
                SecurityGroupRule {
                    id: rule,
                    group_id: id,
                    is_egress: true,
                    spec: RuleSpec {
                        ip_protocol: "-1".into(),
                        cidr_ipv4: Some("0.0.0.0/0".into()),
                        ..RuleSpec::default()
                    },
                    tags: Tags::new(),
                },
            );
            Ok(g)
        })
    }

    /// `DescribeSecurityGroups`.
    pub fn describe_security_groups(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<SecurityGroup>> {
        self.call("ec2:DescribeSecurityGroups", |st, op| {
            describe(op, "security-group", &st.ec2.security_groups, ids, filters)
        })
    }

    /// `DeleteSecurityGroup`: fails for a VPC's default group, and while another group's
    /// rule, a running instance or a load balancer references it.
    pub fn delete_security_group(&self, group_id: &str) -> Result<()> {
        self.call("ec2:DeleteSecurityGroup", |st, op| {
            let g = st
                .ec2
                .security_groups
                .get(group_id)
                .ok_or_else(|| Error::not_found(op, "security-group", group_id))?;
            if g.name == "default" {
                return Err(Error::invalid(
                    op,
                    "GroupId",
                    "a VPC's default security group cannot be deleted",
                ));
            }
            let mut deps: Vec<String> = st
                .ec2
                .sg_rules
                .values()
                .filter(|r| {
                    r.group_id != group_id
                        && r.spec.referenced_group_id.as_deref() == Some(group_id)
                })
                .map(|r| r.group_id.clone())
                .collect();
            deps.extend(
                st.ec2
                    .instances
                    .values()
                    .filter(|i| {
                        i.state != "terminated"
                            && i.security_group_ids.iter().any(|s| s == group_id)
                    })
                    .map(|i| i.id.clone()),
            );
            deps.extend(st.elbv2.load_balancers_with_group(group_id));
            deps.dedup();
            if !deps.is_empty() {
                return Err(Error::conflict(
                    op,
                    "security-group",
                    group_id,
                    format!("is referenced by {}", deps.join(", ")),
                ));
            }
            st.ec2.sg_rules.retain(|_, r| r.group_id != group_id);
            st.ec2.security_groups.remove(group_id);
            Ok(())
        })
    }

    fn authorize(
        &self,
        op: &'static str,
        group_id: &str,
        egress: bool,
        rules: Vec<RuleSpec>,
        tags: Tags,
    ) -> Result<Vec<SecurityGroupRule>> {
        // AWS stores "all protocols" as -1, and keeps ports only for TCP, UDP and ICMP.
        let rules: Vec<RuleSpec> = rules
            .into_iter()
            .map(|mut r| {
                if r.ip_protocol == "all" {
                    r.ip_protocol = "-1".into();
                }
                let ported = ["tcp", "udp", "icmp", "icmpv6", "6", "17", "1", "58"];
                if !ported.contains(&r.ip_protocol.as_str()) {
                    r.from_port = None;
                    r.to_port = None;
                }
                r
            })
            .collect();
        self.call(op, |st, op| {
            if !st.ec2.security_groups.contains_key(group_id) {
                return Err(Error::not_found(op, "security-group", group_id));
            }
            for (i, r) in rules.iter().enumerate() {
                let peers = [
                    r.cidr_ipv4.is_some(),
                    r.cidr_ipv6.is_some(),
                    r.prefix_list_id.is_some(),
                    r.referenced_group_id.is_some(),
                ];
                if peers.iter().filter(|p| **p).count() != 1 {
                    return Err(Error::invalid(
                        op,
                        format!("IpPermissions[{i}]"),
                        "exactly one of an IPv4 CIDR, IPv6 CIDR, prefix list or group is required",
                    ));
                }
                if let Some(peer) = &r.referenced_group_id
                    && !st.ec2.security_groups.contains_key(peer)
                {
                    return Err(Error::not_found(op, "security-group", peer.clone()));
                }
                let same = |x: &SecurityGroupRule| {
                    x.group_id == group_id
                        && x.is_egress == egress
                        && RuleSpec {
                            description: None,
                            ..x.spec.clone()
                        } == RuleSpec {
                            description: None,
                            ..r.clone()
                        }
                };
                if st.ec2.sg_rules.values().any(same) {
                    return Err(Error::exists(
                        op,
                        "security-group-rule",
                        format!("{group_id} {}", describe_rule(r)),
                    ));
                }
            }
            let mut out = Vec::new();
            for spec in rules {
                let id = st.ids.next("sgr");
                let rule = SecurityGroupRule {
                    id: id.clone(),
                    group_id: group_id.to_owned(),
                    is_egress: egress,
                    spec,
                    tags: tags.clone(),
                };
                st.ec2.sg_rules.insert(id, rule.clone());
                out.push(rule);
            }
            Ok(out)
        })
    }

    /// `AuthorizeSecurityGroupIngress`: one rule per spec; a duplicate (ignoring the
    /// description) fails the whole call.
    pub fn authorize_security_group_ingress(
        &self,
        group_id: &str,
        rules: Vec<RuleSpec>,
        tags: Tags,
    ) -> Result<Vec<SecurityGroupRule>> {
        self.authorize(
            "ec2:AuthorizeSecurityGroupIngress",
            group_id,
            false,
            rules,
            tags,
        )
    }

    /// `AuthorizeSecurityGroupEgress`.
    pub fn authorize_security_group_egress(
        &self,
        group_id: &str,
        rules: Vec<RuleSpec>,
        tags: Tags,
    ) -> Result<Vec<SecurityGroupRule>> {
        self.authorize(
            "ec2:AuthorizeSecurityGroupEgress",
            group_id,
            true,
            rules,
            tags,
        )
    }

    fn revoke(
        &self,
        op: &'static str,
        group_id: &str,
        egress: bool,
        rule_ids: &[String],
    ) -> Result<()> {
        self.call(op, |st, op| {
            if !st.ec2.security_groups.contains_key(group_id) {
                return Err(Error::not_found(op, "security-group", group_id));
            }
            for id in rule_ids {
                match st.ec2.sg_rules.get(id) {
                    Some(r) if r.group_id == group_id && r.is_egress == egress => {}
                    _ => return Err(Error::not_found(op, "security-group-rule", id.clone())),
                }
            }
            for id in rule_ids {
                st.ec2.sg_rules.remove(id);
            }
            Ok(())
        })
    }

    /// `RevokeSecurityGroupIngress` by rule id.
    pub fn revoke_security_group_ingress(&self, group_id: &str, rule_ids: &[String]) -> Result<()> {
        self.revoke("ec2:RevokeSecurityGroupIngress", group_id, false, rule_ids)
    }

    /// `RevokeSecurityGroupEgress` by rule id.
    pub fn revoke_security_group_egress(&self, group_id: &str, rule_ids: &[String]) -> Result<()> {
        self.revoke("ec2:RevokeSecurityGroupEgress", group_id, true, rule_ids)
    }

    /// `ModifySecurityGroupRules`: changes a rule's description (the only mutable part).
    pub fn modify_security_group_rule_description(
        &self,
        rule_id: &str,
        description: Option<String>,
    ) -> Result<()> {
        self.call("ec2:ModifySecurityGroupRules", |st, op| {
            let r = st
                .ec2
                .sg_rules
                .get_mut(rule_id)
                .ok_or_else(|| Error::not_found(op, "security-group-rule", rule_id))?;
            r.spec.description = description;
            Ok(())
        })
    }

    /// `DescribeSecurityGroupRules` (filters `group-id`, `security-group-rule-id`, tags).
    pub fn describe_security_group_rules(
        &self,
        ids: &[String],
        filters: &[Filter],
    ) -> Result<Vec<SecurityGroupRule>> {
        self.call("ec2:DescribeSecurityGroupRules", |st, op| {
            describe(op, "security-group-rule", &st.ec2.sg_rules, ids, filters)
        })
    }

    // ----- Volumes ----------------------------------------------------------------------

    /// `CreateVolume`.
    pub fn create_volume(&self, req: CreateVolume) -> Result<Volume> {
        let zones = self.options().zones.clone();
        self.call("ec2:CreateVolume", |st, op| {
            if !zones.is_empty() && !zones.contains(&req.availability_zone) {
                return Err(Error::invalid(
                    op,
                    "AvailabilityZone",
                    format!("{:?} is not a zone of this region", req.availability_zone),
                ));
            }
            if req.size <= 0 {
                return Err(Error::invalid(op, "Size", "must be positive"));
            }
            let id = st.ids.next("vol");
            let v = Volume {
                id: id.clone(),
                availability_zone: req.availability_zone,
                size: req.size,
                volume_type: if req.volume_type.is_empty() {
                    "gp2".into()
                } else {
                    req.volume_type
                },
                iops: req.iops,
                throughput: req.throughput,
                encrypted: req.encrypted,
                kms_key_id: req.kms_key_id,
                state: "available".into(),
                tags: req.tags,
            };
            st.ec2.volumes.insert(id, v.clone());
            Ok(v)
        })
    }

    /// `DescribeVolumes`.
    pub fn describe_volumes(&self, ids: &[String], filters: &[Filter]) -> Result<Vec<Volume>> {
        self.call("ec2:DescribeVolumes", |st, op| {
            describe(op, "volume", &st.ec2.volumes, ids, filters)
        })
    }

    /// `ModifyVolume`: size may only grow.
    pub fn modify_volume(
        &self,
        volume_id: &str,
        size: Option<i32>,
        volume_type: Option<String>,
        iops: Option<i32>,
        throughput: Option<i32>,
    ) -> Result<Volume> {
        self.call("ec2:ModifyVolume", |st, op| {
            let v = st
                .ec2
                .volumes
                .get_mut(volume_id)
                .ok_or_else(|| Error::not_found(op, "volume", volume_id))?;
            if let Some(s) = size {
                if s < v.size {
                    return Err(Error::invalid(op, "Size", "a volume cannot shrink"));
                }
                v.size = s;
            }
            if let Some(t) = volume_type {
                v.volume_type = t;
            }
            if iops.is_some() {
                v.iops = iops;
            }
            if throughput.is_some() {
                v.throughput = throughput;
            }
            Ok(v.clone())
        })
    }

    /// `DeleteVolume`.
    pub fn delete_volume(&self, volume_id: &str) -> Result<()> {
        self.call("ec2:DeleteVolume", |st, op| {
            st.ec2
                .volumes
                .remove(volume_id)
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "volume", volume_id))
        })
    }

    // ----- Key pairs --------------------------------------------------------------------

    /// `ImportKeyPair`.
    pub fn import_key_pair(&self, name: &str, public_key: &str, tags: Tags) -> Result<KeyPair> {
        self.call("ec2:ImportKeyPair", |st, op| {
            if st.ec2.key_pairs.contains_key(name) {
                return Err(Error::exists(op, "key-pair", name));
            }
            if public_key.trim().is_empty() {
                return Err(Error::invalid(op, "PublicKeyMaterial", "is empty"));
            }
            let k = KeyPair {
                id: st.ids.next("key"),
                name: name.to_owned(),
                fingerprint: key_fingerprint(public_key),
                public_key: public_key.to_owned(),
                tags,
            };
            st.ec2.key_pairs.insert(name.to_owned(), k.clone());
            Ok(k)
        })
    }

    /// `DescribeKeyPairs` by name.
    pub fn describe_key_pairs(&self, names: &[String], filters: &[Filter]) -> Result<Vec<KeyPair>> {
        self.call("ec2:DescribeKeyPairs", |st, op| {
            describe(op, "key-pair", &st.ec2.key_pairs, names, filters)
        })
    }

    /// `DeleteKeyPair` by name (succeeds when absent, as on AWS).
    pub fn delete_key_pair(&self, name: &str) -> Result<()> {
        self.call("ec2:DeleteKeyPair", |st, _| {
            st.ec2.key_pairs.remove(name);
            Ok(())
        })
    }

    // ----- Images -----------------------------------------------------------------------

    /// `DescribeImages`: `owners` are account ids or aliases (`self` = this account).
    pub fn describe_images(
        &self,
        ids: &[String],
        owners: &[String],
        filters: &[Filter],
    ) -> Result<Vec<Image>> {
        let account = self.options().account_id.clone();
        self.call("ec2:DescribeImages", |st, op| {
            let found = describe(op, "image", &st.ec2.images, ids, filters)?;
            Ok(found
                .into_iter()
                .filter(|i| {
                    owners.is_empty()
                        || owners.iter().any(|o| {
                            *o == i.owner_id
                                || Some(o) == i.owner_alias.as_ref()
                                || (o == "self" && i.owner_id == account)
                        })
                })
                .collect())
        })
    }

    // ----- Launch templates -------------------------------------------------------------

    /// `CreateLaunchTemplate`: version 1, the default.
    pub fn create_launch_template(
        &self,
        name: &str,
        data: LaunchTemplateData,
        tags: Tags,
    ) -> Result<LaunchTemplate> {
        self.call("ec2:CreateLaunchTemplate", |st, op| {
            if st.ec2.launch_templates.values().any(|t| t.name == name) {
                return Err(Error::exists(op, "launch-template", name));
            }
            let id = st.ids.next("lt");
            let lt = LaunchTemplate {
                id: id.clone(),
                name: name.to_owned(),
                default_version_number: 1,
                latest_version_number: 1,
                tags,
            };
            st.ec2.launch_templates.insert(id.clone(), lt.clone());
            st.ec2.lt_versions.insert(
                (id.clone(), 1),
                LaunchTemplateVersion {
                    launch_template_id: id,
                    launch_template_name: name.to_owned(),
                    version_number: 1,
                    description: None,
                    default_version: true,
                    data,
                },
            );
            Ok(lt)
        })
    }

    /// `CreateLaunchTemplateVersion`: with `source_version`, fields unset in `data` come
    /// from that version (AWS semantics).
    pub fn create_launch_template_version(
        &self,
        template: &TemplateRef,
        data: LaunchTemplateData,
        source_version: Option<&str>,
        description: Option<String>,
    ) -> Result<LaunchTemplateVersion> {
        self.call("ec2:CreateLaunchTemplateVersion", |st, op| {
            let lt = resolve_template(&st.ec2, op, template)?.clone();
            let data = match source_version {
                Some(v) => {
                    let n = version_number(op, &lt, v)?;
                    let base = st.ec2.lt_versions.get(&(lt.id.clone(), n)).ok_or_else(|| {
                        Error::not_found(op, "launch-template-version", format!("{} {n}", lt.id))
                    })?;
                    data.over(&base.data)
                }
                None => data,
            };
            let n = lt.latest_version_number + 1;
            let v = LaunchTemplateVersion {
                launch_template_id: lt.id.clone(),
                launch_template_name: lt.name.clone(),
                version_number: n,
                description,
                default_version: false,
                data,
            };
            st.ec2.lt_versions.insert((lt.id.clone(), n), v.clone());
            if let Some(t) = st.ec2.launch_templates.get_mut(&lt.id) {
                t.latest_version_number = n;
            }
            Ok(v)
        })
    }

    /// `ModifyLaunchTemplate`: sets the default version.
    pub fn modify_launch_template(
        &self,
        template: &TemplateRef,
        default_version: &str,
    ) -> Result<LaunchTemplate> {
        self.call("ec2:ModifyLaunchTemplate", |st, op| {
            let lt = resolve_template(&st.ec2, op, template)?.clone();
            let n = version_number(op, &lt, default_version)?;
            if !st.ec2.lt_versions.contains_key(&(lt.id.clone(), n)) {
                return Err(Error::not_found(
                    op,
                    "launch-template-version",
                    format!("{} {n}", lt.id),
                ));
            }
            for ((id, num), v) in st.ec2.lt_versions.iter_mut() {
                if *id == lt.id {
                    v.default_version = *num == n;
                }
            }
            let t = st
                .ec2
                .launch_templates
                .get_mut(&lt.id)
                .ok_or_else(|| Error::not_found(op, "launch-template", lt.id.clone()))?;
            t.default_version_number = n;
            Ok(t.clone())
        })
    }

    /// `DescribeLaunchTemplates` by id or name.
    pub fn describe_launch_templates(
        &self,
        ids: &[String],
        names: &[String],
        filters: &[Filter],
    ) -> Result<Vec<LaunchTemplate>> {
        self.call("ec2:DescribeLaunchTemplates", |st, op| {
            let mut found = describe(
                op,
                "launch-template",
                &st.ec2.launch_templates,
                ids,
                filters,
            )?;
            if let Some(missing) = names
                .iter()
                .find(|n| !st.ec2.launch_templates.values().any(|t| &t.name == *n))
            {
                return Err(Error::not_found(op, "launch-template", missing.clone()));
            }
            if !names.is_empty() {
                found.retain(|t| names.contains(&t.name));
            }
            Ok(found)
        })
    }

    /// `DescribeLaunchTemplateVersions`: `versions` are numbers, `$Latest` or `$Default`;
    /// empty = every version.
    pub fn describe_launch_template_versions(
        &self,
        template: &TemplateRef,
        versions: &[String],
    ) -> Result<Vec<LaunchTemplateVersion>> {
        self.call("ec2:DescribeLaunchTemplateVersions", |st, op| {
            let lt = resolve_template(&st.ec2, op, template)?.clone();
            let all = st
                .ec2
                .lt_versions
                .iter()
                .filter(|((id, _), _)| *id == lt.id)
                .map(|(_, v)| v.clone());
            if versions.is_empty() {
                return Ok(all.collect());
            }
            let mut wanted = Vec::new();
            for v in versions {
                let n = version_number(op, &lt, v)?;
                let ver = st.ec2.lt_versions.get(&(lt.id.clone(), n)).ok_or_else(|| {
                    Error::not_found(op, "launch-template-version", format!("{} {n}", lt.id))
                })?;
                wanted.push(ver.clone());
            }
            Ok(wanted)
        })
    }

    /// `DeleteLaunchTemplate` with all its versions.
    pub fn delete_launch_template(&self, template: &TemplateRef) -> Result<LaunchTemplate> {
        self.call("ec2:DeleteLaunchTemplate", |st, op| {
            let lt = resolve_template(&st.ec2, op, template)?.clone();
            st.ec2.launch_templates.remove(&lt.id);
            st.ec2.lt_versions.retain(|(id, _), _| *id != lt.id);
            Ok(lt)
        })
    }

    // ----- Instances --------------------------------------------------------------------

    /// `RunInstances`.
    pub fn run_instances(&self, req: RunInstances) -> Result<Vec<Instance>> {
        self.call("ec2:RunInstances", |st, op| run_instances(st, op, &req))
    }

    /// `DescribeInstances` (terminated instances stay visible, as on AWS).
    pub fn describe_instances(&self, ids: &[String], filters: &[Filter]) -> Result<Vec<Instance>> {
        self.call("ec2:DescribeInstances", |st, op| {
            describe(op, "instance", &st.ec2.instances, ids, filters)
        })
    }

    /// `TerminateInstances`.
    pub fn terminate_instances(&self, ids: &[String]) -> Result<()> {
        self.call("ec2:TerminateInstances", |st, op| {
            if let Some(m) = ids.iter().find(|i| !st.ec2.instances.contains_key(*i)) {
                return Err(Error::not_found(op, "instance", m.clone()));
            }
            for id in ids {
                if let Some(i) = st.ec2.instances.get_mut(id) {
                    i.state = "terminated".into();
                }
            }
            st.asg.forget_instances(ids);
            Ok(())
        })
    }

    // ----- Tags -------------------------------------------------------------------------

    /// `CreateTags`: adds or overwrites tags on EC2 resources.
    pub fn create_tags(&self, resource_ids: &[String], tags: &Tags) -> Result<()> {
        self.call("ec2:CreateTags", |st, op| {
            for id in resource_ids {
                if st.ec2.tags_mut(id).is_none() {
                    return Err(Error::not_found(op, "resource", id.clone()));
                }
            }
            for id in resource_ids {
                if let Some((_, t)) = st.ec2.tags_mut(id) {
                    t.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            Ok(())
        })
    }

    /// `DeleteTags`: removes each key (only when its value matches, if one is given).
    pub fn delete_tags(
        &self,
        resource_ids: &[String],
        keys: &[(String, Option<String>)],
    ) -> Result<()> {
        self.call("ec2:DeleteTags", |st, op| {
            for id in resource_ids {
                if st.ec2.tags_mut(id).is_none() {
                    return Err(Error::not_found(op, "resource", id.clone()));
                }
            }
            for id in resource_ids {
                if let Some((_, t)) = st.ec2.tags_mut(id) {
                    for (k, v) in keys {
                        if v.as_ref().is_none_or(|v| t.get(k) == Some(v)) {
                            t.remove(k);
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// `DescribeTags` (filters `resource-id`, `resource-type`, `key`, `value`).
    pub fn describe_tags(&self, filters: &[Filter]) -> Result<Vec<TagDescription>> {
        self.call("ec2:DescribeTags", |st, op| {
            validate::<TagDescription>(op, filters)?;
            Ok(st
                .ec2
                .all_tags()
                .into_iter()
                .filter(|t| matches(t, filters))
                .collect())
        })
    }

    /// `DescribeAvailabilityZones`: the zones of the mock's region.
    pub fn describe_availability_zones(&self) -> Result<Vec<String>> {
        let zones = self.options().zones.clone();
        self.call("ec2:DescribeAvailabilityZones", |_, _| Ok(zones))
    }

    /// `DescribeInstanceTypeOfferings` by zone: which of `zones` offer `instance_type`.
    /// The mock offers every type in each of its zones (in any zone when it accepts any).
    pub fn describe_instance_type_offerings(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> Result<Vec<String>> {
        let _ = instance_type;
        let known = self.options().zones.clone();
        let mut offered: Vec<String> = zones
            .iter()
            .filter(|z| known.is_empty() || known.contains(z))
            .cloned()
            .collect();
        offered.sort();
        offered.dedup();
        self.call("ec2:DescribeInstanceTypeOfferings", |_, _| Ok(offered))
    }

    /// Makes the mock answer `default_instance_type` for `role` with `instance_type`,
    /// whatever the zones and architecture, as kOps' test mock answers it (fixed types
    /// per role). Without one the mock chooses as kOps' AWS cloud does, from its offerings.
    pub fn set_default_instance_type(
        &self,
        role: kops_cloud_aws::cloud::MachineRole,
        instance_type: impl Into<String>,
    ) {
        let t = instance_type.into();
        let _ = self.call("ec2:SetDefaultInstanceType", |st, _| {
            st.ec2.default_instance_types.insert(role, t);
            Ok(())
        });
    }

    /// The fixed answer for `role`, if one was set.
    pub(crate) fn fixed_default_instance_type(
        &self,
        role: kops_cloud_aws::cloud::MachineRole,
    ) -> Option<String> {
        self.call("ec2:DefaultInstanceType", |st, _| {
            Ok(st.ec2.default_instance_types.get(&role).cloned())
        })
        .ok()
        .flatten()
    }
}

fn describe_rule(r: &RuleSpec) -> String {
    let peer = r
        .cidr_ipv4
        .as_deref()
        .or(r.cidr_ipv6.as_deref())
        .or(r.prefix_list_id.as_deref())
        .or(r.referenced_group_id.as_deref())
        .unwrap_or("?");
    let port = |p: Option<i32>| p.map_or("all".to_owned(), |p| p.to_string());
    format!(
        "{} {}-{} {}",
        r.ip_protocol,
        port(r.from_port),
        port(r.to_port),
        peer
    )
}

fn check_route_target(ec2: &Ec2State, op: &str, route: &Route) -> Result<()> {
    let targets = [
        route.gateway_id.is_some(),
        route.nat_gateway_id.is_some(),
        route.egress_only_internet_gateway_id.is_some(),
        route.instance_id.is_some(),
        route.transit_gateway_id.is_some(),
        route.network_interface_id.is_some(),
        route.vpc_peering_connection_id.is_some(),
    ];
    if targets.iter().filter(|t| **t).count() != 1 {
        return Err(Error::invalid(
            op,
            "Route",
            "exactly one route target is required",
        ));
    }
    if let Some(g) = &route.gateway_id
        && g != "local"
        && !ec2.igws.contains_key(g)
    {
        return Err(Error::not_found(op, "internet-gateway", g.clone()));
    }
    if let Some(n) = &route.nat_gateway_id
        && !ec2.nat_gateways.contains_key(n)
    {
        return Err(Error::not_found(op, "nat-gateway", n.clone()));
    }
    if let Some(g) = &route.egress_only_internet_gateway_id
        && !ec2.eigws.contains_key(g)
    {
        return Err(Error::not_found(
            op,
            "egress-only-internet-gateway",
            g.clone(),
        ));
    }
    if let Some(i) = &route.instance_id
        && !ec2.instances.contains_key(i)
    {
        return Err(Error::not_found(op, "instance", i.clone()));
    }
    if let Some(c) = &route.destination_cidr_block {
        parse_v4(op, "DestinationCidrBlock", c)?;
    }
    if let Some(c) = &route.destination_ipv6_cidr_block {
        parse_v6(op, "DestinationIpv6CidrBlock", c)?;
    }
    Ok(())
}

pub(crate) fn run_instances(st: &mut State, op: &str, req: &RunInstances) -> Result<Vec<Instance>> {
    let subnet = st
        .ec2
        .subnets
        .get(&req.subnet_id)
        .ok_or_else(|| Error::not_found(op, "subnet", req.subnet_id.clone()))?
        .clone();
    let mut data = LaunchTemplateData::default();
    let mut from = None;
    if let Some((r, v)) = &req.launch_template {
        let lt = resolve_template(&st.ec2, op, r)?.clone();
        let n = version_number(op, &lt, v)?;
        let ver = st.ec2.lt_versions.get(&(lt.id.clone(), n)).ok_or_else(|| {
            Error::not_found(op, "launch-template-version", format!("{} {n}", lt.id))
        })?;
        data = ver.data.clone();
        from = Some((lt.id, n));
    }
    let image_id = req
        .image_id
        .clone()
        .or(data.image_id.clone())
        .ok_or_else(|| Error::invalid(op, "ImageId", "an image is required"))?;
    if !st.ec2.images.contains_key(&image_id) {
        return Err(Error::not_found(op, "image", image_id));
    }
    let instance_type = req
        .instance_type
        .clone()
        .or(data.instance_type.clone())
        .unwrap_or_else(|| "m1.small".into());
    let mut groups = data.security_group_ids.clone();
    for ni in &data.network_interfaces {
        groups.extend(ni.groups.iter().cloned());
    }
    if groups.is_empty()
        && let Some(d) = default_sg_id(&st.ec2, &subnet.vpc_id)
    {
        groups.push(d);
    }
    let mut tags = data
        .tag_specifications
        .get("instance")
        .cloned()
        .unwrap_or_default();
    tags.extend(req.tags.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut out = Vec::new();
    // Addresses are handed out in order from the subnet's range, after the four AWS keeps.
    let mut taken = st
        .ec2
        .instances
        .values()
        .filter(|i| i.subnet_id == subnet.id)
        .count();
    for _ in 0..req.count.max(1) {
        let id = st.ids.next("i");
        taken += 1;
        let inst = Instance {
            id: id.clone(),
            image_id: image_id.clone(),
            instance_type: instance_type.clone(),
            subnet_id: subnet.id.clone(),
            vpc_id: subnet.vpc_id.clone(),
            availability_zone: subnet.availability_zone.clone(),
            state: "running".into(),
            security_group_ids: groups.clone(),
            key_name: data.key_name.clone(),
            iam_instance_profile: data.iam_instance_profile.clone(),
            launch_template: from.clone(),
            tags: tags.clone(),
            private_ip: address_in(subnet.cidr_block.as_deref().unwrap_or_default(), 3 + taken),
        };
        st.ec2.instances.insert(id, inst.clone());
        out.push(inst);
    }
    Ok(out)
}

/// The `n`th address of IPv4 range `cidr` (`10.0.1.0/24`, 4: `10.0.1.4`); empty when
/// `cidr` is not one.
fn address_in(cidr: &str, n: usize) -> String {
    let base = cidr.split('/').next().unwrap_or_default();
    match base.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            std::net::Ipv4Addr::from(u32::from(ip).saturating_add(n)).to_string()
        }
        Err(_) => String::new(),
    }
}

/// Account ids of image owners that image names may use as a prefix
/// (`ubuntu/images/...`), as kOps resolves them.
pub fn well_known_owner(alias: &str) -> Option<&'static str> {
    match alias {
        "amazon" | "amazon.com" => Some("137112412989"),
        "ubuntu" => Some("099720109477"),
        "debian10" | "debian11" | "debian12" | "debian13" => Some("136693071363"),
        "redhat" | "redhat.com" => Some("309956199498"),
        "flatcar" => Some("075585003325"),
        _ => None,
    }
}

impl MockAws {
    /// Resolves an image the way a cluster spec names it: `ami-...` by id,
    /// `<owner>/<name>` by owner (account id, alias or [`well_known_owner`]) and name, or
    /// a bare name; the newest match by creation date wins. One `ec2:DescribeImages` call.
    pub fn resolve_image(&self, spec: &str) -> Result<Image> {
        let (ids, owners, filters) = if spec.starts_with("ami-") {
            (vec![spec.to_owned()], vec![], vec![])
        } else if let Some((owner, name)) = spec.split_once('/') {
            let owner = well_known_owner(owner).map_or(owner.to_owned(), str::to_owned);
            (vec![], vec![owner], vec![Filter::new("name", [name])])
        } else {
            (vec![], vec![], vec![Filter::new("name", [spec])])
        };
        let mut found = self.describe_images(&ids, &owners, &filters)?;
        found.sort_by(|a, b| a.creation_date.cmp(&b.creation_date));
        found
            .pop()
            .ok_or_else(|| Error::not_found("ec2:DescribeImages", "image", spec))
    }
}
