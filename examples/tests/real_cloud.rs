//! The `kops` binary on the real AWS backend and remote state stores, no `--mock-cloud`:
//! AWS APIs and an `s3://` store on moto server (`KOPS_TEST_S3_ENDPOINT`), a `gs://`
//! store on the GCS emulator (`KOPS_TEST_GCS_ENDPOINT`), and loopback fakes for the
//! answers the emulators never give (rejected credentials, a bucket of another account).
//!
//! moto is shared with the other test binaries and never reset: each test has its own
//! cluster name, region (EC2 state is per region) and bucket. Requests go through a
//! counting proxy in this process, so a test can say how many requests a command sent.
//! Setup and the final inventory use boto3 (installed with moto), so what the CLI left
//! behind is checked through another client than the one that made it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value as Json, json};
use support::{gcs_emulator, moto, require_emulators};

mod support;

/// An image moto has in every region (its built-in Ubuntu AMI).
const MOTO_AMI: &str = "ami-1e749f67";

/// The DNS zone the clusters' names live in (created on moto when missing).
const PARENT_ZONE: &str = "cli-real.example";

/// Plan changes moto cannot converge (it ignores the call that sets the field, or does
/// not store it), as `(task key prefix, field)`; any other change after an apply fails.
const MOTO_GAPS: &[(&str, &str)] = &[("Subnet/", "private_dns_hostname_type_on_launch")];

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    #[track_caller]
    fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code {} (wanted {code})\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// A user's error: exit 1, exactly one line `error: ...` naming `needles`, no
    /// internal error or panic.
    #[track_caller]
    fn expect_user_error(self, needles: &[&str]) -> Run {
        let r = self.expect(1);
        let text = r.stderr.trim_end();
        assert!(text.starts_with("error: "), "stderr: {}", r.stderr);
        assert_eq!(text.lines().count(), 1, "not one line: {}", r.stderr);
        assert!(!text.contains("internal error"), "stderr: {}", r.stderr);
        assert!(!text.contains("panicked"), "stderr: {}", r.stderr);
        for n in needles {
            assert!(text.contains(n), "stderr does not mention {n:?}: {text}");
        }
        r
    }
}

// --- A counting proxy and a fixed-answer fake, both on loopback -------------------------

