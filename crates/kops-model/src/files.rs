//! The files kOps keeps in a cluster's config base (`ManagedFile`s): the completed spec,
//! the kOps version, etcd cluster specs and manifests, the static pods, nodeup configs,
//! addon manifests and the bootstrap channel.
//!
//! [`managed_files`] lists them for a completed spec, cloud-neutrally. Each file is a
//! [`ManagedFileTask`]: direct apply writes it into the cluster's config base in its own
//! state store (the [`ClusterContext::config_store`]), as kOps' `fitasks.ManagedFile`
//! does; each cloud's model adds how the Terraform target renders it (AWS: an
//! `aws_s3_object`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_api::keyset::Keyset;
use kops_api::v1alpha2;
use kops_statestore::{ObjectMeta, PutOptions, Store, StoreExt as _};
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, Value, async_trait};

use crate::addons;
use crate::cluster::ClusterContext;
use crate::error::Result;
use crate::etcd;
use crate::nodeup;

/// One file of the config base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ManagedFile {
    /// Task name (kOps' `ManagedFile` name, also the Terraform resource name).
    pub(crate) name: String,
    /// Path relative to the config base.
    pub(crate) location: String,
    /// The content.
    pub(crate) contents: String,
    /// Whether the content is secret (a keyset with private keys, an addon manifest with a
    /// Secret's data): plans show a digest, and Terraform never renders it.
    pub(crate) sensitive: bool,
}

impl ManagedFile {
    fn new(name: impl Into<String>, location: impl Into<String>, contents: String) -> Self {
        ManagedFile {
            name: name.into(),
            location: location.into(),
            contents,
            sensitive: false,
        }
    }
}

/// The role directory of a group under `igconfig/`.
fn igconfig_role(ig: &InstanceGroup) -> &'static str {
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => "control-plane",
        Some(InstanceGroupRole::ApiServer) => "apiserver",
        Some(InstanceGroupRole::Bastion) => "bastion",
        _ => "node",
    }
}

/// The static pod that exposes the API server's health to the load balancer
/// (`manifests/static/kube-apiserver-healthcheck.yaml`).
fn apiserver_healthcheck_manifest(ctx: &ClusterContext) -> String {
    let image = crate::images::remap(
        ctx,
        &format!(
            "registry.k8s.io/kops/kube-apiserver-healthcheck:{}",
            ctx.kops_release
        ),
    );
    let mut s =
        String::from("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers:\n  - args:\n");
    for a in [
        "ca-cert=/secrets/ca.crt",
        "client-cert=/secrets/client.crt",
        "client-key=/secrets/client.key",
    ] {
        s.push_str(&format!("    - --{a}\n"));
    }
    s.push_str(&format!("    image: {image}\n"));
    s.push_str(concat!(
        "    livenessProbe:\n      httpGet:\n        host: 127.0.0.1\n",
        "        path: /.kube-apiserver-healthcheck/healthz\n        port: 3990\n",
        "      initialDelaySeconds: 5\n      timeoutSeconds: 5\n",
        "    name: healthcheck\n    resources: {}\n",
        "    securityContext:\n      runAsNonRoot: true\n      runAsUser: 10012\n",
        "    volumeMounts:\n    - mountPath: /secrets\n      name: healthcheck-secrets\n      readOnly: true\n",
        "  volumes:\n  - hostPath:\n      path: /etc/kubernetes/kube-apiserver-healthcheck/secrets\n",
        "      type: Directory\n    name: healthcheck-secrets\nstatus: {}\n",
    ));
    s
}

/// The completed spec (`cluster-completed.spec`) as kOps writes it: the v1alpha2
/// cluster through kOps' YAML.
pub(crate) fn completed_spec(ctx: &ClusterContext) -> Result<String> {
    let c = v1alpha2::Cluster::from(&ctx.cluster);
    Ok(kops_api::yaml::to_string(&c)?)
}

