//! End-to-end test of keypair rotation with the `kops` binary: `create
//! keypair`, `get keypairs`, `promote keypair`, `distrust keypair`, `trust keypair` on a file
//! state store, checked against the stored `keyset.yaml` (kOps' format).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const CLUSTER: &str = "demo.example.com";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn state(&self) -> String {
        format!("file://{}", self.dir.path().join("state").display())
    }

    /// Runs `kops --state <store> --mock-cloud --name demo.example.com ARGS`.
    fn kops(&self, args: &[&str]) -> (i32, String, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in ["KOPS_STATE_STORE", "KOPS_MOCK_CLOUD", "KOPS_CLUSTER_NAME"] {
            c.env_remove(v);
        }
        let o = c
            .env("NO_COLOR", "1")
            .current_dir(self.dir.path())
            .args(["--state", &self.state(), "--mock-cloud", "--name", CLUSTER])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.kops(args);
        assert_eq!(code, 0, "kops {args:?}\nstdout:\n{out}\nstderr:\n{err}");
        assert!(!out.contains("PRIVATE KEY") && !err.contains("PRIVATE KEY"));
        out
    }

    #[track_caller]
    fn fails(&self, args: &[&str], needle: &str) {
        let (code, out, err) = self.kops(args);
        assert_eq!(
            code, 1,
            "kops {args:?} should fail\nstdout:\n{out}\nstderr:\n{err}"
        );
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("PRIVATE KEY"),
            "{err}"
        );
    }

    fn keyset(&self, name: &str) -> kops_api::keyset::Keyset {
        let path = self
            .dir
            .path()
            .join("state")
            .join(CLUSTER)
            .join(format!("pki/private/{name}/keyset.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let ks = kops_api::keyset::Keyset::from_yaml(&text, "keyset.yaml").unwrap();
        // Stored in kOps' bytes.
        assert_eq!(ks.to_yaml().unwrap(), text);
        ks
    }
}

/// The id in a `Created NAME ID` / `Promoted NAME ID` line.
fn id_of(line: &str) -> String {
    line.split_whitespace().nth(2).unwrap().to_string()
}

#[test]
fn create_get_promote_distrust_keypairs() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    env.ok(&[
        "create",
        "cluster",
        CLUSTER,
        "--zones",
        "us-test-1a",
        "--network-cidr",
        "172.20.0.0/16",
    ]);

    // An empty keyset takes a primary only; non-rotatable keysets are refused.
    env.fails(&["create", "keypair", "kubernetes-ca"], "must be primary");
    env.fails(&["create", "keypair", "kubelet"], "not supported");
    let first = id_of(
        env.ok(&["create", "keypair", "kubernetes-ca", "--primary"])
            .trim(),
    );
    assert_eq!(
        env.keyset("kubernetes-ca").spec.primary_id.as_deref(),
        Some(first.as_str())
    );

    // A new secondary.
    let second = id_of(env.ok(&["create", "keypair", "kubernetes-ca"]).trim());
    assert_ne!(first, second);
    let ks = env.keyset("kubernetes-ca");
    assert_eq!(ks.spec.keys.len(), 2);
    assert_eq!(ks.spec.primary_id.as_deref(), Some(first.as_str()));

    let table = env.ok(&["get", "keypairs"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "ID", "ISSUED", "EXPIRES", "PRIMARY", "HASPRIVATE"]
    );
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[1].contains(&first) && lines[1].split_whitespace().filter(|c| *c == "*").count() == 2,
        "{table}"
    );
    assert!(
        lines[2].contains(&second)
            && lines[2].split_whitespace().filter(|c| *c == "*").count() == 1,
        "{table}"
    );

    // Nothing older than the primary yet.
    let (code, _, err) = env.kops(&["distrust", "keypair", "kubernetes-ca"]);
    assert_eq!(code, 0);
    assert!(
        err.contains("No kubernetes-ca keypairs older than the primary"),
        "{err}"
    );

    // Promote the newest.
    let out = env.ok(&["promote", "keypair", "kubernetes-ca"]);
    assert_eq!(out.trim(), format!("Promoted kubernetes-ca {second}"));
    assert_eq!(
        env.keyset("kubernetes-ca").spec.primary_id.as_deref(),
        Some(second.as_str())
    );
    let out = env.ok(&["promote", "keypair", "kubernetes-ca"]);
    assert!(
        out.contains("No kubernetes-ca keypair newer than current primary"),
        "{out}"
    );

    // Distrust the old one; the primary cannot be distrusted.
    env.fails(
        &["distrust", "keypair", "kubernetes-ca", &second],
        "cannot distrust the primary",
    );
    let out = env.ok(&["distrust", "keypair", "kubernetes-ca"]);
    assert_eq!(out.trim(), format!("Distrusted kubernetes-ca {first}"));
    let ks = env.keyset("kubernetes-ca");
    assert!(ks.item(&first).unwrap().distrust_timestamp.is_some());
    assert!(ks.item(&second).unwrap().distrust_timestamp.is_none());

    // Distrusted keypairs are hidden unless asked for.
    let table = env.ok(&["get", "keypairs", "kubernetes-ca"]);
    assert_eq!(table.lines().count(), 2, "{table}");
    let table = env.ok(&["get", "keypairs", "--distrusted"]);
    assert!(table.lines().next().unwrap().contains("DISTRUSTED"));
    assert_eq!(table.lines().count(), 3, "{table}");
    let yaml = env.ok(&["get", "keypairs", "-o", "yaml"]);
    assert!(
        yaml.starts_with("- hasPrivateKey: true\n  id: \""),
        "{yaml}"
    );
    assert!(
        yaml.contains("  isCA: true\n  isPrimary: true\n  issuer: SERIALNUMBER="),
        "{yaml}"
    );
    assert!(yaml.contains("  keyLength: 2048\n"), "{yaml}");

    // Trusted again: shown again, and trusting it twice changes nothing.
    let out = env.ok(&["trust", "keypair", "kubernetes-ca", &first]);
    assert_eq!(out.trim(), format!("Trusted kubernetes-ca {first}"));
    assert!(
        env.keyset("kubernetes-ca")
            .item(&first)
            .unwrap()
            .distrust_timestamp
            .is_none()
    );
    let table = env.ok(&["get", "keypairs", "kubernetes-ca"]);
    assert_eq!(table.lines().count(), 3, "{table}");
    let out = env.ok(&["trust", "keypair", "kubernetes-ca", &first]);
    assert!(out.trim().is_empty(), "{out}");
    env.fails(
        &["trust", "keypair", "kubernetes-ca", "123"],
        "keypair 123 not found",
    );

    // `all` covers every rotatable keyset.
    env.ok(&["create", "keypair", "service-account", "--primary"]);
    let out = env.ok(&["create", "keypair", "all"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert_eq!(env.keyset("service-account").spec.keys.len(), 2);
    env.fails(
        &["promote", "keypair", "nope-ca"],
        "keyset nope-ca not found",
    );
}
