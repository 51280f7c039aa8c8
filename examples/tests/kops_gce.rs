//! End-to-end tests of the `kops` binary on GCE: `create cluster --cloud gce`, `update
//! cluster` (dry run, `--yes`, `--target terraform`) and `delete cluster`, on the GCE
//! mock cloud (`--mock-cloud`, a local state store) and through the REST backend against
//! the fake of Google's APIs on 127.0.0.1 (`KOPS_GCE_ENDPOINT`) with a `gs://` state
//! store on the GCS emulator (`KOPS_TEST_GCS_ENDPOINT`, started by scripts/test): the
//! store a real cluster's machines read. A local store is refused there for `--yes`.
//! Day two on both: `validate cluster` against a fake Kubernetes API, and a cloud-only
//! `rolling-update cluster` after a machine-type change.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use kops_mock::gce::rest::FakeGceApi;
use support::gcs_emulator;

mod support;

const CLUSTER: &str = "gce.example.com";

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
}

struct Env {
    dir: tempfile::TempDir,
    /// `None`: the mock cloud; else the fake API's root.
    endpoint: Option<String>,
    /// The state store: `None` for a directory of `dir`, else a `gs://` URL on the GCS
    /// emulator at the address given.
    gcs: Option<(String, String)>,
}

impl Env {
    fn new(endpoint: Option<String>) -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
            endpoint,
            gcs: None,
        }
    }

    /// The state store `gs://{bucket}/{prefix}` on the GCS emulator at `emulator`.
    fn with_gcs(mut self, emulator: &str, state: &str) -> Env {
        self.gcs = Some((emulator.to_owned(), state.to_owned()));
        self
    }

    /// `create cluster` of [`CLUSTER`] on GCE (project `testproject`, zone `us-test1-a`)
    /// with `extra` flags.
    fn create(&self, extra: &[&str]) -> Run {
        let mut args = vec![
            "create",
            "cluster",
            CLUSTER,
            "--cloud",
            "gce",
            "--project",
            "testproject",
            "--zones",
            "us-test1-a",
        ];
        args.extend_from_slice(extra);
        self.kops(&args)
    }

    /// `update cluster --target terraform` (exit 0); the `kubernetes.tf` written.
    fn terraform(&self) -> String {
        let out = self.dir.path().join("tf");
        self.kops(&[
            "update",
            "cluster",
            CLUSTER,
            "--target",
            "terraform",
            "--out",
            out.to_str().unwrap(),
        ])
        .expect(0);
        std::fs::read_to_string(out.join("kubernetes.tf")).unwrap()
    }

    fn kops(&self, args: &[&str]) -> Run {
        self.kops_env(args, &[])
    }

    fn kops_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "KOPS_GCE_ENDPOINT",
            "STORAGE_EMULATOR_HOST",
        ] {
            c.env_remove(v);
        }
        // A home and a kubeconfig of the test's own: `update --yes` writes the cluster's
        // context, and Google's credentials chain reads the home's gcloud files.
        c.env("NO_COLOR", "1")
            .env("HOME", self.dir.path().join("home"))
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .current_dir(self.dir.path());
        match &self.gcs {
            None => {
                c.arg("--state").arg(format!(
                    "file://{}",
                    self.dir.path().join("state").display()
                ));
            }
            Some((emulator, state)) => {
                c.env("STORAGE_EMULATOR_HOST", emulator);
                c.arg("--state").arg(state);
            }
        }
        match &self.endpoint {
            None => {
                c.arg("--mock-cloud");
            }
            Some(e) => {
                c.env("KOPS_GCE_ENDPOINT", e);
            }
        }
        c.envs(env.iter().copied());
        let o = c.args(args).output().unwrap();
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// The instances `toolbox dump` lists: (name, zone, managed instance group ID,
    /// template).
    fn instances(&self) -> Vec<(String, String, String, String)> {
        let r = self
            .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
            .expect(0);
        let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let mut out: Vec<_> = dump["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let s = |k: &str| i[k].as_str().unwrap_or_default().to_owned();
                (s("name"), s("zone"), s("group"), s("instanceTemplate"))
            })
            .collect();
        out.sort();
        out
    }

    /// Validate against a fake Kubernetes API with a Ready node per instance, then a
    /// machine-type change and a cloud-only rolling update, which recreates the group's
    /// instances in place (GCE keeps their names) and is kept across commands.
    fn day_two(&self) {
        let before = self.instances();
        assert_eq!(
            before.len(),
            3,
            "a control-plane machine and 2 nodes: {before:?}"
        );
        let r = self
            .kops(&["rolling-update", "cluster", CLUSTER, "--cloudonly"])
            .expect(0);
        assert!(
            r.stderr.contains("No rolling-update required"),
            "{}",
            r.stderr
        );

        let rt = runtime();
        let kube = rt.block_on(kops_mock::kube::FakeKube::start()).unwrap();
        for (name, zone, group, _) in &before {
            let role = if group.contains("control-plane") {
                "control-plane"
            } else {
                "node"
            };
            let node: k8s_openapi::api::core::v1::Node =
                serde_json::from_value(serde_json::json!({
                    "metadata": {
                        "name": name,
                        "labels": {format!("node-role.kubernetes.io/{role}"): ""},
                    },
                    "spec": {"providerID": format!("gce://testproject/{zone}/{name}")},
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
                    kube.put_pod(kops_mock::kube::kubelet::static_pod(app, name));
                }
            }
        }
        let url = kube.url();
        let r = self
            .kops(&["validate", "cluster", CLUSTER, "--api-server", &url])
            .expect(0);
        assert!(r.stdout.contains("is ready"), "{}", r.stdout);
        // `get instances`: each machine beside its node (GCE names a node after its
        // instance), all up to date.
        let r = self
            .kops(&[
                "get",
                "instances",
                CLUSTER,
                "--api-server",
                &url,
                "-o",
                "json",
            ])
            .expect(0);
        let listed: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(listed.len(), before.len(), "{}", r.stdout);
        let mut addresses = std::collections::BTreeSet::new();
        for i in &listed {
            assert_eq!(i["nodeName"], i["id"], "{i}");
            assert_eq!(i["status"], "UpToDate", "{i}");
            assert_eq!(i["ready"], true, "{i}");
            // The machine's type and private address, as the cloud lists the instance.
            assert!(
                i["machineType"].as_str().is_some_and(|t| !t.is_empty()),
                "{i}"
            );
            let ip: std::net::Ipv4Addr = i["internalIP"].as_str().unwrap().parse().unwrap();
            assert!(addresses.insert(ip), "{i}: address given twice");
        }
        let worker = &before
            .iter()
            .find(|i| !i.2.contains("control-plane"))
            .unwrap()
            .0;
        assert!(kube.set_ready(worker, false));
        let r = self
            .kops(&["validate", "cluster", CLUSTER, "--api-server", &url])
            .expect(2);
        assert!(r.stdout.contains(worker.as_str()), "{}", r.stdout);
        drop(rt);

        // A new machine type: a new template, which the instances do not run yet.
        let editor = self.dir.path().join("edit-ig.sh");
        std::fs::write(
            &editor,
            "#!/bin/sh\nsed -i 's/machineType: .*/machineType: e2-standard-2/' \"$1\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.kops_env(
            &[
                "--name",
                CLUSTER,
                "edit",
                "instancegroup",
                "nodes-us-test1-a",
            ],
            &[("EDITOR", editor.to_str().unwrap())],
        )
        .expect(0);
        // The update says how many machines the change leaves behind.
        let r = self
            .kops(&["update", "cluster", CLUSTER, "--yes"])
            .expect(0);
        assert!(
            r.stderr.contains(&format!(
                "2 instance(s) of cluster {CLUSTER} run an older configuration"
            )),
            "{}",
            r.stderr
        );
        let r = self
            .kops(&["get", "instances", CLUSTER, "--cloudonly"])
            .expect(0);
        assert_eq!(r.stdout.matches("NeedsUpdate").count(), 2, "{}", r.stdout);
        assert_eq!(r.stdout.matches("UpToDate").count(), 1, "{}", r.stdout);
        let r = self
            .kops(&["rolling-update", "cluster", CLUSTER, "--cloudonly"])
            .expect(2);
        assert!(r.stdout.contains("NeedsUpdate"), "{}", r.stdout);
        assert!(r.stdout.contains("the group wants"), "{}", r.stdout);

        let r = self
            .kops(&[
                "rolling-update",
                "cluster",
                CLUSTER,
                "--cloudonly",
                "--yes",
                "--node-interval",
                "0s",
                "--control-plane-interval",
                "0s",
            ])
            .expect(0);
        assert!(
            r.stderr.contains("Rolling update completed"),
            "{}",
            r.stderr
        );
        // GCE never surges: each node was recreated, none detached.
        assert!(!r.stderr.contains(" detach"), "{}", r.stderr);
        assert_eq!(r.stderr.matches(" terminate ").count(), 2, "{}", r.stderr);

        // A new command sees the recreated instances: the same names, the nodes' on the
        // new template, and nothing to update.
        let after = self.instances();
        let names = |v: &[(String, String, String, String)]| -> Vec<String> {
            v.iter().map(|i| i.0.clone()).collect()
        };
        assert_eq!(names(&after), names(&before));
        for (a, b) in after.iter().zip(&before) {
            if a.2.contains("control-plane") {
                assert_eq!(a.3, b.3, "{a:?}");
            } else {
                assert_ne!(a.3, b.3, "{a:?} still runs its old template");
            }
        }
        let r = self
            .kops(&["rolling-update", "cluster", CLUSTER, "--cloudonly"])
            .expect(0);
        assert!(
            r.stderr.contains("No rolling-update required"),
            "{}",
            r.stderr
        );
        // The recreated nodes are of the new type.
        let r = self
            .kops(&["get", "instances", CLUSTER, "--cloudonly", "-o", "json"])
            .expect(0);
        let listed: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
        let nodes: Vec<&serde_json::Value> = listed
            .iter()
            .filter(|i| i["instanceGroup"] == "nodes-us-test1-a")
            .collect();
        assert_eq!(nodes.len(), 2, "{}", r.stdout);
        assert!(
            nodes.iter().all(|i| i["machineType"] == "e2-standard-2"),
            "{}",
            r.stdout
        );

        // reconcile: the node group's new type reaches its machines after the control
        // plane's turn, and nothing is left to update or roll.
        self.kops(&[
            "edit",
            "ig",
            "nodes-us-test1-a",
            "--name",
            CLUSTER,
            "--set",
            "spec.machineType=e2-standard-4",
        ])
        .expect(0);
        let r = self
            .kops(&[
                "reconcile",
                "cluster",
                CLUSTER,
                "--yes",
                "--cloudonly",
                "--control-plane-interval",
                "0s",
                "--node-interval",
                "0s",
            ])
            .expect(0);
        assert!(
            r.stderr.contains(&format!("Cluster {CLUSTER} reconciled")),
            "{}",
            r.stderr
        );
        self.kops(&["update", "cluster", CLUSTER]).expect(0);
        let r = self
            .kops(&["get", "instances", CLUSTER, "--cloudonly", "-o", "json"])
            .expect(0);
        let listed: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
        assert!(
            listed
                .iter()
                .filter(|i| i["instanceGroup"] == "nodes-us-test1-a")
                .all(|i| i["machineType"] == "e2-standard-4" && i["status"] == "UpToDate"),
            "{}",
            r.stdout
        );
    }

    fn lifecycle(&self) {
        // The project is required.
        let r = self
            .kops(&[
                "create",
                "cluster",
                CLUSTER,
                "--cloud",
                "gce",
                "--zones",
                "us-test1-a",
            ])
            .expect(1);
        assert!(r.stderr.contains("--project"), "{}", r.stderr);
        self.create(&["--node-count", "2"]).expect(0);

        let r = self.kops(&["update", "cluster", CLUSTER]).expect(2);
        assert!(r.stdout.contains("Will create resources:"), "{}", r.stdout);
        assert!(r.stdout.contains("InstanceTemplate/"), "{}", r.stdout);

        let tf = self.terraform();
        assert!(
            tf.contains("resource \"google_compute_instance_template\""),
            "{tf}"
        );

        // What the machines download: GCE's credential helper among the files.
        let r = self
            .kops(&["get", "assets", CLUSTER, "-o", "json"])
            .expect(0);
        let assets: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let files = assets["files"].as_array().unwrap();
        assert!(
            files.iter().any(|f| f["canonical"]
                .as_str()
                .unwrap()
                .ends_with("/auth-provider-gcp")),
            "{assets:#}"
        );
        assert!(
            !assets["images"].as_array().unwrap().is_empty(),
            "{assets:#}"
        );

        let r = self
            .kops(&["update", "cluster", CLUSTER, "--yes"])
            .expect(0);
        assert!(r.stdout.contains("updated:"), "{}", r.stdout);
        assert!(!r.stderr.contains("older configuration"), "{}", r.stderr);

        // The dump lists what the cluster owns in the project.
        let r = self
            .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
            .expect(0);
        let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let types: Vec<&str> = dump["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["resource_type"].as_str())
            .collect();
        assert!(types.contains(&"InstanceGroupManager"), "{types:?}");
        assert!(types.contains(&"Firewall"), "{types:?}");
        self.day_two();

        // Deleting an instance group deletes its managed instance group and template
        // (as kOps does on GCE): nothing is left for an update to create or delete.
        let r = self
            .kops(&["--name", CLUSTER, "delete", "ig", "nodes-us-test1-a"])
            .expect(2);
        assert!(
            r.stdout.contains("google_compute_instance_group_manager")
                && r.stdout.contains("google_compute_instance_template")
                && r.stdout.contains("Will delete 2 cloud resource(s)"),
            "{}",
            r.stdout
        );
        let r = self
            .kops(&[
                "--name",
                CLUSTER,
                "delete",
                "ig",
                "nodes-us-test1-a",
                "--yes",
            ])
            .expect(0);
        assert!(
            r.stdout
                .contains("Deleted 2 cloud resource(s) of instance group"),
            "{}",
            r.stdout
        );
        let r = self.kops(&["update", "cluster", CLUSTER]).expect(0);
        assert!(!r.stdout.contains("Will "), "{}", r.stdout);
        let r = self.kops(&["update", "cluster", CLUSTER]).expect(0);
        assert!(!r.stdout.contains("Will create"), "{}", r.stdout);
        let r = self
            .kops(&["update", "cluster", CLUSTER, "--yes"])
            .expect(0);
        assert!(r.stdout.contains("No changes needed"), "{}", r.stdout);

        let r = self.kops(&["delete", "cluster", CLUSTER]).expect(2);
        assert!(
            r.stdout.contains("google_compute_instance_group_manager"),
            "{}",
            r.stdout
        );
        let r = self
            .kops(&["delete", "cluster", CLUSTER, "--yes"])
            .expect(0);
        assert!(r.stdout.contains("Deleted cluster"), "{}", r.stdout);
    }
}

#[test]
fn a_gce_cluster_lifecycle_on_the_mock_cloud() {
    let env = Env::new(None);
    env.lifecycle();
    // The mock's journal replays: after the delete nothing of the cluster is left.
    env.create(&[]).expect(0);
    let r = env.kops(&["delete", "cluster", CLUSTER]).expect(2);
    assert!(
        r.stdout.contains("Will delete 0 cloud resource(s)"),
        "{}",
        r.stdout
    );
}

#[test]
fn export_kubeconfig_of_a_gce_cluster_without_dns_names_its_forwarding_rule() {
    let env = Env::new(None);
    env.create(&["--dns", "none"]).expect(0);
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    let kc = env.dir.path().join("kubeconfig");
    let r = env
        .kops(&[
            "export",
            "kubeconfig",
            CLUSTER,
            "--admin=1h",
            "--kubeconfig",
            kc.to_str().unwrap(),
        ])
        .expect(0);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let text = std::fs::read_to_string(&kc).unwrap();
    // The address of the public API forwarding rule, as the dump lists it (the internal
    // load balancer's, for nodes, is not reachable from here).
    let r = env
        .kops(&["toolbox", "dump", CLUSTER, "-o", "json"])
        .expect(0);
    let dump: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let address = dump["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["resource_type"] == "ForwardingRule"
                && r["name"].as_str().is_some_and(|n| n.starts_with("api-"))
                && r["attrs"]["load_balancing_scheme"] != "INTERNAL"
        })
        .and_then(|r| r["attrs"]["ip_address"].as_str())
        .expect("an API forwarding rule with an address")
        .to_owned();
    assert!(
        text.contains(&format!("server: https://{address}\n")),
        "{address}: {text}"
    );
    assert!(
        text.contains(&format!("tls-server-name: api.internal.{CLUSTER}")),
        "{text}"
    );
}

