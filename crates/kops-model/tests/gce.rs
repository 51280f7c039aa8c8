//! The GCE model against the in-memory GCE mock and against the REST backend
//! (`kops_cloud_gce::rest::RestGce`) talking HTTP to the fake of Google's APIs
//! (`kops_mock::gce::rest::FakeGceApi`) on 127.0.0.1: apply a public and a private
//! cluster, re-plan (empty), change a machine type (exactly that change, applied by
//! replacing the template), re-plan (empty), delete (only what was there before is
//! left), and count the API calls of a no-op plan for 2 and for 20 instance groups
//! behind the list cache. The REST backend also passes the cloud conformance suite.
//! `update cluster` as the library's workflow (`gce::UpdateCluster`) holds the cluster's
//! lock and refuses a config base the nodes cannot read. With feature `day2`: validate and
//! a rolling update through `GceInstanceGroups` on both backends (recreated in place,
//! never surged), and a roll through a fake Kubernetes API whose same-named nodes come
//! back schedulable.

use std::sync::Arc;

use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_cloud_gce::cache::ListCache;
use kops_cloud_gce::cloud::{CloudError, CreateRequest, ListQuery, ResourceCloud};
use kops_cloud_gce::rest::{RestConfig, RestGce, RetryPolicy};
use kops_cloud_gce::{GceCloud, GceResourceType};
use kops_mock::gce::MockGce;
use kops_mock::gce::rest::FakeGceApi;
use kops_model::aws::DiscoverOptions;
use kops_model::gce::{self, GceModelContext};
use kops_statestore::{LockRequest, MemoryStore, Registry, SystemClock};
use kops_tasks::LifecycleOverrides;
use serde_json::json;

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

/// The cloud a test runs against, and what the test inspects of it.
enum Backend {
    Mock(Arc<MockGce>),
    Rest {
        fake: FakeGceApi,
        cloud: Arc<RestGce>,
    },
}

impl Backend {
    async fn rest() -> anyhow::Result<Backend> {
        let fake = FakeGceApi::start("testproject", "us-test1").await?;
        let cfg = RestConfig::new("testproject", "us-test1")
            .with_endpoint(fake.url())
            .with_retry(RetryPolicy::new(4, std::time::Duration::from_millis(5)));
        let cloud = Arc::new(RestGce::new(cfg)?);
        Ok(Backend::Rest { fake, cloud })
    }

    fn cloud(&self) -> Arc<dyn GceCloud> {
        match self {
            Backend::Mock(m) => m.clone(),
            Backend::Rest { cloud, .. } => cloud.clone(),
        }
    }

    fn count(&self, rt: GceResourceType) -> usize {
        match self {
            Backend::Mock(m) => m.objects().iter().filter(|r| r.resource_type == rt).count(),
            Backend::Rest { fake, .. } => {
                let coll = format!("/{}", rt.facts().collection);
                fake.objects()
                    .iter()
                    .filter(|o| o.collection.ends_with(&coll))
                    .count()
            }
        }
    }

    /// Everything the project holds, by identity.
    fn inventory(&self) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Backend::Mock(m) => m
                .objects()
                .iter()
                .map(|r| format!("{:?} {}", r.resource_type, r.id))
                .collect(),
            Backend::Rest { fake, .. } => fake
                .objects()
                .iter()
                .map(|o| format!("{}/{}", o.collection, o.name))
                .collect(),
        };
        v.sort();
        v
    }

    /// Another cluster's firewall rule (on a network of its own), which a delete must
    /// leave alone.
    fn seed_foreign(&self) -> anyhow::Result<()> {
        match self {
            Backend::Mock(m) => m.seed(
                kops_cloud_gce::cloud::Resource::new(
                    GceResourceType::Firewall,
                    "ssh-other-example-com",
                )
                .with_name("ssh-other-example-com"),
            ),
            Backend::Rest { fake, .. } => {
                fake.seed(
                    "global/networks",
                    json!({"name": "default", "autoCreateSubnetworks": true}),
                )
                .map_err(anyhow::Error::msg)?;
                fake.seed(
                    "global/firewalls",
                    json!({"name": "ssh-other-example-com",
                        "network": "https://www.googleapis.com/compute/v1/projects/testproject/global/networks/default",
                        "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}],
                        "sourceRanges": ["0.0.0.0/0"]}),
                )
                .map_err(anyhow::Error::msg)?;
            }
        }
        Ok(())
    }

    fn calls(&self) -> std::collections::BTreeMap<String, u64> {
        match self {
            Backend::Mock(m) => m.calls(),
            Backend::Rest { fake, .. } => fake.calls(),
        }
    }

    fn total_calls(&self) -> u64 {
        match self {
            Backend::Mock(m) => m.total_calls(),
            Backend::Rest { fake, .. } => fake.total_calls(),
        }
    }
}

