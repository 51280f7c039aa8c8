//! Autoscaling groups, warm pools, lifecycle hooks.

use std::collections::BTreeMap;

use kops_cloud_aws::cloud::{CloudResult, ListQuery, Resource, ResourceType};
use kops_tasks::resource::{Attrs as ResourceAttrs, Tags as ResourceTags};
use serde_json::{Map, Value as Json, json};

use super::{Create, Kind, Update};
use crate::asg::{self, AutoScalingGroupSpec, LaunchTemplateSpec, MixedInstancesPolicy};
use crate::cloud::{
    Attrs, IntoCloud, a_bool, a_i32, a_list, a_obj, a_str, as_set, ec2_tag_filter, gone, invalid,
    new_res, obj_of, objs, put, put_opt, split2, to_cloud_error,
};
use crate::{Filter, MockAws, Tags};

/// [`ResourceType::AutoscalingGroup`].
pub(super) struct AutoscalingGroup;

impl Kind for AutoscalingGroup {
    fn kind(&self) -> ResourceType {
        ResourceType::AutoscalingGroup
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "name",
            "min_size",
            "max_size",
            "desired_capacity",
            "vpc_zone_identifier",
            "launch_template",
            "target_group_arns",
            "load_balancers",
            "suspended_processes",
            "enabled_metrics",
            "metrics_granularity",
            "capacity_rebalance",
            "max_instance_lifetime",
            "health_check_type",
            "health_check_grace_period",
            "tag",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let filters: Vec<Filter> = q.tags.iter().map(ec2_tag_filter).collect();
        let names: Vec<String> = q.ids.iter().chain(&q.names).cloned().collect();
        for g in m
            .describe_auto_scaling_groups(&names, &filters)
            .into_cloud()?
        {
            let mut r = new_res(rt, &g.spec.name, &g.tags)
                .with_name(&g.spec.name)
                .with_arn(&g.arn);
            asg_attrs(&mut r.attrs, &g);
            out.push(r);
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let rt = c.rt;
        let a = c.a;
        let n = c.name()?;
        let spec = asg_spec(rt, &n, a)?;
        Ok(m.create_auto_scaling_group(spec, asg_tags(&c.req.tags, a))
            .into_cloud()?
            .spec
            .name)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let a = u.a;
        let current = &u.current;
        let merged = &u.merged;
        if a.keys().any(|k| k != "tag") {
            let spec = asg_spec(rt, id, merged)?;
            m.update_auto_scaling_group(spec).into_cloud()?;
        }
        if a.contains_key("tag") || u.req.tags.is_some() {
            let current_tags = current.tags.to_map();
            let want = asg_tags(u.req.tags.as_ref().unwrap_or(&current_tags), merged);
            let stale: Vec<String> = current
                .tags
                .keys()
                .filter(|k| !want.contains_key(*k))
                .map(str::to_owned)
                .collect();
            if !stale.is_empty() {
                m.delete_asg_tags(id, &stale).into_cloud()?;
            }
            m.create_or_update_asg_tags(id, want).into_cloud()?;
        }
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_auto_scaling_group(id, true))
    }

    /// The group's tags are set by its update, with its `tag` attribute.
    fn retag(&self, _: &MockAws, _: &str, _: &ResourceTags, _: &Tags) -> CloudResult<()> {
        Ok(())
    }
}

/// [`ResourceType::WarmPool`].
pub(super) struct WarmPool;

