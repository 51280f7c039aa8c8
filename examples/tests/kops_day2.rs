//! End-to-end tests of the day-two commands with the `kops` binary: `export kubeconfig
//! --admin` (the certificate verifies against the cluster CA with openssl and expires when
//! asked), `validate cluster` against an unreachable API (exit 1), `rolling-update` flags,
//! and `rolling-update --cloudonly --yes` on the mock cloud end to end (the mock's journal
//! carries the replaced instances from one command to the next).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use base64::Engine as _;

const CLUSTER: &str = "demo.example.com";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env::with(&[])
    }

    /// [`CLUSTER`] created with `extra` flags, and its CA.
    fn with(extra: &[&str]) -> Env {
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        let mut args = vec![
            "create",
            "cluster",
            CLUSTER,
            "--zones",
            "us-test-1a",
            "--network-cidr",
            "172.20.0.0/16",
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = env.kops(&args);
        assert_eq!(code, 0, "{err}");
        let (code, _, err) = env.kops(&["create", "keypair", "kubernetes-ca", "--primary"]);
        assert_eq!(code, 0, "{err}");
        env
    }

    fn kops(&self, args: &[&str]) -> (i32, String, String) {
        self.kops_env(args, &[])
    }

    fn kops_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for (k, v) in env {
            c.env(k, v);
        }
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "KUBECONFIG",
        ] {
            if !env.iter().any(|(k, _)| k == &v) {
                c.env_remove(v);
            }
        }
        let state = format!("file://{}", self.dir.path().join("state").display());
        let o = c
            .env("NO_COLOR", "1")
            .env("USER", "alice")
            .current_dir(self.dir.path())
            .args(["--state", &state, "--mock-cloud", "--name", CLUSTER])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

fn openssl(args: &[&str]) -> std::process::Output {
    Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl must be installed for this test")
}

