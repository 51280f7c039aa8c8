//! `kops-model` turns a kOps cluster specification into the graph of cloud tasks that
//! realise it, with kOps' resource names, tags and ordering, and runs kOps' cluster
//! workflows over it: `create cluster`, `update cluster` and `delete cluster`.
//!
//! # Entry points
//!
//! - [`new_cluster`]: the cluster and instance groups `kops create cluster` stores, from
//!   typed [`NewClusterOptions`] (kOps' `NewCluster`).
//! - [`complete`]: convert, populate and validate a stored spec (kOps'
//!   `PopulateClusterSpec`).
//! - [`aws::discover`]: look up in the cloud what the model needs (zones of shared
//!   subnets, DNS zones, the shared network, account, images, gateways) and return the
//!   [`aws::ModelContext`].
//! - [`aws::UpdateCluster`]: plan, apply (holding the state-store lock, deleting orphans
//!   in waves, writing the completed spec and version) or render Terraform (kOps'
//!   `ApplyClusterCmd`).
//! - [`aws::delete_cluster`]: delete everything a cluster owns in the cloud.
//! - For GCE, the same three: [`gce::discover`](fn@gce::discover), [`gce::UpdateCluster`]
//!   and [`gce::delete_cluster`]; for Hetzner, [`hetzner::discover`](fn@hetzner::discover)
//!   (then [`hetzner::HetznerModelContext::with_token`]), [`hetzner::UpdateCluster`] and
//!   [`hetzner::delete_cluster`]. Every cloud's `UpdateCluster` takes [`UpdateOptions`] and
//!   [`ApplyOptions`] and plans an [`UpdatePlan`].
//! - [`UpdateOptions`] limits an update as kOps' flags do: to some instance groups' machines
//!   ([`UpdateOptions::with_instance_groups`], `with_instance_group_roles`: how a
//!   reconcile updates the control plane before the nodes) or to one [`Phase`]. With
//!   [`aws::DiscoverOptions::with_control_plane_version`] an update during a Kubernetes
//!   upgrade keeps the nodes' kubelets no newer than the API server.
//! - `UpdateCluster::assets` ([`aws::UpdateCluster::assets`]): every image and file the
//!   machines download, canonical and remapped ([`assets`], kOps' `get assets`).
//! - `assets::AssetCopier` (feature `copy`): kOps' `get assets --copy`, images between
//!   registries (the OCI distribution API) and files into the file repository.
//! - `day2` (feature `day2`): export kubeconfig, validate, rolling-update, delete
//!   instance, and the control plane's running version.
//!
//! # Modules
//!
//! - [`cluster`]: the cloud-neutral [`ClusterContext`] every cloud's model reads.
//! - [`template`]: kOps' templating (`kops toolbox template`): a text/template engine
//!   with Sprig's common functions, Helm's `--set` and the deep merge of values.
//! - [`aws`]: the AWS model. [`aws::cloud`] re-exports the AWS vocabulary of
//!   `kops-cloud-aws` (the [`aws::AwsCloud`] trait the AWS tasks use, implemented by
//!   `kops-mock` and by `kops-cloud-aws`' SDK backend, and its plain-data resource types;
//!   the model depends on it without the SDK); [`aws::AwsTask`] is the AWS instance of the
//!   cloud-neutral `kops_tasks::resource::ResourceTask`; [`aws::terraform`] renders a model to a Terraform directory.
//! - The cloud-neutral file contents (nodeup configs, etcd-manager manifests, addons and
//!   the bootstrap channel) are private modules behind the managed-file task each cloud
//!   renders.
//!
//! # Example
//!
//! A cluster's whole life on the in-memory mock cloud (feature `mock`): create, store,
//! plan, apply, plan again, Terraform, delete. `examples/embed.rs` is the same program
//! against AWS as well.
//!
//! ```
//! # #[cfg(feature = "mock")]
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use kops_model::aws::{self, ApplyOptions, DeleteOptions, DiscoverOptions, UpdateCluster};
//! use kops_model::statestore::{MemoryStore, Registry, SystemClock};
//! use kops_model::{DnsType, NewClusterOptions, UpdateOptions, channel, new_cluster};
//!
//! const NAME: &str = "demo.example.com";
//! // A mock AWS account holding the default channel's images.
//! let cloud = channel::mock_aws(Default::default(), &channel::stable())?;
//! // `kops create cluster`: the spec kOps would store (the API behind its load balancer).
//! let options = NewClusterOptions::new(NAME, "memfs://clusters.example.com")
//!     .with_zones(["us-test-1a"])
//!     .with_dns(DnsType::None);
//! let (cluster, groups) = new_cluster(&options)?;
//! // The state store, in kOps' layout.
//! let store = Arc::new(MemoryStore::new());
//! let registry = Registry::new(store.clone(), Arc::new(SystemClock));
//! registry.create_cluster(&cluster).await?;
//! for group in &groups {
//!     registry.create_instance_group(NAME, group).await?;
//! }
//! // `kops update cluster`: discover, plan, apply; a second plan has nothing to do.
//! let discover = DiscoverOptions::default().with_state_store(store, "memfs://clusters.example.com");
//! let ctx = aws::discover(&cloud, &cluster, &groups, &discover).await?;
//! let update = UpdateOptions::default().with_unreadable_config_base(true);
//! let update = UpdateCluster::new(ctx, update)?;
//! let plan = update.plan(&cloud).await?;
//! assert!(plan.plan.has_changes());
//! update.apply(&cloud, &registry, &plan, ApplyOptions::default()).await?;
//! assert!(!update.plan(&cloud).await?.plan.has_changes());
//! // The same cluster as Terraform.
//! let terraform = update.render_terraform().await?;
//! let main = String::from_utf8_lossy(&terraform.files["kubernetes.tf"]).into_owned();
//! assert!(main.contains("resource \"aws_vpc\" \"demo-example-com\""));
//! // `kops delete cluster`: the cloud's objects, then the state.
//! let report = aws::delete_cluster(&cloud, NAME, &DeleteOptions::default()).await?;
//! assert!(!report.deleted.is_empty());
//! registry.delete_cluster(NAME).await?;
//! # Ok(()) }
//! # #[cfg(feature = "mock")]
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(demo())
//! #     .map_err(|e| e.to_string())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Build
//!
//! `cargo add kops-model` (default features: the model, the mock-free AWS and GCE
//! vocabularies, the file and memory state stores) builds 117 crates. Measured from an
//! empty target directory in a scratch crate on the 2-core CI machine (`cargo build
//! --timings`, dev profile, 2026-12-07): 1 min 29 s. The longest units are kops-api
//! (33 s: the generated schema) and aws-lc-sys' build script (32 s, in parallel).
//!
//! The PKI's crypto backend, aws-lc-rs (a C build through `cc`: a C compiler is needed,
//! cmake is not), stays in the default tree. kOps' CAs and certificates use RSA keys,
//! which ring cannot generate. The pure-Rust `rsa` crate's private-key operations are not
//! constant-time (RUSTSEC-2023-0071), which a CA's signing key must not risk. aws-lc-rs
//! is also the backend rustls, the AWS SDK and kube use in this tree, so the
//! `aws-sdk` and `day2` features bring it anyway.
//!
//! # Stability
//!
//! Pre-1.0: the API may change between minor versions. Options and the cloud trait's data
//! types are `#[non_exhaustive]` so they can grow without breaking callers.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]

