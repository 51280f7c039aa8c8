//! The Hetzner model against the in-memory Hetzner mock: apply, re-plan (empty), change a
//! group's server type (exactly that group's servers marked out of date, then left alone
//! by the next plan), delete (nothing with the cluster's label is left, another
//! cluster's objects are), and the API token: in the store's files, never in a plan or in
//! Terraform, which takes it from a sensitive variable. Also the calls of a no-op plan
//! for 2 and for 20 node groups.

use std::sync::Arc;

use kops_api::manifest::{self, Object};
use kops_api::v1alpha2;
use kops_cloud_hetzner::HetznerResourceType as R;
use kops_cloud_hetzner::cloud::{
    CLUSTER_LABEL, INSTANCE_GROUP_LABEL, NEEDS_UPDATE_LABEL, Resource, USER_DATA_LABEL,
};
use kops_mock::hetzner::MockHetzner;
use kops_model::aws::DiscoverOptions;
use kops_model::hetzner::{self, HetznerModelContext};
use kops_statestore::{MemoryStore, Store as _};
use kops_tasks::LifecycleOverrides;

const NAME: &str = "hz.example.com";
/// A token no generated text could contain by chance.
const TOKEN: &str = "hcloudtokenQ7xZp3Lm9Vt2Rk8Ws4Yb6Nc1Dh5Fj0Gx";
const SSH_KEY: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQCtWu40XQo8dczLsCq0OWV+hxm9uV3WxeH9Kgh4sMzQxNtoU1pvW0XdjpkBesRKGoolfWeCLXWxpyQb1IaiMkKoz7MdhQ/6UKjMjP66aFWWp3pwD0uj0HuJ7tq4gKHKRYGTaZIRWpzUiANBrjugVgA+Sd7E/mYwc/DMXkIyRZbvhQ== test@example";

fn spec(node_groups: usize, node_type: &str) -> String {
    let mut s = format!(
        r#"apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: {NAME}
spec:
  api:
    loadBalancer:
      type: Public
  channel: stable
  cloudProvider: hetzner
  configBase: memfs://tests/{NAME}
  etcdClusters:
  - etcdMembers:
    - instanceGroup: control-plane-fsn1
      name: etcd-1
    name: main
  - etcdMembers:
    - instanceGroup: control-plane-fsn1
      name: etcd-1
    name: events
  iam:
    legacy: false
  kubernetesApiAccess: [0.0.0.0/0]
  kubernetesVersion: v1.32.0
  networkCIDR: 10.0.0.0/16
  networking:
    cni: {{}}
  nonMasqueradeCIDR: 100.64.0.0/10
  sshAccess: [0.0.0.0/0]
  subnets:
  - name: fsn1
    type: Public
    zone: fsn1
  topology:
    dns:
      type: None
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: control-plane-fsn1
  labels:
    kops.k8s.io/cluster: {NAME}
spec:
  image: ubuntu-24.04
  machineType: cx23
  maxSize: 1
  minSize: 1
  role: Master
  subnets: [fsn1]
"#
    );
    for i in 0..node_groups {
        s.push_str(&format!(
            r#"---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: nodes-{i}
  labels:
    kops.k8s.io/cluster: {NAME}
spec:
  image: ubuntu-24.04
  machineType: {node_type}
  maxSize: 3
  minSize: 2
  role: Node
  subnets: [fsn1]
"#
        ));
    }
    s
}

async fn context(
    text: &str,
    store: Arc<MemoryStore>,
    token: bool,
) -> anyhow::Result<HetznerModelContext> {
    let mut cluster: Option<v1alpha2::Cluster> = None;
    let mut groups = Vec::new();
    for o in manifest::parse(text.as_bytes(), "spec")? {
        match o {
            Object::Cluster(c) => cluster = Some(c),
            Object::InstanceGroup(ig) => groups.push(ig),
            _ => {}
        }
    }
    let cluster = cluster.ok_or_else(|| anyhow::anyhow!("no cluster"))?;
    let opts = DiscoverOptions::default()
        .with_state_store(store, "memfs://tests")
        .with_ssh_public_key(SSH_KEY);
    let ctx = hetzner::discover(&cluster, &groups, &opts).await?;
    Ok(if token { ctx.with_token(TOKEN) } else { ctx })
}

