//! The Terraform writer reproduces kOps' output: blocks of the `minimal-aws` golden
//! `kubernetes.tf` (from ../shared, skipped when absent) are rebuilt through the writer API
//! and compared byte for byte, and the whole output passes `terraform fmt -check`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use kops_tasks::terraform::{Body, Expr, TerraformOutput, TerraformWriter, render_graph};
use kops_tasks::{
    Change, Context, Fields, Found, Outputs, Result, Task, TaskGraph, TaskKey, TaskRef, Value,
    async_trait,
};

const CLUSTER: &str = "minimal-aws.example.com";

type Render = fn(&TfTask, &mut TerraformWriter) -> Result<()>;

/// A task that only renders Terraform.
struct TfTask {
    key: TaskKey,
    deps: Vec<TaskKey>,
    render: Render,
}

impl std::fmt::Debug for TfTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TfTask({})", self.key)
    }
}

#[async_trait]
impl Task<()> for TfTask {
    fn key(&self) -> &TaskKey {
        &self.key
    }
    fn fields(&self) -> Fields {
        let mut f = Fields::new();
        for (i, d) in self.deps.iter().enumerate() {
            f.insert(format!("dep{i}"), Value::reference(d.to_ref()));
        }
        f
    }
    async fn find(&self, _cx: &Context<'_, ()>) -> Result<Option<Found>> {
        Ok(None)
    }
    async fn apply(&self, _cx: &Context<'_, ()>, _c: &Change<'_>) -> Result<Outputs> {
        Ok(Outputs::new())
    }
    fn render_terraform(&self, w: &mut TerraformWriter) -> Result<()> {
        (self.render)(self, w)
    }
}

fn k(kind: &str, name: &str) -> TaskKey {
    TaskKey::new(kind, name)
}

fn r(kind: &str, name: &str) -> Expr {
    Expr::Ref(k(kind, name).to_ref())
}

