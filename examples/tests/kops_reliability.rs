//! The `kops` binary under faults a user meets: two applies racing on one cluster, a run
//! killed mid-apply (its lock left behind), clearing a lock, and the spec's history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const CLUSTER: &str = "race.example.com";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "KOPS_LOCK_LEASE",
        ] {
            c.env_remove(v);
        }
        c.env("NO_COLOR", "1")
            .current_dir(self.dir.path())
            .arg("--state")
            .arg(format!(
                "file://{}",
                self.dir.path().join("state").display()
            ))
            .arg("--mock-cloud")
            .args(args);
        c
    }

    #[track_caller]
    fn kops(&self, args: &[&str], code: i32) -> Output {
        let o = self.command(args).output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "kops {args:?}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn create(&self) {
        self.kops(
            &[
                "create",
                "cluster",
                CLUSTER,
                "--zones",
                "us-test-1a",
                "--node-count",
                "1",
            ],
            0,
        );
    }
}

/// Objects the mock cloud holds twice under one kind and name (or `Name` tag), from the
/// journal of its mutations the CLI keeps in the state store.
fn duplicates(env: &Env) -> Vec<String> {
    let path = env.dir.path().join("state/kops-rs-mock-cloud/journal.json");
    let journal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut live = std::collections::BTreeMap::new();
    for e in journal["entries"].as_array().unwrap() {
        match e["op"].as_str().unwrap() {
            "create" => {
                let r = &e["request"];
                let name = r["name"]
                    .as_str()
                    .or_else(|| r["tags"]["Name"].as_str())
                    .unwrap_or("")
                    .to_string();
                let kind = r["resource_type"].to_string();
                live.insert(e["id"].as_str().unwrap().to_string(), (kind, name));
            }
            "delete" => {
                live.remove(e["id"].as_str().unwrap());
            }
            _ => {}
        }
    }
    let mut seen = std::collections::BTreeMap::new();
    for (kind, name) in live.into_values().filter(|(_, n)| !n.is_empty()) {
        *seen.entry((kind, name)).or_insert(0) += 1;
    }
    seen.into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((k, name), n)| format!("{k} {name} x{n}"))
        .collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn racing_updates_one_applies_the_other_names_the_holder() {
    let env = Env::new();
    env.create();
    let a = env.spawn(&["update", "cluster", CLUSTER, "--yes"]);
    let b = env.spawn(&["update", "cluster", CLUSTER, "--yes"]);
    let (pa, pb) = (a.id(), b.id());
    let oa = a.wait_with_output().unwrap();
    let ob = b.wait_with_output().unwrap();
    let runs = [(pa, oa), (pb, ob)];
    let ok: Vec<_> = runs.iter().filter(|(_, o)| o.status.success()).collect();
    let failed: Vec<_> = runs.iter().filter(|(_, o)| !o.status.success()).collect();
    assert_eq!(
        (ok.len(), failed.len()),
        (1, 1),
        "{:#?}",
        runs.iter()
            .map(|(p, o)| (p, o.status, text(&o.stdout), text(&o.stderr)))
            .collect::<Vec<_>>()
    );
    let (winner, _) = ok[0];
    let (_, lost) = failed[0];
    assert_eq!(lost.status.code(), Some(1));
    let err = text(&lost.stderr);
    assert!(err.starts_with("error: "), "{err}");
    for part in [
        format!("cluster {CLUSTER} is locked by"),
        format!("pid {winner}"),
        "kops --state".to_string(),
        format!("update cluster {CLUSTER} --yes"),
        "lease until".to_string(),
        format!("kops unlock cluster {CLUSTER}"),
    ] {
        assert!(err.contains(&part), "{part:?} not in: {err}");
    }
    assert!(
        text(&ok[0].1.stdout).contains("updated"),
        "{}",
        text(&ok[0].1.stdout)
    );
    // The winner applied everything; the cluster is unlocked again.
    env.kops(&["update", "cluster", CLUSTER], 0);
    env.kops(&["unlock", "cluster", CLUSTER], 0);
}

