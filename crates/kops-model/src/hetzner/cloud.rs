//! The Hetzner vocabulary the model's tasks use, re-exported from `kops-cloud-hetzner`.

pub use kops_cloud_hetzner::cloud::*;
