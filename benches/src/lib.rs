//! Criterion benchmarks for kops-rs; see `benches/` beside this file.
