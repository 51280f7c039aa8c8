//! The cloud side of validate and rolling update, cloud-neutral: each instance group's
//! cloud group, its members and whether each needs an update, detach and terminate.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_cloud_aws::AwsCloud;
use kops_cloud_aws::cloud::{
    DETACHED_TAG, ListQuery, Resource as AwsResource, ResourceType, TagFilter,
};
use kops_cloud_gce::cloud::{GceResourceType, ManagedInstance, Resource as GceResource};
use kops_cloud_gce::{GceCloud, GceCloudExt as _};
use kops_cloud_hetzner::cloud::Resource as HetznerResource;
use kops_cloud_hetzner::{HetznerCloud, HetznerCloudExt as _, HetznerResourceType};

use crate::{Error, Result};

/// Why a member is, or is not, up to date.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "status")]
#[non_exhaustive]
pub enum MemberStatus {
    /// Runs the group's current configuration.
    UpToDate,
    /// Runs an older configuration: what it runs and what the group wants.
    NeedsUpdate {
        /// Why, e.g. `launch template lt-1 version 1, the group wants 2`.
        reason: String,
    },
    /// Detached from its group by an earlier surge; replaced last.
    Detached,
}

impl MemberStatus {
    /// Whether the member must be replaced (out of date or detached).
    pub fn needs_update(&self) -> bool {
        !matches!(self, MemberStatus::UpToDate)
    }
}

/// One machine of an instance group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CloudMember {
    /// The instance's ID on AWS, its name on GCE: the last segment of its node's
    /// `spec.providerID`.
    pub id: String,
    /// Update status.
    #[serde(flatten)]
    pub status: MemberStatus,
    /// Waits in the group's warm pool (never joined the cluster): replaced by terminating
    /// it at once, without drain or validation, as kOps does.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warm_pool: bool,
    /// The machine type (`m5.large`, `n2-standard-2`), when the cloud tells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_type: Option<String>,
    /// The machine's private IPv4 address, when the cloud tells.
    #[serde(rename = "internalIP", skip_serializing_if = "Option::is_none")]
    pub internal_ip: Option<String>,
}

impl CloudMember {
    /// A member with `status`.
    pub fn new(id: impl Into<String>, status: MemberStatus) -> Self {
        CloudMember {
            id: id.into(),
            status,
            warm_pool: false,
            machine_type: None,
            internal_ip: None,
        }
    }

    /// Marks the member as waiting in the warm pool.
    pub fn in_warm_pool(mut self) -> Self {
        self.warm_pool = true;
        self
    }

    /// Sets the machine type and private address the cloud reports (empty: unknown).
    pub fn with_machine(mut self, machine_type: Option<&str>, internal_ip: Option<&str>) -> Self {
        let known = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_owned);
        self.machine_type = known(machine_type);
        self.internal_ip = known(internal_ip);
        self
    }
}

/// An instance group's cloud group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CloudGroup {
    /// The instance group's name.
    pub instance_group: String,
    /// The cloud's name for the group: the ASG name on AWS; on GCE the names of its managed
    /// instance groups (one per zone), comma-separated.
    pub group: String,
    /// Minimum size.
    pub min_size: i32,
    /// Maximum size.
    pub max_size: i32,
    /// The number of members the cloud keeps (ASG desired capacity).
    pub target_size: i32,
    /// Members, attached ones in the group's order, then detached ones.
    pub members: Vec<CloudMember>,
}

impl CloudGroup {
    /// An empty group.
    pub fn new(
        instance_group: impl Into<String>,
        group: impl Into<String>,
        min: i32,
        max: i32,
        target: i32,
    ) -> Self {
        CloudGroup {
            instance_group: instance_group.into(),
            group: group.into(),
            min_size: min,
            max_size: max,
            target_size: target,
            members: Vec::new(),
        }
    }
}

