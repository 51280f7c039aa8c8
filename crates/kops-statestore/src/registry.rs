//! The cluster registry: kOps' state-store layout on top of a [`Store`].
//!
//! Under the store root, each cluster `<name>` owns the tree `<name>/`:
//!
//! | path | content |
//! |---|---|
//! | `config` | the Cluster, `kops.k8s.io/v1alpha2` YAML |
//! | `instancegroup/<ig>` | an InstanceGroup, v1alpha2 YAML, labelled `kops.k8s.io/cluster=<name>` |
//! | `pki/private/<keyset>/keyset.yaml` | a [`Keyset`], v1alpha2 YAML |
//! | `pki/ssh/public/admin/<fingerprint>` | an SSH public key line; the id is the MD5 fingerprint without colons |
//! | `secrets/<name>` | a [`Secret`], JSON `{"Data":"<base64>"}` |
//! | `cluster-completed.spec` | the fully populated Cluster, v1alpha2 YAML |
//! | `kops-version.txt` | the version of the tool that last updated the cluster |
//!
//! These are kOps' own paths and formats, so a store written by kOps reads
//! here and the other way round. Four additions of kops-rs live in the same tree:
//! `history/<id>/config`, the previous versions of `config` (kept on every
//! update; an empty `history/<sequence>` marker claims each number), `kops-rs.lock`, the lock object while a mutating operation
//! runs, and `instancegroups.kops-rs.json`, a copy of the instance groups that a listing
//! vouches for group by group (see [`Registry::refresh_instance_group_snapshot`]), and
//! `lifecycle-hooks.kops-rs.json`, kops-model's record of the lifecycle hooks the last
//! apply left on the cluster's autoscaling groups. kOps ignores them when reading; note
//! that kOps' own
//! `delete cluster` refuses to delete a tree holding files it does not
//! know, so delete a cluster with history through [`Registry::delete_cluster`].
//!
//! Every update is a compare-and-swap against the version the caller read,
//! so concurrent writers never silently overwrite each other.
//!
//! ```
//! use std::sync::Arc;
//! use kops_api::v1alpha2::Cluster;
//! use kops_statestore::{MemoryStore, Registry, SystemClock};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> kops_statestore::Result<()> {
//! let registry = Registry::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock));
//! let mut cluster = Cluster::new("demo.example.com");
//! cluster.spec.kubernetes_version = Some("v1.34.0".into());
//! let created = registry.create_cluster(&cluster).await?;
//!
//! cluster.spec.kubernetes_version = Some("v1.35.0".into());
//! registry.update_cluster(&cluster, &created.version).await?;
//! // A second update from the same (now stale) read loses.
//! assert!(registry.update_cluster(&cluster, &created.version).await.unwrap_err().is_conflict());
//! // The replaced version was kept.
//! assert_eq!(registry.list_history("demo.example.com").await?.len(), 1);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt as _;
use md5::{Digest, Md5};

use base64::Engine as _;
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2::{Cluster, InstanceGroup};

use crate::error::{Error, Result};
use crate::keyset::{Keyset, Secret};
use crate::lock::{self, Clock, Lock, LockInfo, LockRequest};
use crate::store::{GetResult, PutOptions, Store, StoreExt, Version, validate_path};

/// How many instance groups [`Registry::list_instance_groups`] reads at a time.
const IG_READS: usize = 16;

/// kops-rs' snapshot of a cluster's instance groups, beside them under `<cluster>/` (see
/// [`Registry::refresh_instance_group_snapshot`]).
const IG_SNAPSHOT: &str = "instancegroups.kops-rs.json";

/// The content of [`IG_SNAPSHOT`]: every group's stored text, by name.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct IgSnapshot {
    #[serde(rename = "instanceGroups", default)]
    groups: std::collections::BTreeMap<String, String>,
}

/// Files directly under `<cluster>/` that kOps or kops-rs write.
const KNOWN_FILES: &[&str] = &[
    "config",
    "cluster.spec",
    "cluster-completed.spec",
    "kops-version.txt",
    "kops-rs.lock",
    IG_SNAPSHOT,
    // kops-model's record of the lifecycle hooks the last apply left on the cluster's
    // autoscaling groups, which a dry run trusts for a while (AWS reads them one group
    // per call).
    "lifecycle-hooks.kops-rs.json",
];

/// Directories under `<cluster>/` that kOps or kops-rs write.
const KNOWN_DIRS: &[&str] = &[
    "addons",
    "backups",
    "clusteraddons",
    "history",
    "igconfig",
    "instancegroup",
    "manifests",
    "pki",
    // kops-model's rolling-update journal (`rolling-update/journal.json`), left by a
    // roll that failed or was stopped.
    "rolling-update",
    "secrets",
];

/// The label kOps puts on every instance group naming its cluster.
pub const CLUSTER_LABEL: &str = "kops.k8s.io/cluster";

/// A value read from the store with the version it was read at; pass the
/// version back to update it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Versioned<T> {
    /// The value.
    pub value: T,
    /// The version of the stored object it was decoded from.
    pub version: Version,
}

/// One saved previous version of a cluster's `config`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryEntry {
    /// Id, sortable: `<sequence>-<UTC timestamp>`.
    pub id: String,
    /// Sequence number (1 for the oldest).
    pub sequence: u64,
    /// Path of the saved `config`.
    pub path: String,
}

/// Clusters, instance groups, keys and secrets in kOps' layout.
#[derive(Debug, Clone)]
pub struct Registry {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    history_limit: Option<usize>,
}

/// How many saved versions of a cluster's `config` a [`Registry`] keeps unless told
/// otherwise ([`Registry::with_history_limit`]).
pub const DEFAULT_HISTORY_LIMIT: usize = 50;

fn check_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || validate_path(name).is_err() {
        return Err(Error::Invalid {
            what: what.to_string(),
            reason: format!("{name:?} is not a valid name (non-empty, no '/', not '.' or '..')"),
        });
    }
    Ok(())
}