/// One shared state store per cluster: the managed files of the first apply must be seen
/// by the second plan.
struct Run {
    backend: Backend,
    store: Arc<dyn kops_statestore::Store>,
}

impl Run {
    fn mock() -> Self {
        Run {
            backend: Backend::Mock(Arc::new(MockGce::new("testproject", "us-test1"))),
            store: Arc::new(MemoryStore::new()),
        }
    }

    async fn rest() -> anyhow::Result<Self> {
        Ok(Run {
            backend: Backend::rest().await?,
            store: Arc::new(MemoryStore::new()),
        })
    }

    async fn ctx(&self, text: &str, machine: Option<&str>) -> anyhow::Result<GceModelContext> {
        context(
            self.backend.cloud().as_ref(),
            text,
            machine,
            self.store.clone(),
        )
        .await
    }

    /// A fresh run's view of the cloud: one list per collection, the cluster's labels.
    fn cached(&self, cluster: &str) -> ListCache<dyn GceCloud> {
        ListCache::for_cluster(self.backend.cloud(), cluster)
    }
}

async fn lifecycle(run: Run, name: &str, topology: &str) -> anyhow::Result<()> {
    run.backend.seed_foreign()?;
    let before = run.backend.inventory();
    let text = spec(name, topology, 1);
    let none = LifecycleOverrides::new();
    let cloud = run.cached(name);
    let ctx = run.ctx(&text, None).await?;
    let first = gce::plan(&cloud, &ctx, &none).await?;
    assert!(first.has_changes());
    gce::apply(&cloud, &ctx, &none).await?;
    assert_eq!(run.backend.count(GceResourceType::InstanceGroupManager), 3);
    assert_eq!(run.backend.count(GceResourceType::Disk), 2);
    assert_eq!(
        run.backend.count(GceResourceType::Router),
        usize::from(topology == "private")
    );

    let cloud = run.cached(name);
    let again = gce::plan(&cloud, &ctx, &none).await?;
    let changed: Vec<_> = again.changes().map(|i| i.key.to_string()).collect();
    assert!(
        changed.is_empty(),
        "{name}: plan after apply: {changed:?}\n{}",
        again.render_text()
    );

    // A changed machine type plans exactly that change.
    let ctx2 = run.ctx(&text, Some("e2-standard-2")).await?;
    let cloud = run.cached(name);
    let p = gce::plan(&cloud, &ctx2, &none).await?;
    let items: Vec<_> = p.changes().collect();
    assert_eq!(items.len(), 1, "{name}: {:?}", p.render_text());
    assert_eq!(items[0].key.kind(), "InstanceTemplate");
    let fields: Vec<&str> = items[0].changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["machine_type"]);
    gce::apply(&cloud, &ctx2, &none).await?;
    let cloud = run.cached(name);
    let after = gce::plan(&cloud, &ctx2, &none).await?;
    let changed: Vec<_> = after.changes().map(|i| i.key.to_string()).collect();
    assert!(
        changed.is_empty(),
        "{name}: plan after the change: {changed:?}\n{}",
        after.render_text()
    );
    // The replaced template is gone; the groups use the new one.
    assert_eq!(run.backend.count(GceResourceType::InstanceTemplate), 2);
    #[cfg(feature = "day2")]
    day2::validate_and_roll(&run, name, &text, "e2-standard-2").await?;

    // One group's objects: its managed instance groups (one per zone), then its template;
    // deleting them leaves the other groups', and a plan creates them again.
    let api = run.backend.cloud();
    let group = gce::find_group_resources(api.as_ref(), name, "nodes-0").await?;
    let kinds: Vec<GceResourceType> = group.iter().map(|r| r.resource_type).collect();
    assert_eq!(
        kinds,
        [
            GceResourceType::InstanceGroupManager,
            GceResourceType::InstanceGroupManager,
            GceResourceType::InstanceTemplate
        ],
        "{name}: {group:?}"
    );
    assert_eq!(
        gce::delete_group(api.as_ref(), name, "nodes-0").await?,
        group
    );
    assert_eq!(run.backend.count(GceResourceType::InstanceGroupManager), 1);
    assert_eq!(run.backend.count(GceResourceType::InstanceTemplate), 1);
    let p = gce::plan(&run.cached(name), &ctx2, &none).await?;
    let mut created: Vec<String> = p.changes().map(|i| i.key.to_string()).collect();
    created.sort();
    assert_eq!(created.len(), 3, "{name}: {created:?}");
    assert!(
        created.iter().all(|k| k.contains("nodes-0")),
        "{name}: {created:?}"
    );

    // Delete leaves only what was there before (another cluster's objects stay).
    let deleted = gce::delete_cluster(run.backend.cloud().as_ref(), name).await?;
    assert!(!deleted.is_empty());
    assert_eq!(run.backend.inventory(), before, "{name}: left after delete");
    Ok(())
}

