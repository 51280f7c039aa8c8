//! The facts about each resource type, one named row per type, grouped by the service
//! that owns it: [`ResourceType::facts`](crate::cloud::ResourceType::facts) maps each
//! type to its row (an exhaustive `match`, so a new type cannot be left without facts).

use crate::cloud::{Service, TypeFacts};

// --------------------------------------------------------------------------------------
// EC2

/// The facts about [`ResourceType::Vpc`](crate::cloud::ResourceType::Vpc).
pub(crate) static VPC: TypeFacts = TypeFacts {
    terraform_type: "aws_vpc",
    service: Service::Ec2,
    taggable: true,
    immutable: &["cidr_block"],
    unordered: &[],
    attrs: &[
        "cidr_block",
        "enable_dns_hostnames",
        "enable_dns_support",
        "assign_generated_ipv6_cidr_block",
        "ipv6_cidr_block",
    ],
};

/// The facts about [`ResourceType::VpcCidrBlock`](crate::cloud::ResourceType::VpcCidrBlock).
pub(crate) static VPC_CIDR_BLOCK: TypeFacts = TypeFacts {
    terraform_type: "aws_vpc_ipv4_cidr_block_association",
    service: Service::Ec2,
    taggable: false,
    immutable: &["vpc_id", "cidr_block"],
    unordered: &[],
    attrs: &["vpc_id", "cidr_block"],
};

/// The facts about [`ResourceType::VpcIpv6CidrBlock`](crate::cloud::ResourceType::VpcIpv6CidrBlock).
pub(crate) static VPC_IPV6_CIDR_BLOCK: TypeFacts = TypeFacts {
    terraform_type: "aws_vpc_ipv6_cidr_block_association",
    service: Service::Ec2,
    taggable: false,
    immutable: &["vpc_id", "amazon_provided_ipv6_cidr_block"],
    unordered: &[],
    attrs: &[
        "vpc_id",
        "amazon_provided_ipv6_cidr_block",
        "ipv6_cidr_block",
    ],
};

/// The facts about [`ResourceType::DhcpOptions`](crate::cloud::ResourceType::DhcpOptions).
pub(crate) static DHCP_OPTIONS: TypeFacts = TypeFacts {
    terraform_type: "aws_vpc_dhcp_options",
    service: Service::Ec2,
    taggable: true,
    immutable: &["domain_name", "domain_name_servers", "ntp_servers"],
    unordered: &[],
    attrs: &["domain_name", "domain_name_servers", "ntp_servers"],
};

/// The facts about [`ResourceType::DhcpOptionsAssociation`](crate::cloud::ResourceType::DhcpOptionsAssociation).
pub(crate) static DHCP_OPTIONS_ASSOCIATION: TypeFacts = TypeFacts {
    terraform_type: "aws_vpc_dhcp_options_association",
    service: Service::Ec2,
    taggable: false,
    immutable: &["vpc_id"],
    unordered: &[],
    attrs: &["vpc_id", "dhcp_options_id"],
};

/// The facts about [`ResourceType::InternetGateway`](crate::cloud::ResourceType::InternetGateway).
pub(crate) static INTERNET_GATEWAY: TypeFacts = TypeFacts {
    terraform_type: "aws_internet_gateway",
    service: Service::Ec2,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &["vpc_id"],
};

/// The facts about [`ResourceType::EgressOnlyInternetGateway`](crate::cloud::ResourceType::EgressOnlyInternetGateway).
pub(crate) static EGRESS_ONLY_INTERNET_GATEWAY: TypeFacts = TypeFacts {
    terraform_type: "aws_egress_only_internet_gateway",
    service: Service::Ec2,
    taggable: true,
    immutable: &["vpc_id"],
    unordered: &[],
    attrs: &["vpc_id"],
};

/// The facts about [`ResourceType::Subnet`](crate::cloud::ResourceType::Subnet).
pub(crate) static SUBNET: TypeFacts = TypeFacts {
    terraform_type: "aws_subnet",
    service: Service::Ec2,
    taggable: true,
    immutable: &["vpc_id", "availability_zone", "cidr_block"],
    unordered: &[],
    attrs: &[
        "vpc_id",
        "availability_zone",
        "cidr_block",
        "ipv6_cidr_block",
        "ipv6_native",
        "map_public_ip_on_launch",
        "assign_ipv6_address_on_creation",
        "enable_dns64",
        "enable_resource_name_dns_a_record_on_launch",
        "enable_resource_name_dns_aaaa_record_on_launch",
        "private_dns_hostname_type_on_launch",
    ],
};

