//! The provider driven by the real `terraform` binary (`dev_overrides`, no registry),
//! on moto (`KOPS_TEST_S3_ENDPOINT`, which `scripts/test` starts) with an `s3://` store.
//! Without terraform or moto the tests skip, saying why; with
//! `KOPS_TEST_REQUIRE_EMULATORS=1` they fail instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An image moto knows.
const MOTO_AMI: &str = "ami-1e749f67";
const REGION: &str = "ap-southeast-2";
const ZONE: &str = "tf.example";

fn require() -> bool {
    std::env::var("KOPS_TEST_REQUIRE_EMULATORS").is_ok_and(|v| v == "1")
}

/// moto's endpoint and the terraform binary, or `None` (skip).
fn setup() -> Option<(String, String)> {
    let moto = std::env::var("KOPS_TEST_S3_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty());
    let terraform = which("terraform");
    match (moto, terraform) {
        (Some(m), Some(t)) => Some((m.trim_end_matches('/').to_string(), t)),
        (m, t) => {
            assert!(
                !require(),
                "KOPS_TEST_REQUIRE_EMULATORS=1 but moto ({m:?}) or terraform ({t:?}) is missing"
            );
            eprintln!("skipping: moto (KOPS_TEST_S3_ENDPOINT) or terraform is missing");
            None
        }
    }
}

fn which(binary: &str) -> Option<String> {
    let path = std::env::var("PATH").ok()?;
    std::env::split_paths(&path)
        .map(|d| d.join(binary))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}

/// Runs a boto3 script against moto; its stdout.
fn boto(endpoint: &str, script: &str, args: &[&str]) -> String {
    let prelude = format!(
        "import boto3, json, sys\nargs = sys.argv[1:]\n\
         def client(name, region='{REGION}'):\n    \
         return boto3.client(name, region_name=region, endpoint_url='{endpoint}', \
         aws_access_key_id='testing', aws_secret_access_key='testing')\n"
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "boto3 script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn prepare(endpoint: &str, bucket: &str) {
    boto(
        endpoint,
        "client('s3', 'us-east-1').create_bucket(Bucket=args[0])\n\
         r53 = client('route53')\n\
         if not [z for z in r53.list_hosted_zones()['HostedZones'] if z['Name'] == args[1] + '.']:\n    \
         r53.create_hosted_zone(Name=args[1] + '.', CallerReference='tf-' + args[0])\n",
        &[bucket, ZONE],
    );
}

/// What moto holds of `cluster`, by kind (empty kinds left out), as text.
fn leftovers(endpoint: &str, cluster: &str) -> String {
    boto(
        endpoint,
        "cluster = args[0]\n\
         ec2 = client('ec2')\n\
         tag = [{'Name': 'tag:KubernetesCluster', 'Values': [cluster]}]\n\
         out = {}\n\
         def put(kind, items):\n    \
         if items: out[kind] = sorted(items)\n\
         put('vpc', [v['VpcId'] for v in ec2.describe_vpcs(Filters=tag)['Vpcs']])\n\
         put('subnet', [s['SubnetId'] for s in ec2.describe_subnets(Filters=tag)['Subnets']])\n\
         put('security group', [g['GroupId'] for g in ec2.describe_security_groups(Filters=tag)['SecurityGroups']])\n\
         put('launch template', [t['LaunchTemplateName'] for t in ec2.describe_launch_templates()['LaunchTemplates'] if t['LaunchTemplateName'].endswith(cluster)])\n\
         put('instance', [i['InstanceId'] for r in ec2.describe_instances(Filters=tag)['Reservations'] for i in r['Instances'] if i['State']['Name'] not in ('terminated', 'shutting-down')])\n\
         asg = client('autoscaling')\n\
         put('autoscaling group', [g['AutoScalingGroupName'] for g in asg.describe_auto_scaling_groups()['AutoScalingGroups'] if g['AutoScalingGroupName'].endswith(cluster)])\n\
         print(json.dumps(out, sort_keys=True))\n",
        &[cluster],
    )
    .trim()
    .to_string()
}

/// The autoscaling groups of `cluster`: name -> (min, max, launch template version,
/// instance ids).
fn groups(endpoint: &str, cluster: &str) -> serde_json::Value {
    let out = boto(
        endpoint,
        "asg = client('autoscaling')\n\
         out = {}\n\
         for g in asg.describe_auto_scaling_groups()['AutoScalingGroups']:\n    \
         if g['AutoScalingGroupName'].endswith(args[0]):\n        \
         out[g['AutoScalingGroupName']] = {'min': g['MinSize'], 'max': g['MaxSize'], \
         'instances': sorted(i['InstanceId'] for i in g['Instances'])}\n\
         print(json.dumps(out))\n",
        &[cluster],
    );
    serde_json::from_str(out.trim()).expect("json")
}

/// The keys of `bucket` under `prefix`.
fn objects(endpoint: &str, bucket: &str, prefix: &str) -> Vec<String> {
    let out = boto(
        endpoint,
        "s3 = client('s3', 'us-east-1')\n\
         keys = []\n\
         for page in s3.get_paginator('list_objects_v2').paginate(Bucket=args[0], Prefix=args[1]):\n    \
         keys += [o['Key'] for o in page.get('Contents', [])]\n\
         print(json.dumps(sorted(keys)))\n",
        &[bucket, prefix],
    );
    serde_json::from_str(out.trim()).expect("json")
}

/// A Terraform working directory whose `kops` provider is this build's binary.
struct Work {
    dir: tempfile::TempDir,
    terraform: String,
    endpoint: String,
}

impl Work {
    fn new(terraform: &str, endpoint: &str) -> Work {
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_terraform-provider-kops"));
        let rc = format!(
            "provider_installation {{\n  dev_overrides {{\n    \"terraform-kops/kops\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
            binary.parent().expect("bin dir").display()
        );
        std::fs::write(dir.path().join("terraformrc"), rc).expect("write rc");
        Work {
            dir,
            terraform: terraform.to_string(),
            endpoint: endpoint.to_string(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).expect("write");
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.terraform)
            .args(args)
            .current_dir(self.path())
            .env("TF_CLI_CONFIG_FILE", self.path().join("terraformrc"))
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1")
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", REGION)
            .env("AWS_CONFIG_FILE", "/nonexistent")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("S3_ENDPOINT", &self.endpoint)
            .env("S3_ACCESS_KEY_ID", "testing")
            .env("S3_SECRET_ACCESS_KEY", "testing")
            .output()
            .expect("terraform runs")
    }

    /// Runs terraform and requires exit code `code`; its output.
    fn expect(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "terraform {args:?}:\n{text}");
        text
    }
}

/// HCL in terraform-provider-kops' schema (its docs' field names and blocks).
fn config(bucket: &str, name: &str, node_max: u32, node_type: &str) -> String {
    config_rolling(bucket, name, node_max, node_type, "")
}

/// [`config`] with more settings in the updater's `rolling_update` block.
fn config_rolling(
    bucket: &str,
    name: &str,
    node_max: u32,
    node_type: &str,
    rolling: &str,
) -> String {
    format!(
        r#"terraform {{
  required_providers {{
    kops = {{ source = "terraform-kops/kops" }}
  }}
}}

provider "kops" {{
  state_store = "s3://{bucket}"
}}

resource "kops_cluster" "cluster" {{
  name               = "{name}"
  admin_ssh_key      = file("${{path.module}}/id.pub")
  kubernetes_version = "1.34.1"
  dns_zone           = "{ZONE}"

  cloud_provider {{
    aws {{}}
  }}

  config_store {{
    base = "s3://{bucket}/{name}"
  }}

  iam {{
    allow_container_registry = true
  }}

  networking {{
    network_cidr = "{cidr}"
    subnet {{
      name = "{REGION}a"
      type = "Public"
      zone = "{REGION}a"
      cidr = "172.20.32.0/19"
    }}
    topology {{
      dns = "Public"
    }}
    calico {{}}
  }}

  etcd_cluster {{
    name = "main"
    member {{
      name           = "a"
      instance_group = "control-plane-{REGION}a"
    }}
  }}
  etcd_cluster {{
    name = "events"
    member {{
      name           = "a"
      instance_group = "control-plane-{REGION}a"
    }}
  }}
}}

resource "kops_instance_group" "control_plane" {{
  cluster_name = kops_cluster.cluster.id
  name         = "control-plane-{REGION}a"
  role         = "Master"
  min_size     = 1
  max_size     = 1
  machine_type = "t3.medium"
  image        = "{MOTO_AMI}"
  subnets      = ["{REGION}a"]
}}

resource "kops_instance_group" "nodes" {{
  cluster_name = kops_cluster.cluster.id
  name         = "nodes-{REGION}a"
  role         = "Node"
  min_size     = 1
  max_size     = {node_max}
  machine_type = "{node_type}"
  image        = "{MOTO_AMI}"
  subnets      = ["{REGION}a"]
}}

resource "kops_cluster_updater" "updater" {{
  cluster_name = kops_cluster.cluster.id

  keepers = {{
    cluster       = kops_cluster.cluster.revision
    control_plane = kops_instance_group.control_plane.revision
    nodes         = kops_instance_group.nodes.revision
  }}

  rolling_update {{
    skip       = false
    cloud_only = true
    {rolling}
  }}

  validate {{
    skip = true
  }}
}}

data "kops_cluster" "cluster" {{
  name       = kops_cluster.cluster.id
  depends_on = [kops_cluster_updater.updater]
}}

data "kops_instance_group" "nodes" {{
  cluster_name = kops_cluster.cluster.id
  name         = kops_instance_group.nodes.name
  depends_on   = [kops_cluster_updater.updater]
}}

data "kops_kube_config" "admin" {{
  cluster_name = kops_cluster.cluster.id
  depends_on   = [kops_cluster_updater.updater]
}}
"#,
        cidr = "172.20.0.0/16",
    )
}

