//! kOps state store.
