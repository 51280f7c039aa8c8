//! Conversions between [`crate::v1alpha2`] and the internal layout.

use std::collections::BTreeMap;

use super::generated::{
    copy_clusterspec_to_internal, copy_clusterspec_to_v1alpha2, copy_instancegroupspec_to_internal,
    copy_instancegroupspec_to_v1alpha2,
};
use super::*;
use crate::{Error, Result};

fn conversion_error(path: &str, message: impl Into<String>) -> Error {
    Error::Conversion {
        path: path.to_string(),
        message: message.into(),
    }
}

fn rename_key<V: Clone>(
    map: &Option<BTreeMap<String, V>>,
    from: &str,
    to: &str,
) -> Option<BTreeMap<String, V>> {
    map.as_ref().map(|m| {
        m.iter()
            .map(|(k, v)| {
                (
                    if k == from { to.to_string() } else { k.clone() },
                    v.clone(),
                )
            })
            .collect()
    })
}

impl TryFrom<&v1alpha2::Cluster> for Cluster {
    type Error = Error;

    fn try_from(c: &v1alpha2::Cluster) -> Result<Self> {
        Ok(Cluster {
            metadata: c.metadata.clone(),
            spec: cluster_spec_to_internal(&c.spec)?,
        })
    }
}

impl TryFrom<v1alpha2::Cluster> for Cluster {
    type Error = Error;

    fn try_from(c: v1alpha2::Cluster) -> Result<Self> {
        Cluster::try_from(&c)
    }
}

impl From<&Cluster> for v1alpha2::Cluster {
    fn from(c: &Cluster) -> Self {
        v1alpha2::Cluster {
            metadata: c.metadata.clone(),
            spec: cluster_spec_to_v1alpha2(&c.spec),
            ..v1alpha2::Cluster::default()
        }
    }
}

impl From<Cluster> for v1alpha2::Cluster {
    fn from(c: Cluster) -> Self {
        v1alpha2::Cluster::from(&c)
    }
}

impl From<&v1alpha2::InstanceGroup> for InstanceGroup {
    fn from(ig: &v1alpha2::InstanceGroup) -> Self {
        InstanceGroup {
            metadata: ig.metadata.clone(),
            spec: instance_group_spec_to_internal(&ig.spec),
        }
    }
}

impl From<v1alpha2::InstanceGroup> for InstanceGroup {
    fn from(ig: v1alpha2::InstanceGroup) -> Self {
        InstanceGroup::from(&ig)
    }
}

impl From<&InstanceGroup> for v1alpha2::InstanceGroup {
    fn from(ig: &InstanceGroup) -> Self {
        v1alpha2::InstanceGroup {
            metadata: ig.metadata.clone(),
            spec: instance_group_spec_to_v1alpha2(&ig.spec),
            ..v1alpha2::InstanceGroup::default()
        }
    }
}

impl From<InstanceGroup> for v1alpha2::InstanceGroup {
    fn from(ig: InstanceGroup) -> Self {
        v1alpha2::InstanceGroup::from(&ig)
    }
}