const SSH_KEY: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCtWu40XQo8dczLsCq0OWV+hxm9uV3WxeH9Kgh4sMzQxNtoU1pvW0XdjpkBesRKGoolfWeCLXWxpyQb1IaiMkKoz7MdhQ/6UKjMjP66aFWWp3pwD0uj0HuJ7tq4gKHKRYGTaZIRWpzUiANBrjugVgA+Sd7E/mYwc/DMXkIyRZbvhQ== test@example\n";

#[test]
fn a_cluster_lives_and_dies_in_terraform_on_moto() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-{}", std::process::id());
    let name = &format!("life-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write("main.tf", &config(&bucket, name, 2, "t3.medium"));

    // Apply: the spec in the bucket, the cluster in moto.
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    let keys = objects(&endpoint, &bucket, &format!("{name}/"));
    assert!(keys.contains(&format!("{name}/config")), "{keys:?}");
    assert!(
        keys.iter()
            .any(|k| k.starts_with(&format!("{name}/instancegroup/"))),
        "{keys:?}"
    );
    let asgs = groups(&endpoint, name);
    let nodes = format!("nodes-{REGION}a.{name}");
    assert_eq!(asgs[&nodes]["max"], 2, "{asgs}");
    let before = asgs.clone();

    // The data sources: the stored spec as the resources show it, and an admin
    // credential signed by the cluster's CA (checked with openssl).
    let shown = work.expect(&["show", "-json", "-no-color"], 0);
    let shown: serde_json::Value = serde_json::from_str(shown.trim()).unwrap();
    let data = |address: &str| -> serde_json::Value {
        shown["values"]["root_module"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["address"] == address)
            .unwrap_or_else(|| panic!("{address} not in {shown}"))["values"]
            .clone()
    };
    let cluster = data("data.kops_cluster.cluster");
    assert_eq!(
        cluster["networking"][0]["network_cidr"], "172.20.0.0/16",
        "{cluster}"
    );
    assert_eq!(
        cluster["networking"][0]["subnet"][0]["zone"],
        format!("{REGION}a")
    );
    assert_eq!(data("data.kops_instance_group.nodes")["max_size"], 2);
    let admin = data("data.kops_kube_config.admin");
    assert_eq!(admin["server"], format!("https://api.{name}"), "{admin}");
    work.write("ca.pem", admin["ca_certs"].as_str().unwrap());
    work.write("admin.pem", admin["client_cert"].as_str().unwrap());
    let verify = Command::new("openssl")
        .args(["verify", "-CAfile", "ca.pem", "admin.pem"])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let subject = Command::new("openssl")
        .args(["x509", "-noout", "-subject", "-in", "admin.pem"])
        .current_dir(work.path())
        .output()
        .unwrap();
    let subject = String::from_utf8_lossy(&subject.stdout);
    assert!(
        subject.contains("system:masters") && subject.contains("kubecfg-terraform"),
        "{subject}"
    );

    // A plan right after: nothing to do.
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // One attribute changed: the plan names it, and applying changes only that group.
    work.write("main.tf", &config(&bucket, name, 3, "t3.medium"));
    let plan = work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        2,
    );
    assert!(
        plan.contains("max_size") && plan.contains("2 -> 3"),
        "{plan}"
    );
    assert!(
        !plan.contains("kops_cluster.cluster will be updated"),
        "{plan}"
    );
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    let after = groups(&endpoint, name);
    assert_eq!(after[&nodes]["max"], 3, "{after}");
    for (group, g) in before.as_object().expect("groups") {
        if group != &nodes {
            assert_eq!(&after[group], g, "{group} changed");
        }
    }
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // A new machine type: the group's revision moves, the updater runs again, and its
    // cloud-only rolling update takes the group's machines out (and no other's). moto
    // reports every instance at its template's current version, so it cannot show an
    // instance out of date: the roll is forced, on the one group it includes (kops-model's
    // tests check finding out-of-date machines, on kops-mock).
    let rolling = "force = true\n    include_instance_groups = [kops_instance_group.nodes.name]";
    work.write(
        "main.tf",
        &config_rolling(&bucket, name, 3, "t3.large", rolling),
    );
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        out.contains("kops_cluster_updater.updater: Modifying"),
        "{out}"
    );
    let rolled = groups(&endpoint, name);
    let old = after[&nodes]["instances"].as_array().unwrap();
    let new = rolled[&nodes]["instances"].as_array().unwrap();
    // (moto does not relaunch what leaves a group, as AWS's health checks do: the
    // group is left short, and the old machine must be gone from it.)
    assert!(!old.is_empty(), "{after}");
    assert!(
        old.iter().all(|i| !new.contains(i)),
        "not replaced: {after} -> {rolled}"
    );
    let control_plane = format!("control-plane-{REGION}a.masters.{name}");
    assert_eq!(
        rolled[&control_plane]["instances"], after[&control_plane]["instances"],
        "{after} -> {rolled}"
    );
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // Destroy: nothing of the cluster is left in moto or the bucket.
    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(leftovers(&endpoint, name), "{}");
    assert_eq!(
        objects(&endpoint, &bucket, &format!("{name}/")),
        Vec::<String>::new()
    );
}

