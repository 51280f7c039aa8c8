//! The AWS vocabulary: the resource types the model manages ([`ResourceType`], with its
//! one table of facts, [`TypeFacts`]), the plain data the cloud exchanges about them, and
//! the [`AwsCloud`] trait the AWS tasks talk to.
//!
//! [`AwsCloud`] extends the cloud-neutral [`ResourceCloud`] (list, create, update, delete
//! over [`ResourceType`]) with what only AWS has: the account, availability zones, images
//! and hosted zones. It is implemented in memory by `kops-mock` and against the real APIs
//! by this crate's SDK backend (feature `sdk`). Every cloud object the model manages is a
//! [`Resource`] of one [`ResourceType`], with an ID, optional name and ARN, tags, and
//! attributes named as the corresponding `aws_*` Terraform resource's (documented per
//! [`ResourceType`]), so the same field names drive the Terraform renderer, the diff and
//! the cloud calls. References between objects are plain IDs in attributes
//! (`vpc_id = "vpc-1"`).
//!
//! # Discovery is batched
//!
//! [`ResourceCloud::list`] takes a [`ListQuery`] for *one resource type* with tag filters,
//! IDs, names or a parent; a backend answers it with as few API calls as the service
//! allows (one paginated `DescribeVpcs` with `tag:KubernetesCluster=<cluster>`), and may
//! cache the answer for the rest of a run (invalidate on writes). Tasks look their object
//! up in the batched answer instead of describing resource by resource (kops#10989).
//!
//! # Errors
//!
//! Methods return [`CloudError`], kinds a caller acts on. A backend classifies AWS error
//! codes ([`crate::classify`]): `RequestLimitExceeded`, `Throttling` -> throttled;
//! `DependencyViolation` -> conflict; `InvalidVpcID.NotFound` -> not found;
//! `VpcLimitExceeded` -> quota naming the limit; `InvalidVpc.Duplicate` -> already
//! exists; access denied -> permission denied; a rejected request -> invalid; a transport
//! failure -> unavailable.

use std::fmt;

use async_trait::async_trait;
use kops_tasks::resource::{self, ContentDigest, ResourceKind};
use serde::{Deserialize, Serialize};

use crate::facts;

pub use kops_tasks::resource::{Attrs, CloudError, CloudResult, ResourceCloud, TagFilter, Tags};

use ResourceType as R;

/// One AWS object, as plain data.
pub type Resource = resource::Resource<ResourceType>;
/// A batched lookup of one AWS resource type.
pub type ListQuery = resource::ListQuery<ResourceType>;
/// A request to create one AWS object.
pub type CreateRequest = resource::CreateRequest<ResourceType>;
/// A request to change an existing AWS object.
pub type UpdateRequest = resource::UpdateRequest<ResourceType>;

