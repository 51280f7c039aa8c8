//! The chaos harness (`examples/chaos.rs`) with a small count: every run under faults
//! converges, and nothing is duplicated or leaked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../chaos.rs"]
#[allow(dead_code)]
mod chaos;

#[test]
fn a_few_runs_under_faults_converge_without_duplicates_or_leaks() {
    // Throttling is left out here: discovery and delete's listings do not yet retry a
    // throttled call themselves (the SDK's own retry does in production), so under the
    // harness's 30% throttling every attempt fails before planning. Issue #17 tracks it.
    let args = chaos::parse_args(
        [
            "--seed",
            "7",
            "--runs",
            "3",
            "--crash",
            "0.7",
            "--throttle",
            "0",
        ]
        .map(String::from),
    )
    .unwrap();
    let tally = chaos::run_all(&args).unwrap();
    assert!(tally.faults > 0, "no fault was injected: {tally:?}");
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
