//! kOps' `AutoscalingGroupModelBuilder` (`pkg/model/gcemodel/autoscalinggroup.go`): one
//! instance template per group and one managed instance group per zone, the group's
//! minimum size split across its zones; and the etcd disks of `MasterVolumeBuilder`
//! (`pkg/model/master_volumes.go`, `addGCEVolume`).

use std::collections::BTreeMap;

use kops_api::internal::{InstanceGroup, InstanceGroupRole};
use kops_tasks::TaskKey;
use kops_tasks::resource::Attr;

use super::cloud::{CLUSTER_LABEL, COMPUTE_URL, GceResourceType as R, INSTANCE_GROUP_LABEL};
use super::{GceModel, GceModelContext, naming};
use crate::error::{Result, invalid};

const SCOPE_URL: &str = "https://www.googleapis.com/auth/";

/// kOps' `BuildImageURL`: `project/name` or a bare `name` (in the cluster's project) as
/// the image's Compute URL; a URL stays as it is.
pub(crate) fn image_url(project: &str, ig: &InstanceGroup) -> Result<String> {
    let Some(image) = ig.spec.image.as_deref().filter(|i| !i.is_empty()) else {
        return Err(invalid(
            format!("instancegroup {}: spec.image", ig.name()),
            "required on GCE",
        ));
    };
    if image.starts_with("https://") {
        return Ok(image.to_owned());
    }
    let (p, name) = match image.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (project, *name),
        [p, name] => (*p, *name),
        _ => {
            return Err(invalid(
                format!("instancegroup {}: spec.image", ig.name()),
                format!("{image:?}: expected <project>/<image> or <image>"),
            ));
        }
    };
    Ok(format!("{COMPUTE_URL}projects/{p}/global/images/{name}"))
}

/// The template's task key of a group.
pub(crate) fn template_key(ctx: &GceModelContext, ig: &InstanceGroup) -> TaskKey {
    TaskKey::new(
        "InstanceTemplate",
        naming::safe_object_name(ig.name(), ctx.name()),
    )
}

/// The service-account task key of a role, when the cluster makes per-role accounts.
pub(crate) fn service_account_key(ctx: &GceModelContext, ig: &InstanceGroup) -> Option<TaskKey> {
    if ctx.shared_service_account().is_some() {
        return None;
    }
    Some(TaskKey::new(
        "ServiceAccount",
        super::iam::account_role(ig.spec.role.as_ref()),
    ))
}

fn is_arm(machine_type: &str) -> bool {
    ["t2a", "c4a", "n4a"]
        .iter()
        .any(|f| machine_type.starts_with(&format!("{f}-")))
}

/// `ubuntu` for images named `ubuntu*`, else `admin` (kOps' `SSHUsernameForImage`).
fn ssh_user(image: &str) -> &'static str {
    let last = image.rsplit('/').next().unwrap_or(image);
    if last.to_ascii_lowercase().starts_with("ubuntu") {
        "ubuntu"
    } else {
        "admin"
    }
}

/// The user data kOps writes for a group (the nodeup generators' bootstrap script with
/// the group's boot config, in multipart MIME with its additional user data); empty for
/// a bastion without additional user data.
fn user_data(ctx: &GceModelContext, ig: &InstanceGroup) -> Result<String> {
    Ok(crate::nodeup::user_data(ctx, ig)?.unwrap_or_default())
}

fn metadata_value(key: &str, value: String) -> Attr {
    if value.contains('\n') {
        Attr::FileNamed(format!("metadata_{key}"), value)
    } else {
        Attr::Str(value)
    }
}