/// Every kind of AWS object the model manages. The attribute names listed for each type
/// are the ones tasks write and read (the Terraform names, also in [`TypeFacts::attrs`]);
/// backends may return more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ResourceType {
    /// EC2 VPC (`aws_vpc`): `cidr_block`, `enable_dns_hostnames`, `enable_dns_support`,
    /// `assign_generated_ipv6_cidr_block`, `ipv6_cidr_block` (read only). ID `vpc-...`.
    Vpc,
    /// An additional IPv4 CIDR of a VPC (`aws_vpc_ipv4_cidr_block_association`):
    /// `vpc_id`, `cidr_block`. ID is the association ID.
    VpcCidrBlock,
    /// The Amazon-provided IPv6 CIDR of a VPC (`aws_vpc_ipv6_cidr_block_association`):
    /// `vpc_id`, `amazon_provided_ipv6_cidr_block` (bool), `ipv6_cidr_block` (read only).
    VpcIpv6CidrBlock,
    /// DHCP options (`aws_vpc_dhcp_options`): `domain_name`, `domain_name_servers` (list).
    DhcpOptions,
    /// DHCP options association (`aws_vpc_dhcp_options_association`): `vpc_id`,
    /// `dhcp_options_id`. ID is the VPC ID.
    DhcpOptionsAssociation,
    /// Internet gateway (`aws_internet_gateway`): `vpc_id` (attachment).
    InternetGateway,
    /// Egress-only internet gateway (`aws_egress_only_internet_gateway`): `vpc_id`.
    EgressOnlyInternetGateway,
    /// Subnet (`aws_subnet`): `vpc_id`, `availability_zone`, `cidr_block`,
    /// `ipv6_cidr_block`, `enable_resource_name_dns_a_record_on_launch`,
    /// `enable_resource_name_dns_aaaa_record_on_launch`, `private_dns_hostname_type_on_launch`,
    /// `assign_ipv6_address_on_creation`, `enable_dns64`, `ipv6_native`.
    Subnet,
    /// Route table (`aws_route_table`): `vpc_id`.
    RouteTable,
    /// Route (`aws_route`): `route_table_id`, one of `destination_cidr_block` /
    /// `destination_ipv6_cidr_block`, one target of `gateway_id`, `nat_gateway_id`,
    /// `egress_only_gateway_id`, `transit_gateway_id`, `vpc_peering_connection_id`,
    /// `network_interface_id`. ID is `<route_table_id>_<destination>`. Parent: route table.
    Route,
    /// Route table association (`aws_route_table_association`): `route_table_id`,
    /// `subnet_id`. Parent: route table.
    RouteTableAssociation,
    /// Elastic IP (`aws_eip`): `domain` (`vpc`), `public_ip` (read only). ID `eipalloc-...`.
    ElasticIp,
    /// NAT gateway (`aws_nat_gateway`): `subnet_id`, `allocation_id`.
    NatGateway,
    /// Security group (`aws_security_group`): `vpc_id`, `description`; name = group name.
    SecurityGroup,
    /// Security-group rule (`aws_security_group_rule`): `security_group_id`, `type`
    /// (`ingress`/`egress`), `protocol` (`tcp`, `udp`, `icmp`, `-1`, number), `from_port`,
    /// `to_port`, `cidr_blocks`, `ipv6_cidr_blocks`, `prefix_list_ids`,
    /// `source_security_group_id`. Parent: the security group.
    SecurityGroupRule,
    /// IAM role (`aws_iam_role`): `assume_role_policy` (JSON text), `permissions_boundary`;
    /// name = role name; `arn` set.
    IamRole,
    /// Inline role policy (`aws_iam_role_policy`): `role`, `policy`; name = policy name;
    /// parent: role name. ID is `<role>:<policy>`.
    IamRolePolicy,
    /// Managed policy attachment (`aws_iam_role_policy_attachment`): `role`, `policy_arn`.
    IamRolePolicyAttachment,
    /// Instance profile (`aws_iam_instance_profile`): `role` (the single role name, if any);
    /// name = profile name; `arn` set.
    IamInstanceProfile,
    /// OIDC provider (`aws_iam_openid_connect_provider`): `url`, `client_id_list`,
    /// `thumbprint_list`; `arn` set and used as ID.
    IamOidcProvider,
    /// EC2 key pair (`aws_key_pair`): `key_name`, `public_key`, `fingerprint` (read only).
    /// ID is the key name.
    KeyPair,
    /// Launch template (`aws_launch_template`), latest version's data: `image_id`,
    /// `instance_type`, `key_name`, `iam_instance_profile`, `user_data` (base64),
    /// `block_device_mappings`, `network_interfaces`, `metadata_options`, `monitoring`,
    /// `tag_specifications`, `instance_market_options`, `placement`, `credit_specification`
    /// (nested objects as JSON); `latest_version` (read only). ID `lt-...`.
    LaunchTemplate,
    /// Autoscaling group (`aws_autoscaling_group`): `min_size`, `max_size`,
    /// `vpc_zone_identifier`, `launch_template` (`{id, version}`),
    /// `mixed_instances_policy`, `target_group_arns`, `load_balancers`, `suspended_processes`,
    /// `enabled_metrics`, `metrics_granularity`, `protect_from_scale_in`,
    /// `capacity_rebalance`, `max_instance_lifetime`, `tag` (list of `{key, value,
    /// propagate_at_launch}`). ID is the group name.
    AutoscalingGroup,
    /// Warm pool (`aws_autoscaling_group.warm_pool`): `min_size`, `max_group_prepared_capacity`,
    /// `pool_state`, `instance_reuse_policy`. Parent and ID: the group name.
    WarmPool,
    /// Lifecycle hook (`aws_autoscaling_lifecycle_hook`): `autoscaling_group_name`,
    /// `lifecycle_transition`, `default_result`, `heartbeat_timeout`. Parent: the group.
    LifecycleHook,
    /// EBS volume (`aws_ebs_volume`): `availability_zone`, `size`, `type`, `iops`,
    /// `throughput`, `encrypted`, `kms_key_id`.
    Volume,
    /// ELBv2 load balancer (`aws_lb`): `load_balancer_type`, `internal`, `subnet_mapping`,
    /// `security_groups`, `enable_cross_zone_load_balancing`, `ip_address_type`,
    /// `dns_name`/`zone_id` (read only); name = LB name; ID = ARN.
    LoadBalancer,
    /// ELBv2 target group (`aws_lb_target_group`): `port`, `protocol`, `vpc_id`,
    /// `health_check`, `deregistration_delay`, `connection_termination`; ID = ARN.
    TargetGroup,
    /// ELBv2 listener (`aws_lb_listener`): `load_balancer_arn`, `port`, `protocol`,
    /// `certificate_arn`, `ssl_policy`, `default_action`; ID = ARN. Parent: the LB ARN.
    Listener,
    /// Route53 record set (`aws_route53_record`): `zone_id`, `name`, `type`, `ttl`,
    /// `records`, `alias` (`{name, zone_id, evaluate_target_health}`). ID is
    /// `<zone>_<name>_<type>`. Parent: the zone ID.
    RecordSet,
    /// Route53 hosted zone (`aws_route53_zone`): `name`, `private` (read), `vpc` (list of
    /// `{vpc_id, vpc_region}`). ID `/hostedzone/...` (see also [`AwsCloud::hosted_zones`]).
    HostedZone,
    /// SQS queue (`aws_sqs_queue`): `message_retention_seconds`, `policy`; name = queue
    /// name; ID = queue URL; `arn` set.
    SqsQueue,
    /// EventBridge rule (`aws_cloudwatch_event_rule`): `event_pattern`; name = rule name.
    EventRule,
    /// EventBridge target (`aws_cloudwatch_event_target`): `rule`, `arn`. Parent: rule name.
    EventTarget,
    /// S3 object (`aws_s3_object`): `bucket`, `key`, `content` (text),
    /// `server_side_encryption`, `acl`. ID is `<bucket>/<key>`. Parent: the bucket.
    S3Object,
    /// EC2 instance (read only, for delete, rolling update and `get instances`):
    /// `instance_type`, `subnet_id`, `image_id`, `state`, `availability_zone`,
    /// `private_ip`.
    Instance,
}

