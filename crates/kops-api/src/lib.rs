//! kOps API types.
#![forbid(unsafe_code)]

pub mod channel;
pub mod defaults;
mod error;
pub mod internal;
pub mod manifest;
pub mod v1alpha2;
pub mod validation;
pub mod version;

pub use error::{Error, Result};