fn cluster_spec_to_internal(a: &v1alpha2::ClusterSpec) -> Result<ClusterSpec> {
    let mut b = ClusterSpec::default();
    copy_clusterspec_to_internal(a, &mut b);

    // Fields kOps does not read at the etcd-cluster level are dropped, as kOps drops them.
    for e in b.etcd_clusters.iter_mut().flatten() {
        e.type_ = None;
        e.volume_size = None;
        e.volume_iops = None;
        e.volume_throughput = None;
        e.volume_type = None;
    }
    b.external_policies = rename_key(&a.external_policies, "master", "control-plane");
    b.additional_policies = rename_key(&a.additional_policies, "master", "control-plane");

    b.config_store = ConfigStoreSpec {
        base: a.config_base.clone(),
        keypairs: a.key_store.clone(),
        secrets: a.secret_store.clone(),
    };

    let provider = match a.cloud_provider.as_deref() {
        None | Some("") => None,
        Some(s) => Some(CloudProvider::parse(s).ok_or_else(|| {
            conversion_error(
                "spec.cloudProvider",
                format!(
                    "unsupported value {s:?}: supported values are aws, azure, digitalocean, gce, hetzner, linode, openstack, scaleway"
                ),
            )
        })?),
    };
    let mut cp = CloudProviderSpec::default();
    match provider {
        Some(CloudProvider::Aws) => cp.aws = Some(AwsSpec::default()),
        Some(CloudProvider::Gce) => {
            cp.gce = Some(GceSpec {
                project: a.project.clone(),
                ..GceSpec::default()
            })
        }
        Some(CloudProvider::Azure) => cp.azure = Some(OtherCloudSpec {}),
        Some(CloudProvider::DigitalOcean) => cp.digitalocean = Some(OtherCloudSpec {}),
        Some(CloudProvider::Hetzner) => cp.hetzner = Some(OtherCloudSpec {}),
        Some(CloudProvider::OpenStack) => cp.openstack = Some(OtherCloudSpec {}),
        Some(CloudProvider::Scaleway) => cp.scaleway = Some(OtherCloudSpec {}),
        Some(CloudProvider::Linode) => cp.linode = Some(OtherCloudSpec {}),
        None => {}
    }

    // Provider-specific knobs move out of cloudConfig; the rest stays there.
    if let Some(cc) = &a.cloud_config {
        let mut rest = cc.clone();
        macro_rules! to_aws {
            ($src:ident, $dst:ident, $wire:literal) => {
                if let Some(v) = rest.$src.take() {
                    let aws = cp.aws.as_mut().ok_or_else(|| {
                        conversion_error(
                            concat!("spec.cloudConfig.", $wire),
                            "only supported on AWS (cloudProvider: aws)",
                        )
                    })?;
                    aws.$dst = Some(v);
                }
            };
        }
        macro_rules! to_gce {
            ($src:ident, $dst:ident, $wire:literal) => {
                if let Some(v) = rest.$src.take() {
                    let gce = cp.gce.as_mut().ok_or_else(|| {
                        conversion_error(
                            concat!("spec.cloudConfig.", $wire),
                            "only supported on GCE (cloudProvider: gce)",
                        )
                    })?;
                    gce.$dst = Some(v);
                }
            };
        }
        to_aws!(aws_ebscsi_driver, ebs_csi_driver, "awsEBSCSIDriver");
        to_aws!(
            disable_security_group_ingress,
            disable_security_group_ingress,
            "disableSecurityGroupIngress"
        );
        to_aws!(elb_security_group, elb_security_group, "elbSecurityGroup");
        to_aws!(
            nlb_security_group_mode,
            nlb_security_group_mode,
            "nlbSecurityGroupMode"
        );
        to_aws!(node_ip_families, node_ip_families, "nodeIPFamilies");
        to_aws!(
            spotinst_orientation,
            spotinst_orientation,
            "spotinstOrientation"
        );
        to_aws!(spotinst_product, spotinst_product, "spotinstProduct");
        to_aws!(
            use_ip_based_node_names,
            use_ip_based_node_names,
            "useIPBasedNodeNames"
        );
        to_gce!(gce_service_account, service_account, "gceServiceAccount");
        to_gce!(
            gce_use_startup_script,
            use_startup_script,
            "gceUseStartupScript"
        );
        to_gce!(gcp_pdcsi_driver, pd_csi_driver, "gcpPDCSIDriver");
        to_gce!(multizone, multizone, "multizone");
        to_gce!(node_tags, node_tags, "nodeTags");
        to_gce!(
            node_instance_prefix,
            node_instance_prefix,
            "nodeInstancePrefix"
        );
        b.cloud_config = Some(rest);
    }
    macro_rules! top_to_aws {
        ($src:ident, $dst:ident, $wire:literal) => {
            if let Some(v) = &a.$src {
                let aws = cp.aws.as_mut().ok_or_else(|| {
                    conversion_error(
                        concat!("spec.", $wire),
                        "only supported on AWS (cloudProvider: aws)",
                    )
                })?;
                aws.$dst = Some(v.clone());
            }
        };
    }
    top_to_aws!(
        node_termination_handler,
        node_termination_handler,
        "nodeTerminationHandler"
    );
    top_to_aws!(
        aws_load_balancer_controller,
        load_balancer_controller,
        "awsLoadBalancerController"
    );
    top_to_aws!(warm_pool, warm_pool, "warmPool");
    top_to_aws!(
        pod_identity_webhook,
        pod_identity_webhook,
        "podIdentityWebhook"
    );
    b.cloud_provider = cp;

    let n = a.networking.clone().unwrap_or_default();
    b.networking = NetworkingSpec {
        network_id: a.network_id.clone(),
        network_cidr: a.network_cidr.clone(),
        additional_network_cidrs: a.additional_network_cidrs.clone(),
        subnets: a.subnets.clone(),
        tag_subnets: a.disable_subnet_tags.map(|d| !d),
        topology: a.topology.as_ref().map(|t| TopologySpec {
            dns: t.dns.as_ref().and_then(|d| d.type_.clone()),
            bastion: t.bastion.clone(),
            masters: t.masters.clone(),
            nodes: t.nodes.clone(),
        }),
        egress_proxy: a.egress_proxy.clone(),
        non_masquerade_cidr: a.non_masquerade_cidr.clone(),
        pod_cidr: a.pod_cidr.clone(),
        service_cluster_ip_range: a.service_cluster_ip_range.clone(),
        isolate_control_plane: a.isolate_masters,
        amazonvpc: n.amazonvpc,
        calico: n.calico,
        canal: n.canal,
        cilium: n.cilium,
        classic: n.classic,
        cni: n.cni,
        external: n.external,
        flannel: n.flannel,
        gce: n.gce,
        kindnet: n.kindnet,
        kopeio: n.kopeio,
        kubenet: n.kubenet,
        kuberouter: n.kuberouter,
        lyftvpc: n.lyftvpc,
        romana: n.romana,
        weave: n.weave,
    };

    let api = a.api.clone().unwrap_or_default();
    b.api = ApiSpec {
        dns: api.dns,
        load_balancer: api.load_balancer,
        public_name: a.master_public_name.clone(),
        additional_sans: a.additional_sans.clone(),
        access: a.kubernetes_api_access.clone(),
    };
    Ok(b)
}

