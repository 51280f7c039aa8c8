//! `kops-mock` is an in-memory AWS cloud for tests and for trying kops-rs without an
//! account, in the spirit of kOps' `cloudmock`.
//!
//! [`MockAws`] holds EC2 (VPCs and their CIDR blocks, subnets, route tables and routes,
//! internet and egress-only gateways, NAT gateways, elastic IPs, DHCP options, security
//! groups and rules, volumes, key pairs, images, launch templates and versions,
//! instances), Autoscaling (groups, tags, warm pools, lifecycle hooks, mixed instances),
//! ELBv2 (network load balancers, target groups, listeners, tags), IAM (roles, inline and
//! attached policies, instance profiles, OIDC providers), Route53 (zones, private zones
//! with VPCs, record sets), SQS queues, EventBridge rules and targets, and S3 objects.
//!
//! A create is visible to a later describe, deletes respect dependencies the way AWS does
//! (a VPC with subnets cannot be deleted, a role with policies cannot be removed), and
//! every call is named like the AWS operation (`ec2:DescribeVpcs`):
//!
//! - **ids** are sequential per kind (`vpc-1`, `subnet-1`, ...), skipping ids that seeded
//!   objects use and never reusing a deleted one;
//! - **filters** follow AWS' semantics ([`filter`]): `tag:Key`, `tag-key`, `tag-value`
//!   and each kind's own names; values OR, filters AND; `*`/`?` wildcards;
//! - **seeding**: [`MockAws::seed`] inserts objects with fixed ids, and
//!   [`fixture::load_str`] / [`fixture::load_file`] read the conformance fixture
//!   (`mock-cloud.yaml`) given as text or a path;
//! - **call counting**: [`MockAws::calls`] returns the number of calls per operation, so a
//!   test can hold an API-call budget;
//! - **fault injection**: a [`FaultPlan`] makes the next N calls of an operation, or a
//!   seeded fraction of all calls, fail with a throttling or unavailable error.
//!
//! # Modules
//!
//! - [`ec2`], [`asg`], [`elbv2`], [`iam`], [`route53`], [`sqs`], [`events`], [`s3`]: the
//!   resource types of each service (operations are methods of [`MockAws`]).
//! - [`filter`]: [`Filter`], [`Tags`].
//! - [`faults`]: [`FaultPlan`], [`FaultInjector`].
//! - [`chaos`]: [`ChaosCloud`] (lost responses, delayed visibility, half-done creates,
//!   crashes, throttling; seeded) and [`ClientTokens`] (EC2's idempotent creates).
//! - [`fixture`]: the `mock-cloud.yaml` loader.
//! - [`cloud`]: the `kops_cloud_aws::AwsCloud` implementation and the [`FaultyCloud`]
//!   and [`CountingCloud`] decorators. It passes the cloud conformance suite
//!   (`kops_cloud_aws::conformance`), as the SDK backend does against an emulator.
//! - [`seed`]: [`Seed`] objects for [`MockAws::seed`].
//! - [`journal`]: journaled mocks, whose state lives in a state store so that separate
//!   processes share one mock cloud: each process replays the journal of the mock's
//!   mutations into a fresh mock and writes its own back with compare-and-swap. The
//!   `kops` CLI's `--mock-cloud` (AWS, GCE, Hetzner) and the Terraform provider's
//!   `mock_cloud = true` (AWS) keep their mocks this way, in one format.
//! - `kube` (feature `kube`): a fake Kubernetes API server and kubelet for the day-two
//!   commands.
//! - `registry` (feature `registry`): a fake container registry (the OCI distribution API,
//!   with token authentication) that also serves plain files, for `get assets --copy`. It
//!   lives here because it is a fake of a remote service for tests, as the others are.
//!
//! # Example
//!
//! ```
//! use kops_mock::{Filter, MockAws, tags};
//!
//! let cloud = MockAws::new();
//! let vpc = cloud.create_vpc("10.0.0.0/16", false, tags([("KubernetesCluster", "a.example.com")]))?;
//! assert_eq!(vpc.id, "vpc-1");
//! let found = cloud.describe_vpcs(&[], &[Filter::tag("KubernetesCluster", "a.example.com")])?;
//! assert_eq!(found.len(), 1);
//! assert_eq!(cloud.calls()["ec2:DescribeVpcs"], 1);
//! # Ok::<(), kops_mock::Error>(())
//! ```
//!
//! # Stability
//!
//! Experimental (0.x): the resource types and method set grow as the model needs them.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
pub mod asg;
pub mod chaos;
pub mod cloud;
pub mod ec2;
pub mod elbv2;
mod error;
pub mod events;
pub mod faults;
pub mod filter;
pub mod fixture;
pub mod gce;
pub mod hetzner;
pub mod iam;
pub mod journal;
#[cfg(feature = "kube")]
pub mod kube;
#[cfg(feature = "registry")]
pub mod registry;
pub mod route53;
pub mod s3;
pub mod seed;
#[cfg(any(
    feature = "kube",
    feature = "gce-rest",
    feature = "hetzner-rest",
    feature = "registry"
))]
mod serve;
pub mod sqs;
mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

pub use chaos::{ChaosCloud, ChaosPlan, ChaosStats, ClientTokens};
pub use cloud::{CountingCloud, FaultyCloud};
pub use error::{Error, Result};
pub use faults::{FaultInjector, FaultKind, FaultPlan, FaultRule};
pub use filter::{Filter, Tags, tags};
pub use seed::Seed;

