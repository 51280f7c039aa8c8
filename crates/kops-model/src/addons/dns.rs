//! Cluster DNS: CoreDNS with its proportional autoscaler, and dns-controller (which
//! publishes the API and kops-controller names).

use serde_json::{Value, json};

use super::cloud_aws::selinux;
use super::k8s::{binding, meta, role, rule, sa_subject};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// Whether Karpenter runs the cluster's nodes (kOps' `IsControlPlaneMode`): then the DNS
/// pods may run on the control plane.
fn control_plane_mode(ctx: &ClusterContext) -> bool {
    ctx.cluster.spec.karpenter.as_ref().and_then(|k| k.enabled) == Some(true)
}

/// The Corefile kOps writes when no external one is given (no final line break).
fn corefile(ctx: &ClusterContext, domain: &str, upstream: &[String]) -> String {
    let mut s =
        String::from(".:53 {\n    errors\n    health {\n      lameduck 10s\n    }\n    ready\n");
    s.push_str(&format!(
        "    kubernetes {domain}. in-addr.arpa ip6.arpa {{\n      pods insecure\n      fallthrough in-addr.arpa ip6.arpa\n      ttl 30\n    }}\n"
    ));
    if ctx.cluster.uses_none_dns() {
        s.push_str(&format!(
            "    hosts /rootfs/etc/hosts {} {{\n      ttl 30\n      fallthrough\n    }}\n",
            ctx.name()
        ));
    }
    let forward = if upstream.is_empty() {
        "/etc/resolv.conf".to_owned()
    } else {
        upstream.join(" ")
    };
    s.push_str(&format!(
        "    prometheus :9153\n    forward . {forward} {{\n      max_concurrent 1000\n    }}\n    cache 30\n    loop\n    reload\n    loadbalance\n"
    ));
    if ctx.is_ipv6_only() {
        s.push_str("    dns64\n");
    }
    s.push('}');
    s
}

fn to_value<T: serde::Serialize>(v: &T, field: &str) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| invalid(field, e.to_string()))
}

