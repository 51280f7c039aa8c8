//! A dry run trusts kops-rs' record of the lifecycle hooks the last apply left
//! (`<cluster>/lifecycle-hooks.kops-rs.json`) instead of one `DescribeLifecycleHooks` per
//! autoscaling group; `refresh`, a recreated group, an expired or unreadable record and
//! every apply read the cloud. On the mock cloud, which counts calls per API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use kops_api::v1alpha2::{Cluster, InstanceGroup};
use kops_model::aws::cloud::AwsCloud;
use kops_model::aws::{ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, discover};
use kops_model::{DnsType, NewClusterOptions, new_cluster};
use kops_statestore::{Clock, MemoryStore, Registry, Store, StoreExt as _};

const NAME: &str = "hooks.example.com";
const STORE: &str = "memfs://hooks.example.com";
const RECORD: &str = "hooks.example.com/lifecycle-hooks.kops-rs.json";
const DESCRIBE_HOOKS: &str = "autoscaling:DescribeLifecycleHooks";
/// Node groups added to the two of `new_cluster` (control plane, nodes).
const EXTRA: usize = 5;
/// Autoscaling groups: every instance group has one, and each carries kOps' hook.
const GROUPS: u64 = 2 + EXTRA as u64;

/// Wall time the test moves.
#[derive(Debug)]
struct TestClock(Mutex<SystemTime>);

impl Clock for TestClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap()
    }
}

impl TestClock {
    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

fn mock() -> kops_mock::MockAws {
    kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  route53:\n    hostedZones:\n    - {id: /hostedzone/ZHOOKS, name: example.com., private: false}\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: hooks, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        "hooks test",
    )
    .unwrap()
    .build()
    .unwrap()
}

fn spec() -> (Cluster, Vec<InstanceGroup>) {
    let (cluster, mut groups) = new_cluster(
        &NewClusterOptions::new(NAME, STORE)
            .with_zones(["us-test-1a"])
            .with_node_count(1)
            .with_dns(DnsType::Public)
            .with_image(Some("ami-00000001".into()))
            .with_kubernetes_version("v1.34.1"),
    )
    .unwrap();
    let node = groups
        .iter()
        .find(|g| g.name().starts_with("nodes"))
        .unwrap()
        .clone();
    for i in 0..EXTRA {
        let mut g = node.clone();
        g.metadata.name = Some(format!("extra-{i}"));
        groups.push(g);
    }
    (cluster, groups)
}

/// [`spec`] applied to a new mock cloud, with a state store on a clock the test moves.
struct Applied {
    cloud: kops_mock::MockAws,
    store: Arc<MemoryStore>,
    registry: Registry,
    clock: Arc<TestClock>,
    cluster: Cluster,
    groups: Vec<InstanceGroup>,
}

impl Applied {
    async fn new() -> Applied {
        let cloud = mock();
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(TestClock(Mutex::new(
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        )));
        let registry = Registry::new(store.clone() as Arc<dyn Store>, clock.clone());
        let (cluster, groups) = spec();
        let a = Applied {
            cloud,
            store,
            registry,
            clock,
            cluster,
            groups,
        };
        a.apply().await;
        a
    }

    async fn update(&self, options: UpdateOptions) -> UpdateCluster {
        let opts = DiscoverOptions::default().with_state_store(self.store.clone(), STORE);
        let ctx = discover(&self.cloud, &self.cluster, &self.groups, &opts)
            .await
            .unwrap();
        UpdateCluster::new(
            ctx,
            options
                .with_lock_holder("hooks test")
                .with_unreadable_config_base(true),
        )
        .unwrap()
    }

    /// Plans with `plan` (an apply's) and applies; returns the plan's hook calls.
    async fn apply(&self) -> u64 {
        let update = self.update(UpdateOptions::default()).await;
        let api: &dyn AwsCloud = &self.cloud;
        self.cloud.reset_calls();
        let plan = update.plan(api).await.unwrap();
        let read = self.cloud.call_count(DESCRIBE_HOOKS);
        update
            .apply(api, &self.registry, &plan, ApplyOptions::default())
            .await
            .unwrap();
        read
    }

    /// A dry run with `options`: its plan, and its `DescribeLifecycleHooks` calls.
    async fn dry_run(&self, options: UpdateOptions) -> (kops_model::aws::UpdatePlan, u64) {
        let update = self.update(options).await;
        let api: Arc<dyn AwsCloud> = Arc::new(self.cloud.clone());
        self.cloud.reset_calls();
        let plan = update.dry_run(api, &self.registry).await.unwrap();
        (plan, self.cloud.call_count(DESCRIBE_HOOKS))
    }

