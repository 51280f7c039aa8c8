//! A tiny generic in-memory cloud and task used by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use kops_tasks::diff::FieldChange;
use kops_tasks::{
    Change, Context, Deleter, Error, Fields, Found, Lifecycle, Outputs, OwnedObject, Result, Task,
    TaskKey, Value, async_trait,
};

/// An injected fault for the next `find` or `apply` of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Fails with `Error::Throttled`.
    Throttle,
    /// Fails permanently.
    Fail,
    /// Never completes.
    Hang,
    /// Find fails with permission denied.
    Denied,
}

/// Objects by key: (id, fields with references resolved to IDs).
#[derive(Debug, Default)]
pub struct MemCloud {
    pub objects: Mutex<BTreeMap<TaskKey, (String, Fields)>>,
    pub apply_faults: Mutex<HashMap<TaskKey, VecDeque<Fault>>>,
    pub find_faults: Mutex<HashMap<TaskKey, VecDeque<Fault>>>,
    pub applies: Mutex<Vec<TaskKey>>,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    pub apply_delay: Mutex<Duration>,
    next_id: AtomicU64,
}

impl MemCloud {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_apply_delay(self, d: Duration) -> Self {
        *self.apply_delay.lock().unwrap() = d;
        self
    }

    pub fn fault_apply(&self, key: &TaskKey, faults: &[Fault]) {
        self.apply_faults
            .lock()
            .unwrap()
            .entry(key.clone())
            .or_default()
            .extend(faults.iter().copied());
    }

    pub fn fault_find(&self, key: &TaskKey, faults: &[Fault]) {
        self.find_faults
            .lock()
            .unwrap()
            .entry(key.clone())
            .or_default()
            .extend(faults.iter().copied());
    }

    pub fn put(&self, key: &TaskKey, id: &str, fields: Fields) {
        self.objects
            .lock()
            .unwrap()
            .insert(key.clone(), (id.to_owned(), fields));
    }

    pub fn get(&self, key: &TaskKey) -> Option<(String, Fields)> {
        self.objects.lock().unwrap().get(key).cloned()
    }

    fn next_fault(map: &Mutex<HashMap<TaskKey, VecDeque<Fault>>>, key: &TaskKey) -> Option<Fault> {
        map.lock()
            .unwrap()
            .get_mut(key)
            .and_then(VecDeque::pop_front)
    }
}

async fn inject(fault: Option<Fault>, key: &TaskKey) -> Result<()> {
    match fault {
        None => Ok(()),
        Some(Fault::Throttle) => Err(Error::throttled(format!("{key}: RequestLimitExceeded"))),
        Some(Fault::Fail) => Err(Error::cloud(format!("{key}: InvalidParameterValue"))),
        Some(Fault::Denied) => Err(Error::PermissionDenied {
            operation: format!("describe {key}"),
            source: None,
        }),
        Some(Fault::Hang) => futures::future::pending().await,
    }
}

/// Replaces every reference with the referenced task's resolved output.
pub fn resolve_value(cx: &Context<'_, MemCloud>, v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Ref(r) => Value::string(cx.resolve(r)?),
        Value::List(items) => Value::List(
            items
                .iter()
                .map(|i| resolve_value(cx, i))
                .collect::<Result<_>>()?,
        ),
        Value::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| Ok((k.to_owned(), resolve_value(cx, v)?)))
                .collect::<Result<_>>()?,
        ),
        Value::Object(f) => {
            let mut out = Fields::new();
            for (k, v) in f.iter() {
                out.insert(k.to_owned(), resolve_value(cx, v)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// A generic task: its expected state is given as fields.
#[derive(Debug, Clone)]
pub struct TestTask {
    pub key: TaskKey,
    pub fields: Fields,
    pub lifecycle: Lifecycle,
    pub extra_deps: Vec<TaskKey>,
    pub immutable: Vec<&'static str>,
}

impl TestTask {
    pub fn new(kind: &str, name: &str, fields: Fields) -> Self {
        TestTask {
            key: TaskKey::new(kind, name),
            fields,
            lifecycle: Lifecycle::Sync,
            extra_deps: Vec::new(),
            immutable: Vec::new(),
        }
    }

    pub fn lifecycle(mut self, l: Lifecycle) -> Self {
        self.lifecycle = l;
        self
    }

    pub fn boxed(self) -> Box<dyn Task<MemCloud>> {
        Box::new(self)
    }
}

#[async_trait]
impl Task<MemCloud> for TestTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        self.fields.clone()
    }

    fn dependencies(&self) -> Vec<TaskKey> {
        self.extra_deps.clone()
    }

    fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    async fn find(&self, cx: &Context<'_, MemCloud>) -> Result<Option<Found>> {
        inject(
            MemCloud::next_fault(&cx.cloud().find_faults, &self.key),
            &self.key,
        )
        .await?;
        Ok(cx
            .cloud()
            .get(&self.key)
            .map(|(id, fields)| Found::new(fields, Outputs::id(id))))
    }

    fn check_changes(&self, actual: Option<&Found>, changes: &[FieldChange]) -> Result<()> {
        if actual.is_none() {
            return Ok(());
        }
        match changes
            .iter()
            .find(|c| self.immutable.contains(&c.field.as_str()))
        {
            Some(c) => Err(Error::invalid(
                format!("{}.{}", self.key, c.field),
                "field cannot be changed",
            )),
            None => Ok(()),
        }
    }

    async fn apply(&self, cx: &Context<'_, MemCloud>, change: &Change<'_>) -> Result<Outputs> {
        let cloud = cx.cloud();
        let now = cloud.running.fetch_add(1, Ordering::SeqCst) + 1;
        cloud.max_running.fetch_max(now, Ordering::SeqCst);
        let delay = *cloud.apply_delay.lock().unwrap();
        let result = async {
            if !delay.is_zero() {
                cx.clock().sleep(delay).await;
            }
            inject(
                MemCloud::next_fault(&cloud.apply_faults, &self.key),
                &self.key,
            )
            .await?;
            let mut stored = Fields::new();
            for (k, v) in change.expected.iter() {
                stored.insert(k.to_owned(), resolve_value(cx, v)?);
            }
            let id = match cloud.get(&self.key) {
                Some((id, _)) => id,
                None => format!(
                    "{}-{}",
                    self.key.kind().to_lowercase(),
                    cloud.next_id.fetch_add(1, Ordering::SeqCst)
                ),
            };
            cloud.put(&self.key, &id, stored);
            cloud.applies.lock().unwrap().push(self.key.clone());
            Ok(Outputs::id(id))
        }
        .await;
        cloud.running.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

/// Deletes objects from the in-memory cloud; `fail` lists keys whose deletion fails.
#[derive(Debug, Default)]
pub struct MemDeleter {
    pub fail: Vec<TaskKey>,
}

#[async_trait]
impl Deleter<MemCloud> for MemDeleter {
    async fn delete(&self, cx: &Context<'_, MemCloud>, object: &OwnedObject) -> Result<()> {
        if self.fail.contains(&object.key) {
            return Err(Error::cloud(format!("delete {}", object.id)));
        }
        cx.cloud().objects.lock().unwrap().remove(&object.key);
        Ok(())
    }
}
