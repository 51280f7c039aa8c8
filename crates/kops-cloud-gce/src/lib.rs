//! `kops-cloud-gce` is the GCE backend: it reads and changes Google Compute Engine resources behind the cloud traits the tasks use.
//!
//! # Stability
//!
//! This crate has no public API yet; it is part of the kops-rs workspace
//! layout and gains its API as the corresponding issue lands.
