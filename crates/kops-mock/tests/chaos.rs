//! The chaos harness (`examples/chaos.rs`) with a small count: every run under faults
//! converges, and nothing is duplicated or leaked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/chaos.rs"]
#[allow(dead_code)]
mod chaos;

#[test]
fn a_few_runs_under_the_full_fault_mix_converge_without_duplicates_or_leaks() {
    // The mix (30% throttling, 20% delayed visibility, 10% lost responses),
    // and a crash rate that, under seed 1, makes runs 0 to 2 crash and run 3 not.
    let args = chaos::parse_args(
        [
            "--seed",
            "1",
            "--runs",
            "4",
            "--throttle",
            "0.3",
            "--delayed-visibility",
            "0.2",
            "--lost-responses",
            "0.1",
            "--crash",
            "0.3",
        ]
        .map(String::from),
    )
    .unwrap();
    let tally = chaos::run_all(&args).unwrap();
    assert!(tally.faults > 0, "no fault was injected: {tally:?}");
    assert!(tally.crash_runs > 0, "no run was drawn to crash: {tally:?}");
    assert_eq!(
        tally.crashes, tally.crash_runs,
        "every run drawn to crash crashes once: {tally:?}"
    );
    assert_eq!(
        (tally.duplicates, tally.leaks, tally.unconverged),
        (0, 0, 0),
        "{tally:?}"
    );
}

#[test]
fn bad_flags_are_named() {
    let e = chaos::parse_args(["--throttle", "2"].map(String::from)).unwrap_err();
    assert!(e.to_string().contains("--throttle 2"), "{e}");
    let e = chaos::parse_args(["--nope", "1"].map(String::from)).unwrap_err();
    assert!(e.to_string().contains("--nope"), "{e}");
}

/// The commit under test: `KOPS_CHAOS_COMMIT`, else CI's (`GITHUB_SHA`,
/// `CI_COMMIT_SHA`), else `git rev-parse HEAD` of this checkout; `None` outside one.
fn commit() -> Option<String> {
    for var in ["KOPS_CHAOS_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA"] {
        if let Ok(v) = std::env::var(var)
            && !v.trim().is_empty()
        {
            return Some(v.trim().to_owned());
        }
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let head = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !head.is_empty()).then_some(head)
}

/// Seeds derived from `commit` (FNV-1a, then split), below 2^32 to be easy to type.
fn seeds_of(commit: &str, n: u64) -> Vec<u64> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in commit.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    (0..n)
        .map(|i| {
            let mut z = h.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) & 0xFFFF_FFFF
        })
        .collect()
}

#[test]
fn commit_seeds_differ_by_commit_and_are_stable() {
    let a = seeds_of("02bbeac", 3);
    assert_eq!(a, seeds_of("02bbeac", 3));
    assert_ne!(a, seeds_of("0a7311e", 3));
    assert_eq!(a.len(), 3);
    assert!(a.iter().all(|s| *s <= u64::from(u32::MAX)));
}

/// CI's sample: a few runs on seeds that change with every commit (see `seeds_of`), so
/// a regression the known seeds miss is caught over time. A failure names its seed: run
/// `cargo run --release -p kops-mock --example chaos -- --seed S --runs 2 --verbose`.
#[test]
fn a_sample_of_seeds_derived_from_the_commit_converges() {
    let commit = commit().unwrap_or_else(|| "no-commit".to_owned());
    let seeds = seeds_of(&commit, 3);
    eprintln!("chaos sample: commit {commit}, seeds {seeds:?}, 2 runs each");
    for seed in seeds {
        let args =
            chaos::parse_args(["--seed", &seed.to_string(), "--runs", "2"].map(String::from))
                .unwrap();
        let tally = chaos::run_all(&args).unwrap();
        assert_eq!(
            (tally.duplicates, tally.leaks, tally.unconverged),
            (0, 0, 0),
            "commit {commit} seed {seed}: {:#?}",
            tally.findings
        );
    }
}

#[test]
fn seed_ranges_are_parsed_and_checked() {
    let a = chaos::parse_args(["--seeds", "3..6", "--runs", "1"].map(String::from)).unwrap();
    assert_eq!(chaos::seeds(&a), [3, 4, 5]);
    let e = chaos::parse_args(["--seeds", "6..3"].map(String::from)).unwrap_err();
    assert!(e.to_string().contains("--seeds 6..3"), "{e}");
    let e = chaos::parse_args(["--seeds", "x"].map(String::from)).unwrap_err();
    assert!(e.to_string().contains("A..B"), "{e}");
}
