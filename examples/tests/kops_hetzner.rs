//! End-to-end tests of the `kops` binary on Hetzner, on the Hetzner mock cloud
//! (`--mock-cloud`, a local state store): `create cluster --cloud hetzner`, `update
//! cluster` (dry run, `--yes`, again with nothing to do, `--target terraform`), a new
//! server type rolled out by a cloud-only `rolling-update cluster`, and `delete cluster`;
//! the API token from `HCLOUD_TOKEN`, required, and never printed. Then the hcloud API
//! for real: the CLI's REST backend plans against the fake of the hcloud API on
//! 127.0.0.1 (`HCLOUD_ENDPOINT`), and after an apply through the library Hetzner's own
//! `hcloud` CLI (Debian's hcloud-cli, `KOPS_TEST_HCLOUD`) lists the cluster's servers
//! with kOps' labels and every other kind, and creates a network and a firewall; Hetzner's
//! Python library (python3-hcloud, `KOPS_TEST_PYHCLOUD`) lists the servers and creates a
//! network with its subnet, a firewall, a load balancer and a server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

mod support;

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
    /// The hcloud API's root (`HCLOUD_ENDPOINT`); `None`: the mock cloud.
    endpoint: Option<String>,
}

impl Env {
    fn kops(&self, args: &[&str], token: Option<&str>) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in [
            "KOPS_STATE_STORE",
            "KOPS_MOCK_CLOUD",
            "KOPS_CLUSTER_NAME",
            "HCLOUD_TOKEN",
            "HCLOUD_ENDPOINT",
        ] {
            c.env_remove(v);
        }
        match &self.endpoint {
            Some(e) => {
                c.env("HCLOUD_ENDPOINT", e);
            }
            None => {
                c.arg("--mock-cloud");
            }
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
            ));
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
        endpoint: None,
    };
    let create = ["create", "cluster", CLUSTER, "--cloud", "hetzner"];
    // Two locations are refused: a Hetzner cluster lives in one.
    let two = env.kops(
        &[&create[..], &["--zones", "fsn1,nbg1"]].concat(),
        Some(TOKEN),
    );
    let two = two.expect(1);
    assert!(two.all().contains("one location"), "{}", two.all());
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
    // The machines' downloads, and a kubeconfig for the API load balancer's address.
    let assets = env
        .kops(&["get", "assets", "--name", CLUSTER], Some(TOKEN))
        .expect(0)
        .stdout;
    assert!(
        assets.contains("hcloud-cloud-controller-manager"),
        "{assets}"
    );
    env.kops(
        &["export", "kubeconfig", "--name", CLUSTER, "--admin"],
        None,
    )
    .expect(0);
    let kubeconfig = std::fs::read_to_string(env.dir.path().join("kubeconfig")).unwrap();
    assert!(
        kubeconfig.contains("server: https://203.0.113."),
        "{kubeconfig}"
    );
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

