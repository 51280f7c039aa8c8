//! `kops-model` turns a kOps cluster specification into the graph of cloud tasks that
//! realise it, with kOps' resource names, tags and ordering.
//!
//! # Modules
//!
//! - [`aws`]: the AWS model. [`aws::cloud`] re-exports the AWS vocabulary of
//!   `kops-cloud-aws` (the [`aws::AwsCloud`] trait the AWS tasks use, implemented by
//!   `kops-mock` and by `kops-cloud-aws`' SDK backend, and its plain-data resource types;
//!   the model depends on it without the SDK); [`aws::task`] is the AWS instance of the
//!   cloud-neutral `kops_tasks::resource::ResourceTask`; [`aws::builders`] are kOps' AWS
//!   model builders; [`aws::terraform`] renders a model to a Terraform directory.
//!
//! # Example
//!
//! ```
//! use kops_model::aws::cloud::{ImageQuery, ListQuery, ResourceType, TagFilter};
//!
//! // Batched discovery: every VPC of the cluster in one query.
//! let q = ListQuery::new(ResourceType::Vpc)
//!     .with_tag(TagFilter::equals("KubernetesCluster", "demo.example.com"));
//! assert_eq!(q.resource_type.terraform_type(), "aws_vpc");
//! // Owner aliases as kOps accepts them.
//! assert!(matches!(ImageQuery::parse("ubuntu/images/x"), ImageQuery::Name { owner: Some(_), .. }));
//! ```
//!
//! # Stability
//!
//! Pre-1.0: the API may change between minor versions. The cloud trait's data types are
//! `#[non_exhaustive]` so they can grow without breaking implementers' callers.

pub mod aws;
mod error;

pub use error::{Error, Result};
