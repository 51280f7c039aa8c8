//! Helpers the moto test binaries share: the emulator's endpoint, a backend on it, and
//! plain SDK clients for setting up what a test expects to exist already.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code, clippy::unwrap_used)]

use kops_cloud_aws::{AwsBackend, StaticCredentials};

/// Large-stack runtime threads: the SDK's futures are deep in debug builds.
const STACK: usize = 32 << 20;

/// Runs `f` on a two-thread runtime with large stacks.
pub fn run(f: impl std::future::Future<Output = ()> + Send + 'static) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(STACK)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::spawn(f).await.unwrap() });
}

/// The moto server `scripts/test` started (`KOPS_TEST_S3_ENDPOINT`), or `None` (the test
/// is skipped) when there is none. With `KOPS_TEST_REQUIRE_EMULATORS=1`, a missing
/// endpoint fails the test instead.
pub fn endpoint() -> Option<String> {
    match std::env::var("KOPS_TEST_S3_ENDPOINT") {
        Ok(e) if !e.is_empty() => Some(e),
        _ => {
            assert!(
                std::env::var("KOPS_TEST_REQUIRE_EMULATORS").as_deref() != Ok("1"),
                "KOPS_TEST_REQUIRE_EMULATORS=1 but KOPS_TEST_S3_ENDPOINT is not set"
            );
            eprintln!("skipping: KOPS_TEST_S3_ENDPOINT is not set (run scripts/test)");
            None
        }
    }
}

/// The backend under test, on moto in `region`.
pub fn backend(endpoint: &str, region: &str) -> AwsBackend {
    AwsBackend::builder()
        .region(region)
        .endpoint(endpoint)
        .credentials(StaticCredentials::new("testing", "testing"))
        .build()
        .unwrap()
}

/// SDK configuration for plain clients on moto (`us-east-1`, moto's test credentials).
pub fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_s3::config::SharedCredentialsProvider::new(
            aws_sdk_s3::config::Credentials::new("testing", "testing", None, None, "test"),
        ))
        .build()
}

/// A plain S3 client on moto (path-style addressing, as moto serves it).
pub fn s3_client(endpoint: &str) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk_config(endpoint))
            .force_path_style(true)
            .build(),
    )
}

/// Creates `bucket` on moto unless it exists.
pub async fn make_bucket(endpoint: &str, bucket: &str) {
    let _ = s3_client(endpoint)
        .create_bucket()
        .bucket(bucket)
        .send()
        .await;
}
