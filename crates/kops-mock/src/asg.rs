//! Autoscaling: groups (launch templates or mixed instances), tags, warm pools and
//! lifecycle hooks. A group launches mock instances up to its desired capacity and
//! terminates surplus ones, so deleting a cluster has instances to clean up.

use std::collections::{BTreeMap, BTreeSet};

use crate::MockAws;
use crate::ec2::{RunInstances, TemplateRef, run_instances};
use crate::error::{Error, Result};
use crate::filter::{Filter, Filterable, Tags, matches, validate};
use crate::state::State;

/// A launch template reference in a group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchTemplateSpec {
    /// Template id (`lt-N`), or empty when named.
    pub launch_template_id: Option<String>,
    /// Template name.
    pub launch_template_name: Option<String>,
    /// Version: a number, `$Latest` or `$Default`.
    pub version: Option<String>,
}

/// An instance-type override of a mixed instances policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceOverride {
    /// Instance type.
    pub instance_type: String,
    /// Weighted capacity.
    pub weighted_capacity: Option<String>,
}

/// A mixed instances policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MixedInstancesPolicy {
    /// The template.
    pub launch_template: LaunchTemplateSpec,
    /// Instance-type overrides.
    pub overrides: Vec<InstanceOverride>,
    /// On-demand allocation strategy.
    pub on_demand_allocation_strategy: Option<String>,
    /// On-demand base capacity.
    pub on_demand_base_capacity: Option<i32>,
    /// On-demand percentage above base.
    pub on_demand_percentage_above_base_capacity: Option<i32>,
    /// Spot allocation strategy.
    pub spot_allocation_strategy: Option<String>,
    /// Spot instance pools.
    pub spot_instance_pools: Option<i32>,
    /// Spot max price.
    pub spot_max_price: Option<String>,
}

/// The settable parts of a group (for create and update).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AutoScalingGroupSpec {
    /// Name.
    pub name: String,
    /// Launch template (or use `mixed_instances_policy`).
    pub launch_template: Option<LaunchTemplateSpec>,
    /// Mixed instances policy.
    pub mixed_instances_policy: Option<MixedInstancesPolicy>,
    /// Minimum size.
    pub min_size: i32,
    /// Maximum size.
    pub max_size: i32,
    /// Desired capacity (defaults to `min_size`).
    pub desired_capacity: Option<i32>,
    /// Subnets.
    pub subnets: Vec<String>,
    /// Target groups.
    pub target_group_arns: Vec<String>,
    /// Classic load balancers.
    pub load_balancer_names: Vec<String>,
    /// `EC2` or `ELB`.
    pub health_check_type: Option<String>,
    /// Grace period in seconds.
    pub health_check_grace_period: Option<i32>,
    /// Termination policies.
    pub termination_policies: Vec<String>,
    /// Suspended processes.
    pub suspended_processes: Vec<String>,
    /// Enabled metrics.
    pub enabled_metrics: Vec<String>,
    /// Metrics granularity.
    pub metrics_granularity: Option<String>,
    /// Maximum instance lifetime in seconds.
    pub max_instance_lifetime: Option<i32>,
    /// Capacity rebalance.
    pub capacity_rebalance: Option<bool>,
}

/// An autoscaling group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AutoScalingGroup {
    /// Settings.
    pub spec: AutoScalingGroupSpec,
    /// ARN.
    pub arn: String,
    /// Tags.
    pub tags: Tags,
    /// Keys of the tags that propagate to instances.
    pub propagate_at_launch: BTreeSet<String>,
    /// Instances in service.
    pub instances: Vec<String>,
}

/// A tag of a group as `DescribeTags` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AsgTag {
    /// Group name.
    pub group_name: String,
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
    /// Propagates to instances.
    pub propagate_at_launch: bool,
}

/// A warm pool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WarmPool {
    /// Max prepared capacity.
    pub max_group_prepared_capacity: Option<i32>,
    /// Minimum size.
    pub min_size: Option<i32>,
    /// `Stopped`, `Running` or `Hibernated`.
    pub pool_state: Option<String>,
    /// Reuse on scale-in.
    pub reuse_on_scale_in: Option<bool>,
}

