//! The Hetzner cloud conformance suite against both implementations: the in-memory mock,
//! and the REST client (`RestHetzner`) talking HTTP to the fake of the hcloud API (which
//! answers at most 50 objects a page, so the suite's 60 servers take two).

use std::time::Duration;

use kops_cloud_hetzner::conformance;
use kops_cloud_hetzner::rest::{RestConfig, RestHetzner};
use kops_mock::hetzner::MockHetzner;
use kops_mock::hetzner::rest::FakeHcloudApi;
use kops_tasks::retry::RetryPolicy;

#[tokio::test]
async fn the_hetzner_mock_passes_the_conformance_suite() -> Result<(), Box<dyn std::error::Error>> {
    let cloud = MockHetzner::new();
    conformance::run_all(&cloud, "mock").await?;
    // Everything the suite made, it deleted.
    assert!(
        cloud.objects().is_empty(),
        "left behind: {:?}",
        cloud.objects()
    );
    Ok(())
}

#[tokio::test]
async fn the_rest_client_passes_the_conformance_suite_on_the_fake_api()
-> Result<(), Box<dyn std::error::Error>> {
    let fake = FakeHcloudApi::start("conformance-token").await?;
    let cfg = RestConfig::new("conformance-token")
        .with_endpoint(fake.url())
        .with_action_poll(Duration::from_millis(1))
        .with_retry(
            RetryPolicy::default()
                .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
                .with_max_attempts(3),
        );
    let cloud = RestHetzner::new(cfg)?;
    conformance::run_all(&cloud, "rest").await?;
    let left = fake.cloud().objects();
    assert!(left.is_empty(), "left behind: {left:?}");
    Ok(())
}
