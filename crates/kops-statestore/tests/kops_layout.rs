//! kOps' state-store layout: a tree written in kOps' format reads back as
//! the same objects, and what the registry writes has kOps' paths and formats.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use kops_api::v1alpha2::{
    CNINetworkingSpec, Cluster, ClusterSpec, ClusterSubnetSpec, InstanceGroup, InstanceGroupSpec,
    NetworkingSpec,
};
use kops_statestore::conformance::FixedClock;
use kops_statestore::keyset::{Keyset, KeysetItem, KeysetType, Secret};
use kops_statestore::registry::{CLUSTER_LABEL, ssh_fingerprint};
use kops_statestore::{
    Error, LocalStore, LockRequest, MemoryStore, PutOptions, Registry, Store, StoreExt,
};

const NAME: &str = "minimal.example.com";

// What kOps writes (sigs.k8s.io/yaml: keys sorted, lists not indented).
const CONFIG: &str = r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  creationTimestamp: "2016-12-10T22:42:27Z"
  generation: 3
  name: minimal.example.com
spec:
  cloudProvider: aws
  configBase: s3://state/minimal.example.com
  kubernetesVersion: v1.34.0
  networkCIDR: 172.20.0.0/16
  networking:
    cni: {}
  subnets:
  - cidr: 172.20.32.0/19
    name: us-test-1a
    type: Public
    zone: us-test-1a
"#;

const IG_NODES: &str = r#"apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  creationTimestamp: "2016-12-10T22:42:28Z"
  labels:
    kops.k8s.io/cluster: minimal.example.com
  name: nodes
spec:
  machineType: t2.medium
  maxSize: 2
  minSize: 2
  role: Node
  subnets:
  - us-test-1a
"#;

const IG_MASTER: &str = r#"apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  creationTimestamp: "2016-12-10T22:42:28Z"
  labels:
    kops.k8s.io/cluster: minimal.example.com
  name: master-us-test-1a
spec:
  machineType: m3.medium
  maxSize: 1
  minSize: 1
  role: Master
  subnets:
  - us-test-1a
"#;

const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBgjCCASygAwIBAgIMFo3gINaZLHjisEcbMA0GCSqGSIb3DQEBCwUAMCIxIDAe\n-----END CERTIFICATE-----\n";
const KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAMshO9QDlN4KOVxXoC0On4nSNC4YTMews6U84dsVinB1H2zSO4rY\n-----END RSA PRIVATE KEY-----\n";
const SSH_KEY: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCtWu40XQo8dczLsCq0OWV+hxm9uV3WxeH9Kgh4sMzQxNtoU1pvW0XdjpkBesRKGoolfWeCLXWxpyQb1IaiMkKoz7MdhQ/6UKjMjP66aFWWp3pwD0uj0HuJ7tq4gKHKRYGTaZIRWpzUiANBrjugVgA+Sd7E/mYwc/DMXkIyRZbvhQ== admin@example";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn keyset_yaml() -> String {
    format!(
        "apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nmetadata:\n  creationTimestamp: null\n  name: kubernetes-ca\nspec:\n  keys:\n  - id: \"6982820025135291416230495506\"\n    privateMaterial: {}\n    publicMaterial: {}\n  primaryId: \"6982820025135291416230495506\"\n  type: Keypair\n",
        b64(KEY),
        b64(CERT)
    )
}

/// The objects the YAML above describes, built field by field.
fn expected_cluster() -> Cluster {
    let mut c = Cluster::new(NAME);
    c.metadata.creation_timestamp = Some("2016-12-10T22:42:27Z".into());
    c.metadata.generation = Some(3);
    c.spec = {
        let mut built = ClusterSpec::default();
        built.cloud_provider = Some("aws".into());
        built.config_base = Some("s3://state/minimal.example.com".into());
        built.kubernetes_version = Some("v1.34.0".into());
        built.network_cidr = Some("172.20.0.0/16".into());
        built.networking = Some({
            let mut built = NetworkingSpec::default();
            built.cni = Some(CNINetworkingSpec::default());
            built
        });
        built.subnets = Some(vec![{
            let mut built = ClusterSubnetSpec::default();
            built.cidr = Some("172.20.32.0/19".into());
            built.name = Some("us-test-1a".into());
            built.type_ = Some("Public".into());
            built.zone = Some("us-test-1a".into());
            built
        }]);
        built
    };
    c
}

