//! The IAM builder (kOps' `awsmodel/iam.go`, policies as in `pkg/model/iam`): roles,
//! instance profiles, inline policies generated from rules, managed-policy attachments and
//! the OIDC provider.

use std::collections::{BTreeMap, BTreeSet};

use kops_api::internal::{ClusterSpec, InstanceGroupRole};
use kops_tasks::TaskKey;
use kops_tasks::terraform::Expr;
use serde_json::{Value as Json, json};

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::naming::fnv32;
use crate::aws::task::{Attr, FindBy};
use crate::error::Result;

/// A policy document: its statements in order, each as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Policy {
    statements: Vec<Json>,
}

impl Policy {
    /// Adds a statement exactly as written.
    pub(crate) fn push(&mut self, statement: Json) {
        self.statements.push(statement);
    }

    /// Whether the policy has no statement.
    pub(crate) fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// The JSON document, pretty-printed with two-space indentation.
    pub(crate) fn to_json(&self) -> String {
        let doc = json!({ "Statement": self.statements, "Version": "2012-10-17" });
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }
}

/// The EC2 assume-role policy kOps writes for instance roles.
pub(crate) fn ec2_assume_role_policy() -> String {
    "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {\n      \"Effect\": \"Allow\",\n      \"Principal\": { \"Service\": \"ec2.amazonaws.com\"},\n      \"Action\": \"sts:AssumeRole\"\n    }\n  ]\n}\n".to_owned()
}

/// The S3 location of a store URL as IAM sees it (`bucket/key`): in-memory and file
/// stores stand in with kOps' placeholder buckets.
fn iam_s3_path(url: &str, write: bool) -> (String, String) {
    let url = url.trim_end_matches('/');
    if let Some(rest) = url.strip_prefix("s3://") {
        let bucket = rest.split('/').next().unwrap_or_default().to_owned();
        return (bucket, rest.to_owned());
    }
    let placeholder = if write && url.starts_with("memfs://") {
        "placeholder-write-bucket"
    } else {
        "placeholder-read-bucket"
    };
    let location = url.split_once("://").map_or(url, |(_, r)| r);
    (placeholder.to_owned(), format!("{placeholder}/{location}"))
}

/// Actions collected by kind, rendered as kOps renders a policy: statements as written,
/// then the KMS grant and data-plane statements, then actions on every resource, on the
/// cluster's tagged resources, and on resources created with the cluster's tag.
#[derive(Default)]
struct PolicyParts {
    written: Vec<Json>,
    kms_grant: bool,
    kms_data: BTreeSet<&'static str>,
    any: BTreeSet<&'static str>,
    tagged: BTreeSet<&'static str>,
    tagged_create: BTreeSet<&'static str>,
}

impl PolicyParts {
    /// kOps' EC2 create actions: tagging at creation and later tag changes on the
    /// cluster's own resources of these types.
    fn ec2_create(
        &mut self,
        partition: &str,
        cluster: &str,
        actions: &[&'static str],
        types: &[&str],
    ) {
        let mut sorted: Vec<String> = types
            .iter()
            .map(|t| format!("arn:{partition}:ec2:*:*:{t}/*"))
            .collect();
        sorted.sort();
        for a in actions {
            self.tagged_create.insert(match *a {
                "CopyVolumes" => "ec2:CopyVolumes",
                "CreateVolume" => "ec2:CreateVolume",
                "CreateSnapshot" => "ec2:CreateSnapshot",
                _ => "ec2:CreateSecurityGroup",
            });
        }
        self.written.push(json!({
            "Action": "ec2:CreateTags",
            "Condition": {"StringEquals": {
                "aws:RequestTag/KubernetesCluster": cluster,
                "ec2:CreateAction": actions,
            }},
            "Effect": "Allow",
            "Resource": sorted,
        }));
        self.written.push(json!({
            "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
            "Condition": {
                "Null": {"aws:RequestTag/KubernetesCluster": "true"},
                "StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster},
            },
            "Effect": "Allow",
            "Resource": sorted,
        }));
    }

    fn kms(&mut self, direct: bool) {
        const DATA: [&str; 5] = [
            "kms:Decrypt",
            "kms:DescribeKey",
            "kms:Encrypt",
            "kms:GenerateDataKey*",
            "kms:ReEncrypt*",
        ];
        self.kms_grant = true;
        if direct {
            self.any.extend(DATA);
        } else {
            self.kms_data.extend(DATA);
        }
    }

    fn into_policy(self, partition: &str, cluster: &str, region: &str) -> Policy {
        let one_or_list = |set: &BTreeSet<&str>| -> Json {
            if set.len() == 1 {
                json!(set.iter().next())
            } else {
                json!(set.iter().collect::<Vec<_>>())
            }
        };
        let mut pol = Policy::default();
        for w in self.written {
            pol.push(w);
        }
        if self.kms_grant {
            pol.push(json!({
                "Action": "kms:CreateGrant",
                "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
                "Effect": "Allow",
                "Resource": "*",
            }));
        }
        if !self.kms_data.is_empty() {
            pol.push(json!({
                "Action": one_or_list(&self.kms_data),
                "Condition": {"StringLike": {"kms:ViaService": [
                    format!("ec2.{region}.amazonaws.com"),
                    "s3.*.amazonaws.com",
                ]}},
                "Effect": "Allow",
                "Resource": "*",
            }));
        }
        if !self.any.is_empty() {
            pol.push(json!({"Action": one_or_list(&self.any), "Effect": "Allow", "Resource": "*"}));
        }
        if !self.tagged.is_empty() {
            pol.push(json!({
                "Action": one_or_list(&self.tagged),
                "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster}},
                "Effect": "Allow",
                "Resource": "*",
            }));
        }
        if !self.tagged_create.is_empty() {
            pol.push(json!({
                "Action": one_or_list(&self.tagged_create),
                "Condition": {"StringEquals": {"aws:RequestTag/KubernetesCluster": cluster}},
                "Effect": "Allow",
                "Resource": "*",
            }));
            if self.tagged_create.contains("ec2:CreateSecurityGroup") {
                pol.push(json!({
                    "Action": "ec2:CreateSecurityGroup",
                    "Effect": "Allow",
                    "Resource": format!("arn:{partition}:ec2:*:*:vpc/*"),
                }));
            }
        }
        pol
    }
}

/// dns-controller: changes to the cluster's hosted zone.
fn dns_controller_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    if let Some(zone) = ctx.dns_zone.as_ref().filter(|_| !ctx.dns_none()) {
        let id = zone
            .id
            .trim_start_matches('/')
            .trim_start_matches("hostedzone/");
        p.written.push(json!({
            "Action": [
                "route53:ChangeResourceRecordSets",
                "route53:GetHostedZone",
                "route53:ListResourceRecordSets",
            ],
            "Effect": "Allow",
            "Resource": [format!("arn:{partition}:route53:::hostedzone/{id}")],
        }));
        p.written.push(json!({
            "Action": ["route53:GetChange"],
            "Effect": "Allow",
            "Resource": [format!("arn:{partition}:route53:::change/*")],
        }));
        p.written.push(json!({
            "Action": ["route53:ListHostedZones", "route53:ListTagsForResource"],
            "Effect": "Allow",
            "Resource": ["*"],
        }));
    }
}

