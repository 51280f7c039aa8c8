//! Empty on purpose. This package exists for `scripts/check-features`: selected next to
//! the crate under check, it makes cargo resolve the third-party crates' features as the
//! workspace build does, so their checked artifacts are reused. Its manifest says why and
//! `scripts/feature-anchor/update` regenerates its dependencies.
