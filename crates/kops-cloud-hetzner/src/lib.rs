//! `kops-cloud-hetzner` is kops-rs' Hetzner Cloud: its vocabulary and trait, laid out as
//! `kops-cloud-gce` is.
//!
//! With `default-features = false` the crate compiles no HTTP client: it is the Hetzner
//! resource types
//! ([`HetznerResourceType`] and its table of facts, [`cloud::TypeFacts`]), kOps' labels,
//! the locations kOps knows with their network zones, the hash kOps labels servers with,
//! and the [`HetznerCloud`] trait the model's tasks talk to, over the cloud-neutral
//! [`kops_tasks::resource`] layer. That is what `kops-model` and `kops-mock` depend on.
//!
//! - [`rest`] (feature `rest`, default): [`rest::RestHetzner`], a thin client of the
//!   Hetzner Cloud API over reqwest (the workspace's HTTP client): Hetzner publishes no
//!   Rust SDK, and the ten collections and their actions kOps uses are few and stable.
//! - `conformance` (feature `conformance`): the suite every [`HetznerCloud`] must pass,
//!   run against the mock and against [`rest::RestHetzner`] on the fake of the hcloud API
//!   (`kops-mock`'s `tests/hetzner_conformance.rs`).
//!
//! # Example
//!
//! ```
//! use kops_cloud_hetzner::HetznerResourceType;
//! use kops_cloud_hetzner::cloud::{CLUSTER_LABEL, ListQuery, TagFilter, network_zone};
//!
//! // Every server of a cluster, in one labelled query.
//! let q = ListQuery::new(HetznerResourceType::Server)
//!     .with_tag(TagFilter::equals(CLUSTER_LABEL, "demo.example.com"));
//! assert_eq!(q.resource_type.terraform_type(), "hcloud_server");
//! assert_eq!(network_zone("fsn1"), Some("eu-central"));
//! ```
//!
//! # Stability
//!
//! Pre-1.0. The vocabulary's data types are `#[non_exhaustive]` so they can grow without
//! breaking callers.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
pub mod cloud;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "rest")]
pub mod rest;

pub use cloud::{HetznerCloud, HetznerCloudExt, HetznerResourceType};
