//! kOps API types.
