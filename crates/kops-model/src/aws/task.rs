//! [`AwsTask`]: one AWS object described as Terraform-named attributes and tags, which
//! renders itself for the Terraform target and finds/creates/updates itself through
//! [`AwsCloud`](super::cloud::AwsCloud).
//!
//! Every AWS task kind (VPC, Subnet, SecurityGroupRule, LaunchTemplate, ...) is an
//! `AwsTask` with its kind in the [`TaskKey`](kops_tasks::TaskKey) and its
//! [`ResourceType`]; the builders in [`crate::aws::builders`] decide names, attributes and
//! tags. The task itself is the cloud-neutral [`ResourceTask`] of `kops-tasks` over AWS'
//! resource types: finding by ID, name, name tag or parent, aligning found values,
//! content by digest, create and update through the trait, and refusing in the plan a
//! change of an attribute the type's facts list as immutable.

pub(crate) use kops_tasks::resource::{Attr, FindBy};

use kops_tasks::resource::ResourceTask;

use super::cloud::ResourceType;

/// One AWS object the model manages: a [`ResourceTask`] over [`ResourceType`].
pub type AwsTask = ResourceTask<ResourceType>;
