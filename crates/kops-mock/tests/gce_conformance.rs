//! The GCE cloud conformance suite against the in-memory GCE mock.

use kops_cloud_gce::conformance;
use kops_mock::gce::MockGce;

#[tokio::test]
async fn the_gce_mock_passes_the_conformance_suite() -> Result<(), Box<dyn std::error::Error>> {
    let cloud = MockGce::new("testproject", "us-test1");
    conformance::run_all(&cloud, "mock").await?;
    // Everything the suite made, it deleted.
    assert!(
        cloud.objects().is_empty(),
        "left behind: {:?}",
        cloud.objects()
    );
    Ok(())
}
