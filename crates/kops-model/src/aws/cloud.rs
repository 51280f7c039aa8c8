//! The AWS cloud trait the AWS tasks talk to, and the plain-data resource types it
//! exchanges.
//!
//! [`AwsCloud`] is implemented in memory by `kops-mock` and against the real APIs by
//! `kops-cloud-aws`. It is deliberately *generic over resource types*: every cloud object
//! the model manages is a [`Resource`] of one [`ResourceType`], with an ID, optional name
//! and ARN, tags, and attributes. Attribute names are the Terraform attribute names of the
//! corresponding `aws_*` resource (documented per [`ResourceType`]), so the same field
//! names drive the Terraform renderer, the diff and the cloud calls. References between
//! objects are plain IDs in attributes (`vpc_id = "vpc-1"`).
//!
//! # Discovery is batched
//!
//! [`AwsCloud::list`] takes a [`ListQuery`] for *one resource type* with tag filters, IDs,
//! names or a parent; a backend answers it with as few API calls as the service allows
//! (one paginated `DescribeVpcs` with `tag:KubernetesCluster=<cluster>`), and may cache the
//! answer for the rest of a run (invalidate on writes). Tasks look their object up in the
//! batched answer instead of describing resource by resource (kops#10989).
//!
//! # Errors
//!
//! Methods return [`kops_tasks::Error`] so the executor can act on them directly:
//! throttling -> [`Error::Throttled`] (retried), eventual consistency ->
//! [`Error::Retryable`], a missing object addressed by ID -> [`Error::NotFound`], access
//! denied -> [`Error::PermissionDenied`], a rejected request -> [`Error::Invalid`], an
//! operation the backend does not support -> [`Error::NotImplemented`], anything else ->
//! [`Error::Cloud`]. A backend classifies AWS error codes (`RequestLimitExceeded`,
//! `Throttling` -> throttled; `InvalidVpcID.NotFound` -> not found, ...).

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use kops_tasks::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Every kind of AWS object the model manages. The attribute names listed for each type
/// are the ones tasks write and read (the Terraform names); backends may return more.
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
    /// EC2 instance (read only, for delete and rolling update): `instance_type`,
    /// `subnet_id`, `image_id`, `state`.
    Instance,
}

