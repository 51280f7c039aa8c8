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