fn servers_of(cloud: &MockHetzner, group: &str) -> Vec<Resource> {
    cloud
        .objects()
        .into_iter()
        .filter(|r| r.resource_type == R::Server)
        .filter(|r| r.tags.get(INSTANCE_GROUP_LABEL) == Some(group))
        .collect()
}

#[tokio::test]
async fn a_cluster_applies_replans_empty_marks_changed_servers_and_deletes() -> anyhow::Result<()> {
    let cloud = MockHetzner::new();
    // Another cluster's network, which a delete must leave alone.
    cloud.seed(
        Resource::new(R::Network, "999")
            .with_name("other.example.com")
            .with_tag(CLUSTER_LABEL, "other.example.com"),
    );
    let store = Arc::new(MemoryStore::new());
    let none = LifecycleOverrides::new();
    let ctx = context(&spec(1, "cx23"), store.clone(), true).await?;

    let first = hetzner::plan(&cloud, &ctx, &none).await?;
    assert!(first.has_changes());
    hetzner::apply(&cloud, &ctx, &none).await?;
    let count = |rt: R| {
        cloud
            .objects()
            .iter()
            .filter(|r| r.resource_type == rt)
            .count()
    };
    assert_eq!(count(R::Network), 2, "ours and the other cluster's");
    assert_eq!(count(R::NetworkSubnet), 1);
    assert_eq!(count(R::Firewall), 2);
    assert_eq!(count(R::LoadBalancer), 1);
    assert_eq!(count(R::LoadBalancerService), 2);
    assert_eq!(count(R::LoadBalancerTarget), 1);
    assert_eq!(count(R::LoadBalancerNetwork), 1);
    assert_eq!(count(R::SshKey), 1);
    assert_eq!(count(R::Volume), 2, "one per etcd member");
    let nodes = servers_of(&cloud, "nodes-0");
    assert_eq!(nodes.len(), 2, "minSize servers");
    for s in &nodes {
        let name = s.name.as_deref().unwrap_or_default();
        assert!(name.starts_with("nodes-0-"), "{name}");
        assert_eq!(s.attr_str("server_type"), Some("cx23"));
        assert!(
            s.tags
                .get(USER_DATA_LABEL)
                .is_some_and(|h| h.starts_with("sha256."))
        );
        assert!(
            s.attr_str("private_ip")
                .is_some_and(|ip| ip.starts_with("10.0."))
        );
    }
    assert_eq!(servers_of(&cloud, "control-plane-fsn1").len(), 1);

    let again = hetzner::plan(&cloud, &ctx, &none).await?;
    assert!(
        !again.has_changes(),
        "a plan after apply is empty: {}",
        again.render_text()
    );

    // A new server type: exactly that group's servers are out of date.
    let changed = context(&spec(1, "cx33"), store.clone(), true).await?;
    let plan = hetzner::plan(&cloud, &changed, &none).await?;
    let keys: Vec<String> = plan.changes().map(|i| i.key.to_string()).collect();
    assert_eq!(keys, ["ServerGroup/nodes-0"], "{}", plan.render_text());
    let text = plan.render_text();
    assert!(text.contains("server type changed"), "{text}");
    hetzner::apply(&cloud, &changed, &none).await?;
    let nodes = servers_of(&cloud, "nodes-0");
    assert_eq!(
        nodes.len(),
        2,
        "marked, not replaced: rolling update replaces them"
    );
    assert!(
        nodes
            .iter()
            .all(|s| s.tags.contains_key(NEEDS_UPDATE_LABEL))
    );
    assert!(
        servers_of(&cloud, "control-plane-fsn1")
            .iter()
            .all(|s| !s.tags.contains_key(NEEDS_UPDATE_LABEL))
    );
    let after = hetzner::plan(&cloud, &changed, &none).await?;
    assert!(!after.has_changes(), "{}", after.render_text());

    // Delete: nothing of the cluster is left; the other cluster's network is.
    let deleted = hetzner::delete_cluster(&cloud, NAME).await?;
    assert!(!deleted.is_empty());
    let left: Vec<String> = cloud
        .objects()
        .iter()
        .map(|r| {
            format!(
                "{:?} {}",
                r.resource_type,
                r.name.as_deref().unwrap_or(&r.id)
            )
        })
        .collect();
    assert_eq!(left, ["Network other.example.com"]);
    assert!(cloud.calls().contains_key("servers.actions.shutdown"));
    Ok(())
}

