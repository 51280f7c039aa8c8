//! Compute builders (kOps' `awsmodel/sshkey.go`, `autoscalinggroup.go`,
//! `pkg/model/master_volumes.go`): the SSH key pair, launch templates, autoscaling groups
//! with warm pools and lifecycle hooks, and the etcd EBS volumes.

use std::collections::BTreeMap;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::TaskKey;
use kops_tasks::terraform::Expr;

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::naming;
use crate::aws::task::{Attr, FindBy};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// The SSH key task key, when the cluster has a key the model manages or names.
pub(crate) fn ssh_key_key(ctx: &ModelContext) -> Option<TaskKey> {
    if let Some(n) = &ctx.cluster.spec.ssh_key_name {
        if n.is_empty() {
            return None;
        }
        return Some(TaskKey::new("SSHKey", n));
    }
    let key = ctx.ssh_public_key.as_deref()?;
    let fp = naming::ssh_key_fingerprint(key)?;
    Some(TaskKey::new(
        "SSHKey",
        naming::ssh_key_name(ctx.name(), &fp),
    ))
}

fn build_ssh_key(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    if let Some(n) = &ctx.cluster.spec.ssh_key_name {
        if !n.is_empty() {
            m.add(ctx.task("SSHKey", n.clone(), R::KeyPair).shared(n.clone()));
        }
        return Ok(());
    }
    let Some(public) = ctx.ssh_public_key.as_deref() else {
        return Ok(());
    };
    let Some(fp) = naming::ssh_key_fingerprint(public) else {
        return Err(invalid("sshPublicKey", "cannot decode the SSH public key"));
    };
    let name = naming::ssh_key_name(ctx.name(), &fp);
    m.add(
        ctx.task("SSHKey", name.clone(), R::KeyPair)
            .attr("key_name", name.as_str())
            .attr("public_key", Attr::File(public.trim_end().to_owned()))
            .find_by(FindBy::Id(name.clone()))
            .tf_name(name.replace(':', ""))
            .tags(ctx.tags(ctx.name())),
    );
    Ok(())
}

/// Parses a Go duration (`48h20m`, `90s`, `0`) into seconds.
pub(crate) fn parse_duration_secs(s: &str) -> Option<i64> {
    let s = s.trim();
    if s == "0" || s.is_empty() {
        return Some(0);
    }
    let mut total = 0f64;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && chars.peek() == Some(&'s') {
            unit.push('s');
            chars.next();
        }
        let v: f64 = num.parse().ok()?;
        num.clear();
        total += v * match unit.as_str() {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
    }
    if !num.is_empty() {
        return None;
    }
    Some(total as i64)
}

/// kOps' `CloudTagsForInstanceGroup`.
pub(crate) fn group_tags(ctx: &ClusterContext, ig: &InstanceGroup) -> BTreeMap<String, String> {
    let name = ctx.group_resource_name(ig);
    let mut t = ctx.tags(&name);
    for (k, v) in ig.spec.cloud_labels.iter().flatten() {
        t.insert(k.clone(), v.clone());
    }
    if ctx.nth_queue_mode() {
        let tag = ctx
            .cluster
            .spec
            .cloud_provider
            .aws
            .as_ref()
            .and_then(|a| a.node_termination_handler.as_ref())
            .and_then(|n| n.managed_asg_tag.clone())
            .unwrap_or_else(|| "aws-node-termination-handler/managed".to_owned());
        // A managed tag naming one of the cluster's own tags keeps that tag's value.
        t.entry(tag).or_default();
    }
    let label_prefix = "k8s.io/cluster-autoscaler/node-template/label/";
    let labels = crate::cluster::node_labels(ig);
    for (k, v) in labels {
        t.insert(format!("{label_prefix}{k}"), v);
    }
    for taint in ig.spec.taints.iter().flatten() {
        // key[=value]:effect
        let (kv, effect) = taint.rsplit_once(':').unwrap_or((taint.as_str(), ""));
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        t.insert(
            format!("k8s.io/cluster-autoscaler/node-template/taint/{k}"),
            format!("{v}:{effect}"),
        );
    }
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => {
            t.insert("k8s.io/role/control-plane".into(), "1".into());
            t.insert("k8s.io/role/master".into(), "1".into());
        }
        Some(InstanceGroupRole::Node) => {
            t.insert("k8s.io/role/node".into(), "1".into());
        }
        Some(InstanceGroupRole::Bastion) => {
            t.insert("k8s.io/role/bastion".into(), "1".into());
        }
        Some(InstanceGroupRole::ApiServer) => {
            t.insert("k8s.io/role/apiserver".into(), "1".into());
        }
        _ => {}
    }
    t.insert("kops.k8s.io/instancegroup".into(), ig.name().to_owned());
    t
}

