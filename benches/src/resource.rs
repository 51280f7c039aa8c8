//! The same workload as [`crate::synthetic`], made of the model's own task type: every
//! task is a [`ResourceTask`] (the one task type of the AWS and GCE models), and the cloud
//! answers its queries as the AWS backend answers them once a kind is listed: from an
//! index of the listing by tag, each answer a copy of the matching objects.
//!
//! This is what `kops update cluster` runs for its cloud objects, so its figures are the
//! ones issue 12's goal is about; [`crate::synthetic`]'s hand-written task shows what the
//! engine alone costs.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kops_tasks::resource::{
    Attr, CloudError, CloudResult, CreateRequest, ListQuery, NameTags, Resource, ResourceCloud,
    ResourceIndex, ResourceKind, ResourceTask, Tags, UpdateRequest,
};
use kops_tasks::{Task, async_trait};

use crate::Lcg;

/// The cluster every object belongs to.
const CLUSTER: &str = "bench.example.com";

/// The workload's resource types, with AWS' facts about them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BenchType {
    /// `aws_vpc`.
    Vpc,
    /// `aws_subnet`.
    Subnet,
    /// `aws_security_group`.
    SecurityGroup,
}

impl fmt::Display for BenchType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.terraform_type())
    }
}

impl ResourceKind for BenchType {
    fn terraform_type(self) -> &'static str {
        match self {
            BenchType::Vpc => "aws_vpc",
            BenchType::Subnet => "aws_subnet",
            BenchType::SecurityGroup => "aws_security_group",
        }
    }

    fn is_taggable(self) -> bool {
        true
    }

    fn immutable_attrs(self) -> &'static [&'static str] {
        &["vpc_id"]
    }

    // As AWS' VPC networking objects: the cluster tag and the `Name` tag.
    fn name_tags<'a>(cluster: &'a str, name: &'a str) -> NameTags<'a> {
        NameTags::new(("KubernetesCluster", cluster.into()), ("Name", name.into()))
    }
}

/// A cloud that has listed every object of the workload, one listing per type held in
/// the index the AWS backend keeps ([`ResourceIndex`]): each query is answered from the
/// index and is a copy of the matching objects, as the backend's answers are.
#[derive(Debug, Default)]
pub struct Listing {
    by_type: Arc<[ResourceIndex<BenchType>; 3]>,
    queries: AtomicUsize,
}

impl Listing {
    fn new(items: Vec<Resource<BenchType>>) -> Self {
        let mut split: [Vec<Resource<BenchType>>; 3] = Default::default();
        for r in items {
            split[r.resource_type as usize].push(r);
        }
        Listing {
            by_type: Arc::new(split.map(ResourceIndex::new)),
            queries: AtomicUsize::new(0),
        }
    }

    /// The same listing, with no query counted yet.
    pub fn fresh(&self) -> Listing {
        Listing {
            by_type: self.by_type.clone(),
            queries: AtomicUsize::new(0),
        }
    }

    /// How many queries this copy answered.
    pub fn queries(&self) -> usize {
        self.queries.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl ResourceCloud<BenchType> for Listing {
    async fn list(&self, query: &ListQuery<BenchType>) -> CloudResult<Vec<Resource<BenchType>>> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        Ok(self.by_type[query.resource_type as usize].answer(query))
    }

    async fn list_shared(
        &self,
        query: &ListQuery<BenchType>,
    ) -> CloudResult<Vec<Arc<Resource<BenchType>>>> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        Ok(self.by_type[query.resource_type as usize].shared(query))
    }

    async fn list_tagged(
        &self,
        resource_type: BenchType,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<Arc<Resource<BenchType>>>> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        Ok(self.by_type[resource_type as usize].tagged(resource_type, tags))
    }

    fn first_tagged_now(
        &self,
        resource_type: BenchType,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<Arc<Resource<BenchType>>>>> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        let index = &self.by_type[resource_type as usize];
        Some(Ok(index.first_tagged(resource_type, tags).cloned()))
    }