fn expected_ig(name: &str, role: &str, machine: &str, size: i32) -> InstanceGroup {
    let mut g = InstanceGroup::new(name);
    g.metadata.creation_timestamp = Some("2016-12-10T22:42:28Z".into());
    g.metadata.labels = Some(BTreeMap::from([(CLUSTER_LABEL.into(), NAME.into())]));
    g.spec = {
        let mut built = InstanceGroupSpec::default();
        built.machine_type = Some(machine.into());
        built.max_size = Some(size);
        built.min_size = Some(size);
        built.role = Some(role.into());
        built.subnets = Some(vec!["us-test-1a".into()]);
        built
    };
    g
}

async fn write_kops_tree(store: &dyn Store) {
    let put = |p: String, d: String| async move {
        store
            .put(&p, Bytes::from(d), PutOptions::create())
            .await
            .unwrap();
    };
    put(format!("{NAME}/config"), CONFIG.into()).await;
    put(format!("{NAME}/instancegroup/nodes"), IG_NODES.into()).await;
    put(
        format!("{NAME}/instancegroup/master-us-test-1a"),
        IG_MASTER.into(),
    )
    .await;
    put(
        format!("{NAME}/pki/private/kubernetes-ca/keyset.yaml"),
        keyset_yaml(),
    )
    .await;
    let fp = ssh_fingerprint(SSH_KEY).unwrap();
    put(format!("{NAME}/pki/ssh/public/admin/{fp}"), SSH_KEY.into()).await;
    put(
        format!("{NAME}/secrets/kube"),
        r#"{"Data":"c2VjcmV0LXRva2Vu"}"#.into(),
    )
    .await;
    put(format!("{NAME}/cluster-completed.spec"), CONFIG.into()).await;
    put(format!("{NAME}/kops-version.txt"), "1.34.0".into()).await;
    put(
        "other.example.com/config".into(),
        CONFIG.replace(NAME, "other.example.com"),
    )
    .await;
    // Not clusters: a nested config and a top-level file.
    put("stray/sub/config".into(), "x".into()).await;
    put("README".into(), "x".into()).await;
}

/// Runs a test body on a multi-threaded runtime whose threads have the
/// default 2 MiB stacks, as an application's would. (These tests once needed
/// 16 MiB: decoding a Cluster took over 1 MiB of stack in debug builds.)
fn run<F, Fut>(body: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    const STACK: usize = 2 << 20;
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_stack_size(STACK)
                .enable_all()
                .build()
                .unwrap()
                .block_on(body())
        })
        .unwrap()
        .join()
        .unwrap();
}

fn registry(store: Arc<dyn Store>) -> Registry {
    Registry::new(
        store,
        Arc::new(FixedClock(Duration::from_secs(1_700_000_000))),
    )
}

