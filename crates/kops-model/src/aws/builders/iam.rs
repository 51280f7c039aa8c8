//! The IAM builder (kOps' `awsmodel/iam.go`, policies as in `pkg/model/iam`): roles,
//! instance profiles, inline policies generated from rules, managed-policy attachments and
//! the OIDC provider.

use std::collections::{BTreeMap, BTreeSet};

use kops_api::internal::InstanceGroupRole;
use kops_tasks::TaskKey;
use kops_tasks::terraform::Expr;
use serde_json::{Value as Json, json};

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::naming::fnv32;
use crate::aws::task::{Attr, FindBy};
use crate::error::Result;

/// One statement of a policy document.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// Actions (sorted when rendered).
    pub actions: BTreeSet<String>,
    /// Resource (`*` or ARNs).
    pub resource: Json,
    /// Optional condition.
    pub condition: Option<Json>,
}

impl Statement {
    /// Allows `actions` on every resource.
    pub fn allow_all<S: Into<String>>(actions: impl IntoIterator<Item = S>) -> Self {
        Statement {
            actions: actions.into_iter().map(Into::into).collect(),
            resource: Json::String("*".into()),
            condition: None,
        }
    }

    fn to_json(&self) -> Json {
        let action = if self.actions.len() == 1 {
            Json::String(self.actions.iter().next().cloned().unwrap_or_default())
        } else {
            Json::Array(self.actions.iter().cloned().map(Json::String).collect())
        };
        let mut m = serde_json::Map::new();
        m.insert("Action".into(), action);
        if let Some(c) = &self.condition {
            m.insert("Condition".into(), c.clone());
        }
        m.insert("Effect".into(), Json::String("Allow".into()));
        m.insert("Resource".into(), self.resource.clone());
        Json::Object(m)
    }
}

/// A policy document; statements with equal resource and condition are merged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    statements: Vec<Statement>,
}

impl Policy {
    /// Adds a statement, merging it into an earlier one with the same resource/condition.
    pub fn add(&mut self, s: Statement) {
        if let Some(prev) = self
            .statements
            .iter_mut()
            .find(|p| p.resource == s.resource && p.condition == s.condition)
        {
            prev.actions.extend(s.actions);
        } else {
            self.statements.push(s);
        }
    }