/// `coredns.addons.k8s.io`.
pub(super) fn coredns(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let kd = ctx
        .cluster
        .spec
        .kube_dns
        .clone()
        .ok_or_else(|| invalid("spec.kubeDNS", "not set"))?;
    let ns = "kube-system";
    let domain = kd.domain.clone().unwrap_or_else(|| "cluster.local".into());
    let upstream = kd.upstream_nameservers.clone().unwrap_or_default();
    let corefile = match kd.external_core_file.as_deref() {
        // kOps' template leaves the file as it is, apart from YAML's clipping of
        // trailing line breaks to one.
        Some(f) if !f.is_empty() => {
            let mut t = f.trim_end_matches('\n').to_owned();
            if t.len() != f.len() {
                t.push('\n');
            }
            t
        }
        _ => corefile(ctx, &domain, &upstream),
    };
    let none_dns = ctx.cluster.uses_none_dns();
    let cp_mode = control_plane_mode(ctx);
    let mut tolerations = match kd.tolerations.as_ref().filter(|t| !t.is_empty()) {
        Some(t) => match to_value(t, "spec.kubeDNS.tolerations")? {
            Value::Array(a) => a,
            _ => Vec::new(),
        },
        None => vec![json!({ "key": "CriticalAddonsOnly", "operator": "Exists" })],
    };
    let autoscaler_tolerations = tolerations.clone();
    if cp_mode {
        tolerations.push(json!({ "key": "node-role.kubernetes.io/master", "operator": "Exists" }));
        tolerations
            .push(json!({ "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" }));
    }
    let sel = json!({ "matchLabels": { "k8s-app": "kube-dns" } });
    let mut spread = Vec::new();
    if ctx.cluster.cloud_provider().map(|c| c.as_str()) != Some("metal") {
        spread.push(
            json!({ "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel }),
        );
    }
    spread.push(
        json!({ "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "Honor", "labelSelector": sel }),
    );
    let mut mounts =
        vec![json!({ "name": "config-volume", "mountPath": "/etc/coredns", "readOnly": true })];
    let mut volumes = vec![json!({ "name": "config-volume", "configMap": { "name": "coredns" } })];
    if none_dns {
        mounts.push(
            json!({ "name": "etc-hosts", "mountPath": "/rootfs/etc/hosts", "readOnly": true }),
        );
        volumes.push(
            json!({ "name": "etc-hosts", "hostPath": { "path": "/etc/hosts", "type": "File" } }),
        );
    }
    let mut security = json!({
        "allowPrivilegeEscalation": false,
        "capabilities": { "add": ["NET_BIND_SERVICE"], "drop": ["all"] },
        "readOnlyRootFilesystem": true,
    });
    if selinux(ctx) {
        security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
    }
    let q = |v: &Option<kops_api::v1alpha2::Quantity>| v.as_ref().map(|q| q.as_str().to_owned());
    let mut pod_meta = json!({ "labels": { "k8s-app": "kube-dns" } });
    if let Some(a) = kd.pod_annotations.as_ref().filter(|a| !a.is_empty()) {
        pod_meta["annotations"] = json!(a);
    }
    let mut pod = json!({
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": "coredns",
        "tolerations": tolerations,
        "nodeSelector": { "kubernetes.io/os": "linux" },
        "topologySpreadConstraints": spread,
        "containers": [ {
            "name": "coredns",
            "image": kd.core_dns_image.clone().unwrap_or_else(|| "registry.k8s.io/coredns/coredns:v1.14.2".into()),
            "imagePullPolicy": "IfNotPresent",
            "resources": {
                "limits": { "memory": q(&kd.memory_limit) },
                "requests": { "cpu": q(&kd.cpu_request), "memory": q(&kd.memory_request) },
            },
            "args": ["-conf", "/etc/coredns/Corefile"],
            "volumeMounts": mounts,
            "ports": [
                { "containerPort": 53, "name": "dns", "protocol": "UDP" },
                { "containerPort": 53, "name": "dns-tcp", "protocol": "TCP" },
                { "containerPort": 9153, "name": "metrics", "protocol": "TCP" },
            ],
            "securityContext": security,
            "livenessProbe": {
                "httpGet": { "path": "/health", "port": 8080, "scheme": "HTTP" },
                "initialDelaySeconds": 60, "timeoutSeconds": 5, "successThreshold": 1, "failureThreshold": 5,
            },
            "readinessProbe": {
                "periodSeconds": 5, "timeoutSeconds": 5, "failureThreshold": 1,
                "httpGet": { "path": "/ready", "port": 8181, "scheme": "HTTP" },
            },
        } ],
        "dnsPolicy": "Default",
        "volumes": volumes,
    });
    let affinity = kd.affinity.clone().filter(|a| !a.is_null());
    if let Some(a) = affinity.as_ref() {
        pod["affinity"] = a.clone();
    }
    let server_ip = kd
        .server_ip
        .clone()
        .ok_or_else(|| invalid("spec.kubeDNS.serverIP", "not set"))?;
    let dns_labels = json!({
        "k8s-addon": "coredns.addons.k8s.io",
        "k8s-app": "kube-dns",
        "kubernetes.io/cluster-service": "true",
        "kubernetes.io/name": "CoreDNS",
    });
    let rbac_labels = json!({ "kubernetes.io/bootstrapping": "rbac-defaults", "k8s-addon": "coredns.addons.k8s.io" });
    let addon_label = json!({ "k8s-addon": "coredns.addons.k8s.io" });
    let with_labels = |mut o: Value, l: &Value| {
        o["metadata"]["labels"] = l.clone();
        o
    };
    let mut crb = binding(
        "system:coredns",
        "",
        "ClusterRole",
        "system:coredns",
        vec![sa_subject("coredns", ns)],
    );
    crb["metadata"]["annotations"] =
        json!({ "rbac.authorization.kubernetes.io/autoupdate": "true" });
    let mut autoscaler_pod = json!({
        "containers": [ {
            "name": "autoscaler",
            "image": kd.cpa_image.clone().unwrap_or_else(|| "registry.k8s.io/cpa/cluster-proportional-autoscaler:v1.9.0".into()),
            "resources": { "requests": { "cpu": "20m", "memory": "10Mi" } },
            "command": [
                "/cluster-proportional-autoscaler",
                "--namespace=kube-system",
                "--configmap=coredns-autoscaler",
                "--target=Deployment/coredns",
                "--default-params={\"linear\":{\"coresPerReplica\":256,\"nodesPerReplica\":16,\"preventSinglePointFailure\":true}}",
                "--logtostderr=true",
                "--v=2",
            ],
        } ],
        "tolerations": autoscaler_tolerations,
        "serviceAccountName": "coredns-autoscaler",
        "nodeSelector": { "kubernetes.io/os": "linux" },
    });
    if !cp_mode {
        autoscaler_pod["priorityClassName"] = "system-cluster-critical".into();
    }
    if let Some(a) = affinity {
        autoscaler_pod["affinity"] = a;
    }
    Ok(vec![
        with_labels(
            super::k8s::service_account("coredns", ns),
            &json!({ "kubernetes.io/cluster-service": "true", "k8s-addon": "coredns.addons.k8s.io" }),
        ),
        with_labels(
            role(
                "system:coredns",
                "",
                vec![
                    rule(
                        &[""],
                        &["endpoints", "services", "pods", "namespaces"],
                        &["list", "watch"],
                    ),
                    rule(
                        &["discovery.k8s.io"],
                        &["endpointslices"],
                        &["list", "watch"],
                    ),
                ],
            ),
            &rbac_labels,
        ),
        with_labels(crb, &rbac_labels),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": "coredns", "namespace": ns, "labels": { "addonmanager.kubernetes.io/mode": "EnsureExists" } },
            "data": { "Corefile": corefile },
        }),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "coredns", "namespace": ns, "labels": dns_labels },
            "spec": {
                "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxUnavailable": 1, "maxSurge": "10%" } },
                "selector": sel,
                "template": { "metadata": pod_meta, "spec": pod },
            },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "kube-dns", "namespace": ns,
                "annotations": { "prometheus.io/port": "9153", "prometheus.io/scrape": "true" },
                "labels": dns_labels,
                "resourceVersion": "0",
            },
            "spec": {
                "selector": { "k8s-app": "kube-dns" },
                "clusterIP": server_ip,
                "ports": [
                    { "name": "dns", "port": 53, "protocol": "UDP" },
                    { "name": "dns-tcp", "port": 53, "protocol": "TCP" },
                    { "name": "metrics", "port": 9153, "protocol": "TCP" },
                ],
            },
        }),
        json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta("kube-dns", ns),
            "spec": { "selector": sel, "maxUnavailable": "33%", "unhealthyPodEvictionPolicy": "AlwaysAllow" },
        }),
        with_labels(
            super::k8s::service_account("coredns-autoscaler", ns),
            &addon_label,
        ),
        with_labels(
            role(
                "coredns-autoscaler",
                "",
                vec![
                    rule(&[""], &["nodes"], &["list", "watch"]),
                    rule(&[""], &["replicationcontrollers/scale"], &["get", "update"]),
                    rule(
                        &["extensions", "apps"],
                        &["deployments/scale", "replicasets/scale"],
                        &["get", "update"],
                    ),
                    rule(&[""], &["configmaps"], &["get", "create"]),
                ],
            ),
            &addon_label,
        ),
        with_labels(
            binding(
                "coredns-autoscaler",
                "",
                "ClusterRole",
                "coredns-autoscaler",
                vec![sa_subject("coredns-autoscaler", ns)],
            ),
            &addon_label,
        ),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "coredns-autoscaler", "namespace": ns, "labels": {
                "k8s-addon": "coredns.addons.k8s.io", "k8s-app": "coredns-autoscaler", "kubernetes.io/cluster-service": "true" } },
            "spec": {
                "selector": { "matchLabels": { "k8s-app": "coredns-autoscaler" } },
                "template": { "metadata": { "labels": { "k8s-app": "coredns-autoscaler" } }, "spec": autoscaler_pod },
            },
        }),
    ])
}

