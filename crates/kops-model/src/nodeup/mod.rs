//! What a machine boots from: the nodeup config of its instance group (kOps'
//! `nodeup.Config`, stored as the `nodeupconfig-<group>` managed file), the boot config
//! (kOps' `nodeup.BootConfig`, carried in the user-data as `conf/kube_env.yaml`) that
//! pins the nodeup config by its hash, and the bootstrap script.
//!
//! Field by field as kOps' `nodeup.NewConfig` and `nodeUpConfigBuilder.BuildConfig`
//! (`pkg/apis/nodeup/config.go`, `pkg/nodemodel/nodeupconfigbuilder.go`) build them from
//! the completed spec and the keysets, written through [`kops_api::yaml`]. The hash is
//! `base64(sha256(nodeup config bytes))`: nodeup refuses a nodeup config whose hash
//! differs.

pub mod assets;
pub(crate) mod userdata;

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use kops_api::internal::{CloudProvider, InstanceGroup, InstanceGroupRole};
use kops_api::v1alpha2;
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};
use crate::pki::{self, NodeRole};

/// The nodeup config and boot config of one instance group.
#[derive(Clone, Debug)]
pub(crate) struct NodeupFiles {
    /// `igconfig/<role>/<group>/nodeupconfig.yaml`.
    pub(crate) config: String,
    /// The boot config (`conf/kube_env.yaml`), with the config's hash.
    pub(crate) boot_config: String,
}

fn to_value<T: Serialize>(what: &str, v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| invalid(what, e.to_string()))
}

/// kOps' spelling of a role in nodeup's files.
fn role_name(role: &InstanceGroupRole) -> &str {
    match role {
        InstanceGroupRole::ControlPlane => "ControlPlane",
        InstanceGroupRole::Node => "Node",
        InstanceGroupRole::Bastion => "Bastion",
        InstanceGroupRole::ApiServer => "APIServer",
        InstanceGroupRole::Unknown(s) => s,
    }
}

fn node_role(role: &InstanceGroupRole) -> NodeRole {
    match role {
        InstanceGroupRole::ControlPlane => NodeRole::ControlPlane,
        InstanceGroupRole::ApiServer => NodeRole::ApiServer,
        InstanceGroupRole::Bastion => NodeRole::Bastion,
        _ => NodeRole::Node,
    }
}

/// Whether a `roles` list (v1alpha2 spelling) names `role`.
fn roles_contain(roles: &[String], role: &InstanceGroupRole) -> bool {
    roles.iter().any(|r| &InstanceGroupRole::parse(r) == role)
}

/// Items whose `roles` are empty or name `role`, with `roles` cleared (kOps'
/// `filterHooks` / `filterFileAssets`).
fn filter_roles(items: &[Value], role: &InstanceGroupRole) -> Vec<Value> {
    items
        .iter()
        .filter(|item| {
            let roles: Vec<String> = item
                .get("roles")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            roles.is_empty() || roles_contain(&roles, role)
        })
        .map(|item| {
            let mut item = item.clone();
            if let Some(m) = item.as_object_mut() {
                m.remove("roles");
            }
            item
        })
        .collect()
}

fn list<T: Serialize>(what: &str, v: &Option<Vec<T>>) -> Result<Vec<Value>> {
    v.iter()
        .flatten()
        .map(|x| to_value(what, x))
        .collect::<Result<Vec<_>>>()
}

/// Go's JSON merge of `overlay` over `base` (objects merged key by key, anything else
/// replaced; `null` leaves the base).
fn json_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    continue;
                }
                json_merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn insert_some(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(key.to_owned(), v);
    }
}

fn nonempty(v: Vec<Value>) -> Option<Value> {
    (!v.is_empty()).then_some(Value::Array(v))
}