/// Every managed file of a cluster, in kOps' order.
pub(crate) fn managed_files(ctx: &ClusterContext) -> Result<Vec<ManagedFile>> {
    let mut out = Vec::new();
    // The completed spec names the control plane's images, which nodeup runs.
    crate::images::record_spec_images(ctx);
    let completed = completed_spec(ctx)?;
    out.push(ManagedFile::new(
        "cluster-completed.spec",
        "cluster-completed.spec",
        completed,
    ));
    out.push(ManagedFile::new(
        "kops-version.txt",
        "kops-version.txt",
        ctx.kops_release.clone(),
    ));

    let control_planes: Vec<&InstanceGroup> =
        ctx.groups_with(&InstanceGroupRole::ControlPlane).collect();
    for e in ctx.cluster.spec.etcd_clusters.iter().flatten() {
        let Some(ename) = e.name.as_deref() else {
            continue;
        };
        let members = e.etcd_members.as_ref().map_or(0, Vec::len);
        let spec = format!(
            "{{\n  \"memberCount\": {members},\n  \"etcdVersion\": \"{}\"\n}}",
            etcd::etcd_version(ctx, e)
        );
        out.push(ManagedFile::new(
            format!("etcd-cluster-spec-{ename}"),
            format!("backups/etcd/{ename}/control/etcd-cluster-spec"),
            spec,
        ));
        for ig in &control_planes {
            out.push(ManagedFile::new(
                format!("manifests-etcdmanager-{ename}-{}", ig.name()),
                format!("manifests/etcd/{ename}-{}.yaml", ig.name()),
                etcd::etcd_manager_manifest(ctx, e, ename, ig.name()),
            ));
        }
    }
    if !control_planes.is_empty() {
        out.push(ManagedFile::new(
            "manifests-static-kube-apiserver-healthcheck",
            "manifests/static/kube-apiserver-healthcheck.yaml",
            apiserver_healthcheck_manifest(ctx),
        ));
    }
    out.push(ManagedFile::new(
        "manifests-channels-kops-channels",
        "manifests/channels/kops-channels.yaml",
        addons::kops_channels_manifest(ctx),
    ));

    for ig in &ctx.groups {
        let has_user_data = ig.spec.role != Some(InstanceGroupRole::Bastion)
            || ig
                .spec
                .additional_user_data
                .as_ref()
                .is_some_and(|u| !u.is_empty());
        if !has_user_data || !ctx.builds_group(ig) {
            continue;
        }
        let dir = format!("igconfig/{}/{}", igconfig_role(ig), ig.name());
        out.push(ManagedFile::new(
            format!("nodeupconfig-{}", ig.name()),
            format!("{dir}/nodeupconfig.yaml"),
            nodeup::build(ctx, ig)?.config,
        ));
        if ClusterContext::is_karpenter(ig) {
            out.push(ManagedFile::new(
                format!("nodeupscript-{}", ig.name()),
                format!("{dir}/nodeupscript.sh"),
                nodeup::bootstrap_script(ctx, ig)?,
            ));
        }
    }

    out.extend(addons::managed_files(ctx)?);
    for (rel, content) in &ctx.extra_files {
        out.push(ManagedFile::new(rel.clone(), rel.clone(), content.clone()));
    }
    out.extend(keyset_files(ctx)?);
    // A file holding a credential the context was given is sensitive wherever it was
    // built: plans show its digest, and no Terraform data file holds the credential.
    for f in &mut out {
        if ctx
            .credential_env()
            .iter()
            .any(|(_, secret)| !secret.is_empty() && f.contents.contains(secret))
        {
            f.sensitive = true;
        }
    }
    Ok(out)
}

/// `value` as a YAML scalar: as it is when it reads back as the same string, else
/// double-quoted (JSON's quoting, which YAML reads).
pub(crate) fn yaml_scalar(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !value.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        value.to_owned()
    } else {
        serde_json::Value::String(value.to_owned()).to_string()
    }
}