#[test]
fn a_spec_error_names_its_attribute_and_changes_nothing() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-bad-{}", std::process::id());
    let name = &format!("bad-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    let text = config(&bucket, name, 2, "t3.medium").replace("172.20.0.0/16", "172.20.0.0/33");
    work.write("main.tf", &text);
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 1);
    assert!(out.contains("network_cidr"), "{out}");
    assert!(out.contains("172.20.0.0/33"), "{out}");
    assert_eq!(objects(&endpoint, &bucket, ""), Vec::<String>::new());
    assert_eq!(leftovers(&endpoint, name), "{}");
}

/// Stores a cluster as `kops create cluster` makes it (the library's `new_cluster`,
/// which the CLI's create runs), with its admin SSH key, in `bucket` on moto.
fn create_with_the_library(endpoint: &str, bucket: &str, name: &str) {
    use kops_model::statestore::s3::S3Config;
    use kops_model::statestore::{Registry, StoreOptions, SystemClock, open};
    use kops_model::{NewClusterOptions, new_cluster};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let state = format!("s3://{bucket}");
        let s3 = S3Config::from_env()
            .await
            .unwrap()
            .with_endpoint(endpoint)
            .with_force_path_style(true)
            .with_region("us-east-1")
            .with_static_credentials("testing", "testing", None);
        let store = open(&state, &StoreOptions::default().with_s3(s3)).unwrap();
        let registry = Registry::new(store, std::sync::Arc::new(SystemClock));
        let options = NewClusterOptions::new(name, &state)
            .with_zones([format!("{REGION}a")])
            .with_image(Some(MOTO_AMI.to_string()));
        let (cluster, groups) = new_cluster(&options).unwrap();
        registry.create_cluster(&cluster).await.unwrap();
        for group in &groups {
            registry.create_instance_group(name, group).await.unwrap();
        }
        registry
            .add_ssh_public_key(name, SSH_KEY.trim())
            .await
            .unwrap();
    });
}