async fn reads_kops_tree(store: Arc<dyn Store>) {
    write_kops_tree(store.as_ref()).await;
    let reg = registry(store);

    assert_eq!(
        reg.list_clusters().await.unwrap(),
        [NAME, "other.example.com"]
    );
    assert_eq!(
        reg.get_cluster(NAME).await.unwrap().value,
        expected_cluster()
    );
    let igs: Vec<InstanceGroup> = reg
        .list_instance_groups(NAME)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.value)
        .collect();
    assert_eq!(
        igs,
        [
            expected_ig("master-us-test-1a", "Master", "m3.medium", 1),
            expected_ig("nodes", "Node", "t2.medium", 2)
        ]
    );
    assert_eq!(
        reg.get_instance_group(NAME, "nodes").await.unwrap().value,
        expected_ig("nodes", "Node", "t2.medium", 2)
    );

    let ks = reg.get_keyset(NAME, "kubernetes-ca").await.unwrap().value;
    assert_eq!(ks.name(), "kubernetes-ca");
    assert_eq!(ks.spec.type_, Some(KeysetType::Keypair));
    let primary = ks.primary().unwrap();
    assert_eq!(primary.id.as_deref(), Some("6982820025135291416230495506"));
    assert_eq!(primary.public_material.as_deref(), Some(CERT.as_bytes()));
    assert_eq!(primary.private_material.as_deref(), Some(KEY.as_bytes()));
    assert!(
        !format!("{ks:?}").contains("RSA PRIVATE KEY"),
        "Debug leaks the key"
    );
    assert_eq!(reg.list_keysets(NAME).await.unwrap(), ["kubernetes-ca"]);

    let keys = reg.list_ssh_public_keys(NAME).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].1, SSH_KEY);
    assert_eq!(
        reg.get_secret(NAME, "kube").await.unwrap().data,
        b"secret-token"
    );
    assert_eq!(reg.list_secrets(NAME).await.unwrap(), ["kube"]);
    assert_eq!(
        reg.get_completed_spec(NAME).await.unwrap(),
        expected_cluster()
    );
    assert_eq!(
        reg.get_kops_version(NAME).await.unwrap().as_deref(),
        Some("1.34.0")
    );
}

#[test]
fn kops_tree_reads_back_memory() {
    run(kops_tree_reads_back_memory_body);
}

async fn kops_tree_reads_back_memory_body() {
    reads_kops_tree(Arc::new(MemoryStore::new())).await;
}

#[test]
fn kops_tree_reads_back_file() {
    run(kops_tree_reads_back_file_body);
}

