//! `kops-controller.addons.k8s.io`: the controller on the control plane that signs node
//! certificates and serves worker nodeup configs (kOps' `cmd/kops-controller`).

use std::collections::BTreeSet;

use kops_api::internal::InstanceGroupRole;
use serde_json::{Value, json};

use super::cloud_aws::selinux;
use super::k8s::{binding, meta, named_rule, role, rule, service_account};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// kOps' `BuildSystemComponentEnvVars` (plus the variables kOps passes on from its own
/// environment to kops-controller), sorted by name.
pub(super) fn system_env(ctx: &ClusterContext, kops_controller: bool) -> Vec<Value> {
    let spec = &ctx.cluster.spec;
    let mut vars = std::collections::BTreeMap::<String, String>::new();
    if let Some(p) = spec.networking.egress_proxy.as_ref() {
        let host = p
            .http_proxy
            .as_ref()
            .and_then(|h| h.host.clone())
            .unwrap_or_default();
        let url = match p
            .http_proxy
            .as_ref()
            .and_then(|h| h.port)
            .filter(|p| *p != 0)
        {
            Some(port) => format!("http://{host}:{port}"),
            None => format!("http://{host}"),
        };
        let excludes = p.excludes.clone().unwrap_or_default();
        vars.insert("http_proxy".into(), url.clone());
        vars.insert("https_proxy".into(), url);
        vars.insert("NO_PROXY".into(), excludes.clone());
        vars.insert("no_proxy".into(), excludes);
    }
    if spec.cloud_provider.aws.is_some() {
        let region = ctx
            .subnets()
            .iter()
            .filter_map(|s| s.zone.as_deref())
            .find(|z| z.len() > 1)
            .map(|z| z[..z.len() - 1].to_owned());
        if let Some(r) = region {
            vars.insert("AWS_REGION".into(), r);
        }
    }
    for (k, v) in ctx.credential_env() {
        vars.insert(k.into(), v.into());
    }
    if kops_controller {
        // kOps hands these on from the environment it runs in.
        for k in ["KOPS_RUN_TOO_NEW_VERSION", "KOPS_BASE_URL"] {
            if let Ok(v) = std::env::var(k)
                && !v.is_empty()
            {
                vars.insert(k.into(), v);
            }
        }
    }
    vars.into_iter()
        .map(|(k, v)| json!({ "name": k, "value": v }))
        .collect()
}

/// The IAM role names kops-controller accepts from worker nodes: the instance profile of
/// every node and API-server group.
fn nodes_roles(ctx: &ClusterContext) -> Vec<String> {
    let mut roles = BTreeSet::new();
    for ig in &ctx.groups {
        let role = ig.spec.role.as_ref();
        if !matches!(
            role,
            Some(InstanceGroupRole::Node | InstanceGroupRole::ApiServer) | None
        ) {
            continue;
        }
        let profile = ig
            .spec
            .iam
            .as_ref()
            .and_then(|i| i.profile.as_deref())
            .map(|arn| arn.rsplit('/').next().unwrap_or(arn).to_owned());
        // kOps' instance profile names: `<role>.<cluster>`, cut to IAM's 64
        // characters with a hash.
        roles.insert(profile.unwrap_or_else(|| {
            crate::aws::naming::truncate(
                &ctx.scoped(ClusterContext::iam_role_prefix(
                    role.unwrap_or(&InstanceGroupRole::Node),
                )),
                64,
                false,
            )
        }));
    }
    roles.into_iter().collect()
}

/// kOps' `KopsControllerConfig`: the controller's options as compact JSON, keys in the
/// order of kOps' Go structs.
fn config(ctx: &ClusterContext) -> Result<String> {
    let spec = &ctx.cluster.spec;
    let cloud = ctx
        .cluster
        .cloud_provider()
        .ok_or_else(|| invalid("spec.cloudProvider", "not set"))?;
    let mut cert_names = vec!["kubelet", "kubelet-server"];
    let mut signing = vec!["kubernetes-ca"];
    let cilium_etcd = spec
        .etcd_clusters
        .iter()
        .flatten()
        .any(|e| e.name.as_deref() == Some("cilium"));
    if cilium_etcd {
        cert_names.push("etcd-client-cilium");
        signing.push("etcd-clients-ca-cilium");
    }
    if spec.kube_proxy.as_ref().and_then(|k| k.enabled) != Some(false) {
        cert_names.push("kube-proxy");
    }
    if spec.networking.kuberouter.is_some() {
        cert_names.push("kube-router");
    }
    let provider = match cloud.as_str() {
        "aws" => {
            let mut aws = format!(
                "{{\"nodesRoles\":{},\"Region\":{}",
                json!(nodes_roles(ctx)),
                json!(ctx.region)
            );
            if spec
                .cloud_provider
                .aws
                .as_ref()
                .and_then(|a| a.use_ip_based_node_names)
                == Some(true)
            {
                aws.push_str(",\"useIPBasedNodeNames\":true");
            }
            aws.push('}');
            format!("{{\"aws\":{aws}}}")
        }
        // kOps' GCE provider config has no JSON tag on its time-skew field.
        "gce" => {
            let project = spec
                .cloud_provider
                .gce
                .as_ref()
                .and_then(|g| g.project.clone())
                .unwrap_or_default();
            format!(
                "{{\"gce\":{{\"projectID\":{},\"region\":{},\"clusterName\":{},\"MaxTimeSkew\":300}}}}",
                json!(project),
                json!(ctx.region),
                json!(ctx.name())
            )
        }
        other => format!("{{{}:{{}}}}", json!(other)),
    };
    let pki = "/etc/kubernetes/kops-controller/pki";
    let mut s = String::from("{");
    let mut field = |k: &str, v: Option<&String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            s.push_str(&format!("{}:{},", json!(k), json!(v)));
        }
    };
    field("clusterName", Some(&ctx.name().to_owned()));
    field("cloud", Some(&cloud.as_str().to_owned()));
    field("configBase", spec.config_store.base.as_ref());
    field("secretStore", spec.config_store.secrets.as_ref());
    s.push_str(&format!(
        "\"server\":{{\"Listen\":\":3988\",\"provider\":{provider},\"serverKeyPath\":\"{pki}/kops-controller.key\",\"serverCertificatePath\":\"{pki}/kops-controller.crt\",\"caBasePath\":\"{pki}\",\"signingCAs\":{},\"certNames\":{}}}",
        json!(signing),
        json!(cert_names)
    ));
    if ctx.is_ipv6_only() {
        s.push_str(",\"enableCloudIPAM\":true");
    }
    s.push('}');
    Ok(s)
}

