//! kOps' Hetzner `LoadBalancerModelBuilder`: an `lb11` named `api.<cluster>` in the first
//! group's location, attached to the cluster's network, forwarding TCP 443 (the API
//! server) and 3988 (kops-controller) to the control plane's private addresses, which it
//! selects by label. kOps builds it for every Hetzner cluster, also one whose spec has no
//! `api.loadBalancer` (whose firewall then also opens 443 to `api.access`), and so does
//! this builder: the same spec makes the same cloud with either tool.

use kops_tasks::resource::{Attr, FindBy};

use super::cloud::{CLUSTER_LABEL, HetznerResourceType as R, INSTANCE_ROLE_LABEL, label_selector};
use super::{HetznerModel, HetznerModelContext};
use crate::error::{Result, invalid};

/// The load balancer type kOps creates.
const LOAD_BALANCER_TYPE: &str = "lb11";
/// The API server's port.
const KUBE_API_SERVER_PORT: i64 = 443;
/// kops-controller's port.
const KOPS_CONTROLLER_PORT: i64 = 3988;

pub(crate) fn build(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    let Some(first) = ctx.groups.first() else {
        return Err(invalid(
            "instance groups",
            "the API load balancer's location is the first instance group's: there is none",
        ));
    };
    let name = ctx.scoped("api");
    let lb = ctx
        .task("LoadBalancer", &name, R::LoadBalancer)
        .named(&name)
        .attr("load_balancer_type", LOAD_BALANCER_TYPE)
        .attr("location", ctx.location_of(first)?)
        .tags(ctx.cluster_labels());
    let lb_key = lb.task_key().clone();
    m.add(lb);
    let under_lb = |match_attrs: &[&str]| FindBy::Parent {
        parent_attr: "load_balancer_id".into(),
        match_attrs: match_attrs.iter().map(|a| (*a).to_owned()).collect(),
    };
    m.add(
        ctx.task("LoadBalancerNetwork", &name, R::LoadBalancerNetwork)
            .attr("load_balancer_id", Attr::id(&lb_key))
            .attr("network_id", Attr::id(&ctx.network_key()))
            .find_by(under_lb(&["network_id"])),
    );
    for port in [KUBE_API_SERVER_PORT, KOPS_CONTROLLER_PORT] {
        m.add(
            ctx.task(
                "LoadBalancerService",
                format!("{name}-tcp-{port}"),
                R::LoadBalancerService,
            )
            .attr("destination_port", Attr::Int(port))
            .attr("listen_port", Attr::Int(port))
            .attr("load_balancer_id", Attr::id(&lb_key))
            .attr("protocol", "tcp")
            .find_by(under_lb(&["listen_port"])),
        );
    }
    let selector = label_selector([
        (CLUSTER_LABEL, ctx.name()),
        (INSTANCE_ROLE_LABEL, "ControlPlane"),
    ]);
    m.add(
        ctx.task("LoadBalancerTarget", &name, R::LoadBalancerTarget)
            .attr("label_selector", selector)
            .attr("load_balancer_id", Attr::id(&lb_key))
            .attr("type", "label_selector")
            .attr("use_private_ip", true)
            .find_by(under_lb(&["label_selector"])),
    );
    Ok(())
}