impl Kind for WarmPool {
    fn kind(&self) -> ResourceType {
        ResourceType::WarmPool
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "autoscaling_group_name",
            "min_size",
            "max_group_prepared_capacity",
            "pool_state",
            "instance_reuse_policy",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let groups = queried_groups(m, q)?;
        for g in groups {
            let pool = match m.describe_warm_pool(&g) {
                Ok(p) => p,
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(to_cloud_error(e)),
            };
            if let Some(p) = pool {
                let mut r = Resource::new(rt, &g).with_parent(&g);
                put(&mut r.attrs, "autoscaling_group_name", g.clone());
                put_opt(&mut r.attrs, "min_size", p.min_size);
                put_opt(
                    &mut r.attrs,
                    "max_group_prepared_capacity",
                    p.max_group_prepared_capacity,
                );
                put_opt(&mut r.attrs, "pool_state", p.pool_state);
                if let Some(reuse) = p.reuse_on_scale_in {
                    put(
                        &mut r.attrs,
                        "instance_reuse_policy",
                        json!({"reuse_on_scale_in": reuse}),
                    );
                }
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let g = c.parent_or("autoscaling_group_name")?;
        m.put_warm_pool(&g, warm_pool(a)).into_cloud()?;
        Ok(g)
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let id = u.id;
        let merged = &u.merged;
        m.put_warm_pool(id, warm_pool(merged)).into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        gone(m.delete_warm_pool(id))
    }
}

/// [`ResourceType::LifecycleHook`].
pub(super) struct LifecycleHook;

impl Kind for LifecycleHook {
    fn kind(&self) -> ResourceType {
        ResourceType::LifecycleHook
    }

    fn native(&self) -> &'static [&'static str] {
        &[
            "autoscaling_group_name",
            "name",
            "lifecycle_transition",
            "default_result",
            "heartbeat_timeout",
            "notification_target_arn",
            "role_arn",
            "notification_metadata",
        ]
    }

    fn list(&self, m: &MockAws, q: &ListQuery) -> CloudResult<Vec<Resource>> {
        let rt = q.resource_type;
        let mut out = Vec::new();
        let groups = queried_groups(m, q)?;
        for g in groups {
            let hooks = match m.describe_lifecycle_hooks(&g, &[]) {
                Ok(h) => h,
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(to_cloud_error(e)),
            };
            for h in hooks {
                let mut r = Resource::new(rt, format!("{g}:{}", h.name))
                    .with_name(&h.name)
                    .with_parent(&g);
                put(&mut r.attrs, "autoscaling_group_name", g.clone());
                put(&mut r.attrs, "name", h.name);
                put(&mut r.attrs, "lifecycle_transition", h.transition);
                put_opt(&mut r.attrs, "default_result", h.default_result);
                put_opt(&mut r.attrs, "heartbeat_timeout", h.heartbeat_timeout);
                put_opt(
                    &mut r.attrs,
                    "notification_target_arn",
                    h.notification_target_arn,
                );
                put_opt(&mut r.attrs, "role_arn", h.role_arn);
                put_opt(
                    &mut r.attrs,
                    "notification_metadata",
                    h.notification_metadata,
                );
                out.push(r);
            }
        }
        Ok(out)
    }

    fn create(&self, m: &MockAws, c: &Create<'_>) -> CloudResult<String> {
        let a = c.a;
        let g = c.parent_or("autoscaling_group_name")?;
        let n = c.name()?;
        m.put_lifecycle_hook(hook(&g, &n, a)?).into_cloud()?;
        Ok(format!("{g}:{n}"))
    }

    fn update(&self, m: &MockAws, u: &Update<'_>) -> CloudResult<Option<String>> {
        let rt = u.rt;
        let id = u.id;
        let merged = &u.merged;
        let (g, n) = split2(rt, id, ':')?;
        m.put_lifecycle_hook(hook(g, n, merged)?).into_cloud()?;
        Ok(None)
    }

    fn delete(&self, m: &MockAws, id: &str) -> CloudResult<()> {
        let rt = self.kind();
        let (g, n) = split2(rt, id, ':')?;
        gone(m.delete_lifecycle_hook(g, n))
    }
}

fn asg_attrs(a: &mut ResourceAttrs, g: &asg::AutoScalingGroup) {
    let s = &g.spec;
    put(a, "name", s.name.clone());
    put(a, "min_size", s.min_size);
    put(a, "max_size", s.max_size);
    put_opt(a, "desired_capacity", s.desired_capacity);
    put(a, "vpc_zone_identifier", as_set(&s.subnets));
    if let Some(lt) = &s.launch_template {
        let mut o = Map::new();
        if let Some(id) = &lt.launch_template_id {
            o.insert("id".into(), id.clone().into());
        }
        if let Some(n) = &lt.launch_template_name {
            o.insert("name".into(), n.clone().into());
        }
        if let Some(v) = &lt.version {
            o.insert("version".into(), v.clone().into());
        }
        put(a, "launch_template", Json::Object(o));
    }
    put(a, "target_group_arns", as_set(&s.target_group_arns));
    put(a, "load_balancers", as_set(&s.load_balancer_names));
    put(a, "suspended_processes", s.suspended_processes.clone());
    put(a, "enabled_metrics", s.enabled_metrics.clone());
    put_opt(a, "metrics_granularity", s.metrics_granularity.clone());
    put_opt(a, "capacity_rebalance", s.capacity_rebalance);
    put_opt(a, "max_instance_lifetime", s.max_instance_lifetime);
    put_opt(a, "health_check_type", s.health_check_type.clone());
    put_opt(a, "health_check_grace_period", s.health_check_grace_period);
    put(
        a,
        "tag",
        g.tags
            .iter()
            .map(|(k, v)| {
                json!({"key": k, "value": v, "propagate_at_launch": g.propagate_at_launch.contains(k)})
            })
            .collect::<Vec<_>>(),
    );
}

fn template_spec(o: &Map<String, Json>) -> LaunchTemplateSpec {
    let s = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_owned);
    LaunchTemplateSpec {
        launch_template_id: s("id").or(s("launch_template_id")),
        launch_template_name: s("name").or(s("launch_template_name")),
        version: s("version").or_else(|| o.get("version").map(|v| v.to_string())),
    }
}