fn tags(name: &str, extra: &[(&str, &str)]) -> Expr {
    let mut m: BTreeMap<String, String> = [
        ("KubernetesCluster", CLUSTER),
        ("Name", name),
        ("kubernetes.io/cluster/minimal-aws.example.com", "owned"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    for (a, b) in extra {
        m.insert((*a).to_owned(), (*b).to_owned());
    }
    Expr::string_map(m)
}

fn task(kind: &str, name: &str, deps: &[TaskKey], render: Render) -> Box<dyn Task<()>> {
    Box::new(TfTask {
        key: k(kind, name),
        deps: deps.to_vec(),
        render,
    })
}

const NODE_TAGS: &[(&str, &str)] = &[
    ("aws-node-termination-handler/managed", ""),
    (
        "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node",
        "",
    ),
    ("k8s.io/role/node", "1"),
    ("kops.k8s.io/instancegroup", "nodes"),
];

fn model() -> Vec<Box<dyn Task<()>>> {
    let vpc = k("VPC", CLUSTER);
    vec![
        task("VPC", CLUSTER, &[], |t, w| {
            w.resource(
                "aws_vpc",
                t.key.name(),
                Body::new()
                    .attr("assign_generated_ipv6_cidr_block", true)
                    .attr("cidr_block", "172.20.0.0/16")
                    .attr("enable_dns_hostnames", true)
                    .attr("enable_dns_support", true)
                    .attr("tags", tags(CLUSTER, &[])),
            )?;
            let me = t.key.to_ref();
            w.output("vpc_id", me.clone());
            w.output("vpc_cidr_block", me.clone().with_attr("cidr_block"));
            w.output("vpc_ipv6_cidr_block", me.with_attr("ipv6_cidr_block"));
            w.output(
                "vpc_ipv6_cidr_length",
                Expr::Raw(
                    r#"local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])"#
                        .into(),
                ),
            );
            Ok(())
        }),
        task(
            "Subnet",
            "us-test-1a.minimal-aws.example.com",
            std::slice::from_ref(&vpc),
            |t, w| {
                w.resource(
                    "aws_subnet",
                    t.key.name(),
                    Body::new()
                        .attr("availability_zone", "us-test-1a")
                        .attr("cidr_block", "172.20.32.0/19")
                        .attr("enable_resource_name_dns_a_record_on_launch", true)
                        .attr("private_dns_hostname_type_on_launch", "resource-name")
                        .attr(
                            "tags",
                            tags(
                                t.key.name(),
                                &[
                                    ("SubnetType", "Public"),
                                    ("kubernetes.io/role/elb", "1"),
                                    ("kubernetes.io/role/internal-elb", "1"),
                                ],
                            ),
                        )
                        .attr("vpc_id", r("VPC", CLUSTER)),
                )?;
                w.output("subnet_us-test-1a_id", t.key.to_ref());
                w.output_list_item("node_subnet_ids", t.key.to_ref());
                Ok(())
            },
        ),
        task(
            "InternetGateway",
            CLUSTER,
            std::slice::from_ref(&vpc),
            |t, w| {
                w.resource(
                    "aws_internet_gateway",
                    t.key.name(),
                    Body::new()
                        .attr("tags", tags(CLUSTER, &[]))
                        .attr("vpc_id", r("VPC", CLUSTER)),
                )
            },
        ),
        task("RouteTable", CLUSTER, std::slice::from_ref(&vpc), |t, w| {
            w.resource(
                "aws_route_table",
                t.key.name(),
                Body::new()
                    .attr(
                        "tags",
                        tags(CLUSTER, &[("kubernetes.io/kops/role", "public")]),
                    )
                    .attr("vpc_id", r("VPC", CLUSTER)),
            )?;
            w.output("route_table_public_id", t.key.to_ref());
            Ok(())
        }),
        task("Route", "route-::/0", &[], |t, w| {
            w.resource(
                "aws_route",
                t.key.name(),
                Body::new()
                    .attr("destination_ipv6_cidr_block", "::/0")
                    .attr("gateway_id", r("InternetGateway", CLUSTER))
                    .attr("route_table_id", r("RouteTable", CLUSTER)),
            )
        }),
        task("Route", "route-0.0.0.0/0", &[], |t, w| {
            w.resource(
                "aws_route",
                t.key.name(),
                Body::new()
                    .attr("destination_cidr_block", "0.0.0.0/0")
                    .attr("gateway_id", r("InternetGateway", CLUSTER))
                    .attr("route_table_id", r("RouteTable", CLUSTER)),
            )
        }),
        task(
            "SecurityGroup",
            "nodes.minimal-aws.example.com",
            &[],
            |t, w| {
                w.resource(
                    "aws_security_group",
                    t.key.name(),
                    Body::new()
                        .attr("description", "Security group for nodes")
                        .attr("name", t.key.name())
                        .attr("tags", tags(t.key.name(), &[]))
                        .attr("vpc_id", r("VPC", CLUSTER)),
                )?;
                w.output_list_item("node_security_group_ids", t.key.to_ref());
                Ok(())
            },
        ),
        task(
            "SecurityGroupRule",
            "from-nodes.minimal-aws.example.com-egress-all-0to0-::/0",
            &[],
            |t, w| {
                w.resource(
                    "aws_security_group_rule",
                    t.key.name(),
                    Body::new()
                        .attr("from_port", 0)
                        .attr("ipv6_cidr_blocks", Expr::string_list(["::/0"]))
                        .attr("protocol", "-1")
                        .attr(
                            "security_group_id",
                            r("SecurityGroup", "nodes.minimal-aws.example.com"),
                        )
                        .attr("to_port", 0)
                        .attr("type", "egress"),
                )
            },
        ),
        task("IAMRole", "nodes.minimal-aws.example.com", &[], |t, w| {
            let policy = w.add_file("aws_iam_role", t.key.name(), "policy", "{}");
            w.resource(
                "aws_iam_role",
                t.key.name(),
                Body::new()
                    .attr("assume_role_policy", policy)
                    .attr("name", t.key.name())
                    .attr("tags", tags(t.key.name(), &[])),
            )?;
            w.output("nodes_role_arn", t.key.to_ref().with_attr("arn"));
            w.output("nodes_role_name", t.key.to_ref().with_attr("name"));
            Ok(())
        }),
        task(
            "IAMInstanceProfile",
            "nodes.minimal-aws.example.com",
            &[],
            |t, w| {
                w.resource(
                    "aws_iam_instance_profile",
                    t.key.name(),
                    Body::new()
                        .attr("name", t.key.name())
                        .attr(
                            "role",
                            k("IAMRole", t.key.name()).to_ref().with_attr("name"),
                        )
                        .attr("tags", tags(t.key.name(), &[])),
                )
            },
        ),
        task(
            "SSHKey",
            "kubernetes.minimal-aws.example.com-c4a6ed9aa889b9e2c39cd663eb9c7157",
            &[],
            |t, w| {
                let key = w.add_file("aws_key_pair", t.key.name(), "public_key", "ssh-rsa AAAA");
                w.resource(
                    "aws_key_pair",
                    t.key.name(),
                    Body::new()
                        .attr(
                            "key_name",
                            "kubernetes.minimal-aws.example.com-c4:a6:ed:9a:a8:89:b9:e2:c3:9c:d6:63:eb:9c:71:57",
                        )
                        .attr("public_key", key)
                        .attr("tags", tags(CLUSTER, &[])),
                )
            },
        ),
        task(
            "LaunchTemplate",
            "nodes.minimal-aws.example.com",
            &[],
            |t, w| {
                let name = t.key.name();
                let lt_tags = tags(name, NODE_TAGS);
                let user_data =
                    w.add_file_base64("aws_launch_template", name, "user_data", "#!/bin/bash\n");
                let mut body = Body::new()
                    .block(
                        "block_device_mappings",
                        Body::new().attr("device_name", "/dev/xvda").block(
                            "ebs",
                            Body::new()
                                .attr("delete_on_termination", true)
                                .attr("encrypted", true)
                                .attr("iops", 3000)
                                .attr("throughput", 125)
                                .attr("volume_size", 128)
                                .attr("volume_type", "gp3"),
                        ),
                    )
                    .block(
                        "iam_instance_profile",
                        Body::new().attr("name", r("IAMInstanceProfile", name)),
                    )
                    .attr("image_id", "ami-12345678")
                    .attr("instance_type", "t2.medium")
                    .attr(
                        "key_name",
                        r(
                            "SSHKey",
                            "kubernetes.minimal-aws.example.com-c4a6ed9aa889b9e2c39cd663eb9c7157",
                        ),
                    )
                    .block("lifecycle", Body::new().attr("create_before_destroy", true))
                    .block(
                        "metadata_options",
                        Body::new()
                            .attr("http_endpoint", "enabled")
                            .attr("http_protocol_ipv6", "disabled")
                            .attr("http_put_response_hop_limit", 1)
                            .attr("http_tokens", "required"),
                    )
                    .block("monitoring", Body::new().attr("enabled", false))
                    .attr("name", name)
                    .block(
                        "network_interfaces",
                        Body::new()
                            .attr("associate_public_ip_address", true)
                            .attr("delete_on_termination", true)
                            .attr("ipv6_address_count", 0)
                            .attr(
                                "security_groups",
                                Expr::List(vec![r("SecurityGroup", name)]),
                            ),
                    );
                for rt in ["instance", "volume", "network-interface"] {
                    body = body.push_block(
                        "tag_specifications",
                        Body::new()
                            .attr("resource_type", rt)
                            .attr("tags", lt_tags.clone()),
                    );
                }
                body = body.attr("tags", lt_tags).attr("user_data", user_data);
                w.resource("aws_launch_template", name, body)
            },
        ),
        task(
            "AutoscalingGroup",
            "nodes.minimal-aws.example.com",
            &[],
            |t, w| {
                let name = t.key.name();
                let lt = k("LaunchTemplate", name).to_ref();
                let mut body = Body::new()
                    .attr(
                        "enabled_metrics",
                        Expr::string_list([
                            "GroupDesiredCapacity",
                            "GroupInServiceInstances",
                            "GroupMaxSize",
                            "GroupMinSize",
                            "GroupPendingInstances",
                            "GroupStandbyInstances",
                            "GroupTerminatingInstances",
                            "GroupTotalInstances",
                        ]),
                    )
                    .block(
                        "launch_template",
                        Body::new()
                            .attr("id", lt.clone())
                            .attr("version", lt.with_attr("latest_version")),
                    )
                    .attr("max_instance_lifetime", 174000)
                    .attr("max_size", 2)
                    .attr("metrics_granularity", "1Minute")
                    .attr("min_size", 2)
                    .attr("name", name)
                    .attr("protect_from_scale_in", false)
                    .attr(
                        "vpc_zone_identifier",
                        Expr::List(vec![r("Subnet", "us-test-1a.minimal-aws.example.com")]),
                    );
                let mut all: BTreeMap<&str, &str> = NODE_TAGS.iter().copied().collect();
                all.insert("KubernetesCluster", CLUSTER);
                all.insert("Name", name);
                all.insert("kubernetes.io/cluster/minimal-aws.example.com", "owned");
                for (key, value) in all {
                    body = body.push_block(
                        "tag",
                        Body::new()
                            .attr("key", key)
                            .attr("propagate_at_launch", true)
                            .attr("value", value),
                    );
                }
                w.resource("aws_autoscaling_group", name, body)?;
                w.output_list_item("node_autoscaling_group_ids", t.key.to_ref());
                Ok(())
            },
        ),
        task(
            "EventBridgeRule",
            "minimal-aws.example.com-ASGLifecycle",
            &[],
            |t, w| {
                let pattern = w.add_file(
                    "aws_cloudwatch_event_rule",
                    t.key.name(),
                    "event_pattern",
                    "{}",
                );
                w.resource(
                    "aws_cloudwatch_event_rule",
                    t.key.name(),
                    Body::new()
                        .attr("event_pattern", pattern)
                        .attr("name", t.key.name())
                        .attr("tags", tags(t.key.name(), &[])),
                )
            },
        ),
        task("ManagedFile", "cluster-completed.spec", &[], |t, w| {
            let content = w.add_file("aws_s3_object", t.key.name(), "content", "spec: {}\n");
            w.resource(
                "aws_s3_object",
                t.key.name(),
                Body::new()
                    .attr("bucket", "testingBucket")
                    .attr("content", content)
                    .attr(
                        "key",
                        "clusters.example.com/minimal-aws.example.com/cluster-completed.spec",
                    )
                    .attr("provider", Expr::traversal("aws.files"))
                    .attr("server_side_encryption", "AES256"),
            )
        }),
        task("Cluster", CLUSTER, &[], |_t, w| {
            w.output("cluster_name", CLUSTER);
            w.output("region", "us-test-1");
            // Outputs of resources this test does not model, as plain references.
            let asg = TerraformWriter::resource_ref(
                "aws_autoscaling_group",
                "master-us-test-1a.masters.minimal-aws.example.com",
                "id",
            );
            w.output_list_item("master_autoscaling_group_ids", asg);
            w.output_list_item(
                "master_security_group_ids",
                TerraformWriter::resource_ref(
                    "aws_security_group",
                    "masters.minimal-aws.example.com",
                    "id",
                ),
            );
            let role = |attr| {
                TerraformWriter::resource_ref(
                    "aws_iam_role",
                    "masters.minimal-aws.example.com",
                    attr,
                )
            };
            w.output("masters_role_arn", role("arn"));
            w.output("masters_role_name", role("name"));
            w.provider("aws", Body::new().attr("region", "us-test-1"));
            w.provider_alias("aws", "files", Body::new().attr("region", "us-test-1"));
            w.required_version(">= 0.15.0");
            w.required_provider("aws", "hashicorp/aws", ">= 5.0.0");
            Ok(())
        }),
    ]
}

fn render() -> TerraformOutput {
    let graph = TaskGraph::build(model()).unwrap();
    let mut w = TerraformWriter::new();
    render_graph(&graph, &mut w).unwrap();
    w.finish().unwrap()
}

/// Top-level blocks of an HCL file by header line.
fn blocks(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
            if line == "}" {
                let (h, b) = current.take().unwrap();
                // Repeated headers (two `provider "aws"` blocks) are told apart by position.
                let mut key = h.clone();
                let mut n = 1;
                while out.contains_key(&key) {
                    n += 1;
                    key = format!("{h} #{n}");
                }
                out.insert(key, b);
            }
        } else if !line.is_empty() {
            current = Some((line.to_owned(), format!("{line}\n")));
        }
    }
    out
}

