//! `kops-cloud-aws` is the AWS backend of kops-rs: it implements
//! [`kops_model::aws::cloud::AwsCloud`] over the aws-sdk crates (EC2, Auto Scaling,
//! ELBv2, IAM, Route53, S3, SQS, EventBridge, STS), so the model's AWS tasks can find,
//! create, update and delete real AWS objects. Deleting a whole cluster is
//! `kops_model::aws::delete_cluster`, over any `AwsCloud`.
//!
//! # Modules
//!
//! - [`AwsBackend`] / [`AwsBackendBuilder`]: the backend and its configuration (region,
//!   endpoint, credentials, retries, per-service rate limits). No aws-sdk type appears in
//!   the API.
//! - [`ratelimit`]: the client-side token buckets (one per service, injectable clock).
//! - [`classify`]: AWS error codes to the executor's error kinds (throttled, retryable,
//!   not found, permission denied, quota, invalid).
//!
//! # Behaviour
//!
//! Discovery is batched: the first `list` of a type fetches the whole type within the
//! query's scope (the cluster tag for EC2 types, everything for IAM, Auto Scaling, ELB),
//! paginated, and caches it for the backend's lifetime; writes drop the cached lists of
//! the types they affect. Every request waits for a token of its service's bucket and is
//! counted ([`AwsBackend::api_calls`]); the SDK's standard retry (exponential backoff)
//! runs underneath. Launch-template updates create a new version with the complete data.
//!
//! Finding objects to compare ([`AwsCloud::list_digests`](kops_model::aws::cloud::AwsCloud::list_digests))
//! reads a bucket's files from one `ListObjectsV2` listing, comparing the MD5 ETags with
//! the expected content instead of reading every object, so a no-op plan costs the same
//! calls for 2 or 50 instance groups except one `DescribeLifecycleHooks` per group with
//! hooks (that API takes one group name).
//!
//! # Differences from moto
//!
//! The tests run against moto; where moto differs from AWS the backend does what works on
//! both and says so where it does it: lifecycle hooks are deleted before their group
//! (moto keeps them), numbered protocols without ports are sent as 0-0 (moto fails
//! without ports), and the full launch-template data goes with every new version.
//!
//! # Example
//!
//! ```no_run
//! use kops_cloud_aws::{AwsBackend, StaticCredentials};
//! use kops_model::aws::cloud::{AwsCloud, ListQuery, ResourceType, TagFilter};
//!
//! async fn vpcs_of_cluster() -> Result<(), Box<dyn std::error::Error>> {
//!     let cloud = AwsBackend::builder()
//!         .region("us-east-1")
//!         .endpoint("http://127.0.0.1:5000")
//!         .credentials(StaticCredentials::new("test", "test"))
//!         .build()?;
//!     let vpcs = cloud
//!         .list(
//!             &ListQuery::new(ResourceType::Vpc)
//!                 .with_tag(TagFilter::equals("KubernetesCluster", "a.example.com")),
//!         )
//!         .await?;
//!     println!("{} VPC(s), {} API call(s)", vpcs.len(), cloud.total_api_calls());
//!     Ok(())
//! }
//! ```
//!
//! # Stability
//!
//! Pre-1.0: the builder and `api_calls` may change; the cloud
//! behaviour follows the `AwsCloud` trait of `kops-model`.

mod asg;
mod backend;
pub mod classify;
mod convert;
mod ec2;
mod elb;
mod error;
mod iam;
mod misc;
mod options;
pub mod ratelimit;

pub use backend::AwsBackend;
pub use error::{Error, Result};
pub use options::{AwsBackendBuilder, StaticCredentials};
