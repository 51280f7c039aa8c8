//! kOps API types.
#![forbid(unsafe_code)]

mod error;
pub mod internal;
pub mod manifest;
pub mod v1alpha2;
pub mod validation;

pub use error::{Error, Result};