/// kOps' `DnsControllerArgv`.
fn dns_controller_args(ctx: &ClusterContext) -> Result<Vec<String>> {
    let spec = &ctx.cluster.spec;
    let mut argv = Vec::new();
    match spec.external_dns.as_ref() {
        None => argv.push("--watch-ingress=false".to_owned()),
        Some(e) => {
            argv.push(format!("--watch-ingress={}", e.watch_ingress == Some(true)));
            if let Some(ns) = e.watch_namespace.as_deref().filter(|n| !n.is_empty()) {
                argv.push(format!("--watch-namespace={ns}"));
            }
        }
    }
    let dns = match ctx.cluster.cloud_provider().map(|c| c.as_str()) {
        Some("aws") => "aws-route53",
        Some("gce") => "google-clouddns",
        Some("digitalocean") => "digitalocean",
        Some("openstack") => "openstack-designate",
        Some("scaleway") => "scaleway",
        other => {
            return Err(invalid(
                "spec.cloudProvider",
                format!("dns-controller does not support cloud {other:?}"),
            ));
        }
    };
    argv.push(format!("--dns={dns}"));
    if let Some(zone) = spec.dns_zone.as_deref().filter(|z| !z.is_empty()) {
        if zone.contains('.') {
            argv.push(format!("--zone={zone}"));
        } else {
            argv.push(format!("--zone=*/{zone}"));
        }
    }
    argv.push(if ctx.is_ipv6_only() {
        "--internal-ipv6".into()
    } else {
        "--internal-ipv4".into()
    });
    argv.push("--zone=*/*".into());
    argv.push("-v=2".into());
    Ok(argv)
}