/// Reads every keyset of the keystore under `store` (the config base):
/// `pki/private/<name>/keyset.yaml`, by name.
pub(crate) async fn load_keysets(store: &dyn Store) -> Result<BTreeMap<String, Keyset>> {
    let listed = store
        .list("pki/private/")
        .await
        .map_err(crate::error::store("listing the keysets in pki/private/"))?;
    let mut out = BTreeMap::new();
    for meta in listed {
        let Some(name) = meta
            .path
            .strip_prefix("pki/private/")
            .and_then(|r| r.strip_suffix("/keyset.yaml"))
            .filter(|n| !n.contains('/'))
        else {
            continue;
        };
        let got = store
            .get(&meta.path)
            .await
            .map_err(crate::error::store(format!("reading {}", meta.path)))?;
        let text = String::from_utf8_lossy(&got.data);
        let ks = Keyset::from_yaml(&text, &meta.path)?;
        out.insert(name.to_owned(), ks);
    }
    Ok(out)
}

/// What the nodeup configs need from the state store, read once before the model is
/// built: the keysets (every missing one generated, as kOps' create and first update do)
/// and, with `spec.encryptionConfig`, the hash of the `encryptionconfig` secret.
pub(crate) async fn prepare_boot(ctx: &mut ClusterContext) -> Result<()> {
    if let Some(store) = ctx.config_store.clone() {
        let loaded = load_keysets(store.as_ref()).await?;
        for (k, v) in loaded {
            ctx.keysets.entry(k).or_insert(v);
        }
        if ctx.cluster.spec.encryption_config == Some(true) {
            let got = store
                .get_opt("secrets/encryptionconfig")
                .await
                .map_err(crate::error::store("reading secrets/encryptionconfig"))?;
            let Some(got) = got else {
                return Err(crate::error::invalid(
                    "spec.encryptionConfig",
                    "encryptionConfig is enabled, but the encryptionconfig secret does not exist: create it with `kops create secret encryptionconfig -f FILE`",
                ));
            };
            ctx.encryption_config_hash = Some(crate::secrets::encryption_config_hash(&got.data)?);
        }
        if let Some(cilium) = &ctx.cluster.spec.networking.cilium {
            ctx.cilium_password = cilium_password(store.as_ref(), cilium).await?;
        }
    }
    ctx.ensure_keysets(std::time::SystemTime::now())?;
    Ok(())
}

/// The stored `ciliumpassword` secret's text, if any. Cilium's IPsec encryption needs it:
/// without it the agents would start with no key file, so that is refused, naming the
/// command that makes it.
async fn cilium_password(
    store: &dyn kops_statestore::Store,
    cilium: &kops_api::v1alpha2::CiliumNetworkingSpec,
) -> Result<Option<String>> {
    let path = crate::secrets::secret_path("ciliumpassword");
    let got = store
        .get_opt(&path)
        .await
        .map_err(crate::error::store(format!("reading {path}")))?;
    let ipsec = cilium.enable_encryption == Some(true)
        && cilium.encryption_type.as_deref().unwrap_or("ipsec") == "ipsec";
    let Some(got) = got else {
        if ipsec {
            return Err(crate::error::invalid(
                "spec.networking.cilium.enableEncryption",
                "IPsec encryption needs the ciliumpassword secret (the agents' keys), which does not exist: create it with `kops create secret ciliumpassword -f FILE`",
            ));
        }
        return Ok(None);
    };
    let value = crate::secrets::decode_secret(&got.data, &path)?;
    let text = String::from_utf8(value)
        .map_err(|_| crate::error::invalid(&path, "the secret is not UTF-8 text"))?;
    Ok(Some(text))
}

/// The keyset files an update writes: those of [`ClusterContext::new_keysets`], in
/// kOps' format. Their content holds private keys: the tasks show only a digest.
pub(crate) fn keyset_files(ctx: &ClusterContext) -> Result<Vec<ManagedFile>> {
    let mut out = Vec::new();
    for name in &ctx.new_keysets {
        let Some(ks) = ctx.keysets.get(name) else {
            continue;
        };
        let mut f = ManagedFile::new(
            format!("keyset-{name}"),
            crate::pki::keyset_path(name),
            ks.to_yaml()?,
        );
        f.sensitive = true;
        out.push(f);
    }
    Ok(out)
}

