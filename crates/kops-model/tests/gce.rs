//! The GCE model against the in-memory GCE mock: apply a public and a private cluster,
//! re-plan (empty), change a machine type (exactly that change, applied by replacing the
//! template), re-plan (empty), and count the API calls of a no-op plan for 2 and for 20
//! instance groups behind the list cache.

use std::sync::Arc;

use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_cloud_gce::cache::ListCache;
use kops_cloud_gce::{GceCloud, GceResourceType};
use kops_mock::gce::MockGce;
use kops_model::aws::DiscoverOptions;
use kops_model::gce::{self, GceModelContext};
use kops_statestore::MemoryStore;
use kops_tasks::LifecycleOverrides;

fn spec(name: &str, topology: &str, node_groups: usize) -> String {
    let (subnet_type, dns) = match topology {
        "private" => ("Private", "None"),
        _ => ("Public", "Public"),
    };
    let mut s = format!(
        r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: {name}
spec:
  api:
    loadBalancer:
      type: Public
  channel: stable
  cloudProvider: gce
  configBase: memfs://tests/{name}
  etcdClusters:
  - etcdMembers:
    - instanceGroup: master-us-test1-a
      name: a
    name: main
  - etcdMembers:
    - instanceGroup: master-us-test1-a
      name: a
    name: events
  iam:
    legacy: false
  kubernetesApiAccess: [0.0.0.0/0]
  kubernetesVersion: v1.32.0
  networking:
    cni: {{}}
  nonMasqueradeCIDR: 100.64.0.0/10
  project: testproject
  sshAccess: [0.0.0.0/0]
  subnets:
  - name: us-test1
    region: us-test1
    type: {subnet_type}
  topology:
    dns:
      type: {dns}
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: master-us-test1-a
  labels:
    kops.k8s.io/cluster: {name}
spec:
  image: ubuntu-os-cloud/ubuntu-2604-resolute-amd64-v20221018
  machineType: e2-medium
  maxSize: 1
  minSize: 1
  role: Master
  subnets: [us-test1]
  zones: [us-test1-a]
"#
    );
    for i in 0..node_groups {
        s.push_str(&format!(
            r#"---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: nodes-{i}
  labels:
    kops.k8s.io/cluster: {name}
spec:
  image: ubuntu-os-cloud/ubuntu-2604-resolute-amd64-v20221018
  machineType: e2-medium
  maxSize: 2
  minSize: 2
  role: Node
  subnets: [us-test1]
  zones: [us-test1-a, us-test1-b]
"#
        ));
    }
    s
}

async fn context(
    cloud: &dyn GceCloud,
    text: &str,
    machine_override: Option<&str>,
    store: Arc<dyn kops_statestore::Store>,
) -> anyhow::Result<GceModelContext> {
    let mut cluster: Option<v1alpha2::Cluster> = None;
    let mut groups = Vec::new();
    for o in manifest::parse(text.as_bytes(), "spec")? {
        match o {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(mut ig) => {
                if let Some(m) = machine_override
                    && ig.metadata.name.as_deref() == Some("nodes-0")
                {
                    ig.spec.machine_type = Some(m.to_owned());
                }
                groups.push(ig)
            }
            _ => {}
        }
    }
    let cluster = cluster.ok_or_else(|| anyhow::anyhow!("no cluster"))?;
    // The state store holds the keysets discover generates on the first run and reads
    // back on the next.
    let opts = DiscoverOptions::default().with_state_store(store, "memfs://tests");
    Ok(gce::discover(cloud, &cluster, &groups, &opts).await?)
}

fn count(mock: &MockGce, rt: GceResourceType) -> usize {
    mock.objects()
        .iter()
        .filter(|r| r.resource_type == Some(rt))
        .count()
}

/// One shared state store per cluster: the managed files of the first apply must be seen
/// by the second plan.
struct Run {
    mock: Arc<MockGce>,
    store: Arc<dyn kops_statestore::Store>,
}

impl Run {
    fn new() -> Self {
        Run {
            mock: Arc::new(MockGce::new("testproject", "us-test1")),
            store: Arc::new(MemoryStore::new()),
        }
    }

    async fn ctx(&self, text: &str, machine: Option<&str>) -> anyhow::Result<GceModelContext> {
        context(self.mock.as_ref(), text, machine, self.store.clone()).await
    }
}