async fn kops_tree_reads_back_file_body() {
    let dir = std::env::temp_dir().join(common::unique("layout"));
    reads_kops_tree(Arc::new(LocalStore::new(&dir))).await;
    // The file backend keeps kOps' paths as plain files.
    assert!(dir.join(NAME).join("instancegroup").join("nodes").is_file());
    assert!(
        dir.join(NAME)
            .join("pki/private/kubernetes-ca/keyset.yaml")
            .is_file()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn registry_writes_kops_paths_and_formats() {
    run(registry_writes_kops_paths_and_formats_body);
}

async fn registry_writes_kops_paths_and_formats_body() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let reg = registry(store.clone());

    let mut cluster = expected_cluster();
    cluster.metadata.creation_timestamp = None;
    cluster.metadata.generation = None;
    reg.create_cluster(&cluster).await.unwrap();
    let mut nodes = expected_ig("nodes", "Node", "t2.medium", 2);
    nodes.metadata.labels = None; // the registry adds the cluster label
    reg.create_instance_group(NAME, &nodes).await.unwrap();
    let mut ks = Keyset::new("kubernetes-ca", KeysetType::Keypair);
    ks.spec.primary_id = Some("6982820025135291416230495506".into());
    ks.spec.keys.push({
        let mut built = KeysetItem::default();
        built.id = Some("6982820025135291416230495506".into());
        built.public_material = Some(CERT.as_bytes().to_vec());
        built.private_material = Some(KEY.as_bytes().to_vec());
        built
    });
    reg.put_keyset(NAME, &ks, PutOptions::create())
        .await
        .unwrap();
    let fp = reg.add_ssh_public_key(NAME, SSH_KEY).await.unwrap();
    reg.create_secret(
        NAME,
        "kube",
        &Secret {
            data: b"secret-token".to_vec(),
        },
    )
    .await
    .unwrap();
    reg.put_completed_spec(&cluster).await.unwrap();
    reg.put_kops_version(NAME, "1.34.0").await.unwrap();

    let paths: Vec<String> = store
        .list("")
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.path)
        .collect();
    assert_eq!(
        paths,
        [
            format!("{NAME}/cluster-completed.spec"),
            format!("{NAME}/config"),
            format!("{NAME}/instancegroup/nodes"),
            format!("{NAME}/kops-version.txt"),
            format!("{NAME}/pki/private/kubernetes-ca/keyset.yaml"),
            format!("{NAME}/pki/ssh/public/admin/{fp}"),
            format!("{NAME}/secrets/kube"),
        ]
    );
    // The fingerprint is kOps' (MD5 of the key blob), computed independently.
    assert_eq!(fp.len(), 32);
    assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));

    let raw = |p: String| {
        let store = store.clone();
        async move { String::from_utf8(store.get(&p).await.unwrap().data.to_vec()).unwrap() }
    };
    // config: v1alpha2 YAML that kOps' decoder (here kops-api's strict one) reads.
    let config = raw(format!("{NAME}/config")).await;
    assert!(
        config.starts_with("apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\n"),
        "{config}"
    );
    let parsed = kops_api::manifest::parse(config.as_bytes(), "config").unwrap();
    let mut want = expected_cluster();
    want.metadata.generation = None;
    want.metadata.creation_timestamp = Some("2023-11-14T22:13:20Z".into());
    assert_eq!(parsed, [kops_api::manifest::Object::Cluster(want)]);

    let ig = raw(format!("{NAME}/instancegroup/nodes")).await;
    let ig_doc: serde_json::Value = serde_saphyr::from_str(&ig).unwrap();
    assert_eq!(ig_doc["kind"], "InstanceGroup");
    assert_eq!(ig_doc["metadata"]["labels"][CLUSTER_LABEL], NAME);

    let ks_text = raw(format!("{NAME}/pki/private/kubernetes-ca/keyset.yaml")).await;
    let ks_doc: serde_json::Value = serde_saphyr::from_str(&ks_text).unwrap();
    assert_eq!(ks_doc["apiVersion"], "kops.k8s.io/v1alpha2");
    assert_eq!(ks_doc["kind"], "Keyset");
    assert_eq!(ks_doc["metadata"]["name"], "kubernetes-ca");
    assert_eq!(ks_doc["spec"]["type"], "Keypair");
    // Ids are strings even when they look like numbers.
    assert_eq!(ks_doc["spec"]["primaryId"], "6982820025135291416230495506");
    assert_eq!(
        ks_doc["spec"]["keys"][0]["id"],
        "6982820025135291416230495506"
    );
    assert_eq!(ks_doc["spec"]["keys"][0]["publicMaterial"], b64(CERT));
    assert_eq!(ks_doc["spec"]["keys"][0]["privateMaterial"], b64(KEY));

    assert_eq!(
        raw(format!("{NAME}/secrets/kube")).await,
        format!(r#"{{"Data":"{}"}}"#, b64("secret-token"))
    );
    assert_eq!(
        raw(format!("{NAME}/pki/ssh/public/admin/{fp}")).await,
        SSH_KEY
    );
    assert_eq!(raw(format!("{NAME}/kops-version.txt")).await, "1.34.0");
}

#[test]
fn registry_compare_and_swap_history_and_delete() {
    run(registry_compare_and_swap_history_and_delete_body);
}