#[path = "../../../support/shared.rs"]
mod shared;

fn shared_case() -> Option<PathBuf> {
    shared::require("terraform", "conformance/cases/minimal-aws/expected")
}

#[test]
fn blocks_match_kops_minimal_aws_golden() {
    let Some(dir) = shared_case() else { return };
    let expected = blocks(&std::fs::read_to_string(dir.join("kubernetes.tf")).unwrap());
    let out = render();
    let ours = blocks(out.main_tf());
    assert_eq!(ours.len(), 36, "blocks rendered");
    let mut mismatches = Vec::new();
    for (header, body) in &ours {
        match expected.get(header) {
            Some(e) if e == body => {}
            Some(e) => mismatches.push(format!(
                "{header}\n{}",
                kops_tasks::diff::text_diff(e, body)
            )),
            None => mismatches.push(format!("{header}: not in the golden file")),
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // Data files use the unsanitised name, as kOps does.
    for path in out.files.keys().filter(|p| p.starts_with("data/")) {
        assert!(dir.join(path).exists(), "{path} not in the golden data/");
    }
    // The order of our blocks is the golden file's order.
    let order = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with(' ') && *l != "}")
            .map(str::to_owned)
            .collect()
    };
    let golden_order: Vec<String> =
        order(&std::fs::read_to_string(dir.join("kubernetes.tf")).unwrap())
            .into_iter()
            .filter(|h| ours.contains_key(h))
            .collect();
    assert_eq!(order(out.main_tf()), golden_order);
}

