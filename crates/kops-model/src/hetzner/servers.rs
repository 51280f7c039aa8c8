//! kOps' Hetzner `ServerGroupModelBuilder` and the Hetzner part of its
//! `MasterVolumeBuilder`: the cluster's SSH key, one [`ServerGroup`] per instance group,
//! and one volume per etcd member.

use std::collections::BTreeMap;
use std::sync::Arc;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::terraform::{Body, Expr, TerraformWriter};
use kops_tasks::{Change, Context, Fields, Found, Outputs, Task, TaskKey, Value, async_trait};
use serde_json::json;

use super::cloud::{
    AUTOSCALER_NODE_GROUP_LABEL, CLUSTER_LABEL, CreateRequest, HetznerCloud,
    HetznerResourceType as R, INSTANCE_GROUP_LABEL, INSTANCE_ROLE_LABEL, ListQuery,
    NEEDS_UPDATE_LABEL, NODE_LABEL_PREFIX, Resource, TagFilter, USER_DATA_LABEL, UpdateRequest,
    VOLUME_ROLE_LABEL, user_data_hash,
};
use super::{HetznerModel, HetznerModelContext};
use crate::cluster::ClusterContext;
use crate::error::{Result, invalid};

/// The role kOps writes in a server's [`INSTANCE_ROLE_LABEL`].
fn role_label(ig: &InstanceGroup) -> &'static str {
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => "ControlPlane",
        Some(InstanceGroupRole::ApiServer) => "APIServer",
        Some(InstanceGroupRole::Bastion) => "Bastion",
        _ => "Node",
    }
}

/// kOps' `CloudTagsForInstanceGroup` on Hetzner (without the user data's hash, which a
/// server gets when it is made): the cloud labels, the node labels under
/// [`NODE_LABEL_PREFIX`], the autoscaler's taint templates, the cluster, group and role
/// labels, and for node groups the autoscaler's node group.
pub(crate) fn group_labels(ctx: &ClusterContext, ig: &InstanceGroup) -> BTreeMap<String, String> {
    let mut labels = ctx.cloud_labels();
    for (k, v) in ig.spec.cloud_labels.iter().flatten() {
        labels.insert(k.clone(), v.clone());
    }
    for (k, v) in crate::cluster::node_labels(ig) {
        labels.insert(format!("{NODE_LABEL_PREFIX}{k}"), v);
    }
    for taint in ig.spec.taints.iter().flatten() {
        let Some((kv, effect)) = taint.rsplit_once(':').filter(|(_, e)| !e.is_empty()) else {
            continue;
        };
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        labels.insert(
            format!("k8s.io/cluster-autoscaler/node-template/taint/{k}"),
            format!("{v}:{effect}"),
        );
    }
    labels.insert(INSTANCE_ROLE_LABEL.to_owned(), role_label(ig).to_owned());
    labels.insert(CLUSTER_LABEL.to_owned(), ctx.name().to_owned());
    labels.insert(INSTANCE_GROUP_LABEL.to_owned(), ig.name().to_owned());
    if ig.spec.role == Some(InstanceGroupRole::Node) {
        labels.insert(AUTOSCALER_NODE_GROUP_LABEL.to_owned(), ig.name().to_owned());
    }
    labels
}

/// The name of the cluster's SSH key in Hetzner, `<cluster>-<MD5 fingerprint>`; `None`
/// without a key, an error when the key is not an OpenSSH public key line.
pub(crate) fn ssh_key_name(ctx: &ClusterContext) -> Result<Option<String>> {
    let Some(key) = ctx.ssh_public_key.as_deref() else {
        return Ok(None);
    };
    let fingerprint = crate::aws::naming::ssh_key_fingerprint(key)
        .ok_or_else(|| invalid("SSH public key", "not an OpenSSH public key line"))?;
    Ok(Some(format!("{}-{fingerprint}", ctx.name())))
}

