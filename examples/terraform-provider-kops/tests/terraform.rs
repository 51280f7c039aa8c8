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

    /// Runs terraform here with more environment.
    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(&self.terraform)
            .args(args)
            .envs(env.iter().copied())
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
        self.expect_with(args, code, &[])
    }

    /// [`Work::expect`] with more environment.
    fn expect_with(&self, args: &[&str], code: i32, env: &[(&str, &str)]) -> String {
        let out = self.run_with(args, env);
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

/// Gives every running machine of `cluster` in moto not `seen` before a Ready node (and
/// a control-plane machine its static pods), as kubelets joining would. A machine joins
/// once: a node deleted while its machine still runs (a drained one) stays deleted.
fn join_nodes(
    endpoint: &str,
    cluster: &str,
    kube: &kops_mock::kube::FakeKube,
    seen: &mut std::collections::BTreeSet<String>,
) {
    for (id, group, zone, control_plane) in machines(endpoint, cluster) {
        if !seen.insert(id.clone()) {
            continue;
        }
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
    join_nodes(endpoint, cluster, &kube, &mut Default::default());
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

    // kops_cluster_status: valid through the fake API, not valid (and no error) through
    // an API that does not answer.
    work.write(
        "status.tf",
        &format!(
            r#"data "kops_cluster_status" "here" {{
  cluster_name = kops_cluster.cluster.id
  api_server   = "{}"
}}

data "kops_cluster_status" "unreachable" {{
  cluster_name = kops_cluster.cluster.id
  api_server   = "https://127.0.0.1:9"
}}

output "here" {{
  value = data.kops_cluster_status.here
}}

output "unreachable" {{
  value = data.kops_cluster_status.unreachable
}}
"#,
            kube.url()
        ),
    );
    let status = || -> serde_json::Value {
        work.expect(
            &[
                "apply",
                "-refresh-only",
                "-auto-approve",
                "-input=false",
                "-no-color",
            ],
            0,
        );
        let out = work.expect(&["output", "-json"], 0);
        serde_json::from_str(out.trim()).unwrap()
    };
    let outputs = status();
    let here = &outputs["here"]["value"];
    assert_eq!(here["exists"], true, "{outputs}");
    assert_eq!(here["is_valid"], true, "{outputs}");
    assert_eq!(
        outputs["unreachable"]["value"]["is_valid"], false,
        "{outputs}"
    );
    assert_eq!(outputs["unreachable"]["value"]["exists"], true, "{outputs}");

    // A node goes NotReady: the status says the cluster is not valid, and the updater
    // fails, naming it.
    let (id, _, _, _) = machines(&endpoint, name)
        .into_iter()
        .find(|m| !m.3)
        .unwrap();
    assert!(kube.set_ready(&id, false));
    let outputs = status();
    assert_eq!(outputs["here"]["value"]["is_valid"], false, "{outputs}");
    assert_eq!(outputs["here"]["value"]["exists"], true, "{outputs}");
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

/// A pod of a ReplicaSet (drained like any workload), running on `node`.
fn workload(name: &str, app: &str, node: &str) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": app},
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": app,
                "uid": format!("uid-rs-{app}"),
                "controller": true,
            }],
        },
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap()
}

/// Joins moto's new machines to the fake API every second (see [`join_nodes`]) until
/// dropped.
struct Kubelets {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Kubelets {
    fn start(
        endpoint: &str,
        cluster: &str,
        kube: &std::sync::Arc<kops_mock::kube::FakeKube>,
    ) -> Kubelets {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (endpoint, cluster, kube) = (endpoint.to_string(), cluster.to_string(), kube.clone());
        let mut seen: std::collections::BTreeSet<String> =
            kube.objects().nodes.keys().cloned().collect();
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                join_nodes(&endpoint, &cluster, &kube, &mut seen);
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        });
        Kubelets {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Kubelets {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The updater's rolling update without `cloud_only`: through the cluster's API over TLS
/// (an admin credential minted for the run), the node of each replaced machine is
/// tainted, cordoned and drained (its pods evicted), its Node deleted, and the cluster
/// validated, with terraform-provider-kops' tunables; a drain that a PodDisruptionBudget
/// blocks past `drain_timeout` fails the apply (`fail_on_drain_error`), naming the node.
#[test]
fn the_updater_drains_nodes_through_the_api() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-drain-{}", std::process::id());
    let name = &format!("drain-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write("main.tf", &config(&bucket, name, 2, "t3.medium"));
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);

    let (_runtime, kube) = fake_api(&endpoint, &bucket, name);
    let kube = std::sync::Arc::new(kube);
    let nodes_group = format!("nodes-{REGION}a");
    let node_of_group = || {
        machines(&endpoint, name)
            .into_iter()
            .find(|m| m.1 == nodes_group)
            .unwrap()
            .0
    };
    let control_plane: Vec<String> = machines(&endpoint, name)
        .into_iter()
        .filter(|m| m.3)
        .map(|m| m.0)
        .collect();
    let old = node_of_group();
    kube.put_pod(workload("web-1", "web", &old));
    let _kubelets = Kubelets::start(&endpoint, name, &kube);

    // Not cloud-only, through the fake API; moto reports every machine up to date, so the
    // roll is forced, on the nodes' group only.
    let rolled = |extra: &str| {
        let rolling = format!(
            "force = true\n    include_instance_groups = [kops_instance_group.nodes.name]\n    \
             api_server = \"{}\"\n    node_interval = \"2s\"\n    post_drain_delay = \"1s\"\n    \
             validation_timeout = \"3m\"\n    validate_count = 1\n    {extra}",
            kube.url()
        );
        // validate { poll_interval } paces the roll's validations too (kOps waits 30s
        // after a failed one): the new machine's node joins within a second.
        config_rolling(&bucket, name, 2, "t3.medium", &rolling)
            .replace("cloud_only = true", "cloud_only = false")
            .replace(
                "  validate {\n    skip = true\n  }",
                "  validate {\n    skip          = true\n    poll_interval = \"1s\"\n  }",
            )
    };
    let text = rolled("drain_timeout = \"1m\"");
    assert!(text.contains("cloud_only = false"), "{text}");
    assert!(text.contains("poll_interval = \"1s\""), "{text}");
    work.write("main.tf", &text);
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        out.contains("kops_cluster_updater.updater: Modifications complete"),
        "{out}"
    );
    // The old machine's node: tainted, cordoned, its pod evicted, its Node deleted; the
    // machine gone from moto; the control plane's nodes untouched.
    let evictions = kube.evictions();
    assert!(
        evictions.iter().any(|e| e.pod == "default/web-1"
            && e.node.as_deref() == Some(old.as_str())
            && e.blocked_by.is_none()),
        "{evictions:?}"
    );
    let requests = kube.requests();
    let on_old = |method: &str, needle: &str| {
        requests.iter().any(|r| {
            r.method == method
                && r.path == format!("/api/v1/nodes/{old}")
                && r.body.contains(needle)
        })
    };
    assert!(
        on_old("PATCH", "kops.k8s.io/scheduled-for-update"),
        "{requests:?}"
    );
    assert!(on_old("PATCH", "\"unschedulable\":true"), "{requests:?}");
    assert!(on_old("DELETE", ""), "{requests:?}");
    assert!(
        requests.iter().all(|r| control_plane
            .iter()
            .all(|c| !r.path.ends_with(&format!("/nodes/{c}")))),
        "{requests:?}"
    );
    assert!(!kube.objects().nodes.contains_key(&old));
    assert!(
        machines(&endpoint, name).iter().all(|m| m.0 != old),
        "{old} still runs"
    );

    // A budget that allows no disruption of the pod on the new machine: its drain times
    // out, and with fail_on_drain_error the apply fails, naming the node.
    let new = node_of_group();
    assert_ne!(new, old);
    kube.put_pod(workload("db-0", "db", &new));
    let pdb: k8s_openapi::api::policy::v1::PodDisruptionBudget =
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        }))
        .unwrap();
    kube.put_pdb(pdb);
    work.write(
        "main.tf",
        &rolled("drain_timeout = \"2s\"\n    fail_on_drain_error = true"),
    );
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 1);
    // (Terraform wraps a diagnostic's lines.)
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("draining node {new}"))
            && flat.contains("PodDisruptionBudget default/db")
            && flat.contains("drain timeout 2s reached"),
        "{out}"
    );
    let evictions = kube.evictions();
    assert!(
        evictions.iter().any(|e| e.pod == "default/db-0"
            && e.node.as_deref() == Some(new.as_str())
            && e.blocked_by.is_some()),
        "{evictions:?}"
    );

    drop(_kubelets);
    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(leftovers(&endpoint, name), "{}");
}

