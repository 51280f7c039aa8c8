//! Placeholder replaced by the kops-api work.
fn main() {}
