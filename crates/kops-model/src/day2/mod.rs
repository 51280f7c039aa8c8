//! Day-two operations (feature `day2`): `kops export kubeconfig`, `kops validate cluster`
//! and `kops rolling-update cluster`, against the cluster's Kubernetes API through kube-rs
//! and the cloud through [`groups::InstanceGroupCloud`].
//!
//! - [`kubeconfig`]: the admin client certificate signed by `kubernetes-ca`, the kubeconfig
//!   entries kOps writes and merging them into a file, clients from either.
//! - [`api_access_problem`]: what a failure to reach the API means to the user (the
//!   server's certificate untrusted or for another name, credentials refused).
//! - [`groups`]: each instance group's cloud group and members, which need an update and
//!   why; detach and terminate. [`groups::AwsInstanceGroups`] implements it over any
//!   `AwsCloud` (the mock or the SDK backend), [`groups::GceInstanceGroups`] over any
//!   `GceCloud` (managed instance groups, recreated in place).
//! - [`validate`]: kOps' cluster validation ([`validate::Validator`]) and the repeat loop.
//! - [`rolling`]: kOps' rolling update: the plan, the order across groups, surge and
//!   unavailability, the canary, taint/cordon/drain with PDB-aware eviction, terminate and
//!   validate; beyond kOps, a journal in the state store so an interrupted roll resumes.
//!
//! Tests run all of it against `kops_mock::kube::FakeKube` (a stateful fake API server on
//! 127.0.0.1) and the mock cloud, with tokio's paused time.

mod access;
pub mod groups;
pub mod kubeconfig;
pub mod rolling;
pub mod validate;

pub use access::{ApiAccessProblem, api_access_problem};