/// Reads one HTTP/1.1 request head (through the empty line); `None` at end of stream.
fn read_head(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        head.extend_from_slice(&line);
        if line == b"\r\n" || line == b"\n" {
            return Some(head);
        }
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Copies one request body (Content-Length or chunked) from `r` to `w`.
fn copy_body(head: &str, r: &mut impl BufRead, w: &mut impl Write) -> std::io::Result<()> {
    if header(head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut line = String::new();
            r.read_line(&mut line)?;
            w.write_all(line.as_bytes())?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if size == 0 {
                // Trailers, then the empty line.
                loop {
                    let mut t = String::new();
                    if r.read_line(&mut t)? == 0 || t == "\r\n" || t == "\n" {
                        w.write_all(t.as_bytes())?;
                        return Ok(());
                    }
                    w.write_all(t.as_bytes())?;
                }
            }
            std::io::copy(&mut r.take(size as u64 + 2), w)?;
        }
    }
    let len: u64 = header(head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    std::io::copy(&mut r.take(len), w)?;
    Ok(())
}

/// What a request to moto asks for: its method and path, and for the AWS query protocol
/// (EC2, IAM, autoscaling, ...) the `Action` of its form body.
fn operation(head: &str, body: &[u8]) -> String {
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    let method = parts.next().unwrap_or_default();
    let path = parts.next().unwrap_or_default();
    let path = path.split('?').next().unwrap_or_default();
    let action = String::from_utf8_lossy(body)
        .split('&')
        .find_map(|kv| kv.strip_prefix("Action=").map(str::to_owned));
    let target = header(head, "x-amz-target").map(str::to_owned);
    match action.or(target) {
        Some(a) => a,
        None => format!("{method} {path}"),
    }
}

/// An HTTP proxy in front of moto that counts the requests passing through.
struct Proxy {
    url: String,
    count: Arc<AtomicU64>,
    /// The [`operation`] of every request since the last [`take`](Proxy::take).
    operations: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let count = Arc::new(AtomicU64::new(0));
        let c = count.clone();
        let operations = Arc::new(Mutex::new(Vec::new()));
        let ops = operations.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let c = c.clone();
                let ops = ops.clone();
                let (mut s_read, mut c_write) =
                    (server.try_clone().unwrap(), client.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_read, &mut c_write);
                    let _ = c_write.shutdown(Shutdown::Both);
                });
                std::thread::spawn(move || {
                    let mut r = BufReader::new(client);
                    let mut w = server;
                    while let Some(head) = read_head(&mut r) {
                        c.fetch_add(1, Ordering::SeqCst);
                        let text = String::from_utf8_lossy(&head).into_owned();
                        let mut body = Vec::new();
                        if w.write_all(&head).is_err()
                            || copy_body(&text, &mut r, &mut body).is_err()
                            || w.write_all(&body).is_err()
                        {
                            break;
                        }
                        ops.lock().unwrap().push(operation(&text, &body));
                    }
                    let _ = w.shutdown(Shutdown::Both);
                });
            }
        });
        Proxy {
            url,
            count,
            operations,
        }
    }

    fn take(&self) -> u64 {
        self.operations.lock().unwrap().clear();
        self.count.swap(0, Ordering::SeqCst)
    }

    /// The requests since the last [`take`](Proxy::take), by operation: `Name xN` sorted
    /// by count (most first).
    fn operations(&self) -> String {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for op in self.operations.lock().unwrap().iter() {
            // One entry for every group's object of a kind (`.../extra-7/...` -> `*`).
            let op = op
                .split('/')
                .map(|seg| if seg.starts_with("extra-") { "*" } else { seg })
                .collect::<Vec<_>>()
                .join("/");
            *by.entry(op).or_default() += 1;
        }
        let mut v: Vec<(String, usize)> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.iter()
            .map(|(op, n)| format!("{op} x{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Proxy {
    /// The objects read more than once since the last [`take`](Proxy::take) (`GET` of a
    /// path below the bucket; listings are `GET` of the bucket itself).
    fn repeated_reads(&self) -> Vec<String> {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for op in self.operations.lock().unwrap().iter() {
            let Some(path) = op.strip_prefix("GET /") else {
                continue;
            };
            if path.trim_end_matches('/').contains('/') {
                *by.entry(op.clone()).or_default() += 1;
            }
        }
        by.into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(op, n)| format!("{op} x{n}"))
            .collect()
    }
}

/// A server answering every request with one fixed response, recording the requests'
/// first lines.
struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    fn start(status: &'static str, content_type: &'static str, body: String) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let seen = seen.clone();
                let body = body.clone();
                std::thread::spawn(move || {
                    let mut w = stream.try_clone().unwrap();
                    let mut r = BufReader::new(stream);
                    while let Some(head) = read_head(&mut r) {
                        let text = String::from_utf8_lossy(&head).into_owned();
                        seen.lock()
                            .unwrap()
                            .push(text.lines().next().unwrap_or("").to_string());
                        if copy_body(&text, &mut r, &mut std::io::sink()).is_err() {
                            return;
                        }
                        let resp = format!(
                            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nx-amzn-requestid: fake\r\n\r\n{body}",
                            body.len()
                        );
                        if w.write_all(resp.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Fake { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

// --- boto3 on moto ----------------------------------------------------------------------

/// Runs a Python snippet with boto3 clients on `endpoint` (`client(name, region)` is
/// defined; `args` is `sys.argv[1:]`), returning what it prints as JSON.
fn boto(endpoint: &str, script: &str, args: &[&str]) -> Json {
    boto_as(endpoint, ("testing", "testing"), script, args)
}

/// [`boto`] with the access key `(id, secret)`.
fn boto_as(endpoint: &str, (id, secret): (&str, &str), script: &str, args: &[&str]) -> Json {
    let prelude = r#"
import sys, json, boto3, botocore.config
EP, KEY, SECRET = sys.argv[1], sys.argv[2], sys.argv[3]
def client(name, region="us-east-1"):
    cfg = botocore.config.Config(s3={"addressing_style": "path"})
    return boto3.client(name, region_name=region, endpoint_url=EP,
        aws_access_key_id=KEY, aws_secret_access_key=SECRET, config=cfg)
args = sys.argv[4:]
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!("{prelude}\n{script}"))
        .arg(endpoint)
        .args([id, secret])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "boto3 script failed:\n{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "boto3 script printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Creates `bucket` (when missing) and the parent DNS zone (when missing).
fn prepare_moto(endpoint: &str, bucket: &str) {
    boto(
        endpoint,
        r#"
s3 = client("s3")
try:
    s3.create_bucket(Bucket=args[0])
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
r53 = client("route53")
zones = [z for z in r53.list_hosted_zones()["HostedZones"] if z["Name"] == args[1] + "."]
if not zones:
    r53.create_hosted_zone(Name=args[1] + ".", CallerReference="kops-cli-real-" + args[1])
print("{}")
"#,
        &[bucket, PARENT_ZONE],
    );
}

/// Every object of `bucket` under `prefix` with its ETag.
fn objects(endpoint: &str, bucket: &str, prefix: &str) -> BTreeMap<String, String> {
    let v = boto(
        endpoint,
        r#"
s3 = client("s3")
out = {}
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args[0], Prefix=args[1]):
    for o in page.get("Contents", []):
        out[o["Key"]] = o["ETag"]
print(json.dumps(out))
"#,
        &[bucket, prefix],
    );
    serde_json::from_value(v).unwrap()
}

/// What moto still holds of `cluster` in `region`, by kind (empty kinds left out).
fn leftovers(endpoint: &str, region: &str, cluster: &str) -> BTreeMap<String, Vec<String>> {
    leftovers_as(endpoint, ("testing", "testing"), region, cluster)
}

/// [`leftovers`] read with the access key `creds`.
fn leftovers_as(
    endpoint: &str,
    creds: (&str, &str),
    region: &str,
    cluster: &str,
) -> BTreeMap<String, Vec<String>> {
    let v = boto_as(
        endpoint,
        creds,
        r#"
region, cluster = args[0], args[1]
ec2 = client("ec2", region)
tag = [{"Name": "tag:KubernetesCluster", "Values": [cluster]}]
out = {}
def put(kind, items):
    if items:
        out[kind] = sorted(items)
put("vpc", [v["VpcId"] for v in ec2.describe_vpcs(Filters=tag)["Vpcs"]])
put("subnet", [s["SubnetId"] for s in ec2.describe_subnets(Filters=tag)["Subnets"]])
put("security group", [g["GroupId"] for g in ec2.describe_security_groups(Filters=tag)["SecurityGroups"]])
put("internet gateway", [g["InternetGatewayId"] for g in ec2.describe_internet_gateways(Filters=tag)["InternetGateways"]])
put("route table", [t["RouteTableId"] for t in ec2.describe_route_tables(Filters=tag)["RouteTables"]])
put("launch template", [t["LaunchTemplateName"] for t in ec2.describe_launch_templates()["LaunchTemplates"] if t["LaunchTemplateName"].endswith(cluster)])
put("volume", [v["VolumeId"] for v in ec2.describe_volumes(Filters=tag)["Volumes"]])
put("key pair", [k["KeyName"] for k in ec2.describe_key_pairs()["KeyPairs"] if cluster in k["KeyName"]])
put("instance", [i["InstanceId"] for r in ec2.describe_instances(Filters=tag)["Reservations"] for i in r["Instances"] if i["State"]["Name"] not in ("terminated", "shutting-down")])
asg = client("autoscaling", region)
put("autoscaling group", [g["AutoScalingGroupName"] for g in asg.describe_auto_scaling_groups()["AutoScalingGroups"] if g["AutoScalingGroupName"].endswith(cluster)])
iam = client("iam")
put("iam role", [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].endswith(cluster)])
put("instance profile", [p["InstanceProfileName"] for p in iam.list_instance_profiles()["InstanceProfiles"] if p["InstanceProfileName"].endswith(cluster)])
r53 = client("route53")
recs = []
for z in r53.list_hosted_zones()["HostedZones"]:
    for rr in r53.list_resource_record_sets(HostedZoneId=z["Id"])["ResourceRecordSets"]:
        if rr["Name"].rstrip(".").endswith(cluster):
            recs.append(rr["Name"] + " " + rr["Type"])
put("dns record", recs)
sqs = client("sqs", region)
put("queue", [q for q in sqs.list_queues().get("QueueUrls", []) if cluster.replace(".", "-") in q])
ev = client("events", region)
put("event rule", [r["Name"] for r in ev.list_rules()["Rules"] if cluster in r["Name"]])
print(json.dumps(out))
"#,
        &[region, cluster],
    );
    serde_json::from_value(v).unwrap()
}

// --- Running kops -------------------------------------------------------------------------

/// A scratch directory and the environment of `kops` runs against moto.
struct Env {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

/// Variables a run must not inherit: they would point the SDKs elsewhere or leak the
/// developer's own credentials into a test.
const CLEARED: &[&str] = &[
    "KOPS_STATE_STORE",
    "KOPS_MOCK_CLOUD",
    "KOPS_CLUSTER_NAME",
    "KOPS_EDITOR",
    "EDITOR",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "S3_ENDPOINT",
    "S3_REGION",
    "S3_ACCESS_KEY_ID",
    "S3_SECRET_ACCESS_KEY",
    "STORAGE_EMULATOR_HOST",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "GCE_METADATA_HOST",
];

impl Env {
    /// No credentials or endpoints at all: the SDKs find nothing (the shared config files
    /// point at nothing, instance metadata is off, HOME is the scratch directory).
    fn bare() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().display().to_string();
        let vars = vec![
            ("NO_COLOR", "1".to_string()),
            ("HOME", home.clone()),
            ("AWS_CONFIG_FILE", format!("{home}/no-aws-config")),
            (
                "AWS_SHARED_CREDENTIALS_FILE",
                format!("{home}/no-aws-credentials"),
            ),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Env { dir, vars }
    }

    /// The cloud (`AWS_ENDPOINT_URL`) at `cloud` and the S3 store (`S3_ENDPOINT`) at
    /// `store`, both with moto's test credentials, in `region`.
    fn aws(cloud: &str, store: &str, region: &str) -> Env {
        let mut e = Env::bare();
        e.set("AWS_ENDPOINT_URL", cloud);
        e.set("AWS_ACCESS_KEY_ID", "testing");
        e.set("AWS_SECRET_ACCESS_KEY", "testing");
        e.set("AWS_REGION", region);
        e.set("S3_ENDPOINT", store);
        e.set("S3_ACCESS_KEY_ID", "testing");
        e.set("S3_SECRET_ACCESS_KEY", "testing");
        e
    }

    fn set(&mut self, k: &str, v: &str) {
        self.vars.retain(|(x, _)| x != k);
        self.vars.push((k.to_string(), v.to_string()));
    }

    fn unset(&mut self, k: &str) {
        self.vars.retain(|(x, _)| x != k);
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn kops(&self, args: &[&str]) -> Run {
        self.kops_with(args, &[])
    }

    fn kops_with(&self, args: &[&str], extra: &[(&str, &str)]) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kops"));
        for v in CLEARED {
            c.env_remove(v);
        }
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        c.current_dir(self.dir.path()).args(args);
        Run::from(c.output().unwrap())
    }

    /// A shell script usable as `$EDITOR`.
    fn editor(&self, name: &str, body: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, format!("#!/bin/sh\nset -e\n{body}\n")).unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
        p.display().to_string()
    }
}

/// Deletes what an earlier, interrupted run left of `cluster` (moto is never reset).
fn fresh(env: &Env, state: &str, cluster: &str) {
    let r = env.kops(&["--state", state, "delete", "cluster", cluster, "--yes"]);
    assert!(
        r.code == 0 || r.stderr.contains("not found"),
        "cleaning up {cluster}: {}{}",
        r.stdout,
        r.stderr
    );
}

/// The plan's changes moto can store: every create, update or delete whose fields are
/// not all in [`MOTO_GAPS`].
fn real_changes(plan: &Json) -> Vec<String> {
    plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["action"] != "unchanged" && i["action"] != "ignored")
        .filter(|i| {
            let key = i["key"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| i["key"].to_string());
            let fields: Vec<&str> = i["changes"]
                .as_array()
                .map(|c| c.iter().filter_map(|f| f["field"].as_str()).collect())
                .unwrap_or_default();
            fields.is_empty()
                || !fields
                    .iter()
                    .all(|f| MOTO_GAPS.iter().any(|(k, g)| key.starts_with(k) && f == g))
        })
        .map(|i| format!("{} {} {}", i["action"], i["key"], i["changes"]))
        .collect()
}

/// The Terraform files parse as HCL2 (python-hcl2).
fn check_terraform(dir: &Path) {
    let script = "import sys, hcl2\nfor p in sys.argv[1:]:\n    hcl2.load(open(p))\n";
    let mut c = Command::new("python3");
    c.arg("-c").arg(script);
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "tf") {
            c.arg(p);
            n += 1;
        }
    }
    assert!(n > 0, "no .tf files in {}", dir.display());
    let r = Run::from(c.output().unwrap());
    if r.stderr.contains("No module named 'hcl2'") && !require_emulators() {
        eprintln!("skipping the python-hcl2 check: python-hcl2 not installed");
        return;
    }
    assert_eq!(
        r.code, 0,
        "python-hcl2 rejects the Terraform:\n{}",
        r.stderr
    );
}

/// The no-op dry run of `cluster`: its requests to moto (cloud, state store).
fn noop_requests(
    env: &Env,
    state: &str,
    cluster: &str,
    cloud: &Proxy,
    store: &Proxy,
) -> (u64, u64) {
    cloud.take();
    store.take();
    let r = env.kops(&["--state", state, "update", "cluster", cluster, "-o", "json"]);
    assert!(r.code == 0 || r.code == 2, "{}{}", r.stdout, r.stderr);
    let plan: Json = serde_json::from_str(&r.stdout).unwrap();
    let left = real_changes(&plan);
    assert!(
        left.is_empty(),
        "the dry run after apply plans changes: {left:#?}"
    );
    println!("cloud: {}", cloud.operations());
    println!("state store: {}", store.operations());
    let twice = store.repeated_reads();
    assert!(
        twice.is_empty(),
        "a dry run reads nothing of the state store twice: {twice:?}"
    );
    (cloud.take(), store.take())
}

// --- The tests ------------------------------------------------------------------------------

/// The binary's runtime opens sockets: a command on an `s3://` store and the real AWS
/// backend reaches moto (it failed before anything was sent when the runtime had no IO).
#[test]
fn the_binary_talks_to_moto() {
    let Some(ep) = moto() else { return };
    let (region, bucket, cluster) = ("us-west-1", "kops-cli-real-io", "io.cli-real.example");
    prepare_moto(&ep, bucket);
    let env = Env::aws(&ep, &ep, region);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    env.kops(&[
        "--state",
        &state,
        "create",
        "cluster",
        cluster,
        "--zones",
        "us-west-1a",
        "--image",
        MOTO_AMI,
    ])
    .expect(0);
    let r = env.kops(&["--state", &state, "get", "clusters"]).expect(0);
    assert!(r.stdout.contains(cluster), "{}", r.stdout);
    assert!(objects(&ep, bucket, cluster).contains_key(&format!("{cluster}/config")));
    // The real backend: a dry run plans the whole cluster.
    let r = env
        .kops(&["--state", &state, "update", "cluster", cluster])
        .expect(2);
    assert!(r.stdout.contains("VPC/"), "{}", r.stdout);
    env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"])
        .expect(0);
    assert!(objects(&ep, bucket, cluster).is_empty());
}

/// `create cluster`'s options from kOps' create goldens on moto (the cloud answers the
/// default machine types, the store is `s3://`): API-server groups
/// (`--api-server-count`, `--api-server-size`) and `--set` with kOps' `cluster.` prefix.
#[test]
fn create_cluster_options_on_moto() {
    let Some(ep) = moto() else { return };
    let (region, bucket, cluster) = (
        "eu-north-1",
        "kops-cli-real-create",
        "servers.cli-real.example",
    );
    prepare_moto(&ep, bucket);
    let env = Env::aws(&ep, &ep, region);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    env.kops(&[
        "--state",
        &state,
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-north-1a,eu-north-1b",
        "--image",
        MOTO_AMI,
        "--dns-zone",
        PARENT_ZONE,
        "--api-server-count",
        "3",
        "--api-server-size",
        "m5.large",
        "--set",
        "cluster.spec.kubelet.maxPods=200",
    ])
    .expect(0);
    let groups = env
        .kops(&[
            "--state", &state, "get", "ig", "--name", cluster, "-o", "yaml",
        ])
        .expect(0)
        .stdout;
    let api = support::groups_of_role(&groups, "APIServer");
    let names: Vec<&str> = api.iter().map(|g| g.name()).collect();
    assert_eq!(
        names,
        ["apiserver-eu-north-1a", "apiserver-eu-north-1b"],
        "{groups}"
    );
    let total: i32 = api.iter().map(|g| g.spec.min_size.unwrap_or(0)).sum();
    assert_eq!(total, 3, "{groups}");
    for g in &api {
        assert_eq!(g.spec.machine_type.as_deref(), Some("m5.large"), "{groups}");
    }
    let spec = env
        .kops(&["--state", &state, "get", "cluster", cluster, "-o", "yaml"])
        .expect(0)
        .stdout;
    assert!(spec.contains("maxPods: 200"), "{spec}");
    env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"])
        .expect(0);
}

#[test]
fn cluster_lifecycle_on_moto() {
    let Some(ep) = moto() else { return };
    // The name is one whose 32-character target-group names do not cut at a `-`:
    // kOps' truncation then writes `--` (`kops-controller-life-cli--<hash>`), which AWS
    // accepts but moto rejects.
    let (region, bucket, cluster) = (
        "eu-west-2",
        "kops-cli-real-lifecycle",
        "lifecycle.cli-real.example",
    );
    prepare_moto(&ep, bucket);
    let (cloud, store) = (Proxy::start(&ep), Proxy::start(&ep));
    let env = Env::aws(&cloud.url, &store.url, region);
    let state = format!("s3://{bucket}/clusters");
    fresh(&env, &state, cluster);
    let k = |args: &[&str]| {
        let mut a = vec!["--state", state.as_str()];
        a.extend_from_slice(args);
        env.kops(&a)
    };

    k(&[
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-west-2a",
        "--image",
        MOTO_AMI,
        "--node-count",
        "1",
    ])
    .expect(0);
    let r = k(&["get", "clusters"]).expect(0);
    assert!(
        r.stdout.contains(cluster) && r.stdout.contains("eu-west-2a"),
        "{}",
        r.stdout
    );
    let r = k(&["--name", cluster, "get", "instancegroups"]).expect(0);
    assert!(r.stdout.contains("nodes-eu-west-2a"), "{}", r.stdout);
    assert!(
        objects(&ep, bucket, &format!("clusters/{cluster}/"))
            .contains_key(&format!("clusters/{cluster}/config"))
    );

    // Dry run: everything to create.
    let r = k(&["update", "cluster", cluster]).expect(2);
    assert!(r.stdout.contains("Will create resources:"), "{}", r.stdout);
    assert!(r.stdout.contains("AutoscalingGroup/"), "{}", r.stdout);

    // Terraform.
    let out = env.path("tf");
    k(&[
        "update",
        "cluster",
        cluster,
        "--target",
        "terraform",
        "--out",
        out.to_str().unwrap(),
    ])
    .expect(0);
    let tf = std::fs::read_to_string(out.join("kubernetes.tf")).unwrap();
    assert!(tf.contains("resource \"aws_vpc\""), "{tf}");
    assert!(tf.contains("nodes-eu-west-2a"), "{tf}");
    check_terraform(&out);

    // Apply, then nothing is left to do.
    let r = k(&["update", "cluster", cluster, "--yes"]).expect(0);
    assert!(r.stdout.contains("updated"), "{}", r.stdout);
    let (c, s) = noop_requests(&env, &state, cluster, &cloud, &store);
    println!(
        "no-op dry run at 2 instance groups: {} requests to moto ({c} cloud, {s} state store)",
        c + s
    );
    let held = leftovers(&ep, region, cluster);
    // (No DNS record: with a public DNS zone the API's records come from dns-controller
    // in the cluster; `leftovers` still looks for any after the delete.)
    for kind in [
        "vpc",
        "subnet",
        "security group",
        "launch template",
        "autoscaling group",
        "iam role",
        "instance profile",
        "queue",
        "event rule",
    ] {
        assert!(
            held.contains_key(kind),
            "after apply moto holds no {kind}: {held:#?}"
        );
    }

    // Edit an instance group, update, and the change is in the cloud.
    let editor = env.editor("edit-ig.sh", "sed -i 's/maxSize: 1/maxSize: 3/' \"$1\"");
    env.kops_with(
        &[
            "--state",
            &state,
            "--name",
            cluster,
            "edit",
            "instancegroup",
            "nodes-eu-west-2a",
        ],
        &[("EDITOR", &editor)],
    )
    .expect(0);
    let r = k(&["update", "cluster", cluster, "-o", "json"]).expect(2);
    let plan: Json = serde_json::from_str(&r.stdout).unwrap();
    let changes = real_changes(&plan);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert!(
        changes[0].contains("AutoscalingGroup/nodes-eu-west-2a"),
        "{changes:#?}"
    );
    k(&["update", "cluster", cluster, "--yes"]).expect(0);
    let max = boto(
        &ep,
        r#"
asg = client("autoscaling", args[0])
g = [g for g in asg.describe_auto_scaling_groups()["AutoScalingGroups"] if g["AutoScalingGroupName"] == args[1]]
print(json.dumps(g[0]["MaxSize"] if g else None))
"#,
        &[region, &format!("nodes-eu-west-2a.{cluster}")],
    );
    assert_eq!(max, json!(3));
    noop_requests(&env, &state, cluster, &cloud, &store);

    // Delete: nothing of the cluster is left in moto or in the state bucket.
    k(&["delete", "cluster", cluster]).expect(2);
    k(&["delete", "cluster", cluster, "--yes"]).expect(0);
    let held = leftovers(&ep, region, cluster);
    assert!(held.is_empty(), "moto still holds: {held:#?}");
    let left = objects(&ep, bucket, &format!("clusters/{cluster}"));
    assert!(left.is_empty(), "the state bucket still holds: {left:#?}");
    k(&["get", "clusters", cluster]).expect(1);
}

/// The requests of a no-op dry run at 2, 20 and 200 instance groups: everything is read
/// once per command, and what AWS can only read one group at a time (each autoscaling
/// group's lifecycle hooks) comes from the record the apply before it left.
#[test]
fn noop_dry_run_requests_at_2_20_and_200_instance_groups() {
    let Some(ep) = moto() else { return };
    let (region, bucket, cluster) = ("eu-west-3", "kops-cli-real-fleet", "fleet.cli-real.example");
    prepare_moto(&ep, bucket);
    let (cloud, store) = (Proxy::start(&ep), Proxy::start(&ep));
    let env = Env::aws(&cloud.url, &store.url, region);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    env.kops(&[
        "--state",
        &state,
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-west-3a",
        "--image",
        MOTO_AMI,
        "--node-count",
        "1",
    ])
    .expect(0);
    let mut groups = 2;
    let mut counts = Vec::new();
    for target in [2, 20, 200] {
        // Node groups of no machines up to `target` (with the control plane's and the
        // first node group), in one manifest.
        let mut manifest = String::new();
        for i in groups..target {
            manifest.push_str(&format!(
                "apiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  name: extra-{i}\n  labels:\n    kops.k8s.io/cluster: {cluster}\nspec:\n  role: Node\n  image: {MOTO_AMI}\n  machineType: t3.medium\n  minSize: 0\n  maxSize: 0\n  subnets:\n  - eu-west-3a\n---\n"
            ));
        }
        if !manifest.is_empty() {
            let file = env.path(&format!("groups-{target}.yaml"));
            std::fs::write(&file, manifest).unwrap();
            env.kops(&["--state", &state, "create", "-f", file.to_str().unwrap()])
                .expect(0);
        }
        groups = target;
        let started = std::time::Instant::now();
        env.kops(&["--state", &state, "update", "cluster", cluster, "--yes"])
            .expect(0);
        let applied = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let (c, s) = noop_requests(&env, &state, cluster, &cloud, &store);
        println!(
            "no-op dry run at {target} instance groups: {} requests to moto ({c} cloud, {s} state store); apply {applied:.1} s, dry run {:.1} s",
            c + s,
            started.elapsed().as_secs_f64()
        );
        counts.push((target as u64, c, s));
    }
    // Both are flat, within 10 of the count at 2 groups: the state store's (the groups
    // come from their snapshot, the managed files from one listing per directory) and the
    // cloud's (every type listed once; the groups' lifecycle hooks, which AWS reads one
    // group per call, from the record of the apply just made).
    let (g0, c0, s0) = counts[0];
    for &(g, c, s) in &counts[1..] {
        assert!(
            c <= c0 + 10,
            "cloud requests at {g} groups: {c}, at {g0}: {c0}"
        );
        assert!(
            s <= s0 + 10,
            "state store requests at {g} groups: {s}, at {g0}: {s0}"
        );
    }
    // The dry runs took the hooks from the record of the apply before them, and say so in
    // one line; --refresh reads every group's (one call each).
    let r = env.kops(&["--state", &state, "update", "cluster", cluster]);
    assert!(r.code == 0 || r.code == 2, "{}{}", r.stdout, r.stderr);
    let note = format!("lifecycle hooks of {groups} autoscaling group(s) taken from the record");
    assert!(r.stderr.contains(&note), "{}", r.stderr);
    cloud.take();
    let r = env.kops(&[
        "--state",
        &state,
        "update",
        "cluster",
        cluster,
        "--refresh",
        "-o",
        "json",
    ]);
    assert!(r.code == 0 || r.code == 2, "{}{}", r.stdout, r.stderr);
    let ops = cloud.operations();
    assert!(
        ops.contains(&format!("DescribeLifecycleHooks x{groups}")),
        "{ops}"
    );
    assert!(!r.stderr.contains("taken from the record"), "{}", r.stderr);
    println!(
        "--refresh at {groups} instance groups: {} cloud requests",
        cloud.take()
    );
    let started = std::time::Instant::now();
    env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"])
        .expect(0);
    println!(
        "deleted {groups} instance groups in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let held = leftovers(&ep, region, cluster);
    assert!(held.is_empty(), "moto still holds: {held:#?}");
}

// --- Errors a user hits: one line, exit 1, the store unchanged -------------------------------

/// A cluster stored on moto for the error tests, and the store's objects then.
fn stored_cluster(
    env: &Env,
    ep: &str,
    bucket: &str,
    cluster: &str,
    create: &[&str],
) -> BTreeMap<String, String> {
    prepare_moto(ep, bucket);
    let state = format!("s3://{bucket}");
    fresh(env, &state, cluster);
    let mut a = vec!["--state", state.as_str(), "create", "cluster", cluster];
    a.extend_from_slice(create);
    env.kops(&a).expect(0);
    objects(ep, bucket, "")
}

#[test]
fn missing_aws_credentials_are_named() {
    let Some(ep) = moto() else { return };
    let (bucket, cluster) = ("kops-cli-real-errors-creds", "nocreds.cli-real.example");
    let mut env = Env::aws(&ep, &ep, "ap-south-1");
    let before = stored_cluster(
        &env,
        &ep,
        bucket,
        cluster,
        &["--zones", "ap-south-1a", "--image", MOTO_AMI],
    );
    // The cloud finds no credentials (the store keeps its own, S3_ACCESS_KEY_ID).
    env.unset("AWS_ACCESS_KEY_ID");
    env.unset("AWS_SECRET_ACCESS_KEY");
    env.kops(&[
        "--state",
        &format!("s3://{bucket}"),
        "update",
        "cluster",
        cluster,
    ])
    .expect_user_error(&[
        "AWS",
        "no AWS credentials",
        "profile \"default\"",
        "AWS_PROFILE",
    ]);
    let r = env.kops_with(
        &[
            "--state",
            &format!("s3://{bucket}"),
            "update",
            "cluster",
            cluster,
            "--yes",
        ],
        &[("AWS_PROFILE", "ops")],
    );
    r.expect_user_error(&["profile \"ops\""]);
    assert_eq!(objects(&ep, bucket, ""), before);

    // The S3 store without S3_ENDPOINT and without credentials: the SDK's chain finds none.
    let mut env = Env::bare();
    env.set("AWS_ENDPOINT_URL", &ep);
    env.set("AWS_REGION", "us-east-1");
    env.kops(&["--state", &format!("s3://{bucket}"), "get", "clusters"])
        .expect_user_error(&[
            "S3 state store s3://",
            "no AWS credentials",
            "profile \"default\"",
        ]);
    assert_eq!(objects(&ep, bucket, ""), before);

    // kOps' S3-compatible store without its keys.
    let mut env = Env::bare();
    env.set("S3_ENDPOINT", &ep);
    env.kops(&["--state", &format!("s3://{bucket}"), "get", "clusters"])
        .expect_user_error(&["S3_ENDPOINT", "S3_ACCESS_KEY_ID is not"]);
    env.set("S3_ACCESS_KEY_ID", "testing");
    env.kops(&["--state", &format!("s3://{bucket}"), "get", "clusters"])
        .expect_user_error(&["S3_SECRET_ACCESS_KEY is not"]);
    assert_eq!(objects(&ep, bucket, ""), before);
}

#[test]
fn rejected_aws_credentials_are_named() {
    let Some(ep) = moto() else { return };
    let (bucket, cluster) = ("kops-cli-real-errors-rejected", "rejected.cli-real.example");
    let sts = Fake::start(
        "403 Forbidden",
        "text/xml",
        "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error><RequestId>fake</RequestId></ErrorResponse>".into(),
    );
    let env = Env::aws(&ep, &ep, "ap-south-1");
    let before = stored_cluster(
        &env,
        &ep,
        bucket,
        cluster,
        &["--zones", "ap-south-1a", "--image", MOTO_AMI],
    );
    let mut env = Env::aws(&sts.url, &ep, "ap-south-1");
    env.set("AWS_PROFILE", "stale");
    env.unset("AWS_ACCESS_KEY_ID");
    env.unset("AWS_SECRET_ACCESS_KEY");
    std::fs::write(
        env.path("creds"),
        "[stale]\naws_access_key_id = AKIAOLD\naws_secret_access_key = old\n",
    )
    .unwrap();
    env.set(
        "AWS_SHARED_CREDENTIALS_FILE",
        env.path("creds").to_str().unwrap(),
    );
    env.kops(&[
        "--state",
        &format!("s3://{bucket}"),
        "update",
        "cluster",
        cluster,
        "--yes",
    ])
    .expect_user_error(&[
        "AWS rejected the credentials",
        "profile \"stale\"",
        "InvalidClientTokenId",
    ]);
    assert!(!sts.requests().is_empty(), "nothing reached the fake STS");
    assert_eq!(objects(&ep, bucket, ""), before);

    // The S3 store: S3 rejects the access key.
    let s3 = Fake::start(
        "403 Forbidden",
        "application/xml",
        "<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>".into(),
    );
    let env = Env::aws(&ep, &s3.url, "ap-south-1");
    env.kops(&["--state", &format!("s3://{bucket}"), "get", "clusters"])
        .expect_user_error(&[
            "S3 state store s3://",
            "rejected the credentials",
            "S3_ACCESS_KEY_ID",
            "InvalidAccessKeyId",
        ]);
}

/// One command on an `s3://` store and the AWS cloud resolves the SDK's credentials once:
/// the store and the cloud are built from one loaded AWS environment (one credentials
/// provider, one identity cache), so SSO, assume-role (with MFA: one prompt), container
/// and instance-metadata credentials are fetched once per command, not once per client.
/// The credentials come from the real SDK chain, a container-credentials endpoint on
/// loopback that counts its requests. A `file://` store on the mock cloud loads no AWS
/// environment at all: not even the instance metadata service is asked for a region.
#[test]
fn one_command_fetches_aws_credentials_once() {
    let Some(ep) = moto() else { return };
    let (region, bucket, cluster) = (
        "ca-central-1",
        "kops-cli-real-credentials-once",
        "once.cli-real.example",
    );
    prepare_moto(&ep, bucket);
    let credentials = Fake::start(
        "200 OK",
        "application/json",
        json!({
            "AccessKeyId": "testing",
            "SecretAccessKey": "testing",
            "Token": "container-session",
            "Expiration": "2099-01-01T00:00:00Z",
        })
        .to_string(),
    );
    let credentials_uri = format!("{}/v2/credentials/kops", credentials.url);
    let mut env = Env::bare();
    env.set("AWS_ENDPOINT_URL", &ep);
    env.set("AWS_REGION", region);
    env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", &credentials_uri);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    // The credentials endpoint's requests during `run`.
    let fetches = |run: &dyn Fn() -> Run| {
        let before = credentials.requests().len();
        run();
        credentials.requests()[before..].to_vec()
    };
    let create = fetches(&|| {
        env.kops(&[
            "--state",
            &state,
            "create",
            "cluster",
            cluster,
            "--zones",
            "ca-central-1a",
            "--image",
            MOTO_AMI,
        ])
        .expect(0)
    });
    assert_eq!(create.len(), 1, "create (the store only): {create:?}");
    let plan = fetches(&|| {
        let r = env
            .kops(&["--state", &state, "update", "cluster", cluster])
            .expect(2);
        assert!(r.stdout.contains("VPC/"), "{}", r.stdout);
        r
    });
    assert_eq!(
        plan.len(),
        1,
        "update (the store and the cloud) fetched credentials {} times: {plan:?}",
        plan.len()
    );
    assert!(plan[0].starts_with("GET /v2/credentials/kops "), "{plan:?}");
    let delete = fetches(&|| {
        env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"])
            .expect(0)
    });
    assert_eq!(
        delete.len(),
        1,
        "delete (the store and the cloud): {delete:?}"
    );
    assert!(objects(&ep, bucket, cluster).is_empty());

    // A file:// store on the mock cloud: nothing asks the SDK for anything. The instance
    // metadata service (the region chain's last resort) is a counting fake here.
    let imds = Fake::start("404 Not Found", "text/plain", String::new());
    let mut env = Env::bare();
    env.unset("AWS_EC2_METADATA_DISABLED");
    env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", &imds.url);
    env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", &credentials_uri);
    let local = format!("file://{}", env.path("state").display());
    let before = credentials.requests().len();
    for args in [
        &[
            "create",
            "cluster",
            "lazy.example.com",
            "--zones",
            "us-east-1a",
        ][..],
        &["update", "cluster", "lazy.example.com", "--yes"],
        &["delete", "cluster", "lazy.example.com", "--yes"],
    ] {
        let mut a = vec!["--state", local.as_str(), "--mock-cloud"];
        a.extend_from_slice(args);
        env.kops(&a).expect(0);
    }
    assert_eq!(imds.requests(), Vec::<String>::new());
    assert_eq!(credentials.requests().len(), before);
    // The control: an s3:// store loads the environment, and with no region configured
    // the region chain asks the instance metadata service.
    env.set("AWS_ENDPOINT_URL", &ep);
    env.kops(&["--state", &state, "get", "clusters"]);
    assert!(!imds.requests().is_empty(), "the fake IMDS is not asked");
}

#[test]
fn a_bucket_that_does_not_exist_or_is_not_ours() {
    let Some(ep) = moto() else { return };
    let env = Env::aws(&ep, &ep, "ap-south-1");
    let missing = "kops-cli-real-no-such-bucket";
    for args in [
        vec!["get", "clusters"],
        vec![
            "create",
            "cluster",
            "x.cli-real.example",
            "--zones",
            "ap-south-1a",
        ],
    ] {
        let mut a = vec!["--state", "s3://kops-cli-real-no-such-bucket"];
        a.extend(args);
        env.kops(&a)
            .expect_user_error(&[&format!("bucket {missing} does not exist"), "--state"]);
    }
    let exists = boto(
        &ep,
        "print(json.dumps([b['Name'] for b in client('s3').list_buckets()['Buckets']]))",
        &[],
    );
    assert!(
        !exists.as_array().unwrap().iter().any(|b| b == missing),
        "the command created the bucket"
    );

    // Another account's bucket: S3 answers AccessDenied; nothing is written.
    let s3 = Fake::start(
        "403 Forbidden",
        "application/xml",
        "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>".into(),
    );
    let env = Env::aws(&ep, &s3.url, "ap-south-1");
    env.kops(&[
        "--state",
        "s3://someone-elses",
        "create",
        "cluster",
        "y.cli-real.example",
        "--zones",
        "ap-south-1a",
    ])
    .expect_user_error(&["access denied", "another account"]);
    let writes: Vec<String> = s3
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("PUT") || r.starts_with("DELETE") || r.starts_with("POST"))
        .collect();
    assert!(
        writes.is_empty(),
        "wrote to another account's bucket: {writes:?}"
    );
}

#[test]
fn an_image_the_cloud_does_not_have() {
    let Some(ep) = moto() else { return };
    let (bucket, cluster) = ("kops-cli-real-errors-image", "image.cli-real.example");
    let env = Env::aws(&ep, &ep, "ap-northeast-2");
    // The channel's default image: moto does not have it.
    let before = stored_cluster(&env, &ep, bucket, cluster, &["--zones", "ap-northeast-2a"]);
    env.kops(&[
        "--state",
        &format!("s3://{bucket}"),
        "update",
        "cluster",
        cluster,
    ])
    .expect_user_error(&["spec.image", "not found", "--image"]);
    assert_eq!(objects(&ep, bucket, ""), before);
}

#[test]
fn a_zone_the_region_does_not_have() {
    let Some(ep) = moto() else { return };
    let (bucket, cluster) = ("kops-cli-real-errors-zone", "zone.cli-real.example");
    let env = Env::aws(&ep, &ep, "eu-north-1");
    // Choosing the default machine types already finds the zone missing.
    let state = format!("s3://{bucket}");
    prepare_moto(&ep, bucket);
    fresh(&env, &state, cluster);
    let create = [
        "--state",
        &state,
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-north-1z",
    ];
    let failed = env.kops(&create).expect(1);
    assert!(
        failed.stderr.contains(
            "zone eu-north-1z does not exist in region eu-north-1 (its zones: eu-north-1a"
        ),
        "{}",
        failed.stderr
    );
    assert!(objects(&ep, bucket, cluster).is_empty());
    // With the machine types given, the update names it.
    let before = stored_cluster(
        &env,
        &ep,
        bucket,
        cluster,
        &[
            "--zones",
            "eu-north-1z",
            "--image",
            MOTO_AMI,
            "--control-plane-size",
            "t3.medium",
            "--node-size",
            "t3.medium",
        ],
    );
    env.kops(&[
        "--state",
        &format!("s3://{bucket}"),
        "update",
        "cluster",
        cluster,
        "--yes",
    ])
    .expect_user_error(&[
        "zone eu-north-1z does not exist in region eu-north-1",
        "eu-north-1a",
    ]);
    assert_eq!(objects(&ep, bucket, ""), before);
}

// --- GCS -------------------------------------------------------------------------------------

/// Every object of the emulator's `bucket`.
fn gcs_objects(endpoint: &str, bucket: &str) -> Vec<String> {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import sys, json, urllib.request\nd = json.load(urllib.request.urlopen(sys.argv[1] + '/storage/v1/b/' + sys.argv[2] + '/o'))\nprint(json.dumps(sorted(i['name'] for i in d.get('items', []))))")
        .arg(endpoint)
        .arg(bucket)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cluster_lifecycle_on_a_gcs_store() {
    let Some(ep) = gcs_emulator() else { return };
    let bucket = "kops-test"; // the emulator's default bucket
    let cluster = "gs.cli-real.example";
    let mut env = Env::bare();
    env.set("STORAGE_EMULATOR_HOST", &ep);
    let state = format!("gs://{bucket}/cli-real");
    // The cluster's cloud is the mock: this test is about the store.
    let k = |env: &Env, args: &[&str]| {
        let mut a = vec!["--state", state.as_str(), "--mock-cloud"];
        a.extend_from_slice(args);
        env.kops(&a)
    };
    let _ = k(&env, &["delete", "cluster", cluster, "--yes"]);
    k(
        &env,
        &["create", "cluster", cluster, "--zones", "us-test-1a"],
    )
    .expect(0);
    assert!(gcs_objects(&ep, bucket).contains(&format!("cli-real/{cluster}/config")));
    let r = k(&env, &["get", "clusters"]).expect(0);
    assert!(r.stdout.contains(cluster), "{}", r.stdout);
    let editor = env.editor("edit.sh", "sed -i 's/maxSize: 1/maxSize: 5/' \"$1\"");
    env.set("EDITOR", &editor);
    k(&env, &["--name", cluster, "edit", "ig", "nodes-us-test-1a"]).expect(0);
    env.unset("EDITOR");
    let r = k(
        &env,
        &[
            "--name",
            cluster,
            "get",
            "ig",
            "nodes-us-test-1a",
            "-o",
            "yaml",
        ],
    )
    .expect(0);
    assert!(r.stdout.contains("maxSize: 5"), "{}", r.stdout);
    k(&env, &["delete", "cluster", cluster, "--yes"]).expect(0);
    let left: Vec<String> = gcs_objects(&ep, bucket)
        .into_iter()
        .filter(|o| o.starts_with(&format!("cli-real/{cluster}")))
        .collect();
    assert!(left.is_empty(), "left in the bucket: {left:?}");
    k(&env, &["get", "clusters", cluster]).expect(1);
}

#[test]
fn gcs_credentials_problems_are_named() {
    // No emulator: the requests would go to Google, so each case fails before any is sent
    // (while getting a token, from loopback only).
    let mut env = Env::bare();
    // No ADC file, and the metadata server is a closed loopback port.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap().to_string();
    drop(closed);
    env.set("GCE_METADATA_HOST", &closed_addr);
    env.kops(&["--state", "gs://some-bucket", "get", "clusters"])
        .expect_user_error(&["GCS", "metadata server"]);

    // A credentials file that does not exist.
    env.set(
        "GOOGLE_APPLICATION_CREDENTIALS",
        env.path("missing.json").to_str().unwrap(),
    );
    env.kops(&["--state", "gs://some-bucket", "get", "clusters"])
        .expect_user_error(&["GCS", "GOOGLE_APPLICATION_CREDENTIALS", "missing.json"]);

    // gcloud's ADC file whose refresh token the token endpoint rejects.
    let token = Fake::start(
        "400 Bad Request",
        "application/json",
        r#"{"error": "invalid_grant", "error_description": "Token has been expired or revoked."}"#
            .into(),
    );
    let adc = env.path("adc.json");
    std::fs::write(
        &adc,
        json!({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": format!("{}/token", token.url)}).to_string(),
    )
    .unwrap();
    env.set("GOOGLE_APPLICATION_CREDENTIALS", adc.to_str().unwrap());
    env.kops(&["--state", "gs://some-bucket", "get", "clusters"])
        .expect_user_error(&["GCS", "adc.json"]);
    assert!(
        token
            .requests()
            .iter()
            .any(|r| r.starts_with("POST /token")),
        "{:?}",
        token.requests()
    );
}

/// A state bucket in another region than the cluster (and than `AWS_REGION`): the store
/// finds the bucket's region (GetBucketLocation) and talks to it there, and the Terraform
/// target writes the state files with a provider in the bucket's region, as kOps does.
/// The store is reached through `AWS_ENDPOINT_URL` (the AWS SDK's environment), not
/// `S3_ENDPOINT`, whose S3-compatible mode probes nothing.
#[test]
fn a_state_bucket_in_another_region() {
    let Some(ep) = moto() else { return };
    let (region, bucket_region, bucket, cluster) = (
        "eu-west-2",
        "eu-central-1",
        "kops-cli-real-frankfurt",
        "elsewhere.cli-real.example",
    );
    prepare_moto(&ep, "kops-cli-real-lifecycle");
    boto(
        &ep,
        r#"
s3 = client("s3", args[1])
try:
    s3.create_bucket(Bucket=args[0], CreateBucketConfiguration={"LocationConstraint": args[1]})
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
print(json.dumps(s3.get_bucket_location(Bucket=args[0])))
"#,
        &[bucket, bucket_region],
    );
    let mut env = Env::bare();
    env.set("AWS_ENDPOINT_URL", &ep);
    env.set("AWS_ACCESS_KEY_ID", "testing");
    env.set("AWS_SECRET_ACCESS_KEY", "testing");
    env.set("AWS_REGION", region);
    let state = format!("s3://{bucket}/clusters");
    fresh(&env, &state, cluster);
    let k = |args: &[&str]| {
        let mut a = vec!["--state", state.as_str()];
        a.extend_from_slice(args);
        env.kops(&a)
    };
    k(&[
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-west-2a",
        "--image",
        MOTO_AMI,
    ])
    .expect(0);
    assert!(
        objects(&ep, bucket, &format!("clusters/{cluster}/"))
            .contains_key(&format!("clusters/{cluster}/config"))
    );
    let out = env.path("tf");
    k(&[
        "update",
        "cluster",
        cluster,
        "--target",
        "terraform",
        "--out",
        out.to_str().unwrap(),
    ])
    .expect(0);
    let tf = std::fs::read_to_string(out.join("kubernetes.tf")).unwrap();
    assert!(
        tf.contains(&format!(
            "provider \"aws\" {{\n  alias  = \"files\"\n  region = \"{bucket_region}\"\n}}"
        )),
        "{tf}"
    );
    assert!(
        tf.contains(&format!("provider \"aws\" {{\n  region = \"{region}\"\n}}")),
        "{tf}"
    );
    k(&["delete", "cluster", cluster, "--yes"]).expect(0);
}

// --- The state store's safety ---------------------------------------------------------------

/// A bucket without versioning, default encryption or a public access block: `create
/// cluster` warns naming each fix, `toolbox check-state-store` exits 1 (table and JSON),
/// `--fix` turns all three on and says so, and the next check exits 0.
#[test]
fn check_state_store_warns_fixes_and_passes() {
    let Some(ep) = moto() else { return };
    let (bucket, cluster) = ("kops-cli-real-unsafe", "unsafe.cli-real.example");
    prepare_moto(&ep, bucket);
    // A fresh bucket each run: what an earlier run turned on is turned off again.
    boto(
        &ep,
        r#"
s3 = client("s3")
s3.put_bucket_versioning(Bucket=args[0], VersioningConfiguration={"Status": "Suspended"})
try:
    s3.delete_bucket_encryption(Bucket=args[0])
except Exception:
    pass
try:
    s3.delete_public_access_block(Bucket=args[0])
except Exception:
    pass
print("{}")
"#,
        &[bucket],
    );
    let env = Env::aws(&ep, &ep, "eu-west-1");
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    let r = env
        .kops(&[
            "--state",
            &state,
            "create",
            "cluster",
            cluster,
            "--zones",
            "eu-west-1a",
            "--image",
            MOTO_AMI,
        ])
        .expect(0);
    for (what, fix) in [
        ("versioning is off", "put-bucket-versioning"),
        ("default encryption is off", "put-bucket-encryption"),
        ("public access blocked is off", "put-public-access-block"),
    ] {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no warning that {what}: {}", r.stderr));
        assert!(line.contains(fix) && line.contains("--fix"), "{line}");
    }

    let r = env
        .kops(&["--state", &state, "toolbox", "check-state-store"])
        .expect(1);
    assert_eq!(r.stdout.matches("FAILED").count(), 3, "{}", r.stdout);
    let r = env
        .kops(&[
            "--state",
            &state,
            "toolbox",
            "check-state-store",
            "-o",
            "json",
        ])
        .expect(1);
    let doc: Json = serde_json::from_str(&r.stdout).unwrap();
    let statuses: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["FAILED", "FAILED", "FAILED"], "{doc}");

    let r = env
        .kops(&["--state", &state, "toolbox", "check-state-store", "--fix"])
        .expect(0);
    assert_eq!(r.stdout.matches("changed: ").count(), 3, "{}", r.stdout);
    assert!(!r.stdout.contains("FAILED"), "{}", r.stdout);
    let set = boto(
        &ep,
        r#"
s3 = client("s3")
v = s3.get_bucket_versioning(Bucket=args[0]).get("Status")
e = s3.get_bucket_encryption(Bucket=args[0])["ServerSideEncryptionConfiguration"]["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"]
p = s3.get_public_access_block(Bucket=args[0])["PublicAccessBlockConfiguration"]
print(json.dumps({"versioning": v, "encryption": e, "public": all(p.values())}))
"#,
        &[bucket],
    );
    assert_eq!(
        set,
        serde_json::json!({"versioning": "Enabled", "encryption": "AES256", "public": true})
    );
    let r = env
        .kops(&["--state", &state, "toolbox", "check-state-store"])
        .expect(0);
    assert_eq!(r.stdout.matches(" ok").count(), 3, "{}", r.stdout);
    // Nothing left to change.
    let r = env
        .kops(&["--state", &state, "toolbox", "check-state-store", "--fix"])
        .expect(0);
    assert!(!r.stdout.contains("changed: "), "{}", r.stdout);
    fresh(&env, &state, cluster);
}

/// A versioned bucket: create, apply, edit an instance group and apply (the time after it
/// is T), edit it again, then delete every object under the cluster's prefix.
/// `restore-state --to T` plans the restore (exit 2), restores it with `--yes`, `get ig`
/// shows the first edit, and `update cluster` plans no change to the cloud. A time
/// before the bucket's versions is refused in one line, nothing written.
#[test]
fn restore_state_returns_a_deleted_cluster_to_a_point_in_time() {
    let Some(ep) = moto() else { return };
    let (region, bucket, cluster) = (
        "eu-north-1",
        "kops-cli-real-restore",
        "restore.cli-real.example",
    );
    prepare_moto(&ep, bucket);
    boto(
        &ep,
        r#"
client("s3").put_bucket_versioning(Bucket=args[0], VersioningConfiguration={"Status": "Enabled"})
print("{}")
"#,
        &[bucket],
    );
    let env = Env::aws(&ep, &ep, region);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    let k = |args: &[&str]| {
        let mut a = vec!["--state", state.as_str(), "--name", cluster];
        a.extend_from_slice(args);
        env.kops(&a)
    };
    let zone = format!("{region}a");
    k(&[
        "create", "cluster", cluster, "--zones", &zone, "--image", MOTO_AMI,
    ])
    .expect(0);
    k(&["update", "cluster", cluster, "--yes"]).expect(0);
    let group = format!("nodes-{zone}");
    let max_size = || {
        let r = k(&["get", "ig", &group, "-o", "json"]).expect(0);
        let v: Json = serde_json::from_str(&r.stdout).unwrap();
        v["spec"]["maxSize"].as_i64().unwrap()
    };
    k(&["edit", "ig", &group, "--set", "spec.maxSize=3"]).expect(0);
    k(&["update", "cluster", cluster, "--yes"]).expect(0);
    assert_eq!(max_size(), 3);
    // S3 keeps times to the millisecond at best: a clear second on either side of T.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let t = kops_statestore::lock::rfc3339(std::time::SystemTime::now());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    k(&["edit", "ig", &group, "--set", "spec.maxSize=5"]).expect(0);
    assert_eq!(max_size(), 5);

    // The store lost: every object under the cluster's prefix deleted.
    let deleted = boto(
        &ep,
        r#"
s3 = client("s3")
n = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args[0], Prefix=args[1] + "/"):
    for o in page.get("Contents", []):
        s3.delete_object(Bucket=args[0], Key=o["Key"])
        n += 1
print(json.dumps(n))
"#,
        &[bucket, cluster],
    );
    assert!(deleted.as_u64().unwrap() > 10, "{deleted}");
    k(&["get", "ig", &group]).expect(1);

    let r = k(&["toolbox", "restore-state", cluster, "--list"]).expect(0);
    assert!(r.stdout.lines().count() > 3, "{}", r.stdout);
    let r = k(&["toolbox", "restore-state", cluster, "--to", &t]).expect(2);
    assert!(
        r.stdout.contains(&format!("restore  {cluster}/config")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Must specify --yes"), "{}", r.stdout);
    k(&["get", "ig", &group]).expect(1);
    let r = k(&["toolbox", "restore-state", cluster, "--to", &t, "--yes"]).expect(0);
    assert!(r.stdout.contains("Restored"), "{}", r.stdout);
    assert_eq!(max_size(), 3, "the spec after the first edit");
    let r = k(&["update", "cluster", cluster, "-o", "json"]);
    assert!(r.code == 0 || r.code == 2, "{}{}", r.stdout, r.stderr);
    let plan: Json = serde_json::from_str(&r.stdout).unwrap();
    let left = real_changes(&plan);
    assert!(
        left.is_empty(),
        "the restored state plans changes: {left:#?}"
    );
    // Restoring to now (a second after the restore: the time is in whole seconds)
    // changes nothing.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let now = kops_statestore::lock::rfc3339(std::time::SystemTime::now());
    let r = k(&["toolbox", "restore-state", cluster, "--to", &now]).expect(0);
    assert!(r.stdout.contains("0 object(s) to restore"), "{}", r.stdout);

    // A time before the bucket kept anything: one line, nothing written.
    let before = objects(&ep, bucket, &format!("{cluster}/"));
    let r = k(&[
        "toolbox",
        "restore-state",
        cluster,
        "--to",
        "2001-01-01T00:00:00Z",
        "--yes",
    ])
    .expect(1);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("before the oldest object version"),
        "{}",
        r.stderr
    );
    assert_eq!(objects(&ep, bucket, &format!("{cluster}/")), before);
    let r = k(&["toolbox", "restore-state", cluster, "--to", "yesterday"]).expect(1);
    assert!(r.stderr.contains("--to \"yesterday\""), "{}", r.stderr);

    k(&["delete", "cluster", cluster, "--yes"]).expect(0);
    let held = leftovers(&ep, region, cluster);
    assert!(held.is_empty(), "moto still holds: {held:#?}");
}

/// Every leaf of `v` (objects and arrays flattened) by path.
fn leaves(v: &Json, path: &str, out: &mut BTreeMap<String, Json>) {
    match v {
        Json::Object(m) => {
            for (k, x) in m {
                leaves(x, &format!("{path}.{k}"), out);
            }
        }
        Json::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, &format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path.to_owned(), other.clone());
        }
    }
}

/// The cluster's and its groups' stored specs as leaves (creation times left out).
fn spec_leaves(env: &Env, state: &str, cluster: &str) -> BTreeMap<String, Json> {
    let r = env
        .kops(&["--state", state, "get", "cluster", cluster, "-o", "json"])
        .expect(0);
    let mut out = BTreeMap::new();
    leaves(
        &serde_json::from_str(&r.stdout).unwrap(),
        "cluster",
        &mut out,
    );
    let r = env
        .kops(&[
            "--state", state, "--name", cluster, "get", "ig", "-o", "json",
        ])
        .expect(0);
    let groups: Json = serde_json::from_str(&r.stdout).unwrap();
    let groups = match groups {
        Json::Array(a) => a,
        Json::Object(ref o) if o.contains_key("items") => {
            groups["items"].as_array().unwrap().clone()
        }
        one => vec![one],
    };
    for g in &groups {
        let name = g["metadata"]["name"].as_str().unwrap();
        leaves(g, &format!("ig[{name}]"), &mut out);
    }
    out.retain(|k, _| !k.ends_with("creationTimestamp"));
    out
}

/// Three topologies applied on moto (public, private with a bastion, a shared VPC), the
/// store wiped, `toolbox recover cluster` into it: the recovered specs equal the
/// originals on at least 95% of their leaves (the differences printed), and `update
/// cluster` on them plans no change to any network, security group, load balancer, IAM
/// or autoscaling object.
#[test]
fn recover_cluster_rebuilds_three_topologies_from_the_cloud() {
    let Some(ep) = moto() else { return };
    let (region, bucket) = ("ca-central-1", "kops-cli-real-lost");
    prepare_moto(&ep, bucket);
    let env = Env::aws(&ep, &ep, region);
    // Recovered into the wiped store: the nodes' IAM policies name its bucket, so another
    // bucket would (rightly) be an IAM change.
    let (state, found) = (format!("s3://{bucket}"), format!("s3://{bucket}"));
    let zone = format!("{region}a");
    let vpc = boto(
        &ep,
        r#"
ec2 = client("ec2", args[0])
v = ec2.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=v)
print(json.dumps(v))
"#,
        &[region],
    );
    let vpc = vpc.as_str().unwrap().to_owned();
    let cases: [(&str, Vec<&str>); 3] = [
        ("publicone.cli-real.example", vec![]),
        (
            "privateab.cli-real.example",
            vec!["--topology", "private", "--bastion"],
        ),
        (
            "sharedvpc.cli-real.example",
            vec!["--network-id", vpc.as_str()],
        ),
    ];
    for (cluster, extra) in &cases {
        fresh(&env, &state, cluster);
        fresh(&env, &found, cluster);
        let mut create = vec![
            "--state", &state, "create", "cluster", cluster, "--zones", &zone, "--image", MOTO_AMI,
        ];
        create.extend(extra.iter().copied());
        env.kops(&create).expect(0);
        env.kops(&["--state", &state, "update", "cluster", cluster, "--yes"])
            .expect(0);
        let original = spec_leaves(&env, &state, cluster);
        // The store lost.
        boto(
            &ep,
            r#"
s3 = client("s3")
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args[0], Prefix=args[1] + "/"):
    for o in page.get("Contents", []):
        s3.delete_object(Bucket=args[0], Key=o["Key"])
print("{}")
"#,
            &[bucket, cluster],
        );
        let r = env
            .kops(&[
                "--state", &found, "toolbox", "recover", "cluster", cluster, "--region", region,
            ])
            .expect(0);
        assert!(r.stdout.contains("kops create cluster"), "{}", r.stdout);
        assert!(r.stdout.contains("keysets and secrets"), "{}", r.stdout);
        let recovered = spec_leaves(&env, &found, cluster);
        let mut differ = Vec::new();
        for (k, v) in &original {
            match recovered.get(k) {
                Some(w) if w == v => {}
                other => differ.push(format!("{k}: {v} -> {other:?}")),
            }
        }
        let equal = original.len() - differ.len();
        let share = equal as f64 / original.len() as f64;
        println!(
            "{cluster}: {equal}/{} leaves equal ({:.1}%); differ: {differ:#?}",
            original.len(),
            share * 100.0
        );
        assert!(share >= 0.95, "{cluster}: {differ:#?}");

        let r = env.kops(&[
            "--state", &found, "update", "cluster", cluster, "-o", "json",
        ]);
        assert!(r.code == 0 || r.code == 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains("are made new: the launch templates' user data changes"),
            "the plan says why user data changes: {}",
            r.stderr
        );
        let plan: Json = serde_json::from_str(&r.stdout).unwrap();
        let kept = [
            "VPC",
            "Subnet",
            "RouteTable",
            "Route",
            "InternetGateway",
            "NatGateway",
            "ElasticIP",
            "SecurityGroup",
            "LoadBalancer",
            "TargetGroup",
            "Listener",
            "IAM",
            "AutoscalingGroup",
        ];
        let touched: Vec<String> = real_changes(&plan)
            .into_iter()
            .filter(|c| {
                let key = c
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .trim_matches('"');
                kept.iter().any(|k| key.starts_with(k))
            })
            .collect();
        assert!(
            touched.is_empty(),
            "{cluster}: the recovered spec changes {touched:#?}"
        );
        env.kops(&["--state", &found, "delete", "cluster", cluster, "--yes"])
            .expect(0);
        let held = leftovers(&ep, region, cluster);
        assert!(held.is_empty(), "{cluster}: moto still holds: {held:#?}");
    }
    // A cluster the cloud does not hold: one line, exit 1, nothing stored.
    let r = env
        .kops(&[
            "--state",
            &found,
            "toolbox",
            "recover",
            "cluster",
            "nothing.cli-real.example",
            "--region",
            region,
        ])
        .expect(1);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("nothing to recover"), "{}", r.stderr);
    assert!(objects(&ep, bucket, "nothing.cli-real.example/").is_empty());
}

