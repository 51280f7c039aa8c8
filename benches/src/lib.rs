//! Criterion benchmarks for kops-rs; see `benches/` beside this file.
//!
//! This library holds the synthetic workload the benchmarks share, so it can be unit
//! tested: [`synthetic`] builds a graph-shaped set of tasks and a [`Cloud`] holding their
//! objects, a chosen fraction of which differ from what the tasks expect. The tasks find
//! their objects the way the model's tasks do on a real backend: the first lookup of a
//! kind lists every object of that kind once, later lookups are answered from that
//! listing, and each answer is a fresh copy converted into a [`Found`].
//!
//! [`resource_tasks`] builds the same workload from the model's own task type,
//! `ResourceTask`, against a [`Listing`] answered from the index the AWS backend and the
//! GCE list cache keep: the path `kops update cluster` runs.
//!
//! Run: `cargo bench -p kops-benches` (add `-- --warm-up-time 1 --measurement-time 3` for
//! a quick pass). Stability: internal, not published.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

mod resource;

pub use resource::{BenchType, Listing, boxed_resources, resource_tasks};

use kops_tasks::terraform::{Body, Expr, TerraformWriter};
use kops_tasks::{
    Change, Context, Executor, ExecutorOptions, Fields, Found, Outputs, Plan, Result, Task,
    TaskGraph, TaskKey, TaskRef, Value, async_trait,
};

/// The kinds of the workload.
const KINDS: [&str; 3] = ["VPC", "Subnet", "SecurityGroup"];

/// One object as the cloud's API describes it.
#[derive(Debug, Clone)]
struct CloudObject {
    id: String,
    name: String,
    size: i64,
    enabled: bool,
    tags: Vec<(String, String)>,
    parent_id: Option<String>,
}

/// A cloud holding the workload's objects, listed once per kind.
///
/// [`Cloud::fresh`] gives a copy with nothing listed yet (the state at the start of a
/// run); a run's first lookup of a kind copies every object of the kind into that kind's
/// listing, indexed by name (as a backend decodes one paginated list call), and every
/// lookup copies its object out of the listing.
#[derive(Debug, Default)]
pub struct Cloud {
    stored: Arc<HashMap<&'static str, Vec<CloudObject>>>,
    listings: [OnceLock<HashMap<String, CloudObject>>; 3],
    lists: AtomicUsize,
}

impl Cloud {
    /// The same objects, none listed yet.
    pub fn fresh(&self) -> Cloud {
        Cloud {
            stored: self.stored.clone(),
            listings: Default::default(),
            lists: AtomicUsize::new(0),
        }
    }

    /// How many list calls this copy made (one per kind looked up).
    pub fn list_calls(&self) -> usize {
        self.lists.load(Ordering::Relaxed)
    }

    /// Lists every kind now, as the first lookup of each would.
    pub fn list_all(&self) {
        for kind in KINDS {
            self.lookup(kind, "");
        }
    }

    /// The object named `name` of `kind`, listing the kind on first use.
    fn lookup(&self, kind: &str, name: &str) -> Option<&CloudObject> {
        let slot = KINDS.iter().position(|k| *k == kind)?;
        let listing = self.listings.get(slot)?.get_or_init(|| {
            self.lists.fetch_add(1, Ordering::Relaxed);
            self.stored
                .get(kind)
                .into_iter()
                .flatten()
                .map(|o| (o.name.clone(), o.clone()))
                .collect()
        });
        listing.get(name)
    }
}

/// A task with pre-built fields that finds its object in the [`Cloud`] and renders one
/// Terraform resource.
#[derive(Debug, Clone)]
pub struct SyntheticTask {
    key: TaskKey,
    fields: Fields,
    parent: Option<TaskKey>,
    size: i64,
}

