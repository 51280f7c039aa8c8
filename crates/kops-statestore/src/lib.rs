//! kOps-compatible state store for kops-rs.
//!
//! The state store is the source of truth of every cluster kops-rs manages.
//! This crate has two layers:
//!
//! * a path-addressed blob store, [`Store`], with optimistic concurrency:
//!   every read returns a [`Version`], and a write can be
//!   [`PutMode::CreateIfAbsent`] or [`PutMode::UpdateIfVersionMatches`], so
//!   a lost race is an error ([`Error::AlreadyExists`] /
//!   [`Error::Precondition`]), never a silent overwrite. Backends: memory
//!   (`memfs://`), local files (`file://`), S3 (`s3://`, feature `s3`) and
//!   GCS (`gs://`, feature `gcs`); [`open`] picks one from a URL;
//! * a cluster registry, [`registry::Registry`], that reads and writes
//!   kOps' own layout (`<cluster>/config`, `<cluster>/instancegroup/<name>`,
//!   `pki/`, `secrets/`, ...) so a store written by kOps reads here and the
//!   other way round, plus a lock for mutating operations and a history of
//!   cluster specs.
//!
//! # Modules
//! * [`store`]: the [`Store`] trait, [`StoreExt`] conveniences, value types.
//! * [`memory`], [`local`], [`s3`], [`gcs`]: the backends.
//! * [`aws`] (feature `s3`): what every AWS client of kops-rs shares: the SDK's
//!   environment loaded once ([`aws::AwsEnv`]: region, endpoint, one credentials
//!   provider and identity cache), where credentials come from, and when a failure
//!   means missing or rejected credentials.
//! * [`prefix`]: [`PrefixStore`], a decorator rooting a store under a prefix.
//! * [`url`]: [`open`] and [`StoreUrl`].
//! * [`lock`]: the advisory [`Lock`] object and the injected [`Clock`].
//! * [`registry`]: clusters, instance groups, keysets, SSH keys, secrets, history.
//! * [`keyset`]: kOps' `Keyset` and secret formats.
//! * `conformance` (feature `conformance`): the backend conformance suite.
//!
//! # Features
//! * `s3` (default): the S3 backend, through aws-sdk-s3 (one rustls stack).
//! * `gcs` (default): the GCS backend, through the GCS JSON API over reqwest,
//!   with Google credentials from `google-cloud-auth`.
//! * `conformance`: the conformance suite, for testing other backends.
//!
//! Consumers that only need memory and file stores can use
//! `default-features = false` and compile no cloud SDK. No SDK type appears
//! in the public API; clients are configured through [`s3::S3Config`] and
//! [`gcs::GcsConfig`], which read nothing from the environment unless built
//! with their `from_env` constructors ([`StoreOptions::from_env_for`] reads
//! only what one URL needs): kOps' `S3_ENDPOINT`, `S3_REGION`,
//! `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY` for an S3-compatible store,
//! else the AWS SDK's chain; `STORAGE_EMULATOR_HOST`, else Google's
//! application-default credentials. An S3 store talks to its bucket in the
//! bucket's region, found on first use as kOps finds it (see [`s3`]), and
//! [`Store::region`] names it. Missing or rejected credentials are
//! [`Error::Unauthenticated`], a missing bucket [`Error::BucketNotFound`].
//!
//! # Example
//! ```
//! use bytes::Bytes;
//! use kops_statestore::{PutOptions, StoreOptions, open};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> kops_statestore::Result<()> {
//! let store = open("memfs://state", &StoreOptions::default())?;
//! let v1 = store.put("c1/kops-version.txt", Bytes::from("1.30.0"), PutOptions::create()).await?;
//! // A second writer holding an old version loses instead of overwriting.
//! store.put("c1/kops-version.txt", Bytes::from("1.31.0"), PutOptions::update(v1.clone())).await?;
//! let stale = store.put("c1/kops-version.txt", Bytes::from("1.29.0"), PutOptions::update(v1)).await;
//! assert!(stale.unwrap_err().is_conflict());
//! # Ok(())
//! # }
//! ```
//!
//! # Stability
//! Pre-1.0: the [`Store`] trait and the on-disk layout written by the
//! registry (kOps' layout) are meant to stay; helper types may change.
//! Option structs and error enums are `#[non_exhaustive]`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(unreachable_pub)]
pub mod error;
pub mod etcd_backups;
pub mod keyset;
pub mod local;
pub mod lock;
pub mod memory;
pub mod prefix;
pub mod registry;
pub mod restore;
pub mod store;
pub mod url;

#[cfg(feature = "s3")]
pub mod aws;
#[cfg(feature = "gcs")]
pub mod gcs;
#[cfg(feature = "s3")]
pub mod s3;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use error::{Error, Result};
pub use local::LocalStore;
pub use lock::{Clock, Lock, LockInfo, LockRequest, SystemClock};
pub use memory::MemoryStore;
pub use prefix::PrefixStore;
pub use registry::{Registry, Versioned};
pub use store::{
    CheckStatus, DeleteOptions, GetResult, ObjectMeta, ObjectVersion, PutMode, PutOptions,
    SafetyCheck, Store, StoreExt, Version, Warning,
};
pub use url::{StoreOptions, StoreUrl, open};