/// The EBS CSI driver: volumes, and snapshots when the snapshot controller runs.
fn ebs_csi_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let cluster = ctx.name();
    let spec = &ctx.cluster.spec;
    p.kms(false);
    let snapshots = spec.snapshot_controller.as_ref().and_then(|s| s.enabled) == Some(true);
    if snapshots {
        p.any.extend([
            "ec2:CreateSnapshot",
            "ec2:DescribeAvailabilityZones",
            "ec2:DescribeSnapshots",
        ]);
        p.tagged
            .extend(["ec2:DeleteSnapshot", "ec2:EnableFastSnapshotRestores"]);
        p.ec2_create(
            partition,
            cluster,
            &["CreateSnapshot"],
            &["volume", "snapshot"],
        );
        p.written.push(json!({
            "Action": "ec2:CreateVolume",
            "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster}},
            "Effect": "Allow",
            "Resource": [format!("arn:{partition}:ec2:*:*:snapshot/*")],
        }));
    }
    p.any.extend([
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeInstances",
        "ec2:DescribeTags",
        "ec2:DescribeVolumeStatus",
        "ec2:DescribeVolumes",
        "ec2:DescribeVolumesModifications",
    ]);
    p.tagged.extend([
        "ec2:AttachVolume",
        "ec2:DeleteVolume",
        "ec2:DetachVolume",
        "ec2:ModifyVolume",
    ]);
    p.ec2_create(
        partition,
        cluster,
        &["CopyVolumes", "CreateVolume"],
        &["volume", "snapshot"],
    );
}

/// The AWS cloud controller manager: instances, routes and load balancers.
fn ccm_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let cluster = ctx.name();
    let spec = &ctx.cluster.spec;
    let net = &ctx.cluster.spec.networking;
    p.any.extend([
        "autoscaling:DescribeAutoScalingGroups",
        "autoscaling:DescribeTags",
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeInstanceTopology",
        "ec2:DescribeInstances",
        "ec2:DescribeRegions",
        "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSubnets",
        "ec2:DescribeVpcs",
        "elasticloadbalancing:DescribeListeners",
        "elasticloadbalancing:DescribeLoadBalancerAttributes",
        "elasticloadbalancing:DescribeLoadBalancerPolicies",
        "elasticloadbalancing:DescribeLoadBalancers",
        "elasticloadbalancing:DescribeTargetGroupAttributes",
        "elasticloadbalancing:DescribeTargetGroups",
        "elasticloadbalancing:DescribeTargetHealth",
        "iam:CreateServiceLinkedRole",
        "kms:DescribeKey",
    ]);
    p.tagged.extend([
        "ec2:AuthorizeSecurityGroupIngress",
        "ec2:DeleteSecurityGroup",
        "ec2:ModifyInstanceAttribute",
        "ec2:RevokeSecurityGroupIngress",
        "elasticloadbalancing:AddTags",
        "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer",
        "elasticloadbalancing:AttachLoadBalancerToSubnets",
        "elasticloadbalancing:ConfigureHealthCheck",
        "elasticloadbalancing:CreateLoadBalancerListeners",
        "elasticloadbalancing:CreateLoadBalancerPolicy",
        "elasticloadbalancing:DeleteListener",
        "elasticloadbalancing:DeleteLoadBalancer",
        "elasticloadbalancing:DeleteLoadBalancerListeners",
        "elasticloadbalancing:DeleteTargetGroup",
        "elasticloadbalancing:DeregisterInstancesFromLoadBalancer",
        "elasticloadbalancing:DeregisterTargets",
        "elasticloadbalancing:DetachLoadBalancerFromSubnets",
        "elasticloadbalancing:ModifyListener",
        "elasticloadbalancing:ModifyLoadBalancerAttributes",
        "elasticloadbalancing:ModifyTargetGroup",
        "elasticloadbalancing:ModifyTargetGroupAttributes",
        "elasticloadbalancing:RegisterInstancesWithLoadBalancer",
        "elasticloadbalancing:RegisterTargets",
        "elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer",
        "elasticloadbalancing:SetLoadBalancerPoliciesOfListener",
    ]);
    let nlb_sg_managed = spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.nlb_security_group_mode.as_deref())
        == Some("Managed");
    if nlb_sg_managed {
        p.tagged.insert("elasticloadbalancing:SetSecurityGroups");
    }
    p.tagged_create.extend([
        "elasticloadbalancing:CreateListener",
        "elasticloadbalancing:CreateLoadBalancer",
        "elasticloadbalancing:CreateTargetGroup",
    ]);
    p.ec2_create(
        partition,
        cluster,
        &["CreateSecurityGroup"],
        &["security-group"],
    );
    if net.kubenet.is_some() {
        p.tagged.extend(["ec2:CreateRoute", "ec2:DeleteRoute"]);
    }
}

