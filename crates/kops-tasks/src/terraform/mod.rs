//! The Terraform (HCL2) target: a small emitter whose output is byte-identical to
//! `terraform fmt`, and a writer following kOps' conventions (name sanitising, references,
//! data files, outputs, providers, `terraform { required_providers }`).

mod backend;
mod hcl;
mod writer;

pub use backend::{Backend, BackendError, BackendKind, BackendLock};
pub use hcl::{Body, Expr, Item};
pub use writer::{Link, TerraformOutput, TerraformWriter, render_graph, sanitize_name};
