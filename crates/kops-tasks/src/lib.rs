//! kOps task engine.
