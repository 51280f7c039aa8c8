//! `delete cluster` on GCE (kOps' `pkg/resources/gce`): every object the cluster owns,
//! found by kOps' labels and names, deleted in dependency order. An object is the
//! cluster's only when it carries the cluster label (labelled types) or its name is one
//! kOps gives the cluster's objects: `<object>-<cluster>` (cut and hashed like
//! [`naming::suffixed`]), the cluster's network name, or a per-role service account.
//! Nothing else is ever deleted.
//!
//! `delete instancegroup` deletes one group's objects the same way, as kOps' does
//! (`DeleteGroup`): its managed instance groups, then its instance templates
//! ([`find_group_resources`], [`delete_group`]).

use kops_api::naming::hash_string;

use super::cloud::{
    CLUSTER_LABEL, GceCloud, GceResourceType as R, INSTANCE_GROUP_LABEL, ListQuery, Resource,
    TagFilter, safe_cluster_name,
};
use super::naming;
use crate::error::{Result, cloud};

/// Deletion order: users before what they use.
const ORDER: &[R] = &[
    R::ForwardingRule,
    R::TargetPool,
    R::RegionBackendService,
    R::Address,
    R::HttpHealthCheck,
    R::RegionHealthCheck,
    R::InstanceGroupManager,
    R::InstanceTemplate,
    R::Disk,
    R::RouterNat,
    R::Router,
    R::Firewall,
    R::Subnetwork,
    R::Network,
    R::StorageBucketIam,
    R::ProjectIamBinding,
    R::ServiceAccount,
];

/// Whether `name` is one kOps gives an object of `cluster` by suffix: `-<safe>` in full,
/// or cut with the hash of the safe cluster name.
fn suffixed_by_cluster(name: &str, cluster: &str) -> bool {
    let safe = safe_cluster_name(cluster);
    if name.ends_with(&format!("-{safe}")) {
        return true;
    }
    let hash = hash_string(&safe, 6);
    let Some(rest) = name.strip_suffix(&format!("-{hash}")) else {
        return false;
    };
    // The cut cluster part sits before the hash: some non-empty prefix of the safe name.
    (1..=safe.len()).rev().any(|n| {
        safe.get(..n)
            .is_some_and(|p| rest.ends_with(&format!("-{p}")) && n >= 10.min(safe.len()))
    })
}

/// Whether `r` belongs to `cluster` (module docs).
pub(crate) fn owned_by(r: &Resource, cluster: &str) -> bool {
    let rt = r.resource_type;
    let safe = safe_cluster_name(cluster);
    if rt.facts().labelled {
        return r.tags.get(CLUSTER_LABEL) == Some(&safe);
    }
    let name = r.name.as_deref().unwrap_or(&r.id);
    match rt {
        R::Network => name == naming::network_name(cluster),
        R::ServiceAccount => ["control-plane", "node", "bastion"].iter().any(|role| {
            r.attr_str("account_id") == Some(naming::service_account_name(role, cluster).as_str())
        }),
        R::ProjectIamBinding | R::StorageBucketIam | R::StorageBucketAcl => {
            let members = r.attrs.get("members").or_else(|| r.attrs.get("member"));
            let text = members.map(|m| m.to_string()).unwrap_or_default();
            ["control-plane", "node", "bastion"]
                .iter()
                .any(|role| text.contains(&naming::service_account_name(role, cluster)))
        }
        R::InstanceGroupManager => false,
        _ => suffixed_by_cluster(name, cluster),
    }
}

/// Every object `cluster` owns, in deletion order.
pub async fn find_cluster_resources(api: &dyn GceCloud, cluster: &str) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    let mut templates = Vec::new();
    for &rt in ORDER {
        let all = api
            .list(&ListQuery::new(rt))
            .await
            .map_err(cloud(format!("listing {rt} of cluster {cluster}")))?;
        for r in all {
            if owned_by(&r, cluster) {
                if rt == R::InstanceTemplate
                    && let Some(l) = r.attr_str("self_link")
                {
                    templates.push(l.to_owned());
                }
                out.push(r);
            }
        }
    }
    // Managed instance groups are the cluster's when they run one of its templates.
    let mut groups = groups_running(api, cluster, &out).await?;
    groups.append(&mut out);
    Ok(groups)
}

