//! kOps' GCE firewall rules (`pkg/model/gcemodel/firewall.go`, `external_access.go` and
//! the load balancer's rules): the cluster-internal rules between roles, and the rules
//! from CIDR lists, each emitted as an IPv4 rule and an `-ipv6` twin (a family without
//! CIDRs is emitted disabled, open to everything of its family).

use kops_api::internal::InstanceGroupRole;
use kops_tasks::resource::Attr;

use super::cloud::GceResourceType as R;
use super::{GceModel, GceModelContext};
use crate::error::Result;

/// One `allow` entry: a protocol and its ports (none: the whole protocol).
pub(crate) type Allow = (&'static str, Vec<String>);

fn allow_blocks(allow: &[Allow]) -> Attr {
    Attr::Blocks(
        allow
            .iter()
            .map(|(proto, ports)| {
                let mut b = vec![("protocol".to_owned(), Attr::s(*proto))];
                if !ports.is_empty() {
                    b.push(("ports".to_owned(), Attr::strs(ports.clone())));
                }
                b
            })
            .collect(),
    )
}

/// A rule's source: CIDRs or network tags.
pub(crate) enum Source {
    Ranges(Vec<String>),
    Tags(Vec<String>),
}

fn rule(
    ctx: &GceModelContext,
    id: &str,
    source: &Source,
    targets: &[String],
    allow: &[Allow],
    disabled: bool,
) -> super::GceTask {
    let name = ctx.suffixed(id);
    let t = ctx
        .task("FirewallRule", &name, R::Firewall)
        .named(&name)
        .attr("allow", allow_blocks(allow))
        .attr("disabled", disabled)
        .attr("network", Attr::out(&ctx.network_key(), "name"));
    let t = match source {
        Source::Ranges(r) => t.attr("source_ranges", Attr::strs(r.clone())),
        Source::Tags(tags) => t.attr("source_tags", Attr::strs(tags.clone())),
    };
    t.attr("target_tags", Attr::strs(targets.to_vec()))
}

/// A rule without an IPv6 twin (cluster-internal rules, health-check ranges).
pub(crate) fn add_single(
    ctx: &GceModelContext,
    m: &mut GceModel,
    id: &str,
    source: Source,
    targets: &[String],
    allow: &[Allow],
) {
    m.add(rule(ctx, id, &source, targets, allow, false));
}

/// kOps' `AddFirewallRulesTasks`: `<id>` for IPv4 and `<id>-ipv6` for IPv6 sources (a CIDR
/// with `:`); a family without sources is disabled and open to its whole range. Rules
/// from tags are emitted twice with the same tags. In the IPv6 twin, `icmp` is `58`.
pub(crate) fn add_pair(
    ctx: &GceModelContext,
    m: &mut GceModel,
    id: &str,
    source: Source,
    targets: &[String],
    allow: &[Allow],
) {
    let v6_allow: Vec<Allow> = allow
        .iter()
        .map(|(p, ports)| (if *p == "icmp" { "58" } else { *p }, ports.clone()))
        .collect();
    let v6_id = format!("{id}-ipv6");
    match source {
        Source::Ranges(ranges) => {
            let (v6, v4): (Vec<String>, Vec<String>) =
                ranges.into_iter().partition(|c| c.contains(':'));
            let v4_disabled = v4.is_empty();
            let v4 = if v4_disabled {
                vec!["0.0.0.0/0".to_owned()]
            } else {
                v4
            };
            let v6_disabled = v6.is_empty();
            let v6 = if v6_disabled {
                vec!["::/0".to_owned()]
            } else {
                v6
            };
            m.add(rule(
                ctx,
                id,
                &Source::Ranges(v4),
                targets,
                allow,
                v4_disabled,
            ));
            m.add(rule(
                ctx,
                &v6_id,
                &Source::Ranges(v6),
                targets,
                &v6_allow,
                v6_disabled,
            ));
        }
        Source::Tags(tags) => {
            m.add(rule(
                ctx,
                id,
                &Source::Tags(tags.clone()),
                targets,
                allow,
                false,
            ));
            m.add(rule(
                ctx,
                &v6_id,
                &Source::Tags(tags),
                targets,
                &v6_allow,
                false,
            ));
        }
    }
}

fn tcp(port: impl ToString) -> Allow {
    ("tcp", vec![port.to_string()])
}

/// Every protocol between cluster members (`ipip` too with Calico).
fn all_protocols(ctx: &GceModelContext) -> Vec<Allow> {
    let mut v: Vec<Allow> = ["tcp", "udp", "icmp", "esp", "ah", "sctp"]
        .into_iter()
        .map(|p| (p, Vec::new()))
        .collect();
    if ctx.cluster.spec.networking.calico.is_some() {
        v.push(("ipip", Vec::new()));
    }
    v
}

fn list(v: &Option<Vec<String>>) -> Vec<String> {
    v.clone().unwrap_or_default()
}

/// Whether kOps manages Cilium's etcd (`networking.cilium.etcdManaged`).
pub(crate) fn cilium_etcd_managed(ctx: &GceModelContext) -> bool {
    ctx.cluster
        .spec
        .networking
        .cilium
        .as_ref()
        .and_then(|c| c.etcd_managed)
        .unwrap_or(false)
}

/// The NodePort range (`kubeAPIServer.serviceNodePortRange`, default 30000-32767).
fn node_port_range(ctx: &GceModelContext) -> String {
    ctx.cluster
        .spec
        .kube_api_server
        .as_ref()
        .and_then(|k| k.service_node_port_range.clone())
        .unwrap_or_else(|| "30000-32767".to_owned())
}

pub(crate) fn build(ctx: &GceModelContext, m: &mut GceModel) -> Result<()> {
    let spec = &ctx.cluster.spec;
    let node = vec![ctx.tag("node")];
    let cpm = ctx.control_plane_and_master_tags();
    let all = all_protocols(ctx);
    let has_bastion = ctx.has_role(&InstanceGroupRole::Bastion);

    // External access (external_access.go).
    let ssh = list(&spec.ssh_access);
    if has_bastion {
        let bastion = vec![ctx.tag("bastion")];
        add_pair(
            ctx,
            m,
            "ssh-external-to-bastion",
            Source::Ranges(ssh),
            &bastion,
            &[tcp(22)],
        );
        add_pair(
            ctx,
            m,
            "bastion-to-master-ssh",
            Source::Tags(bastion.clone()),
            &cpm,
            &[tcp(22)],
        );
        add_pair(
            ctx,
            m,
            "bastion-to-node-ssh",
            Source::Tags(bastion),
            &node,
            &[tcp(22)],
        );
    } else {
        add_pair(
            ctx,
            m,
            "ssh-external-to-master",
            Source::Ranges(ssh.clone()),
            &cpm,
            &[tcp(22)],
        );
        add_pair(
            ctx,
            m,
            "ssh-external-to-node",
            Source::Ranges(ssh),
            &node,
            &[tcp(22)],
        );
    }
    let range = node_port_range(ctx);
    add_pair(
        ctx,
        m,
        "nodeport-external-to-node",
        Source::Ranges(list(&spec.node_port_access)),
        &node,
        &[("tcp", vec![range.clone()]), ("udp", vec![range])],
    );
    if !ctx.has_api_lb() {
        add_pair(
            ctx,
            m,
            "kubernetes-master-https",
            Source::Ranges(list(&spec.api.access)),
            &cpm,
            &[tcp(443)],
        );
    }

    // Between the cluster's roles (firewall.go).
    add_single(
        ctx,
        m,
        "node-to-node",
        Source::Tags(node.clone()),
        &node,
        &all,
    );
    add_single(
        ctx,
        m,
        "master-to-master",
        Source::Tags(cpm.clone()),
        &cpm,
        &all,
    );
    add_single(
        ctx,
        m,
        "master-to-node",
        Source::Tags(cpm.clone()),
        &node,
        &all,
    );
    let mut to_master: Vec<Allow> = [443, 10250, 3988, 10257, 10259, 10249, 2382, 2384, 9100]
        .into_iter()
        .map(tcp)
        .collect();
    if spec.networking.calico.is_some() {
        to_master.push(("ipip", Vec::new()));
        to_master.push(tcp(179));
    }
    if spec.networking.cilium.is_some() {
        to_master.push(("udp", vec!["8472".to_owned()]));
        if cilium_etcd_managed(ctx) {
            to_master.push(tcp(4003));
        }
    }
    add_single(
        ctx,
        m,
        "node-to-master",
        Source::Tags(node.clone()),
        &cpm,
        &to_master,
    );

    // Pod ranges reaching nodes and the API (IP aliases, kubenet).
    let aliases = super::network::ip_aliases(ctx);
    if let Some(pods) = spec.networking.pod_cidr.clone()
        && (aliases || spec.networking.kubenet.is_some())
        && !ctx.is_ipv6_only()
    {
        if aliases {
            add_single(
                ctx,
                m,
                "pod-cidrs-to-https-api",
                Source::Ranges(vec![pods.clone()]),
                &ctx.control_plane_tags(),
                &[tcp(443)],
            );
        }
        add_pair(
            ctx,
            m,
            "pod-cidrs-to-node",
            Source::Ranges(vec![pods]),
            &node,
            &all,
        );
    }
    Ok(())
}
