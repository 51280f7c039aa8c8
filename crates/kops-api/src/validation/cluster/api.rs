//! The API endpoint: `spec.api.loadBalancer` (kOps' `validateClusterSpec`
//! api section and its AWS checks in `aws.go`).

use std::collections::BTreeSet;

use super::super::ValidationErrors;
use super::Cloud;
use crate::internal::{Cluster, NetworkingSpec};
use crate::v1alpha2::LoadBalancerAccessSpec;

const LB: &str = "spec.api.loadBalancer";

/// `spec.api.loadBalancer`: AWS-only fields elsewhere, its type, and the AWS rules.
pub(super) fn validate_api_load_balancer(c: &Cluster, cloud: Cloud, errs: &mut ValidationErrors) {
    let Some(lb) = &c.spec.api.load_balancer else {
        return;
    };
    if !cloud.aws {
        validate_aws_only_load_balancer_fields(lb, errs);
    }
    validate_load_balancer_type(lb, &c.spec.networking, errs);
    if cloud.aws {
        validate_aws_load_balancer(lb, errs);
    }
}

/// Fields only an AWS load balancer has.
fn validate_aws_only_load_balancer_fields(
    lb: &LoadBalancerAccessSpec,
    errs: &mut ValidationErrors,
) {
    for (set, f) in [
        (lb.class.is_some(), "class"),
        (
            lb.security_group_override.is_some(),
            "securityGroupOverride",
        ),
        (
            lb.additional_security_groups.is_some(),
            "additionalSecurityGroups",
        ),
        (lb.ssl_certificate.is_some(), "sslCertificate"),
        (lb.ssl_policy.is_some(), "sslPolicy"),
        (
            lb.cross_zone_load_balancing.is_some(),
            "crossZoneLoadBalancing",
        ),
        (lb.access_log.is_some(), "accessLog"),
    ] {
        if set {
            errs.push(format!("{LB}.{f}"), format!("{f} is only supported on AWS"));
        }
    }
}

/// `type`: Public, or Internal with a Private subnet to put it in.
fn validate_load_balancer_type(
    lb: &LoadBalancerAccessSpec,
    net: &NetworkingSpec,
    errs: &mut ValidationErrors,
) {
    match lb.type_.as_deref() {
        None | Some("Public") => {}
        Some("Internal") => {
            let has_private = net
                .subnets
                .iter()
                .flatten()
                .any(|s| s.type_.as_deref() == Some("Private"));
            if !has_private {
                errs.push(
                    format!("{LB}.type"),
                    "an Internal load balancer needs at least one subnet of type Private",
                );
            }
        }
        Some(t) => errs.push(
            format!("{LB}.type"),
            format!("unsupported value {t:?}: use Public or Internal"),
        ),
    }
}

/// AWS: class Network, no hairpinning on an internal NLB, `sslPolicy` with a
/// certificate (`awsValidateSSLPolicy`), security group IDs
/// (`awsValidateAdditionalSecurityGroups`).
fn validate_aws_load_balancer(lb: &LoadBalancerAccessSpec, errs: &mut ValidationErrors) {
    match lb.class.as_deref() {
        Some("Network") => {}
        Some("Classic") => errs.push(
            format!("{LB}.class"),
            "Classic load balancers are no longer supported for the API; set class: Network",
        ),
        None => errs.push(format!("{LB}.class"), "required on AWS: set class: Network"),
        Some(other) => errs.push(
            format!("{LB}.class"),
            format!("unsupported value {other:?}: the only supported class is Network"),
        ),
    }
    if lb.class.as_deref() == Some("Network")
        && lb.use_for_internal_api == Some(true)
        && lb.type_.as_deref() == Some("Internal")
    {
        errs.push(format!("{LB}.useForInternalApi"), "cannot be used with an internal Network load balancer (NLBs do not support hairpinning)");
    }
    if lb.ssl_policy.is_some() && lb.ssl_certificate.is_none() {
        errs.push(
            format!("{LB}.sslPolicy"),
            "sslPolicy requires sslCertificate",
        );
    }
    for (i, sg) in lb.additional_security_groups.iter().flatten().enumerate() {
        if !sg.starts_with("sg-") {
            errs.push(
                format!("{LB}.additionalSecurityGroups[{i}]"),
                format!("{sg:?} is not a security group ID (sg-...)"),
            );
        }
    }
}

/// AWS `spec.api.loadBalancer.subnets`: each names a subnet of the cluster.
pub(super) fn validate_api_load_balancer_subnets(
    c: &Cluster,
    cloud: Cloud,
    errs: &mut ValidationErrors,
) {
    let Some(lb) = c.spec.api.load_balancer.as_ref().filter(|_| cloud.aws) else {
        return;
    };
    let known: BTreeSet<&str> = c
        .spec
        .networking
        .subnets
        .iter()
        .flatten()
        .filter_map(|s| s.name.as_deref())
        .collect();
    for (i, sn) in lb.subnets.iter().flatten().enumerate() {
        let n = sn.name.as_deref().unwrap_or("");
        if !known.contains(n) {
            errs.push(
                format!("spec.api.loadBalancer.subnets[{i}].name"),
                format!("subnet {n:?} does not exist in spec.subnets"),
            );
        }
    }
}