/// The fake Compute API on loopback, in project `testproject`, region `us-test1`.
fn fake_gce(rt: &tokio::runtime::Runtime) -> FakeGceApi {
    rt.block_on(FakeGceApi::start("testproject", "us-test1"))
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_gce_cluster_lifecycle_through_the_rest_backend() {
    let Some(gcs) = gcs_emulator() else { return };
    let rt = runtime();
    let fake = fake_gce(&rt);
    // The emulator is shared by every test binary: a prefix of this test's own.
    let env = Env::new(Some(fake.url())).with_gcs(&gcs, "gs://kops-test/kops-gce-rest");
    let _ = env.kops(&["delete", "cluster", CLUSTER, "--yes"]);
    env.lifecycle();
    // Nothing of the cluster is left in the project.
    let left: Vec<String> = fake
        .objects()
        .iter()
        .map(|o| format!("{}/{}", o.collection, o.name))
        .collect();
    assert!(left.is_empty(), "left after delete: {left:?}");
    assert!(
        fake.calls()
            .contains_key("compute.instanceTemplates.insert")
    );
    drop(fake);
}

/// Direct apply on GCE with a local state store: the machines could never read their
/// configuration, so `update cluster --yes` exits 1 naming `spec.configBase` and the
/// `gs://` store to use, before anything is created; the dry run and the Terraform
/// target still work.
#[test]
fn direct_apply_on_gce_refuses_a_local_state_store() {
    let rt = runtime();
    let fake = fake_gce(&rt);
    let env = Env::new(Some(fake.url()));
    env.create(&[]).expect(0);
    env.kops(&["update", "cluster", CLUSTER]).expect(2);
    let r = env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(1);
    let err = r.stderr.trim_end();
    assert!(err.starts_with("error: spec.configBase: file://"), "{err}");
    assert!(err.contains("gs://"), "the error says what to use: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        fake.objects().is_empty(),
        "created: {:?}",
        fake.objects().len()
    );
    assert!(
        !fake.calls().keys().any(|k| k.ends_with(".insert")),
        "{:?}",
        fake.calls()
    );
    assert!(env.terraform().contains("google_compute_instance_template"));
    // The lock was released: the next run takes it and stops at the same check.
    let r = env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(1);
    assert!(
        r.stderr.starts_with("error: spec.configBase: "),
        "{}",
        r.stderr
    );
}

/// Every file of a local state store, by path under it.
fn files_under(root: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    out
}

/// The cluster's additional objects shape its nodes on GCE as on AWS: a
/// `KubeSchedulerConfiguration` stored with the cluster ends up in the control plane's
/// nodeup config.
#[test]
fn additional_objects_shape_a_gce_clusters_scheduler() {
    let env = Env::new(None);
    env.create(&[]).expect(0);
    let r = env
        .kops(&["get", "cluster", CLUSTER, "-o", "yaml"])
        .expect(0);
    let file = format!(
        "{}---\napiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nclientConnection:\n  burst: 100\n  qps: 3.1\n",
        r.stdout
    );
    std::fs::write(env.dir.path().join("cluster.yaml"), file).unwrap();
    env.kops(&["replace", "-f", "cluster.yaml"]).expect(0);
    env.kops(&["update", "cluster", CLUSTER, "--yes"]).expect(0);
    let files = files_under(&env.dir.path().join("state"));
    let (path, config) = files
        .iter()
        .find(|(p, _)| {
            p.starts_with(&format!("{CLUSTER}/igconfig/control-plane/"))
                && p.ends_with("nodeupconfig.yaml")
        })
        .expect("a control-plane nodeup config");
    assert!(
        config.contains("apiVersion: kubescheduler.config.k8s.io/v1beta2")
            && config.contains("qps: 3.1"),
        "{path}:\n{config}"
    );
}

/// A fake OAuth2 token endpoint on loopback (`POST /token`, a refresh-token exchange as
/// gcloud's ADC file asks for), counting the tokens it hands out.
struct TokenEndpoint {
    url: String,
    fetches: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl TokenEndpoint {
    fn start() -> TokenEndpoint {
        use std::io::{BufRead as _, BufReader, Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let fetches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = fetches.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut length = 0usize;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let answer = if line.starts_with("POST /token") {
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    r#"{"access_token": "ya29.counted", "expires_in": 3600, "token_type": "Bearer"}"#
                } else {
                    r#"{"error": "not_found"}"#
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        TokenEndpoint { url, fetches }
    }

    fn fetches(&self) -> usize {
        self.fetches.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// One command fetches one Google token, shared by the `gs://` state store and the GCE
/// cloud (each opened once): gcloud's ADC file (`GOOGLE_APPLICATION_CREDENTIALS`) whose
/// refresh token the fake token endpoint on loopback exchanges, with the store on the GCS
/// emulator and the cloud on the fake Compute API, both sent tokens
/// (`KOPS_GCE_ENDPOINT_CREDENTIALS`). Each command opens at most one GCE client. A local store on
/// the mock cloud builds no credentials.
#[test]
fn one_command_fetches_a_google_token_once() {
    let Some(gcs) = gcs_emulator() else { return };
    let rt = runtime();
    let fake = fake_gce(&rt);
    let token = TokenEndpoint::start();
    let env = Env::new(Some(fake.url())).with_gcs(&gcs, "gs://kops-test/kops-gce-token");
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let adc = env.dir.path().join("adc.json");
    std::fs::write(
        &adc,
        serde_json::json!({"type": "authorized_user", "client_id": "c", "client_secret": "s",
            "refresh_token": "r", "token_uri": format!("{}/token", token.url)})
        .to_string(),
    )
    .unwrap();
    let vars = [
        ("GOOGLE_APPLICATION_CREDENTIALS", adc.to_str().unwrap()),
        ("KOPS_GCE_ENDPOINT_CREDENTIALS", "1"),
        ("HOME", home.to_str().unwrap()),
        (
            "KUBECONFIG",
            home.join("kubeconfig").to_str().unwrap().to_owned().leak(),
        ),
        // Nothing else answers: no metadata server.
        ("GCE_METADATA_HOST", "127.0.0.1:9"),
    ];
    let run = |args: &[&str], code: i32| {
        let before = token.fetches();
        let gets = fake
            .calls()
            .get("compute.projects.get")
            .copied()
            .unwrap_or(0);
        env.kops_env(args, &vars).expect(code);
        (
            token.fetches() - before,
            fake.calls()
                .get("compute.projects.get")
                .copied()
                .unwrap_or(0)
                - gets,
        )
    };
    let _ = env.kops_env(&["delete", "cluster", CLUSTER, "--yes"], &vars);
    let create = [
        "create",
        "cluster",
        CLUSTER,
        "--cloud",
        "gce",
        "--project",
        "testproject",
        "--zones",
        "us-test1-a",
    ];
    let runs = [
        run(&create, 0),
        run(&["update", "cluster", CLUSTER], 2),
        run(&["update", "cluster", CLUSTER, "--yes"], 0),
        run(&["delete", "cluster", CLUSTER, "--yes"], 0),
    ];
    let fetched = runs.map(|(fetched, _)| fetched);
    // With credentials of their own for the store and each cloud opened (the code before
    // one object served the command): [1, 3, 4, 2].
    assert_eq!(
        fetched, [1; 4],
        "tokens fetched by create, update, update --yes, delete"
    );

    // Each command opens at most one GCE client, which checks the project once (`create
    // cluster` none): `update cluster` opened one to ask the control plane's version and
    // another to plan, and after `--yes` a third to find the API's load balancer
    // ([0, 2, 3, 1] before).
    let opened = runs.map(|(_, opened)| opened);
    assert_eq!(
        opened,
        [0, 1, 1, 1],
        "projects.get by create, update, update --yes, delete"
    );

    // A local store on the mock cloud builds no credentials: nothing is fetched.
    let local = Env::new(None);
    let before = token.fetches();
    local
        .kops_env(
            &[
                "create",
                "cluster",
                CLUSTER,
                "--cloud",
                "gce",
                "--project",
                "testproject",
                "--zones",
                "us-test1-a",
            ],
            &vars,
        )
        .expect(0);
    local
        .kops_env(&["update", "cluster", CLUSTER, "--yes"], &vars)
        .expect(0);
    assert_eq!(token.fetches(), before, "a local store on the mock cloud");
    drop(fake);
}
