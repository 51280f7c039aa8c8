//! The AWS vocabulary the model builds with: [`ResourceType`], the plain-data requests and
//! answers, and the [`AwsCloud`] trait the AWS tasks talk to.
//!
//! They live in `kops-cloud-aws` (which, without its default `sdk` feature, compiles no
//! aws-sdk crate) and are re-exported here so model code keeps one path for them; see
//! [`kops_cloud_aws::cloud`] for the data model, the table of facts per type and the
//! error kinds.

pub use kops_cloud_aws::cloud::*;
