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
//!
//! A plan first asks the ready tasks, up to 4096 at a time, for the lookups they answer
//! without waiting ([`crate::Task::find_now`]), on up to [`ExecutorOptions::plan_threads`]
//! threads; only the tasks left unanswered are found through [`crate::Task::find`] under
//! the rules above. Such a round also takes a task given after its dependencies when they
//! are all done or in the round: the thread that answered all of them asks it right
//! after them, resolving its references to what they found; otherwise it waits for them as
//! any task does. So a round follows chains of tasks in the order they were given. A lookup answered at once is not counted against the concurrency
//! bound: it calls nothing.

use std::collections::{HashMap, VecDeque};
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
use crate::diff::Resolver;
use crate::error::{Error, Result};
use crate::graph::{Node, TaskGraph};
use crate::key::TaskKey;
use crate::lifecycle::Lifecycle;
use crate::plan::{Action, Plan, PlanItem, evaluate, evaluate_compared};
use crate::retry::RetryPolicy;
use crate::task::{
    Change, ChangeKind, Context, Deleter, Found, NodeResolver, OwnedObject, Recorded, Results,
    Unrecorded,
};
use crate::value::{Outputs, OutputsView};

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
    /// Threads a plan may use for the lookups that tasks answer at once
    /// ([`crate::Task::find_now`]): at most this many, one per
    /// [`MIN_TASKS_PER_THREAD`] ready tasks (at least 1; default: the machine's
    /// available parallelism).
    pub plan_threads: usize,
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
            .field("plan_threads", &self.plan_threads)
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
            plan_threads: available_threads(),
        }
    }
}

/// The fewest ready tasks a planning thread is started for: below that, starting it
/// costs more than it saves.
pub const MIN_TASKS_PER_THREAD: usize = 512;

/// The most ready tasks looked up in one round ([`crate::Task::find_now`]) before their
/// outcomes are recorded.
const ROUND: usize = 4096;