async fn registry_compare_and_swap_history_and_delete_body() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    write_kops_tree(store.as_ref()).await;
    let reg = registry(store.clone());

    let v0 = reg.get_cluster(NAME).await.unwrap();
    let mut c = v0.value.clone();
    c.spec.kubernetes_version = Some("v1.35.0".into());
    let v1 = reg.update_cluster(&c, &v0.version).await.unwrap();
    assert_eq!(
        v1.value.metadata.generation,
        Some(4),
        "spec change bumps generation"
    );
    assert_eq!(
        v1.value.metadata.creation_timestamp.as_deref(),
        Some("2016-12-10T22:42:27Z")
    );

    // A writer still holding v0 loses.
    let mut stale = v0.value.clone();
    stale.spec.kubernetes_version = Some("v1.33.0".into());
    let err = reg.update_cluster(&stale, &v0.version).await.unwrap_err();
    assert!(matches!(err, Error::Precondition { .. }), "{err:?}");
    assert_eq!(
        reg.get_cluster(NAME)
            .await
            .unwrap()
            .value
            .spec
            .kubernetes_version
            .as_deref(),
        Some("v1.35.0")
    );

    // An update without a spec change keeps the generation.
    let v2 = reg.update_cluster(&v1.value, &v1.version).await.unwrap();
    assert_eq!(v2.value.metadata.generation, Some(4));

    let history = reg.list_history(NAME).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].sequence, 1);
    assert_eq!(history[0].id, "000001-20231114T221320Z");
    assert_eq!(
        history[0].path,
        format!("{NAME}/history/000001-20231114T221320Z/config")
    );
    assert_eq!(
        reg.get_history(NAME, &history[0].id).await.unwrap(),
        expected_cluster()
    );

    // Restore the original spec.
    let restored = reg
        .restore_history(NAME, &history[0].id, &v2.version)
        .await
        .unwrap();
    assert_eq!(restored.value.spec, expected_cluster().spec);
    assert_eq!(restored.value.metadata.generation, Some(5));
    assert_eq!(reg.list_history(NAME).await.unwrap().len(), 3);
    // Restoring against a stale version fails like any update.
    assert!(
        reg.restore_history(NAME, &history[0].id, &v2.version)
            .await
            .unwrap_err()
            .is_conflict()
    );

    // Pruning keeps the newest entries.
    assert_eq!(reg.prune_history(NAME, 2).await.unwrap(), 1);
    let kept: Vec<u64> = reg
        .list_history(NAME)
        .await
        .unwrap()
        .iter()
        .map(|h| h.sequence)
        .collect();
    assert_eq!(kept, [2, 3]);
    // Numbering continues after pruning.
    let cur = reg.get_cluster(NAME).await.unwrap();
    reg.update_cluster(&cur.value, &cur.version).await.unwrap();
    assert_eq!(
        reg.list_history(NAME)
            .await
            .unwrap()
            .last()
            .unwrap()
            .sequence,
        4
    );

    // Instance groups: create conflict and CAS.
    let nodes = reg.get_instance_group(NAME, "nodes").await.unwrap();
    assert!(matches!(
        reg.create_instance_group(NAME, &nodes.value)
            .await
            .unwrap_err(),
        Error::AlreadyExists { .. }
    ));
    let mut bigger = nodes.value.clone();
    bigger.spec.max_size = Some(10);
    reg.update_instance_group(NAME, &bigger, &nodes.version)
        .await
        .unwrap();
    assert!(
        reg.update_instance_group(NAME, &bigger, &nodes.version)
            .await
            .unwrap_err()
            .is_conflict()
    );
    reg.delete_instance_group(NAME, "nodes").await.unwrap();
    assert_eq!(reg.list_instance_groups(NAME).await.unwrap().len(), 1);

    // A secret is never silently replaced.
    let s = Secret {
        data: b"x".to_vec(),
    };
    assert!(matches!(
        reg.create_secret(NAME, "kube", &s).await.unwrap_err(),
        Error::AlreadyExists { .. }
    ));

    // A file no tool writes blocks the delete, and nothing is deleted.
    store
        .put(
            &format!("{NAME}/notes.txt"),
            Bytes::from_static(b"mine"),
            PutOptions::create(),
        )
        .await
        .unwrap();
    let err = reg.delete_cluster(NAME).await.unwrap_err();
    assert!(err.to_string().contains("notes.txt"), "{err}");
    assert!(reg.get_cluster(NAME).await.is_ok());
    store.delete(&format!("{NAME}/notes.txt")).await.unwrap();

    // Deleting the cluster removes its whole tree, history and the journal of an
    // unfinished rolling update included, and nothing else.
    store
        .put(
            &format!("{NAME}/rolling-update/journal.json"),
            Bytes::from_static(b"{}"),
            PutOptions::create(),
        )
        .await
        .unwrap();
    let removed = reg.delete_cluster(NAME).await.unwrap();
    assert_eq!(removed, 14); // 7 kOps files + 3 history entries and their claims + journal
    assert!(store.list(&format!("{NAME}/")).await.unwrap().is_empty());
    assert_eq!(reg.list_clusters().await.unwrap(), ["other.example.com"]);
    assert!(reg.get_cluster(NAME).await.unwrap_err().is_not_found());
    assert!(store.get_opt("README").await.unwrap().is_some());
}