/// The AWS load balancer controller, when enabled.
fn lb_controller_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let cluster = ctx.name();
    let spec = &ctx.cluster.spec;
    if let Some(lbc) = spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.load_balancer_controller.as_ref())
        .filter(|l| l.enabled == Some(true))
    {
        p.any.extend([
            "acm:DescribeCertificate",
            "acm:ListCertificates",
            "cognito-idp:DescribeUserPoolClient",
            "ec2:DescribeAccountAttributes",
            "ec2:DescribeAvailabilityZones",
            "ec2:DescribeInstances",
            "ec2:DescribeInternetGateways",
            "ec2:DescribeNetworkInterfaces",
            "ec2:DescribeSecurityGroups",
            "ec2:DescribeSubnets",
            "ec2:DescribeVpcPeeringConnections",
            "ec2:DescribeVpcs",
            "ec2:GetSecurityGroupsForVpc",
            "elasticloadbalancing:DescribeCapacityReservation",
            "elasticloadbalancing:DescribeListenerAttributes",
            "elasticloadbalancing:DescribeListenerCertificates",
            "elasticloadbalancing:DescribeListeners",
            "elasticloadbalancing:DescribeLoadBalancerAttributes",
            "elasticloadbalancing:DescribeLoadBalancers",
            "elasticloadbalancing:DescribeRules",
            "elasticloadbalancing:DescribeTags",
            "elasticloadbalancing:DescribeTargetGroupAttributes",
            "elasticloadbalancing:DescribeTargetGroups",
            "elasticloadbalancing:DescribeTargetHealth",
            "elasticloadbalancing:DescribeTrustStores",
            "elasticloadbalancing:SetRulePriorities",
        ]);
        if lbc.enable_waf == Some(true) {
            p.any.extend([
                "elasticloadbalancing:SetWebACL",
                "waf-regional:AssociateWebACL",
                "waf-regional:DisassociateWebACL",
                "waf-regional:GetWebACL",
                "waf-regional:GetWebACLForResource",
            ]);
        }
        if lbc.enable_wa_fv2 == Some(true) {
            p.any.extend([
                "elasticloadbalancing:SetWebACL",
                "wafv2:AssociateWebACL",
                "wafv2:DisassociateWebACL",
                "wafv2:GetWebACL",
                "wafv2:GetWebACLForResource",
            ]);
        }
        if lbc.enable_shield == Some(true) {
            p.any.extend([
                "shield:CreateProtection",
                "shield:DeleteProtection",
                "shield:DescribeProtection",
                "shield:GetSubscriptionState",
            ]);
        }
        p.tagged.extend([
            "ec2:AuthorizeSecurityGroupIngress",
            "ec2:DeleteSecurityGroup",
            "ec2:RevokeSecurityGroupIngress",
            "elasticloadbalancing:AddListenerCertificates",
            "elasticloadbalancing:AddTags",
            "elasticloadbalancing:DeleteListener",
            "elasticloadbalancing:DeleteLoadBalancer",
            "elasticloadbalancing:DeleteRule",
            "elasticloadbalancing:DeleteTargetGroup",
            "elasticloadbalancing:DeregisterTargets",
            "elasticloadbalancing:ModifyCapacityReservation",
            "elasticloadbalancing:ModifyListener",
            "elasticloadbalancing:ModifyListenerAttributes",
            "elasticloadbalancing:ModifyLoadBalancerAttributes",
            "elasticloadbalancing:ModifyRule",
            "elasticloadbalancing:ModifyTargetGroup",
            "elasticloadbalancing:ModifyTargetGroupAttributes",
            "elasticloadbalancing:RegisterTargets",
            "elasticloadbalancing:RemoveListenerCertificates",
            "elasticloadbalancing:RemoveTags",
            "elasticloadbalancing:SetIpAddressType",
            "elasticloadbalancing:SetSecurityGroups",
            "elasticloadbalancing:SetSubnets",
        ]);
        p.tagged_create.extend([
            "elasticloadbalancing:CreateListener",
            "elasticloadbalancing:CreateLoadBalancer",
            "elasticloadbalancing:CreateRule",
            "elasticloadbalancing:CreateTargetGroup",
        ]);
        // kOps adds the security-group tagging statements a second time here.
        p.ec2_create(
            partition,
            cluster,
            &["CreateSecurityGroup"],
            &["security-group"],
        );
    }
}

/// The cluster autoscaler: scaling the cluster's groups.
fn cluster_autoscaler_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let spec = &ctx.cluster.spec;
    p.tagged.extend([
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup",
    ]);
    p.any.extend([
        "autoscaling:DescribeAutoScalingGroups",
        "autoscaling:DescribeAutoScalingInstances",
        "autoscaling:DescribeLaunchConfigurations",
        "autoscaling:DescribeScalingActivities",
        "ec2:DescribeImages",
        "ec2:DescribeLaunchTemplateVersions",
        "ec2:GetInstanceTypesFromInstanceRequirements",
    ]);
    let static_list = spec
        .cluster_autoscaler
        .as_ref()
        .and_then(|c| c.aws_use_static_instance_list)
        == Some(true);
    if !static_list {
        p.any.insert("ec2:DescribeInstanceTypes");
    }
}

/// The EC2 service principal of a region's partition (the EC2 endpoint's host without
/// the region: `ec2.amazonaws.com`, `ec2.amazonaws.com.cn`, ...).
fn ec2_service(region: &str) -> &'static str {
    let partition_of = |prefix: &str| region.starts_with(prefix);
    if partition_of("cn-") {
        "ec2.amazonaws.com.cn"
    } else if partition_of("us-isob-") {
        "ec2.sc2s.sgov.gov"
    } else if partition_of("us-isof-") {
        "ec2.csp.hci.ic.gov"
    } else if partition_of("us-iso-") {
        "ec2.c2s.ic.gov"
    } else if partition_of("eu-isoe-") {
        "ec2.cloud.adc-e.uk"
    } else {
        "ec2.amazonaws.com"
    }
}

