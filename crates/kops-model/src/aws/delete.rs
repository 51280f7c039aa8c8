//! `delete cluster` over any [`AwsCloud`]: finds what a cluster owns by its tags and
//! deletes it in dependency order, retrying what AWS refuses while dependents still exist.
//!
//! It needs no model, only the cloud trait; it takes `&dyn AwsCloud`, so the in-memory
//! mock runs exactly the same code as AWS.
//!
//! Ownership follows kOps: an object is the cluster's when it carries
//! `kubernetes.io/cluster/<name>=owned`, or the legacy `KubernetesCluster=<name>` without a
//! `kubernetes.io/cluster/<name>` tag of another value. Objects tagged `shared` and
//! untagged objects are never listed, so never deleted. Children without tags (routes,
//! associations, inline policies, listeners, hooks, targets) go with their parent, whose
//! delete detaches them first; security-group rules that reference another group are
//! revoked before any group is deleted, so groups that reference each other can go.
//!
//! DNS records carry no tags; as kOps does, the `A` and `AAAA` records with the names the
//! cluster gives its endpoints (`api.<cluster>`, `api.internal.<cluster>`,
//! `kops-controller.internal.<cluster>`, `bastion.<cluster>`, `etcd-*.<cluster>`) in the
//! hosted zones the cluster name lies in are the cluster's; other records and the zones
//! themselves are never touched. Clusters with gossip names (`*.k8s.local`) have none.
//!
//! The state store's files (cluster spec, keys, secrets, instance groups) are not cloud
//! resources and are not deleted here: kOps removes them through its state store after the
//! cloud resources are gone, which is `kops-statestore`'s business.

use std::fmt;
use std::time::Duration;

use kops_tasks::retry::RetryPolicy;

use super::cloud::{AwsCloud, HostedZone, ListQuery, Resource, ResourceType, ZoneQuery};
use super::cloud::{CloudError as Error, CloudResult as Result};
use super::reads::Reads;

use ResourceType as R;

/// Deletion order: dependents before what they depend on.
pub(crate) const DELETE_ORDER: &[ResourceType] = &[
    R::AutoscalingGroup,
    R::Instance,
    R::LoadBalancer,
    R::TargetGroup,
    R::LaunchTemplate,
    R::EventRule,
    R::SqsQueue,
    R::NatGateway,
    R::ElasticIp,
    R::Volume,
    R::SecurityGroupRule,
    R::SecurityGroup,
    R::RouteTable,
    R::Subnet,
    R::InternetGateway,
    R::EgressOnlyInternetGateway,
    R::Vpc,
    R::DhcpOptions,
    R::KeyPair,
    R::IamInstanceProfile,
    R::IamRole,
    R::IamOidcProvider,
];

/// How [`delete_cluster`] retries.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// Passes over what is left (each pass tries every remaining object once).
    pub max_rounds: u32,
    /// Pause between passes (AWS deletes some objects asynchronously).
    pub retry_delay: Duration,
    /// How the listings are retried when throttled or unavailable.
    pub retry: RetryPolicy,
}

impl Default for DeleteOptions {
    fn default() -> Self {
        DeleteOptions {
            max_rounds: 30,
            retry_delay: Duration::from_secs(10),
            retry: RetryPolicy::default(),
        }
    }
}

impl DeleteOptions {
    /// Sets the number of passes (at least 1).
    pub fn with_max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Sets the pause between passes.
    pub fn with_retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    /// Sets how the listings are retried.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }
}

/// An object that could not be deleted, and why.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Undeleted {
    /// The object.
    pub resource: Resource,
    /// The last error.
    pub reason: String,
}

/// What [`delete_cluster`] did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DeleteReport {
    /// Objects deleted, in the order they went.
    pub deleted: Vec<Resource>,
    /// Objects left behind with the reason.
    pub failed: Vec<Undeleted>,
}

impl DeleteReport {
    /// Whether everything the cluster owned is gone.
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty()
    }
}

