//! `kops-cloud-gce` is a placeholder: the crate holds the place of kops-rs' GCE cloud in
//! the workspace and has no API and no code yet. It does not talk to Google Cloud.
//!
//! # What it is to become
//!
//! Laid out as `kops-cloud-aws` is: the GCE vocabulary and trait always (a
//! `GceResourceType` enum with its table of facts, implementing
//! `kops_tasks::resource::ResourceKind`, and a `GceCloud` trait extending
//! `kops_tasks::resource::ResourceCloud` with what only GCE has: the project, zones,
//! images by family), and the backend over the GCE APIs behind a default feature, so the
//! model and the mock can depend on the vocabulary without the client. The GCE model's
//! tasks are then `kops_tasks::resource::ResourceTask<GceResourceType>`, found by name
//! and by labels.
//!
//! # Stability
//!
//! No public API yet; it gains one as the GCE issue lands.
