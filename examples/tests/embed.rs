//! `examples/embed.rs`, the embedding starter, run as its reader would run it: on the mock
//! cloud with a memory store, and on moto (`KOPS_TEST_S3_ENDPOINT`) with an `s3://` store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

use support::moto;

mod support;

/// An image moto has in every region (its built-in Ubuntu AMI).
const MOTO_AMI: &str = "ami-1e749f67";

/// The example's binary, built beside this test's (`cargo test` builds the examples).
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let bin = profile.join("examples").join("embed");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build -p kops-examples --example embed`",
        bin.display()
    );
    bin
}

fn run(vars: &[(&str, &str)]) -> String {
    let mut c = Command::new(example());
    for v in [
        "KOPS_STATE_STORE",
        "EMBED_IMAGE",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
    ] {
        c.env_remove(v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = c.envs(vars.iter().copied()).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
    assert!(status.success(), "embed failed:\n{out}\n{err}");
    out.into_owned()
}

/// The count a step printed (`plan: 101 changes` -> 101).
fn count(out: &str, prefix: &str) -> usize {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in:\n{out}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn embed_lives_a_whole_cluster_life_on_the_mock() {
    let out = run(&[]);
    assert!(count(&out, "plan: ") > 50, "{out}");
    assert_eq!(count(&out, "applied; plan again: "), 0, "{out}");
    assert!(count(&out, "terraform: ") >= 1, "{out}");
    assert!(count(&out, "deleted: ") > 20, "{out}");
}

#[test]
fn embed_lives_a_whole_cluster_life_on_moto() {
    let Some(ep) = moto() else { return };
    let bucket = format!("kops-embed-{}", std::process::id());
    let script = "import boto3,sys; boto3.client('s3', region_name='us-east-1', endpoint_url=sys.argv[1], aws_access_key_id='testing', aws_secret_access_key='testing').create_bucket(Bucket=sys.argv[2])";
    let made = Command::new("python3")
        .args(["-c", script, &ep, &bucket])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let state = format!("s3://{bucket}");
    let out = run(&[
        ("KOPS_STATE_STORE", &state),
        ("EMBED_IMAGE", MOTO_AMI),
        ("AWS_ENDPOINT_URL", &ep),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "ap-southeast-2"),
        ("AWS_CONFIG_FILE", "/nonexistent"),
        ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("S3_ENDPOINT", &ep),
        ("S3_ACCESS_KEY_ID", "testing"),
        ("S3_SECRET_ACCESS_KEY", "testing"),
    ]);
    assert!(count(&out, "plan: ") > 50, "{out}");
    assert!(count(&out, "terraform: ") >= 1, "{out}");
    assert!(count(&out, "deleted: ") > 20, "{out}");
}