use state::State;

/// Options of a [`MockAws`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MockOptions {
    /// Region name, used in ARNs and DNS names (default `us-test-1`).
    pub region: String,
    /// Account id, used in ARNs (default `123456789012`).
    pub account_id: String,
    /// Partition, used in ARNs and reported by `account()` (default `aws`; kOps' test
    /// harness uses `aws-test`).
    pub partition: String,
    /// Zones of the region; subnets and volumes must use one (default
    /// `us-test-1a`..`us-test-1c`; empty accepts any).
    pub zones: Vec<String>,
    /// Whether a new VPC gets a main route table and a `default` security group, as on
    /// AWS (default true).
    pub vpc_defaults: bool,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            region: "us-test-1".into(),
            account_id: "123456789012".into(),
            partition: "aws".into(),
            zones: ["a", "b", "c"]
                .iter()
                .map(|z| format!("us-test-1{z}"))
                .collect(),
            vpc_defaults: true,
        }
    }
}

impl MockOptions {
    /// Sets the region and derives zones `<region>a..c`.
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = region.into();
        self.zones = ["a", "b", "c"]
            .iter()
            .map(|z| format!("{}{z}", self.region))
            .collect();
        self
    }

    /// Sets the zones.
    pub fn with_zones<I, S>(mut self, zones: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.zones = zones.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the account id.
    pub fn with_account_id(mut self, account_id: impl Into<String>) -> Self {
        self.account_id = account_id.into();
        self
    }

    /// Sets the partition.
    pub fn with_partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = partition.into();
        self
    }

    /// Turns the VPC's default route table and security group on or off.
    pub fn with_vpc_defaults(mut self, on: bool) -> Self {
        self.vpc_defaults = on;
        self
    }
}

struct Inner {
    options: MockOptions,
    state: Mutex<State>,
    calls: Mutex<BTreeMap<String, u64>>,
    faults: FaultInjector,
    /// Attributes callers sent through the cloud trait, by `<terraform type>/<id>`.
    raw: Mutex<BTreeMap<String, BTreeMap<String, serde_json::Value>>>,
}

/// The in-memory AWS cloud. Cheap to clone; clones share state.
///
/// `Debug` prints the options and counts only: object contents (S3 data, attributes
/// callers sent) may hold secrets and are never printed.
#[derive(Clone)]
pub struct MockAws {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for MockAws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockAws")
            .field("region", &self.inner.options.region)
            .field("account_id", &self.inner.options.account_id)
            .field("objects", &self.resource_ids().len())
            .field("calls", &self.total_calls())
            .finish()
    }
}

impl Default for MockAws {
    fn default() -> Self {
        MockAws::new()
    }
}

impl MockAws {
    /// An empty cloud with default options.
    pub fn new() -> Self {
        MockAws::with_options(MockOptions::default())
    }

    /// An empty cloud.
    pub fn with_options(options: MockOptions) -> Self {
        MockAws {
            inner: Arc::new(Inner {
                options,
                state: Mutex::new(State::default()),
                calls: Mutex::new(BTreeMap::new()),
                faults: FaultInjector::default(),
                raw: Mutex::new(BTreeMap::new()),
            }),
        }
    }

    /// The options.
    pub fn options(&self) -> &MockOptions {
        &self.inner.options
    }

    /// Calls per operation (`ec2:DescribeVpcs` -> 3) since creation or the last
    /// [`MockAws::reset_calls`]. Failed and fault-injected calls count too.
    pub fn calls(&self) -> BTreeMap<String, u64> {
        lock(&self.inner.calls).clone()
    }

    /// Total calls across all operations.
    pub fn total_calls(&self) -> u64 {
        lock(&self.inner.calls).values().sum()
    }

    /// Calls of one operation.
    pub fn call_count(&self, operation: &str) -> u64 {
        lock(&self.inner.calls).get(operation).copied().unwrap_or(0)
    }

    /// Clears the call counter.
    pub fn reset_calls(&self) {
        lock(&self.inner.calls).clear();
    }

    /// Installs a fault plan (replacing any previous one and restarting its state).
    pub fn set_faults(&self, plan: FaultPlan) {
        self.inner.faults.set_plan(plan);
    }

    /// How many faults have been injected since the plan was set.
    pub fn injected_faults(&self) -> u64 {
        self.inner.faults.injected()
    }

    /// Every object held, by id (or `kind/name` for kinds keyed by name, ARN for ELBv2),
    /// for before/after comparisons. Terminated instances are left out.
    pub fn resource_ids(&self) -> BTreeSet<String> {
        lock(&self.inner.state).resource_ids()
    }

    /// Inserts objects with caller-chosen ids, as fixtures do; not counted as calls. Fails
    /// if an id is taken or a referenced object is missing.
    pub fn seed(&self, object: impl Into<Seed>) -> Result<()> {
        let mut st = lock(&self.inner.state);
        seed::apply(&mut st, &self.inner.options, object.into())
    }

    /// Runs one operation: counts it, consults the fault plan, then runs `f` on the state.
    pub(crate) fn call<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&mut State, &'static str) -> Result<T>,
    ) -> Result<T> {
        *lock(&self.inner.calls)
            .entry(operation.to_owned())
            .or_insert(0) += 1;
        self.inner.faults.check(operation)?;
        let mut st = lock(&self.inner.state);
        f(&mut st, operation)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