/// What is known about one resource type, in one place: the Terraform type, the service
/// that owns it, whether it carries tags, which attributes cannot change in place and the
/// attribute names tasks and backends exchange. The tasks plan with it (an immutable
/// change is refused in a dry run), the SDK backend and the mock check updates and
/// account calls with it. Read it through [`ResourceType::facts`].
#[derive(Debug)]
#[non_exhaustive]
pub struct TypeFacts {
    /// The Terraform resource type (`aws_vpc`).
    pub terraform_type: &'static str,
    /// The service owning the type (rate limits, call accounting).
    pub service: Service,
    /// Whether objects of the type carry tags.
    pub taggable: bool,
    /// Attributes that cannot change once the object exists (the object must be
    /// replaced).
    pub immutable: &'static [&'static str],
    /// Attributes whose list is a set (Terraform `set`s): the APIs report their elements
    /// in an order of their own, which is no change.
    pub unordered: &'static [&'static str],
    /// The attributes tasks write and backends read (Terraform names); backends may
    /// return more (read-only ones such as `arn` or `latest_version`).
    pub attrs: &'static [&'static str],
}

impl ResourceType {
    /// Every resource type, in declaration order.
    pub const ALL: &'static [ResourceType] = &[
        R::Vpc,
        R::VpcCidrBlock,
        R::VpcIpv6CidrBlock,
        R::DhcpOptions,
        R::DhcpOptionsAssociation,
        R::InternetGateway,
        R::EgressOnlyInternetGateway,
        R::Subnet,
        R::RouteTable,
        R::Route,
        R::RouteTableAssociation,
        R::ElasticIp,
        R::NatGateway,
        R::SecurityGroup,
        R::SecurityGroupRule,
        R::IamRole,
        R::IamRolePolicy,
        R::IamRolePolicyAttachment,
        R::IamInstanceProfile,
        R::IamOidcProvider,
        R::KeyPair,
        R::LaunchTemplate,
        R::AutoscalingGroup,
        R::WarmPool,
        R::LifecycleHook,
        R::Volume,
        R::LoadBalancer,
        R::TargetGroup,
        R::Listener,
        R::RecordSet,
        R::HostedZone,
        R::SqsQueue,
        R::EventRule,
        R::EventTarget,
        R::S3Object,
        R::Instance,
    ];

    /// The facts about this type: the one table every layer reads.
    pub fn facts(self) -> &'static TypeFacts {
        match self {
            R::Vpc => &facts::VPC,
            R::VpcCidrBlock => &facts::VPC_CIDR_BLOCK,
            R::VpcIpv6CidrBlock => &facts::VPC_IPV6_CIDR_BLOCK,
            R::DhcpOptions => &facts::DHCP_OPTIONS,
            R::DhcpOptionsAssociation => &facts::DHCP_OPTIONS_ASSOCIATION,
            R::InternetGateway => &facts::INTERNET_GATEWAY,
            R::EgressOnlyInternetGateway => &facts::EGRESS_ONLY_INTERNET_GATEWAY,
            R::Subnet => &facts::SUBNET,
            R::RouteTable => &facts::ROUTE_TABLE,
            R::Route => &facts::ROUTE,
            R::RouteTableAssociation => &facts::ROUTE_TABLE_ASSOCIATION,
            R::ElasticIp => &facts::ELASTIC_IP,
            R::NatGateway => &facts::NAT_GATEWAY,
            R::SecurityGroup => &facts::SECURITY_GROUP,
            R::SecurityGroupRule => &facts::SECURITY_GROUP_RULE,
            R::IamRole => &facts::IAM_ROLE,
            R::IamRolePolicy => &facts::IAM_ROLE_POLICY,
            R::IamRolePolicyAttachment => &facts::IAM_ROLE_POLICY_ATTACHMENT,
            R::IamInstanceProfile => &facts::IAM_INSTANCE_PROFILE,
            R::IamOidcProvider => &facts::IAM_OIDC_PROVIDER,
            R::KeyPair => &facts::KEY_PAIR,
            R::LaunchTemplate => &facts::LAUNCH_TEMPLATE,
            R::AutoscalingGroup => &facts::AUTOSCALING_GROUP,
            R::WarmPool => &facts::WARM_POOL,
            R::LifecycleHook => &facts::LIFECYCLE_HOOK,
            R::Volume => &facts::VOLUME,
            R::LoadBalancer => &facts::LOAD_BALANCER,
            R::TargetGroup => &facts::TARGET_GROUP,
            R::Listener => &facts::LISTENER,
            R::RecordSet => &facts::RECORD_SET,
            R::HostedZone => &facts::HOSTED_ZONE,
            R::SqsQueue => &facts::SQS_QUEUE,
            R::EventRule => &facts::EVENT_RULE,
            R::EventTarget => &facts::EVENT_TARGET,
            R::S3Object => &facts::S3_OBJECT,
            R::Instance => &facts::INSTANCE,
        }
    }

    /// The Terraform resource type this maps to (`aws_vpc`, ...).
    pub fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }

    /// The AWS service that owns this type (for rate limiting and call counting).
    pub fn service(self) -> Service {
        self.facts().service
    }

    /// Whether objects of this type carry tags.
    pub fn is_taggable(self) -> bool {
        self.facts().taggable
    }

    /// Attributes that cannot change in place ([`TypeFacts::immutable`]).
    pub fn immutable_attrs(self) -> &'static [&'static str] {
        self.facts().immutable
    }
}

