//! kops_model::pki: the keysets a spec needs, checked with `openssl`; kOps'
//! fixture keysets read back and give kOps' nodeup PKI, keyset.yaml and
//! keys.json; rotation changes what nodes trust at each step; private keys
//! never show in Debug or Display.
//!
//! The tests against kOps' files read `../shared`: under `CI=true` a missing
//! `../shared` fails them; elsewhere they print that they skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use kops_api::internal::Cluster;
use kops_api::keyset::{Keyset, KeysetType};
use kops_api::manifest::{self, Object};
use kops_model::pki::{self, NodeRole, PrivateKeyPem};
use serde_json::Value;

#[path = "../../../support/shared.rs"]
mod shared_dir;

fn shared(rel: &str) -> Option<PathBuf> {
    shared_dir::require("pki", rel)
}

fn cluster(yaml: &str) -> Cluster {
    for o in manifest::parse(yaml.as_bytes(), "cluster.yaml").unwrap() {
        if let Object::Cluster(c) = o {
            return Cluster::try_from(&c).unwrap();
        }
    }
    panic!("no cluster in manifest")
}

const SPEC: &str = r#"
apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata: {name: pki.example.com}
spec:
  cloudProvider: aws
  kubernetesVersion: v1.34.0
  networking: {cilium: {etcdManaged: true}}
  etcdClusters:
  - {name: main, etcdMembers: [{name: a, instanceGroup: cp}]}
  - {name: events, etcdMembers: [{name: a, instanceGroup: cp}]}
  - {name: cilium, etcdMembers: [{name: a, instanceGroup: cp}]}
  serviceAccountIssuerDiscovery:
    discoveryService: {url: "https://discovery.example.com"}
"#;

