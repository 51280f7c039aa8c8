//! The conformance suite against every backend: memory, file, S3 (moto) and
//! GCS (gcp-storage-emulator), plus the two-writer race per backend.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use kops_statestore::conformance::{self, RaceReport};
use kops_statestore::{LocalStore, MemoryStore, Store};

const CYCLES: u64 = 1000;

fn report(backend: &str, r: &RaceReport) {
    eprintln!(
        "race[{backend}]: {} increments by 2 writers x {CYCLES} cycles, {} lost conflicts retried, {:.2?} ({:.0} cycles/s)",
        r.final_value,
        r.conflicts,
        r.elapsed,
        r.final_value as f64 / r.elapsed.as_secs_f64()
    );
}

// ---- memory ---------------------------------------------------------------

#[tokio::test]
async fn memory_conformance() {
    conformance::run_single(Arc::new(MemoryStore::new())).await;
    let m = MemoryStore::new();
    conformance::lock_exclusion(Arc::new(m.clone()), Arc::new(m.clone())).await;
    let m = MemoryStore::new();
    conformance::force_unlock_lock(Arc::new(m.clone()), Arc::new(m.clone())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_race() {
    let m = MemoryStore::new();
    let r = conformance::race(Arc::new(m.clone()), Arc::new(m), CYCLES).await;
    report("memory", &r);
}

// ---- file -------------------------------------------------------------------

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(common::unique(tag));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[tokio::test]
async fn file_conformance() {
    let root = tempdir("file-conf");
    conformance::run_single(Arc::new(LocalStore::new(root.join("single")))).await;
    let pair = |d: &str| -> (Arc<dyn Store>, Arc<dyn Store>) {
        (
            Arc::new(LocalStore::new(root.join(d))),
            Arc::new(LocalStore::new(root.join(d))),
        )
    };
    let (a, b) = pair("lock");
    conformance::lock_exclusion(a, b).await;
    let (a, b) = pair("force");
    conformance::force_unlock_lock(a, b).await;
    // Nothing but the backend's own lock file is left behind.
    let leftovers: Vec<_> = walk(&root.join("lock"));
    assert_eq!(leftovers, [".kops-statestore.lock"], "{leftovers:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            for s in walk(&e.path()) {
                out.push(format!("{}/{s}", e.file_name().to_string_lossy()));
            }
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_race() {
    let root = tempdir("file-race");
    let r = conformance::race(
        Arc::new(LocalStore::new(&root)),
        Arc::new(LocalStore::new(&root)),
        CYCLES,
    )
    .await;
    report("file", &r);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Conditional writes hold between processes too: the test binary re-runs
/// itself as a second writer process (`race_child`) against the same directory.
#[test]
fn file_race_across_processes() {
    if let Ok(dir) = std::env::var("KOPS_STATESTORE_RACE_CHILD") {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(child_writer(dir));
        return;
    }
    let root = tempdir("file-xproc");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = LocalStore::new(&root);
        s.put(
            "counter",
            bytes::Bytes::from_static(b"0"),
            kops_statestore::PutOptions::create(),
        )
        .await
        .unwrap();
    });
    let exe = std::env::current_exe().unwrap();
    let spawn = || {
        std::process::Command::new(&exe)
            .args([
                "--exact",
                "file_race_across_processes",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("KOPS_STATESTORE_RACE_CHILD", &root)
            .spawn()
            .unwrap()
    };
    let start = std::time::Instant::now();
    let (mut c1, mut c2) = (spawn(), spawn());
    assert!(c1.wait().unwrap().success());
    assert!(c2.wait().unwrap().success());
    let data = std::fs::read_to_string(root.join("counter")).unwrap();
    eprintln!(
        "race[file, 2 processes]: {data} increments in {:.2?}",
        start.elapsed()
    );
    assert_eq!(data, (2 * CYCLES).to_string());
    std::fs::remove_dir_all(&root).unwrap();
}

async fn child_writer(dir: String) {
    use kops_statestore::PutOptions;
    let s = LocalStore::new(dir);
    for _ in 0..CYCLES {
        loop {
            let cur = s.get("counter").await.unwrap();
            let n: u64 = std::str::from_utf8(&cur.data).unwrap().parse().unwrap();
            match s
                .put(
                    "counter",
                    bytes::Bytes::from((n + 1).to_string()),
                    PutOptions::update(cur.version),
                )
                .await
            {
                Ok(_) => break,
                Err(e) if e.is_conflict() => continue,
                Err(e) => panic!("{e:?}"),
            }
        }
    }
}

// ---- S3 (moto) ----------------------------------------------------------------

#[cfg(feature = "s3")]
#[tokio::test]
async fn s3_conformance() {
    let Some(ep) = common::emulator("KOPS_TEST_S3_ENDPOINT", "s3_conformance") else {
        return;
    };
    let (a, _) = common::s3::pair(&ep, "conf").await;
    conformance::run_single(a).await;
    let (a, b) = common::s3::pair(&ep, "lock").await;
    conformance::lock_exclusion(a, b).await;
    let (a, b) = common::s3::pair(&ep, "force").await;
    conformance::force_unlock_lock(a, b).await;
}

#[cfg(feature = "s3")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_race() {
    let Some(ep) = common::emulator("KOPS_TEST_S3_ENDPOINT", "s3_race") else {
        return;
    };
    let (a, b) = common::s3::pair(&ep, "race").await;
    let r = conformance::race(a, b, CYCLES).await;
    report("s3/moto", &r);
}

#[cfg(feature = "s3")]
#[tokio::test]
async fn s3_versioning_warning() {
    let Some(ep) = common::emulator("KOPS_TEST_S3_ENDPOINT", "s3_versioning_warning") else {
        return;
    };
    let (a, _) = common::s3::pair(&ep, "warn").await;
    let w = a.warnings().await.unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].message.contains("versioning"), "{}", w[0]);
}

// ---- GCS (gcp-storage-emulator) -------------------------------------------------

/// Whether the GCS server behind `endpoint` enforces `ifGenerationMatch`.
#[cfg(feature = "gcs")]
async fn gcs_enforces_preconditions(endpoint: &str) -> bool {
    let (a, _) = common::gcs::pair(endpoint, "probe");
    a.put(
        "p",
        bytes::Bytes::from_static(b"1"),
        kops_statestore::PutOptions::create(),
    )
    .await
    .unwrap();
    let second = a
        .put(
            "p",
            bytes::Bytes::from_static(b"2"),
            kops_statestore::PutOptions::create(),
        )
        .await;
    a.delete("p").await.unwrap();
    second.is_err()
}

#[cfg(feature = "gcs")]
#[tokio::test]
async fn gcs_conformance() {
    let Some(ep) = common::emulator("KOPS_TEST_GCS_ENDPOINT", "gcs_conformance") else {
        return;
    };
    let (a, _) = common::gcs::pair(&ep, "rt");
    conformance::round_trip(a.as_ref()).await;
    let (a, _) = common::gcs::pair(&ep, "list");
    conformance::list_by_prefix(a.as_ref()).await;
    let (a, _) = common::gcs::pair(&ep, "del");
    conformance::delete(a.as_ref()).await;
    if !gcs_enforces_preconditions(&ep).await {
        eprintln!(
            "SKIP gcs_conformance create/update/lock cases against {ep}: the emulator ignores \
             ifGenerationMatch (they run against the in-process GCS fake in gcs_fake.rs)"
        );
        return;
    }
    let (a, _) = common::gcs::pair(&ep, "create");
    conformance::create_conflict(a.as_ref()).await;
    let (a, _) = common::gcs::pair(&ep, "update");
    conformance::update_precondition(a.as_ref()).await;
    let (a, _) = common::gcs::pair(&ep, "cond-delete");
    conformance::conditional_delete(a.as_ref()).await;
    let (a, b) = common::gcs::pair(&ep, "lock");
    conformance::lock_exclusion(a, b).await;
    let (a, b) = common::gcs::pair(&ep, "force");
    conformance::force_unlock_lock(a, b).await;
}

#[cfg(feature = "gcs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_race() {
    let Some(ep) = common::emulator("KOPS_TEST_GCS_ENDPOINT", "gcs_race") else {
        return;
    };
    if !gcs_enforces_preconditions(&ep).await {
        eprintln!("SKIP gcs_race against {ep}: the emulator ignores ifGenerationMatch");
        return;
    }
    let (a, b) = common::gcs::pair(&ep, "race");
    let r = conformance::race(a, b, CYCLES).await;
    report("gcs/emulator", &r);
}