impl ResourceKind for ResourceType {
    fn terraform_type(self) -> &'static str {
        self.facts().terraform_type
    }

    fn is_taggable(self) -> bool {
        self.facts().taggable
    }

    fn immutable_attrs(self) -> &'static [&'static str] {
        self.facts().immutable
    }

    fn unordered_attrs(self) -> &'static [&'static str] {
        self.facts().unordered
    }

    /// kOps finds VPC networking objects and volumes by their `Name` tag among the objects
    /// tagged `KubernetesCluster=<cluster>`.
    fn name_tags<'a>(cluster: &'a str, name: &'a str) -> resource::NameTags<'a> {
        resource::NameTags::new(("KubernetesCluster", cluster.into()), ("Name", name.into()))
    }

    /// S3 lists objects with their MD5 (the ETag of a single-part upload) as
    /// `content_md5`.
    fn content_digest() -> Option<ContentDigest> {
        Some(ContentDigest::new("_md5", md5_hex))
    }
}

/// The lowercase hex MD5 of `content` (S3's ETag of a single-part object).
pub fn md5_hex(content: &[u8]) -> String {
    use md5::{Digest as _, Md5};
    Md5::digest(content)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl fmt::Display for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.terraform_type())
    }
}

/// AWS services, for rate limiting and call accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Service {
    /// EC2 (VPC networking, security groups, volumes, key pairs, images, launch templates).
    Ec2,
    /// EC2 Auto Scaling.
    Autoscaling,
    /// Elastic Load Balancing v2.
    Elbv2,
    /// IAM.
    Iam,
    /// Route53.
    Route53,
    /// SQS.
    Sqs,
    /// EventBridge.
    EventBridge,
    /// S3.
    S3,
}

/// An AMI.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Image {
    /// `ami-...`.
    pub id: String,
    /// The image name (without owner).
    pub name: String,
    /// The owning account.
    pub owner_id: String,
    /// Root device, e.g. `/dev/xvda`.
    pub root_device_name: String,
    /// `x86_64` or `arm64`.
    pub architecture: String,
    /// ISO 8601 creation date (newest wins when several images share a name).
    pub creation_date: String,
}

impl Image {
    /// An image with an ID, name and owner.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        owner_id: impl Into<String>,
    ) -> Self {
        Image {
            id: id.into(),
            name: name.into(),
            owner_id: owner_id.into(),
            ..Image::default()
        }
    }

    /// Sets the root device name.
    pub fn with_root_device_name(mut self, d: impl Into<String>) -> Self {
        self.root_device_name = d.into();
        self
    }

    /// Sets the architecture.
    pub fn with_architecture(mut self, a: impl Into<String>) -> Self {
        self.architecture = a.into();
        self
    }

    /// Sets the creation date.
    pub fn with_creation_date(mut self, d: impl Into<String>) -> Self {
        self.creation_date = d.into();
        self
    }
}

/// How to find an image, parsed from an instance group's `image` with
/// [`ImageQuery::parse`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ImageQuery {
    /// `ami-...`.
    Id(String),
    /// A name, optionally restricted to one owner account.
    Name {
        /// Owner account ID, when the spec named one (or an alias resolved to one).
        owner: Option<String>,
        /// The image name.
        name: String,
    },
}

/// Well-known owner aliases kOps accepts as the first path segment of an image name.
pub const OWNER_ALIASES: &[(&str, &str)] = &[
    ("ubuntu", "099720109477"),
    ("amazon", "137112412989"),
    ("debian", "136693071363"),
    ("redhat", "309956199498"),
    ("flatcar", "075585003325"),
    ("centos", "125523088429"),
    ("rocky", "792107900819"),
];

