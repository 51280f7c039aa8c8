//! kops-rs' record of the lifecycle hooks the last apply left on a cluster's autoscaling
//! groups, which a dry run trusts instead of reading them again.
//!
//! AWS' `DescribeLifecycleHooks` takes one group name per call, so reading the hooks is
//! the one part of a plan that grows with the instance groups (every group carries kOps'
//! hooks). After a successful apply the hooks of every group of the cluster are read
//! (from the backend's cache where the apply left it valid) and written beside the
//! cluster's other files, `<cluster>/lifecycle-hooks.kops-rs.json`, with the time and
//! each group's ARN (which a recreated group changes). A dry run whose record is younger
//! than [`UpdateOptions::hooks_record_max_age`](crate::update::UpdateOptions::hooks_record_max_age)
//! answers the hooks of the groups whose ARN is still the recorded one from the record
//! ([`TrustingCloud`]); other groups are read. An apply never trusts it: it forgets the
//! record before changing anything and rewrites it once done. kOps ignores the file;
//! `Registry::delete_cluster` deletes it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use bytes::Bytes;
use kops_statestore::{PutOptions, Registry, StoreExt as _};
use kops_tasks::retry::RetryPolicy;

use super::cloud::{
    AwsCloud, CloudError, CloudResult, CreateRequest, ListQuery, Resource, ResourceCloud,
    ResourceType, UpdateRequest,
};
use super::reads::Reads;
use crate::error::{Result, cloud, store};

/// The record's file name under `<cluster>/` (kops-statestore's `delete_cluster` knows it).
pub(crate) const RECORD_FILE: &str = "lifecycle-hooks.kops-rs.json";

/// The record's format; a record of another version is ignored.
const RECORD_VERSION: u32 = 1;

/// How old a record a dry run trusts by default: one hour.
pub const DEFAULT_HOOKS_RECORD_MAX_AGE: Duration = Duration::from_secs(3600);

/// The tag every autoscaling group of a cluster carries, naming it.
const CLUSTER_TAG: &str = "KubernetesCluster";

/// What a dry run took from the record of the last apply instead of reading the cloud
/// ([`UpdatePlan::recorded_hooks`](crate::update::UpdatePlan::recorded_hooks)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedHooks {
    /// How many autoscaling groups' lifecycle hooks came from the record.
    pub groups: usize,
    /// When the apply that wrote the record finished.
    pub recorded_at: SystemTime,
}

impl RecordedHooks {
    /// One line saying what came from the record and how to read it instead, as the CLI
    /// prints it after a dry run.
    pub fn note(&self) -> String {
        format!(
            "lifecycle hooks of {} autoscaling group(s) taken from the record of the last apply ({}); --refresh reads them from the cloud",
            self.groups,
            kops_statestore::lock::rfc3339(self.recorded_at)
        )
    }
}

/// The file's content.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    version: u32,
    cluster: String,
    /// RFC 3339.
    recorded_at: String,
    /// By autoscaling group name.
    groups: BTreeMap<String, RecordedGroup>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordedGroup {
    arn: String,
    /// The group's hooks as discovery reads them.
    hooks: Vec<Resource>,
}

fn path(cluster: &str) -> String {
    format!("{cluster}/{RECORD_FILE}")
}

/// Removes the record of `cluster` before an apply changes anything, so an apply that
/// fails half-way leaves none to trust.
pub(crate) async fn forget(registry: &Registry, cluster: &str) -> Result<()> {
    registry
        .store()
        .delete(&path(cluster))
        .await
        .map_err(store(format!("removing {}", path(cluster))))
}

