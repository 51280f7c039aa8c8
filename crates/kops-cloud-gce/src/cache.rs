//! [`ListCache`]: batched discovery as a decorator over any [`GceCloud`]. The first
//! `list` of a resource type fetches the whole collection once (one paginated list per
//! collection and run, as the backend should), later queries of that type are answered
//! from an index of it in memory ([`ResourceIndex`]: each reads only its candidates, and
//! [`ResourceCloud::list_shared`] lends the cached objects instead of copying them), and
//! every write drops the cached collections
//! it can affect. A no-op plan therefore costs one list per collection whatever the
//! number of instance groups (kOps does one GET per task and lists every template once
//! per template task).
//!
//! ```
//! # async fn demo(cloud: std::sync::Arc<dyn kops_cloud_gce::GceCloud>)
//! #     -> Result<(), kops_cloud_gce::cloud::CloudError> {
//! use kops_cloud_gce::GceResourceType;
//! use kops_cloud_gce::cache::ListCache;
//! use kops_cloud_gce::cloud::{ListQuery, ResourceCloud};
//!
//! let cached = ListCache::new(cloud);
//! let a = cached.list(&ListQuery::new(GceResourceType::Firewall).with_names(["a"])).await?;
//! let b = cached.list(&ListQuery::new(GceResourceType::Firewall).with_names(["b"])).await?;
//! // One firewall list answered both.
//! # let _ = (a, b);
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use kops_tasks::resource::ResourceIndex;

use crate::cloud::{
    CLUSTER_LABEL, CloudResult, CreateRequest, GceCloud, GceResourceType, ListQuery,
    ManagedInstance, ManagedZone, ProjectInfo, Resource, ResourceCloud, TagFilter, UpdateRequest,
    safe_cluster_name,
};

type R = GceResourceType;

/// One cached collection.
type Listing = Arc<ResourceIndex<GceResourceType>>;

/// A type's fetch lock and write generation.
type Fetch = (Arc<tokio::sync::Mutex<()>>, u64);

/// A [`GceCloud`] whose lists are fetched once per collection (module docs).
pub struct ListCache<C: ?Sized> {
    inner: Arc<C>,
    cluster: Option<TagFilter>,
    lists: Mutex<BTreeMap<GceResourceType, Listing>>,
    /// One fetch per type at a time (tasks run concurrently: the first fetches, the others
    /// wait for its answer), and a generation per type that writes bump, so a fetch that
    /// raced a write does not cache what it read.
    fetching: Mutex<BTreeMap<GceResourceType, Fetch>>,
    project: Mutex<Option<ProjectInfo>>,
    zones: Mutex<Option<Vec<String>>>,
}

impl<C: ?Sized> fmt::Debug for ListCache<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListCache")
            .field("cached", &self.guard().keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<C: GceCloud + ?Sized> ListCache<C> {
    /// Caches `inner`'s lists.
    pub fn new(inner: Arc<C>) -> Self {
        ListCache {
            inner,
            cluster: None,
            lists: Mutex::new(BTreeMap::new()),
            fetching: Mutex::new(BTreeMap::new()),
            project: Mutex::new(None),
            zones: Mutex::new(None),
        }
    }

    /// Caches `inner`'s lists for one cluster: collections of labelled types (disks,
    /// forwarding rules, instance templates, instances) are fetched with the cluster's
    /// [`CLUSTER_LABEL`] as a filter the backend sends to the API, so a run reads only the
    /// cluster's labelled objects. An object of a labelled type without the cluster's
    /// label is then invisible through the cache (kOps labels every one it creates).
    pub fn for_cluster(inner: Arc<C>, cluster: &str) -> Self {
        let mut c = Self::new(inner);
        c.cluster = Some(TagFilter::equals(CLUSTER_LABEL, safe_cluster_name(cluster)));
        c
    }

    /// Forgets every cached list.
    pub fn clear(&self) {
        self.guard().clear();
    }
}

impl<C: ?Sized> ListCache<C> {
    fn guard(&self) -> MutexGuard<'_, BTreeMap<GceResourceType, Listing>> {
        self.lists.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn generation(&self, rt: GceResourceType) -> u64 {
        self.fetching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&rt)
            .map_or(0, |e| e.1)
    }

    /// Drops the collections a write of `rt` can change: its own, and those the cloud
    /// changes along with it (an instance-template replacement re-points groups).
    fn invalidate(&self, rt: GceResourceType) {
        let also = match rt {
            R::InstanceTemplate => Some(R::InstanceGroupManager),
            R::Router => Some(R::RouterNat),
            R::RouterNat => Some(R::Router),
            _ => None,
        };
        let types: Vec<GceResourceType> = std::iter::once(rt).chain(also).collect();
        {
            let mut f = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
            for t in &types {
                f.entry(*t).or_default().1 += 1;
            }
        }
        let mut g = self.guard();
        for t in &types {
            g.remove(t);
        }
    }
}