/// The listings of the config base's directories that one executor run has made, shared
/// by every managed file of a model: a file whose listed MD5 is the MD5 of its contents is
/// found without being read, so a no-op plan reads a directory once, not every file in it
/// (one per instance group under `igconfig/`). A listing serves only the run that made it
/// ([`Results::run_id`](kops_tasks::Results::run_id)); a file written drops its
/// directory's listing.
#[derive(Debug, Default)]
pub(crate) struct Listings(tokio::sync::Mutex<RunListings>);

#[derive(Debug, Default)]
struct RunListings {
    run: u64,
    /// By directory prefix; `None`: the listing failed (the files are read one by one).
    by_prefix: HashMap<String, Option<Arc<HashMap<String, ObjectMeta>>>>,
}

impl Listings {
    /// The listing of `prefix` in `store` for run `run`, listed on first use.
    async fn get(
        &self,
        store: &dyn Store,
        prefix: &str,
        run: u64,
    ) -> Option<Arc<HashMap<String, ObjectMeta>>> {
        let mut state = self.0.lock().await;
        if state.run != run {
            *state = RunListings {
                run,
                by_prefix: HashMap::new(),
            };
        }
        if let Some(listed) = state.by_prefix.get(prefix) {
            return listed.clone();
        }
        let listed = store.list(prefix).await.ok().map(|objects| {
            Arc::new(
                objects
                    .into_iter()
                    .map(|o| (o.path.clone(), o))
                    .collect::<HashMap<_, _>>(),
            )
        });
        state.by_prefix.insert(prefix.to_owned(), listed.clone());
        listed
    }

    async fn forget(&self, prefix: &str) {
        self.0.lock().await.by_prefix.remove(prefix);
    }
}

/// The directory whose listing answers for the file at `location`: its first directory
/// (`igconfig/`, `addons/`, `manifests/`, `pki/`, ...), or its own directory under
/// `backups/` (etcd-manager's backups, which grow without bound, live beside its spec).
/// `None` for a file at the root.
fn listing_prefix(location: &str) -> Option<String> {
    let (dir, _) = location.rsplit_once('/')?;
    if dir.starts_with("backups/") || dir == "backups" {
        return Some(format!("{dir}/"));
    }
    let first = dir.split('/').next()?;
    Some(format!("{first}/"))
}

/// What a directory's listing says of a managed file.
enum Listed {
    /// Not in the directory.
    Absent,
    /// There, with the file's MD5: exactly the contents the task writes.
    AsExpected,
    /// To be read: another or an unknown digest, or no listing.
    Unknown,
}

/// How a managed file renders for the Terraform target (an `aws_s3_object`, a
/// `google_storage_bucket_object`, ...), as each cloud's model decides.
pub(crate) type FileRender = Arc<
    dyn Fn(&mut kops_tasks::terraform::TerraformWriter) -> kops_tasks::Result<()> + Send + Sync,
>;

/// The task of one managed file: found by reading, applied by writing, the file at its
/// location in the config-base store. Cloud-neutral: it never calls the cloud. It renders
/// for Terraform as its cloud's model said ([`ManagedFileTask::with_render`]), or not at
/// all.
#[derive(Clone)]
pub(crate) struct ManagedFileTask {
    key: TaskKey,
    location: String,
    contents: String,
    sensitive: bool,
    store: Option<Arc<dyn Store>>,
    listings: Arc<Listings>,
    render: Option<FileRender>,
}

impl std::fmt::Debug for ManagedFileTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedFileTask")
            .field("key", &self.key)
            .field("location", &self.location)
            .field("rendered", &self.render.is_some())
            .finish_non_exhaustive()
    }
}

