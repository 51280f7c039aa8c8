//! Shared helpers of the integration tests: emulator endpoints and unique names.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU32, Ordering};

/// The emulator endpoint in `var`, or `None` after printing a skip message;
/// panics when `KOPS_TEST_REQUIRE_EMULATORS=1` and the variable is unset.
pub fn emulator(var: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("KOPS_TEST_REQUIRE_EMULATORS").as_deref() == Ok("1") {
                panic!("{test}: {var} is unset but KOPS_TEST_REQUIRE_EMULATORS=1");
            }
            eprintln!("SKIP {test}: {var} is unset (run scripts/test to start the emulators)");
            None
        }
    }
}

/// A name unique to this process and call, usable as a bucket or prefix.
pub fn unique(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "kt-{tag}-{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    )
}

#[cfg(feature = "s3")]
pub mod s3 {
    use super::*;
    use kops_statestore::Store;
    use kops_statestore::s3::{S3Config, S3Store};
    use std::sync::Arc;

    pub fn config(endpoint: &str) -> S3Config {
        S3Config::default()
            .with_endpoint(endpoint)
            .with_region("us-east-1")
            .with_force_path_style(true)
            .with_static_credentials("testing", "testing", None)
    }

    /// Two independent clients over a fresh bucket.
    pub async fn pair(endpoint: &str, tag: &str) -> (Arc<dyn Store>, Arc<dyn Store>) {
        let bucket = unique(tag).to_lowercase();
        let a = S3Store::new(&bucket, &config(endpoint));
        a.create_bucket().await.unwrap();
        let b = S3Store::new(&bucket, &config(endpoint));
        (Arc::new(a), Arc::new(b))
    }
}

#[cfg(feature = "gcs")]
pub mod gcs {
    use super::*;
    use kops_statestore::PrefixStore;
    use kops_statestore::Store;
    use kops_statestore::gcs::{GcsConfig, GcsStore};
    use std::sync::Arc;

    pub fn config(endpoint: &str) -> GcsConfig {
        GcsConfig::default().with_endpoint(endpoint)
    }

    /// Two independent clients over a fresh prefix of the `kops-test` bucket.
    pub fn pair(endpoint: &str, tag: &str) -> (Arc<dyn Store>, Arc<dyn Store>) {
        let prefix = unique(tag);
        let mk = || -> Arc<dyn Store> {
            let s: Arc<dyn Store> =
                Arc::new(GcsStore::new("kops-test", &config(endpoint)).unwrap());
            Arc::new(PrefixStore::new(s, &prefix).unwrap())
        };
        (mk(), mk())
    }
}