/// `dns-controller.addons.k8s.io`.
pub(super) fn dns_controller(ctx: &ClusterContext) -> Result<Vec<Value>> {
    let spec = &ctx.cluster.spec;
    let name = "dns-controller";
    let ns = "kube-system";
    let version = format!("v{}", ctx.kops_release);
    let labels =
        json!({ "k8s-addon": "dns-controller.addons.k8s.io", "k8s-app": name, "version": version });
    let mut env = vec![json!({ "name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1" })];
    env.extend(super::proxy_env(ctx));
    let priority = spec
        .external_dns
        .as_ref()
        .and_then(|e| e.priority_class_name.clone())
        .unwrap_or_else(|| "system-cluster-critical".into());
    let image = format!(
        "registry.k8s.io/kops/dns-controller:{}",
        ctx.kops_release.trim_start_matches('v')
    );
    let tolerations: Vec<Value> = [
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.kubernetes.io/not-ready",
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
    ]
    .iter()
    .map(|k| json!({ "key": k, "operator": "Exists" }))
    .collect();
    let mut security = json!({ "runAsNonRoot": true });
    if selinux(ctx) {
        security["seLinuxOptions"] = json!({ "type": "spc_t", "level": "s0" });
    }
    let mut container = json!({
        "name": name,
        "image": image,
        "args": dns_controller_args(ctx)?,
        "command": null,
        "env": env,
        "resources": { "requests": { "cpu": "50m", "memory": "50Mi" } },
        "securityContext": security,
    });
    match ctx.cluster.cloud_provider().map(|c| c.as_str()) {
        Some("digitalocean") => {
            if let Some(Value::Array(e)) = container.get_mut("env") {
                e.push(json!({ "name": "DIGITALOCEAN_ACCESS_TOKEN",
                    "valueFrom": { "secretKeyRef": { "name": "digitalocean", "key": "access-token" } } }));
            }
        }
        Some("scaleway") => {
            container["envFrom"] = json!([{ "secretRef": { "name": "scaleway-secret" } }]);
        }
        _ => {}
    }
    let mut ns_labels = json!({ "k8s-addon": "dns-controller.addons.k8s.io" });
    let sa = {
        let mut sa = super::k8s::service_account(name, ns);
        sa["metadata"]["labels"] = ns_labels.take();
        sa
    };
    let user = vec![
        json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "User",
        "name": "system:serviceaccount:kube-system:dns-controller" }),
    ];
    Ok(vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": name, "namespace": ns, "labels": labels },
            "spec": {
                "replicas": 1,
                "strategy": { "type": "Recreate" },
                "selector": { "matchLabels": { "k8s-app": name } },
                "template": {
                    "metadata": { "labels": labels },
                    "spec": {
                        "priorityClassName": priority,
                        "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                { "matchExpressions": [ { "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" } ] },
                                { "matchExpressions": [ { "key": "node-role.kubernetes.io/master", "operator": "Exists" } ] },
                            ] } } },
                        "tolerations": tolerations,
                        "dnsPolicy": "Default",
                        "hostNetwork": true,
                        "serviceAccount": name,
                        "nodeSelector": null,
                        "containers": [container],
                    },
                },
            },
        }),
        sa,
        role(
            "kops:dns-controller",
            "",
            vec![
                rule(
                    &[""],
                    &["endpoints", "services", "pods", "ingress", "nodes"],
                    &["get", "list", "watch"],
                ),
                rule(
                    &["networking.k8s.io"],
                    &["ingresses"],
                    &["get", "list", "watch"],
                ),
            ],
        ),
        binding(
            "kops:dns-controller",
            "",
            "ClusterRole",
            "kops:dns-controller",
            user,
        ),
    ])
}