/// The facts about [`ResourceType::RouteTable`](crate::cloud::ResourceType::RouteTable).
pub(crate) static ROUTE_TABLE: TypeFacts = TypeFacts {
    terraform_type: "aws_route_table",
    service: Service::Ec2,
    taggable: true,
    immutable: &["vpc_id"],
    unordered: &[],
    attrs: &["vpc_id"],
};

/// The facts about [`ResourceType::Route`](crate::cloud::ResourceType::Route).
pub(crate) static ROUTE: TypeFacts = TypeFacts {
    terraform_type: "aws_route",
    service: Service::Ec2,
    taggable: false,
    immutable: &[
        "route_table_id",
        "destination_cidr_block",
        "destination_ipv6_cidr_block",
    ],
    unordered: &[],
    attrs: &[
        "route_table_id",
        "destination_cidr_block",
        "destination_ipv6_cidr_block",
        "destination_prefix_list_id",
        "gateway_id",
        "nat_gateway_id",
        "egress_only_gateway_id",
        "instance_id",
        "transit_gateway_id",
        "network_interface_id",
        "vpc_peering_connection_id",
    ],
};

/// The facts about [`ResourceType::RouteTableAssociation`](crate::cloud::ResourceType::RouteTableAssociation).
pub(crate) static ROUTE_TABLE_ASSOCIATION: TypeFacts = TypeFacts {
    terraform_type: "aws_route_table_association",
    service: Service::Ec2,
    taggable: false,
    // A subnet associated with another table is moved
    // (ReplaceRouteTableAssociation), not re-created.
    immutable: &["subnet_id"],
    unordered: &[],
    attrs: &["route_table_id", "subnet_id"],
};

/// The facts about [`ResourceType::ElasticIp`](crate::cloud::ResourceType::ElasticIp).
pub(crate) static ELASTIC_IP: TypeFacts = TypeFacts {
    terraform_type: "aws_eip",
    service: Service::Ec2,
    taggable: true,
    immutable: &["domain"],
    unordered: &[],
    attrs: &["domain", "public_ip"],
};

/// The facts about [`ResourceType::NatGateway`](crate::cloud::ResourceType::NatGateway).
pub(crate) static NAT_GATEWAY: TypeFacts = TypeFacts {
    terraform_type: "aws_nat_gateway",
    service: Service::Ec2,
    taggable: true,
    immutable: &["subnet_id", "allocation_id"],
    unordered: &[],
    attrs: &["subnet_id", "allocation_id", "public_ip"],
};

/// The facts about [`ResourceType::SecurityGroup`](crate::cloud::ResourceType::SecurityGroup).
pub(crate) static SECURITY_GROUP: TypeFacts = TypeFacts {
    terraform_type: "aws_security_group",
    service: Service::Ec2,
    taggable: true,
    immutable: &["vpc_id", "description", "name"],
    unordered: &[],
    attrs: &["vpc_id", "description", "name"],
};

/// The facts about [`ResourceType::SecurityGroupRule`](crate::cloud::ResourceType::SecurityGroupRule).
pub(crate) static SECURITY_GROUP_RULE: TypeFacts = TypeFacts {
    terraform_type: "aws_security_group_rule",
    service: Service::Ec2,
    taggable: false,
    immutable: &[
        "security_group_id",
        "type",
        "protocol",
        "from_port",
        "to_port",
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "source_security_group_id",
    ],
    unordered: &[],
    attrs: &[
        "security_group_id",
        "type",
        "protocol",
        "from_port",
        "to_port",
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "source_security_group_id",
        "description",
    ],
};

/// The facts about [`ResourceType::KeyPair`](crate::cloud::ResourceType::KeyPair).
pub(crate) static KEY_PAIR: TypeFacts = TypeFacts {
    terraform_type: "aws_key_pair",
    service: Service::Ec2,
    taggable: true,
    immutable: &["key_name", "public_key"],
    unordered: &[],
    attrs: &["key_name", "public_key", "fingerprint"],
};

/// The facts about [`ResourceType::LaunchTemplate`](crate::cloud::ResourceType::LaunchTemplate).
pub(crate) static LAUNCH_TEMPLATE: TypeFacts = TypeFacts {
    terraform_type: "aws_launch_template",
    service: Service::Ec2,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "name",
        "image_id",
        "instance_type",
        "key_name",
        "iam_instance_profile",
        "user_data",
        "block_device_mappings",
        "network_interfaces",
        "metadata_options",
        "monitoring",
        "tag_specifications",
        "instance_market_options",
        "placement",
        "credit_specification",
        "latest_version",
    ],
};