mod addons;
pub mod assets;
pub mod aws;
pub mod channel;
pub mod cluster;
mod complete;
mod create;
#[cfg(feature = "day2")]
pub mod day2;
mod error;
mod etcd;
mod files;
pub mod gce;
pub mod hetzner;
mod images;
mod ingress;
pub mod nodeup;
pub mod pki;
pub mod secrets;
pub mod template;
mod update;
pub mod upgrade;

// The kops-rs crates this crate's public signatures name, re-exported so that `kops-model`
// is the one dependency an embedder needs (at matching versions by construction).
pub use kops_api as api;
pub use kops_cloud_aws as cloud_aws;
pub use kops_cloud_gce as cloud_gce;
pub use kops_cloud_hetzner as cloud_hetzner;
#[cfg(feature = "mock")]
pub use kops_mock as mock;
pub use kops_statestore as statestore;
pub use kops_tasks as tasks;

pub use cluster::{ClusterContext, DEFAULT_KOPS_RELEASE};
pub use complete::complete;
pub use create::{
    Authorization, Cloud, DnsType, GroupRole, InstanceManager, LoadBalancerType, NewClusterOptions,
    NewInstanceGroupOptions, Topology, new_cluster, new_instance_group, perform_assignments,
};
pub use error::{Error, Result, TaskFailure};
pub use ingress::ApiIngress;
pub use update::{ApplyOptions, Phase, UpdateOptions, UpdatePlan};