/// A lifecycle hook.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LifecycleHook {
    /// Group.
    pub group_name: String,
    /// Hook name.
    pub name: String,
    /// `autoscaling:EC2_INSTANCE_LAUNCHING` or `..._TERMINATING`.
    pub transition: String,
    /// Heartbeat timeout (seconds).
    pub heartbeat_timeout: Option<i32>,
    /// `CONTINUE` or `ABANDON`.
    pub default_result: Option<String>,
    /// Notification target.
    pub notification_target_arn: Option<String>,
    /// Role for notifications.
    pub role_arn: Option<String>,
    /// Notification metadata.
    pub notification_metadata: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct AsgState {
    groups: BTreeMap<String, AutoScalingGroup>,
    warm_pools: BTreeMap<String, WarmPool>,
    hooks: BTreeMap<(String, String), LifecycleHook>,
    /// `(group, instance)` of every deregistration from the group's load balancers.
    deregistered: Vec<(String, String)>,
}

impl AsgState {
    pub(crate) fn collect_ids(&self, out: &mut BTreeSet<String>) {
        out.extend(self.groups.keys().map(|n| format!("autoscaling-group/{n}")));
        out.extend(self.warm_pools.keys().map(|n| format!("warm-pool/{n}")));
        out.extend(
            self.hooks
                .keys()
                .map(|(g, h)| format!("lifecycle-hook/{g}/{h}")),
        );
    }

    pub(crate) fn forget_instances(&mut self, ids: &[String]) {
        for g in self.groups.values_mut() {
            g.instances.retain(|i| !ids.contains(i));
        }
    }

    pub(crate) fn target_group_lists_mut(&mut self) -> Vec<&mut Vec<String>> {
        self.groups
            .values_mut()
            .map(|g| &mut g.spec.target_group_arns)
            .collect()
    }
}

impl Filterable for AutoScalingGroup {
    const FILTERS: &'static [&'static str] = &[];
    fn tags(&self) -> &Tags {
        &self.tags
    }
    fn attr(&self, _: &str) -> Vec<String> {
        vec![]
    }
}

impl Filterable for AsgTag {
    const FILTERS: &'static [&'static str] =
        &["auto-scaling-group", "key", "value", "propagate-at-launch"];
    fn tags(&self) -> &Tags {
        static EMPTY: Tags = Tags::new();
        &EMPTY
    }
    fn attr(&self, name: &str) -> Vec<String> {
        match name {
            "auto-scaling-group" => vec![self.group_name.clone()],
            "key" => vec![self.key.clone()],
            "value" => vec![self.value.clone()],
            "propagate-at-launch" => vec![self.propagate_at_launch.to_string()],
            _ => vec![],
        }
    }
}

fn validate_spec(st: &State, op: &str, spec: &AutoScalingGroupSpec) -> Result<()> {
    if spec.launch_template.is_some() == spec.mixed_instances_policy.is_some() {
        return Err(Error::invalid(
            op,
            "LaunchTemplate",
            "exactly one of a launch template or a mixed instances policy is required",
        ));
    }
    if spec.min_size > spec.max_size {
        return Err(Error::invalid(op, "MinSize", "must not exceed MaxSize"));
    }
    if let Some(d) = spec.desired_capacity
        && (d < spec.min_size || d > spec.max_size)
    {
        return Err(Error::invalid(
            op,
            "DesiredCapacity",
            "must be between MinSize and MaxSize",
        ));
    }
    if spec.subnets.is_empty() {
        return Err(Error::invalid(
            op,
            "VPCZoneIdentifier",
            "at least one subnet is required",
        ));
    }
    for s in &spec.subnets {
        if !st.ec2.subnets.contains_key(s) {
            return Err(Error::not_found(op, "subnet", s.clone()));
        }
    }
    let lt = spec.launch_template.as_ref().or(spec
        .mixed_instances_policy
        .as_ref()
        .map(|m| &m.launch_template));
    if let Some(lt) = lt {
        let exists = match (&lt.launch_template_id, &lt.launch_template_name) {
            (Some(id), _) => st.ec2.launch_templates.contains_key(id),
            (None, Some(n)) => st.ec2.launch_templates.values().any(|t| &t.name == n),
            (None, None) => false,
        };
        if !exists {
            return Err(Error::not_found(
                op,
                "launch-template",
                lt.launch_template_id
                    .clone()
                    .or(lt.launch_template_name.clone())
                    .unwrap_or_default(),
            ));
        }
    }
    for arn in &spec.target_group_arns {
        if !st.elbv2.has_target_group(arn) {
            return Err(Error::not_found(op, "target-group", arn.clone()));
        }
    }
    Ok(())
}

