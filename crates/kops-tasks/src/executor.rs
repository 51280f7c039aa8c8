//! The executor: runs a [`TaskGraph`] against a cloud, either to plan (find + diff only)
//! or to apply (find + diff + apply).
//!
//! Contract (cargo's dependency queue, kOps' executor): cycles were rejected when the graph
//! was built; a task starts only after all its dependencies succeeded; among the tasks
//! ready to start, the one given first starts first (so a pass reads the tasks in the
//! order they lie in memory); at most [`ExecutorOptions::concurrency`] tasks run at once;
//! retryable errors ([`Error::is_retryable`]) are retried with exponential backoff and
//! jitter until the task's deadline; after a failure, independent branches keep going and
//! dependents of the failed task are reported as skipped; every failure is reported; the
//! run never returns while a task is in flight. Each task runs in a `tracing` span `task` with
//! fields `kind` and `name`.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use futures::future::{Either, select};
use futures::stream::FuturesUnordered;
use tracing::Instrument;

use crate::clock::{Clock, TokioClock};
use crate::diff::NoResolver;
use crate::error::{Error, Result};
use crate::graph::{Node, TaskGraph};
use crate::key::TaskKey;
use crate::lifecycle::Lifecycle;
use crate::plan::{Action, Plan, PlanItem, evaluate, evaluate_compared};
use crate::retry::RetryPolicy;
use crate::task::{Change, ChangeKind, Context, Deleter, Found, OwnedObject, Results};

/// A progress event, for callers to display.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A task started.
    Started {
        /// The task.
        key: TaskKey,
        /// Tasks running now (including this one).
        running: usize,
        /// Tasks finished so far.
        done: usize,
        /// All tasks.
        total: usize,
    },
    /// A task hit a retryable error and will retry after `delay`.
    Retrying {
        /// The task.
        key: TaskKey,
        /// The attempt that failed (1-based).
        attempt: u32,
        /// The backoff before the next attempt.
        delay: Duration,
        /// The error, displayed.
        error: String,
    },
    /// A task finished (successfully or not).
    Finished {
        /// The task.
        key: TaskKey,
        /// Whether it succeeded.
        ok: bool,
        /// Tasks still running.
        running: usize,
        /// Tasks finished so far (including skipped ones).
        done: usize,
        /// All tasks.
        total: usize,
    },
    /// A task was skipped because a dependency failed.
    Skipped {
        /// The task.
        key: TaskKey,
        /// The failed task that blocked it.
        blocked_by: TaskKey,
        /// Tasks finished so far (including this one).
        done: usize,
        /// All tasks.
        total: usize,
    },
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Event) + Send + Sync>;

/// Executor settings. Defaults: 16 concurrent tasks, a 10-minute deadline per task,
/// backoff from 1 s doubling up to 30 s with ±25 % jitter, no attempt limit (the deadline
/// bounds retries), the real clock.
#[derive(Clone)]
#[non_exhaustive]
pub struct ExecutorOptions {
    /// Maximum tasks running at once (at least 1).
    pub concurrency: usize,
    /// Time budget of one task, across all its attempts.
    pub task_deadline: Duration,
    /// First backoff delay.
    pub initial_backoff: Duration,
    /// Largest backoff delay.
    pub max_backoff: Duration,
    /// Fraction of the delay randomly added or removed (0.0 - 1.0).
    pub jitter: f64,
    /// Maximum attempts per task (`None`: until the deadline).
    pub max_attempts: Option<u32>,
    /// Seed of the jitter (`None`: random); see [`RetryPolicy::seed`].
    pub jitter_seed: Option<u64>,
    /// The clock used for backoff and deadlines.
    pub clock: Arc<dyn Clock>,
    /// Progress callback.
    pub progress: Option<ProgressFn>,
}

impl fmt::Debug for ExecutorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutorOptions")
            .field("concurrency", &self.concurrency)
            .field("task_deadline", &self.task_deadline)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("jitter", &self.jitter)
            .field("max_attempts", &self.max_attempts)
            .field("jitter_seed", &self.jitter_seed)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            concurrency: 16,
            task_deadline: Duration::from_secs(600),
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            jitter: 0.25,
            max_attempts: None,
            jitter_seed: None,
            clock: Arc::new(TokioClock::new()),
            progress: None,
        }
    }
}

