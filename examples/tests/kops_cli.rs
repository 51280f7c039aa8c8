//! End-to-end tests of the `kops` binary: they run the built program with a local
//! file state store and the mock cloud, as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::require_emulators;

mod support;

const CLUSTER: &str = "demo.example.com";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    #[track_caller]
    fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code {} (wanted {code})\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// A failure as the CLI promises it: exit 1, a first line `error: ...`, no panic.
    #[track_caller]
    fn expect_error(self, needle: &str) -> Run {
        let r = self.expect(1);
        assert!(r.stderr.starts_with("error: "), "stderr: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "stderr: {}", r.stderr);
        assert!(!r.stderr.contains("RUST_BACKTRACE"), "stderr: {}", r.stderr);
        assert!(
            r.stderr.contains(needle),
            "stderr does not mention {needle:?}:\n{}",
            r.stderr
        );
        r
    }
}

/// A scratch state store (`file://`) and helpers to run `kops` against it.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn state(&self) -> String {
        format!("file://{}", self.state_dir().display())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "KOPS_EDITOR",
            "EDITOR",
        ] {
            c.env_remove(v);
        }
        // A home and a kubeconfig of the test's own, never the user's.
        c.env("NO_COLOR", "1")
            .env("HOME", self.dir.path().join("home"))
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .current_dir(self.dir.path());
        c
    }

    /// Runs `kops --state <store> --mock-cloud ARGS`.
    fn kops(&self, args: &[&str]) -> Run {
        self.kops_env(args, &[])
    }

    fn kops_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = self.command();
        c.arg("--state")
            .arg(self.state())
            .arg("--mock-cloud")
            .args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        Run::from(c.output().unwrap())
    }

    /// Every file of the state store with its content (the backend's own lock and
    /// temporary files left out).
    fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if name.starts_with(".kops-") {
                    continue;
                }
                if p.is_dir() {
                    walk(root, &p, out);
                } else {
                    let rel = p.strip_prefix(root).unwrap().display().to_string();
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.state_dir(), &self.state_dir(), &mut out);
        out
    }

    /// A shell script usable as `$EDITOR`.
    fn editor(&self, name: &str, body: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, format!("#!/bin/sh\nset -e\n{body}\n")).unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
        p.display().to_string()
    }

    fn create_demo(&self) {
        self.create_demo_with(&[]);
    }

    /// [`CLUSTER`] created with `extra` flags.
    fn create_demo_with(&self, extra: &[&str]) {
        let mut args = vec![
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--network-cidr",
            "172.20.0.0/16",
            "--node-count",
            "2",
        ];
        args.extend_from_slice(extra);
        self.kops(&args).expect(0);
    }

    /// `get ig GROUP -o yaml` of [`CLUSTER`].
    fn group_yaml(&self, group: &str) -> String {
        self.kops(&["--name", CLUSTER, "get", "ig", group, "-o", "yaml"])
            .expect(0)
            .stdout
    }
}

fn have(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn help_lists_every_flag_with_a_description() {
    let env = Env::new();
    let top = Run::from(env.command().arg("--help").output().unwrap()).expect(0);
    for sub in [
        "create",
        "replace",
        "get",
        "edit",
        "update",
        "delete",
        "toolbox",
        "completion",
    ] {
        assert!(
            top.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(sub) && l.trim().len() > sub.len() + 2),
            "kops --help lacks a described {sub}:\n{}",
            top.stdout
        );
    }
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["create", "cluster"],
            &[
                "--cloud",
                "--zones",
                "--control-plane-zones",
                "--control-plane-count",
                "--control-plane-size",
                "--node-count",
                "--node-size",
                "--networking",
                "--topology",
                "--dns-zone",
                "--dns",
                "--ssh-public-key",
                "--image",
                "--state",
                "--mock-cloud",
                "--bastion",
                "--api-loadbalancer-type",
                "--admin-access",
                "--ssh-access",
                "--cloud-labels",
                "--node-volume-size",
                "--encrypt-etcd-storage",
                "--yes",
            ],
        ),
        (&["create"], &["--filename"]),
        (&["create", "sshpublickey"], &["--ssh-public-key"]),
        (&["replace"], &["--filename", "--force"]),
        (&["get", "clusters"], &["--output"]),
        (&["get", "instancegroups"], &["--output"]),
        (&["edit", "cluster"], &["--state"]),
        (&["edit", "instancegroup"], &["--name"]),
        (
            &["update", "cluster"],
            &[
                "--yes",
                "--target",
                "--out",
                "--output",
                "--instance-group",
                "--instance-group-roles",
            ],
        ),
        (
            &["reconcile", "cluster"],
            &["--yes", "--api-wait", "--cloudonly"],
        ),
        (
            &["get", "assets"],
            &[
                "--output",
                "--copy",
                "--registry-endpoint",
                "--file-source",
                "--docker-config",
            ],
        ),
        (&["delete", "cluster"], &["--yes"]),
        (&["toolbox", "dump"], &["--output"]),
    ];
    for (args, flags) in cases {
        let mut c = env.command();
        c.args(*args).arg("--help");
        let r = Run::from(c.output().unwrap()).expect(0);
        for flag in *flags {
            let line = r
                .stdout
                .lines()
                .find(|l| l.contains(&format!("{flag} ")) || l.trim_end().ends_with(flag))
                .unwrap_or_else(|| {
                    panic!("kops {} --help lacks {flag}:\n{}", args.join(" "), r.stdout)
                });
            // The description is on the flag's line (or the next one when wrapped).
            let described = line.trim().len() > flag.len() + 12
                || r.stdout
                    .lines()
                    .skip_while(|l| *l != line)
                    .nth(1)
                    .is_some_and(|n| !n.trim().is_empty() && !n.trim_start().starts_with('-'));
            assert!(
                described,
                "kops {} --help: {flag} has no description:\n{}",
                args.join(" "),
                r.stdout
            );
        }
    }
}

#[test]
fn version_names_this_kops_and_its_kops_release() {
    let env = Env::new();
    let short = Run::from(env.command().args(["version", "--short"]).output().unwrap()).expect(0);
    assert_eq!(short.stdout.trim(), env!("CARGO_PKG_VERSION"));
    let long = Run::from(env.command().arg("version").output().unwrap()).expect(0);
    assert!(
        long.stdout.contains(&format!(
            "kOps release: {}",
            kops_model::DEFAULT_KOPS_RELEASE
        )),
        "{}",
        long.stdout
    );
}

#[test]
fn completion_scripts_name_the_commands() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish"] {
        let mut c = env.command();
        c.args(["completion", shell]);
        let r = Run::from(c.output().unwrap()).expect(0);
        assert!(r.stdout.contains("kops"), "{shell}: {}", r.stdout);
        assert!(r.stdout.contains("update"), "{shell}");
        assert!(r.stdout.contains("control-plane-count"), "{shell}");
    }
    let mut c = env.command();
    c.args(["completion", "tcsh"]);
    Run::from(c.output().unwrap()).expect(1);
}