/// kOps' `CloudTagsForInstanceGroup` on GCE: cloud labels (cluster, then group), the
/// autoscaler's taint labels, then the cluster, role and group labels.
fn template_labels(ctx: &GceModelContext, ig: &InstanceGroup) -> BTreeMap<String, String> {
    let mut l = ctx.cloud_labels();
    l.extend(ig.spec.cloud_labels.clone().unwrap_or_default());
    if ig.spec.role == Some(InstanceGroupRole::Node) {
        for taint in ig.spec.taints.iter().flatten() {
            if let Some((kv, effect)) = taint.rsplit_once(':') {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                l.insert(
                    format!("k8s.io/cluster-autoscaler/node-template/taint/{k}"),
                    format!("{v}:{effect}"),
                );
            }
        }
    }
    l.insert(CLUSTER_LABEL.to_owned(), ctx.safe_name());
    let role = GceModelContext::role_name(ig);
    l.insert(format!("k8s-io-role-{role}"), role.to_owned());
    l.insert(INSTANCE_GROUP_LABEL.to_owned(), ig.name().to_owned());
    if ig.spec.role == Some(InstanceGroupRole::ControlPlane) {
        l.insert("k8s-io-role-master".to_owned(), "master".to_owned());
    }
    l
}

fn scopes(ig: &InstanceGroup) -> Vec<String> {
    let mut s: Vec<&str> = vec!["compute", "monitoring", "logging.write", "cloud-platform"];
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => {
            s.push("devstorage.read_write");
            s.push("ndev.clouddns.readwrite");
        }
        Some(InstanceGroupRole::ApiServer) => {
            s.push("devstorage.read_only");
            s.push("ndev.clouddns.readwrite");
        }
        _ => s.push("devstorage.read_only"),
    }
    s.into_iter().map(|x| format!("{SCOPE_URL}{x}")).collect()
}

fn network_tags(ctx: &GceModelContext, ig: &InstanceGroup) -> Vec<String> {
    match ig.spec.role {
        Some(InstanceGroupRole::ControlPlane) => vec![ctx.tag("control-plane"), ctx.tag("master")],
        Some(InstanceGroupRole::ApiServer) => vec![ctx.tag("apiserver")],
        Some(InstanceGroupRole::Bastion) => vec![ctx.tag("bastion")],
        _ => vec![ctx.tag("node")],
    }
}

fn kube_env(ig: &InstanceGroup, image: &str, machine_type: &str) -> String {
    let distro = if image.contains("cos-cloud/") {
        "cos"
    } else {
        "ubuntu"
    };
    let arch = if is_arm(machine_type) {
        "arm64"
    } else {
        "amd64"
    };
    let mut s = format!("AUTOSCALER_ENV_VARS: os_distribution={distro};arch={arch};os=linux");
    if let Some(labels) = ig.spec.node_labels.as_ref().filter(|l| !l.is_empty()) {
        let joined: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!(";node_labels={}", joined.join(",")));
    }
    if let Some(taints) = ig.spec.taints.as_ref().filter(|t| !t.is_empty()) {
        s.push_str(&format!(";node_taints={}", taints.join(",")));
    }
    s
}

/// kOps' `SplitCountAcrossZones`: an even split, the remainder to the first zones.
pub(crate) fn split_across(count: i64, zones: usize) -> Vec<i64> {
    let n = zones.max(1) as i64;
    (0..n)
        .map(|i| count / n + i64::from(i < count % n))
        .collect()
}

fn root_volume_default(role: Option<&InstanceGroupRole>) -> i64 {
    match role {
        Some(InstanceGroupRole::ControlPlane) => 64,
        Some(InstanceGroupRole::Bastion) => 32,
        _ => 128,
    }
}

