//! The internal (hub) types through JSON: every conformance case, converted from
//! v1alpha2 and again after population, reads back equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use kops_api::channel::Channel;
use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal::{Cluster, InstanceGroup};
use kops_api::manifest::{self, Object};

fn round_trip<T>(case: &str, what: &str, value: &T)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_string(value).unwrap();
    let again: T = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("{case}: {what}: reading the written JSON: {e}\n{json}"));
    assert_eq!(&again, value, "{case}: {what}: JSON round trip changed it");
}

#[test]
fn every_case_round_trips_through_internal_json() {
    let Some(shared) = common::shared_dir("every_case_round_trips_through_internal_json") else {
        return;
    };
    let channel_text =
        std::fs::read_to_string(shared.join("conformance/fixtures/channels/stable")).unwrap();
    let channel = Channel::parse(&channel_text).unwrap();
    let dirs = common::case_dirs(&shared);
    assert!(
        dirs.len() >= 50,
        "expected the conformance cases, found {}",
        dirs.len()
    );
    for dir in &dirs {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(dir.join("in-v1alpha2.yaml")).unwrap();
        let mut cluster = None;
        let mut groups = Vec::new();
        for object in manifest::parse(&bytes, &case).unwrap() {
            match object {
                Object::Cluster(c) => cluster = Some(Cluster::try_from(&c).unwrap()),
                Object::InstanceGroup(ig) => groups.push(InstanceGroup::from(&ig)),
                _ => {}
            }
        }
        let cluster = cluster.unwrap();
        round_trip(&case, "cluster", &cluster);
        for g in &groups {
            round_trip(&case, g.name(), g);
        }

        // Population sets most fields: the completed objects round trip too.
        let opts = PopulateOptions::default().with_channel(channel.clone());
        let (full, full_groups) = populate(&cluster, &groups, &opts).unwrap();
        round_trip(&case, "populated cluster", &full);
        for g in &full_groups {
            round_trip(&case, &format!("populated {}", g.name()), g);
        }
    }
}