/// The machine's available parallelism, read once.
pub(crate) fn available_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
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
    /// Sets how many threads a plan may use (values below 1 mean 1).
    pub fn with_plan_threads(mut self, n: usize) -> Self {
        self.plan_threads = n.max(1);
        self
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
        // Made when the first task starts this way: a plan whose rounds answer every task
        // never writes (nor faults in) them.
        let first_contexts: std::cell::OnceCell<Vec<OnceLock<Context<'_, C>>>> =
            std::cell::OnceCell::new();
        let mut started = 0usize;
        let mut in_flight = FuturesUnordered::new();
        let mut tally = Tally::new(graph);
        results.start_run(graph);
        let concurrency = self.opts.concurrency.max(1);
        // A plan first asks the ready tasks, many at once, for the lookups they answer
        // without waiting (`Task::find_now`); the tasks it leaves unanswered wait in
        // `later` and go the way every task goes when applying.
        let rounds = mode == Mode::Plan;
        let mut later: VecDeque<usize> = VecDeque::new();
        let mut round = Round::new(if rounds { total } else { 0 });
        let mut answers: Vec<Now> = Vec::new();
        let mut outputs: Vec<Vec<u8>> = Vec::new();
        // Room a round's thread reserves per task for the outputs it writes, learnt from
        // the round before (a buffer grown by doubling copies what it holds).
        let mut output_bytes_per_task = 64;

        let release = |i: usize, pending: &mut Vec<u32>, ready: &mut Ready| {
            for &d in graph.dependents(i) {
                pending[d] -= 1;
                if pending[d] == 0 {
                    ready.push(d);
                }
            }
        };

        loop {
            if rounds && later.is_empty() {
                round.begin();
                while round.tasks.len() < ROUND {
                    let Some(i) = ready.pop() else { break };
                    let waits = pending[i] > 0;
                    if let Some(root) = tally.blocked(graph, i) {
                        // A task taken after its dependencies comes back when they end.
                        if !waits {
                            tally.skip(self, graph, i, root);
                            release(i, &mut pending, &mut ready);
                        }
                        continue;
                    }
                    round.take(graph, i, waits, &pending, &mut ready);
                }
                round.close(&pending, &mut ready);
                if !round.tasks.is_empty() {
                    self.answer_now(
                        graph,
                        cloud,
                        results,
                        &round,
                        (&mut answers, &mut outputs),
                        output_bytes_per_task,
                    );
                    let written: usize = outputs.iter().map(Vec::len).sum();
                    output_bytes_per_task = written / round.tasks.len().max(1) + 8;
                    // The threads' buffers become the results' own: nothing is copied.
                    results.adopt_node_buffers(
                        graph,
                        &mut outputs,
                        round
                            .tasks
                            .iter()
                            .zip(&answers)
                            .filter_map(|(&i, a)| match a {
                                Now::Done(_, Some((part, range))) => {
                                    Some((i, *part, range.clone()))
                                }
                                _ => None,
                            }),
                    );
                    round.forget_positions();
                    for (&i, answer) in round.tasks.iter().zip(answers.drain(..)) {
                        let Some(node) = graph.node(i) else { continue };
                        let outcome = match answer {
                            // Its dependencies were not found before it: it waits for them
                            // as any task does.
                            Now::Deferred => continue,
                            Now::Later => {
                                // A task asked after its dependencies in the round became
                                // ready as they were settled above.
                                ready.remove(i);
                                later.push_back(i);
                                continue;
                            }
                            Now::Done(outcome, _) => outcome,
                        };
                        ready.remove(i);
                        let running = in_flight.len();
                        self.emit(|| Event::Started {
                            key: node.key().clone(),
                            running: running + 1,
                            done: tally.done,
                            total,
                        });
                        tally.finish(self, node, i, outcome, running);
                        release(i, &mut pending, &mut ready);
                    }
                    continue;
                }
            }
            // A task whose first poll finished it (its lookup was answered at once) is
            // handled right away, without a place among the tasks in flight.
            let mut finished_now = None;
            while in_flight.len() < concurrency {
                let next = if rounds {
                    later.pop_front()
                } else {
                    ready.pop()
                };
                let Some(i) = next else { break };
                let Some(node) = graph.node(i) else { continue };
                if let Some(root) = tally.blocked(graph, i) {
                    tally.skip(self, graph, i, root);
                    release(i, &mut pending, &mut ready);
                    continue;
                }
                let running = in_flight.len() + 1;
                self.emit(|| Event::Started {
                    key: node.key().clone(),
                    running,
                    done: tally.done,
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
                let cx = first_contexts
                    .get_or_init(|| (0..total).map(|_| OnceLock::new()).collect())
                    .get(started)
                    .map(|slot| {
                        slot.get_or_init(|| Context {
                            cloud,
                            key: node.key(),
                            results,
                            clock: self.opts.clock.as_ref(),
                            attempt: 1,
                            resolver: None,
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
                    // Nothing in flight: done, unless a plan's round has tasks to ask.
                    None if rounds && later.is_empty() && !ready.is_empty() => continue,
                    None => break,
                },
            };
            let Some(node) = graph.node(i) else { continue };
            tally.finish(self, node, i, outcome, in_flight.len());
            release(i, &mut pending, &mut ready);
        }
        tally.into_report()
    }

    /// Asks the tasks of `round` for the lookups they answer without waiting, on up to
    /// [`ExecutorOptions::plan_threads`] threads, and judges the objects found: `answers`
    /// gets one answer per task of `round`, in its order, and `outputs` one buffer per
    /// thread, holding the outputs of its tasks one after another (written by the thread
    /// that found them, while they are at hand; each buffer reserves
    /// `output_bytes_per_task` per task of its thread first).
    fn answer_now<C: ?Sized + Sync>(
        &self,
        graph: &TaskGraph<C>,
        cloud: &C,
        results: &Results,
        round: &Round,
        (answers, outputs): (&mut Vec<Now>, &mut Vec<Vec<u8>>),
        output_bytes_per_task: usize,
    ) {
        let tasks = &round.tasks;
        answers.clear();
        // What a task no thread asked (one could not be started) gets: `find`, after its
        // dependencies, which a task taken after some of them must wait for.
        answers.extend(round.waits.iter().map(
            |&waits| {
                if waits { Now::Deferred } else { Now::Later }
            },
        ));
        let threads = (tasks.len() / MIN_TASKS_PER_THREAD).clamp(1, self.opts.plan_threads.max(1));
        // Each thread takes a run of neighbouring tasks, whose data lies together.
        let per_thread = tasks.len().div_ceil(threads);
        outputs.resize_with(threads, Vec::new);
        for buffer in outputs.iter_mut() {
            buffer.clear();
            buffer.reserve(per_thread.saturating_mul(output_bytes_per_task));
        }
        let answer_all = |part: usize, answers: &mut [Now], buffer: &mut Vec<u8>| {
            // Nothing is recorded while a round is asked: the results are read once.
            let recorded = results.read();
            let first = part * per_thread;
            for k in 0..answers.len() {
                let (Some(&i), Some(&waits)) = (tasks.get(first + k), round.waits.get(first + k))
                else {
                    break;
                };
                let (before, rest) = answers.split_at_mut(k);
                let answer = {
                    // What this thread found earlier in the round, for a task taken after
                    // its dependencies: their outputs are not recorded yet.
                    let mine = |d: usize| match round.position(d)?.checked_sub(first) {
                        Some(j) if j < k => Some(&before[j]),
                        _ => None,
                    };
                    let unrecorded = |d: usize| match mine(d) {
                        Some(Now::Done(Ok(_), Some((_, range)))) => {
                            buffer.get(range.clone()).map(OutputsView)
                        }
                        _ => None,
                    };
                    // Such a task is asked when this thread found every dependency the
                    // round holds; otherwise it waits for them as any task does.
                    let asked = !waits
                        || graph.dependencies(i).iter().all(|&d| {
                            round.position(d).is_none()
                                || matches!(mine(d), Some(Now::Done(Ok(_), _)))
                        });
                    if asked {
                        let unrecorded: &Unrecorded<'_> = &unrecorded;
                        self.answer_one(
                            graph,
                            cloud,
                            results,
                            &recorded,
                            i,
                            waits.then_some(unrecorded),
                        )
                    } else {
                        Answer::Deferred
                    }
                };
                let Some(slot) = rest.first_mut() else { break };
                *slot = match answer {
                    Answer::Later => Now::Later,
                    Answer::Deferred => Now::Deferred,
                    Answer::Done(outcome, found) => {
                        let range = found.map(|o| {
                            let start = buffer.len();
                            buffer.extend_from_slice(o.as_bytes());
                            (part, start..buffer.len())
                        });
                        Now::Done(outcome, range)
                    }
                };
            }
        };
        let mut parts = answers
            .chunks_mut(per_thread)
            .zip(outputs.iter_mut())
            .enumerate();
        let Some((_, (own_answers, own_buffer))) = parts.next() else {
            return;
        };
        if threads == 1 {
            answer_all(0, own_answers, own_buffer);
            return;
        }
        std::thread::scope(|s| {
            for (part, (answers, buffer)) in parts {
                // A thread that cannot be started leaves its tasks to `find`.
                let _ = std::thread::Builder::new()
                    .name("kops-plan".into())
                    .spawn_scoped(s, move || answer_all(part, answers, buffer));
            }
            answer_all(0, own_answers, own_buffer);
        });
    }

    /// One task's answer in a plan's round ([`Executor::answer_now`]).
    fn answer_one<'b, C: ?Sized + Sync>(
        &self,
        graph: &'b TaskGraph<C>,
        cloud: &C,
        results: &Results,
        recorded: &'b Recorded,
        i: usize,
        unrecorded: Option<&'b Unrecorded<'b>>,
    ) -> Answer {
        let Some(node) = graph.node(i) else {
            return Answer::Later;
        };
        if node.lifecycle() == Lifecycle::Ignore {
            return Answer::Done(self.ignored(node), None);
        }
        let span = tracing::info_span!("task", kind = node.key().kind(), name = node.key().name());
        let _in_span = span.enter();
        let mut resolver = NodeResolver::new(recorded, graph, i);
        if let Some(unrecorded) = unrecorded {
            resolver = resolver.with_unrecorded(unrecorded);
        }
        let cx = Context {
            cloud,
            key: node.key(),
            results,
            clock: self.opts.clock.as_ref(),
            attempt: 1,
            resolver: Some(&resolver),
        };
        match node.task().find_now(&cx) {
            None => Answer::Later,
            // A retryable failure is retried the usual way, through `find`.
            Some(Err(e)) if e.is_retryable() => Answer::Later,
            Some(found) => match self.judge(node, &resolver, Mode::Plan, found) {
                Judged::Done(Err(e), _) if e.is_retryable() => Answer::Later,
                Judged::Done(outcome, outputs) => Answer::Done(outcome, outputs),
                Judged::Apply(..) => Answer::Later,
            },
        }
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
                            resolver: None,
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
                    resolver: None,
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
        let judged =
            results.with_resolver(graph, i, |resolver| self.judge(node, resolver, mode, found));
        match judged {
            Judged::Done(outcome, outputs) => {
                if let Some(outputs) = outputs {
                    results.insert_node(graph, i, outputs);
                }
                Settled::Done(outcome)
            }
            Judged::Apply(found, item) => Settled::Apply(found, item),
        }
    }

    /// What a finished lookup means, with the outputs to record, which it only reads
    /// (so tasks are judged on several threads at once).
    fn judge<C: ?Sized + Sync>(
        &self,
        node: &Node<C>,
        resolver: &dyn Resolver,
        mode: Mode,
        found: Result<Option<Found>>,
    ) -> Judged {
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
                    Err(e) => return Judged::Done(Err(e), None),
                };
                item.lifecycle = node.lifecycle();
                item.reason =
                    format!("lookup failed, skipped (WarnIfInsufficientAccess): {e}").into();
                return Judged::Done(Ok(item), None);
            }
            Err(e) => return Judged::Done(Err(e), None),
        };
        let mut found = found;
        let evaluated = match found.as_mut().and_then(Found::take_changes) {
            // The task compared the object itself: its fields are not needed.
            Some(changes) => evaluate_compared(node.key(), node.lifecycle(), changes),
            None => evaluate(
                node.key(),
                node.lifecycle(),
                node.fields(),
                found.as_ref(),
                resolver,
            ),
        };
        let item = match evaluated {
            Ok(item) => item,
            Err(e) => return Judged::Done(Err(e), None),
        };
        let changing = matches!(item.action, Action::Create | Action::Update);
        if changing {
            // Validated in plan mode too, so a dry run reports e.g. an immutable field.
            if let Err(e) = task.check_changes(found.as_ref(), &item.changes) {
                return Judged::Done(Err(e), None);
            }
            if mode == Mode::Apply {
                return Judged::Apply(found, item);
            }
        }
        let outputs = found.map(|f| f.outputs).filter(|o| !o.is_empty());
        Judged::Done(Ok(item), outputs)
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
            cx.results.insert_node(graph, i, outputs);
        }
        Ok(item)
    }
}

