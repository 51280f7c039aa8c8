//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// `<repo>/../shared`, or `None` (with a printed skip message) when absent.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if dir.join("conformance/cases").is_dir() {
        Some(dir)
    } else {
        println!("skipping {test}: {} not found", dir.display());
        None
    }
}

/// Every conformance case directory, sorted.
pub fn case_dirs(shared: &std::path::Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(shared.join("conformance/cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("in-v1alpha2.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}
