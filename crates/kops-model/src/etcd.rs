//! etcd as kOps runs it: the etcd-manager static pods, the etcd versions and ports, and
//! the cluster spec etcd-manager reads from the backup store (kOps'
//! `pkg/model/components/etcdmanager`).

use kops_api::v1alpha2;

use crate::cluster::ClusterContext;

/// The etcd version of an etcd cluster (its `version`, else kOps' default).
pub(crate) fn etcd_version(ctx: &ClusterContext, e: &v1alpha2::EtcdClusterSpec) -> String {
    let _ = ctx;
    e.version
        .clone()
        .unwrap_or_else(|| kops_api::defaults::ETCD_36_VERSION.to_owned())
}

/// The etcd-manager image kOps pins.
const ETCD_MANAGER_IMAGE: &str = "registry.k8s.io/etcd-manager/etcd-manager-slim:v3.0.20260707";

/// The etcd ports of a cluster: (client, peer, quarantined client, grpc).
fn etcd_ports(name: &str) -> (u16, u16, u16, u16) {
    match name {
        "main" => (4001, 2380, 3994, 3996),
        "events" => (4002, 2381, 3995, 3997),
        "cilium" => (4003, 2382, 3992, 3991),
        _ => (4004, 2383, 4005, 4006),
    }
}

