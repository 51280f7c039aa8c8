//! `kops_model::upgrade`: what an upgrade proposes for stored specs, and that applying it
//! changes exactly those fields.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_api::channel::Channel;
use kops_api::v1alpha2::{Cluster, InstanceGroup};
use kops_model::upgrade::{UpgradeOptions, apply_upgrade, plan_upgrade};

const CHANNEL: &str = r#"
spec:
  images:
  - name: 099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20251001
    providerID: aws
    architectureID: amd64
    kubernetesVersion: ">=1.34.0"
  - name: 099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250610
    providerID: aws
    architectureID: amd64
    kubernetesVersion: ">=1.30.0"
  - name: 099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-20250610
    providerID: aws
    architectureID: arm64
    kubernetesVersion: ">=1.30.0"
  kubernetesVersions:
  - range: ">=1.34.0"
    recommendedVersion: 1.34.2
    requiredVersion: 1.34.0
  - range: ">=1.33.0"
    recommendedVersion: 1.33.13
    requiredVersion: 1.33.0
  - range: ">=1.32.0"
    recommendedVersion: 1.32.13
    requiredVersion: 1.32.0
"#;

const OLD_AMD: &str =
    "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250610";
const NEW_AMD: &str =
    "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20251001";
const ARM: &str = "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-20250610";

fn cluster(version: &str) -> Cluster {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "kops.k8s.io/v1alpha2",
        "kind": "Cluster",
        "metadata": {"name": "demo.example.com"},
        "spec": {"kubernetesVersion": version, "cloudProvider": "aws", "channel": "stable"},
    }))
    .unwrap()
}