/// The facts about [`ResourceType::Volume`](crate::cloud::ResourceType::Volume).
pub(crate) static VOLUME: TypeFacts = TypeFacts {
    terraform_type: "aws_ebs_volume",
    service: Service::Ec2,
    taggable: true,
    immutable: &["availability_zone", "encrypted", "kms_key_id"],
    unordered: &[],
    attrs: &[
        "availability_zone",
        "size",
        "type",
        "iops",
        "throughput",
        "encrypted",
        "kms_key_id",
    ],
};

/// The facts about [`ResourceType::Instance`](crate::cloud::ResourceType::Instance).
pub(crate) static INSTANCE: TypeFacts = TypeFacts {
    terraform_type: "aws_instance",
    service: Service::Ec2,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "instance_type",
        "subnet_id",
        "image_id",
        "state",
        "availability_zone",
        "private_ip",
    ],
};

// --------------------------------------------------------------------------------------
// IAM

/// The facts about [`ResourceType::IamRole`](crate::cloud::ResourceType::IamRole).
pub(crate) static IAM_ROLE: TypeFacts = TypeFacts {
    terraform_type: "aws_iam_role",
    service: Service::Iam,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "name",
        "assume_role_policy",
        "permissions_boundary",
        "description",
        "max_session_duration",
        "path",
    ],
};

/// The facts about [`ResourceType::IamRolePolicy`](crate::cloud::ResourceType::IamRolePolicy).
pub(crate) static IAM_ROLE_POLICY: TypeFacts = TypeFacts {
    terraform_type: "aws_iam_role_policy",
    service: Service::Iam,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &["name", "role", "policy"],
};

/// The facts about [`ResourceType::IamRolePolicyAttachment`](crate::cloud::ResourceType::IamRolePolicyAttachment).
pub(crate) static IAM_ROLE_POLICY_ATTACHMENT: TypeFacts = TypeFacts {
    terraform_type: "aws_iam_role_policy_attachment",
    service: Service::Iam,
    taggable: false,
    immutable: &["role", "policy_arn"],
    unordered: &[],
    attrs: &["role", "policy_arn"],
};

/// The facts about [`ResourceType::IamInstanceProfile`](crate::cloud::ResourceType::IamInstanceProfile).
pub(crate) static IAM_INSTANCE_PROFILE: TypeFacts = TypeFacts {
    terraform_type: "aws_iam_instance_profile",
    service: Service::Iam,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &["name", "role", "path"],
};

/// The facts about [`ResourceType::IamOidcProvider`](crate::cloud::ResourceType::IamOidcProvider).
pub(crate) static IAM_OIDC_PROVIDER: TypeFacts = TypeFacts {
    terraform_type: "aws_iam_openid_connect_provider",
    service: Service::Iam,
    taggable: true,
    immutable: &["url"],
    unordered: &[],
    attrs: &["url", "client_id_list", "thumbprint_list"],
};

// --------------------------------------------------------------------------------------
// EC2 Auto Scaling

/// The facts about [`ResourceType::AutoscalingGroup`](crate::cloud::ResourceType::AutoscalingGroup).
pub(crate) static AUTOSCALING_GROUP: TypeFacts = TypeFacts {
    terraform_type: "aws_autoscaling_group",
    service: Service::Autoscaling,
    taggable: true,
    immutable: &[],
    unordered: &["vpc_zone_identifier", "target_group_arns", "load_balancers"],
    attrs: &[
        "name",
        "min_size",
        "max_size",
        "desired_capacity",
        "vpc_zone_identifier",
        "launch_template",
        "mixed_instances_policy",
        "target_group_arns",
        "load_balancers",
        "suspended_processes",
        "enabled_metrics",
        "metrics_granularity",
        "protect_from_scale_in",
        "capacity_rebalance",
        "max_instance_lifetime",
        "health_check_type",
        "health_check_grace_period",
        "tag",
    ],
};

/// The facts about [`ResourceType::WarmPool`](crate::cloud::ResourceType::WarmPool).
pub(crate) static WARM_POOL: TypeFacts = TypeFacts {
    terraform_type: "aws_autoscaling_warm_pool",
    service: Service::Autoscaling,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "autoscaling_group_name",
        "min_size",
        "max_group_prepared_capacity",
        "pool_state",
        "instance_reuse_policy",
    ],
};

