//! `assets::AssetCopier` (kOps' `get assets --copy`) against the fake registry and file
//! server of kops-mock on 127.0.0.1: images between two registries, one of them asking
//! for a login, and files into a `file://` repository.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_mock::registry::{FakeRegistry, digest};
use kops_model::assets::{AssetCopier, Assets, Copied, FileAsset, ImageAsset};
use kops_statestore::StoreOptions;

const LOGIN: (&str, &str) = ("mirror-user", "s3cret-password");

struct Rig {
    source: FakeRegistry,
    target: FakeRegistry,
    copier: AssetCopier,
}

async fn rig() -> Rig {
    let source = FakeRegistry::start().await.unwrap();
    let target = FakeRegistry::start().await.unwrap();
    target.require_login(LOGIN.0, LOGIN.1);
    let copier = AssetCopier::new(StoreOptions::default())
        .unwrap()
        .with_registry_endpoint("registry.k8s.io", &source.url())
        .with_registry_login(&target.host(), LOGIN.0, LOGIN.1)
        .with_file_source("https://dl.k8s.io/", &format!("{}/", source.url()));
    Rig {
        source,
        target,
        copier,
    }
}

fn writes(r: &FakeRegistry) -> Vec<String> {
    r.requests()
        .into_iter()
        .filter(|q| q.starts_with("PUT") || q.starts_with("POST"))
        .collect()
}

#[tokio::test]
async fn an_index_is_copied_with_every_platform_and_its_digest_kept() {
    let rig = rig().await;
    let index = rig
        .source
        .push_index("kube-apiserver", "v1.34.1", &["linux/amd64", "linux/arm64"]);
    let image = ImageAsset::new(
        "registry.k8s.io/kube-apiserver:v1.34.1",
        format!("{}/mirror/kube-apiserver:v1.34.1", rig.target.host()),
    );
    let copied = rig.copier.copy_image(&image).await.unwrap();
    assert!(
        matches!(copied, Copied::Copied { bytes } if bytes > 0),
        "{copied:?}"
    );
    assert_eq!(
        rig.target
            .manifest_digest("mirror/kube-apiserver", "v1.34.1")
            .as_deref(),
        Some(index.as_str())
    );
    assert_eq!(
        rig.target.manifest("mirror/kube-apiserver", &index),
        rig.source.manifest("kube-apiserver", &index)
    );
    // Every blob of both platforms, byte for byte.
    assert_eq!(
        rig.target.blobs("mirror/kube-apiserver"),
        rig.source.blobs("kube-apiserver")
    );
    assert_eq!(rig.target.blobs("mirror/kube-apiserver").len(), 4);

    // Copied again: the target's manifest has the digest, nothing is written.
    let before = writes(&rig.target).len();
    assert_eq!(
        rig.copier.copy_image(&image).await.unwrap(),
        Copied::AlreadyThere
    );
    assert_eq!(writes(&rig.target).len(), before);
}

#[tokio::test]
async fn a_blob_the_target_holds_is_not_uploaded_again() {
    let rig = rig().await;
    // A base layer of several megabytes: streamed in many chunks.
    let base: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    rig.source
        .push_image("pause", "3.10", &[&base, b"pause layer"]);
    rig.source
        .push_image("pause", "3.10.1", &[&base, b"new pause layer"]);
    let host = rig.target.host();
    for tag in ["3.10", "3.10.1"] {
        let image = ImageAsset::new(
            format!("registry.k8s.io/pause:{tag}"),
            format!("{host}/pause:{tag}"),
        );
        rig.copier.copy_image(&image).await.unwrap();
    }
    let uploads: Vec<String> = writes(&rig.target)
        .into_iter()
        .filter(|w| w.starts_with("PUT /v2/pause/blobs/uploads/"))
        .collect();
    // Two configs, three distinct layers: the shared base layer once.
    assert_eq!(uploads.len(), 5, "{uploads:?}");
    assert_eq!(rig.target.blobs("pause")[&digest(&base)], base);
}

#[tokio::test]
async fn a_registry_asking_for_a_login_refuses_an_anonymous_push_without_showing_secrets() {
    let rig = rig().await;
    rig.source.push_image("coredns", "v1.12", &[b"layer"]);
    let anonymous = AssetCopier::new(StoreOptions::default())
        .unwrap()
        .with_registry_endpoint("registry.k8s.io", &rig.source.url())
        .with_registry_login(&rig.target.host(), LOGIN.0, "wrong");
    let image = ImageAsset::new(
        "registry.k8s.io/coredns:v1.12",
        format!("{}/coredns:v1.12", rig.target.host()),
    );
    let e = anonymous.copy_image(&image).await.unwrap_err();
    assert_eq!(e.asset, "registry.k8s.io/coredns:v1.12");
    assert!(e.message.contains("refused a token"), "{e}");
    assert!(!e.to_string().contains("wrong"), "{e}");
    assert!(rig.target.manifest_digest("coredns", "v1.12").is_none());
    assert!(!format!("{anonymous:?}").contains("wrong"));
}