impl ImageQuery {
    /// Parses an instance group's `image`: `ami-...` is an ID; `<owner>/<name>` where
    /// `<owner>` is an account number or an alias from [`OWNER_ALIASES`] names the owner
    /// (`ubuntu/images/hvm-ssd/...` means owner 099720109477, name `images/hvm-ssd/...`);
    /// anything else is a name with any owner.
    pub fn parse(image: &str) -> Self {
        if image.starts_with("ami-") && !image.contains('/') {
            return ImageQuery::Id(image.to_owned());
        }
        if let Some((first, rest)) = image.split_once('/') {
            if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
                return ImageQuery::Name {
                    owner: Some(first.to_owned()),
                    name: rest.to_owned(),
                };
            }
            if let Some((_, account)) = OWNER_ALIASES.iter().find(|(alias, _)| *alias == first) {
                return ImageQuery::Name {
                    owner: Some((*account).to_owned()),
                    name: rest.to_owned(),
                };
            }
        }
        ImageQuery::Name {
            owner: None,
            name: image.to_owned(),
        }
    }

    /// Whether `image` answers this query.
    pub fn matches(&self, image: &Image) -> bool {
        match self {
            ImageQuery::Id(id) => &image.id == id,
            ImageQuery::Name { owner, name } => {
                &image.name == name && owner.as_ref().is_none_or(|o| o == &image.owner_id)
            }
        }
    }
}

/// A Route53 hosted zone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostedZone {
    /// `/hostedzone/Z...`.
    pub id: String,
    /// Zone name with the trailing dot (`example.com.`).
    pub name: String,
    /// Whether the zone is private.
    pub private: bool,
    /// VPCs a private zone is associated with.
    #[serde(default)]
    pub vpcs: Vec<String>,
}

impl HostedZone {
    /// A zone.
    pub fn new(id: impl Into<String>, name: impl Into<String>, private: bool) -> Self {
        HostedZone {
            id: id.into(),
            name: name.into(),
            private,
            vpcs: Vec::new(),
        }
    }

    /// Sets the associated VPCs.
    pub fn with_vpcs<S: Into<String>>(mut self, vpcs: impl IntoIterator<Item = S>) -> Self {
        self.vpcs = vpcs.into_iter().map(Into::into).collect();
        self
    }

    /// The ID without the `/hostedzone/` prefix.
    pub fn short_id(&self) -> &str {
        self.id.strip_prefix("/hostedzone/").unwrap_or(&self.id)
    }
}

/// How to find hosted zones: by name (with or without the trailing dot) or by ID (with or
/// without `/hostedzone/`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ZoneQuery {
    /// Zones with this DNS name.
    Name(String),
    /// The zone with this ID.
    Id(String),
}

impl ZoneQuery {
    /// kOps' rule for `spec.dnsZone`: a value containing a dot is a name, otherwise an ID.
    pub fn from_spec(dns_zone: &str) -> Self {
        if dns_zone.contains('.') {
            ZoneQuery::Name(dns_zone.to_owned())
        } else {
            ZoneQuery::Id(dns_zone.to_owned())
        }
    }

    /// Whether `zone` answers this query.
    pub fn matches(&self, zone: &HostedZone) -> bool {
        match self {
            ZoneQuery::Name(n) => zone.name.trim_end_matches('.') == n.trim_end_matches('.'),
            ZoneQuery::Id(id) => zone.short_id() == id.strip_prefix("/hostedzone/").unwrap_or(id),
        }
    }
}

/// Who and where the cloud is: account, partition and region.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AccountInfo {
    /// The 12-digit account ID.
    pub account_id: String,
    /// `aws`, `aws-cn`, `aws-us-gov`, ...
    pub partition: String,
    /// The region the cloud object works in.
    pub region: String,
}

impl AccountInfo {
    /// Account, partition and region.
    pub fn new(
        account_id: impl Into<String>,
        partition: impl Into<String>,
        region: impl Into<String>,
    ) -> Self {
        AccountInfo {
            account_id: account_id.into(),
            partition: partition.into(),
            region: region.into(),
        }
    }
}

/// The AWS operations the model's tasks need, for one region of one account: the generic
/// resource operations of [`ResourceCloud`] plus the account, zones, images and hosted
/// zones.
///
/// Implemented by `kops-mock` (in memory) and this crate's `AwsBackend` (aws-sdk, feature
/// `sdk`). Fault injection and call counting are decorators (`kops_mock::FaultyCloud`,
/// `kops_mock::CountingCloud`); the SDK backend keeps its discovery cache and rate limits
/// inside. See the [module docs](self) for the data model and error mapping.
#[async_trait]
pub trait AwsCloud: ResourceCloud<ResourceType> {
    /// Account ID, partition and region.
    async fn account(&self) -> CloudResult<AccountInfo>;

    /// The availability zones of the region (names, sorted).
    async fn zones(&self) -> CloudResult<Vec<String>>;

    /// Images matching `query` (newest first by creation date).
    async fn images(&self, query: &ImageQuery) -> CloudResult<Vec<Image>>;

    /// Hosted zones matching `query`.
    async fn hosted_zones(&self, query: &ZoneQuery) -> CloudResult<Vec<HostedZone>>;

    /// The autoscaling groups named `names` (absent ones are left out) with their members
    /// and the launch template version each runs, for rolling update and validation
    /// (`autoscaling:DescribeAutoScalingGroups`, `ec2:DescribeLaunchTemplates` to turn
    /// `$Latest`/`$Default` into a number). Defaults to [`CloudError::NotImplemented`].
    async fn group_members(&self, names: &[String]) -> CloudResult<Vec<GroupMembers>> {
        let _ = names;
        Err(not_implemented("autoscaling:DescribeAutoScalingGroups"))
    }

