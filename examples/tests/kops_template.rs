//! `kops toolbox template` through the built binary: values files merged, `--set`,
//! `--set-string`, snippets, template directories, `--format-yaml`, `--config-value`
//! and errors that name the template. No state store is involved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A scratch directory with two values files, snippets and two templates.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "a.yaml",
        "cluster:\n  zones: [b, a]\n  dns:\n    zone: example.com\n    private: false\nenv: dev\nx: 0\n",
    );
    write(
        d,
        "b.yaml",
        "cluster:\n  dns:\n    private: true\nenv: prod\n",
    );
    write(d, "snippets/header", "# cluster {{ .clusterName }}");
    write(
        d,
        "snippets/sub/docker.options",
        "log-driver: {{ index . \"logDriver\" | default \"json-file\" }}\nmax-size: 10m",
    );
    write(
        d,
        "tmpl/01-cluster.yaml",
        "{{ include \"header\" . }}
name: {{ .clusterName }}
env: {{ .env }}
x: {{ .x }} {{ if eq .x 1 }}one{{ end }}
s: {{ .s | quote }}
private: {{ .cluster.dns.private }}
zone: {{ .cluster.dns.zone }}
zones:
{{- range .cluster.zones }}
- {{ . }}
{{- end }}
docker:
  {{ include \"docker.options\" . | indent 2 }}
",
    );
    write(
        d,
        "tmpl/02-ig.yaml",
        "{{- range $i, $z := .cluster.zones }}
---
kind: InstanceGroup
name: nodes-{{ $z }}
index: {{ $i }}
{{- end }}
",
    );
    dir
}

fn kops(dir: &Path, args: &[&str]) -> Run {
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
    let o = c
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[track_caller]
fn ok(r: &Run) {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

const FULL: &[&str] = &[
    "toolbox",
    "template",
    "--values",
    "a.yaml",
    "--values",
    "b.yaml",
    "--set",
    "x=1",
    "--set-string",
    "s=true",
    "--snippets",
    "snippets",
    "--template",
    "tmpl",
    "--name",
    "c.example.com",
];

#[test]
fn renders_templates_with_merged_values_and_snippets() {
    let dir = setup();
    let mut args = FULL.to_vec();
    args.extend(["--output", "out.yaml"]);
    let r = kops(dir.path(), &args);
    ok(&r);
    assert_eq!(r.stdout, "");
    let out = std::fs::read_to_string(dir.path().join("out.yaml")).unwrap();
    assert_eq!(
        out,
        "# cluster c.example.com
name: c.example.com
env: prod
x: 1 one
s: \"true\"
private: true
zone: example.com
zones:
- b
- a
docker:
  log-driver: json-file
  max-size: 10m
---
kind: InstanceGroup
name: nodes-b
index: 0
---
kind: InstanceGroup
name: nodes-a
index: 1
"
    );
}

#[test]
fn format_yaml_sorts_keys_and_drops_empty_documents() {
    let dir = setup();
    let mut args = FULL.to_vec();
    args.push("--format-yaml");
    let r = kops(dir.path(), &args);
    ok(&r);
    assert_eq!(
        r.stdout,
        "docker:
  log-driver: json-file
  max-size: 10m
env: prod
name: c.example.com
private: true
s: \"true\"
x: 1 one
zone: example.com
zones:
- b
- a
---
index: 0
kind: InstanceGroup
name: nodes-b
---
index: 1
kind: InstanceGroup
name: nodes-a
"
    );
    // A document that is not YAML names its template.
    write(dir.path(), "bad.yaml", "a: [1\n");
    let r = kops(
        dir.path(),
        &[
            "toolbox",
            "template",
            "--template",
            "bad.yaml",
            "--format-yaml",
        ],
    );
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(
        r.stderr.starts_with("error: --template bad.yaml: "),
        "{}",
        r.stderr
    );
}

#[test]
fn config_value_prints_one_value() {
    let dir = setup();
    for (key, want) in [
        ("env", "prod\n"),
        ("x", "1\n"),
        ("s", "true\n"),
        ("clusterName", "c.example.com\n"),
        ("nope", "null\n"),
    ] {
        let mut args = FULL.to_vec();
        args.extend(["--config-value", key]);
        let r = kops(dir.path(), &args);
        ok(&r);
        assert_eq!(r.stdout, want, "{key}");
    }
}

/// `--name` is the template's `clusterName`, over the values'; without it, the values'
/// `clusterName` stands, and with neither it is empty.
#[test]
fn cluster_name_comes_from_the_name_flag_else_the_values() {
    let dir = setup();
    write(
        dir.path(),
        "named.yaml",
        "clusterName: from-values.example.com
",
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["toolbox", "template", "--config-value", "clusterName"];
        args.extend_from_slice(extra);
        let r = kops(dir.path(), &args);
        ok(&r);
        r.stdout
    };
    assert_eq!(
        run(&["--values", "named.yaml"]),
        "from-values.example.com\n"
    );
    assert_eq!(
        run(&["--values", "named.yaml", "--name", "flag.example.com"]),
        "flag.example.com\n"
    );
    assert_eq!(run(&["--values", "a.yaml"]), "\n");
}

#[test]
fn a_missing_key_names_the_template_and_the_key() {
    let dir = setup();
    write(dir.path(), "t/bad.yaml", "a: 1\nb: {{ .cluster.nope }}\n");
    let r = kops(
        dir.path(),
        &[
            "toolbox",
            "template",
            "--values",
            "a.yaml",
            "--template",
            "t",
        ],
    );
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        "error: --template t/bad.yaml: line 2: map has no entry for key \"nope\"\n"
    );
    assert_eq!(r.stdout, "");
    // Without --fail-on-missing the key prints as Go's <no value>.
    let r = kops(
        dir.path(),
        &[
            "toolbox",
            "template",
            "--values",
            "a.yaml",
            "--template",
            "t",
            "--fail-on-missing=false",
        ],
    );
    ok(&r);
    assert_eq!(r.stdout, "a: 1\nb: <no value>\n");
    // A values file that does not parse is named.
    write(dir.path(), "broken.yaml", "a: [1\n");
    let r = kops(
        dir.path(),
        &[
            "toolbox",
            "template",
            "--values",
            "broken.yaml",
            "--template",
            "t",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("error: --values broken.yaml: "),
        "{}",
        r.stderr
    );
}

/// A channel whose `kopsVersions` entry for the kOps release this kops emulates names
/// Kubernetes v1.33.4, which is not the newest recommendation (1.33.5): entries for a
/// newer kOps and with a bad range come first, one for any release last.
fn test_channel() -> String {
    let release = kops_model::DEFAULT_KOPS_RELEASE;
    format!(
        r#"{TEST_CHANNEL}  kopsVersions:
  - range: ">{release}"
    recommendedVersion: "9.0.0"
    kubernetesVersion: 1.99.0
  - range: "not a range"
    kubernetesVersion: 1.98.0
  - range: ">={release}"
    recommendedVersion: "{release}"
    kubernetesVersion: v1.33.4
  - range: ""
    kubernetesVersion: 1.20.0
"#
    )
}

const TEST_CHANNEL: &str = r#"spec:
  images:
  - name: owner/image-amd64
    providerID: aws
    architectureID: amd64
    kubernetesVersion: ">=1.32.0"
  - name: owner/image-arm64
    providerID: aws
    architectureID: arm64
    kubernetesVersion: ">=1.32.0"
  kubernetesVersions:
  - range: ">=1.33.0"
    recommendedVersion: 1.33.5
    requiredVersion: 1.33.0
  - range: ">=1.32.0"
    recommendedVersion: 1.32.9
    requiredVersion: 1.32.0
"#;

#[test]
fn channel_functions_read_the_channel_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "channel.yaml", &test_channel());
    write(
        d,
        "t.yaml",
        r#"up: {{ ChannelRecommendedKubernetesUpgradeVersion "1.32.3" }}
upv: {{ ChannelRecommendedKubernetesUpgradeVersion "v1.33.1" }}
same: {{ ChannelRecommendedKubernetesUpgradeVersion "1.33.7" }}
none: {{ ChannelRecommendedKubernetesUpgradeVersion "v1.20.0" }}
kops: {{ ChannelRecommendedKopsKubernetesVersion }}
amd: {{ ChannelRecommendedImage "aws" "1.33.0" "amd64" }}
arm: {{ ChannelRecommendedImage "aws" "v1.32.1" "arm64" }}
two: {{ ChannelRecommendedImage "aws" (ChannelRecommendedKopsKubernetesVersion) }}
"#,
    );
    let r = kops(
        d,
        &[
            "toolbox",
            "template",
            "--channel",
            "channel.yaml",
            "--template",
            "t.yaml",
        ],
    );
    ok(&r);
    assert_eq!(
        r.stdout,
        "up: 1.32.9
upv: 1.33.5
same: 1.33.7
none: v1.20.0
kops: 1.33.4
amd: owner/image-amd64
arm: owner/image-arm64
two: owner/image-amd64
"
    );

    // file:// works as the upgrade command's --channel does.
    let url = format!("file://{}", d.join("channel.yaml").display());
    write(d, "k.yaml", "{{ ChannelRecommendedKopsKubernetesVersion }}");
    let r = kops(
        d,
        &[
            "toolbox",
            "template",
            "--channel",
            &url,
            "--template",
            "k.yaml",
        ],
    );
    ok(&r);
    assert_eq!(r.stdout, "1.33.4\n");

    // Without --channel, the embedded channel answers for this kops' kOps release.
    let r = kops(d, &["toolbox", "template", "--template", "k.yaml"]);
    ok(&r);
    assert_eq!(r.stdout, "1.34.2\n");
}

#[test]
fn channel_function_errors_name_the_function_and_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "channel.yaml", &test_channel());
    let run = |text: &str| {
        write(d, "t.yaml", text);
        kops(
            d,
            &[
                "toolbox",
                "template",
                "--channel",
                "channel.yaml",
                "--template",
                "t.yaml",
            ],
        )
    };
    let r = run("a\n{{ ChannelRecommendedKubernetesUpgradeVersion \"one.two\" }}");
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "--template t.yaml: line 2: error calling ChannelRecommendedKubernetesUpgradeVersion:"
        ) && r.stderr.contains("\"one.two\""),
        "{}",
        r.stderr
    );
    let r = run("{{ ChannelRecommendedImage \"gce\" \"1.33.0\" \"arm64\" }}");
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("error calling ChannelRecommendedImage:")
            && r.stderr.contains("\"gce\"")
            && r.stderr.contains("\"1.33.0\"")
            && r.stderr.contains("\"arm64\""),
        "{}",
        r.stderr
    );
    let r = run("{{ ChannelRecommendedImage \"aws\" \"1.33.0\" \"s390x\" }}");
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("\"s390x\""), "{}", r.stderr);

    write(d, "empty.yaml", "spec: {}\n");
    write(d, "k.yaml", "{{ ChannelRecommendedKopsKubernetesVersion }}");
    let r = kops(
        d,
        &[
            "toolbox",
            "template",
            "--channel",
            "empty.yaml",
            "--template",
            "k.yaml",
        ],
    );
    assert_ne!(r.code, 0);
    let release = kops_model::DEFAULT_KOPS_RELEASE;
    assert!(
        r.stderr.contains(&format!(
            "error calling ChannelRecommendedKopsKubernetesVersion: the channel's kopsVersions have no entry for kOps {release}"
        )),
        "{}",
        r.stderr
    );
    // The entry for the release names no Kubernetes version: kOps takes no other entry.
    write(
        d,
        "nok8s.yaml",
        &format!(
            "{TEST_CHANNEL}  kopsVersions:\n  - range: \">={release}\"\n    recommendedVersion: \"{release}\"\n  - range: \"\"\n    kubernetesVersion: 1.20.0\n"
        ),
    );
    let r = kops(
        d,
        &[
            "toolbox",
            "template",
            "--channel",
            "nok8s.yaml",
            "--template",
            "k.yaml",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(&format!(
            "error calling ChannelRecommendedKopsKubernetesVersion: the channel's kopsVersions entry for kOps {release} (range \">={release}\") has no kubernetesVersion"
        )),
        "{}",
        r.stderr
    );

    // A --channel that cannot be read is an error naming the flag.
    let r = kops(
        d,
        &[
            "toolbox",
            "template",
            "--channel",
            "missing.yaml",
            "--template",
            "k.yaml",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--channel missing.yaml"), "{}", r.stderr);
}

#[test]
fn channel_functions_default_to_the_embedded_stable_channel() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "t.yaml",
        r#"{{ ChannelRecommendedImage "aws" "1.34.1" "amd64" }}"#,
    );
    let r = kops(d, &["toolbox", "template", "--template", "t.yaml"]);
    ok(&r);
    // The image examples/kops-cli/seed/channel.yaml names for aws amd64 >=1.32.0.
    assert_eq!(
        r.stdout,
        "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20260714\n"
    );
}

/// Sprig's regex functions through the binary: Go's `${1}` expansion, and a bad regex is
/// an error naming the template, the line and the function, with exit 1.
#[test]
fn regex_functions_render_and_a_bad_regex_names_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |text: &str| {
        write(d, "t.yaml", text);
        kops(d, &["toolbox", "template", "--template", "t.yaml"])
    };
    let r = run(
        "{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"${1}W\" }} {{ regexMatch \"^[0-9]+$\" \"123\" }}",
    );
    ok(&r);
    assert_eq!(r.stdout, "-W-xxW- true\n");
    let r = run("a\n{{ regexFind \"a(b\" \"ab\" }}");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--template t.yaml: line 2: error calling regexFind:")
            && r.stderr.contains("a(b"),
        "{}",
        r.stderr
    );
}