/// The first value of `key` anywhere in the kubeconfig, base64-decoded (the writer may
/// fold long values into block scalars, so the YAML is parsed).
fn field(text: &str, key: &str) -> String {
    fn find<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
        match v {
            serde_json::Value::Object(m) => m
                .get(key)
                .and_then(|x| x.as_str())
                .or_else(|| m.values().find_map(|x| find(x, key))),
            serde_json::Value::Array(a) => a.iter().find_map(|x| find(x, key)),
            _ => None,
        }
    }
    let doc: serde_json::Value = serde_saphyr::from_str(text).unwrap();
    let v = find(&doc, key).unwrap_or_else(|| panic!("no {key} in\n{text}"));
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(v.trim())
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn export_kubeconfig_admin_certificate_verifies_and_expires() {
    let env = Env::new();
    let kc = env.dir.path().join("kubeconfig");
    let (code, out, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--admin=1h",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("PRIVATE KEY") && !err.contains("PRIVATE KEY"));
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(
        text.contains("server: https://api.demo.example.com"),
        "{text}"
    );
    assert!(text.contains("current-context: demo.example.com"), "{text}");
    let ca = field(&text, "certificate-authority-data");
    let cert = field(&text, "client-certificate-data");
    let ca_path = env.dir.path().join("ca.crt");
    let cert_path = env.dir.path().join("admin.crt");
    std::fs::write(&ca_path, ca).unwrap();
    std::fs::write(&cert_path, cert).unwrap();
    let (ca_s, cert_s) = (ca_path.to_str().unwrap(), cert_path.to_str().unwrap());
    let ok = openssl(&["verify", "-CAfile", ca_s, cert_s]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let subject = String::from_utf8_lossy(
        &openssl(&[
            "x509", "-in", cert_s, "-noout", "-subject", "-nameopt", "RFC2253",
        ])
        .stdout,
    )
    .to_string();
    assert!(
        subject.contains("CN=kubecfg-alice") && subject.contains("O=system:masters"),
        "{subject}"
    );
    assert!(
        openssl(&["x509", "-in", cert_s, "-noout", "-checkend", "3500"])
            .status
            .success()
    );
    assert!(
        !openssl(&["x509", "-in", cert_s, "-noout", "-checkend", "3700"])
            .status
            .success()
    );
    // Nothing was stored in the state store.
    let stored = walk(&env.dir.path().join("state"));
    assert!(!stored.iter().any(|f| f.contains("kubecfg")), "{stored:?}");

    // --user must name an existing user; with one it points the context at it.
    let (code, _, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--user",
        "nobody",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("nobody"), "{err}");
    let (code, _, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--user",
        CLUSTER,
        "--internal",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(
        text.contains("server: https://api.internal.demo.example.com"),
        "{text}"
    );
}

#[test]
fn export_kubeconfig_of_a_cluster_without_dns_names_its_load_balancer() {
    let env = Env::with(&["--dns", "none"]);
    let kc = env.dir.path().join("kubeconfig");
    let export = || {
        let (code, _, err) = env.kops(&[
            "export",
            "kubeconfig",
            "--admin=1h",
            "--kubeconfig",
            kc.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        (err, std::fs::read_to_string(&kc).unwrap())
    };
    // No load balancer yet: the API name, and a warning saying why it may not resolve.
    let (err, text) = export();
    assert!(err.contains("found no API load balancer"), "{err}");
    assert!(
        text.contains("server: https://api.demo.example.com"),
        "{text}"
    );
    // With the cluster up, the API load balancer's DNS name: no record names the API.
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (err, text) = export();
    assert!(!err.contains("warning"), "{err}");
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap_or_default();
    assert!(
        server.starts_with("https://api-demo-example-com-") && server.contains(".elb.us-test-1."),
        "{server}"
    );
    assert!(
        text.contains("tls-server-name: api.internal.demo.example.com"),
        "{text}"
    );
    // --internal and --api-server still win.
    let (code, _, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--internal",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(
        text.contains("server: https://api.internal.demo.example.com"),
        "{text}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn validate_exits_1_when_the_api_cannot_be_reached() {
    let env = Env::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let (code, _, err) = env.kops(&["validate", "cluster", "--api-server", &url]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("could not validate"), "{err}");
}

#[test]
fn rolling_update_rejects_bad_flags_naming_them() {
    let env = Env::new();
    let (code, _, err) = env.kops(&[
        "rolling-update",
        "cluster",
        "--cloudonly",
        "--node-interval",
        "soon",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("--node-interval"), "{err}");
    let (code, _, err) = env.kops(&[
        "rolling-update",
        "cluster",
        "--cloudonly",
        "--instance-group",
        "nope",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("nope"), "{err}");
}

/// The running instances of `group` in the mock cloud, as `toolbox dump` shows them:
/// `(id, instance type)`.
fn running(env: &Env, group: &str) -> Vec<(String, String)> {
    let (code, out, err) = env.kops(&["toolbox", "dump", CLUSTER, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let dump: serde_json::Value = serde_json::from_str(&out).unwrap();
    dump["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["resource_type"] == "Instance"
                && r["tags"]["kops.k8s.io/instancegroup"] == group
                && r["attrs"]["state"] == "running"
        })
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_owned(),
                r["attrs"]["instance_type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn rolling_update_cloudonly_on_the_mock_cloud_replaces_every_node_across_commands() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let fast = [
        "--node-interval",
        "0s",
        "--control-plane-interval",
        "0s",
        "--bastion-interval",
        "0s",
    ];
    let (code, _, err) = env.kops(&["rolling-update", "cluster", "--cloudonly"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("No rolling-update required"), "{err}");
    let group = "nodes-us-test-1a";
    let before = running(&env, group);
    assert!(!before.is_empty());

    // A new instance type: `edit instancegroup`, then `update cluster --yes` (a new
    // launch template version).
    let editor = env.dir.path().join("edit-ig.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/machineType: .*/machineType: m5.large/' \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, _, err) = env.kops_env(
        &["edit", "instancegroup", group],
        &[("EDITOR", editor.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "{} instance(s) of cluster {CLUSTER} run an older configuration",
            before.len()
        )),
        "{err}"
    );

    // `get instances` shows which machines run the old template.
    let (code, out, err) = env.kops(&["get", "instances", "--cloudonly", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let stale: Vec<&str> = listed
        .iter()
        .filter(|i| i["status"] == "NeedsUpdate")
        .filter_map(|i| i["id"].as_str())
        .collect();
    let mut want: Vec<&str> = before.iter().map(|(id, _)| id.as_str()).collect();
    want.sort();
    let mut stale = stale;
    stale.sort();
    assert_eq!(stale, want, "{out}");
    // Each machine with its type and private address, as EC2 lists the instance.
    let mut addresses = std::collections::BTreeSet::new();
    for i in &listed {
        let ip: std::net::Ipv4Addr = i["internalIP"].as_str().unwrap().parse().unwrap();
        assert!(addresses.insert(ip), "{i}: address given twice");
        if let Some((_, t)) = before.iter().find(|(id, _)| i["id"] == id.as_str()) {
            assert_eq!(i["machineType"], t.as_str(), "{i}");
        }
    }
    // The same documents as YAML.
    let (code, yaml, err) = env.kops(&["get", "instances", "--cloudonly", "-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    let as_yaml = kops_api::yaml::from_str(&yaml).unwrap();
    assert_eq!(as_yaml, serde_json::Value::Array(listed.clone()), "{yaml}");
    let (code, table, err) = env.kops(&["get", "instances", "--cloudonly"]);
    assert_eq!(code, 0, "{err}");
    let header = table
        .lines()
        .find(|l| l.starts_with("ID"))
        .unwrap_or_default();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "ID",
            "NODE-NAME",
            "STATUS",
            "ROLES",
            "STATE",
            "INTERNAL-IP",
            "INSTANCE-GROUP",
            "MACHINE-TYPE"
        ],
        "{table}"
    );

    // The plan: exit 2, the group needs an update, and why.
    let (code, out, err) = env.kops(&["rolling-update", "cluster", "--cloudonly"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("NeedsUpdate"), "{out}");
    assert!(out.contains("the group wants"), "{out}");
    assert!(err.contains("Must specify --yes"), "{err}");

    // The roll, without any Kubernetes API.
    let mut args = vec!["rolling-update", "cluster", "--cloudonly", "--yes"];
    args.extend(fast);
    let (code, out, err) = env.kops(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("Rolling update completed"), "{err}");

    // A new command (a new mock replayed from the journal) sees the replacements: every
    // running node is new and of the new type, and nothing needs an update any more.
    let after = running(&env, group);
    assert_eq!(after.len(), before.len(), "{after:?}");
    for (id, instance_type) in &after {
        assert!(
            !before.iter().any(|(b, _)| b == id),
            "{id} was not replaced"
        );
        assert_eq!(instance_type, "m5.large", "{id}");
    }
    let (code, _, err) = env.kops(&["rolling-update", "cluster", "--cloudonly"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("No rolling-update required"), "{err}");

    // --force replaces them again, and the journal keeps that too.
    let mut args = vec![
        "rolling-update",
        "cluster",
        "--cloudonly",
        "--yes",
        "--force",
    ];
    args.extend(fast);
    args.extend(["--instance-group", group]);
    let (code, out, err) = env.kops(&args);
    assert_eq!(code, 0, "{out}{err}");
    let forced = running(&env, group);
    assert_eq!(forced.len(), after.len());
    for (id, _) in &forced {
        assert!(
            !after.iter().any(|(a, _)| a == id),
            "{id} was not replaced by --force"
        );
    }
}

/// A fake Kubernetes API on 127.0.0.1 (served by the returned runtime) with a node for
/// every running instance of the mock cloud (see [`register_nodes`]).
fn fake_api(
    env: &Env,
) -> (
    tokio::runtime::Runtime,
    kops_mock::kube::FakeKube,
    Vec<(String, String)>,
) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let kube = rt.block_on(kops_mock::kube::FakeKube::start()).unwrap();
    let nodes = register_nodes(env, &kube);
    (rt, kube, nodes)
}

/// Registers a node in `kube` for every running instance of the CLI's mock cloud (as
/// `toolbox dump` shows them), Ready, with the control plane's static pods, as each
/// machine's kubelet would; returns the nodes' names by instance group.
fn register_nodes(env: &Env, kube: &kops_mock::kube::FakeKube) -> Vec<(String, String)> {
    let (code, out, err) = env.kops(&["toolbox", "dump", CLUSTER, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let dump: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut nodes = Vec::new();
    for r in dump["resources"].as_array().unwrap() {
        if r["resource_type"] != "Instance" || r["attrs"]["state"] != "running" {
            continue;
        }
        let tags = &r["tags"];
        let role = if tags.get("k8s.io/role/control-plane").is_some() {
            "control-plane"
        } else if tags.get("k8s.io/role/node").is_some() {
            "node"
        } else {
            continue;
        };
        let id = r["id"].as_str().unwrap().to_owned();
        let group = tags["kops.k8s.io/instancegroup"]
            .as_str()
            .unwrap()
            .to_owned();
        let zone = r["attrs"]["availability_zone"]
            .as_str()
            .unwrap_or("us-test-1a");
        let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": id,
                "labels": {
                    "kops.k8s.io/instancegroup": group,
                    "kubernetes.io/hostname": id,
                    format!("node-role.kubernetes.io/{role}"): "",
                },
            },
            "spec": {"providerID": format!("aws:///{zone}/{id}")},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }))
        .unwrap();
        kube.put_node(node);
        if role == "control-plane" {
            for app in [
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
            ] {
                kube.put_pod(kops_mock::kube::kubelet::static_pod(app, &id));
            }
        }
        nodes.push((group, id));
    }
    nodes
}

#[test]
fn validate_exits_0_when_all_is_ready_and_2_naming_an_unready_node() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (rt, kube, nodes) = fake_api(&env);
    assert!(
        nodes.iter().any(|(g, _)| g.starts_with("control-plane")),
        "{nodes:?}"
    );
    let (_, worker) = nodes
        .iter()
        .find(|(g, _)| g.starts_with("nodes"))
        .expect("a worker node")
        .clone();
    let url = kube.url();

    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &url]);
    assert_eq!(code, 0, "every node is ready: {out}\n{err}");

    assert!(kube.set_ready(&worker, false));
    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &url]);
    assert_eq!(code, 2, "an unready node: {out}\n{err}");
    assert!(out.contains(&worker), "the unready node is named: {out}");

    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &url, "-o", "json"]);
    assert_eq!(code, 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v.to_string().contains(&worker), "{v}");
    drop(rt);
}

#[test]
fn delete_instance_dry_runs_then_replaces_one_machine_with_and_without_the_api() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let group = "nodes-us-test-1a";
    let before = running(&env, group);
    let victim = before[0].0.clone();

    // Without --yes: which instance, exit 2, nothing changed.
    let (code, out, err) = env.kops(&["delete", "instance", &victim, "--cloudonly"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains(&format!(
            "Instance {victim} of instance group {group} found for deletion"
        )),
        "{out}"
    );
    assert!(out.contains("Must specify --yes"), "{out}");
    assert_eq!(running(&env, group), before);
    let (code, _, err) = env.kops(&["delete", "instance", "i-nothere", "--cloudonly", "--yes"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"i-nothere\""), "{err}");
    assert_eq!(running(&env, group), before);

    // Surge: detached, so the group launched a replacement, then terminated. A new
    // command (the mock replayed from its journal) sees both.
    let (code, out, err) = env.kops(&["delete", "instance", &victim, "--cloudonly", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("Deleted instance {victim}")), "{out}");
    for action in ["detach", "drain", "terminate"] {
        assert!(
            err.contains(&format!("{group} {action} {victim}")),
            "{action}: {err}"
        );
    }
    let after = running(&env, group);
    assert_eq!(after.len(), before.len(), "{after:?}");
    assert!(!after.iter().any(|(id, _)| *id == victim), "{after:?}");

    // With the Kubernetes API: found by its node, drained, its node deleted, no surge.
    let (rt, kube, nodes) = fake_api(&env);
    let (_, node) = nodes
        .iter()
        .find(|(g, _)| g == group)
        .expect("a worker node")
        .clone();
    let url = kube.url();
    let args = [
        "delete",
        "instance",
        &node,
        "--api-server",
        &url,
        "--surge=false",
        "--post-drain-delay",
        "0s",
        "--yes",
    ];
    let (code, out, err) = env.kops(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "Instance {node} ({node}) of instance group {group}"
        )),
        "{out}"
    );
    assert!(!err.contains(" detach "), "no surge: {err}");
    assert!(
        err.contains(&format!("{group} delete-node {node} {node}")),
        "{err}"
    );
    assert!(!kube.objects().nodes.contains_key(&node));
    assert!(!running(&env, group).iter().any(|(id, _)| *id == node));
    drop(rt);
}

/// `update cluster --instance-group-roles` / `--instance-group` change some groups'
/// machines only, and refuse what they cannot do; `reconcile cluster` updates and rolls
/// the control plane before the nodes' configuration changes, stops there when the
/// control plane's API does not come up, and ends with nothing left to update or roll.
#[test]
fn update_of_some_groups_and_reconcile_put_the_control_plane_first() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let cp = "control-plane-us-test-1a";
    let nodes = "nodes-us-test-1a";
    let new_type = |group: &str, machine: &str| {
        let set = format!("spec.machineType={machine}");
        let (code, _, err) = env.kops(&["edit", "ig", group, "--set", &set]);
        assert_eq!(code, 0, "{err}");
    };
    new_type(cp, "m5.large");
    new_type(nodes, "m5.large");
    let lt = |group: &str| format!("LaunchTemplate/{group}.");

    // The control plane only: the nodes' launch template waits.
    let (code, out, err) = env.kops(&[
        "update",
        "cluster",
        "--instance-group-roles",
        "ControlPlane",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains(&lt(cp)), "{out}");
    assert!(!out.contains(&lt(nodes)), "{out}");
    assert!(
        !out.contains("Will delete"),
        "nothing of the nodes is deleted: {out}"
    );
    let (code, out, err) = env.kops(&[
        "update",
        "cluster",
        "--instance-group-roles",
        "ControlPlane",
        "--yes",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = env.kops(&["update", "cluster"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains(&lt(nodes)) && !out.contains(&lt(cp)), "{out}");
    // Refusals name what is wrong and change nothing.
    for (args, says) in [
        (&["--instance-group", "nodes-nope"][..], "nodes-nope"),
        (&["--instance-group-roles", "Boss"][..], "Boss"),
        (
            &["--instance-group-roles", "Node", "--target", "terraform"][..],
            "terraform",
        ),
    ] {
        let mut all = vec!["update", "cluster", "--yes"];
        all.extend_from_slice(args);
        let (code, out, err) = env.kops(&all);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, out, _) = env.kops(&["update", "cluster"]);
    assert_eq!(code, 2);
    assert!(out.contains(&lt(nodes)), "{out}");

    // Reconcile without --yes shows the update's plan.
    let (code, out, err) = env.kops(&["reconcile", "cluster"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains(&lt(nodes)), "{out}");

    // A control plane whose API does not come up stops the reconcile before the nodes'
    // configuration changes: an API with no node registered.
    new_type(cp, "m5.xlarge");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let kube = rt.block_on(kops_mock::kube::FakeKube::start()).unwrap();
    let url = kube.url();
    let args = [
        "reconcile",
        "cluster",
        "--yes",
        "--api-server",
        &url,
        "--api-wait",
        "1s",
    ];
    let (code, out, err) = env.kops(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("Updating control plane configuration"),
        "{err}"
    );
    assert!(err.contains("did not validate within 1s"), "{err}");
    assert!(!err.contains("Updating node configuration"), "{err}");
    let (_, out, _) = env.kops(&["update", "cluster"]);
    assert!(out.contains(&lt(nodes)) && !out.contains(&lt(cp)), "{out}");
    drop(rt);

    // Without the API: the control plane rolled before the nodes are updated and rolled.
    let cp_before = running(&env, cp);
    let nodes_before = running(&env, nodes);
    let args = [
        "reconcile",
        "cluster",
        "--yes",
        "--cloudonly",
        "--control-plane-interval",
        "0s",
        "--node-interval",
        "0s",
    ];
    let (code, out, err) = env.kops(&args);
    assert_eq!(code, 0, "{out}{err}");
    let at = |what: &str| {
        err.find(what)
            .unwrap_or_else(|| panic!("{what} missing: {err}"))
    };
    let cp_gone = at(&format!("{cp} terminate {}", cp_before[0].0));
    let nodes_gone = at(&format!("{nodes} terminate {}", nodes_before[0].0));
    let order = [
        at("Performing rolling-update for control plane"),
        cp_gone,
        at("Updating node configuration"),
        at("Performing rolling-update for nodes"),
        nodes_gone,
        at("Pruning old resources"),
    ];
    assert!(order.is_sorted(), "{order:?}: {err}");
    assert!(
        !err.contains("run an older configuration"),
        "no hint to roll what reconcile rolls itself: {err}"
    );
    assert!(
        running(&env, cp)
            .iter()
            .all(|(id, t)| t == "m5.xlarge" && !cp_before.iter().any(|(b, _)| b == id))
    );
    assert!(
        running(&env, nodes)
            .iter()
            .all(|(id, t)| t == "m5.large" && !nodes_before.iter().any(|(b, _)| b == id))
    );
    let (code, out, err) = env.kops(&["update", "cluster"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = env.kops(&["rolling-update", "cluster", "--cloudonly"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("No rolling-update required"), "{err}");
}

/// `update cluster --yes` exports the kubeconfig as kOps does when asked to on the mock
/// cloud (`--admin`, `--create-kube-config`), into `$KUBECONFIG`; a dry run and a plain
/// `--yes` on the mock leave it alone.
#[test]
fn update_exports_the_kubeconfig_when_asked() {
    let env = Env::new();
    let kc = env.dir.path().join("kube").join("config");
    let kc_env = [("KUBECONFIG", kc.to_str().unwrap())];
    let (code, _, err) = env.kops_env(&["update", "cluster", "--admin"], &kc_env);
    assert_eq!(code, 2, "a dry run: {err}");
    assert!(!kc.exists());
    let (code, _, err) = env.kops_env(&["update", "cluster", "--yes"], &kc_env);
    assert_eq!(code, 0, "{err}");
    assert!(
        !kc.exists(),
        "the mock's API does not exist: nothing exported"
    );

    let (code, out, err) = env.kops_env(&["update", "cluster", "--yes", "--admin=2h"], &kc_env);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("set your kubectl context"), "{err}");
    assert!(!out.contains("PRIVATE KEY") && !err.contains("PRIVATE KEY"));
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(text.contains("current-context: demo.example.com"), "{text}");
    assert!(text.contains("client-certificate-data"), "{text}");

    // Without a credential: the context alone, and the warning kOps gives.
    let other = env.dir.path().join("other-config");
    let (code, _, err) = env.kops_env(
        &[
            "update",
            "cluster",
            "--yes",
            "--create-kube-config",
            "--internal",
        ],
        &[("KUBECONFIG", other.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no user authentication"), "{err}");
    let text = std::fs::read_to_string(&other).unwrap();
    assert!(
        text.contains("server: https://api.internal.demo.example.com"),
        "{text}"
    );
    assert!(!text.contains("client-certificate-data"), "{text}");
}

/// `export kubeconfig --auth-plugin` writes a user that runs `kops helpers kubectl-auth`,
/// which prints an `ExecCredential` whose certificate verifies against the cluster's CA
/// (openssl), and serves it again from its private cache until it expires.
#[test]
fn the_auth_plugin_issues_a_cached_short_lived_certificate() {
    let env = Env::new();
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let kc = env.dir.path().join("kubeconfig");
    let (code, _, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--auth-plugin",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no user authentication"), "{err}");
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(text.contains("command: kops"), "{text}");
    assert!(text.contains("kubectl-auth"), "{text}");
    assert!(text.contains(&format!("--cluster={CLUSTER}")), "{text}");
    assert!(!text.contains("client-key-data"), "{text}");
    let (code, _, err) = env.kops(&["export", "kubeconfig", "--auth-plugin", "--admin"]);
    assert_ne!(
        code, 0,
        "--auth-plugin and --admin together are refused: {err}"
    );

    let home_env = [("HOME", home.to_str().unwrap())];
    let auth = ["helpers", "kubectl-auth", "--cluster", CLUSTER];
    let (code, out, err) = env.kops_env(&auth, &home_env);
    assert_eq!(code, 0, "{err}");
    let credential: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(credential["kind"], "ExecCredential");
    assert_eq!(
        credential["apiVersion"],
        "client.authentication.k8s.io/v1beta1"
    );
    let cert = credential["status"]["clientCertificateData"]
        .as_str()
        .unwrap();
    assert!(
        credential["status"]["clientKeyData"]
            .as_str()
            .unwrap()
            .contains("PRIVATE KEY")
    );
    let cert_path = env.dir.path().join("plugin.crt");
    std::fs::write(&cert_path, cert).unwrap();
    let ca_path = env.dir.path().join("plugin-ca.crt");
    let (_, _, _) = env.kops(&["export", "kubeconfig", "--kubeconfig", kc.to_str().unwrap()]);
    let ca = field(
        &std::fs::read_to_string(&kc).unwrap(),
        "certificate-authority-data",
    );
    std::fs::write(&ca_path, ca).unwrap();
    let verified = openssl(&[
        "verify",
        "-CAfile",
        ca_path.to_str().unwrap(),
        cert_path.to_str().unwrap(),
    ]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );

    // Cached, readable by its owner only, and served again as it is.
    let cache = home.join(".kube/cache/kops-authentication");
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 1);
    let meta = files[0].as_ref().unwrap().metadata().unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let (code, again, _) = env.kops_env(&auth, &home_env);
    assert_eq!(code, 0);
    assert_eq!(again.trim(), out.trim(), "the cached credential");
    // Another version of the protocol is a new credential; an unknown one is refused.
    let mut alpha = auth.to_vec();
    alpha.extend(["--api-version", "v1alpha1"]);
    let (code, other, err) = env.kops_env(&alpha, &home_env);
    assert_eq!(code, 0, "{err}");
    assert!(
        other.contains("client.authentication.k8s.io/v1alpha1"),
        "{other}"
    );
    let mut bad = auth.to_vec();
    bad.extend(["--api-version", "v9"]);
    let (code, _, err) = env.kops_env(&bad, &home_env);
    assert_eq!(code, 1);
    assert!(err.contains("v9"), "{err}");
}

/// `export kubeconfig --all`: a context for every cluster of the state store.
#[test]
fn export_kubeconfig_all_writes_every_clusters_context() {
    let env = Env::new();
    let other = "other.example.com";
    let (code, _, err) = env.kops(&[
        "create",
        "cluster",
        other,
        "--zones",
        "us-test-1a",
        "--name",
        other,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = env.kops(&[
        "create",
        "keypair",
        "kubernetes-ca",
        "--primary",
        "--name",
        other,
    ]);
    assert_eq!(code, 0, "{err}");
    let kc = env.dir.path().join("all-config");
    let (code, _, err) = env.kops(&[
        "export",
        "kubeconfig",
        "--all",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let doc = kops_api::yaml::from_str(&std::fs::read_to_string(&kc).unwrap()).unwrap();
    let mut contexts: Vec<&str> = doc["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    contexts.sort();
    assert_eq!(contexts, [CLUSTER, other]);
    let (code, _, err) = env.kops(&["export", "kubeconfig", CLUSTER, "--all"]);
    assert_ne!(code, 0, "a name and --all together: {err}");
}

/// `--use-kubeconfig`: validate reaches the API through the kubeconfig's context named
/// after the cluster (here one `export kubeconfig --admin --api-server` wrote), and says
/// what to do when there is none.
#[test]
fn validate_reaches_the_api_through_the_kubeconfig_when_asked() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (rt, kube, _) = fake_api(&env);
    let url = kube.url();
    let kc = env.dir.path().join("through-config");
    let kc_env = [("KUBECONFIG", kc.to_str().unwrap())];
    let (code, out, err) = env.kops_env(&["validate", "cluster", "--use-kubeconfig"], &kc_env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("kops export kubeconfig"), "{err}");
    let (code, _, err) = env.kops_env(
        &["export", "kubeconfig", "--admin", "--api-server", &url],
        &kc_env,
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = env.kops_env(&["validate", "cluster", "--use-kubeconfig"], &kc_env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("is ready"), "{out}");
    let (code, _, err) = env.kops_env(
        &[
            "validate",
            "cluster",
            "--use-kubeconfig",
            "--api-server",
            &url,
        ],
        &kc_env,
    );
    assert_eq!(code, 1);
    assert!(err.contains("cannot be used together"), "{err}");
    drop(rt);
}

// --- Day two over TLS ----------------------------------------------------------------------

/// The cluster's spec as the last update completed it, and its `kubernetes-ca` keyset, read
/// from the file state store.
fn cluster_and_ca(env: &Env) -> (kops_api::internal::Cluster, kops_api::keyset::Keyset) {
    let base = env.dir.path().join("state").join(CLUSTER);
    let spec = base.join("cluster-completed.spec");
    let text = std::fs::read(&spec).unwrap();
    let cluster = kops_api::manifest::parse(&text, "cluster-completed.spec")
        .unwrap()
        .into_iter()
        .find_map(|o| match o {
            kops_api::manifest::Object::Cluster(c) => {
                Some(kops_api::internal::Cluster::try_from(&c).unwrap())
            }
            _ => None,
        })
        .unwrap();
    let keyset = base.join("pki/private/kubernetes-ca/keyset.yaml");
    let ca = kops_api::keyset::Keyset::from_yaml(
        &std::fs::read_to_string(&keyset).unwrap(),
        "kubernetes-ca",
    )
    .unwrap();
    (cluster, ca)
}

/// A CA of its own (not the cluster's), as a keyset.
fn stranger_ca() -> kops_api::keyset::Keyset {
    let now = std::time::SystemTime::now();
    let mut ks = kops_model::pki::new_keyset("kubernetes-ca", now).unwrap();
    kops_model::pki::create_keypair(&mut ks, true, now).unwrap();
    ks
}

fn ca_pem(ca: &kops_api::keyset::Keyset) -> String {
    kops_model::pki::trusted_certificates(ca).unwrap()
}

/// The fake API over HTTPS: a serving certificate for `names` signed by `signer`, client
/// certificates of the cluster's CA accepted; a node for every running instance.
fn fake_api_tls(
    env: &Env,
    signer: &kops_api::keyset::Keyset,
    names: Vec<String>,
) -> (
    tokio::runtime::Runtime,
    kops_mock::kube::FakeKube,
    Vec<(String, String)>,
) {
    let (_, ca) = cluster_and_ca(env);
    let serving = kops_model::pki::issue_certificate(
        signer,
        "kubernetes-ca",
        &kops_model::pki::CertificateRequest::server("kubernetes-master")
            .with_alternate_names(names)
            .including_root(),
        std::time::SystemTime::now(),
    )
    .unwrap();
    let tls = kops_mock::kube::KubeTls::new(
        serving.certificate_pem,
        serving.private_key.expose_pem(),
        ca_pem(&ca),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let kube = rt
        .block_on(kops_mock::kube::FakeKube::start_tls(&tls))
        .unwrap();
    let nodes = register_nodes(env, &kube);
    (rt, kube, nodes)
}

/// The fake over HTTPS with the certificate kOps' nodeup issues the API server.
fn cluster_api_tls(
    env: &Env,
) -> (
    tokio::runtime::Runtime,
    kops_mock::kube::FakeKube,
    Vec<(String, String)>,
) {
    let (cluster, ca) = cluster_and_ca(env);
    let names = kops_model::day2::kubeconfig::api_server_certificate_names(&cluster).unwrap();
    fake_api_tls(env, &ca, names)
}

/// kubectl, run with `kubeconfig` and `PATH` leading to the built `kops` (for the
/// credential plugin); its exit code, stdout and stderr.
fn kubectl(
    kubectl: &str,
    env: &Env,
    kubeconfig: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_kops"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = env.dir.path().join("kubectl-home");
    std::fs::create_dir_all(&home).unwrap();
    let o = Command::new(kubectl)
        .env("PATH", path)
        .env("HOME", &home)
        .env("USER", "alice")
        .env_remove("KOPS_STATE_STORE")
        .env_remove("KUBECONFIG")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `export kubeconfig FLAGS --api-server URL` into `file` of the test's directory (exit
/// 0); its path.
fn export_kubeconfig(env: &Env, file: &str, flags: &[&str], url: &str) -> std::path::PathBuf {
    let path = env.dir.path().join(file);
    let mut args = vec!["export", "kubeconfig"];
    args.extend_from_slice(flags);
    args.extend(["--api-server", url, "--kubeconfig", path.to_str().unwrap()]);
    let (code, _, err) = env.kops(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    path
}

/// The nodes `kubectl get nodes -o json` lists with `kubeconfig` (it must succeed).
fn kubectl_nodes(kubectl_bin: &str, env: &Env, kubeconfig: &std::path::Path) -> Vec<String> {
    let (code, out, err) = kubectl(
        kubectl_bin,
        env,
        kubeconfig,
        &["get", "nodes", "-o", "json"],
    );
    assert_eq!(code, 0, "kubectl with {}: {err}", kubeconfig.display());
    node_names(&out)
}

fn node_names(list: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(list).unwrap();
    let mut names: Vec<String> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// Debian's kubectl reads the kubeconfig `export kubeconfig` writes and lists the nodes
/// over TLS, the server checked against the cluster CA under the name kOps writes
/// (`tls-server-name: api.internal.<cluster>`), authenticated by the admin certificate and
/// then by the credential plugin (`kops helpers kubectl-auth`).
#[test]
fn kubectl_lists_nodes_over_tls_with_the_exported_kubeconfig() {
    let Some(kubectl_bin) = support::kubectl() else {
        return;
    };
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (rt, kube, nodes) = cluster_api_tls(&env);
    let url = kube.url();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let mut want: Vec<String> = nodes.iter().map(|(_, n)| n.clone()).collect();
    want.sort();
    assert!(want.len() >= 2, "{nodes:?}");

    let admin = export_kubeconfig(&env, "admin-config", &["--admin"], &url);
    let text = std::fs::read_to_string(&admin).unwrap();
    assert!(
        text.contains(&format!("tls-server-name: api.internal.{CLUSTER}")),
        "{text}"
    );
    assert_eq!(
        kubectl_nodes(&kubectl_bin, &env, &admin),
        want,
        "the admin certificate"
    );
    let plugin = export_kubeconfig(&env, "plugin-config", &["--auth-plugin"], &url);
    assert_eq!(
        kubectl_nodes(&kubectl_bin, &env, &plugin),
        want,
        "the credential plugin"
    );

    // `--user`: the context names a user the kubeconfig already holds (here one whose
    // certificate the cluster CA signed, as an administrator hands it out).
    let (_, ca) = cluster_and_ca(&env);
    let alice = kops_model::day2::kubeconfig::issue_admin_credential(
        &ca,
        "alice",
        std::time::Duration::from_secs(3600),
        std::time::SystemTime::now(),
    )
    .unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let users = serde_json::json!({"apiVersion": "v1", "kind": "Config", "users": [{
        "name": "alice",
        "user": {
            "client-certificate-data": b64(&alice.certificate_pem),
            "client-key-data": b64(alice.private_key.expose_pem()),
        },
    }]});
    let with_user = env.dir.path().join("user-config");
    std::fs::write(&with_user, users.to_string()).unwrap();
    export_kubeconfig(&env, "user-config", &["--user", "alice"], &url);
    assert_eq!(
        kubectl_nodes(&kubectl_bin, &env, &with_user),
        want,
        "the existing user"
    );

    // A credential the server does not know (a bearer token) is answered 401, and kubectl
    // says so.
    let mut doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    doc["users"][0]["user"] = serde_json::json!({"token": "not-a-token-of-this-cluster"});
    let stranger = env.dir.path().join("token-config");
    std::fs::write(&stranger, doc.to_string()).unwrap();
    let (code, _, err) = kubectl(
        &kubectl_bin,
        &env,
        &stranger,
        &["get", "nodes", "-o", "json"],
    );
    assert_ne!(code, 0);
    assert!(err.contains("Unauthorized"), "{err}");
    drop(rt);
}

/// `validate cluster` over TLS with the admin credential it mints: exit 0 when every node
/// is ready, 2 naming an unready one; through an exported kubeconfig too.
#[test]
fn validate_over_tls_exits_0_when_ready_and_2_naming_an_unready_node() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (rt, kube, nodes) = cluster_api_tls(&env);
    let url = kube.url();
    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &url]);
    assert_eq!(code, 0, "every node is ready: {out}\n{err}");
    assert!(out.contains("is ready"), "{out}");

    let kc = env.dir.path().join("tls-config");
    let kc_env = [("KUBECONFIG", kc.to_str().unwrap())];
    let (code, _, err) = env.kops_env(
        &["export", "kubeconfig", "--admin", "--api-server", &url],
        &kc_env,
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = env.kops_env(&["validate", "cluster", "--use-kubeconfig"], &kc_env);
    assert_eq!(code, 0, "through the kubeconfig: {out}\n{err}");

    let (_, worker) = nodes
        .iter()
        .find(|(g, _)| g.starts_with("nodes"))
        .expect("a worker node")
        .clone();
    assert!(kube.set_ready(&worker, false));
    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &url]);
    assert_eq!(code, 2, "an unready node: {out}\n{err}");
    assert!(out.contains(&worker), "the unready node is named: {out}");
    drop(rt);
}

/// `rolling-update cluster` over TLS: the node is cordoned and drained through the API
/// (the fake records the writes), its machine replaced, the cluster validated.
#[test]
fn rolling_update_over_tls_drains_through_the_api() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (rt, kube, nodes) = cluster_api_tls(&env);
    let group = "nodes-us-test-1a";
    let (_, node) = nodes
        .iter()
        .find(|(g, _)| g == group)
        .expect("a worker node")
        .clone();
    let url = kube.url();
    let (code, out, err) = env.kops(&[
        "rolling-update",
        "cluster",
        "--yes",
        "--force",
        "--instance-group",
        group,
        "--api-server",
        &url,
        "--post-drain-delay",
        "0s",
        "--node-interval",
        "0s",
        "--validation-timeout",
        "1s",
        "--validate-count",
        "1",
        "--fail-on-validate-error=false",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let writes = kube.requests();
    assert!(
        writes
            .iter()
            .any(|r| r.method == "PATCH" && r.path == format!("/api/v1/nodes/{node}")),
        "the node is cordoned through the API: {writes:?}"
    );
    assert!(
        !running(&env, group).iter().any(|(id, _)| *id == node),
        "the machine is replaced"
    );
    drop(rt);
}

/// Exactly one line on stderr, starting `error: `.
fn one_error_line(err: &str) -> &str {
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    eprintln!("{}", lines[0]);
    lines[0]
}

/// What goes wrong over TLS is one line naming it, exit 1: a server whose certificate
/// another CA signed, a certificate without the name the kubeconfig checks, an expired
/// admin certificate, and credentials the server refuses.
#[test]
fn tls_failures_are_one_line_naming_what_failed() {
    let env = Env::new();
    let (code, _, err) = env.kops(&["update", "cluster", "--yes"]);
    assert_eq!(code, 0, "{err}");
    let (cluster, ca) = cluster_and_ca(&env);
    let names = kops_model::day2::kubeconfig::api_server_certificate_names(&cluster).unwrap();

    // A server whose certificate is not the cluster CA's.
    let (rt, kube, _) = fake_api_tls(&env, &stranger_ca(), names.clone());
    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &kube.url()]);
    assert_eq!(code, 1, "{out}{err}");
    let line = one_error_line(&err);
    assert!(
        line.contains("not signed by the cluster CA the client trusts"),
        "{line}"
    );
    drop((kube, rt));

    // A certificate without api.internal.<cluster>, the name the kubeconfig checks.
    let internal = format!("api.internal.{CLUSTER}");
    let without: Vec<String> = names.iter().filter(|n| **n != internal).cloned().collect();
    let (rt, kube, _) = fake_api_tls(&env, &ca, without);
    let (code, out, err) = env.kops(&["validate", "cluster", "--api-server", &kube.url()]);
    assert_eq!(code, 1, "{out}{err}");
    let line = one_error_line(&err);
    assert!(
        line.contains(&format!("not valid for {internal}")),
        "{line}"
    );
    assert!(
        line.contains("(it names kubernetes, kubernetes.default,"),
        "the names it holds: {line}"
    );
    drop((kube, rt));

    // The cluster's own server: an admin certificate that expired, then one of another CA.
    let (rt, kube, _) = cluster_api_tls(&env);
    let url = kube.url();
    let kc = env.dir.path().join("expiring-config");
    let kc_env = [("KUBECONFIG", kc.to_str().unwrap())];
    let (code, _, err) = env.kops_env(
        &["export", "kubeconfig", "--admin=1s", "--api-server", &url],
        &kc_env,
    );
    assert_eq!(code, 0, "{err}");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (code, out, err) = env.kops_env(&["validate", "cluster", "--use-kubeconfig"], &kc_env);
    assert_eq!(code, 1, "{out}{err}");
    let line = one_error_line(&err);
    assert!(line.contains("client certificate"), "{line}");
    assert!(line.contains("expired at"), "{line}");
    assert!(line.contains("kops export kubeconfig --admin"), "{line}");

    let stranger = stranger_ca();
    let cred = kops_model::day2::kubeconfig::issue_admin_credential(
        &stranger,
        "mallory",
        std::time::Duration::from_secs(3600),
        std::time::SystemTime::now(),
    )
    .unwrap();
    // The same kubeconfig with the stranger's credential (JSON is YAML to every reader).
    let mut doc: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&kc).unwrap()).unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let user = &mut doc["users"][0]["user"];
    assert!(user["client-certificate-data"].is_string(), "{doc}");
    user["client-certificate-data"] = b64(&cred.certificate_pem).into();
    user["client-key-data"] = b64(cred.private_key.expose_pem()).into();
    let forged = doc.to_string();
    std::fs::write(&kc, forged).unwrap();
    let (code, out, err) = env.kops_env(&["validate", "cluster", "--use-kubeconfig"], &kc_env);
    assert_eq!(code, 1, "{out}{err}");
    let line = one_error_line(&err);
    assert!(line.contains("401 Unauthorized"), "{line}");
    drop((kube, rt));
}
