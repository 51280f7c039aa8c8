//! The AWS model.
//!
//! - [`cloud`]: the [`AwsCloud`] trait the AWS tasks talk to and its plain-data types
//!   (re-exported from `kops-cloud-aws`).
//! - [`task`]: [`AwsTask`], the task type every AWS task kind is an instance of (the
//!   cloud-neutral `ResourceTask` over AWS' resource types).
//! - [`builders`]: kOps' AWS model builders (spec -> tasks), one module per builder.
//! - [`naming`]: kOps' name truncation and hashing, SSH key fingerprints.
//! - [`terraform`]: rendering a model to a Terraform directory as kOps lays it out.

pub mod builders;
pub mod cloud;
pub mod naming;
pub mod orphans;
pub mod task;
pub mod terraform;

pub use builders::{AwsModel, ModelContext};
pub use cloud::{AwsCloud, AwsCloudExt};
pub use task::AwsTask;

use kops_tasks::Task;

use crate::error::Result;

/// Builds every AWS task for a cluster, as boxed tasks for a
/// [`kops_tasks::TaskGraph`].
pub fn build_tasks(ctx: &ModelContext) -> Result<Vec<Box<dyn Task<dyn AwsCloud>>>> {
    let model = builders::build(ctx)?;
    Ok(model
        .tasks
        .into_iter()
        .map(|t| Box::new(t) as Box<dyn Task<dyn AwsCloud>>)
        .collect())
}