fn openssl(args: &[&str]) -> (bool, String) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("run openssl");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn every_keyset_of_the_spec_is_an_rsa_2048_ca_that_openssl_verifies() {
    let c = cluster(SPEC);
    assert_eq!(
        pki::keyset_names(&c),
        [
            "kubernetes-ca",
            "discovery-ca",
            "apiserver-aggregator-ca",
            "service-account",
            "etcd-manager-ca-main",
            "etcd-peers-ca-main",
            "etcd-clients-ca",
            "etcd-manager-ca-events",
            "etcd-peers-ca-events",
            "etcd-manager-ca-cilium",
            "etcd-peers-ca-cilium",
            "etcd-clients-ca-cilium",
        ]
    );
    let now = SystemTime::now();
    let mut keysets = BTreeMap::new();
    let created = pki::ensure_keysets(&c, &mut keysets, now).unwrap();
    assert_eq!(created, pki::keyset_names(&c));
    // Idempotent: a second call creates nothing and changes nothing.
    let before = keysets.clone();
    assert!(
        pki::ensure_keysets(&c, &mut keysets, now)
            .unwrap()
            .is_empty()
    );
    assert_eq!(keysets, before);

    let dir = tempfile::tempdir().unwrap();
    for (name, ks) in &keysets {
        let primary = ks.primary().expect("primary");
        let id = primary.id.clone().unwrap();
        let crt = dir.path().join(format!("{name}.crt"));
        let key = dir.path().join(format!("{name}.key"));
        std::fs::write(&crt, primary.public_material.as_ref().unwrap()).unwrap();
        std::fs::write(&key, primary.private_material.as_ref().unwrap()).unwrap();
        let crt = crt.to_str().unwrap();
        let key = key.to_str().unwrap();

        let (ok, text) = openssl(&["x509", "-in", crt, "-noout", "-text"]);
        assert!(ok, "{name}: {text}");
        assert!(text.contains("Public-Key: (2048 bit)"), "{name}: {text}");
        assert!(
            text.contains("Signature Algorithm: sha256WithRSAEncryption"),
            "{name}"
        );
        assert!(
            text.contains(&format!("Subject: CN = {name}\n")),
            "{name}: {text}"
        );
        assert!(
            text.contains(&format!("Issuer: CN = {name}\n")),
            "{name}: {text}"
        );
        assert!(
            text.contains("X509v3 Basic Constraints: critical\n                CA:TRUE\n"),
            "{name}: {text}"
        );
        assert!(
            text.contains(
                "X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n"
            ),
            "{name}: {text}"
        );
        assert!(
            !text.contains("Extended Key Usage"),
            "{name}: CAs have no EKU"
        );
        assert!(text.contains("X509v3 Subject Key Identifier"), "{name}");

        let (ok, text) = openssl(&["verify", "-CAfile", crt, crt]);
        assert!(ok && text.contains(": OK"), "{name}: {text}");

        // The key is PKCS#1 (kOps' `RSA PRIVATE KEY`) and belongs to the certificate.
        let pem = String::from_utf8(primary.private_material.clone().unwrap()).unwrap();
        assert!(
            pem.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"),
            "{name}"
        );
        let (ok, text) = openssl(&["rsa", "-in", key, "-check", "-noout"]);
        assert!(ok && text.contains("RSA key ok"), "{name}: {text}");
        let (_, m1) = openssl(&["x509", "-in", crt, "-noout", "-modulus"]);
        let (_, m2) = openssl(&["rsa", "-in", key, "-noout", "-modulus"]);
        assert_eq!(m1, m2, "{name}: key does not match certificate");

        // kOps' id rule: the id is the serial, which is BuildPKISerial(now).
        let (_, serial) = openssl(&["x509", "-in", crt, "-noout", "-serial"]);
        let hex = serial.trim().trim_start_matches("serial=");
        let cert = pki::Certificate::from_pem(primary.public_material.as_ref().unwrap()).unwrap();
        assert_eq!(cert.serial.to_string(), id, "{name}");
        let hex_ours: String = cert
            .serial
            .to_be_bytes()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(
            hex.trim_start_matches('0'),
            hex_ours.trim_start_matches('0')
        );
        let nanos = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let serial_nanos = id.parse::<u128>().unwrap() >> 32;
        assert_eq!(serial_nanos, nanos, "{name}: serial time");
        // Validity: 48 hours back, 3650 days forward.
        let now_s = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert_eq!(cert.not_before, now_s - 48 * 3600, "{name}");
        assert_eq!(cert.not_after, now_s + 3650 * 86400, "{name}");
        assert!(cert.is_ca);
    }
}

/// kOps' fixture keysets (as its integration harness stores them), read
/// through our id rules.
fn fixture_keysets(with_cilium: bool) -> Option<BTreeMap<String, Keyset>> {
    let dir = shared("conformance/fixtures/keysets")?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.strip_suffix(".primary.crt").map(str::to_string)
        })
        .collect();
    names.sort();
    let now = SystemTime::now();
    let mut out = BTreeMap::new();
    for name in names {
        if name.ends_with("-cilium") && !with_cilium {
            continue;
        }
        let mut ks = Keyset::new(&name, KeysetType::Keypair);
        for (which, primary) in [("primary", true), ("secondary", false)] {
            let crt = std::fs::read_to_string(dir.join(format!("{name}.{which}.crt"))).unwrap();
            let key = std::fs::read_to_string(dir.join(format!("{name}.{which}.key"))).unwrap();
            let key = PrivateKeyPem::new(key).unwrap();
            let id = pki::add_item(&mut ks, &crt, Some(&key), primary, now).unwrap();
            let cert = pki::Certificate::from_pem(crt.as_bytes()).unwrap();
            assert_eq!(id, cert.serial.to_string(), "{name} {which}: id = serial");
            // Our PEM of the certificate is kOps' (Go's pem.Encode).
            assert_eq!(cert.to_pem(), crt, "{name} {which}");
        }
        out.insert(name, ks);
    }
    Some(out)
}

