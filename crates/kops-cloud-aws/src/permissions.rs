//! The operator's side of IAM: every AWS operation kops-rs can send (the backend's, the
//! S3 state store's), the IAM actions each needs and what it acts on, and the
//! least-privilege policy an operator (a user, a CI role) needs for the commands it runs.
//!
//! The table is kept next to the calls: a test reads the backend's sources and fails on
//! an operation it sends that the table lacks, or on an entry no call uses.
//!
//! Scoping to one cluster (`PolicyOptions::cluster`) narrows what AWS can narrow: the
//! state store's objects to the cluster's folder, IAM roles and instance profiles to the
//! names kOps gives them (`*.<cluster>`), the node-termination-handler's queue and rules
//! to the cluster's prefix, and EC2, Auto Scaling and load-balancer changes to resources
//! tagged `KubernetesCluster: <cluster>` (or created with that tag). What AWS cannot scope
//! by resource is granted on `*` and said so in the statement's `Sid`: describe and list
//! calls, Route53 record changes (the zone is the user's) and OpenID Connect providers
//! (named by their URL). `iam:PassRole` is limited to the cluster's roles.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

/// A command an operator runs, for the policy it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum OperatorCommand {
    /// `create cluster` (writes the spec to the state store, reads the cloud).
    Create,
    /// `update cluster --yes` (creates, changes and deletes the cluster's resources).
    Update,
    /// `delete cluster --yes`.
    Delete,
    /// `rolling-update cluster --yes` (replaces machines).
    RollingUpdate,
    /// `validate cluster` (reads only).
    Validate,
}

impl OperatorCommand {
    /// Every command.
    pub const ALL: [OperatorCommand; 5] = [
        OperatorCommand::Create,
        OperatorCommand::Update,
        OperatorCommand::Delete,
        OperatorCommand::RollingUpdate,
        OperatorCommand::Validate,
    ];

    /// Parses `create`, `update`, `delete`, `rolling-update` or `validate`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim() {
            "create" => OperatorCommand::Create,
            "update" => OperatorCommand::Update,
            "delete" => OperatorCommand::Delete,
            "rolling-update" => OperatorCommand::RollingUpdate,
            "validate" => OperatorCommand::Validate,
            _ => return None,
        })
    }

    fn bit(self) -> u8 {
        match self {
            OperatorCommand::Create => 1,
            OperatorCommand::Update => 2,
            OperatorCommand::Delete => 4,
            OperatorCommand::RollingUpdate => 8,
            OperatorCommand::Validate => 16,
        }
    }
}

impl fmt::Display for OperatorCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OperatorCommand::Create => "create",
            OperatorCommand::Update => "update",
            OperatorCommand::Delete => "delete",
            OperatorCommand::RollingUpdate => "rolling-update",
            OperatorCommand::Validate => "validate",
        })
    }
}

/// Which commands send an operation, by what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    /// Reads: every command.
    Read,
    /// Creates or changes the cluster's resources: `update`.
    Write,
    /// Deletes them: `update` (what the spec no longer has) and `delete`.
    Delete,
    /// Changes machines: `update` and `rolling-update`.
    Roll,
    /// Ends machines: `update`, `delete`, `rolling-update`.
    Terminate,
    /// Writes the state store (specs, locks, history): every command but `validate`.
    StateWrite,
    /// Reads the state bucket's safety settings: `create` (which warns).
    StateCheck,
    /// Changes them (`toolbox check-state-store --fix`): the bucket owner's to run, in no
    /// operator policy.
    StateFix,
}

impl Use {
    fn mask(self) -> u8 {
        use OperatorCommand as C;
        let of = |cs: &[C]| cs.iter().fold(0, |m, c| m | c.bit());
        match self {
            Use::Read => of(&C::ALL),
            Use::Write => of(&[C::Update]),
            Use::Delete => of(&[C::Update, C::Delete]),
            Use::Roll => of(&[C::Update, C::RollingUpdate]),
            Use::Terminate => of(&[C::Update, C::Delete, C::RollingUpdate]),
            Use::StateWrite => of(&[C::Create, C::Update, C::Delete, C::RollingUpdate]),
            Use::StateCheck => of(&[C::Create]),
            Use::StateFix => 0,
        }
    }
}

/// What an operation acts on, for scoping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum On {
    /// Nothing AWS lets a policy name (describe and list calls, Route53 zones).
    Any,
    /// An existing EC2 resource of the cluster (by its `KubernetesCluster` tag).
    Ec2Tagged,
    /// A new EC2 resource, created with the cluster's tag.
    Ec2New,
    /// An existing autoscaling group of the cluster.
    AsgTagged,
    /// A new autoscaling group.
    AsgNew,
    /// An existing load balancer, listener or target group of the cluster.
    ElbTagged,
    /// A new one.
    ElbNew,
    /// The cluster's IAM roles (`*.<cluster>`).
    Role,
    /// The cluster's instance profiles.
    Profile,
    /// Both (adding a role to a profile).
    RoleAndProfile,
    /// OpenID Connect providers (named by URL: not scoped).
    Oidc,
    /// Service-linked roles AWS creates on first use.
    ServiceLinkedRole,
    /// The node-termination-handler's queue.
    Queue,
    /// Its EventBridge rules.
    Rule,
    /// An object the cluster keeps in S3 (managed files, OIDC documents).
    ClusterObject,
    /// A bucket the cluster lists.
    ClusterBucket,
    /// An object of the state store.
    StateObject,
    /// The state store's bucket.
    StateBucket,
}

/// One AWS API operation kops-rs sends and what IAM must allow for it.
#[derive(Clone, Copy, Debug)]
struct Call {
    /// The operation (`DescribeVpcs`).
    operation: &'static str,
    /// The IAM actions it needs (`ec2:DescribeVpcs`); empty: none (`GetCallerIdentity`).
    actions: &'static [&'static str],
    used: Use,
    on: On,
}

