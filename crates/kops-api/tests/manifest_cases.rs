//! Every kOps conformance manifest parses and survives a write/read cycle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use kops_api::manifest::{self, Object};

#[test]
fn every_case_parses_and_round_trips_through_yaml_and_json() {
    let Some(shared) = common::shared_dir("every_case_parses") else {
        return;
    };
    let dirs = common::case_dirs(&shared);
    assert!(
        dirs.len() >= 50,
        "expected the conformance cases, found {}",
        dirs.len()
    );
    let mut failures = Vec::new();
    for dir in &dirs {
        let file = dir.join("in-v1alpha2.yaml");
        let bytes = std::fs::read(&file).unwrap();
        let name = file.display().to_string();
        let objects = match manifest::parse(&bytes, &name) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{e}"));
                continue;
            }
        };
        let clusters = objects
            .iter()
            .filter(|o| matches!(o, Object::Cluster(_)))
            .count();
        let igs = objects
            .iter()
            .filter(|o| matches!(o, Object::InstanceGroup(_)))
            .count();
        assert_eq!(clusters, 1, "{name}: one Cluster");
        assert!(igs >= 1, "{name}: at least one InstanceGroup");

        let yaml = manifest::to_yaml(&objects).unwrap();
        let again = manifest::parse(yaml.as_bytes(), "written yaml")
            .unwrap_or_else(|e| panic!("{name}: re-reading written YAML: {e}\n{yaml}"));
        assert_eq!(
            objects, again,
            "{name}: YAML round trip changed the objects"
        );

        let json = manifest::to_json(&objects).unwrap();
        let again = manifest::parse(json.as_bytes(), "written json")
            .unwrap_or_else(|e| panic!("{name}: re-reading written JSON: {e}"));
        // Untyped objects may change number/string typing through JSON; typed ones must not.
        let typed = |v: &[Object]| -> Vec<Object> {
            v.iter()
                .filter(|o| !matches!(o, Object::Other(_)))
                .cloned()
                .collect()
        };
        assert_eq!(
            typed(&objects),
            typed(&again),
            "{name}: JSON round trip changed the objects"
        );
    }
    assert!(
        failures.is_empty(),
        "cases that did not parse:\n{}",
        failures.join("\n")
    );
}

/// Parses every case, converts it to the internal types and back, and writes it
/// out again on a thread with `stack` bytes of stack; panics (or aborts on
/// overflow) when that is not enough.
fn parse_every_case_with_stack(shared: std::path::PathBuf, stack: usize) {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            for dir in common::case_dirs(&shared) {
                let file = dir.join("in-v1alpha2.yaml");
                let bytes = std::fs::read(&file).unwrap();
                let objects = manifest::parse(&bytes, &file.display().to_string()).unwrap();
                manifest::to_yaml(&objects).unwrap();
                let json = manifest::to_json(&objects).unwrap();
                manifest::parse(json.as_bytes(), "json").unwrap();
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Manifests are parsed on async runtimes whose worker threads have 2 MiB of
/// stack, and often deep inside a caller's own frames: parsing must need a
/// fraction of that, in debug builds too. (It once needed over 1.25 MiB; it
/// now fits in 384 KiB.) A stack overflow aborts this test.
#[test]
fn every_case_parses_on_a_512_kib_stack() {
    let Some(shared) = common::shared_dir("every_case_parses_on_a_512_kib_stack") else {
        return;
    };
    parse_every_case_with_stack(shared, 512 << 10);
}
