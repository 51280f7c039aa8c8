//! kOps' Hetzner `ExternalAccessModelBuilder`: a firewall for the control plane and one
//! for the nodes, each applied to its servers by label. SSH from `spec.sshAccess`; the
//! API on 443 from `spec.api.access` when the API has no load balancer; node ports (TCP
//! and UDP) from `spec.nodePortAccess`.

use kops_tasks::resource::Attr;

use super::cloud::{
    CLUSTER_LABEL, FIREWALL_ROLE_LABEL, HetznerResourceType as R, INSTANCE_ROLE_LABEL,
    label_selector,
};
use super::{HetznerModel, HetznerModelContext};
use crate::error::{Result, invalid};

/// kOps' default node port range (`--service-node-port-range`).
const NODE_PORTS: &str = "30000-32767";

/// One inbound rule: `protocol` on `port` from `sources` (each checked as a CIDR, the
/// error naming `field`).
fn rule(
    field: &str,
    sources: &[String],
    protocol: &str,
    port: &str,
) -> Result<Vec<(String, Attr)>> {
    for (i, s) in sources.iter().enumerate() {
        if s.parse::<ipnet::IpNet>().is_err() {
            return Err(invalid(
                format!("{field}[{i}]"),
                format!("{s:?} is not a CIDR"),
            ));
        }
    }
    Ok(vec![
        ("direction".to_owned(), Attr::s("in")),
        ("port".to_owned(), Attr::s(port)),
        ("protocol".to_owned(), Attr::s(protocol)),
        ("source_ips".to_owned(), Attr::strs(sources.iter().cloned())),
    ])
}

/// The node port range of the API server's `serviceNodePortRange`, or kOps' default.
fn node_ports(ctx: &HetznerModelContext) -> String {
    ctx.cluster
        .spec
        .kube_api_server
        .as_ref()
        .and_then(|a| a.service_node_port_range.clone())
        .unwrap_or_else(|| NODE_PORTS.to_owned())
}

pub(crate) fn build(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    let spec = &ctx.cluster.spec;
    let ssh = spec.ssh_access.clone().unwrap_or_default();
    let mut control_plane = vec![rule("spec.sshAccess", &ssh, "tcp", "22")?];
    let mut nodes = vec![rule("spec.sshAccess", &ssh, "tcp", "22")?];
    if !ctx.has_api_lb() {
        let api = spec.api.access.clone().unwrap_or_default();
        control_plane.push(rule("spec.api.access", &api, "tcp", "443")?);
    }
    let node_port_access = spec.node_port_access.clone().unwrap_or_default();
    if !node_port_access.is_empty() {
        let ports = node_ports(ctx);
        for protocol in ["tcp", "udp"] {
            nodes.push(rule(
                "spec.nodePortAccess",
                &node_port_access,
                protocol,
                &ports,
            )?);
        }
    }
    for (role, instance_role, rules) in [
        ("control-plane", "ControlPlane", control_plane),
        ("nodes", "Node", nodes),
    ] {
        let name = ctx.scoped(role);
        let selector = label_selector([
            (CLUSTER_LABEL, ctx.name()),
            (INSTANCE_ROLE_LABEL, instance_role),
        ]);
        let mut labels = ctx.cluster_labels();
        labels.insert(FIREWALL_ROLE_LABEL.to_owned(), role.to_owned());
        m.add(
            ctx.task("Firewall", &name, R::Firewall)
                .named(&name)
                .attr(
                    "apply_to",
                    Attr::Blocks(vec![vec![("label_selector".to_owned(), Attr::s(selector))]]),
                )
                .attr("rule", Attr::Blocks(rules))
                .tags(labels),
        );
    }
    Ok(())
}