#[tokio::test]
async fn a_public_cluster_applies_and_replans_empty() -> anyhow::Result<()> {
    // On the heap: in a debug build the whole lifecycle future is larger than a test
    // thread\'s stack.
    Box::pin(lifecycle(Run::mock(), "minimal-gce.example.com", "public")).await
}

#[tokio::test]
async fn a_private_cluster_applies_and_replans_empty() -> anyhow::Result<()> {
    Box::pin(lifecycle(Run::mock(), "private-gce.example.com", "private")).await
}

#[tokio::test]
async fn a_public_cluster_applies_and_replans_empty_over_rest() -> anyhow::Result<()> {
    Box::pin(lifecycle(
        Run::rest().await?,
        "minimal-gce.example.com",
        "public",
    ))
    .await
}

#[tokio::test]
async fn a_private_cluster_applies_and_replans_empty_over_rest() -> anyhow::Result<()> {
    Box::pin(lifecycle(
        Run::rest().await?,
        "private-gce.example.com",
        "private",
    ))
    .await
}

async fn noop_plan_calls(run: Run, groups: usize) -> anyhow::Result<u64> {
    let name = "calls.example.com";
    let text = spec(name, "public", groups);
    let none = LifecycleOverrides::new();
    let ctx = run.ctx(&text, None).await?;
    gce::apply(&run.cached(name), &ctx, &none).await?;
    let before = run.backend.total_calls();
    let calls_before = run.backend.calls();
    let plan = gce::plan(&run.cached(name), &ctx, &none).await?;
    assert!(!plan.has_changes(), "{}", plan.render_text());
    let mut spent: Vec<String> = run
        .backend
        .calls()
        .into_iter()
        .filter_map(|(k, v)| {
            let d = v - calls_before.get(&k).copied().unwrap_or(0);
            (d > 0).then(|| format!("{k} {d}"))
        })
        .collect();
    spent.sort();
    println!("no-op plan, {groups} groups: {}", spent.join(", "));
    Ok(run.backend.total_calls() - before)
}

#[tokio::test]
async fn a_noop_plan_costs_the_same_calls_for_2_and_20_groups() -> anyhow::Result<()> {
    let two = Box::pin(noop_plan_calls(Run::mock(), 2)).await?;
    let twenty = Box::pin(noop_plan_calls(Run::mock(), 20)).await?;
    println!("no-op plan API calls (mock): 2 groups {two}, 20 groups {twenty}");
    assert_eq!(two, twenty);
    Ok(())
}

#[tokio::test]
async fn a_noop_plan_over_rest_costs_the_same_http_calls_for_2_and_20_groups() -> anyhow::Result<()>
{
    let two = Box::pin(noop_plan_calls(Run::rest().await?, 2)).await?;
    let twenty = Box::pin(noop_plan_calls(Run::rest().await?, 20)).await?;
    println!("no-op plan HTTP calls (REST on the fake): 2 groups {two}, 20 groups {twenty}");
    assert_eq!(two, twenty);
    Ok(())
}

#[tokio::test]
async fn the_rest_backend_passes_the_cloud_conformance_suite() -> anyhow::Result<()> {
    let b = Backend::rest().await?;
    kops_cloud_gce::conformance::run_all(b.cloud().as_ref(), "rest").await?;
    Ok(())
}

