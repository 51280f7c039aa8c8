//! The AWS model: the cloud trait ([`cloud`]) the AWS tasks talk to.

pub mod cloud;

pub use cloud::{AwsCloud, AwsCloudExt};
