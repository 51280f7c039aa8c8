//! Auto Scaling: groups (ID = name), warm pools (ID = group name) and lifecycle hooks
//! (ID = `<group>:<hook>`).

use std::collections::BTreeMap;

use crate::cloud::{CloudError as Error, CloudResult as Result, Tags};
use crate::cloud::{CreateRequest, Resource, ResourceType, Service, UpdateRequest};
use aws_sdk_autoscaling::types::{
    self as t, Filter, LaunchTemplateSpecification, Tag, TagDescription,
};
use serde_json::Value as Json;

use crate::backend::{AwsBackend, Scope};
use crate::convert::{
    Attrs, b, check_immutable, i32_, immutable, jb, ji, jlist, js, obj, object, objs, req, s, strs,
    strs_of, tag_diff,
};

use ResourceType as R;

const ASG: Service = Service::Autoscaling;

async fn groups(be: &AwsBackend, scope: &Scope) -> Result<Vec<t::AutoScalingGroup>> {
    let mut r = be.inner.asg.describe_auto_scaling_groups().max_records(100);
    match scope {
        Scope::Ids(ids) | Scope::Names(ids) => {
            r = r.set_auto_scaling_group_names(Some(ids.clone()))
        }
        Scope::Parent(p) => r = r.auto_scaling_group_names(p),
        Scope::Tag(k, v) if v.is_empty() => {
            r = r.filters(Filter::builder().name("tag-key").values(k).build())
        }
        Scope::Tag(k, v) => {
            r = r.filters(
                Filter::builder()
                    .name(format!("tag:{k}"))
                    .set_values(Some(v.clone()))
                    .build(),
            );
        }
        Scope::All | Scope::Digests(_) => {}
    }
    let mut out = Vec::new();
    let mut st = r.into_paginator().send();
    while let Some(p) = be
        .page(
            ASG,
            "DescribeAutoScalingGroups",
            "autoscaling groups",
            st.next(),
        )
        .await?
    {
        out.extend(
            p.auto_scaling_groups()
                .iter()
                .filter(|g| g.status().is_none())
                .cloned(),
        );
    }
    Ok(out)
}

fn tags_of(tags: &[TagDescription]) -> Tags {
    tags.iter()
        .filter_map(|t| {
            Some((
                t.key()?.to_owned(),
                t.value().unwrap_or_default().to_owned(),
            ))
        })
        .collect()
}

fn lt_spec_json(l: &LaunchTemplateSpecification) -> Json {
    object([
        ("id", js(l.launch_template_id())),
        ("version", js(l.version())),
    ])
}