    /// Detaches `instance` from `group` without lowering its desired capacity, so the group
    /// launches a replacement; tags it `kops.k8s.io/detached-from-asg=<group>` first, as kOps
    /// does, so an interrupted surge is still recognisable. Defaults to
    /// [`CloudError::NotImplemented`].
    async fn detach_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        let _ = (group, instance);
        Err(not_implemented("autoscaling:DetachInstances"))
    }

    /// Terminates an instance (`ec2:TerminateInstances`); an instance that is already gone
    /// is not an error. Its group, if any, launches a replacement. Defaults to
    /// [`CloudError::NotImplemented`].
    async fn terminate_instance(&self, instance: &str) -> CloudResult<()> {
        let _ = instance;
        Err(not_implemented("ec2:TerminateInstances"))
    }

    /// Takes `instance` out of the load balancers of `group` before it is drained, as kOps
    /// does: deregisters it from each of the group's target groups and waits until it is no
    /// longer in use (`elbv2:DeregisterTargets`, `elbv2:DescribeTargetHealth`). An instance
    /// that is not registered is not an error. Defaults to [`CloudError::NotImplemented`].
    async fn deregister_instance(&self, group: &str, instance: &str) -> CloudResult<()> {
        let _ = (group, instance);
        Err(not_implemented("elbv2:DeregisterTargets"))
    }

    /// Which of `zones` offer `instance_type`, sorted (`ec2:DescribeInstanceTypeOfferings`
    /// by availability zone). Defaults to [`CloudError::NotImplemented`].
    async fn instance_type_zones(
        &self,
        instance_type: &str,
        zones: &[String],
    ) -> CloudResult<Vec<String>> {
        let _ = (instance_type, zones);
        Err(not_implemented("ec2:DescribeInstanceTypeOfferings"))
    }

    /// The machine type a new instance group of `role` gets when none is given, as kOps'
    /// `create cluster` chooses it: the first type of the role's preference list
    /// ([`default_instance_candidates`]) that runs the image's architecture (`arm64`:
    /// Graviton types only, else only the others) and is offered in every one of `zones`
    /// ([`AwsCloud::instance_type_zones`]). [`CloudError::Invalid`] (field `machineType`)
    /// when none is, saying why each was passed over.
    async fn default_instance_type(
        &self,
        role: MachineRole,
        zones: &[String],
        arm64: bool,
    ) -> CloudResult<String> {
        choose_default_instance_type(self, role, zones, arm64).await
    }
}

/// kOps' choice of a default machine type on `cloud` (see
/// [`AwsCloud::default_instance_type`]), for implementations that override that method
/// and fall back to the choice.
pub async fn choose_default_instance_type<C: AwsCloud + ?Sized>(
    cloud: &C,
    role: MachineRole,
    zones: &[String],
    arm64: bool,
) -> CloudResult<String> {
    let mut reasons = Vec::new();
    for candidate in default_instance_candidates(role) {
        if is_graviton(candidate) != arm64 {
            reasons.push(format!(
                "{candidate} does not run {} images",
                if arm64 { "arm64" } else { "amd64" }
            ));
            continue;
        }
        let offered = cloud.instance_type_zones(candidate, zones).await?;
        let missing: Vec<&str> = zones
            .iter()
            .filter(|z| !offered.contains(z))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            return Ok((*candidate).to_owned());
        }
        reasons.push(format!(
            "{candidate} is not offered in {}",
            missing.join(", ")
        ));
    }
    // No candidate offered: a zone the region does not have says so by its name.
    let known = cloud.zones().await.unwrap_or_default();
    if let Some(zone) = zones
        .iter()
        .find(|z| !known.is_empty() && !known.contains(z))
    {
        let region = cloud.account().await.map(|a| a.region).unwrap_or_default();
        return Err(CloudError::Invalid {
            field: "zones".to_owned(),
            message: format!(
                "zone {zone} does not exist in region {region} (its zones: {})",
                known.join(", ")
            ),
        });
    }
    Err(CloudError::Invalid {
        field: "machineType".to_owned(),
        message: format!(
            "no default machine type for a {} group in {}: {}; give one",
            role.as_str(),
            zones.join(", "),
            reasons.join("; ")
        ),
    })
}

/// The role of an instance group as the default machine type depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum MachineRole {
    /// Control plane (and kOps' other control-plane roles: API server, etcd, ...).
    ControlPlane,
    /// Worker nodes.
    Node,
    /// SSH bastions.
    Bastion,
}

impl MachineRole {
    /// The role as kOps' instance groups name it (`ControlPlane`, `Node`, `Bastion`).
    pub fn as_str(self) -> &'static str {
        match self {
            MachineRole::ControlPlane => "ControlPlane",
            MachineRole::Node => "Node",
            MachineRole::Bastion => "Bastion",
        }
    }
}