#[test]
fn cluster_lifecycle_on_the_mock_cloud() {
    let env = Env::new();
    env.create_demo();

    // get
    let r = env.kops(&["get", "clusters"]).expect(0);
    assert!(
        r.stdout.contains(CLUSTER) && r.stdout.contains("us-test-1a"),
        "{}",
        r.stdout
    );
    let r = env
        .kops(&["--name", CLUSTER, "get", "instancegroups"])
        .expect(0);
    assert!(
        r.stdout.contains("control-plane-us-test-1a"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("nodes-us-test-1a"), "{}", r.stdout);
    let r = env.kops(&["get", "clusters", "-o", "json"]).expect(0);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let text = doc.to_string();
    assert!(text.contains("\"etcdClusters\""), "{text}");

    // edit: a scripted editor changes the cluster and an instance group.
    let editor = env.editor(
        "edit-cluster.sh",
        "sed -i 's/backupRetentionDays: 90/backupRetentionDays: 30/' \"$1\"",
    );
    env.kops_env(&["edit", "cluster", CLUSTER], &[("EDITOR", &editor)])
        .expect(0);
    let r = env
        .kops(&["get", "clusters", CLUSTER, "-o", "yaml"])
        .expect(0);
    assert!(r.stdout.contains("backupRetentionDays: 30"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("backupRetentionDays: 90"),
        "{}",
        r.stdout
    );
    let editor = env.editor("edit-ig.sh", "sed -i 's/maxSize: 2/maxSize: 4/' \"$1\"");
    env.kops_env(
        &[
            "--name",
            CLUSTER,
            "edit",
            "instancegroup",
            "nodes-us-test-1a",
        ],
        &[("EDITOR", &editor)],
    )
    .expect(0);
    let r = env.group_yaml("nodes-us-test-1a");
    assert!(r.contains("maxSize: 4"), "{r}");

    // update: dry run with changes pending.
    let r = env.kops(&["update", "cluster", CLUSTER]).expect(2);
    assert!(r.stdout.contains("Will create resources:"), "{}", r.stdout);
    assert!(r.stdout.contains("VPC/"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("\u{1b}["),
        "piped output must not be coloured"
    );
    let r = env
        .kops(&["update", "cluster", CLUSTER, "-o", "json"])
        .expect(2);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        plan["items"]
            .as_array()
            .is_some_and(|a| a.iter().any(|i| i["action"] == "create"))
    );

    // update --target terraform.
    let out = env.path("tf");
    env.kops(&[
        "update",
        "cluster",
        CLUSTER,
        "--target",
        "terraform",
        "--out",
        out.to_str().unwrap(),
    ])
    .expect(0);
    let tf = std::fs::read_to_string(out.join("kubernetes.tf")).unwrap();
    assert!(tf.contains("resource \"aws_vpc\""), "{tf}");
    assert!(tf.contains("nodes-us-test-1a"), "{tf}");
    check_terraform(&out);

    // update --yes, then nothing is left to do.
    let r = env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    assert!(r.stdout.contains("updated"), "{}", r.stdout);
    assert!(
        env.tree()
            .contains_key(&format!("{CLUSTER}/cluster-completed.spec"))
    );
    let r = env.kops(&["update", "cluster", CLUSTER]).expect(0);
    assert!(!r.stdout.contains("Will create"), "{}", r.stdout);

    // The mock cloud holds the cluster's resources; toolbox dump lists them.
    let r = env
        .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
        .expect(0);
    let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        !dump["resources"].as_array().unwrap().is_empty(),
        "{}",
        r.stdout
    );

    // delete: the dry run lists, --yes deletes.
    let r = env.kops(&["delete", "cluster", CLUSTER]).expect(2);
    assert!(r.stdout.contains("vpc-"), "{}", r.stdout);
    env.kops(&["delete", "cluster", CLUSTER, "--yes"]).expect(0);
    env.kops(&["get", "clusters", CLUSTER])
        .expect_error("not found");
    env.kops(&["get", "clusters"]).expect_error("no clusters");
    assert!(
        env.tree().keys().all(|k| !k.starts_with(CLUSTER)),
        "state left: {:?}",
        env.tree().keys().collect::<Vec<_>>()
    );
    // Re-creating and planning starts from an empty cloud again.
    env.create_demo();
    env.kops(&["update", "cluster", CLUSTER]).expect(2);
}

/// The Terraform files parse as HCL2 (python-hcl2) and are formatted as `terraform fmt`
/// wants; skipped when those tools are missing, unless KOPS_TEST_REQUIRE_EMULATORS=1.
fn check_terraform(dir: &Path) {
    let hcl2 = have("python3", &["-c", "import hcl2"]);
    if hcl2 {
        let script = "import sys, hcl2\nfor p in sys.argv[1:]:\n    hcl2.load(open(p))\n";
        let mut c = Command::new("python3");
        c.arg("-c").arg(script);
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "tf") {
                c.arg(p);
            }
        }
        let r = Run::from(c.output().unwrap());
        assert_eq!(
            r.code, 0,
            "python-hcl2 rejects the Terraform:\n{}",
            r.stderr
        );
    } else if require_emulators() {
        panic!("python3 with hcl2 is required (KOPS_TEST_REQUIRE_EMULATORS=1)");
    } else {
        eprintln!("skipping the python-hcl2 check: python3 with hcl2 not found");
    }
    if have("terraform", &["version"]) {
        let r = Run::from(
            Command::new("terraform")
                .args(["fmt", "-check", "-diff", "-recursive"])
                .arg(dir)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "terraform fmt -check:\n{}{}", r.stdout, r.stderr);
    } else if require_emulators() {
        panic!("terraform is required (KOPS_TEST_REQUIRE_EMULATORS=1)");
    } else {
        eprintln!("skipping `terraform fmt -check`: terraform not found");
    }
}

#[test]
fn rejected_edit_is_kept_and_nothing_is_saved() {
    let env = Env::new();
    env.create_demo();
    let before = env.tree();
    // The editor breaks the network CIDR; reopened with the errors, it changes nothing
    // more, so the edit is given up.
    let log = env.path("editor.log");
    let editor = env.editor(
        "bad-edit.sh",
        &format!(
            "echo \"$1\" >> {log}\nsed -i 's#172.20.0.0/16#172.20.0.0/33#' \"$1\"",
            log = log.display()
        ),
    );
    let r = env
        .kops_env(&["edit", "cluster", CLUSTER], &[("EDITOR", &editor)])
        .expect_error("kept in");
    assert!(r.stderr.contains("networkCIDR"), "{}", r.stderr);
    assert_eq!(env.tree(), before, "a rejected edit changed the store");
    // The editor ran twice on the same file; the second time the errors were at the top.
    let opened = std::fs::read_to_string(&log).unwrap();
    let files: Vec<&str> = opened.lines().collect();
    assert_eq!(files.len(), 2, "{opened}");
    assert_eq!(files[0], files[1]);
    let kept = std::fs::read_to_string(files[0]).unwrap();
    assert!(kept.contains("172.20.0.0/33"), "the edit was lost:\n{kept}");
    assert!(kept.contains("# The edit was rejected"), "{kept}");
    assert!(
        kept.lines()
            .any(|l| l.starts_with('#') && l.contains("networkCIDR")),
        "{kept}"
    );
    let _ = std::fs::remove_file(files[0]);
}