/// A CA made for a test: (certificate PEM, RSA key PEM).
fn test_ca() -> (String, String) {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "my-kubernetes-ca");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// A middle line of a PEM's base64 (what a leak would show of it).
fn pem_line(pem: &str) -> String {
    let lines: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    lines[lines.len() / 2].to_string()
}

/// `kops_cluster`'s `secrets` block: the CA and the docker config the configuration gives
/// land in the state store as kOps keeps them (the CA the primary keypair of
/// kubernetes-ca, the docker config the `dockerconfig` secret); Terraform's plans, output
/// and trace log never show them; bad ones are diagnostics on their attribute that do not
/// quote them; removing the docker config removes the secret.
#[test]
fn cluster_secrets_reach_the_store_and_no_output() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let bucket = format!("kops-tf-secrets-{}", std::process::id());
    let name = &format!("secrets-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    let (cert, key) = test_ca();
    let (_, other_key) = test_ca();
    let token = format!("dG9rZW4tc2VjcmV0-{}", std::process::id());
    let docker = format!("{{\"auths\":{{\"registry.example\":{{\"auth\":\"{token}\"}}}}}}");
    work.write("ca.crt", &cert);
    work.write("ca.key", &key);
    work.write("other.key", &other_key);
    work.write("docker.json", &docker);
    work.write("docker-bad.json", &format!("not json {token}"));
    // The cluster alone (no groups, no updater): the secrets are the state store's.
    let full = config(&bucket, name, 2, "t3.medium");
    let cluster_only = &full[..full.find("resource \"kops_instance_group\"").unwrap()];
    let with_secrets = |secrets: &str| {
        cluster_only.replace(
            "  kubernetes_version",
            &format!("  secrets {{\n{secrets}  }}\n\n  kubernetes_version"),
        )
    };
    let ca_lines = "    cluster_ca_cert = file(\"${path.module}/ca.crt\")\n    \
                    cluster_ca_key  = file(\"${path.module}/ca.key\")\n";
    let secrets =
        format!("{ca_lines}    docker_config   = file(\"${{path.module}}/docker.json\")\n");
    work.write("main.tf", &with_secrets(&secrets));
    let never_shown = |out: &str| {
        for (what, secret) in [
            ("key", pem_line(&key)),
            ("token", token.clone()),
            ("other key", pem_line(&other_key)),
        ] {
            assert!(!out.contains(&secret), "the {what} is shown:\n{out}");
        }
    };
    let trace = [("TF_LOG", "trace")];
    let plan = work.expect_with(&["plan", "-input=false", "-no-color"], 0, &trace);
    assert!(plan.contains("secrets"), "{plan}");
    never_shown(&plan);
    let out = work.expect_with(
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        0,
        &trace,
    );
    never_shown(&out);
    never_shown(&work.expect(&["show", "-no-color"], 0));

    // The store holds them as kOps does.
    let registry = registry(&endpoint, &bucket);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ca = runtime
        .block_on(registry.get_keyset(name, "kubernetes-ca"))
        .unwrap()
        .value;
    let primary = ca.primary().expect("a primary keypair");
    let der = |pem: &[u8]| kops_model::pki::Certificate::from_pem(pem).unwrap().der;
    assert_eq!(
        der(primary.public_material.as_deref().unwrap()),
        der(cert.as_bytes())
    );
    assert_eq!(primary.private_material.as_deref(), Some(key.as_bytes()));
    // The library signs with it: a certificate it issues verifies against the given CA.
    let issued = kops_model::pki::issue_certificate(
        &ca,
        "kubernetes-ca",
        &kops_model::pki::CertificateRequest::client("someone"),
        std::time::SystemTime::now(),
    )
    .unwrap();
    work.write("issued.pem", &issued.certificate_pem);
    let verify = Command::new("openssl")
        .args(["verify", "-CAfile", "ca.crt", "issued.pem"])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let stored = runtime
        .block_on(registry.get_secret(name, "dockerconfig"))
        .unwrap();
    assert_eq!(stored.data, docker.as_bytes());

    // A plan right after: nothing to do.
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // Bad secrets: a diagnostic on the attribute, the value not quoted, nothing written.
    let mismatched = secrets.replace("ca.key", "other.key");
    work.write("main.tf", &with_secrets(&mismatched));
    let out = work.expect_with(&["plan", "-input=false", "-no-color"], 1, &trace);
    assert!(
        out.contains("Invalid CA key") && out.contains("cluster_ca_key"),
        "{out}"
    );
    never_shown(&out);
    let bad_docker = secrets.replace("docker.json", "docker-bad.json");
    work.write("main.tf", &with_secrets(&bad_docker));
    let out = work.expect_with(&["plan", "-input=false", "-no-color"], 1, &trace);
    assert!(
        out.contains("Invalid docker config") && out.contains("docker_config"),
        "{out}"
    );
    never_shown(&out);

    // Without docker_config the secret goes; the CA stays.
    work.write("main.tf", &with_secrets(ca_lines));
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    never_shown(&out);
    assert_eq!(
        runtime.block_on(registry.list_secrets(name)).unwrap(),
        Vec::<String>::new()
    );
    assert!(
        runtime
            .block_on(registry.get_keyset(name, "kubernetes-ca"))
            .is_ok()
    );
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(
        objects(&endpoint, &bucket, &format!("{name}/")),
        Vec::<String>::new()
    );
}