fn group_resource(g: &t::AutoScalingGroup) -> Resource {
    let name = g.auto_scaling_group_name().unwrap_or_default();
    let mut r = Resource::new(R::AutoscalingGroup, name)
        .with_name(name)
        .with_attr("min_size", i64::from(g.min_size().unwrap_or(0)))
        .with_attr("max_size", i64::from(g.max_size().unwrap_or(0)))
        .with_attr(
            "vpc_zone_identifier",
            jlist(
                g.vpc_zone_identifier()
                    .unwrap_or_default()
                    .split(',')
                    .filter(|s| !s.is_empty()),
            ),
        )
        .with_attr(
            "protect_from_scale_in",
            g.new_instances_protected_from_scale_in().unwrap_or(false),
        )
        .with_attr(
            "capacity_rebalance",
            g.capacity_rebalance().unwrap_or(false),
        )
        .with_attr(
            "max_instance_lifetime",
            i64::from(g.max_instance_lifetime().unwrap_or(0)),
        );
    if let Some(a) = g.auto_scaling_group_arn() {
        r = r.with_arn(a);
    }
    if let Some(l) = g.launch_template() {
        r = r.with_attr("launch_template", lt_spec_json(l));
    }
    if let Some(m) = g.mixed_instances_policy() {
        let dist = m.instances_distribution().map(|d| {
            object([
                (
                    "on_demand_allocation_strategy",
                    js(d.on_demand_allocation_strategy()),
                ),
                ("on_demand_base_capacity", ji(d.on_demand_base_capacity())),
                (
                    "on_demand_percentage_above_base_capacity",
                    ji(d.on_demand_percentage_above_base_capacity()),
                ),
                ("spot_allocation_strategy", js(d.spot_allocation_strategy())),
                ("spot_instance_pools", ji(d.spot_instance_pools())),
                ("spot_max_price", js(d.spot_max_price())),
            ])
        });
        let lt = m.launch_template().map(|l| {
            let spec = l.launch_template_specification();
            let overrides: Vec<Json> = l
                .overrides()
                .iter()
                .map(|o| {
                    object([
                        ("instance_type", js(o.instance_type())),
                        ("weighted_capacity", js(o.weighted_capacity())),
                    ])
                })
                .collect();
            object([
                (
                    "launch_template_id",
                    js(spec.and_then(|s| s.launch_template_id())),
                ),
                ("version", js(spec.and_then(|s| s.version()))),
                (
                    "override",
                    (!overrides.is_empty()).then_some(Json::Array(overrides)),
                ),
            ])
        });
        r = r.with_attr(
            "mixed_instances_policy",
            object([("instances_distribution", dist), ("launch_template", lt)]),
        );
    }
    let mut tgs: Vec<&str> = g.target_group_arns().iter().map(String::as_str).collect();
    tgs.sort_unstable();
    r = r.with_attr("target_group_arns", jlist(tgs));
    let mut lbs: Vec<&str> = g.load_balancer_names().iter().map(String::as_str).collect();
    lbs.sort_unstable();
    r = r.with_attr("load_balancers", jlist(lbs));
    let mut sp: Vec<&str> = g
        .suspended_processes()
        .iter()
        .filter_map(|p| p.process_name())
        .collect();
    sp.sort_unstable();
    r = r.with_attr("suspended_processes", jlist(sp));
    let mut m: Vec<&str> = g
        .enabled_metrics()
        .iter()
        .filter_map(|m| m.metric())
        .collect();
    m.sort_unstable();
    m.dedup();
    r = r.with_attr("enabled_metrics", jlist(m));
    if let Some(gr) = g.enabled_metrics().first().and_then(|m| m.granularity()) {
        r = r.with_attr("metrics_granularity", gr);
    }
    r.tags = tags_of(g.tags());
    let tag: Vec<Json> = {
        let mut v: Vec<&TagDescription> = g.tags().iter().collect();
        v.sort_by(|a, b| a.key().cmp(&b.key()));
        v.into_iter()
            .map(|t| {
                object([
                    ("key", js(t.key())),
                    ("propagate_at_launch", jb(t.propagate_at_launch())),
                    ("value", js(t.value())),
                ])
            })
            .collect()
    };
    r = r.with_attr("tag", Json::Array(tag));
    r
}

fn warm_pool_resource(g: &t::AutoScalingGroup) -> Option<Resource> {
    let w = g.warm_pool_configuration()?;
    let name = g.auto_scaling_group_name().unwrap_or_default();
    let mut r = Resource::new(R::WarmPool, name)
        .with_parent(name)
        .with_attr("autoscaling_group_name", name)
        .with_attr("min_size", i64::from(w.min_size().unwrap_or(0)))
        .with_attr(
            "max_group_prepared_capacity",
            i64::from(w.max_group_prepared_capacity().unwrap_or(-1)),
        );
    if let Some(p) = w.pool_state() {
        r = r.with_attr("pool_state", p.as_str());
    }
    if let Some(p) = w.instance_reuse_policy() {
        r = r.with_attr(
            "instance_reuse_policy",
            object([("reuse_on_scale_in", jb(p.reuse_on_scale_in()))]),
        );
    }
    Some(r)
}