#[test]
fn registry_lock_names_holder_and_force_unlocks() {
    run(registry_lock_names_holder_and_force_unlocks_body);
}

async fn registry_lock_names_holder_and_force_unlocks_body() {
    let store = MemoryStore::new();
    let a = registry(Arc::new(store.clone()));
    let b = registry(Arc::new(store.clone()));
    let held = a
        .lock(NAME, &LockRequest::new("alice@ci", "update cluster"))
        .await
        .unwrap();
    let err = b
        .lock(NAME, &LockRequest::new("bob", "rolling-update"))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("locked by alice@ci for update cluster since 2023-11-14T22:13:20Z"),
        "{msg}"
    );
    assert_eq!(b.lock_info(NAME).await.unwrap().unwrap().holder, "alice@ci");
    let id = held.info().id.clone();
    drop(held); // a crashed holder: the lock stays
    assert!(b.lock(NAME, &LockRequest::new("bob", "x")).await.is_err());
    assert_eq!(b.force_unlock(NAME, &id).await.unwrap().holder, "alice@ci");
    b.lock(NAME, &LockRequest::new("bob", "x"))
        .await
        .unwrap()
        .release()
        .await
        .unwrap();
    assert!(a.lock_info(NAME).await.unwrap().is_none());
}

/// Two registries over two file-store instances modify one cluster
/// concurrently; every change lands, and every replaced version is in history.
#[test]
fn registry_concurrent_modifications_lose_nothing() {
    run(registry_concurrent_modifications_lose_nothing_body);
}