impl ExecutorOptions {
    /// Sets the concurrency bound (values below 1 mean 1).
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }
    /// Sets the per-task deadline.
    pub fn with_task_deadline(mut self, d: Duration) -> Self {
        self.task_deadline = d;
        self
    }
    /// Sets the backoff range.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }
    /// Sets the jitter fraction (clamped to 0.0 - 1.0).
    pub fn with_jitter(mut self, fraction: f64) -> Self {
        self.jitter = fraction.clamp(0.0, 1.0);
        self
    }
    /// Limits attempts per task.
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(n.max(1));
        self
    }
    /// Draws the backoff jitter from `seed`, so runs are reproducible.
    pub fn with_jitter_seed(mut self, seed: u64) -> Self {
        self.jitter_seed = Some(seed);
        self
    }
    /// Sets the clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
    /// The retry policy of these options (backoff, jitter, attempts, clock): what the
    /// executor retries tasks with, for the calls a caller makes around the tasks.
    pub fn retry_policy(&self) -> RetryPolicy {
        let mut p = RetryPolicy::default()
            .with_backoff(self.initial_backoff, self.max_backoff)
            .with_jitter(self.jitter)
            .with_max_attempts(self.max_attempts)
            .with_clock(self.clock.clone());
        p.seed = self.jitter_seed;
        p
    }
    /// Sets the progress callback.
    pub fn with_progress(mut self, f: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// Whether a run only plans or also applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Find and diff; change nothing.
    Plan,
    /// Find, diff and apply.
    Apply,
}

/// The outcome of a run: what happened to every task.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// Items of tasks that finished (in apply mode, `Create`/`Update` were applied).
    pub plan: Plan,
    /// Every failed task with its error.
    pub failed: Vec<(TaskKey, Error)>,
    /// Tasks not run because a dependency failed, with the failed task that blocked them.
    pub skipped: Vec<(TaskKey, TaskKey)>,
}

impl Report {
    /// Whether every task succeeded.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty()
    }

    /// The plan if everything succeeded, else [`Error::Failed`] listing every failure.
    pub fn into_result(self) -> Result<Plan> {
        if self.failed.is_empty() {
            Ok(self.plan)
        } else {
            Err(Error::Failed {
                failures: self.failed,
            })
        }
    }
}

/// Runs task graphs. Cheap to clone; holds only options.
#[derive(Clone, Debug, Default)]
pub struct Executor {
    opts: ExecutorOptions,
}

impl Executor {
    /// An executor with these options.
    pub fn new(opts: ExecutorOptions) -> Self {
        Executor { opts }
    }

    /// The options.
    pub fn options(&self) -> &ExecutorOptions {
        &self.opts
    }

    /// Plans the graph against the cloud (calls `find` on every non-ignored task, in
    /// dependency order so references resolve to found IDs). Fails with every task error.
    pub async fn plan<C: ?Sized + Sync>(&self, graph: &TaskGraph<C>, cloud: &C) -> Result<Plan> {
        let results = Results::new();
        self.run(graph, cloud, Mode::Plan, &results)
            .await
            .into_result()
    }

    /// Applies the graph to the cloud.
    pub async fn apply<C: ?Sized + Sync>(&self, graph: &TaskGraph<C>, cloud: &C) -> Report {
        let results = Results::new();
        self.run(graph, cloud, Mode::Apply, &results).await
    }

