//! Where tests find `../shared` (kOps' conformance cases and fixtures), and
//! what they do when it is absent.
//!
//! Test files include this with `#[path = ".../support/shared.rs"] mod shared;`
//! (it is not a crate: tests of every crate use it, and nothing else may).
//!
//! The shared material sits beside the checkout, not in it. A test that needs
//! it calls [`require`]:
//! - present: the path is returned and the test runs;
//! - absent under CI (`CI` set to anything but `false` or empty): the test
//!   fails, so a CI run without the material cannot pass by skipping;
//! - absent elsewhere: the test prints why it skips and returns `None`; when
//!   `KOPS_TEST_SKIP_LOG` names a file, one line is appended to it, and
//!   `scripts/test` prints how many tests skipped and why.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The shared material's root: `../shared` from the workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")))
        .join("../shared")
}

/// `root()/relative` when it exists; else fails under CI, or records the skip
/// of `test` and returns `None`.
pub fn require(test: &str, relative: &str) -> Option<PathBuf> {
    let path = root().join(relative);
    if path.exists() {
        return Some(path);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(
        !ci,
        "{test}: {} is absent; under CI the shared material must be present",
        path.display()
    );
    let line = format!("{test}: skipped, {} is absent", path.display());
    eprintln!("{line}");
    if let Some(log) = std::env::var_os("KOPS_TEST_SKIP_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    {
        let _ = writeln!(f, "{line}");
    }
    None
}