pub(crate) async fn list(
    be: &AwsBackend,
    rt: ResourceType,
    scope: &Scope,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    match rt {
        R::AutoscalingGroup => out.extend(groups(be, scope).await?.iter().map(group_resource)),
        R::WarmPool => {
            let sc = match scope {
                Scope::Ids(ids) => Scope::Ids(ids.clone()),
                Scope::Parent(p) => Scope::Parent(p.clone()),
                _ => Scope::All,
            };
            out.extend(groups(be, &sc).await?.iter().filter_map(warm_pool_resource));
        }
        R::LifecycleHook => {
            let names: Vec<String> = match scope {
                Scope::Parent(p) => vec![p.clone()],
                Scope::Ids(ids) => {
                    let mut v: Vec<String> = ids
                        .iter()
                        .filter_map(|i| i.rsplit_once(':').map(|(g, _)| g.to_owned()))
                        .collect();
                    v.dedup();
                    v
                }
                _ => groups(be, &Scope::All)
                    .await?
                    .iter()
                    .filter_map(|g| g.auto_scaling_group_name().map(str::to_owned))
                    .collect(),
            };
            for g in names {
                let o = be
                    .call_opt(
                        ASG,
                        "DescribeLifecycleHooks",
                        &g,
                        be.inner
                            .asg
                            .describe_lifecycle_hooks()
                            .auto_scaling_group_name(&g)
                            .send(),
                    )
                    .await?;
                for h in o.iter().flat_map(|o| o.lifecycle_hooks()) {
                    let hn = h.lifecycle_hook_name().unwrap_or_default();
                    let mut r = Resource::new(rt, format!("{g}:{hn}"))
                        .with_name(hn)
                        .with_parent(g.as_str())
                        .with_attr("autoscaling_group_name", g.as_str());
                    for (k, v) in [
                        ("lifecycle_transition", js(h.lifecycle_transition())),
                        ("default_result", js(h.default_result())),
                        ("heartbeat_timeout", ji(h.heartbeat_timeout())),
                        ("notification_target_arn", js(h.notification_target_arn())),
                        ("role_arn", js(h.role_arn())),
                    ] {
                        if let Some(v) = v {
                            r = r.with_attr(k, v);
                        }
                    }
                    out.push(r);
                }
            }
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("list {other}"),
                implementer: "kops-cloud-aws Auto Scaling".into(),
            });
        }
    }
    Ok(out)
}

fn lt_spec(a: &Attrs) -> Option<LaunchTemplateSpecification> {
    let l = obj(a, "launch_template")?;
    Some(
        LaunchTemplateSpecification::builder()
            .set_launch_template_id(s(&l, "id"))
            .set_launch_template_name(s(&l, "name"))
            .set_version(s(&l, "version"))
            .build(),
    )
}

fn mixed(a: &Attrs) -> Option<t::MixedInstancesPolicy> {
    let m = obj(a, "mixed_instances_policy")?;
    let mut p = t::MixedInstancesPolicy::builder();
    if let Some(d) = obj(&m, "instances_distribution") {
        p = p.instances_distribution(
            t::InstancesDistribution::builder()
                .set_on_demand_allocation_strategy(s(&d, "on_demand_allocation_strategy"))
                .set_on_demand_base_capacity(i32_(&d, "on_demand_base_capacity"))
                .set_on_demand_percentage_above_base_capacity(i32_(
                    &d,
                    "on_demand_percentage_above_base_capacity",
                ))
                .set_spot_allocation_strategy(s(&d, "spot_allocation_strategy"))
                .set_spot_instance_pools(i32_(&d, "spot_instance_pools"))
                .set_spot_max_price(s(&d, "spot_max_price"))
                .build(),
        );
    }
    if let Some(l) = obj(&m, "launch_template") {
        let mut lt = t::LaunchTemplate::builder().launch_template_specification(
            LaunchTemplateSpecification::builder()
                .set_launch_template_id(s(&l, "launch_template_id"))
                .set_version(s(&l, "version"))
                .build(),
        );
        for o in objs(&l, "override") {
            lt = lt.overrides(
                t::LaunchTemplateOverrides::builder()
                    .set_instance_type(s(&o, "instance_type"))
                    .set_weighted_capacity(s(&o, "weighted_capacity"))
                    .build(),
            );
        }
        p = p.launch_template(lt.build());
    }
    Some(p.build())
}

fn asg_tags(name: &str, a: &Attrs, tags: &BTreeMap<String, String>) -> Vec<Tag> {
    let mut out: BTreeMap<String, (String, bool)> = tags
        .iter()
        .map(|(k, v)| (k.clone(), (v.clone(), true)))
        .collect();
    for t in objs(a, "tag") {
        if let Some(k) = s(&t, "key") {
            out.insert(
                k,
                (
                    s(&t, "value").unwrap_or_default(),
                    b(&t, "propagate_at_launch").unwrap_or(true),
                ),
            );
        }
    }
    out.into_iter()
        .map(|(k, (v, p))| {
            Tag::builder()
                .resource_id(name)
                .resource_type("auto-scaling-group")
                .key(k)
                .value(v)
                .propagate_at_launch(p)
                .build()
        })
        .collect()
}