impl fmt::Display for DeleteReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "deleted {} object(s)", self.deleted.len())?;
        for u in &self.failed {
            writeln!(
                f,
                "not deleted: {} {}: {}",
                kind(&u.resource),
                u.resource.id,
                u.reason
            )?;
        }
        Ok(())
    }
}

fn kind(r: &Resource) -> String {
    r.resource_type.to_string()
}

/// Whether `r` belongs to `cluster` (see the module docs).
pub fn is_owned(r: &Resource, cluster: &str) -> bool {
    match r.tags.get(&format!("kubernetes.io/cluster/{cluster}")) {
        Some(v) => v == "owned",
        None => r
            .tags
            .get("KubernetesCluster")
            .is_some_and(|v| v == cluster),
    }
}

/// Whether a DNS record named `name` (with or without the trailing dot) is one kOps
/// creates for `cluster`'s endpoints.
pub(crate) fn is_cluster_record(name: &str, cluster: &str) -> bool {
    let name = name.trim_end_matches('.');
    let cluster = cluster.trim_end_matches('.');
    let Some(prefix) = name.strip_suffix(cluster).and_then(|p| p.strip_suffix('.')) else {
        return false;
    };
    matches!(
        prefix,
        "api" | "api.internal" | "kops-controller.internal" | "bastion"
    ) || (prefix.starts_with("etcd-") && !prefix.contains('.'))
}

/// The hosted zones `cluster`'s name lies in (`example.com.` for `a.example.com`).
async fn cluster_zones(cloud: Reads<'_>, cluster: &str) -> Result<Vec<HostedZone>> {
    let cluster = cluster.trim_end_matches('.');
    if cluster.ends_with(".k8s.local") {
        return Ok(Vec::new());
    }
    let mut zones: Vec<HostedZone> = Vec::new();
    let mut rest = cluster;
    while let Some((_, parent)) = rest.split_once('.') {
        for name in [rest, parent] {
            for z in cloud
                .hosted_zones(&ZoneQuery::Name(name.to_owned()))
                .await?
            {
                if !zones.iter().any(|x| x.id == z.id) {
                    zones.push(z);
                }
            }
        }
        rest = parent;
    }
    Ok(zones)
}

/// The cluster's DNS records (see the module docs).
async fn cluster_records(cloud: Reads<'_>, cluster: &str) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    for z in cluster_zones(cloud, cluster).await? {
        let records = cloud
            .list(&ListQuery::new(R::RecordSet).with_parent(z.id.clone()))
            .await?;
        out.extend(records.into_iter().filter(|r| {
            matches!(r.attr_str("type"), Some("A" | "AAAA"))
                && r.attr_str("name")
                    .is_some_and(|n| is_cluster_record(n, cluster))
        }));
    }
    Ok(out)
}

/// Everything `cluster` owns, in deletion order: the dry run of [`delete_cluster`]. The
/// listings are retried under the default [`RetryPolicy`]; see [`find_cluster_resources_with`].
pub async fn find_cluster_resources(cloud: &dyn AwsCloud, cluster: &str) -> Result<Vec<Resource>> {
    find_cluster_resources_with(cloud, cluster, &RetryPolicy::default()).await
}

/// [`find_cluster_resources`] with the listings retried under `retry`.
pub async fn find_cluster_resources_with(
    cloud: &dyn AwsCloud,
    cluster: &str,
    retry: &RetryPolicy,
) -> Result<Vec<Resource>> {
    let cloud = Reads::new(cloud, retry);
    let mut out = cluster_records(cloud, cluster).await?;
    let mut groups: Vec<String> = Vec::new();
    for &rt in DELETE_ORDER {
        if rt == R::SecurityGroupRule {
            continue;
        }
        let found = match cloud.list_for_cluster(rt, cluster).await {
            Ok(v) => v,
            // A backend that cannot list a type has nothing of it to delete.
            Err(Error::NotImplemented { .. }) => continue,
            Err(e) => return Err(e),
        };
        for r in found.into_iter().filter(|r| is_owned(r, cluster)) {
            if rt == R::SecurityGroup {
                groups.push(r.id.clone());
            }
            out.push(r);
        }
    }
    // Rules referencing another group: revoked before any owned group is deleted.
    let mut rules = Vec::new();
    for g in &groups {
        let rs = cloud
            .list(&ListQuery::new(R::SecurityGroupRule).with_parent(g.clone()))
            .await?;
        rules.extend(
            rs.into_iter()
                .filter(|r| r.attr_str("source_security_group_id").is_some()),
        );
    }
    let at = out
        .iter()
        .position(|r| r.resource_type == R::SecurityGroup)
        .unwrap_or(out.len());
    out.splice(at..at, rules);
    Ok(out)
}