#[test]
fn the_hcloud_api_through_the_rest_backend_and_hetzners_cli() {
    use kops_cloud_hetzner::rest::{RestConfig, RestHetzner};
    use kops_mock::hetzner::rest::FakeHcloudApi;

    let Some(hcloud) = support::hcloud() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeHcloudApi::start(TOKEN)).unwrap();
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
        endpoint: Some(fake.url()),
    };
    let key = env.dir.path().join("id.pub");
    std::fs::write(&key, "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCtWu40XQo8dczLsCq0OWV+hxm9uV3WxeH9Kgh4sMzQxNtoU1pvW0XdjpkBesRKGoolfWeCLXWxpyQb1IaiMkKoz7MdhQ/6UKjMjP66aFWWp3pwD0uj0HuJ7tq4gKHKRYGTaZIRWpzUiANBrjugVgA+Sd7E/mYwc/DMXkIyRZbvhQ== t@e\n").unwrap();
    env.kops(
        &[
            "create",
            "cluster",
            CLUSTER,
            "--cloud",
            "hetzner",
            "--zones",
            "nbg1",
            "--ssh-public-key",
            key.to_str().unwrap(),
        ],
        None,
    )
    .expect(0);
    let update = ["update", "cluster", CLUSTER];
    // The REST backend plans against the fake: everything to create.
    let plan = env.kops(&update, Some(TOKEN)).expect(2);
    assert!(
        plan.stdout.contains("ServerGroup/nodes-nbg1"),
        "{}",
        plan.stdout
    );
    assert!(
        fake.calls().contains_key("GET /servers"),
        "{:?}",
        fake.calls()
    );
    // A token the API refuses: one error naming HCLOUD_TOKEN, never the token.
    let refused = env.kops(&update, Some("not-the-token")).expect(1);
    assert!(
        refused.stderr.contains("HCLOUD_TOKEN"),
        "{}",
        refused.stderr
    );
    assert!(!refused.all().contains("not-the-token"));

    // Apply through the library's REST backend (a direct apply needs a remote store).
    rt.block_on(async {
        let store = std::sync::Arc::new(kops_statestore::MemoryStore::new());
        let text = env
            .kops(&["get", "cluster", CLUSTER, "-o", "yaml"], None)
            .expect(0)
            .stdout;
        let igs = env
            .kops(&["get", "ig", "--name", CLUSTER, "-o", "yaml"], None)
            .expect(0)
            .stdout;
        let mut cluster = None;
        let mut groups = Vec::new();
        for o in
            kops_api::manifest::parse(format!("{text}\n---\n{igs}").as_bytes(), "spec").unwrap()
        {
            match o {
                kops_api::manifest::Object::Cluster(c) => cluster = Some(c),
                kops_api::manifest::Object::InstanceGroup(g) => groups.push(g),
                _ => {}
            }
        }
        let mut cluster = cluster.unwrap();
        cluster.spec.config_base = Some(format!("memfs://tests/{CLUSTER}"));
        let opts = kops_model::aws::DiscoverOptions::default()
            .with_state_store(store, "memfs://tests")
            .with_ssh_public_key(std::fs::read_to_string(&key).unwrap());
        let ctx = kops_model::hetzner::discover(&cluster, &groups, &opts)
            .await
            .unwrap()
            .with_token(TOKEN);
        let cloud = RestHetzner::new(RestConfig::new(TOKEN).with_endpoint(fake.url())).unwrap();
        kops_model::hetzner::apply(&cloud, &ctx, &Default::default())
            .await
            .unwrap();
    });

    // Hetzner's own CLI reads the fake: the cluster's servers, with kOps' labels.
    let hcloud_run = |args: &[&str]| -> Vec<u8> {
        let out = Command::new(&hcloud)
            .args(args)
            .env("HCLOUD_ENDPOINT", fake.url())
            .env("HCLOUD_TOKEN", TOKEN)
            .env("HOME", env.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "hcloud {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let out = hcloud_run(&["server", "list", "-o", "json"]);
    let servers: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let servers = servers.as_array().cloned().unwrap_or_default();
    assert_eq!(servers.len(), 2, "{servers:?}");
    for s in &servers {
        let labels = &s["labels"];
        assert_eq!(labels["kops.k8s.io/cluster"], CLUSTER, "{s}");
        assert!(
            labels["kops.k8s.io/instance-userdata"]
                .as_str()
                .is_some_and(|h| h.starts_with("sha256.")),
            "{s}"
        );
        assert_eq!(s["server_type"]["name"], "cx23", "{s}");
        assert_eq!(s["datacenter"]["location"]["name"], "nbg1", "{s}");
    }
    let groups: Vec<&str> = servers
        .iter()
        .filter_map(|s| s["labels"]["kops.k8s.io/instance-group"].as_str())
        .collect();
    assert!(
        groups.contains(&"control-plane-nbg1") && groups.contains(&"nodes-nbg1"),
        "{groups:?}"
    );
    // And its other lists read the API's shapes too.
    for what in ["network", "firewall", "load-balancer", "ssh-key", "volume"] {
        let out = hcloud_run(&[what, "list", "-o", "json"]);
        let listed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(
            listed.as_array().is_some_and(|a| !a.is_empty()),
            "hcloud {what} list: {listed}"
        );
    }
    // It creates too: a network and a firewall, which the API then lists.
    hcloud_run(&[
        "network",
        "create",
        "--name",
        "cli-net",
        "--ip-range",
        "10.8.0.0/16",
    ]);
    hcloud_run(&[
        "firewall",
        "create",
        "--name",
        "cli-fw",
        "--label",
        "team=platform",
    ]);
    use kops_cloud_hetzner::HetznerResourceType as R;
    let named = |rt: R, name: &str| {
        fake.cloud()
            .objects()
            .iter()
            .any(|r| r.resource_type == rt && r.name.as_deref() == Some(name))
    };
    assert!(named(R::Network, "cli-net") && named(R::Firewall, "cli-fw"));

    // Hetzner's Python library lists the servers and creates a network with its subnet, a
    // firewall, a load balancer and a server.
    let Some(pyhcloud) = support::pyhcloud() else {
        return;
    };
    let script = format!(
        r#"
import json
from hcloud import Client
from hcloud.firewalls.domain import FirewallRule
from hcloud.images.domain import Image
from hcloud.load_balancer_types.domain import LoadBalancerType
from hcloud.locations.domain import Location
from hcloud.networks.domain import NetworkSubnet
from hcloud.server_types.domain import ServerType
c = Client(token="{TOKEN}", api_endpoint="{url}")
servers = c.servers.get_all(label_selector="kops.k8s.io/cluster={CLUSTER}")
c.networks.create(name="py-net", ip_range="10.9.0.0/16",
    subnets=[NetworkSubnet(ip_range="10.9.0.0/24", network_zone="eu-central", type="cloud")])
c.firewalls.create(name="py-fw", rules=[FirewallRule(direction="in", protocol="tcp", source_ips=["0.0.0.0/0"], port="22")])
c.load_balancers.create(name="py-lb", load_balancer_type=LoadBalancerType(name="lb11"), location=Location(name="fsn1"))
made = c.servers.create(name="py-srv", server_type=ServerType(name="cx23"), image=Image(name="ubuntu-24.04"), location=Location(name="fsn1"), labels={{"team": "platform"}})
print(json.dumps({{"servers": sorted(s.name for s in servers), "made": made.server.name,
    "made_type": made.server.server_type.name, "nets": [n.name for n in c.networks.get_all(name="py-net")]}}))
"#,
        url = fake.url()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .env("PYTHONPATH", &pyhcloud)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3-hcloud: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["servers"].as_array().map(Vec::len), Some(2), "{seen}");
    assert_eq!(seen["made"], "py-srv", "{seen}");
    assert_eq!(seen["made_type"], "cx23", "{seen}");
    assert_eq!(seen["nets"], serde_json::json!(["py-net"]), "{seen}");
    let subnets = fake
        .cloud()
        .objects()
        .into_iter()
        .filter(|r| {
            r.resource_type == R::NetworkSubnet && r.attr_str("ip_range") == Some("10.9.0.0/24")
        })
        .count();
    assert_eq!(subnets, 1);
    assert!(
        named(R::Firewall, "py-fw")
            && named(R::LoadBalancer, "py-lb")
            && named(R::Server, "py-srv")
    );
}
