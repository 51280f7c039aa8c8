//! The model applied to the mock through the executor settles: right after apply, a plan
//! of the same tasks has nothing to do. Runs kOps' conformance cases from
//! `<repo>/../shared/conformance` (absent: a failure under CI, a recorded skip elsewhere; see `support/shared.rs`) on a cloud seeded from its fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_mock::MockAws;
use kops_mock::fixture::Fixture;
use kops_model::aws::cloud::{AwsCloud, AwsCloudExt, ZoneQuery};
use kops_model::aws::{ModelContext, build_tasks};
use kops_tasks::{Executor, ExecutorOptions, TaskGraph};

#[path = "../../../support/shared.rs"]
mod shared;

fn conformance_dir() -> Option<PathBuf> {
    shared::require("settle", "conformance/fixtures/mock-cloud.yaml")?;
    Some(shared::root().join("conformance"))
}

fn cloud(root: &std::path::Path) -> MockAws {
    let fixture = Fixture::from_file(root.join("fixtures/mock-cloud.yaml")).unwrap();
    fixture.build().unwrap()
}

async fn context(cloud: &dyn AwsCloud, dir: &std::path::Path) -> ModelContext {
    let text = std::fs::read(dir.join("in-v1alpha2.yaml")).unwrap();
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(&text, "in-v1alpha2.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let (cluster, groups) =
        populate(&cluster.unwrap(), &groups, &PopulateOptions::default()).unwrap();
    let account = cloud.account().await.unwrap();
    let mut ctx = ModelContext::new(cluster, groups.clone(), account.region.clone())
        .with_account(account)
        // Managed files go to the config base in the state store, here in memory.
        .with_config_store(std::sync::Arc::new(kops_statestore::MemoryStore::new()));
    for ig in &groups {
        if let Some(spec) = &ig.spec.image {
            let image = cloud.resolve_image(spec).await.unwrap();
            ctx = ctx.with_image(spec.clone(), image);
        }
    }
    if let Ok(key) = std::fs::read_to_string(dir.join("id_rsa.pub")) {
        ctx = ctx.with_ssh_public_key(key);
    }
    let zone = cloud
        .hosted_zones(&ZoneQuery::Name("example.com".into()))
        .await
        .unwrap()
        .remove(0);
    let mut ctx = ctx.with_dns_zone(zone);
    // The nodeup configs carry the cluster's CAs: generate them once for this context.
    ctx.cluster_context
        .ensure_keysets(std::time::SystemTime::now())
        .unwrap();
    ctx
}

fn executor() -> Executor {
    Executor::new(
        ExecutorOptions::default()
            .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
            .with_task_deadline(Duration::from_secs(30)),
    )
}

/// Applies a case to a fresh mock, then plans again: nothing may be left to change.
async fn settles(case: &str) {
    let Some(root) = conformance_dir() else {
        return;
    };
    let m = cloud(&root);
    let ctx = context(&m, &root.join("cases").join(case)).await;
    let g = TaskGraph::build(build_tasks(&ctx).unwrap()).unwrap();
    let cloud: &dyn AwsCloud = &m;
    let before = m.resource_ids().len();
    let report = executor().apply(&g, cloud).await;
    assert!(
        report.is_success(),
        "{case}: apply failed: {:?}",
        report.failed
    );
    assert!(
        m.resource_ids().len() > before + 50,
        "{case}: the apply created the cluster's objects"
    );
    let plan = executor().plan(&g, cloud).await.unwrap();
    assert!(
        !plan.has_changes(),
        "{case}: a plan right after apply has changes:\n{}",
        plan.render_text()
    );
}

#[tokio::test]
async fn private_topology_settles_after_apply() {
    settles("privatecalico").await;
}

#[tokio::test]
async fn ha_control_plane_settles_after_apply() {
    settles("ha").await;
}
