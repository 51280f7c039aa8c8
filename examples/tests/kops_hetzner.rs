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

/// Hetzner's own clients create and list every kind the fake serves, with their fields:
/// the `hcloud` CLI looks up server types, images, locations, SSH keys and networks by
/// name as it does against the API, then creates a network with a subnet, a firewall with
/// a rule, a load balancer with a service and a target, and a labelled server;
/// python3-hcloud creates and lists a server and a network. Bad input fails with the
/// API's error, naming the field.
#[test]
fn hetzners_cli_and_python_library_create_and_list_on_the_fake_api() {
    use kops_mock::hetzner::rest::FakeHcloudApi;
    use serde_json::Value as Json;

    let Some(hcloud) = support::hcloud() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeHcloudApi::start(TOKEN)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| -> Run {
        let o = Command::new(&hcloud)
            .args(args)
            .env("HCLOUD_ENDPOINT", fake.url())
            .env("HCLOUD_TOKEN", TOKEN)
            .env("HOME", dir.path())
            .env_remove("HCLOUD_CONTEXT")
            .env_remove("HCLOUD_CONFIG")
            .output()
            .unwrap();
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    };
    let list = |what: &str| -> Vec<Json> {
        let out = cli(&[what, "list", "-o", "json"]).expect(0).stdout;
        let listed: Json = serde_json::from_str(&out).unwrap();
        listed.as_array().cloned().unwrap_or_default()
    };

    // The catalogs, as the API shapes them.
    let types = list("server-type");
    let cx22 = types.iter().find(|t| t["name"] == "cx22").expect("cx22");
    assert_eq!(
        (cx22["cores"].as_u64(), cx22["disk"].as_u64()),
        (Some(2), Some(40)),
        "{cx22}"
    );
    assert_eq!(cx22["memory"].as_f64(), Some(4.0), "{cx22}");
    let images = list("image");
    assert!(
        images
            .iter()
            .any(|i| i["name"] == "debian-12" && i["os_flavor"] == "debian"),
        "{images:?}"
    );
    let locations = list("location");
    let names: Vec<&str> = locations
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    for l in ["fsn1", "nbg1", "hel1"] {
        assert!(names.contains(&l), "{names:?}");
    }
    let lb_types = list("load-balancer-type");
    assert!(lb_types.iter().any(|t| t["name"] == "lb11"), "{lb_types:?}");
    let dcs = list("datacenter");
    assert!(
        dcs.iter()
            .any(|d| d["location"]["name"] == "fsn1" && d["name"] == "fsn1-dc14"),
        "{dcs:?}"
    );

    // A network with a subnet; a subnet outside the network's range is the API's 422.
    cli(&[
        "network",
        "create",
        "--name",
        "web-net",
        "--ip-range",
        "10.20.0.0/16",
        "--label",
        "team=web",
    ])
    .expect(0);
    let subnet = [
        "network",
        "add-subnet",
        "web-net",
        "--type",
        "cloud",
        "--network-zone",
        "eu-central",
        "--ip-range",
    ];
    cli(&[&subnet[..], &["10.20.1.0/24"]].concat()).expect(0);
    let outside = cli(&[&subnet[..], &["10.99.0.0/24"]].concat());
    assert_ne!(outside.code, 0, "{}", outside.all());
    assert!(
        outside.stderr.contains("invalid_input") && outside.stderr.contains("ip_range"),
        "{}",
        outside.stderr
    );

    // A firewall with a rule.
    cli(&[
        "firewall", "create", "--name", "web-fw", "--label", "team=web",
    ])
    .expect(0);
    cli(&[
        "firewall",
        "add-rule",
        "web-fw",
        "--direction",
        "in",
        "--protocol",
        "tcp",
        "--port",
        "22",
        "--source-ips",
        "198.51.100.0/24",
        "--description",
        "ssh",
    ])
    .expect(0);

    // A load balancer with a service and a target.
    cli(&[
        "load-balancer",
        "create",
        "--name",
        "web-lb",
        "--type",
        "lb11",
        "--location",
        "fsn1",
        "--label",
        "team=web",
    ])
    .expect(0);
    cli(&[
        "load-balancer",
        "add-service",
        "web-lb",
        "--protocol",
        "tcp",
        "--listen-port",
        "443",
        "--destination-port",
        "6443",
    ])
    .expect(0);
    cli(&[
        "load-balancer",
        "add-target",
        "web-lb",
        "--label-selector",
        "role=web",
    ])
    .expect(0);

    // A labelled server with an SSH key, in the network.
    let key = dir.path().join("id.pub");
    std::fs::write(&key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGl6c2lmZm9ydGhlZmFrZWhjbG91ZGFwaXRlc3Q= web@example\n").unwrap();
    cli(&[
        "ssh-key",
        "create",
        "--name",
        "web-key",
        "--public-key-from-file",
        key.to_str().unwrap(),
    ])
    .expect(0);
    let server = [
        "server",
        "create",
        "--name",
        "web-1",
        "--image",
        "debian-12",
        "--location",
        "fsn1",
        "--ssh-key",
        "web-key",
        "--network",
        "web-net",
        "--label",
        "role=web",
        "--label",
        "team=web",
        "--type",
    ];
    let made = cli(&[&server[..], &["cx22"]].concat()).expect(0);
    assert!(
        made.stdout.contains("web-1") || made.stdout.contains("created"),
        "{}",
        made.all()
    );
    // A server type the API does not have: the CLI sends it as given, and prints the
    // API's 422 naming the field.
    let bad = cli(&[&server[..], &["cx999"]].concat());
    assert_ne!(bad.code, 0, "{}", bad.all());
    assert!(
        bad.stderr.contains("invalid input in field 'server_type'")
            && bad.stderr.contains("cx999")
            && bad.stderr.contains("(invalid_input)"),
        "{}",
        bad.stderr
    );
    // An image the catalog lacks: the CLI's lookup by name finds none.
    let no_image = cli(&[
        "server",
        "create",
        "--name",
        "web-2",
        "--type",
        "cx22",
        "--image",
        "debian-99",
    ]);
    assert_ne!(no_image.code, 0, "{}", no_image.all());
    assert!(no_image.stderr.contains("debian-99"), "{}", no_image.stderr);
    // A name the project already has: the API's 409.
    let twice = cli(&[&server[..], &["cx22"]].concat());
    assert_ne!(twice.code, 0, "{}", twice.all());
    assert!(
        twice.stderr.contains("uniqueness_error"),
        "{}",
        twice.stderr
    );

    // What the lists show.
    let networks = list("network");
    let net = networks
        .iter()
        .find(|n| n["name"] == "web-net")
        .expect("web-net");
    assert_eq!(net["ip_range"], "10.20.0.0/16", "{net}");
    assert_eq!(net["labels"]["team"], "web", "{net}");
    let subnets = net["subnets"].as_array().cloned().unwrap_or_default();
    assert_eq!(subnets.len(), 1, "{net}");
    assert_eq!(subnets[0]["ip_range"], "10.20.1.0/24", "{net}");
    assert_eq!(subnets[0]["network_zone"], "eu-central", "{net}");
    assert_eq!(subnets[0]["type"], "cloud", "{net}");
    assert_eq!(subnets[0]["gateway"], "10.20.0.1", "{net}");

    let firewalls = list("firewall");
    let fw = firewalls
        .iter()
        .find(|f| f["name"] == "web-fw")
        .expect("web-fw");
    assert_eq!(fw["labels"]["team"], "web", "{fw}");
    let rules = fw["rules"].as_array().cloned().unwrap_or_default();
    assert_eq!(rules.len(), 1, "{fw}");
    assert_eq!(
        (
            &rules[0]["direction"],
            &rules[0]["protocol"],
            &rules[0]["port"]
        ),
        (&Json::from("in"), &Json::from("tcp"), &Json::from("22")),
        "{fw}"
    );
    // This CLI prints a rule's addresses in JSON as "ip+net" (its own conversion); its
    // description shows what the API holds.
    assert_eq!(
        rules[0]["source_ips"].as_array().map(Vec::len),
        Some(1),
        "{fw}"
    );
    let described = cli(&["firewall", "describe", "web-fw"]).expect(0).stdout;
    assert!(described.contains("198.51.100.0/24"), "{described}");
    assert_eq!(rules[0]["description"], "ssh", "{fw}");

    let lbs = list("load-balancer");
    let lb = lbs.iter().find(|l| l["name"] == "web-lb").expect("web-lb");
    assert_eq!(lb["load_balancer_type"]["name"], "lb11", "{lb}");
    assert_eq!(lb["load_balancer_type"]["max_targets"], 25, "{lb}");
    assert_eq!(lb["location"]["name"], "fsn1", "{lb}");
    assert_eq!(lb["location"]["network_zone"], "eu-central", "{lb}");
    assert_eq!(lb["labels"]["team"], "web", "{lb}");
    let services = lb["services"].as_array().cloned().unwrap_or_default();
    assert_eq!(services.len(), 1, "{lb}");
    assert_eq!(
        (
            &services[0]["protocol"],
            &services[0]["listen_port"],
            &services[0]["destination_port"]
        ),
        (&Json::from("tcp"), &Json::from(443), &Json::from(6443)),
        "{lb}"
    );
    let targets = lb["targets"].as_array().cloned().unwrap_or_default();
    assert_eq!(targets.len(), 1, "{lb}");
    assert_eq!(targets[0]["label_selector"]["selector"], "role=web", "{lb}");

    let keys = list("ssh-key");
    let k = keys
        .iter()
        .find(|k| k["name"] == "web-key")
        .expect("web-key");
    assert!(
        k["public_key"]
            .as_str()
            .is_some_and(|p| p.starts_with("ssh-ed25519 ")),
        "{k}"
    );

    let servers = list("server");
    assert_eq!(servers.len(), 1, "{servers:?}");
    let s = &servers[0];
    assert_eq!(s["name"], "web-1", "{s}");
    assert_eq!(
        s["labels"],
        serde_json::json!({ "role": "web", "team": "web" }),
        "{s}"
    );
    assert_eq!(s["server_type"]["name"], "cx22", "{s}");
    assert_eq!(s["server_type"]["cores"], 2, "{s}");
    assert_eq!(s["image"]["name"], "debian-12", "{s}");
    assert_eq!(s["image"]["os_flavor"], "debian", "{s}");
    assert_eq!(s["datacenter"]["location"]["name"], "fsn1", "{s}");
    assert_eq!(s["status"], "running", "{s}");
    let private = s["private_net"].as_array().cloned().unwrap_or_default();
    assert_eq!(private.len(), 1, "{s}");
    assert_eq!(private[0]["network"], net["id"], "{s}");
    let ip: std::net::Ipv4Addr = private[0]["ip"].as_str().unwrap().parse().unwrap();
    assert_eq!(ip.octets()[..2], [10, 20], "{s}");
    // The label selector the API answers.
    let selected = cli(&["server", "list", "-o", "json", "--selector", "role=web"]).expect(0);
    assert!(selected.stdout.contains("web-1"), "{}", selected.stdout);
    let none = cli(&["server", "list", "-o", "json", "--selector", "role=db"]).expect(0);
    assert!(!none.stdout.contains("web-1"), "{}", none.stdout);

    // Hetzner's Python library: a network with a subnet and a server in it, listed; a
    // server type the API lacks is its 422 naming the field.
    let Some(pyhcloud) = support::pyhcloud() else {
        return;
    };
    let script = format!(
        r#"
import json
from hcloud import Client, APIException
from hcloud.images.domain import Image
from hcloud.locations.domain import Location
from hcloud.networks.domain import NetworkSubnet
from hcloud.server_types.domain import ServerType
c = Client(token="{TOKEN}", api_endpoint="{url}")
net = c.networks.create(name="py-net", ip_range="10.30.0.0/16", labels={{"team": "py"}},
    subnets=[NetworkSubnet(ip_range="10.30.4.0/24", network_zone="eu-central", type="cloud")])
made = c.servers.create(name="py-srv", server_type=ServerType(name="cpx11"),
    image=Image(name="ubuntu-24.04"), location=Location(name="nbg1"), networks=[net],
    labels={{"role": "py"}})
made.action.wait_until_finished()
try:
    c.servers.create(name="py-bad", server_type=ServerType(name="cx999"),
        image=Image(name="ubuntu-24.04"), location=Location(name="nbg1"))
    bad = None
except APIException as e:
    bad = {{"code": e.code, "message": e.message, "fields": [f["name"] for f in e.details["fields"]]}}
s = c.servers.get_by_name("py-srv")
n = c.networks.get_by_name("py-net")
print(json.dumps({{
    "servers": sorted(x.name for x in c.servers.get_all()),
    "server": {{"name": s.name, "type": s.server_type.name, "cores": s.server_type.cores,
        "image": s.image.name, "location": s.datacenter.location.name, "labels": s.labels,
        "network": s.private_net[0].network.id, "ip": s.private_net[0].ip}},
    "network": {{"id": n.id, "ip_range": n.ip_range, "labels": n.labels,
        "subnets": [[x.ip_range, x.network_zone, x.gateway] for x in n.subnets]}},
    "bad": bad}}))
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
    let seen: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen["servers"],
        serde_json::json!(["py-srv", "web-1"]),
        "{seen}"
    );
    let ps = &seen["server"];
    assert_eq!(ps["type"], "cpx11", "{seen}");
    assert_eq!(ps["cores"], 2, "{seen}");
    assert_eq!(ps["image"], "ubuntu-24.04", "{seen}");
    assert_eq!(ps["location"], "nbg1", "{seen}");
    assert_eq!(ps["labels"], serde_json::json!({ "role": "py" }), "{seen}");
    assert_eq!(ps["network"], seen["network"]["id"], "{seen}");
    assert!(
        ps["ip"].as_str().is_some_and(|ip| ip.starts_with("10.30.")),
        "{seen}"
    );
    let pn = &seen["network"];
    assert_eq!(pn["ip_range"], "10.30.0.0/16", "{seen}");
    assert_eq!(pn["labels"], serde_json::json!({ "team": "py" }), "{seen}");
    assert_eq!(
        pn["subnets"],
        serde_json::json!([["10.30.4.0/24", "eu-central", "10.30.0.1"]]),
        "{seen}"
    );
    assert_eq!(seen["bad"]["code"], "invalid_input", "{seen}");
    assert_eq!(
        seen["bad"]["fields"],
        serde_json::json!(["server_type"]),
        "{seen}"
    );
    assert!(
        seen["bad"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cx999")),
        "{seen}"
    );
    // Neither the bad server nor the duplicate was made.
    let servers = list("server");
    let names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["web-1", "py-srv"], "{servers:?}");
}