/// Deletes everything `cluster` owns, in dependency order, retrying objects AWS refuses
/// for now (a dependency still attached, throttling) for up to
/// [`DeleteOptions::max_rounds`] passes. Returns what went and what was left with the
/// reason; listing failures are errors.
pub async fn delete_cluster(
    cloud: &dyn AwsCloud,
    cluster: &str,
    options: &DeleteOptions,
) -> Result<DeleteReport> {
    let found = find_cluster_resources_with(cloud, cluster, &options.retry).await?;
    Ok(delete_in_order(cloud, found, options).await)
}

/// What one instance group of `cluster` owns, in deletion order: its autoscaling group,
/// the instances tagged with the group, and its launch template (kOps'
/// `kops.k8s.io/instancegroup` tag on an object the cluster owns). The dry run of
/// [`delete_instance_group`]. Shared objects (subnets, security groups, volumes holding
/// etcd's data) are not the group's and are not listed.
pub async fn find_instance_group_resources(
    cloud: &dyn AwsCloud,
    cluster: &str,
    group: &str,
    retry: &RetryPolicy,
) -> Result<Vec<Resource>> {
    let cloud = Reads::new(cloud, retry);
    let mut out = Vec::new();
    for rt in [R::AutoscalingGroup, R::Instance, R::LaunchTemplate] {
        let found = match cloud.list_for_cluster(rt, cluster).await {
            Ok(v) => v,
            Err(Error::NotImplemented { .. }) => continue,
            Err(e) => return Err(e),
        };
        out.extend(found.into_iter().filter(|r| {
            // A terminated instance may stay listed for a while: it is gone already.
            let ended = matches!(r.attr_str("state"), Some("terminated" | "shutting-down"));
            !ended
                && is_owned(r, cluster)
                && r.tags
                    .get(super::orphans::INSTANCE_GROUP_TAG)
                    .is_some_and(|g| g == group)
        }));
    }
    Ok(out)
}

/// Deletes one instance group's cloud objects ([`find_instance_group_resources`]) as
/// kOps' `delete instancegroup` does, retrying as [`delete_cluster`] does. The group's
/// spec in the state store is the caller's to remove, after this succeeds.
pub async fn delete_instance_group(
    cloud: &dyn AwsCloud,
    cluster: &str,
    group: &str,
    options: &DeleteOptions,
) -> Result<DeleteReport> {
    let found = find_instance_group_resources(cloud, cluster, group, &options.retry).await?;
    Ok(delete_in_order(cloud, found, options).await)
}