/// Karpenter: launching, tagging and terminating the instances (and their launch
/// templates, fleets, volumes, interfaces) of its node pools, scoped to resources tagged
/// for this cluster and a node pool; passing the node role to EC2; the read actions it
/// plans with. With a Karpenter group on a customer-managed root-volume key, that key's
/// use through EC2; with a custom instance profile on one, any role may be passed.
fn karpenter_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let cluster = ctx.name();
    let groups: Vec<_> = ctx
        .groups
        .iter()
        .filter(|g| crate::cluster::ClusterContext::is_karpenter(g))
        .collect();
    let custom_profiles = groups
        .iter()
        .any(|g| g.spec.iam.as_ref().is_some_and(|i| i.profile.is_some()));
    let customer_keys = groups.iter().any(|g| {
        g.spec.root_volume.as_ref().is_some_and(|rv| {
            rv.encryption == Some(true)
                && rv.encryption_key.as_deref().is_some_and(|k| !k.is_empty())
        })
    });
    if customer_keys {
        p.kms(false);
    }
    p.any.extend([
        "ec2:DescribeCapacityReservations",
        "ec2:DescribeImages",
        "ec2:DescribeInstanceStatus",
        "ec2:DescribeInstanceTypeOfferings",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeInstances",
        "ec2:DescribeLaunchTemplates",
        "ec2:DescribePlacementGroups",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSpotPriceHistory",
        "ec2:DescribeSubnets",
        "iam:GetInstanceProfile",
        "iam:ListInstanceProfiles",
        "pricing:GetProducts",
        "ssm:GetParameter",
    ]);
    let arns = |kinds: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = kinds
            .iter()
            .map(|k| match *k {
                "image" | "snapshot" => format!("arn:{partition}:ec2:*::{k}/*"),
                _ => format!("arn:{partition}:ec2:*:*:{k}/*"),
            })
            .collect();
        v.sort();
        v
    };
    let created = arns(&[
        "fleet",
        "instance",
        "launch-template",
        "network-interface",
        "spot-instances-request",
        "volume",
    ]);
    let owned = json!({
        "StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster},
        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
    });
    let node_role = crate::aws::naming::truncate(&format!("nodes.{cluster}"), 64, false);
    let pass_role = if custom_profiles {
        format!("arn:{partition}:iam::*:role/*")
    } else {
        format!("arn:{partition}:iam::*:role/{node_role}")
    };
    p.written.extend([
        json!({
            "Action": ["ec2:CreateFleet", "ec2:RunInstances"],
            "Effect": "Allow",
            "Resource": arns(&["capacity-reservation", "image", "snapshot", "security-group", "subnet"]),
        }),
        json!({
            "Action": ["ec2:CreateFleet", "ec2:RunInstances"],
            "Condition": owned,
            "Effect": "Allow",
            "Resource": arns(&["launch-template"]),
        }),
        json!({
            "Action": ["ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:RunInstances"],
            "Condition": {
                "StringEquals": {"aws:RequestTag/KubernetesCluster": cluster},
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
            "Effect": "Allow",
            "Resource": created,
        }),
        json!({
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {
                    "aws:RequestTag/KubernetesCluster": cluster,
                    "ec2:CreateAction": ["CreateFleet", "CreateLaunchTemplate", "RunInstances"],
                },
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
            "Effect": "Allow",
            "Resource": created,
        }),
        json!({
            "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
            "Condition": {
                "Null": {"aws:RequestTag/KubernetesCluster": "true"},
                "StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster},
                "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
            },
            "Effect": "Allow",
            "Resource": created,
        }),
        json!({
            "Action": ["ec2:DeleteLaunchTemplate", "ec2:TerminateInstances"],
            "Condition": owned,
            "Effect": "Allow",
            "Resource": arns(&["instance", "launch-template"]),
        }),
        json!({
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": ec2_service(&ctx.region)}},
            "Effect": "Allow",
            "Resource": pass_role,
        }),
    ]);
}

/// node-termination-handler in queue mode: the queue and lifecycle hooks.
fn nth_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    if ctx.nth_queue_mode() {
        nth_sqs_permissions(p);
    }
}

/// The node-termination-handler's queue and lifecycle-hook permissions.
fn nth_sqs_permissions(p: &mut PolicyParts) {
    p.any.extend([
        "autoscaling:DescribeAutoScalingInstances",
        "autoscaling:DescribeTags",
        "ec2:DescribeInstances",
        "sqs:DeleteMessage",
        "sqs:ReceiveMessage",
    ]);
    p.tagged.insert("autoscaling:CompleteLifecycleAction");
}

/// The control-plane policy, as kOps builds it for the masters role: etcd-manager,
/// kops-controller and nodeup, the state store, KMS, and (unless service accounts carry
/// their own permissions) dns-controller, the EBS CSI driver, the cloud controller
/// manager, the cluster autoscaler and the node-termination-handler queue; then the CNI's.
/// kOps' `AddS3Permissions`: read below the cluster's state-store roots and, with
/// `write_backups` (the control plane's etcd-manager), write the etcd backup stores; then
/// the bucket-level reads of every bucket named.
fn state_store_permissions(ctx: &ModelContext, p: &mut PolicyParts, write_backups: bool) {
    let partition = ctx.account.partition.as_str();
    let spec = &ctx.cluster.spec;
    let store = &spec.config_store;
    let mut locations: Vec<String> = [&store.keypairs, &store.secrets, &store.base]
        .into_iter()
        .flatten()
        .filter(|l| !l.is_empty())
        .map(|l| format!("{}/", l.trim_end_matches('/')))
        .collect();
    locations.dedup();
    let mut roots: Vec<String> = locations
        .iter()
        .enumerate()
        .filter(|(i, l)| {
            !locations
                .iter()
                .enumerate()
                .any(|(j, other)| *i != j && l.starts_with(other.as_str()) && *l != other)
        })
        .map(|(_, l)| l.clone())
        .collect();
    roots.sort();
    roots.dedup();
    let mut buckets: BTreeSet<String> = BTreeSet::new();
    for root in &roots {
        let (bucket, path) = iam_s3_path(root, false);
        buckets.insert(bucket);
        p.written.push(json!({
            "Action": ["s3:Get*"],
            "Effect": "Allow",
            "Resource": format!("arn:{partition}:s3:::{path}/*"),
        }));
    }
    let mut stores: Vec<String> = Vec::new();
    for e in spec
        .etcd_clusters
        .iter()
        .flatten()
        .filter(|_| write_backups)
    {
        if let Some(b) = e.backups.as_ref().and_then(|b| b.backup_store.clone())
            && !b.is_empty()
            && !stores.contains(&b)
        {
            stores.push(b);
        }
    }
    for st in &stores {
        let (bucket, path) = iam_s3_path(st, true);
        buckets.insert(bucket);
        p.written.push(json!({
            "Action": ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:GetObject", "s3:PutObject"],
            "Effect": "Allow",
            "Resource": format!("arn:{partition}:s3:::{path}/*"),
        }));
    }
    for b in &buckets {
        p.written.push(json!({
            "Action": [
                "s3:GetBucketLocation",
                "s3:GetEncryptionConfiguration",
                "s3:ListBucket",
                "s3:ListBucketVersions",
            ],
            "Effect": "Allow",
            "Resource": [format!("arn:{partition}:s3:::{b}")],
        }));
    }
}

/// Whether Cilium allocates pod addresses from ENIs.
fn cilium_eni(ctx: &ModelContext) -> bool {
    ctx.cluster
        .spec
        .networking
        .cilium
        .as_ref()
        .and_then(|c| c.ipam.as_deref())
        .is_some_and(|i| i.eq_ignore_ascii_case("eni"))
}

