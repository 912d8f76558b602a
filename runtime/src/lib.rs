//! kapi's runtime: everything a generated API server needs that does not depend on a
//! concrete resource type.
//!
//! - [`api`]: the static description of an API (kinds, versions, routes, printer columns)
//!   that `#[derive(Resource)]` emits and `kapi-codegen` turns into an API model.
//! - [`meta`]: the shared `meta.k8s.io` types (ObjectMeta, Status, Table, ...) every
//!   resource and every response uses.
//! - [`ByteString`]: bytes, base64 in JSON as Go's `[]byte` (decoded as Go decodes it).
//! - [`defaults`]: literal field defaults (`#[serde(default = "kapi_runtime::defaults::i32::<1>")]`).
//! - [`validation`]: kube's string validations (names, label values, config keys,
//!   finalizers) with kube's messages, for the registry and for kinds' own rules.
//! - `kinds` (feature `derive`): Kubernetes' own kinds the runtime relies on (RBAC),
//!   declared with the derives like a user's.
//! - [`scheme`]: the registered kinds, converting JSON between versions through each
//!   kind's hub type.
//! - `filters`, `authn`, `authz` (feature `server`): the handler chain in front of the
//!   endpoints, and the authentication and authorization it runs.
//! - `testing` (feature `testing`): arbitrary objects within a version's schema and the
//!   hub-conversion round-trip properties `cargo xtask generate` writes tests for.
//!
//! Invariant: this crate names no concrete resource type of an API (only Kubernetes' own
//! kinds its machinery reads, in `kinds`, declared like a user's); it learns them from the
//! generated scheme at start-up.

// The derives name `::kapi_runtime`; `kinds` uses them inside this crate.
extern crate self as kapi_runtime;

#[cfg(feature = "server")]
pub use kapi_registry::admission;
#[cfg(feature = "server")]
pub mod webhooks;
#[cfg(feature = "server")]
pub mod aggregator;
#[cfg(feature = "server")]
pub mod audit;
#[cfg(feature = "server")]
pub mod authn;
#[cfg(feature = "server")]
pub mod authz;
#[cfg(feature = "server")]
pub use kapi_storage::cache;
#[cfg(feature = "server")]
pub mod controllers;
#[cfg(feature = "server")]
pub mod endpoints;
#[cfg(feature = "server")]
pub use kapi_fieldmanager as fieldmanager;
#[cfg(feature = "server")]
pub mod filters;
#[cfg(feature = "server")]
pub mod health;
#[cfg(feature = "server")]
pub mod http;
pub use kapi_kinds as kinds;
#[cfg(feature = "server")]
pub mod kubeconfig;
#[cfg(feature = "server")]
pub use kapi_metrics as metrics;
#[cfg(feature = "server")]
pub use kapi_registry as registry;
#[cfg(feature = "server")]
pub use kapi_storage as storage;
#[cfg(feature = "server")]
pub use kapi_storage::storage_conformance_tests;
#[cfg(feature = "testing")]
pub use kapi_schema::testing;

pub use kapi_core::{ByteString, Convert, Resource, Strategy};
pub use kapi_core::{api, byte_string, chunks, defaults, error, kinds, meta, scheme, user, validation};

/// The `#[derive(Resource)]` and `#[derive(Convert)]` macros, with the `derive` feature.
#[cfg(feature = "derive")]
pub use kapi_macros::{Convert, Resource};

#[doc(hidden)]
pub use kapi_core::__private;
