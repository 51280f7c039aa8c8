//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

#[path = "../../../../support/shared.rs"]
mod shared;

/// `<repo>/../shared`, or `None` when absent (a failure under CI; see
/// `support/shared.rs`).
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    shared::require(test, "conformance/cases")?;
    Some(shared::root())
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