/// What nodeup calls on every instance of `role` (kOps' `addNodeupPermissions`): the
/// warm-pool lifecycle hooks with `hooks`, instance types for GPU or ENI sizing, IPv6
/// addresses when kops-controller allocates them.
fn nodeup_permissions(
    ctx: &ModelContext,
    role: &InstanceGroupRole,
    p: &mut PolicyParts,
    hooks: bool,
) {
    if hooks {
        p.tagged.insert("autoscaling:CompleteLifecycleAction");
        p.any.insert("autoscaling:DescribeLifecycleHooks");
    }
    if nvidia_gpu(ctx, role) || ctx.cluster.spec.networking.amazonvpc.is_some() || cilium_eni(ctx) {
        p.any.insert("ec2:DescribeInstanceTypes");
    }
    if ctx.is_ipv6_only() {
        p.any.insert("ec2:AssignIpv6Addresses");
    }
}

/// The container registry and the CNI's calls from instances of `role`: ECR, the Amazon
/// VPC CNI, Cilium's ENI IPAM (control plane and API servers), Calico's and kindnet's
/// source/destination check, kube-router's (nodes).
fn registry_and_cni_permissions(ctx: &ModelContext, role: &InstanceGroupRole, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let spec = &ctx.cluster.spec;
    let net = &spec.networking;
    let is_node = matches!(role, InstanceGroupRole::Node);
    p.any.extend(ecr_actions(spec));
    if net.amazonvpc.is_some() {
        p.any.extend(AMAZON_VPC_CNI_ACTIONS);
        p.written.push(json!({
            "Action": ["ec2:CreateTags"],
            "Effect": "Allow",
            "Resource": [format!("arn:{partition}:ec2:*:*:network-interface/*")],
        }));
    }
    if cilium_eni(ctx) && !is_node {
        p.any.extend([
            "ec2:AssignPrivateIpAddresses",
            "ec2:AttachNetworkInterface",
            "ec2:CreateNetworkInterface",
            "ec2:CreateTags",
            "ec2:DeleteNetworkInterface",
            "ec2:DescribeInstances",
            "ec2:DescribeNetworkInterfaces",
            "ec2:DescribeRouteTables",
            "ec2:DescribeSecurityGroups",
            "ec2:DescribeSubnets",
            "ec2:DescribeTags",
            "ec2:DescribeVpcs",
            "ec2:ModifyNetworkInterfaceAttribute",
            "ec2:UnassignPrivateIpAddresses",
        ]);
    }
    let calico_src_dst = net
        .calico
        .as_ref()
        .is_some_and(|c| c.aws_src_dst_check.as_deref() != Some("DoNothing"));
    if calico_src_dst && !ctx.is_ipv6_only() {
        p.any.extend([
            "ec2:DescribeInstances",
            "ec2:ModifyNetworkInterfaceAttribute",
        ]);
    }
    if net.kindnet.is_some() || (is_node && net.kuberouter.is_some()) {
        p.tagged.insert("ec2:ModifyInstanceAttribute");
    }
}

pub(crate) fn control_plane_policy(ctx: &ModelContext) -> Policy {
    let partition = ctx.account.partition.as_str();
    let cluster = ctx.name();
    let spec = &ctx.cluster.spec;
    let mut p = PolicyParts::default();

    // etcd-manager
    p.any
        .extend(["ec2:DescribeInstances", "ec2:DescribeVolumes"]);
    p.written.push(json!({
        "Action": "ec2:AttachVolume",
        "Condition": {"StringEquals": {
            "aws:ResourceTag/KubernetesCluster": cluster,
            "aws:ResourceTag/k8s.io/role/master": "1",
        }},
        "Effect": "Allow",
        "Resource": ["*"],
    }));
    // kops-controller
    p.any.insert("ec2:DescribeInstances");
    nodeup_permissions(ctx, &InstanceGroupRole::ControlPlane, &mut p, false);
    // kops-controller's IPv6 prefix allocation
    if ctx.is_ipv6_only() {
        p.any.insert("ec2:DescribeNetworkInterfaces");
    }

    state_store_permissions(ctx, &mut p, true);
    p.kms(spec.encryption_config == Some(true));

    let external = spec
        .iam
        .as_ref()
        .and_then(|i| i.use_service_account_external_permissions)
        == Some(true);
    if !external {
        dns_controller_permissions(ctx, &mut p);
        ebs_csi_permissions(ctx, &mut p);
        ccm_permissions(ctx, &mut p);
        lb_controller_permissions(ctx, &mut p);
        cluster_autoscaler_permissions(ctx, &mut p);
        nth_permissions(ctx, &mut p);
    }

    registry_and_cni_permissions(ctx, &InstanceGroupRole::ControlPlane, &mut p);
    p.into_policy(partition, cluster, &ctx.region)
}

/// Whether Nvidia GPU support is on for the cluster or for some instance group of `role`
/// (all groups of a role share one IAM role, so one group is enough).
fn nvidia_gpu(ctx: &ModelContext, role: &InstanceGroupRole) -> bool {
    let on = |c: Option<&kops_api::v1alpha2::ContainerdConfig>| {
        c.and_then(|c| c.nvidia_gpu.as_ref())
            .and_then(|n| n.enabled)
            .unwrap_or(false)
    };
    on(ctx.cluster.spec.containerd.as_ref())
        || ctx
            .groups_with(role)
            .any(|g| on(g.spec.containerd.as_ref()))
}

/// Whether some instance group runs warm-pool lifecycle hooks.
fn warm_pool_hooks(ctx: &ModelContext) -> bool {
    let cluster_default = ctx
        .cluster
        .spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.warm_pool.as_ref());
    ctx.groups.iter().any(|g| {
        g.spec
            .warm_pool
            .as_ref()
            .or(cluster_default)
            .is_some_and(|w| w.enable_lifecycle_hook == Some(true))
    })
}

/// The policy of dedicated API-server nodes (kOps' `NodeRoleAPIServer`): nodeup's calls,
/// the state store read below its roots, KMS (direct with an encryption config, as the
/// API server may run a KMS plugin), the registry and the CNI.
pub(crate) fn api_server_policy(ctx: &ModelContext) -> Policy {
    let spec = &ctx.cluster.spec;
    let mut p = PolicyParts::default();
    nodeup_permissions(
        ctx,
        &InstanceGroupRole::ApiServer,
        &mut p,
        warm_pool_hooks(ctx),
    );
    state_store_permissions(ctx, &mut p, false);
    p.kms(spec.encryption_config == Some(true));
    registry_and_cni_permissions(ctx, &InstanceGroupRole::ApiServer, &mut p);
    p.into_policy(ctx.account.partition.as_str(), ctx.name(), &ctx.region)
}

