//! End-to-end tests of the `kops` binary on Hetzner, on the Hetzner mock cloud
//! (`--mock-cloud`, a local state store): `create cluster --cloud hetzner`, `update
//! cluster` (dry run, `--yes`, again with nothing to do, `--target terraform`), a new
//! server type rolled out by a cloud-only `rolling-update cluster`, and `delete cluster`;
//! the API token from `HCLOUD_TOKEN`, required, and never printed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const CLUSTER: &str = "hz.example.com";
const TOKEN: &str = "hcloudtokenK3dP8sQw2Lx7Vn4Zr9Tb1Mf6Hj5Gc0Ya";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code {} (wanted {code})\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn kops(&self, args: &[&str], token: Option<&str>) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "HCLOUD_TOKEN",
        ] {
            c.env_remove(v);
        }
        if let Some(t) = token {
            c.env("HCLOUD_TOKEN", t);
        }
        c.env("NO_COLOR", "1")
            .env("HOME", self.dir.path().join("home"))
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .current_dir(self.dir.path())
            .arg("--state")
            .arg(format!(
                "file://{}",
                self.dir.path().join("state").display()
            ))
            .arg("--mock-cloud");
        let o = c.args(args).output().unwrap();
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

#[test]
fn a_hetzner_cluster_lifecycle_on_the_mock_cloud() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let create = ["create", "cluster", CLUSTER, "--cloud", "hetzner"];
    // Two locations are refused: a Hetzner cluster lives in one.
    let two = env.kops(
        &[&create[..], &["--zones", "fsn1,nbg1"]].concat(),
        Some(TOKEN),
    );
    assert!(two.expect(1).all().contains("one location"));
    let bad = env.kops(&[&create[..], &["--zones", "sin1"]].concat(), Some(TOKEN));
    assert!(bad.expect(1).all().contains("not a Hetzner location"));
    env.kops(&[&create[..], &["--zones", "fsn1"]].concat(), None)
        .expect(0);
    let spec = env
        .kops(&["get", "cluster", CLUSTER, "-o", "yaml"], None)
        .expect(0)
        .stdout;
    assert!(spec.contains("cloudProvider: hetzner"), "{spec}");
    assert!(spec.contains("networkCIDR: 10.0.0.0/16"), "{spec}");
    let groups = env
        .kops(&["get", "ig", "--name", CLUSTER, "-o", "yaml"], None)
        .expect(0)
        .stdout;
    assert!(
        groups.contains("machineType: cx23") && groups.contains("image: ubuntu-24.04"),
        "{groups}"
    );

    // No token: one line naming the variable, nothing planned.
    let update = ["update", "cluster", CLUSTER];
    let missing = env.kops(&update, None).expect(1);
    assert!(
        missing.stderr.contains("HCLOUD_TOKEN"),
        "{}",
        missing.stderr
    );

    let plan = env.kops(&update, Some(TOKEN)).expect(2);
    assert!(
        plan.stdout.contains("ServerGroup/nodes-fsn1"),
        "{}",
        plan.stdout
    );
    assert!(!plan.all().contains(TOKEN), "the plan shows the token");
    let json = env
        .kops(&[&update[..], &["-o", "json"]].concat(), Some(TOKEN))
        .expect(2);
    assert!(!json.all().contains(TOKEN), "the JSON plan shows the token");
    env.kops(&[&update[..], &["--yes"]].concat(), Some(TOKEN))
        .expect(0);
    let again = env.kops(&update, Some(TOKEN)).expect(0);
    assert!(
        again.stdout.contains("0 to create, 0 to modify"),
        "{}",
        again.stdout
    );

    let tf = env
        .kops(
            &[&update[..], &["--target", "terraform", "--out", "tf"]].concat(),
            Some(TOKEN),
        )
        .expect(0);
    assert!(tf.stderr.contains("TF_VAR_hcloud_token"), "{}", tf.stderr);
    let main = std::fs::read_to_string(env.dir.path().join("tf/kubernetes.tf")).unwrap();
    assert!(
        main.contains("resource \"hcloud_server\" \"nodes-fsn1\""),
        "{main}"
    );
    assert!(
        main.contains("resource \"hcloud_load_balancer\" \"api-hz-example-com\""),
        "{main}"
    );

    // A new server type: update marks the group's server, a cloud-only rolling update
    // replaces it, and the plan is empty again.
    let ig = env
        .kops(
            &["get", "ig", "--name", CLUSTER, "nodes-fsn1", "-o", "yaml"],
            None,
        )
        .expect(0)
        .stdout
        .replace("machineType: cx23", "machineType: cx33");
    std::fs::write(env.dir.path().join("ig.yaml"), ig).unwrap();
    env.kops(&["replace", "-f", "ig.yaml"], None).expect(0);
    let marked = env.kops(&update, Some(TOKEN)).expect(2);
    assert!(
        marked.stdout.contains("server type changed"),
        "{}",
        marked.stdout
    );
    env.kops(&[&update[..], &["--yes"]].concat(), Some(TOKEN))
        .expect(0);
    let rolling = [
        "rolling-update",
        "cluster",
        CLUSTER,
        "--cloudonly",
        "--node-interval",
        "0s",
    ];
    let preview = env.kops(&rolling, Some(TOKEN)).expect(2);
    assert!(preview.stdout.contains("NeedsUpdate"), "{}", preview.stdout);
    env.kops(&[&rolling[..], &["--yes"]].concat(), Some(TOKEN))
        .expect(0);
    let instances = env
        .kops(&["get", "instances", "--name", CLUSTER], None)
        .expect(0)
        .stdout;
    assert!(
        instances.contains("cx33") && !instances.contains("NeedsUpdate"),
        "{instances}"
    );
    env.kops(&update, Some(TOKEN)).expect(0);

    let dry = env.kops(&["delete", "cluster", CLUSTER], None).expect(2);
    assert!(dry.stdout.contains("hcloud_server"), "{}", dry.stdout);
    env.kops(&["delete", "cluster", CLUSTER, "--yes"], None)
        .expect(0);
    let gone = env.kops(&["delete", "cluster", CLUSTER], None);
    assert_ne!(gone.code, 0);
}
