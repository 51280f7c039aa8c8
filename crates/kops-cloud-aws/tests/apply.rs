//! End-to-end: the model's AWS tasks applied through `kops_tasks::Executor` (direct mode)
//! to moto via this backend; then plan, change, re-apply, delete. Uses kOps' conformance
//! cases from `<repo>/../shared/conformance/cases` (absent: a failure under CI, a recorded skip elsewhere; see `support/shared.rs`).
#![allow(
    clippy::cmp_owned,
    clippy::nonminimal_bool,
    clippy::ptr_arg,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_cloud_aws::AwsBackend;
use kops_cloud_aws::cloud::{
    AccountInfo, AwsCloud, CloudError, CloudResult, CreateRequest, HostedZone, Image, ImageQuery,
    ListQuery, Resource, ResourceCloud, ResourceType, UpdateRequest, ZoneQuery,
};
use kops_model::aws::delete::{DeleteOptions, delete_cluster, find_cluster_resources};
use kops_model::aws::{AwsTask, ModelContext, build_tasks, builders};
use kops_tasks::{
    Context, Executor, ExecutorOptions, Plan, Results, TaskGraph, TokioClock, async_trait,
};

mod common;
use common::{backend, endpoint, make_bucket, run};

/// An image moto knows (its built-in Ubuntu AMI).
const MOTO_AMI: &str = "ami-1e749f67";

#[path = "../../../support/shared.rs"]
mod shared;

fn case_dir(name: &str) -> Option<PathBuf> {
    shared::require(
        "apply",
        &format!("conformance/cases/{name}/in-v1alpha2.yaml"),
    )?;
    Some(shared::root().join("conformance/cases").join(name))
}

/// The case's spec with its fake region replaced and its config base in `bucket`.
struct Case {
    cluster: internal::Cluster,
    groups: Vec<internal::InstanceGroup>,
    ssh_key: Option<String>,
    /// The cluster's config base: every context of the case writes its managed files
    /// here, so a second plan sees the files the first apply wrote.
    config_store: Arc<kops_statestore::MemoryStore>,
}