/// Deletes `found` (in deletion order) in passes, as [`delete_cluster`] documents.
async fn delete_in_order(
    cloud: &dyn AwsCloud,
    found: Vec<Resource>,
    options: &DeleteOptions,
) -> DeleteReport {
    let mut pending: Vec<(Resource, Option<String>)> =
        found.into_iter().map(|r| (r, None)).collect();
    let mut report = DeleteReport::default();
    for round in 0..options.max_rounds {
        if pending.is_empty() {
            break;
        }
        if round > 0 && !options.retry_delay.is_zero() {
            tokio::time::sleep(options.retry_delay).await;
        }
        let mut next = Vec::new();
        // The kind whose deletion failed for good: what comes after it in the order may be
        // what it depends on (a target group its autoscaling group uses), so it stays.
        let mut stopped_at: Option<ResourceType> = None;
        for (r, _) in pending {
            let rt = r.resource_type;
            if let Some(kind) = stopped_at.filter(|k| *k != rt) {
                report.failed.push(Undeleted {
                    resource: r,
                    reason: format!("not attempted: deleting a {kind} failed first"),
                });
                continue;
            }
            match cloud.delete(rt, &r.id).await {
                // Already gone (an earlier delete whose answer was lost, or a listing
                // that lagged behind a delete): what was asked for holds.
                Ok(()) | Err(Error::NotFound { .. }) => {
                    tracing::info!(kind = %rt, id = %r.id, "deleted");
                    report.deleted.push(r);
                }
                Err(e) if e.is_retryable() => {
                    tracing::debug!(kind = %rt, id = %r.id, error = %e, "delete will be retried");
                    next.push((r, Some(e.to_string())));
                }
                Err(e) => {
                    tracing::warn!(kind = %rt, id = %r.id, error = %e, "delete failed");
                    stopped_at = Some(rt);
                    report.failed.push(Undeleted {
                        resource: r,
                        reason: e.to_string(),
                    });
                }
            }
        }
        pending = next;
        if stopped_at.is_some() {
            break;
        }
    }
    for (r, reason) in pending {
        report.failed.push(Undeleted {
            resource: r,
            reason: reason.unwrap_or_else(|| "not attempted".into()),
        });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership_follows_cluster_tags() {
        let c = "a.example.com";
        let owned =
            Resource::new(R::Vpc, "vpc-1").with_tag(format!("kubernetes.io/cluster/{c}"), "owned");
        let shared = Resource::new(R::Vpc, "vpc-2")
            .with_tag(format!("kubernetes.io/cluster/{c}"), "shared")
            .with_tag("KubernetesCluster", c);
        let legacy = Resource::new(R::Vpc, "vpc-3").with_tag("KubernetesCluster", c);
        let other = Resource::new(R::Vpc, "vpc-4").with_tag("KubernetesCluster", "b.example.com");
        let untagged = Resource::new(R::Vpc, "vpc-5");
        assert!(is_owned(&owned, c));
        assert!(!is_owned(&shared, c));
        assert!(is_owned(&legacy, c));
        assert!(!is_owned(&other, c));
        assert!(!is_owned(&untagged, c));
    }

    #[test]
    fn cluster_records_are_the_endpoint_names() {
        let c = "a.example.com";
        for n in [
            "api.a.example.com",
            "api.a.example.com.",
            "api.internal.a.example.com",
            "kops-controller.internal.a.example.com",
            "bastion.a.example.com",
            "etcd-main-1.a.example.com",
        ] {
            assert!(is_cluster_record(n, c), "{n}");
        }
        for n in [
            "a.example.com",
            "api.b.example.com",
            "www.a.example.com",
            "api.xa.example.com",
            "x.etcd-1.a.example.com",
            "example.com",
        ] {
            assert!(!is_cluster_record(n, c), "{n}");
        }
    }

    #[test]
    fn order_puts_dependents_first() {
        let pos = |t| {
            DELETE_ORDER
                .iter()
                .position(|x| *x == t)
                .unwrap_or(usize::MAX)
        };
        assert!(pos(R::AutoscalingGroup) < pos(R::LaunchTemplate));
        assert!(pos(R::LaunchTemplate) < pos(R::SecurityGroup));
        assert!(pos(R::SecurityGroupRule) < pos(R::SecurityGroup));
        assert!(pos(R::Subnet) < pos(R::Vpc));
        assert!(pos(R::InternetGateway) < pos(R::Vpc));
        assert!(pos(R::Vpc) < pos(R::DhcpOptions));
        assert!(pos(R::IamInstanceProfile) < pos(R::IamRole));
        assert!(pos(R::NatGateway) < pos(R::ElasticIp));
    }
}
