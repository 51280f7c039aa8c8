//! Every conformance case populates and validates without errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate};
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