/// Reads the lifecycle hooks of every autoscaling group of `cluster` and records them
/// with the groups' ARNs and the registry clock's time. Returns how many groups.
pub(crate) async fn record(
    api: &dyn AwsCloud,
    registry: &Registry,
    cluster: &str,
    retry: &RetryPolicy,
) -> Result<usize> {
    let reads = Reads::new(api, retry);
    let groups = reads
        .list_tagged(ResourceType::AutoscalingGroup, &[(CLUSTER_TAG, cluster)])
        .await
        .map_err(cloud(format!(
            "listing the autoscaling groups of cluster {cluster}"
        )))?;
    let mut out = BTreeMap::new();
    for g in &groups {
        let Some(arn) = g.arn.clone() else { continue };
        // The query the hooks' tasks make, which the backend may answer from its cache.
        let hooks = reads
            .list_digests(&ListQuery::new(ResourceType::LifecycleHook).with_parent(g.id.clone()))
            .await
            .map_err(cloud(format!(
                "reading the lifecycle hooks of autoscaling group {}",
                g.id
            )))?;
        out.insert(g.id.clone(), RecordedGroup { arn, hooks });
    }
    let n = out.len();
    let rec = Record {
        version: RECORD_VERSION,
        cluster: cluster.to_owned(),
        recorded_at: kops_statestore::lock::rfc3339(registry.clock().now()),
        groups: out,
    };
    let data = serde_json::to_vec(&rec)
        .map_err(|e| crate::error::invalid(path(cluster), e.to_string()))?;
    registry
        .store()
        .put(&path(cluster), Bytes::from(data), PutOptions::overwrite())
        .await
        .map_err(store(format!("writing {}", path(cluster))))?;
    Ok(n)
}

/// The record of `cluster` when there is one a dry run may trust: readable, of this
/// format and cluster, and no older than `max_age` by the registry's clock. Anything
/// else is `None`, with a debug log saying why.
pub(crate) async fn load(
    registry: &Registry,
    cluster: &str,
    max_age: Duration,
) -> Option<(SystemTime, BTreeMap<String, (String, Vec<Resource>)>)> {
    let p = path(cluster);
    let got = match registry.store().get_opt(&p).await {
        Ok(Some(got)) => got,
        Ok(None) => {
            tracing::debug!(path = %p, "no record of the last apply's lifecycle hooks");
            return None;
        }
        Err(e) => {
            tracing::debug!(path = %p, error = %e, "could not read the record of the last apply's lifecycle hooks; reading them from the cloud");
            return None;
        }
    };
    let rec: Record = match serde_json::from_slice(&got.data) {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(path = %p, error = %e, "the record of the last apply's lifecycle hooks is unreadable; reading them from the cloud");
            return None;
        }
    };
    if rec.version != RECORD_VERSION || rec.cluster != cluster {
        tracing::debug!(path = %p, version = rec.version, cluster = %rec.cluster, "the record of the lifecycle hooks is of another format or cluster; reading them from the cloud");
        return None;
    }
    let Some(at) = kops_statestore::lock::parse_rfc3339(&rec.recorded_at) else {
        tracing::debug!(path = %p, recorded_at = %rec.recorded_at, "the record of the lifecycle hooks has no readable time; reading them from the cloud");
        return None;
    };
    let now = registry.clock().now();
    let age = now.duration_since(at).unwrap_or_else(|e| e.duration());
    if age > max_age {
        tracing::debug!(path = %p, recorded_at = %rec.recorded_at, age_secs = age.as_secs(), "the record of the lifecycle hooks is older than the limit; reading them from the cloud");
        return None;
    }
    let groups = rec
        .groups
        .into_iter()
        .map(|(name, g)| (name, (g.arn, g.hooks)))
        .collect();
    Some((at, groups))
}

/// A cloud in front of a dry run's cloud that answers the lifecycle hooks of an
/// autoscaling group from the record of the last apply when the group's ARN (from the
/// cluster's group listing the plan makes anyway) is the recorded one. Everything else,
/// and every write, goes to the cloud behind it; after a write of a group or hook the
/// record is no longer used.
#[derive(Debug)]
pub(crate) struct TrustingCloud {
    inner: Arc<dyn AwsCloud>,
    cluster: String,
    /// By group name: the recorded ARN and hooks.
    recorded: BTreeMap<String, (String, Vec<Resource>)>,
    /// The cluster's groups' current ARNs, by name, read on first use.
    arns: tokio::sync::OnceCell<HashMap<String, String>>,
    /// The groups whose hooks were answered from the record.
    used: Mutex<BTreeSet<String>>,
    /// Set by a write of a group or hook: read everything from then on.
    written: std::sync::atomic::AtomicBool,
}