/// A bucket these credentials may not read: `restore-state` is one line naming the
/// denial, exit 1, and `check-state-store` reports every setting unknown, naming the
/// permission that reads it.
#[test]
fn a_bucket_we_may_not_read_is_named_by_restore_and_check() {
    let Some(ep) = moto() else { return };
    let s3 = Fake::start(
        "403 Forbidden",
        "application/xml",
        "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>".into(),
    );
    let env = Env::aws(&ep, &s3.url, "eu-south-1");
    let state = "s3://kops-cli-real-denied";
    let r = env
        .kops(&[
            "--state",
            state,
            "toolbox",
            "restore-state",
            "denied.cli-real.example",
            "--to",
            "2026-01-01T00:00:00Z",
        ])
        .expect_user_error(&["access denied"]);
    println!("{}", r.stderr);
    let r = env
        .kops(&[
            "--state",
            state,
            "toolbox",
            "check-state-store",
            "-o",
            "json",
        ])
        .expect(0);
    let doc: Json = serde_json::from_str(&r.stdout).unwrap();
    let details: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "unknown", "{doc}");
            c["detail"].as_str().unwrap()
        })
        .collect();
    for permission in [
        "s3:GetBucketVersioning",
        "s3:GetEncryptionConfiguration",
        "s3:GetBucketPublicAccessBlock",
    ] {
        assert!(
            details.iter().any(|d| d.contains(permission)),
            "{permission}: {details:?}"
        );
    }
}