impl ManagedFileTask {
    /// The task of `file`, writing into the config base of `ctx`.
    pub(crate) fn new(file: &ManagedFile, ctx: &ClusterContext) -> Self {
        ManagedFileTask {
            key: TaskKey::new("ManagedFile", &file.name),
            location: file.location.clone(),
            contents: file.contents.clone(),
            sensitive: file.sensitive,
            store: ctx.config_store.clone(),
            listings: ctx.file_listings.clone(),
            render: None,
        }
    }

    /// The same task, rendered for Terraform by `render`.
    pub(crate) fn with_render(
        mut self,
        render: impl Fn(&mut kops_tasks::terraform::TerraformWriter) -> kops_tasks::Result<()>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.render = Some(Arc::new(render));
        self
    }

    /// What the listing of the file's directory says of it.
    async fn listed(&self, store: &dyn Store, run: u64) -> Listed {
        let Some(prefix) = listing_prefix(&self.location) else {
            return Listed::Unknown;
        };
        let Some(listing) = self.listings.get(store, &prefix, run).await else {
            return Listed::Unknown;
        };
        match listing.get(&self.location) {
            None => Listed::Absent,
            Some(meta) if meta.has_content(self.contents.as_bytes()) => Listed::AsExpected,
            Some(_) => Listed::Unknown,
        }
    }

    fn store(&self) -> kops_tasks::Result<&Arc<dyn Store>> {
        self.store.as_ref().ok_or_else(|| kops_tasks::Error::Lifecycle {
            key: self.key.clone(),
            message: "no config-base store to write managed files to (set ClusterContext::config_store)".into(),
        })
    }

    /// The contents as a plan shows them: the text, or for a secret its SHA-256.
    fn shown(&self, contents: &str) -> Value {
        if self.sensitive {
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(contents.as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            Value::string(format!("<secret, sha256 {hex}>"))
        } else {
            Value::text(contents)
        }
    }

    fn store_error(&self, operation: &str, e: kops_statestore::Error) -> kops_tasks::Error {
        kops_tasks::Error::Cloud {
            operation: format!("{operation} {} in the config base", self.location),
            source: Some(Box::new(e)),
        }
    }
}

#[async_trait]
impl<C: ?Sized + Sync> Task<C> for ManagedFileTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn render_terraform(
        &self,
        w: &mut kops_tasks::terraform::TerraformWriter,
    ) -> kops_tasks::Result<()> {
        match &self.render {
            Some(render) => render(w),
            None => Ok(()),
        }
    }

    fn fields(&self) -> Fields {
        Fields::new()
            .with("location", Value::string(self.location.as_str()))
            .with("contents", self.shown(&self.contents))
    }

    async fn find(&self, cx: &Context<'_, C>) -> kops_tasks::Result<Option<Found>> {
        let store = self.store()?;
        match self.listed(store.as_ref(), cx.results().run_id()).await {
            Listed::Absent => return Ok(None),
            Listed::AsExpected => {
                let fields = Fields::new()
                    .with("location", Value::string(self.location.as_str()))
                    .with("contents", self.shown(&self.contents));
                return Ok(Some(Found::new(fields, Outputs::new())));
            }
            Listed::Unknown => {}
        }
        let got = store
            .get_opt(&self.location)
            .await
            .map_err(|e| self.store_error("reading", e))?;
        Ok(got.map(|g| {
            let fields = Fields::new()
                .with("location", Value::string(self.location.as_str()))
                .with("contents", self.shown(&String::from_utf8_lossy(&g.data)));
            Found::new(fields, Outputs::new())
        }))
    }

    async fn apply(
        &self,
        _cx: &Context<'_, C>,
        _change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        let store = self.store()?;
        store
            .put(
                &self.location,
                Bytes::from(self.contents.clone().into_bytes()),
                PutOptions::overwrite(),
            )
            .await
            .map_err(|e| self.store_error("writing", e))?;
        if let Some(prefix) = listing_prefix(&self.location) {
            self.listings.forget(&prefix).await;
        }
        Ok(Outputs::new())
    }
}

