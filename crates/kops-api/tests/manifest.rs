//! Manifest decoding: strictness, error paths, formats, robustness.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kops_api::Error;
use kops_api::manifest::{self, Object};
use proptest::prelude::*;

const CLUSTER: &str = "apiVersion: kops/v1alpha2
kind: Cluster
metadata:
  name: demo.example.com
spec:
  kubernetesVersion: 1.30
  cloudProvider: aws
  networking:
    cilium: {}
  kubeAPIServer:
    cpuRequest: 1
---
# a comment-only document is skipped
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: nodes
spec:
  role: Node
  minSize: 2
";

fn parse_err(text: &str) -> Error {
    manifest::parse(text.as_bytes(), "in.yaml").unwrap_err()
}

#[test]
fn reads_multi_document_yaml_and_legacy_api_version() {
    let objects = manifest::parse(CLUSTER.as_bytes(), "in.yaml").unwrap();
    assert_eq!(objects.len(), 2);
    let Object::Cluster(c) = &objects[0] else {
        panic!("not a cluster")
    };
    assert_eq!(c.api_version, "kops.k8s.io/v1alpha2");
    // An unquoted 1.30 stays the text the user wrote.
    assert_eq!(c.spec.kubernetes_version.as_deref(), Some("1.30"));
    assert!(c.spec.networking.as_ref().unwrap().cilium.is_some());
    let q = c
        .spec
        .kube_api_server
        .as_ref()
        .unwrap()
        .cpu_request
        .as_ref()
        .unwrap();
    assert_eq!(q.as_str(), "1");
    let Object::InstanceGroup(ig) = &objects[1] else {
        panic!("not an instance group")
    };
    assert_eq!(ig.spec.min_size, Some(2));
}

#[test]
fn unknown_field_names_its_path_document_and_source() {
    let text = CLUSTER.replace("    cilium: {}", "    cilium: {}\n    foo: 1");
    let err = parse_err(&text);
    let Error::Parse {
        file,
        document,
        path,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(file, "in.yaml");
    assert_eq!(*document, 1);
    assert_eq!(path, "spec.networking.foo");
    // `foo` is on line 10 of the input.
    assert_eq!(message, "unknown field (line 10, column 5)");
    assert_eq!(
        err.to_string(),
        "in.yaml: document 1: spec.networking.foo: unknown field (line 10, column 5)"
    );

    let text = CLUSTER.replace(
        "  minSize: 2",
        "  minSize: 2\n  subnets:\n  - a\n  - {x: 1}",
    );
    let err = parse_err(&text);
    let Error::Parse { document, path, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*document, 3);
    assert_eq!(path, "spec.subnets[1]");

    // A later document's positions are the file's too (its parse is retried with the
    // lines before it once it fails).
    let text = CLUSTER.replace("  minSize: 2", "  minSize: 2\n  bar: 1");
    let err = parse_err(&text);
    let Error::Parse {
        document, message, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*document, 3);
    // `bar` is on line 22 of the input.
    assert_eq!(message, "unknown field (line 22, column 3)");
}

#[test]
fn wrong_type_names_its_path() {
    let text = CLUSTER.replace("minSize: 2", "minSize: lots");
    let err = parse_err(&text);
    let Error::Parse { path, message, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(path, "spec.minSize");
    assert!(message.contains("i32"), "{message}");
}

/// A value typed into the wrong field may be a secret: errors name the field
/// and the expected type, never the value itself.
#[test]
fn wrong_type_errors_do_not_echo_the_value() {
    for (from, to) in [
        ("minSize: 2", "minSize: s3cr3t-t0ken-value"),
        ("minSize: 2", "minSize: [s3cr3t-t0ken-value]"),
        ("minSize: 2", "minSize: {s3cr3t-t0ken-value: 1}"),
        ("minSize: 2", "minSize: \"s3cr3t-t0ken-value\""),
    ] {
        let text = CLUSTER.replace(from, to);
        assert_ne!(text, CLUSTER);
        let err = parse_err(&text);
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("s3cr3t"), "{to}: {shown}");
    }
}

#[test]
fn unsupported_kops_kind_and_missing_kind_are_errors() {
    let err = parse_err("apiVersion: kops.k8s.io/v1alpha2\nkind: Keyset\n");
    assert!(
        matches!(err, Error::UnsupportedKind { ref kind, .. } if kind == "Keyset"),
        "{err}"
    );
    let err = parse_err("apiVersion: kops.k8s.io/v1alpha2\nmetadata: {}\n");
    assert!(
        matches!(err, Error::Parse { ref path, .. } if path == "kind"),
        "{err}"
    );
}

#[test]
fn other_api_groups_are_kept_untyped() {
    let text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  qps: 500\n";
    let objects = manifest::parse(text.as_bytes(), "x").unwrap();
    let Object::Other(o) = &objects[0] else {
        panic!()
    };
    assert_eq!(o.kind, "KubeSchedulerConfiguration");
    assert_eq!(o.value["clientConnection"]["qps"], 500);
    let yaml = manifest::to_yaml(&objects).unwrap();
    assert_eq!(manifest::parse(yaml.as_bytes(), "y").unwrap(), objects);
}

#[test]
fn reads_json_object_array_and_list() {
    let objects = manifest::parse(CLUSTER.as_bytes(), "in.yaml").unwrap();
    let json = manifest::to_json(&objects).unwrap();
    assert!(json.trim_start().starts_with('['));
    assert_eq!(manifest::parse(json.as_bytes(), "j").unwrap(), objects);
    let single = manifest::to_json(&objects[..1]).unwrap();
    assert_eq!(
        manifest::parse(single.as_bytes(), "j").unwrap(),
        objects[..1].to_vec()
    );
    let list = format!("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":{json}}}");
    assert_eq!(manifest::parse(list.as_bytes(), "j").unwrap(), objects);
    let bad = r#"{"apiVersion":"kops.k8s.io/v1alpha2","kind":"Cluster","spec":{"api":{"dns":{},"bogus":true}}}"#;
    let err = manifest::parse(bad.as_bytes(), "j").unwrap_err();
    assert_eq!(
        err.to_string(),
        "j: document 1: spec.api.bogus: unknown field"
    );
}

#[test]
fn invalid_utf8_and_invalid_yaml_are_errors() {
    assert!(manifest::parse(&[0xff, 0xfe, 0x00], "bin").is_err());
    let err = parse_err("apiVersion: [unclosed\n");
    assert!(matches!(err, Error::Parse { .. }));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = manifest::parse(&bytes, "fuzz");
    }

    #[test]
    fn parse_never_panics_on_yamlish_text(
        text in "(apiVersion: kops.k8s.io/v1alpha2\nkind: (Cluster|InstanceGroup)\n)?([a-zA-Z:{}\\[\\]\\-\\n ,\"'|>&*!#0-9.]{0,200})"
    ) {
        let _ = manifest::parse(text.as_bytes(), "fuzz");
    }

    #[test]
    fn parse_never_panics_on_mutated_manifests(pos in 0usize..400, byte in any::<u8>(), cut in 0usize..400) {
        let mut bytes = CLUSTER.as_bytes().to_vec();
        let p = pos % bytes.len();
        bytes[p] = byte;
        bytes.truncate(bytes.len() - cut % bytes.len());
        let _ = manifest::parse(&bytes, "fuzz");
    }
}