fn cluster_spec_to_v1alpha2(b: &ClusterSpec) -> v1alpha2::ClusterSpec {
    let mut a = v1alpha2::ClusterSpec::default();
    copy_clusterspec_to_v1alpha2(b, &mut a);

    a.external_policies = rename_key(&b.external_policies, "control-plane", "master");
    a.additional_policies = rename_key(&b.additional_policies, "control-plane", "master");

    a.config_base = b.config_store.base.clone();
    a.key_store = b.config_store.keypairs.clone();
    a.secret_store = b.config_store.secrets.clone();

    let cp = &b.cloud_provider;
    a.cloud_provider = cp.set().first().map(|p| p.as_str().to_string());
    let mut cc = b.cloud_config.clone();
    macro_rules! back {
        ($from:expr, $src:ident, $dst:ident) => {
            if let Some(v) = &$from.$src {
                cc.get_or_insert_with(Default::default).$dst = Some(v.clone());
            }
        };
    }
    if let Some(aws) = &cp.aws {
        back!(aws, ebs_csi_driver, aws_ebscsi_driver);
        back!(
            aws,
            disable_security_group_ingress,
            disable_security_group_ingress
        );
        back!(aws, elb_security_group, elb_security_group);
        back!(aws, nlb_security_group_mode, nlb_security_group_mode);
        back!(aws, node_ip_families, node_ip_families);
        back!(aws, spotinst_orientation, spotinst_orientation);
        back!(aws, spotinst_product, spotinst_product);
        back!(aws, use_ip_based_node_names, use_ip_based_node_names);
        a.node_termination_handler = aws.node_termination_handler.clone();
        a.aws_load_balancer_controller = aws.load_balancer_controller.clone();
        a.warm_pool = aws.warm_pool.clone();
        a.pod_identity_webhook = aws.pod_identity_webhook.clone();
    }
    if let Some(gce) = &cp.gce {
        a.project = gce.project.clone();
        back!(gce, service_account, gce_service_account);
        back!(gce, use_startup_script, gce_use_startup_script);
        back!(gce, pd_csi_driver, gcp_pdcsi_driver);
        back!(gce, multizone, multizone);
        back!(gce, node_tags, node_tags);
        back!(gce, node_instance_prefix, node_instance_prefix);
    }
    a.cloud_config = cc;

    let n = &b.networking;
    a.network_id = n.network_id.clone();
    a.network_cidr = n.network_cidr.clone();
    a.additional_network_cidrs = n.additional_network_cidrs.clone();
    a.subnets = n.subnets.clone();
    a.disable_subnet_tags = n.tag_subnets.map(|t| !t);
    a.topology = n.topology.as_ref().map(|t| v1alpha2::TopologySpec {
        dns: t.dns.as_ref().map(|d| v1alpha2::DNSSpec {
            type_: Some(d.clone()),
        }),
        bastion: t.bastion.clone(),
        masters: t.masters.clone(),
        nodes: t.nodes.clone(),
    });
    a.egress_proxy = n.egress_proxy.clone();
    a.non_masquerade_cidr = n.non_masquerade_cidr.clone();
    a.pod_cidr = n.pod_cidr.clone();
    a.service_cluster_ip_range = n.service_cluster_ip_range.clone();
    a.isolate_masters = n.isolate_control_plane;
    let cni = v1alpha2::NetworkingSpec {
        amazonvpc: n.amazonvpc.clone(),
        calico: n.calico.clone(),
        canal: n.canal.clone(),
        cilium: n.cilium.clone(),
        classic: n.classic.clone(),
        cni: n.cni.clone(),
        external: n.external.clone(),
        flannel: n.flannel.clone(),
        gce: n.gce.clone(),
        kindnet: n.kindnet.clone(),
        kopeio: n.kopeio.clone(),
        kubenet: n.kubenet.clone(),
        kuberouter: n.kuberouter.clone(),
        lyftvpc: n.lyftvpc.clone(),
        romana: n.romana.clone(),
        weave: n.weave.clone(),
    };
    a.networking = (cni != v1alpha2::NetworkingSpec::default()).then_some(cni);

    let api = v1alpha2::APISpec {
        dns: b.api.dns.clone(),
        load_balancer: b.api.load_balancer.clone(),
    };
    a.api = (api != v1alpha2::APISpec::default()).then_some(api);
    a.master_public_name = b.api.public_name.clone();
    a.additional_sans = b.api.additional_sans.clone();
    a.kubernetes_api_access = b.api.access.clone();
    a
}