fn template(ctx: &GceModelContext, ig: &InstanceGroup) -> Result<super::GceTask> {
    let key = template_key(ctx, ig);
    let name = key.name().to_owned();
    let image = image_url(&ctx.project, ig)?;
    let Some(machine_type) = ig.spec.machine_type.clone() else {
        return Err(invalid(
            format!("instancegroup {}: spec.machineType", ig.name()),
            "required",
        ));
    };
    let subnets: Vec<&String> = ig.spec.subnets.iter().flatten().collect();
    let [subnet] = subnets.as_slice() else {
        return Err(invalid(
            format!("instancegroup {}: spec.subnets", ig.name()),
            "a GCE instance group must have exactly one subnet",
        ));
    };
    let subnet_spec = ctx.subnet(subnet).ok_or_else(|| {
        invalid(
            format!("instancegroup {}: spec.subnets", ig.name()),
            format!("subnet {subnet:?} is not in spec.subnets"),
        )
    })?;
    let rv = ig.spec.root_volume.as_ref();
    let disk = vec![
        ("auto_delete".to_owned(), Attr::Bool(true)),
        ("boot".to_owned(), Attr::Bool(true)),
        ("device_name".to_owned(), Attr::s("persistent-disks-0")),
        ("disk_name".to_owned(), Attr::s("")),
        (
            "disk_size_gb".to_owned(),
            Attr::Int(
                rv.and_then(|r| r.size)
                    .map_or_else(|| root_volume_default(ig.spec.role.as_ref()), i64::from),
            ),
        ),
        (
            "disk_type".to_owned(),
            Attr::s(
                rv.and_then(|r| r.type_.clone())
                    .filter(|t| t.starts_with("pd-") || t.starts_with("hyperdisk-"))
                    .unwrap_or_else(|| "pd-standard".to_owned()),
            ),
        ),
        ("interface".to_owned(), Attr::s("")),
        ("mode".to_owned(), Attr::s("READ_WRITE")),
        (
            "provisioned_iops".to_owned(),
            Attr::Int(rv.and_then(|r| r.iops).map_or(0, i64::from)),
        ),
        (
            "provisioned_throughput".to_owned(),
            Attr::Int(rv.and_then(|r| r.throughput).map_or(0, i64::from)),
        ),
        ("source".to_owned(), Attr::s("")),
        ("source_image".to_owned(), Attr::s(image.clone())),
        ("type".to_owned(), Attr::s("PERSISTENT")),
    ];

    let public = ig.spec.role == Some(InstanceGroupRole::Bastion)
        || ig.spec.associate_public_ip.unwrap_or(matches!(
            subnet_spec.type_.as_deref(),
            Some("Public" | "Utility") | None
        ));
    let mut nic = Vec::new();
    if public {
        nic.push(("access_config".to_owned(), Attr::Block(Vec::new())));
    }
    nic.push(("network".to_owned(), Attr::out(&ctx.network_key(), "name")));
    nic.push((
        "stack_type".to_owned(),
        Attr::s(if ctx.is_ipv6_only() {
            "IPV4_IPV6"
        } else {
            "IPV4_ONLY"
        }),
    ));
    nic.push((
        "subnetwork".to_owned(),
        Attr::out(&ctx.subnet_key(subnet), "name"),
    ));

    let spot = ig
        .spec
        .gcp_provisioning_model
        .as_deref()
        .is_some_and(|m| m.eq_ignore_ascii_case("SPOT"));
    let accelerators = ig
        .spec
        .guest_accelerators
        .as_ref()
        .is_some_and(|g| !g.is_empty());
    let family = machine_type.split('-').next().unwrap_or("");
    let terminate = spot || accelerators || ["a4x", "a4", "a3", "a2", "g2", "g4"].contains(&family);
    let scheduling = vec![
        ("automatic_restart".to_owned(), Attr::Bool(!spot)),
        (
            "on_host_maintenance".to_owned(),
            Attr::s(if terminate { "TERMINATE" } else { "MIGRATE" }),
        ),
        ("preemptible".to_owned(), Attr::Bool(spot)),
        (
            "provisioning_model".to_owned(),
            Attr::s(if spot { "SPOT" } else { "STANDARD" }),
        ),
    ];

    let email = match (ctx.shared_service_account(), service_account_key(ctx, ig)) {
        (Some(shared), _) => Attr::s(shared),
        (None, Some(k)) => Attr::out(&k, "email"),
        (None, None) => Attr::s("default"),
    };
    let service_account = vec![
        ("email".to_owned(), email),
        ("scopes".to_owned(), Attr::strs(scopes(ig))),
    ];

    let mut metadata = BTreeMap::new();
    metadata.insert("cluster-name".to_owned(), Attr::s(ctx.name()));
    metadata.insert(
        "kops-k8s-io-instance-group-name".to_owned(),
        Attr::s(ig.name()),
    );
    if ig.spec.role == Some(InstanceGroupRole::Node) {
        metadata.insert(
            "kube-env".to_owned(),
            Attr::s(kube_env(
                ig,
                ig.spec.image.as_deref().unwrap_or(""),
                &machine_type,
            )),
        );
    }
    if let Some(key) = ctx.ssh_public_key.as_deref() {
        let user = ssh_user(ig.spec.image.as_deref().unwrap_or(""));
        metadata.insert(
            "ssh-keys".to_owned(),
            metadata_value("ssh-keys", format!("{user}: {}", key.trim())),
        );
    }
    let has_user_data = ig.spec.role != Some(InstanceGroupRole::Bastion)
        || ig
            .spec
            .additional_user_data
            .as_ref()
            .is_some_and(|u| !u.is_empty());
    if has_user_data {
        let startup = ctx
            .cluster
            .spec
            .cloud_provider
            .gce
            .as_ref()
            .and_then(|g| g.use_startup_script)
            .unwrap_or(false);
        let key = if startup {
            "startup-script"
        } else {
            "user-data"
        };
        metadata.insert(key.to_owned(), metadata_value(key, user_data(ctx, ig)?));
    }

    let labels = template_labels(ctx, ig);
    let prefix = naming::limited_length_name(&name, 32);
    let mut t = ctx
        .task("InstanceTemplate", &name, R::InstanceTemplate)
        .attr("can_ip_forward", !super::network::ip_aliases(ctx))
        .attr("disk", Attr::Block(disk))
        .attr(
            "labels",
            Attr::Map(labels.into_iter().map(|(k, v)| (k, Attr::Str(v))).collect()),
        )
        .attr("machine_type", machine_type)
        .attr("metadata", Attr::Map(metadata))
        .attr("name_prefix", format!("{prefix}-"))
        .attr("network_interface", Attr::Block(nic))
        .attr("scheduling", Attr::Block(scheduling))
        .attr("service_account", Attr::Block(service_account))
        .attr("tags", Attr::strs(network_tags(ctx, ig)))
        .render_attr(
            "lifecycle",
            Attr::Block(vec![("create_before_destroy".to_owned(), Attr::Bool(true))]),
        )
        .find_by(kops_tasks::resource::FindBy::NameTag(ig.name().to_owned()));
    if let Some(k) = service_account_key(ctx, ig) {
        t = t.depends_on(k);
    }
    Ok(t)
}