/// The SSH key and a server group per instance group.
pub(crate) fn build(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    let listing = Arc::new(ClusterServers::default());
    let mut ssh_keys = Vec::new();
    if let (Some(key), Some(name)) = (ctx.ssh_public_key.as_deref(), ssh_key_name(ctx)?) {
        let t = ctx
            .task("SSHKey", &name, R::SshKey)
            .named(&name)
            .attr("public_key", key.trim())
            .tags(ctx.cluster_labels());
        ssh_keys.push(t.task_key().clone());
        m.add(t);
    }
    for ig in ctx.groups.iter().filter(|g| ctx.builds_group(g)) {
        let user_data = crate::nodeup::user_data(ctx, ig)?.unwrap_or_default();
        let field = |f: &str| format!("instancegroup {}: spec.{f}", ig.name());
        let required = |v: Option<&String>, f: &str| {
            v.filter(|s| !s.is_empty())
                .cloned()
                .ok_or_else(|| invalid(field(f), "required on Hetzner"))
        };
        m.server_groups.push(ServerGroup {
            key: TaskKey::new("ServerGroup", ig.name()),
            cluster: ctx.name().to_owned(),
            group: ig.name().to_owned(),
            count: ig.spec.min_size.map_or(0, i64::from),
            location: ctx.location_of(ig)?,
            server_type: required(ig.spec.machine_type.as_ref(), "machineType")?,
            image: required(ig.spec.image.as_ref(), "image")?,
            ipv4: true,
            ipv6: false,
            user_data,
            labels: group_labels(ctx, ig),
            network: ctx.network_key(),
            ssh_keys: ssh_keys.clone(),
            listing: listing.clone(),
        });
    }
    Ok(())
}

/// One volume per etcd member, `<member>.etcd-<cluster>.<cluster name>`, in its group's
/// location, labelled with the group and the etcd cluster for etcd-manager.
pub(crate) fn build_etcd_volumes(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    for (ci, e) in ctx.cluster.spec.etcd_clusters.iter().flatten().enumerate() {
        let Some(etcd) = e.name.as_deref() else {
            return Err(invalid(format!("spec.etcdClusters[{ci}].name"), "required"));
        };
        for (mi, member) in e.etcd_members.iter().flatten().enumerate() {
            let field = format!("spec.etcdClusters[{ci}].etcdMembers[{mi}]");
            let (Some(mname), Some(ig_name)) =
                (member.name.as_deref(), member.instance_group.as_deref())
            else {
                return Err(invalid(field, "name and instanceGroup are required"));
            };
            let Some(ig) = ctx.groups.iter().find(|g| g.name() == ig_name) else {
                return Err(invalid(
                    format!("{field}.instanceGroup"),
                    format!("no instance group {ig_name:?}"),
                ));
            };
            let name = format!("{mname}.etcd-{etcd}.{}", ctx.name());
            let mut labels = ctx.cluster_labels();
            labels.insert(INSTANCE_GROUP_LABEL.to_owned(), ig_name.to_owned());
            labels.insert(VOLUME_ROLE_LABEL.to_owned(), etcd.to_owned());
            m.add(
                ctx.task("Volume", &name, R::Volume)
                    .named(&name)
                    .attr("location", ctx.location_of(ig)?)
                    .attr(
                        "size",
                        kops_tasks::resource::Attr::Int(member.volume_size.map_or(20, i64::from)),
                    )
                    .tags(labels),
            );
        }
    }
    Ok(())
}

/// The servers of one instance group (kOps' `ServerGroup` task). Hetzner has no
/// autoscaling group: this task finds the group's servers by the cluster and group
/// labels, creates `count` of them when fewer exist (extra ones are left alone, as kOps
/// leaves them), and marks each server whose user data (by its
/// [`USER_DATA_LABEL`]), location, type, image or public addresses differ with
/// [`NEEDS_UPDATE_LABEL`], which rolling update replaces.
///
/// Its fields are `count` (servers that exist, at most the expected count) and
/// `out_of_date` (each server newly found out of date, with why).
#[derive(Debug)]
pub struct ServerGroup {
    key: TaskKey,
    cluster: String,
    group: String,
    count: i64,
    location: String,
    server_type: String,
    image: String,
    ipv4: bool,
    ipv6: bool,
    user_data: String,
    labels: BTreeMap<String, String>,
    network: TaskKey,
    ssh_keys: Vec<TaskKey>,
    /// The cluster's servers, listed once per run for every group's find.
    listing: Arc<ClusterServers>,
}