    /// Whether the policy has no statement.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// The JSON document, pretty-printed with two-space indentation.
    pub fn to_json(&self) -> String {
        let doc = json!({
            "Statement": self.statements.iter().map(Statement::to_json).collect::<Vec<_>>(),
            "Version": "2012-10-17",
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }
}

/// The EC2 assume-role policy kOps writes for instance roles.
pub fn ec2_assume_role_policy() -> String {
    "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {\n      \"Effect\": \"Allow\",\n      \"Principal\": { \"Service\": \"ec2.amazonaws.com\"},\n      \"Action\": \"sts:AssumeRole\"\n    }\n  ]\n}\n".to_owned()
}

fn config_base_path(ctx: &ModelContext) -> (String, String) {
    super::files::state_location(ctx)
}

/// The control-plane policy.
pub fn control_plane_policy(ctx: &ModelContext) -> Policy {
    let p = &ctx.account.partition;
    let name = ctx.name();
    let mut pol = Policy::default();
    pol.add(Statement {
        actions: ["ec2:AttachVolume".to_owned()].into(),
        resource: json!(["*"]),
        condition: Some(json!({"StringEquals": {
            "aws:ResourceTag/KubernetesCluster": name,
            "aws:ResourceTag/k8s.io/role/master": "1"
        }})),
    });
    let (_, prefix) = config_base_path(ctx);
    pol.add(Statement {
        actions: ["s3:Get*".to_owned()].into(),
        resource: json!(format!("arn:{p}:s3:::placeholder-read-bucket/{prefix}/*")),
        condition: None,
    });
    pol.add(Statement::allow_all([
        "autoscaling:DescribeAutoScalingGroups",
        "autoscaling:DescribeAutoScalingInstances",
        "ec2:DescribeAccountAttributes",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeInstances",
        "ec2:DescribeRegions",
        "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSubnets",
        "ec2:DescribeTags",
        "ec2:DescribeVolumes",
        "ec2:DescribeVpcs",
        "elasticloadbalancing:DescribeListeners",
        "elasticloadbalancing:DescribeLoadBalancers",
        "elasticloadbalancing:DescribeTargetGroups",
        "elasticloadbalancing:DescribeTargetHealth",
        "iam:GetServerCertificate",
        "iam:ListServerCertificates",
        "kms:DescribeKey",
        "kms:GenerateRandom",
        "route53:GetChange",
        "route53:ListHostedZones",
        "route53:ListResourceRecordSets",
    ]));
    pol.add(Statement {
        actions: [
            "ec2:CreateTags".to_owned(),
            "ec2:DeleteTags".to_owned(),
            "ec2:ModifyInstanceAttribute".to_owned(),
        ]
        .into(),
        resource: json!("*"),
        condition: Some(json!({"StringEquals": {"aws:ResourceTag/KubernetesCluster": name}})),
    });
    pol
}

/// The policy of dedicated API-server nodes: the node policy plus what the API server
/// reads from EC2.
pub fn api_server_policy(ctx: &ModelContext) -> Policy {
    let mut pol = node_policy(ctx);
    pol.add(Statement::allow_all([
        "ec2:DescribeInstances",
        "ec2:DescribeRegions",
        "iam:GetServerCertificate",
        "iam:ListServerCertificates",
    ]));
    pol
}

/// The node policy; empty unless the spec needs node permissions.
pub fn node_policy(ctx: &ModelContext) -> Policy {
    let mut pol = Policy::default();
    let net = &ctx.cluster.spec.networking;
    if ctx
        .cluster
        .spec
        .iam
        .as_ref()
        .and_then(|i| i.allow_container_registry)
        == Some(true)
    {
        pol.add(Statement::allow_all([
            "ecr:BatchCheckLayerAvailability",
            "ecr:BatchGetImage",
            "ecr:DescribeRepositories",
            "ecr:GetAuthorizationToken",
            "ecr:GetDownloadUrlForLayer",
            "ecr:GetRepositoryPolicy",
            "ecr:ListImages",
        ]));
    }
    if net.calico.is_some() {
        pol.add(Statement::allow_all([
            "ec2:DescribeInstances",
            "ec2:ModifyNetworkInterfaceAttribute",
        ]));
    }
    let cilium_eni = net
        .cilium
        .as_ref()
        .and_then(|c| c.ipam.as_deref())
        .is_some_and(|i| i.eq_ignore_ascii_case("eni"));
    if net.amazonvpc.is_some() || cilium_eni {
        pol.add(Statement::allow_all([
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
        ]));
    }
    if net.kindnet.is_some() {
        pol.add(Statement::allow_all(["ec2:ModifyInstanceAttribute"]));
    }
    if ctx.is_ipv6_only() {
        pol.add(Statement::allow_all(["ec2:AssignIpv6Addresses"]));
    }
    let warm_hooks = ctx.groups.iter().any(|g| {
        g.spec
            .warm_pool
            .as_ref()
            .or(ctx
                .cluster
                .spec
                .cloud_provider
                .aws
                .as_ref()
                .and_then(|a| a.warm_pool.as_ref()))
            .is_some_and(|w| w.enable_lifecycle_hook == Some(true))
    });
    if warm_hooks {
        pol.add(Statement::allow_all([
            "autoscaling:CompleteLifecycleAction",
            "autoscaling:DescribeLifecycleHooks",
        ]));
    }
    pol
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
        let prefix = ModelContext::iam_role_prefix(&role);
        let profile = g.spec.iam.as_ref().and_then(|i| i.profile.clone());
        out.entry(prefix).or_insert((role, profile));
    }
    out
}

/// The name of an instance role and profile: `<prefix>.<cluster>`, cut to IAM's 64
/// characters with a hash when longer.
pub fn instance_role_name(ctx: &ModelContext, prefix: &str) -> String {
    crate::aws::naming::truncate(&ctx.scoped(prefix), 64, false)
}

/// The key of the instance-profile task of a role.
pub fn instance_profile_key(ctx: &ModelContext, role: &InstanceGroupRole) -> TaskKey {
    TaskKey::new(
        "IAMInstanceProfile",
        instance_role_name(ctx, ModelContext::iam_role_prefix(role)),
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
                .map(|s| super::files::split_store_url(s).1)
        })?;
    Some(issuer.trim_start_matches("https://").to_owned())
}