/// The kube-scheduler configuration file kOps gives control-plane and API-server
/// machines (`/var/lib/kube-scheduler/config.yaml`): the cluster's additional
/// `KubeSchedulerConfiguration` object if it has one (at most one), else an empty one of
/// `kubescheduler.config.k8s.io/v1`; then the kubeconfig path, and `qps` and `burst` of
/// `spec.kubeScheduler` over the object's client connection.
fn kube_scheduler_config(ctx: &ClusterContext) -> Result<String> {
    let matches: Vec<&Value> = ctx
        .additional_objects
        .iter()
        .filter(|o| {
            o.get("kind").and_then(Value::as_str) == Some("KubeSchedulerConfiguration")
                && o.get("apiVersion")
                    .and_then(Value::as_str)
                    .and_then(|v| v.split_once('/'))
                    .is_some_and(|(group, _)| group == "kubescheduler.config.k8s.io")
        })
        .collect();
    let mut config = match matches.as_slice() {
        [] => json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
        }),
        [one] => (*one).clone(),
        more => {
            return Err(invalid(
                "additional objects",
                format!(
                    "{} KubeSchedulerConfiguration objects; a cluster has at most one",
                    more.len()
                ),
            ));
        }
    };
    let Some(root) = config.as_object_mut() else {
        return Err(invalid(
            "additional objects",
            "KubeSchedulerConfiguration is not a mapping",
        ));
    };
    let client = root.entry("clientConnection").or_insert_with(|| json!({}));
    if !client.is_object() {
        *client = json!({});
    }
    let Some(client) = client.as_object_mut() else {
        return Err(invalid(
            "additional objects",
            "KubeSchedulerConfiguration.clientConnection is not a mapping",
        ));
    };
    client.insert(
        "kubeconfig".into(),
        Value::String("/var/lib/kube-scheduler/kubeconfig".into()),
    );
    if let Some(ks) = &ctx.cluster.spec.kube_scheduler
        && let Ok(Value::Object(m)) = serde_json::to_value(ks)
    {
        if let Some(q) = m.get("qps") {
            let n = q
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or_else(|| q.clone());
            client.insert("qps".into(), n);
        }
        if let Some(b) = m.get("burst").filter(|b| b.as_i64() != Some(0)) {
            client.insert("burst".into(), b.clone());
        }
    }
    Ok(kops_api::yaml::value_to_string(&config))
}

/// kOps' `WarmPoolSpec.ResolveDefaults` then `IsEnabled && EnableLifecycleHook`.
fn lifecycle_hook(ctx: &ClusterContext, ig: &InstanceGroup) -> bool {
    let Some(aws) = &ctx.cluster.spec.cloud_provider.aws else {
        return false;
    };
    let cp_or_bastion = matches!(
        ig.spec.role,
        Some(InstanceGroupRole::ControlPlane | InstanceGroupRole::Bastion)
    );
    let cluster_pool = aws.warm_pool.as_ref();
    let resolved: Option<v1alpha2::WarmPoolSpec> = match (&ig.spec.warm_pool, cluster_pool) {
        (None, None) => None,
        (None, Some(_)) if cp_or_bastion => None,
        (None, Some(c)) => Some(c.clone()),
        (Some(i), None) => Some(i.clone()),
        (Some(i), Some(_)) if cp_or_bastion => Some(i.clone()),
        (Some(i), Some(c)) => {
            let mut s = i.clone();
            if s.max_size.is_none() {
                s.max_size = c.max_size;
            }
            if s.min_size.unwrap_or(0) == 0 {
                s.min_size = c.min_size;
            }
            if !s.enable_lifecycle_hook.unwrap_or(false) {
                s.enable_lifecycle_hook = c.enable_lifecycle_hook;
            }
            Some(s)
        }
    };
    resolved.is_some_and(|w| w.max_size != Some(0) && w.enable_lifecycle_hook == Some(true))
}

