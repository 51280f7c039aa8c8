//! A failed apply keeps each task's typed error: an embedder matches on the kind of failure
//! (permission, quota, throttling, invalid value, not found) and on the cloud's details,
//! here from faults the mock cloud injects into one call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use kops_mock::{FaultKind, FaultPlan, FaultRule};
use kops_model::aws::{
    ApplyOptions, DiscoverOptions, UpdateCluster, UpdateOptions, UpdatePlan, discover,
};
use kops_model::statestore::{MemoryStore, Registry, Store, SystemClock};
use kops_model::tasks::resource::CloudError;
use kops_model::tasks::{ErrorKind, ExecutorOptions};
use kops_model::{DnsType, Error, NewClusterOptions, TaskFailure, new_cluster};

const NAME: &str = "errors.example.com";
const STORE: &str = "memfs://clusters.example.com";

/// A new cluster on a new mock, its update and first plan, and its state store.
async fn planned(
    label: &str,
) -> (
    kops_mock::MockAws,
    Arc<MemoryStore>,
    UpdateCluster,
    UpdatePlan,
) {
    let cloud = kops_mock::fixture::Fixture::parse(
        "aws:\n  region: us-test-1\n  zones: [us-test-1a]\n  ec2:\n    images:\n    - {imageId: ami-00000001, name: errors, ownerId: '1', rootDeviceName: /dev/xvda}\n",
        label,
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
    let opts = DiscoverOptions::default().with_state_store(store.clone(), STORE);
    let ctx = discover(&cloud, &cluster, &groups, &opts).await.unwrap();
    let update = UpdateCluster::new(
        ctx,
        UpdateOptions::default()
            .with_lock_holder(label)
            .with_unreadable_config_base(true),
    )
    .unwrap();
    let plan = Box::pin(update.plan(&cloud)).await.unwrap();
    (cloud, store, update, plan)
}

/// Applies a new cluster on a mock whose every `operation` call fails with `fault`, and
/// returns the failures of the apply.
async fn apply_failing(operation: &str, fault: FaultKind) -> (Vec<TaskFailure>, String) {
    let (cloud, store, update, plan) = planned("errors test").await;
    cloud.set_faults(FaultPlan::new().with_rule(FaultRule::next(operation, u64::MAX, fault)));
    let registry = Registry::new(store as Arc<dyn Store>, Arc::new(SystemClock));
    let executor = ExecutorOptions::default()
        .with_max_attempts(2)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(2));
    let err = update
        .apply(
            &cloud,
            &registry,
            &plan,
            ApplyOptions::default().with_executor(executor),
        )
        .await
        .expect_err("the apply fails");
    let shown = err.to_string();
    match err {
        Error::Apply { failed, .. } => (failed, shown),
        other => panic!("expected Error::Apply, got {other:?}"),
    }
}

/// The failure of the task whose kind is `task_kind` (`VPC`, `Subnet`).
fn failure_of<'a>(failed: &'a [TaskFailure], task_kind: &str) -> &'a TaskFailure {
    failed
        .iter()
        .find(|f| f.task.to_string().starts_with(&format!("{task_kind}/")))
        .unwrap_or_else(|| panic!("no failed {task_kind} task among {failed:?}"))
}

#[tokio::test]
async fn permission_denied_is_matched_by_kind() {
    let (failed, shown) = apply_failing("ec2:CreateVpc", FaultKind::PermissionDenied).await;
    let vpc = failure_of(&failed, "VPC");
    assert_eq!(vpc.kind(), ErrorKind::PermissionDenied, "{shown}");
    assert!(
        matches!(vpc.cloud_error(), Some(CloudError::PermissionDenied { operation, .. })
            if operation.contains("UnauthorizedOperation")),
        "{:?}",
        vpc.cloud_error()
    );
    // The message still names the cluster, the task and the cause on one line.
    assert!(shown.contains(NAME) && shown.contains("VPC/"), "{shown}");
}

