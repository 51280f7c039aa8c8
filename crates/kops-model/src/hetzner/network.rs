//! kOps' Hetzner `NetworkModelBuilder`: the cluster's private network, named as the
//! cluster, over `spec.networking.networkCIDR` with one `cloud` subnet of the same range
//! in the locations' network zone; or a shared network by `spec.networking.networkID`.

use kops_tasks::resource::{Attr, FindBy};

use super::cloud::HetznerResourceType as R;
use super::{HetznerModel, HetznerModelContext};
use crate::error::{Result, invalid};

pub(crate) fn build(ctx: &HetznerModelContext, m: &mut HetznerModel) -> Result<()> {
    let name = ctx.name().to_owned();
    let network = ctx.task("Network", &name, R::Network).named(&name);
    if let Some(id) = ctx.cluster.spec.networking.network_id.clone() {
        m.add(network.shared(id));
        return Ok(());
    }
    let Some(cidr) = ctx.cluster.spec.networking.network_cidr.clone() else {
        return Err(invalid(
            "spec.networking.networkCIDR",
            "required on Hetzner without spec.networking.networkID",
        ));
    };
    m.add(
        network
            .attr("ip_range", cidr.as_str())
            .tags(ctx.cluster_labels()),
    );
    let subnet = format!("{name}-{cidr}");
    m.add(
        ctx.task("NetworkSubnet", &subnet, R::NetworkSubnet)
            .attr("ip_range", cidr.as_str())
            .attr("network_id", Attr::id(&ctx.network_key()))
            .attr("network_zone", ctx.region.as_str())
            .attr("type", "cloud")
            .find_by(FindBy::Parent {
                parent_attr: "network_id".into(),
                match_attrs: vec!["ip_range".into()],
            }),
    );
    Ok(())
}
