//! `kops-mock` holds in-memory mock clouds that implement the same cloud traits as the real backends, for tests and for trying kops-rs without a cloud account.
//!
//! # Stability
//!
//! This crate has no public API yet; it is part of the kops-rs workspace
//! layout and gains its API as the corresponding issue lands.
