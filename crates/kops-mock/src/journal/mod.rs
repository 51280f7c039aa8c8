//! Mock clouds whose state lives in a state store, so that separate processes share one
//! mock cloud.
//!
//! The mocks of this crate live in memory, but a tool built on kops-rs often runs as one
//! process per command (`kops create`, `kops update --yes`, each `terraform apply` of a
//! provider). A journaled mock outlives the process: its history is a journal, one JSON
//! object in the state store the tool already uses, and each process
//!
//! 1. reads the journal ([`AwsJournal::read`], [`GceJournal::read`],
//!    [`HetznerJournal::read`]), refusing one written for another region or project;
//! 2. starts a fresh mock (for AWS from a seed fixture, [`aws_seed`] by default) and
//!    replays every journaled mutation into it, in order: each successful `create`,
//!    `update` and `delete` made through the cloud trait, and the cloud's own mutations
//!    (a rolling update's detach and terminate on AWS, recreate on GCE, a server's
//!    shutdown on Hetzner). The mocks give sequential IDs, so a replayed create must get
//!    the ID it got the first time; if not, the journal does not belong to this mock and
//!    replaying fails ([`JournalError::Mismatch`]) rather than guessing;
//! 3. runs against the journaled cloud ([`JournaledAws`], [`JournaledGce`],
//!    [`JournaledHetzner`]), which records each successful mutation of the cloud it
//!    wraps;
//! 4. writes the journal back ([`AwsJournal::save`], ...) with compare-and-swap against
//!    the version read in step 1, so two processes cannot lose each other's changes
//!    ([`JournalError::Conflict`]).
//!
//! The journals live under `kops-rs-mock-cloud/` at the store root ([`AWS_JOURNAL_PATH`],
//! [`GCE_JOURNAL_PATH`], [`HETZNER_JOURNAL_PATH`]), outside every cluster's tree, so kOps
//! and the cluster registry ignore them. Deleting a journal resets its mock to the seed.
//!
//! The journaled clouds also wrap real backends: with nothing to save they only record,
//! and their delete hook ([`JournaledAws::set_on_delete`]) reports progress.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use kops_mock::journal::{AwsJournal, aws_seed};
//! use kops_statestore::{MemoryStore, Store};
//!
//! # tokio_test_block_on(async {
//! let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
//! let journal = AwsJournal::read(store.clone(), "memory://", "eu-west-1").await?;
//! let cloud = journal.open_mock(&aws_seed()?).await?;
//! // ... create, update, delete through `cloud` (a `kops_cloud_aws::AwsCloud`) ...
//! journal.save(&cloud).await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

mod aws;
mod core;
mod gce;
mod hetzner;

use kops_tasks::resource::CloudError;

pub use aws::{AWS_JOURNAL_PATH, AWS_SEED, AwsJournal, JournaledAws, aws_seed, seeded_aws};
pub use gce::{GCE_JOURNAL_PATH, GceJournal, JournaledGce};
pub use hetzner::{HETZNER_JOURNAL_PATH, HetznerJournal, JournaledHetzner};

/// Called after each successful delete through a journaled cloud, with the object's
/// type and ID (a command's delete progress).
pub type DeleteHook<K> = Box<dyn Fn(K, &str) + Send + Sync>;