/// `update cluster --target terraform --terraform-backend`: the backend block goes to its
/// own file, which a later update without the flag keeps; `terraform init` on a directory
/// holding only that file initialises the S3 backend on moto (endpoint override, path
/// style), and `terraform state push` lands a state in the bucket.
#[test]
fn terraform_state_in_an_s3_backend_on_moto() {
    let Some(ep) = moto() else { return };
    let have_terraform = Command::new("terraform")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_terraform {
        assert!(
            !require_emulators(),
            "terraform is required (KOPS_TEST_REQUIRE_EMULATORS=1)"
        );
        eprintln!("skipping: terraform not found");
        return;
    }
    let (region, bucket, cluster) = (
        "eu-west-3",
        "kops-cli-real-tfstate",
        "tfstate.cli-real.example",
    );
    prepare_moto(&ep, bucket);
    let env = Env::aws(&ep, &ep, region);
    let state = format!("s3://{bucket}");
    fresh(&env, &state, cluster);
    env.kops(&[
        "--state",
        &state,
        "create",
        "cluster",
        cluster,
        "--zones",
        "eu-west-3a",
        "--image",
        MOTO_AMI,
    ])
    .expect(0);
    let out = env.path("tf");
    let out_s = out.display().to_string();
    let key = format!("terraform/{cluster}.tfstate");
    let backend_url = format!("s3://{bucket}/{key}");
    env.kops(&[
        "--state",
        &state,
        "update",
        "cluster",
        cluster,
        "--target",
        "terraform",
        "--out",
        &out_s,
        "--terraform-backend",
        &backend_url,
        "--terraform-backend-endpoint",
        &ep,
    ])
    .expect(0);
    let backend = std::fs::read_to_string(out.join("backend.tf")).unwrap();
    let words = backend.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "backend \"s3\"".to_owned(),
        format!("bucket = \"{bucket}\""),
        format!("key = \"{key}\""),
        format!("region = \"{region}\""),
        "use_lockfile = true".to_owned(),
        "use_path_style = true".to_owned(),
    ] {
        assert!(words.contains(&want), "{want}:\n{backend}");
    }
    check_terraform(&out);
    // Regenerated without the flag: the backend stays.
    env.kops(&[
        "--state",
        &state,
        "update",
        "cluster",
        cluster,
        "--target",
        "terraform",
        "--out",
        &out_s,
    ])
    .expect(0);
    assert_eq!(
        std::fs::read_to_string(out.join("backend.tf")).unwrap(),
        backend
    );
    // Without --target terraform the flag is refused.
    env.kops(&[
        "--state",
        &state,
        "update",
        "cluster",
        cluster,
        "--terraform-backend",
        &backend_url,
    ])
    .expect_user_error(&["--terraform-backend"]);

    // Terraform itself, on a directory with only the backend.
    let only = env.path("only");
    std::fs::create_dir_all(&only).unwrap();
    std::fs::write(only.join("backend.tf"), &backend).unwrap();
    let terraform = |args: &[&str]| {
        let mut c = Command::new("terraform");
        for v in CLEARED {
            c.env_remove(v);
        }
        c.env("HOME", env.dir.path())
            .env("TF_IN_AUTOMATION", "1")
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .current_dir(&only)
            .args(args);
        Run::from(c.output().unwrap())
    };
    // moto is never reset: an earlier run's state goes first.
    boto(
        &ep,
        "client(\"s3\").delete_object(Bucket=args[0], Key=args[1])\nprint(\"{}\")",
        &[bucket, &key],
    );
    terraform(&["init", "-input=false", "-no-color"]).expect(0);
    let lineage = "6f1c9a52-kops-rs-backend-test";
    std::fs::write(
        only.join("pushed.tfstate"),
        json!({
            "version": 4,
            "terraform_version": "1.5.0",
            "serial": 1,
            "lineage": lineage,
            "outputs": { "cluster": { "value": cluster, "type": "string" } },
            "resources": [],
        })
        .to_string(),
    )
    .unwrap();
    terraform(&["state", "push", "-no-color", "pushed.tfstate"]).expect(0);
    let stored = boto(
        &ep,
        r#"
s3 = client("s3")
print(s3.get_object(Bucket=args[0], Key=args[1])["Body"].read().decode())
"#,
        &[bucket, &key],
    );
    // Terraform keeps the lineage of the (empty) state `init` made; the content is ours.
    assert_eq!(stored["outputs"]["cluster"]["value"], cluster, "{stored}");
    env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"])
        .expect(0);
}