#[test]
fn fixture_keysets_read_back_and_are_written_in_kops_format() {
    let Some(keysets) = fixture_keysets(true) else {
        return;
    };
    assert_eq!(keysets.len(), 13);
    let dir = shared("conformance/fixtures/keysets").unwrap();
    let b64 = |p: &str| {
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(dir.join(p)).unwrap())
    };
    for (name, ks) in &keysets {
        let text = ks.to_yaml().unwrap();
        let p = pki::Certificate::from_pem(
            &std::fs::read(dir.join(format!("{name}.primary.crt"))).unwrap(),
        )
        .unwrap();
        let s = pki::Certificate::from_pem(
            &std::fs::read(dir.join(format!("{name}.secondary.crt"))).unwrap(),
        )
        .unwrap();
        // kOps' Keyset format (upup/pkg/fi/vfs_castore_test.go): keys sorted
        // oldest id first, item fields in go-yaml order, ids quoted.
        let want = format!(
            "apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\nmetadata:\n  name: {name}\nspec:\n  keys:\n  - id: \"{}\"\n    privateMaterial: {}\n    publicMaterial: {}\n  - id: \"{}\"\n    privateMaterial: {}\n    publicMaterial: {}\n  primaryId: \"{}\"\n  type: Keypair\n",
            p.serial,
            b64(&format!("{name}.primary.key")),
            b64(&format!("{name}.primary.crt")),
            s.serial,
            b64(&format!("{name}.secondary.key")),
            b64(&format!("{name}.secondary.crt")),
            p.serial,
        );
        assert_eq!(text, want, "{name}");
        // It reads back (our reader and the state store's serde reader).
        assert_eq!(&Keyset::from_yaml(&text, "keyset.yaml").unwrap(), ks);
        let via_saphyr: Keyset = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(&via_saphyr, ks);
    }
    // A distrusted item gets kOps' RFC 3339 timestamp, first in its item.
    let mut ks = keysets["kubernetes-ca"].clone();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    // Nothing is older than the (older) fixture primary until the newer one is promoted.
    assert!(pki::distrust_keypair(&mut ks, &[], t).unwrap().is_empty());
    pki::promote_keypair(&mut ks, None).unwrap();
    let done = pki::distrust_keypair(&mut ks, &[], t).unwrap();
    assert_eq!(done, ["6982820025135291416230495506"]);
    assert!(ks
        .to_yaml()
        .unwrap()
        .contains("  keys:\n  - distrustTimestamp: \"2023-11-14T22:13:20Z\"\n    id: \"6982820025135291416230495506\"\n"));
}