#[cfg(feature = "gcs")]
#[tokio::test]
async fn gcs_versioning_warning() {
    let Some(ep) = common::emulator("KOPS_TEST_GCS_ENDPOINT", "gcs_versioning_warning") else {
        return;
    };
    let (a, _) = common::gcs::pair(&ep, "warn");
    let w = a.warnings().await.unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].message.contains("versioning"), "{}", w[0]);
}

/// A store given no region finds its bucket's (GetBucketLocation, asked from us-east-1)
/// and works there: a bucket created in eu-central-1, and one created without a location
/// (us-east-1). Moto does not enforce regions, so only the region found is checked.
#[cfg(feature = "s3")]
#[tokio::test]
async fn s3_store_finds_its_buckets_region() {
    use kops_statestore::s3::S3Store;
    use kops_statestore::{PutOptions, Store};
    let Some(ep) = common::emulator("KOPS_TEST_S3_ENDPOINT", "s3_bucket_region") else {
        return;
    };
    let probing = || {
        kops_statestore::s3::S3Config::default()
            .with_endpoint(&ep)
            .with_force_path_style(true)
            .with_static_credentials("testing", "testing", None)
    };
    for (tag, created_in, expected) in [
        ("frankfurt", "eu-central-1", "eu-central-1"),
        ("virginia", "us-east-1", "us-east-1"),
    ] {
        let bucket = common::unique(tag).to_lowercase();
        S3Store::new(&bucket, &common::s3::config(&ep).with_region(created_in))
            .create_bucket()
            .await
            .unwrap();
        let s = S3Store::new(&bucket, &probing());
        assert_eq!(s.region(), None, "{tag}: not probed before first use");
        s.put("c/config", bytes::Bytes::from("x"), PutOptions::create())
            .await
            .unwrap();
        assert_eq!(s.region().as_deref(), Some(expected), "{tag}");
        assert_eq!(&s.get("c/config").await.unwrap().data[..], b"x");
        assert_eq!(s.list("c/").await.unwrap().len(), 1);

        // Opened from a URL, behind a prefix, asked on demand.
        let opened = S3Store::new(&bucket, &probing());
        assert_eq!(opened.bucket_region().await.unwrap(), expected);
        let url = format!("s3://{bucket}/c");
        let o = kops_statestore::open(
            &url,
            &kops_statestore::StoreOptions::default().with_s3(probing()),
        )
        .unwrap();
        assert_eq!(&o.get("config").await.unwrap().data[..], b"x");
        assert_eq!(o.region().as_deref(), Some(expected), "{url}");
    }
    // A missing bucket has no region: the first use says so.
    let s = S3Store::new(common::unique("nowhere").to_lowercase(), &probing());
    let err = s.get("c/config").await.unwrap_err();
    assert!(
        matches!(err, kops_statestore::Error::BucketNotFound { .. }),
        "{err:?}"
    );
}

