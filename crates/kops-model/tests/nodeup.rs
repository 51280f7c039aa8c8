//! Nodes that boot: a cluster created and updated on the mock gets every keyset kOps
//! makes, nodeup configs pinned by the boot config's hash, kOps' bootstrap script, and
//! no private key in any plan, error, file rendered for Terraform or dump.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use base64::Engine as _;
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DnsType, NewClusterOptions, new_cluster, pki};
use kops_statestore::{MemoryStore, Registry, Store, StoreExt as _, SystemClock};
use sha2::{Digest, Sha256};

const NAME: &str = "boot.example.com";
const STORE: &str = "memfs://clusters.example.com";

fn mock() -> kops_mock::MockAws {
    kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: boot, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "nodeup test",
    )
    .unwrap()
    .build()
    .unwrap()
}

async fn update(store: &Arc<MemoryStore>) -> UpdateCluster {
    update_with(store, |_| {}).await
}

/// The test cluster: one zone, no DNS, Kubernetes 1.34.1 on the mock's image.
fn spec() -> (
    kops_api::v1alpha2::Cluster,
    Vec<kops_api::v1alpha2::InstanceGroup>,
) {
    new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_dns(DnsType::None)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap()
}

async fn update_with(
    store: &Arc<MemoryStore>,
    edit: impl FnOnce(&mut [kops_api::v1alpha2::InstanceGroup]),
) -> UpdateCluster {
    let (cluster, mut groups) = spec();
    edit(&mut groups);
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&mock(), &cluster, &groups, &opts).await.unwrap();
    UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("nodeup test")
            .with_unreadable_config_base(true),
    )
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_cluster_on_the_mock_boots_from_kops_files_and_leaks_no_key() {
    let cloud = mock();
    let api: &dyn AwsCloud = &cloud;
    let store = Arc::new(MemoryStore::new());
    let up = update(&store).await;
    let mut outputs: Vec<(String, String)> = Vec::new();

    let plan = up.plan(api).await.unwrap();
    outputs.push(("plan (debug)".into(), format!("{plan:?}")));
    outputs.push(("plan (text)".into(), format!("{}", plan.plan)));
    let registry = Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock));
    let applied = up
        .apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();
    outputs.push(("applied".into(), format!("{applied:?}")));

    // Every keyset kOps makes for the spec is in the keystore, in kOps' format.
    let full = &up.context().cluster;
    for name in pki::keyset_names(full) {
        let got = store
            .get_opt(&format!("{NAME}/{}", pki::keyset_path(&name)))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("keyset {name} stored"));
        let ks = kops_api::keyset::Keyset::from_yaml(&text(&got.data), &name).unwrap();
        let primary = ks.primary().expect("a primary");
        let cert = pki::Certificate::from_pem(primary.public_material.as_ref().unwrap()).unwrap();
        assert!(cert.is_ca, "{name}");
    }

    // The nodeup config of each group, and the boot config in its user-data that pins
    // it by hash.
    let tf = up.render_terraform().await.unwrap();
    for (path, bytes) in &tf.files {
        outputs.push((format!("terraform {path}"), text(bytes)));
    }
    for ig in ["control-plane-us-test-1a", "nodes-us-test-1a"] {
        let role = if ig.starts_with("control") {
            "control-plane"
        } else {
            "node"
        };
        let config = store
            .get_opt(&format!("{NAME}/igconfig/{role}/{ig}/nodeupconfig.yaml"))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("nodeup config of {ig}"));
        let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&config.data));
        let config = text(&config.data);
        assert!(config.contains("KeypairIDs:\n  "), "{config}");
        assert!(config.contains("@https://dl.k8s.io/release/v1.34.1/bin/linux/amd64/kubelet"));
        let user_data = tf
            .files
            .iter()
            .find(|(p, _)| {
                p.contains("aws_launch_template_") && p.contains(ig) && p.ends_with("_user_data")
            })
            .map(|(_, b)| text(b))
            .unwrap_or_else(|| panic!("user-data of {ig}"));
        assert!(user_data.starts_with("#!/bin/bash\nset -o errexit\n"));
        assert!(
            user_data.contains(&format!("NodeupConfigHash: {hash}\n")),
            "{ig}: the boot config pins the stored nodeup config"
        );
        assert!(user_data.contains("NODEUP_HASH_AMD64=c86e072f"));
    }

    // Errors name what is wrong and carry no key either.
    let err = kops_model::nodeup::assets::fetch_missing_hashes(
        &mut up
            .context()
            .cluster_context
            .clone()
            .with_kops_release("0.0.0-unknown"),
        &NoHashes,
    )
    .await
    .unwrap_err();
    outputs.push(("error".into(), format!("{err} {err:?}")));
    assert!(err.to_string().contains("nodeup"), "{err}");

    let dump = format!("{:?}", up.context());
    outputs.push(("context dump".into(), dump));
    for (what, out) in &outputs {
        assert!(!out.contains("PRIVATE KEY"), "{what} shows a private key");
    }
}