/// The node policy; empty unless the spec needs node permissions.
pub(crate) fn node_policy(ctx: &ModelContext) -> Policy {
    let mut p = PolicyParts::default();
    nodeup_permissions(ctx, &InstanceGroupRole::Node, &mut p, warm_pool_hooks(ctx));
    registry_and_cni_permissions(ctx, &InstanceGroupRole::Node, &mut p);
    p.into_policy(ctx.account.partition.as_str(), ctx.name(), &ctx.region)
}

/// The roles used by the cluster's groups (control plane, nodes, bastions, API servers),
/// with whether every group of the role uses an existing instance profile.
fn roles_in_use(ctx: &ModelContext) -> BTreeMap<&'static str, (InstanceGroupRole, Option<String>)> {
    let mut out = BTreeMap::new();
    for g in &ctx.groups {
        let Some(role) = g.spec.role.clone() else {
            continue;
        };
        if matches!(role, InstanceGroupRole::Unknown(_)) {
            continue;
        }
        let prefix = crate::cluster::ClusterContext::iam_role_prefix(&role);
        let profile = g.spec.iam.as_ref().and_then(|i| i.profile.clone());
        out.entry(prefix).or_insert((role, profile));
    }
    out
}

/// The name of an instance role and profile: `<prefix>.<cluster>`, cut to IAM's 64
/// characters with a hash when longer.
pub(crate) fn instance_role_name(ctx: &ModelContext, prefix: &str) -> String {
    crate::aws::naming::truncate(&ctx.scoped(prefix), 64, false)
}

/// The key of the instance-profile task of a role.
pub(crate) fn instance_profile_key(ctx: &ModelContext, role: &InstanceGroupRole) -> TaskKey {
    TaskKey::new(
        "IAMInstanceProfile",
        instance_role_name(ctx, crate::cluster::ClusterContext::iam_role_prefix(role)),
    )
}

/// The OIDC issuer host and path (`discovery.example.com/cluster`), when IRSA is on.
fn oidc_issuer(ctx: &ModelContext) -> Option<String> {
    let sad = ctx.cluster.spec.service_account_issuer_discovery.as_ref()?;
    if sad.enable_awsoidc_provider != Some(true) {
        return None;
    }
    let issuer = ctx
        .cluster
        .spec
        .kube_api_server
        .as_ref()
        .and_then(|k| k.service_account_issuer.clone())
        .or_else(|| {
            sad.discovery_store
                .as_deref()
                .and_then(|s| super::files::store_prefix(s).ok())
        })?;
    Some(issuer.trim_start_matches("https://").to_owned())
}

/// The IAM role of a Kubernetes service account (IRSA): `<sa>.<ns>.sa.<cluster>`, a
/// `*` in the namespace written `wildcard`.
pub(crate) fn service_account_role_name(ctx: &ModelContext, name: &str, namespace: &str) -> String {
    crate::aws::naming::truncate(
        &format!(
            "{name}.{}.sa.{}",
            namespace.replace('*', "wildcard"),
            ctx.name()
        ),
        64,
        false,
    )
}

