//! Shared helpers for the kops-rs examples.
//!
//! The runnable programs live beside this file as cargo examples
//! (`cargo run -p kops-examples --example NAME`).