#[tokio::test]
async fn a_blob_that_does_not_match_its_digest_is_not_copied() {
    let rig = rig().await;
    rig.source.push_image("etcd", "3.6", &[b"etcd layer"]);
    rig.source.corrupt_blob(&digest(b"etcd layer"));
    let image = ImageAsset::new(
        "registry.k8s.io/etcd:3.6",
        format!("{}/etcd:3.6", rig.target.host()),
    );
    let e = rig.copier.copy_image(&image).await.unwrap_err();
    assert!(e.message.contains(&digest(b"etcd layer")), "{e}");
    assert!(e.message.contains("refusing"), "{e}");
    assert!(rig.target.manifest_digest("etcd", "3.6").is_none());
    assert!(
        !rig.target
            .blobs("etcd")
            .contains_key(&digest(b"etcd layer"))
    );
}

#[tokio::test]
async fn files_are_checked_and_written_with_their_sha256_once() {
    let rig = rig().await;
    let dir = tempfile::tempdir().unwrap();
    let kubelet = b"#!kubelet binary".repeat(1000);
    rig.source
        .serve_file("/release/v1.34.1/bin/linux/amd64/kubelet", &kubelet);
    let sha = digest(&kubelet).trim_start_matches("sha256:").to_owned();
    let download = format!("file://{}/files/kubelet", dir.path().display());
    let file = FileAsset::new(
        "https://dl.k8s.io/release/v1.34.1/bin/linux/amd64/kubelet",
        download.clone(),
        sha.clone(),
    );
    assert_eq!(
        rig.copier.copy_file(&file).await.unwrap(),
        Copied::Copied {
            bytes: kubelet.len() as u64
        }
    );
    let written = dir.path().join("files");
    assert_eq!(std::fs::read(written.join("kubelet")).unwrap(), kubelet);
    assert_eq!(
        std::fs::read_to_string(written.join("kubelet.sha256")).unwrap(),
        sha
    );
    let served = rig.source.requests().len();
    assert_eq!(
        rig.copier.copy_file(&file).await.unwrap(),
        Copied::AlreadyThere
    );
    assert_eq!(rig.source.requests().len(), served, "downloaded again");

    // A download that is not the file the cluster expects is not written.
    rig.source
        .serve_file("/release/v1.34.1/bin/linux/amd64/kubectl", b"tampered");
    let other = FileAsset::new(
        "https://dl.k8s.io/release/v1.34.1/bin/linux/amd64/kubectl",
        format!("file://{}/files/kubectl", dir.path().display()),
        sha.clone(),
    );
    let e = rig.copier.copy_file(&other).await.unwrap_err();
    assert!(e.message.contains("not the expected"), "{e}");
    assert!(!written.join("kubectl").exists());
}

#[tokio::test]
async fn a_report_holds_every_outcome_and_goes_on_past_failures() {
    let rig = rig().await;
    rig.source.push_image("kube-proxy", "v1.34.1", &[b"proxy"]);
    let host = rig.target.host();
    let mut assets = Assets::default();
    assets.images.push(ImageAsset::new(
        "registry.k8s.io/missing:v1",
        format!("{host}/missing:v1"),
    ));
    assets.images.push(ImageAsset::new(
        "registry.k8s.io/kube-proxy:v1.34.1",
        format!("{host}/kube-proxy:v1.34.1"),
    ));
    assets.images.push(ImageAsset::new(
        "registry.k8s.io/same:v1",
        "registry.k8s.io/same:v1",
    ));
    assets.files.push(FileAsset::new(
        "https://dl.k8s.io/x",
        "https://files.example.com/x",
        "0".repeat(64),
    ));
    let report = rig.copier.copy(&assets).await;
    let results: Vec<String> = report
        .outcomes
        .iter()
        .map(|o| match &o.result {
            Ok(c) => format!("{} {c:?}", o.canonical),
            Err(e) => format!("{} error", e.asset),
        })
        .collect();
    assert_eq!(
        results,
        [
            "registry.k8s.io/missing:v1 error".to_owned(),
            format!(
                "registry.k8s.io/kube-proxy:v1.34.1 Copied {{ bytes: {} }}",
                rig.source
                    .blobs("kube-proxy")
                    .values()
                    .map(|b| b.len())
                    .sum::<usize>()
            ),
            "registry.k8s.io/same:v1 SameLocation".to_owned(),
            "https://dl.k8s.io/x error".to_owned(),
        ]
    );
    assert!(!report.is_success());
    let messages: Vec<String> = report.failures().map(ToString::to_string).collect();
    // The registry's own words come with the status.
    assert!(
        messages[0].contains("HTTP 404: not found (MANIFEST_UNKNOWN: manifest unknown)"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("s3://, gs:// or file://"),
        "{messages:?}"
    );
}