/// A cluster `kops create cluster` stored, imported into Terraform (import blocks, the
/// configuration generated from the imported state, as Terraform's users do): the plan
/// after the import is empty.
#[test]
fn a_cluster_the_cli_created_imports_with_no_changes() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-import-{}", std::process::id());
    let name = &format!("imp-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    create_with_the_library(&endpoint, &bucket, name);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write(
        "main.tf",
        &format!(
            r#"terraform {{
  required_providers {{
    kops = {{ source = "terraform-kops/kops" }}
  }}
}}

provider "kops" {{
  state_store = "s3://{bucket}"
}}

import {{
  to = kops_cluster.cluster
  id = "{name}"
}}

import {{
  to = kops_instance_group.control_plane
  id = "{name}/control-plane-{REGION}a"
}}

import {{
  to = kops_instance_group.nodes
  id = "{name}/nodes-{REGION}a"
}}
"#
        ),
    );
    work.expect(
        &[
            "plan",
            "-generate-config-out=generated.tf",
            "-input=false",
            "-no-color",
        ],
        0,
    );
    // Terraform leaves a sensitive value out of the configuration it writes: the user
    // puts the key back, as its comment says.
    let generated = std::fs::read_to_string(work.path().join("generated.tf")).unwrap();
    assert!(generated.contains("admin_ssh_key"), "{generated}");
    let generated = generated
        .lines()
        .map(|l| match l.trim_start().starts_with("admin_ssh_key") {
            true => "  admin_ssh_key = file(\"${path.module}/id.pub\")".to_string(),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    work.write("generated.tf", &generated);
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        out.contains("3 imported, 0 added, 0 changed, 0 destroyed"),
        "{out}"
    );
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );
}