async fn lifecycle(name: &str, topology: &str) -> anyhow::Result<()> {
    let run = Run::new();
    let text = spec(name, topology, 1);
    let none = LifecycleOverrides::new();
    let cloud = ListCache::new(run.mock.clone());
    let ctx = run.ctx(&text, None).await?;
    let first = gce::plan(&cloud, &ctx, &none).await?;
    assert!(first.has_changes());
    gce::apply(&cloud, &ctx, &none).await?;
    assert_eq!(count(&run.mock, GceResourceType::InstanceGroupManager), 3);
    assert_eq!(count(&run.mock, GceResourceType::Disk), 2);
    assert_eq!(
        count(&run.mock, GceResourceType::Router),
        usize::from(topology == "private")
    );

    let cloud = ListCache::new(run.mock.clone());
    let again = gce::plan(&cloud, &ctx, &none).await?;
    let changed: Vec<_> = again.changes().map(|i| i.key.to_string()).collect();
    assert!(changed.is_empty(), "{name}: plan after apply: {changed:?}");

    // A changed machine type plans exactly that change.
    let ctx2 = run.ctx(&text, Some("e2-standard-2")).await?;
    let cloud = ListCache::new(run.mock.clone());
    let p = gce::plan(&cloud, &ctx2, &none).await?;
    let items: Vec<_> = p.changes().collect();
    assert_eq!(items.len(), 1, "{name}: {:?}", p.render_text());
    assert_eq!(items[0].key.kind(), "InstanceTemplate");
    let fields: Vec<&str> = items[0].changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["machine_type"]);
    gce::apply(&cloud, &ctx2, &none).await?;
    let cloud = ListCache::new(run.mock.clone());
    let after = gce::plan(&cloud, &ctx2, &none).await?;
    let changed: Vec<_> = after.changes().map(|i| i.key.to_string()).collect();
    assert!(
        changed.is_empty(),
        "{name}: plan after the change: {changed:?}"
    );
    // The replaced template is gone; the groups use the new one.
    assert_eq!(count(&run.mock, GceResourceType::InstanceTemplate), 2);

    // Delete leaves only what was there before (another cluster's objects stay).
    run.mock.seed(
        kops_cloud_gce::cloud::Resource::new(GceResourceType::Firewall, "ssh-other-example-com")
            .with_name("ssh-other-example-com"),
    );
    let deleted = gce::delete_cluster(run.mock.as_ref(), name).await?;
    assert!(!deleted.is_empty());
    let left: Vec<String> = run.mock.objects().iter().map(|r| r.id.clone()).collect();
    assert_eq!(left, ["ssh-other-example-com"], "{name}: left after delete");
    Ok(())
}

#[tokio::test]
async fn a_public_cluster_applies_and_replans_empty() -> anyhow::Result<()> {
    // On the heap: in a debug build the whole lifecycle future is larger than a test
    // thread\'s stack.
    Box::pin(lifecycle("minimal-gce.example.com", "public")).await
}

#[tokio::test]
async fn a_private_cluster_applies_and_replans_empty() -> anyhow::Result<()> {
    // On the heap: in a debug build the whole lifecycle future is larger than a test
    // thread\'s stack.
    Box::pin(lifecycle("private-gce.example.com", "private")).await
}

async fn noop_plan_calls(groups: usize) -> anyhow::Result<u64> {
    let run = Run::new();
    let text = spec("calls.example.com", "public", groups);
    let none = LifecycleOverrides::new();
    let ctx = run.ctx(&text, None).await?;
    gce::apply(&ListCache::new(run.mock.clone()), &ctx, &none).await?;
    let before = run.mock.total_calls();
    let plan = gce::plan(&ListCache::new(run.mock.clone()), &ctx, &none).await?;
    assert!(!plan.has_changes(), "{}", plan.render_text());
    Ok(run.mock.total_calls() - before)
}

#[tokio::test]
async fn a_noop_plan_costs_the_same_calls_for_2_and_20_groups() -> anyhow::Result<()> {
    let two = Box::pin(noop_plan_calls(2)).await?;
    let twenty = Box::pin(noop_plan_calls(20)).await?;
    println!("no-op plan API calls: 2 groups {two}, 20 groups {twenty}");
    assert_eq!(two, twenty);
    Ok(())
}