/// The terraform binary, or `None` (skip; with `KOPS_TEST_REQUIRE_EMULATORS=1`, fail).
fn terraform_only() -> Option<String> {
    let found = which("terraform");
    if found.is_none() {
        assert!(
            !require(),
            "KOPS_TEST_REQUIRE_EMULATORS=1 but terraform is missing"
        );
        eprintln!("skipping: terraform is missing");
    }
    found
}

/// An image of the mock cloud's seed (`kops_mock::journal::aws_seed`).
const MOCK_AMI: &str = "ami-0a1b2c3d4e5f60001";

/// [`config_rolling`] in mock mode: a `file://` state store at `dir` (and config base
/// under it), the seed's public zone `example.com` and image.
fn mock_config(dir: &Path, name: &str, node_max: u32, node_type: &str, rolling: &str) -> String {
    let store = format!("file://{}", dir.display());
    config_rolling("BUCKET", name, node_max, node_type, rolling)
        .replace(
            "state_store = \"s3://BUCKET\"",
            &format!("state_store = \"{store}\"\n  mock_cloud  = true"),
        )
        .replace("s3://BUCKET/", &format!("{store}/"))
        .replace(&format!("\"{ZONE}\""), "\"example.com\"")
        .replace(MOTO_AMI, MOCK_AMI)
}

/// The files under `dir`, as paths relative to it, but for the local store's own lock
/// file (`flock`ed while it writes; no object of the store).
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path
                .file_name()
                .is_some_and(|n| n == ".kops-statestore.lock")
            {
                continue;
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// The mock cloud's journal in the store: its entries.
fn journal(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("kops-rs-mock-cloud/journal.json")).unwrap();
    let journal: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(journal["region"], REGION, "{journal}");
    journal["entries"].as_array().unwrap().clone()
}

/// The IDs the journal's entries of `op` name.
fn journal_ids(entries: &[serde_json::Value], op: &str) -> std::collections::BTreeSet<String> {
    entries
        .iter()
        .filter(|e| e["op"] == op)
        .filter_map(|e| e["id"].as_str().map(str::to_string))
        .collect()
}