#[tokio::test]
async fn a_quota_names_its_limit() {
    let (failed, shown) =
        apply_failing("ec2:CreateVpc", FaultKind::Quota("VpcLimitExceeded".into())).await;
    let vpc = failure_of(&failed, "VPC");
    assert_eq!(vpc.kind(), ErrorKind::Quota, "{shown}");
    match vpc.cloud_error() {
        Some(CloudError::Quota { limit, .. }) => assert_eq!(limit, "VpcLimitExceeded"),
        other => panic!("expected a quota, got {other:?}"),
    }
}

#[tokio::test]
async fn throttling_that_outlasts_the_retries_is_throttled() {
    let (failed, shown) = apply_failing("ec2:CreateVpc", FaultKind::Throttle).await;
    let vpc = failure_of(&failed, "VPC");
    assert_eq!(vpc.kind(), ErrorKind::Throttled, "{shown}");
    assert!(vpc.error.is_retryable());
}

#[tokio::test]
async fn an_invalid_value_names_its_field() {
    let (failed, shown) =
        apply_failing("ec2:CreateVpc", FaultKind::Invalid("CidrBlock".into())).await;
    let vpc = failure_of(&failed, "VPC");
    assert_eq!(vpc.kind(), ErrorKind::Invalid, "{shown}");
    match vpc.cloud_error() {
        Some(CloudError::Invalid { field, .. }) => assert_eq!(field, "CidrBlock"),
        other => panic!("expected an invalid value, got {other:?}"),
    }
}

#[tokio::test]
async fn an_object_gone_behind_our_back_is_not_found() {
    let (failed, shown) = apply_failing("ec2:CreateSubnet", FaultKind::NotFound("vpc")).await;
    let subnet = failure_of(&failed, "Subnet");
    assert_eq!(subnet.kind(), ErrorKind::NotFound, "{shown}");
    assert!(subnet.cloud_error().is_some_and(CloudError::is_not_found));
}

/// A delete that may not delete an autoscaling group stops there: what the group uses
/// (its load balancer's target groups, its launch template, the network) is left for the
/// next delete, which with the permission back deletes everything.
#[tokio::test]
async fn a_delete_denied_stops_before_what_the_denied_object_uses() {
    use kops_model::aws::cloud::ResourceType;
    use kops_model::aws::{DeleteOptions, delete_cluster, find_cluster_resources};
    let (cloud, store, update, plan) = planned("delete denied").await;
    let registry = Registry::new(store as Arc<dyn Store>, Arc::new(SystemClock));
    Box::pin(update.apply(&cloud, &registry, &plan, ApplyOptions::default()))
        .await
        .unwrap();

    cloud.set_faults(FaultPlan::new().with_rule(FaultRule::next(
        "autoscaling:DeleteAutoScalingGroup",
        u64::MAX,
        FaultKind::PermissionDenied,
    )));
    let options = DeleteOptions::default().with_retry_delay(Duration::ZERO);
    let report = delete_cluster(&cloud, NAME, &options).await.unwrap();
    assert!(!report.is_complete());
    assert!(
        report.deleted.is_empty(),
        "deleted before the groups: {:?}",
        report.deleted
    );
    let left = find_cluster_resources(&cloud, NAME).await.unwrap();
    for kind in [
        ResourceType::TargetGroup,
        ResourceType::LaunchTemplate,
        ResourceType::Vpc,
    ] {
        assert!(
            left.iter().any(|r| r.resource_type == kind),
            "{kind} deleted after its autoscaling group's delete was denied"
        );
    }
    assert!(report.to_string().contains("not attempted"), "{report}");

    cloud.set_faults(FaultPlan::new());
    let report = delete_cluster(&cloud, NAME, &options).await.unwrap();
    assert!(report.is_complete(), "{report}");
    // Terminated instances stay listed for a while, as on AWS.
    let left: Vec<_> = find_cluster_resources(&cloud, NAME)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.attrs.get("state").and_then(|s| s.as_str()) != Some("terminated"))
        .collect();
    assert!(left.is_empty(), "{left:#?}");
}
