//! Objects the cluster owns but the model no longer describes.
//!
//! When something is removed from the spec (an instance group, a zone with its subnets,
//! an `sshAccess` CIDR), the cloud objects made for it stay until something deletes them.
//! [`find_orphans`] lists the objects the cluster owns and sets aside every one a task of
//! the plan *found* (its ID is among the plan's [`Claims`]); what is left, of the kinds
//! the model makes, is an orphan. [`kops_tasks::Plan::add_orphans`] turns them into
//! planned deletions (with a reason), and [`OrphanDeleter`] deletes them through
//! [`kops_tasks::Executor::delete_orphans`], one [wave](DELETION_WAVES) at a time:
//! dependents (autoscaling groups) before what they depend on (launch templates,
//! subnets, the VPC).
//!
//! As in kOps, some deletions are **deferred**: security-group rules, load balancers and
//! target groups (and here also EBS volumes, which hold etcd's data) are planned but
//! deleted only when deferred deletions are allowed (`update cluster --prune`), so a
//! rolling update can finish before traffic rules go.
//!
//! What is never taken for an orphan:
//! - objects not tagged `kubernetes.io/cluster/<cluster>=owned` (or the legacy
//!   `KubernetesCluster=<cluster>` alone): `shared` and untagged objects;
//! - objects Kubernetes made for workloads with the same ownership tag (load balancers,
//!   target groups and volumes carrying `kubernetes.io/service-name`,
//!   `elbv2.k8s.aws/cluster` or `kubernetes.io/created-for/...` tags), and EBS volumes
//!   that are not etcd's;
//! - instances (their autoscaling group owns them) and DNS records;
//! - security-group rules under a group the cluster does not own, rules referencing a
//!   group it does not own, and rules whose description starts with `kubernetes.io/`
//!   (the cloud controller's);
//! - objects of a kind whose tasks are not all `Sync` (a lifecycle override such as
//!   `IAMRole=ExistsAndWarnIfChanges` or `Ignore` means the model does not look after
//!   that kind), and objects whose key a task of the graph has while that task found
//!   nothing (the object may be the task's own, not yet listed by the find).
//!
//! **Duplicates**: a second object the cluster owns under a task's kind and name, while
//! the task found another one (a create whose answer was lost and whose object the
//! retry's look-up did not see in time), is planned for deletion too, with the reason:
//! the object the task found is the one the model's references use and is kept, the
//! other goes in its kind's wave, after the tasks have moved what pointed at it (a
//! subnet's route-table association is moved by its task). Its plan key is the task's
//! name followed by ` (duplicate <id>)`. EBS volumes are never deleted as duplicates
//! (one may hold etcd's data).
//!
//! Autoscaling groups go before the launch templates they use, subnets before the VPC
//! (`DELETION_WAVES`).

use std::collections::{BTreeSet, HashSet};

use kops_tasks::{
    Context, Deleter, Error, Lifecycle, OwnedObject, Result, TaskGraph, TaskKey, async_trait,
};

use super::cloud::{AwsCloud, CloudError, ListQuery, Resource, ResourceType};
use super::delete::is_owned;
use super::reads::Reads;
use kops_tasks::retry::RetryPolicy;

use ResourceType as R;

/// The tag kOps puts on every object that belongs to one instance group.
pub(crate) const INSTANCE_GROUP_TAG: &str = "kops.k8s.io/instancegroup";

/// The kinds of orphans, in the order they must be deleted: each inner slice is one wave,
/// and a wave starts only when the one before it is done. Kinds are the model's task
/// kinds (`Subnet`, `SecurityGroupRule`, ...).
pub(crate) const DELETION_WAVES: &[&[&str]] = &[
    &["AutoscalingGroup"],
    &["NetworkLoadBalancer"],
    &["TargetGroup"],
    &["LaunchTemplate"],
    &["EventBridgeRule", "SQS"],
    &["NatGateway"],
    &["ElasticIP"],
    &["EBSVolume"],
    &["SecurityGroupRule"],
    &["SecurityGroup"],
    &["RouteTable"],
    &["Subnet"],
    &["InternetGateway", "EgressOnlyInternetGateway"],
    &["VPC"],
    &["DHCPOptions"],
    &["SSHKey"],
    &["IAMInstanceProfile"],
    &["IAMRole"],
    &["IAMOIDCProvider"],
];

