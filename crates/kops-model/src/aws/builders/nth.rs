//! The node-termination-handler builder (kOps' `awsmodel/nodeterminationhandler.go`):
//! in queue mode, an SQS queue, EventBridge rules and targets feeding it, and a
//! termination lifecycle hook on every autoscaling group.

use kops_tasks::TaskKey;

use super::{AwsModel, ModelContext};
use crate::aws::cloud::ResourceType as R;
use crate::aws::naming::{event_rule_name, nth_queue_name};
use crate::aws::task::{Attr, FindBy};
use crate::error::Result;

/// The EventBridge events NTH listens to, with their patterns.
const EVENTS: &[(&str, &str)] = &[
    (
        "ASGLifecycle",
        r#"{"source":["aws.autoscaling"],"detail-type":["EC2 Instance-terminate Lifecycle Action"]}"#,
    ),
    (
        "SpotInterruption",
        r#"{"source": ["aws.ec2"],"detail-type": ["EC2 Spot Instance Interruption Warning"]}"#,
    ),
    (
        "InstanceStateChange",
        r#"{"source": ["aws.ec2"],"detail-type": ["EC2 Instance State-change Notification"]}"#,
    ),
    (
        "InstanceScheduledChange",
        r#"{"source": ["aws.health"],"detail-type": ["AWS Health Event"],"detail": {"service": ["EC2"],"eventTypeCategory": ["scheduledChange"]}}"#,
    ),
];

const REBALANCE: (&str, &str) = (
    "RebalanceRecommendation",
    r#"{"source": ["aws.ec2"],"detail-type": ["EC2 Instance Rebalance Recommendation"]}"#,
);

fn queue_policy(ctx: &ModelContext, queue: &str) -> String {
    let a = &ctx.account;
    let arn = format!(
        "arn:{}:sqs:{}:{}:{queue}",
        a.partition, ctx.region, a.account_id
    );
    let doc = serde_json::json!({
        "Statement": [{
            "Action": "sqs:SendMessage",
            "Effect": "Allow",
            "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
            "Resource": arn,
        }],
        "Version": "2012-10-17",
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// Adds the NTH tasks when NTH runs in queue mode.
pub(crate) fn build(ctx: &ModelContext, m: &mut AwsModel) -> Result<()> {
    if !ctx.nth_queue_mode() {
        return Ok(());
    }
    for ig in &ctx.groups {
        if crate::cluster::ClusterContext::is_karpenter(ig) || !ctx.builds_group(ig) {
            continue;
        }
        let asg = TaskKey::new("AutoscalingGroup", ctx.group_resource_name(ig));
        let name = format!("{}-NTHLifecycleHook", ig.name());
        m.add(
            ctx.task("AutoscalingLifecycleHook", name.clone(), R::LifecycleHook)
                .named(name)
                .attr("autoscaling_group_name", Attr::id(&asg))
                .attr("default_result", "CONTINUE")
                .attr("heartbeat_timeout", 300)
                .attr(
                    "lifecycle_transition",
                    "autoscaling:EC2_INSTANCE_TERMINATING",
                )
                .find_by(FindBy::Parent {
                    parent_attr: "autoscaling_group_name".into(),
                    match_attrs: vec!["lifecycle_transition".into()],
                }),
        );
    }

    let queue = nth_queue_name(ctx.name());
    let queue_key = TaskKey::new("SQS", &queue);
    m.add(
        ctx.task("SQS", queue.clone(), R::SqsQueue)
            .named(queue.clone())
            .attr("message_retention_seconds", 300)
            .attr("policy", Attr::File(queue_policy(ctx, &queue)))
            .tags(ctx.tags(&queue)),
    );
    let rebalance = ctx
        .cluster
        .spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.node_termination_handler.as_ref())
        .and_then(|n| n.enable_rebalance_draining)
        == Some(true);
    let events = EVENTS.iter().chain(rebalance.then_some(&REBALANCE));
    for (event, pattern) in events {
        let rule = event_rule_name(ctx.name(), event);
        let rule_key = TaskKey::new("EventBridgeRule", &rule);
        m.add(
            ctx.task("EventBridgeRule", rule.clone(), R::EventRule)
                .named(rule.clone())
                .attr("event_pattern", Attr::File((*pattern).to_owned()))
                .tags(ctx.tags(&rule)),
        );
        m.add(
            ctx.task(
                "EventBridgeTarget",
                format!("{rule}-Target"),
                R::EventTarget,
            )
            .attr("arn", Attr::out(&queue_key, "arn"))
            .attr("rule", Attr::id(&rule_key))
            .find_by(FindBy::Parent {
                parent_attr: "rule".into(),
                match_attrs: vec!["arn".into()],
            }),
        );
    }
    Ok(())
}