fn load_case(dir: &PathBuf, region: &str, bucket: &str) -> Case {
    let text = std::fs::read_to_string(dir.join("in-v1alpha2.yaml")).unwrap();
    let text = text
        .replace("us-test-1", region)
        .replace("memfs://clusters.example.com", &format!("s3://{bucket}"))
        .replace("memfs://tests", &format!("s3://{bucket}"))
        // moto cannot launch instances whose template maps instance-store (ephemeral)
        // devices, which m3.medium has; AWS can.
        .replace("machineType: m3.medium", "machineType: t3.medium")
        // moto does not store an autoscaling group's MaxInstanceLifetime.
        .replace("  maxInstanceLifetime: 48h20m\n", "");
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(text.as_bytes(), "in-v1alpha2.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let ssh_key = std::fs::read_to_string(dir.join("id_rsa.pub")).ok();
    Case {
        cluster: cluster.unwrap(),
        groups,
        ssh_key,
        config_store: Arc::new(kops_statestore::MemoryStore::new()),
    }
}

async fn context(cloud: &dyn AwsCloud, case: &Case, region: &str) -> ModelContext {
    let (full, groups) =
        populate(&case.cluster, &case.groups, &PopulateOptions::default()).unwrap();
    let image = cloud
        .images(&ImageQuery::Id(MOTO_AMI.into()))
        .await
        .unwrap()
        .remove(0);
    // The cluster's managed files go to its config base in the state store (here in
    // memory), not through the cloud.
    let mut ctx = ModelContext::new(full, groups.clone(), region)
        .with_account(cloud.account().await.unwrap())
        .with_config_store(case.config_store.clone());
    for ig in &groups {
        if let Some(spec) = &ig.spec.image {
            ctx = ctx.with_image(spec.clone(), image.clone());
        }
    }
    if let Some(k) = &case.ssh_key {
        ctx = ctx.with_ssh_public_key(k.trim().to_owned());
    }
    ctx.with_dns_zone(example_zone(cloud).await)
}

/// The public zone `example.com.` the cases' DNS names live in, created when missing.
async fn example_zone(cloud: &dyn AwsCloud) -> HostedZone {
    let q = ZoneQuery::Name("example.com".into());
    if let Some(z) = cloud.hosted_zones(&q).await.unwrap().into_iter().next() {
        return z;
    }
    let ep = std::env::var("KOPS_TEST_S3_ENDPOINT").unwrap();
    let r53 = aws_sdk_route53::Client::new(&common::sdk_config(&ep));
    let z = r53
        .create_hosted_zone()
        .name("example.com.")
        .caller_reference(format!("kops-cloud-aws-tests-{}", std::process::id()))
        .send()
        .await
        .unwrap();
    let z = z.hosted_zone().unwrap();
    HostedZone::new(z.id(), z.name(), false)
}

/// Deletes every object of `cluster` and checks that nothing was left. Also used first,
/// for what an earlier, interrupted run left (the server is shared, never reset).
async fn cleanup(cloud: &dyn AwsCloud, cluster: &str) {
    let opts = DeleteOptions::default()
        .with_retry_delay(Duration::from_millis(200))
        .with_max_rounds(10);
    let report = delete_cluster(cloud, cluster, &opts).await.unwrap();
    assert!(report.is_complete(), "{report}");
}

fn graph(ctx: &ModelContext) -> TaskGraph<dyn AwsCloud> {
    TaskGraph::build(build_tasks(ctx).unwrap()).unwrap()
}

fn executor() -> Executor {
    Executor::new(
        ExecutorOptions::default()
            .with_backoff(Duration::from_millis(20), Duration::from_millis(300))
            .with_task_deadline(Duration::from_secs(120)),
    )
}

async fn apply(cloud: &dyn AwsCloud, g: &TaskGraph<dyn AwsCloud>) {
    let report = executor().apply(g, cloud).await;
    assert!(
        report.is_success(),
        "apply failed: {:?} skipped {:?}",
        report.failed,
        report.skipped.len()
    );
}

async fn plan(cloud: &dyn AwsCloud, g: &TaskGraph<dyn AwsCloud>) -> Plan {
    executor().plan(g, cloud).await.unwrap()
}

/// Field changes moto cannot converge (it ignores the call that sets them); every other
/// difference fails the test.
const MOTO_GAPS: &[(&str, &str)] = &[("Subnet/", "private_dns_hostname_type_on_launch")];

fn assert_converged(p: &Plan, when: &str) {
    let real: Vec<_> = p
        .changes()
        .filter(|i| {
            let key = i.key.to_string();
            i.changes.is_empty()
                || !i.changes.iter().all(|c| {
                    MOTO_GAPS
                        .iter()
                        .any(|(k, f)| key.starts_with(k) && c.field.to_string() == *f)
                })
        })
        .collect();
    assert!(
        real.is_empty(),
        "plan {when} has changes:\n{}",
        p.render_text()
    );
}

#[test]
fn minimal_aws_apply_plan_change_delete() {
    run(async {
        let Some(ep) = endpoint() else { return };
        let Some(dir) = case_dir("minimal-aws") else {
            return;
        };
        let region = "eu-central-1";
        let bucket = "kops-cloud-aws-e2e-minimal";
        make_bucket(&ep, bucket).await;
        let be = backend(&ep, region);
        let cloud: &dyn AwsCloud = &be;
        let mut case = load_case(&dir, region, bucket);
        let name = case.cluster.name().to_string();
        cleanup(cloud, &name).await;

        // A pre-existing VPC and subnet shared with the cluster.
        let Foreign {
            shared_vpc,
            shared_subnet,
            ..
        } = foreign_network(cloud, &name, region).await;

        let ctx = context(cloud, &case, region).await;
        let g = graph(&ctx);
        apply(cloud, &g).await;

        // Every task's object exists: a plan right after apply has nothing to do.
        let p = plan(cloud, &g).await;
        assert_converged(&p, "after apply");
        let tasks = builders::build(&ctx).unwrap().tasks;
        let mut created = assert_named_and_tagged(cloud, &tasks, &g).await;
        be.clear_cache();
        be.reset_api_calls();
        let p = plan(cloud, &g).await;
        assert_converged(&p, "after apply, uncached");
        let noop_calls = be.total_api_calls();
        eprintln!(
            "no-op plan of {} ({} groups, {} tasks): {noop_calls} API calls: {:?}",
            name,
            case.groups.len(),
            g.len(),
            be.api_calls()
        );

        // Change the spec: the control plane's instance type, the node count, a new group.
        // (Type and count go to different groups: moto cannot launch instances from a second
        // template version that carries user data; AWS can.)
        let master = case
            .groups
            .iter_mut()
            .find(|ig| ig.name() != "nodes")
            .unwrap();
        master.spec.machine_type = Some("t3.large".into());
        let master_name = master.name().to_string();
        let nodes = case
            .groups
            .iter_mut()
            .find(|ig| ig.name() == "nodes")
            .unwrap();
        nodes.spec.min_size = Some(3);
        nodes.spec.max_size = Some(3);
        let mut extra = nodes.clone();
        extra.metadata.name = Some("extra".into());
        case.groups.push(extra);
        let ctx2 = context(cloud, &case, region).await;
        let g2 = graph(&ctx2);
        let p = plan(cloud, &g2).await;
        let gapless = |i: &&kops_tasks::PlanItem| {
            let key = i.key.to_string();
            !(i.changes.iter().all(|c| {
                MOTO_GAPS
                    .iter()
                    .any(|(k, f)| key.starts_with(k) && c.field.to_string() == *f)
            }) && !i.changes.is_empty())
        };
        let changes: BTreeSet<String> = p
            .changes()
            .filter(gapless)
            .map(|i| format!("{:?} {}", i.action, i.key))
            .collect();
        let fields = |prefix: &str| -> Vec<String> {
            p.changes()
                .filter(|i| i.key.to_string().starts_with(prefix))
                .flat_map(|i| i.changes.iter().map(|c| c.field.to_string()))
                .collect()
        };
        let lt_master = format!("LaunchTemplate/{master_name}.masters.");
        let asg_nodes = "AutoscalingGroup/nodes.".to_owned();
        assert_eq!(
            fields(&lt_master),
            vec!["instance_type".to_owned()],
            "{changes:#?}"
        );
        let mut nf = fields(&asg_nodes);
        nf.sort();
        assert_eq!(
            nf,
            vec!["max_size".to_owned(), "min_size".to_owned()],
            "{changes:#?}"
        );
        for c in &changes {
            let expected = c.starts_with(&format!("Update {lt_master}"))
                || c.starts_with(&format!("Update {asg_nodes}"))
                || (c.starts_with("Create ") && c.contains("extra"));
            assert!(expected, "unexpected change {c}; all: {changes:#?}");
        }
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with("Create LaunchTemplate/extra.")),
            "{changes:#?}"
        );
        assert!(
            changes
                .iter()
                .any(|c| c.starts_with("Create AutoscalingGroup/extra.")),
            "{changes:#?}"
        );
        // The control plane's group follows its template's new version only after apply.
        apply(cloud, &g2).await;
        let p = plan(cloud, &g2).await;
        assert_converged(&p, "after the change");
        let tasks2 = builders::build(&ctx2).unwrap().tasks;
        created.extend(assert_named_and_tagged(cloud, &tasks2, &g2).await);

        // Delete: everything the cluster owns goes; shared objects stay.
        let dry = find_cluster_resources(cloud, &name).await.unwrap();
        assert!(
            dry.iter()
                .any(|r| r.resource_type == Some(ResourceType::Vpc))
        );
        assert!(
            !dry.iter()
                .any(|r| r.id == shared_vpc.id || r.id == shared_subnet.id)
        );
        cleanup(cloud, &name).await;
        assert!(
            find_cluster_resources(cloud, &name)
                .await
                .unwrap()
                .is_empty()
        );
        be.clear_cache();
        assert_gone(cloud, &created).await;
        let p = plan(cloud, &g2).await;
        assert!(
            p.changes().count() > 0,
            "after delete the cluster must be planned anew"
        );
        let vpc = cloud
            .list(&ListQuery::new(ResourceType::Vpc).with_ids([shared_vpc.id.clone()]))
            .await
            .unwrap();
        assert_eq!(vpc.len(), 1, "shared VPC deleted");
        let sn = cloud
            .list(&ListQuery::new(ResourceType::Subnet).with_ids([shared_subnet.id.clone()]))
            .await
            .unwrap();
        assert_eq!(sn.len(), 1, "shared subnet deleted");
        assert_eq!(sn[0].tags, shared_subnet.tags);
    });
}