fn group(name: &str, machine_type: &str, image: Option<&str>) -> InstanceGroup {
    let mut spec = serde_json::json!({"role": "Node", "machineType": machine_type});
    if let Some(i) = image {
        spec["image"] = i.into();
    }
    serde_json::from_value(serde_json::json!({
        "apiVersion": "kops.k8s.io/v1alpha2",
        "kind": "InstanceGroup",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

fn groups() -> Vec<InstanceGroup> {
    vec![
        group("unset", "t3.medium", None),
        group("old", "t3.medium", Some(OLD_AMD)),
        group("custom", "t3.medium", Some("123456789012/my-golden-image")),
        group("graviton", "m7g.large", Some(ARM)),
    ]
}

/// The plan's rows as `item property old -> new`.
fn rows(plan: &kops_model::upgrade::UpgradePlan) -> Vec<String> {
    plan.actions
        .iter()
        .map(|a| format!("{} {} {} -> {}", a.item, a.property, a.old, a.new))
        .collect()
}

#[test]
fn one_minor_version_at_a_time_as_far_as_the_kops_release_goes() {
    let channel = Channel::parse(CHANNEL).unwrap();
    let options = UpgradeOptions::default().with_kops_release("1.34.0");
    let plan = plan_upgrade(&cluster("1.32.3"), &groups(), &channel, &options).unwrap();
    assert_eq!(
        rows(&plan),
        [
            "Cluster KubernetesVersion 1.32.3 -> 1.33.13".to_string(),
            format!("InstanceGroup/unset Image  -> {OLD_AMD}"),
        ],
        "{plan:?}"
    );
    // The custom image is kept and said so; the others are the channel's already.
    assert_eq!(plan.warnings.len(), 1, "{:?}", plan.warnings);
    assert!(plan.warnings[0].contains("custom image 123456789012/my-golden-image"));

    // A kOps release before 1.33.0 proposes the patch release of the cluster's minor.
    for release in ["1.33.0-beta.1", "1.32.0"] {
        let options = UpgradeOptions::default().with_kops_release(release);
        let plan = plan_upgrade(&cluster("1.32.3"), &[], &channel, &options).unwrap();
        assert_eq!(
            rows(&plan),
            ["Cluster KubernetesVersion 1.32.3 -> 1.32.13"],
            "{release}"
        );
    }
    // At the newest recommendation: nothing to do.
    let plan = plan_upgrade(&cluster("1.34.2"), &[], &channel, &options).unwrap();
    assert!(plan.is_empty(), "{plan:?}");
}

#[test]
fn a_named_version_brings_its_images_and_a_newer_cluster_is_kept() {
    let channel = Channel::parse(CHANNEL).unwrap();
    let options = UpgradeOptions::default()
        .with_kubernetes_version("v1.34.1")
        .with_channel("alpha");
    let plan = plan_upgrade(&cluster("1.33.13"), &groups(), &channel, &options).unwrap();
    assert_eq!(
        rows(&plan),
        [
            "Cluster Channel stable -> alpha".to_string(),
            "Cluster KubernetesVersion 1.33.13 -> 1.34.1".to_string(),
            format!("InstanceGroup/unset Image  -> {NEW_AMD}"),
            format!("InstanceGroup/old Image {OLD_AMD} -> {NEW_AMD}"),
        ],
    );

    // Never a downgrade: the cluster's newer version stays, the images follow it.
    let options = UpgradeOptions::default().with_kubernetes_version("1.34.1");
    let plan = plan_upgrade(&cluster("1.34.5"), &groups(), &channel, &options).unwrap();
    assert!(
        !rows(&plan).iter().any(|r| r.contains("KubernetesVersion")),
        "{plan:?}"
    );
    assert!(plan.warnings.iter().any(|w| w.contains("1.34.5 is newer")));
    assert!(rows(&plan).iter().any(|r| r.ends_with(NEW_AMD)));
}

#[test]
fn bad_input_is_refused_naming_the_field() {
    let channel = Channel::parse(CHANNEL).unwrap();
    let options = UpgradeOptions::default().with_kubernetes_version("latest");
    let e = plan_upgrade(&cluster("1.32.3"), &[], &channel, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("kubernetesVersion") && e.contains("\"latest\""),
        "{e}"
    );

    let mut imported = cluster("1.32.3");
    imported.metadata.annotations =
        Some([("kops.k8s.io/management".to_string(), "imported".to_string())].into());
    let e = plan_upgrade(&imported, &[], &channel, &UpgradeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("kops.k8s.io/management") && e.contains("imported"),
        "{e}"
    );

    // A version the channel has nothing for: no version change, said so.
    let plan = plan_upgrade(
        &cluster("1.29.0"),
        &[],
        &channel,
        &UpgradeOptions::default(),
    )
    .unwrap();
    assert!(plan.actions.is_empty());
    assert!(plan.warnings[0].contains("recommends no version for Kubernetes 1.29.0"));
}

#[test]
fn applying_changes_the_planned_fields_and_nothing_else() {
    let channel = Channel::parse(CHANNEL).unwrap();
    let options = UpgradeOptions::default()
        .with_kubernetes_version("1.34.1")
        .with_channel("alpha");
    let mut c = cluster("1.33.13");
    let mut g = groups();
    let before_c = serde_json::to_value(&c).unwrap();
    let before_g: Vec<serde_json::Value> =
        g.iter().map(|g| serde_json::to_value(g).unwrap()).collect();
    let plan = plan_upgrade(&c, &g, &channel, &options).unwrap();
    let changed = apply_upgrade(&plan, &mut c, &mut g);
    assert_eq!(changed, ["unset", "old"]);

    let mut want = before_c.clone();
    want["spec"]["kubernetesVersion"] = "1.34.1".into();
    want["spec"]["channel"] = "alpha".into();
    assert_eq!(serde_json::to_value(&c).unwrap(), want);
    for (after, before) in g.iter().zip(&before_g) {
        let mut want = before.clone();
        let name = before["metadata"]["name"].as_str().unwrap();
        if ["unset", "old"].contains(&name) {
            want["spec"]["image"] = NEW_AMD.into();
        }
        assert_eq!(serde_json::to_value(after).unwrap(), want, "{name}");
    }
    // Planned again, the upgraded specs need nothing more.
    let again = plan_upgrade(&c, &g, &channel, &options).unwrap();
    assert!(again.is_empty(), "{again:?}");
}