pub(crate) fn build(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    let pool = super::loadbalancer::target_pool_key(ctx);
    let apiservers = ctx.has_apiserver_groups();
    for ig in ctx.groups.iter().filter(|ig| ctx.builds_group(ig)) {
        let tmpl = template(ctx, ig)?;
        let tmpl_key = tmpl.task_key().clone();
        m.add(tmpl);
        let zones = ctx.zones_of(ig)?;
        let min = i64::from(ig.spec.min_size.unwrap_or(
            if ig.spec.role == Some(InstanceGroupRole::Node) {
                2
            } else {
                1
            },
        ));
        let behind_pool = match ig.spec.role {
            Some(InstanceGroupRole::ControlPlane) => !apiservers,
            Some(InstanceGroupRole::ApiServer) => true,
            _ => false,
        };
        for (zone, size) in zones.iter().zip(split_across(min, zones.len())) {
            let name = naming::instance_group_manager_name(ctx.name(), ig.name(), zone);
            let mut t = ctx
                .task("InstanceGroupManager", &name, R::InstanceGroupManager)
                .named(&name)
                .attr("base_instance_name", ig.name())
                .attr("list_managed_instances_results", "PAGINATED")
                .attr("target_size", Attr::Int(size))
                .attr(
                    "update_policy",
                    Attr::Block(vec![
                        ("minimal_action".to_owned(), Attr::s("REPLACE")),
                        ("type".to_owned(), Attr::s("OPPORTUNISTIC")),
                    ]),
                )
                .attr(
                    "version",
                    Attr::Block(vec![(
                        "instance_template".to_owned(),
                        Attr::out(&tmpl_key, "self_link"),
                    )]),
                )
                .attr("zone", zone.as_str())
                .render_attr(
                    "lifecycle",
                    Attr::Block(vec![(
                        "ignore_changes".to_owned(),
                        Attr::Raw("[target_size]".to_owned()),
                    )]),
                );
            if behind_pool && let Some(p) = &pool {
                t = t.attr("target_pools", Attr::List(vec![Attr::out(p, "self_link")]));
            }
            m.add(t);
        }
    }
    Ok(())
}