/// The IAM role of a Kubernetes service account (IRSA): `<sa>.<ns>.sa.<cluster>`, a
/// `*` in the namespace written `wildcard`.
pub fn service_account_role_name(ctx: &ModelContext, name: &str, namespace: &str) -> String {
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

/// The service accounts of kOps-managed addons that get their own IAM role when
/// `iam.useServiceAccountExternalPermissions` is set, with their permissions.
fn addon_service_accounts(ctx: &ModelContext) -> Vec<(&'static str, Policy)> {
    let spec = &ctx.cluster.spec;
    let aws = spec.cloud_provider.aws.as_ref();
    let mut out = Vec::new();
    if !ctx.dns_none() {
        let mut p = Policy::default();
        p.add(Statement::allow_all([
            "route53:ChangeResourceRecordSets",
            "route53:GetChange",
            "route53:ListHostedZones",
            "route53:ListResourceRecordSets",
        ]));
        out.push(("dns-controller", p));
    }
    let mut ccm = Policy::default();
    ccm.add(Statement::allow_all([
        "autoscaling:DescribeAutoScalingGroups",
        "ec2:DescribeInstances",
        "ec2:DescribeRegions",
        "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSubnets",
        "ec2:DescribeVpcs",
        "elasticloadbalancing:DescribeLoadBalancers",
        "elasticloadbalancing:DescribeTargetGroups",
    ]));
    out.push(("aws-cloud-controller-manager", ccm));
    let mut ebs = Policy::default();
    ebs.add(Statement::allow_all([
        "ec2:AttachVolume",
        "ec2:CreateSnapshot",
        "ec2:CreateVolume",
        "ec2:DeleteSnapshot",
        "ec2:DeleteVolume",
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeInstances",
        "ec2:DescribeSnapshots",
        "ec2:DescribeVolumes",
        "ec2:DetachVolume",
    ]));
    out.push(("ebs-csi-controller-sa", ebs));
    if ctx.nth_queue_mode() {
        let mut p = Policy::default();
        p.add(Statement::allow_all([
            "autoscaling:CompleteLifecycleAction",
            "autoscaling:DescribeAutoScalingInstances",
            "autoscaling:DescribeTags",
            "ec2:DescribeInstances",
            "sqs:DeleteMessage",
            "sqs:ReceiveMessage",
        ]));
        out.push(("aws-node-termination-handler", p));
    }
    if aws
        .and_then(|a| a.load_balancer_controller.as_ref())
        .and_then(|l| l.enabled)
        == Some(true)
    {
        let mut p = Policy::default();
        p.add(Statement::allow_all([
            "ec2:DescribeSubnets",
            "ec2:DescribeVpcs",
            "elasticloadbalancing:CreateLoadBalancer",
            "elasticloadbalancing:CreateTargetGroup",
            "elasticloadbalancing:DescribeLoadBalancers",
            "elasticloadbalancing:DescribeTargetGroups",
        ]));
        out.push(("aws-load-balancer-controller", p));
    }
    if spec.cluster_autoscaler.as_ref().and_then(|c| c.enabled) == Some(true) {
        let mut p = Policy::default();
        p.add(Statement::allow_all([
            "autoscaling:DescribeAutoScalingGroups",
            "autoscaling:DescribeAutoScalingInstances",
            "autoscaling:SetDesiredCapacity",
            "autoscaling:TerminateInstanceInAutoScalingGroup",
        ]));
        out.push(("cluster-autoscaler", p));
    }
    if spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true) {
        let mut p = Policy::default();
        p.add(Statement::allow_all([
            "ec2:CreateFleet",
            "ec2:CreateLaunchTemplate",
            "ec2:DescribeInstances",
            "ec2:RunInstances",
            "ec2:TerminateInstances",
        ]));
        out.push(("karpenter", p));
    }
    out
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
        namespace.to_owned(),
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
            .tags(tags),
    );
    m.output(
        format!("{namespace}-{name}_role_arn"),
        Expr::Ref(role_key.to_ref().with_attr("arn")),
    );
    m.output(
        format!("{namespace}-{name}_role_name"),
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
pub fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_merge_and_sort_actions() {
        let mut p = Policy::default();
        p.add(Statement::allow_all(["b:Y", "a:X"]));
        p.add(Statement::allow_all(["a:X", "c:Z"]));
        let j: Json = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(j["Statement"][0]["Action"], json!(["a:X", "b:Y", "c:Z"]));
        assert_eq!(j["Version"], "2012-10-17");
        assert!(Policy::default().is_empty());
    }
}