/// The etcd versions the etcd-manager pod can run, with the volume each one's binaries
/// come from: every patch release of a supported minor maps to that minor's latest
/// image; a cluster with its own image runs only its version.
fn etcd_binaries(
    ctx: &ClusterContext,
    e: &v1alpha2::EtcdClusterSpec,
) -> Vec<(String, String, String)> {
    let vol = |v: &str| format!("etcd-v{}", v.replace('.', "-"));
    if let Some(image) = e.image.as_deref().filter(|i| !i.is_empty()) {
        let v = e
            .version
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches('v')
            .to_owned();
        return vec![(v.clone(), vol(&v), crate::images::remap(ctx, image))];
    }
    let mut out = Vec::new();
    for latest in [
        kops_api::defaults::ETCD_35_VERSION,
        kops_api::defaults::ETCD_36_VERSION,
        kops_api::defaults::ETCD_37_VERSION,
    ] {
        let mut parts = latest.splitn(3, '.');
        let (Some(maj), Some(min), Some(patch)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let patch: u32 = patch.parse().unwrap_or(0);
        let image = crate::images::remap(ctx, &format!("registry.k8s.io/etcd:v{latest}"));
        for p in 0..=patch {
            out.push((format!("{maj}.{min}.{p}"), vol(latest), image.clone()));
        }
    }
    out
}

/// The etcd-manager static pod of one etcd cluster
/// (`manifests/etcd/<cluster>-<group>.yaml`).
pub(crate) fn etcd_manager_manifest(
    ctx: &ClusterContext,
    e: &v1alpha2::EtcdClusterSpec,
    name: &str,
    group: &str,
) -> String {
    let cluster = ctx.name();
    let (client, peer, quarantine, grpc) = etcd_ports(name);
    let api_server_nodes = ctx.has_api_server_nodes();
    let client_host = if api_server_nodes {
        format!("{name}.etcd.internal.{cluster}")
    } else if name == "cilium" {
        format!("api.internal.{cluster}")
    } else {
        "__name__".to_owned()
    };
    let etcd_name = if name == "main" {
        "etcd".to_owned()
    } else {
        format!("etcd-{name}")
    };
    let backup_store = e
        .backups
        .as_ref()
        .and_then(|b| b.backup_store.clone())
        .unwrap_or_else(|| {
            format!(
                "{}/backups/etcd/{name}",
                ctx.cluster
                    .spec
                    .config_store
                    .base
                    .clone()
                    .unwrap_or_default()
            )
        });
    let manager = e.manager.as_ref();
    let mut flags = vec![
        format!("--backup-store={backup_store}"),
        format!("--client-urls=https://{client_host}:{client}"),
        format!("--cluster-name={etcd_name}"),
        "--containerized=true".to_owned(),
        format!("--dns-suffix=.internal.{cluster}"),
        format!("--grpc-port={grpc}"),
        format!("--peer-urls=https://__name__:{peer}"),
        format!("--quarantine-client-urls=https://__name__:{quarantine}"),
        format!("--v={}", manager.and_then(|m| m.log_level).unwrap_or(6)),
    ];
    // How etcd-manager finds its volumes: by the labels the GCE model puts on the etcd
    // disks (dashes, the cluster label's value the safe cluster name), by the Hetzner
    // model's volume labels (the member's group names the volume), else by AWS tags.
    if ctx.cluster.spec.cloud_provider.hetzner.is_some() {
        use kops_cloud_hetzner::cloud as hz;
        flags.extend([
            format!("--volume-name-tag={}={group}", hz::INSTANCE_GROUP_LABEL),
            "--volume-provider=hetzner".to_owned(),
            format!("--volume-tag={}={cluster}", hz::CLUSTER_LABEL),
            format!("--volume-tag={}={name}", hz::VOLUME_ROLE_LABEL),
        ]);
    } else if ctx.cluster.spec.cloud_provider.gce.is_some() {
        flags.extend([
            format!("--volume-name-tag=k8s-io-etcd-{name}"),
            "--volume-provider=gce".to_owned(),
            format!(
                "--volume-tag={}={}",
                kops_cloud_gce::cloud::CLUSTER_LABEL,
                crate::gce::naming::safe_cluster_name(cluster)
            ),
            format!("--volume-tag=k8s-io-etcd-{name}"),
            "--volume-tag=k8s-io-role-master=master".to_owned(),
        ]);
    } else {
        flags.extend([
            format!("--volume-name-tag=k8s.io/etcd/{name}"),
            "--volume-provider=aws".to_owned(),
            format!("--volume-tag=k8s.io/etcd/{name}"),
            "--volume-tag=k8s.io/role/control-plane=1".to_owned(),
            format!("--volume-tag=kubernetes.io/cluster/{cluster}=owned"),
        ]);
    }
    flags.sort();
    let mut env: Vec<(String, String)> = Vec::new();
    if ctx.cluster.spec.cloud_provider.aws.is_some() {
        env.push(("AWS_REGION".into(), ctx.region.clone()));
    }
    for (k, v) in ctx.credential_env() {
        env.push((k.into(), crate::files::yaml_scalar(v)));
    }
    if let Some(m) = manager {
        if let Some(d) = m.backup_retention_days {
            env.push((
                "ETCD_MANAGER_DAILY_BACKUPS_RETENTION".into(),
                format!("{d}d"),
            ));
        }
        if let Some(u) = m.listen_metrics_urls.as_ref().filter(|u| !u.is_empty()) {
            env.push(("ETCD_LISTEN_METRICS_URLS".into(), u.join(",")));
        }
        if let Some(u) = m.listen_client_httpurls.as_ref().filter(|u| !u.is_empty()) {
            env.push(("ETCD_LISTEN_CLIENT_HTTP_URLS".into(), u.join(",")));
        }
        for v in m.env.iter().flatten() {
            env.push((
                v.name.clone().unwrap_or_default(),
                v.value.clone().unwrap_or_default(),
            ));
        }
    }
    let image = crate::images::remap(
        ctx,
        manager
            .and_then(|m| m.image.as_deref())
            .filter(|i| !i.is_empty())
            .unwrap_or(ETCD_MANAGER_IMAGE),
    );
    let cpu = e.cpu_request.as_ref().map_or("200m", |q| q.as_str());
    let memory = e.memory_request.as_ref().map_or("100Mi", |q| q.as_str());
    let binaries = etcd_binaries(ctx, e);
    let log = format!("/var/log/{etcd_name}.log");

    // kOps announces the client name through dns-controller when API servers run off the
    // control plane.
    let annotations = if api_server_nodes {
        format!("  annotations:\n    dns.alpha.kubernetes.io/internal: {client_host}\n")
    } else {
        String::new()
    };
    let mut s = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n{annotations}  labels:\n    k8s-app: etcd-manager-{name}\n  name: etcd-manager-{name}\n  namespace: kube-system\nspec:\n  containers:\n  - args:\n    - --log-file=/var/log/etcd.log\n    - --also-stdout\n    - /ko-app/etcd-manager\n"
    );
    for f in &flags {
        s.push_str(&format!("    - {f}\n"));
    }
    s.push_str("    command:\n    - /go-runner\n");
    if !env.is_empty() {
        s.push_str("    env:\n");
        for (k, v) in &env {
            s.push_str(&format!("    - name: {k}\n      value: {v}\n"));
        }
    }
    s.push_str(&format!(
        "    image: {image}\n    name: etcd-manager\n    resources:\n      requests:\n        cpu: {cpu}\n        memory: {memory}\n    securityContext:\n      privileged: true\n    volumeMounts:\n    - mountPath: /rootfs\n      name: rootfs\n    - mountPath: /run\n      name: run\n    - mountPath: /etc/kubernetes/pki/etcd-manager\n      name: pki\n"
    ));
    for (v, vol, _) in &binaries {
        s.push_str(&format!(
            "    - mountPath: /opt/etcd-v{v}\n      name: {vol}\n"
        ));
    }
    s.push_str(&format!(
        "    - mountPath: /var/log/etcd.log\n      name: varlogetcd\n  hostNetwork: true\n  hostPID: true\n  priorityClassName: system-cluster-critical\n  tolerations:\n  - key: CriticalAddonsOnly\n    operator: Exists\n  volumes:\n  - hostPath:\n      path: /\n      type: Directory\n    name: rootfs\n  - hostPath:\n      path: /run\n      type: DirectoryOrCreate\n    name: run\n  - hostPath:\n      path: /etc/kubernetes/pki/etcd-manager-{name}\n      type: DirectoryOrCreate\n    name: pki\n"
    ));
    let mut seen = std::collections::BTreeSet::new();
    for (_, vol, image) in &binaries {
        if seen.insert(vol.clone()) {
            s.push_str(&format!(
                "  - image:\n      pullPolicy: IfNotPresent\n      reference: {image}\n    name: {vol}\n"
            ));
        }
    }
    s.push_str(&format!(
        "  - hostPath:\n      path: {log}\n      type: FileOrCreate\n    name: varlogetcd\nstatus: {{}}\n"
    ));
    s
}