/// Answers a share of calls with a throttling error before they reach the cloud.
#[derive(Debug)]
struct Throttling {
    inner: AwsBackend,
    percent: u64,
    n: AtomicU64,
    injected: AtomicU64,
}

impl Throttling {
    fn check(&self, op: &str) -> CloudResult<()> {
        // A fixed pseudo-random sequence (splitmix64), so runs are reproducible.
        let mut z = self
            .n
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if z % 100 < self.percent {
            self.injected.fetch_add(1, Ordering::Relaxed);
            return Err(CloudError::throttled(format!("{op} (injected)")));
        }
        Ok(())
    }
}

#[async_trait]
impl ResourceCloud<ResourceType> for Throttling {
    async fn list(&self, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.check("list")?;
        self.inner.list(q).await
    }
    async fn list_digests(&self, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        self.check("list_digests")?;
        self.inner.list_digests(q).await
    }
    async fn create(&self, r: &CreateRequest) -> CloudResult<Resource> {
        self.check("create")?;
        self.inner.create(r).await
    }
    async fn update(&self, r: &UpdateRequest) -> CloudResult<Resource> {
        self.check("update")?;
        self.inner.update(r).await
    }
    async fn delete(&self, t: ResourceType, id: &str) -> CloudResult<()> {
        self.check("delete")?;
        self.inner.delete(t, id).await
    }
}

