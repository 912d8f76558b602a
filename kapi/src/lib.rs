//! kapi: Kubernetes-style API servers from annotated Rust types.
//!
//! Declare each kind once on its hub type with [`macro@Resource`] (and each other version
//! with [`macro@Convert`]), list an API's kinds with [`kinds!`] (Kubernetes' feature sets
//! from [`kinds`](mod@kinds) and your own), let `cargo xtask generate` render its OpenAPI
//! documents, discovery and glue, and serve it with the API server (feature `server`:
//! `server::app::main`).
//!
//! This crate re-exports kapi's layer crates, each of which depends only on those below it:
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`api`], [`meta`], [`error`], [`scheme`], [`validation`], [`unstructured`], [`user`] | `kapi-core` | the API description the derives emit, `meta.k8s.io` types, errors as `Status`, the scheme |
//! | [`kinds`](mod@kinds) | `kapi-kinds` | Kubernetes' own kinds in feature sets |
//! | `schema` (server, testing) | `kapi-schema` | compiled schemas, metadata rules, selectors |
//! | `storage` (server) | `kapi-storage` | storage with etcd's semantics, the watch cache |
//! | `fieldmanager` (server) | `kapi-fieldmanager` | field management, server-side apply |
//! | `registry` (server) | `kapi-registry` | the generic store, admission as a hook |
//! | `server` (server) | `kapi-apiserver` | the handler chain, endpoints, aggregator, controllers |

pub use kapi_core::{
    ByteString, Convert, Resource, Strategy, api, byte_string, chunks, defaults, error, kinds,
    meta, scheme, unstructured, user, validation,
};
pub use kapi_kinds as kinds;

/// The derives, with the `derive` feature.
#[cfg(feature = "derive")]
pub use kapi_macros::{Convert, Resource};

#[cfg(feature = "server")]
pub use kapi_apiserver as server;
#[cfg(feature = "server")]
pub use kapi_fieldmanager as fieldmanager;
#[cfg(feature = "server")]
pub use kapi_metrics as metrics;
#[cfg(feature = "server")]
pub use kapi_registry as registry;
#[cfg(any(feature = "server", feature = "testing"))]
pub use kapi_schema as schema;
/// Test support for an API (feature `testing`).
#[cfg(feature = "testing")]
pub use kapi_schema::testing;
#[cfg(feature = "server")]
pub use kapi_storage as storage;
#[cfg(feature = "server")]
pub use kapi_storage::storage_conformance_tests;
#[cfg(feature = "server")]
pub use kapi_webhook as webhook;

#[doc(hidden)]
pub use kapi_core::__private;
