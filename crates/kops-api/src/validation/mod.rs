//! Validation of internal clusters and instance groups.
//!
//! Every function returns every problem at once ([`ValidationErrors`]), each
//! with a field path and a message saying what to change. Paths use the
//! **v1alpha2 spelling**, the one users see in the files they write:
//! `spec.subnets[1].cidr`, `spec.networkCIDR`, `spec.topology.dns.type`,
//! `spec.kubernetesApiAccess[0]`, `spec.rootVolumeIops` (not the internal
//! `spec.networking.subnets[1].cidr`).
//!
//! The rules follow kOps' strict validation of a completed spec: run them on
//! the output of [`crate::defaults::populate_cluster`] and
//! [`crate::defaults::populate_instance_group`], where required values such
//! as `networkCIDR`, subnet CIDRs, images and machine types have been filled.
//!
//! ```
//! use kops_api::internal::Cluster;
//! use kops_api::validation::validate_cluster;
//!
//! let errors = validate_cluster(&Cluster::default()).unwrap_err();
//! assert!(errors.errors().iter().any(|e| e.path == "metadata.name"));
//! ```
//!
//! Where kOps' rules are here: `validate_cluster` runs the cluster's rules
//! (`cluster/`: one function per rule, by area, with a table "kOps function ->
//! our function" in `cluster/mod.rs`), `validate_instance_group` and
//! `validate_instance_group_for_cluster` the instance group's
//! (`instance_group.rs`, likewise with its table). In short:
//!
//! | kOps (pkg/apis/kops/validation/) | here |
//! |---|---|
//! | `validation.go` `newValidateCluster`, `validateClusterSpec`, `legacy.go` `ValidateCluster` | `cluster::cluster_errors` |
//! | `validation.go` `validateCloudProvider` | `cluster::spec::validate_cloud_provider` |
//! | `validation.go` `validateTopology` | `cluster::topology::validate_topology` |
//! | `validation.go` `validateSubnets` | `cluster::subnets::validate_subnets` |
//! | `validation.go` `validateNetworking`, `validateNetworkingCilium` | `cluster::networking::{validate_network_ranges, validate_networking, validate_cilium}` |
//! | `validation.go` `validateEtcdClusterSpec` | `cluster::etcd::validate_etcd_cluster_spec` |
//! | `legacy.go` `validateServiceAccountIssuerDiscovery` | `cluster::iam::validate_service_account_issuer_discovery` |
//! | `instancegroup.go` `ValidateInstanceGroup` | `instance_group::instance_group_errors` |
//! | `instancegroup.go` `CrossValidateInstanceGroup` | `instance_group::cross_errors` |
//! | `legacy.go` `DeepValidate` | [`validate_all`] |
//!
//! The rules run in a fixed order and the order of the problems is part of
//! the output: a new rule goes where its area runs.

mod cluster;
mod instance_group;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ipnet::IpNet;

use crate::internal::{CloudProvider, Cluster, InstanceGroup};
use cluster::cluster_errors;
use instance_group::{cross_errors, instance_group_errors};

/// One validation problem: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationError {
    /// The object the problem is in, when the list covers several objects
    /// (`InstanceGroup nodes`); `None` for the cluster.
    pub object: Option<String>,
    /// Field path in v1alpha2 spelling, e.g. `spec.subnets[1].cidr`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every validation problem found, in the order found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// The problems.
    pub fn errors(&self) -> &[ValidationError] {
        &self.0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Records a problem.
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(ValidationError {
            object: None,
            path: path.into(),
            message: message.into(),
        });
    }

    fn extend_for(&mut self, object: &str, other: ValidationErrors) {
        for mut e in other.0 {
            e.object.get_or_insert_with(|| object.to_string());
            self.0.push(e);
        }
    }

    fn into_result(self) -> Result<(), ValidationErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} validation error(s)", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

fn parse_cidr(errs: &mut ValidationErrors, path: &str, cidr: &str) -> Option<IpNet> {
    match cidr.parse::<IpNet>() {
        Ok(n) => Some(n),
        Err(_) => {
            errs.push(
                path,
                format!("{cidr:?} is not a valid CIDR (expected e.g. 172.20.0.0/16)"),
            );
            None
        }
    }
}

fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

/// A DNS-1123 subdomain: lower-case labels of letters, digits and `-`.
fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// An HCL identifier: a letter or `_`, then letters, digits, `_` and `-`.
fn is_hcl_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The AWS region of a zone (`us-east-1a` -> `us-east-1`), GCE's likewise
/// (`us-central1-a` -> `us-central1`). The one definition of region-of-zone.
pub fn region_of_zone(zone: &str, provider: Option<CloudProvider>) -> String {
    match provider {
        Some(CloudProvider::Gce) => match zone.rfind('-') {
            Some(i) => zone[..i].to_string(),
            None => zone.to_string(),
        },
        _ => zone
            .trim_end_matches(|c: char| c.is_ascii_lowercase())
            .to_string(),
    }
}

/// Validates a completed cluster spec on its own.
pub fn validate_cluster(cluster: &Cluster) -> Result<(), ValidationErrors> {
    cluster_errors(cluster).into_result()
}

/// Validates a completed instance group on its own (rules that need the
/// cluster are in [`validate_instance_group_for_cluster`]).
pub fn validate_instance_group(ig: &InstanceGroup) -> Result<(), ValidationErrors> {
    instance_group_errors(ig).into_result()
}

/// Validates an instance group against its cluster: its own rules plus the
/// cross-checks (subnets exist, etcd membership, cloud-specific rules).
pub fn validate_instance_group_for_cluster(
    ig: &InstanceGroup,
    cluster: &Cluster,
) -> Result<(), ValidationErrors> {
    let mut errs = instance_group_errors(ig);
    cross_errors(ig, cluster, &mut errs);
    errs.into_result()
}

/// Validates a cluster and all its instance groups together, returning every
/// problem of every object. Instance-group problems carry
/// `object = "InstanceGroup <name>"`.
pub fn validate_all(cluster: &Cluster, igs: &[InstanceGroup]) -> Result<(), ValidationErrors> {
    let mut errs = cluster_errors(cluster);
    let mut names = BTreeSet::new();
    for ig in igs {
        let mut e = instance_group_errors(ig);
        cross_errors(ig, cluster, &mut e);
        if !names.insert(ig.name()) {
            e.push(
                "metadata.name",
                format!("duplicate instance group name {:?}", ig.name()),
            );
        }
        errs.extend_for(&format!("InstanceGroup {}", ig.name()), e);
    }
    let group_names: BTreeMap<&str, &InstanceGroup> = igs.iter().map(|g| (g.name(), g)).collect();
    if !igs.iter().any(|g| g.is_control_plane()) {
        errs.push(
            "instanceGroups",
            "no instance group has role Master (ControlPlane); add one per etcd member",
        );
    }
    for (i, etcd) in cluster.spec.etcd_clusters.iter().flatten().enumerate() {
        for (j, m) in etcd.etcd_members.iter().flatten().enumerate() {
            let Some(ig_name) = m.instance_group.as_deref() else {
                continue;
            };
            let path = format!("spec.etcdClusters[{i}].etcdMembers[{j}].instanceGroup");
            match group_names.get(ig_name) {
                None => errs.push(path, format!("instance group {ig_name:?} does not exist; etcd members must name a control-plane instance group")),
                Some(g) if !g.is_control_plane() => errs.push(path, format!("instance group {ig_name:?} does not have role Master (ControlPlane); etcd runs only on the control plane")),
                Some(_) => {}
            }
        }
    }
    errs.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_of_zones() {
        assert_eq!(
            region_of_zone("us-east-1a", Some(CloudProvider::Aws)),
            "us-east-1"
        );
        assert_eq!(
            region_of_zone("us-central1-f", Some(CloudProvider::Gce)),
            "us-central1"
        );
    }

    #[test]
    fn dns_names() {
        assert!(is_dns_subdomain("a-b.example.com"));
        assert!(!is_dns_subdomain("A.example.com"));
        assert!(!is_dns_subdomain("a..b"));
        assert!(!is_dns_subdomain("-a.b"));
    }
}