    /// The name of the autoscaling group of instance group `ig`.
    fn asg_of(&self, ig: &str) -> kops_mock::asg::AutoScalingGroup {
        let all = self.cloud.describe_auto_scaling_groups(&[], &[]).unwrap();
        all.into_iter()
            .find(|g| g.spec.name.starts_with(&format!("{ig}.")))
            .unwrap_or_else(|| panic!("no autoscaling group of {ig}"))
    }
}

/// The plan's changes, as `Action kind/name`.
fn changes(plan: &kops_tasks::Plan) -> Vec<String> {
    let mut out: Vec<String> = plan
        .items
        .iter()
        .filter(|i| i.action.is_change())
        .map(|i| format!("{:?} {}", i.action, i.key))
        .collect();
    out.sort();
    out
}

fn run<F: Future<Output = ()> + 'static>(test: fn() -> F) {
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
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
fn after_an_apply_a_dry_run_reads_no_hooks_and_refresh_reads_every_group() {
    run(|| async {
        let a = Applied::new().await;
        // What a plan without the record reads: the hooks of every group, one call each.
        let update = a.update(UpdateOptions::default()).await;
        a.cloud.reset_calls();
        let plan = update.plan(&a.cloud).await.unwrap();
        assert_eq!(a.cloud.call_count(DESCRIBE_HOOKS), GROUPS);
        assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));

        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 0, "the dry run read hooks");
        assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));
        let recorded = plan.recorded_hooks().expect("the record was used");
        assert_eq!(recorded.groups as u64, GROUPS);
        assert_eq!(recorded.recorded_at, a.clock.now());
        let note = recorded.note();
        assert!(
            note.contains(&format!("{GROUPS} autoscaling group")) && note.contains("--refresh"),
            "{note}"
        );

        let (plan, calls) = a.dry_run(UpdateOptions::default().with_refresh(true)).await;
        assert_eq!(calls, GROUPS);
        assert!(plan.recorded_hooks().is_none());
        assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));
    });
}

#[test]
fn a_group_recreated_out_of_band_is_read() {
    run(|| async {
        let a = Applied::new().await;
        // The group goes with its hooks and comes back under the same name: a new ARN.
        let g = a.asg_of("extra-2");
        a.cloud
            .delete_auto_scaling_group(&g.spec.name, true)
            .unwrap();
        let tags = g
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), (v.clone(), g.propagate_at_launch.contains(k))))
            .collect();
        let again = a
            .cloud
            .create_auto_scaling_group(g.spec.clone(), tags)
            .unwrap();
        assert_ne!(again.arn, g.arn);

        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 1, "only the recreated group is read");
        assert_eq!(
            plan.recorded_hooks().map(|r| r.groups as u64),
            Some(GROUPS - 1)
        );
        assert_eq!(
            changes(&plan.plan),
            ["Create AutoscalingLifecycleHook/extra-2-NTHLifecycleHook"]
        );
    });
}

#[test]
fn a_hook_deleted_out_of_band_is_found_by_refresh_and_by_the_apply() {
    run(|| async {
        let a = Applied::new().await;
        let g = a.asg_of("extra-0");
        a.cloud
            .delete_lifecycle_hook(&g.spec.name, "extra-0-NTHLifecycleHook")
            .unwrap();
        let want = ["Create AutoscalingLifecycleHook/extra-0-NTHLifecycleHook"];

        // Trusted, the record still has it (until it expires): the documented trade.
        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 0);
        assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));

        let (plan, calls) = a.dry_run(UpdateOptions::default().with_refresh(true)).await;
        assert_eq!(calls, GROUPS);
        assert_eq!(changes(&plan.plan), want);

        // The apply reads every group, puts the hook back and records it.
        assert_eq!(a.apply().await, GROUPS);
        let hooks = a.cloud.describe_lifecycle_hooks(&g.spec.name, &[]).unwrap();
        assert_eq!(hooks.len(), 1, "{hooks:?}");
        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 0);
        assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));
    });
}