/// Launches or terminates instances so the group has its desired capacity. Launch
/// failures (a template whose image is missing, say) leave the group short, as a failed
/// scaling activity does on AWS.
fn reconcile(st: &mut State, op: &str, name: &str) {
    let Some(g) = st.asg.groups.get(name).cloned() else {
        return;
    };
    let desired = g.spec.desired_capacity.unwrap_or(g.spec.min_size).max(0) as usize;
    let mut instances = g.instances.clone();
    while instances.len() > desired {
        if let Some(id) = instances.pop()
            && let Some(i) = st.ec2.instances.get_mut(&id)
        {
            i.state = "terminated".into();
        }
    }
    let lt = g.spec.launch_template.clone().or(g
        .spec
        .mixed_instances_policy
        .as_ref()
        .map(|m| m.launch_template.clone()));
    let template = lt.as_ref().and_then(|lt| {
        let r = match (&lt.launch_template_id, &lt.launch_template_name) {
            (Some(id), _) => TemplateRef::Id(id.clone()),
            (None, Some(n)) => TemplateRef::Name(n.clone()),
            (None, None) => return None,
        };
        Some((r, lt.version.clone().unwrap_or_else(|| "$Default".into())))
    });
    let instance_type = g
        .spec
        .mixed_instances_policy
        .as_ref()
        .and_then(|m| m.overrides.first())
        .map(|o| o.instance_type.clone());
    let mut tags: Tags = g
        .tags
        .iter()
        .filter(|(k, _)| g.propagate_at_launch.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    tags.insert("aws:autoscaling:groupName".into(), name.to_owned());
    let mut n = instances.len();
    while instances.len() < desired {
        let subnet = g.spec.subnets[n % g.spec.subnets.len()].clone();
        n += 1;
        let req = RunInstances {
            launch_template: template.clone(),
            instance_type: instance_type.clone(),
            subnet_id: subnet,
            count: 1,
            tags: tags.clone(),
            ..RunInstances::default()
        };
        match run_instances(st, op, &req) {
            Ok(launched) => instances.extend(launched.into_iter().map(|i| i.id)),
            Err(_) => break,
        }
    }
    if let Some(g) = st.asg.groups.get_mut(name) {
        g.instances = instances;
    }
}

fn group_mut<'a>(st: &'a mut State, op: &str, name: &str) -> Result<&'a mut AutoScalingGroup> {
    st.asg
        .groups
        .get_mut(name)
        .ok_or_else(|| Error::not_found(op, "autoscaling-group", name))
}

impl MockAws {
    /// `CreateAutoScalingGroup` with tags (`key -> (value, propagate_at_launch)`).
    pub fn create_auto_scaling_group(
        &self,
        spec: AutoScalingGroupSpec,
        tags: BTreeMap<String, (String, bool)>,
    ) -> Result<AutoScalingGroup> {
        let (partition, region, account) = (
            self.options().partition.clone(),
            self.options().region.clone(),
            self.options().account_id.clone(),
        );
        self.call("autoscaling:CreateAutoScalingGroup", |st, op| {
            if st.asg.groups.contains_key(&spec.name) {
                return Err(Error::exists(op, "autoscaling-group", spec.name.clone()));
            }
            validate_spec(st, op, &spec)?;
            let n = st.ids.next_number("asg-arn");
            let g = AutoScalingGroup {
                arn: format!(
                    "arn:{partition}:autoscaling:{region}:{account}:autoScalingGroup:{n:08}-0000-0000-0000-000000000000:autoScalingGroupName/{}",
                    spec.name
                ),
                propagate_at_launch: tags
                    .iter()
                    .filter(|(_, (_, p))| *p)
                    .map(|(k, _)| k.clone())
                    .collect(),
                tags: tags.into_iter().map(|(k, (v, _))| (k, v)).collect(),
                instances: Vec::new(),
                spec,
            };
            let name = g.spec.name.clone();
            st.asg.groups.insert(name.clone(), g);
            reconcile(st, op, &name);
            group_mut(st, op, &name).map(|g| g.clone())
        })
    }