#[tokio::test]
async fn the_token_reaches_the_store_and_never_a_plan_or_terraform() -> anyhow::Result<()> {
    let cloud = MockHetzner::new();
    let store = Arc::new(MemoryStore::new());
    let none = LifecycleOverrides::new();
    let ctx = context(&spec(1, "cx23"), store.clone(), true).await?;
    let plan = hetzner::plan(&cloud, &ctx, &none).await?;
    assert!(!plan.render_text().contains(TOKEN));
    assert!(!plan.to_json().contains(TOKEN));
    hetzner::apply(&cloud, &ctx, &none).await?;
    // The cluster's components read it from the store, as kOps writes it.
    let secret = store
        .get(&format!(
            "{NAME}/addons/hcloud-config.addons.k8s.io/k8s-1.22.yaml"
        ))
        .await?;
    assert!(String::from_utf8_lossy(&secret.data).contains(TOKEN));
    let etcd = store
        .get(&format!(
            "{NAME}/manifests/etcd/main-control-plane-fsn1.yaml"
        ))
        .await?;
    let etcd = String::from_utf8_lossy(&etcd.data).into_owned();
    assert!(etcd.contains(&format!("value: {TOKEN}")), "{etcd}");
    assert!(etcd.contains("--volume-provider=hetzner"), "{etcd}");

    let tf = hetzner::render_terraform(&ctx, &none)?;
    for (path, bytes) in &tf.files {
        assert!(
            !String::from_utf8_lossy(bytes).contains(TOKEN),
            "{path} holds the token"
        );
    }
    let main = tf.main_tf();
    assert!(main.contains("variable \"hcloud_token\" {"), "{main}");
    assert!(main.contains("sensitive   = true"), "{main}");
    assert!(
        main.contains("\"hcloud_token\" = var.hcloud_token"),
        "{main}"
    );
    let config = &tf.files
        [&format!("data/aws_s3_object_{NAME}-addons-hcloud-config.addons.k8s.io-k8s-1.22_content")];
    assert!(String::from_utf8_lossy(config).contains("token: ${hcloud_token}"));
    Ok(())
}

/// kOps builds the API load balancer for every Hetzner cluster; without
/// `api.loadBalancer` in the spec the control plane's firewall also opens 443.
#[tokio::test]
async fn without_an_api_load_balancer_in_the_spec_kops_rules_still_build_one() -> anyhow::Result<()>
{
    let none = LifecycleOverrides::new();
    let with_lb = spec(1, "cx23");
    let without = with_lb.replacen(
        "  api:\n    loadBalancer:\n      type: Public\n",
        "  api:\n    dns: {}\n",
        1,
    );
    assert_ne!(with_lb, without);
    let rules_443 = |main: &str| main.matches("port       = \"443\"").count();
    for (text, opened) in [(&with_lb, 0), (&without, 1)] {
        let ctx = context(text, Arc::new(MemoryStore::new()), true).await?;
        let main = hetzner::render_terraform(&ctx, &none)?.main_tf().to_owned();
        assert!(
            main.contains(&format!(
                "resource \"hcloud_load_balancer\" \"api-{}\"",
                NAME.replace('.', "-")
            )),
            "{main}"
        );
        assert_eq!(rules_443(&main), opened, "{main}");
        // And the mock applies it.
        let cloud = MockHetzner::new();
        hetzner::apply(&cloud, &ctx, &none).await?;
        let lbs = cloud
            .objects()
            .into_iter()
            .filter(|r| r.resource_type == R::LoadBalancer)
            .count();
        assert_eq!(lbs, 1);
    }
    Ok(())
}