/// The tasks of a plan's round, in the order they were taken. A round takes the ready
/// tasks, and with them a task whose dependencies not yet done are all in the round before
/// it: the thread that finds those dependencies asks it too, right after them, from the
/// outputs it found (so a round can follow a chain of tasks, in the order they lie in
/// memory, instead of one level of the graph).
struct Round {
    tasks: Vec<usize>,
    /// Per task of `tasks`: whether it was taken after some of its dependencies.
    waits: Vec<bool>,
    /// Each node's position in `tasks` (`u32::MAX`: not in the round).
    positions: Vec<u32>,
    /// Per node: how many of its dependencies the round holds.
    taken_deps: Vec<u32>,
    /// The nodes whose `taken_deps` is not zero.
    touched: Vec<usize>,
}

impl Round {
    const NONE: u32 = u32::MAX;

    /// A round for a graph of `n` nodes.
    fn new(n: usize) -> Self {
        Round {
            tasks: Vec::new(),
            waits: Vec::new(),
            positions: vec![Self::NONE; n],
            taken_deps: vec![0; n],
            touched: Vec::new(),
        }
    }

    fn begin(&mut self) {
        self.tasks.clear();
        self.waits.clear();
    }

    /// Takes node `i`; a dependent after it whose dependencies not yet done are all taken
    /// now becomes ready for this round.
    fn take<C: ?Sized + Sync>(
        &mut self,
        graph: &TaskGraph<C>,
        i: usize,
        waits: bool,
        pending: &[u32],
        ready: &mut Ready,
    ) {
        if let Some(p) = self.positions.get_mut(i) {
            *p = u32::try_from(self.tasks.len()).unwrap_or(Self::NONE);
        }
        self.tasks.push(i);
        self.waits.push(waits);
        for &d in graph.dependents(i) {
            // Only a later node: the round's order is then the order its tasks are asked.
            if d <= i {
                continue;
            }
            let Some(taken) = self.taken_deps.get_mut(d) else {
                continue;
            };
            if *taken == 0 {
                self.touched.push(d);
            }
            *taken += 1;
            if pending.get(d) == Some(taken) {
                ready.push(d);
            }
        }
    }