    /// `UpdateAutoScalingGroup`: replaces the settings (not the tags) and scales.
    pub fn update_auto_scaling_group(
        &self,
        spec: AutoScalingGroupSpec,
    ) -> Result<AutoScalingGroup> {
        self.call("autoscaling:UpdateAutoScalingGroup", |st, op| {
            group_mut(st, op, &spec.name)?;
            validate_spec(st, op, &spec)?;
            let name = spec.name.clone();
            group_mut(st, op, &name)?.spec = spec;
            reconcile(st, op, &name);
            group_mut(st, op, &name).map(|g| g.clone())
        })
    }

    /// `DescribeAutoScalingGroups` by name, with tag filters. Unknown names are skipped,
    /// as on AWS.
    pub fn describe_auto_scaling_groups(
        &self,
        names: &[String],
        filters: &[Filter],
    ) -> Result<Vec<AutoScalingGroup>> {
        self.call("autoscaling:DescribeAutoScalingGroups", |st, op| {
            validate::<AutoScalingGroup>(op, filters)?;
            Ok(st
                .asg
                .groups
                .values()
                .filter(|g| names.is_empty() || names.contains(&g.spec.name))
                .filter(|g| matches(*g, filters))
                .cloned()
                .collect())
        })
    }

    /// `DeleteAutoScalingGroup`: without `force`, fails while it has instances; with it,
    /// terminates them. Its warm pool and hooks go with it.
    pub fn delete_auto_scaling_group(&self, name: &str, force: bool) -> Result<()> {
        self.call("autoscaling:DeleteAutoScalingGroup", |st, op| {
            let g = group_mut(st, op, name)?.clone();
            if !g.instances.is_empty() && !force {
                return Err(Error::conflict(
                    op,
                    "autoscaling-group",
                    name,
                    format!("has {} instance(s)", g.instances.len()),
                ));
            }
            for id in &g.instances {
                if let Some(i) = st.ec2.instances.get_mut(id) {
                    i.state = "terminated".into();
                }
            }
            st.asg.groups.remove(name);
            st.asg.warm_pools.remove(name);
            st.asg.hooks.retain(|(g, _), _| g != name);
            Ok(())
        })
    }

    /// `CreateOrUpdateTags` on one group.
    pub fn create_or_update_asg_tags(
        &self,
        group: &str,
        tags: BTreeMap<String, (String, bool)>,
    ) -> Result<()> {
        self.call("autoscaling:CreateOrUpdateTags", |st, op| {
            let g = group_mut(st, op, group)?;
            for (k, (v, p)) in tags {
                if p {
                    g.propagate_at_launch.insert(k.clone());
                } else {
                    g.propagate_at_launch.remove(&k);
                }
                g.tags.insert(k, v);
            }
            Ok(())
        })
    }

    /// `DeleteTags` on one group.
    pub fn delete_asg_tags(&self, group: &str, keys: &[String]) -> Result<()> {
        self.call("autoscaling:DeleteTags", |st, op| {
            let g = group_mut(st, op, group)?;
            for k in keys {
                g.tags.remove(k);
                g.propagate_at_launch.remove(k);
            }
            Ok(())
        })
    }

    /// `DescribeTags` (filters `auto-scaling-group`, `key`, `value`, `propagate-at-launch`).
    pub fn describe_asg_tags(&self, filters: &[Filter]) -> Result<Vec<AsgTag>> {
        self.call("autoscaling:DescribeTags", |st, op| {
            validate::<AsgTag>(op, filters)?;
            Ok(st
                .asg
                .groups
                .values()
                .flat_map(|g| {
                    g.tags.iter().map(|(k, v)| AsgTag {
                        group_name: g.spec.name.clone(),
                        key: k.clone(),
                        value: v.clone(),
                        propagate_at_launch: g.propagate_at_launch.contains(k),
                    })
                })
                .filter(|t| matches(t, filters))
                .collect())
        })
    }