/// Mock mode: a whole life (apply, an empty plan, a change, a cloud-only roll, destroy)
/// on kops-mock's cloud with a `file://` state store, each command a provider process of
/// its own that replays the mock's journal from the store. No emulator: AWS's endpoint
/// is a closed port, so any call to AWS would fail.
#[test]
fn a_cluster_lives_and_dies_on_the_mock_cloud_with_a_file_store() {
    let Some(terraform) = terraform_only() else {
        return;
    };
    let work = Work::new(&terraform, "http://127.0.0.1:9");
    let store = tempfile::tempdir().unwrap();
    let dir = store.path();
    let name = "mock.example.com";
    work.write("id.pub", SSH_KEY);
    let fast = "node_interval = \"100ms\"";
    work.write("main.tf", &mock_config(dir, name, 2, "t3.medium", fast));

    // Apply: the spec in the directory, the cluster in the mock's journal.
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    let stored = files(dir);
    assert!(stored.contains(&format!("{name}/config")), "{stored:?}");
    assert!(
        stored.contains(&format!("{name}/instancegroup/nodes-{REGION}a")),
        "{stored:?}"
    );
    let spec = std::fs::read_to_string(dir.join(name).join("config")).unwrap();
    assert!(spec.contains("networkCIDR: 172.20.0.0/16"), "{spec}");
    assert!(spec.contains("dnsZone: example.com"), "{spec}");
    let nodes =
        std::fs::read_to_string(dir.join(format!("{name}/instancegroup/nodes-{REGION}a"))).unwrap();
    assert!(nodes.contains("maxSize: 2"), "{nodes}");
    assert!(nodes.contains(MOCK_AMI), "{nodes}");
    let entries = journal(dir);
    let created = journal_ids(&entries, "create");
    let asg = format!("nodes-{REGION}a.{name}");
    assert!(created.contains(&asg), "{created:?}");
    assert!(
        created.iter().any(|id| id.starts_with("vpc-")),
        "{created:?}"
    );

    // A plan right after, in a new process replaying the journal: nothing to do.
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // A new machine type: the updater applies it and its cloud-only roll replaces the
    // nodes' machines (forced, as in the moto test), which the journal records.
    let rolling = format!(
        "{fast}\n    force = true\n    include_instance_groups = [kops_instance_group.nodes.name]"
    );
    work.write("main.tf", &mock_config(dir, name, 3, "t3.large", &rolling));
    let out = work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        out.contains("kops_cluster_updater.updater: Modifying"),
        "{out}"
    );
    let after = journal(dir);
    assert!(after.len() > entries.len(), "{after:?}");
    let rolled: Vec<_> = after[entries.len()..]
        .iter()
        .filter(|e| e["op"] == "terminate" || e["op"] == "detach")
        .collect();
    assert!(!rolled.is_empty(), "no machine replaced: {after:?}");
    let nodes =
        std::fs::read_to_string(dir.join(format!("{name}/instancegroup/nodes-{REGION}a"))).unwrap();
    assert!(
        nodes.contains("maxSize: 3") && nodes.contains("t3.large"),
        "{nodes}"
    );
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // How the destroy deletes (terraform-provider-kops' `delete` block): checked at
    // plan, kept in the state without touching the cluster's revision.
    let with_delete = |block: &str| {
        mock_config(dir, name, 3, "t3.large", &rolling).replace(
            "resource \"kops_cluster\" \"cluster\" {\n",
            &format!("resource \"kops_cluster\" \"cluster\" {{\n  delete {{\n{block}\n  }}\n"),
        )
    };
    work.write("main.tf", &with_delete("    interval = \"soon\""));
    let out = work.expect(&["plan", "-input=false", "-no-color"], 1);
    assert!(out.contains("Invalid duration"), "{out}");
    assert!(out.contains("interval = \"soon\""), "{out}");
    work.write(
        "main.tf",
        &with_delete("    interval = \"100ms\"\n    wait     = \"1m\"\n    count    = 5"),
    );
    let out = work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        2,
    );
    assert!(
        out.contains("1 to change") && out.contains("+ interval = \"100ms\""),
        "{out}"
    );
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    let shown = work.expect(&["show", "-json", "-no-color"], 0);
    assert!(
        shown.contains(r#""delete":[{"count":5,"interval":"100ms","wait":"1m"}]"#),
        "{shown}"
    );
    work.expect(
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
    );

    // One more group, then that group alone destroyed: its autoscaling group and launch
    // template go with it (as terraform-provider-kops deletes them), not at the next
    // update, and its spec leaves the store.
    let current = with_delete("    interval = \"100ms\"\n    wait     = \"1m\"\n    count    = 5");
    let extra_group = format!(
        "resource \"kops_instance_group\" \"extra\" {{\n  cluster_name = kops_cluster.cluster.id\n  name         = \"extra\"\n  role         = \"Node\"\n  min_size     = 1\n  max_size     = 1\n  machine_type = \"t3.medium\"\n  image        = \"{MOCK_AMI}\"\n  subnets      = [\"{REGION}a\"]\n}}\n"
    );
    let keeper = "    control_plane = kops_instance_group.control_plane.revision\n";
    assert!(current.contains(keeper), "{current}");
    work.write(
        "main.tf",
        &format!(
            "{}\n{extra_group}",
            current.replace(
                keeper,
                &format!("{keeper}    extra         = kops_instance_group.extra.revision\n")
            )
        ),
    );
    work.expect(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    let extra_asg = format!("extra.{name}");
    let before = journal(dir);
    assert!(
        journal_ids(&before, "create").contains(&extra_asg),
        "{before:?}"
    );
    assert!(files(dir).contains(&format!("{name}/instancegroup/extra")));
    let out = work.expect(
        &[
            "destroy",
            "-target=kops_instance_group.extra",
            "-auto-approve",
            "-input=false",
            "-no-color",
        ],
        0,
    );
    assert!(
        out.contains("kops_instance_group.extra: Destruction complete"),
        "{out}"
    );
    let after = journal(dir);
    let deleted_now = journal_ids(&after[before.len()..], "delete");
    assert!(deleted_now.contains(&extra_asg), "{deleted_now:?}");
    assert!(
        deleted_now.iter().any(|id| id.starts_with("lt-")),
        "its launch template: {deleted_now:?}"
    );
    assert!(
        !deleted_now.contains(&asg),
        "another group's autoscaling group went too: {deleted_now:?}"
    );
    assert!(!files(dir).contains(&format!("{name}/instancegroup/extra")));
    work.write("main.tf", &current);

    // Destroy: the cluster's tree is gone from the directory, leaving only the mock's
    // journal, in which everything the cluster created was deleted.
    work.expect(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(
        files(dir),
        vec!["kops-rs-mock-cloud/journal.json".to_string()]
    );
    // (An object under a parent, such as a route or a role's policy, goes with it.)
    let entries = journal(dir);
    let deleted = journal_ids(&entries, "delete");
    let left: Vec<_> = entries
        .iter()
        .filter(|e| e["op"] == "create")
        .filter(|e| {
            let gone = |id: &serde_json::Value| id.as_str().is_some_and(|i| deleted.contains(i));
            !gone(&e["id"]) && !gone(&e["request"]["parent"])
        })
        .map(|e| (e["request"]["resource_type"].clone(), e["id"].clone()))
        .collect();
    assert!(left.is_empty(), "not deleted: {left:?}");
    assert!(deleted.contains(&asg) && deleted.iter().any(|id| id.starts_with("vpc-")));
}

/// The GCS emulator (`KOPS_TEST_GCS_ENDPOINT`, which `scripts/test` starts, its default
/// bucket `kops-test`) and terraform, or `None` (skip; with
/// `KOPS_TEST_REQUIRE_EMULATORS=1`, fail).
fn gcs_setup() -> Option<(String, String)> {
    let gcs = std::env::var("KOPS_TEST_GCS_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty());
    match (gcs, which("terraform")) {
        (Some(g), Some(t)) => Some((g.trim_end_matches('/').to_string(), t)),
        (g, t) => {
            assert!(
                !require(),
                "KOPS_TEST_REQUIRE_EMULATORS=1 but the GCS emulator ({g:?}) or terraform ({t:?}) is missing"
            );
            eprintln!(
                "skipping: the GCS emulator (KOPS_TEST_GCS_ENDPOINT) or terraform is missing"
            );
            None
        }
    }
}

/// The names of the objects under `prefix` in the emulator's bucket `kops-test`.
fn gcs_objects(emulator: &str, prefix: &str) -> Vec<String> {
    let script = "import json, sys, urllib.request, urllib.parse\n\
        base, prefix = sys.argv[1], sys.argv[2]\n\
        names, token = [], None\n\
        while True:\n    \
        q = {'prefix': prefix}\n    \
        if token: q['pageToken'] = token\n    \
        r = json.load(urllib.request.urlopen(base + '/storage/v1/b/kops-test/o?' + urllib.parse.urlencode(q)))\n    \
        names += [o['name'] for o in r.get('items', [])]\n    \
        token = r.get('nextPageToken')\n    \
        if not token: break\n\
        print(json.dumps(sorted(names)))\n";
    let out = Command::new("python3")
        .args(["-c", script, emulator, prefix])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "listing the bucket: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// A prefix of the shared emulator's bucket no other run uses.
fn unique_prefix(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
}

/// A GCE cluster in terraform-provider-kops' schema (`cloud_provider { gce { project } }`)
/// in project `testproject`, region `us-test1`, with the state store `state` and the
/// provider's `gce` block `google`.
fn gce_config(state: &str, google: &str, name: &str, node_min: u32, node_max: u32) -> String {
    format!(
        r#"terraform {{
  required_providers {{
    kops = {{ source = "terraform-kops/kops" }}
  }}
}}

provider "kops" {{
  state_store = "{state}"
  {google}
}}

resource "kops_cluster" "cluster" {{
  name               = "{name}"
  admin_ssh_key      = file("${{path.module}}/id.pub")
  kubernetes_version = "1.34.1"

  cloud_provider {{
    gce {{
      project = "testproject"
    }}
  }}

  config_store {{
    base = "{state}/{name}"
  }}

  api {{
    load_balancer {{
      type = "Public"
    }}
  }}

  networking {{
    subnet {{
      name   = "us-test1"
      type   = "Public"
      region = "us-test1"
    }}
    topology {{
      dns = "None"
    }}
    cilium {{}}
  }}

  etcd_cluster {{
    name = "main"
    member {{
      name           = "a"
      instance_group = "control-plane-us-test1-a"
    }}
  }}
  etcd_cluster {{
    name = "events"
    member {{
      name           = "a"
      instance_group = "control-plane-us-test1-a"
    }}
  }}
}}

resource "kops_instance_group" "control_plane" {{
  cluster_name = kops_cluster.cluster.id
  name         = "control-plane-us-test1-a"
  role         = "Master"
  min_size     = 1
  max_size     = 1
  machine_type = "e2-medium"
  image        = "ubuntu-os-cloud/ubuntu-2404-noble-amd64-v20260615"
  subnets      = ["us-test1"]
  zones        = ["us-test1-a"]
}}

resource "kops_instance_group" "nodes" {{
  cluster_name = kops_cluster.cluster.id
  name         = "nodes-us-test1-a"
  role         = "Node"
  min_size     = {node_min}
  max_size     = {node_max}
  machine_type = "e2-medium"
  image        = "ubuntu-os-cloud/ubuntu-2404-noble-amd64-v20260615"
  subnets      = ["us-test1"]
  zones        = ["us-test1-a"]
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
  }}

  validate {{
    skip = true
  }}
}}
"#
    )
}