/// Instance stores of instance types kOps maps to ephemeral devices (`/dev/sdc`, ...).
fn ephemeral_count(machine_type: &str) -> usize {
    match machine_type {
        "m3.medium" | "m3.large" | "c3.large" | "r3.large" | "i2.xlarge" => 1,
        "m3.xlarge" | "m3.2xlarge" | "c3.xlarge" | "c3.2xlarge" | "c3.4xlarge" | "c3.8xlarge"
        | "i2.2xlarge" => 2,
        _ => 0,
    }
}

/// A value the completed spec must hold (kops-api's `populate` fills it) is missing: the
/// builders never default it again.
fn completed_missing(ig: &InstanceGroup, field: &str) -> crate::error::Error {
    invalid(
        format!("instancegroup {}: {field}", ig.name()),
        "missing from the completed spec (populate fills it)",
    )
}

fn subnet_refs(ctx: &ModelContext, ig: &InstanceGroup) -> Vec<Attr> {
    ig.spec
        .subnets
        .iter()
        .flatten()
        .map(|s| match ctx.subnet(s).and_then(|sp| sp.id.clone()) {
            Some(id) => Attr::Str(id),
            None => Attr::id(&ctx.subnet_key(s)),
        })
        .collect()
}

/// kOps decides by the group's first subnet: instances in a public or utility subnet get
/// a public address unless the group says otherwise; in a private or dual-stack subnet
/// they never do, whatever the group says.
fn public_ip(ctx: &ModelContext, ig: &InstanceGroup) -> bool {
    match ctx.first_subnet_type(ig) {
        Some("Public" | "Utility") => ig.spec.associate_public_ip.unwrap_or(true),
        _ => false,
    }
}

fn uses_ipv6(ctx: &ModelContext, ig: &InstanceGroup) -> bool {
    ig.spec
        .subnets
        .iter()
        .flatten()
        .any(|s| ctx.subnet(s).is_some_and(|sp| sp.ipv6_cidr.is_some()))
}

