//! Golden tests: each directory under `tests/golden/` holds a cluster manifest of our own
//! (`cluster.yaml`, optional `id_rsa.pub`) and the Terraform the model must render for it
//! (`expected/kubernetes.tf` and `expected/data/`). `KOPS_UPDATE_GOLDEN=1` rewrites the
//! expected directories from the current output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kops_api::defaults::{PopulateOptions, populate};
use kops_api::internal;
use kops_api::manifest::{self, Object};
use kops_api::validation::validate_all;
use kops_model::aws::cloud::{AccountInfo, HostedZone, Image};
use kops_model::aws::terraform::{RenderOptions, render};
use kops_model::aws::{ModelContext, build_model};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn render_case(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let text = std::fs::read(dir.join("cluster.yaml")).unwrap();
    let mut cluster = None;
    let mut groups = Vec::new();
    for o in manifest::parse(&text, "cluster.yaml").unwrap() {
        match o {
            Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c).unwrap()),
            Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
            _ => {}
        }
    }
    let (cluster, groups) =
        populate(&cluster.unwrap(), &groups, &PopulateOptions::default()).unwrap();
    if let Err(e) = validate_all(&cluster, &groups) {
        panic!("{}: invalid spec: {:?}", dir.display(), e.errors());
    }
    let image = Image::new("ami-0000aaaa", "golden-image", "111111111111")
        .with_root_device_name("/dev/sda1")
        .with_architecture("x86_64");
    let mut ctx = ModelContext::new(cluster, groups, "eu-west-9")
        .with_account(AccountInfo::new("111111111111", "aws", "eu-west-9"))
        .with_image("ami-0000aaaa", image)
        .with_kops_release("0.1.0-golden");
    // The nodeup binary of the golden release: its hash as if fetched from
    // `<url>.sha256` (the table only knows published releases).
    for arch in ["amd64", "arm64"] {
        ctx.asset_hashes.insert(
            format!("https://artifacts.k8s.io/binaries/kops/0.1.0-golden/linux/{arch}/nodeup"),
            format!("{:064x}", if arch == "amd64" { 1 } else { 2 }),
        );
    }
    ctx.cluster_context.keysets = golden_keysets(&ctx.cluster);
    if let Ok(key) = std::fs::read_to_string(dir.join("id_rsa.pub")) {
        ctx = ctx.with_ssh_public_key(key);
    }
    if ctx.cluster.spec.networking.network_id.is_some() {
        ctx = ctx
            .with_internet_gateway("igw-0shared")
            .with_egress_only_internet_gateway("eigw-0shared");
    }
    if !ctx.dns_none() {
        ctx = ctx.with_dns_zone(HostedZone::new(
            "/hostedzone/ZGOLDEN",
            "example.org.",
            false,
        ));
    }
    let model = build_model(&ctx).unwrap();
    render(&ctx, model, &RenderOptions::default())
        .unwrap()
        .files
}

/// The keysets every golden case uses (`tests/golden/keysets/<name>.yaml`, CAs our
/// own code issued once), so that nodeup configs and user-data are stable. With
/// `KOPS_UPDATE_GOLDEN=1`, keysets a case needs and the directory lacks are generated
/// and written there.
fn golden_keysets(cluster: &internal::Cluster) -> BTreeMap<String, kops_api::keyset::Keyset> {
    let dir = golden_dir().join("keysets");
    let mut out = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            out.insert(
                name.clone(),
                kops_api::keyset::Keyset::from_yaml(&text, &name).unwrap(),
            );
        }
    }
    let created =
        kops_model::pki::ensure_keysets(cluster, &mut out, std::time::SystemTime::now()).unwrap();
    if !created.is_empty() {
        assert!(
            std::env::var("KOPS_UPDATE_GOLDEN").is_ok_and(|v| v == "1"),
            "golden keysets missing: {created:?} (rerun with KOPS_UPDATE_GOLDEN=1)"
        );
        std::fs::create_dir_all(&dir).unwrap();
        for name in created {
            std::fs::write(
                dir.join(format!("{name}.yaml")),
                out[&name].to_yaml().unwrap(),
            )
            .unwrap();
        }
    }
    out
}

fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out
}

