//! The kops-rs task engine: the equivalent of kOps' `upup/pkg/fi`.
//!
//! A cluster model is a set of [`Task`]s, each describing one cloud object as generic
//! [`Fields`]. This crate turns those tasks into a validated graph, compares them with the
//! actual state, and renders the result three ways from one diff: a [`Plan`] (dry run,
//! printed for humans or as JSON), a direct apply through the [`Executor`], and a Terraform
//! configuration through the [`terraform`] writer. It knows no cloud: cloud crates implement
//! [`Task`] for their own cloud trait `C` (e.g. `Box<dyn Task<dyn AwsCloud>>`).
//!
//! # Design
//!
//! - **Identity.** Every task has a [`TaskKey`] `Kind/name`. References between tasks are
//!   typed values ([`TaskRef`], held in [`Value::Ref`]); [`TaskGraph::build`] resolves them
//!   into edges (an unknown one is an error naming both tasks), applies per-kind
//!   [`LifecycleOverrides`] and rejects cycles, naming the tasks in the cycle, before anything
//!   runs. No reflection: a task's dependencies are the references in its fields plus
//!   [`Task::dependencies`].
//! - **Diff.** [`diff::diff_fields`] compares expected fields with what [`Task::find`]
//!   returned: `Null` expected means "don't care", references compare by the identity of
//!   the referenced object (same task, or the same resolved ID), long text gets a unified
//!   diff. Secrets are [`Value::Sensitive`] and are never printed. A task may compare its
//!   object itself under the same rules and hand back only the differences
//!   ([`Found::compared`]): the model's resource task does, so a plan copies nothing of an
//!   object that matches but its outputs, and builds a task's fields only when something
//!   needs them ([`Task::for_each_ref`]).
//! - **Lifecycles** ([`Lifecycle`]): `Sync`, `Ignore`, `WarnIfInsufficientAccess`,
//!   `ExistsAndValidates`, `ExistsAndWarnIfChanges`, as in kOps.
//! - **Plan** ([`Plan`]): one [`PlanItem`] per task (create / update / unchanged / ignored /
//!   drift) plus deletions of owned orphans ([`Plan::add_orphans`]), each with a reason.
//!   There is one way to make one: [`Executor::plan`] finds every task's object through
//!   the cloud, in dependency order, and diffs it; a dry run, `kops update cluster` and
//!   the benchmarks all plan this way. `Display` prints kOps' dry-run report;
//!   [`Plan::to_json`] serialises it; [`Plan::exit_code`] follows the convention
//!   0 = no changes, 2 = changes pending (1 = error, [`plan::EXIT_ERROR`]).
//! - **Executor** ([`Executor`]): bounded concurrency, retries with exponential backoff and
//!   jitter, per-task deadlines, keeps going on independent branches, reports every failure
//!   and skipped dependent, never returns with work in flight, progress [`Event`]s, one
//!   `tracing` span per task. Time comes from an injected [`Clock`]; [`ManualClock`] makes
//!   tests instant. Outputs of finished tasks go to a shared [`Results`] map so dependents'
//!   references resolve to real IDs ([`Context::resolve`]).
//! - **Terraform** ([`terraform`]): tasks render [`terraform::Body`]s into a
//!   [`terraform::TerraformWriter`]; the emitter prints what `terraform fmt` prints.
//!
//! # Writing a task kind (for model authors)
//!
//! 1. Define a struct holding the desired state and its [`TaskKey`] (`Kind/name`; the kind
//!    is the type name, e.g. `VPC`, as in kOps and `--lifecycle-overrides`).
//! 2. [`Task::fields`]: list the compared fields in display order. Use `Value::Null` for
//!    "don't care", [`Value::Text`] for policies and user data, [`Value::Sensitive`] for
//!    secrets, and `Value::from(&other_key)` / [`TaskRef::with_attr`] to refer to another
//!    task; those references are the task's dependencies (add others with
//!    [`Task::dependencies`]).
//! 3. [`Task::find`]: read the object (by ID or tags) through the cloud trait `C`; return
//!    its fields under the same names (a referenced object may be given by its actual ID)
//!    and its [`Outputs`] (`id`, `arn`, ...), or `None` when absent. Map throttling to
//!    [`Error::Throttled`] so the executor retries it. A task that compares in place
//!    returns [`Found::compared`] with the differences instead of the fields, and lists
//!    its references through [`Task::for_each_ref`] so its fields are built only when
//!    needed.
//! 4. [`Task::check_changes`]: reject immutable-field changes. [`Task::apply`]: create the
//!    object or change [`Change::changes`]; resolve references with [`Context::resolve`]
//!    (the dependency has already run); return the outputs.
//! 5. [`Task::render_terraform`]: build a [`terraform::Body`] (attributes are printed
//!    alphabetically, nested blocks with [`terraform::Body::block`], repeated blocks with
//!    [`terraform::Body::push_block`], references as `Expr::Ref(task_ref)`, large values via
//!    [`terraform::TerraformWriter::add_file`]) and call
//!    [`terraform::TerraformWriter::resource`]; add outputs with
//!    [`terraform::TerraformWriter::output`].
//!
//! # Modules
//!
//! - [`key`]: [`TaskKey`], [`TaskRef`].
//! - [`value`]: [`Value`], [`Fields`], [`ValueMap`], [`Outputs`], [`Sensitive`].
//! - [`lifecycle`]: [`Lifecycle`], [`LifecycleOverrides`].
//! - [`task`]: the [`Task`] trait, [`Context`], [`Found`], [`Change`], [`Results`], deletions.
//! - [`graph`]: the [`TaskGraph`].
//! - [`diff`]: field comparison.
//! - [`plan`]: [`Plan`], the printer, exit codes.
//! - [`executor`]: [`Executor`], [`ExecutorOptions`], [`Event`], [`Report`].
//! - [`resource`]: the cloud-neutral resource layer: [`resource::ResourceKind`],
//!   [`resource::ResourceCloud`], [`resource::CloudError`] and the generic
//!   [`resource::ResourceTask`] every cloud model's tasks are.
//! - [`clock`]: [`Clock`], [`TokioClock`], [`ManualClock`].
//! - [`terraform`]: the HCL2 emitter and writer.
//!
//! # Example
//!
//! ```
//! use std::sync::Mutex;
//! use kops_tasks::{
//!     Change, Context, Executor, ExecutorOptions, Fields, Found, ManualClock, Outputs, Result,
//!     Task, TaskGraph, TaskKey, Value,
//! };
//!
//! /// A toy cloud: a list of (name, cidr) networks.
//! #[derive(Debug, Default)]
//! struct Cloud(Mutex<Vec<(String, String)>>);
//!
//! #[derive(Debug)]
//! struct Network { key: TaskKey, cidr: String }
//!
//! #[kops_tasks::async_trait]
//! impl Task<Cloud> for Network {
//!     fn key(&self) -> &TaskKey { &self.key }
//!     fn fields(&self) -> Fields { Fields::new().with("CIDR", self.cidr.as_str()) }
//!     async fn find(&self, cx: &Context<'_, Cloud>) -> Result<Option<Found>> {
//!         let nets = cx.cloud().0.lock().unwrap_or_else(|e| e.into_inner());
//!         Ok(nets.iter().find(|(n, _)| n == self.key.name()).map(|(n, c)| {
//!             Found::new(Fields::new().with("CIDR", c.as_str()), Outputs::id(n.as_str()))
//!         }))
//!     }
//!     async fn apply(&self, cx: &Context<'_, Cloud>, _change: &Change<'_>) -> Result<Outputs> {
//!         let mut nets = cx.cloud().0.lock().unwrap_or_else(|e| e.into_inner());
//!         nets.retain(|(n, _)| n != self.key.name());
//!         nets.push((self.key.name().to_owned(), self.cidr.clone()));
//!         Ok(Outputs::id(self.key.name()))
//!     }
//! }
//!
//! let cloud = Cloud::default();
//! let tasks: Vec<Box<dyn Task<Cloud>>> = vec![Box::new(Network {
//!     key: TaskKey::new("Network", "main"),
//!     cidr: "10.0.0.0/16".into(),
//! })];
//! let graph = TaskGraph::build(tasks)?;
//! let clock = ManualClock::new();
//! let exec = Executor::new(ExecutorOptions::default().with_clock(std::sync::Arc::new(clock.clone())));
//!
//! let plan = clock.block_on(exec.plan(&graph, &cloud)).unwrap()?;
//! assert_eq!(plan.exit_code(), 2);
//! assert!(plan.to_string().contains("Will create resources:\n  Network/main"));
//!
//! clock.block_on(exec.apply(&graph, &cloud)).unwrap().into_result()?;
//! let again = clock.block_on(exec.plan(&graph, &cloud)).unwrap()?;
//! assert_eq!(again.exit_code(), 0);
//! # Ok::<(), kops_tasks::Error>(())
//! ```
//!
//! # Stability
//!
//! Pre-1.0: the API may change between minor versions. Option and enum types are
//! `#[non_exhaustive]`; the JSON form of [`Plan`] is intended to stay backward compatible.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
pub mod clock;
pub mod diff;
mod error;
pub mod executor;
pub mod graph;
pub mod key;
pub mod lifecycle;
pub mod plan;
pub mod resource;
pub mod retry;
pub mod task;
pub mod terraform;
pub mod value;

pub use clock::{Clock, ManualClock, TokioClock};
pub use error::{BoxError, Error, ErrorKind, Result};
pub use executor::{Event, Executor, ExecutorOptions, Mode, Report};
pub use graph::TaskGraph;
pub use key::{TaskKey, TaskRef};
pub use lifecycle::{Lifecycle, LifecycleOverrides};
pub use plan::{Action, Plan, PlanItem};
pub use retry::RetryPolicy;
pub use task::{Change, ChangeKind, Context, Deleter, Found, OwnedObject, Results, Task};
pub use value::{Fields, Outputs, Sensitive, Str, Value, ValueMap};

/// Re-exported so task implementations use the same `async_trait` as the trait.
pub use async_trait::async_trait;