/// kOps' preference list of default machine types for a role, best first: a burstable
/// type with 4 GiB for nodes and the control plane (with compute-optimised ones where it
/// is not offered, and its Graviton twin for arm64 images), a micro one for bastions.
pub fn default_instance_candidates(role: MachineRole) -> &'static [&'static str] {
    match role {
        MachineRole::ControlPlane | MachineRole::Node => {
            &["t3.medium", "c5.large", "c4.large", "t4g.medium"]
        }
        MachineRole::Bastion => &["t3.micro", "t2.micro", "t4g.micro"],
    }
}

/// Whether a default candidate is a Graviton (arm64) type, as kOps tells them: `t4g`.
fn is_graviton(instance_type: &str) -> bool {
    instance_type.starts_with("t4g")
}

fn not_implemented(operation: &str) -> CloudError {
    CloudError::NotImplemented {
        operation: operation.to_owned(),
        implementer: "this AwsCloud".to_owned(),
    }
}

/// The tag kOps puts on an instance it detached from its group during a surge.
pub const DETACHED_TAG: &str = "kops.k8s.io/detached-from-asg";

/// An autoscaling group as rolling update sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct GroupMembers {
    /// Group name.
    pub name: String,
    /// Minimum size.
    pub min_size: i32,
    /// Maximum size.
    pub max_size: i32,
    /// Desired capacity.
    pub desired_capacity: i32,
    /// The launch template (`id`, numeric version) new instances get; `None` when the group
    /// has none.
    pub launch_template: Option<(String, String)>,
    /// Members in the group, in the group's order.
    pub instances: Vec<GroupMember>,
}

/// One member of an autoscaling group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct GroupMember {
    /// Instance id.
    pub id: String,
    /// `InService`, `Pending`, `Terminating`, ...
    pub lifecycle_state: String,
    /// The launch template (`id`, numeric version) the instance was started from.
    pub launch_template: Option<(String, String)>,
}

impl GroupMembers {
    /// A group with no members.
    pub fn new(
        name: impl Into<String>,
        min_size: i32,
        max_size: i32,
        desired_capacity: i32,
    ) -> Self {
        GroupMembers {
            name: name.into(),
            min_size,
            max_size,
            desired_capacity,
            ..Default::default()
        }
    }
}

impl GroupMember {
    /// A member in lifecycle state `state`.
    pub fn new(id: impl Into<String>, state: impl Into<String>) -> Self {
        GroupMember {
            id: id.into(),
            lifecycle_state: state.into(),
            launch_template: None,
        }
    }
}

/// Conveniences over [`AwsCloud`], implemented for every cloud.
#[async_trait]
pub trait AwsCloudExt: AwsCloud {
    /// The single object of `resource_type` with `id`; `Ok(None)` when absent.
    async fn get(&self, resource_type: ResourceType, id: &str) -> CloudResult<Option<Resource>> {
        let found = self
            .list(&ListQuery::new(resource_type).with_ids([id]))
            .await?;
        Ok(found.into_iter().find(|r| r.id == id))
    }