fn asg_spec(rt: ResourceType, name: &str, a: &Attrs) -> CloudResult<AutoScalingGroupSpec> {
    let launch_template = a_obj(a, "launch_template").map(template_spec);
    let mixed = a_obj(a, "mixed_instances_policy").map(|m| {
        let lt = m.get("launch_template").and_then(obj_of);
        let spec = lt
            .and_then(|l| l.get("launch_template_specification"))
            .and_then(obj_of)
            .map(template_spec)
            .unwrap_or_default();
        let overrides = lt
            .and_then(|l| l.get("override"))
            .and_then(Json::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Json::as_object)
                    .filter_map(|o| {
                        Some(asg::InstanceOverride {
                            instance_type: o.get("instance_type")?.as_str()?.to_owned(),
                            weighted_capacity: o
                                .get("weighted_capacity")
                                .and_then(Json::as_str)
                                .map(str::to_owned),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        MixedInstancesPolicy {
            launch_template: spec,
            overrides,
            ..MixedInstancesPolicy::default()
        }
    });
    let min = a_i32(a, "min_size").ok_or_else(|| invalid(rt, "min_size", "is required"))?;
    let max = a_i32(a, "max_size").ok_or_else(|| invalid(rt, "max_size", "is required"))?;
    Ok(AutoScalingGroupSpec {
        name: name.to_owned(),
        launch_template,
        mixed_instances_policy: mixed,
        min_size: min,
        max_size: max,
        desired_capacity: a_i32(a, "desired_capacity"),
        subnets: a_list(a, "vpc_zone_identifier"),
        target_group_arns: a_list(a, "target_group_arns"),
        load_balancer_names: a_list(a, "load_balancers"),
        health_check_type: a_str(a, "health_check_type"),
        health_check_grace_period: a_i32(a, "health_check_grace_period"),
        termination_policies: a_list(a, "termination_policies"),
        suspended_processes: a_list(a, "suspended_processes"),
        enabled_metrics: a_list(a, "enabled_metrics"),
        metrics_granularity: a_str(a, "metrics_granularity"),
        max_instance_lifetime: a_i32(a, "max_instance_lifetime"),
        capacity_rebalance: a_bool(a, "capacity_rebalance"),
    })
}

/// ASG tags: the request's tags propagate at launch; a `tag` attribute list overrides.
fn asg_tags(tags: &Tags, a: &Attrs) -> BTreeMap<String, (String, bool)> {
    let mut out: BTreeMap<String, (String, bool)> = tags
        .iter()
        .map(|(k, v)| (k.clone(), (v.clone(), true)))
        .collect();
    for t in objs(a, "tag") {
        if let Some(k) = a_str(&t, "key") {
            out.insert(
                k,
                (
                    a_str(&t, "value").unwrap_or_default(),
                    a_bool(&t, "propagate_at_launch").unwrap_or(true),
                ),
            );
        }
    }
    out
}

fn warm_pool(a: &Attrs) -> asg::WarmPool {
    asg::WarmPool {
        max_group_prepared_capacity: a_i32(a, "max_group_prepared_capacity"),
        min_size: a_i32(a, "min_size"),
        pool_state: a_str(a, "pool_state"),
        reuse_on_scale_in: a_obj(a, "instance_reuse_policy")
            .and_then(|o| o.get("reuse_on_scale_in"))
            .and_then(Json::as_bool),
    }
}

fn hook(group: &str, name: &str, a: &Attrs) -> CloudResult<asg::LifecycleHook> {
    Ok(asg::LifecycleHook {
        group_name: group.to_owned(),
        name: name.to_owned(),
        transition: a_str(a, "lifecycle_transition").ok_or_else(|| {
            invalid(
                ResourceType::LifecycleHook,
                "lifecycle_transition",
                "is required",
            )
        })?,
        heartbeat_timeout: a_i32(a, "heartbeat_timeout"),
        default_result: a_str(a, "default_result"),
        notification_target_arn: a_str(a, "notification_target_arn"),
        role_arn: a_str(a, "role_arn"),
        notification_metadata: a_str(a, "notification_metadata"),
    })
}

/// The groups whose warm pools or hooks a query lists: its parent, or all.
fn queried_groups(m: &MockAws, q: &ListQuery) -> CloudResult<Vec<String>> {
    Ok(match &q.parent {
        Some(p) => vec![p.clone()],
        None => m
            .describe_auto_scaling_groups(&[], &[])
            .into_cloud()?
            .into_iter()
            .map(|g| g.spec.name)
            .collect(),
    })
}
