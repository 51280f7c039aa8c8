//! Criterion benchmarks for kops-rs; see `benches/` beside this file.
//!
//! This library holds the synthetic workloads the benchmarks share, so they can be unit
//! tested: [`synthetic`] builds a graph-shaped set of tasks with a matching actual state in
//! which a chosen fraction of tasks differ from the cloud.
//!
//! Run: `cargo bench -p kops-benches` (add `-- --warm-up-time 1 --measurement-time 3` for
//! a quick pass). Stability: internal, not published.

use std::collections::HashMap;

use kops_tasks::terraform::{Body, Expr, TerraformWriter};
use kops_tasks::{
    Change, Context, Fields, Found, Outputs, Result, Task, TaskKey, TaskRef, Value, async_trait,
};

/// A task with pre-built fields that renders one Terraform resource.
#[derive(Debug, Clone)]
pub struct SyntheticTask {
    key: TaskKey,
    fields: Fields,
    parent: Option<TaskKey>,
    size: i64,
}

#[async_trait]
impl Task<()> for SyntheticTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        self.fields.clone()
    }

    async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
        Ok(None)
    }

    async fn apply(&self, _cx: &Context<'_, ()>, _change: &Change<'_>) -> Result<Outputs> {
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
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// `n` tasks: one VPC per 100 tasks, the rest subnets / security groups that reference an
/// earlier task, each with five fields (string, int, bool, three-entry tag map,
/// reference). The returned actual state holds every object; `changed_per_mille` of them
/// (e.g. 100 = 10 %) differ in one field.
pub fn synthetic(
    n: usize,
    changed_per_mille: u64,
) -> (Vec<SyntheticTask>, HashMap<TaskKey, Found>) {
    let mut rng = Lcg(0x5eed);
    let mut tasks: Vec<SyntheticTask> = Vec::with_capacity(n);
    let mut actual = HashMap::with_capacity(n);
    for i in 0..n {
        let kind = if i % 100 == 0 {
            "VPC"
        } else if i % 2 == 0 {
            "Subnet"
        } else {
            "SecurityGroup"
        };
        let name = format!("{}-{i}.bench.example.com", kind.to_lowercase());
        let key = TaskKey::new(kind, &name);
        let parent = (i > 0).then(|| tasks[(rng.next() as usize) % i].key.clone());
        let size = (rng.next() % 1000) as i64;
        let tags = Value::string_map([
            ("KubernetesCluster", "bench.example.com"),
            ("Name", name.as_str()),
            ("kubernetes.io/cluster/bench.example.com", "owned"),
        ]);
        let mut fields = Fields::with_capacity(5)
            .with("Name", name.as_str())
            .with("Size", size)
            .with("Enabled", size % 2 == 0)
            .with("Tags", tags.clone());
        if let Some(p) = &parent {
            fields.insert("Parent", Value::Ref(TaskRef::new(p.clone())));
        }
        let mut a = Fields::with_capacity(5)
            .with("Name", name.as_str())
            .with("Size", size)
            .with("Enabled", size % 2 == 0)
            .with("Tags", tags);
        if let Some(p) = &parent {
            a.insert("Parent", format!("id-{}", p.name()));
        }
        if rng.next() % 1000 < changed_per_mille {
            a.insert("Size", size + 1);
        }
        actual.insert(
            key.clone(),
            Found::new(a, Outputs::id(format!("id-{name}"))),
        );
        tasks.push(SyntheticTask {
            key,
            fields,
            parent,
            size,
        });
    }
    (tasks, actual)
}

/// Boxes tasks for [`kops_tasks::TaskGraph::build`].
pub fn boxed(tasks: &[SyntheticTask]) -> Vec<Box<dyn Task<()>>> {
    tasks
        .iter()
        .cloned()
        .map(|t| Box::new(t) as Box<dyn Task<()>>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kops_tasks::{Plan, TaskGraph};

    #[test]
    fn synthetic_workload_has_the_requested_change_ratio() {
        let (tasks, actual) = synthetic(2000, 100);
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        let plan = Plan::from_state(&graph, &actual).unwrap();
        let s = plan.summary();
        assert_eq!(s.create, 0);
        assert!((150..=250).contains(&s.update), "{s:?}");
        assert_eq!(s.update + s.unchanged, 2000);
    }

    #[test]
    fn synthetic_workload_plans_the_same_from_a_found_set() {
        let (tasks, actual) = synthetic(2000, 100);
        let graph = TaskGraph::build(boxed(&tasks)).unwrap();
        let found = kops_tasks::FoundSet::from_map(&graph, &actual).unwrap();
        assert_eq!(found.len(), 2000);
        let plan = Plan::from_found(&found).unwrap();
        assert_eq!(plan, Plan::from_state(&graph, &actual).unwrap());
        assert!(plan.summary().update > 0);
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