impl ResourceType {
    /// The Terraform resource type this maps to (`aws_vpc`, ...).
    pub fn terraform_type(self) -> &'static str {
        match self {
            ResourceType::Vpc => "aws_vpc",
            ResourceType::VpcCidrBlock => "aws_vpc_ipv4_cidr_block_association",
            ResourceType::VpcIpv6CidrBlock => "aws_vpc_ipv6_cidr_block_association",
            ResourceType::DhcpOptions => "aws_vpc_dhcp_options",
            ResourceType::DhcpOptionsAssociation => "aws_vpc_dhcp_options_association",
            ResourceType::InternetGateway => "aws_internet_gateway",
            ResourceType::EgressOnlyInternetGateway => "aws_egress_only_internet_gateway",
            ResourceType::Subnet => "aws_subnet",
            ResourceType::RouteTable => "aws_route_table",
            ResourceType::Route => "aws_route",
            ResourceType::RouteTableAssociation => "aws_route_table_association",
            ResourceType::ElasticIp => "aws_eip",
            ResourceType::NatGateway => "aws_nat_gateway",
            ResourceType::SecurityGroup => "aws_security_group",
            ResourceType::SecurityGroupRule => "aws_security_group_rule",
            ResourceType::IamRole => "aws_iam_role",
            ResourceType::IamRolePolicy => "aws_iam_role_policy",
            ResourceType::IamRolePolicyAttachment => "aws_iam_role_policy_attachment",
            ResourceType::IamInstanceProfile => "aws_iam_instance_profile",
            ResourceType::IamOidcProvider => "aws_iam_openid_connect_provider",
            ResourceType::KeyPair => "aws_key_pair",
            ResourceType::LaunchTemplate => "aws_launch_template",
            ResourceType::AutoscalingGroup => "aws_autoscaling_group",
            ResourceType::WarmPool => "aws_autoscaling_warm_pool",
            ResourceType::LifecycleHook => "aws_autoscaling_lifecycle_hook",
            ResourceType::Volume => "aws_ebs_volume",
            ResourceType::LoadBalancer => "aws_lb",
            ResourceType::TargetGroup => "aws_lb_target_group",
            ResourceType::Listener => "aws_lb_listener",
            ResourceType::RecordSet => "aws_route53_record",
            ResourceType::HostedZone => "aws_route53_zone",
            ResourceType::SqsQueue => "aws_sqs_queue",
            ResourceType::EventRule => "aws_cloudwatch_event_rule",
            ResourceType::EventTarget => "aws_cloudwatch_event_target",
            ResourceType::S3Object => "aws_s3_object",
            ResourceType::Instance => "aws_instance",
        }
    }

    /// The AWS service that owns this type (for rate limiting and call counting).
    pub fn service(self) -> Service {
        use ResourceType as R;
        match self {
            R::IamRole
            | R::IamRolePolicy
            | R::IamRolePolicyAttachment
            | R::IamInstanceProfile
            | R::IamOidcProvider => Service::Iam,
            R::AutoscalingGroup | R::WarmPool | R::LifecycleHook => Service::Autoscaling,
            R::LoadBalancer | R::TargetGroup | R::Listener => Service::Elbv2,
            R::RecordSet | R::HostedZone => Service::Route53,
            R::SqsQueue => Service::Sqs,
            R::EventRule | R::EventTarget => Service::EventBridge,
            R::S3Object => Service::S3,
            _ => Service::Ec2,
        }
    }

    /// Whether objects of this type carry tags.
    pub fn is_taggable(self) -> bool {
        use ResourceType as R;
        !matches!(
            self,
            R::DhcpOptionsAssociation
                | R::Route
                | R::RouteTableAssociation
                | R::SecurityGroupRule
                | R::IamRolePolicy
                | R::IamRolePolicyAttachment
                | R::WarmPool
                | R::LifecycleHook
                | R::Listener
                | R::RecordSet
                | R::EventTarget
                | R::S3Object
                | R::VpcCidrBlock
                | R::VpcIpv6CidrBlock
        )
    }
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

/// One AWS object, as plain data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resource {
    /// Its type.
    pub resource_type: Option<ResourceType>,
    /// The cloud ID (`vpc-1`, an ARN, a group name, ... see [`ResourceType`]).
    pub id: String,
    /// The name where the type has one apart from the `Name` tag (security group name, IAM
    /// role name, ASG name, LB name, queue name, rule name, key name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The ARN, where the type has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arn: Option<String>,
    /// The parent the object lives under (route table of a route, group of a rule or hook,
    /// zone of a record, bucket of an object), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Attributes by Terraform attribute name; references are plain IDs.
    #[serde(default)]
    pub attrs: BTreeMap<String, Json>,
}

impl Resource {
    /// A resource of `resource_type` with this ID.
    pub fn new(resource_type: ResourceType, id: impl Into<String>) -> Self {
        Resource {
            resource_type: Some(resource_type),
            id: id.into(),
            ..Resource::default()
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the ARN.
    pub fn with_arn(mut self, arn: impl Into<String>) -> Self {
        self.arn = Some(arn.into());
        self
    }

    /// Sets the parent.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Adds a tag.
    pub fn with_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.tags.insert(key.into(), value.into());
        self
    }

    /// Sets an attribute.
    pub fn with_attr(mut self, name: impl Into<String>, value: impl Into<Json>) -> Self {
        self.attrs.insert(name.into(), value.into());
        self
    }

    /// A string attribute.
    pub fn attr_str(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).and_then(Json::as_str)
    }

    /// The `Name` tag.
    pub fn name_tag(&self) -> Option<&str> {
        self.tags.get("Name").map(String::as_str)
    }
}