#[async_trait]
impl AwsCloud for Throttling {
    async fn account(&self) -> CloudResult<AccountInfo> {
        self.check("account")?;
        self.inner.account().await
    }
    async fn zones(&self) -> CloudResult<Vec<String>> {
        self.check("zones")?;
        self.inner.zones().await
    }
    async fn images(&self, q: &ImageQuery) -> CloudResult<Vec<Image>> {
        self.check("images")?;
        self.inner.images(q).await
    }
    async fn hosted_zones(&self, q: &ZoneQuery) -> CloudResult<Vec<HostedZone>> {
        self.check("hosted_zones")?;
        self.inner.hosted_zones(q).await
    }
}

#[test]
fn apply_converges_with_30_percent_throttling() {
    run(async {
        let Some(ep) = endpoint() else { return };
        let Some(dir) = case_dir("minimal-aws") else {
            return;
        };
        let region = "ca-central-1";
        let bucket = "kops-cloud-aws-e2e-throttled";
        make_bucket(&ep, bucket).await;
        let be = backend(&ep, region);
        let mut case = load_case(&dir, region, bucket);
        // Its own cluster name: IAM is global to the account.
        case.cluster.metadata.name = Some("throttled.example.com".into());
        cleanup(&be, "throttled.example.com").await;
        let ctx = context(&be, &case, region).await;
        let g = graph(&ctx);
        let flaky = Throttling {
            inner: be.clone(),
            percent: 30,
            n: AtomicU64::new(0),
            injected: AtomicU64::new(0),
        };
        apply(&flaky, &g).await;
        let p = plan(&flaky, &g).await;
        assert_converged(&p, "after throttled apply");
        assert!(
            flaky.injected.load(Ordering::Relaxed) > 10,
            "the wrapper did inject errors"
        );
        eprintln!(
            "throttling wrapper injected {} errors",
            flaky.injected.load(Ordering::Relaxed)
        );
        cleanup(&be, "throttled.example.com").await;
    });
}

