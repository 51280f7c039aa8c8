//! IAM and cloud identity: policies by role, cloud tags, service-account
//! permissions, Karpenter's prerequisite and service-account issuer discovery.

use std::collections::BTreeSet;

use super::super::ValidationErrors;
use crate::internal::Cluster;
use crate::v1alpha2::ServiceAccountExternalPermission;

/// The roles `externalPolicies` and `additionalPolicies` are keyed by.
const POLICY_ROLES: [&str; 3] = ["control-plane", "node", "bastion"];

/// The role as users write it in a field path (`master` for the control plane).
fn shown_role(role: &str) -> &str {
    if role == "control-plane" {
        "master"
    } else {
        role
    }
}

/// `spec.externalPolicies` and `spec.additionalPolicies`: keyed by a known role.
pub(super) fn validate_policy_roles(c: &Cluster, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    for (field, map) in [
        (
            "externalPolicies",
            spec.external_policies
                .as_ref()
                .map(|m| m.keys().cloned().collect::<Vec<_>>()),
        ),
        (
            "additionalPolicies",
            spec.additional_policies
                .as_ref()
                .map(|m| m.keys().cloned().collect()),
        ),
    ] {
        for key in map.iter().flatten() {
            if !POLICY_ROLES.contains(&key.as_str()) {
                errs.push(
                    format!("spec.{field}.{}", shown_role(key)),
                    "unsupported role: use master, node or bastion",
                );
            }
        }
    }
}

/// `spec.additionalPolicies`: each policy is JSON.
pub(super) fn validate_additional_policies(c: &Cluster, errs: &mut ValidationErrors) {
    for (role, policy) in c.spec.additional_policies.iter().flatten() {
        if serde_json::from_str::<serde_json::Value>(policy).is_err() {
            errs.push(
                format!("spec.additionalPolicies.{}", shown_role(role)),
                "policy is not valid JSON",
            );
        }
    }
}

/// `spec.cloudLabels`: not the tags kOps sets itself.
pub(super) fn validate_cloud_labels(c: &Cluster, errs: &mut ValidationErrors) {
    for key in c.spec.cloud_labels.iter().flatten().map(|(k, _)| k) {
        if key == "KubernetesCluster" || key == "Name" || key.starts_with("kubernetes.io/cluster/")
        {
            errs.push(
                format!("spec.cloudLabels.{key}"),
                "this tag is reserved for kOps; use another key",
            );
        }
    }
}

/// `spec.iam`: no legacy permissions; well-formed service-account permissions.
pub(super) fn validate_iam(c: &Cluster, errs: &mut ValidationErrors) {
    let Some(iam) = &c.spec.iam else {
        return;
    };
    if iam.legacy == Some(true) {
        errs.push(
            "spec.iam.legacy",
            "legacy IAM permissions are no longer supported; remove it or set false",
        );
    }
    validate_sa_external_permissions(iam.service_account_external_permissions.as_deref(), errs);
}

/// `spec.iam.serviceAccountExternalPermissions`: named, unique, one kind of AWS policy each.
pub(super) fn validate_sa_external_permissions(
    permissions: Option<&[ServiceAccountExternalPermission]>,
    errs: &mut ValidationErrors,
) {
    let mut seen = BTreeSet::new();
    for (i, p) in permissions.into_iter().flatten().enumerate() {
        let path = format!("spec.iam.serviceAccountExternalPermissions[{i}]");
        let name = p.name.as_deref().unwrap_or("");
        let ns = p.namespace.as_deref().unwrap_or("");
        if name.is_empty() {
            errs.push(format!("{path}.name"), "service account name is required");
        }
        if ns.is_empty() {
            errs.push(
                format!("{path}.namespace"),
                "service account namespace is required",
            );
        }
        if !seen.insert((ns.to_string(), name.to_string())) {
            errs.push(
                path.clone(),
                format!("duplicate service account {ns}/{name}"),
            );
        }
        match &p.aws {
            None => errs.push(format!("{path}.aws"), "AWS permissions are required"),
            Some(a) => {
                let inline = a.inline_policy.as_deref().is_some_and(|s| !s.is_empty());
                let arns = a.policy_arns.as_ref().is_some_and(|v| !v.is_empty());
                if inline == arns {
                    errs.push(
                        format!("{path}.aws"),
                        "set exactly one of inlinePolicy or policyARNs",
                    );
                }
            }
        }
    }
}

/// `spec.karpenter.enabled`: needs service-account external permissions.
pub(super) fn validate_karpenter(c: &Cluster, errs: &mut ValidationErrors) {
    let spec = &c.spec;
    if spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true)
        && spec
            .iam
            .as_ref()
            .and_then(|i| i.use_service_account_external_permissions)
            != Some(true)
    {
        errs.push(
            "spec.karpenter.enabled",
            "Karpenter requires spec.iam.useServiceAccountExternalPermissions: true",
        );
    }
}

/// `spec.serviceAccountIssuerDiscovery`: one discovery location; AWS OIDC needs one.
pub(super) fn validate_service_account_issuer_discovery(c: &Cluster, errs: &mut ValidationErrors) {
    let Some(said) = &c.spec.service_account_issuer_discovery else {
        return;
    };
    if said.discovery_store.is_some() && said.discovery_service.is_some() {
        errs.push(
            "spec.serviceAccountIssuerDiscovery",
            "set only one of discoveryStore or discoveryService",
        );
    }
    if said.enable_awsoidc_provider == Some(true)
        && said.discovery_store.is_none()
        && said.discovery_service.is_none()
    {
        errs.push(
            "spec.serviceAccountIssuerDiscovery.enableAWSOIDCProvider",
            "requires discoveryStore (or discoveryService) so AWS can fetch the issuer's keys",
        );
    }
}
