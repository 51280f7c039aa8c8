//! An update refuses a state last written by a newer kOps release (its
//! `kops-version.txt`) unless the downgrade is allowed, as kOps' `--allow-kops-downgrade`:
//! on AWS' workflow and on the one GCE and Hetzner share, on the mock clouds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kops_model::api::manifest::{self, Object};
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions};
use kops_model::gce::cloud::{GceCloud, GceResourceType, ListQuery};
use kops_model::{DEFAULT_KOPS_RELEASE, DnsType, Error, NewClusterOptions, gce, new_cluster};
use kops_statestore::{MemoryStore, Registry, Store, SystemClock};

const STORE: &str = "memfs://downgrade";

fn registry(store: &Arc<MemoryStore>) -> Registry {
    Registry::new(store.clone() as Arc<dyn Store>, Arc::new(SystemClock))
}

/// The error of a refused downgrade names the file and both releases.
#[track_caller]
fn assert_refused(err: &Error, name: &str, newer: &str) {
    let msg = err.to_string();
    assert!(matches!(err, Error::Invalid { .. }), "{msg}");
    assert!(
        msg.starts_with(&format!("{name}/kops-version.txt: ")),
        "{msg}"
    );
    assert!(
        msg.contains(newer) && msg.contains(DEFAULT_KOPS_RELEASE),
        "{msg}"
    );
}

/// Runs `test` on a 64 MiB stack: in a debug build an apply polled from one future needs
/// more than a test thread's stack.
fn on_a_large_stack<F: std::future::Future<Output = ()>>(
    test: impl FnOnce() -> F + Send + 'static,
) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(test())
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn an_aws_update_refuses_a_newer_releases_state_unless_allowed() {
    on_a_large_stack(aws_downgrade);
}

#[test]
fn a_gce_update_refuses_a_newer_releases_state_unless_allowed() {
    on_a_large_stack(gce_downgrade);
}

async fn aws_downgrade() {
    const NAME: &str = "downgrade.example.com";
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: d, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "downgrade test",
    )
    .unwrap()
    .build()
    .unwrap();
    let (cluster, groups) = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_dns(DnsType::None)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    let reg = registry(&store);
    reg.create_cluster(&cluster).await.unwrap();
    let update = |allow: bool| {
        let store = store.clone();
        let (cluster, groups, cloud) = (&cluster, &groups, &cloud);
        async move {
            let opts = DiscoverOptions::default().with_state_store(store, STORE);
            let ctx = kops_model::aws::discover(cloud, cluster, groups, &opts)
                .await
                .unwrap();
            UpdateCluster::new(
                ctx,
                UpdateOptions::default()
                    .with_unreadable_config_base(true)
                    .with_allow_kops_downgrade(allow),
            )
            .unwrap()
        }
    };
    let api: &dyn AwsCloud = &cloud;

    // A newer release wrote the state: nothing is applied, nothing is written.
    reg.put_kops_version(NAME, "99.1.0").await.unwrap();
    let strict = update(false).await;
    let plan = strict.plan(api).await.unwrap();
    assert!(plan.plan.has_changes());
    let err = strict
        .apply(api, &reg, &plan, ApplyOptions::default())
        .await
        .unwrap_err();
    assert_refused(&err, NAME, "99.1.0");
    assert!(
        strict.plan(api).await.unwrap().plan.has_changes(),
        "nothing was applied"
    );
    assert_eq!(
        reg.get_kops_version(NAME).await.unwrap().as_deref(),
        Some("99.1.0")
    );

    // An older release's state, and this release's own, are updated.
    reg.put_kops_version(NAME, "1.28.0").await.unwrap();
    let older = update(false).await;
    let plan = older.plan(api).await.unwrap();
    older
        .apply(api, &reg, &plan, ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(
        reg.get_kops_version(NAME).await.unwrap().as_deref(),
        Some(DEFAULT_KOPS_RELEASE)
    );

    // Allowed, the newer release's state is updated and the file says this release.
    reg.put_kops_version(NAME, "99.1.0").await.unwrap();
    let allowed = update(true).await;
    let plan = allowed.plan(api).await.unwrap();
    allowed
        .apply(api, &reg, &plan, ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(
        reg.get_kops_version(NAME).await.unwrap().as_deref(),
        Some(DEFAULT_KOPS_RELEASE)
    );

    // A file that is no version is an error naming it, unless allowed.
    reg.put_kops_version(NAME, "latest").await.unwrap();
    let err = update(false)
        .await
        .apply(api, &reg, &plan, ApplyOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{NAME}/kops-version.txt: \"latest\"")),
        "{err}"
    );
}

const GCE_NAME: &str = "downgrade-gce.example.com";

fn gce_spec() -> String {
    format!(
        r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: {GCE_NAME}
spec:
  api:
    loadBalancer:
      type: Public
  cloudProvider: gce
  configBase: {STORE}/{GCE_NAME}
  etcdClusters:
  - etcdMembers:
    - instanceGroup: control-plane-us-test1-a
      name: a
    name: main
  - etcdMembers:
    - instanceGroup: control-plane-us-test1-a
      name: a
    name: events
  kubernetesVersion: v1.34.1
  networking:
    cilium: {{}}
  nonMasqueradeCIDR: 100.64.0.0/10
  project: testproject
  subnets:
  - name: us-test1
    region: us-test1
    type: Public
  topology:
    dns:
      type: None
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: control-plane-us-test1-a
spec:
  image: ubuntu-os-cloud/ubuntu-2404-noble-amd64-v20260615
  machineType: e2-medium
  maxSize: 1
  minSize: 1
  role: Master
  subnets: [us-test1]
  zones: [us-test1-a]
"#
    )
}

async fn gce_downgrade() {
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(gce_spec().as_bytes(), "spec").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(g) => groups.push(g),
            _ => {}
        }
    }
    let cluster = cluster.unwrap();
    let cloud = kops_mock::gce::MockGce::new("testproject", "us-test1");
    let api: &dyn GceCloud = &cloud;
    let store = Arc::new(MemoryStore::new());
    let reg = registry(&store);
    reg.create_cluster(&cluster).await.unwrap();
    let update = async |allow: bool| {
        let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
        let ctx = gce::discover(api, &cluster, &groups, &opts).await.unwrap();
        gce::UpdateCluster::new(
            ctx,
            gce::UpdateOptions::default()
                .with_unreadable_config_base(true)
                .with_allow_kops_downgrade(allow),
        )
        .unwrap()
    };
    let templates = async || {
        api.list(&ListQuery::new(GceResourceType::InstanceTemplate))
            .await
            .unwrap()
            .len()
    };

    reg.put_kops_version(GCE_NAME, "v99.0.0").await.unwrap();
    let strict = update(false).await;
    let plan = strict.plan(api).await.unwrap();
    let err = strict
        .apply(api, &reg, &plan, gce::ApplyOptions::default())
        .await
        .unwrap_err();
    assert_refused(&err, GCE_NAME, "v99.0.0");
    assert_eq!(templates().await, 0, "nothing was applied");

    let allowed = update(true).await;
    let plan = allowed.plan(api).await.unwrap();
    allowed
        .apply(api, &reg, &plan, gce::ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(templates().await, 1);
    assert_eq!(
        reg.get_kops_version(GCE_NAME).await.unwrap().as_deref(),
        Some(DEFAULT_KOPS_RELEASE)
    );
}
