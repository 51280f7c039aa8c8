//! `kops-model` turns a kOps cluster specification into the graph of cloud tasks that realise it, with kOps' resource names, tags and ordering.
//!
//! # Stability
//!
//! This crate has no public API yet; it is part of the kops-rs workspace
//! layout and gains its API as the corresponding issue lands.