    /// `AttachLoadBalancerTargetGroups`.
    pub fn attach_load_balancer_target_groups(&self, group: &str, arns: &[String]) -> Result<()> {
        self.call("autoscaling:AttachLoadBalancerTargetGroups", |st, op| {
            for arn in arns {
                if !st.elbv2.has_target_group(arn) {
                    return Err(Error::not_found(op, "target-group", arn.clone()));
                }
            }
            let g = group_mut(st, op, group)?;
            for arn in arns {
                if !g.spec.target_group_arns.contains(arn) {
                    g.spec.target_group_arns.push(arn.clone());
                }
            }
            Ok(())
        })
    }

    /// `DetachLoadBalancerTargetGroups`.
    pub fn detach_load_balancer_target_groups(&self, group: &str, arns: &[String]) -> Result<()> {
        self.call("autoscaling:DetachLoadBalancerTargetGroups", |st, op| {
            let g = group_mut(st, op, group)?;
            g.spec.target_group_arns.retain(|a| !arns.contains(a));
            Ok(())
        })
    }

    /// `PutWarmPool`.
    pub fn put_warm_pool(&self, group: &str, pool: WarmPool) -> Result<()> {
        self.call("autoscaling:PutWarmPool", |st, op| {
            group_mut(st, op, group)?;
            st.asg.warm_pools.insert(group.to_owned(), pool);
            Ok(())
        })
    }

    /// `DescribeWarmPool`: `None` when the group has none.
    pub fn describe_warm_pool(&self, group: &str) -> Result<Option<WarmPool>> {
        self.call("autoscaling:DescribeWarmPool", |st, op| {
            group_mut(st, op, group)?;
            Ok(st.asg.warm_pools.get(group).cloned())
        })
    }

    /// `DeleteWarmPool`.
    pub fn delete_warm_pool(&self, group: &str) -> Result<()> {
        self.call("autoscaling:DeleteWarmPool", |st, op| {
            group_mut(st, op, group)?;
            st.asg
                .warm_pools
                .remove(group)
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "warm-pool", group))
        })
    }

    /// `PutLifecycleHook` (create or replace).
    pub fn put_lifecycle_hook(&self, hook: LifecycleHook) -> Result<()> {
        self.call("autoscaling:PutLifecycleHook", |st, op| {
            group_mut(st, op, &hook.group_name)?;
            if !hook.transition.starts_with("autoscaling:EC2_INSTANCE_") {
                return Err(Error::invalid(
                    op,
                    "LifecycleTransition",
                    format!("{:?} is not a lifecycle transition", hook.transition),
                ));
            }
            st.asg
                .hooks
                .insert((hook.group_name.clone(), hook.name.clone()), hook);
            Ok(())
        })
    }

    /// `DescribeLifecycleHooks` of a group (all when `names` is empty).
    pub fn describe_lifecycle_hooks(
        &self,
        group: &str,
        names: &[String],
    ) -> Result<Vec<LifecycleHook>> {
        self.call("autoscaling:DescribeLifecycleHooks", |st, op| {
            group_mut(st, op, group)?;
            Ok(st
                .asg
                .hooks
                .values()
                .filter(|h| h.group_name == group && (names.is_empty() || names.contains(&h.name)))
                .cloned()
                .collect())
        })
    }

    /// `DeleteLifecycleHook`.
    pub fn delete_lifecycle_hook(&self, group: &str, name: &str) -> Result<()> {
        self.call("autoscaling:DeleteLifecycleHook", |st, op| {
            st.asg
                .hooks
                .remove(&(group.to_owned(), name.to_owned()))
                .map(|_| ())
                .ok_or_else(|| Error::not_found(op, "lifecycle-hook", format!("{group}/{name}")))
        })
    }
}

/// A launch template id and version number.
pub type TemplateVersion = (String, i64);

/// A group with its members and the launch template version each runs (rolling update).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupMembership {
    /// Group name.
    pub name: String,
    /// Minimum size.
    pub min_size: i32,
    /// Maximum size.
    pub max_size: i32,
    /// Desired capacity.
    pub desired_capacity: i32,
    /// The template (`id`, version number) new instances get.
    pub launch_template: Option<(String, i64)>,
    /// Members: id, lifecycle state, template (`id`, version number).
    pub instances: Vec<(String, String, Option<TemplateVersion>)>,
}