    /// Runs the graph in `mode`, recording every task's outputs in `results` (which may be
    /// pre-seeded).
    pub async fn run<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        cloud: &C,
        mode: Mode,
        results: &Results,
    ) -> Report {
        let total = graph.len();
        // Each task that failed or was skipped, with the failed task at the root of it;
        // only looked at once something failed.
        let mut blocking: HashMap<usize, TaskKey> = HashMap::new();
        // Unfinished dependencies of each task (u32: half the memory touched at random).
        let mut pending: Vec<u32> = (0..total)
            .map(|i| u32::try_from(graph.dependencies(i).len()).unwrap_or(u32::MAX))
            .collect();
        // Ready tasks run lowest node index first: in the order the tasks were given,
        // which is usually the order their data lies in memory.
        let mut ready = Ready::new(total);
        for (i, _) in pending.iter().enumerate().filter(|(_, p)| **p == 0) {
            ready.push(i);
        }
        // The context of each task's first attempt, in the order the tasks start: it must
        // outlive the task's lookup, which may be kept among the tasks in flight. Filled
        // one after another, so the contexts of tasks started together lie together.
        let first_contexts: Vec<OnceLock<Context<'_, C>>> =
            (0..total).map(|_| OnceLock::new()).collect();
        let mut started = 0usize;
        let mut in_flight = FuturesUnordered::new();
        let mut done = 0usize;
        let mut report = Report::default();
        // Finished tasks' items, each placed at its node's position in key order (the
        // plan's order).
        let mut rank: Vec<u32> = vec![0; total];
        for (j, &i) in graph.in_key_order().iter().enumerate() {
            if let Some(r) = rank.get_mut(i) {
                *r = u32::try_from(j).unwrap_or(u32::MAX);
            }
        }
        let mut finished: Vec<Option<PlanItem>> = Vec::new();
        finished.resize_with(total, || None);
        results.start_run(graph);
        let concurrency = self.opts.concurrency.max(1);

        let release = |i: usize, pending: &mut Vec<u32>, ready: &mut Ready| {
            for &d in graph.dependents(i) {
                pending[d] -= 1;
                if pending[d] == 0 {
                    ready.push(d);
                }
            }
        };

        loop {
            // A task whose first poll finished it (its lookup was answered at once) is
            // handled right away, without a place among the tasks in flight.
            let mut finished_now = None;
            while in_flight.len() < concurrency {
                let Some(i) = ready.pop() else { break };
                let blocked = if blocking.is_empty() {
                    None
                } else {
                    graph
                        .dependencies(i)
                        .iter()
                        .find_map(|d| blocking.get(d).cloned())
                };
                let Some(node) = graph.node(i) else { continue };
                if let Some(root) = blocked {
                    done += 1;
                    self.emit(|| Event::Skipped {
                        key: node.key().clone(),
                        blocked_by: root.clone(),
                        done,
                        total,
                    });
                    report.skipped.push((node.key().clone(), root.clone()));
                    blocking.insert(i, root);
                    release(i, &mut pending, &mut ready);
                    continue;
                }
                let running = in_flight.len() + 1;
                self.emit(|| Event::Started {
                    key: node.key().clone(),
                    running,
                    done,
                    total,
                });
                if node.lifecycle() == Lifecycle::Ignore {
                    finished_now = Some((i, self.ignored(node)));
                    break;
                }
                let span =
                    tracing::info_span!("task", kind = node.key().kind(), name = node.key().name());
                // The first attempt's lookup is polled once here; a task it finishes is
                // settled at once, without a future of its own. Only a task that has to
                // wait, apply, or retry becomes a future among those in flight.
                let cx = first_contexts.get(started).map(|slot| {
                    slot.get_or_init(|| Context {
                        cloud,
                        key: node.key(),
                        results,
                        clock: self.opts.clock.as_ref(),
                        attempt: 1,
                    })
                });
                started += 1;
                let Some(cx) = cx else { continue };
                let mut first = node.task().find(cx);
                let polled = std::future::poll_fn(|tcx| {
                    let _in_span = span.enter();
                    Poll::Ready(first.as_mut().poll(tcx))
                })
                .await;
                let head = match polled {
                    Poll::Pending => Head::Started(first),
                    Poll::Ready(found) => {
                        drop(first);
                        match span.in_scope(|| self.settle(graph, i, node, results, mode, found)) {
                            Settled::Apply(found, item) => Head::Found(found, item),
                            Settled::Done(Err(e)) if e.is_retryable() => Head::Failed(e),
                            Settled::Done(outcome) => {
                                finished_now = Some((i, outcome));
                                break;
                            }
                        }
                    }
                };
                in_flight.push(
                    self.run_slow(graph, (i, node), cloud, mode, results, head)
                        .instrument(span),
                );
            }
            let (i, outcome) = match finished_now {
                Some(finished) => finished,
                None => match in_flight.next().await {
                    Some(finished) => finished,
                    None => break,
                },
            };
            done += 1;
            let Some(node) = graph.node(i) else { continue };
            let ok = outcome.is_ok();
            match outcome {
                Ok(item) => {
                    if let Some(slot) = rank.get(i).and_then(|&r| finished.get_mut(r as usize)) {
                        *slot = Some(item);
                    }
                }
                Err(e) => {
                    tracing::warn!(task = %node.key(), error = %e, "task failed");
                    blocking.insert(i, node.key().clone());
                    report.failed.push((node.key().clone(), e));
                }
            }
            let running = in_flight.len();
            self.emit(|| Event::Finished {
                key: node.key().clone(),
                ok,
                running,
                done,
                total,
            });
            release(i, &mut pending, &mut ready);
        }
        report.plan = Plan {
            // In place, in the buffer of `finished`: a new one would be written for the
            // first time (for 100k tasks, 11 MB of fresh pages), and a flattening
            // iterator, which does not tell its length, would also grow it by doubling.
            #[allow(clippy::filter_map_identity)]
            items: finished.into_iter().filter_map(|item| item).collect(),
            warnings: Vec::new(),
        };
        report.failed.sort_by(|a, b| a.0.cmp(&b.0));
        report
    }

    /// Deletes the orphaned objects of `plan` (non-deferred ones, plus deferred ones when
    /// `include_deferred`), with the same concurrency, retry and deadline rules. Returns
    /// every failure.
    pub async fn delete_orphans<C: ?Sized + Sync>(
        &self,
        plan: &Plan,
        owned: &[OwnedObject],
        deleter: &dyn Deleter<C>,
        cloud: &C,
        include_deferred: bool,
    ) -> Vec<(TaskKey, Error)> {
        let results = Results::new();
        let targets: Vec<&OwnedObject> = plan
            .items
            .iter()
            .filter(|i| i.action == Action::Delete && (include_deferred || !i.deferred))
            .filter_map(|i| owned.iter().find(|o| o.key == i.key))
            .collect();
        let mut failures = Vec::new();
        let mut stream = futures::stream::iter(targets.into_iter().map(|o| {
            let results = &results;
            let span = tracing::info_span!("delete", kind = o.key.kind(), name = o.key.name());
            async move {
                let r = self
                    .with_retries(&o.key, |attempt| async move {
                        let cx = Context {
                            cloud,
                            key: &o.key,
                            results,
                            clock: self.opts.clock.as_ref(),
                            attempt,
                        };
                        deleter.delete(&cx, o).await
                    })
                    .await;
                (o.key.clone(), r)
            }
            .instrument(span)
        }))
        .buffer_unordered(self.opts.concurrency.max(1));
        while let Some((key, r)) = stream.next().await {
            if let Err(e) = r {
                failures.push((key, e));
            }
        }
        failures.sort_by(|a, b| a.0.cmp(&b.0));
        failures
    }

    /// Reports the event `event` makes, if anyone listens.
    fn emit(&self, event: impl FnOnce() -> Event) {
        if let Some(p) = &self.opts.progress {
            p(&event());
        }
    }

    /// Runs `attempt` until it succeeds, fails permanently, runs out of attempts, or the
    /// deadline passes (the pending attempt is then dropped).
    async fn with_retries<T, F, Fut>(&self, key: &TaskKey, mut attempt_fn: F) -> Result<T>
    where
        F: FnMut(u32) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let clock = self.opts.clock.as_ref();
        // What only a retry or a wait needs (the policy, the key's jitter salt, the
        // deadline) is made when first needed: most tasks finish in one attempt that
        // completes when first polled. The deadline counts from the first attempt that
        // had to wait or failed (the first poll itself does not wait).
        let mut policy: Option<RetryPolicy> = None;
        let mut deadline: Option<Duration> = None;
        let mut deadline_of =
            || *deadline.get_or_insert_with(|| clock.now() + self.opts.task_deadline);
        let exceeded = |last_error: Option<String>| Error::DeadlineExceeded {
            key: key.clone(),
            after: self.opts.task_deadline,
            last_error,
        };
        let mut last_error = None;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut fut = std::pin::pin!(attempt_fn(attempt));
            // Most attempts finish when first polled (answered from a listing already
            // fetched): only one that has to wait races a timer.
            let outcome = match futures::poll!(fut.as_mut()) {
                Poll::Ready(r) => r,
                Poll::Pending => {
                    let remaining = deadline_of().saturating_sub(clock.now());
                    match select(fut, clock.sleep(remaining)).await {
                        Either::Left((r, _)) => r,
                        Either::Right(_) => return Err(exceeded(last_error)),
                    }
                }
            };
            match outcome {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let policy = policy.get_or_insert_with(|| self.opts.retry_policy());
                    if !(e.is_retryable() && policy.allows(attempt)) {
                        return Err(e);
                    }
                    let delay = policy.delay(attempt, crate::retry::salt_of(key.as_str()));
                    if clock.now() + delay >= deadline_of() {
                        return Err(exceeded(Some(e.to_string())));
                    }
                    tracing::debug!(task = %key, attempt, ?delay, error = %e, "retrying");
                    self.emit(|| Event::Retrying {
                        key: key.clone(),
                        attempt,
                        delay,
                        error: e.to_string(),
                    });
                    last_error = Some(e.to_string());
                    clock.sleep(delay).await;
                }
            }
        }
    }

    /// The item of a task whose lifecycle is `Ignore` (no lookup).
    fn ignored<C: ?Sized + Sync>(&self, node: &Node<C>) -> Result<PlanItem> {
        evaluate(
            node.key(),
            node.lifecycle(),
            node.fields(),
            None,
            &NoResolver,
        )
    }

    /// A task that did not finish at its first poll: the rest of its first attempt
    /// (`head`), then further attempts under the retry rules.
    async fn run_slow<'f, C: ?Sized + Sync>(
        &'f self,
        graph: &'f TaskGraph<C>,
        (i, node): (usize, &'f Node<C>),
        cloud: &'f C,
        mode: Mode,
        results: &'f Results,
        head: Head<'f>,
    ) -> (usize, Result<PlanItem>) {
        let mut head = Some(head);
        let outcome = self
            .with_retries(node.key(), |attempt| {
                let head = head.take();
                let cx = Context {
                    cloud,
                    key: node.key(),
                    results,
                    clock: self.opts.clock.as_ref(),
                    attempt,
                };
                async move { self.attempt(graph, i, node, &cx, mode, head).await }
            })
            .await;
        (i, outcome)
    }

    /// What a finished lookup means: the item (outputs recorded) unless the change has
    /// to be applied first.
    fn settle<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        i: usize,
        node: &Node<C>,
        results: &Results,
        mode: Mode,
        found: Result<Option<Found>>,
    ) -> Settled {
        let task = node.task();
        let found = match found {
            Ok(f) => f,
            Err(e)
                if node.lifecycle() == Lifecycle::WarnIfInsufficientAccess && !e.is_retryable() =>
            {
                tracing::warn!(task = %node.key(), error = %e, "lookup failed; continuing (WarnIfInsufficientAccess)");
                let mut item = match evaluate(
                    node.key(),
                    Lifecycle::Ignore,
                    node.fields(),
                    None,
                    &NoResolver,
                ) {
                    Ok(item) => item,
                    Err(e) => return Settled::Done(Err(e)),
                };
                item.lifecycle = node.lifecycle();
                item.reason =
                    format!("lookup failed, skipped (WarnIfInsufficientAccess): {e}").into();
                return Settled::Done(Ok(item));
            }
            Err(e) => return Settled::Done(Err(e)),
        };
        let mut found = found;
        let evaluated = match found.as_mut().and_then(Found::take_changes) {
            // The task compared the object itself: its fields are not needed.
            Some(changes) => evaluate_compared(node.key(), node.lifecycle(), changes),
            None => results.with_resolver(graph, i, |resolver| {
                evaluate(
                    node.key(),
                    node.lifecycle(),
                    node.fields(),
                    found.as_ref(),
                    resolver,
                )
            }),
        };
        let item = match evaluated {
            Ok(item) => item,
            Err(e) => return Settled::Done(Err(e)),
        };
        let changing = matches!(item.action, Action::Create | Action::Update);
        if changing {
            // Validated in plan mode too, so a dry run reports e.g. an immutable field.
            if let Err(e) = task.check_changes(found.as_ref(), &item.changes) {
                return Settled::Done(Err(e));
            }
            if mode == Mode::Apply {
                return Settled::Apply(found, item);
            }
        }
        if let Some(found) = found
            && !found.outputs.is_empty()
        {
            results.insert_node(graph, i, node.key(), found.outputs);
        }
        Settled::Done(Ok(item))
    }

    /// One attempt of a task, continuing from `head` when the first attempt got that far
    /// before the task became a future.
    async fn attempt<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        i: usize,
        node: &Node<C>,
        cx: &Context<'_, C>,
        mode: Mode,
        head: Option<Head<'_>>,
    ) -> Result<PlanItem> {
        let task = node.task();
        let (found, item) = match head {
            Some(Head::Found(found, item)) => (found, item),
            Some(Head::Failed(e)) => return Err(e),
            head => {
                let found = match head {
                    Some(Head::Started(lookup)) => lookup.await,
                    _ => task.find(cx).await,
                };
                match self.settle(graph, i, node, cx.results, mode, found) {
                    Settled::Done(outcome) => return outcome,
                    Settled::Apply(found, item) => (found, item),
                }
            }
        };
        let change = Change {
            kind: if found.is_some() {
                ChangeKind::Update
            } else {
                ChangeKind::Create
            },
            expected: node.fields(),
            actual: found.as_ref(),
            changes: &item.changes,
        };
        let applied = task.apply(cx, &change).await?;
        let mut outputs = found.map(|f| f.outputs).unwrap_or_default();
        outputs.merge(applied);
        if !outputs.is_empty() {
            cx.results.insert_node(graph, i, node.key(), outputs);
        }
        Ok(item)
    }
}

