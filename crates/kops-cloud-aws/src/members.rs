//! The SDK side of rolling update: group members and their launch template versions,
//! detach and terminate.

use crate::backend::AwsBackend;
use crate::cloud::{
    CloudError as Error, CloudResult as Result, DETACHED_TAG, GroupMember, GroupMembers, Service,
};

/// `DescribeAutoScalingGroups` for `names` (in batches of 50, paginated), resolving
/// `$Latest`/`$Default` template versions through `DescribeLaunchTemplates`. Groups being
/// deleted (with a `Status`) are left out, as kOps does.
pub(crate) async fn group_members(be: &AwsBackend, names: &[String]) -> Result<Vec<GroupMembers>> {
    let mut out = Vec::new();
    for batch in names.chunks(50) {
        let mut token: Option<String> = None;
        loop {
            let page = be
                .call(
                    Service::Autoscaling,
                    "DescribeAutoScalingGroups",
                    "autoscaling groups",
                    be.inner
                        .asg
                        .describe_auto_scaling_groups()
                        .set_auto_scaling_group_names(Some(batch.to_vec()))
                        .set_next_token(token.clone())
                        .send(),
                )
                .await?;
            for g in page.auto_scaling_groups() {
                if g.status().is_some() {
                    continue;
                }
                let spec = g.launch_template().cloned().or_else(|| {
                    g.mixed_instances_policy()
                        .and_then(|m| m.launch_template())
                        .and_then(|t| t.launch_template_specification())
                        .cloned()
                });
                let mut members = GroupMembers::new(
                    g.auto_scaling_group_name().unwrap_or_default(),
                    g.min_size().unwrap_or_default(),
                    g.max_size().unwrap_or_default(),
                    g.desired_capacity().unwrap_or_default(),
                );
                if let Some(spec) = spec {
                    let id = spec.launch_template_id().unwrap_or_default().to_owned();
                    let version = match spec.version() {
                        Some(v) if !v.starts_with('$') && !v.is_empty() => v.to_owned(),
                        v => resolve_version(be, &id, v.unwrap_or("$Default")).await?,
                    };
                    members.launch_template = Some((id, version));
                }
                for i in g.instances() {
                    let mut m = GroupMember::new(
                        i.instance_id().unwrap_or_default(),
                        i.lifecycle_state().map(|s| s.as_str()).unwrap_or_default(),
                    );
                    m.launch_template = i.launch_template().map(|t| {
                        (
                            t.launch_template_id().unwrap_or_default().to_owned(),
                            t.version().unwrap_or_default().to_owned(),
                        )
                    });
                    members.instances.push(m);
                }
                out.push(members);
            }
            token = page.next_token().map(str::to_owned);
            if token.is_none() {
                break;
            }
        }
    }
    Ok(out)
}

async fn resolve_version(be: &AwsBackend, id: &str, version: &str) -> Result<String> {
    let out = be
        .call(
            Service::Ec2,
            "DescribeLaunchTemplates",
            id,
            be.inner
                .ec2
                .describe_launch_templates()
                .launch_template_ids(id)
                .send(),
        )
        .await?;
    let t = out
        .launch_templates()
        .first()
        .ok_or_else(|| Error::not_found(format!("launch template {id}")))?;
    let n = if version == "$Latest" {
        t.latest_version_number()
    } else {
        t.default_version_number()
    };
    Ok(n.unwrap_or_default().to_string())
}

/// Tags the instance `kops.k8s.io/detached-from-asg=<group>`, then `DetachInstances` with
/// `ShouldDecrementDesiredCapacity=false`.
pub(crate) async fn detach_instance(be: &AwsBackend, group: &str, instance: &str) -> Result<()> {
    be.call(
        Service::Ec2,
        "CreateTags",
        instance,
        be.inner
            .ec2
            .create_tags()
            .resources(instance)
            .tags(
                aws_sdk_ec2::types::Tag::builder()
                    .key(DETACHED_TAG)
                    .value(group)
                    .build(),
            )
            .send(),
    )
    .await?;
    be.call(
        Service::Autoscaling,
        "DetachInstances",
        instance,
        be.inner
            .asg
            .detach_instances()
            .auto_scaling_group_name(group)
            .instance_ids(instance)
            .should_decrement_desired_capacity(false)
            .send(),
    )
    .await?;
    Ok(())
}