/// The model's task kind for each resource type an orphan may have, and whether its
/// deletion is deferred.
const KINDS: &[(ResourceType, &str, bool)] = &[
    (R::AutoscalingGroup, "AutoscalingGroup", false),
    (R::LoadBalancer, "NetworkLoadBalancer", true),
    (R::TargetGroup, "TargetGroup", true),
    (R::LaunchTemplate, "LaunchTemplate", false),
    (R::EventRule, "EventBridgeRule", false),
    (R::SqsQueue, "SQS", false),
    (R::NatGateway, "NatGateway", false),
    (R::ElasticIp, "ElasticIP", false),
    (R::Volume, "EBSVolume", true),
    (R::SecurityGroupRule, "SecurityGroupRule", true),
    (R::SecurityGroup, "SecurityGroup", false),
    (R::RouteTable, "RouteTable", false),
    (R::Subnet, "Subnet", false),
    (R::InternetGateway, "InternetGateway", false),
    (
        R::EgressOnlyInternetGateway,
        "EgressOnlyInternetGateway",
        false,
    ),
    (R::Vpc, "VPC", false),
    (R::DhcpOptions, "DHCPOptions", false),
    (R::KeyPair, "SSHKey", false),
    (R::IamInstanceProfile, "IAMInstanceProfile", false),
    (R::IamRole, "IAMRole", false),
    (R::IamOidcProvider, "IAMOIDCProvider", false),
];

/// The wave (index into [`DELETION_WAVES`]) that deletes objects of `key`'s kind;
/// `None` for kinds this module never plans to delete.
#[cfg(test)]
pub(crate) fn wave_of(key: &TaskKey) -> Option<usize> {
    DELETION_WAVES
        .iter()
        .position(|kinds| kinds.contains(&key.kind()))
}

fn resource_type(kind: &str) -> Option<ResourceType> {
    KINDS
        .iter()
        .find(|(_, k, _)| *k == kind)
        .map(|(rt, _, _)| *rt)
}

/// The cloud IDs (and ARNs) of the objects the tasks of a plan found: those objects are
/// described by the spec, whatever else the cluster owns is not.
#[derive(Clone, Debug, Default)]
pub(crate) struct Claims {
    ids: HashSet<String>,
    /// Task kinds the model does not fully manage (a task of the kind is not `Sync`).
    unmanaged: BTreeSet<String>,
    keys: HashSet<TaskKey>,
    /// The ID each task's find found, by the task's key.
    found: std::collections::HashMap<TaskKey, String>,
    /// Instance groups whose objects are kept although no task found them: groups an
    /// update leaves alone.
    kept_groups: BTreeSet<String>,
}

impl Claims {
    /// The claims of a planned `graph`: `outputs` gives the outputs each task's find
    /// recorded (see [`kops_tasks::Results`]).
    pub(crate) fn from_graph<C: ?Sized + Sync>(
        graph: &TaskGraph<C>,
        outputs: &kops_tasks::Results,
    ) -> Self {
        let mut c = Claims::default();
        for node in graph.nodes() {
            let key = node.key();
            c.keys.insert(key.clone());
            if node.lifecycle() != Lifecycle::Sync {
                c.unmanaged.insert(key.kind().to_owned());
            }
            if let Some(o) = outputs.outputs(key) {
                for attr in ["id", "arn"] {
                    if let Some(v) = o.get(attr).filter(|v| !v.is_empty()) {
                        c.ids.insert(v.to_owned());
                    }
                }
                if let Some(id) = o.get("id").filter(|v| !v.is_empty()) {
                    c.found.insert(key.clone(), id.to_owned());
                }
            }
        }
        c
    }

    /// Keeps the objects of instance group `name` (tagged
    /// [`INSTANCE_GROUP_TAG`]`=name`) although no task found them: an update that builds
    /// some groups' machines only leaves the others' as they are.
    pub(crate) fn keep_group(&mut self, name: impl Into<String>) {
        self.kept_groups.insert(name.into());
    }

    fn keeps(&self, r: &Resource) -> bool {
        r.tags
            .get(INSTANCE_GROUP_TAG)
            .is_some_and(|g| self.kept_groups.contains(g))
    }