/// Images whose sources kOps pre-pulls on warm-pool instances: those that delay a node's
/// start (kube-proxy, the AWS provider's, the CSI node sidecars, the CNIs' on
/// quay.io), matched after remapping, plus the group's `warmPool.additionalImages`.
const WARM_POOL_IMAGE_PREFIXES: &[&str] = &[
    "registry.k8s.io/kube-proxy:",
    "registry.k8s.io/provider-aws/",
    "registry.k8s.io/sig-storage/csi-node-driver-registrar:",
    "registry.k8s.io/sig-storage/livenessprobe:",
    "quay.io/calico/",
    "quay.io/cilium/",
    "quay.io/coreos/flannel:",
    "quay.io/weaveworks/",
];

/// kOps' warm-pool images of a group (`None` when neither the group nor the cluster has
/// a warm pool, or the group is a control-plane one): every image of the build that a
/// prefix of [`WARM_POOL_IMAGE_PREFIXES`] names, sorted.
fn warm_pool_images(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<Option<Vec<String>>> {
    let Some(aws) = &ctx.cluster.spec.cloud_provider.aws else {
        return Ok(None);
    };
    if (ig.spec.warm_pool.is_none() && aws.warm_pool.is_none())
        || ig.spec.role == Some(InstanceGroupRole::ControlPlane)
    {
        return Ok(None);
    }
    let prefixes: Vec<String> = WARM_POOL_IMAGE_PREFIXES
        .iter()
        .map(|p| crate::images::remap_prefix(ctx, p))
        .collect();
    let mut images = crate::addons::images(ctx)?;
    if let Some(kp) = ctx
        .cluster
        .spec
        .kube_proxy
        .as_ref()
        .and_then(|k| k.image.clone())
    {
        images.insert(kp);
    }
    let mut out: BTreeSet<String> = images
        .into_iter()
        .filter(|i| prefixes.iter().any(|p| i.starts_with(p.as_str())))
        .collect();
    for extra in ig
        .spec
        .warm_pool
        .as_ref()
        .and_then(|w| w.additional_images.as_ref())
        .into_iter()
        .flatten()
    {
        out.insert(crate::images::remap(ctx, extra));
    }
    Ok(Some(out.into_iter().collect()))
}

/// Whether the cluster runs a Cilium etcd cluster (kOps' `UseCiliumEtcd`).
fn use_cilium_etcd(ctx: &ClusterContext) -> bool {
    ctx.cluster
        .spec
        .etcd_clusters
        .iter()
        .flatten()
        .any(|e| e.name.as_deref() == Some("cilium"))
}

/// The nodeup files of the groups already built while a model build is under way (see
/// [`Memo::scope`]): a group's files are asked for by its launch template (the user
/// data) and by the managed files (the config), and building them is most of a group's
/// cost. Outside a scope nothing is kept, so a context changed between two builds never
/// answers from the first. A clone of the context starts with an empty memo.
#[derive(Debug, Default)]
pub(crate) struct Memo(std::sync::Arc<std::sync::Mutex<MemoState>>);

#[derive(Debug, Default)]
struct MemoState {
    /// How many scopes are open (a build inside a build keeps the outer one's files).
    depth: usize,
    files: std::collections::HashMap<String, NodeupFiles>,
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl Memo {
    fn state(&self) -> std::sync::MutexGuard<'_, MemoState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps every group's files until the returned guard drops (one model build).
    pub(crate) fn scope(&self) -> MemoScope<'_> {
        self.state().depth += 1;
        MemoScope(self)
    }

    fn get(&self, group: &str) -> Option<NodeupFiles> {
        let state = self.state();
        (state.depth > 0).then(|| state.files.get(group).cloned())?
    }

    fn put(&self, group: &str, files: &NodeupFiles) {
        let mut state = self.state();
        if state.depth > 0 {
            state.files.insert(group.to_owned(), files.clone());
        }
    }
}

/// An open [`Memo`] scope; the last one to drop forgets every group's files.
pub(crate) struct MemoScope<'a>(&'a Memo);