#[test]
fn output_passes_terraform_fmt_check() {
    let require = std::env::var("KOPS_TEST_REQUIRE_EMULATORS").is_ok_and(|v| v == "1");
    let found = Command::new("terraform")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !require,
            "terraform is not on PATH and KOPS_TEST_REQUIRE_EMULATORS=1"
        );
        println!("skipping: terraform not on PATH");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kops-tasks-tf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut out = render();
    // Also exercise escaping and nesting that the golden case does not cover.
    let mut w = TerraformWriter::new();
    w.resource(
        "test_thing",
        "0weird.name/with:chars",
        Body::new()
            .attr(
                "s",
                "quote \" backslash \\ dollar ${x} percent %{y} newline \n tab \t",
            )
            .attr("n", -5)
            .attr(
                "nested",
                Expr::Map(BTreeMap::from([
                    (
                        "inner".to_owned(),
                        Expr::string_map([("a", "1"), ("long-key", "2")]),
                    ),
                    (
                        "z".to_owned(),
                        Expr::List(vec![Expr::from(1), Expr::from(true)]),
                    ),
                ])),
            )
            .attr(
                "call",
                Expr::Call(
                    "join".into(),
                    vec![Expr::from(","), Expr::string_list(["a", "b"])],
                ),
            )
            .block("empty", Body::new()),
    )
    .unwrap();
    let extra = w.finish().unwrap();
    out.files.insert(
        "extra.tf".into(),
        extra.files[TerraformOutput::MAIN].clone(),
    );
    out.write_to(&dir).unwrap();
    let res = Command::new("terraform")
        .args(["fmt", "-check", "-diff", "-recursive"])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        res.status.success(),
        "terraform fmt -check failed:\n{}\n{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
}

#[test]
fn shared_objects_link_by_literal_id() {
    let mut w = TerraformWriter::new();
    w.link(
        k("VPC", "shared"),
        kops_tasks::terraform::Link::Literal("vpc-12345678".into()),
    );
    w.resource(
        "aws_subnet",
        "a",
        Body::new().attr("vpc_id", Expr::Ref(TaskRef::new(k("VPC", "shared")))),
    )
    .unwrap();
    let out = w.finish().unwrap();
    assert!(
        out.main_tf().contains("vpc_id = \"vpc-12345678\""),
        "{}",
        out.main_tf()
    );
}