fn parse_object(path: &str, data: &[u8], what: &'static str) -> Result<Object> {
    let mut objects = manifest::parse(data, path).map_err(|e| Error::Parse {
        path: path.to_string(),
        what,
        source: e.into(),
    })?;
    if objects.len() != 1 {
        return Err(Error::Parse {
            path: path.to_string(),
            what,
            source: format!("expected one object, found {}", objects.len()).into(),
        });
    }
    Ok(objects.remove(0))
}

fn wrong_kind(path: &str, what: &'static str, found: &Object) -> Error {
    Error::Parse {
        path: path.to_string(),
        what,
        source: format!("found kind {} instead", found.kind()).into(),
    }
}

fn to_yaml(path: &str, what: &'static str, object: Object) -> Result<Bytes> {
    manifest::to_yaml(&[object])
        .map(Bytes::from)
        .map_err(|e| Error::Serialize {
            path: path.to_string(),
            what,
            source: e.into(),
        })
}

fn encode_cluster(path: &str, cluster: &Cluster) -> Result<Bytes> {
    to_yaml(path, "Cluster", Object::Cluster(cluster.clone()))
}

/// The kOps id of an SSH public key: MD5 of the key blob, hex, no colons.
pub fn ssh_fingerprint(public_key: &str) -> Result<String> {
    let invalid = |reason: &str| Error::Invalid {
        what: "SSH public key".to_string(),
        reason: reason.to_string(),
    };
    let mut fields = public_key.split_whitespace();
    let _type = fields.next().ok_or_else(|| invalid("empty"))?;
    let blob = fields
        .next()
        .ok_or_else(|| invalid("expected '<type> <base64 key> [comment]'"))?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|_| invalid("key data is not base64"))?;
    let digest = Md5::digest(&raw);
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// A parse error for a document holding secret material (a keyset's private
/// keys, a secret). Parser messages quote the offending input ("invalid type:
/// string \"MIIE...\"", or a snippet of the line), so only the position is
/// kept.
fn secret_parse_error(path: &str, what: &'static str, at: Option<(u64, u64)>) -> Error {
    let message = match at {
        Some((line, column)) => format!(
            "malformed at line {line}, column {column} (details withheld: it holds secret material)"
        ),
        None => "malformed (details withheld: it holds secret material)".to_string(),
    };
    Error::Parse {
        path: path.to_string(),
        what,
        source: message.into(),
    }
}

fn compact_timestamp(t: std::time::SystemTime) -> String {
    // 2024-01-02T03:04:05Z -> 20240102T030405Z
    lock::rfc3339(t).replace(['-', ':'], "")
}

impl Registry {
    /// A registry over `store`, stamping times from `clock`.
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Self {
        Registry {
            store,
            clock,
            history_limit: Some(DEFAULT_HISTORY_LIMIT),
        }
    }

    /// Keeps at most `limit` saved versions of each cluster's `config` (`None`: all of
    /// them). After each update the oldest beyond the limit are deleted; a limit of 0
    /// keeps no history.
    pub fn with_history_limit(mut self, limit: Option<usize>) -> Self {
        self.history_limit = limit;
        self
    }