/// Writes every file straight into `store`: for a Terraform target whose config base
/// Terraform cannot write (a local directory), as kOps does without Terraform-managed
/// files.
pub(crate) async fn write_all(
    store: &dyn Store,
    files: impl IntoIterator<Item = &ManagedFileTask>,
) -> Result<usize> {
    let mut n = 0;
    for f in files {
        store
            .put(
                &f.location,
                Bytes::from(f.contents.clone().into_bytes()),
                PutOptions::overwrite(),
            )
            .await
            .map_err(crate::error::store(format!(
                "writing {} in the config base",
                f.location
            )))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kops_statestore::{
        DeleteOptions, GetResult, MemoryStore, ObjectMeta, PutOptions, Store, Version,
    };
    use kops_tasks::{Executor, ExecutorOptions, TaskGraph};

    use super::*;

    /// A memory store that counts reads and listings.
    #[derive(Debug, Default)]
    struct Counting {
        inner: MemoryStore,
        gets: AtomicUsize,
        lists: AtomicUsize,
    }

    #[async_trait]
    impl Store for Counting {
        async fn get(&self, path: &str) -> kops_statestore::Result<GetResult> {
            self.gets.fetch_add(1, Ordering::SeqCst);
            self.inner.get(path).await
        }
        async fn put(
            &self,
            path: &str,
            data: Bytes,
            options: PutOptions,
        ) -> kops_statestore::Result<Version> {
            self.inner.put(path, data, options).await
        }
        async fn delete_opts(
            &self,
            path: &str,
            options: DeleteOptions,
        ) -> kops_statestore::Result<()> {
            self.inner.delete_opts(path, options).await
        }
        async fn list(&self, prefix: &str) -> kops_statestore::Result<Vec<ObjectMeta>> {
            self.lists.fetch_add(1, Ordering::SeqCst);
            self.inner.list(prefix).await
        }
        fn url(&self) -> String {
            "memory://counting".into()
        }
    }

    fn graph(store: &Arc<Counting>, groups: usize) -> TaskGraph<()> {
        let mut ctx = ClusterContext::new(Default::default(), Vec::new(), "r");
        ctx.config_store = Some(store.clone());
        let tasks = (0..groups)
            .map(|i| {
                let file = ManagedFile::new(
                    format!("nodeupconfig-g{i}"),
                    format!("igconfig/node/g{i}/nodeupconfig.yaml"),
                    format!("group {i}\n"),
                );
                Box::new(ManagedFileTask::new(&file, &ctx)) as Box<dyn Task<()>>
            })
            .collect();
        TaskGraph::build(tasks).unwrap()
    }

    /// Files whose listed digest is their contents' are found without a read; a file
    /// that differs is read; the next run lists again.
    #[tokio::test]
    async fn a_directory_is_listed_once_per_run_and_only_changed_files_are_read() {
        let store = Arc::new(Counting::default());
        let graph = graph(&store, 20);
        let executor = Executor::new(ExecutorOptions::default());
        let plan = executor.plan(&graph, &()).await.unwrap();
        assert_eq!(plan.changes().count(), 20, "nothing stored yet: 20 creates");
        assert_eq!(store.gets.load(Ordering::SeqCst), 0);
        assert_eq!(store.lists.load(Ordering::SeqCst), 1);

        executor.apply(&graph, &()).await.into_result().unwrap();
        store
            .inner
            .put(
                "igconfig/node/g3/nodeupconfig.yaml",
                Bytes::from_static(b"edited\n"),
                PutOptions::overwrite(),
            )
            .await
            .unwrap();
        store.gets.store(0, Ordering::SeqCst);
        store.lists.store(0, Ordering::SeqCst);
        let plan = executor.plan(&graph, &()).await.unwrap();
        let changed: Vec<String> = plan.changes().map(|i| i.key.to_string()).collect();
        assert_eq!(changed, ["ManagedFile/nodeupconfig-g3"]);
        assert_eq!(
            store.gets.load(Ordering::SeqCst),
            1,
            "only the edited file is read"
        );
        assert_eq!(
            store.lists.load(Ordering::SeqCst),
            1,
            "a new run lists again"
        );
    }
}