#[test]
fn golden_cases_render_as_recorded() {
    let update = std::env::var("KOPS_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("cluster.yaml").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "expected at least five golden cases");
    let mut failures = Vec::new();
    for dir in &cases {
        let actual = render_case(dir);
        let expected_dir = dir.join("expected");
        if update {
            if expected_dir.exists() {
                std::fs::remove_dir_all(&expected_dir).unwrap();
            }
            for (rel, bytes) in &actual {
                let p = expected_dir.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).unwrap();
            }
            continue;
        }
        let expected = read_tree(&expected_dir);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        for (rel, bytes) in &expected {
            match actual.get(rel) {
                None => failures.push(format!("{name}: {rel} is no longer rendered")),
                Some(a) if a != bytes => {
                    let diff = similar_lines(bytes, a);
                    failures.push(format!("{name}: {rel} differs:\n{diff}"));
                }
                _ => {}
            }
        }
        for rel in actual.keys() {
            if !expected.contains_key(rel) {
                failures.push(format!("{name}: {rel} is rendered but not expected"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (rerun with KOPS_UPDATE_GOLDEN=1 after checking):\n{}",
        failures.join("\n")
    );
}

/// The first differing lines, enough to see what changed.
fn similar_lines(expected: &[u8], actual: &[u8]) -> String {
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let mut out = String::new();
    for (i, (x, y)) in e.lines().zip(a.lines()).enumerate() {
        if x != y {
            out.push_str(&format!(
                "  line {}: expected {x:?}\n           actual   {y:?}\n",
                i + 1
            ));
            if out.len() > 2000 {
                break;
            }
        }
    }
    if e.lines().count() != a.lines().count() {
        out.push_str(&format!(
            "  {} lines expected, {} rendered\n",
            e.lines().count(),
            a.lines().count()
        ));
    }
    out
}

#[test]
fn every_private_zone_gets_a_nat_gateway_and_route() {
    let files = render_case(&golden_dir().join("private-bastion"));
    let tf = String::from_utf8(files["kubernetes.tf"].clone()).unwrap();
    for zone in ["eu-west-9a", "eu-west-9b"] {
        let nat = format!("resource \"aws_nat_gateway\" \"{zone}-golden-private-example-org\"");
        assert!(tf.contains(&nat), "missing {nat}");
        let route = format!("resource \"aws_route\" \"route-private-{zone}-0-0-0-0--0\"");
        assert!(tf.contains(&route), "missing {route}");
    }
    // A bastion replaces direct SSH access to the nodes.
    assert!(!tf.contains("from-203-0-113-0--24-ingress-tcp-22to22-nodes"));
    assert!(tf.contains("from-203-0-113-0--24-ingress-tcp-22to22-bastion-elb"));
}

#[test]
fn shared_network_renders_no_vpc_and_references_ids() {
    let files = render_case(&golden_dir().join("shared-network"));
    let tf = String::from_utf8(files["kubernetes.tf"].clone()).unwrap();
    assert!(!tf.contains("resource \"aws_vpc\""));
    assert!(!tf.contains("resource \"aws_subnet\""));
    assert!(tf.contains("vpc_id = \"vpc-0feedface\""));
    assert!(tf.contains("key_name      = \"ops-key\""));
    assert!(!tf.contains("resource \"aws_key_pair\""));
}

/// A shared VPC with IPv6 and private subnets (issue 12): the private route table routes
/// `::/0` to the egress-only gateway attached to the VPC, which the model does not own.
#[test]
fn shared_ipv6_private_routes_through_the_shared_egress_only_gateway() {
    let files = render_case(&golden_dir().join("shared-network-ipv6-private"));
    let tf = String::from_utf8(files["kubernetes.tf"].clone()).unwrap();
    assert!(
        !tf.contains("resource \"aws_egress_only_internet_gateway\""),
        "a shared VPC's egress-only gateway is not ours to create:\n{tf}"
    );
    let route = tf
        .split("resource \"aws_route\" ")
        .find(|r| r.contains("destination_ipv6_cidr_block = \"::/0\"") && r.contains("private-"))
        .expect("a private ::/0 route");
    assert!(
        route.contains("egress_only_gateway_id") && route.contains("\"eigw-0shared\""),
        "{route}"
    );
}