async fn set_metrics_and_processes(
    be: &AwsBackend,
    name: &str,
    a: &Attrs,
    old: Option<&Resource>,
) -> Result<()> {
    let asg = &be.inner.asg;
    if a.contains_key("enabled_metrics") || a.contains_key("metrics_granularity") {
        let metrics = strs(a, "enabled_metrics");
        if old.is_some() {
            be.call(
                ASG,
                "DisableMetricsCollection",
                name,
                asg.disable_metrics_collection()
                    .auto_scaling_group_name(name)
                    .send(),
            )
            .await?;
        }
        if !metrics.is_empty() {
            be.call(
                ASG,
                "EnableMetricsCollection",
                name,
                asg.enable_metrics_collection()
                    .auto_scaling_group_name(name)
                    .granularity(s(a, "metrics_granularity").unwrap_or_else(|| "1Minute".into()))
                    .set_metrics(Some(metrics))
                    .send(),
            )
            .await?;
        }
    }
    if a.contains_key("suspended_processes") {
        let want = strs(a, "suspended_processes");
        if old.is_some() {
            be.call(
                ASG,
                "ResumeProcesses",
                name,
                asg.resume_processes().auto_scaling_group_name(name).send(),
            )
            .await?;
        }
        if !want.is_empty() {
            be.call(
                ASG,
                "SuspendProcesses",
                name,
                asg.suspend_processes()
                    .auto_scaling_group_name(name)
                    .set_scaling_processes(Some(want))
                    .send(),
            )
            .await?;
        }
    }
    Ok(())
}