/// The cloud operations validate and rolling update need. Object-safe; implemented for AWS
/// by [`AwsInstanceGroups`], for GCE by [`GceInstanceGroups`] and for Hetzner by
/// [`HetznerInstanceGroups`].
#[async_trait]
pub trait InstanceGroupCloud: Send + Sync + fmt::Debug + 'static {
    /// The cloud groups of `groups` (an instance group without one is left out).
    async fn cloud_groups(
        &self,
        cluster: &str,
        groups: &[InstanceGroup],
    ) -> Result<Vec<CloudGroup>>;

    /// Detaches a member so the group launches a replacement (surge).
    async fn detach(&self, group: &CloudGroup, member: &str) -> Result<()>;

    /// Terminates a member; the group replaces it unless it was detached.
    async fn terminate(&self, member: &str) -> Result<()>;

    /// Takes a member out of the group's load balancers before its node is drained.
    async fn deregister(&self, group: &CloudGroup, member: &str) -> Result<()>;

    /// Whether the cloud can surge: detach a member so its group launches a replacement
    /// before the member goes. A rolling update on a cloud that cannot (GCE) replaces
    /// members in place, `maxSurge` 0, as kOps does there.
    fn can_surge(&self) -> bool {
        true
    }
}

/// kOps' name of an instance group's cloud group: `<ig>.masters.<cluster>` for the
/// control plane, `<ig>.apiservers.<cluster>` for API servers, `<ig>.<cluster>` otherwise.
pub fn group_name(cluster: &str, ig: &InstanceGroup) -> String {
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => format!("{}.masters.{cluster}", ig.name()),
        Some(InstanceGroupRole::ApiServer) => format!("{}.apiservers.{cluster}", ig.name()),
        _ => format!("{}.{cluster}", ig.name()),
    }
}

/// [`InstanceGroupCloud`] over any [`AwsCloud`]: ASG members by launch template version,
/// detached instances by their `kops.k8s.io/detached-from-asg` tag.
pub struct AwsInstanceGroups {
    cloud: Arc<dyn AwsCloud>,
}

impl fmt::Debug for AwsInstanceGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsInstanceGroups").finish_non_exhaustive()
    }
}

impl AwsInstanceGroups {
    /// Over `cloud`.
    pub fn new(cloud: Arc<dyn AwsCloud>) -> Self {
        AwsInstanceGroups { cloud }
    }
}

fn cloud_err(operation: String) -> impl FnOnce(kops_cloud_aws::cloud::CloudError) -> Error {
    move |e| Error::Cloud {
        operation,
        source: e.into(),
    }
}

#[async_trait]
impl InstanceGroupCloud for AwsInstanceGroups {
    async fn cloud_groups(
        &self,
        cluster: &str,
        groups: &[InstanceGroup],
    ) -> Result<Vec<CloudGroup>> {
        let names: Vec<String> = groups.iter().map(|ig| group_name(cluster, ig)).collect();
        let found = self
            .cloud
            .group_members(&names)
            .await
            .map_err(cloud_err(format!(
                "listing the autoscaling groups of cluster {cluster}"
            )))?;
        // The cluster's machines, for their type and address, and the detached ones.
        let machines = self
            .cloud
            .list(
                &ListQuery::new(ResourceType::Instance)
                    .with_tag(TagFilter::equals("KubernetesCluster", cluster)),
            )
            .await
            .map_err(cloud_err(format!(
                "listing the instances of cluster {cluster}"
            )))?;
        let by_id: BTreeMap<&str, &AwsResource> =
            machines.iter().map(|r| (r.id.as_str(), r)).collect();
        let machine = |member: CloudMember| match by_id.get(member.id.as_str()) {
            Some(r) => member.with_machine(r.attr_str("instance_type"), r.attr_str("private_ip")),
            None => member,
        };
        let detached: Vec<_> = machines
            .iter()
            .filter(|r| r.tags.get(DETACHED_TAG).is_some())
            .collect();
        let mut out = Vec::new();
        for (ig, name) in groups.iter().zip(&names) {
            let Some(g) = found.iter().find(|g| &g.name == name) else {
                continue;
            };
            let mut group =
                CloudGroup::new(ig.name(), name, g.min_size, g.max_size, g.desired_capacity);
            for m in &g.instances {
                if m.lifecycle_state.starts_with("Terminating") {
                    continue;
                }
                let status = match (&m.launch_template, &g.launch_template) {
                    (Some(have), Some(want)) if have == want => MemberStatus::UpToDate,
                    (have, Some(want)) => MemberStatus::NeedsUpdate {
                        reason: match have {
                            Some((id, v)) => format!(
                                "launch template {id} version {v}, the group wants {} version {}",
                                want.0, want.1
                            ),
                            None => format!("no launch template, the group wants {}", want.0),
                        },
                    },
                    (_, None) => MemberStatus::UpToDate,
                };
                let member = machine(CloudMember::new(&m.id, status));
                group
                    .members
                    .push(if m.lifecycle_state.starts_with("Warmed") {
                        member.in_warm_pool()
                    } else {
                        member
                    });
            }
            for d in &detached {
                let running = d
                    .attrs
                    .get("state")
                    .and_then(|s| s.as_str())
                    .is_none_or(|s| matches!(s, "pending" | "running" | "stopping" | "stopped"));
                if running
                    && d.tags.get(DETACHED_TAG) == Some(name)
                    && !group.members.iter().any(|m| m.id == d.id)
                {
                    group
                        .members
                        .push(machine(CloudMember::new(&d.id, MemberStatus::Detached)));
                }
            }
            out.push(group);
        }
        Ok(out)
    }

