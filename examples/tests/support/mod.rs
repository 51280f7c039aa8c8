//! What the CLI's test binaries share: the emulators `scripts/test` starts.
#![allow(dead_code)]

/// Whether `scripts/test` asked for every emulator (`KOPS_TEST_REQUIRE_EMULATORS=1`): a
/// test that would skip without one fails instead.
pub fn require_emulators() -> bool {
    std::env::var("KOPS_TEST_REQUIRE_EMULATORS").is_ok_and(|v| v == "1")
}

/// The endpoint in `var`, without a trailing slash, or `None` (the test skips, saying
/// why) when it is not set; a failure with `KOPS_TEST_REQUIRE_EMULATORS=1`.
fn endpoint(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(e) if !e.is_empty() => Some(e.trim_end_matches('/').to_string()),
        _ => {
            assert!(
                !require_emulators(),
                "KOPS_TEST_REQUIRE_EMULATORS=1 but {var} is not set"
            );
            eprintln!("skipping: {var} is not set (run scripts/test)");
            None
        }
    }
}

/// The moto server (`KOPS_TEST_S3_ENDPOINT`), as [`endpoint`] reads it.
pub fn moto() -> Option<String> {
    endpoint("KOPS_TEST_S3_ENDPOINT")
}

/// The GCS emulator (`KOPS_TEST_GCS_ENDPOINT`), as [`endpoint`] reads it.
pub fn gcs_emulator() -> Option<String> {
    endpoint("KOPS_TEST_GCS_ENDPOINT")
}

/// Debian's hcloud CLI (`KOPS_TEST_HCLOUD`, which `scripts/test` sets after unpacking the
/// `hcloud-cli` package), as [`endpoint`] reads it.
pub fn hcloud() -> Option<String> {
    endpoint("KOPS_TEST_HCLOUD")
}

/// Debian's python3-hcloud (`KOPS_TEST_PYHCLOUD`, its `dist-packages` directory, which
/// `scripts/test` sets after unpacking the package), as [`endpoint`] reads it.
pub fn pyhcloud() -> Option<String> {
    endpoint("KOPS_TEST_PYHCLOUD")
}

/// Debian's kubectl (`KOPS_TEST_KUBECTL`, which `scripts/test` sets after unpacking the
/// `kubernetes-client` package), as [`endpoint`] reads it.
pub fn kubectl() -> Option<String> {
    endpoint("KOPS_TEST_KUBECTL")
}

/// The InstanceGroups of `role` (v1alpha2 spelling, e.g. `APIServer`) in `yaml`, a stream
/// of kOps objects as `get ig -o yaml` or `create cluster --dry-run -o yaml` prints it.
pub fn groups_of_role(yaml: &str, role: &str) -> Vec<kops_api::v1alpha2::InstanceGroup> {
    kops_api::manifest::parse(yaml.as_bytes(), "the command's output")
        .unwrap()
        .into_iter()
        .filter_map(|o| match o {
            kops_api::manifest::Object::InstanceGroup(g) => Some(g),
            _ => None,
        })
        .filter(|g| g.spec.role.as_deref() == Some(role))
        .collect()
}