// --- The operator's IAM policy, enforced ----------------------------------------------------

/// moto checks a request's signature over the request rebuilt from what werkzeug parsed,
/// not over the bytes the SDK signed: query values come back decoded (`prefix=a/b` where
/// SigV4 signed `prefix=a%2Fb`) and form bodies re-encoded, so S3 listings by prefix and
/// EC2 or IAM calls with such values fail with `SignatureDoesNotMatch`/`AuthFailure`
/// once IAM is enforced. This server skips that check; the access key still names the
/// user, and what the user may do is moto's policy evaluation, unchanged.
const MOTO_AUTHORIZATION_ONLY: &str = r#"
from werkzeug.serving import run_simple
from moto.server import DomainDispatcherApplication, create_backend_app
from moto.iam import access_control
access_control.IAMRequestBase.check_signature = lambda self: None
"#;

/// A moto server of this test's own (IAM is enforced server-wide, which the shared one
/// must not be), stopped on drop.
struct OwnMoto {
    url: String,
    child: std::process::Child,
}

impl OwnMoto {
    fn start() -> OwnMoto {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .arg("-c")
            .arg(format!("{MOTO_AUTHORIZATION_ONLY}\nrun_simple('127.0.0.1', {port}, DomainDispatcherApplication(create_backend_app), threaded=False)"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 with moto");
        let moto = OwnMoto {
            url: format!("http://127.0.0.1:{port}"),
            child,
        };
        for _ in 0..300 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return moto;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("moto did not start on port {port}");
    }
}

impl Drop for OwnMoto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes IAM user `name` with inline `policy` and returns its access key.
fn iam_user(ep: &str, admin: (&str, &str), name: &str, policy: &Json) -> (String, String) {
    let v = boto_as(
        ep,
        admin,
        r#"
iam = client("iam")
iam.create_user(UserName=args[0])
iam.put_user_policy(UserName=args[0], PolicyName="kops", PolicyDocument=args[1])
k = iam.create_access_key(UserName=args[0])["AccessKey"]
print(json.dumps([k["AccessKeyId"], k["SecretAccessKey"]]))
"#,
        &[name, &policy.to_string()],
    );
    (
        v[0].as_str().unwrap().to_owned(),
        v[1].as_str().unwrap().to_owned(),
    )
}

/// A step of the lifecycle: its name, and what runs it.
type Step<'a> = (&'static str, Box<dyn Fn() -> Run + 'a>);

/// A small seeded generator (xorshift), so a failing draw can be run again.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// The policy `kops toolbox iam-policy` prints, run by an operator who has nothing else on
/// a moto that enforces IAM: create, update, a no-op update, an instance-group change,
/// `rolling-update --cloudonly --force` and delete all succeed. Then, for actions drawn
/// (seeded) from those the lifecycle sends, a policy without one fails at the first step
/// that needs it, naming it, and an admin's delete leaves nothing behind.
#[test]
fn the_printed_policy_is_enough_and_each_action_in_it_is_needed() {
    if moto().is_none() {
        return;
    }
    let moto = OwnMoto::start();
    let ep = moto.url.clone();
    let (region, bucket, cluster) = ("eu-west-2", "kops-iam-state", "iam.cli-real.example");
    prepare_moto(&ep, bucket);
    let state = format!("s3://{bucket}/clusters");
    let printed = Env::bare()
        .kops(&["--state", &state, "toolbox", "iam-policy"])
        .expect(0);
    let policy: Json = serde_json::from_str(&printed.stdout).unwrap();
    let table = Env::bare()
        .kops(&["toolbox", "iam-policy", "-o", "table"])
        .expect(0)
        .stdout;
    // Before IAM is enforced: an administrator, and the operator with the printed policy.
    let admin_policy = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "*", "Resource": "*"}]});
    let admin = iam_user(&ep, ("testing", "testing"), "admin", &admin_policy);
    let operator = iam_user(&ep, ("testing", "testing"), "operator", &policy);
    let enforce = Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1] + '/moto-api/reset-auth', data=b'0', method='POST', headers={'Content-Type': 'text/plain'}))",
            &ep,
        ])
        .status()
        .unwrap();
    assert!(enforce.success());
    let admin = (admin.0.as_str(), admin.1.as_str());

    let proxy = Proxy::start(&ep);
    let env_for = |(id, secret): (&str, &str), url: &str| {
        let mut env = Env::aws(url, url, region);
        for (k, v) in [
            ("AWS_ACCESS_KEY_ID", id),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("S3_ACCESS_KEY_ID", id),
            ("S3_SECRET_ACCESS_KEY", secret),
        ] {
            env.set(k, v);
        }
        env
    };
    // The lifecycle, step by step; the first step that fails, with its error.
    let lifecycle = |env: &Env| -> Option<(&'static str, String)> {
        let k = |args: &[&str]| {
            let mut a = vec!["--state", state.as_str()];
            a.extend_from_slice(args);
            env.kops(&a)
        };
        let editor = env.editor("edit-ig.sh", "sed -i 's/maxSize: 1/maxSize: 2/' \"$1\"");
        let steps: Vec<Step<'_>> = vec![
            (
                "create",
                Box::new(|| {
                    k(&[
                        "create",
                        "cluster",
                        cluster,
                        "--zones",
                        "eu-west-2a",
                        "--image",
                        MOTO_AMI,
                        "--node-count",
                        "1",
                    ])
                }),
            ),
            (
                "update",
                Box::new(|| k(&["update", "cluster", cluster, "--yes"])),
            ),
            (
                "no-op update",
                Box::new(|| k(&["update", "cluster", cluster])),
            ),
            (
                "instance-group change",
                Box::new(|| {
                    let r = env.kops_with(
                        &[
                            "--state",
                            &state,
                            "--name",
                            cluster,
                            "edit",
                            "instancegroup",
                            "nodes-eu-west-2a",
                        ],
                        &[("EDITOR", &editor)],
                    );
                    if r.code != 0 {
                        return r;
                    }
                    k(&["update", "cluster", cluster, "--yes"])
                }),
            ),
            (
                "rolling-update",
                Box::new(|| {
                    k(&[
                        "rolling-update",
                        "cluster",
                        cluster,
                        "--cloudonly",
                        "--force",
                        "--yes",
                        "--master-interval",
                        "0s",
                        "--node-interval",
                        "0s",
                    ])
                }),
            ),
            (
                "delete",
                Box::new(|| k(&["delete", "cluster", cluster, "--yes"])),
            ),
        ];
        for (name, step) in steps {
            let r = step();
            // A dry run with changes exits 2 (moto does not store every field).
            if r.code != 0 && !(name == "no-op update" && r.code == 2) {
                return Some((name, format!("{}{}", r.stdout, r.stderr)));
            }
        }
        None
    };

    // The operator with the printed policy: every step.
    let started = std::time::Instant::now();
    let failed = lifecycle(&env_for((&operator.0, &operator.1), &proxy.url));
    assert!(failed.is_none(), "with the printed policy: {failed:#?}");
    println!(
        "the lifecycle with the printed policy: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let held = leftovers_as(&ep, admin, region, cluster);
    assert!(held.is_empty(), "moto still holds: {held:#?}");

    // The policy's actions the lifecycle sent (query and JSON APIs name their operation):
    // each operation's own action in the printed table, as the policy grants it (the
    // action, or its service's `Describe*`).
    let granted: Vec<String> = policy["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["Action"].as_array().unwrap().iter())
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let mut sent: Vec<String> = Vec::new();
    for op in proxy.operations.lock().unwrap().iter() {
        let op = op.rsplit('.').next().unwrap_or(op);
        let Some(line) = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(op))
        else {
            continue;
        };
        let action = line.split_whitespace().nth(1).unwrap();
        let grant = granted
            .iter()
            .find(|g| match g.strip_suffix('*') {
                Some(prefix) => action.starts_with(prefix),
                None => *g == action,
            })
            .unwrap_or_else(|| {
                panic!(
                    "the lifecycle sent {op} ({action}), which the printed policy does not grant"
                )
            });
        if !sent.contains(grant) {
            sent.push(grant.clone());
        }
    }
    sent.sort();
    assert!(sent.len() >= 30, "the lifecycle sent only {sent:?}");
    let seed: u64 = std::env::var("KOPS_TEST_IAM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1a6e);
    println!("drawing from {} actions with seed {seed:#x}", sent.len());
    let mut rng = seed;
    let mut drawn = Vec::new();
    while drawn.len() < 20.min(sent.len()) {
        let a = &sent[(xorshift(&mut rng) % sent.len() as u64) as usize];
        if !drawn.contains(a) {
            drawn.push(a.clone());
        }
    }
    for (i, action) in drawn.iter().enumerate() {
        let mut reduced = policy.clone();
        for st in reduced["Statement"].as_array_mut().unwrap() {
            if let Some(actions) = st["Action"].as_array_mut() {
                actions.retain(|a| a.as_str() != Some(action.as_str()));
            }
        }
        let user = iam_user(&ep, admin, &format!("without-{i}"), &reduced);
        let started = std::time::Instant::now();
        let failed = lifecycle(&env_for((&user.0, &user.1), &ep));
        let Some((step, error)) = failed else {
            panic!("without {action} the whole lifecycle succeeded");
        };
        // Without a service's `Describe*`, the error names the describe call denied.
        let named = action.trim_end_matches('*');
        assert!(
            error.contains(&format!("not authorized to perform: {named}")),
            "without {action}, {step} failed without naming it: {error}"
        );
        println!(
            "without {action}: {step} fails, naming it ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        // An administrator deletes what was made; nothing is left.
        let admin_env = env_for(admin, &ep);
        let r = admin_env.kops(&["--state", &state, "delete", "cluster", cluster, "--yes"]);
        assert!(
            r.code == 0 || r.stderr.contains("not found"),
            "{}{}",
            r.stdout,
            r.stderr
        );
        let held = leftovers_as(&ep, admin, region, cluster);
        assert!(
            held.is_empty(),
            "without {action}, moto still holds: {held:#?}"
        );
    }

    // Scoped to one cluster (`--name`): its state is the operator's, another cluster's is
    // not. (moto checks resources for S3 only, and denies every statement with a
    // condition: the EC2, Auto Scaling and load-balancer scoping cannot be run here.)
    let (mine, theirs) = ("mine.cli-real.example", "theirs.cli-real.example");
    let scoped = Env::bare()
        .kops(&[
            "--state",
            &state,
            "--name",
            mine,
            "toolbox",
            "iam-policy",
            "--for",
            "create",
        ])
        .expect(0);
    let scoped: Json = serde_json::from_str(&scoped.stdout).unwrap();
    let user = iam_user(&ep, admin, "scoped", &scoped);
    let (env, admin_env) = (env_for((&user.0, &user.1), &ep), env_for(admin, &ep));
    let create = |env: &Env, name: &str| {
        env.kops(&[
            "--state",
            &state,
            "create",
            "cluster",
            name,
            "--zones",
            "eu-west-2a",
            "--image",
            MOTO_AMI,
        ])
    };
    create(&admin_env, theirs).expect(0);
    create(&env, mine).expect(0);
    let r = env.kops(&["--state", &state, "get", "clusters", theirs, "-o", "yaml"]);
    assert!(
        r.code != 0 && r.stderr.to_lowercase().contains("denied"),
        "the scoped operator read another cluster: {}{}",
        r.stdout,
        r.stderr
    );
    let r = create(&env, "other.cli-real.example");
    assert!(
        r.code != 0 && r.stderr.to_lowercase().contains("denied"),
        "the scoped operator created another cluster: {}{}",
        r.stdout,
        r.stderr
    );
    for name in [mine, theirs] {
        admin_env
            .kops(&["--state", &state, "delete", "cluster", name, "--yes"])
            .expect(0);
    }
}
