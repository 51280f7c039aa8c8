//! `kops-cloud-aws` is kops-rs' AWS cloud: its vocabulary and trait, always, and its
//! backend over the aws-sdk crates, behind the default feature `sdk` (the trait always,
//! backends by feature, as `object_store` lays out its stores).
//!
//! With `default-features = false` the crate compiles no aws-sdk crate: it is the AWS
//! resource types ([`ResourceType`] and its table of facts, [`cloud::TypeFacts`]), the
//! requests and answers ([`cloud::Resource`], [`cloud::ListQuery`], ...), and the
//! [`AwsCloud`] trait the model's tasks talk to. That is what `kops-model` and
//! `kops-mock` depend on. The `sdk` feature adds [`AwsBackend`], which implements
//! [`AwsCloud`] over EC2, Auto Scaling, ELBv2, IAM, Route53, S3, SQS, EventBridge and
//! STS, so the model's AWS tasks can find, create, update and delete real AWS objects.
//!
//! # Modules
//!
//! - [`cloud`]: [`ResourceType`], [`cloud::TypeFacts`], the plain-data types and the
//!   [`AwsCloud`] / [`AwsCloudExt`] traits, over the cloud-neutral
//!   [`kops_tasks::resource`] layer.
//! - [`classify`]: AWS error codes to the cloud error kinds (throttled, conflict,
//!   unavailable, not found, already exists, permission denied, quota, invalid).
//! - [`permissions`]: every AWS operation kops-rs sends with the IAM actions it needs, and
//!   the least-privilege policy of an operator who runs some commands, for any cluster or
//!   scoped to one ([`permissions::operator_policy`]).
//! - `conformance` (feature `conformance`): the suite every [`AwsCloud`] must pass, run
//!   against the mock and against [`AwsBackend`] on an emulator.
//! - With `sdk`: [`AwsBackend`] / [`AwsBackendBuilder`], the backend and its configuration
//!   (region, endpoint, credentials, retries, per-service rate limits; no aws-sdk type
//!   appears in the API), and [`ratelimit`], the client-side token buckets.
//!
//! Deleting a whole cluster is `kops_model::aws::delete_cluster`, over any `AwsCloud`.
//!
//! With `sdk` the crate also depends on `kops-statestore` (its `s3` feature) for what
//! every AWS client of kops-rs shares (`kops_statestore::aws`): the SDK's environment
//! loaded once, [`AwsEnv`] (re-exported here), from which the `s3://` state store and
//! [`AwsBackendBuilder::from_aws_env`] share one credentials provider and identity cache,
//! and the credentials rules. Missing or rejected credentials are then
//! [`CloudError::PermissionDenied`](cloud::CloudError::PermissionDenied) whose source is
//! that module's `CredentialsError`, worded as the S3 state store words it.
//!
//! # Behaviour of the backend
//!
//! Discovery is batched: the first `list` of a type fetches the whole type within the
//! query's scope (the cluster tag for EC2 types, everything for IAM, Auto Scaling, ELB),
//! paginated, and caches it for the backend's lifetime; writes drop the cached lists of
//! the types they affect. Every request waits for a token of its service's bucket and is
//! counted (`AwsBackend::api_calls`); the SDK's standard retry (exponential backoff)
//! runs underneath. Launch-template updates create a new version with the complete data.
//!
//! Finding objects to compare ([`ResourceCloud::list_digests`](cloud::ResourceCloud::list_digests))
//! reads a bucket's files from one `ListObjectsV2` listing, comparing the MD5 ETags with
//! the expected content instead of reading every object. A plan's calls are then the same
//! for 2 or 200 instance groups except one `DescribeLifecycleHooks` per autoscaling group
//! (that API takes one group name, and every group carries kOps' hooks): a plan made to
//! apply reads them, while a dry run (`kops_model::aws::UpdateCluster::dry_run`) takes the
//! hooks of groups not recreated since the last apply from that apply's record in the
//! state store, so a no-op dry run's calls do not grow with the groups.
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
//! ```
//! use kops_cloud_aws::ResourceType;
//! use kops_cloud_aws::cloud::{ImageQuery, ListQuery, TagFilter};
//!
//! // Batched discovery: every VPC of the cluster in one query.
//! let q = ListQuery::new(ResourceType::Vpc)
//!     .with_tag(TagFilter::equals("KubernetesCluster", "demo.example.com"));
//! assert_eq!(q.resource_type.terraform_type(), "aws_vpc");
//! // One table of facts per type: a VPC's CIDR cannot change in place.
//! assert!(ResourceType::Vpc.immutable_attrs().contains(&"cidr_block"));
//! // Owner aliases as kOps accepts them.
//! assert!(matches!(ImageQuery::parse("ubuntu/images/x"), ImageQuery::Name { owner: Some(_), .. }));
//! ```
//!
//! With the `sdk` feature, against an endpoint:
//!
//! ```no_run
//! # #[cfg(feature = "sdk")]
//! # mod with_sdk {
//! use kops_cloud_aws::{AwsBackend, StaticCredentials};
//! use kops_cloud_aws::cloud::{ListQuery, ResourceCloud, ResourceType, TagFilter};
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
//! # }
//! ```
//!
//! # Stability
//!
//! Pre-1.0: the builder and `api_calls` may change. The vocabulary's
//! data types are `#[non_exhaustive]` so they can grow without breaking callers.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
pub mod classify;
pub mod cloud;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod decorator;
mod facts;
pub mod idempotent;

#[cfg(feature = "sdk")]
mod asg;
#[cfg(feature = "sdk")]
mod backend;
#[cfg(feature = "sdk")]
mod convert;
#[cfg(feature = "sdk")]
mod ec2;
#[cfg(feature = "sdk")]
mod elb;
#[cfg(feature = "sdk")]
mod error;
#[cfg(feature = "sdk")]
mod iam;
#[cfg(feature = "sdk")]
mod members;
#[cfg(feature = "sdk")]
mod misc;
#[cfg(feature = "sdk")]
mod options;
pub mod permissions;
#[cfg(feature = "sdk")]
pub mod ratelimit;

pub use cloud::{AwsCloud, AwsCloudExt, ResourceType};
pub use decorator::Decorator;
pub use idempotent::Idempotent;

#[cfg(feature = "sdk")]
pub use backend::AwsBackend;
#[cfg(feature = "sdk")]
pub use error::{Error, Result};
#[cfg(feature = "sdk")]
pub use kops_statestore::aws::AwsEnv;
#[cfg(feature = "sdk")]
pub use options::{AwsBackendBuilder, StaticCredentials};
