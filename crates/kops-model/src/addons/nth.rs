//! `node-termination-handler.aws`: AWS Node Termination Handler, as one Deployment that
//! drains nodes from the cluster's SQS queue (queue mode) or as a DaemonSet that watches
//! instance metadata on every node.

use serde_json::{Value, json};

use super::cloud_aws::selinux;
use super::k8s::{binding, env, env_field, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NAME: &str = "aws-node-termination-handler";

fn b(v: Option<bool>, default: bool) -> String {
    v.unwrap_or(default).to_string()
}

/// The common labels of every object, with the handler's version.
fn labels(version: &str) -> Value {
    json!({
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/instance": NAME,
        "app.kubernetes.io/version": version,
        "app.kubernetes.io/part-of": NAME,
    })
}

/// The SQS queue URL the handler reads in queue mode (kOps' `DefaultQueueName`).
fn queue_url(ctx: &ClusterContext) -> String {
    let name = crate::aws::naming::nth_queue_name(ctx.name());
    let domain = if ctx.region.contains("cn-") {
        ".amazonaws.com.cn/"
    } else {
        ".amazonaws.com/"
    };
    format!(
        "https://sqs.{}{domain}{}/{name}",
        ctx.region,
        ctx.aws_account.as_ref().map_or("", |(_, id)| id.as_str())
    )
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let nth = spec
        .cloud_provider
        .aws
        .as_ref()
        .and_then(|a| a.node_termination_handler.clone())
        .ok_or_else(|| invalid("spec.cloudProvider.aws.nodeTerminationHandler", "not set"))?;
    let version = nth.version.clone().ok_or_else(|| {
        invalid(
            "spec.cloudProvider.aws.nodeTerminationHandler.version",
            "not set",
        )
    })?;
    let ns = "kube-system";
    let q = |v: &Option<kops_api::v1alpha2::Quantity>| v.as_ref().map(|q| q.as_str().to_owned());
    let mut resources =
        json!({ "requests": { "cpu": q(&nth.cpu_request), "memory": q(&nth.memory_request) } });
    if let Some(m) = q(&nth.memory_limit) {
        resources["limits"] = json!({ "memory": m });
    }
    let grace = nth
        .pod_termination_grace_period
        .map(|g| g.to_string())
        .unwrap_or_default();
    let image = format!("public.ecr.aws/aws-ec2/aws-node-termination-handler:{version}");
    let queue_mode = nth.enable_sqs_termination_draining.unwrap_or(true);
    let mut sa = service_account(NAME, ns);
    let mut sa_labels = labels(&version);
    sa_labels["k8s-app"] = NAME.into();
    sa["metadata"]["labels"] = sa_labels;
    let mut cr = role(
        NAME,
        "",
        vec![
            rule(&[""], &["nodes"], &["get", "list", "patch", "update"]),
            rule(&[""], &["pods"], &["list", "get"]),
            rule(&[""], &["pods/eviction"], &["create"]),
            rule(&["extensions"], &["daemonsets"], &["get"]),
            rule(&["apps"], &["daemonsets"], &["get"]),
            rule(&[""], &["events"], &["create", "patch"]),
        ],
    );
    cr["metadata"]["labels"] = labels(&version);
    let mut crb = binding(NAME, "", "ClusterRole", NAME, vec![sa_subject(NAME, ns)]);
    crb["metadata"]["labels"] = labels(&version);
    let mut out = vec![sa, cr, crb];

    let mut envs = vec![
        env_field("NODE_NAME", "spec.nodeName"),
        env_field("POD_NAME", "metadata.name"),
        env_field("NAMESPACE", "metadata.namespace"),
        env(
            "ENABLE_PROBES_SERVER",
            if queue_mode { "true" } else { "false" },
        ),
        env("PROBES_SERVER_PORT", "8080"),
        env("PROBES_SERVER_ENDPOINT", "/healthz"),
        env("LOG_LEVEL", "info"),
        env("JSON_LOGGING", "true"),
        env("LOG_FORMAT_VERSION", "2"),
        env("ENABLE_PROMETHEUS_SERVER", &b(nth.prometheus_enable, false)),
        env("PROMETHEUS_SERVER_PORT", "9092"),
    ];
    let mut meta_labels = labels(&version);
    meta_labels["k8s-app"] = NAME.into();
    let sel_labels = json!({ "app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME, "kubernetes.io/os": "linux" });
    if queue_mode {
        envs.extend([
            env("CHECK_TAG_BEFORE_DRAINING", "true"),
            env(
                "MANAGED_TAG",
                nth.managed_asg_tag.as_deref().unwrap_or_default(),
            ),
            env("USE_PROVIDER_ID", "true"),
            env("DRY_RUN", "false"),
            env("CORDON_ONLY", "false"),
            env("TAINT_NODE", &b(nth.taint_node, false)),
            env(
                "ENABLE_OUT_OF_SERVICE_TAINT",
                &b(nth.enable_out_of_service_taint, false),
            ),
            env(
                "EXCLUDE_FROM_LOAD_BALANCERS",
                &nth.exclude_from_load_balancers
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "<nil>".into()),
            ),
            env("DELETE_LOCAL_DATA", "true"),
            env("IGNORE_DAEMON_SETS", "true"),
            env("POD_TERMINATION_GRACE_PERIOD", &grace),
            env("NODE_TERMINATION_GRACE_PERIOD", "120"),
            env("EMIT_KUBERNETES_EVENTS", "true"),
            env("COMPLETE_LIFECYCLE_ACTION_DELAY_SECONDS", "-1"),
            env("ENABLE_SQS_TERMINATION_DRAINING", "true"),
            env("QUEUE_URL", &queue_url(ctx)),
            env(
                "DELETE_SQS_MSG_IF_NODE_NOT_FOUND",
                &b(nth.delete_sqs_msg_if_node_not_found, false),
            ),
            env("WORKERS", "10"),
            env("HEARTBEAT_INTERVAL", "-1"),
            env("HEARTBEAT_UNTIL", "-1"),
            env("SQS_MSG_VISIBILITY_TIMEOUT_SEC", "20"),
        ]);
    } else {
        envs.extend([
            env("METADATA_TRIES", "3"),
            env("DRY_RUN", "false"),
            env("CORDON_ONLY", "false"),
            env("TAINT_NODE", &b(nth.taint_node, false)),
            env(
                "ENABLE_OUT_OF_SERVICE_TAINT",
                &b(nth.enable_out_of_service_taint, false),
            ),
            env(
                "EXCLUDE_FROM_LOAD_BALANCERS",
                &b(nth.exclude_from_load_balancers, true),
            ),
            env("DELETE_LOCAL_DATA", "true"),
            env("IGNORE_DAEMON_SETS", "true"),
            env("POD_TERMINATION_GRACE_PERIOD", &grace),
            env("NODE_TERMINATION_GRACE_PERIOD", "120"),
            env("EMIT_KUBERNETES_EVENTS", "true"),
            env(
                "ENABLE_SPOT_INTERRUPTION_DRAINING",
                &b(nth.enable_spot_interruption_draining, true),
            ),
            env("ENABLE_ASG_LIFECYCLE_DRAINING", "true"),
            env(
                "ENABLE_SCHEDULED_EVENT_DRAINING",
                &b(nth.enable_scheduled_event_draining, true),
            ),
            env(
                "ENABLE_REBALANCE_MONITORING",
                &b(nth.enable_rebalance_monitoring, false),
            ),
            env(
                "ENABLE_REBALANCE_DRAINING",
                &b(nth.enable_rebalance_draining, false),
            ),
            env("ENABLE_SQS_TERMINATION_DRAINING", "false"),
            env("UPTIME_FROM_FILE", "/proc/uptime"),
        ]);
    }
    if let Some(t) = nth.webhook_template.as_deref().filter(|t| !t.is_empty()) {
        envs.push(env("WEBHOOK_TEMPLATE", t));
    }
    if let Some(u) = nth.webhook_url.as_deref().filter(|u| !u.is_empty()) {
        envs.push(env("WEBHOOK_URL", u));
    }
    let mut security = json!({
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "runAsGroup": 1000,
        "runAsNonRoot": true,
    });
    let mut container = json!({
        "name": NAME,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": envs,
        "resources": resources,
    });

    if queue_mode {
        security["runAsUser"] = 1000.into();
        container["securityContext"] = security;
        container["ports"] = json!([
            { "name": "liveness-probe", "protocol": "TCP", "containerPort": 8080 },
            { "name": "metrics", "protocol": "TCP", "containerPort": 9092 },
        ]);
        container["livenessProbe"] = json!({ "httpGet": { "path": "/healthz", "port": 8080 },
            "initialDelaySeconds": 5, "periodSeconds": 5 });
        let mut dep_labels = meta_labels.clone();
        dep_labels["app.kubernetes.io/component"] = "deployment".into();
        let spread_sel = json!({ "matchLabels": { "app.kubernetes.io/name": NAME,
            "app.kubernetes.io/instance": NAME, "kops.k8s.io/nth-mode": "sqs" } });
        let mut pod = json!({
            "nodeSelector": null,
            "serviceAccountName": NAME,
            "securityContext": { "fsGroup": 1000 },
            "priorityClassName": "system-cluster-critical",
            "containers": [container],
            "topologySpreadConstraints": [
                { "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": spread_sel },
                { "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": spread_sel },
            ],
        });
        if !super::irsa(ctx) {
            pod["affinity"] = json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    { "matchExpressions": [ { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" } ] },
                    { "matchExpressions": [ { "key": "node-role.kubernetes.io/master", "operator": "Exists" } ] },
                ] } } });
            pod["hostNetwork"] = true.into();
            pod["tolerations"] = json!([
                { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" },
                { "key": "node-role.kubernetes.io/master", "operator": "Exists" },
            ]);
        }
        let replicas = if ctx.groups.iter().filter(|g| g.is_control_plane()).count() > 1 {
            2
        } else {
            1
        };
        out.push(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": NAME, "namespace": ns, "labels": dep_labels },
            "spec": {
                "replicas": replicas,
                "selector": { "matchLabels": sel_labels },
                "template": {
                    "metadata": { "labels": {
                        "app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME,
                        "app.kubernetes.io/component": "deployment", "k8s-app": NAME,
                        "kubernetes.io/os": "linux", "kops.k8s.io/nth-mode": "sqs" } },
                    "spec": pod,
                },
            },
        }));
        out.push(json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": { "name": NAME, "namespace": ns,
                "labels": { "app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME } },
            "spec": {
                "selector": spread_sel,
                "maxUnavailable": 1,
            },
        }));
    } else {
        if selinux(ctx) {
            security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
        }
        container["securityContext"] = security;
        container["volumeMounts"] =
            json!([{ "name": "uptime", "mountPath": "/proc/uptime", "readOnly": true }]);
        let mut ds_labels = meta_labels.clone();
        ds_labels["app.kubernetes.io/component"] = "daemonset".into();
        out.push(json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": NAME, "namespace": ns, "labels": ds_labels },
            "spec": {
                "updateStrategy": { "rollingUpdate": { "maxUnavailable": "25%" }, "type": "RollingUpdate" },
                "selector": { "matchLabels": sel_labels },
                "template": {
                    "metadata": { "labels": {
                        "app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME,
                        "app.kubernetes.io/component": "daemonset", "kubernetes.io/os": "linux",
                        "k8s-app": NAME } },
                    "spec": {
                        "serviceAccountName": NAME,
                        "securityContext": { "fsGroup": 1000 },
                        "priorityClassName": "system-node-critical",
                        "hostNetwork": true,
                        "dnsPolicy": "ClusterFirstWithHostNet",
                        "containers": [container],
                        "volumes": [ { "name": "uptime", "hostPath": { "path": "/proc/uptime" } } ],
                        "nodeSelector": { "kubernetes.io/os": "linux" },
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [ { "matchExpressions": [ {
                                "key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate"] } ] } ] } } },
                        "tolerations": [ { "operator": "Exists" } ],
                    },
                },
            },
        }));
    }
    Ok(out)
}