    async fn create(
        &self,
        _request: &CreateRequest<BenchType>,
    ) -> CloudResult<Resource<BenchType>> {
        Err(CloudError::invalid("request", "the bench cloud only plans"))
    }

    async fn update(
        &self,
        _request: &UpdateRequest<BenchType>,
    ) -> CloudResult<Resource<BenchType>> {
        Err(CloudError::invalid("request", "the bench cloud only plans"))
    }

    async fn delete(&self, _resource_type: BenchType, _id: &str) -> CloudResult<()> {
        Err(CloudError::invalid("request", "the bench cloud only plans"))
    }
}

/// `n` resource tasks of the shape of [`crate::synthetic`]: one VPC per 100, the rest
/// subnets / security groups under a random earlier task (`vpc_id`), each with a size, a
/// flag and three tags; the listing holds every object, `changed_per_mille` of them with
/// a different size.
pub fn resource_tasks(n: usize, changed_per_mille: u64) -> (Vec<ResourceTask<BenchType>>, Listing) {
    let mut rng = Lcg(0x5eed);
    let mut tasks: Vec<ResourceTask<BenchType>> = Vec::with_capacity(n);
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let (kind, ty) = if i % 100 == 0 {
            ("VPC", BenchType::Vpc)
        } else if i % 2 == 0 {
            ("Subnet", BenchType::Subnet)
        } else {
            ("SecurityGroup", BenchType::SecurityGroup)
        };
        let name = format!("{}-{i}.bench.example.com", kind.to_lowercase());
        let parent = (i > 0).then(|| tasks[(rng.next() as usize) % i].task_key().clone());
        let size = (rng.next() % 1000) as i64;
        let tags: BTreeMap<String, String> = [
            ("KubernetesCluster", CLUSTER),
            ("Name", name.as_str()),
            ("kubernetes.io/cluster/bench.example.com", "owned"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let changed = rng.next() % 1000 < changed_per_mille;
        let mut object = Resource::new(ty, format!("id-{name}"))
            .with_attr("size", size + i64::from(changed))
            .with_attr("enabled", size % 2 == 0);
        object.tags = Tags::from(&tags);
        if let Some(p) = &parent {
            object = object.with_attr("vpc_id", format!("id-{}", p.name()));
        }
        items.push(object);
        let task = ResourceTask::new(kind, name.as_str(), ty, CLUSTER)
            .attr("size", Attr::Int(size))
            .attr("enabled", Attr::Bool(size % 2 == 0))
            .attr_opt("vpc_id", parent.as_ref().map(Attr::id))
            .tags(tags);
        tasks.push(task);
    }
    (tasks, Listing::new(items))
}

/// Boxes resource tasks for [`kops_tasks::TaskGraph::build`].
pub fn boxed_resources(tasks: &[ResourceTask<BenchType>]) -> Vec<Box<dyn Task<Listing>>> {
    tasks
        .iter()
        .cloned()
        .map(|t| Box::new(t) as Box<dyn Task<Listing>>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{plan, runtime};

    #[test]
    fn resource_workload_has_the_requested_change_ratio() {
        let (tasks, listing) = resource_tasks(2000, 100);
        let listing = listing.fresh();
        let (_, plan) = runtime()
            .block_on(plan(boxed_resources(&tasks), &listing))
            .unwrap();
        let s = plan.summary();
        assert_eq!(s.create, 0);
        assert!((150..=250).contains(&s.update), "{s:?}");
        assert_eq!(s.update + s.unchanged, 2000);
        assert_eq!(listing.queries(), 2000, "one query per task");
        // Every change is the size: references matched the parents' IDs, tags matched.
        assert!(
            plan.changes()
                .all(|i| i.changes.len() == 1 && i.changes.iter().all(|c| c.field == "size"))
        );
    }

    #[test]
    fn an_empty_listing_plans_every_resource_as_a_create() {
        let (tasks, _) = resource_tasks(300, 100);
        let (_, plan) = runtime()
            .block_on(plan(boxed_resources(&tasks), &Listing::default()))
            .unwrap();
        assert_eq!(plan.summary().create, 300);
    }
}