/// `TerminateInstances`; `InvalidInstanceID.NotFound` counts as already gone.
pub(crate) async fn terminate_instance(be: &AwsBackend, instance: &str) -> Result<()> {
    let r = be
        .call_opt(
            Service::Ec2,
            "TerminateInstances",
            instance,
            be.inner
                .ec2
                .terminate_instances()
                .instance_ids(instance)
                .send(),
        )
        .await?;
    let _ = r;
    Ok(())
}

/// How often, and how many times, deregistration re-reads a target's health.
const DEREGISTER_POLL: std::time::Duration = std::time::Duration::from_secs(5);
const DEREGISTER_POLLS: u32 = 120;

/// kOps' deregistration before a drain: for each of the group's target groups (from
/// `DescribeAutoScalingGroups`), `DescribeTargetHealth`; a registered target is
/// deregistered (`DeregisterTargets`), then its health re-read every 5 s until it is gone
/// or `unused` (kOps waits without limit; this gives up after 10 minutes). A target that is
/// not registered is left alone. Classic load balancers are not supported by this backend: a group
/// with one is an error naming it.
pub(crate) async fn deregister_instance(
    be: &AwsBackend,
    group: &str,
    instance: &str,
) -> Result<()> {
    let out = be
        .call(
            Service::Autoscaling,
            "DescribeAutoScalingGroups",
            group,
            be.inner
                .asg
                .describe_auto_scaling_groups()
                .auto_scaling_group_names(group)
                .send(),
        )
        .await?;
    let g = out
        .auto_scaling_groups()
        .first()
        .ok_or_else(|| Error::not_found(format!("autoscaling group {group}")))?;
    if let Some(lb) = g.load_balancer_names().first() {
        return Err(Error::Invalid {
            field: format!("autoscaling group {group}: LoadBalancerNames"),
            message: format!(
                "uses classic load balancer {lb}; deregistering from classic load balancers is not supported"
            ),
        });
    }
    let arns: Vec<String> = g.target_group_arns().to_vec();
    for arn in &arns {
        let mut polls = 0;
        let mut deregistered = false;
        loop {
            let health = be
                .call(
                    Service::Elbv2,
                    "DescribeTargetHealth",
                    arn,
                    be.inner
                        .elb
                        .describe_target_health()
                        .target_group_arn(arn)
                        .send(),
                )
                .await?;
            let state = health
                .target_health_descriptions()
                .iter()
                .find(|d| d.target().and_then(|t| t.id()) == Some(instance))
                .and_then(|d| d.target_health())
                .and_then(|h| h.state())
                .map(|s| s.as_str().to_owned());
            match state.as_deref() {
                // Not (or no longer) registered.
                None | Some("unused") => break,
                Some(s) if polls >= DEREGISTER_POLLS => {
                    return Err(Error::Unavailable {
                        operation: format!(
                            "deregistering {instance} from target group {arn}: still {s} after 10 minutes"
                        ),
                        source: None,
                    });
                }
                Some(s) => {
                    if s != "draining" && !deregistered {
                        let target =
                            aws_sdk_elasticloadbalancingv2::types::TargetDescription::builder()
                                .id(instance)
                                .build();
                        be.call(
                            Service::Elbv2,
                            "DeregisterTargets",
                            arn,
                            be.inner
                                .elb
                                .deregister_targets()
                                .target_group_arn(arn)
                                .targets(target)
                                .send(),
                        )
                        .await?;
                        deregistered = true;
                        continue;
                    }
                    polls += 1;
                    tokio::time::sleep(DEREGISTER_POLL).await;
                }
            }
        }
    }
    Ok(())
}