#[tokio::test]
async fn throttling_is_retried_and_quota_errors_name_the_quota() -> anyhow::Result<()> {
    let b = Backend::rest().await?;
    let Backend::Rest { fake, cloud } = &b else {
        unreachable!()
    };
    fake.fail_next(2, 403, "rateLimitExceeded");
    let listed = cloud
        .list(&ListQuery::new(GceResourceType::Network))
        .await?;
    assert!(listed.is_empty());
    assert_eq!(fake.calls().get("fault.rateLimitExceeded"), Some(&2));
    fake.fail_next(1, 503, "backendError");
    cloud.zones().await?;
    fake.fail_next(1, 403, "quotaExceeded");
    let err = cloud
        .create(
            &CreateRequest::new(GceResourceType::Network)
                .with_name("n")
                .with_attrs([("auto_create_subnetworks".to_owned(), json!(false))].into()),
        )
        .await;
    match err {
        Err(CloudError::Quota { limit, .. }) => assert_eq!(limit, "SSD_TOTAL_GB"),
        other => panic!("quota error expected: {other:?}"),
    }
    // Retries give up after the policy's attempts.
    fake.fail_next(10, 429, "rateLimitExceeded");
    let err = cloud.list(&ListQuery::new(GceResourceType::Network)).await;
    assert!(matches!(err, Err(CloudError::Throttled { .. })), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn lists_follow_pages() -> anyhow::Result<()> {
    let b = Backend::rest().await?;
    let Backend::Rest { fake, cloud } = &b else {
        unreachable!()
    };
    fake.set_page_size(2);
    for i in 0..5 {
        cloud
            .create(
                &CreateRequest::new(GceResourceType::Network)
                    .with_name(format!("n{i}"))
                    .with_attrs([("auto_create_subnetworks".to_owned(), json!(false))].into()),
            )
            .await?;
    }
    let all = cloud
        .list(&ListQuery::new(GceResourceType::Network))
        .await?;
    assert_eq!(all.len(), 5);
    assert_eq!(fake.calls().get("compute.networks.list"), Some(&3));
    Ok(())
}

/// kOps' `FindDNSHostedZone` on GCE: a cluster that publishes DNS records and names no
/// `dnsZone` gets the ID of the project's managed zone whose name ends the cluster name
/// (both fakes hold `example.com.` with ID 1, as kOps' fake Cloud DNS); a cluster with
/// DNS `None` asks nothing; no matching zone is an error naming `spec.dnsZone`.
async fn dns_zone_defaults(run: Run) -> anyhow::Result<()> {
    let ctx = Box::pin(run.ctx(&spec("dns-gce.example.com", "public", 1), None)).await?;
    assert_eq!(ctx.cluster.spec.dns_zone.as_deref(), Some("1"));
    assert_eq!(run.backend.calls().get("dns.managedZones.list"), Some(&1));

    let ctx = Box::pin(run.ctx(&spec("none-gce.example.com", "private", 1), None)).await?;
    assert_eq!(ctx.cluster.spec.dns_zone, None);
    assert_eq!(run.backend.calls().get("dns.managedZones.list"), Some(&1));

    let err = Box::pin(run.ctx(&spec("dns-gce.example.org", "public", 1), None))
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("a cluster outside every zone was accepted"))?;
    assert!(format!("{err:#}").contains("spec.dnsZone"), "{err:#}");
    Ok(())
}

#[tokio::test]
async fn the_dns_zone_defaults_to_the_matching_managed_zone() -> anyhow::Result<()> {
    Box::pin(dns_zone_defaults(Run::mock())).await
}

#[tokio::test]
async fn the_dns_zone_defaults_to_the_matching_managed_zone_over_rest() -> anyhow::Result<()> {
    Box::pin(dns_zone_defaults(Run::rest().await?)).await
}

/// `update cluster` on GCE through the library's workflow, on the mock: a `memfs://`
/// config base is refused for a cloud with real machines (naming the field and the
/// `gs://` store to use) before the lock or the cloud is touched; allowed (as for the
/// mock), an apply fails while someone else holds the cluster's lock, then creates the
/// cluster holding it, leaves the completed spec and the kOps release in the store and
/// releases the lock; the plan after it is empty. A lock of another cluster is refused.
#[tokio::test]
async fn update_cluster_holds_the_lock_and_refuses_an_unreadable_config_base() -> anyhow::Result<()>
{
    let run = Run::mock();
    let name = "update-gce.example.com";
    let ctx = Box::pin(run.ctx(&spec(name, "public", 1), None)).await?;
    // On the heap, and apart from discovery: in a debug build the workflow's frame and
    // discovery's deep one do not fit a test thread's stack together.
    Box::pin(update_cluster_workflow(run, name, ctx)).await
}

async fn update_cluster_workflow(run: Run, name: &str, ctx: GceModelContext) -> anyhow::Result<()> {
    let reg = Registry::new(run.store.clone(), Arc::new(SystemClock));
    let before = run.backend.inventory();
    let options = gce::UpdateOptions::default().with_lock_holder("gce test");

    let strict = gce::UpdateCluster::new(ctx.clone(), options.clone())?;
    // Rendered from the workflow's graph, the Terraform is the context's.
    assert_eq!(
        strict.render_terraform()?.files,
        gce::render_terraform(&ctx, &LifecycleOverrides::new())?.files
    );
    let plan = strict.plan(&run.cached(name)).await?;
    assert!(plan.plan.has_changes());
    let Err(err) = strict
        .apply(&run.cached(name), &reg, &plan, gce::ApplyOptions::default())
        .await
    else {
        anyhow::bail!("a memfs:// config base must be refused on a real cloud")
    };
    let msg = err.to_string();
    assert!(matches!(err, kops_model::Error::Invalid { .. }), "{msg}");
    assert!(msg.starts_with("spec.configBase: memfs://tests/"), "{msg}");
    assert!(msg.contains("gs://"), "the error says what to use: {msg}");
    assert_eq!(run.backend.inventory(), before, "nothing was applied");
    assert!(
        reg.get_completed_spec(name).await.is_err(),
        "nothing was written"
    );

    let update = gce::UpdateCluster::new(ctx, options.with_unreadable_config_base(true))?;
    let plan = update.plan(&run.cached(name)).await?;
    let other = reg
        .lock(name, &LockRequest::new("someone else", "update cluster"))
        .await?;
    let Err(err) = update
        .apply(&run.cached(name), &reg, &plan, gce::ApplyOptions::default())
        .await
    else {
        anyhow::bail!("the lock is held by someone else")
    };
    assert!(matches!(err, kops_model::Error::StateStore { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("taking the lock of cluster {name}")),
        "{err}"
    );
    assert_eq!(run.backend.inventory(), before, "nothing was applied");
    other.release().await?;

    let applied = update
        .apply(&run.cached(name), &reg, &plan, gce::ApplyOptions::default())
        .await?;
    assert_eq!(applied.summary().create, plan.plan.summary().create);
    assert_eq!(run.backend.count(GceResourceType::InstanceGroupManager), 3);
    assert_eq!(reg.get_completed_spec(name).await?.name(), name);
    assert_eq!(
        reg.get_kops_version(name).await?.as_deref(),
        Some(kops_model::DEFAULT_KOPS_RELEASE)
    );
    // Released: the next holder takes it at once.
    let next = reg.lock(name, &LockRequest::new("next", "check")).await?;
    // A caller holding another cluster's lock is refused before anything runs.
    let Err(err) = update
        .apply_holding(
            &run.cached(name),
            &reg,
            &plan,
            &mut reg
                .lock("other.example.com", &LockRequest::new("gce test", "check"))
                .await?,
            gce::ApplyOptions::default(),
        )
        .await
    else {
        anyhow::bail!("another cluster's lock")
    };
    assert!(
        err.to_string().starts_with("lock: the lock held is "),
        "{err}"
    );
    next.release().await?;

    let again = update.plan(&run.cached(name)).await?;
    assert!(!again.plan.has_changes(), "{}", again.plan.render_text());
    Ok(())
}

/// Validate and rolling update of a GCE cluster through `GceInstanceGroups`, on either
/// backend: after a template change the changed group's instances need an update, a
/// roll recreates them in place (the same names, the new template), never surging.
#[cfg(feature = "day2")]
mod day2 {
    use std::time::Duration;

    use kops_api::internal;
    use kops_model::day2::groups::{GceInstanceGroups, InstanceGroupCloud, MemberStatus};
    use kops_model::day2::rolling::{RollingOptions, RollingUpdate};
    use kops_model::day2::validate::{ClusterValidator, ValidateOptions, Validator};

    use super::*;

    fn internal_spec(
        text: &str,
        machine: &str,
    ) -> anyhow::Result<(internal::Cluster, Vec<internal::InstanceGroup>)> {
        let mut cluster = None;
        let mut groups = Vec::new();
        for o in manifest::parse(text.as_bytes(), "spec")? {
            match o {
                Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c)?),
                Object::InstanceGroup(mut ig) => {
                    if ig.metadata.name.as_deref() == Some("nodes-0") {
                        ig.spec.machine_type = Some(machine.to_owned());
                    }
                    groups.push(internal::InstanceGroup::from(&ig));
                }
                _ => {}
            }
        }
        Ok((
            cluster.ok_or_else(|| anyhow::anyhow!("no cluster"))?,
            groups,
        ))
    }

    /// Each instance's (name, zone) as the cloud reports it.
    async fn instances(api: &dyn GceCloud) -> anyhow::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for mig in api
            .list(&ListQuery::new(GceResourceType::InstanceGroupManager))
            .await?
        {
            for i in api.managed_instances(&mig.id).await? {
                out.push((i.name, i.zone));
            }
        }
        out.sort();
        Ok(out)
    }

    pub(super) async fn validate_and_roll(
        run: &Run,
        name: &str,
        text: &str,
        machine: &str,
    ) -> anyhow::Result<()> {
        let api = run.backend.cloud();
        let (cluster, groups) = internal_spec(text, machine)?;
        let igs = Arc::new(GceInstanceGroups::new(api.clone()));
        let found = igs.cloud_groups(name, &groups).await?;
        let names: Vec<&str> = found.iter().map(|g| g.instance_group.as_str()).collect();
        assert_eq!(names, ["master-us-test1-a", "nodes-0"], "{found:?}");
        let nodes = &found[1];
        // One managed instance group per zone, merged; minSize 2 over two zones.
        assert_eq!(nodes.group.split(',').count(), 2, "{nodes:?}");
        assert_eq!((nodes.min_size, nodes.target_size), (2, 2));
        assert_eq!(nodes.members.len(), 2, "{nodes:?}");
        for m in &nodes.members {
            let MemberStatus::NeedsUpdate { reason } = &m.status else {
                panic!("{name}: {m:?} should need an update");
            };
            assert!(reason.contains("the group wants"), "{reason}");
        }
        assert_eq!(found[0].members.len(), 1);
        assert_eq!(found[0].members[0].status, MemberStatus::UpToDate);

        // Validate: a Ready node per instance, named and identified as GCE does.
        let kube = kops_mock::kube::FakeKube::start().await?;
        let before = instances(api.as_ref()).await?;
        assert_eq!(before.len(), 3, "{before:?}");
        for (instance, zone) in &before {
            let group = found
                .iter()
                .find(|g| g.members.iter().any(|m| &m.id == instance))
                .map(|g| g.instance_group.clone())
                .unwrap_or_default();
            let role = if group.starts_with("master") {
                "control-plane"
            } else {
                "node"
            };
            let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
                "metadata": {
                    "name": instance,
                    "labels": {
                        "kops.k8s.io/instancegroup": group,
                        format!("node-role.kubernetes.io/{role}"): "",
                    },
                },
                "spec": {"providerID": format!("gce://testproject/{zone}/{instance}")},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }))?;
            kube.put_node(node);
            if role == "control-plane" {
                for app in [
                    "kube-apiserver",
                    "kube-controller-manager",
                    "kube-scheduler",
                ] {
                    kube.put_pod(kops_mock::kube::kubelet::static_pod(app, instance));
                }
            }
        }
        let config = kube::Config::new(kube.url().parse()?);
        let client = kube::Client::try_from(config)?;
        let validator = Validator::new(
            client,
            igs.clone(),
            name,
            groups.clone(),
            ValidateOptions::default(),
        );
        let v = validator.validate().await?;
        assert!(v.is_valid(), "{name}: {v:?}");

        // The roll: no surge on GCE, one at a time, every member recreated in place.
        let options = RollingOptions::default()
            .with_cloud_only(true)
            .with_node_interval(Duration::ZERO)
            .with_control_plane_interval(Duration::ZERO);
        let roll = RollingUpdate::new(igs.clone(), options.clone());
        let plan = roll.plan(&cluster, &groups).await?;
        let g = plan
            .groups
            .iter()
            .find(|g| g.name == "nodes-0")
            .ok_or_else(|| anyhow::anyhow!("no plan for nodes-0: {plan:?}"))?;
        assert_eq!((g.need_update, g.max_surge, g.max_unavailable), (2, 0, 1));
        let report = roll.run(&cluster, &groups).await?;
        let mut replaced = report.replaced.clone();
        replaced.sort();
        let mut wanted: Vec<String> = nodes.members.iter().map(|m| m.id.clone()).collect();
        wanted.sort();
        assert_eq!(replaced, wanted, "{name}: {report:?}");
        assert_eq!(instances(api.as_ref()).await?, before, "names kept");
        let after = igs.cloud_groups(name, &groups).await?;
        assert!(
            after
                .iter()
                .flat_map(|g| &g.members)
                .all(|m| m.status == MemberStatus::UpToDate),
            "{name}: {after:?}"
        );
        let again = RollingUpdate::new(igs, options)
            .plan(&cluster, &groups)
            .await?;
        assert!(again.groups.iter().all(|g| g.need_update == 0), "{again:?}");
        Ok(())
    }

    /// A stand-in for the kubelets: a Ready node for every instance of the cluster's
    /// groups, named after it (as on GCE), control-plane ones with their static pods; a
    /// node removed while its instance runs registers again, as a recreated VM does.
    async fn kubelets(api: &dyn GceCloud, kube: &kops_mock::kube::FakeKube) -> anyhow::Result<()> {
        let present: Vec<String> = kube.objects().nodes.keys().cloned().collect();
        for mig in api
            .list(&ListQuery::new(GceResourceType::InstanceGroupManager))
            .await?
        {
            let role = if mig.id.contains("control-plane") || mig.id.contains("master") {
                "control-plane"
            } else {
                "node"
            };
            for i in api.managed_instances(&mig.id).await? {
                if present.contains(&i.name) {
                    continue;
                }
                let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
                    "metadata": {
                        "name": i.name,
                        "labels": {format!("node-role.kubernetes.io/{role}"): ""},
                    },
                    "spec": {"providerID": format!("gce://testproject/{}/{}", i.zone, i.name)},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
                }))?;
                kube.put_node(node);
                if role == "control-plane" {
                    for app in [
                        "kube-apiserver",
                        "kube-controller-manager",
                        "kube-scheduler",
                    ] {
                        kube.put_pod(kops_mock::kube::kubelet::static_pod(app, &i.name));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) async fn roll_through_the_api(
        run: Run,
        name: &str,
        text: &str,
        machine: &str,
    ) -> anyhow::Result<()> {
        let api = run.backend.cloud();
        let (cluster, groups) = internal_spec(text, machine)?;
        let igs = Arc::new(GceInstanceGroups::new(api.clone()));
        let kube = Arc::new(kops_mock::kube::FakeKube::start().await?);
        kubelets(api.as_ref(), &kube).await?;
        let beat = {
            let (api, kube) = (api.clone(), kube.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let _ = kubelets(api.as_ref(), &kube).await;
                }
            })
        };
        let client = kube::Client::try_from(kube::Config::new(kube.url().parse()?))?;
        let validator = Arc::new(Validator::new(
            client.clone(),
            igs.clone(),
            name,
            groups.clone(),
            ValidateOptions::default(),
        ));
        let options = RollingOptions::default()
            .with_validation_timeout(Duration::from_secs(120))
            .with_drain_timeout(Duration::from_secs(60))
            .with_node_interval(Duration::from_secs(1))
            .with_control_plane_interval(Duration::from_secs(1))
            .with_post_drain_delay(Duration::from_secs(1));
        let roll = RollingUpdate::new(igs.clone(), options).with_kube(client, validator);
        let report = roll.run(&cluster, &groups).await?;
        beat.abort();
        assert_eq!(report.replaced.len(), 2, "{report:?}");
        // The recreated instances came back under their names, registered afresh: not
        // cordoned, not tainted, ready.
        let o = kube.objects();
        for id in &report.replaced {
            let node = o
                .nodes
                .get(id)
                .ok_or_else(|| anyhow::anyhow!("{id} did not come back"))?;
            let spec = node.spec.clone().unwrap_or_default();
            assert_ne!(spec.unschedulable, Some(true), "{id} is still cordoned");
            assert!(
                spec.taints.unwrap_or_default().is_empty(),
                "{id} is still tainted"
            );
            assert!(
                o.requests
                    .iter()
                    .any(|r| r.method == "DELETE" && r.path.ends_with(&format!("/nodes/{id}"))),
                "{id}: its node was not deleted before the recreation"
            );
        }
        Ok(())
    }
}