/// A no-op plan of a 50-group cluster costs the same API calls as a 2-group one, plus a
/// small constant (per-group objects are found in batched listings).
#[test]
fn noop_plan_calls_do_not_grow_with_instance_groups() {
    run(async {
        let Some(ep) = endpoint() else { return };
        let Some(dir) = case_dir("minimal-aws") else {
            return;
        };
        let mut counts = Vec::new();
        for (n, region, cluster) in [
            (2usize, "sa-east-1", "two.example.com"),
            (50, "ap-northeast-1", "fifty.example.com"),
        ] {
            let bucket = format!("kops-cloud-aws-e2e-{n}");
            make_bucket(&ep, &bucket).await;
            let be = backend(&ep, region);
            let mut case = load_case(&dir, region, &bucket);
            case.cluster.metadata.name = Some(cluster.into());
            let nodes = case
                .groups
                .iter()
                .find(|ig| ig.name() == "nodes")
                .unwrap()
                .clone();
            case.groups.retain(|ig| ig.name() != "nodes");
            for i in 0..n - 1 {
                let mut ig = nodes.clone();
                ig.metadata.name = Some(format!("nodes-{i}"));
                ig.spec.min_size = Some(0);
                ig.spec.max_size = Some(1);
                case.groups.push(ig);
            }
            assert_eq!(case.groups.len(), n);
            cleanup(&be, cluster).await;
            let ctx = context(&be, &case, region).await;
            let g = graph(&ctx);
            apply(&be, &g).await;
            be.clear_cache();
            be.reset_api_calls();
            let p = plan(&be, &g).await;
            assert_converged(&p, "no-op");
            let total = be.total_api_calls();
            eprintln!(
                "no-op plan, {n} instance groups, {} tasks: {total} API calls {:?}",
                g.len(),
                be.api_calls()
            );
            counts.push((n, g.len(), total, be.api_calls()));
            cleanup(&be, cluster).await;
        }
        // The state store's files are compared by the MD5 digests one ListObjectsV2 page
        // gives, never read one by one.
        for (n, _, _, m) in &counts {
            assert_eq!(
                m.get("s3:GetObject"),
                None,
                "{n} groups: objects read: {m:?}"
            );
        }
        // DescribeLifecycleHooks takes exactly one group name, so the hooks of each group
        // with hooks (every group here: node-termination-handler) cost one call each;
        // every other lookup is batched and must not grow with the groups.
        const PER_OBJECT: &[&str] = &["autoscaling:DescribeLifecycleHooks"];
        let batched = |m: &BTreeMap<String, u64>| -> u64 {
            m.iter()
                .filter(|(k, _)| !PER_OBJECT.contains(&k.as_str()))
                .map(|(_, v)| v)
                .sum()
        };
        let (two, fifty) = (batched(&counts[0].3), batched(&counts[1].3));
        eprintln!(
            "batched calls: 2 groups {two}, 50 groups {fifty}; totals {} and {}",
            counts[0].2, counts[1].2
        );
        assert!(
            fifty <= two + 5,
            "50 groups: {fifty} calls, 2 groups: {two} calls\n{:?}\n{:?}",
            counts[0].3,
            counts[1].3
        );
        let ec2 = |m: &BTreeMap<String, u64>| -> u64 {
            m.iter()
                .filter(|(k, _)| k.starts_with("ec2:"))
                .map(|(_, v)| v)
                .sum()
        };
        assert_eq!(
            ec2(&counts[0].3),
            ec2(&counts[1].3),
            "EC2 calls must not depend on the number of groups"
        );
    });
}

