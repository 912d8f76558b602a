//! kapi's own `cargo xtask`, kept in a library so tests run it in-process: the tasks every
//! kapi project has ([`kapi_tasks`]: `generate [--check]`, `test`) on the example API, and
//! kapi's own:
//!
//! - [`test`](mod@test): kapi's suite (its features and prerequisites).
//! - [`bench`](mod@bench): `cargo xtask bench`, the performance figures.
//! - [`e2e`](mod@e2e): `cargo xtask e2e`, Kubernetes' API-only end-to-end tests.
//! - `cargo xtask new DIR`: a new project depending on this checkout ([`kapi_tasks::new`]).

pub mod bench;
pub mod e2e;
pub mod test;

use std::path::PathBuf;

/// The workspace root.
pub fn project_root() -> PathBuf {
    kapi_tasks::workspace_root(env!("CARGO_MANIFEST_DIR"))
}

/// kapi's example API and suite, as the tasks see them.
pub fn project() -> kapi_tasks::Project {
    let root = project_root();
    kapi_tasks::Project {
        suite: test::suite(&root),
        root,
        kinds: api_types::KINDS,
    }
}
