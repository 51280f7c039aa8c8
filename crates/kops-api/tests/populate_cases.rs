//! Every conformance case populates and validates without errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use kops_api::channel::Channel;
use kops_api::defaults::{DnsZoneInfo, PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_api::validation::validate_all;

#[test]
fn every_case_populates_and_validates() {
    let Some(shared) = common::shared_dir("every_case_populates_and_validates") else {
        return;
    };
    let channel_text =
        std::fs::read_to_string(shared.join("conformance/fixtures/channels/stable")).unwrap();
    let channel = Channel::parse(&channel_text).unwrap();
    let mut failures = Vec::new();
    let dirs = common::case_dirs(&shared);
    for dir in &dirs {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        let file = dir.join("in-v1alpha2.yaml");
        let objects = manifest::parse(&std::fs::read(&file).unwrap(), &case).unwrap();
        let mut cluster = None;
        let mut igs = Vec::new();
        for o in objects {
            match o {
                Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
                Object::InstanceGroup(ig) => igs.push(internal::InstanceGroup::from(&ig)),
                _ => {}
            }
        }
        let cluster = cluster.unwrap();
        let opts = PopulateOptions::default().with_channel(channel.clone());
        let (full, groups) = match populate(&cluster, &igs, &opts) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{case}: populate: {e}"));
                continue;
            }
        };
        if let Err(errs) = validate_all(&full, &groups) {
            failures.push(format!("{case}: {errs}"));
            continue;
        }
        // The completed spec converts back and serialises.
        let mut out = vec![Object::Cluster(v1alpha2::Cluster::from(&full))];
        out.extend(
            groups
                .iter()
                .map(|g| Object::InstanceGroup(v1alpha2::InstanceGroup::from(g))),
        );
        let yaml = manifest::to_yaml(&out).unwrap();
        let again = manifest::parse(yaml.as_bytes(), "completed").unwrap();
        assert_eq!(again, out, "{case}: completed spec does not round trip");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

/// Collects `path = value` leaves of a JSON tree.
fn leaves(
    v: &serde_json::Value,
    path: String,
    out: &mut std::collections::BTreeMap<String, String>,
) {
    match v {
        serde_json::Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                leaves(x, format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path, other.to_string());
        }
    }
}

