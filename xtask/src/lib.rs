//! Project automation (`cargo xtask <command>`), kept in a library so tests run it
//! in-process.
//!
//! - [`generate`]: `cargo xtask generate [--check]` renders `generated/` from the example
//!   API's kinds, or checks it is fresh.
//! - [`test`](mod@test): `cargo xtask test`, the whole suite, after installing what it needs.
//! - [`bench`](mod@bench): `cargo xtask bench`, the performance figures.

pub mod bench;
pub mod generate;
pub mod test;

use std::path::PathBuf;

/// The workspace root.
pub fn project_root() -> PathBuf {
    let xtask = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().map(PathBuf::from).unwrap_or(xtask)
}