pub(crate) async fn create(be: &AwsBackend, rq: &CreateRequest) -> Result<Resource> {
    let asg = &be.inner.asg;
    let rt = rq.resource_type;
    let a = &rq.attrs;
    let id = match rt {
        R::AutoscalingGroup => {
            let name = rq
                .name
                .clone()
                .or_else(|| s(a, "name"))
                .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))?;
            let lifetime = i32_(a, "max_instance_lifetime").filter(|v| *v > 0);
            let tgs = strs(a, "target_group_arns");
            let lbs = strs(a, "load_balancers");
            be.call(
                ASG,
                "CreateAutoScalingGroup",
                &name,
                asg.create_auto_scaling_group()
                    .auto_scaling_group_name(&name)
                    .min_size(i32_(a, "min_size").unwrap_or(0))
                    .max_size(i32_(a, "max_size").unwrap_or(0))
                    .vpc_zone_identifier(strs(a, "vpc_zone_identifier").join(","))
                    .set_launch_template(lt_spec(a))
                    .set_mixed_instances_policy(mixed(a))
                    .set_target_group_arns((!tgs.is_empty()).then_some(tgs))
                    .set_load_balancer_names((!lbs.is_empty()).then_some(lbs))
                    .set_new_instances_protected_from_scale_in(b(a, "protect_from_scale_in"))
                    .set_capacity_rebalance(b(a, "capacity_rebalance"))
                    .set_max_instance_lifetime(lifetime)
                    .set_tags(Some(asg_tags(&name, a, &rq.tags)))
                    .send(),
            )
            .await?;
            set_metrics_and_processes(be, &name, a, None).await?;
            name
        }
        R::WarmPool => {
            let name = rq
                .parent
                .clone()
                .map_or_else(|| req(a, "autoscaling_group_name", rt), Ok)?;
            put_warm_pool(be, &name, a).await?;
            name
        }
        R::LifecycleHook => {
            let g = rq
                .parent
                .clone()
                .map_or_else(|| req(a, "autoscaling_group_name", rt), Ok)?;
            let hn = rq
                .name
                .clone()
                .or_else(|| s(a, "name"))
                .ok_or_else(|| Error::invalid(format!("{rt}.name"), "is required"))?;
            put_hook(be, &g, &hn, a).await?;
            format!("{g}:{hn}")
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("create {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    };
    be.reread(rt, &id).await
}

async fn put_warm_pool(be: &AwsBackend, name: &str, a: &Attrs) -> Result<()> {
    let mut r = be
        .inner
        .asg
        .put_warm_pool()
        .auto_scaling_group_name(name)
        .set_min_size(i32_(a, "min_size"))
        .set_max_group_prepared_capacity(i32_(a, "max_group_prepared_capacity"))
        .set_pool_state(s(a, "pool_state").map(|p| t::WarmPoolState::from(p.as_str())));
    if let Some(p) = obj(a, "instance_reuse_policy") {
        r = r.instance_reuse_policy(
            t::InstanceReusePolicy::builder()
                .set_reuse_on_scale_in(b(&p, "reuse_on_scale_in"))
                .build(),
        );
    }
    be.call(ASG, "PutWarmPool", name, r.send()).await?;
    Ok(())
}

async fn put_hook(be: &AwsBackend, group: &str, hook: &str, a: &Attrs) -> Result<()> {
    be.call(
        ASG,
        "PutLifecycleHook",
        hook,
        be.inner
            .asg
            .put_lifecycle_hook()
            .auto_scaling_group_name(group)
            .lifecycle_hook_name(hook)
            .set_lifecycle_transition(s(a, "lifecycle_transition"))
            .set_default_result(s(a, "default_result"))
            .set_heartbeat_timeout(i32_(a, "heartbeat_timeout"))
            .set_notification_target_arn(s(a, "notification_target_arn"))
            .set_role_arn(s(a, "role_arn"))
            .send(),
    )
    .await?;
    Ok(())
}

pub(crate) async fn update(be: &AwsBackend, rq: &UpdateRequest) -> Result<Resource> {
    let asg = &be.inner.asg;
    let rt = rq.resource_type;
    let id = rq.id.as_str();
    let old = be.reread(rt, id).await.map_err(|_| Error::NotFound {
        what: format!("{rt} {id}"),
    })?;
    check_immutable(rt, &old.attrs, &rq.attrs)?;
    let a = &rq.attrs;
    match rt {
        R::AutoscalingGroup => {
            let plain = [
                "min_size",
                "max_size",
                "vpc_zone_identifier",
                "launch_template",
                "mixed_instances_policy",
                "protect_from_scale_in",
                "capacity_rebalance",
                "max_instance_lifetime",
            ];
            if plain.iter().any(|k| a.contains_key(*k)) {
                be.call(
                    ASG,
                    "UpdateAutoScalingGroup",
                    id,
                    asg.update_auto_scaling_group()
                        .auto_scaling_group_name(id)
                        .set_min_size(i32_(a, "min_size"))
                        .set_max_size(i32_(a, "max_size"))
                        .set_vpc_zone_identifier(
                            a.contains_key("vpc_zone_identifier")
                                .then(|| strs(a, "vpc_zone_identifier").join(",")),
                        )
                        .set_launch_template(lt_spec(a))
                        .set_mixed_instances_policy(mixed(a))
                        .set_new_instances_protected_from_scale_in(b(a, "protect_from_scale_in"))
                        .set_capacity_rebalance(b(a, "capacity_rebalance"))
                        .set_max_instance_lifetime(i32_(a, "max_instance_lifetime"))
                        .send(),
                )
                .await?;
            }
            set_metrics_and_processes(be, id, a, Some(&old)).await?;
            if a.contains_key("target_group_arns") {
                let want = strs(a, "target_group_arns");
                let have = strs_of(old.attrs.get("target_group_arns"));
                let add: Vec<String> = want.iter().filter(|x| !have.contains(x)).cloned().collect();
                let rm: Vec<String> = have.iter().filter(|x| !want.contains(x)).cloned().collect();
                if !add.is_empty() {
                    be.call(
                        ASG,
                        "AttachLoadBalancerTargetGroups",
                        id,
                        asg.attach_load_balancer_target_groups()
                            .auto_scaling_group_name(id)
                            .set_target_group_arns(Some(add))
                            .send(),
                    )
                    .await?;
                }
                if !rm.is_empty() {
                    be.call(
                        ASG,
                        "DetachLoadBalancerTargetGroups",
                        id,
                        asg.detach_load_balancer_target_groups()
                            .auto_scaling_group_name(id)
                            .set_target_group_arns(Some(rm))
                            .send(),
                    )
                    .await?;
                }
            }
            if a.contains_key("tag") || rq.tags.is_some() {
                let new_tags: Vec<Tag> =
                    asg_tags(id, a, rq.tags.as_ref().unwrap_or(&old.tags.to_map()));
                let new_map: BTreeMap<String, String> = new_tags
                    .iter()
                    .filter_map(|t| Some((t.key()?.to_owned(), t.value()?.to_owned())))
                    .collect();
                let (_, removed) = tag_diff(&old.tags, &new_map);
                be.call(
                    ASG,
                    "CreateOrUpdateTags",
                    id,
                    asg.create_or_update_tags().set_tags(Some(new_tags)).send(),
                )
                .await?;
                if !removed.is_empty() {
                    let rm = removed
                        .into_iter()
                        .map(|k| {
                            Tag::builder()
                                .resource_id(id)
                                .resource_type("auto-scaling-group")
                                .key(k)
                                .build()
                        })
                        .collect();
                    be.call(
                        ASG,
                        "DeleteTags",
                        id,
                        asg.delete_tags().set_tags(Some(rm)).send(),
                    )
                    .await?;
                }
            }
        }
        R::WarmPool => put_warm_pool(be, id, &merge(&old, a)).await?,
        R::LifecycleHook => {
            let (g, h) = id
                .rsplit_once(':')
                .ok_or_else(|| Error::invalid(format!("{rt} {id}"), "IDs are <group>:<hook>"))?;
            put_hook(be, g, h, &merge(&old, a)).await?;
        }
        _ => return Err(immutable(rt, a)),
    }
    be.reread(rt, id).await
}

fn merge(old: &Resource, a: &Attrs) -> Attrs {
    let mut m = old.attrs.to_map();
    m.extend(a.clone());
    m
}

pub(crate) async fn delete(be: &AwsBackend, rt: ResourceType, id: &str) -> Result<()> {
    let asg = &be.inner.asg;
    match rt {
        R::AutoscalingGroup => {
            // AWS deletes a group's lifecycle hooks with the group; moto keeps them (and
            // still describes them under the deleted group's name), so they are deleted
            // first. On AWS this costs one describe per deleted group and changes nothing.
            let hooks = be
                .call_opt(
                    ASG,
                    "DescribeLifecycleHooks",
                    id,
                    asg.describe_lifecycle_hooks()
                        .auto_scaling_group_name(id)
                        .send(),
                )
                .await?;
            for h in hooks.iter().flat_map(|o| o.lifecycle_hooks()) {
                if let Some(name) = h.lifecycle_hook_name() {
                    be.call_opt(
                        ASG,
                        "DeleteLifecycleHook",
                        id,
                        asg.delete_lifecycle_hook()
                            .auto_scaling_group_name(id)
                            .lifecycle_hook_name(name)
                            .send(),
                    )
                    .await?;
                }
            }
            be.call(
                ASG,
                "DeleteAutoScalingGroup",
                id,
                asg.delete_auto_scaling_group()
                    .auto_scaling_group_name(id)
                    .force_delete(true)
                    .send(),
            )
            .await?;
        }
        R::WarmPool => {
            be.call(
                ASG,
                "DeleteWarmPool",
                id,
                asg.delete_warm_pool()
                    .auto_scaling_group_name(id)
                    .force_delete(true)
                    .send(),
            )
            .await?;
        }
        R::LifecycleHook => {
            let (g, h) = id
                .rsplit_once(':')
                .ok_or_else(|| Error::invalid(format!("{rt} {id}"), "IDs are <group>:<hook>"))?;
            be.call(
                ASG,
                "DeleteLifecycleHook",
                id,
                asg.delete_lifecycle_hook()
                    .auto_scaling_group_name(g)
                    .lifecycle_hook_name(h)
                    .send(),
            )
            .await?;
        }
        other => {
            return Err(Error::NotImplemented {
                operation: format!("delete {other}"),
                implementer: "kops-cloud-aws".into(),
            });
        }
    }
    Ok(())
}