/// A roll through the Kubernetes API on GCE (the mock, tokio's paused time): each
/// recreated instance keeps its name and its node comes back schedulable, because the
/// roll deleted the old Node object first.
#[cfg(feature = "day2")]
#[tokio::test(start_paused = true)]
async fn a_gce_roll_through_the_api_brings_the_same_named_nodes_back_schedulable()
-> anyhow::Result<()> {
    let run = Run::mock();
    let name = "roll-gce.example.com";
    let text = spec(name, "public", 1);
    let none = LifecycleOverrides::new();
    let ctx = Box::pin(run.ctx(&text, None)).await?;
    Box::pin(gce::apply(&run.cached(name), &ctx, &none)).await?;
    let ctx2 = Box::pin(run.ctx(&text, Some("e2-standard-2"))).await?;
    Box::pin(gce::apply(&run.cached(name), &ctx2, &none)).await?;
    Box::pin(day2::roll_through_the_api(
        run,
        name,
        &text,
        "e2-standard-2",
    ))
    .await
}

/// An update of the node groups only builds their templates and managed instance groups,
/// not the control plane's; the internal API load balancer, which the control plane's
/// instance groups back, names their instance groups instead of waiting for their tasks.
#[tokio::test]
async fn an_update_of_the_node_groups_leaves_the_control_planes_machines() -> anyhow::Result<()> {
    use kops_api::internal::InstanceGroupRole;
    let run = Run::mock();
    let name = "some-groups-gce.example.com";
    let text = spec(name, "private", 2).replace(
        "    loadBalancer:\n      type: Public",
        "    loadBalancer:\n      type: Internal",
    );
    let ctx = Box::pin(run.ctx(&text, None)).await?;
    let options =
        gce::UpdateOptions::default().with_instance_group_roles(vec![InstanceGroupRole::Node]);
    let update = gce::UpdateCluster::new(ctx.clone(), options)?;
    let keys: Vec<String> = update
        .graph()
        .nodes()
        .iter()
        .map(|n| n.key().to_string())
        .collect();
    let machines = |group: &str| {
        keys.iter()
            .filter(|k| {
                (k.starts_with("InstanceTemplate/") || k.starts_with("InstanceGroupManager/"))
                    && k.contains(group)
            })
            .count()
    };
    assert_eq!(machines("master-us-test1-a"), 0, "{keys:#?}");
    assert!(
        machines("nodes-0") >= 2 && machines("nodes-1") >= 2,
        "{keys:#?}"
    );
    let backend = update
        .graph()
        .nodes()
        .iter()
        .find(|n| n.key().kind() == "BackendService")
        .ok_or_else(|| anyhow::anyhow!("no backend service: {keys:#?}"))?;
    let fields = format!("{:?}", backend.fields());
    assert!(
        fields
            .contains("projects/testproject/zones/us-test1-a/instanceGroups/a-master-us-test1-a-"),
        "{fields}"
    );
    // Without the filter the backend waits for the control plane's instance group task.
    let all = gce::UpdateCluster::new(ctx, gce::UpdateOptions::default())?;
    assert!(
        all.graph()
            .nodes()
            .iter()
            .any(|n| n.key().kind() == "InstanceTemplate" && n.key().name().contains("master"))
    );
    Ok(())
}