/// The role of every instance group of a case, by name.
fn roles(case: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read(case.join("in-v1alpha2.yaml")).unwrap();
    manifest::parse(&text, "in-v1alpha2.yaml")
        .unwrap()
        .into_iter()
        .filter_map(|o| match o {
            Object::InstanceGroup(ig) => Some((
                ig.metadata.name.clone().unwrap_or_default(),
                ig.spec.role.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn nodeup_pki_from_fixture_keysets_is_kops_for_every_case() {
    let Some(cases) = shared("conformance/cases") else {
        return;
    };
    let (mut checked, mut equal) = (0, 0);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for case in dirs {
        let case_yaml = std::fs::read_to_string(case.join("case.yaml")).unwrap();
        let cilium = case_yaml.contains("ciliumEtcd: true");
        let keysets = fixture_keysets(cilium).unwrap();
        let c = cluster(&std::fs::read_to_string(case.join("in-v1alpha2.yaml")).unwrap());
        if c.spec
            .service_account_issuer_discovery
            .as_ref()
            .and_then(|d| d.discovery_service.as_ref())
            .is_some()
        {
            // kOps generates discovery-ca randomly there (no fixture).
            continue;
        }
        let roles = roles(&case);
        let data = case.join("expected/data");
        for entry in std::fs::read_dir(&data).unwrap() {
            let path = entry.unwrap().path();
            let file = path.file_name().unwrap().to_str().unwrap().to_string();
            let Some(ig) = file
                .split_once("_s3_object_nodeupconfig-")
                .and_then(|(_, rest)| rest.strip_suffix("_content"))
            else {
                continue;
            };
            let role = NodeRole::from_role(&roles[ig]).unwrap();
            let golden =
                kops_api::yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let ours = pki::nodeup_pki(&c, role, &keysets).unwrap();
            let cas: Value = serde_json::to_value(&ours.cas).unwrap();
            let ids: Value = serde_json::to_value(&ours.keypair_ids).unwrap();
            checked += 1;
            let sa = golden
                .pointer("/APIServerConfig/ServiceAccountPublicKeys")
                .and_then(Value::as_str)
                .map(str::to_string);
            if golden["CAs"] == cas
                && golden["KeypairIDs"] == ids
                && sa == ours.service_account_public_keys
            {
                equal += 1;
            } else {
                panic!(
                    "{}: nodeup PKI differs\nCAs ours {:?}\nKeypairIDs golden {}\nours {}",
                    path.display(),
                    ours.cas.keys().collect::<Vec<_>>(),
                    golden["KeypairIDs"],
                    ids
                );
            }
            // Instance groups without an API server get kubernetes-ca through the boot config.
            if role == NodeRole::Node {
                let ca = ours.config_server_ca_certificates.as_deref().unwrap();
                assert_eq!(ca.matches("BEGIN CERTIFICATE").count(), 2);
                let ud = std::fs::read_dir(&data)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .find(|p| {
                        let n = p.file_name().unwrap().to_str().unwrap();
                        n.ends_with("_user_data") && n.contains(&format!("_{ig}."))
                    });
                if let Some(ud) = ud {
                    let text = std::fs::read_to_string(ud).unwrap();
                    let start = "cat > conf/kube_env.yaml << '__EOF_KUBE_ENV'\n";
                    if let Some(i) = text.find(start) {
                        let body = &text[i + start.len()..];
                        let body = &body[..body.find("\n__EOF_KUBE_ENV").unwrap()];
                        let boot = kops_api::yaml::from_str(body).unwrap();
                        assert_eq!(
                            boot.pointer("/ConfigServer/CACertificates")
                                .and_then(Value::as_str),
                            Some(ca),
                            "{ig}"
                        );
                    }
                }
            }
        }
    }
    println!("nodeup PKI equal to kOps: {equal}/{checked} nodeup configs");
    assert!(checked > 100, "only {checked} nodeup configs checked");
}

#[test]
fn irsa_documents_from_fixture_keys_are_kops() {
    let Some(keysets) = fixture_keysets(false) else {
        return;
    };
    let case = shared("conformance/cases/aws-lb-controller/expected/data").unwrap();
    let keys = std::fs::read_to_string(case.join("aws_s3_object_keys.json_content")).unwrap();
    let discovery =
        std::fs::read_to_string(case.join("aws_s3_object_discovery.json_content")).unwrap();
    assert_eq!(
        pki::jwks_json(&keysets["service-account"]).unwrap(),
        keys.trim_end()
    );
    assert_eq!(
        pki::oidc_discovery_json("https://discovery.example.com/minimal.example.com"),
        discovery.trim_end()
    );
    // Distrusted keys leave keys.json.
    let mut sa = keysets["service-account"].clone();
    pki::distrust_keypair(&mut sa, &["2".to_string()], SystemTime::now()).unwrap_err();
    let mut sa2 = sa.clone();
    pki::promote_keypair(&mut sa2, Some("4")).unwrap();
    pki::distrust_keypair(&mut sa2, &["2".to_string()], SystemTime::now()).unwrap();
    let jwks: Value = serde_json::from_str(&pki::jwks_json(&sa2).unwrap()).unwrap();
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);
    sa.spec
        .keys
        .iter_mut()
        .for_each(|k| k.distrust_timestamp = Some("2024-01-01T00:00:00Z".into()));
    assert_eq!(pki::jwks_json(&sa).unwrap(), "{\n\"keys\": null\n}");
}

#[test]
fn create_promote_distrust_change_what_nodes_trust_at_each_step() {
    let c = cluster(SPEC);
    let t0 = SystemTime::now();
    let mut keysets = BTreeMap::new();
    pki::ensure_keysets(&c, &mut keysets, t0).unwrap();
    let certs = |p: &pki::NodeupPki, name: &str| {
        p.cas
            .get(name)
            .map(|s| s.matches("BEGIN CERTIFICATE").count())
    };
    let step = |keysets: &BTreeMap<String, Keyset>| {
        (
            pki::nodeup_pki(&c, NodeRole::ControlPlane, keysets).unwrap(),
            pki::nodeup_pki(&c, NodeRole::Node, keysets).unwrap(),
        )
    };
    let (cp0, node0) = step(&keysets);
    let old_id = keysets["kubernetes-ca"].spec.primary_id.clone().unwrap();
    assert_eq!(certs(&cp0, "kubernetes-ca"), Some(1));
    assert_eq!(cp0.keypair_ids["kubernetes-ca"], old_id);
    assert_eq!(node0.keypair_ids["kubernetes-ca"], old_id);
    assert!(
        !node0.cas.contains_key("kubernetes-ca"),
        "nodes get kubernetes-ca via ConfigServer"
    );
    assert_eq!(
        node0
            .config_server_ca_certificates
            .as_ref()
            .unwrap()
            .matches("BEGIN CERTIFICATE")
            .count(),
        1
    );
    assert_eq!(certs(&node0, "etcd-clients-ca-cilium"), Some(1));
    assert!(cp0.keypair_ids.contains_key("discovery-ca"));
    assert_eq!(
        cp0.service_account_public_keys
            .as_ref()
            .unwrap()
            .matches("BEGIN RSA PUBLIC KEY")
            .count(),
        1
    );

    // 1. create: a new secondary is trusted, the primary id stays.
    let t1 = t0 + Duration::from_secs(60);
    let ks = keysets.get_mut("kubernetes-ca").unwrap();
    let new_id = pki::create_keypair(ks, false, t1).unwrap();
    assert_ne!(new_id, old_id);
    let new_cert =
        pki::Certificate::from_pem(ks.item(&new_id).unwrap().public_material.as_ref().unwrap())
            .unwrap();
    assert_eq!(
        new_cert.subject,
        format!("SERIALNUMBER={new_id},CN=kubernetes-ca")
    );
    let sa = keysets.get_mut("service-account").unwrap();
    let sa_new = pki::create_keypair(sa, false, t1).unwrap();
    let (cp1, node1) = step(&keysets);
    assert_eq!(certs(&cp1, "kubernetes-ca"), Some(2));
    assert_eq!(cp1.keypair_ids["kubernetes-ca"], old_id);
    assert_eq!(
        node1
            .config_server_ca_certificates
            .as_ref()
            .unwrap()
            .matches("BEGIN CERTIFICATE")
            .count(),
        2
    );
    assert_eq!(
        cp1.service_account_public_keys
            .as_ref()
            .unwrap()
            .matches("BEGIN RSA PUBLIC KEY")
            .count(),
        2
    );
    // The old certificate comes first (oldest id first).
    let first = cp1.cas["kubernetes-ca"]
        .split("-----END CERTIFICATE-----\n")
        .next()
        .unwrap()
        .to_string()
        + "-----END CERTIFICATE-----\n";
    assert_eq!(
        first,
        pki::trusted_certificates(&keysets["kubernetes-ca"]).unwrap()[..first.len()]
    );
    assert!(cp1.cas["kubernetes-ca"].ends_with(&new_cert.to_pem()));
    // Promoting nothing newer reports that.
    assert_eq!(
        pki::promote_keypair(keysets.get_mut("apiserver-aggregator-ca").unwrap(), None).unwrap(),
        None
    );

    // 2. promote: the new item is primary; both still trusted.
    let ks = keysets.get_mut("kubernetes-ca").unwrap();
    assert_eq!(
        pki::promote_keypair(ks, None).unwrap(),
        Some(new_id.clone())
    );
    pki::promote_keypair(keysets.get_mut("service-account").unwrap(), None).unwrap();
    let (cp2, node2) = step(&keysets);
    assert_eq!(cp2.keypair_ids["kubernetes-ca"], new_id);
    assert_eq!(node2.keypair_ids["kubernetes-ca"], new_id);
    assert_eq!(cp2.keypair_ids["service-account"], sa_new);
    assert_eq!(certs(&cp2, "kubernetes-ca"), Some(2));
    assert_ne!(cp2, cp1);

    // 3. distrust: the old item leaves the trusted certificates and keys.
    let t3 = t1 + Duration::from_secs(60);
    let ks = keysets.get_mut("kubernetes-ca").unwrap();
    assert!(
        pki::distrust_keypair(ks, std::slice::from_ref(&new_id), t3).is_err(),
        "the primary cannot be distrusted"
    );
    assert_eq!(
        pki::distrust_keypair(ks, &[], t3).unwrap(),
        std::slice::from_ref(&old_id)
    );
    assert_eq!(
        pki::distrust_keypair(ks, &[], t3).unwrap(),
        Vec::<String>::new()
    );
    pki::distrust_keypair(keysets.get_mut("service-account").unwrap(), &[], t3).unwrap();
    let (cp3, node3) = step(&keysets);
    assert_eq!(certs(&cp3, "kubernetes-ca"), Some(1));
    assert_eq!(cp3.cas["kubernetes-ca"], new_cert.to_pem());
    assert_eq!(
        node3.config_server_ca_certificates.as_deref(),
        Some(new_cert.to_pem().as_str())
    );
    assert_eq!(cp3.keypair_ids["kubernetes-ca"], new_id);
    assert_eq!(
        cp3.service_account_public_keys
            .as_ref()
            .unwrap()
            .matches("BEGIN RSA PUBLIC KEY")
            .count(),
        1
    );
    let jwks: Value =
        serde_json::from_str(&pki::jwks_json(&keysets["service-account"]).unwrap()).unwrap();
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);

    // `kops get keypairs` lists the trusted items, and the distrusted one on request.
    let rows = pki::list_keypairs(&keysets, &["kubernetes-ca".into()], false).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].is_primary && rows[0].has_private_key);
    let rows = pki::list_keypairs(&keysets, &["kubernetes-ca".into()], true).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, old_id);
    assert!(rows[0].distrust_timestamp.is_some());

    // Trust it again: back in the trusted set.
    pki::trust_keypair(
        keysets.get_mut("kubernetes-ca").unwrap(),
        std::slice::from_ref(&old_id),
    )
    .unwrap();
    assert_eq!(certs(&step(&keysets).0, "kubernetes-ca"), Some(2));
}

