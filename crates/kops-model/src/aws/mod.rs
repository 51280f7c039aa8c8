//! The AWS model.
//!
//! - [`cloud`]: the [`AwsCloud`] trait the AWS tasks talk to and its plain-data types
//!   (re-exported from `kops-cloud-aws`).
//! - [`AwsTask`]: the task type every AWS task kind is an instance of (the cloud-neutral
//!   `ResourceTask` over AWS' resource types).
//! - [`ModelContext`] and [`build_model`]: kOps' AWS model builders, spec -> tasks
//!   ([`AwsModel`]).
//! - [`discover`](fn@discover): the cloud lookups that make a [`ModelContext`].
//! - [`UpdateCluster`]: plan / apply / Terraform; objects the cluster owns that the spec
//!   no longer describes are planned for deletion. A dry run trusts kops-rs' record of
//!   the last apply's lifecycle hooks ([`RecordedHooks`]).
//! - [`delete_cluster`]: everything a cluster owns, in dependency order;
//!   [`delete_instance_group`]: one instance group's autoscaling group, instances and launch
//!   template.
//! - [`recover`]: a lost store's cluster read back from the objects it owns.
//! - [`terraform`]: rendering a model to a Terraform directory as kOps lays it out.

pub(crate) mod builders;
pub mod cloud;
pub(crate) mod delete;
mod discover;
mod hooks;
pub(crate) mod naming;
pub(crate) mod orphans;
mod reads;
pub mod recover;
pub(crate) mod task;
pub mod terraform;
pub(crate) mod update;

pub use builders::{AwsModel, ModelContext, OutputValue, build as build_model};
pub use cloud::{AwsCloud, AwsCloudExt};
pub use delete::{
    DeleteOptions, DeleteReport, Undeleted, delete_cluster, delete_instance_group,
    find_cluster_resources, find_cluster_resources_with, find_instance_group_resources, is_owned,
};
pub use discover::{DiscoverOptions, discover};
pub use hooks::{DEFAULT_HOOKS_RECORD_MAX_AGE, RecordedHooks};
pub use task::AwsTask;
pub use update::{ApplyOptions, UpdateCluster, UpdateOptions, UpdatePlan};

use kops_tasks::Task;

use crate::error::Result;

/// The addresses of a cluster's API load balancer, as kOps' `GetApiIngressStatus` finds
/// them on AWS: the DNS name of the load balancer tagged `Name=api.<cluster>` (none
/// without one). Sorted.
pub async fn api_ingress(api: &dyn AwsCloud, cluster: &str) -> Result<Vec<crate::ApiIngress>> {
    use self::cloud::{ListQuery, ResourceType, TagFilter};
    let found = api
        .list(
            &ListQuery::new(ResourceType::LoadBalancer)
                .with_tag(TagFilter::equals("Name", format!("api.{cluster}"))),
        )
        .await
        .map_err(crate::error::cloud(format!(
            "finding the API load balancer of cluster {cluster}"
        )))?;
    let mut out: Vec<crate::ApiIngress> = found
        .iter()
        .filter_map(|lb| {
            let name = lb.attr_str("dns_name").filter(|d| !d.is_empty())?;
            let internal = lb.attrs.get("internal").and_then(|i| i.as_bool()) == Some(true);
            Some(crate::ApiIngress::new(name, internal))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Builds every AWS task for a cluster (resources and managed files), as boxed tasks for
/// a [`kops_tasks::TaskGraph`].
pub fn build_tasks(ctx: &ModelContext) -> Result<Vec<Box<dyn Task<dyn AwsCloud>>>> {
    Ok(builders::build(ctx)?.into_tasks())
}