/// A tag filter as EC2 applies it: the object has tag `key` and, when `values` is not
/// empty, its value is one of `values`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TagFilter {
    /// Tag key.
    pub key: String,
    /// Accepted values; empty means any value.
    #[serde(default)]
    pub values: Vec<String>,
}

impl TagFilter {
    /// Objects with tag `key` equal to `value`.
    pub fn equals(key: impl Into<String>, value: impl Into<String>) -> Self {
        TagFilter {
            key: key.into(),
            values: vec![value.into()],
        }
    }

    /// Objects that carry tag `key` with any value.
    pub fn exists(key: impl Into<String>) -> Self {
        TagFilter {
            key: key.into(),
            values: Vec::new(),
        }
    }

    /// Whether `tags` pass this filter.
    pub fn matches(&self, tags: &BTreeMap<String, String>) -> bool {
        match tags.get(&self.key) {
            None => false,
            Some(v) => self.values.is_empty() || self.values.iter().any(|x| x == v),
        }
    }
}

/// A batched lookup of one resource type. Every criterion that is set must hold (AND);
/// within `ids`, `names` and a filter's values any may match (OR). A query with no
/// criterion lists every object of the type the account holds in the region (backends may
/// refuse that for large types with [`Error::Invalid`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListQuery {
    /// The type to list.
    pub resource_type: ResourceType,
    /// Only these IDs (an ID that does not exist is simply absent from the answer).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Only objects with one of these names ([`Resource::name`]).
    #[serde(default)]
    pub names: Vec<String>,
    /// Only objects under this parent ([`Resource::parent`]).
    #[serde(default)]
    pub parent: Option<String>,
    /// Only objects whose tags pass every filter.
    #[serde(default)]
    pub tags: Vec<TagFilter>,
}

impl ListQuery {
    /// Every object of a type (narrow it with the `with_*` setters).
    pub fn new(resource_type: ResourceType) -> Self {
        ListQuery {
            resource_type,
            ids: Vec::new(),
            names: Vec::new(),
            parent: None,
            tags: Vec::new(),
        }
    }

    /// Only these IDs.
    pub fn with_ids<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.ids = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Only these names.
    pub fn with_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Only objects under `parent`.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Adds a tag filter.
    pub fn with_tag(mut self, filter: TagFilter) -> Self {
        self.tags.push(filter);
        self
    }

    /// Whether `r` satisfies the query (what a backend filtering client-side applies).
    pub fn matches(&self, r: &Resource) -> bool {
        r.resource_type == Some(self.resource_type)
            && (self.ids.is_empty() || self.ids.contains(&r.id))
            && (self.names.is_empty() || r.name.as_ref().is_some_and(|n| self.names.contains(n)))
            && self
                .parent
                .as_ref()
                .is_none_or(|p| r.parent.as_ref() == Some(p))
            && self.tags.iter().all(|f| f.matches(&r.tags))
    }
}

/// A request to create one object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateRequest {
    /// The type.
    pub resource_type: ResourceType,
    /// The name, for types that have one ([`Resource::name`]).
    #[serde(default)]
    pub name: Option<String>,
    /// The parent, for types that live under one.
    #[serde(default)]
    pub parent: Option<String>,
    /// Tags to create the object with (ignored for types without tags).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Attributes (Terraform names), references as actual IDs.
    #[serde(default)]
    pub attrs: BTreeMap<String, Json>,
}