/// The set of ready nodes, taken lowest index first: one bit per node, and one summary
/// bit per word of them, so that finding the lowest reads a few words.
struct Ready {
    words: Vec<u64>,
    summary: Vec<u64>,
    /// No summary word below this one has a bit set.
    low: usize,
}

impl Ready {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        Ready {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            low: 0,
        }
    }

    fn push(&mut self, i: usize) {
        let w = i / 64;
        if let (Some(word), Some(sum)) = (self.words.get_mut(w), self.summary.get_mut(w / 64)) {
            *word |= 1 << (i % 64);
            *sum |= 1 << (w % 64);
            self.low = self.low.min(w / 64);
        }
    }

    fn pop(&mut self) -> Option<usize> {
        while *self.summary.get(self.low)? == 0 {
            self.low += 1;
        }
        let sum = self.summary.get_mut(self.low)?;
        let w = self.low * 64 + sum.trailing_zeros() as usize;
        let word = self.words.get_mut(w)?;
        let bit = word.trailing_zeros() as usize;
        *word &= *word - 1;
        if *word == 0 {
            *sum &= !(1 << (w % 64));
        }
        Some(w * 64 + bit)
    }
}

/// A task's lookup (as [`crate::Task::find`] returns it).
type LookupFuture<'f> = Pin<Box<dyn Future<Output = Result<Option<Found>>> + Send + 'f>>;

/// How far a task's first attempt got before the task became a future.
enum Head<'f> {
    /// Its lookup is under way.
    Started(LookupFuture<'f>),
    /// Its object was found (or not) and its item made; the change is to be applied.
    Found(Option<Found>, PlanItem),
    /// It failed with a retryable error.
    Failed(Error),
}

/// What a finished lookup leaves to do.
enum Settled {
    /// Nothing: the task's outcome.
    Done(Result<PlanItem>),
    /// Apply the item's change to what was found.
    Apply(Option<Found>, PlanItem),
}
