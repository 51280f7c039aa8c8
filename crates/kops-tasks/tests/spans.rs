//! Every task runs in a `tracing` span `task` with fields `kind` and `name`: what a task
//! logs, in `find` (answered at once or after waiting) and in `apply`, is inside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use kops_tasks::{
    Action, Change, Context, Executor, ExecutorOptions, Fields, Found, ManualClock, Outputs,
    Result, Task, TaskGraph, TaskKey, async_trait,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Metadata, Subscriber};

/// Records, for every event, its message and the `kind/name` of the innermost `task`
/// span entered when it happened (single-threaded use).
#[derive(Clone, Default)]
struct Recorder(Arc<Inner>);

#[derive(Default)]
struct Inner {
    next: AtomicU64,
    tasks: Mutex<HashMap<u64, String>>,
    stack: Mutex<Vec<u64>>,
    events: Mutex<Vec<(String, Option<String>)>>,
}

#[derive(Default)]
struct Fieldset(HashMap<String, String>);

impl Visit for Fieldset {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst) + 1;
        if span.metadata().name() == "task" {
            let mut f = Fieldset::default();
            span.record(&mut f);
            let kind = f.0.get("kind").cloned().unwrap_or_default();
            let name = f.0.get("name").cloned().unwrap_or_default();
            self.0
                .tasks
                .lock()
                .unwrap()
                .insert(id, format!("{kind}/{name}"));
        }
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut f = Fieldset::default();
        event.record(&mut f);
        let tasks = self.0.tasks.lock().unwrap();
        let task = self
            .0
            .stack
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find_map(|id| tasks.get(id).cloned());
        let message = f.0.get("message").cloned().unwrap_or_default();
        self.0.events.lock().unwrap().push((message, task));
    }
    fn enter(&self, span: &Id) {
        self.0.stack.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, span: &Id) {
        let mut stack = self.0.stack.lock().unwrap();
        if let Some(at) = stack.iter().rposition(|id| *id == span.into_u64()) {
            stack.remove(at);
        }
    }
}

/// Pending once, then ready (a lookup that has to wait).
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Logs in `find` (before and, when `waits`, after waiting once) and in `apply`; finds
/// nothing, so every task is a create.
#[derive(Debug)]
struct LoggingTask {
    key: TaskKey,
    fields: Fields,
    waits: bool,
}

#[async_trait]
impl Task<()> for LoggingTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }
    fn fields(&self) -> Fields {
        self.fields.clone()
    }
    async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
        tracing::info!("find {}", self.key);
        if self.waits {
            YieldOnce(false).await;
            tracing::info!("found {}", self.key);
        }
        Ok(None)
    }
    async fn apply(&self, _cx: &Context<'_, ()>, _change: &Change<'_>) -> Result<Outputs> {
        tracing::info!("apply {}", self.key);
        Ok(Outputs::id(self.key.name()))
    }
}

fn tasks() -> Vec<Box<dyn Task<()>>> {
    let vpc = TaskKey::new("VPC", "main");
    vec![
        Box::new(LoggingTask {
            key: vpc.clone(),
            fields: Fields::new().with("CIDR", "10.0.0.0/16"),
            waits: false,
        }),
        Box::new(LoggingTask {
            key: TaskKey::new("Subnet", "a"),
            fields: Fields::new().with("VPC", &vpc),
            waits: true,
        }),
        Box::new(LoggingTask {
            key: TaskKey::new("Subnet", "b"),
            fields: Fields::new().with("VPC", &vpc),
            waits: false,
        }),
    ]
}

#[test]
fn what_a_task_logs_is_inside_its_task_span() {
    let recorder = Recorder::default();
    let graph = TaskGraph::build(tasks()).unwrap();
    let clock = ManualClock::new();
    let exec = Executor::new(ExecutorOptions::default().with_clock(Arc::new(clock.clone())));
    tracing::subscriber::with_default(recorder.clone(), || {
        let plan = clock.block_on(exec.plan(&graph, &())).unwrap().unwrap();
        assert!(plan.items.iter().all(|i| i.action == Action::Create));
        let report = clock.block_on(exec.apply(&graph, &())).unwrap();
        assert!(report.is_success(), "{:?}", report.failed);
    });
    let events = recorder.0.events.lock().unwrap().clone();
    let mut checked = 0;
    for (message, task) in &events {
        let Some((_, key)) = message.split_once(' ') else {
            continue;
        };
        assert_eq!(task.as_deref(), Some(key), "{message:?} outside its span");
        checked += 1;
    }
    // Plan: three finds and one wait; apply: the same, and three applies.
    assert_eq!(checked, 4 + 4 + 3, "{events:?}");
}