/// The facts about [`ResourceType::LifecycleHook`](crate::cloud::ResourceType::LifecycleHook).
pub(crate) static LIFECYCLE_HOOK: TypeFacts = TypeFacts {
    terraform_type: "aws_autoscaling_lifecycle_hook",
    service: Service::Autoscaling,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "name",
        "autoscaling_group_name",
        "lifecycle_transition",
        "default_result",
        "heartbeat_timeout",
        "notification_target_arn",
        "role_arn",
        "notification_metadata",
    ],
};

// --------------------------------------------------------------------------------------
// Elastic Load Balancing v2

/// The facts about [`ResourceType::LoadBalancer`](crate::cloud::ResourceType::LoadBalancer).
pub(crate) static LOAD_BALANCER: TypeFacts = TypeFacts {
    terraform_type: "aws_lb",
    service: Service::Elbv2,
    taggable: true,
    immutable: &["load_balancer_type", "internal"],
    unordered: &["subnet_mapping", "security_groups"],
    attrs: &[
        "name",
        "load_balancer_type",
        "internal",
        "subnet_mapping",
        "security_groups",
        "enable_cross_zone_load_balancing",
        "ip_address_type",
        "dns_name",
        "zone_id",
    ],
};

/// The facts about [`ResourceType::TargetGroup`](crate::cloud::ResourceType::TargetGroup).
pub(crate) static TARGET_GROUP: TypeFacts = TypeFacts {
    terraform_type: "aws_lb_target_group",
    service: Service::Elbv2,
    taggable: true,
    immutable: &["port", "protocol", "vpc_id"],
    unordered: &[],
    attrs: &[
        "name",
        "port",
        "protocol",
        "vpc_id",
        "target_type",
        "health_check",
        "deregistration_delay",
        "connection_termination",
    ],
};

/// The facts about [`ResourceType::Listener`](crate::cloud::ResourceType::Listener).
pub(crate) static LISTENER: TypeFacts = TypeFacts {
    terraform_type: "aws_lb_listener",
    service: Service::Elbv2,
    taggable: false,
    immutable: &["load_balancer_arn"],
    unordered: &[],
    attrs: &[
        "load_balancer_arn",
        "port",
        "protocol",
        "certificate_arn",
        "ssl_policy",
        "default_action",
    ],
};

// --------------------------------------------------------------------------------------
// Route53

/// The facts about [`ResourceType::RecordSet`](crate::cloud::ResourceType::RecordSet).
pub(crate) static RECORD_SET: TypeFacts = TypeFacts {
    terraform_type: "aws_route53_record",
    service: Service::Route53,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &["zone_id", "name", "type", "ttl", "records", "alias"],
};

/// The facts about [`ResourceType::HostedZone`](crate::cloud::ResourceType::HostedZone).
pub(crate) static HOSTED_ZONE: TypeFacts = TypeFacts {
    terraform_type: "aws_route53_zone",
    service: Service::Route53,
    taggable: true,
    immutable: &["name"],
    unordered: &[],
    attrs: &["name", "private", "vpc", "comment"],
};

// --------------------------------------------------------------------------------------
// SQS

/// The facts about [`ResourceType::SqsQueue`](crate::cloud::ResourceType::SqsQueue).
pub(crate) static SQS_QUEUE: TypeFacts = TypeFacts {
    terraform_type: "aws_sqs_queue",
    service: Service::Sqs,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &["name", "message_retention_seconds", "policy"],
};

// --------------------------------------------------------------------------------------
// EventBridge

/// The facts about [`ResourceType::EventRule`](crate::cloud::ResourceType::EventRule).
pub(crate) static EVENT_RULE: TypeFacts = TypeFacts {
    terraform_type: "aws_cloudwatch_event_rule",
    service: Service::EventBridge,
    taggable: true,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "name",
        "event_pattern",
        "schedule_expression",
        "description",
        "state",
    ],
};

/// The facts about [`ResourceType::EventTarget`](crate::cloud::ResourceType::EventTarget).
pub(crate) static EVENT_TARGET: TypeFacts = TypeFacts {
    terraform_type: "aws_cloudwatch_event_target",
    service: Service::EventBridge,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &["rule", "target_id", "arn", "input"],
};

// --------------------------------------------------------------------------------------
// S3

/// The facts about [`ResourceType::S3Object`](crate::cloud::ResourceType::S3Object).
pub(crate) static S3_OBJECT: TypeFacts = TypeFacts {
    terraform_type: "aws_s3_object",
    service: Service::S3,
    taggable: false,
    immutable: &[],
    unordered: &[],
    attrs: &[
        "bucket",
        "key",
        "content",
        "server_side_encryption",
        "acl",
        "content_type",
    ],
};