    async fn detach(&self, group: &CloudGroup, member: &str) -> Result<()> {
        self.cloud
            .detach_instance(&group.group, member)
            .await
            .map_err(cloud_err(format!(
                "detaching {member} from {}",
                group.group
            )))
    }

    async fn terminate(&self, member: &str) -> Result<()> {
        self.cloud
            .terminate_instance(member)
            .await
            .map_err(cloud_err(format!("terminating {member}")))
    }

    async fn deregister(&self, group: &CloudGroup, member: &str) -> Result<()> {
        self.cloud
            .deregister_instance(&group.group, member)
            .await
            .map_err(cloud_err(format!(
                "deregistering {member} from the load balancers of {}",
                group.group
            )))
    }
}

/// [`InstanceGroupCloud`] over any [`GceCloud`], as kOps' `GetCloudGroups` reads GCE: an
/// instance group's cloud group is its managed instance groups (one per zone, named by
/// `gce::naming::instance_group_manager_name`, running one of the cluster's templates),
/// merged; a member is an instance, by name (the last segment of its node's
/// `gce://<project>/<zone>/<name>` provider ID), up to date when it was made from its
/// group's current template. Terminating a member asks its group to recreate it from
/// that template, keeping its name. GCE cannot surge ([`InstanceGroupCloud::can_surge`]).
pub struct GceInstanceGroups {
    cloud: Arc<dyn GceCloud>,
    /// The managed instance group (ID) of each member the last `cloud_groups` saw.
    members: Mutex<BTreeMap<String, String>>,
}

impl fmt::Debug for GceInstanceGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GceInstanceGroups").finish_non_exhaustive()
    }
}

