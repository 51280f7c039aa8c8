//! [`ListCache`]: batched discovery as a decorator over any [`GceCloud`]. The first
//! `list` of a resource type fetches the whole collection once (one paginated list per
//! collection and run, as the backend should), later queries of that type are answered
//! from memory with [`ListQuery::matches`], and every write drops the cached collections
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

use crate::cloud::{
    CloudResult, CreateRequest, GceCloud, GceResourceType, ListQuery, ProjectInfo, Resource,
    ResourceCloud, UpdateRequest,
};

type R = GceResourceType;

/// A [`GceCloud`] whose lists are fetched once per collection (module docs).
pub struct ListCache<C: ?Sized> {
    inner: Arc<C>,
    lists: Mutex<BTreeMap<GceResourceType, Vec<Resource>>>,
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
            lists: Mutex::new(BTreeMap::new()),
            project: Mutex::new(None),
            zones: Mutex::new(None),
        }
    }

    /// Forgets every cached list.
    pub fn clear(&self) {
        self.guard().clear();
    }
}

impl<C: ?Sized> ListCache<C> {
    fn guard(&self) -> MutexGuard<'_, BTreeMap<GceResourceType, Vec<Resource>>> {
        self.lists.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops the collections a write of `rt` can change: its own, and those the cloud
    /// changes along with it (an instance-template replacement re-points groups).
    fn invalidate(&self, rt: GceResourceType) {
        let mut g = self.guard();
        g.remove(&rt);
        match rt {
            R::InstanceTemplate => {
                g.remove(&R::InstanceGroupManager);
            }
            R::Router => {
                g.remove(&R::RouterNat);
            }
            R::RouterNat => {
                g.remove(&R::Router);
            }
            _ => {}
        }
    }
}

#[async_trait]
impl<C: GceCloud + ?Sized> ResourceCloud<GceResourceType> for ListCache<C> {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = query.resource_type;
        let cached = self.guard().get(&rt).cloned();
        let all = match cached {
            Some(all) => all,
            None => {
                let all = self.inner.list(&ListQuery::new(rt)).await?;
                self.guard().insert(rt, all.clone());
                all
            }
        };
        Ok(all.into_iter().filter(|r| query.matches(r)).collect())
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
}