/// Our completed cluster spec equals the `cluster-completed.spec` kOps wrote
/// for each conformance case, field for field, except for differences listed
/// here with their reason.
#[test]
fn completed_spec_matches_kops_for_every_case() {
    let Some(shared) = common::shared_dir("completed_spec_matches_kops_for_every_case") else {
        return;
    };
    // Values kOps takes from its cloud.
    let known = |case: &str, path: &str| -> bool {
        (path == "spec.dnsZone" && case.contains("gce")) // the GCE mock's zone id
            || (case == "private-shared-subnet" && path.starts_with("spec.subnets[1].zone")) // read from the existing subnet
    };
    let channel_text =
        std::fs::read_to_string(shared.join("conformance/fixtures/channels/stable")).unwrap();
    let channel = Channel::parse(&channel_text).unwrap();
    // The AWS DNS zones the mock cloud holds, for kOps' zone lookup.
    let mock: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(shared.join("conformance/fixtures/mock-cloud.yaml")).unwrap(),
    )
    .unwrap();
    let zones: Vec<DnsZoneInfo> = mock["aws"]["route53"]["hostedZones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| {
            DnsZoneInfo::new(
                z["id"].as_str().unwrap(),
                z["name"].as_str().unwrap(),
                z["private"].as_bool(),
            )
        })
        .collect();
    let mut problems = Vec::new();
    let mut compared = 0;
    for dir in common::case_dirs(&shared) {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        let expected_file = std::fs::read_dir(dir.join("expected/data"))
            .ok()
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.to_string_lossy()
                    .ends_with("cluster-completed.spec_content")
            });
        let Some(expected_file) = expected_file else {
            continue;
        };
        let expected =
            manifest::parse(&std::fs::read(&expected_file).unwrap(), "expected").unwrap();
        let Some(Object::Cluster(expected)) = expected.into_iter().next() else {
            panic!("{case}: no cluster")
        };

        let objects =
            manifest::parse(&std::fs::read(dir.join("in-v1alpha2.yaml")).unwrap(), &case).unwrap();
        let mut cluster = None;
        let mut igs = Vec::new();
        for o in objects {
            match o {
                Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
                Object::InstanceGroup(ig) => igs.push(internal::InstanceGroup::from(&ig)),
                _ => {}
            }
        }
        let cluster = cluster.unwrap();
        let mut opts = PopulateOptions::default().with_channel(channel.clone());
        if cluster.spec.cloud_provider.aws.is_some() {
            opts = opts.with_dns_zones(zones.clone());
        }
        let (full, _) = populate(&cluster, &igs, &opts).unwrap();
        let ours = v1alpha2::Cluster::from(&full);

        let (mut a, mut b) = (Default::default(), Default::default());
        leaves(&serde_json::to_value(&ours).unwrap(), String::new(), &mut a);
        leaves(
            &serde_json::to_value(&expected).unwrap(),
            String::new(),
            &mut b,
        );
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for k in keys {
            let path = k.trim_start_matches('.');
            if a.get(k) != b.get(k) && !known(&case, path) {
                problems.push(format!(
                    "{case}: {path}: ours {:?}, kOps {:?}",
                    a.get(k),
                    b.get(k)
                ));
            }
        }
        compared += 1;
    }
    assert!(compared >= 50, "compared only {compared} cases");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Each populated instance group's kubelet settings equal the `KubeletConfig`
/// kOps wrote into that group's nodeup configuration.
#[test]
fn instance_group_kubelets_match_kops_nodeup_configs() {
    let Some(shared) = common::shared_dir("instance_group_kubelets_match_kops_nodeup_configs")
    else {
        return;
    };
    let channel_text =
        std::fs::read_to_string(shared.join("conformance/fixtures/channels/stable")).unwrap();
    let channel = Channel::parse(&channel_text).unwrap();
    let mut problems = Vec::new();
    let mut compared = 0;
    for dir in common::case_dirs(&shared) {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        let objects =
            manifest::parse(&std::fs::read(dir.join("in-v1alpha2.yaml")).unwrap(), &case).unwrap();
        let mut cluster = None;
        let mut igs = Vec::new();
        for o in objects {
            match o {
                Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
                Object::InstanceGroup(ig) => igs.push(internal::InstanceGroup::from(&ig)),
                _ => {}
            }
        }
        let opts = PopulateOptions::default().with_channel(channel.clone());
        let (_, groups) = populate(&cluster.unwrap(), &igs, &opts).unwrap();
        for g in &groups {
            let file = dir.join(format!(
                "expected/data/aws_s3_object_nodeupconfig-{}_content",
                g.name()
            ));
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let config: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
            let Some(expected) = config.get("KubeletConfig") else {
                continue;
            };
            let expected: v1alpha2::KubeletConfigSpec = serde_json::from_value(expected.clone())
                .unwrap_or_else(|e| panic!("{case}/{}: {e}", g.name()));
            let (mut a, mut b) = (Default::default(), Default::default());
            leaves(
                &serde_json::to_value(g.spec.kubelet.as_ref().unwrap()).unwrap(),
                String::new(),
                &mut a,
            );
            leaves(
                &serde_json::to_value(&expected).unwrap(),
                String::new(),
                &mut b,
            );
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                if a.get(k) != b.get(k) {
                    problems.push(format!(
                        "{case}/{}: {k}: ours {:?}, kOps {:?}",
                        g.name(),
                        a.get(k),
                        b.get(k)
                    ));
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 100, "compared only {compared} instance groups");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
