//! The kOps cluster API as plain data: the `kops.k8s.io/v1alpha2` types users
//! write, the internal (hub) layout the rest of kops-rs works on, and the
//! three steps between them: conversion, population (defaulting) and
//! validation.
//!
//! This crate does no I/O and pulls in no async runtime or cloud SDK: callers
//! read files, state-store objects and channel files and hand the bytes in.
//!
//! # Modules
//!
//! - [`manifest`]: multi-document YAML and JSON in and out; strict decoding
//!   with field paths in errors (`spec.networking.foo: unknown field`).
//! - [`v1alpha2`]: the wire types (`Cluster`, `InstanceGroup`,
//!   `SshCredential` and every component struct), camelCase, all optional.
//! - [`internal`]: the hub layout (`networking.*`, `api.*`,
//!   `cloudProvider.aws`, `configStore`, role `ControlPlane`, `rootVolume`)
//!   and the `From`/`TryFrom` conversions with v1alpha2.
//! - [`defaults`]: kOps' `PopulateClusterSpec` / `PopulateInstanceGroupSpec`
//!   for AWS and GCE: networks and subnet CIDRs, etcd, API endpoint, state
//!   locations, component settings, instance-group sizes, machine types,
//!   images and kubelets.
//! - [`channel`]: channel files (images and Kubernetes versions).
//! - [`keyset`]: kOps' `Keyset` (`pki/private/<name>/keyset.yaml`).
//! - [`validation`]: every problem at once, each with its field path.
//! - [`version`]: Kubernetes version parsing.
//! - [`naming`]: kOps' length-limited, hashed object names.
//! - [`schema`]: the v1alpha2 and internal types described as data (JSON
//!   names, docs, shapes) for editors, docs and Terraform providers.
//! - [`yaml`]: kOps' YAML bytes (go-yaml v2 through JSON) and a YAML 1.1 reader.
//!
//! # Example
//!
//! ```
//! use kops_api::channel::Channel;
//! use kops_api::defaults::{populate, PopulateOptions};
//! use kops_api::manifest::{self, Object};
//! use kops_api::{internal, v1alpha2, validation};
//!
//! let text = r#"
//! apiVersion: kops.k8s.io/v1alpha2
//! kind: Cluster
//! metadata: {name: demo.example.com}
//! spec:
//!   cloudProvider: aws
//!   kubernetesVersion: v1.34.0
//!   networking: {cilium: {}}
//!   subnets: [{name: us-east-1a, zone: us-east-1a, type: Public}]
//!   etcdClusters:
//!   - {name: main, etcdMembers: [{name: a, instanceGroup: control-plane}]}
//!   - {name: events, etcdMembers: [{name: a, instanceGroup: control-plane}]}
//! ---
//! apiVersion: kops.k8s.io/v1alpha2
//! kind: InstanceGroup
//! metadata: {name: control-plane}
//! spec: {role: Master, subnets: [us-east-1a]}
//! "#;
//! let channel = Channel::parse(r#"
//! spec:
//!   images:
//!   - {name: example/ubuntu, providerID: aws, architectureID: amd64, kubernetesVersion: ">=1.32.0"}
//! "#)?;
//!
//! // Decode and convert to the internal layout.
//! let mut cluster = None;
//! let mut groups = Vec::new();
//! for object in manifest::parse(text.as_bytes(), "cluster.yaml")? {
//!     match object {
//!         Object::Cluster(c) => cluster = Some(internal::Cluster::try_from(&c)?),
//!         Object::InstanceGroup(ig) => groups.push(internal::InstanceGroup::from(&ig)),
//!         _ => {}
//!     }
//! }
//! let cluster = cluster.expect("the manifest has a cluster");
//!
//! // Complete, validate, and write the completed spec back as v1alpha2.
//! let opts = PopulateOptions::default().with_channel(channel);
//! let (full, groups) = populate(&cluster, &groups, &opts)?;
//! validation::validate_all(&full, &groups).map_err(kops_api::Error::Invalid)?;
//! assert_eq!(full.spec.networking.subnets.as_ref().unwrap()[0].cidr.as_deref(), Some("172.20.0.0/16"));
//! assert_eq!(groups[0].spec.image.as_deref(), Some("example/ubuntu"));
//!
//! let completed = manifest::to_yaml(&[Object::Cluster(v1alpha2::Cluster::from(&full))])?;
//! assert!(completed.contains("kubernetesVersion: \"1.34.0\""));
//! # Ok::<(), kops_api::Error>(())
//! ```
//!
//! # Building a spec in code
//!
//! The schema types are `#[non_exhaustive]`, so that a field kOps adds to its schema is
//! not a breaking change: outside this crate they are built from `Default` (or `new`),
//! then their fields are set.
//!
//! ```
//! use kops_api::v1alpha2::{Cluster, ClusterSubnetSpec, NetworkingSpec};
//!
//! let mut cluster = Cluster::new("demo.example.com");
//! cluster.spec.cloud_provider = Some("aws".into());
//! cluster.spec.kubernetes_version = Some("v1.34.2".into());
//! let mut subnet = ClusterSubnetSpec::default();
//! subnet.name = Some("us-east-1a".into());
//! subnet.zone = Some("us-east-1a".into());
//! subnet.type_ = Some("Public".into());
//! cluster.spec.subnets = Some(vec![subnet]);
//! let mut networking = NetworkingSpec::default();
//! networking.cilium = Some(Default::default());
//! cluster.spec.networking = Some(networking);
//! let yaml = kops_api::manifest::to_yaml(&[kops_api::manifest::Object::Cluster(cluster)])?;
//! assert!(yaml.contains("zone: us-east-1a"));
//! # Ok::<(), kops_api::Error>(())
//! ```
//!
//! # Stability
//!
//! Semver as the workspace README describes (pre-1.0: a breaking change bumps
//! the minor version). The wire format is kOps' `kops.k8s.io/v1alpha2` and
//! changes only as kOps' schema does; [`Error`], option structs and the schema
//! types are `#[non_exhaustive]` so they can grow without breaking callers.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
#![forbid(unsafe_code)]

pub mod channel;
pub mod defaults;
mod error;
pub mod fields;
pub mod internal;
pub mod keyset;
pub mod manifest;
pub mod naming;
pub mod schema;
pub mod v1alpha2;
pub mod validation;
pub mod version;
pub mod yaml;

pub use error::{Error, Result};