/// Types read per bucket, not cached.
fn per_bucket(rt: GceResourceType) -> bool {
    matches!(rt, R::StorageBucketIam | R::StorageBucketAcl)
}

impl<C: GceCloud + ?Sized> ListCache<C> {
    /// The cached collection of `rt`, fetched first when it is not cached.
    async fn listing(&self, rt: GceResourceType) -> CloudResult<Listing> {
        if let Some(all) = self.guard().get(&rt).cloned() {
            return Ok(all);
        }
        let lock = self
            .fetching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(rt)
            .or_default()
            .0
            .clone();
        let _one = lock.lock().await;
        if let Some(all) = self.guard().get(&rt).cloned() {
            return Ok(all);
        }
        let generation = self.generation(rt);
        let mut q = ListQuery::new(rt);
        if let Some(f) = &self.cluster
            && rt.facts().labelled
        {
            q = q.with_tag(f.clone());
        }
        let all = Arc::new(ResourceIndex::new(self.inner.list(&q).await?));
        if self.generation(rt) == generation {
            self.guard().insert(rt, all.clone());
        }
        Ok(all)
    }
}

#[async_trait]
impl<C: GceCloud + ?Sized> ResourceCloud<GceResourceType> for ListCache<C> {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        // Bucket IAM and ACLs are read per bucket: the query goes through as it is.
        if per_bucket(query.resource_type) {
            return self.inner.list(query).await;
        }
        Ok(self.listing(query.resource_type).await?.answer(query))
    }

    async fn list_shared(&self, query: &ListQuery) -> CloudResult<Vec<Arc<Resource>>> {
        if per_bucket(query.resource_type) {
            return self.inner.list_shared(query).await;
        }
        Ok(self.listing(query.resource_type).await?.shared(query))
    }

    async fn list_tagged(
        &self,
        resource_type: GceResourceType,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<Arc<Resource>>> {
        if per_bucket(resource_type) {
            return self.inner.list_tagged(resource_type, tags).await;
        }
        Ok(self
            .listing(resource_type)
            .await?
            .tagged(resource_type, tags))
    }

    fn first_tagged_now(
        &self,
        resource_type: GceResourceType,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<Arc<Resource>>>> {
        if per_bucket(resource_type) {
            return self.inner.first_tagged_now(resource_type, tags);
        }
        let listing = self.guard().get(&resource_type).cloned()?;
        Some(Ok(listing.first_tagged(resource_type, tags).cloned()))
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        self.invalidate(request.resource_type);
        let r = self.inner.create(request).await;
        self.invalidate(request.resource_type);
        r
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        self.invalidate(request.resource_type);
        let r = self.inner.update(request).await;
        self.invalidate(request.resource_type);
        r
    }

    async fn delete(&self, resource_type: GceResourceType, id: &str) -> CloudResult<()> {
        let r = self.inner.delete(resource_type, id).await;
        self.invalidate(resource_type);
        r
    }
}

#[async_trait]
impl<C: GceCloud + ?Sized> GceCloud for ListCache<C> {
    async fn project(&self) -> CloudResult<ProjectInfo> {
        let cached = self
            .project
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(p) = cached {
            return Ok(p);
        }
        let p = self.inner.project().await?;
        *self.project.lock().unwrap_or_else(|e| e.into_inner()) = Some(p.clone());
        Ok(p)
    }

    async fn zones(&self) -> CloudResult<Vec<String>> {
        let cached = self.zones.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(z) = cached {
            return Ok(z);
        }
        let z = self.inner.zones().await?;
        *self.zones.lock().unwrap_or_else(|e| e.into_inner()) = Some(z.clone());
        Ok(z)
    }

    async fn managed_zones(&self) -> CloudResult<Vec<ManagedZone>> {
        self.inner.managed_zones().await
    }

    // A group's instances are not a cached collection: always asked, never stale.
    async fn managed_instances(&self, group: &str) -> CloudResult<Vec<ManagedInstance>> {
        self.inner.managed_instances(group).await
    }

    async fn recreate_instances(&self, group: &str, instances: &[String]) -> CloudResult<()> {
        self.inner.recreate_instances(group, instances).await
    }
}