/// `spec.target.terraform` adds its arguments to the `google` provider and, for a
/// memfs:// config base, to the files provider kOps renders for it (`aws.files`).
#[tokio::test]
async fn terraform_provider_blocks_carry_the_specs_extra_config() -> anyhow::Result<()> {
    let run = Run::mock();
    let text = spec("tf-extra.example.com", "public", 1).replacen(
        "  channel: stable\n",
        "  channel: stable\n  target:\n    terraform:\n      providerExtraConfig: {request_timeout: 60s}\n      filesProviderExtraConfig: {profile: files}\n",
        1,
    );
    let ctx = Box::pin(run.ctx(&text, None)).await?;
    let files = gce::render_terraform(&ctx, &LifecycleOverrides::new())?.files;
    let main = String::from_utf8_lossy(&files["kubernetes.tf"]).into_owned();
    assert!(
        main.contains(
            "provider \"google\" {\n  project         = \"testproject\"\n  region          = \"us-test1\"\n  request_timeout = \"60s\"\n}"
        ),
        "{main}"
    );
    assert!(
        main.contains(
            "provider \"aws\" {\n  alias   = \"files\"\n  profile = \"files\"\n  region  = \"us-test-1\"\n}"
        ),
        "{main}"
    );
    Ok(())
}

/// Objects of each type in the mock project (instance templates are named by the mock
/// from a serial, so types are counted, not names compared).
fn counts(m: &MockGce) -> std::collections::BTreeMap<String, usize> {
    let mut c = std::collections::BTreeMap::new();
    for r in m.objects() {
        *c.entry(format!("{:?}", r.resource_type)).or_default() += 1;
    }
    c
}