async fn registry_concurrent_modifications_lose_nothing_body() {
    let dir = std::env::temp_dir().join(common::unique("reg-race"));
    // Every replaced version is kept (no retention limit), so the history shows each of
    // the 2N writes exactly once.
    let a = registry(Arc::new(LocalStore::new(&dir))).with_history_limit(None);
    let b = registry(Arc::new(LocalStore::new(&dir))).with_history_limit(None);
    let mut c = expected_cluster();
    c.metadata.annotations = Some(BTreeMap::from([("count".to_string(), "0".to_string())]));
    a.create_cluster(&c).await.unwrap();
    const N: usize = 50;
    let run = |reg: Registry| async move {
        for _ in 0..N {
            reg.modify_cluster(NAME, 1000, |c| {
                let ann = c.metadata.annotations.get_or_insert_with(Default::default);
                let n: u64 = ann.get("count").map_or(0, |v| v.parse().unwrap());
                ann.insert("count".into(), (n + 1).to_string());
                Ok(())
            })
            .await
            .unwrap();
        }
    };
    let (ra, rb) = tokio::join!(tokio::spawn(run(a.clone())), tokio::spawn(run(b)));
    ra.unwrap();
    rb.unwrap();
    let end = a.get_cluster(NAME).await.unwrap().value;
    let ann: &BTreeMap<String, String> = end.metadata.annotations.as_ref().unwrap();
    assert_eq!(ann["count"], (2 * N).to_string());
    let history = a.list_history(NAME).await.unwrap();
    assert_eq!(history.len(), 2 * N);
    let seqs: Vec<u64> = history.iter().map(|h| h.sequence).collect();
    assert_eq!(seqs, (1..=2 * N as u64).collect::<Vec<_>>());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store whose writes under `history/` fail, as a store with a narrower
/// write permission or a full disk might.
#[derive(Debug)]
struct NoHistory(MemoryStore);

#[async_trait::async_trait]
impl Store for NoHistory {
    async fn get(&self, path: &str) -> kops_statestore::Result<kops_statestore::GetResult> {
        self.0.get(path).await
    }
    async fn put(
        &self,
        path: &str,
        data: Bytes,
        options: PutOptions,
    ) -> kops_statestore::Result<kops_statestore::Version> {
        if path.contains("/history/") {
            return Err(Error::Invalid {
                what: path.to_string(),
                reason: "history writes are refused by this test store".into(),
            });
        }
        self.0.put(path, data, options).await
    }
    async fn delete_opts(
        &self,
        path: &str,
        options: kops_statestore::DeleteOptions,
    ) -> kops_statestore::Result<()> {
        self.0.delete_opts(path, options).await
    }
    async fn list(
        &self,
        prefix: &str,
    ) -> kops_statestore::Result<Vec<kops_statestore::ObjectMeta>> {
        self.0.list(prefix).await
    }
    fn url(&self) -> String {
        self.0.url()
    }
}

/// An update that was stored is reported as done even when saving the
/// replaced version to history fails: the caller must not retry a write that won.
#[test]
fn update_succeeds_when_history_cannot_be_saved() {
    run(update_succeeds_when_history_cannot_be_saved_body);
}

async fn update_succeeds_when_history_cannot_be_saved_body() {
    let store: Arc<dyn Store> = Arc::new(NoHistory(MemoryStore::new()));
    write_kops_tree(store.as_ref()).await;
    let reg = registry(store.clone());
    let v0 = reg.get_cluster(NAME).await.unwrap();
    let mut c = v0.value.clone();
    c.spec.kubernetes_version = Some("v1.35.0".into());
    let v1 = reg.update_cluster(&c, &v0.version).await.unwrap();
    assert_ne!(v1.version, v0.version);
    let now = reg.get_cluster(NAME).await.unwrap();
    assert_eq!(now.version, v1.version);
    assert_eq!(
        now.value.spec.kubernetes_version.as_deref(),
        Some("v1.35.0")
    );
    assert!(reg.list_history(NAME).await.unwrap().is_empty());
}

#[test]
fn registry_keeps_additional_objects_where_kops_does() {
    run(registry_keeps_additional_objects_where_kops_does_body);
}

async fn registry_keeps_additional_objects_where_kops_does_body() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let reg = registry(store.clone());
    assert!(reg.get_additional_objects(NAME).await.unwrap().is_empty());

    let scheduler = serde_json::json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta2",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"burst": 100, "qps": 3.1},
    });
    let other = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "extra", "namespace": "kube-system"},
        "data": {"a": "b"},
    });
    reg.put_additional_objects(NAME, &[scheduler.clone(), other.clone()])
        .await
        .unwrap();
    let path = format!("{NAME}/clusteraddons/default");
    let text = String::from_utf8(store.get(&path).await.unwrap().data.to_vec()).unwrap();
    assert!(text.contains("kind: KubeSchedulerConfiguration"), "{text}");
    assert!(text.contains("\n---\n"), "two documents: {text}");
    assert_eq!(
        reg.get_additional_objects(NAME).await.unwrap(),
        vec![scheduler, other]
    );

    // A kOps object is not an additional object; nothing is written.
    let kops = serde_json::json!({"apiVersion": "kops.k8s.io/v1alpha2", "kind": "Cluster"});
    let err = reg.put_additional_objects(NAME, &[kops]).await.unwrap_err();
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        err.to_string().contains("additional objects")
            && cause.as_deref().is_some_and(|c| c.contains("kOps object")),
        "{err}: {cause:?}"
    );
    assert_eq!(reg.get_additional_objects(NAME).await.unwrap().len(), 2);

    // An empty list removes the file.
    reg.put_additional_objects(NAME, &[]).await.unwrap();
    assert!(store.get_opt(&path).await.unwrap().is_none());
}
