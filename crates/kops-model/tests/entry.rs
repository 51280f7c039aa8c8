//! The library entry points on the mock cloud: `new_cluster` -> `discover` ->
//! `UpdateCluster` plan / apply / Terraform, as the CLI and embedders call them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kops_model::aws::cloud::{AwsCloud, ListQuery, ResourceType};
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DEFAULT_KOPS_RELEASE, DnsType, Error, NewClusterOptions, new_cluster};
use kops_statestore::{LockRequest, MemoryStore, Registry, Store, StoreExt as _, SystemClock};

const NAME: &str = "entry.example.com";
const STORE: &str = "memfs://clusters.example.com";

fn mock() -> kops_mock::MockAws {
    kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: entry, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "entry test",
    )
    .unwrap()
    .build()
    .unwrap()
}

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

async fn setup(allow_memfs: bool) -> (kops_mock::MockAws, Arc<MemoryStore>, UpdateCluster) {
    let cloud = mock();
    let store = Arc::new(MemoryStore::new());
    let (cluster, groups) = spec();
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder("entry test")
            .with_unreadable_config_base(allow_memfs),
    )
    .unwrap();
    (cloud, store, update)
}

fn registry(store: &Arc<MemoryStore>) -> Registry {
    Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock))
}

#[tokio::test]
async fn managed_files_go_to_the_config_base_in_the_clusters_own_store() {
    let (cloud, store, update) = setup(true).await;
    let api: &dyn AwsCloud = &cloud;
    let plan = update.plan(api).await.unwrap();
    assert!(plan.plan.has_changes());
    update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .unwrap();

    // The files are in the store, under the cluster's config base...
    let bootstrap = store
        .get_opt(&format!("{NAME}/addons/bootstrap-channel.yaml"))
        .await
        .unwrap()
        .expect("the bootstrap channel in the config base");
    assert!(String::from_utf8_lossy(&bootstrap.data).contains("kind: Addons"));
    let version = store
        .get_opt(&format!("{NAME}/kops-version.txt"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&version.data), DEFAULT_KOPS_RELEASE);
    // ...and none went to an S3 bucket of the cloud.
    let objects = api
        .list(&ListQuery::new(ResourceType::S3Object))
        .await
        .unwrap_or_default();
    assert!(objects.is_empty(), "S3 objects in the cloud: {objects:?}");

    // Applied, the plan is empty: the files are found where they were written.
    let again = update.plan(api).await.unwrap();
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());
}

#[tokio::test]
async fn direct_apply_refuses_a_config_base_nodes_cannot_read() {
    let (cloud, store, update) = setup(false).await;
    let api: &dyn AwsCloud = &cloud;
    let plan = update.plan(api).await.unwrap();
    let before = cloud.resource_ids();
    let err = update
        .apply(api, &registry(&store), &plan, ApplyOptions::default())
        .await
        .expect_err("a memfs:// config base must be refused on a real cloud");
    let msg = err.to_string();
    assert!(matches!(err, Error::Invalid { .. }), "{msg}");
    assert!(msg.starts_with("spec.configBase: memfs://"), "{msg}");
    assert!(msg.contains("s3://"), "the error says what to use: {msg}");
    assert_eq!(cloud.resource_ids(), before, "nothing was applied");
    assert!(
        store.list(NAME).await.unwrap().is_empty(),
        "nothing was written"
    );
    // The lock was never taken.
    let reg = registry(&store);
    let lock = reg
        .lock(NAME, &LockRequest::new("after", "check"))
        .await
        .unwrap();
    lock.release().await.unwrap();
}

#[tokio::test]
async fn static_pods_name_the_kops_release_images() {
    let (_cloud, _store, update) = setup(true).await;
    let tf = update.render_terraform().await.unwrap();
    let pod = tf
        .files
        .get("data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
        .expect("the healthcheck manifest");
    let pod = String::from_utf8_lossy(pod);
    assert!(
        pod.contains(&format!(
            "image: registry.k8s.io/kops/kube-apiserver-healthcheck:{DEFAULT_KOPS_RELEASE}\n"
        )),
        "{pod}"
    );
    // memfs:// config bases render to kOps' test bucket, as kOps' MemFSPath does.
    let main = String::from_utf8_lossy(&tf.files["kubernetes.tf"]).into_owned();
    assert!(
        main.contains("bucket                 = \"testingBucket\"")
            || main.contains("\"testingBucket\""),
        "{main}"
    );
}

#[test]
fn new_cluster_names_the_bad_option() {
    let err = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_networking("bogus"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("networking: unknown CNI \"bogus\""),
        "{err}"
    );
    let err =
        new_cluster(&NewClusterOptions::new(NAME, STORE).with_zones(["us-test-1a", "eu-west-1b"]))
            .unwrap_err();
    assert!(
        err.to_string()
            .contains("eu-west-1b is not in region us-test-1"),
        "{err}"
    );
    let (cluster, groups) = spec();
    assert_eq!(
        cluster.spec.config_base.as_deref(),
        Some("memfs://clusters.example.com/entry.example.com")
    );
    assert_eq!(groups.len(), 2);
}

#[test]
fn every_shape_create_cluster_offers_completes_and_validates() {
    use kops_model::{Cloud, Topology};
    for cloud in [Cloud::Aws, Cloud::Gce] {
        for topology in [Topology::Public, Topology::Private] {
            for dns in [DnsType::Public, DnsType::Private, DnsType::None] {
                let gce = matches!(cloud, Cloud::Gce);
                let mut o = NewClusterOptions::new(NAME, STORE)
                    .with_cloud(cloud)
                    .with_zones([if gce { "us-test1-a" } else { "us-test-1a" }])
                    .with_topology(topology)
                    .with_dns(dns)
                    .with_image(Some("image-1".into()))
                    .with_kubernetes_version("v1.34.1");
                if gce {
                    o = o.with_project(Some("testproject".into()));
                }
                let what = format!("{cloud:?} {topology:?} {dns:?}");
                let (cluster, groups) = new_cluster(&o).unwrap_or_else(|e| panic!("{what}: {e}"));
                let opts = kops_api::defaults::PopulateOptions::default();
                if let Err(e) = kops_model::complete(&cluster, &groups, &opts) {
                    let mut chain = e.to_string();
                    let mut source = std::error::Error::source(&e);
                    while let Some(s) = source {
                        chain.push_str(&format!(": {s}"));
                        source = s.source();
                    }
                    panic!("{what}: {chain}");
                }
            }
        }
    }
}