const fn call(
    operation: &'static str,
    actions: &'static [&'static str],
    used: Use,
    on: On,
) -> Call {
    Call {
        operation,
        actions,
        used,
        on,
    }
}

use On::*;
use Use::{
    Delete as D, Read as R, Roll as Ro, StateCheck, StateFix, StateWrite, Terminate as T,
    Write as W,
};

/// Every operation, with its actions. Operations that need other actions than their own
/// name them: launching through an autoscaling group needs `ec2:RunInstances` and
/// `iam:PassRole` on the instance profile's role; tagging on creation needs the tagging
/// action.
const CALLS: &[Call] = &[
    // STS: always allowed.
    call("GetCallerIdentity", &[], R, Any),
    // EC2 reads.
    call("DescribeAddresses", &["ec2:DescribeAddresses"], R, Any),
    call(
        "DescribeAvailabilityZones",
        &["ec2:DescribeAvailabilityZones"],
        R,
        Any,
    ),
    call("DescribeDhcpOptions", &["ec2:DescribeDhcpOptions"], R, Any),
    call(
        "DescribeEgressOnlyInternetGateways",
        &["ec2:DescribeEgressOnlyInternetGateways"],
        R,
        Any,
    ),
    call("DescribeImages", &["ec2:DescribeImages"], R, Any),
    call(
        "DescribeInstanceTypeOfferings",
        &["ec2:DescribeInstanceTypeOfferings"],
        R,
        Any,
    ),
    call("DescribeInstances", &["ec2:DescribeInstances"], R, Any),
    call(
        "DescribeInternetGateways",
        &["ec2:DescribeInternetGateways"],
        R,
        Any,
    ),
    call("DescribeKeyPairs", &["ec2:DescribeKeyPairs"], R, Any),
    call(
        "DescribeLaunchTemplateVersions",
        &["ec2:DescribeLaunchTemplateVersions"],
        R,
        Any,
    ),
    call(
        "DescribeLaunchTemplates",
        &["ec2:DescribeLaunchTemplates"],
        R,
        Any,
    ),
    call("DescribeNatGateways", &["ec2:DescribeNatGateways"], R, Any),
    call("DescribeRouteTables", &["ec2:DescribeRouteTables"], R, Any),
    call(
        "DescribeSecurityGroupRules",
        &["ec2:DescribeSecurityGroupRules"],
        R,
        Any,
    ),
    call(
        "DescribeSecurityGroups",
        &["ec2:DescribeSecurityGroups"],
        R,
        Any,
    ),
    call("DescribeSubnets", &["ec2:DescribeSubnets"], R, Any),
    call("DescribeVolumes", &["ec2:DescribeVolumes"], R, Any),
    call(
        "DescribeVpcAttribute",
        &["ec2:DescribeVpcAttribute"],
        R,
        Any,
    ),
    call("DescribeVpcs", &["ec2:DescribeVpcs"], R, Any),
    // EC2 creations (tagged on creation).
    call(
        "AllocateAddress",
        &["ec2:AllocateAddress", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateDhcpOptions",
        &["ec2:CreateDhcpOptions", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateEgressOnlyInternetGateway",
        &["ec2:CreateEgressOnlyInternetGateway", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateInternetGateway",
        &["ec2:CreateInternetGateway", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateLaunchTemplate",
        &["ec2:CreateLaunchTemplate", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateNatGateway",
        &["ec2:CreateNatGateway", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateRouteTable",
        &["ec2:CreateRouteTable", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateSecurityGroup",
        &["ec2:CreateSecurityGroup", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateSubnet",
        &["ec2:CreateSubnet", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call(
        "CreateVolume",
        &["ec2:CreateVolume", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call("CreateVpc", &["ec2:CreateVpc", "ec2:CreateTags"], W, Ec2New),
    call(
        "ImportKeyPair",
        &["ec2:ImportKeyPair", "ec2:CreateTags"],
        W,
        Ec2New,
    ),
    call("CreateTags", &["ec2:CreateTags"], W, Ec2Tagged),
    // EC2 changes to the cluster's resources.
    call(
        "AssociateDhcpOptions",
        &["ec2:AssociateDhcpOptions"],
        W,
        Ec2Tagged,
    ),
    call(
        "AssociateRouteTable",
        &["ec2:AssociateRouteTable"],
        W,
        Ec2Tagged,
    ),
    call(
        "AssociateVpcCidrBlock",
        &["ec2:AssociateVpcCidrBlock"],
        W,
        Ec2Tagged,
    ),
    call(
        "AttachInternetGateway",
        &["ec2:AttachInternetGateway"],
        W,
        Ec2Tagged,
    ),
    call(
        "AuthorizeSecurityGroupEgress",
        &["ec2:AuthorizeSecurityGroupEgress"],
        W,
        Ec2Tagged,
    ),
    call(
        "AuthorizeSecurityGroupIngress",
        &["ec2:AuthorizeSecurityGroupIngress"],
        W,
        Ec2Tagged,
    ),
    call(
        "CreateLaunchTemplateVersion",
        &["ec2:CreateLaunchTemplateVersion"],
        W,
        Ec2Tagged,
    ),
    call("CreateRoute", &["ec2:CreateRoute"], W, Ec2Tagged),
    call(
        "ModifyLaunchTemplate",
        &["ec2:ModifyLaunchTemplate"],
        W,
        Ec2Tagged,
    ),
    call(
        "ModifySubnetAttribute",
        &["ec2:ModifySubnetAttribute"],
        W,
        Ec2Tagged,
    ),
    call("ModifyVolume", &["ec2:ModifyVolume"], W, Ec2Tagged),
    call(
        "ModifyVpcAttribute",
        &["ec2:ModifyVpcAttribute"],
        W,
        Ec2Tagged,
    ),
    call("ReplaceRoute", &["ec2:ReplaceRoute"], W, Ec2Tagged),
    call(
        "ReplaceRouteTableAssociation",
        &["ec2:ReplaceRouteTableAssociation"],
        W,
        Ec2Tagged,
    ),
    call(
        "RevokeSecurityGroupEgress",
        &["ec2:RevokeSecurityGroupEgress"],
        D,
        Ec2Tagged,
    ),
    call(
        "RevokeSecurityGroupIngress",
        &["ec2:RevokeSecurityGroupIngress"],
        D,
        Ec2Tagged,
    ),
    // EC2 deletions.
    call(
        "DeleteDhcpOptions",
        &["ec2:DeleteDhcpOptions"],
        D,
        Ec2Tagged,
    ),
    call(
        "DeleteEgressOnlyInternetGateway",
        &["ec2:DeleteEgressOnlyInternetGateway"],
        D,
        Ec2Tagged,
    ),
    call(
        "DeleteInternetGateway",
        &["ec2:DeleteInternetGateway"],
        D,
        Ec2Tagged,
    ),
    call("DeleteKeyPair", &["ec2:DeleteKeyPair"], D, Ec2Tagged),
    call(
        "DeleteLaunchTemplate",
        &["ec2:DeleteLaunchTemplate"],
        D,
        Ec2Tagged,
    ),
    call("DeleteNatGateway", &["ec2:DeleteNatGateway"], D, Ec2Tagged),
    call("DeleteRoute", &["ec2:DeleteRoute"], D, Ec2Tagged),
    call("DeleteRouteTable", &["ec2:DeleteRouteTable"], D, Ec2Tagged),
    call(
        "DeleteSecurityGroup",
        &["ec2:DeleteSecurityGroup"],
        D,
        Ec2Tagged,
    ),
    call("DeleteSubnet", &["ec2:DeleteSubnet"], D, Ec2Tagged),
    call(
        "DeleteTags",
        &["ec2:DeleteTags", "autoscaling:DeleteTags"],
        W,
        Ec2Tagged,
    ),
    call("DeleteVolume", &["ec2:DeleteVolume"], D, Ec2Tagged),
    call("DeleteVpc", &["ec2:DeleteVpc"], D, Ec2Tagged),
    call(
        "DetachInternetGateway",
        &["ec2:DetachInternetGateway"],
        D,
        Ec2Tagged,
    ),
    call(
        "DisassociateRouteTable",
        &["ec2:DisassociateRouteTable"],
        D,
        Ec2Tagged,
    ),
    call(
        "DisassociateVpcCidrBlock",
        &["ec2:DisassociateVpcCidrBlock"],
        D,
        Ec2Tagged,
    ),
    call("ReleaseAddress", &["ec2:ReleaseAddress"], D, Ec2Tagged),
    call(
        "TerminateInstances",
        &["ec2:TerminateInstances"],
        T,
        Ec2Tagged,
    ),
    // Auto Scaling.
    call(
        "DescribeAutoScalingGroups",
        &["autoscaling:DescribeAutoScalingGroups"],
        R,
        Any,
    ),
    call(
        "DescribeLifecycleHooks",
        &["autoscaling:DescribeLifecycleHooks"],
        R,
        Any,
    ),
    call(
        "CreateAutoScalingGroup",
        &[
            "autoscaling:CreateAutoScalingGroup",
            "autoscaling:CreateOrUpdateTags",
        ],
        W,
        AsgNew,
    ),
    call(
        "CreateOrUpdateTags",
        &["autoscaling:CreateOrUpdateTags"],
        W,
        AsgTagged,
    ),
    call(
        "PutLifecycleHook",
        &["autoscaling:PutLifecycleHook"],
        W,
        AsgTagged,
    ),
    call("PutWarmPool", &["autoscaling:PutWarmPool"], W, AsgTagged),
    call(
        "AttachLoadBalancerTargetGroups",
        &["autoscaling:AttachLoadBalancerTargetGroups"],
        W,
        AsgTagged,
    ),
    call(
        "EnableMetricsCollection",
        &["autoscaling:EnableMetricsCollection"],
        W,
        AsgTagged,
    ),
    call(
        "DisableMetricsCollection",
        &["autoscaling:DisableMetricsCollection"],
        W,
        AsgTagged,
    ),
    call(
        "UpdateAutoScalingGroup",
        &["autoscaling:UpdateAutoScalingGroup"],
        Ro,
        AsgTagged,
    ),
    call(
        "SuspendProcesses",
        &["autoscaling:SuspendProcesses"],
        Ro,
        AsgTagged,
    ),
    call(
        "ResumeProcesses",
        &["autoscaling:ResumeProcesses"],
        Ro,
        AsgTagged,
    ),
    call(
        "DetachInstances",
        &["autoscaling:DetachInstances"],
        Ro,
        AsgTagged,
    ),
    call(
        "DeleteAutoScalingGroup",
        &["autoscaling:DeleteAutoScalingGroup"],
        D,
        AsgTagged,
    ),
    call(
        "DeleteLifecycleHook",
        &["autoscaling:DeleteLifecycleHook"],
        D,
        AsgTagged,
    ),
    call(
        "DeleteWarmPool",
        &["autoscaling:DeleteWarmPool"],
        D,
        AsgTagged,
    ),
    call(
        "DetachLoadBalancerTargetGroups",
        &["autoscaling:DetachLoadBalancerTargetGroups"],
        D,
        AsgTagged,
    ),
    // Elastic Load Balancing.
    call(
        "DescribeListeners",
        &["elasticloadbalancing:DescribeListeners"],
        R,
        Any,
    ),
    call(
        "DescribeLoadBalancerAttributes",
        &["elasticloadbalancing:DescribeLoadBalancerAttributes"],
        R,
        Any,
    ),
    call(
        "DescribeLoadBalancers",
        &["elasticloadbalancing:DescribeLoadBalancers"],
        R,
        Any,
    ),
    call(
        "DescribeTags",
        &["elasticloadbalancing:DescribeTags"],
        R,
        Any,
    ),
    call(
        "DescribeTargetGroupAttributes",
        &["elasticloadbalancing:DescribeTargetGroupAttributes"],
        R,
        Any,
    ),
    call(
        "DescribeTargetGroups",
        &["elasticloadbalancing:DescribeTargetGroups"],
        R,
        Any,
    ),
    call(
        "DescribeTargetHealth",
        &["elasticloadbalancing:DescribeTargetHealth"],
        R,
        Any,
    ),
    call(
        "CreateLoadBalancer",
        &[
            "elasticloadbalancing:CreateLoadBalancer",
            "elasticloadbalancing:AddTags",
        ],
        W,
        ElbNew,
    ),
    call(
        "CreateTargetGroup",
        &[
            "elasticloadbalancing:CreateTargetGroup",
            "elasticloadbalancing:AddTags",
        ],
        W,
        ElbNew,
    ),
    call(
        "CreateListener",
        &[
            "elasticloadbalancing:CreateListener",
            "elasticloadbalancing:AddTags",
        ],
        W,
        ElbTagged,
    ),
    call("AddTags", &["elasticloadbalancing:AddTags"], W, ElbTagged),
    call(
        "RemoveTags",
        &["elasticloadbalancing:RemoveTags"],
        W,
        ElbTagged,
    ),
    call(
        "ModifyListener",
        &["elasticloadbalancing:ModifyListener"],
        W,
        ElbTagged,
    ),
    call(
        "ModifyLoadBalancerAttributes",
        &["elasticloadbalancing:ModifyLoadBalancerAttributes"],
        W,
        ElbTagged,
    ),
    call(
        "ModifyTargetGroup",
        &["elasticloadbalancing:ModifyTargetGroup"],
        W,
        ElbTagged,
    ),
    call(
        "ModifyTargetGroupAttributes",
        &["elasticloadbalancing:ModifyTargetGroupAttributes"],
        W,
        ElbTagged,
    ),
    call(
        "SetIpAddressType",
        &["elasticloadbalancing:SetIpAddressType"],
        W,
        ElbTagged,
    ),
    call(
        "SetSecurityGroups",
        &["elasticloadbalancing:SetSecurityGroups"],
        W,
        ElbTagged,
    ),
    call(
        "SetSubnets",
        &["elasticloadbalancing:SetSubnets"],
        W,
        ElbTagged,
    ),
    call(
        "DeleteListener",
        &["elasticloadbalancing:DeleteListener"],
        D,
        ElbTagged,
    ),
    call(
        "DeleteLoadBalancer",
        &["elasticloadbalancing:DeleteLoadBalancer"],
        D,
        ElbTagged,
    ),
    call(
        "DeleteTargetGroup",
        &["elasticloadbalancing:DeleteTargetGroup"],
        D,
        ElbTagged,
    ),
    call(
        "DeregisterTargets",
        &["elasticloadbalancing:DeregisterTargets"],
        T,
        ElbTagged,
    ),
    // IAM.
    call("GetInstanceProfile", &["iam:GetInstanceProfile"], R, Any),
    call(
        "GetOpenIDConnectProvider",
        &["iam:GetOpenIDConnectProvider"],
        R,
        Any,
    ),
    call("GetRole", &["iam:GetRole"], R, Any),
    call("GetRolePolicy", &["iam:GetRolePolicy"], R, Any),
    call(
        "ListAttachedRolePolicies",
        &["iam:ListAttachedRolePolicies"],
        R,
        Any,
    ),
    call(
        "ListInstanceProfiles",
        &["iam:ListInstanceProfiles"],
        R,
        Any,
    ),
    call(
        "ListInstanceProfilesForRole",
        &["iam:ListInstanceProfilesForRole"],
        R,
        Any,
    ),
    call(
        "ListOpenIDConnectProviders",
        &["iam:ListOpenIDConnectProviders"],
        R,
        Any,
    ),
    call("ListRolePolicies", &["iam:ListRolePolicies"], R, Any),
    call("ListRoles", &["iam:ListRoles"], R, Any),
    call("CreateRole", &["iam:CreateRole", "iam:TagRole"], W, Role),
    call("TagRole", &["iam:TagRole"], W, Role),
    call("UntagRole", &["iam:UntagRole"], W, Role),
    call(
        "UpdateAssumeRolePolicy",
        &["iam:UpdateAssumeRolePolicy"],
        W,
        Role,
    ),
    call("PutRolePolicy", &["iam:PutRolePolicy"], W, Role),
    call("AttachRolePolicy", &["iam:AttachRolePolicy"], W, Role),
    call(
        "PutRolePermissionsBoundary",
        &["iam:PutRolePermissionsBoundary"],
        W,
        Role,
    ),
    call(
        "CreateInstanceProfile",
        &["iam:CreateInstanceProfile", "iam:TagInstanceProfile"],
        W,
        Profile,
    ),
    call(
        "TagInstanceProfile",
        &["iam:TagInstanceProfile"],
        W,
        Profile,
    ),
    call(
        "UntagInstanceProfile",
        &["iam:UntagInstanceProfile"],
        W,
        Profile,
    ),
    call(
        "AddRoleToInstanceProfile",
        &["iam:AddRoleToInstanceProfile", "iam:PassRole"],
        W,
        RoleAndProfile,
    ),
    call(
        "CreateOpenIDConnectProvider",
        &[
            "iam:CreateOpenIDConnectProvider",
            "iam:TagOpenIDConnectProvider",
        ],
        W,
        Oidc,
    ),
    call(
        "AddClientIDToOpenIDConnectProvider",
        &["iam:AddClientIDToOpenIDConnectProvider"],
        W,
        Oidc,
    ),
    call(
        "RemoveClientIDFromOpenIDConnectProvider",
        &["iam:RemoveClientIDFromOpenIDConnectProvider"],
        W,
        Oidc,
    ),
    call(
        "UpdateOpenIDConnectProviderThumbprint",
        &["iam:UpdateOpenIDConnectProviderThumbprint"],
        W,
        Oidc,
    ),
    call("DeleteRole", &["iam:DeleteRole"], D, Role),
    call("DeleteRolePolicy", &["iam:DeleteRolePolicy"], D, Role),
    call("DetachRolePolicy", &["iam:DetachRolePolicy"], D, Role),
    call(
        "DeleteRolePermissionsBoundary",
        &["iam:DeleteRolePermissionsBoundary"],
        D,
        Role,
    ),
    call(
        "DeleteInstanceProfile",
        &["iam:DeleteInstanceProfile"],
        D,
        Profile,
    ),
    call(
        "RemoveRoleFromInstanceProfile",
        &["iam:RemoveRoleFromInstanceProfile"],
        D,
        RoleAndProfile,
    ),
    call(
        "DeleteOpenIDConnectProvider",
        &["iam:DeleteOpenIDConnectProvider"],
        D,
        Oidc,
    ),
    // An autoscaling group launches with the caller's permission to run the instances
    // (tagged with the cluster on launch).
    call(
        "(launch through an autoscaling group)",
        &["ec2:RunInstances", "ec2:CreateTags"],
        Ro,
        Ec2New,
    ),
    // Launching machines with the cluster's roles; AWS's own roles on first use.
    call(
        "(launch with an instance profile)",
        &["iam:PassRole"],
        W,
        Role,
    ),
    call(
        "(first autoscaling group or load balancer)",
        &["iam:CreateServiceLinkedRole"],
        W,
        ServiceLinkedRole,
    ),
    // Route53.
    call("GetHostedZone", &["route53:GetHostedZone"], R, Any),
    call("ListHostedZones", &["route53:ListHostedZones"], R, Any),
    call(
        "ListResourceRecordSets",
        &["route53:ListResourceRecordSets"],
        R,
        Any,
    ),
    call(
        "ChangeResourceRecordSets",
        &["route53:ChangeResourceRecordSets"],
        D,
        Any,
    ),
    call(
        "ChangeTagsForResource",
        &["route53:ChangeTagsForResource"],
        W,
        Any,
    ),
    call("CreateHostedZone", &["route53:CreateHostedZone"], W, Any),
    call("DeleteHostedZone", &["route53:DeleteHostedZone"], D, Any),
    // SQS (the node-termination-handler's queue).
    call("GetQueueAttributes", &["sqs:GetQueueAttributes"], R, Queue),
    call("ListQueueTags", &["sqs:ListQueueTags"], R, Queue),
    call("ListQueues", &["sqs:ListQueues"], R, Any),
    call(
        "CreateQueue",
        &["sqs:CreateQueue", "sqs:TagQueue"],
        W,
        Queue,
    ),
    call("SetQueueAttributes", &["sqs:SetQueueAttributes"], W, Queue),
    call("TagQueue", &["sqs:TagQueue"], W, Queue),
    call("UntagQueue", &["sqs:UntagQueue"], W, Queue),
    call("DeleteQueue", &["sqs:DeleteQueue"], D, Queue),
    // EventBridge (its rules).
    call("DescribeRule", &["events:DescribeRule"], R, Rule),
    call("ListRules", &["events:ListRules"], R, Any),
    call(
        "ListTagsForResource",
        &["events:ListTagsForResource"],
        R,
        Rule,
    ),
    call("ListTargetsByRule", &["events:ListTargetsByRule"], R, Rule),
    call(
        "PutRule",
        &["events:PutRule", "events:TagResource"],
        W,
        Rule,
    ),
    call("PutTargets", &["events:PutTargets"], W, Rule),
    call("TagResource", &["events:TagResource"], W, Rule),
    call("UntagResource", &["events:UntagResource"], W, Rule),
    call("RemoveTargets", &["events:RemoveTargets"], D, Rule),
    call("DeleteRule", &["events:DeleteRule"], D, Rule),
    // S3: the cluster's files and OIDC documents (through the backend).
    call("GetObject", &["s3:GetObject"], R, ClusterObject),
    call("ListObjectsV2", &["s3:ListBucket"], R, ClusterBucket),
    call("PutObject", &["s3:PutObject"], W, ClusterObject),
    call("DeleteObject", &["s3:DeleteObject"], D, ClusterObject),
];

/// The S3 state store's operations (`kops-statestore`'s S3 backend).
const STATE_CALLS: &[Call] = &[
    call(
        "GetObject",
        &["s3:GetObject", "s3:GetObjectVersion"],
        R,
        StateObject,
    ),
    call("ListObjectsV2", &["s3:ListBucket"], R, StateBucket),
    call(
        "ListObjectVersions",
        &["s3:ListBucketVersions"],
        R,
        StateBucket,
    ),
    call("HeadBucket", &["s3:ListBucket"], R, StateBucket),
    call(
        "GetBucketLocation",
        &["s3:GetBucketLocation"],
        R,
        StateBucket,
    ),
    call("PutObject", &["s3:PutObject"], StateWrite, StateObject),
    call(
        "DeleteObject",
        &["s3:DeleteObject"],
        StateWrite,
        StateObject,
    ),
    call(
        "GetBucketVersioning",
        &["s3:GetBucketVersioning"],
        StateCheck,
        StateBucket,
    ),
    call(
        "GetBucketEncryption",
        &["s3:GetEncryptionConfiguration"],
        StateCheck,
        StateBucket,
    ),
    call(
        "GetPublicAccessBlock",
        &["s3:GetBucketPublicAccessBlock"],
        StateCheck,
        StateBucket,
    ),
    call(
        "PutBucketVersioning",
        &["s3:PutBucketVersioning"],
        StateFix,
        StateBucket,
    ),
    call(
        "PutBucketEncryption",
        &["s3:PutEncryptionConfiguration"],
        StateFix,
        StateBucket,
    ),
    call(
        "PutPublicAccessBlock",
        &["s3:PutBucketPublicAccessBlock"],
        StateFix,
        StateBucket,
    ),
];

/// What a policy is for.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct PolicyOptions {
    /// The commands (default: all).
    pub commands: Vec<OperatorCommand>,
    /// One cluster: scope what can be scoped to it (default: any cluster).
    pub cluster: Option<String>,
    /// The state store's bucket and prefix (`s3://BUCKET/PREFIX`); default: any bucket.
    pub state_store: Option<(String, String)>,
    /// The AWS partition (default `aws`).
    pub partition: Option<String>,
}

impl PolicyOptions {
    /// Options for every command on any cluster.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only these commands.
    pub fn with_commands(mut self, commands: impl IntoIterator<Item = OperatorCommand>) -> Self {
        self.commands = commands.into_iter().collect();
        self
    }

    /// Scoped to `cluster`.
    pub fn with_cluster(mut self, cluster: impl Into<String>) -> Self {
        self.cluster = Some(cluster.into());
        self
    }

    /// The state store at `s3://bucket/prefix`.
    pub fn with_state_store(
        mut self,
        bucket: impl Into<String>,
        prefix: impl Into<String>,
    ) -> Self {
        self.state_store = Some((bucket.into(), prefix.into().trim_matches('/').to_owned()));
        self
    }

    fn mask(&self) -> u8 {
        let commands: &[OperatorCommand] = if self.commands.is_empty() {
            &OperatorCommand::ALL
        } else {
            &self.commands
        };
        commands.iter().fold(0, |m, c| m | c.bit())
    }
}

/// The resources and condition of a statement for `on`.
fn scope(on: On, o: &PolicyOptions) -> (&'static str, Vec<String>, Option<Value>) {
    let p = o.partition.as_deref().unwrap_or("aws");
    let cluster = o.cluster.as_deref();
    let tag = |key: &str| {
        cluster.map(|c| json!({ "StringEquals": { format!("{key}/KubernetesCluster"): c } }))
    };
    let any = || vec!["*".to_owned()];
    let named = |pattern: String| match cluster {
        Some(_) => vec![pattern],
        None => any(),
    };
    let c = cluster.unwrap_or("*");
    match on {
        Any => ("Unscoped", any(), None),
        Ec2Tagged => ("ClusterEC2", any(), tag("aws:ResourceTag")),
        Ec2New => ("NewEC2", any(), tag("aws:RequestTag")),
        AsgTagged => ("ClusterAutoscaling", any(), tag("autoscaling:ResourceTag")),
        AsgNew => ("NewAutoscaling", any(), tag("aws:RequestTag")),
        ElbTagged => ("ClusterLoadBalancing", any(), tag("aws:ResourceTag")),
        ElbNew => ("NewLoadBalancing", any(), tag("aws:RequestTag")),
        Role => (
            "ClusterRoles",
            named(format!("arn:{p}:iam::*:role/*.{c}")),
            None,
        ),
        Profile => (
            "ClusterInstanceProfiles",
            named(format!("arn:{p}:iam::*:instance-profile/*.{c}")),
            None,
        ),
        RoleAndProfile => (
            "ClusterRolesAndProfiles",
            match cluster {
                Some(c) => vec![
                    format!("arn:{p}:iam::*:role/*.{c}"),
                    format!("arn:{p}:iam::*:instance-profile/*.{c}"),
                ],
                None => any(),
            },
            None,
        ),
        Oidc => ("OpenIDConnectProviders", any(), None),
        ServiceLinkedRole => (
            "ServiceLinkedRoles",
            vec![format!("arn:{p}:iam::*:role/aws-service-role/*")],
            None,
        ),
        Queue => {
            let dashed = c.replace('.', "-");
            (
                "ClusterQueue",
                named(format!("arn:{p}:sqs:*:*:{dashed}-nth")),
                None,
            )
        }
        Rule => (
            "ClusterRules",
            named(format!("arn:{p}:events:*:*:rule/{c}-*")),
            None,
        ),
        ClusterObject => (
            "ClusterObjects",
            named(format!("arn:{p}:s3:::*/*{c}/*")),
            None,
        ),
        ClusterBucket => ("ClusterBuckets", vec![format!("arn:{p}:s3:::*")], None),
        StateObject => {
            let resource = match (&o.state_store, cluster) {
                (Some((b, prefix)), Some(c)) if prefix.is_empty() => {
                    format!("arn:{p}:s3:::{b}/{c}/*")
                }
                (Some((b, prefix)), Some(c)) => format!("arn:{p}:s3:::{b}/{prefix}/{c}/*"),
                (Some((b, _)), None) => format!("arn:{p}:s3:::{b}/*"),
                (None, _) => "*".to_owned(),
            };
            ("StateStoreObjects", vec![resource], None)
        }
        StateBucket => (
            "StateStoreBucket",
            vec![match &o.state_store {
                Some((b, _)) => format!("arn:{p}:s3:::{b}"),
                None => "*".to_owned(),
            }],
            None,
        ),
    }
}

/// AWS's limit on a managed policy's size, in characters without white space.
pub const MAX_POLICY_CHARS: usize = 6144;

/// Read actions granted as a service's `Describe*`: every one is read-only, and listing
/// them one by one would not fit a policy.
const DESCRIBE_WILDCARDS: &[&str] = &["ec2:", "autoscaling:", "elasticloadbalancing:"];

/// One statement being gathered: its `Sid`, its condition and its actions.
type Grant = (&'static str, Option<Value>, Vec<String>);

/// The statements an operator needs for `options`' commands: one per scope (resources and
/// condition), the actions sorted.
fn statements(options: &PolicyOptions) -> Vec<Value> {
    let mask = options.mask();
    let mut by_scope: BTreeMap<(Vec<String>, String), Grant> = BTreeMap::new();
    for c in CALLS.iter().chain(STATE_CALLS) {
        if c.used.mask() & mask == 0 || c.actions.is_empty() {
            continue;
        }
        let (sid, resources, condition) = scope(c.on, options);
        let sid = match (resources.as_slice(), &condition) {
            ([r], None) if r == "*" && options.cluster.is_some() => "NotScopableByResource",
            ([r], None) if r == "*" => "AnyCluster",
            _ => sid,
        };
        let key = (
            resources,
            condition.as_ref().map(Value::to_string).unwrap_or_default(),
        );
        let entry = by_scope.entry(key).or_insert((sid, condition, Vec::new()));
        for a in c.actions {
            let wildcard = c.used == Use::Read
                && a.split_once(':')
                    .is_some_and(|(_, op)| op.starts_with("Describe"))
                && DESCRIBE_WILDCARDS.iter().any(|p| a.starts_with(p));
            entry.2.push(match (wildcard, a.split_once(':')) {
                (true, Some((service, _))) => format!("{service}:Describe*"),
                _ => (*a).to_owned(),
            });
        }
    }
    by_scope
        .into_iter()
        .map(|((resources, _), (sid, condition, mut actions))| {
            actions.sort_unstable();
            actions.dedup();
            let mut st = json!({
                "Sid": sid,
                "Effect": "Allow",
                "Action": actions,
                "Resource": if resources.len() == 1 { json!(resources[0]) } else { json!(resources) },
            });
            if let Some(c) = condition {
                st["Condition"] = c;
            }
            st
        })
        .collect()
}

fn document(statements: Vec<Value>) -> Value {
    json!({ "Version": "2012-10-17", "Statement": statements })
}

fn size(v: &Value) -> usize {
    v.to_string().chars().filter(|c| !c.is_whitespace()).count()
}

/// The IAM policy document an operator needs for `options`' commands, in one document
/// (which may exceed what one managed policy holds: see [`operator_policies`]).
pub fn operator_policy(options: &PolicyOptions) -> Value {
    document(statements(options))
}

/// [`operator_policy`]'s statements in as few documents as fit AWS's managed-policy size
/// ([`MAX_POLICY_CHARS`]), to attach together.
pub fn operator_policies(options: &PolicyOptions) -> Vec<Value> {
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut current: Vec<Value> = Vec::new();
    for st in statements(options) {
        let mut grown = current.clone();
        grown.push(st.clone());
        if current.is_empty() || size(&document(grown)) <= MAX_POLICY_CHARS {
            current.push(st);
        } else {
            out.push(std::mem::replace(&mut current, vec![st]));
        }
    }
    out.push(current);
    out.into_iter().map(document).collect()
}

/// Why each action of `options`' policy is there: every operation the commands send
/// (or the launch that needs it), with its actions.
pub fn operator_calls(options: &PolicyOptions) -> Vec<(&'static str, &'static [&'static str])> {
    let mask = options.mask();
    CALLS
        .iter()
        .chain(STATE_CALLS)
        .filter(|c| c.used.mask() & mask != 0 && !c.actions.is_empty())
        .map(|c| (c.operation, c.actions))
        .collect()
}

/// The IAM actions of `options`' policy, sorted.
pub fn operator_actions(options: &PolicyOptions) -> Vec<&'static str> {
    let mask = options.mask();
    let mut out: Vec<&'static str> = CALLS
        .iter()
        .chain(STATE_CALLS)
        .filter(|c| c.used.mask() & mask != 0)
        .flat_map(|c| c.actions.iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERBS: &[&str] = &[
        "Describe",
        "List",
        "Get",
        "Head",
        "Create",
        "Delete",
        "Put",
        "Modify",
        "Attach",
        "Detach",
        "Associate",
        "Disassociate",
        "Authorize",
        "Revoke",
        "Allocate",
        "Release",
        "Import",
        "Replace",
        "Terminate",
        "Tag",
        "Untag",
        "Add",
        "Remove",
        "Set",
        "Update",
        "Enable",
        "Disable",
        "Suspend",
        "Resume",
        "Change",
        "Register",
        "Deregister",
        "Copy",
        "Run",
    ];

    /// Strings in the sources that are not calls: an error's origin compared by name.
    const NOT_CALLS: &[&str] = &["EnableVgwRoutePropagation"];

    /// The string literals of Rust source `text` (comments, character literals and raw
    /// strings understood).
    fn literals(text: &str) -> Vec<String> {
        let b = text.as_bytes();
        let (mut i, mut out) = (0, Vec::new());
        while i < b.len() {
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'\'' => {
                    // A character literal ('x', '\'', '\n'), or a lifetime.
                    if b.get(i + 1) == Some(&b'\\') {
                        i += 4;
                    } else if b.get(i + 2) == Some(&b'\'') {
                        i += 3;
                    } else {
                        i += 1;
                    }
                }
                b'r' if matches!(b.get(i + 1), Some(b'#' | b'"'))
                    && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
                {
                    let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                    let open = i + 1 + hashes;
                    if b.get(open) != Some(&b'"') {
                        i += 1;
                        continue;
                    }
                    let close = format!("\"{}", "#".repeat(hashes));
                    let rest = &text[open + 1..];
                    let len = rest.find(&close).unwrap_or(rest.len());
                    out.push(rest[..len].to_owned());
                    i = open + 1 + len + close.len();
                }
                b'"' => {
                    let mut j = i + 1;
                    while j < b.len() && b[j] != b'"' {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    out.push(text[i + 1..j.min(b.len())].to_owned());
                    i = j + 1;
                }
                _ => i += 1,
            }
        }
        out
    }

    /// Every string literal of `text` shaped like an AWS operation (`VerbNoun...`).
    fn operations(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for piece in literals(text) {
            if piece.is_empty() || !piece.chars().all(|c| c.is_ascii_alphanumeric()) {
                continue;
            }
            let shaped = VERBS.iter().any(|v| {
                piece
                    .strip_prefix(v)
                    .and_then(|rest| rest.chars().next())
                    .is_some_and(|c| c.is_ascii_uppercase())
            });
            if shaped && !NOT_CALLS.contains(&piece.as_str()) {
                out.push(piece);
            }
        }
        out
    }

    /// The backend's modules that send requests (`classify` holds error codes, not calls).
    const SOURCES: &[(&str, &str)] = &[
        ("asg.rs", include_str!("asg.rs")),
        ("backend.rs", include_str!("backend.rs")),
        ("ec2.rs", include_str!("ec2.rs")),
        ("elb.rs", include_str!("elb.rs")),
        ("iam.rs", include_str!("iam.rs")),
        ("members.rs", include_str!("members.rs")),
        ("misc.rs", include_str!("misc.rs")),
    ];

    #[test]
    fn every_call_the_backend_sends_has_its_permissions() {
        let mut sent = std::collections::BTreeSet::new();
        for (file, text) in SOURCES {
            for op in operations(text) {
                assert!(
                    CALLS.iter().any(|c| c.operation == op),
                    "{file}: the backend sends {op}, which the permissions table (permissions.rs) lacks"
                );
                sent.insert(op);
            }
        }
        for c in CALLS {
            assert!(
                c.operation.starts_with('(') || sent.contains(c.operation),
                "the permissions table lists {}, which no call sends",
                c.operation
            );
        }
    }

    #[test]
    fn every_call_the_state_store_sends_has_its_permissions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../kops-statestore/src/s3.rs");
        let Ok(text) = std::fs::read_to_string(path) else {
            // A packaged crate has no workspace beside it.
            return;
        };
        let snake = |op: &str| {
            let mut s = String::new();
            for (i, ch) in op.chars().enumerate() {
                if ch.is_ascii_uppercase() {
                    if i > 0 {
                        s.push('_');
                    }
                    s.push(ch.to_ascii_lowercase());
                } else {
                    s.push(ch);
                }
            }
            s
        };
        // An SDK request: `.<operation>()` followed by `.bucket(`.
        let mut sent = std::collections::BTreeSet::new();
        for (i, _) in text.match_indices("()") {
            if !text[i + 2..].trim_start().starts_with(".bucket(") {
                continue;
            }
            let start = text[..i]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            sent.insert(text[start..i].to_owned());
        }
        assert!(sent.contains("get_object"), "no S3 request found in {path}");
        for op in &sent {
            assert!(
                // Creating the bucket is for tests and bootstrapping, not an operator's.
                STATE_CALLS.iter().any(|c| snake(c.operation) == *op) || op == "create_bucket",
                "the S3 state store calls {op}, which the permissions table lacks"
            );
        }
    }

    #[test]
    fn commands_get_what_they_need_and_no_more() {
        let only = |c: OperatorCommand| operator_actions(&PolicyOptions::new().with_commands([c]));
        let validate = only(OperatorCommand::Validate);
        assert!(validate.contains(&"ec2:DescribeInstances"));
        assert!(
            !validate
                .iter()
                .any(|a| a.contains(":Create") || a.contains(":Delete"))
        );
        let roll = only(OperatorCommand::RollingUpdate);
        assert!(roll.contains(&"ec2:TerminateInstances"));
        assert!(!roll.contains(&"ec2:CreateVpc"));
        let delete = only(OperatorCommand::Delete);
        assert!(delete.contains(&"ec2:DeleteVpc") && !delete.contains(&"ec2:CreateVpc"));
        let all = operator_actions(&PolicyOptions::new());
        assert!(all.contains(&"iam:PassRole") && all.contains(&"ec2:RunInstances"));
    }

    #[test]
    fn policies_fit_what_aws_accepts() {
        for options in [
            PolicyOptions::new(),
            PolicyOptions::new()
                .with_cluster("a-rather-long-cluster-name.platform.example.com")
                .with_state_store("state-bucket", "clusters/production"),
        ] {
            let docs = operator_policies(&options);
            for d in &docs {
                assert!(size(d) <= MAX_POLICY_CHARS, "{} chars", size(d));
            }
            // Together they grant what the one document does.
            let all: usize = docs
                .iter()
                .map(|d| d["Statement"].as_array().unwrap().len())
                .sum();
            assert_eq!(
                all,
                operator_policy(&options)["Statement"]
                    .as_array()
                    .unwrap()
                    .len()
            );
        }
    }

    #[test]
    fn one_cluster_scopes_what_aws_can_scope() {
        let policy = operator_policy(
            &PolicyOptions::new()
                .with_cluster("a.example.com")
                .with_state_store("state", "clusters"),
        );
        let text = policy.to_string();
        for want in [
            "arn:aws:s3:::state/clusters/a.example.com/*",
            "arn:aws:iam::*:role/*.a.example.com",
            "arn:aws:iam::*:instance-profile/*.a.example.com",
            "\"aws:ResourceTag/KubernetesCluster\":\"a.example.com\"",
            "arn:aws:sqs:*:*:a-example-com-nth",
        ] {
            assert!(text.contains(want), "{want}: {policy:#}");
        }
        // Without a cluster: no condition, every bucket's objects of the state store.
        let any = operator_policy(&PolicyOptions::new().with_state_store("state", ""));
        assert!(!any.to_string().contains("Condition"));
        assert!(any.to_string().contains("arn:aws:s3:::state/*"));
    }
}