#[test]
fn kops_id_rules_for_added_items() {
    let now = SystemTime::now();
    let mut ks = pki::new_keyset("kubernetes-ca", now).unwrap();
    let primary = ks.spec.primary_id.clone().unwrap();
    // A secondary must have a primary; a primary must have a key.
    // One above the primary's serial: newer than the primary, and still a serial
    // BuildPKISerial could give at `now`.
    let newer = pki::Serial::from(primary.parse::<u128>().unwrap() + 1);
    let other = pki::issue_ca("kubernetes-ca", false, newer, now).unwrap();
    let mut empty = Keyset::new("kubernetes-ca", KeysetType::Keypair);
    assert!(
        pki::add_item(
            &mut empty,
            &other.certificate_pem,
            Some(&other.private_key),
            false,
            now
        )
        .is_err()
    );
    assert!(pki::add_item(&mut empty, &other.certificate_pem, None, true, now).is_err());
    assert!(
        pki::create_keypair(&mut empty, false, now).is_err(),
        "first keypair must be primary"
    );
    // A certificate-only item newer than the primary gets the smallest free id, 0.
    let id = pki::add_item(&mut ks, &other.certificate_pem, None, false, now).unwrap();
    assert_eq!(id, "0");
    assert_eq!(
        ks.spec.keys[0].id.as_deref(),
        Some("0"),
        "sorts before the primary"
    );
    assert_eq!(ks.spec.primary_id.as_deref(), Some(primary.as_str()));
    // A primary whose serial is not above the highest id gets a fresh id.
    let old = pki::issue_ca("kubernetes-ca", false, pki::Serial::from(5u128), now).unwrap();
    let id = pki::add_item(
        &mut ks,
        &old.certificate_pem,
        Some(&old.private_key),
        true,
        now,
    )
    .unwrap();
    assert_ne!(id, "5");
    assert!(pki::Serial::from_decimal(&id).unwrap() > pki::Serial::from_decimal(&primary).unwrap());
    // Non-rotatable keysets are refused.
    let mut kubelet = Keyset::new("kubelet", KeysetType::Keypair);
    assert!(pki::create_keypair(&mut kubelet, true, now).is_err());
}

