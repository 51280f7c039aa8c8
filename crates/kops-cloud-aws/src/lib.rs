//! `kops-cloud-aws` is the AWS backend: it reads and changes real AWS resources through the aws-sdk crates, behind the cloud traits the tasks use.
//!
//! # Stability
//!
//! This crate has no public API yet; it is part of the kops-rs workspace
//! layout and gains its API as the corresponding issue lands.