/// No credential anywhere: the provider says so on its `aws` block before touching
/// anything, and the bucket stays empty.
#[test]
fn a_missing_credential_names_the_attribute() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-nocred-{}", std::process::id());
    let name = &format!("nocred-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write("main.tf", &config(&bucket, name, 2, "t3.medium"));
    let out = Command::new(&work.terraform)
        .args(["apply", "-auto-approve", "-input=false", "-no-color"])
        .current_dir(work.path())
        .env("TF_CLI_CONFIG_FILE", work.path().join("terraformrc"))
        .env("CHECKPOINT_DISABLE", "1")
        .env("AWS_ENDPOINT_URL", &endpoint)
        .env("AWS_REGION", REGION)
        .env("S3_ENDPOINT", &endpoint)
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_PROFILE")
        .env_remove("S3_ACCESS_KEY_ID")
        .env_remove("S3_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Missing or rejected credential"), "{text}");
    assert!(text.contains("S3_ACCESS_KEY_ID"), "{text}");
    // The diagnostic is on the provider block's `aws` (where a credential goes).
    assert!(text.contains("in provider \"kops\""), "{text}");
    assert_eq!(objects(&endpoint, &bucket, ""), Vec::<String>::new());
}

/// The registry of `bucket` on moto, as the library opens it.
fn registry(endpoint: &str, bucket: &str) -> kops_model::statestore::Registry {
    use kops_model::statestore::s3::S3Config;
    use kops_model::statestore::{Registry, StoreOptions, SystemClock, open};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let s3 = runtime.block_on(S3Config::from_env()).unwrap();
    let s3 = s3
        .with_endpoint(endpoint)
        .with_force_path_style(true)
        .with_region("us-east-1")
        .with_static_credentials("testing", "testing", None);
    let store = open(
        &format!("s3://{bucket}"),
        &StoreOptions::default().with_s3(s3),
    )
    .unwrap();
    Registry::new(store, std::sync::Arc::new(SystemClock))
}