    /// Whether a task found the object with this ID.
    pub(crate) fn is_claimed(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    fn manages(&self, kind: &str) -> bool {
        !self.unmanaged.contains(kind)
    }
}

/// Tags Kubernetes (and its controllers) put on the cloud objects it makes for workloads.
fn made_by_kubernetes(r: &Resource) -> bool {
    r.tags.keys().any(|k| {
        k == "kubernetes.io/service-name"
            || k == "elbv2.k8s.aws/cluster"
            || k.starts_with("kubernetes.io/created-for/")
            || k == "ebs.csi.aws.com/cluster"
    })
}

fn display_name(r: &Resource) -> String {
    r.name
        .clone()
        .or_else(|| r.tags.get("Name").map(str::to_owned))
        .unwrap_or_else(|| r.id.clone())
}

fn describe(r: &Resource, rt: ResourceType) -> String {
    let mut s = format!("{} {}", rt.terraform_type(), r.id);
    if let Some(g) = r.tags.get(INSTANCE_GROUP_TAG) {
        s.push_str(&format!(" of instance group {g:?}"));
    } else if let Some(z) = r.attr_str("availability_zone") {
        s.push_str(&format!(" in zone {z}"));
    }
    s
}

fn attr_int(r: &Resource, k: &str) -> i64 {
    r.attrs
        .get(k)
        .and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(0)
}

fn attr_first(r: &Resource, k: &str) -> Option<String> {
    match r.attrs.get(k)? {
        serde_json::Value::Array(a) => a.first().and_then(|v| v.as_str()).map(str::to_owned),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The security-group rule's key: kOps' name when the model would make it
/// (`from-<source>-ingress-tcp-22to22-<group>`), built from what the cloud reports.
fn rule_name(r: &Resource, group_name: &str, names: &[(String, String)]) -> String {
    let egress = r.attr_str("type") == Some("egress");
    let proto = r.attr_str("protocol").unwrap_or("-1");
    let proto_label = if proto == "-1" { "all" } else { proto };
    let (from, to) = if proto == "-1" {
        (0, 0)
    } else {
        (attr_int(r, "from_port"), attr_int(r, "to_port"))
    };
    let peer = r
        .attr_str("source_security_group_id")
        .map(|id| {
            names
                .iter()
                .find(|(i, _)| i == id)
                .map_or_else(|| id.to_owned(), |(_, n)| n.clone())
        })
        .or_else(|| attr_first(r, "cidr_blocks"))
        .or_else(|| attr_first(r, "ipv6_cidr_blocks"))
        .or_else(|| attr_first(r, "prefix_list_ids"))
        .unwrap_or_else(|| r.id.clone());
    let dir = if egress { "egress" } else { "ingress" };
    let (src, dst) = if egress {
        (group_name.to_owned(), peer)
    } else {
        (peer, group_name.to_owned())
    };
    format!("from-{src}-{dir}-{proto_label}-{from}to{to}-{dst}")
}

/// Every object `cluster` owns that no task of the plan found (see the module docs),
/// keyed by the model's task kind and the object's name, in no particular order; delete
/// them by [`DELETION_WAVES`].
pub(crate) async fn find_orphans(
    cloud: &dyn AwsCloud,
    cluster: &str,
    claims: &Claims,
    retry: &RetryPolicy,
) -> Result<Vec<OwnedObject>> {
    let cloud = Reads::new(cloud, retry);
    let mut out = Vec::new();
    let mut groups: Vec<(String, String)> = Vec::new();
    for &(rt, kind, deferred) in KINDS {
        if rt == R::SecurityGroupRule {
            continue;
        }
        let found = match cloud.list_for_cluster(rt, cluster).await {
            Ok(v) => v,
            // A backend that cannot list a type has nothing of it to delete.
            Err(CloudError::NotImplemented { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        for r in found.into_iter().filter(|r| is_owned(r, cluster)) {
            if rt == R::SecurityGroup {
                groups.push((r.id.clone(), display_name(&r)));
            }
            if !claims.manages(kind) || claims.is_claimed(&r.id) {
                continue;
            }
            if r.arn.as_deref().is_some_and(|a| claims.is_claimed(a)) {
                continue;
            }
            if made_by_kubernetes(&r) || claims.keeps(&r) {
                continue;
            }
            if rt == R::Volume && !r.tags.keys().any(|k| k.starts_with("k8s.io/etcd/")) {
                continue;
            }
            let key = TaskKey::new(kind, display_name(&r));
            if claims.keys.contains(&key) {
                // A duplicate when the task found another object of the name.
                match claims.found.get(&key) {
                    Some(kept) if *kept != r.id && rt != R::Volume => {
                        out.push(OwnedObject {
                            key: TaskKey::new(
                                kind,
                                format!("{} (duplicate {})", key.name(), r.id),
                            ),
                            id: r.id.clone(),
                            description: format!(
                                "{}: a second object named {:?}, a duplicate of {kept} which the model uses (kept)",
                                describe(&r, rt),
                                key.name()
                            ),
                            deferred,
                        });
                    }
                    _ => {}
                }
                continue;
            }
            out.push(OwnedObject {
                key,
                id: r.id.clone(),
                description: describe(&r, rt),
                deferred,
            });
        }
    }
    if claims.manages("SecurityGroupRule") {
        let owned: HashSet<&str> = groups.iter().map(|(id, _)| id.as_str()).collect();
        for (gid, gname) in &groups {
            let rules = cloud
                .list(&ListQuery::new(R::SecurityGroupRule).with_parent(gid.clone()))
                .await?;
            for r in rules {
                if claims.is_claimed(&r.id) {
                    continue;
                }
                if r.attr_str("description")
                    .is_some_and(|d| d.starts_with("kubernetes.io/"))
                {
                    continue;
                }
                if r.attr_str("source_security_group_id")
                    .is_some_and(|s| !owned.contains(s))
                {
                    continue;
                }
                let key = TaskKey::new("SecurityGroupRule", rule_name(&r, gname, &groups));
                if claims.keys.contains(&key) {
                    continue;
                }
                out.push(OwnedObject {
                    key,
                    id: r.id.clone(),
                    description: format!("aws_security_group_rule {} of group {gname}", r.id),
                    deferred: true,
                });
            }
        }
    }
    Ok(out)
}

/// The orphans of `plan` grouped by [`DELETION_WAVES`], for deleting one wave at a time.
pub(crate) fn waves<'a>(owned: &'a [OwnedObject]) -> Vec<Vec<OwnedObject>> {
    DELETION_WAVES
        .iter()
        .map(|kinds| {
            owned
                .iter()
                .filter(|o: &&'a OwnedObject| kinds.contains(&o.key.kind()))
                .cloned()
                .collect()
        })
        .collect()
}

/// Deletes orphans found by [`find_orphans`] through the cloud's `delete`
/// ([`kops_tasks::resource::ResourceCloud::delete`]); an object already gone counts as
/// deleted.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub(crate) struct OrphanDeleter;

impl OrphanDeleter {
    /// A deleter.
    pub(crate) fn new() -> Self {
        OrphanDeleter
    }
}

#[async_trait]
impl Deleter<dyn AwsCloud> for OrphanDeleter {
    async fn delete(&self, cx: &Context<'_, dyn AwsCloud>, object: &OwnedObject) -> Result<()> {
        let rt = resource_type(object.key.kind()).ok_or_else(|| Error::Lifecycle {
            key: object.key.clone(),
            message: format!(
                "objects of kind {} are not deleted as orphans",
                object.key.kind()
            ),
        })?;
        match cx.cloud().delete(rt, &object.id).await {
            Ok(()) | Err(CloudError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_wave_and_waves_follow_delete_order() {
        for (_, kind, _) in KINDS {
            assert!(
                wave_of(&TaskKey::new(*kind, "x")).is_some(),
                "{kind} has no wave"
            );
        }
        let pos = |k: &str| wave_of(&TaskKey::new(k, "x")).unwrap_or(usize::MAX);
        assert!(pos("AutoscalingGroup") < pos("LaunchTemplate"));
        assert!(pos("LaunchTemplate") < pos("SecurityGroup"));
        assert!(pos("SecurityGroupRule") < pos("SecurityGroup"));
        assert!(pos("NatGateway") < pos("ElasticIP"));
        assert!(pos("NatGateway") < pos("Subnet"));
        assert!(pos("Subnet") < pos("VPC"));
        assert!(pos("IAMInstanceProfile") < pos("IAMRole"));
        // Every kind of the cluster-delete order that the model makes has a wave.
        for rt in super::super::delete::DELETE_ORDER {
            if *rt == R::Instance {
                continue;
            }
            assert!(KINDS.iter().any(|(t, _, _)| t == rt), "{rt} has no kind");
        }
    }

    #[test]
    fn rule_names_follow_kops() {
        let r = Resource::new(R::SecurityGroupRule, "sgr-1")
            .with_attr("type", "ingress")
            .with_attr("protocol", "tcp")
            .with_attr("from_port", 22)
            .with_attr("to_port", 22)
            .with_attr("cidr_blocks", vec!["10.0.0.0/8"]);
        assert_eq!(
            rule_name(&r, "nodes.a.example.com", &[]),
            "from-10.0.0.0/8-ingress-tcp-22to22-nodes.a.example.com"
        );
    }
}