/// The addon's objects.
pub(super) fn objects(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let name = "kops-controller";
    let ns = "kube-system";
    let version = format!("v{}", ctx.kops_release);
    let host_certs = ctx.cluster.spec.use_host_certificates == Some(true);
    let mut env = vec![json!({ "name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1" })];
    env.extend(system_env(ctx, true));
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    if host_certs {
        mounts.push(
            json!({ "mountPath": "/etc/ssl/certs", "name": "etc-ssl-certs", "readOnly": true }),
        );
        volumes.push(json!({ "name": "etc-ssl-certs", "hostPath": { "path": "/etc/ssl/certs", "type": "DirectoryOrCreate" } }));
    }
    mounts.push(json!({ "mountPath": "/etc/kubernetes/kops-controller/config/", "name": "kops-controller-config" }));
    mounts.push(json!({ "mountPath": "/etc/kubernetes/kops-controller/pki/", "name": "kops-controller-pki" }));
    volumes.push(json!({ "name": "kops-controller-config", "configMap": { "name": name } }));
    volumes.push(json!({ "name": "kops-controller-pki", "hostPath": { "path": "/etc/kubernetes/kops-controller/", "type": "Directory" } }));
    let mut security = json!({ "runAsNonRoot": true, "runAsUser": 10011 });
    if selinux(ctx) {
        security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
    }
    let image = format!(
        "registry.k8s.io/kops/kops-controller:{}",
        ctx.kops_release.trim_start_matches('v')
    );
    let tolerations: Vec<Value> = [
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.kubernetes.io/not-ready",
        "node-role.kubernetes.io/master",
        "node-role.kubernetes.io/control-plane",
    ]
    .iter()
    .map(|k| json!({ "key": k, "operator": "Exists" }))
    .collect();
    let user = json!([{ "apiGroup": "rbac.authorization.k8s.io", "kind": "User",
        "name": "system:serviceaccount:kube-system:kops-controller" }]);
    let Value::Array(user) = user else {
        return Ok(Vec::new());
    };
    Ok(vec![
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(name, ns),
            "data": { "config.yaml": format!("{}\n", config(ctx)?) },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": { "name": name, "namespace": ns,
                "labels": { "k8s-addon": "kops-controller.addons.k8s.io", "k8s-app": name, "version": version } },
            "spec": {
                "selector": { "matchLabels": { "k8s-app": name } },
                "updateStrategy": { "type": "OnDelete" },
                "template": {
                    "metadata": {
                        "annotations": { "dns.alpha.kubernetes.io/internal": format!("kops-controller.internal.{}", ctx.name()) },
                        "labels": { "k8s-addon": "kops-controller.addons.k8s.io", "k8s-app": name, "version": version },
                    },
                    "spec": {
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [ { "matchExpressions": [
                                { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" },
                                { "key": "kops.k8s.io/kops-controller-pki", "operator": "Exists" } ] } ] } } },
                        "priorityClassName": "system-cluster-critical",
                        "tolerations": tolerations,
                        "nodeSelector": null,
                        "dnsPolicy": "Default",
                        "hostNetwork": true,
                        "serviceAccount": name,
                        "containers": [ {
                            "name": name,
                            "image": image,
                            "volumeMounts": mounts,
                            "args": ["--v=2", "--conf=/etc/kubernetes/kops-controller/config/config.yaml"],
                            "command": null,
                            "env": env,
                            "resources": { "requests": { "cpu": "50m", "memory": "50Mi" } },
                            "securityContext": security,
                        } ],
                        "volumes": volumes,
                    },
                },
            },
        }),
        service_account(name, ns),
        role(
            name,
            "",
            vec![rule(&[""], &["nodes"], &["get", "list", "watch", "patch"])],
        ),
        binding(name, "", "ClusterRole", name, user.clone()),
        role(
            name,
            ns,
            vec![
                rule(&[""], &["events"], &["get", "list", "watch", "create"]),
                named_rule(
                    &["", "coordination.k8s.io"],
                    &["configmaps", "leases"],
                    &["kops-controller-leader"],
                    &["get", "list", "watch", "patch", "update", "delete"],
                ),
                rule(
                    &["", "coordination.k8s.io"],
                    &["configmaps", "leases"],
                    &["create"],
                ),
            ],
        ),
        binding(name, ns, "Role", name, user),
    ])
}
