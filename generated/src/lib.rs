//! Output of `cargo xtask generate`.