    /// Every object of `resource_type` owned by or shared with `cluster`: tagged
    /// `KubernetesCluster=<cluster>` or `kubernetes.io/cluster/<cluster>` (any value).
    async fn list_for_cluster(
        &self,
        resource_type: ResourceType,
        cluster: &str,
    ) -> CloudResult<Vec<Resource>> {
        let mut out = self
            .list(
                &ListQuery::new(resource_type).with_tag(TagFilter::exists(format!(
                    "kubernetes.io/cluster/{cluster}"
                ))),
            )
            .await?;
        let legacy = self
            .list(
                &ListQuery::new(resource_type)
                    .with_tag(TagFilter::equals("KubernetesCluster", cluster)),
            )
            .await?;
        for r in legacy {
            if !out.iter().any(|o| o.id == r.id) {
                out.push(r);
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// The newest image for an instance group's `image` value; [`CloudError::NotFound`] naming
    /// the image when there is none.
    async fn resolve_image(&self, image: &str) -> CloudResult<Image> {
        let query = ImageQuery::parse(image);
        let mut found = self.images(&query).await?;
        found.sort_by(|a, b| b.creation_date.cmp(&a.creation_date));
        found
            .into_iter()
            .next()
            .ok_or_else(|| CloudError::not_found(format!("image {image:?}")))
    }
}

impl<T: AwsCloud + ?Sized> AwsCloudExt for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_query_resolves_owner_aliases() {
        assert_eq!(
            ImageQuery::parse("ubuntu/images/hvm-ssd-gp3/ubuntu-x"),
            ImageQuery::Name {
                owner: Some("099720109477".into()),
                name: "images/hvm-ssd-gp3/ubuntu-x".into()
            }
        );
        assert_eq!(
            ImageQuery::parse("123456789012/my-image"),
            ImageQuery::Name {
                owner: Some("123456789012".into()),
                name: "my-image".into()
            }
        );
        assert_eq!(
            ImageQuery::parse("ami-12345678"),
            ImageQuery::Id("ami-12345678".into())
        );
        assert_eq!(
            ImageQuery::parse("some/other/name"),
            ImageQuery::Name {
                owner: None,
                name: "some/other/name".into()
            }
        );
        let img = Image::new("ami-1", "images/x", "099720109477");
        assert!(ImageQuery::parse("ubuntu/images/x").matches(&img));
        assert!(!ImageQuery::parse("amazon/images/x").matches(&img));
    }

    #[test]
    fn list_query_and_tag_filters_match_like_ec2() {
        let r = Resource::new(ResourceType::Vpc, "vpc-1")
            .with_tag("KubernetesCluster", "a.example.com")
            .with_tag("kubernetes.io/cluster/a.example.com", "owned");
        assert!(
            ListQuery::new(ResourceType::Vpc)
                .with_tag(TagFilter::exists("kubernetes.io/cluster/a.example.com"))
                .matches(&r)
        );
        assert!(
            !ListQuery::new(ResourceType::Vpc)
                .with_tag(TagFilter::equals("KubernetesCluster", "b.example.com"))
                .matches(&r)
        );
        assert!(!ListQuery::new(ResourceType::Subnet).matches(&r));
        assert!(
            ListQuery::new(ResourceType::Vpc)
                .with_ids(["vpc-2", "vpc-1"])
                .matches(&r)
        );
    }

    #[test]
    fn zone_query_follows_kops_dot_rule() {
        let z = HostedZone::new("/hostedzone/Z1", "example.com.", false);
        assert!(ZoneQuery::from_spec("example.com").matches(&z));
        assert!(ZoneQuery::from_spec("Z1").matches(&z));
        assert!(ZoneQuery::Id("/hostedzone/Z1".into()).matches(&z));
        assert!(!ZoneQuery::from_spec("other.com").matches(&z));
    }

    #[test]
    fn the_table_of_facts_is_complete_and_consistent() {
        let mut tf_types = std::collections::BTreeSet::new();
        for &rt in ResourceType::ALL {
            let f = rt.facts();
            assert!(f.terraform_type.starts_with("aws_"), "{rt:?}");
            assert!(tf_types.insert(f.terraform_type), "{rt:?} twice");
            for a in f.immutable {
                assert!(
                    f.attrs.contains(a),
                    "{rt:?}: immutable {a} is not an attribute"
                );
            }
            assert_eq!(rt.to_string(), f.terraform_type);
            assert_eq!(
                serde_json::to_value(rt)
                    .ok()
                    .and_then(|v| serde_json::from_value::<ResourceType>(v).ok()),
                Some(rt)
            );
        }
        // `ALL` lists every variant once, in order: this match is exhaustive, so a new
        // variant does not compile until it has a place here, and then in `ALL`.
        let position = |rt: ResourceType| match rt {
            R::Vpc => 0,
            R::VpcCidrBlock => 1,
            R::VpcIpv6CidrBlock => 2,
            R::DhcpOptions => 3,
            R::DhcpOptionsAssociation => 4,
            R::InternetGateway => 5,
            R::EgressOnlyInternetGateway => 6,
            R::Subnet => 7,
            R::RouteTable => 8,
            R::Route => 9,
            R::RouteTableAssociation => 10,
            R::ElasticIp => 11,
            R::NatGateway => 12,
            R::SecurityGroup => 13,
            R::SecurityGroupRule => 14,
            R::IamRole => 15,
            R::IamRolePolicy => 16,
            R::IamRolePolicyAttachment => 17,
            R::IamInstanceProfile => 18,
            R::IamOidcProvider => 19,
            R::KeyPair => 20,
            R::LaunchTemplate => 21,
            R::AutoscalingGroup => 22,
            R::WarmPool => 23,
            R::LifecycleHook => 24,
            R::Volume => 25,
            R::LoadBalancer => 26,
            R::TargetGroup => 27,
            R::Listener => 28,
            R::RecordSet => 29,
            R::HostedZone => 30,
            R::SqsQueue => 31,
            R::EventRule => 32,
            R::EventTarget => 33,
            R::S3Object => 34,
            R::Instance => 35,
        };
        for (i, &rt) in ResourceType::ALL.iter().enumerate() {
            assert_eq!(position(rt), i, "{rt:?}");
        }
        assert_eq!(tf_types.len(), 36);
        assert_eq!(ResourceType::Vpc.service(), Service::Ec2);
        assert_eq!(ResourceType::Listener.service(), Service::Elbv2);
        assert!(!ResourceType::Route.is_taggable());
        assert!(
            ResourceType::Subnet
                .immutable_attrs()
                .contains(&"cidr_block")
        );
    }

    #[test]
    fn tasks_find_by_name_among_the_clusters_objects() {
        let f = <ResourceType as ResourceKind>::name_filters("a.example.com", "main");
        let r = Resource::new(ResourceType::Vpc, "vpc-1")
            .with_tag("KubernetesCluster", "a.example.com")
            .with_tag("Name", "main");
        assert!(f.iter().all(|f| f.matches(&r.tags)));
        let other = Resource::new(ResourceType::Vpc, "vpc-2")
            .with_tag("KubernetesCluster", "b.example.com")
            .with_tag("Name", "main");
        assert!(!f.iter().all(|f| f.matches(&other.tags)));
        let digest = ResourceType::content_digest().map(|d| (d.digest)(b""));
        assert_eq!(digest.as_deref(), Some("d41d8cd98f00b204e9800998ecf8427e"));
    }
}