/// The managed instance groups that run one of `templates` (the only way to tell a
/// cluster's groups: kOps' names for them are not suffixed by the cluster).
async fn groups_running(
    api: &dyn GceCloud,
    cluster: &str,
    templates: &[Resource],
) -> Result<Vec<Resource>> {
    let links: Vec<&str> = templates
        .iter()
        .filter(|r| r.resource_type == R::InstanceTemplate)
        .filter_map(|r| r.attr_str("self_link"))
        .collect();
    let migs = api
        .list(&ListQuery::new(R::InstanceGroupManager))
        .await
        .map_err(cloud(format!(
            "listing instance groups of cluster {cluster}"
        )))?;
    Ok(migs
        .into_iter()
        .filter(|m| {
            m.attrs
                .get("version")
                .and_then(|v| v.get("instance_template"))
                .and_then(|t| t.as_str())
                .is_some_and(|t| links.contains(&t))
        })
        .collect())
}

/// The objects of instance group `group` of `cluster`, in deletion order: the managed
/// instance groups (one per zone) running its instance templates, then the templates,
/// found by the cluster and instance-group labels kOps puts on them.
pub async fn find_group_resources(
    api: &dyn GceCloud,
    cluster: &str,
    group: &str,
) -> Result<Vec<Resource>> {
    let templates = api
        .list(
            &ListQuery::new(R::InstanceTemplate)
                .with_tag(TagFilter::equals(CLUSTER_LABEL, safe_cluster_name(cluster)))
                .with_tag(TagFilter::equals(INSTANCE_GROUP_LABEL, group)),
        )
        .await
        .map_err(cloud(format!(
            "listing the instance templates of group {group} of cluster {cluster}"
        )))?;
    let mut found = groups_running(api, cluster, &templates).await?;
    found.extend(templates);
    Ok(found)
}

/// Deletes the objects of instance group `group` of `cluster` ([`find_group_resources`]);
/// returns what was deleted. Its machines go with their managed instance groups.
pub async fn delete_group(api: &dyn GceCloud, cluster: &str, group: &str) -> Result<Vec<Resource>> {
    let found = find_group_resources(api, cluster, group).await?;
    delete_all(api, cluster, &found).await?;
    Ok(found)
}

/// Deletes `found`, in its order.
async fn delete_all(api: &dyn GceCloud, cluster: &str, found: &[Resource]) -> Result<()> {
    for r in found {
        let rt = r.resource_type;
        api.delete(rt, &r.id).await.map_err(cloud(format!(
            "deleting {rt} {} of cluster {cluster}",
            r.id
        )))?;
    }
    Ok(())
}

/// Deletes everything `cluster` owns; returns what was deleted. A dry run is
/// [`find_cluster_resources`].
pub async fn delete_cluster(api: &dyn GceCloud, cluster: &str) -> Result<Vec<Resource>> {
    let found = find_cluster_resources(api, cluster).await?;
    delete_all(api, cluster, &found).await?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_to_their_cluster_only() {
        let long = "minimal-gce-with-a-very-very-very-very-very-long-name.example.com";
        assert!(suffixed_by_cluster(
            "ssh-external-to-node-minimal-gce-with-a-very-very-very-v-96dqvi",
            long
        ));
        assert!(suffixed_by_cluster(
            "nodeport-external-to-node-minimal-gce-example-com",
            "minimal-gce.example.com"
        ));
        assert!(!suffixed_by_cluster(
            "nodeport-external-to-node-other-gce-example-com",
            "minimal-gce.example.com"
        ));
        assert!(!suffixed_by_cluster("default", "minimal-gce.example.com"));
        assert!(!suffixed_by_cluster(
            "x-minimal-gce-example-com",
            "gce.example.com.other"
        ));
    }
}
