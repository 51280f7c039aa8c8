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

/// The key of the instance-profile task of a role.
pub fn instance_profile_key(ctx: &ModelContext, role: &InstanceGroupRole) -> TaskKey {
    TaskKey::new(
        "IAMInstanceProfile",
        ctx.scoped(ModelContext::iam_role_prefix(role)),
    )
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
        let name = ctx.scoped(prefix);
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
            InstanceGroupRole::ApiServer => node_policy(ctx),
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