fn instance_group_spec_to_internal(a: &v1alpha2::InstanceGroupSpec) -> InstanceGroupSpec {
    let mut b = InstanceGroupSpec::default();
    copy_instancegroupspec_to_internal(a, &mut b);
    b.role = a.role.as_deref().map(InstanceGroupRole::parse);
    let rv = InstanceRootVolumeSpec {
        size: a.root_volume_size,
        type_: a.root_volume_type.clone(),
        iops: a.root_volume_iops,
        throughput: a.root_volume_throughput,
        optimization: a.root_volume_optimization,
        encryption: a.root_volume_encryption,
        encryption_key: a.root_volume_encryption_key.clone(),
    };
    b.root_volume = (rv != InstanceRootVolumeSpec::default()).then_some(rv);
    b
}

fn instance_group_spec_to_v1alpha2(b: &InstanceGroupSpec) -> v1alpha2::InstanceGroupSpec {
    let mut a = v1alpha2::InstanceGroupSpec::default();
    copy_instancegroupspec_to_v1alpha2(b, &mut a);
    a.role = b.role.as_ref().map(|r| r.as_v1alpha2().to_string());
    if let Some(rv) = &b.root_volume {
        a.root_volume_size = rv.size;
        a.root_volume_type = rv.type_.clone();
        a.root_volume_iops = rv.iops;
        a.root_volume_throughput = rv.throughput;
        a.root_volume_optimization = rv.optimization;
        a.root_volume_encryption = rv.encryption;
        a.root_volume_encryption_key = rv.encryption_key.clone();
    }
    a
}