/// The running machines of `cluster` in moto: (instance, group, zone, control plane?).
fn machines(endpoint: &str, cluster: &str) -> Vec<(String, String, String, bool)> {
    let out = boto(
        endpoint,
        "ec2 = client('ec2')\n\
         tag = [{'Name': 'tag:KubernetesCluster', 'Values': [args[0]]}]\n\
         out = []\n\
         for r in ec2.describe_instances(Filters=tag)['Reservations']:\n    \
         for i in r['Instances']:\n        \
         if i['State']['Name'] != 'running': continue\n        \
         tags = {t['Key']: t['Value'] for t in i.get('Tags', [])}\n        \
         out.append([i['InstanceId'], tags.get('kops.k8s.io/instancegroup', ''), i['Placement']['AvailabilityZone'], 'k8s.io/role/control-plane' in tags])\n\
         print(json.dumps(out))\n",
        &[cluster],
    );
    serde_json::from_str(out.trim()).unwrap()
}

/// The cluster's API as a fake on 127.0.0.1: served with a certificate of the cluster's
/// CA for `api.internal.<cluster>`, accepting the CA's client certificates, with a Ready
/// node (and the control plane's static pods) for every running machine in moto.
fn fake_api(
    endpoint: &str,
    bucket: &str,
    cluster: &str,
) -> (tokio::runtime::Runtime, kops_mock::kube::FakeKube) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let ca = runtime
        .block_on(registry(endpoint, bucket).get_keyset(cluster, "kubernetes-ca"))
        .unwrap()
        .value;
    let serving = kops_model::pki::issue_certificate(
        &ca,
        "kubernetes-ca",
        &kops_model::pki::CertificateRequest::server("kubernetes-master")
            .with_alternate_names(vec![format!("api.internal.{cluster}")])
            .including_root(),
        std::time::SystemTime::now(),
    )
    .unwrap();
    let tls = kops_mock::kube::KubeTls::new(
        serving.certificate_pem,
        serving.private_key.expose_pem(),
        kops_model::pki::trusted_certificates(&ca).unwrap(),
    );
    let kube = runtime
        .block_on(kops_mock::kube::FakeKube::start_tls(&tls))
        .unwrap();
    for (id, group, zone, control_plane) in machines(endpoint, cluster) {
        let role = if control_plane {
            "control-plane"
        } else {
            "node"
        };
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
        if control_plane {
            for app in [
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
            ] {
                kube.put_pod(kops_mock::kube::kubelet::static_pod(app, &id));
            }
        }
    }
    (runtime, kube)
}

/// The updater's validate phase, through the cluster's API over TLS with an admin
/// credential it mints: a cluster whose machines all have Ready nodes validates; a node
/// gone NotReady fails the apply, naming it.
#[test]
fn the_updater_validates_the_cluster_through_its_api() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-valid-{}", std::process::id());
    let name = &format!("valid-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write("main.tf", &config(&bucket, name, 2, "t3.medium"));
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);

    let (_runtime, kube) = fake_api(&endpoint, &bucket, name);
    let validated = |timeout: &str| {
        config(&bucket, name, 2, "t3.medium").replace(
            "  validate {\n    skip = true\n  }",
            &format!(
                "  validate {{\n    skip          = false\n    api_server    = \"{}\"\n    timeout       = \"{timeout}\"\n    poll_interval = \"1s\"\n  }}",
                kube.url()
            ),
        )
    };
    let text = validated("20s");
    assert!(text.contains("api_server"), "{text}");
    work.write("main.tf", &text);
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        out.contains("kops_cluster_updater.updater: Modifications complete"),
        "{out}"
    );

    // A node goes NotReady: the updater fails, naming it.
    let (id, _, _, _) = machines(&endpoint, name)
        .into_iter()
        .find(|m| !m.3)
        .unwrap();
    assert!(kube.set_ready(&id, false));
    work.write("main.tf", &validated("3s"));
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 1);
    assert!(
        out.contains("did not validate") && out.contains(&id),
        "{out}"
    );

    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(leftovers(&endpoint, name), "{}");
}