fn build_group(ctx: &ModelContext, m: &mut AwsModel, ig: &InstanceGroup) -> Result<()> {
    let Some(role) = ig.spec.role.clone() else {
        return Ok(());
    };
    let name = ctx.group_resource_name(ig);
    let lt_key = TaskKey::new("LaunchTemplate", &name);
    let asg_key = TaskKey::new("AutoscalingGroup", &name);
    let tags = group_tags(ctx, ig);

    // Launch template.
    let rv = kops_api::defaults::root_volume(&ctx.cluster, ig);
    let image_spec = ig.spec.image.clone().unwrap_or_default();
    let image = ctx.images.get(&image_spec);
    let image_id = image.map_or(image_spec.clone(), |i| i.id.clone());
    let root_device = image
        .map(|i| i.root_device_name.clone())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/dev/xvda".to_owned());
    // The completed spec names the machine type; a comma list is a mixed-instances
    // group, whose launch template carries the first type (the policy lists them all).
    let machine_type = ig
        .spec
        .machine_type
        .as_deref()
        .and_then(|t| t.split(',').next())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| completed_missing(ig, "spec.machineType"))?
        .to_owned();
    let mut ebs = vec![
        (
            "delete_on_termination".to_owned(),
            Attr::Bool(ig.spec.root_volume_delete_on_termination.unwrap_or(true)),
        ),
        (
            "encrypted".to_owned(),
            Attr::Bool(rv.encryption.unwrap_or(true)),
        ),
    ];
    if let Some(i) = rv.iops {
        ebs.push(("iops".into(), Attr::Int(i64::from(i))));
    }
    if let Some(k) = &rv.encryption_key {
        ebs.push(("kms_key_id".into(), Attr::s(k.as_str())));
    }
    if let Some(t) = rv.throughput {
        ebs.push(("throughput".into(), Attr::Int(i64::from(t))));
    }
    ebs.push((
        "volume_size".into(),
        Attr::Int(i64::from(
            rv.size
                .ok_or_else(|| completed_missing(ig, "spec.rootVolume.size"))?,
        )),
    ));
    ebs.push((
        "volume_type".into(),
        Attr::s(
            rv.type_
                .clone()
                .ok_or_else(|| completed_missing(ig, "spec.rootVolume.type"))?,
        ),
    ));
    let mut devices = vec![vec![
        ("device_name".to_owned(), Attr::s(root_device)),
        ("ebs".to_owned(), Attr::Block(ebs)),
    ]];
    for v in ig.spec.volumes.iter().flatten() {
        let mut e = vec![(
            "delete_on_termination".to_owned(),
            Attr::Bool(v.delete_on_termination.unwrap_or(true)),
        )];
        e.push(("encrypted".into(), Attr::Bool(v.encrypted.unwrap_or(false))));
        let vt = v.type_.clone().unwrap_or_else(|| "gp3".into());
        let (iops, tp) = if vt == "gp3" {
            (
                Some(v.iops.unwrap_or(3000).max(3000)),
                Some(v.throughput.unwrap_or(125).max(125)),
            )
        } else {
            (v.iops, v.throughput)
        };
        if let Some(i) = iops {
            e.push(("iops".into(), Attr::Int(i)));
        }
        if let Some(k) = &v.key {
            e.push(("kms_key_id".into(), Attr::s(k.as_str())));
        }
        if let Some(t) = tp {
            e.push(("throughput".into(), Attr::Int(t)));
        }
        e.push(("volume_size".into(), Attr::Int(v.size.unwrap_or(20))));
        e.push(("volume_type".into(), Attr::s(vt)));
        devices.push(vec![
            (
                "device_name".to_owned(),
                Attr::s(v.device.clone().unwrap_or_default()),
            ),
            ("ebs".to_owned(), Attr::Block(e)),
        ]);
    }
    for i in 0..ephemeral_count(&machine_type) {
        let dev = char::from(b'c' + u8::try_from(i).unwrap_or(0));
        devices.push(vec![
            ("device_name".to_owned(), Attr::s(format!("/dev/sd{dev}"))),
            ("virtual_name".to_owned(), Attr::s(format!("ephemeral{i}"))),
        ]);
    }

    let mut sgs: Vec<Attr> = vec![match &ig.spec.security_group_override {
        Some(sg) => Attr::s(sg.as_str()),
        None => Attr::id(&ctx.sg_key(&role)),
    }];
    // Instances behind the API load balancer also join its additional groups.
    let runs_api_server = matches!(
        role,
        InstanceGroupRole::ControlPlane | InstanceGroupRole::ApiServer
    );
    if runs_api_server
        && let Some(lb) = &ctx.cluster.spec.api.load_balancer
        && lb.class.as_deref().unwrap_or("Network") == "Network"
    {
        for s in lb.additional_security_groups.iter().flatten() {
            sgs.push(Attr::s(s.as_str()));
        }
    }
    for s in ig.spec.additional_security_groups.iter().flatten() {
        sgs.push(Attr::s(s.as_str()));
    }
    let ipv6 = uses_ipv6(ctx, ig);
    let md = ig.spec.instance_metadata.clone().unwrap_or_default();
    let profile_key = super::iam::instance_profile_key(ctx, &role);
    let mut lt = ctx
        .task("LaunchTemplate", name.clone(), R::LaunchTemplate)
        .named(name.clone())
        .attr("block_device_mappings", Attr::Blocks(devices))
        .attr(
            "iam_instance_profile",
            Attr::Block(vec![("name".into(), Attr::id(&profile_key))]),
        )
        .attr("image_id", image_id)
        .attr("instance_type", machine_type.as_str())
        .attr(
            "metadata_options",
            Attr::Block(vec![
                ("http_endpoint".into(), Attr::s("enabled")),
                (
                    "http_protocol_ipv6".into(),
                    Attr::s(if ipv6 { "enabled" } else { "disabled" }),
                ),
                (
                    "http_put_response_hop_limit".into(),
                    Attr::Int(md.http_put_response_hop_limit.unwrap_or(1)),
                ),
                (
                    "http_tokens".into(),
                    Attr::s(md.http_tokens.unwrap_or_else(|| "required".into())),
                ),
            ]),
        )
        .attr(
            "monitoring",
            Attr::Block(vec![(
                "enabled".into(),
                Attr::Bool(ig.spec.detailed_instance_monitoring.unwrap_or(false)),
            )]),
        )
        .attr(
            "network_interfaces",
            Attr::Block(vec![
                (
                    "associate_public_ip_address".into(),
                    Attr::Bool(public_ip(ctx, ig)),
                ),
                ("delete_on_termination".into(), Attr::Bool(true)),
                ("ipv6_address_count".into(), Attr::Int(i64::from(ipv6))),
                ("security_groups".into(), Attr::List(sgs)),
            ]),
        )
        .attr(
            "tag_specifications",
            Attr::Blocks(
                ["instance", "volume", "network-interface"]
                    .iter()
                    .map(|rt| {
                        vec![
                            ("resource_type".to_owned(), Attr::s(*rt)),
                            (
                                "tags".to_owned(),
                                Attr::Map(
                                    tags.iter()
                                        .map(|(k, v)| (k.clone(), Attr::s(v.as_str())))
                                        .collect(),
                                ),
                            ),
                        ]
                    })
                    .collect(),
            ),
        )
        .render_attr(
            "lifecycle",
            Attr::Block(vec![("create_before_destroy".into(), Attr::Bool(true))]),
        )
        .tags(tags.clone());
    if let Some(k) = ssh_key_key(ctx) {
        lt.set("key_name", Attr::id(&k));
    }
    if let Some(c) = &ig.spec.cpu_credits {
        lt.set(
            "credit_specification",
            Attr::Block(vec![("cpu_credits".into(), Attr::s(c.as_str()))]),
        );
    }
    if let Some(t) = &ig.spec.tenancy {
        lt.set(
            "placement",
            Attr::Block(vec![("tenancy".into(), Attr::s(t.as_str()))]),
        );
    }
    let mixed = ig.spec.mixed_instances_policy.as_ref();
    if let Some(price) = &ig.spec.max_price
        && mixed.is_none()
    {
        let mut opts = vec![("max_price".to_owned(), Attr::s(price.as_str()))];
        if let Some(b) = &ig.spec.instance_interruption_behavior {
            opts.push(("instance_interruption_behavior".into(), Attr::s(b.as_str())));
        }
        lt.set(
            "instance_market_options",
            Attr::Block(vec![
                ("market_type".into(), Attr::s("spot")),
                ("spot_options".into(), Attr::Block(opts)),
            ]),
        );
    }
    // kOps' bootstrap script (multipart MIME with additional user-data); a bastion
    // without additional user-data gets none.
    if let Some(data) = crate::nodeup::user_data(ctx, ig)? {
        lt.set("user_data", Attr::FileBase64(data));
    }
    m.add(lt);

    // Autoscaling group.
    let warm = ig
        .spec
        .warm_pool
        .clone()
        .or_else(|| {
            ctx.cluster
                .spec
                .cloud_provider
                .aws
                .as_ref()
                .and_then(|a| a.warm_pool.clone())
        })
        .filter(|_| role == InstanceGroupRole::Node);
    let warm_enabled = warm.as_ref().is_some_and(|w| w.max_size != Some(0));
    let mut metrics = vec![
        "GroupDesiredCapacity",
        "GroupInServiceInstances",
        "GroupMaxSize",
        "GroupMinSize",
        "GroupPendingInstances",
        "GroupStandbyInstances",
        "GroupTerminatingInstances",
        "GroupTotalInstances",
    ];
    if warm_enabled {
        metrics.extend([
            "GroupAndWarmPoolDesiredCapacity",
            "GroupAndWarmPoolTotalCapacity",
            "WarmPoolDesiredCapacity",
            "WarmPoolMinSize",
            "WarmPoolPendingCapacity",
            "WarmPoolTerminatingCapacity",
            "WarmPoolTotalCapacity",
            "WarmPoolWarmedCapacity",
        ]);
    }
    metrics.sort_unstable();
    let min = ig
        .spec
        .min_size
        .ok_or_else(|| completed_missing(ig, "spec.minSize"))?;
    let max = ig
        .spec
        .max_size
        .ok_or_else(|| completed_missing(ig, "spec.maxSize"))?;
    let lifetime = ig
        .spec
        .max_instance_lifetime
        .as_deref()
        .and_then(parse_duration_secs)
        .unwrap_or(0);
    let mut asg = ctx
        .task("AutoscalingGroup", name.clone(), R::AutoscalingGroup)
        .named(name.clone())
        .attr("enabled_metrics", Attr::strs(metrics))
        .attr("max_instance_lifetime", lifetime)
        .attr("max_size", max)
        .attr("metrics_granularity", "1Minute")
        .attr("min_size", min)
        .attr(
            "protect_from_scale_in",
            ig.spec.instance_protection.unwrap_or(false),
        )
        .attr(
            "tag",
            Attr::Blocks(
                tags.iter()
                    .map(|(k, v)| {
                        vec![
                            ("key".to_owned(), Attr::s(k.as_str())),
                            ("propagate_at_launch".to_owned(), Attr::Bool(true)),
                            ("value".to_owned(), Attr::s(v.as_str())),
                        ]
                    })
                    .collect(),
            ),
        )
        .attr("vpc_zone_identifier", Attr::List(subnet_refs(ctx, ig)));
    let lt_spec = vec![
        ("id".to_owned(), Attr::id(&lt_key)),
        ("version".to_owned(), Attr::out(&lt_key, "latest_version")),
    ];
    if let Some(mp) = mixed {
        let mut dist = Vec::new();
        if let Some(s) = &mp.on_demand_allocation_strategy {
            dist.push((
                "on_demand_allocation_strategy".to_owned(),
                Attr::s(s.as_str()),
            ));
        }
        if let Some(b) = mp.on_demand_base {
            dist.push(("on_demand_base_capacity".into(), Attr::Int(b)));
        }
        if let Some(a) = mp.on_demand_above_base {
            dist.push((
                "on_demand_percentage_above_base_capacity".into(),
                Attr::Int(a),
            ));
        }
        if let Some(s) = &mp.spot_allocation_strategy {
            dist.push(("spot_allocation_strategy".into(), Attr::s(s.as_str())));
        }
        if let Some(p) = mp.spot_instance_pools {
            dist.push(("spot_instance_pools".into(), Attr::Int(p)));
        }
        dist.push((
            "spot_max_price".into(),
            Attr::s(ig.spec.max_price.clone().unwrap_or_default()),
        ));
        let mut ltb = vec![(
            "launch_template_specification".to_owned(),
            Attr::Block(vec![
                ("launch_template_id".to_owned(), Attr::id(&lt_key)),
                ("version".to_owned(), Attr::out(&lt_key, "latest_version")),
            ]),
        )];
        let overrides: Vec<Vec<(String, Attr)>> = mp
            .instances
            .iter()
            .flatten()
            .map(|i| vec![("instance_type".to_owned(), Attr::s(i.as_str()))])
            .collect();
        if !overrides.is_empty() {
            ltb.push(("override".into(), Attr::Blocks(overrides)));
        }
        asg.set(
            "mixed_instances_policy",
            Attr::Block(vec![
                ("instances_distribution".into(), Attr::Block(dist)),
                ("launch_template".into(), Attr::Block(ltb)),
            ]),
        );
    } else {
        asg.set("launch_template", Attr::Block(lt_spec));
    }
    if let Some(c) = ig.spec.capacity_rebalance {
        asg.set("capacity_rebalance", c);
    }
    if let Some(sp) = &ig.spec.suspend_processes
        && !sp.is_empty()
    {
        asg.set("suspended_processes", Attr::strs(sp.iter().cloned()));
    }
    let mut tgs: Vec<Attr> = super::loadbalancer::target_groups_for(ctx, ig)
        .into_iter()
        .map(|k| Attr::id(&k))
        .collect();
    let mut lbs: Vec<Attr> = Vec::new();
    for lb in ig.spec.external_load_balancers.iter().flatten() {
        if let Some(arn) = &lb.target_group_arn {
            tgs.push(Attr::s(arn.as_str()));
        }
        if let Some(n) = &lb.load_balancer_name {
            lbs.push(Attr::s(n.as_str()));
        }
    }
    if !tgs.is_empty() {
        asg.set("target_group_arns", Attr::List(tgs));
    }
    if !lbs.is_empty() {
        asg.set("load_balancers", Attr::List(lbs));
    }
    if let Some(w) = &warm
        && warm_enabled
    {
        let wb = vec![
            (
                "max_group_prepared_capacity".to_owned(),
                Attr::Int(w.max_size.unwrap_or(-1)),
            ),
            ("min_size".to_owned(), Attr::Int(w.min_size.unwrap_or(0))),
        ];
        asg = asg.render_attr("warm_pool", Attr::Block(wb.clone()));
        m.add(
            ctx.task("WarmPool", name.clone(), R::WarmPool)
                .attr("autoscaling_group_name", Attr::out(&asg_key, "name"))
                .attr("max_group_prepared_capacity", w.max_size.unwrap_or(-1))
                .attr("min_size", w.min_size.unwrap_or(0))
                .find_by(FindBy::Parent {
                    parent_attr: "autoscaling_group_name".into(),
                    match_attrs: vec![],
                })
                .no_render(),
        );
        if w.enable_lifecycle_hook == Some(true) {
            m.add(
                ctx.task(
                    "AutoscalingLifecycleHook",
                    format!("kops-warmpool-{}", ig.name()),
                    R::LifecycleHook,
                )
                .named("kops-warmpool")
                .attr("autoscaling_group_name", Attr::id(&asg_key))
                .attr("default_result", "ABANDON")
                .attr(
                    "heartbeat_timeout",
                    i64::from(w.lifecycle_hook_timeout.unwrap_or(600)),
                )
                .attr("lifecycle_transition", "autoscaling:EC2_INSTANCE_LAUNCHING")
                .find_by(FindBy::Parent {
                    parent_attr: "autoscaling_group_name".into(),
                    match_attrs: vec!["lifecycle_transition".into()],
                }),
            );
        }
    }
    m.add(asg);

    let out_role = match role {
        InstanceGroupRole::ControlPlane => "master",
        InstanceGroupRole::Bastion => "bastion",
        _ => "node",
    };
    m.output_item(
        format!("{out_role}_autoscaling_group_ids"),
        Expr::Ref(asg_key.to_ref()),
    );
    if role == InstanceGroupRole::Node {
        for s in subnet_refs(ctx, ig) {
            let e = match s {
                Attr::Ref(r) => Expr::Ref(r),
                Attr::Str(s) => Expr::String(s),
                _ => continue,
            };
            m.output_item("node_subnet_ids", e);
        }
    }
    Ok(())
}

