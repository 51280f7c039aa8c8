//! `spec.etcdClusters` (kOps' `validateEtcdClusterSpec`,
//! `validateEtcdMemberSpec`, `validateEtcdVersion`).

use std::collections::BTreeSet;

use super::super::ValidationErrors;
use crate::internal::Cluster;
use crate::v1alpha2::{EtcdClusterSpec, EtcdMemberSpec};

/// The etcd cluster names kOps manages.
const ETCD_CLUSTER_NAMES: [&str; 4] = ["cilium", "main", "events", "leases"];

/// `spec.etcdClusters`: present, then each cluster in turn.
pub(super) fn validate_etcd_clusters(c: &Cluster, errs: &mut ValidationErrors) {
    let etcd = c.spec.etcd_clusters.as_deref().unwrap_or(&[]);
    if etcd.is_empty() {
        errs.push(
            "spec.etcdClusters",
            "required: at least the main and events etcd clusters",
        );
    }
    let mut etcd_names = BTreeSet::new();
    for (i, e) in etcd.iter().enumerate() {
        validate_etcd_cluster_spec(i, e, &mut etcd_names, errs);
    }
}

/// One etcd cluster: a known, unique name; the Manager provider; its members;
/// its version.
pub(super) fn validate_etcd_cluster_spec<'a>(
    i: usize,
    e: &'a EtcdClusterSpec,
    etcd_names: &mut BTreeSet<&'a str>,
    errs: &mut ValidationErrors,
) {
    let p = format!("spec.etcdClusters[{i}]");
    let name = e.name.as_deref().unwrap_or("");
    if !ETCD_CLUSTER_NAMES.contains(&name) {
        errs.push(
            format!("{p}.name"),
            format!("unsupported value {name:?}: use main, events, cilium or leases"),
        );
    } else if !etcd_names.insert(name) {
        errs.push(
            format!("{p}.name"),
            format!("duplicate etcd cluster {name:?}"),
        );
    }
    if let Some(prov) = e.provider.as_deref()
        && prov != "Manager"
    {
        errs.push(
            format!("{p}.provider"),
            format!("unsupported value {prov:?}: the only provider is Manager"),
        );
    }
    validate_etcd_members(&p, e.etcd_members.as_deref().unwrap_or(&[]), errs);
    validate_etcd_version(&p, e, errs);
}

/// `etcdMembers`: an odd number of named members, each on an instance group.
fn validate_etcd_members(p: &str, members: &[EtcdMemberSpec], errs: &mut ValidationErrors) {
    if members.is_empty() {
        errs.push(
            format!("{p}.etcdMembers"),
            "at least one member is required (one per control-plane instance group)",
        );
    } else if members.len().is_multiple_of(2) {
        errs.push(
            format!("{p}.etcdMembers"),
            format!(
                "has {} members; use an odd number: etcd needs a majority for quorum, so 1 member tolerates 0 failures, 3 tolerate 1, 5 tolerate 2; 2 and 4 add nothing",
                members.len()
            ),
        );
    }
    let mut member_names = BTreeSet::new();
    for (j, m) in members.iter().enumerate() {
        let mp = format!("{p}.etcdMembers[{j}]");
        match m.name.as_deref() {
            None | Some("") => errs.push(format!("{mp}.name"), "member name is required"),
            Some(n) => {
                if !member_names.insert(n) {
                    errs.push(format!("{mp}.name"), format!("duplicate member name {n:?}"));
                }
            }
        }
        if m.instance_group.as_deref().unwrap_or("").is_empty() {
            errs.push(
                format!("{mp}.instanceGroup"),
                "member instanceGroup is required (the control-plane instance group it runs on)",
            );
        }
    }
}

/// `version`: set when `image` is, and etcd 3.
fn validate_etcd_version(p: &str, e: &EtcdClusterSpec, errs: &mut ValidationErrors) {
    if e.image.is_some() && e.version.is_none() {
        errs.push(
            format!("{p}.version"),
            "version must be set when image is set",
        );
    }
    if let Some(v) = e.version.as_deref() {
        match semver::Version::parse(v.trim_start_matches('v')) {
            Err(_) => errs.push(
                format!("{p}.version"),
                format!("{v:?} is not a valid etcd version"),
            ),
            Ok(sv) if sv.major != 3 => errs.push(
                format!("{p}.version"),
                format!("etcd {v} is not supported: only major version 3"),
            ),
            Ok(_) => {}
        }
    }
}