async fn lost_answers_converge(topology: &str) -> anyhow::Result<()> {
    let name = format!("lost-{topology}.example.com");
    let text = spec(&name, topology, 1);
    let none = LifecycleOverrides::new();
    // What a run without faults makes.
    let clean = Run::mock();
    let ctx = clean.ctx(&text, None).await?;
    gce::apply(&clean.cached(&name), &ctx, &none).await?;
    let Backend::Mock(clean_mock) = &clean.backend else {
        unreachable!()
    };
    let want = counts(clean_mock);

    // Every third insert's answer lost: each attempt is a fresh process (a new list
    // cache) that re-plans from the cloud, until a plan is empty.
    let mock = Arc::new(MockGce::new("testproject", "us-test1"));
    mock.lose_answers(3);
    let run = Run {
        backend: Backend::Mock(mock.clone()),
        store: Arc::new(MemoryStore::new()),
    };
    let ctx = run.ctx(&text, None).await?;
    let mut converged = false;
    for _ in 0..8 {
        let _ = gce::apply(&run.cached(&name), &ctx, &none).await;
        if !gce::plan(&run.cached(&name), &ctx, &none)
            .await?
            .has_changes()
        {
            converged = true;
            break;
        }
    }
    assert!(mock.lost_answers() > 3, "{}", mock.lost_answers());
    assert!(converged, "{name}: no empty plan after 8 attempts");
    assert_eq!(counts(&mock), want, "{name}: a second object was made");
    Ok(())
}

#[test]
fn lost_insert_answers_converge_without_a_second_object() -> anyhow::Result<()> {
    // On a 64 MiB stack: in a debug build an apply polled from one future needs more than
    // a test thread's stack.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(async {
                    lost_answers_converge("public").await?;
                    lost_answers_converge("private").await
                })
        })?
        .join()
        .map_err(|_| anyhow::anyhow!("the test thread panicked"))?
}