    /// Ends the taking: a dependent made ready for the round and not taken (the round is
    /// full) is not ready any more.
    fn close(&mut self, pending: &[u32], ready: &mut Ready) {
        let mut touched = std::mem::take(&mut self.touched);
        for d in touched.drain(..) {
            let taken = self.taken_deps.get_mut(d).map_or(0, std::mem::take);
            if pending.get(d) == Some(&taken) && self.position(d).is_none() {
                ready.remove(d);
            }
        }
        self.touched = touched;
    }

    /// Node `d`'s position in the round.
    fn position(&self, d: usize) -> Option<usize> {
        self.positions
            .get(d)
            .filter(|&&p| p != Self::NONE)
            .map(|&p| p as usize)
    }

    /// Forgets the positions, once the round's tasks were asked.
    fn forget_positions(&mut self) {
        for &i in &self.tasks {
            if let Some(p) = self.positions.get_mut(i) {
                *p = Self::NONE;
            }
        }
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

    /// Takes `i` out of the set, when it is there.
    fn remove(&mut self, i: usize) {
        let w = i / 64;
        if let (Some(word), Some(sum)) = (self.words.get_mut(w), self.summary.get_mut(w / 64)) {
            *word &= !(1 << (i % 64));
            if *word == 0 {
                *sum &= !(1 << (w % 64));
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.summary.iter().skip(self.low).all(|&s| s == 0)
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

/// What a finished lookup means ([`Executor::judge`]).
enum Judged {
    /// The task's outcome, and the outputs to record.
    Done(Result<PlanItem>, Option<Outputs>),
    /// Apply the item's change to what was found.
    Apply(Option<Found>, PlanItem),
}

/// A task's answer in a plan's round ([`Executor::answer_one`]).
enum Answer {
    /// It has no answer without waiting: it goes the usual way.
    Later,
    /// It was taken after its dependencies and they were not all found before it: it waits
    /// for them as any task does.
    Deferred,
    /// Its outcome, and the outputs to record.
    Done(Result<PlanItem>, Option<Outputs>),
}

/// A task's answer as a plan's round keeps it ([`Executor::answer_now`]).
enum Now {
    /// It has no answer without waiting: it goes the usual way.
    Later,
    /// As [`Answer::Deferred`].
    Deferred,
    /// Its outcome, and where its outputs lie: which thread's buffer, and where in it.
    Done(Result<PlanItem>, Option<(usize, std::ops::Range<usize>)>),
}

/// What a run has to tell of the tasks that ended: how many, their items in the plan's
/// order, failures and skipped tasks.
struct Tally {
    total: usize,
    done: usize,
    /// Each node's position in key order (the plan's order).
    rank: Vec<u32>,
    /// Finished tasks' items, each at its node's rank.
    finished: Vec<Option<PlanItem>>,
    /// Each task that failed or was skipped, with the failed task at the root of it;
    /// only looked at once something failed.
    blocking: HashMap<usize, TaskKey>,
    report: Report,
}

impl Tally {
    fn new<C: ?Sized + Sync>(graph: &TaskGraph<C>) -> Self {
        let total = graph.len();
        let mut rank: Vec<u32> = vec![0; total];
        for (j, &i) in graph.in_key_order().iter().enumerate() {
            if let Some(r) = rank.get_mut(i) {
                *r = u32::try_from(j).unwrap_or(u32::MAX);
            }
        }
        let mut finished: Vec<Option<PlanItem>> = Vec::new();
        finished.resize_with(total, || None);
        Tally {
            total,
            done: 0,
            rank,
            finished,
            blocking: HashMap::new(),
            report: Report::default(),
        }
    }

    /// The failed task that keeps node `i` from running, if any.
    fn blocked<C: ?Sized + Sync>(&self, graph: &TaskGraph<C>, i: usize) -> Option<TaskKey> {
        if self.blocking.is_empty() {
            return None;
        }
        graph
            .dependencies(i)
            .iter()
            .find_map(|d| self.blocking.get(d).cloned())
    }

    /// Node `i` is skipped: `root` failed.
    fn skip<C: ?Sized + Sync>(
        &mut self,
        ex: &Executor,
        graph: &TaskGraph<C>,
        i: usize,
        root: TaskKey,
    ) {
        let Some(node) = graph.node(i) else { return };
        self.done += 1;
        ex.emit(|| Event::Skipped {
            key: node.key().clone(),
            blocked_by: root.clone(),
            done: self.done,
            total: self.total,
        });
        self.report.skipped.push((node.key().clone(), root.clone()));
        self.blocking.insert(i, root);
    }

    /// Node `i` ended with `outcome`; `running` tasks are still in flight.
    fn finish<C: ?Sized + Sync>(
        &mut self,
        ex: &Executor,
        node: &Node<C>,
        i: usize,
        outcome: Result<PlanItem>,
        running: usize,
    ) {
        self.done += 1;
        let ok = outcome.is_ok();
        match outcome {
            Ok(item) => {
                if let Some(slot) = self
                    .rank
                    .get(i)
                    .and_then(|&r| self.finished.get_mut(r as usize))
                {
                    *slot = Some(item);
                }
            }
            Err(e) => {
                tracing::warn!(task = %node.key(), error = %e, "task failed");
                self.blocking.insert(i, node.key().clone());
                self.report.failed.push((node.key().clone(), e));
            }
        }
        ex.emit(|| Event::Finished {
            key: node.key().clone(),
            ok,
            running,
            done: self.done,
            total: self.total,
        });
    }

    fn into_report(self) -> Report {
        let mut report = self.report;
        report.plan = Plan {
            // In place, in the buffer of `finished`: a new one would be written for the
            // first time (for 100k tasks, 11 MB of fresh pages), and a flattening
            // iterator, which does not tell its length, would also grow it by doubling.
            #[allow(clippy::filter_map_identity)]
            items: self.finished.into_iter().filter_map(|item| item).collect(),
            warnings: Vec::new(),
        };
        report.failed.sort_by(|a, b| a.0.cmp(&b.0));
        report
    }
}

/// What a finished lookup leaves to do.
enum Settled {
    /// Nothing: the task's outcome.
    Done(Result<PlanItem>),
    /// Apply the item's change to what was found.
    Apply(Option<Found>, PlanItem),
}