/// The cluster autoscaler's `HCLOUD_SSH_KEY` in `files` (Terraform's data files).
fn autoscaler_ssh_key(
    files: &std::collections::BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<String> {
    let (_, manifest) = files
        .iter()
        .find(|(p, _)| p.contains("addons-cluster-autoscaler"))
        .ok_or_else(|| anyhow::anyhow!("no cluster autoscaler manifest"))?;
    let text = String::from_utf8_lossy(manifest);
    let mut lines = text
        .lines()
        .skip_while(|l| !l.contains("name: HCLOUD_SSH_KEY"));
    lines
        .next()
        .ok_or_else(|| anyhow::anyhow!("no HCLOUD_SSH_KEY"))?;
    let value = lines
        .next()
        .ok_or_else(|| anyhow::anyhow!("HCLOUD_SSH_KEY has no value"))?;
    Ok(value.trim().to_owned())
}

#[tokio::test]
async fn kops_identical_files_put_the_token_in_data_files_and_no_key_in_the_autoscaler()
-> anyhow::Result<()> {
    let none = LifecycleOverrides::new();
    let text = spec(1, "cx23").replacen(
        "  channel: stable\n",
        "  channel: stable\n  clusterAutoscaler:\n    enabled: true\n",
        1,
    );
    let ctx = context(&text, Arc::new(MemoryStore::new()), true).await?;
    // By default the autoscaler gets the key's name, which exists from the start.
    let default = hetzner::render_terraform(&ctx, &none)?;
    let key = autoscaler_ssh_key(&default.files)?;
    assert!(key.starts_with(&format!("value: {NAME}-")), "{key}");

    let identical = hetzner::render_terraform(&ctx.with_kops_identical_files(), &none)?;
    assert_eq!(autoscaler_ssh_key(&identical.files)?, "value: \"\"");
    let main = identical.main_tf();
    assert!(!main.contains("hcloud_token"), "{main}");
    let config = &identical.files
        [&format!("data/aws_s3_object_{NAME}-addons-hcloud-config.addons.k8s.io-k8s-1.22_content")];
    assert!(String::from_utf8_lossy(config).contains(&format!("token: {TOKEN}")));
    // Every other file is the same in both forms.
    let differ: Vec<&String> = default
        .files
        .iter()
        .filter(|(p, bytes)| identical.files.get(*p) != Some(*bytes))
        .map(|(p, _)| p)
        .collect();
    assert!(differ.len() >= 5, "{differ:?}");
    for p in differ {
        assert!(
            p.contains("hcloud-config")
                || p.contains("etcdmanager")
                || p.contains("kops-channels")
                || p.contains("kops-controller")
                || p.contains("cluster-autoscaler")
                || p.contains("addons-bootstrap")
                || p == "kubernetes.tf",
            "{p} differs"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_cluster_without_a_token_or_in_two_network_zones_is_refused() -> anyhow::Result<()> {
    let store = Arc::new(MemoryStore::new());
    let ctx = context(&spec(1, "cx23"), store.clone(), false).await?;
    let err = hetzner::render_terraform(&ctx, &LifecycleOverrides::new())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("HCLOUD_TOKEN"), "{err}");

    let two_zones = spec(1, "cx23").replace(
        "  - name: fsn1\n    type: Public\n    zone: fsn1\n",
        "  - name: fsn1\n    type: Public\n    zone: fsn1\n  - name: ash\n    type: Public\n    zone: ash\n",
    );
    let err = context(&two_zones, store, true)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("spec.subnets[1].zone") && err.contains("us-east"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn a_no_op_plan_costs_the_same_calls_for_2_and_20_node_groups() -> anyhow::Result<()> {
    let mut costs = Vec::new();
    for groups in [2, 20] {
        let cloud = MockHetzner::new();
        let store = Arc::new(MemoryStore::new());
        let none = LifecycleOverrides::new();
        let ctx = context(&spec(groups, "cx23"), store, true).await?;
        hetzner::apply(&cloud, &ctx, &none).await?;
        let before = cloud.total_calls();
        let plan = hetzner::plan(&cloud, &ctx, &none).await?;
        assert!(!plan.has_changes(), "{}", plan.render_text());
        costs.push((groups, cloud.total_calls() - before));
    }
    eprintln!("no-op plan calls (groups, calls): {costs:?}");
    assert_eq!(
        costs[0].1, costs[1].1,
        "the servers are listed once: {costs:?}"
    );
    Ok(())
}

/// A cloud-only rolling update through `HetznerInstanceGroups`: the servers `update
/// cluster` marked are replaced one at a time (shut down, deleted, made again by the
/// cluster's update), never surging; then nothing is out of date and the plan is empty.
#[cfg(feature = "day2")]
mod day2 {
    use std::time::Duration;

    use kops_model::day2::groups::{HetznerInstanceGroups, InstanceGroupCloud, MemberStatus};
    use kops_model::day2::rolling::{RollingOptions, RollingUpdate};
    use kops_model::hetzner::{UpdateCluster, UpdateOptions};

    use super::*;

    #[tokio::test]
    async fn a_rolling_update_replaces_the_marked_servers() -> anyhow::Result<()> {
        let mock = Arc::new(MockHetzner::new());
        let cloud: Arc<dyn kops_cloud_hetzner::HetznerCloud> = mock.clone();
        let store = Arc::new(MemoryStore::new());
        let none = LifecycleOverrides::new();
        let ctx = context(&spec(1, "cx23"), store.clone(), true).await?;
        hetzner::apply(cloud.as_ref(), &ctx, &none).await?;
        let before: Vec<String> = servers_of(&mock, "nodes-0")
            .iter()
            .map(|s| s.id.clone())
            .collect();

        let changed = context(&spec(1, "cx33"), store.clone(), true).await?;
        hetzner::apply(cloud.as_ref(), &changed, &none).await?;
        let update = Arc::new(UpdateCluster::new(changed, UpdateOptions::default())?);
        let cluster = update.context().cluster.clone();
        let groups = update.context().groups.clone();
        let igs: Arc<dyn InstanceGroupCloud> = Arc::new(HetznerInstanceGroups::with_update(
            cloud.clone(),
            update.clone(),
        ));
        let read = igs.cloud_groups(NAME, &groups).await?;
        let nodes = read
            .iter()
            .find(|g| g.instance_group == "nodes-0")
            .ok_or_else(|| anyhow::anyhow!("no nodes-0"))?;
        assert!(
            nodes.members.iter().all(|m| m.status.needs_update()),
            "{nodes:?}"
        );
        assert!(
            nodes
                .members
                .iter()
                .all(|m| m.machine_type.as_deref() == Some("cx23"))
        );

        let options = RollingOptions::default()
            .with_cloud_only(true)
            .with_node_interval(Duration::ZERO)
            .with_control_plane_interval(Duration::ZERO);
        let roll = RollingUpdate::new(igs.clone(), options.clone());
        let plan = roll.plan(&cluster, &groups).await?;
        let g = plan
            .groups
            .iter()
            .find(|g| g.name == "nodes-0")
            .ok_or_else(|| anyhow::anyhow!("{plan:?}"))?;
        assert_eq!((g.need_update, g.max_surge), (2, 0));
        let report = roll.run(&cluster, &groups).await?;
        let mut replaced = report.replaced.clone();
        replaced.sort();
        let mut wanted = before.clone();
        wanted.sort();
        assert_eq!(replaced, wanted, "{report:?}");

        let after = servers_of(&mock, "nodes-0");
        assert_eq!(after.len(), 2, "replacements made");
        assert!(after.iter().all(|s| !before.contains(&s.id)), "new servers");
        assert!(
            after
                .iter()
                .all(|s| s.attr_str("server_type") == Some("cx33"))
        );
        let read = igs.cloud_groups(NAME, &groups).await?;
        assert!(
            read.iter()
                .flat_map(|g| &g.members)
                .all(|m| m.status == MemberStatus::UpToDate)
        );
        assert!(!update.plan(cloud.as_ref()).await?.plan.has_changes());
        Ok(())
    }
}

/// The same lifecycle through the REST backend (`RestHetzner`) talking HTTP to the fake of
/// the hcloud API: apply, plan empty, a new server type marks that group's servers, delete
/// leaves nothing of the cluster; the calls of a no-op plan; a throttled call is retried.
#[tokio::test]
async fn the_lifecycle_through_the_rest_backend_on_the_fake_api() -> anyhow::Result<()> {
    use kops_cloud_hetzner::rest::{RestConfig, RestHetzner};
    use kops_mock::hetzner::rest::FakeHcloudApi;
    use kops_tasks::retry::RetryPolicy;

    let fake = FakeHcloudApi::start("api-token").await?;
    let cfg = RestConfig::new("api-token")
        .with_endpoint(fake.url())
        .with_action_poll(std::time::Duration::from_millis(1))
        .with_retry(
            RetryPolicy::default()
                .with_backoff(
                    std::time::Duration::from_millis(1),
                    std::time::Duration::from_millis(5),
                )
                .with_max_attempts(4),
        );
    let cloud = RestHetzner::new(cfg)?;
    let store = Arc::new(MemoryStore::new());
    let none = LifecycleOverrides::new();
    let ctx = context(&spec(2, "cx23"), store.clone(), true).await?;
    hetzner::apply(&cloud, &ctx, &none).await?;
    let objects = fake.cloud().objects();
    let count = |rt: R| objects.iter().filter(|r| r.resource_type == rt).count();
    assert_eq!(
        (
            count(R::Server),
            count(R::LoadBalancerService),
            count(R::NetworkSubnet)
        ),
        (5, 2, 1),
        "1 control-plane and 2x2 node servers, the API's services, the subnet"
    );
    let before = fake.total_calls();
    let again = hetzner::plan(&cloud, &ctx, &none).await?;
    assert!(!again.has_changes(), "{}", again.render_text());
    let noop = fake.total_calls() - before;
    eprintln!("no-op plan through the REST backend, 2 node groups: {noop} calls");

    // A throttled call waits and is retried.
    fake.throttle_next(2);
    assert!(!hetzner::plan(&cloud, &ctx, &none).await?.has_changes());

    let changed = context(&spec(2, "cx33"), store, true).await?;
    let plan = hetzner::plan(&cloud, &changed, &none).await?;
    let keys: Vec<String> = plan.changes().map(|i| i.key.to_string()).collect();
    assert_eq!(
        keys,
        ["ServerGroup/nodes-0", "ServerGroup/nodes-1"],
        "{}",
        plan.render_text()
    );
    hetzner::apply(&cloud, &changed, &none).await?;
    let marked = fake
        .cloud()
        .objects()
        .into_iter()
        .filter(|r| r.tags.contains_key(NEEDS_UPDATE_LABEL))
        .count();
    assert_eq!(marked, 4);

    hetzner::delete_cluster(&cloud, NAME).await?;
    let left: Vec<String> = fake
        .cloud()
        .objects()
        .iter()
        .map(|r| format!("{:?} {}", r.resource_type, r.id))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(
        fake.calls()
            .contains_key("POST /servers/{id}/actions/shutdown")
    );

    // A wrong token is refused, naming HCLOUD_TOKEN.
    let bad = RestHetzner::new(RestConfig::new("wrong").with_endpoint(fake.url()))?;
    let err = hetzner::plan(&bad, &ctx, &none).await.err().map(|e| {
        let mut chain = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            chain.push_str(&format!(": {s}"));
            source = s.source();
        }
        chain
    });
    let err = err.unwrap_or_default();
    assert!(
        err.contains("HCLOUD_TOKEN") && err.contains("401 unauthorized"),
        "{err}"
    );
    assert!(
        !err.contains("wrong"),
        "the token is not in the error: {err}"
    );
    Ok(())
}