impl Drop for MemoScope<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.depth = state.depth.saturating_sub(1);
        if state.depth == 0 {
            state.files.clear();
        }
    }
}

/// The nodeup config and boot config of `ig` (kOps' `BuildConfig` then the hash), built
/// once per group in a model build (see [`Memo`]).
pub(crate) fn build(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<NodeupFiles> {
    if let Some(files) = ctx.nodeup_memo.get(ig.name()) {
        return Ok(files);
    }
    let files = build_uncached(ctx, ig)?;
    ctx.nodeup_memo.put(ig.name(), &files);
    Ok(files)
}

fn build_uncached(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<NodeupFiles> {
    let spec = &ctx.cluster.spec;
    let role = ig
        .spec
        .role
        .clone()
        .ok_or_else(|| invalid(format!("instancegroup {}: spec.role", ig.name()), "not set"))?;
    let control_plane = role == InstanceGroupRole::ControlPlane;
    let runs_api = control_plane || role == InstanceGroupRole::ApiServer;
    let (base, _) = ctx.config_base()?;
    let base = base.trim_end_matches('/').to_owned();

    let mut c = Map::new();
    c.insert("ClusterName".into(), Value::String(ctx.name().to_owned()));
    c.insert(
        "KubernetesVersion".into(),
        Value::String(ctx.kubernetes_version_of(ig)),
    );

    // Assets.
    let files = assets::kubernetes_file_assets(ctx, ig)?;
    let mut a = Map::new();
    for arch in assets::ARCHITECTURES {
        let items = files
            .get(arch)
            .into_iter()
            .flatten()
            .map(|x| Value::String(x.compact()))
            .collect();
        a.insert(arch.to_owned(), Value::Array(items));
    }
    c.insert("Assets".into(), Value::Object(a));

    // PKI.
    let p = pki::nodeup_pki(&ctx.cluster, node_role(&role), &ctx.keysets)?;
    c.insert(
        "CAs".into(),
        Value::Object(
            p.cas
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        ),
    );
    c.insert(
        "KeypairIDs".into(),
        Value::Object(
            p.keypair_ids
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        ),
    );

    // Networking: only the ranges and which CNI.
    let n = &spec.networking;
    let mut net = Map::new();
    insert_some(
        &mut net,
        "nonMasqueradeCIDR",
        n.non_masquerade_cidr.clone().map(Value::String),
    );
    insert_some(
        &mut net,
        "serviceClusterIPRange",
        n.service_cluster_ip_range.clone().map(Value::String),
    );
    let first_machine_type = || {
        Value::String(
            ig.spec
                .machine_type
                .as_deref()
                .unwrap_or_default()
                .split(',')
                .next()
                .unwrap_or_default()
                .to_owned(),
        )
    };
    if n.amazonvpc.is_some() {
        net.insert("amazonVPC".into(), json!({}));
        c.insert("DefaultMachineType".into(), first_machine_type());
    }
    if let Some(calico) = &n.calico {
        let mut m = Map::new();
        if calico.wireguard_enabled == Some(true) {
            m.insert("wireguardEnabled".into(), Value::Bool(true));
        }
        net.insert("calico".into(), Value::Object(m));
    }
    if let Some(cilium) = &n.cilium {
        let mut m = Map::new();
        if cilium.ipam.as_deref() == Some("eni") {
            m.insert("ipam".into(), Value::String("eni".into()));
            c.insert("DefaultMachineType".into(), first_machine_type());
        }
        net.insert("cilium".into(), Value::Object(m));
        if use_cilium_etcd(ctx) {
            c.insert("UseCiliumEtcd".into(), Value::Bool(true));
        }
    }
    if n.cni.as_ref().and_then(|c| c.uses_secondary_ip) == Some(true) {
        net.insert("cni".into(), json!({"usesSecondaryIP": true}));
    }
    if n.flannel.is_some() {
        net.insert("flannel".into(), json!({}));
    }
    if n.kuberouter.is_some() {
        net.insert("kubeRouter".into(), json!({}));
    }
    if n.kindnet.is_some() {
        net.insert("kindnet".into(), json!({}));
    }
    if runs_api && let Some(proxy) = &n.egress_proxy {
        net.insert(
            "egressProxy".into(),
            to_value("spec.networking.egressProxy", proxy)?,
        );
    }
    c.insert("Networking".into(), Value::Object(net));
    if n.kubenet.is_some() || n.gce.is_some() || n.external.is_some() || n.kopeio.is_some() {
        c.insert("UsesKubenet".into(), Value::Bool(true));
    }
    if assets::install_cni_assets(ctx) {
        c.insert("InstallCNIAssets".into(), Value::Bool(true));
    }
    if spec.ntp.as_ref().and_then(|n| n.managed) == Some(false) {
        c.insert("NTPUnmanaged".into(), Value::Bool(true));
    }
    if let Some(r) = spec
        .kube_api_server
        .as_ref()
        .and_then(|k| k.service_node_port_range.clone())
        .filter(|r| !r.is_empty())
    {
        c.insert("ServiceNodePortRange".into(), Value::String(r));
    }
    let mut sysctls = Vec::new();
    for (from, list) in [
        ("instance group", &ig.spec.sysctl_parameters),
        ("cluster", &spec.sysctl_parameters),
    ] {
        let list = list.as_deref().unwrap_or_default();
        if !list.is_empty() {
            sysctls.push(Value::String(format!(
                "# Custom sysctl parameters from {from} spec"
            )));
            sysctls.push(Value::String(String::new()));
            sysctls.extend(list.iter().cloned().map(Value::String));
        }
    }
    insert_some(&mut c, "SysctlParameters", nonempty(sysctls));
    let update_policy = ig
        .spec
        .update_policy
        .clone()
        .or_else(|| spec.update_policy.clone())
        .unwrap_or_else(|| "automatic".into());
    c.insert("UpdatePolicy".into(), Value::String(update_policy));
    if let Some(images) = warm_pool_images(ctx, ig)?.filter(|i| !i.is_empty()) {
        c.insert(
            "warmPoolImages".into(),
            Value::Array(images.into_iter().map(Value::String).collect()),
        );
    }

    insert_some(
        &mut c,
        "VolumeMounts",
        nonempty(list("spec.volumeMounts", &ig.spec.volume_mounts)?),
    );
    let mut file_assets = filter_roles(&list("spec.fileAssets", &ig.spec.file_assets)?, &role);
    file_assets.extend(filter_roles(
        &list("spec.fileAssets", &spec.file_assets)?,
        &role,
    ));
    if runs_api {
        file_assets.push(json!({
            "content": kube_scheduler_config(ctx)?,
            "path": "/var/lib/kube-scheduler/config.yaml",
        }));
    }
    insert_some(&mut c, "FileAssets", nonempty(file_assets));
    let hooks = |h: Vec<Value>| {
        if h.is_empty() {
            Value::Null
        } else {
            Value::Array(h)
        }
    };
    c.insert(
        "Hooks".into(),
        Value::Array(vec![
            hooks(filter_roles(&list("spec.hooks", &ig.spec.hooks)?, &role)),
            hooks(filter_roles(&list("spec.hooks", &spec.hooks)?, &role)),
        ]),
    );

    // Container runtime.
    if spec.containerd.is_some() || ig.spec.containerd.is_some() {
        let mut cd = match &spec.containerd {
            Some(x) => to_value("spec.containerd", x)?,
            None => json!({}),
        };
        if let Some(x) = &ig.spec.containerd {
            json_merge(&mut cd, &to_value("spec.containerd", x)?);
        }
        let gvisor = ig.spec.containerd.as_ref().and_then(|c| c.gvisor.as_ref());
        if gvisor.is_none()
            && let Some(m) = cd.as_object_mut()
        {
            m.remove("gvisor");
        }
        if let Some(nv) = cd.get("nvidiaGPU").cloned() {
            let mut nv = nv;
            if let Some(m) = nv.as_object_mut()
                && !m.contains_key("package")
            {
                m.insert(
                    "package".into(),
                    Value::String("nvidia-driver-535-server".into()),
                );
            }
            c.insert("NvidiaGPU".into(), nv);
        }
        if let Some(g) = gvisor {
            let mut g = to_value("spec.containerd.gvisor", g)?;
            if let Some(m) = g.as_object_mut()
                && !m.contains_key("platform")
            {
                m.insert("platform".into(), Value::String("systrap".into()));
            }
            c.insert("GVisor".into(), g);
        }
        c.insert("containerdConfig".into(), cd);
    }

    // kube-proxy, unless disabled or the control plane is isolated.
    let kube_proxy = match &spec.kube_proxy {
        Some(kp) if kp.enabled == Some(false) => Value::Null,
        _ if control_plane && n.isolate_control_plane == Some(true) => Value::Null,
        Some(kp) => to_value("spec.kubeProxy", kp)?,
        None => json!({}),
    };
    c.insert("KubeProxy".into(), kube_proxy);
    c.insert(
        "KubeletConfig".into(),
        match &ig.spec.kubelet {
            Some(k) => to_value("spec.kubelet", k)?,
            None => json!({}),
        },
    );

    // Machines that run an API server.
    if runs_api {
        let mut api = Map::new();
        insert_some(
            &mut api,
            "publicName",
            spec.api.public_name.clone().map(Value::String),
        );
        if let Some(sans) = spec.api.additional_sans.as_ref().filter(|s| !s.is_empty()) {
            api.insert("additionalSANs".into(), to_value("spec.api", sans)?);
        }
        if spec.api.dns.is_some() {
            api.insert("dns".into(), json!({}));
        }
        if spec
            .api
            .load_balancer
            .as_ref()
            .and_then(|l| l.use_for_internal_api)
            == Some(true)
        {
            api.insert("loadBalancer".into(), json!({"useForInternalAPI": true}));
        }
        let mut sc = Map::new();
        sc.insert(
            "ClusterDNSDomain".into(),
            Value::String(spec.cluster_dns_domain.clone().unwrap_or_default()),
        );
        sc.insert(
            "KubeAPIServer".into(),
            match &spec.kube_api_server {
                Some(k) => to_value("spec.kubeAPIServer", k)?,
                None => Value::Null,
            },
        );
        sc.insert("API".into(), Value::Object(api));
        if let Some(auth) = &spec.authentication {
            let mut v = to_value("spec.authentication", auth)?;
            if let Some(m) = v.as_object_mut()
                && m.contains_key("aws")
            {
                m.insert("aws".into(), json!({}));
            }
            sc.insert("Authentication".into(), v);
        }
        if let Some(h) = ctx
            .encryption_config_hash
            .as_ref()
            .filter(|h| !h.is_empty())
        {
            sc.insert(
                "EncryptionConfigSecretHash".into(),
                Value::String(h.clone()),
            );
        }
        sc.insert(
            "ServiceAccountPublicKeys".into(),
            Value::String(p.service_account_public_keys.clone().unwrap_or_default()),
        );
        c.insert("APIServerConfig".into(), Value::Object(sc));
        let mut store = Map::new();
        insert_some(
            &mut store,
            "keypairs",
            spec.config_store.keypairs.clone().map(Value::String),
        );
        insert_some(
            &mut store,
            "secrets",
            spec.config_store.secrets.clone().map(Value::String),
        );
        c.insert("configStore".into(), Value::Object(store));
        c.insert(
            "staticManifests".into(),
            json!([{"key": "kube-apiserver-healthcheck", "path": "manifests/static/kube-apiserver-healthcheck.yaml"}]),
        );
        if let Some(aws) = &spec.cloud_provider.aws {
            insert_some(
                &mut c,
                "disableSecurityGroupIngress",
                aws.disable_security_group_ingress.map(Value::Bool),
            );
            insert_some(
                &mut c,
                "elbSecurityGroup",
                aws.elb_security_group.clone().map(Value::String),
            );
            insert_some(
                &mut c,
                "nlbSecurityGroupMode",
                aws.nlb_security_group_mode.clone().map(Value::String),
            );
            if let Some(f) = aws.node_ip_families.as_ref().filter(|f| !f.is_empty()) {
                c.insert("nodeIPFamilies".into(), to_value("nodeIPFamilies", f)?);
            }
        }
    }
    if control_plane {
        insert_some(&mut c, "DNSZone", spec.dns_zone.clone().map(Value::String));
        c.insert(
            "ControlPlaneConfig".into(),
            json!({
                "KubeControllerManager": match &spec.kube_controller_manager {
                    Some(k) => to_value("spec.kubeControllerManager", k)?,
                    None => json!({}),
                },
                "KubeScheduler": match &spec.kube_scheduler {
                    Some(k) => to_value("spec.kubeScheduler", k)?,
                    None => json!({}),
                },
            }),
        );
        let etcd: Vec<&v1alpha2::EtcdClusterSpec> = spec.etcd_clusters.iter().flatten().collect();
        insert_some(
            &mut c,
            "EtcdClusterNames",
            nonempty(
                etcd.iter()
                    .map(|e| Value::String(e.name.clone().unwrap_or_default()))
                    .collect(),
            ),
        );
        let mut manifests = Vec::new();
        for e in &etcd {
            for m in e.etcd_members.iter().flatten() {
                if m.instance_group.as_deref() == Some(ig.name()) {
                    manifests.push(Value::String(format!(
                        "{base}/manifests/etcd/{}-{}.yaml",
                        e.name.as_deref().unwrap_or_default(),
                        ig.name()
                    )));
                }
            }
        }
        insert_some(&mut c, "etcdManifests", nonempty(manifests));
        c.insert(
            "channelsManifest".into(),
            Value::String(format!("{base}/manifests/channels/kops-channels.yaml")),
        );
    }
    if let Some(aws) = &spec.cloud_provider.aws {
        if lifecycle_hook(ctx, ig) {
            c.insert("EnableLifecycleHook".into(), Value::Bool(true));
        }
        if aws.use_ip_based_node_names == Some(true) {
            c.insert("useIPBasedNodeNames".into(), Value::Bool(true));
        }
    }
    if let Some(gce) = &spec.cloud_provider.gce {
        insert_some(&mut c, "multizone", gce.multizone.map(Value::Bool));
        insert_some(&mut c, "nodeTags", gce.node_tags.clone().map(Value::String));
        insert_some(
            &mut c,
            "nodeInstancePrefix",
            gce.node_instance_prefix.clone().map(Value::String),
        );
    }
    let mut packages: Vec<Value> = Vec::new();
    packages.extend(spec.packages.iter().flatten().cloned().map(Value::String));
    packages.extend(
        ig.spec
            .packages
            .iter()
            .flatten()
            .cloned()
            .map(Value::String),
    );
    insert_some(&mut c, "packages", nonempty(packages));
    c.insert(
        "usesNoneDNS".into(),
        Value::Bool(ctx.cluster.uses_none_dns()),
    );
    if let Some(ds) = spec
        .service_account_issuer_discovery
        .as_ref()
        .and_then(|s| s.discovery_service.as_ref())
    {
        let mut m = Map::new();
        insert_some(
            &mut m,
            "url",
            ds.url.clone().filter(|u| !u.is_empty()).map(Value::String),
        );
        c.insert("discoveryServiceWithUniverse".into(), Value::Object(m));
    }

    let config = kops_api::yaml::value_to_string(&Value::Object(c));
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(config.as_bytes()));

    // The boot config.
    let mut b = Map::new();
    b.insert(
        "CloudProvider".into(),
        Value::String(
            ctx.cluster
                .cloud_provider()
                .map(CloudProvider::as_str)
                .unwrap_or_default()
                .to_owned(),
        ),
    );
    b.insert("ClusterName".into(), Value::String(ctx.name().to_owned()));
    b.insert(
        "InstanceGroupName".into(),
        Value::String(ig.name().to_owned()),
    );
    b.insert(
        "InstanceGroupRole".into(),
        Value::String(role_name(&role).to_owned()),
    );
    b.insert("NodeupConfigHash".into(), Value::String(hash));
    if runs_api {
        b.insert("ConfigBase".into(), Value::String(base.clone()));
    } else {
        let mut cs = Map::new();
        cs.insert(
            "CACertificates".into(),
            Value::String(p.config_server_ca_certificates.clone().unwrap_or_default()),
        );
        cs.insert(
            "servers".into(),
            json!([format!(
                "https://kops-controller.internal.{}:3988/",
                ctx.name()
            )]),
        );
        b.insert("ConfigServer".into(), Value::Object(cs));
    }
    let boot_config = kops_api::yaml::value_to_string(&Value::Object(b));
    Ok(NodeupFiles {
        config,
        boot_config,
    })
}

/// The environment the bootstrap script exports (kOps' `buildEnvironmentVariables`):
/// the region on AWS.
fn environment(ctx: &ClusterContext) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if ctx.cluster.cloud_provider() == Some(CloudProvider::Aws) {
        env.insert("AWS_REGION".into(), ctx.region.clone());
    }
    env
}