/// Every managed task's object is found (tasks in dependency order, each `find` seeing
/// the outputs of the ones before, as the executor does); looked up again independently by
/// its ID, it carries the task's cloud name and exactly its tags. Returns (task key, type,
/// ID) of each.
async fn assert_named_and_tagged(
    cloud: &dyn AwsCloud,
    tasks: &[AwsTask],
    g: &TaskGraph<dyn AwsCloud>,
) -> Vec<(String, ResourceType, String)> {
    let by_key: BTreeMap<String, &AwsTask> = tasks
        .iter()
        .map(|t| (t.task_key().to_string(), t))
        .collect();
    let results = Results::new();
    let clock = TokioClock::new();
    let mut out = Vec::new();
    let mut checked = 0;
    for &i in g.topological_order() {
        let node = g.node(i).unwrap();
        let key = node.key().clone();
        let cx = Context::new(cloud, &key, &results, &clock);
        let found = node
            .task()
            .find(&cx)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{key}: no object found after apply"));
        let id = found.outputs.get("id").unwrap_or_default().to_owned();
        results.insert(key.clone(), found.outputs);
        // Tasks that are not cloud resources (the managed files, written through the
        // state store) have nothing to look up in the cloud.
        let Some(&t) = by_key.get(&key.to_string()) else {
            continue;
        };
        if t.is_shared() {
            continue;
        }
        let rt = t.resource_type();
        out.push((key.to_string(), rt, id.clone()));
        if !rt.is_taggable() && t.cloud_name().is_none() {
            continue;
        }
        let found = cloud
            .list(&ListQuery::new(rt).with_ids([id.clone()]))
            .await
            .unwrap();
        assert_eq!(
            found.len(),
            1,
            "{key}: {rt} {id} listed {} times",
            found.len()
        );
        let r = &found[0];
        if let Some(n) = t.cloud_name() {
            assert_eq!(r.name.as_deref(), Some(n), "{key}: name of {id}");
        }
        if rt.is_taggable()
            && let Some(tags) = t.expected_tags()
        {
            assert_eq!(&r.tags, tags, "{key}: tags of {id}");
        }
        checked += 1;
    }
    assert!(
        checked > 10,
        "only {checked} objects had names or tags to check"
    );
    out
}

/// Every object of `created` (but the state store's files) is gone.
async fn assert_gone(cloud: &dyn AwsCloud, created: &[(String, ResourceType, String)]) {
    for (key, rt, id) in created {
        if *rt == ResourceType::S3Object {
            // State-store files are not cloud resources: delete_cluster leaves them to
            // the state store (see its docs).
            continue;
        }
        let left = cloud
            .list(&ListQuery::new(*rt).with_ids([id.clone()]))
            .await
            .unwrap();
        assert!(left.is_empty(), "{key}: {rt} {id} survived delete");
    }
}

