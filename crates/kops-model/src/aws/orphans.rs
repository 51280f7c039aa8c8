//! Instance-group objects the cluster owns but the model no longer describes.
//!
//! When an instance group is removed from the spec, its autoscaling group and launch
//! template stay in the cloud until something deletes them. [`find_group_objects`] lists
//! the ones the cluster owns; [`kops_tasks::Plan::add_orphans`] turns those no task
//! describes into planned deletions (with a reason), and [`OrphanDeleter`] deletes them
//! through [`kops_tasks::Executor::delete_orphans`], autoscaling groups first
//! ([`DELETION_WAVES`]).
//!
//! Only objects carrying **both** the cluster's ownership tag
//! (`kubernetes.io/cluster/<cluster>=owned`) and kOps' instance-group tag
//! (`kops.k8s.io/instancegroup`) are considered. Kubernetes tags the volumes and load
//! balancers it creates for workloads with the same ownership tag, and objects shared with
//! the cluster are tagged `shared`: neither may ever be taken for an orphan.
//!
//! ```
//! use kops_model::aws::orphans::{DELETION_WAVES, wave_of};
//! use kops_tasks::TaskKey;
//!
//! // Autoscaling groups go before the launch templates they use.
//! let asg = TaskKey::new("AutoscalingGroup", "old.example.com");
//! let lt = TaskKey::new("LaunchTemplate", "old.example.com");
//! assert!(wave_of(&asg) < wave_of(&lt));
//! assert_eq!(DELETION_WAVES.len(), 2);
//! ```

use kops_tasks::{Context, Deleter, Error, OwnedObject, Result, TaskKey, async_trait};

use super::cloud::{AwsCloud, ListQuery, ResourceType, TagFilter};

/// The tag kOps puts on every object that belongs to one instance group.
pub const INSTANCE_GROUP_TAG: &str = "kops.k8s.io/instancegroup";

/// The kinds of orphans, in the order they must be deleted: each inner slice is one wave,
/// and a wave starts only when the one before it is done.
pub const DELETION_WAVES: &[&[&str]] = &[&["AutoscalingGroup"], &["LaunchTemplate"]];

/// The wave (index into [`DELETION_WAVES`]) that deletes objects of `key`'s kind;
/// `None` for kinds this module never plans to delete.
pub fn wave_of(key: &TaskKey) -> Option<usize> {
    DELETION_WAVES
        .iter()
        .position(|kinds| kinds.contains(&key.kind()))
}

fn resource_type(kind: &str) -> Option<ResourceType> {
    match kind {
        "AutoscalingGroup" => Some(ResourceType::AutoscalingGroup),
        "LaunchTemplate" => Some(ResourceType::LaunchTemplate),
        _ => None,
    }
}

/// Every autoscaling group and launch template owned by `cluster` and tagged with an
/// instance group, keyed as the model's tasks for them are keyed (`AutoscalingGroup` /
/// `LaunchTemplate` + the object's name). Two list calls, whatever the number of groups.
pub async fn find_group_objects(cloud: &dyn AwsCloud, cluster: &str) -> Result<Vec<OwnedObject>> {
    let ownership = format!("kubernetes.io/cluster/{cluster}");
    let mut out = Vec::new();
    for kinds in DELETION_WAVES {
        for kind in *kinds {
            let Some(rt) = resource_type(kind) else {
                continue;
            };
            let query = ListQuery::new(rt)
                .with_tag(TagFilter::equals(ownership.as_str(), "owned"))
                .with_tag(TagFilter::exists(INSTANCE_GROUP_TAG));
            for r in cloud.list(&query).await? {
                // Filter again: a backend may apply only some of the filters server-side.
                if r.tags.get(&ownership).map(String::as_str) != Some("owned") {
                    continue;
                }
                let Some(group) = r.tags.get(INSTANCE_GROUP_TAG) else {
                    continue;
                };
                let name = r.name.clone().unwrap_or_else(|| r.id.clone());
                out.push(OwnedObject {
                    key: TaskKey::new(*kind, &name),
                    id: r.id.clone(),
                    description: format!("{} of instance group {group:?}", rt.terraform_type()),
                    deferred: false,
                });
            }
        }
    }
    Ok(out)
}

/// Deletes orphans found by [`find_group_objects`] through [`AwsCloud::delete`].
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct OrphanDeleter;

impl OrphanDeleter {
    /// A deleter.
    pub fn new() -> Self {
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
        Ok(cx.cloud().delete(rt, &object.id).await?)
    }
}