#[cfg(feature = "s3")]
#[tokio::test]
async fn s3_missing_bucket_is_not_a_missing_object() {
    let Some(ep) = common::emulator("KOPS_TEST_S3_ENDPOINT", "s3_missing_bucket") else {
        return;
    };
    let s = kops_statestore::s3::S3Store::new(
        common::unique("nobucket").to_lowercase(),
        &common::s3::config(&ep),
    );
    let err = s.get("c/config").await.unwrap_err();
    assert!(
        matches!(err, kops_statestore::Error::BucketNotFound { .. }),
        "{err:?}"
    );
    let err = s.list("").await.unwrap_err();
    assert!(
        matches!(err, kops_statestore::Error::BucketNotFound { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[cfg(feature = "gcs")]
#[tokio::test]
async fn gcs_missing_bucket_is_not_a_missing_object() {
    let Some(ep) = common::emulator("KOPS_TEST_GCS_ENDPOINT", "gcs_missing_bucket") else {
        return;
    };
    let s = kops_statestore::gcs::GcsStore::new(
        common::unique("nobucket").to_lowercase(),
        &common::gcs::config(&ep),
    )
    .unwrap();
    for err in [
        s.get("c/config").await.unwrap_err(),
        s.list("").await.unwrap_err(),
    ] {
        assert!(
            matches!(err, kops_statestore::Error::BucketNotFound { .. }),
            "{err:?}"
        );
    }
    // In the emulator's bucket a missing object is just that.
    let (a, _) = common::gcs::pair(&ep, "missing-object");
    assert!(a.get("nothing/here").await.unwrap_err().is_not_found());
}
