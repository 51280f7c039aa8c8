//! `authentication.aws`: the AWS IAM authenticator server on the control plane, with its
//! identity-mapping CustomResourceDefinition and, in CRD backend mode, the mappings the
//! spec lists.

use serde_json::{Value, json};

use super::cloud_aws::selinux;
use super::helpers::labeled;
use super::k8s::{binding, named_rule, role, rule, sa_subject, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

const NAME: &str = "aws-iam-authenticator";
const NS: &str = "kube-system";
const GROUP: &str = "iamauthenticator.k8s.aws";

/// The `IAMIdentityMapping` CustomResourceDefinition.
fn crd() -> Value {
    let string = json!({ "type": "string" });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("iamidentitymappings.{GROUP}") },
        "spec": {
            "group": GROUP,
            "names": { "categories": ["all"], "kind": "IAMIdentityMapping",
                "plural": "iamidentitymappings", "singular": "iamidentitymapping" },
            "scope": "Cluster",
            "versions": [{
                "name": "v1alpha1",
                "schema": { "openAPIV3Schema": { "type": "object", "properties": {
                    "spec": { "type": "object", "required": ["arn", "username"], "properties": {
                        "arn": string, "groups": { "type": "array", "items": string }, "username": string } },
                    "status": { "type": "object", "properties": { "canonicalARN": string, "userID": string } },
                } } },
                "served": true,
                "storage": true,
                "subresources": { "status": {} },
            }],
        },
    })
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let aws = ctx
        .cluster
        .spec
        .authentication
        .as_ref()
        .and_then(|a| a.aws.clone())
        .ok_or_else(|| invalid("spec.authentication.aws", "not set"))?;
    let mode = aws.backend_mode.clone().unwrap_or_default();
    let mounted_file = mode.is_empty() || mode.contains("MountedFile");
    let image = aws
        .image
        .clone()
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| {
            "public.ecr.aws/eks-distro/kubernetes-sigs/aws-iam-authenticator:v0.6.20-eks-1-30-7"
                .into()
        });
    let cluster_id = aws.cluster_id.clone().filter(|c| !c.is_empty());
    let mut args = vec!["server".to_owned()];
    if mounted_file {
        args.push("--config=/etc/aws-iam-authenticator/config.yaml".into());
    }
    if cluster_id.is_some() || (!mode.is_empty() && !mode.contains("MountedFile")) {
        let id = cluster_id.unwrap_or_else(|| ctx.name().to_owned());
        args.push(format!("--cluster-id={id}"));
    }
    args.push("--state-dir=/var/aws-iam-authenticator".into());
    args.push("--kubeconfig-pregenerated=true".into());
    if !mode.is_empty() {
        args.push(format!("--backend-mode={mode}"));
    }
    let q = |v: &Option<kops_api::v1alpha2::Quantity>, d: &str| {
        v.as_ref()
            .map_or_else(|| d.to_owned(), |q| q.as_str().to_owned())
    };
    let mut limits = json!({ "memory": q(&aws.memory_limit, "20Mi") });
    if let Some(cpu) = aws.cpu_limit.as_ref() {
        limits["cpu"] = cpu.as_str().into();
    }
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    if mounted_file {
        mounts.push(json!({ "mountPath": "/etc/aws-iam-authenticator/", "name": "config" }));
        volumes.push(json!({ "configMap": { "name": NAME }, "name": "config" }));
    }
    mounts.push(json!({ "mountPath": "/var/aws-iam-authenticator/", "name": "state" }));
    mounts.push(json!({ "mountPath": "/etc/kubernetes/aws-iam-authenticator/", "name": "output" }));
    let host_dir = json!({ "path": "/srv/kubernetes/aws-iam-authenticator/" });
    volumes.push(json!({ "hostPath": host_dir, "name": "output" }));
    volumes.push(json!({ "hostPath": host_dir, "name": "state" }));
    let mut pod = json!({
        "containers": [{
            "args": args,
            "image": image,
            "livenessProbe": { "httpGet": { "host": "127.0.0.1", "path": "/healthz", "port": 21362, "scheme": "HTTPS" } },
            "name": NAME,
            "resources": {
                "limits": limits,
                "requests": { "cpu": q(&aws.cpu_request, "10m"), "memory": q(&aws.memory_request, "20Mi") },
            },
            "securityContext": { "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] },
                "runAsGroup": 10000, "runAsUser": 10000 },
            "volumeMounts": mounts,
        }],
        "hostNetwork": true,
        "nodeSelector": { "node-role.kubernetes.io/control-plane": "" },
        "priorityClassName": "system-node-critical",
        "serviceAccountName": NAME,
        "tolerations": [
            { "effect": "NoSchedule", "key": "node-role.kubernetes.io/master" },
            { "effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane" },
            { "effect": "NoSchedule", "key": "node-role.kubernetes.io/api-server" },
            { "key": "node.cloudprovider.kubernetes.io/uninitialized", "operator": "Exists" },
            { "key": "CriticalAddonsOnly", "operator": "Exists" },
        ],
        "volumes": volumes,
    });
    if selinux(ctx) {
        pod["securityContext"] = json!({ "seLinuxOptions": { "level": "s0", "type": "spc_t" } });
    }
    let app = json!({ "k8s-app": NAME });
    let mut out = vec![
        crd(),
        role(
            NAME,
            "",
            vec![
                rule(
                    &[GROUP],
                    &["iamidentitymappings"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &[GROUP],
                    &["iamidentitymappings/status"],
                    &["patch", "update"],
                ),
                rule(&[""], &["events"], &["create", "update", "patch"]),
                rule(&[""], &["configmaps"], &["list", "watch"]),
                named_rule(&[""], &["configmaps"], &["aws-auth"], &["get"]),
            ],
        ),
        service_account(NAME, NS),
        binding(NAME, "", "ClusterRole", NAME, vec![sa_subject(NAME, NS)]),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "annotations": { "seccomp.security.alpha.kubernetes.io/pod": "runtime/default" },
                "labels": app,
                "name": NAME,
                "namespace": NS,
            },
            "spec": {
                "selector": { "matchLabels": app },
                "template": { "metadata": { "labels": app }, "spec": pod },
                "updateStrategy": { "type": "RollingUpdate" },
            },
        }),
    ];
    if mode.contains("CRD") {
        for (i, m) in aws.identity_mappings.iter().flatten().enumerate() {
            out.push(labeled(
                json!({
                    "apiVersion": format!("{GROUP}/v1alpha1"),
                    "kind": "IAMIdentityMapping",
                    "metadata": { "name": format!("iam-identity-mapping-{i}") },
                    "spec": { "arn": m.arn, "groups": m.groups, "username": m.username },
                }),
                &app,
            ));
        }
    }
    Ok(out)
}