/// Applies a conformance case to moto with a pre-existing shared VPC and subnet and an
/// untagged VPC around it: every object exists with kOps' names and tags, a plan right
/// after is empty, and delete removes every object the cluster created and nothing else.
async fn apply_check_delete(case_name: &str, region: &str, bucket: &str) {
    let Some(ep) = endpoint() else { return };
    let Some(dir) = case_dir(case_name) else {
        return;
    };
    make_bucket(&ep, bucket).await;
    let be = backend(&ep, region);
    let cloud: &dyn AwsCloud = &be;
    let case = load_case(&dir, region, bucket);
    let name = case.cluster.name().to_string();
    cleanup(cloud, &name).await;

    let Foreign {
        shared_vpc,
        shared_subnet,
        untagged_vpc,
    } = foreign_network(cloud, &name, region).await;

    let ctx = context(cloud, &case, region).await;
    let tasks = builders::build(&ctx).unwrap().tasks;
    let g = graph(&ctx);
    apply(cloud, &g).await;
    be.clear_cache();
    let p = plan(cloud, &g).await;
    assert_converged(&p, "after apply");
    let created = assert_named_and_tagged(cloud, &tasks, &g).await;
    let kinds: BTreeSet<ResourceType> = created.iter().map(|c| c.1).collect();
    eprintln!(
        "{case_name}: {} objects of {} types exist with kOps' names and tags",
        created.len(),
        kinds.len()
    );

    // A managed file changed behind the model's back in the config base: the plan shows
    // exactly that file's content as changed, reading nothing from S3, and apply puts it
    // back.
    let store = ctx.config_store.clone().unwrap();
    let files = store.list("").await.unwrap();
    let file = files
        .iter()
        .find(|f| f.path.ends_with("bootstrap-channel.yaml"))
        .expect("the bootstrap channel in the config base")
        .path
        .clone();
    store
        .put(
            &file,
            bytes::Bytes::from_static(b"edited by hand\n"),
            kops_statestore::PutOptions::overwrite(),
        )
        .await
        .unwrap();
    be.clear_cache();
    be.reset_api_calls();
    let p = plan(cloud, &g).await;
    let changed: Vec<String> = p
        .changes()
        .filter(|i| !i.key.to_string().starts_with("Subnet/"))
        .flat_map(|i| {
            i.changes
                .iter()
                .map(move |c| format!("{} {}", i.key, c.field))
        })
        .collect();
    assert_eq!(
        changed,
        vec![format!("ManagedFile/{name}-addons-bootstrap contents")],
        "{}",
        p.render_text()
    );
    assert_eq!(
        be.api_calls().get("s3:GetObject"),
        None,
        "objects were read"
    );
    apply(cloud, &g).await;
    assert_converged(&plan(cloud, &g).await, "after restoring the file");

    // Records in the cluster's zone that are not the cluster's endpoints: kept.
    let zone = example_zone(cloud).await;
    let mut foreign = Vec::new();
    for (rec, ty, value) in [
        (format!("www.{name}"), "A", "203.0.113.7"),
        (format!("api.other-{name}"), "A", "203.0.113.8"),
        // An endpoint name, but a type kOps never writes there.
        (format!("bastion.{name}"), "CNAME", "example.org"),
    ] {
        // Left by an interrupted run.
        for old in cloud
            .list(&ListQuery::new(ResourceType::RecordSet).with_parent(zone.id.clone()))
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.attr_str("name") == Some(rec.as_str()))
        {
            cloud
                .delete(ResourceType::RecordSet, &old.id)
                .await
                .unwrap();
        }
        let r = cloud
            .create(
                &CreateRequest::new(ResourceType::RecordSet)
                    .with_parent(zone.id.clone())
                    .with_attrs(BTreeMap::from([
                        ("zone_id".into(), zone.id.clone().into()),
                        ("name".into(), rec.into()),
                        ("type".into(), ty.into()),
                        ("ttl".into(), 60.into()),
                        ("records".into(), serde_json::json!([value])),
                    ])),
            )
            .await
            .unwrap();
        foreign.push(r.id);
    }
    let dry = find_cluster_resources(cloud, &name).await.unwrap();
    for id in [&shared_vpc.id, &shared_subnet.id, &untagged_vpc.id]
        .into_iter()
        .chain(&foreign)
    {
        assert!(!dry.iter().any(|r| &r.id == id), "dry run lists {id}");
    }
    // The dry run lists every object the cluster created, DNS records included (the
    // state store's files are not cloud resources; see delete_cluster's docs).
    for (key, rt, id) in &created {
        let child = matches!(
            rt,
            ResourceType::Route
                | ResourceType::RouteTableAssociation
                | ResourceType::SecurityGroupRule
                | ResourceType::IamRolePolicy
                | ResourceType::IamRolePolicyAttachment
                | ResourceType::LifecycleHook
                | ResourceType::WarmPool
                | ResourceType::Listener
                | ResourceType::EventTarget
                | ResourceType::DhcpOptionsAssociation
                | ResourceType::S3Object
        );
        if !child {
            assert!(
                dry.iter().any(|r| &r.id == id),
                "dry run misses {key} ({rt} {id})"
            );
        }
    }
    cleanup(cloud, &name).await;
    be.clear_cache();
    assert_gone(cloud, &created).await;
    for (rt, id) in [
        (ResourceType::Vpc, &shared_vpc.id),
        (ResourceType::Subnet, &shared_subnet.id),
        (ResourceType::Vpc, &untagged_vpc.id),
    ] {
        let left = cloud
            .list(&ListQuery::new(rt).with_ids([id.clone()]))
            .await
            .unwrap();
        assert_eq!(left.len(), 1, "pre-existing {rt} {id} was deleted");
    }
    for id in &foreign {
        let left = cloud
            .list(&ListQuery::new(ResourceType::RecordSet).with_ids([id.clone()]))
            .await
            .unwrap();
        assert_eq!(left.len(), 1, "unrelated record {id} was deleted");
    }
    assert!(
        cloud
            .hosted_zones(&ZoneQuery::Id(zone.id.clone()))
            .await
            .unwrap()
            .iter()
            .any(|z| z.id == zone.id),
        "the zone itself was deleted"
    );
    for id in &foreign {
        cloud.delete(ResourceType::RecordSet, id).await.unwrap();
        let left = cloud
            .list(&ListQuery::new(ResourceType::RecordSet).with_ids([id.clone()]))
            .await
            .unwrap();
        assert!(left.is_empty(), "record {id} survived its delete");
    }
    for (rt, id) in [
        (ResourceType::Subnet, &shared_subnet.id),
        (ResourceType::Vpc, &untagged_vpc.id),
        (ResourceType::Vpc, &shared_vpc.id),
    ] {
        cloud.delete(rt, id).await.unwrap();
    }
}