/// The cluster's servers as one run of the executor saw them: listed once (by the cluster's
/// label) and shared by the server groups' finds, so that a plan lists servers once
/// however many groups there are. A group's apply lists its own servers afresh.
#[derive(Debug, Default)]
struct ClusterServers(tokio::sync::Mutex<Option<(u64, Arc<Vec<Resource>>)>>);

impl ClusterServers {
    /// The servers of `cluster` in run `run`: listed on the first call of the run.
    async fn get(
        &self,
        cloud: &dyn HetznerCloud,
        cluster: &str,
        run: u64,
    ) -> kops_tasks::Result<Arc<Vec<Resource>>> {
        let mut held = self.0.lock().await;
        if let Some((seen, servers)) = held.as_ref()
            && *seen == run
        {
            return Ok(servers.clone());
        }
        let query = ListQuery::new(R::Server).with_tag(TagFilter::equals(CLUSTER_LABEL, cluster));
        let servers = Arc::new(cloud.list(&query).await?);
        *held = Some((run, servers.clone()));
        Ok(servers)
    }
}

impl ServerGroup {
    /// The instance group's name.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The number of servers the group keeps at least.
    pub fn count(&self) -> i64 {
        self.count
    }

    /// The labels a server of the group is created with: the group's labels and the
    /// hash of its user data.
    pub fn server_labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.labels.clone();
        labels.insert(
            USER_DATA_LABEL.to_owned(),
            user_data_hash(self.user_data.as_bytes()),
        );
        labels
    }

    /// Why `server` differs from the group's servers (the first difference), `None` when
    /// it is up to date.
    pub fn out_of_date(&self, server: &Resource) -> Option<String> {
        let hash = user_data_hash(self.user_data.as_bytes());
        let public = server.attrs.get("public_net");
        let enabled = |k: &str| public.and_then(|p| p.get(k)).and_then(|v| v.as_bool());
        let checks: [(&str, bool); 6] = [
            (
                "user data",
                server.tags.get(USER_DATA_LABEL) == Some(hash.as_str()),
            ),
            (
                "location",
                server.attr_str("location") == Some(&self.location),
            ),
            (
                "server type",
                server.attr_str("server_type") == Some(&self.server_type),
            ),
            ("image", server.attr_str("image") == Some(&self.image)),
            ("IPv4", enabled("ipv4_enabled") == Some(self.ipv4)),
            ("IPv6", enabled("ipv6_enabled") == Some(self.ipv6)),
        ];
        checks.iter().find(|(_, same)| !same).map(|(what, _)| {
            format!(
                "{}: {what} changed",
                server.name.as_deref().unwrap_or(&server.id)
            )
        })
    }

    /// The group's servers in the cloud, oldest first.
    async fn servers(&self, cloud: &dyn HetznerCloud) -> kops_tasks::Result<Vec<Resource>> {
        let query = ListQuery::new(R::Server)
            .with_tag(TagFilter::equals(CLUSTER_LABEL, &self.cluster))
            .with_tag(TagFilter::equals(INSTANCE_GROUP_LABEL, &self.group));
        Ok(cloud.list(&query).await?)
    }

    /// The servers not yet marked for update that differ from the group's, with why.
    fn newly_out_of_date<'a>(&self, servers: &'a [Resource]) -> Vec<(&'a Resource, String)> {
        servers
            .iter()
            .filter(|s| !s.tags.contains_key(NEEDS_UPDATE_LABEL))
            .filter_map(|s| self.out_of_date(s).map(|why| (s, why)))
            .collect()
    }

    fn refs(&self) -> Vec<Value> {
        self.ssh_keys
            .iter()
            .map(|k| Value::reference(k.to_ref()))
            .collect()
    }

    /// A random server name, `<group>-<hex>`, as kOps names them.
    fn new_server_name(&self) -> String {
        format!("{}-{:x}", self.group, rand::random::<u64>() >> 1)
    }

    async fn create_server(&self, cx: &Context<'_, dyn HetznerCloud>) -> kops_tasks::Result<()> {
        let network = cx.resolve(&self.network.to_ref())?;
        let ssh_keys = self
            .ssh_keys
            .iter()
            .map(|k| cx.resolve(&k.to_ref()))
            .collect::<kops_tasks::Result<Vec<_>>>()?;
        let attrs: BTreeMap<String, serde_json::Value> = [
            ("location", json!(self.location)),
            ("server_type", json!(self.server_type)),
            ("image", json!(self.image)),
            ("user_data", json!(self.user_data)),
            ("network", json!([{ "network_id": network }])),
            (
                "public_net",
                json!({ "ipv4_enabled": self.ipv4, "ipv6_enabled": self.ipv6 }),
            ),
            ("ssh_keys", json!(ssh_keys)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let request = CreateRequest::new(R::Server)
            .with_name(self.new_server_name())
            .with_tags(self.server_labels())
            .with_attrs(attrs);
        cx.cloud().create(&request).await?;
        Ok(())
    }
}

#[async_trait]
impl Task<dyn HetznerCloud> for ServerGroup {
    fn key(&self) -> &TaskKey {
        &self.key
    }

    fn fields(&self) -> Fields {
        Fields::new()
            .with("count", Value::Int(self.count))
            .with("network", Value::reference(self.network.to_ref()))
            .with("out_of_date", Value::List(Vec::new()))
            .with("ssh_keys", Value::List(self.refs()))
    }

    async fn find(&self, cx: &Context<'_, dyn HetznerCloud>) -> kops_tasks::Result<Option<Found>> {
        let run = cx.results().run_id();
        let all = self.listing.get(cx.cloud(), &self.cluster, run).await?;
        let servers: Vec<Resource> = all
            .iter()
            .filter(|s| s.tags.get(INSTANCE_GROUP_LABEL) == Some(self.group.as_str()))
            .cloned()
            .collect();
        if servers.is_empty() {
            return Ok(None);
        }
        let out_of_date = self
            .newly_out_of_date(&servers)
            .into_iter()
            .map(|(_, why)| Value::string(why))
            .collect();
        let count = (servers.len() as i64).min(self.count);
        let fields = Fields::new()
            .with("count", Value::Int(count))
            .with("network", Value::reference(self.network.to_ref()))
            .with("out_of_date", Value::List(out_of_date))
            .with("ssh_keys", Value::List(self.refs()));
        Ok(Some(Found::new(fields, Outputs::id(&self.group))))
    }

    /// Marks the servers found out of date, then creates the missing ones. Both steps
    /// read the group's servers again first, so a retry after a lost answer neither
    /// marks twice nor creates a server it already made.
    async fn apply(
        &self,
        cx: &Context<'_, dyn HetznerCloud>,
        _change: &Change<'_>,
    ) -> kops_tasks::Result<Outputs> {
        let servers = self.servers(cx.cloud()).await?;
        for (server, _) in self.newly_out_of_date(&servers) {
            let mut labels = server.tags.to_map();
            labels.insert(NEEDS_UPDATE_LABEL.to_owned(), String::new());
            let request = UpdateRequest::new(R::Server, server.id.clone()).with_tags(labels);
            cx.cloud().update(&request).await?;
        }
        for _ in (servers.len() as i64)..self.count {
            self.create_server(cx).await?;
        }
        Ok(Outputs::id(&self.group))
    }

    fn render_terraform(&self, w: &mut TerraformWriter) -> kops_tasks::Result<()> {
        let mut body = Body::new()
            .attr("count", Expr::Int(self.count))
            .attr("image", self.image.as_str())
            .attr("labels", Expr::string_map(self.labels.iter()))
            .attr("location", self.location.as_str())
            .attr(
                "name",
                Expr::Template(format!("{}-${{count.index}}", self.group)),
            )
            .block(
                "network",
                Body::new().attr("network_id", Expr::Ref(self.network.to_ref())),
            )
            .block(
                "public_net",
                Body::new()
                    .attr("ipv4_enabled", self.ipv4)
                    .attr("ipv6_enabled", self.ipv6),
            )
            .attr("server_type", self.server_type.as_str());
        if !self.ssh_keys.is_empty() {
            let keys = self
                .ssh_keys
                .iter()
                .map(|k| Expr::Ref(k.to_ref()))
                .collect();
            body = body.attr("ssh_keys", Expr::List(keys));
        }
        if !self.user_data.is_empty() {
            let data = w.add_file_base64(
                "hcloud_server",
                &self.group,
                "user_data",
                self.user_data.clone().into_bytes(),
            );
            body = body.attr("user_data", data);
        }
        w.resource("hcloud_server", &self.group, body)
    }
}