#[test]
fn a_killed_run_leaves_a_lock_that_unlock_clears_and_the_next_run_converges() {
    let env = Env::new();
    env.create();
    let mut run = env.spawn(&["update", "cluster", CLUSTER, "--yes"]);
    // Wait for the lock object, then kill the run (SIGKILL) while it holds it.
    let lock = env.dir.path().join(format!("state/{CLUSTER}/kops-rs.lock"));
    let mut waited = 0;
    while !lock.exists() && waited < 600 {
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    assert!(lock.exists(), "the run never took the lock");
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(lock.exists(), "a killed run leaves its lock");

    // Locked: an update names the dead holder; unlock without --force refuses.
    let o = env.kops(&["update", "cluster", CLUSTER, "--yes"], 1);
    let err = text(&o.stderr);
    assert!(err.contains(&format!("pid {}", run.id())), "{err}");
    let o = env.kops(&["unlock", "cluster", CLUSTER], 1);
    let err = text(&o.stderr);
    assert!(
        err.contains("has not expired") && err.contains("--force"),
        "{err}"
    );
    let o = env.kops(&["unlock", "cluster", CLUSTER, "--force"], 0);
    assert!(text(&o.stdout).contains(&format!("pid {}", run.id())));
    assert!(!lock.exists());

    // The next run converges, and the one after it has nothing to do; nothing the cloud
    // holds is there twice.
    env.kops(&["update", "cluster", CLUSTER, "--yes"], 0);
    let o = env.kops(&["update", "cluster", CLUSTER], 0);
    assert!(
        !text(&o.stdout).contains("Must specify --yes"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(duplicates(&env), Vec::<String>::new());
}

#[test]
fn an_expired_lease_is_taken_over_with_a_warning() {
    let env = Env::new();
    env.create();
    let mut run = env
        .command(&["update", "cluster", CLUSTER, "--yes"])
        .env("KOPS_LOCK_LEASE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = env.dir.path().join(format!("state/{CLUSTER}/kops-rs.lock"));
    let mut waited = 0;
    while !lock.exists() && waited < 600 {
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    run.kill().unwrap();
    run.wait().unwrap();
    if !lock.exists() {
        // The run finished before it was killed: nothing to take over.
        return;
    }
    std::thread::sleep(Duration::from_millis(2100));
    let o = env.kops(&["update", "cluster", CLUSTER, "--yes"], 0);
    let err = text(&o.stderr);
    assert!(err.contains("took over the expired lock"), "{err}");
    env.kops(&["update", "cluster", CLUSTER], 0);
}

#[test]
fn history_lists_and_rollback_restores_and_is_recorded() {
    let env = Env::new();
    env.create();
    let o = env.kops(&["get", "history", CLUSTER], 0);
    assert!(
        text(&o.stdout).contains("no saved versions"),
        "{}",
        text(&o.stdout)
    );
    let k8s_version = |yaml: &str| {
        yaml.lines()
            .find(|l| l.trim_start().starts_with("kubernetesVersion:"))
            .map(|l| {
                l.trim()
                    .trim_start_matches("kubernetesVersion:")
                    .trim()
                    .trim_matches('"')
                    .to_string()
            })
            .unwrap()
    };
    let o = env.kops(&["get", "cluster", CLUSTER, "-o", "yaml"], 0);
    let created = k8s_version(&text(&o.stdout));
    // Two changes of the spec: each saves the version it replaces.
    for version in ["1.34.0", "1.34.1"] {
        assert_ne!(created.trim_start_matches('v'), version);
        let o = env.kops(&["get", "cluster", CLUSTER, "-o", "yaml"], 0);
        let yaml = text(&o.stdout);
        let changed = yaml
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("kubernetesVersion:") {
                    format!("  kubernetesVersion: {version}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_ne!(changed, yaml);
        std::fs::write(env.dir.path().join("c.yaml"), changed).unwrap();
        env.kops(&["replace", "-f", "c.yaml"], 0);
    }
    let o = env.kops(&["get", "history", CLUSTER], 0);
    let listing = text(&o.stdout);
    assert!(listing.starts_with("N"), "{listing}");
    assert_eq!(
        listing
            .lines()
            .filter(|l| l.starts_with(['1', '2']))
            .count(),
        2,
        "{listing}"
    );

    // Roll back to the first saved version (the created spec).
    env.kops(&["rollback", "cluster", CLUSTER, "--to", "1"], 0);
    let o = env.kops(&["get", "cluster", CLUSTER, "-o", "yaml"], 0);
    let now = text(&o.stdout);
    assert_eq!(k8s_version(&now), created, "{now}");
    // The rollback is itself recorded: the replaced 1.34.1 spec is version 3.
    let o = env.kops(&["get", "history", CLUSTER], 0);
    assert!(
        text(&o.stdout).lines().any(|l| l.starts_with('3')),
        "{}",
        text(&o.stdout)
    );
    let o = env.kops(&["rollback", "cluster", CLUSTER, "--to", "9"], 1);
    assert!(
        text(&o.stderr).contains("no saved version 9"),
        "{}",
        text(&o.stderr)
    );

    // Retention: with a limit of 2, the oldest go on the next change.
    env.kops(
        &[
            "--history-limit",
            "2",
            "rollback",
            "cluster",
            CLUSTER,
            "--to",
            "3",
        ],
        0,
    );
    let o = env.kops(&["get", "history", CLUSTER], 0);
    let rows: Vec<String> = text(&o.stdout)
        .lines()
        .skip(1)
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(rows, ["3", "4"], "{}", text(&o.stdout));
}