impl GceInstanceGroups {
    /// Over `cloud`.
    pub fn new(cloud: Arc<dyn GceCloud>) -> Self {
        GceInstanceGroups {
            cloud,
            members: Mutex::new(BTreeMap::new()),
        }
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.members.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The template a managed instance group makes instances from.
fn current_template(mig: &GceResource) -> Option<&str> {
    mig.attrs
        .get("version")
        .and_then(|v| v.get("instance_template"))
        .and_then(|t| t.as_str())
}

fn short(link: &str) -> &str {
    kops_cloud_gce::cloud::last_component(link)
}

fn gce_member(m: &ManagedInstance, want: Option<&str>) -> CloudMember {
    let status = match (m.instance_template.as_deref(), want) {
        (Some(have), Some(want)) if have == want => MemberStatus::UpToDate,
        (have, Some(want)) => MemberStatus::NeedsUpdate {
            reason: match have {
                Some(have) => format!(
                    "instance template {}, the group wants {}",
                    short(have),
                    short(want)
                ),
                None => format!("no instance template yet, the group wants {}", short(want)),
            },
        },
        (_, None) => MemberStatus::UpToDate,
    };
    CloudMember::new(&m.name, status)
}

#[async_trait]
impl InstanceGroupCloud for GceInstanceGroups {
    async fn cloud_groups(
        &self,
        cluster: &str,
        groups: &[InstanceGroup],
    ) -> Result<Vec<CloudGroup>> {
        let templates = self
            .cloud
            .list_labelled(GceResourceType::InstanceTemplate, cluster)
            .await
            .map_err(crate::error::cloud(format!(
                "listing the instance templates of cluster {cluster}"
            )))?;
        let links: Vec<&str> = templates
            .iter()
            .filter_map(|t| t.attr_str("self_link"))
            .collect();
        let mut migs = self
            .cloud
            .list(&kops_cloud_gce::cloud::ListQuery::new(
                GceResourceType::InstanceGroupManager,
            ))
            .await
            .map_err(crate::error::cloud(format!(
                "listing the managed instance groups of cluster {cluster}"
            )))?;
        // kOps ignores a group running a template that is not the cluster's.
        migs.retain(|m| current_template(m).is_some_and(|t| links.contains(&t)));
        // The cluster's machines, for their type and address.
        let machines = self
            .cloud
            .list_labelled(GceResourceType::Instance, cluster)
            .await
            .map_err(crate::error::cloud(format!(
                "listing the instances of cluster {cluster}"
            )))?;
        let machines: BTreeMap<&str, &GceResource> = machines
            .iter()
            .filter_map(|r| Some((r.name.as_deref()?, r)))
            .collect();
        // A machine not listed yet has its template's type.
        let template_type = |link: Option<&str>| {
            let link = link?;
            let t = templates
                .iter()
                .find(|t| t.attr_str("self_link") == Some(link))?;
            t.attr_str("machine_type").map(short)
        };
        migs.sort_by(|a, b| a.id.cmp(&b.id));
        let mut out = Vec::new();
        let mut seen = BTreeMap::new();
        for ig in groups {
            let mine: Vec<&GceResource> = migs
                .iter()
                .filter(|m| {
                    let zone = m.attr_str("zone").map(short).unwrap_or_default();
                    m.name.as_deref()
                        == Some(
                            crate::gce::naming::instance_group_manager_name(
                                cluster,
                                ig.name(),
                                zone,
                            )
                            .as_str(),
                        )
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let names: Vec<&str> = mine
                .iter()
                .map(|m| m.name.as_deref().unwrap_or(&m.id))
                .collect();
            let target: i64 = mine
                .iter()
                .filter_map(|m| m.attrs.get("target_size").and_then(|t| t.as_i64()))
                .sum();
            let target = i32::try_from(target).unwrap_or(i32::MAX);
            // A managed instance group has no minimum or maximum: kOps reports its target.
            let mut group = CloudGroup::new(ig.name(), names.join(","), target, target, target);
            for mig in mine {
                let instances =
                    self.cloud
                        .managed_instances(&mig.id)
                        .await
                        .map_err(crate::error::cloud(format!(
                            "listing the instances of managed instance group {}",
                            mig.id
                        )))?;
                let want = current_template(mig);
                for m in instances.iter().filter(|m| !m.is_leaving()) {
                    seen.insert(m.name.clone(), mig.id.clone());
                    let listed = machines.get(m.name.as_str());
                    let machine_type = listed
                        .and_then(|r| r.attr_str("machine_type"))
                        .map(short)
                        .or_else(|| template_type(m.instance_template.as_deref()));
                    let ip = listed.and_then(|r| r.attr_str("network_ip"));
                    group
                        .members
                        .push(gce_member(m, want).with_machine(machine_type, ip));
                }
            }
            out.push(group);
        }
        self.remembered().extend(seen);
        Ok(out)
    }

    async fn detach(&self, group: &CloudGroup, member: &str) -> Result<()> {
        Err(Error::Invalid {
            field: format!("instance group {}: maxSurge", group.instance_group),
            message: format!(
                "cannot detach {member}: a GCE managed instance group cannot surge; use maxSurge 0"
            ),
        })
    }

    async fn terminate(&self, member: &str) -> Result<()> {
        let Some(mig) = self.remembered().get(member).cloned() else {
            return Err(Error::NotFound {
                what: format!(
                    "instance {member}: in no managed instance group of the cluster (read the groups first)"
                ),
            });
        };
        match self
            .cloud
            .recreate_instances(&mig, std::slice::from_ref(&member.to_owned()))
            .await
        {
            // Gone already: nothing left to replace (as kOps).
            Err(kops_cloud_gce::cloud::CloudError::NotFound { .. }) => Ok(()),
            r => r.map_err(crate::error::cloud(format!(
                "recreating {member} in managed instance group {mig}"
            ))),
        }
    }

    async fn deregister(&self, _group: &CloudGroup, _member: &str) -> Result<()> {
        // As kOps on GCE: nothing to do first. The API load balancer's health check takes
        // an instance out of service as it stops.
        Ok(())
    }

    fn can_surge(&self) -> bool {
        false
    }
}

/// [`InstanceGroupCloud`] over any [`HetznerCloud`], as kOps reads Hetzner: there is no
/// cloud group, an instance group's members are the servers labelled with the cluster and
/// the group, by ID (the last segment of the node's `hcloud://<id>` provider ID), out of
/// date when `update cluster` marked them (`kops.k8s.io/needs-update`). Terminating a
/// member shuts the server down and deletes it, then applies the cluster's update, which
/// makes its replacement, as kOps re-applies the cluster after each server. Hetzner cannot
/// surge ([`InstanceGroupCloud::can_surge`]).
pub struct HetznerInstanceGroups {
    cloud: Arc<dyn HetznerCloud>,
    update: Option<Arc<crate::hetzner::UpdateCluster>>,
}

impl fmt::Debug for HetznerInstanceGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HetznerInstanceGroups")
            .finish_non_exhaustive()
    }
}

impl HetznerInstanceGroups {
    /// Over `cloud`, for validate: it reads servers only.
    pub fn new(cloud: Arc<dyn HetznerCloud>) -> Self {
        HetznerInstanceGroups {
            cloud,
            update: None,
        }
    }

    /// Over `cloud`, replacing terminated servers by applying `update` (the cluster's
    /// current model, as `update cluster --yes` applies it).
    pub fn with_update(
        cloud: Arc<dyn HetznerCloud>,
        update: Arc<crate::hetzner::UpdateCluster>,
    ) -> Self {
        HetznerInstanceGroups {
            cloud,
            update: Some(update),
        }
    }
}

#[async_trait]
impl InstanceGroupCloud for HetznerInstanceGroups {
    async fn cloud_groups(
        &self,
        cluster: &str,
        groups: &[InstanceGroup],
    ) -> Result<Vec<CloudGroup>> {
        use kops_cloud_hetzner::cloud::{INSTANCE_GROUP_LABEL, NEEDS_UPDATE_LABEL};
        let servers = self
            .cloud
            .list_labelled(HetznerResourceType::Server, cluster)
            .await
            .map_err(crate::error::cloud(format!(
                "listing the servers of cluster {cluster}"
            )))?;
        let mut out = Vec::new();
        for ig in groups {
            let mine: Vec<&HetznerResource> = servers
                .iter()
                .filter(|s| s.tags.get(INSTANCE_GROUP_LABEL) == Some(ig.name()))
                .collect();
            if mine.is_empty() {
                continue;
            }
            // kOps' server groups keep minSize servers: that is their target.
            let min = ig.spec.min_size.unwrap_or(0);
            let max = ig.spec.max_size.unwrap_or(min);
            let mut group = CloudGroup::new(ig.name(), ig.name(), min, max, min);
            for s in mine {
                let status = if s.tags.contains_key(NEEDS_UPDATE_LABEL) {
                    MemberStatus::NeedsUpdate {
                        reason: format!(
                            "server {} marked {NEEDS_UPDATE_LABEL} by update cluster",
                            s.name.as_deref().unwrap_or(&s.id)
                        ),
                    }
                } else {
                    MemberStatus::UpToDate
                };
                group.members.push(
                    CloudMember::new(&s.id, status)
                        .with_machine(s.attr_str("server_type"), s.attr_str("private_ip")),
                );
            }
            out.push(group);
        }
        Ok(out)
    }

    async fn detach(&self, group: &CloudGroup, member: &str) -> Result<()> {
        Err(Error::Invalid {
            field: format!("instance group {}: maxSurge", group.instance_group),
            message: format!(
                "cannot detach {member}: Hetzner servers belong to no cloud group; use maxSurge 0"
            ),
        })
    }

    async fn terminate(&self, member: &str) -> Result<()> {
        let gone = |r: kops_cloud_hetzner::cloud::CloudResult<()>| match r {
            // Gone already: nothing left to delete (as kOps).
            Err(e) if e.is_not_found() => Ok(()),
            r => r,
        };
        gone(self.cloud.shutdown_server(member).await).map_err(crate::error::cloud(format!(
            "shutting down server {member}"
        )))?;
        gone(self.cloud.delete(HetznerResourceType::Server, member).await)
            .map_err(crate::error::cloud(format!("deleting server {member}")))?;
        if let Some(update) = &self.update {
            let executor = kops_tasks::Executor::new(Default::default());
            let report = executor.apply(update.graph(), self.cloud.as_ref()).await;
            crate::update::applied(update.context().name(), report)?;
        }
        Ok(())
    }

    async fn deregister(&self, _group: &CloudGroup, _member: &str) -> Result<()> {
        // The API load balancer targets the control plane by label: a server leaves it
        // as it is deleted.
        Ok(())
    }

    fn can_surge(&self) -> bool {
        false
    }
}