impl CreateRequest {
    /// A request to create an object of `resource_type`.
    pub fn new(resource_type: ResourceType) -> Self {
        CreateRequest {
            resource_type,
            name: None,
            parent: None,
            tags: BTreeMap::new(),
            attrs: BTreeMap::new(),
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the parent.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Sets the tags.
    pub fn with_tags(mut self, tags: BTreeMap<String, String>) -> Self {
        self.tags = tags;
        self
    }

    /// Sets the attributes.
    pub fn with_attrs(mut self, attrs: BTreeMap<String, Json>) -> Self {
        self.attrs = attrs;
        self
    }
}

/// A request to change an existing object: only the attributes given change; `tags`, when
/// set, replace the object's tags (backends add/remove the difference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UpdateRequest {
    /// The type.
    pub resource_type: ResourceType,
    /// The object's ID.
    pub id: String,
    /// Attributes to set.
    #[serde(default)]
    pub attrs: BTreeMap<String, Json>,
    /// New full tag set, when tags change.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

impl UpdateRequest {
    /// A request to change object `id`.
    pub fn new(resource_type: ResourceType, id: impl Into<String>) -> Self {
        UpdateRequest {
            resource_type,
            id: id.into(),
            attrs: BTreeMap::new(),
            tags: None,
        }
    }

    /// Sets the changed attributes.
    pub fn with_attrs(mut self, attrs: BTreeMap<String, Json>) -> Self {
        self.attrs = attrs;
        self
    }

    /// Replaces the tags.
    pub fn with_tags(mut self, tags: BTreeMap<String, String>) -> Self {
        self.tags = Some(tags);
        self
    }
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

/// The AWS operations the model's tasks need, for one region of one account.
///
/// Implemented by `kops-mock` (in memory) and `kops-cloud-aws` (aws-sdk). Cross-cutting
/// behaviour (rate limiting, caching, call counting, fault injection) is added by wrapping
/// an implementation, not by flags inside it. See the [module docs](self) for the data
/// model and error mapping.
#[async_trait]
pub trait AwsCloud: Send + Sync + fmt::Debug + 'static {
    /// Account ID, partition and region.
    async fn account(&self) -> Result<AccountInfo>;

    /// The availability zones of the region (names, sorted).
    async fn zones(&self) -> Result<Vec<String>>;

    /// Every object matching `query`, in a stable order (by ID). One call per resource
    /// type and run should be enough for discovery; see [`ListQuery`].
    async fn list(&self, query: &ListQuery) -> Result<Vec<Resource>>;

    /// Like [`AwsCloud::list`], for finding objects to compare with what a task expects:
    /// an [`ResourceType::S3Object`] may come without `content` but with `content_md5`
    /// (the lowercase hex MD5 of the content), which a backend can learn from one listing
    /// (S3's ETag) instead of reading every object. Tasks compare the digest of the
    /// content they expect. Other types, and by default everything, as `list`.
    async fn list_digests(&self, query: &ListQuery) -> Result<Vec<Resource>> {
        self.list(query).await
    }

    /// Creates an object and returns it as the cloud now holds it (with its new ID).
    async fn create(&self, request: &CreateRequest) -> Result<Resource>;

    /// Changes an existing object and returns it as the cloud now holds it;
    /// [`Error::NotFound`] when it does not exist.
    async fn update(&self, request: &UpdateRequest) -> Result<Resource>;

    /// Deletes an object (detaching it first where AWS requires, e.g. an internet gateway
    /// from its VPC); deleting an object that does not exist is not an error.
    async fn delete(&self, resource_type: ResourceType, id: &str) -> Result<()>;

    /// Images matching `query` (newest first by creation date).
    async fn images(&self, query: &ImageQuery) -> Result<Vec<Image>>;

    /// Hosted zones matching `query`.
    async fn hosted_zones(&self, query: &ZoneQuery) -> Result<Vec<HostedZone>>;
}

/// Conveniences over [`AwsCloud`], implemented for every cloud.
#[async_trait]
pub trait AwsCloudExt: AwsCloud {
    /// The single object of `resource_type` with `id`; `Ok(None)` when absent.
    async fn get(&self, resource_type: ResourceType, id: &str) -> Result<Option<Resource>> {
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
    ) -> Result<Vec<Resource>> {
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

    /// The newest image for an instance group's `image` value; [`Error::NotFound`] naming
    /// the image when there is none.
    async fn resolve_image(&self, image: &str) -> Result<Image> {
        let query = ImageQuery::parse(image);
        let mut found = self.images(&query).await?;
        found.sort_by(|a, b| b.creation_date.cmp(&a.creation_date));
        found.into_iter().next().ok_or_else(|| Error::NotFound {
            what: format!("image {image:?}"),
        })
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
}