impl TrustingCloud {
    pub(crate) fn new(
        inner: Arc<dyn AwsCloud>,
        cluster: &str,
        recorded: BTreeMap<String, (String, Vec<Resource>)>,
    ) -> Self {
        TrustingCloud {
            inner,
            cluster: cluster.to_owned(),
            recorded,
            arns: tokio::sync::OnceCell::new(),
            used: Mutex::new(BTreeSet::new()),
            written: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// How many groups' hooks came from the record.
    pub(crate) fn used(&self) -> usize {
        self.used
            .lock()
            .map_or_else(|p| p.into_inner().len(), |u| u.len())
    }

    /// The answer to `query` from the record, when it is a listing of one group's hooks
    /// and the group is the recorded one.
    async fn recorded_answer(&self, query: &ListQuery) -> CloudResult<Option<Vec<Resource>>> {
        if query.resource_type != ResourceType::LifecycleHook
            || !query.ids.is_empty()
            || self.written.load(std::sync::atomic::Ordering::SeqCst)
        {
            return Ok(None);
        }
        let Some(group) = &query.parent else {
            return Ok(None);
        };
        let Some((arn, hooks)) = self.recorded.get(group) else {
            return Ok(None);
        };
        let arns = self
            .arns
            .get_or_try_init(|| async {
                let groups = self
                    .inner
                    .list_tagged(
                        ResourceType::AutoscalingGroup,
                        &[(CLUSTER_TAG, self.cluster.as_str())],
                    )
                    .await?;
                Ok::<_, CloudError>(
                    groups
                        .iter()
                        .filter_map(|g| Some((g.id.clone(), g.arn.clone()?)))
                        .collect(),
                )
            })
            .await?;
        if arns.get(group) != Some(arn) {
            return Ok(None);
        }
        match self.used.lock() {
            Ok(mut u) => u.insert(group.clone()),
            Err(p) => p.into_inner().insert(group.clone()),
        };
        Ok(Some(
            hooks.iter().filter(|h| query.matches(h)).cloned().collect(),
        ))
    }

    fn wrote(&self, rt: ResourceType) {
        if matches!(
            rt,
            ResourceType::AutoscalingGroup | ResourceType::LifecycleHook
        ) {
            self.written
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl ResourceCloud<ResourceType> for TrustingCloud {
    async fn list(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        match self.recorded_answer(query).await? {
            Some(found) => Ok(found),
            None => self.inner.list(query).await,
        }
    }

    async fn list_digests(&self, query: &ListQuery) -> CloudResult<Vec<Resource>> {
        match self.recorded_answer(query).await? {
            Some(found) => Ok(found),
            None => self.inner.list_digests(query).await,
        }
    }

    async fn list_shared(&self, query: &ListQuery) -> CloudResult<Vec<Arc<Resource>>> {
        match self.recorded_answer(query).await? {
            Some(found) => Ok(found.into_iter().map(Arc::new).collect()),
            None => self.inner.list_shared(query).await,
        }
    }

    async fn list_tagged(
        &self,
        resource_type: ResourceType,
        tags: &[(&str, &str)],
    ) -> CloudResult<Vec<Arc<Resource>>> {
        self.inner.list_tagged(resource_type, tags).await
    }

    fn first_tagged_now(
        &self,
        resource_type: ResourceType,
        tags: &[(&str, &str)],
    ) -> Option<CloudResult<Option<Arc<Resource>>>> {
        self.inner.first_tagged_now(resource_type, tags)
    }

    async fn create(&self, request: &CreateRequest) -> CloudResult<Resource> {
        self.wrote(request.resource_type);
        self.inner.create(request).await
    }

    async fn update(&self, request: &UpdateRequest) -> CloudResult<Resource> {
        self.wrote(request.resource_type);
        self.inner.update(request).await
    }

    async fn delete(&self, resource_type: ResourceType, id: &str) -> CloudResult<()> {
        self.wrote(resource_type);
        self.inner.delete(resource_type, id).await
    }
}

impl kops_cloud_aws::decorator::Decorator for TrustingCloud {
    fn decorated(&self) -> &dyn AwsCloud {
        self.inner.as_ref()
    }
}