    /// The history retention (see [`Registry::with_history_limit`]).
    pub fn history_limit(&self) -> Option<usize> {
        self.history_limit
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    // ---- clusters ----------------------------------------------------------

    /// Names of all clusters: every `<name>/config` directly under the root.
    pub async fn list_clusters(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .store
            .list("")
            .await?
            .into_iter()
            .filter_map(|o| {
                o.path
                    .strip_suffix("/config")
                    .filter(|n| !n.contains('/'))
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    fn cluster_path(name: &str) -> String {
        format!("{name}/config")
    }

    /// Reads a cluster's `config`.
    pub async fn get_cluster(&self, name: &str) -> Result<Versioned<Cluster>> {
        check_name("cluster name", name)?;
        let path = Self::cluster_path(name);
        let got = self.store.get(&path).await?;
        let value = Self::decode_cluster(&path, &got.data)?;
        Ok(Versioned {
            value,
            version: got.version,
        })
    }

    fn decode_cluster(path: &str, data: &[u8]) -> Result<Cluster> {
        match parse_object(path, data, "Cluster")? {
            Object::Cluster(c) => Ok(c),
            other => Err(wrong_kind(path, "Cluster", &other)),
        }
    }

    fn cluster_name(cluster: &Cluster) -> Result<&str> {
        let name = cluster.name();
        check_name("metadata.name of Cluster", name)?;
        Ok(name)
    }

    /// Stores a new cluster; [`Error::AlreadyExists`] if one has that name.
    /// Sets `metadata.creationTimestamp` when absent, as kOps does.
    pub async fn create_cluster(&self, cluster: &Cluster) -> Result<Versioned<Cluster>> {
        let name = Self::cluster_name(cluster)?;
        let path = Self::cluster_path(name);
        let mut c = Box::new(cluster.clone());
        if c.metadata.creation_timestamp.is_none() {
            c.metadata.creation_timestamp = Some(lock::rfc3339(self.clock.now()));
        }
        let data = encode_cluster(&path, &c)?;
        let version = self.store.put(&path, data, PutOptions::create()).await?;
        Ok(Versioned { value: *c, version })
    }

    /// Replaces a cluster's `config` if it is still at `expected` (else
    /// [`Error::Precondition`]). Bumps `metadata.generation` when the spec
    /// changed, and saves the replaced version under `history/`.
    pub async fn update_cluster(
        &self,
        cluster: &Cluster,
        expected: &Version,
    ) -> Result<Versioned<Cluster>> {
        let name = Self::cluster_name(cluster)?.to_string();
        let path = Self::cluster_path(&name);
        let current = self.store.get(&path).await.map_err(|e| match e {
            Error::NotFound { path } => Error::Precondition {
                path,
                expected: expected.to_string(),
            },
            other => other,
        })?;
        if &current.version != expected {
            return Err(Error::Precondition {
                path,
                expected: expected.to_string(),
            });
        }
        // Clusters are large (kops-api's v1alpha2 types are ~18 KiB): keep
        // them boxed so this future stays small.
        let old = Box::new(Self::decode_cluster(&path, &current.data)?);
        let mut c = Box::new(cluster.clone());
        if c.metadata.creation_timestamp.is_none() {
            c.metadata.creation_timestamp = old.metadata.creation_timestamp.clone();
        }
        if c.spec != old.spec {
            c.metadata.generation = Some(old.metadata.generation.unwrap_or(0) + 1);
        } else if c.metadata.generation.is_none() {
            c.metadata.generation = old.metadata.generation;
        }
        drop(old);
        let data = encode_cluster(&path, &c)?;
        let version = self
            .store
            .put(&path, data, PutOptions::update(expected.clone()))
            .await?;
        // Only a write that won keeps history. The new config is stored at
        // this point, so failing to save the replaced one must not turn the
        // update into an error (a caller retrying with `expected` would then
        // get a precondition failure for a write that succeeded): it is a
        // warning, and at worst one history entry is missing.
        if self.history_limit != Some(0)
            && let Err(e) = self.save_history(&name, current.data).await
        {
            tracing::warn!(
                cluster = %name,
                error = %e,
                "cluster config updated, but its previous version could not be saved to history"
            );
        }
        if let Some(limit) = self.history_limit
            && let Err(e) = self.prune_history(&name, limit).await
        {
            tracing::warn!(
                cluster = %name,
                error = %e,
                "cluster config updated, but its history could not be pruned"
            );
        }
        Ok(Versioned { value: *c, version })
    }

    /// Reads the cluster, applies `f`, and writes it back with
    /// compare-and-swap, re-reading and re-applying up to `max_attempts`
    /// times when another writer got there first.
    pub async fn modify_cluster<F>(
        &self,
        name: &str,
        max_attempts: usize,
        mut f: F,
    ) -> Result<Versioned<Cluster>>
    where
        F: FnMut(&mut Cluster) -> Result<()> + Send,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut current = Box::new(self.get_cluster(name).await?);
            f(&mut current.value)?;
            if current.value.name() != name {
                return Err(Error::Invalid {
                    what: "metadata.name of Cluster".to_string(),
                    reason: format!("renaming cluster {name} is not supported"),
                });
            }
            match self.update_cluster(&current.value, &current.version).await {
                Err(e) if e.is_conflict() && attempt < max_attempts => continue,
                other => return other,
            }
        }
    }

    /// Deletes the cluster's whole tree and returns how many objects it held.
    ///
    /// Like kOps, it first checks that every object under `<name>/` is one
    /// the tools write (`config`, `instancegroup/`, `pki/`, `secrets/`,
    /// `addons/`, `manifests/`, ..., plus kops-rs' `history/` and lock), and
    /// refuses with [`Error::Invalid`] naming the first stranger, so a
    /// mistyped name or a shared prefix never wipes unrelated data.
    pub async fn delete_cluster(&self, name: &str) -> Result<usize> {
        check_name("cluster name", name)?;
        let prefix = format!("{name}/");
        let objects = self.store.list(&prefix).await?;
        for o in &objects {
            // Every listed path starts with the prefix; anything else is
            // not ours to judge, so it is refused like a stranger.
            let rel = o.path.strip_prefix(&prefix).unwrap_or(&o.path);
            let (first, nested) = match rel.split_once('/') {
                Some((dir, _)) => (dir, true),
                None => (rel, false),
            };
            let known = if nested {
                KNOWN_DIRS.contains(&first)
            } else {
                KNOWN_FILES.contains(&first)
            };
            if !known {
                return Err(Error::Invalid {
                    what: format!("cluster {name}"),
                    reason: format!(
                        "refusing to delete: {} is not a file kOps or kops-rs writes",
                        o.path
                    ),
                });
            }
        }
        for o in &objects {
            self.store.delete(&o.path).await?;
        }
        Ok(objects.len())
    }

    // ---- history -----------------------------------------------------------

    async fn save_history(&self, cluster: &str, data: Bytes) -> Result<()> {
        let mut next = self
            .list_history(cluster)
            .await?
            .last()
            .map_or(1, |h| h.sequence + 1);
        // Entry paths carry a timestamp, so two writers taking the same
        // number in different seconds would not collide on the entry itself:
        // each number is first claimed with a create-if-absent marker.
        loop {
            let claim = format!("{cluster}/history/{next:06}");
            match self
                .store
                .put(&claim, Bytes::new(), PutOptions::create())
                .await
            {
                Ok(_) => break,
                Err(Error::AlreadyExists { .. }) => next += 1,
                Err(e) => return Err(e),
            }
        }
        let id = format!("{next:06}-{}", compact_timestamp(self.clock.now()));
        let path = format!("{cluster}/history/{id}/config");
        self.store
            .put(&path, data, PutOptions::create())
            .await
            .map(|_| ())
    }

    /// The saved previous versions of a cluster's `config`, oldest first.
    pub async fn list_history(&self, cluster: &str) -> Result<Vec<HistoryEntry>> {
        check_name("cluster name", cluster)?;
        let prefix = format!("{cluster}/history/");
        let mut out: Vec<HistoryEntry> = self
            .store
            .list(&prefix)
            .await?
            .into_iter()
            .filter_map(|o| {
                let id = o.path.strip_prefix(&prefix)?.strip_suffix("/config")?;
                let sequence = id.split('-').next()?.parse().ok()?;
                Some(HistoryEntry {
                    id: id.to_string(),
                    sequence,
                    path: o.path.clone(),
                })
            })
            .collect();
        out.sort_by_key(|h| h.sequence);
        Ok(out)
    }

    /// Deletes all but the newest `keep` saved versions; returns how many
    /// were deleted.
    pub async fn prune_history(&self, cluster: &str, keep: usize) -> Result<usize> {
        let history = self.list_history(cluster).await?;
        let excess = history.len().saturating_sub(keep);
        for h in history.iter().take(excess) {
            self.store.delete(&h.path).await?;
            let claim = format!("{cluster}/history/{:06}", h.sequence);
            self.store.delete(&claim).await?;
        }
        Ok(excess)
    }

    /// A saved version of a cluster.
    pub async fn get_history(&self, cluster: &str, id: &str) -> Result<Cluster> {
        check_name("cluster name", cluster)?;
        check_name("history id", id)?;
        let path = format!("{cluster}/history/{id}/config");
        let got = self.store.get(&path).await?;
        Self::decode_cluster(&path, &got.data)
    }

    /// Makes the saved version `id` current again (itself an update, so the
    /// version it replaces is saved too). `expected` is the version of the
    /// current `config`, as for [`Registry::update_cluster`].
    pub async fn restore_history(
        &self,
        cluster: &str,
        id: &str,
        expected: &Version,
    ) -> Result<Versioned<Cluster>> {
        let mut old = Box::new(self.get_history(cluster, id).await?);
        if old.name() != cluster {
            return Err(Error::Invalid {
                what: format!("history {id} of cluster {cluster}"),
                reason: format!("holds cluster {:?}", old.name()),
            });
        }
        // The restored spec is a change like any other: let update number it.
        old.metadata.generation = None;
        self.update_cluster(&old, expected).await
    }

    // ---- instance groups -----------------------------------------------------

    fn ig_path(cluster: &str, ig: &str) -> String {
        format!("{cluster}/instancegroup/{ig}")
    }

    fn decode_ig(path: &str, data: &[u8]) -> Result<InstanceGroup> {
        match parse_object(path, data, "InstanceGroup")? {
            Object::InstanceGroup(g) => Ok(g),
            other => Err(wrong_kind(path, "InstanceGroup", &other)),
        }
    }

    /// All instance groups of a cluster, in the listing's order.
    ///
    /// A group the listing shows with the MD5 and version of its copy in the groups'
    /// snapshot (see [`refresh_instance_group_snapshot`](Self::refresh_instance_group_snapshot))
    /// is decoded from that copy; every other group is read, 16 at a time. A fleet of
    /// unchanged groups costs a listing and one read, not a read per group.
    pub async fn list_instance_groups(
        &self,
        cluster: &str,
    ) -> Result<Vec<Versioned<InstanceGroup>>> {
        let listed = self.ig_objects(cluster).await?;
        let snapshot = self.ig_snapshot(cluster, &listed).await;
        let mut out = Vec::new();
        for (meta, got) in self.ig_contents(&listed, &snapshot).await {
            match got {
                Ok(got) => out.push(Versioned {
                    value: Self::decode_ig(&meta.path, &got.data)?,
                    version: got.version,
                }),
                Err(Error::NotFound { .. }) => continue, // deleted meanwhile
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The listing of `cluster`'s instance-group objects.
    async fn ig_objects(&self, cluster: &str) -> Result<Vec<crate::store::ObjectMeta>> {
        check_name("cluster name", cluster)?;
        let prefix = format!("{cluster}/instancegroup/");
        Ok(self
            .store
            .list(&prefix)
            .await?
            .into_iter()
            .filter(|o| {
                o.path
                    .strip_prefix(&prefix)
                    .is_some_and(|name| !name.contains('/'))
            })
            .collect())
    }

    /// The groups' snapshot, read only when the listing can vouch for its copies (it
    /// tells digests and versions); empty when absent or unreadable.
    async fn ig_snapshot(&self, cluster: &str, listed: &[crate::store::ObjectMeta]) -> IgSnapshot {
        let vouched = listed
            .iter()
            .any(|o| o.md5.is_some() && o.version.is_some());
        if !vouched {
            return IgSnapshot::default();
        }
        match self.store.get_opt(&Self::ig_snapshot_path(cluster)).await {
            Ok(Some(got)) => serde_json::from_slice(&got.data).unwrap_or_default(),
            _ => IgSnapshot::default(),
        }
    }

    /// Each listed group's content and version: from the snapshot when the listing
    /// vouches for its copy (same MD5, a version), else read.
    async fn ig_contents<'a>(
        &self,
        listed: &'a [crate::store::ObjectMeta],
        snapshot: &IgSnapshot,
    ) -> Vec<(&'a crate::store::ObjectMeta, Result<GetResult>)> {
        futures::stream::iter(listed)
            .map(|meta| async move {
                let name = meta.path.rsplit('/').next().unwrap_or_default();
                let copy = snapshot
                    .groups
                    .get(name)
                    .filter(|text| meta.has_content(text.as_bytes()))
                    .zip(meta.version.clone());
                let got = match copy {
                    Some((text, version)) => Ok(GetResult {
                        data: Bytes::from(text.clone()),
                        version,
                    }),
                    None => self.store.get(&meta.path).await,
                };
                (meta, got)
            })
            .buffered(IG_READS)
            .collect()
            .await
    }

    fn ig_snapshot_path(cluster: &str) -> String {
        format!("{cluster}/{IG_SNAPSHOT}")
    }

    /// Rewrites `cluster`'s snapshot of its instance groups: one object beside them
    /// (`instancegroups.kops-rs.json`, the stored text of every group by name) that
    /// [`list_instance_groups`](Self::list_instance_groups) reads instead of every group
    /// whose listed MD5 is its copy's. Only copies are kept, never a judgement: a group
    /// changed since (by kOps, by hand) no longer matches and is read. Reads only the
    /// groups the snapshot does not hold as they are; writes nothing when it is current.
    /// Returns whether it wrote. kOps ignores the object; [`delete_cluster`](Self::delete_cluster)
    /// deletes it.
    pub async fn refresh_instance_group_snapshot(&self, cluster: &str) -> Result<bool> {
        let listed = self.ig_objects(cluster).await?;
        let old = self.ig_snapshot(cluster, &listed).await;
        let mut new = IgSnapshot::default();
        for (meta, got) in self.ig_contents(&listed, &old).await {
            match got {
                Ok(got) => {
                    let name = meta.path.rsplit('/').next().unwrap_or_default();
                    // A group that is not UTF-8 text is read each time.
                    if let Ok(text) = String::from_utf8(got.data.to_vec()) {
                        new.groups.insert(name.to_owned(), text);
                    }
                }
                Err(Error::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        if new == old {
            return Ok(false);
        }
        let data = serde_json::to_vec(&new).map_err(|e| Error::Invalid {
            what: Self::ig_snapshot_path(cluster),
            reason: e.to_string(),
        })?;
        self.store
            .put(
                &Self::ig_snapshot_path(cluster),
                Bytes::from(data),
                PutOptions::overwrite(),
            )
            .await?;
        Ok(true)
    }

    /// Reads one instance group.
    pub async fn get_instance_group(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<Versioned<InstanceGroup>> {
        check_name("cluster name", cluster)?;
        check_name("instance group name", name)?;
        let path = Self::ig_path(cluster, name);
        let got = self.store.get(&path).await?;
        Ok(Versioned {
            value: Self::decode_ig(&path, &got.data)?,
            version: got.version,
        })
    }

    fn prepare_ig(&self, cluster: &str, ig: &InstanceGroup) -> Result<(String, InstanceGroup)> {
        check_name("cluster name", cluster)?;
        check_name("metadata.name of InstanceGroup", ig.name())?;
        let mut g = ig.clone();
        g.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(CLUSTER_LABEL.to_string(), cluster.to_string());
        if g.metadata.creation_timestamp.is_none() {
            g.metadata.creation_timestamp = Some(lock::rfc3339(self.clock.now()));
        }
        Ok((Self::ig_path(cluster, ig.name()), g))
    }

    /// Stores a new instance group of `cluster` (labelled with the cluster's
    /// name); [`Error::AlreadyExists`] if one has that name.
    pub async fn create_instance_group(
        &self,
        cluster: &str,
        ig: &InstanceGroup,
    ) -> Result<Versioned<InstanceGroup>> {
        let (path, g) = self.prepare_ig(cluster, ig)?;
        let data = to_yaml(&path, "InstanceGroup", Object::InstanceGroup(g.clone()))?;
        let version = self.store.put(&path, data, PutOptions::create()).await?;
        Ok(Versioned { value: g, version })
    }

    /// Replaces an instance group if it is still at `expected`.
    pub async fn update_instance_group(
        &self,
        cluster: &str,
        ig: &InstanceGroup,
        expected: &Version,
    ) -> Result<Versioned<InstanceGroup>> {
        let (path, g) = self.prepare_ig(cluster, ig)?;
        let data = to_yaml(&path, "InstanceGroup", Object::InstanceGroup(g.clone()))?;
        let version = self
            .store
            .put(&path, data, PutOptions::update(expected.clone()))
            .await?;
        Ok(Versioned { value: g, version })
    }

    /// Deletes an instance group (a missing one is not an error).
    pub async fn delete_instance_group(&self, cluster: &str, name: &str) -> Result<()> {
        check_name("cluster name", cluster)?;
        check_name("instance group name", name)?;
        self.store.delete(&Self::ig_path(cluster, name)).await
    }

    // ---- keysets, SSH keys, secrets --------------------------------------------

    fn keyset_path(cluster: &str, name: &str) -> String {
        format!("{cluster}/pki/private/{name}/keyset.yaml")
    }

    /// Reads the keyset `name`.
    pub async fn get_keyset(&self, cluster: &str, name: &str) -> Result<Versioned<Keyset>> {
        check_name("cluster name", cluster)?;
        check_name("keyset name", name)?;
        let path = Self::keyset_path(cluster, name);
        let got = self.store.get(&path).await?;
        let value: Keyset = serde_saphyr::from_slice(&got.data).map_err(|e| {
            let at = e.location().map(|l| (l.line(), l.column()));
            secret_parse_error(&path, "Keyset", at)
        })?;
        Ok(Versioned {
            value,
            version: got.version,
        })
    }

    /// Writes a keyset (named by its `metadata.name`) with `options`
    /// (create, update-if-version-matches, or overwrite).
    pub async fn put_keyset(
        &self,
        cluster: &str,
        keyset: &Keyset,
        options: PutOptions,
    ) -> Result<Version> {
        check_name("cluster name", cluster)?;
        check_name("metadata.name of Keyset", keyset.name())?;
        let path = Self::keyset_path(cluster, keyset.name());
        // kOps' bytes (go-yaml v2 through JSON), keys oldest first.
        let text = keyset.to_yaml().map_err(|e| Error::Serialize {
            path: path.clone(),
            what: "Keyset",
            source: e.into(),
        })?;
        self.store.put(&path, Bytes::from(text), options).await
    }

    /// Names of the cluster's keysets.
    pub async fn list_keysets(&self, cluster: &str) -> Result<Vec<String>> {
        check_name("cluster name", cluster)?;
        let prefix = format!("{cluster}/pki/private/");
        Ok(self
            .store
            .list(&prefix)
            .await?
            .into_iter()
            .filter_map(|o| {
                o.path[prefix.len()..]
                    .strip_suffix("/keyset.yaml")
                    .filter(|n| !n.contains('/'))
                    .map(str::to_string)
            })
            .collect())
    }

    /// Stores the admin SSH public key at its kOps path and returns its id
    /// (fingerprint). Storing the same key again is not an error.
    pub async fn add_ssh_public_key(&self, cluster: &str, public_key: &str) -> Result<String> {
        check_name("cluster name", cluster)?;
        let id = ssh_fingerprint(public_key)?;
        let path = format!("{cluster}/pki/ssh/public/admin/{id}");
        self.store
            .put(
                &path,
                Bytes::from(public_key.trim().to_string()),
                PutOptions::overwrite(),
            )
            .await?;
        Ok(id)
    }

    /// The admin SSH public keys as `(id, key line)`.
    pub async fn list_ssh_public_keys(&self, cluster: &str) -> Result<Vec<(String, String)>> {
        check_name("cluster name", cluster)?;
        let prefix = format!("{cluster}/pki/ssh/public/admin/");
        let mut out = Vec::new();
        for o in self.store.list(&prefix).await? {
            let id = o.path[prefix.len()..].to_string();
            if let Some(got) = self.store.get_opt(&o.path).await? {
                out.push((id, String::from_utf8_lossy(&got.data).trim().to_string()));
            }
        }
        Ok(out)
    }

    /// Removes every admin SSH public key.
    pub async fn delete_ssh_public_keys(&self, cluster: &str) -> Result<usize> {
        check_name("cluster name", cluster)?;
        self.store
            .delete_prefix(&format!("{cluster}/pki/ssh/public/admin/"))
            .await
    }

    fn secret_path(cluster: &str, name: &str) -> String {
        format!("{cluster}/secrets/{name}")
    }

    /// Reads the secret `name`.
    pub async fn get_secret(&self, cluster: &str, name: &str) -> Result<Secret> {
        check_name("cluster name", cluster)?;
        check_name("secret name", name)?;
        let path = Self::secret_path(cluster, name);
        let got = self.store.get(&path).await?;
        serde_json::from_slice(&got.data).map_err(|e| {
            let at = Some((e.line() as u64, e.column() as u64)).filter(|&(l, _)| l > 0);
            secret_parse_error(&path, "secret", at)
        })
    }

    /// Creates the secret `name`; [`Error::AlreadyExists`] if it exists
    /// (secrets are never silently replaced).
    pub async fn create_secret(&self, cluster: &str, name: &str, secret: &Secret) -> Result<()> {
        check_name("cluster name", cluster)?;
        check_name("secret name", name)?;
        let path = Self::secret_path(cluster, name);
        let data = serde_json::to_vec(secret).map_err(|e| Error::Serialize {
            path: path.clone(),
            what: "secret",
            source: e.into(),
        })?;
        self.store
            .put(&path, Bytes::from(data), PutOptions::create())
            .await
            .map(|_| ())
    }

    /// Deletes the secret `name`; [`Error::NotFound`] when there is none.
    pub async fn delete_secret(&self, cluster: &str, name: &str) -> Result<()> {
        check_name("cluster name", cluster)?;
        check_name("secret name", name)?;
        let path = Self::secret_path(cluster, name);
        // The store deletes a missing object quietly: say that nothing was there.
        if self.store.get_opt(&path).await?.is_none() {
            return Err(Error::NotFound { path });
        }
        self.store.delete(&path).await
    }

    /// Names of the cluster's secrets.
    pub async fn list_secrets(&self, cluster: &str) -> Result<Vec<String>> {
        check_name("cluster name", cluster)?;
        let prefix = format!("{cluster}/secrets/");
        Ok(self
            .store
            .list(&prefix)
            .await?
            .into_iter()
            .map(|o| o.path[prefix.len()..].to_string())
            .filter(|n| !n.contains('/'))
            .collect())
    }

    // ---- completed spec and version --------------------------------------------

    /// Writes `cluster-completed.spec` (the fully populated cluster).
    pub async fn put_completed_spec(&self, cluster: &Cluster) -> Result<Version> {
        let name = Self::cluster_name(cluster)?;
        let path = format!("{name}/cluster-completed.spec");
        // Byte for byte as kOps writes it (and as the `cluster-completed.spec` managed
        // file of an update holds it).
        let data = kops_api::yaml::to_string(cluster)
            .map(Bytes::from)
            .map_err(|e| Error::Serialize {
                path: path.clone(),
                what: "Cluster",
                source: e.into(),
            })?;
        self.store.put(&path, data, PutOptions::overwrite()).await
    }

    /// Reads `cluster-completed.spec`.
    pub async fn get_completed_spec(&self, cluster: &str) -> Result<Cluster> {
        check_name("cluster name", cluster)?;
        let path = format!("{cluster}/cluster-completed.spec");
        let got = self.store.get(&path).await?;
        Self::decode_cluster(&path, &got.data)
    }

    /// Writes `kops-version.txt`.
    pub async fn put_kops_version(&self, cluster: &str, version: &str) -> Result<()> {
        check_name("cluster name", cluster)?;
        self.store
            .put(
                &format!("{cluster}/kops-version.txt"),
                Bytes::from(version.to_string()),
                PutOptions::overwrite(),
            )
            .await
            .map(|_| ())
    }

    /// Reads `kops-version.txt`, `None` when absent.
    pub async fn get_kops_version(&self, cluster: &str) -> Result<Option<String>> {
        check_name("cluster name", cluster)?;
        Ok(self
            .store
            .get_opt(&format!("{cluster}/kops-version.txt"))
            .await?
            .map(|g| String::from_utf8_lossy(&g.data).trim().to_string()))
    }

    // ---- additional objects -------------------------------------------------

    /// Path of a cluster's additional objects (kOps' cluster addons), relative to the
    /// store root.
    fn additional_objects_path(cluster: &str) -> String {
        format!("{cluster}/clusteraddons/default")
    }

    /// Reads the cluster's additional objects: the non-kOps objects stored with it
    /// (kOps' `clusteraddons/default`, such as a `KubeSchedulerConfiguration`); empty
    /// when there are none. A kOps object in that file is an error naming it.
    pub async fn get_additional_objects(&self, cluster: &str) -> Result<Vec<serde_json::Value>> {
        check_name("cluster name", cluster)?;
        let path = Self::additional_objects_path(cluster);
        let Some(got) = self.store.get_opt(&path).await? else {
            return Ok(Vec::new());
        };
        let what = "additional objects";
        let objects = manifest::parse(&got.data, &path).map_err(|e| Error::Parse {
            path: path.clone(),
            what,
            source: e.into(),
        })?;
        objects
            .into_iter()
            .map(|o| match o {
                Object::Other(o) => Ok(o.value),
                other => Err(wrong_kind(&path, what, &other)),
            })
            .collect()
    }

    /// Replaces the cluster's additional objects (removes the file when `objects` is
    /// empty). Each must be a non-kOps object with `apiVersion` and `kind`.
    pub async fn put_additional_objects(
        &self,
        cluster: &str,
        objects: &[serde_json::Value],
    ) -> Result<()> {
        check_name("cluster name", cluster)?;
        let path = Self::additional_objects_path(cluster);
        if objects.is_empty() {
            return self.store.delete(&path).await;
        }
        let mut text = String::new();
        for (i, o) in objects.iter().enumerate() {
            let api_version = o.get("apiVersion").and_then(serde_json::Value::as_str);
            let kind = o.get("kind").and_then(serde_json::Value::as_str);
            let (Some(api_version), Some(_)) = (api_version, kind) else {
                return Err(Error::Parse {
                    path: path.clone(),
                    what: "additional objects",
                    source: format!("object {} has no apiVersion or kind", i + 1).into(),
                });
            };
            if api_version.starts_with("kops.k8s.io/") {
                return Err(Error::Parse {
                    path: path.clone(),
                    what: "additional objects",
                    source: format!("object {} is a kOps object ({api_version})", i + 1).into(),
                });
            }
            if i > 0 {
                text.push_str("---\n");
            }
            text.push_str(&kops_api::yaml::value_to_string(o));
        }
        self.store
            .put(&path, Bytes::from(text), PutOptions::overwrite())
            .await
            .map(|_| ())
    }

    // ---- restore to a point in time -------------------------------------------

    /// Every version of the objects under the cluster's prefix (its lock left out), for
    /// a store that keeps versions.
    pub async fn cluster_versions(&self, cluster: &str) -> Result<Vec<crate::ObjectVersion>> {
        check_name("cluster name", cluster)?;
        let lock = Self::lock_path(cluster);
        let mut all = self.store.list_versions(&format!("{cluster}/")).await?;
        all.retain(|v| v.path != lock);
        Ok(all)
    }

    /// The plan that puts every object of the cluster back as it was at `at` (see
    /// [`crate::restore::plan_restore`]); nothing is changed.
    pub async fn restore_plan(
        &self,
        cluster: &str,
        at: std::time::SystemTime,
    ) -> Result<crate::restore::RestorePlan> {
        let versions = self.cluster_versions(cluster).await?;
        let lock = Self::lock_path(cluster);
        crate::restore::plan_restore(&versions, crate::restore::unix_ms(at), &|p| p == lock)
    }

    /// Carries `plan` out: each object's old content written as its current version, or
    /// the object deleted. Take the cluster's lock first. Returns how many objects
    /// changed.
    pub async fn apply_restore(&self, plan: &crate::restore::RestorePlan) -> Result<usize> {
        use crate::restore::RestoreAction;
        for action in &plan.actions {
            match action {
                RestoreAction::Put {
                    path, version_id, ..
                } => {
                    let old = self.store.get_version(path, version_id).await?;
                    self.store
                        .put(path, old.data, PutOptions::overwrite())
                        .await?;
                }
                RestoreAction::Delete { path } => match self.store.delete(path).await {
                    Ok(()) | Err(Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                },
            }
        }
        Ok(plan.actions.len())
    }

    // ---- lock ---------------------------------------------------------------

    /// Path of a cluster's lock object, relative to the store root.
    pub fn lock_path(cluster: &str) -> String {
        format!("{cluster}/kops-rs.lock")
    }

    /// Takes the cluster's lock for a mutating operation, or fails with
    /// [`Error::Locked`] naming the holder.
    pub async fn lock(&self, cluster: &str, request: &LockRequest) -> Result<Lock> {
        check_name("cluster name", cluster)?;
        Lock::acquire(
            self.store.clone(),
            &Self::lock_path(cluster),
            request,
            self.clock.as_ref(),
        )
        .await
    }

    /// Who holds the cluster's lock, if anyone.
    pub async fn lock_info(&self, cluster: &str) -> Result<Option<LockInfo>> {
        check_name("cluster name", cluster)?;
        lock::read_lock(self.store.as_ref(), &Self::lock_path(cluster)).await
    }

    /// Removes the cluster's lock, as `kops unlock cluster` does: a lock whose lease ran
    /// out always, one still leased only with `force` (else [`Error::LeaseNotExpired`]
    /// naming its holder). Returns what the removed lock recorded, `None` when the
    /// cluster was not locked.
    pub async fn unlock(&self, cluster: &str, force: bool) -> Result<Option<LockInfo>> {
        check_name("cluster name", cluster)?;
        let path = Self::lock_path(cluster);
        let Some(info) = lock::read_lock(self.store.as_ref(), &path).await? else {
            return Ok(None);
        };
        if !force && !info.is_expired(self.clock.now()) {
            return Err(Error::LeaseNotExpired {
                path,
                info: Box::new(info),
            });
        }
        lock::force_unlock(self.store.as_ref(), &path, &info.id)
            .await
            .map(Some)
    }

    /// The clock this registry stamps times with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Removes the cluster's lock if its id is `id`; returns what it recorded.
    pub async fn force_unlock(&self, cluster: &str, id: &str) -> Result<LockInfo> {
        check_name("cluster name", cluster)?;
        lock::force_unlock(self.store.as_ref(), &Self::lock_path(cluster), id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DeleteOptions, GetResult};

    #[test]
    fn fingerprints_like_kops() {
        // Blob "AAAA" decodes to three zero bytes; MD5 of [0,0,0].
        let id = ssh_fingerprint("ssh-rsa AAAA user@host").unwrap();
        assert_eq!(id, "693e9af84d3dfcc71e640e005bdc5e2e");
        assert!(ssh_fingerprint("ssh-rsa").is_err());
        assert!(ssh_fingerprint("ssh-rsa !!!").is_err());
    }

    /// A store that, on the first history entry it is asked to write, lets
    /// another registry save its own history entry first (a second writer
    /// racing between this one's listing and its write), one second later.
    #[derive(Debug)]
    struct RacingStore {
        inner: Arc<dyn Store>,
        raced: std::sync::atomic::AtomicBool,
    }

    #[async_trait::async_trait]
    impl Store for RacingStore {
        async fn get(&self, path: &str) -> Result<GetResult> {
            self.inner.get(path).await
        }
        async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
            if path.contains("/history/")
                && !self.raced.swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                let other = Registry::new(self.inner.clone(), Arc::new(FixedClock(1_000_001)));
                other
                    .save_history("c", Bytes::from_static(b"other"))
                    .await?;
            }
            self.inner.put(path, data, options).await
        }
        async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
            self.inner.delete_opts(path, options).await
        }
        async fn list(&self, prefix: &str) -> Result<Vec<crate::ObjectMeta>> {
            self.inner.list(prefix).await
        }
        fn url(&self) -> String {
            self.inner.url()
        }
    }

    #[derive(Debug)]
    struct FixedClock(u64);

    impl lock::Clock for FixedClock {
        fn now(&self) -> std::time::SystemTime {
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.0)
        }
    }

    #[tokio::test]
    async fn racing_history_writers_never_share_a_sequence_number() {
        let inner: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
        let racing = Arc::new(RacingStore {
            inner: inner.clone(),
            raced: false.into(),
        });
        let reg = Registry::new(racing, Arc::new(FixedClock(1_000_000)));
        reg.save_history("c", Bytes::from_static(b"mine"))
            .await
            .unwrap();
        let history = reg.list_history("c").await.unwrap();
        let sequences: Vec<u64> = history.iter().map(|h| h.sequence).collect();
        assert_eq!(sequences, [1, 2], "{history:?}");
        // The other writer claimed 1 first; ours is 2.
        assert_eq!(inner.get(&history[1].path).await.unwrap().data, "mine");
        assert_eq!(reg.prune_history("c", 0).await.unwrap(), 2);
        assert!(inner.list("c/").await.unwrap().is_empty());
    }

    /// The whole error chain, as a binary would print it.
    fn chain(e: &Error) -> String {
        let mut out = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            out.push_str(&format!(": {s}"));
            source = s.source();
        }
        out
    }

    #[tokio::test]
    async fn malformed_keysets_and_secrets_do_not_echo_their_content() {
        let store: Arc<dyn Store> = Arc::new(crate::MemoryStore::new());
        let reg = Registry::new(store.clone(), Arc::new(lock::SystemClock));
        let key = "TOPSECRETKEYMATERIAL";
        let keyset = format!(
            "apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nmetadata:\n  name: ca\n\
             spec:\n  keys:\n  - id: \"1\"\n    privateMaterial: [{key}]\n"
        );
        store
            .put(
                "c/pki/private/ca/keyset.yaml",
                keyset.into(),
                PutOptions::overwrite(),
            )
            .await
            .unwrap();
        let err = chain(&reg.get_keyset("c", "ca").await.unwrap_err());
        assert!(!err.contains(key), "{err}");
        assert!(
            err.contains("c/pki/private/ca/keyset.yaml") && err.contains("line 8"),
            "{err}"
        );

        // serde_json quotes a mistyped number: "invalid type: integer `...`".
        let key = "31415926535897932";
        let secret = format!("{{\"Data\": {key}}}");
        store
            .put("c/secrets/admin", secret.into(), PutOptions::overwrite())
            .await
            .unwrap();
        let err = chain(&reg.get_secret("c", "admin").await.unwrap_err());
        assert!(!err.contains(key), "{err}");
        assert!(
            err.contains("c/secrets/admin") && err.contains("line 1"),
            "{err}"
        );
    }

    /// A store that counts reads.
    #[derive(Debug)]
    struct CountingReads {
        inner: crate::MemoryStore,
        gets: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Store for CountingReads {
        async fn get(&self, path: &str) -> Result<GetResult> {
            self.gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.inner.get(path).await
        }
        async fn put(&self, path: &str, data: Bytes, options: PutOptions) -> Result<Version> {
            self.inner.put(path, data, options).await
        }
        async fn delete_opts(&self, path: &str, options: DeleteOptions) -> Result<()> {
            self.inner.delete_opts(path, options).await
        }
        async fn list(&self, prefix: &str) -> Result<Vec<crate::store::ObjectMeta>> {
            self.inner.list(prefix).await
        }
        fn url(&self) -> String {
            "memfs://counting".into()
        }
    }

    /// With a current snapshot, listing the groups reads one object; a group changed
    /// since is read (and only it), and what is listed is what a read gives.
    #[tokio::test]
    async fn instance_groups_are_read_from_their_snapshot_when_the_listing_vouches() {
        use std::sync::atomic::Ordering::SeqCst;
        let store = Arc::new(CountingReads {
            inner: crate::MemoryStore::new(),
            gets: Default::default(),
        });
        let registry = Registry::new(store.clone(), Arc::new(crate::SystemClock));
        let cluster = "fleet.example.com";
        for i in 0..20 {
            let mut ig = InstanceGroup::default();
            ig.metadata.name = Some(format!("g{i}"));
            ig.spec.min_size = Some(i);
            registry.create_instance_group(cluster, &ig).await.unwrap();
        }
        let direct = registry.list_instance_groups(cluster).await.unwrap();
        assert_eq!(
            store.gets.swap(0, SeqCst),
            21,
            "no snapshot yet: the snapshot looked for, then every group read"
        );

        assert!(
            registry
                .refresh_instance_group_snapshot(cluster)
                .await
                .unwrap()
        );
        store.gets.store(0, SeqCst);
        assert!(
            !registry
                .refresh_instance_group_snapshot(cluster)
                .await
                .unwrap()
        );
        assert_eq!(
            store.gets.swap(0, SeqCst),
            1,
            "a current snapshot: one read"
        );

        let listed = registry.list_instance_groups(cluster).await.unwrap();
        assert_eq!(store.gets.swap(0, SeqCst), 1, "the snapshot alone is read");
        assert_eq!(listed, direct);

        // A group changed behind the snapshot's back (kOps, a hand edit) is read.
        let mut g3 = listed[13].clone();
        g3.value.spec.max_size = Some(9);
        registry
            .update_instance_group(cluster, &g3.value, &g3.version)
            .await
            .unwrap();
        let listed = registry.list_instance_groups(cluster).await.unwrap();
        assert_eq!(
            store.gets.swap(0, SeqCst),
            2,
            "the snapshot and the changed group"
        );
        let changed: Vec<_> = listed
            .iter()
            .filter(|g| g.value.spec.max_size == Some(9))
            .map(|g| g.value.name().to_owned())
            .collect();
        assert_eq!(changed, [listed[13].value.name().to_owned()]);
        assert_eq!(listed.len(), 20);

        // delete_cluster knows the snapshot.
        registry.delete_cluster(cluster).await.unwrap();
    }
}