#[async_trait]
impl Task<Cloud> for SyntheticTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        self.fields.clone()
    }

    fn fields_ref(&self) -> Option<&Fields> {
        Some(&self.fields)
    }

    async fn find(&self, cx: &Context<'_, Cloud>) -> Result<Option<Found>> {
        let Some(o) = cx.cloud().lookup(self.key.kind(), self.key.name()) else {
            return Ok(None);
        };
        let mut fields = Fields::with_capacity(5)
            .with("Name", o.name.as_str())
            .with("Size", o.size)
            .with("Enabled", o.enabled)
            .with(
                "Tags",
                Value::string_map(o.tags.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            );
        if let Some(p) = &o.parent_id {
            fields.insert("Parent", p.as_str());
        }
        Ok(Some(Found::new(fields, Outputs::id(o.id.as_str()))))
    }

    async fn apply(&self, _cx: &Context<'_, Cloud>, _change: &Change<'_>) -> Result<Outputs> {
        Ok(Outputs::id(self.key.name()))
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> Result<()> {
        let ty = match self.key.kind() {
            "VPC" => "aws_vpc",
            "Subnet" => "aws_subnet",
            _ => "aws_security_group",
        };
        let name = self.key.name();
        let body = Body::new()
            .attr("name", name)
            .attr("size", self.size)
            .attr("enabled", self.size % 2 == 0)
            .attr_opt(
                "vpc_id",
                self.parent.as_ref().map(|p| Expr::Ref(p.to_ref())),
            )
            .attr(
                "tags",
                Expr::string_map([
                    ("KubernetesCluster", "bench.example.com"),
                    ("Name", name),
                    ("kubernetes.io/cluster/bench.example.com", "owned"),
                ]),
            )
            .block("lifecycle", Body::new().attr("create_before_destroy", true));
        w.resource(ty, name, body)
    }
}

/// A deterministic pseudo-random sequence (no dependency on `rand` for reproducible shapes).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// `n` tasks: one VPC per 100 tasks, the rest subnets / security groups that reference an
/// earlier task, each with five fields (string, int, bool, three-entry tag map,
/// reference). The returned cloud holds every object, references given as the parent's
/// ID; `changed_per_mille` of them (e.g. 100 = 10 %) differ in one field.
pub fn synthetic(n: usize, changed_per_mille: u64) -> (Vec<SyntheticTask>, Cloud) {
    let mut rng = Lcg(0x5eed);
    let mut tasks: Vec<SyntheticTask> = Vec::with_capacity(n);
    let mut stored: HashMap<&'static str, Vec<CloudObject>> = HashMap::new();
    for i in 0..n {
        let kind = if i % 100 == 0 {
            KINDS[0]
        } else if i % 2 == 0 {
            KINDS[1]
        } else {
            KINDS[2]
        };
        let name = format!("{}-{i}.bench.example.com", kind.to_lowercase());
        let key = TaskKey::new(kind, &name);
        let parent = (i > 0).then(|| tasks[(rng.next() as usize) % i].key.clone());
        let size = (rng.next() % 1000) as i64;
        let tags = [
            ("KubernetesCluster", "bench.example.com"),
            ("Name", name.as_str()),
            ("kubernetes.io/cluster/bench.example.com", "owned"),
        ];
        let mut fields = Fields::with_capacity(5)
            .with("Name", name.as_str())
            .with("Size", size)
            .with("Enabled", size % 2 == 0)
            .with("Tags", Value::string_map(tags));
        if let Some(p) = &parent {
            fields.insert("Parent", Value::reference(TaskRef::new(p.clone())));
        }
        let changed = rng.next() % 1000 < changed_per_mille;
        stored.entry(kind).or_default().push(CloudObject {
            id: format!("id-{name}"),
            name: name.clone(),
            size: size + i64::from(changed),
            enabled: size % 2 == 0,
            tags: tags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            parent_id: parent.as_ref().map(|p| format!("id-{}", p.name())),
        });
        tasks.push(SyntheticTask {
            key,
            fields,
            parent,
            size,
        });
    }
    let cloud = Cloud {
        stored: Arc::new(stored),
        ..Cloud::default()
    };
    (tasks, cloud)
}

/// Boxes tasks for [`kops_tasks::TaskGraph::build`].
pub fn boxed(tasks: &[SyntheticTask]) -> Vec<Box<dyn Task<Cloud>>> {
    tasks
        .iter()
        .cloned()
        .map(|t| Box::new(t) as Box<dyn Task<Cloud>>)
        .collect()
}

/// The runtime `kops update cluster` plans on: tokio's current-thread runtime with timers.
pub fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("starting the tokio runtime: {e}"),
    }
}

/// The production planning path, as `kops update cluster` runs it (without `--yes`): build
/// the graph from the model's tasks, then plan it through the executor with its default
/// options (the real clock, 16 tasks at a time), each task finding its object in `cloud`.
/// The graph is returned too, so that callers choose when to pay for dropping it.
pub async fn plan<C: Sync>(
    tasks: Vec<Box<dyn Task<C>>>,
    cloud: &C,
) -> Result<(TaskGraph<C>, Plan)> {
    let graph = TaskGraph::build(tasks)?;
    let plan = Executor::new(ExecutorOptions::default())
        .plan(&graph, cloud)
        .await?;
    Ok((graph, plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_workload_has_the_requested_change_ratio() {
        let (tasks, cloud) = synthetic(2000, 100);
        let cloud = cloud.fresh();
        let (_, plan) = runtime().block_on(plan(boxed(&tasks), &cloud)).unwrap();
        let s = plan.summary();
        assert_eq!(s.create, 0);
        assert!((150..=250).contains(&s.update), "{s:?}");
        assert_eq!(s.update + s.unchanged, 2000);
        assert_eq!(cloud.list_calls(), 3, "one listing per kind");
        // Every change is the one changed field: references matched the parents' IDs.
        assert!(
            plan.changes()
                .all(|i| i.changes.len() == 1 && i.changes.iter().all(|c| c.field == "Size"))
        );
    }

    #[test]
    fn an_empty_cloud_plans_every_task_as_a_create() {
        let (tasks, _) = synthetic(500, 100);
        let (_, plan) = runtime()
            .block_on(plan(boxed(&tasks), &Cloud::default()))
            .unwrap();
        assert_eq!(plan.summary().create, 500);
    }

    #[test]
    fn synthetic_workload_renders_terraform() {
        let (tasks, _) = synthetic(300, 0);
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        let mut w = TerraformWriter::new();
        kops_tasks::terraform::render_graph(&graph, &mut w).unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out.main_tf().matches("\nresource ").count() + 1, 300);
    }
}