impl MockAws {
    /// `DescribeAutoScalingGroups` as rolling update reads it: each named group (absent ones
    /// left out) with `$Latest`/`$Default` resolved to a number, and its members.
    pub fn describe_group_members(&self, names: &[String]) -> Result<Vec<GroupMembership>> {
        self.call("autoscaling:DescribeAutoScalingGroups", |st, op| {
            let mut out = Vec::new();
            for name in names {
                let Some(g) = st.asg.groups.get(name) else {
                    continue;
                };
                let lt = g.spec.launch_template.clone().or(g
                    .spec
                    .mixed_instances_policy
                    .as_ref()
                    .map(|m| m.launch_template.clone()));
                let launch_template = match lt {
                    Some(lt) => {
                        let r = match (&lt.launch_template_id, &lt.launch_template_name) {
                            (Some(id), _) => Some(TemplateRef::Id(id.clone())),
                            (None, Some(n)) => Some(TemplateRef::Name(n.clone())),
                            (None, None) => None,
                        };
                        match r {
                            Some(r) => {
                                let t = crate::ec2::resolve_template(&st.ec2, op, &r)?;
                                let v = lt.version.as_deref().unwrap_or("$Default");
                                Some((t.id.clone(), crate::ec2::version_number(op, t, v)?))
                            }
                            None => None,
                        }
                    }
                    None => None,
                };
                let instances = g
                    .instances
                    .iter()
                    .filter_map(|id| {
                        let i = st.ec2.instances.get(id)?;
                        let state = match i.state.as_str() {
                            "running" => "InService",
                            "pending" => "Pending",
                            _ => "Terminating",
                        };
                        Some((id.clone(), state.to_owned(), i.launch_template.clone()))
                    })
                    .collect();
                out.push(GroupMembership {
                    name: name.clone(),
                    min_size: g.spec.min_size,
                    max_size: g.spec.max_size,
                    desired_capacity: g.spec.desired_capacity.unwrap_or(g.spec.min_size),
                    launch_template,
                    instances,
                });
            }
            Ok(out)
        })
    }

    /// `DetachInstances` with `ShouldDecrementDesiredCapacity` as given: the instances keep
    /// running outside the group; without decrementing, the group launches replacements.
    pub fn detach_instances(&self, group: &str, ids: &[String], decrement: bool) -> Result<()> {
        self.call("autoscaling:DetachInstances", |st, op| {
            let g = group_mut(st, op, group)?;
            if let Some(m) = ids.iter().find(|i| !g.instances.contains(i)) {
                return Err(Error::invalid(
                    op,
                    "InstanceIds",
                    format!("instance {m} is not part of Auto Scaling group {group}"),
                ));
            }
            g.instances.retain(|i| !ids.contains(i));
            if decrement {
                let d = g.spec.desired_capacity.unwrap_or(g.spec.min_size);
                g.spec.desired_capacity = Some((d - ids.len() as i32).max(0));
            }
            reconcile(st, op, group);
            Ok(())
        })
    }

    /// Rolling update's deregistration of an instance from its group's load balancers
    /// (`elbv2:DeregisterTargets` on each of the group's target groups, then waiting until
    /// the target is unused). The mock keeps no target registrations, so it checks that the
    /// group exists and records the call ([`deregistrations`](Self::deregistrations)).
    pub fn deregister_from_group_load_balancers(&self, group: &str, instance: &str) -> Result<()> {
        self.call("elbv2:DeregisterTargets", |st, op| {
            group_mut(st, op, group)?;
            st.asg
                .deregistered
                .push((group.to_owned(), instance.to_owned()));
            Ok(())
        })
    }

    /// `(group, instance)` of every deregistration so far, in order.
    pub fn deregistrations(&self) -> Vec<(String, String)> {
        crate::lock(&self.inner.state).asg.deregistered.clone()
    }

    /// What the groups' health checks do after instances went away: every group is brought
    /// back to its desired capacity.
    pub fn heal_auto_scaling_groups(&self) {
        let _ = self.call("autoscaling:HealthCheck", |st, op| {
            let names: Vec<String> = st.asg.groups.keys().cloned().collect();
            for n in names {
                reconcile(st, op, &n);
            }
            Ok(())
        });
    }
}