/// The etcd disk name of `member` in etcd cluster `etcd`: `<member>-etcd-<etcd>-<cluster>`,
/// dots as dashes, `d` first when it would start with a digit or `-`.
fn etcd_disk_name(ctx: &GceModelContext, member: &str, etcd: &str) -> String {
    let mut prefix = format!("{member}-etcd-{etcd}").replace('.', "-");
    if prefix.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        prefix.insert(0, 'd');
    }
    ctx.suffixed(&prefix)
}

/// One disk per etcd member, in its group's only zone, labelled for etcd-manager.
pub(crate) fn build_etcd_disks(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    for (ci, e) in ctx.cluster.spec.etcd_clusters.iter().flatten().enumerate() {
        let Some(etcd) = e.name.as_deref() else {
            return Err(invalid(format!("spec.etcdClusters[{ci}].name"), "required"));
        };
        for (mi, member) in e.etcd_members.iter().flatten().enumerate() {
            let field = format!("spec.etcdClusters[{ci}].etcdMembers[{mi}]");
            let Some(mname) = member.name.as_deref() else {
                return Err(invalid(format!("{field}.name"), "required"));
            };
            let Some(ig_name) = member.instance_group.as_deref() else {
                return Err(invalid(format!("{field}.instanceGroup"), "required"));
            };
            let Some(ig) = ctx.groups.iter().find(|g| g.name() == ig_name) else {
                return Err(invalid(
                    format!("{field}.instanceGroup"),
                    format!("no instance group {ig_name:?}"),
                ));
            };
            let zones = ctx.zones_of(ig)?;
            let [zone] = zones.as_slice() else {
                return Err(invalid(
                    format!("instancegroup {ig_name}: spec.zones"),
                    "an etcd member's group must have exactly one zone on GCE",
                ));
            };
            let name = etcd_disk_name(ctx, mname, etcd);
            let mut labels = ctx.cluster_label();
            labels.insert("k8s-io-role-master".to_owned(), "master".to_owned());
            labels.insert(
                format!("k8s-io-etcd-{etcd}"),
                naming::encode_label(&format!("{mname}/{mname}")),
            );
            let t = ctx
                .task("Disk", &name, R::Disk)
                .named(&name)
                .attr_opt("provisioned_iops", member.volume_iops.map(i64::from))
                .attr_opt(
                    "provisioned_throughput",
                    member.volume_throughput.map(i64::from),
                )
                .attr("size", Attr::Int(member.volume_size.map_or(20, i64::from)))
                .attr(
                    "type",
                    member
                        .volume_type
                        .clone()
                        .unwrap_or_else(|| "pd-ssd".to_owned()),
                )
                .attr("zone", zone.as_str())
                .tags(labels);
            m.add(t);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_split_like_kops() {
        assert_eq!(split_across(2, 3), [1, 1, 0]);
        assert_eq!(split_across(2, 2), [1, 1]);
        assert_eq!(split_across(5, 2), [3, 2]);
    }
}