struct NoHashes;

#[async_trait::async_trait]
impl kops_model::nodeup::assets::HashFetcher for NoHashes {
    async fn fetch(&self, _url: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// A hash the table lacks comes from `<url>.sha256` through the fetcher; here it
/// serves the canonical URL's file on loopback semantics (an in-process fetcher).
#[tokio::test]
async fn a_missing_nodeup_hash_is_fetched_from_its_sha256_file() {
    struct Served;
    #[async_trait::async_trait]
    impl kops_model::nodeup::assets::HashFetcher for Served {
        async fn fetch(&self, url: &str) -> Result<Option<String>, String> {
            Ok(url
                .starts_with("https://artifacts.k8s.io/binaries/kops/9.9.9/linux/")
                .then(|| format!("{}  nodeup\n", "ab".repeat(32))))
        }
    }
    let store = Arc::new(MemoryStore::new());
    let up = update(&store).await;
    let mut ctx = up
        .context()
        .cluster_context
        .clone()
        .with_kops_release("9.9.9");
    kops_model::nodeup::assets::fetch_missing_hashes(&mut ctx, &Served)
        .await
        .unwrap();
    assert_eq!(
        ctx.asset_hashes
            .get("https://artifacts.k8s.io/binaries/kops/9.9.9/linux/amd64/nodeup")
            .map(String::as_str),
        Some("ab".repeat(32).as_str())
    );
}

/// The scheduler's configuration starts from the cluster's additional
/// `KubeSchedulerConfiguration` (its API version and client settings kept, the
/// kubeconfig path set), as kOps does; two of them are refused.
#[tokio::test]
async fn the_scheduler_configuration_starts_from_the_additional_object() {
    let (cluster, groups) = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_dns(DnsType::None)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap();
    let scheduler = serde_json::json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1beta2",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"burst": 100, "qps": 3.1},
        "percentageOfNodesToScore": 50,
    });
    let cloud = mock();
    let api: &dyn AwsCloud = &cloud;
    let store = Arc::new(MemoryStore::new());
    let opts = DiscoverOptions::default()
        .with_state_store(store.clone(), STORE)
        .with_additional_objects(vec![scheduler.clone()]);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let up = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("nodeup test")
            .with_unreadable_config_base(true),
    )
    .unwrap();
    let plan = up.plan(api).await.unwrap();
    let registry = Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock));
    up.apply(api, &registry, &plan, ApplyOptions::default())
        .await
        .unwrap();
    let ig = groups
        .iter()
        .find(|g| g.name().starts_with("control-plane"))
        .unwrap()
        .name()
        .to_owned();
    let got = store
        .get_opt(&format!(
            "{NAME}/igconfig/control-plane/{ig}/nodeupconfig.yaml"
        ))
        .await
        .unwrap()
        .expect("the control plane's nodeup config");
    let config: serde_json::Value = serde_saphyr::from_str(&text(&got.data)).unwrap();
    let file = config["FileAssets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/var/lib/kube-scheduler/config.yaml")
        .expect("the scheduler's configuration file");
    let written: serde_json::Value =
        serde_saphyr::from_str(file["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1beta2",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {
                "burst": 100,
                "qps": 3.1,
                "kubeconfig": "/var/lib/kube-scheduler/kubeconfig",
            },
            "percentageOfNodesToScore": 50,
        })
    );

    // Two scheduler configurations: the model names the problem.
    let opts = DiscoverOptions::default()
        .with_state_store(Arc::new(MemoryStore::new()), STORE)
        .with_additional_objects(vec![scheduler.clone(), scheduler]);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let err = match UpdateCluster::new(ctx, UpdateOptions::default()) {
        Ok(_) => panic!("two KubeSchedulerConfiguration objects must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("KubeSchedulerConfiguration"), "{err}");
}

/// With `compressUserData` the boot config travels gzipped and base64-encoded; the
/// system's own `base64` and `gzip` turn the line of the script back into the boot
/// config that pins the group's nodeup config, and the script is smaller than the plain one.
#[test]
fn compressed_user_data_decodes_with_the_system_tools() {
    // Two updates in one test: more stack than a test thread has in a debug build.
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(compressed_user_data())
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn compressed_user_data() {
    let store = Arc::new(MemoryStore::new());
    let plain = update(&store).await.render_terraform().await.unwrap();
    let store = Arc::new(MemoryStore::new());
    let up = update_with(&store, |groups| {
        for g in groups {
            g.spec.compress_user_data = Some(true);
        }
    })
    .await;
    let tf = up.render_terraform().await.unwrap();
    let user_data = |files: &std::collections::BTreeMap<String, Vec<u8>>| {
        files
            .iter()
            .find(|(p, _)| p.contains("aws_launch_template_nodes") && p.ends_with("_user_data"))
            .map(|(_, b)| text(b))
            .expect("the nodes' user-data")
    };
    let (plain, packed) = (user_data(&plain.files), user_data(&tf.files));
    assert!(
        packed.len() < plain.len(),
        "{} >= {}",
        packed.len(),
        plain.len()
    );
    let line = packed
        .lines()
        .find(|l| l.contains("| base64 -d | gzip -d > conf/kube_env.yaml"))
        .expect("the compressed boot config line");
    assert!(
        !packed.contains("NodeupConfigHash:"),
        "the boot config is not in clear"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("conf")).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let boot = std::fs::read_to_string(dir.path().join("conf/kube_env.yaml")).unwrap();
    let config = tf
        .files
        .iter()
        .find(|(p, _)| p.contains("nodeupconfig-nodes-us-test-1a") && p.ends_with("_content"))
        .map(|(_, b)| b)
        .expect("the nodes' nodeup config");
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(config));
    assert!(
        boot.contains(&format!("NodeupConfigHash: {hash}\n")),
        "{boot}"
    );
    assert!(
        plain.contains("NodeupConfigHash: "),
        "without compression it is in clear"
    );
}

/// kOps' kubelet version skew rule: while the control plane runs an older Kubernetes than
/// the spec names (an upgrade under way), the machines that run no API server keep the
/// control plane's version, kubelet included; the control plane gets the spec's. A
/// control plane already at the spec's version (or newer) changes nothing.
#[tokio::test]
async fn nodes_keep_the_control_planes_version_during_an_upgrade() {
    async fn configs(running: Option<&str>) -> (String, String) {
        let (cluster, groups) = spec();
        let store = Arc::new(MemoryStore::new());
        let opts = DiscoverOptions::default()
            .with_state_store(store.clone(), STORE)
            .with_control_plane_version(running.map(str::to_owned));
        let ctx = discover(&mock(), &cluster, &groups, &opts).await.unwrap();
        let up = UpdateCluster::new(ctx, UpdateOptions::default()).unwrap();
        let tf = up.render_terraform().await.unwrap();
        let config = |group: &str| {
            tf.files
                .iter()
                .find(|(p, _)| p.ends_with(&format!("nodeupconfig-{group}_content")))
                .map(|(_, b)| text(b))
                .unwrap_or_else(|| panic!("no nodeup config of {group}"))
        };
        (
            config("control-plane-us-test-1a"),
            config("nodes-us-test-1a"),
        )
    }
    let (cp, nodes) = Box::pin(configs(Some("v1.33.5"))).await;
    assert!(cp.contains("KubernetesVersion: 1.34.1"), "{cp}");
    assert!(cp.contains("/v1.34.1/bin/linux/amd64/kubelet"), "{cp}");
    assert!(nodes.contains("KubernetesVersion: 1.33.5"), "{nodes}");
    assert!(
        nodes.contains("/v1.33.5/bin/linux/amd64/kubelet"),
        "{nodes}"
    );
    assert!(!nodes.contains("/v1.34.1/"), "{nodes}");
    for running in [None, Some("v1.34.1"), Some("1.35.0")] {
        let (_, nodes) = Box::pin(configs(running)).await;
        assert!(
            nodes.contains("KubernetesVersion: 1.34.1"),
            "{running:?}: {nodes}"
        );
    }
}