/// The user-data of `ig` as kOps writes it: the bootstrap script with the boot config,
/// wrapped in multipart MIME with the group's additional user-data. `None` for a bastion
/// without additional user-data (it gets none).
pub(crate) fn user_data(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<Option<String>> {
    let bastion = ig.spec.role == Some(InstanceGroupRole::Bastion);
    let additional: Vec<&v1alpha2::UserData> =
        ig.spec.additional_user_data.iter().flatten().collect();
    if bastion && additional.is_empty() {
        return Ok(None);
    }
    let script = if bastion {
        None
    } else {
        Some(bootstrap_script(ctx, ig)?)
    };
    let parts: Vec<userdata::Part<'_>> = additional
        .iter()
        .map(|u| {
            (
                u.name.as_deref().unwrap_or_default(),
                u.type_.as_deref().unwrap_or_default(),
                u.content.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    Ok(Some(userdata::multipart_mime(script.as_deref(), &parts)))
}

/// The bootstrap script alone (also the `nodeupscript-<group>` file of Karpenter groups).
pub(crate) fn bootstrap_script(ctx: &ClusterContext, ig: &InstanceGroup) -> Result<String> {
    let files = build(ctx, ig)?;
    let mut nodeup = BTreeMap::new();
    for arch in assets::ARCHITECTURES {
        nodeup.insert(arch.to_owned(), assets::nodeup_asset(ctx, arch)?);
    }
    let proxy = ctx
        .cluster
        .spec
        .networking
        .egress_proxy
        .as_ref()
        .and_then(|p| p.http_proxy.as_ref())
        .map(|h| {
            userdata::proxy_env(
                h.host.as_deref().unwrap_or_default(),
                h.port,
                ctx.cluster
                    .spec
                    .networking
                    .egress_proxy
                    .as_ref()
                    .and_then(|p| p.excludes.as_deref())
                    .unwrap_or_default(),
            )
        })
        .unwrap_or_default();
    let script = userdata::Script {
        nodeup,
        boot_config: files.boot_config,
        compress: ig.spec.compress_user_data == Some(true),
        cloud: ctx
            .cluster
            .cloud_provider()
            .map(CloudProvider::as_str)
            .unwrap_or_default()
            .to_owned(),
        env: environment(ctx),
        proxy,
    };
    Ok(script.render())
}