#[test]
fn an_expired_unreadable_or_foreign_record_is_ignored() {
    run(|| async {
        let a = Applied::new().await;
        // Younger than the limit: trusted.
        a.clock.advance(Duration::from_secs(59 * 60));
        let (_, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 0);
        // Older than the default hour: read.
        a.clock.advance(Duration::from_secs(2 * 60));
        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, GROUPS);
        assert!(plan.recorded_hooks().is_none());
        // A longer limit trusts it again.
        let (_, calls) = a
            .dry_run(UpdateOptions::default().with_hooks_record_max_age(Duration::from_secs(7200)))
            .await;
        assert_eq!(calls, 0);

        let good = a.store.get(RECORD).await.unwrap().data;
        let mut json: serde_json::Value = serde_json::from_slice(&good).unwrap();
        json["version"] = serde_json::json!(99);
        for bad in [
            bytes::Bytes::from_static(b"{not json"),
            bytes::Bytes::from(serde_json::to_vec(&json).unwrap()),
        ] {
            a.store
                .put(RECORD, bad, kops_statestore::PutOptions::overwrite())
                .await
                .unwrap();
            let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
            assert_eq!(calls, GROUPS);
            assert!(changes(&plan.plan).is_empty(), "{:?}", changes(&plan.plan));
        }
    });
}

#[test]
fn an_apply_rewrites_the_record_and_a_deleted_cluster_takes_it() {
    run(|| async {
        let a = Applied::new().await;
        let first = a.store.get(RECORD).await.unwrap().data;
        let rec: serde_json::Value = serde_json::from_slice(&first).unwrap();
        assert_eq!(rec["groups"].as_object().unwrap().len() as u64, GROUPS);
        // Past the limit, an apply still reads everything and records anew.
        a.clock.advance(Duration::from_secs(2 * 3600));
        assert_eq!(a.apply().await, GROUPS);
        let (plan, calls) = a.dry_run(UpdateOptions::default()).await;
        assert_eq!(calls, 0);
        assert_eq!(
            plan.recorded_hooks().map(|r| r.recorded_at),
            Some(a.clock.now())
        );

        a.registry.delete_cluster(NAME).await.unwrap();
        assert!(a.store.get_opt(RECORD).await.unwrap().is_none());
    });
}

/// kOps' `delete instancegroup` on AWS: one group's autoscaling group, instances and
/// launch template go; every other object of the cluster stays, the other groups' too.
/// (Here for [`Applied`], a cluster of seven groups on the mock.)
#[test]
fn deleting_one_instance_group_takes_its_objects_only() {
    use kops_model::aws::cloud::ResourceType;
    use kops_model::aws::{
        DeleteOptions, delete_instance_group, find_cluster_resources, find_instance_group_resources,
    };
    run(|| async {
        let a = Applied::new().await;
        let api: &dyn AwsCloud = &a.cloud;
        let retry = kops_tasks::retry::RetryPolicy::default();
        let before = find_cluster_resources(api, NAME).await.unwrap();
        let found = find_instance_group_resources(api, NAME, "extra-1", &retry)
            .await
            .unwrap();
        let kinds: std::collections::BTreeSet<ResourceType> =
            found.iter().map(|r| r.resource_type).collect();
        assert!(
            kinds.contains(&ResourceType::AutoscalingGroup)
                && kinds.contains(&ResourceType::LaunchTemplate),
            "{found:?}"
        );
        assert!(
            found.iter().all(|r| r
                .tags
                .get("kops.k8s.io/instancegroup")
                .is_some_and(|g| g == "extra-1")),
            "{found:?}"
        );
        let report = delete_instance_group(
            api,
            NAME,
            "extra-1",
            &DeleteOptions::default().with_retry_delay(Duration::ZERO),
        )
        .await
        .unwrap();
        assert!(report.is_complete(), "{report}");
        assert_eq!(report.deleted.len(), found.len(), "{report}");
        // Every object but the group's is still there (instances left out: a terminated
        // one stays listed for a while, on AWS as on the mock).
        let ids = |rs: &[kops_model::aws::cloud::Resource]| -> Vec<String> {
            rs.iter()
                .filter(|r| r.resource_type != ResourceType::Instance)
                .map(|r| r.id.clone())
                .collect()
        };
        let after = find_cluster_resources(api, NAME).await.unwrap();
        let gone = ids(&found);
        let kept: Vec<String> = ids(&before)
            .into_iter()
            .filter(|id| !gone.contains(id))
            .collect();
        assert_eq!(ids(&after), kept);
        assert!(!gone.is_empty() && ids(&after).len() < ids(&before).len());
        a.asg_of("extra-0");
        assert!(
            find_instance_group_resources(api, NAME, "extra-1", &retry)
                .await
                .unwrap()
                .is_empty()
        );
    });
}