fn build_volumes(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    for (ci, etcd) in ctx.cluster.spec.etcd_clusters.iter().flatten().enumerate() {
        let ename = etcd.name.clone().unwrap_or_default();
        let members = etcd.etcd_members.clone().unwrap_or_default();
        let mut all: Vec<String> = members.iter().filter_map(|mm| mm.name.clone()).collect();
        all.sort();
        for (mi, member) in members.iter().enumerate() {
            let mname = member.name.clone().unwrap_or_default();
            let Some(ig_name) = member.instance_group.as_deref() else {
                return Err(invalid(
                    format!("spec.etcdClusters[{ci}].etcdMembers[{mi}].instanceGroup"),
                    "etcd member has no instance group",
                ));
            };
            let Some(ig) = ctx.groups.iter().find(|g| g.name() == ig_name) else {
                return Err(invalid(
                    format!("spec.etcdClusters[{ci}].etcdMembers[{mi}].instanceGroup"),
                    format!("instance group {ig_name:?} not found"),
                ));
            };
            let zones = ctx.group_zones(ig);
            let [zone] = zones.as_slice() else {
                return Err(invalid(
                    format!("spec.etcdClusters[{ci}].etcdMembers[{mi}].instanceGroup"),
                    format!("instance group {ig_name:?} must be in exactly one zone"),
                ));
            };
            let vt = member
                .volume_type
                .clone()
                .or_else(|| etcd.volume_type.clone())
                .unwrap_or_else(|| "gp3".into());
            let size = member.volume_size.or(etcd.volume_size).unwrap_or(20);
            let mut iops = member.volume_iops.or(etcd.volume_iops);
            let mut throughput = member.volume_throughput.or(etcd.volume_throughput);
            if vt == "gp3" {
                iops = Some(iops.unwrap_or(3000).max(3000));
                throughput = Some(throughput.unwrap_or(125).max(125));
            }
            let name = format!("{mname}.etcd-{ename}.{}", ctx.name());
            let mut tags = ctx.tags(&name);
            tags.insert(
                format!("k8s.io/etcd/{ename}"),
                format!("{mname}/{}", all.join(",")),
            );
            tags.insert("k8s.io/role/control-plane".into(), "1".into());
            tags.insert("k8s.io/role/master".into(), "1".into());
            m.add(
                ctx.task("EBSVolume", name.clone(), R::Volume)
                    .attr("availability_zone", zone.as_str())
                    .attr("encrypted", member.encrypted_volume.unwrap_or(false))
                    .attr_opt("iops", iops.map(i64::from))
                    .attr_opt("kms_key_id", member.kms_key_id.clone())
                    .attr("size", i64::from(size))
                    .attr_opt("throughput", throughput.map(i64::from))
                    .attr("type", vt)
                    .tags(tags),
            );
        }
    }
    Ok(())
}

/// Adds the SSH key, launch templates, autoscaling groups and etcd volumes.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    build_ssh_key(ctx, m)?;
    for ig in &ctx.groups {
        if crate::cluster::ClusterContext::is_karpenter(ig) || !ctx.builds_group(ig) {
            continue;
        }
        build_group(ctx, m, ig)?;
    }
    build_volumes(ctx, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(parse_duration_secs("48h20m"), Some(174_000));
        assert_eq!(parse_duration_secs("0"), Some(0));
        assert_eq!(parse_duration_secs("90s"), Some(90));
        assert_eq!(parse_duration_secs("1h0m0s"), Some(3600));
        assert_eq!(parse_duration_secs("abc"), None);
    }
}