#[test]
fn private_keys_never_show_in_debug_or_display() {
    let now = SystemTime::now();
    let ca = pki::issue_ca("service-account", false, pki::build_pki_serial(now), now).unwrap();
    let key_pem = ca.private_key.expose_pem().to_string();
    let key_body: String = key_pem.lines().nth(1).unwrap().to_string();
    let mut ks = pki::new_keyset("service-account", now).unwrap();
    pki::create_keypair(&mut ks, false, now).unwrap();
    let mut keysets = BTreeMap::new();
    keysets.insert("service-account".to_string(), ks.clone());
    let listing = pki::list_keypairs(&keysets, &[], true).unwrap();
    let stored_bodies: Vec<String> = ks
        .spec
        .keys
        .iter()
        .map(|k| {
            String::from_utf8(k.private_material.clone().unwrap())
                .unwrap()
                .lines()
                .nth(1)
                .unwrap()
                .to_string()
        })
        .collect();
    let b64_bodies: Vec<String> = ks
        .spec
        .keys
        .iter()
        .map(|k| {
            base64::engine::general_purpose::STANDARD.encode(k.private_material.as_ref().unwrap())
                [..40]
                .to_string()
        })
        .collect();
    let dumps = [
        format!("{:?}", ca),
        format!("{:#?}", ca),
        format!("{}", ca.private_key),
        format!("{:?}", ca.private_key),
        format!("{:?}", ks),
        format!("{:#?}", ks.spec.keys),
        format!("{:?}", listing),
        format!("{:?}", keysets),
    ];
    for d in &dumps {
        assert!(!d.contains("PRIVATE KEY"), "{d}");
        assert!(!d.contains(&key_body), "{d}");
        for b in stored_bodies.iter().chain(&b64_bodies) {
            assert!(!d.contains(b.as_str()), "{d}");
        }
    }
    assert!(PrivateKeyPem::new("not a key").is_err());
    // Errors name the keyset, never the key.
    let mut broken = ks.clone();
    broken.spec.keys[0].public_material = Some(b"garbage".to_vec());
    let err = pki::distrust_keypair(&mut broken, &[], now)
        .map(|_| ())
        .and_then(|_| pki::public_keys_pem(&broken).map(|_| ()));
    if let Err(e) = err {
        let msg = e.to_string();
        assert!(msg.contains("keyset service-account"), "{msg}");
        assert!(!msg.contains("PRIVATE"), "{msg}");
    } else {
        panic!("a broken certificate must be an error");
    }
}
