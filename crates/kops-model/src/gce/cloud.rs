//! The GCE vocabulary the model's tasks use, re-exported from `kops-cloud-gce` (built
//! without any Google client).

pub use kops_cloud_gce::cloud::*;