fn service_account_trust_policy(
    ctx: &ModelContext,
    issuer: &str,
    name: &str,
    namespace: &str,
) -> String {
    let a = &ctx.account;
    let (op, subject) = if namespace.contains('*') || name.contains('*') {
        (
            "StringLike",
            format!("system:serviceaccount:{namespace}:{name}"),
        )
    } else {
        (
            "StringEquals",
            format!("system:serviceaccount:{namespace}:{name}"),
        )
    };
    let doc = json!({
        "Statement": [{
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {op: {format!("{issuer}:sub"): subject}},
            "Effect": "Allow",
            "Principal": {"Federated": format!("arn:{}:iam::{}:oidc-provider/{issuer}", a.partition, a.account_id)},
        }],
        "Version": "2012-10-17",
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The service accounts of the channel's addons that get their own IAM role when
/// `iam.useServiceAccountExternalPermissions` is set (kOps' general rule, see
/// [`crate::addons::irsa_subjects`]), with each one's permissions (kOps' `BuildAWSPolicy`
/// of that addon's subject).
fn addon_service_accounts(ctx: &ModelContext) -> Vec<(&'static str, Policy)> {
    use crate::addons::IrsaSubject as S;
    let policy = |add: fn(&ModelContext, &mut PolicyParts)| {
        let mut p = PolicyParts::default();
        add(ctx, &mut p);
        p.into_policy(&ctx.account.partition, ctx.name(), &ctx.region)
    };
    crate::addons::irsa_subjects(ctx)
        .into_iter()
        .map(|s| {
            let p = match s {
                // external-dns is given dns-controller's permissions on the cluster's zone.
                S::DnsController | S::ExternalDns => policy(dns_controller_permissions),
                S::ClusterAutoscaler => policy(cluster_autoscaler_permissions),
                S::CertManager => policy(cert_manager_permissions),
                // The handler's role carries the queue permissions in IMDS mode too.
                S::NodeTerminationHandler => policy(|_, p| nth_sqs_permissions(p)),
                S::LoadBalancerController => policy(lb_controller_permissions),
                S::KubeRouter => policy(|_, p| {
                    p.tagged.insert("ec2:ModifyInstanceAttribute");
                }),
                S::CloudControllerManager => policy(ccm_permissions),
                S::EbsCsiDriver => policy(ebs_csi_permissions),
                S::Karpenter => policy(karpenter_permissions),
            };
            (s.service_account().1, p)
        })
        .collect()
}

/// cert-manager's DNS-01 solver: TXT `_acme-challenge` records in the zones of
/// `certManager.hostedZoneIDs`.
fn cert_manager_permissions(ctx: &ModelContext, p: &mut PolicyParts) {
    let partition = ctx.account.partition.as_str();
    let zones: BTreeSet<String> = ctx
        .cluster
        .spec
        .cert_manager
        .as_ref()
        .and_then(|c| c.hosted_zone_ids.clone())
        .unwrap_or_default()
        .iter()
        .map(|id| format!("arn:{partition}:route53:::hostedzone/{id}"))
        .collect();
    let one_or_list = |z: &BTreeSet<String>| -> Json {
        if z.len() == 1 {
            json!(z.iter().next())
        } else {
            json!(z)
        }
    };
    p.written.push(json!({
        "Action": "route53:ListResourceRecordSets",
        "Effect": "Allow",
        "Resource": one_or_list(&zones),
    }));
    p.written.push(json!({
        "Action": "route53:ChangeResourceRecordSets",
        "Condition": {
            "ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]},
            "ForAllValues:StringLike": {"route53:ChangeResourceRecordSetsNormalizedRecordNames": ["_acme-challenge.*"]},
        },
        "Effect": "Allow",
        "Resource": one_or_list(&zones),
    }));
    p.written.push(json!({
        "Action": ["route53:GetChange"],
        "Effect": "Allow",
        "Resource": [format!("arn:{partition}:route53:::change/*")],
    }));
    p.written.push(json!({
        "Action": ["route53:ListHostedZonesByName"],
        "Effect": "Allow",
        "Resource": ["*"],
    }));
}

fn add_service_account_role(
    ctx: &ModelContext,
    m: &mut AwsModel,
    issuer: &str,
    name: &str,
    namespace: &str,
    policy: Option<String>,
    managed: &[String],
) {
    let role = service_account_role_name(ctx, name, namespace);
    let role_key = TaskKey::new("IAMRole", &role);
    let mut tags = ctx.tags(&role);
    tags.insert("service-account.kops.k8s.io/name".into(), name.to_owned());
    tags.insert(
        "service-account.kops.k8s.io/namespace".into(),
        namespace.replace('*', "wildcard"),
    );
    m.add(
        ctx.task("IAMRole", role.clone(), R::IamRole)
            .named(role.clone())
            .attr(
                "assume_role_policy",
                Attr::FileAs(
                    "policy",
                    service_account_trust_policy(ctx, issuer, name, namespace),
                ),
            )
            // kOps bounds every role it makes, service accounts' too.
            .attr_opt(
                "permissions_boundary",
                ctx.cluster
                    .spec
                    .iam
                    .as_ref()
                    .and_then(|i| i.permissions_boundary.clone()),
            )
            .tags(tags),
    );
    // Output names are Terraform identifiers: a `*` in the namespace is `wildcard`.
    let ns = namespace.replace('*', "wildcard");
    m.output(
        format!("{ns}-{name}_role_arn"),
        Expr::Ref(role_key.to_ref().with_attr("arn")),
    );
    m.output(
        format!("{ns}-{name}_role_name"),
        Expr::Ref(role_key.to_ref().with_attr("name")),
    );
    if let Some(doc) = policy {
        m.add(
            ctx.task("IAMRolePolicy", role.clone(), R::IamRolePolicy)
                .named(role.clone())
                .attr("role", Attr::out(&role_key, "name"))
                .attr("policy", Attr::File(doc))
                .find_by(FindBy::Parent {
                    parent_attr: "role".into(),
                    match_attrs: vec![],
                }),
        );
    }
    for arn in managed {
        m.add(
            ctx.task(
                "IAMRolePolicyAttachment",
                format!("external-{role}-{}", fnv32(arn)),
                R::IamRolePolicyAttachment,
            )
            .attr("policy_arn", arn.as_str())
            .attr("role", Attr::out(&role_key, "name"))
            .find_by(FindBy::Parent {
                parent_attr: "role".into(),
                match_attrs: vec!["policy_arn".into()],
            }),
        );
    }
}

fn build_service_accounts(ctx: &ModelContext, m: &mut AwsModel) {
    let Some(issuer) = oidc_issuer(ctx) else {
        return;
    };
    let iam = ctx.cluster.spec.iam.as_ref();
    if iam.and_then(|i| i.use_service_account_external_permissions) == Some(true) {
        for (sa, policy) in addon_service_accounts(ctx) {
            add_service_account_role(
                ctx,
                m,
                &issuer,
                sa,
                "kube-system",
                Some(policy.to_json()),
                &[],
            );
        }
    }
    for p in iam
        .and_then(|i| i.service_account_external_permissions.clone())
        .unwrap_or_default()
    {
        let (Some(name), Some(ns)) = (p.name.as_deref(), p.namespace.as_deref()) else {
            continue;
        };
        let aws = p.aws.clone().unwrap_or_default();
        let inline = aws.inline_policy.as_deref().map(additional_policy_json);
        let managed = aws.policy_arns.clone().unwrap_or_default();
        add_service_account_role(ctx, m, &issuer, name, ns, inline, &managed);
    }
}

/// Adds the IAM tasks.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    let boundary = ctx
        .cluster
        .spec
        .iam
        .as_ref()
        .and_then(|i| i.permissions_boundary.clone());
    for (prefix, (role, profile)) in roles_in_use(ctx) {
        let name = instance_role_name(ctx, prefix);
        let profile_key = TaskKey::new("IAMInstanceProfile", &name);
        if let Some(arn) = profile {
            let pname = arn.rsplit('/').next().unwrap_or(&arn).to_owned();
            m.add(
                ctx.task("IAMInstanceProfile", name.clone(), R::IamInstanceProfile)
                    .named(pname.clone())
                    .shared(pname),
            );
            continue;
        }
        let role_key = TaskKey::new("IAMRole", &name);
        m.add(
            ctx.task("IAMRole", name.clone(), R::IamRole)
                .named(name.clone())
                .attr(
                    "assume_role_policy",
                    Attr::FileAs("policy", ec2_assume_role_policy()),
                )
                .attr_opt("permissions_boundary", boundary.clone())
                .tags(ctx.tags(&name))
                .tf_name(name.clone()),
        );
        let out_prefix = match role {
            InstanceGroupRole::ControlPlane => Some("masters"),
            InstanceGroupRole::Node => Some("nodes"),
            _ => None,
        };
        if let Some(p) = out_prefix {
            m.output(
                format!("{p}_role_arn"),
                Expr::Ref(role_key.to_ref().with_attr("arn")),
            );
            m.output(
                format!("{p}_role_name"),
                Expr::Ref(role_key.to_ref().with_attr("name")),
            );
        }
        m.add(
            ctx.task("IAMInstanceProfile", name.clone(), R::IamInstanceProfile)
                .named(name.clone())
                .attr("role", Attr::out(&role_key, "name"))
                .tags(ctx.tags(&name)),
        );
        let _ = profile_key;
        let policy = match role {
            InstanceGroupRole::ControlPlane => control_plane_policy(ctx),
            InstanceGroupRole::Node => node_policy(ctx),
            InstanceGroupRole::ApiServer => api_server_policy(ctx),
            _ => Policy::default(),
        };
        if !policy.is_empty() {
            m.add(
                ctx.task("IAMRolePolicy", name.clone(), R::IamRolePolicy)
                    .named(name.clone())
                    .attr("role", Attr::out(&role_key, "name"))
                    .attr("policy", Attr::File(policy.to_json()))
                    .find_by(FindBy::Parent {
                        parent_attr: "role".into(),
                        match_attrs: vec![],
                    }),
            );
        }
        // Managed policies from spec.externalPolicies and inline spec.additionalPolicies.
        let policy_key = match role {
            InstanceGroupRole::ControlPlane => "master",
            InstanceGroupRole::Bastion => "bastion",
            _ => "node",
        };
        let external = ctx.cluster.spec.external_policies.as_ref().and_then(|e| {
            e.get(policy_key).or_else(|| {
                (policy_key == "master")
                    .then(|| e.get("control-plane"))
                    .flatten()
            })
        });
        for arn in external.into_iter().flatten() {
            m.add(
                ctx.task(
                    "IAMRolePolicyAttachment",
                    format!("{policy_key}-policyoverride-{}", fnv32(arn)),
                    R::IamRolePolicyAttachment,
                )
                .attr("policy_arn", arn.as_str())
                .attr("role", Attr::out(&role_key, "name"))
                .find_by(FindBy::Parent {
                    parent_attr: "role".into(),
                    match_attrs: vec!["policy_arn".into()],
                }),
            );
        }
        let additional = ctx.cluster.spec.additional_policies.as_ref().and_then(|a| {
            a.get(policy_key).or_else(|| {
                (policy_key == "master")
                    .then(|| a.get("control-plane"))
                    .flatten()
            })
        });
        if let Some(doc) = additional {
            let pname = format!("additional.{name}");
            m.add(
                ctx.task("IAMRolePolicy", pname.clone(), R::IamRolePolicy)
                    .named(pname)
                    .attr("role", Attr::out(&role_key, "name"))
                    .attr("policy", Attr::File(additional_policy_json(doc)))
                    .find_by(FindBy::Parent {
                        parent_attr: "role".into(),
                        match_attrs: vec![],
                    }),
            );
        }
    }

    build_service_accounts(ctx, m);

    // OIDC provider for IRSA.
    let sad = ctx.cluster.spec.service_account_issuer_discovery.as_ref();
    if sad.and_then(|s| s.enable_awsoidc_provider) == Some(true) {
        let issuer = ctx
            .cluster
            .spec
            .kube_api_server
            .as_ref()
            .and_then(|k| k.service_account_issuer.clone())
            .unwrap_or_default();
        let mut clients = vec!["amazonaws.com".to_owned()];
        clients.extend(
            sad.and_then(|s| s.additional_audiences.clone())
                .unwrap_or_default(),
        );
        let key = TaskKey::new("IAMOIDCProvider", ctx.name());
        m.add(
            ctx.task("IAMOIDCProvider", ctx.name(), R::IamOidcProvider)
                .attr("url", issuer.as_str())
                .attr("client_id_list", Attr::strs(clients))
                .attr(
                    "thumbprint_list",
                    Attr::strs([
                        "9e99a48a9960b14926bb7f3b02e22da2b0ab7280",
                        "a9d53002e97e00e043244f3d170d6f4c414104fd",
                    ]),
                )
                .tags(ctx.tags(ctx.name())),
        );
        m.output(
            "iam_openid_connect_provider_arn",
            Expr::Ref(key.to_ref().with_attr("arn")),
        );
        m.output(
            "iam_openid_connect_provider_issuer",
            issuer.trim_start_matches("https://"),
        );
    }
    Ok(())
}

/// Wraps a user's `additionalPolicies` statement list in a document.
fn additional_policy_json(doc: &str) -> String {
    match serde_json::from_str::<Json>(doc) {
        Ok(Json::Array(statements)) => serde_json::to_string_pretty(&json!({
            "Statement": statements,
            "Version": "2012-10-17",
        }))
        .unwrap_or_else(|_| doc.to_owned()),
        _ => doc.to_owned(),
    }
}

/// What the Amazon VPC CNI calls on every instance that runs it.
const AMAZON_VPC_CNI_ACTIONS: [&str; 13] = [
    "ec2:AssignPrivateIpAddresses",
    "ec2:AttachNetworkInterface",
    "ec2:CreateNetworkInterface",
    "ec2:DeleteNetworkInterface",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeInstances",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeTags",
    "ec2:DetachNetworkInterface",
    "ec2:ModifyNetworkInterfaceAttribute",
    "ec2:UnassignPrivateIpAddresses",
];

/// The ECR actions an instance needs: pulling from the registry when
/// `iam.allowContainerRegistry`, and pull-through mirroring when containerd uses ECR
/// credentials for mirrors.
fn ecr_actions(spec: &ClusterSpec) -> Vec<&'static str> {
    let mut out = Vec::new();
    if spec.iam.as_ref().and_then(|i| i.allow_container_registry) == Some(true) {
        out.extend([
            "ecr:BatchCheckLayerAvailability",
            "ecr:BatchGetImage",
            "ecr:DescribeRepositories",
            "ecr:GetAuthorizationToken",
            "ecr:GetDownloadUrlForLayer",
            "ecr:GetRepositoryPolicy",
            "ecr:ListImages",
        ]);
    }
    if spec
        .containerd
        .as_ref()
        .and_then(|c| c.use_ecr_credentials_for_mirrors)
        == Some(true)
    {
        out.extend([
            "ecr:BatchImportUpstreamImage",
            "ecr:CreateRepository",
            "ecr:ReplicateImage",
            "ecr:TagResource",
        ]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_keep_their_order() {
        let mut p = Policy::default();
        assert!(p.is_empty());
        p.push(json!({"Action": "b:Y", "Effect": "Allow", "Resource": "*"}));
        p.push(json!({"Action": ["a:X", "c:Z"], "Effect": "Allow", "Resource": "*"}));
        let j: Json = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(j["Statement"][0]["Action"], "b:Y");
        assert_eq!(j["Statement"][1]["Action"], json!(["a:X", "c:Z"]));
        assert_eq!(j["Version"], "2012-10-17");
    }
}