#[test]
fn bad_input_fails_cleanly_and_leaves_the_store_unchanged() {
    let env = Env::new();
    env.create_demo();
    let before = env.tree();
    let manifest = env
        .kops(&["get", "clusters", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;

    // A malformed manifest.
    std::fs::write(
        env.path("malformed.yaml"),
        "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata: {name: [\n",
    )
    .unwrap();
    env.kops(&["create", "-f", "malformed.yaml"])
        .expect_error("malformed.yaml");
    assert_eq!(env.tree(), before);

    // An unknown field.
    let unknown = manifest
        .replace(CLUSTER, "other.example.com")
        .replace("spec:\n", "spec:\n  noSuchField: 1\n");
    std::fs::write(env.path("unknown.yaml"), unknown).unwrap();
    env.kops(&["create", "-f", "unknown.yaml"])
        .expect_error("noSuchField");
    assert_eq!(env.tree(), before);

    // An invalid CIDR.
    let bad_cidr = manifest.replace("172.20.0.0/16", "172.20.0.0/33");
    assert_ne!(bad_cidr, manifest);
    std::fs::write(env.path("cidr.yaml"), bad_cidr).unwrap();
    env.kops(&["replace", "-f", "cidr.yaml"])
        .expect_error("networkCIDR");
    assert_eq!(env.tree(), before);

    // No state store.
    let mut c = env.command();
    c.args(["get", "clusters"]);
    Run::from(c.output().unwrap()).expect_error("state store");

    // An unknown cluster.
    env.kops(&["update", "cluster", "nope.example.com"])
        .expect_error("nope.example.com");
    env.kops(&["--name", "nope.example.com", "get", "ig"])
        .expect_error("not found");
    assert_eq!(env.tree(), before);

    // A held lock.
    let lock = env.state_dir().join(CLUSTER).join("kops-rs.lock");
    std::fs::write(
        &lock,
        r#"{"id":"0123","holder":"someone@elsewhere","operation":"update cluster","created":"2026-01-01T00:00:00Z","toolVersion":"test"}"#,
    )
    .unwrap();
    let locked = env.tree();
    env.kops(&["update", "cluster", CLUSTER, "--yes"])
        .expect_error("locked");
    let editor = env.editor(
        "ok-edit.sh",
        "sed -i 's/backupRetentionDays: 90/backupRetentionDays: 7/' \"$1\"",
    );
    let r = env
        .kops_env(&["edit", "cluster", CLUSTER], &[("EDITOR", &editor)])
        .expect_error("someone@elsewhere");
    assert!(r.stderr.contains("kept in"), "{}", r.stderr);
    env.kops(&["delete", "cluster", CLUSTER, "--yes"])
        .expect_error("locked");
    assert_eq!(env.tree(), locked);
}

/// An instance group removed from the spec loses its autoscaling group and launch template
/// on the next `update --yes`: the dry run plans exactly those deletions, other groups are
/// untouched, and a plan afterwards is empty.
#[test]
fn removed_instance_group_is_deleted_by_update() {
    let env = Env::new();
    env.create_demo();
    // A second node group, made from the first.
    let r = env.group_yaml("nodes-us-test-1a");
    let extra = r.replace("nodes-us-test-1a", "extra");
    assert_ne!(extra, r);
    std::fs::write(env.path("extra.yaml"), extra).unwrap();
    env.kops(&["replace", "-f", "extra.yaml", "--force"])
        .expect(0);
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    env.kops(&["update", "cluster", CLUSTER]).expect(0);

    // Deleting the last control-plane group is refused; the dry run removes nothing.
    env.kops(&[
        "--name",
        CLUSTER,
        "delete",
        "ig",
        "control-plane-us-test-1a",
        "--yes",
    ])
    .expect_error("last control-plane group");
    let before = env.tree();
    env.kops(&["--name", CLUSTER, "delete", "ig", "extra"])
        .expect(2);
    assert_eq!(env.tree(), before);
    env.kops(&["--name", CLUSTER, "delete", "ig", "extra", "--yes"])
        .expect(0);
    let r = env.kops(&["--name", CLUSTER, "get", "ig"]).expect(0);
    assert!(!r.stdout.contains("extra"), "{}", r.stdout);

    // The plan deletes exactly the group's autoscaling group and launch template.
    let r = env
        .kops(&["update", "cluster", CLUSTER, "-o", "json"])
        .expect(2);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let mut changes: Vec<String> = plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["action"] != "unchanged")
        .map(|i| format!("{} {}", i["action"].as_str().unwrap(), i["key"]))
        .collect();
    changes.sort();
    assert_eq!(changes.len(), 2, "{changes:?}\n{}", r.stdout);
    assert!(
        changes
            .iter()
            .all(|c| c.starts_with("delete ") && c.contains(&format!("extra.{CLUSTER}"))),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.contains("AutoscalingGroup")),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.contains("LaunchTemplate")),
        "{changes:?}"
    );
    let r = env.kops(&["update", "cluster", CLUSTER]).expect(2);
    assert!(r.stdout.contains("Will delete"), "{}", r.stdout);

    let r = env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    assert!(r.stdout.contains("2 deleted"), "{}", r.stdout);
    env.kops(&["update", "cluster", CLUSTER]).expect(0);
    let r = env
        .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
        .expect(0);
    let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let of_group = |group: &str| -> Vec<(String, String)> {
        dump["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tags"]["kops.k8s.io/instancegroup"] == group)
            .map(|r| {
                (
                    r["resource_type"].as_str().unwrap_or_default().to_owned(),
                    r["attrs"]["state"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    // Only the group's terminated instances are left (AWS lists them for a while).
    let extra = of_group("extra");
    assert!(
        extra
            .iter()
            .all(|(t, state)| t == "Instance" && state == "terminated"),
        "{extra:?}"
    );
    let nodes = of_group("nodes-us-test-1a");
    for kind in ["AutoscalingGroup", "LaunchTemplate"] {
        assert!(nodes.iter().any(|(t, _)| t == kind), "{kind}: {nodes:?}");
    }
}

#[test]
fn dry_run_refuses_a_network_cidr_change_before_applying_anything() {
    let env = Env::new();
    env.create_demo();
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    env.kops(&["update", "cluster", CLUSTER]).expect(0);

    // A wider network: the VPC's CIDR cannot change in place.
    let r = env
        .kops(&["get", "cluster", CLUSTER, "-o", "yaml"])
        .expect(0);
    let wider = r
        .stdout
        .replace("networkCIDR: 172.20.0.0/16", "networkCIDR: 172.20.0.0/15");
    assert_ne!(wider, r.stdout, "{}", r.stdout);
    std::fs::write(env.path("cluster.yaml"), wider).unwrap();
    env.kops(&["replace", "-f", "cluster.yaml"]).expect(0);

    let before = env.tree();
    let r = env
        .kops(&["update", "cluster", CLUSTER])
        .expect_error("cannot change in place");
    assert!(
        r.stderr.contains(&format!("VPC/{CLUSTER}.cidr_block")),
        "names the task and field: {}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "no plan is printed: {}", r.stdout);
    assert_eq!(env.tree(), before, "the dry run changed the store");

    // Applying refuses it too, before changing anything.
    env.kops(&["update", "cluster", CLUSTER, "--yes"])
        .expect_error("cannot change in place");
    assert_eq!(env.tree(), before, "nothing was applied");
    let r = env
        .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
        .expect(0);
    let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let vpcs: Vec<&str> = dump["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["resource_type"] == "Vpc")
        .filter_map(|r| r["attrs"]["cidr_block"].as_str())
        .collect();
    assert_eq!(vpcs, ["172.20.0.0/16"], "{}", r.stdout);
}

#[test]
fn additional_objects_are_kept_with_the_cluster_and_shape_the_scheduler() {
    let env = Env::new();
    env.create_demo();
    let r = env
        .kops(&["get", "cluster", CLUSTER, "-o", "yaml"])
        .expect(0);
    let file = format!(
        "{}---\napiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nclientConnection:\n  burst: 100\n  qps: 3.1\n",
        r.stdout
    );
    std::fs::write(env.path("cluster.yaml"), file).unwrap();
    env.kops(&["replace", "-f", "cluster.yaml"]).expect(0);
    let stored = env.tree();
    let addons = String::from_utf8_lossy(
        stored
            .get(&format!("{CLUSTER}/clusteraddons/default"))
            .expect("stored where kOps keeps them"),
    )
    .into_owned();
    assert!(
        addons.contains("kind: KubeSchedulerConfiguration"),
        "{addons}"
    );

    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    let tree = env.tree();
    let (path, config) = tree
        .iter()
        .find(|(p, _)| {
            p.starts_with(&format!("{CLUSTER}/igconfig/control-plane/"))
                && p.ends_with("nodeupconfig.yaml")
        })
        .expect("a control-plane nodeup config");
    let config = String::from_utf8_lossy(config);
    assert!(
        config.contains("apiVersion: kubescheduler.config.k8s.io/v1beta2")
            && config.contains("qps: 3.1")
            && config.contains("kubeconfig: /var/lib/kube-scheduler/kubeconfig"),
        "{path}:\n{config}"
    );

    // `get all`: the cluster, its groups and the additional object, in a table and as a
    // manifest that `replace -f` reads back without a change to any object.
    let table = env.kops(&["get", "all", CLUSTER]).expect(0).stdout;
    for line in [
        "Cluster",
        "Instance Groups",
        "Addon Objects",
        "KubeSchedulerConfiguration",
    ] {
        assert!(table.contains(line), "{line}:\n{table}");
    }
    let all = env
        .kops(&["get", "all", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;
    let objects = kops_api::manifest::parse(all.as_bytes(), "get all").unwrap();
    let kinds: Vec<&str> = objects.iter().map(|o| o.kind()).collect();
    assert_eq!(
        kinds,
        [
            "Cluster",
            "InstanceGroup",
            "InstanceGroup",
            "KubeSchedulerConfiguration"
        ],
        "{all}"
    );
    std::fs::write(env.path("all.yaml"), &all).unwrap();
    env.kops(&["replace", "-f", "all.yaml"]).expect(0);
    let again = env
        .kops(&["get", "all", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;
    assert_eq!(again, all);

    // A file whose additional objects belong to no single cluster is refused, and
    // nothing is written.
    std::fs::write(
        env.path("orphan.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .unwrap();
    let before = env.tree();
    env.kops(&["create", "-f", "orphan.yaml"])
        .expect_error("exactly one Cluster");
    assert_eq!(env.tree(), before);

    // Deleting the cluster removes them too.
    env.kops(&["delete", "cluster", CLUSTER, "--yes"]).expect(0);
    assert!(
        !env.tree().keys().any(|p| p.contains("clusteraddons")),
        "{:?}",
        env.tree().keys().collect::<Vec<_>>()
    );
}

#[test]
fn create_instance_group_prints_edits_and_stores_it() {
    let env = Env::new();
    env.create_demo();
    let before = env.tree();
    let ig = |args: &[&str]| {
        let mut all = vec!["--name", CLUSTER, "create", "ig"];
        all.extend_from_slice(args);
        all.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| env.kops(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // A dry run prints what kOps' command writes, and stores nothing.
    let r = run(ig(&[
        "extra",
        "--subnet",
        "us-test-1a",
        "--dry-run",
        "-o",
        "yaml",
    ]))
    .expect(0);
    for line in [
        "kind: InstanceGroup",
        "name: extra",
        "role: Node",
        "kops.k8s.io/instancegroup: extra",
        "kops.k8s.io/cluster: demo.example.com",
        "machineType: t3.medium",
        "manager: CloudGroup",
        "maxSize: 2",
        "- us-test-1a",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.stdout);
    }
    // Bad input names the field and stores nothing.
    run(ig(&["extra", "--subnet", "us-test-1z", "--edit=false"])).expect_error("us-test-1z");
    run(ig(&["extra", "--role", "worker", "--edit=false"])).expect_error("role");
    run(ig(&["nodes-us-test-1a", "--edit=false"])).expect_error("already exists");
    assert_eq!(env.tree(), before, "a refused create changed the store");
    // By default the group is opened in the editor first: what it saves is stored.
    let editor = env.editor("grow.sh", "sed -i 's/maxSize: 2/maxSize: 5/' \"$1\"");
    let args = ig(&["extra", "--subnet", "us-test-1a"]);
    env.kops_env(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("EDITOR", &editor)],
    )
    .expect(0);
    let r = env
        .kops(&["--name", CLUSTER, "get", "ig", "extra", "-o", "yaml"])
        .expect(0);
    assert!(r.stdout.contains("maxSize: 5"), "{}", r.stdout);
    assert!(r.stdout.contains("minSize: 2"), "{}", r.stdout);
    // --edit=false stores it as made; the cluster then applies with both new groups.
    run(ig(&["more", "--edit=false"])).expect(0);
    let r = env
        .kops(&["--name", CLUSTER, "get", "ig", "more", "-o", "yaml"])
        .expect(0);
    assert!(r.stdout.contains("- us-test-1a"), "{}", r.stdout);
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    env.kops(&["update", "cluster", CLUSTER]).expect(0);
    let r = env
        .kops(&["--name", CLUSTER, "get", "ig", "-o", "json"])
        .expect(0);
    assert!(
        r.stdout.contains("\"extra\"") && r.stdout.contains("\"more\""),
        "{}",
        r.stdout
    );
}

#[test]
fn upgrade_cluster_proposes_the_channels_versions_and_stores_them_with_yes() {
    let env = Env::new();
    env.create_demo_with(&["--kubernetes-version", "1.33.1"]);
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    let before = env.tree();
    // The dry run: kOps' table, exit 2, nothing stored.
    let r = env.kops(&["upgrade", "cluster", CLUSTER]).expect(2);
    let rows: Vec<Vec<&str>> = r
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["ITEM", "PROPERTY", "OLD", "NEW"],
            vec!["Cluster", "KubernetesVersion", "1.33.1", "1.33.13"],
        ],
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("Must specify --yes"), "{}", r.stderr);
    assert_eq!(env.tree(), before, "a dry run changed the store");

    // Bad input names what is wrong and stores nothing.
    env.kops(&[
        "upgrade",
        "cluster",
        CLUSTER,
        "--kubernetes-version",
        "newest",
    ])
    .expect_error("kubernetesVersion");
    env.kops(&[
        "upgrade",
        "cluster",
        CLUSTER,
        "--channel",
        "https://example.com/alpha",
    ])
    .expect_error("channel files");
    env.kops(&["upgrade", "cluster", CLUSTER, "--channel", "nowhere.yaml"])
        .expect_error("nowhere.yaml");
    assert_eq!(env.tree(), before);

    // With --yes the version is stored, and the next update plans the new Kubernetes.
    env.kops(&["upgrade", "cluster", CLUSTER, "--yes"])
        .expect(0);
    let r = env.kops(&["update", "cluster", CLUSTER]).expect(2);
    assert!(
        r.stdout.contains("registry.k8s.io/kube-apiserver:v1.33.13"),
        "{}",
        r.stdout
    );
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);

    // A channel file with a newer image: the groups on the channel's images follow it,
    // a group on its own image keeps it.
    let editor = env.editor(
        "own-image.sh",
        "sed -i 's|image: .*|image: 123456789012/golden-2025|' \"$1\"",
    );
    env.kops_env(
        &["--name", CLUSTER, "edit", "ig", "control-plane-us-test-1a"],
        &[("EDITOR", &editor)],
    )
    .expect(0);
    let embedded = kops_model::channel::STABLE_YAML;
    let newer = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20251001";
    let file = env.path("channel.yaml");
    std::fs::write(
        &file,
        embedded.replacen(
            "  images:\n",
            &format!(
                "  images:\n  - name: {newer}\n    providerID: aws\n    architectureID: amd64\n    kubernetesVersion: \">=1.33.0\"\n"
            ),
            1,
        ),
    )
    .unwrap();
    let channel = file.display().to_string();
    let r = env
        .kops(&[
            "upgrade",
            "cluster",
            CLUSTER,
            "--channel",
            &channel,
            "--yes",
        ])
        .expect(0);
    assert!(
        r.stdout.contains("Updates applied to configuration"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("custom image 123456789012/golden-2025 is kept"),
        "{}",
        r.stderr
    );
    let rows: Vec<&str> = r.stdout.lines().collect();
    assert!(
        rows.iter()
            .any(|l| l.starts_with("Cluster") && l.contains("Channel") && l.ends_with(&channel)),
        "{}",
        r.stdout
    );
    assert!(
        rows.iter()
            .any(|l| l.starts_with("InstanceGroup/nodes-us-test-1a") && l.ends_with(newer)),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("KubernetesVersion"), "{}", r.stdout);
    let cluster = env
        .kops(&["get", "cluster", CLUSTER, "-o", "json"])
        .expect(0);
    let cluster: serde_json::Value = serde_json::from_str(&cluster.stdout).unwrap();
    assert_eq!(cluster["spec"]["kubernetesVersion"], "1.33.13");
    assert_eq!(cluster["spec"]["channel"], channel.as_str());
    let nodes = env.group_yaml("nodes-us-test-1a");
    assert!(nodes.contains(&format!("image: {newer}")), "{}", nodes);
    let cp = env.group_yaml("control-plane-us-test-1a");
    assert!(cp.contains("image: 123456789012/golden-2025"), "{}", cp);
    // The replaced specs are in the history; a second upgrade has nothing to do.
    let history = env.kops(&["get", "history", CLUSTER]).expect(0);
    assert!(history.stdout.lines().count() >= 3, "{}", history.stdout);
    let r = env.kops(&["upgrade", "cluster", CLUSTER]).expect(0);
    assert!(r.stderr.contains("No upgrade required"), "{}", r.stderr);
}

#[test]
fn secrets_and_ssh_keys_are_listed_by_name_and_deleted_without_showing_values() {
    let env = Env::new();
    env.create_demo();
    let named = |args: &[&str]| {
        let mut all = vec!["--name", CLUSTER];
        all.extend_from_slice(args);
        env.kops(&all)
    };
    // A value that must never be printed.
    let value = "s3cr3t-value-that-must-not-leak";
    let file = env.path("password");
    std::fs::write(&file, value).unwrap();
    let file = file.display().to_string();
    named(&["create", "secret", "ciliumpassword", "-f", &file]).expect(0);
    let config = env.path("docker.json");
    std::fs::write(
        &config,
        format!(r#"{{"auths":{{"r.example.com":{{"auth":"{value}"}}}}}}"#),
    )
    .unwrap();
    named(&[
        "create",
        "secret",
        "dockerconfig",
        "-f",
        &config.display().to_string(),
    ])
    .expect(0);

    let r = named(&["get", "secrets"]).expect(0);
    let names: Vec<&str> = r.stdout.lines().map(str::trim).collect();
    assert_eq!(
        names,
        ["NAME", "ciliumpassword", "dockerconfig"],
        "{}",
        r.stdout
    );
    let r = named(&["get", "secrets", "dockerconfig", "-o", "json"]).expect(0);
    let listed: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(listed, serde_json::json!([{"name": "dockerconfig"}]));
    named(&["get", "secrets", "nothere"]).expect_error("\"nothere\"");

    // Deleting: every name must exist, or nothing is deleted.
    let before = env.tree();
    named(&["delete", "secret", "dockerconfig", "nothere"]).expect_error("nothing deleted");
    assert_eq!(env.tree(), before);
    let r = named(&["delete", "secret", "dockerconfig"]).expect(0);
    assert!(r.stdout.contains("secret dockerconfig"), "{}", r.stdout);
    let r = named(&["get", "secrets", "-o", "yaml"]).expect(0);
    assert!(
        r.stdout.contains("name: ciliumpassword") && !r.stdout.contains("dockerconfig"),
        "{}",
        r.stdout
    );

    // SSH public keys: listed by fingerprint, with the key in JSON; deleted together.
    let key = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCtWu40XQo8dczLsCq0OWV+hxm9uV3WxeH9Kgh4sMzQxNtoU1pvW0XdjpkBesRKGoolfWeCLXWxpyQb1IaiMkKoz7MdhQ/6UKjMjP66aFWWp3pwD0uj0HuJ7tq4gKHKRYGTaZIRWpzUiANBrjugVgA+Sd7E/mYwc/DMXkIyRZbvhQ== alice@example.com";
    let key_file = env.path("id.pub");
    std::fs::write(&key_file, format!("{key}\n")).unwrap();
    let r = named(&[
        "create",
        "sshpublickey",
        "-i",
        &key_file.display().to_string(),
    ])
    .expect(0);
    let id = r.stdout.split_whitespace().nth(4).unwrap().to_owned();
    let r = named(&["get", "sshpublickeys"]).expect(0);
    assert_eq!(
        r.stdout.lines().map(str::trim).collect::<Vec<_>>(),
        ["ID", id.as_str()]
    );
    let r = named(&["get", "sshpublickeys", "-o", "json"]).expect(0);
    let listed: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(listed, serde_json::json!([{"ID": id, "PublicKey": key}]));
    named(&["delete", "sshpublickey"]).expect(0);
    named(&["get", "sshpublickeys"]).expect_error("no SSH public key");
    named(&["delete", "sshpublickey"]).expect_error("no SSH public key");

    // No output above showed the secret's value.
    for args in [
        &["get", "secrets"][..],
        &["get", "secrets", "-o", "json"],
        &["get", "secrets", "-o", "yaml"],
    ] {
        let r = named(args).expect(0);
        assert!(!r.stdout.contains(value) && !r.stderr.contains(value));
    }
}

#[test]
fn set_and_unset_change_fields_without_an_editor_and_refuse_bad_ones() {
    let env = Env::new();
    // create cluster --set: on the cluster the flags made.
    let r = env
        .kops(&[
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--set",
            "spec.kubelet.maxPods=150",
            "--set",
            "spec.sshAccess=10.0.0.0/8",
            "--dry-run",
            "-o",
            "json",
        ])
        .expect(0);
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&r.stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|_| vec![serde_json::from_str(&r.stdout).unwrap()]);
    let all = serde_json::Value::Array(docs).to_string();
    assert!(all.contains("\"maxPods\":150"), "{}", r.stdout);
    assert!(all.contains("\"10.0.0.0/8\""), "{}", r.stdout);
    env.create_demo();
    let named = |args: &[&str]| {
        let mut all = vec!["--name", CLUSTER];
        all.extend_from_slice(args);
        env.kops(&all)
    };
    let before = env.tree();
    // Refused: no such field, a value of the wrong type, a spec that does not validate;
    // the store is unchanged and no editor is started (EDITOR would fail).
    let no_editor = [("EDITOR", "false")];
    for (args, needle) in [
        (
            &["edit", "cluster", "--set", "spec.kubernetesVersio=1.34.1"][..],
            "no such field",
        ),
        (
            &["edit", "cluster", "--set", "spec.kubelet.maxPods=lots"],
            "\"lots\"",
        ),
        (
            &["edit", "cluster", "--unset", "spec.nope"],
            "spec.nope: no such field",
        ),
        (
            &[
                "edit",
                "ig",
                "nodes-us-test-1a",
                "--set",
                "spec.minSize=5",
                "--set",
                "spec.maxSize=2",
            ],
            "rejected",
        ),
    ] {
        let mut all = vec!["--name", CLUSTER];
        all.extend_from_slice(args);
        env.kops_env(&all, &no_editor).expect_error(needle);
    }
    assert_eq!(env.tree(), before, "a refused --set changed the store");

    // Accepted: stored as given, the rest of the spec untouched.
    let r = named(&[
        "edit",
        "cluster",
        "--set",
        "spec.cloudLabels=team=platform",
        "--set",
        "spec.kubelet.maxPods=120",
    ]);
    let r = r.expect(0);
    assert!(r.stdout.contains("Saved cluster"), "{}", r.stdout);
    let c: serde_json::Value = serde_json::from_str(
        &named(&["get", "cluster", CLUSTER, "-o", "json"])
            .expect(0)
            .stdout,
    )
    .unwrap();
    assert_eq!(
        c["spec"]["cloudLabels"],
        serde_json::json!({"team": "platform"})
    );
    assert_eq!(c["spec"]["kubelet"]["maxPods"], 120);
    named(&[
        "edit",
        "ig",
        "nodes-us-test-1a",
        "--set",
        "spec.maxSize=4",
        "--unset",
        "spec.image",
    ])
    .expect(0);
    let g: serde_json::Value = serde_json::from_str(
        &named(&["get", "ig", "nodes-us-test-1a", "-o", "json"])
            .expect(0)
            .stdout,
    )
    .unwrap();
    let g = if g.is_array() { g[0].clone() } else { g };
    assert_eq!(g["spec"]["maxSize"], 4);
    assert!(g["spec"].get("image").is_none(), "{g}");
    // The same change again: nothing to save.
    let r = named(&["edit", "ig", "nodes-us-test-1a", "--set", "spec.maxSize=4"]).expect(0);
    assert!(r.stdout.contains("No changes made"), "{}", r.stdout);
    // The cluster still applies.
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
}

#[test]
fn delete_from_a_manifest_removes_what_it_names_only_with_yes() {
    let env = Env::new();
    env.create_demo();
    env.kops(&["--name", CLUSTER, "create", "ig", "extra", "--edit=false"])
        .expect(0);
    env.kops(&["delete"]).expect_error("-f FILE");
    // One group: a dry run, then --yes removes it and nothing else.
    std::fs::write(env.path("extra.yaml"), env.group_yaml("extra")).unwrap();
    let before = env.tree();
    let r = env.kops(&["delete", "-f", "extra.yaml"]).expect(2);
    assert!(
        r.stdout.contains("Will remove instance group \"extra\""),
        "{}",
        r.stdout
    );
    assert_eq!(env.tree(), before, "a dry run changed the store");
    env.kops(&["delete", "-f", "extra.yaml", "--yes"]).expect(0);
    env.kops(&["--name", CLUSTER, "get", "ig", "extra"])
        .expect_error("\"extra\"");
    let r = env
        .kops(&["--name", CLUSTER, "get", "ig", "-o", "json"])
        .expect(0);
    assert!(r.stdout.contains("nodes-us-test-1a"), "{}", r.stdout);

    // The whole cluster as `get all` writes it: its groups go with it.
    let all = env
        .kops(&["get", "all", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;
    std::fs::write(env.path("all.yaml"), all).unwrap();
    let before = env.tree();
    env.kops(&["delete", "-f", "all.yaml"]).expect(2);
    assert_eq!(env.tree(), before);
    env.kops(&["delete", "-f", "all.yaml", "--yes"]).expect(0);
    assert!(
        env.tree().is_empty(),
        "{:?}",
        env.tree().keys().collect::<Vec<_>>()
    );
    env.kops(&["get", "cluster", CLUSTER])
        .expect_error("not found");
}

/// `get assets`: the images and files the machines download, remapped through the
/// cluster's `spec.assets`, as a table, JSON and YAML.
#[test]
fn get_assets_lists_images_and_files_where_machines_download_them() {
    let env = Env::new();
    env.create_demo_with(&[
        "--set",
        "spec.assets.containerRegistry=registry.example.com",
    ]);
    let r = env
        .kops(&["--name", CLUSTER, "get", "assets", "-o", "json"])
        .expect(0);
    let assets: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let images = assets["images"].as_array().unwrap();
    let apiserver = images
        .iter()
        .find(|i| {
            i["canonical"]
                .as_str()
                .is_some_and(|c| c.starts_with("registry.k8s.io/kube-apiserver:v"))
        })
        .unwrap_or_else(|| panic!("{assets:#}"));
    assert!(
        apiserver["download"]
            .as_str()
            .unwrap()
            .starts_with("registry.example.com/kube-apiserver:v"),
        "{apiserver}"
    );
    assert!(
        images.iter().all(|i| i["download"]
            .as_str()
            .unwrap()
            .starts_with("registry.example.com/")),
        "{assets:#}"
    );
    let files = assets["files"].as_array().unwrap();
    assert!(
        files.iter().any(|f| f["canonical"]
            .as_str()
            .unwrap()
            .ends_with("/bin/linux/amd64/kubelet")),
        "{assets:#}"
    );
    assert!(
        files.iter().all(|f| f["sha"].as_str().unwrap().len() == 64),
        "{assets:#}"
    );
    let yaml = env
        .kops(&["--name", CLUSTER, "get", "assets", "-o", "yaml"])
        .expect(0);
    assert_eq!(kops_api::yaml::from_str(&yaml.stdout).unwrap(), assets);
    let table = env.kops(&["--name", CLUSTER, "get", "assets"]).expect(0);
    let headers: Vec<&str> = table
        .stdout
        .lines()
        .filter(|l| l.starts_with("CANONICAL"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|h| {
            if h.ends_with("SHA") {
                "files"
            } else {
                "images"
            }
        })
        .collect();
    assert_eq!(headers, ["images", "files"], "{}", table.stdout);
    let rows = table.stdout.lines().filter(|l| !l.is_empty()).count();
    assert_eq!(rows, 2 + images.len() + files.len(), "{}", table.stdout);
}

/// `create cluster`'s kOps flags land in the spec (`--dry-run`), bad ones are named, and
/// `--yes` creates the cloud resources right away.
#[test]
fn create_cluster_flags_shape_the_spec_and_yes_applies_it() {
    let env = Env::new();
    let r = env
        .kops(&[
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--topology",
            "private",
            "--dns",
            "public",
            "--bastion",
            "--api-loadbalancer-type",
            "internal",
            "--admin-access",
            "10.0.0.0/8,192.168.0.0/16",
            "--ssh-access",
            "10.1.0.0/16",
            "--cloud-labels",
            "team=platform,env=prod",
            "--node-volume-size",
            "64",
            "--master-volume-size",
            "32",
            "--encrypt-etcd-storage=false",
            "--dry-run",
            "-o",
            "json",
        ])
        .expect(0);
    let docs: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    let spec = &docs[0]["spec"];
    assert_eq!(
        spec["kubernetesApiAccess"],
        serde_json::json!(["10.0.0.0/8", "192.168.0.0/16"])
    );
    assert_eq!(spec["sshAccess"], serde_json::json!(["10.1.0.0/16"]));
    assert_eq!(
        spec["cloudLabels"],
        serde_json::json!({"env": "prod", "team": "platform"})
    );
    assert_eq!(spec["api"]["loadBalancer"]["type"], "Internal");
    assert_eq!(
        spec["topology"]["bastion"]["bastionPublicName"],
        format!("bastion.{CLUSTER}")
    );
    assert!(
        spec["etcdClusters"][0]["etcdMembers"]
            .as_array()
            .unwrap()
            .iter()
            // Not encrypted: kOps leaves the field out.
            .all(|m| m.get("encryptedVolume").is_none()),
        "{spec:#}"
    );
    let group = |name: &str| {
        docs.iter()
            .find(|d| d["kind"] == "InstanceGroup" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {docs:#?}"))
    };
    assert_eq!(group("bastions")["spec"]["role"], "Bastion");
    assert_eq!(group("nodes-us-test-1a")["spec"]["rootVolumeSize"], 64);
    assert_eq!(
        group("control-plane-us-test-1a")["spec"]["rootVolumeSize"],
        32
    );

    // Refused, naming what is wrong.
    for (flags, says) in [
        (&["--bastion"][..], "private topology"),
        (&["--cloud-labels", "team"][..], "--cloud-labels"),
        (&["--api-loadbalancer-type", "sideways"][..], "sideways"),
    ] {
        let mut args = vec!["create", "cluster", CLUSTER, "--zones", "us-test-1a"];
        args.extend_from_slice(flags);
        let r = env.kops(&args);
        assert_ne!(r.code, 0, "{flags:?}");
        assert!(r.stderr.contains(says), "{flags:?}: {}", r.stderr);
    }
    assert!(env.tree().is_empty(), "nothing stored");

    // --yes: created and applied; nothing is left to do.
    env.create_demo_with(&["--yes"]);
    let r = env
        .kops(&["--name", CLUSTER, "update", "cluster"])
        .expect(0);
    assert!(!r.stdout.contains("Will create"), "{}", r.stdout);
}

/// `get clusters --full`: the completed spec, with what populate fills in (the API
/// server's image, the kubelet's settings), where the stored spec has none of it.
#[test]
fn get_clusters_full_shows_the_completed_spec() {
    let env = Env::new();
    env.create_demo();
    let stored = env
        .kops(&["get", "clusters", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;
    let full = env
        .kops(&["get", "clusters", CLUSTER, "--full", "-o", "yaml"])
        .expect(0)
        .stdout;
    for completed in [
        "kubeAPIServer:",
        "image: registry.k8s.io/kube-apiserver:v",
        "cgroupDriver: systemd",
    ] {
        assert!(full.contains(completed), "{completed}: {full}");
        assert!(!stored.contains(completed), "{completed}: {stored}");
    }
    let doc = kops_api::yaml::from_str(&full).unwrap();
    assert_eq!(doc["metadata"]["name"], CLUSTER, "{full}");
}

/// `update cluster --phase`: only that part of the model is planned; bad phases and
/// Terraform of one phase are refused.
#[test]
fn update_phase_plans_that_part_only() {
    let env = Env::new();
    env.create_demo();
    let named = |args: &[&str]| {
        let mut all = vec!["--name", CLUSTER];
        all.extend_from_slice(args);
        env.kops(&all)
    };
    named(&["update", "cluster", "--yes"]).expect(0);
    named(&[
        "edit",
        "ig",
        "nodes-us-test-1a",
        "--set",
        "spec.machineType=m5.large",
    ])
    .expect(0);
    let r = named(&["update", "cluster", "--phase", "network"]).expect(0);
    assert!(!r.stdout.contains("LaunchTemplate/"), "{}", r.stdout);
    let r = named(&["update", "cluster", "--phase", "cluster"]).expect(2);
    assert!(
        r.stdout.contains("LaunchTemplate/nodes-us-test-1a"),
        "{}",
        r.stdout
    );
    named(&["update", "cluster", "--phase", "everything"])
        .expect_error("network, security, cluster");
    named(&[
        "update",
        "cluster",
        "--phase",
        "network",
        "--target",
        "terraform",
    ])
    .expect_error("--phase cannot be used with --target terraform");
}

/// `get assets --copy`: every image goes to `containerRegistry` (a registry asking for
/// the login a Docker credential helper holds), each file to `fileRepository` only when
/// its download has the SHA-256 the cluster expects; a second copy writes nothing.
#[test]
fn get_assets_copy_mirrors_images_and_refuses_files_that_do_not_match() {
    use kops_mock::registry::FakeRegistry;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (source, target) = rt.block_on(async {
        (
            FakeRegistry::start().await.unwrap(),
            FakeRegistry::start().await.unwrap(),
        )
    });
    target.require_login("mirror", "pa55word");
    let env = Env::new();
    let files = env.path("files");
    env.create_demo_with(&[
        "--set",
        &format!("spec.assets.containerRegistry={}/mirror", target.host()),
        "--set",
        &format!("spec.assets.fileRepository=file://{}", files.display()),
    ]);
    let listed = env
        .kops(&["--name", CLUSTER, "get", "assets", "-o", "json"])
        .expect(0);
    let assets: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let mut registries = std::collections::BTreeSet::new();
    for image in assets["images"].as_array().unwrap() {
        let canonical = image["canonical"].as_str().unwrap();
        let (registry, rest) = canonical.split_once('/').unwrap();
        let (repo, tag) = rest.rsplit_once(':').unwrap();
        source.push_image(repo, tag, &[canonical.as_bytes(), b"shared base layer"]);
        registries.insert(registry.to_owned());
    }
    for file in assets["files"].as_array().unwrap() {
        let canonical = file["canonical"].as_str().unwrap();
        let path = canonical.strip_prefix("https:/").unwrap();
        source.serve_file(path, b"not the real binary");
    }
    // The target's login comes from a Docker credential helper, as ECR's does.
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-fake");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nread server\nif [ \"$server\" = \"{}\" ]; then\n  echo '{{\"Username\":\"mirror\",\"Secret\":\"pa55word\"}}'\nelse\n  echo 'credentials not found in native keychain'\n  exit 1\nfi\n",
            target.host()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let config = env.path("docker.json");
    std::fs::write(
        &config,
        format!(r#"{{"credHelpers":{{"{}":"fake"}}}}"#, target.host()),
    )
    .unwrap();
    let mut args: Vec<String> = [
        "--name",
        CLUSTER,
        "get",
        "assets",
        "--copy",
        "-o",
        "json",
        "--docker-config",
    ]
    .map(str::to_owned)
    .to_vec();
    args.push(config.display().to_string());
    args.push("--file-source".to_owned());
    args.push(format!("https://={}/", source.url()));
    for r in &registries {
        args.push("--registry-endpoint".to_owned());
        args.push(format!("{r}={}", source.url()));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.kops_env(&argv, &[("PATH", &path)]).expect(1);
    let outcomes: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let images = assets["images"].as_array().unwrap();
    let file_count = assets["files"].as_array().unwrap().len();
    assert_eq!(outcomes.len(), images.len() + file_count, "{}", run.stdout);
    for o in &outcomes {
        let result = o["result"].as_str().unwrap();
        if o["kind"] == "image" {
            assert!(result.starts_with("copied ("), "{o}");
        } else {
            assert!(result.contains("not the expected"), "{o}");
        }
    }
    for image in images {
        let canonical = image["canonical"].as_str().unwrap();
        let (_, rest) = canonical.split_once('/').unwrap();
        let (repo, tag) = rest.rsplit_once(':').unwrap();
        assert_eq!(
            target.manifest_digest(&format!("mirror/{repo}"), tag),
            source.manifest_digest(repo, tag),
            "{canonical}"
        );
    }
    assert!(
        run.stderr
            .contains(&format!("{file_count} asset(s) not copied")),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("pa55word") && !run.stdout.contains("pa55word"));
    assert!(!files.exists() || std::fs::read_dir(&files).unwrap().next().is_none());

    // Again: every image is in place, nothing is written to the registry.
    let writes = |r: &FakeRegistry| {
        r.requests()
            .iter()
            .filter(|q| q.starts_with("PUT") || q.starts_with("POST"))
            .count()
    };
    let before = writes(&target);
    let again = env.kops_env(&argv, &[("PATH", &path)]).expect(1);
    assert!(
        again.stderr.contains(&format!(
            "Copied 0 asset(s) (0 B), {} already in place, {file_count} failed",
            images.len()
        )),
        "{}",
        again.stderr
    );
    assert_eq!(writes(&target), before);
    drop(rt);
}

/// `create cluster` in an existing network, as kOps resolves it on AWS: `--subnets` alone
/// names the VPC (its first subnet's), each subnet lands in its own zone with the CIDR the
/// cloud reports, `--network-id` alone takes the VPC's CIDR, and bad subnets are named.
#[test]
fn create_cluster_in_a_shared_vpc_finds_it_in_the_cloud() {
    let env = Env::new();
    // A first cluster makes the VPC and subnets the second one shares (on the mock).
    env.kops(&[
        "create",
        "cluster",
        "owner.example.com",
        "--zones",
        "us-test-1a,us-test-1b",
        "--network-cidr",
        "10.20.0.0/16",
        "--yes",
    ])
    .expect(0);
    let dump = env
        .kops(&["toolbox", "dump", "owner.example.com", "-o", "json"])
        .expect(0);
    let dump: serde_json::Value = serde_json::from_str(&dump.stdout).unwrap();
    let resources = dump["resources"].as_array().unwrap();
    let vpc = resources
        .iter()
        .find(|r| r["resource_type"] == "Vpc")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let subnet = |zone: &str| {
        let s = resources
            .iter()
            .find(|r| r["resource_type"] == "Subnet" && r["attrs"]["availability_zone"] == zone)
            .unwrap_or_else(|| panic!("no subnet in {zone}"));
        (
            s["id"].as_str().unwrap().to_owned(),
            s["attrs"]["cidr_block"].as_str().unwrap().to_owned(),
        )
    };
    let ((a, a_cidr), (b, b_cidr)) = (subnet("us-test-1a"), subnet("us-test-1b"));

    // The subnets given in any order: each goes to its zone.
    let subnets = format!("{b},{a}");
    let r = env
        .kops(&[
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a,us-test-1b",
            "--subnets",
            &subnets,
            "--dry-run",
            "-o",
            "json",
        ])
        .expect(0);
    let docs: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    let spec = &docs[0]["spec"];
    assert_eq!(spec["networkID"], vpc.as_str());
    assert_eq!(spec["networkCIDR"], "10.20.0.0/16");
    let shared: Vec<(&str, &str, &str)> = spec["subnets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["zone"].as_str().unwrap(),
                s["id"].as_str().unwrap(),
                s["cidr"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shared,
        [
            ("us-test-1a", a.as_str(), a_cidr.as_str()),
            ("us-test-1b", b.as_str(), b_cidr.as_str())
        ]
    );

    // The VPC alone: its CIDR, and new subnets carved from it.
    let r = env
        .kops(&[
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--network-id",
            &vpc,
            "--dry-run",
            "-o",
            "json",
        ])
        .expect(0);
    let docs: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(docs[0]["spec"]["networkCIDR"], "10.20.0.0/16");
    assert_eq!(docs[0]["spec"]["subnets"][0]["cidr"], "10.20.0.0/16");

    for (flags, says) in [
        (
            vec!["--subnets", "subnet-404"],
            "subnet subnet-404 not found",
        ),
        (
            vec!["--subnets", &subnets, "--network-id", "vpc-other"],
            "not found in VPC vpc-other",
        ),
        (vec!["--network-id", "vpc-404"], "VPC vpc-404 not found"),
    ] {
        let mut args = vec![
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--dry-run",
        ];
        args.extend(flags.iter().copied());
        env.kops(&args).expect_error(says);
    }
    let twice = format!("{a},{a}");
    env.kops(&[
        "create",
        "cluster",
        CLUSTER,
        "--zones",
        "us-test-1a",
        "--subnets",
        &twice,
        "--dry-run",
    ])
    .expect_error("both in zone us-test-1a");
}

/// `spec.target.terraform`, set with `edit cluster --set`, reaches the Terraform `update
/// --target terraform` writes: `providerExtraConfig` in the main `provider "aws"` block,
/// `filesProviderExtraConfig` in the managed files' (`alias = "files"`) one, each sorted
/// and aligned as kOps renders them (kOps' `complex` case). A key that is no Terraform
/// argument name, or `alias`, is refused naming the field, and nothing is stored.
#[test]
fn terraform_extra_provider_config_is_set_rendered_and_bad_keys_refused() {
    let env = Env::new();
    env.create_demo();
    let named = |args: &[&str]| {
        let mut all = vec!["--name", CLUSTER];
        all.extend_from_slice(args);
        env.kops_env(&all, &[("EDITOR", "false")])
    };

    // Refused at set time: the field named, the store unchanged.
    let before = env.tree();
    for (set, field) in [
        (
            "spec.target.terraform.providerExtraConfig=max retries=10",
            "spec.target.terraform.providerExtraConfig.max retries",
        ),
        (
            "spec.target.terraform.filesProviderExtraConfig=alias=mine",
            "spec.target.terraform.filesProviderExtraConfig.alias",
        ),
        (
            "spec.target.terraform.providerExtraConfig=alias=mine",
            "spec.target.terraform.providerExtraConfig.alias",
        ),
    ] {
        let r = named(&["edit", "cluster", "--set", set]).expect_error(field);
        assert!(r.stderr.contains("nothing saved"), "{}", r.stderr);
        assert_eq!(
            env.tree(),
            before,
            "a refused --set {set:?} changed the store"
        );
    }

    // Accepted and stored as given.
    let r = named(&[
        "edit",
        "cluster",
        "--set",
        "spec.target.terraform.providerExtraConfig=max_retries=10",
        "--set",
        "spec.target.terraform.providerExtraConfig=profile=foo",
        "--set",
        "spec.target.terraform.filesProviderExtraConfig=profile=bar",
    ])
    .expect(0);
    assert!(r.stdout.contains("Saved cluster"), "{}", r.stdout);
    let c: serde_json::Value = serde_json::from_str(
        &named(&["get", "cluster", CLUSTER, "-o", "json"])
            .expect(0)
            .stdout,
    )
    .unwrap();
    assert_eq!(
        c["spec"]["target"]["terraform"],
        serde_json::json!({
            "providerExtraConfig": {"max_retries": "10", "profile": "foo"},
            "filesProviderExtraConfig": {"profile": "bar"},
        })
    );

    // A bad key in a replaced manifest is refused the same way.
    let manifest = named(&["get", "cluster", CLUSTER, "-o", "yaml"])
        .expect(0)
        .stdout;
    let bad = manifest.replace("profile: bar", "\"files provider\": bar");
    assert_ne!(bad, manifest);
    std::fs::write(env.path("bad-tf.yaml"), bad).unwrap();
    let stored = env.tree();
    env.kops(&["replace", "-f", "bad-tf.yaml"])
        .expect_error("spec.target.terraform.filesProviderExtraConfig.files provider");
    assert_eq!(env.tree(), stored, "a refused replace changed the store");

    // update --target terraform: the provider blocks, exactly.
    let out = env.path("tf");
    env.kops(&[
        "update",
        "cluster",
        CLUSTER,
        "--target",
        "terraform",
        "--out",
        out.to_str().unwrap(),
    ])
    .expect(0);
    let tf = std::fs::read_to_string(out.join("kubernetes.tf")).unwrap();
    let mut providers = Vec::new();
    let mut lines = tf.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("provider ") {
            let mut block = vec![line];
            for l in lines.by_ref() {
                block.push(l);
                if l == "}" {
                    break;
                }
            }
            providers.push(block.join("\n"));
        }
    }
    assert_eq!(
        providers,
        [
            "provider \"aws\" {\n  max_retries = \"10\"\n  profile     = \"foo\"\n  region      = \"us-test-1\"\n}",
            "provider \"aws\" {\n  alias   = \"files\"\n  profile = \"bar\"\n  region  = \"us-test-1\"\n}",
        ],
        "{tf}"
    );
    check_terraform(&out);
}

/// The embedded channel's default images are kOps' stable channel's for Kubernetes 1.32
/// and later as of kOps 1.35 (kubernetes/kops@268927e2, `channels/stable`), written as
/// kOps writes them: owner-qualified on AWS.
#[test]
fn embedded_channel_images_match_kops_1_35_stable() {
    let env = Env::new();
    for (cloud, zone, extra, image) in [
        (
            "aws",
            "us-test-1a",
            &[][..],
            "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20260714",
        ),
        (
            "aws",
            "us-test-1a",
            &[
                "--node-size",
                "m6g.xlarge",
                "--control-plane-size",
                "m6g.xlarge",
            ][..],
            "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-20260714",
        ),
        (
            "gce",
            "us-test1-a",
            &["--project", "testproject"][..],
            "ubuntu-os-cloud/ubuntu-2404-noble-amd64-v20260615",
        ),
    ] {
        let mut args = vec![
            "create",
            "cluster",
            "c.example.com",
            "--cloud",
            cloud,
            "--zones",
            zone,
            "--kubernetes-version",
            "1.34.1",
            "--dry-run",
            "-o",
            "yaml",
        ];
        args.extend_from_slice(extra);
        let r = env.kops(&args).expect(0);
        let images: Vec<&str> = r
            .stdout
            .lines()
            .filter_map(|l| l.trim().strip_prefix("image: "))
            .collect();
        assert_eq!(images.len(), 2, "{}", r.stdout);
        assert!(images.iter().all(|i| *i == image), "{cloud}: {images:?}");
    }
}

/// `KOPS_CHANNEL_FILE` replaces the embedded channel: its image is the default one; a
/// file that cannot be read is an error naming it.
#[test]
fn create_cluster_takes_images_from_the_channel_file() {
    let env = Env::new();
    let channel = env.path("stable");
    std::fs::write(
        &channel,
        "spec:\n  images:\n  - name: 111122223333/my-image-2030\n    providerID: aws\n    architectureID: amd64\n    kubernetesVersion: \">=1.30.0\"\n  kubernetesVersions:\n  - range: \">=1.30.0\"\n    recommendedVersion: 1.34.1\n    requiredVersion: 1.30.0\n",
    )
    .unwrap();
    let channel = channel.display().to_string();
    let args = [
        "create",
        "cluster",
        "c.example.com",
        "--zones",
        "us-test-1a",
        "--kubernetes-version",
        "1.34.1",
        "--dry-run",
        "-o",
        "yaml",
    ];
    let r = env
        .kops_env(&args, &[("KOPS_CHANNEL_FILE", &channel)])
        .expect(0);
    assert_eq!(
        r.stdout
            .matches("image: 111122223333/my-image-2030")
            .count(),
        2,
        "{}",
        r.stdout
    );
    env.kops_env(&args, &[("KOPS_CHANNEL_FILE", "/nonexistent/stable")])
        .expect_error("/nonexistent/stable");
}

/// API-server groups (kOps' APIServerNodes: `--api-server-count`, `--api-server-size`)
/// on the mock cloud: split between the zones, one `apiserver-<zone>` group each.
#[test]
fn create_cluster_makes_api_server_groups() {
    let env = Env::new();
    let r = env
        .kops(&[
            "create",
            "cluster",
            "a.example.com",
            "--zones",
            "us-test-1a,us-test-1b",
            "--dns",
            "public",
            "--api-server-count",
            "3",
            "--api-server-size",
            "m5.large",
            "--dry-run",
            "-o",
            "yaml",
        ])
        .expect(0);
    let groups = support::groups_of_role(&r.stdout, "APIServer");
    let names: Vec<&str> = groups.iter().map(|g| g.name()).collect();
    assert_eq!(
        names,
        ["apiserver-us-test-1a", "apiserver-us-test-1b"],
        "{}",
        r.stdout
    );
    let sizes: Vec<(Option<i32>, Option<&str>)> = groups
        .iter()
        .map(|g| (g.spec.min_size, g.spec.machine_type.as_deref()))
        .collect();
    assert_eq!(
        sizes,
        [(Some(2), Some("m5.large")), (Some(1), Some("m5.large"))],
        "{}",
        r.stdout
    );
}

/// The default machine types are the cloud's answer: the mock chooses as kOps' AWS cloud
/// does (t3.medium, bastions t3.micro; arm64 images get t4g), and a fixture
/// (`KOPS_MOCK_CLOUD_FIXTURE`) can fix the answers as kOps' test mock does. The fixture's
/// VPC and subnets serve `--network-id` and `--subnets`; `--set cluster.spec...` takes
/// kOps' optional `cluster.` prefix.
#[test]
fn create_cluster_asks_the_cloud_and_reads_the_fixture() {
    let env = Env::new();
    let base = [
        "create",
        "cluster",
        "p.example.com",
        "--zones",
        "us-test-1a",
        "--topology",
        "private",
        "--bastion",
        "--networking",
        "calico",
        "--kubernetes-version",
        "1.34.1",
        "--dry-run",
        "-o",
        "yaml",
    ];
    let types = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.trim().strip_prefix("machineType: "))
            .map(str::to_owned)
            .collect()
    };
    let r = env.kops(&base).expect(0);
    assert_eq!(types(&r.stdout), ["t3.medium", "t3.medium", "t3.micro"]);
    let mut arm = base.to_vec();
    arm.extend(["--image", "099720109477/ubuntu/images/x-arm64-server"]);
    let r = env.kops(&arm).expect(0);
    assert_eq!(types(&r.stdout), ["t4g.medium", "t4g.medium", "t4g.micro"]);

    let fixture = env.path("mock-cloud.yaml");
    std::fs::write(
        &fixture,
        "aws:\n  region: us-test-1\n  defaultInstanceTypes: {ControlPlane: m3.medium, Node: t2.medium, Bastion: t2.micro}\n  ec2:\n    vpcs:\n      - {id: vpc-12345678, cidrBlock: 10.0.0.0/12}\n    subnets:\n      - {id: subnet-1, vpcId: vpc-12345678, availabilityZone: us-test-1a, cidrBlock: 10.10.0.0/24}\n      - {id: subnet-2, vpcId: vpc-12345678, availabilityZone: us-test-1a, cidrBlock: 10.10.1.0/24}\n",
    )
    .unwrap();
    let fixture = fixture.display().to_string();
    let mut shared = base.to_vec();
    shared.extend([
        "--network-id",
        "vpc-12345678",
        "--subnets",
        "subnet-1",
        "--utility-subnets",
        "subnet-2",
        "--set",
        "cluster.spec.networking.calico.bpfEnabled=true",
    ]);
    let r = env
        .kops_env(&shared, &[("KOPS_MOCK_CLOUD_FIXTURE", &fixture)])
        .expect(0);
    assert_eq!(types(&r.stdout), ["m3.medium", "t2.medium", "t2.micro"]);
    for needle in [
        "networkID: vpc-12345678",
        "networkCIDR: 10.0.0.0/12",
        "id: subnet-1",
        "cidr: 10.10.0.0/24",
        "bpfEnabled: true",
    ] {
        assert!(r.stdout.contains(needle), "{needle}:\n{}", r.stdout);
    }
    // Without the fixture the mock has no such VPC.
    env.kops(&shared).expect_error("subnet-1");
    env.kops_env(&base, &[("KOPS_MOCK_CLOUD_FIXTURE", "/nonexistent/f.yaml")])
        .expect_error("/nonexistent/f.yaml");
}

/// `toolbox etcd`: the backups etcd-manager laid out in the config base are listed; a
/// restore request is shown (exit 2), then written with `--yes` as etcd-manager-ctl
/// writes it (the cluster spec kOps wrote, the backup named); an unknown backup or etcd
/// cluster is one line, exit 1, nothing written.
#[test]
fn toolbox_etcd_lists_backups_and_requests_a_restore() {
    let env = Env::new();
    env.kops(&["create", "cluster", CLUSTER, "--zones", "us-test-1a"])
        .expect(0);
    let r = env
        .kops(&["--name", CLUSTER, "toolbox", "etcd", "list-backups"])
        .expect(0);
    assert!(r.stdout.contains("No etcd backups"), "{}", r.stdout);
    env.kops(&["--name", CLUSTER, "update", "cluster", "--yes"])
        .expect(0);
    // Two backups of main, as etcd-manager writes them.
    let base = env.state_dir().join(CLUSTER).join("backups/etcd/main");
    for (name, bytes) in [
        ("2026-12-07T09:30:00Z-000011", 7),
        ("2026-12-07T09:45:01Z-000012", 9),
    ] {
        let dir = base.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("_etcd_backup.meta"),
            r#"{"etcdVersion": "3.6.6", "timestamp": "1"}"#,
        )
        .unwrap();
        std::fs::write(dir.join("etcd.backup.gz"), "x".repeat(bytes)).unwrap();
    }
    let r = env
        .kops(&["--name", CLUSTER, "toolbox", "etcd", "list-backups"])
        .expect(0);
    assert!(
        r.stdout.contains("2026-12-07T09:30:00Z-000011"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("2026-12-07T09:45:01Z-000012"),
        "{}",
        r.stdout
    );

    let restore = |extra: &[&str]| {
        let mut a = vec![
            "--name",
            CLUSTER,
            "toolbox",
            "etcd",
            "restore-backup",
            "--etcd",
            "main",
            "--backup",
        ];
        a.extend_from_slice(extra);
        env.kops(&a)
    };
    let before = env.tree();
    let r = restore(&["2026-12-07T09:45:01Z-000012"]).expect(2);
    assert!(
        r.stdout
            .contains("\"backup\": \"2026-12-07T09:45:01Z-000012\""),
        "{}",
        r.stdout
    );
    assert_eq!(env.tree(), before, "a dry run writes nothing");
    let r = restore(&["nope"]).expect(1);
    assert!(
        r.stderr.contains("no such backup") && r.stderr.lines().count() == 1,
        "{}",
        r.stderr
    );
    let r = env
        .kops(&[
            "--name",
            CLUSTER,
            "toolbox",
            "etcd",
            "restore-backup",
            "--etcd",
            "nope",
            "--backup",
            "x",
        ])
        .expect(1);
    assert!(
        r.stderr.contains("no etcd cluster \"nope\""),
        "{}",
        r.stderr
    );
    assert_eq!(env.tree(), before);

    restore(&["2026-12-07T09:45:01Z-000012", "--yes"]).expect(0);
    let commands: Vec<_> = std::fs::read_dir(base.join("control"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(commands.len(), 1, "{commands:?}");
    let text = std::fs::read_to_string(commands[0].join("_command.json")).unwrap();
    let cmd: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        cmd["restoreBackup"]["backup"],
        "2026-12-07T09:45:01Z-000012"
    );
    let spec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(base.join("control/etcd-cluster-spec")).unwrap(),
    )
    .unwrap();
    assert_eq!(cmd["restoreBackup"]["clusterSpec"], spec);
    assert!(
        cmd["timestamp"].as_str().unwrap().parse::<u128>().is_ok(),
        "{text}"
    );
}

/// `toolbox iam-policy`: the JSON names every action the table lists; scoped to a cluster
/// and an `s3://` state store it names them; `-o terraform` is HCL as `terraform fmt`
/// writes it; an unknown command is named.
#[test]
fn iam_policy_prints_json_a_table_and_terraform() {
    let env = Env::new();
    let policy = |args: &[&str]| {
        let mut c = env.command();
        c.args(["toolbox", "iam-policy"]).args(args);
        Run::from(c.output().unwrap())
    };
    let json: serde_json::Value =
        serde_json::from_str(&policy(&["--for", "validate"]).expect(0).stdout).unwrap();
    let actions: Vec<&str> = json["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["Action"].as_array().unwrap())
        .filter_map(|a| a.as_str())
        .collect();
    let table = policy(&["--for", "validate", "-o", "table"])
        .expect(0)
        .stdout;
    for line in table.lines() {
        for action in line.split_whitespace().skip(1) {
            let granted = actions.iter().any(|a| match a.strip_suffix('*') {
                Some(prefix) => action.starts_with(prefix),
                None => *a == action,
            });
            assert!(granted, "{action} (in the table) is not in the policy");
        }
    }
    assert!(
        actions
            .iter()
            .all(|a| !a.contains(":Delete") && !a.contains(":Create")),
        "validate may change nothing: {actions:?}"
    );

    let scoped = policy(&[
        "--state",
        "s3://kops-state/clusters",
        "--name",
        "a.example.com",
        "-o",
        "terraform",
    ])
    .expect(0)
    .stdout;
    for want in [
        "resource \"aws_iam_policy\" \"kops-operator-a-example-com\"",
        "arn:aws:s3:::kops-state/clusters/a.example.com/*",
        "arn:aws:iam::*:role/*.a.example.com",
        "\"aws:ResourceTag/KubernetesCluster\" : \"a.example.com\"",
    ] {
        assert!(scoped.contains(want), "{want}:\n{scoped}");
    }
    let dir = env.path("policy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("policy.tf"), &scoped).unwrap();
    check_terraform(&dir);

    let bad = policy(&["--for", "upgrade"]).expect(1);
    assert!(
        bad.stderr.contains("--for") && bad.stderr.contains("upgrade"),
        "{}",
        bad.stderr
    );
}

/// The command reference under docs/ is what `kops gen-cli-docs` writes from the clap
/// definitions today: a changed flag or help text without regenerated docs fails here.
#[test]
fn the_command_reference_in_docs_is_current() {
    let out = tempfile::tempdir().unwrap();
    let (md, man) = (out.path().join("cli"), out.path().join("man"));
    let run = Run::from(
        Command::new(env!("CARGO_BIN_EXE_kops"))
            .args(["gen-cli-docs", "--out"])
            .arg(&md)
            .arg("--man")
            .arg(&man)
            .output()
            .unwrap(),
    )
    .expect(0);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut stale = Vec::new();
    for (fresh, checked_in) in [(&md, docs.join("cli")), (&man, docs.join("man"))] {
        let names = |dir: &Path| -> std::collections::BTreeSet<String> {
            std::fs::read_dir(dir)
                .map(|d| {
                    d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let (want, have) = (names(fresh), names(&checked_in));
        for name in want.union(&have) {
            let a = std::fs::read(fresh.join(name)).ok();
            let b = std::fs::read(checked_in.join(name)).ok();
            if a != b {
                stale.push(format!(
                    "docs/{}/{name}",
                    checked_in.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        page_count(&md) > 40,
        "too few pages written: {}",
        run.stdout
    );
    assert!(
        stale.is_empty(),
        "the command reference is stale; regenerate it with \
         `cargo run -p kops-examples --bin kops -- gen-cli-docs` (from the repository root):\n{}",
        stale.join("\n")
    );
}

fn page_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}