/// A boxed error from a library whose type this crate does not expose.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why reading, replaying or saving a mock cloud's journal failed.
///
/// `what` names the mock in each message (`mock cloud`, `GCE mock cloud`, `Hetzner mock
/// cloud`); the underlying error, when there is one, is the
/// [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The state store could not be read.
    #[error("reading the {what}'s journal {location}")]
    Read {
        /// The mock.
        what: &'static str,
        /// The journal, as `<store URL>/<path>`.
        location: String,
        /// The store's error.
        #[source]
        source: kops_statestore::Error,
    },
    /// The stored journal is not a journal of this mock (not JSON of its shape).
    #[error("reading the {what}'s journal {location}")]
    Decode {
        /// The mock.
        what: &'static str,
        /// The journal, as `<store URL>/<path>`.
        location: String,
        /// The decoder's error.
        #[source]
        source: BoxError,
    },
    /// The journal was written for another region or project than the one asked for.
    #[error(
        "the {what} of state store {url} serves {found}, not {wanted} (delete {path} in the store to reset it)"
    )]
    WrongScope {
        /// The mock.
        what: &'static str,
        /// The state store's URL.
        url: String,
        /// The journal's path in the store.
        path: &'static str,
        /// What the journal serves (`region eu-west-1`).
        found: String,
        /// What was asked for.
        wanted: String,
    },
    /// The seed fixture could not be applied to a fresh mock.
    #[error("seeding the {what}")]
    Seed {
        /// The mock.
        what: &'static str,
        /// The mock's error.
        #[source]
        source: crate::Error,
    },
    /// Making a journaled mutation again failed.
    #[error("replaying the {what}'s journal {path}: entry {entry}")]
    Replay {
        /// The mock.
        what: &'static str,
        /// The journal's path in the store.
        path: &'static str,
        /// The entry, counted from 1.
        entry: usize,
        /// The mock's error.
        #[source]
        source: CloudError,
    },
    /// A replayed create got another ID than the journal recorded: the journal belongs to
    /// another mock (another seed).
    #[error(
        "replaying the {what}'s journal {path}: entry {entry}: created {created} where the journal recorded {recorded}; the journal does not match this mock cloud (delete it to reset the mock cloud)"
    )]
    Mismatch {
        /// The mock.
        what: &'static str,
        /// The journal's path in the store.
        path: &'static str,
        /// The entry, counted from 1.
        entry: usize,
        /// The ID the mock gave.
        created: String,
        /// The ID the journal recorded.
        recorded: String,
    },
    /// The journal could not be encoded.
    #[error("encoding the {what}'s journal")]
    Encode {
        /// The mock.
        what: &'static str,
        /// The encoder's error.
        #[source]
        source: BoxError,
    },
    /// Another process changed the journal since it was read; this process's changes
    /// were not written.
    #[error("saving the {what}'s journal {path}: another command changed the mock cloud meanwhile")]
    Conflict {
        /// The mock.
        what: &'static str,
        /// The journal's path in the store.
        path: &'static str,
        /// The store's error.
        #[source]
        source: kops_statestore::Error,
    },
    /// The state store could not be written.
    #[error("saving the {what}'s journal {path}")]
    Save {
        /// The mock.
        what: &'static str,
        /// The journal's path in the store.
        path: &'static str,
        /// The store's error.
        #[source]
        source: kops_statestore::Error,
    },
}

impl JournalError {
    /// Whether this is [`JournalError::Conflict`]: reading the journal again and
    /// repeating the command may succeed.
    pub fn is_conflict(&self) -> bool {
        matches!(self, JournalError::Conflict { .. })
    }
}

/// Implements `ResourceCloud<$kind>` for a journaled cloud newtype (field `core`, a
/// [`core::Journaled`]) by forwarding to the core.
macro_rules! forward_resource_cloud {
    ($ty:ty, $kind:ty) => {
        #[async_trait::async_trait]
        impl kops_tasks::resource::ResourceCloud<$kind> for $ty {
            async fn list(
                &self,
                query: &kops_tasks::resource::ListQuery<$kind>,
            ) -> kops_tasks::resource::CloudResult<Vec<kops_tasks::resource::Resource<$kind>>> {
                self.core.list(query).await
            }
            async fn list_digests(
                &self,
                query: &kops_tasks::resource::ListQuery<$kind>,
            ) -> kops_tasks::resource::CloudResult<Vec<kops_tasks::resource::Resource<$kind>>> {
                self.core.list_digests(query).await
            }
            async fn list_shared(
                &self,
                query: &kops_tasks::resource::ListQuery<$kind>,
            ) -> kops_tasks::resource::CloudResult<
                Vec<std::sync::Arc<kops_tasks::resource::Resource<$kind>>>,
            > {
                self.core.list_shared(query).await
            }
            async fn list_tagged(
                &self,
                resource_type: $kind,
                tags: &[(&str, &str)],
            ) -> kops_tasks::resource::CloudResult<
                Vec<std::sync::Arc<kops_tasks::resource::Resource<$kind>>>,
            > {
                self.core.list_tagged(resource_type, tags).await
            }
            fn first_tagged_now(
                &self,
                resource_type: $kind,
                tags: &[(&str, &str)],
            ) -> Option<
                kops_tasks::resource::CloudResult<
                    Option<std::sync::Arc<kops_tasks::resource::Resource<$kind>>>,
                >,
            > {
                self.core.first_tagged_now(resource_type, tags)
            }
            async fn create(
                &self,
                request: &kops_tasks::resource::CreateRequest<$kind>,
            ) -> kops_tasks::resource::CloudResult<kops_tasks::resource::Resource<$kind>> {
                self.core.create(request).await
            }
            async fn update(
                &self,
                request: &kops_tasks::resource::UpdateRequest<$kind>,
            ) -> kops_tasks::resource::CloudResult<kops_tasks::resource::Resource<$kind>> {
                self.core.update(request).await
            }
            async fn delete(
                &self,
                resource_type: $kind,
                id: &str,
            ) -> kops_tasks::resource::CloudResult<()> {
                self.core.delete(resource_type, id).await
            }
        }
    };
}
use forward_resource_cloud;