#[test]
fn privatecalico_apply_check_delete() {
    run(apply_check_delete(
        "privatecalico",
        "us-west-2",
        "kops-cloud-aws-e2e-privatecalico",
    ));
}

#[test]
fn ha_apply_check_delete() {
    run(apply_check_delete(
        "ha",
        "eu-west-1",
        "kops-cloud-aws-e2e-ha",
    ));
}

/// Objects that exist before the cluster and must survive its delete.
struct Foreign {
    /// A VPC tagged `kubernetes.io/cluster/<name>=shared`.
    shared_vpc: Resource,
    /// A subnet of that VPC, tagged the same way.
    shared_subnet: Resource,
    /// A VPC with no tags at all.
    untagged_vpc: Resource,
}

async fn foreign_network(cloud: &dyn AwsCloud, name: &str, region: &str) -> Foreign {
    let shared = BTreeMap::from([(format!("kubernetes.io/cluster/{name}"), "shared".to_owned())]);
    let vpc = |cidr: &str| {
        CreateRequest::new(ResourceType::Vpc)
            .with_attrs(BTreeMap::from([("cidr_block".into(), cidr.into())]))
    };
    let shared_vpc = cloud
        .create(&vpc("10.9.0.0/16").with_tags(shared.clone()))
        .await
        .unwrap();
    let shared_subnet = cloud
        .create(
            &CreateRequest::new(ResourceType::Subnet)
                .with_tags(shared)
                .with_attrs(BTreeMap::from([
                    ("cidr_block".into(), "10.9.1.0/24".into()),
                    ("vpc_id".into(), shared_vpc.id.clone().into()),
                    ("availability_zone".into(), format!("{region}a").into()),
                ])),
        )
        .await
        .unwrap();
    let untagged_vpc = cloud.create(&vpc("10.8.0.0/16")).await.unwrap();
    Foreign {
        shared_vpc,
        shared_subnet,
        untagged_vpc,
    }
}
