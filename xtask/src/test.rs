//! `cargo xtask test`: kapi's whole suite, the command CI and the README give: kapi's
//! [`Suite`] run by [`kapi_tasks::test`].
//!
//! The run enables the default-off cargo features the suite covers ([`FEATURES`]: the etcd
//! backend), so its tests run, and fail rather than skip when etcd is missing. New needs
//! are new entries in [`suite`].

use std::path::Path;

use kapi_tasks::test::{Prerequisite, Suite};

/// The features the suite builds with: the etcd backend and its tests.
pub const FEATURES: &str = "kapi-server/etcd,kapi-storage/etcd";

/// `openapi-spec-validator` on PyPI: validates the generated OpenAPI documents.
pub const OPENAPI_SPEC_VALIDATOR: &str = "openapi-spec-validator==0.9.0";

/// `kubernetes` on PyPI, the official Python client `server/tests/python_client.rs` drives
/// the server with (the harness names the same pin: `support::python::PYTHON_KUBERNETES`).
pub const PYTHON_KUBERNETES: &str = "kubernetes==37.0.2";

/// The official Prometheus client for Python, whose parsers read `/metrics` in the tests
/// as a Prometheus server would.
pub const PROMETHEUS_CLIENT: &str = "prometheus-client==0.21.1";

/// kapi's suite: its features, and everything it needs besides Rust.
pub fn suite(root: &Path) -> Suite {
    Suite {
        features: FEATURES.split(',').map(str::to_owned).collect(),
        prerequisites: vec![
            Prerequisite::python_module("openapi_spec_validator", OPENAPI_SPEC_VALIDATOR),
            Prerequisite::python_module("kubernetes", PYTHON_KUBERNETES),
            Prerequisite::python_module("prometheus_client", PROMETHEUS_CLIENT),
            Prerequisite::kubectl_1_32(),
            Prerequisite::kubectl_1_20(root),
            Prerequisite::etcd(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_python_client_test_names_the_installed_pin() {
        let harness = crate::project_root().join("server/tests/support/python.rs");
        let harness = std::fs::read_to_string(&harness).unwrap();
        let pin = format!("const PYTHON_KUBERNETES: &str = {PYTHON_KUBERNETES:?};");
        assert!(
            harness.contains(&pin),
            "server/tests/support/python.rs lacks `{pin}`"
        );
    }
}