/// The environment a GCE test's terraform runs in: no Google credentials, endpoint or
/// project of the machine's (a home of its own, no gcloud files, no metadata server).
fn google_env(work: &Work) -> Vec<(String, String)> {
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    vec![
        ("HOME".into(), home.display().to_string()),
        // A closed port: no metadata server answers.
        ("GCE_METADATA_HOST".into(), "127.0.0.1:9".into()),
        ("GCE_METADATA_IP".into(), "127.0.0.1:9".into()),
    ]
}

/// Runs terraform in `work` with the Google variables of the machine removed and `env`
/// set; its exit code and output.
fn run_google(work: &Work, args: &[&str], env: &[(String, String)]) -> (Option<i32>, String) {
    let mut c = Command::new(&work.terraform);
    for v in [
        "KOPS_GCE_ENDPOINT",
        "STORAGE_EMULATOR_HOST",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_OAUTH_ACCESS_TOKEN",
        "GOOGLE_CLOUD_PROJECT",
        "KOPS_STATE_STORE",
    ] {
        c.env_remove(v);
    }
    let out = c
        .args(args)
        .current_dir(work.path())
        .env("TF_CLI_CONFIG_FILE", work.path().join("terraformrc"))
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .expect("terraform runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[track_caller]
fn expect_google(work: &Work, args: &[&str], code: i32, env: &[(String, String)]) -> String {
    let (got, text) = run_google(work, args, env);
    assert_eq!(got, Some(code), "terraform {args:?}:\n{text}");
    text
}

/// What the fake GCE API holds, as `collection/name`.
fn fake_objects(fake: &kops_mock::gce::rest::FakeGceApi) -> Vec<String> {
    let mut out: Vec<String> = fake
        .objects()
        .iter()
        .map(|o| format!("{}/{}", o.collection, o.name))
        .collect();
    out.sort();
    out
}

/// A GCE cluster's whole life through Terraform: on the fake of Google's APIs
/// (`kops_mock::gce::rest::FakeGceApi`) with a `gs://` state store on the GCS emulator,
/// both named by the provider's `gce` block. `apply` creates the cluster (its instance
/// templates and managed instance groups in the fake, its spec in the bucket); a plan
/// right after is empty, also with the endpoints taken from the environment instead
/// (`KOPS_GCE_ENDPOINT`, `STORAGE_EMULATOR_HOST`); a node group's new size reaches its
/// managed instance group; `destroy` leaves nothing in the fake or the bucket.
#[test]
fn a_gce_cluster_lives_and_dies_in_terraform_with_a_gs_store() {
    let Some((gcs, terraform)) = gcs_setup() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt
        .block_on(kops_mock::gce::rest::FakeGceApi::start(
            "testproject",
            "us-test1",
        ))
        .unwrap();
    let prefix = unique_prefix("tf-gce");
    let state = format!("gs://kops-test/{prefix}");
    let name = "tfgce.example.com";
    let work = Work::new(&terraform, "http://127.0.0.1:9");
    work.write("id.pub", SSH_KEY);
    let env = google_env(&work);
    let block = format!(
        "gce {{\n    endpoint         = \"{}\"\n    storage_endpoint = \"{gcs}\"\n  }}",
        fake.url()
    );
    work.write("main.tf", &gce_config(&state, &block, name, 1, 1));
    expect_google(
        &work,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        0,
        &env,
    );

    // The cluster in the fake: instance templates and managed instance groups of its two
    // groups, and their instances.
    let objects = fake_objects(&fake);
    let of = |collection: &str| -> Vec<&String> {
        objects
            .iter()
            .filter(|o| o.contains(&format!("/{collection}/")))
            .collect()
    };
    assert_eq!(of("instanceTemplates").len(), 2, "{objects:#?}");
    let groups = of("instanceGroupManagers");
    assert_eq!(groups.len(), 2, "{objects:#?}");
    assert!(
        groups.iter().any(|g| g.contains("nodes-us-test1-a")),
        "{groups:?}"
    );
    assert!(
        fake.calls()
            .contains_key("compute.instanceTemplates.insert")
    );
    // Its spec, groups and the release that applied it in the bucket, in kOps' layout.
    let stored = gcs_objects(&gcs, &format!("{prefix}/"));
    for key in [
        "config",
        "cluster-completed.spec",
        "instancegroup/nodes-us-test1-a",
        "kops-version.txt",
    ] {
        let key = format!("{prefix}/{name}/{key}");
        assert!(stored.contains(&key), "{key} not in {stored:#?}");
    }

    // A plan right after is empty: with the block's endpoints, and with the
    // environment's.
    expect_google(
        &work,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
        &env,
    );
    work.write("main.tf", &gce_config(&state, "", name, 1, 1));
    let mut from_env = env.clone();
    from_env.push(("KOPS_GCE_ENDPOINT".into(), fake.url()));
    from_env.push(("STORAGE_EMULATOR_HOST".into(), gcs.clone()));
    expect_google(
        &work,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
        &from_env,
    );

    // A bigger node group: its managed instance group is resized.
    work.write("main.tf", &gce_config(&state, &block, name, 2, 3));
    let plan = expect_google(
        &work,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        2,
        &env,
    );
    assert!(plan.contains("~ min_size"), "{plan}");
    expect_google(
        &work,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        0,
        &env,
    );
    let sizes = fake_groups(&fake);
    let nodes: Vec<i64> = sizes
        .iter()
        .filter(|(n, _)| n.contains("nodes"))
        .map(|(_, size)| *size)
        .collect();
    assert_eq!(nodes, vec![2], "{sizes:?}");
    expect_google(
        &work,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
        &env,
    );

    expect_google(
        &work,
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
        &env,
    );
    assert_eq!(
        fake_objects(&fake),
        Vec::<String>::new(),
        "left in the fake"
    );
    assert_eq!(
        gcs_objects(&gcs, &format!("{prefix}/{name}/")),
        Vec::<String>::new(),
        "left in the bucket"
    );
    drop(fake);
}

/// No Google credential anywhere for a `gs://` store: a diagnostic on the provider's
/// `gce` block naming where credentials come from, before anything is written; a
/// credentials file that is not one is a diagnostic on `gce.credentials` that does not
/// quote it.
#[test]
fn a_missing_google_credential_names_the_gce_block() {
    let Some((gcs, terraform)) = gcs_setup() else {
        return;
    };
    let prefix = unique_prefix("tf-gce-nocred");
    let state = format!("gs://kops-test/{prefix}");
    let work = Work::new(&terraform, "http://127.0.0.1:9");
    work.write("id.pub", SSH_KEY);
    let env = google_env(&work);
    work.write(
        "main.tf",
        &gce_config(&state, "", "nocred.example.com", 1, 1),
    );
    let text = expect_google(
        &work,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        1,
        &env,
    );
    assert!(text.contains("Missing or rejected credential"), "{text}");
    assert!(text.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{text}");
    assert!(
        text.contains("with provider[\"registry.terraform.io/terraform-kops/kops\"]")
            || text.contains("in provider \"kops\""),
        "{text}"
    );

    let secret = "not-json-but-a-secret-41c7";
    work.write(
        "key.json",
        &format!("{{\"type\": \"service_account\", \"private_key\": \"{secret}\"}}"),
    );
    let block = format!(
        "gce {{\n    credentials      = file(\"${{path.module}}/key.json\")\n    storage_endpoint = \"{gcs}\"\n  }}"
    );
    work.write(
        "main.tf",
        &gce_config(&state, &block, "nocred.example.com", 1, 1),
    );
    let text = expect_google(
        &work,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
        1,
        &env,
    );
    // Refused when read, or when first used: either way on the attribute's block.
    assert!(
        text.contains("Invalid credentials") || text.contains("Missing or rejected credential"),
        "{text}"
    );
    assert!(!text.contains(secret), "the key was quoted: {text}");
    assert_eq!(
        gcs_objects(&gcs, &format!("{prefix}/")),
        Vec::<String>::new()
    );
}

/// Writes `body` at `key` in the emulator's bucket `kops-test`.
fn gcs_put(emulator: &str, key: &str, body: &str) {
    let script = "import sys, urllib.request, urllib.parse\n\
        base, key, body = sys.argv[1], sys.argv[2], sys.argv[3]\n\
        url = base + '/upload/storage/v1/b/kops-test/o?' + urllib.parse.urlencode({'uploadType': 'media', 'name': key})\n\
        urllib.request.urlopen(urllib.request.Request(url, data=body.encode(), method='POST', headers={'Content-Type': 'text/plain'}))\n";
    let out = Command::new("python3")
        .args(["-c", script, emulator, key, body])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "writing {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The object at `key` in the emulator's bucket `kops-test`.
fn gcs_get(emulator: &str, key: &str) -> String {
    let script = "import sys, urllib.request, urllib.parse\n\
        base, key = sys.argv[1], sys.argv[2]\n\
        sys.stdout.write(urllib.request.urlopen(base + '/storage/v1/b/kops-test/o/' + urllib.parse.quote(key, safe='') + '?alt=media').read().decode())\n";
    let out = Command::new("python3")
        .args(["-c", script, emulator, key])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reading {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The managed instance groups in the fake: name -> target size.
fn fake_groups(fake: &kops_mock::gce::rest::FakeGceApi) -> std::collections::BTreeMap<String, i64> {
    fake.objects()
        .into_iter()
        .filter(|o| o.collection.ends_with("instanceGroupManagers"))
        .map(|o| (o.name, o.json["targetSize"].as_i64().unwrap_or(-1)))
        .collect()
}

/// The updater's `apply` phase tunables, on GCE: `lifecycle_overrides` reach the
/// library's update (the firewall rules `Ignore`d are not created, a bad lifecycle is a
/// diagnostic naming the attribute); a state last written by a newer kOps
/// release (its `kops-version.txt`) is refused, naming the file, until
/// `allow_kops_downgrade`.
#[test]
fn the_updater_applies_lifecycle_overrides_and_refuses_a_kops_downgrade() {
    let Some((gcs, terraform)) = gcs_setup() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt
        .block_on(kops_mock::gce::rest::FakeGceApi::start(
            "testproject",
            "us-test1",
        ))
        .unwrap();
    let prefix = unique_prefix("tf-gce-apply");
    let state = format!("gs://kops-test/{prefix}");
    let name = "tfapply.example.com";
    let work = Work::new(&terraform, "http://127.0.0.1:9");
    work.write("id.pub", SSH_KEY);
    let env = google_env(&work);
    let block = format!(
        "gce {{\n    endpoint         = \"{}\"\n    storage_endpoint = \"{gcs}\"\n  }}",
        fake.url()
    );
    let config = |apply: &str, node_max: u32| {
        // (No roll here: the machines are not what this test is about.)
        gce_config(&state, &block, name, 1, node_max)
            .replace(
                "  rolling_update {\n",
                &format!("  apply {{\n{apply}\n  }}\n\n  rolling_update {{\n"),
            )
            .replace("skip       = false", "skip       = true")
    };
    let apply = ["apply", "-auto-approve", "-input=false", "-no-color"];

    // Firewall rules ignored: the rest of the cluster is made, they are not.
    let firewalls =
        |objects: &[String]| objects.iter().filter(|o| o.contains("/firewalls/")).count();
    work.write(
        "main.tf",
        &config("    lifecycle_overrides = { FirewallRule = \"Ignore\" }", 1),
    );
    expect_google(&work, &apply, 0, &env);
    let objects = fake_objects(&fake);
    assert_eq!(fake_groups(&fake).len(), 2, "{objects:#?}");
    assert_eq!(firewalls(&objects), 0, "{objects:#?}");

    // A lifecycle that is none: a diagnostic on the attribute, nothing run.
    work.write(
        "main.tf",
        &config(
            "    lifecycle_overrides = { FirewallRule = \"Sometimes\" }",
            1,
        ),
    );
    let out = expect_google(&work, &apply, 1, &env);
    assert!(out.contains("Invalid lifecycle override"), "{out}");
    assert!(out.contains("lifecycle_overrides"), "{out}");
    assert!(out.contains("FirewallRule"), "{out}");
    assert_eq!(firewalls(&fake_objects(&fake)), 0);

    // Without the override the updater runs again and makes them.
    work.write("main.tf", &config("    skip = false", 1));
    expect_google(&work, &apply, 0, &env);
    let objects = fake_objects(&fake);
    assert!(firewalls(&objects) > 0, "{objects:#?}");
    let groups = fake_groups(&fake);
    let version_key = format!("{prefix}/{name}/kops-version.txt");
    assert_eq!(
        gcs_get(&gcs, &version_key).trim(),
        kops_model::DEFAULT_KOPS_RELEASE
    );

    // A newer kOps updated the cluster since: a change is refused, naming the file and
    // the release, and nothing changes in the cloud.
    gcs_put(&gcs, &version_key, "99.0.0");
    work.write("main.tf", &config("    skip = false", 2));
    let out = expect_google(&work, &apply, 1, &env);
    assert!(out.contains("kops-version.txt"), "{out}");
    assert!(out.contains("99.0.0"), "{out}");
    assert!(out.contains("downgrade"), "{out}");
    assert_eq!(fake_groups(&fake), groups, "the cloud changed");
    assert_eq!(gcs_get(&gcs, &version_key).trim(), "99.0.0");

    // Allowed, the change applies and the file names this release again.
    work.write("main.tf", &config("    allow_kops_downgrade = true", 2));
    expect_google(&work, &apply, 0, &env);
    assert_eq!(
        gcs_get(&gcs, &version_key).trim(),
        kops_model::DEFAULT_KOPS_RELEASE
    );
    expect_google(
        &work,
        &["plan", "-detailed-exitcode", "-input=false", "-no-color"],
        0,
        &env,
    );

    expect_google(
        &work,
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
        &env,
    );
    assert_eq!(
        fake_objects(&fake),
        Vec::<String>::new(),
        "left in the fake"
    );
    drop(fake);
}

/// Each connection's bytes as the client sent them.
type Connections = std::sync::Arc<std::sync::Mutex<Vec<std::sync::Arc<std::sync::Mutex<Vec<u8>>>>>>;

/// A TCP proxy to moto that keeps every byte clients send, one buffer per connection:
/// which requests were made, and with which credentials they were signed.
struct RecordingProxy {
    url: String,
    sent: Connections,
}

impl RecordingProxy {
    fn start(upstream: &str) -> RecordingProxy {
        use std::io::{Read, Write};
        use std::sync::{Arc, Mutex};
        let target = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let sent: Connections = Arc::default();
        let all = sent.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { continue };
                let Ok(mut server) = std::net::TcpStream::connect(&target) else {
                    continue;
                };
                let log: Arc<Mutex<Vec<u8>>> = Arc::default();
                all.lock().unwrap().push(log.clone());
                let (mut client_r, mut server_w) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(n) = client_r.read(&mut buf) {
                        if n == 0 || server_w.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        log.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                    let _ = server_w.shutdown(std::net::Shutdown::Write);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server, &mut client);
                    let _ = client.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        RecordingProxy { url, sent }
    }

    /// Every connection's bytes, as text.
    fn requests(&self) -> Vec<String> {
        self.sent
            .lock()
            .unwrap()
            .iter()
            .map(|c| String::from_utf8_lossy(&c.lock().unwrap()).into_owned())
            .collect()
    }
}

/// `aws { profile, assume_role { role_arn, session_name, external_id } }`: with no key in
/// the environment, the profile of an AWS config file in a temp dir signs STS AssumeRole
/// (moto answers it), and the role's temporary credentials sign the cluster's requests and
/// the store's; the cluster is created and destroyed.
#[test]
fn a_profile_and_an_assumed_role_reach_the_cloud() {
    let Some((endpoint, terraform)) = setup() else {
        return;
    };
    let proxy = RecordingProxy::start(&endpoint);
    let bucket = format!("kops-tf-role-{}", std::process::id());
    let name = &format!("role-{}.{ZONE}", std::process::id());
    prepare(&endpoint, &bucket);
    let work = Work::new(&terraform, &endpoint);
    work.write("id.pub", SSH_KEY);
    work.write(
        "aws-config",
        &format!("[profile kops-tf]\nregion = {REGION}\n"),
    );
    work.write(
        "aws-credentials",
        "[kops-tf]\naws_access_key_id = AKIAPROFILEKEY\naws_secret_access_key = profilesecret\n",
    );
    let provider = format!(
        "provider \"kops\" {{\n  state_store = \"s3://{bucket}\"\n  aws {{\n    \
         endpoint = \"{}\"\n    profile  = \"kops-tf\"\n    assume_role {{\n      \
         role_arn     = \"arn:aws:iam::123456789012:role/kops-admin\"\n      \
         session_name = \"tf-kops\"\n      external_id  = \"ext-1234\"\n    }}\n  }}\n}}",
        proxy.url
    );
    let plain = format!("provider \"kops\" {{\n  state_store = \"s3://{bucket}\"\n}}");
    let hcl = config(&bucket, name, 2, "t3.medium");
    assert!(hcl.contains(&plain));
    work.write("main.tf", &hcl.replace(&plain, &provider));
    let run = |args: &[&str], code: i32| {
        let out = Command::new(&work.terraform)
            .args(args)
            .current_dir(work.path())
            .env("TF_CLI_CONFIG_FILE", work.path().join("terraformrc"))
            .env("CHECKPOINT_DISABLE", "1")
            .env("TF_IN_AUTOMATION", "1")
            .env("AWS_CONFIG_FILE", work.path().join("aws-config"))
            .env(
                "AWS_SHARED_CREDENTIALS_FILE",
                work.path().join("aws-credentials"),
            )
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_REGION", REGION)
            .env_remove("AWS_ENDPOINT_URL")
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_PROFILE")
            .env_remove("S3_ENDPOINT")
            .env_remove("S3_ACCESS_KEY_ID")
            .env_remove("S3_SECRET_ACCESS_KEY")
            .output()
            .expect("terraform runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "terraform {args:?}:\n{text}");
        text
    };
    run(&["apply", "-auto-approve", "-input=false", "-no-color"], 0);
    assert!(
        objects(&endpoint, &bucket, "")
            .iter()
            .any(|o| o.starts_with(name)),
        "the spec is in the bucket"
    );
    assert_ne!(leftovers(&endpoint, name), "{}", "the cluster is in moto");
    let requests = proxy.requests();
    let assume: Vec<&String> = requests
        .iter()
        .filter(|r| r.contains("Action=AssumeRole"))
        .collect();
    assert!(!assume.is_empty(), "no STS AssumeRole request went out");
    for r in &assume {
        // Signed with the profile's key, for the role asked for, as configured.
        assert!(r.contains("Credential=AKIAPROFILEKEY/"), "{r}");
        assert!(r.contains("RoleSessionName=tf-kops"), "{r}");
        assert!(r.contains("ExternalId=ext-1234"), "{r}");
        assert!(r.contains("kops-admin"), "{r}");
    }
    // The cloud's requests (EC2's VPC, S3's objects) carry the role's temporary key.
    let vpc = requests
        .iter()
        .find(|r| r.contains("Action=CreateVpc"))
        .expect("the VPC was created through the proxy");
    assert!(vpc.contains("Credential=ASIA"), "{vpc}");
    assert!(!vpc.contains("Credential=AKIAPROFILEKEY/"), "{vpc}");
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with("PUT /") && r.contains("Credential=ASIA")),
        "the store's writes carry the role's key"
    );
    run(
        &["destroy", "-auto-approve", "-input=false", "-no-color"],
        0,
    );
    assert_eq!(leftovers(&endpoint, name), "{}");
}
