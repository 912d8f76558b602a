//! kapi: Kubernetes-style API servers from annotated Rust types.
//!
//! You write your resource types; kapi gives you the API server: CRUD, lists, watches,
//! server-side apply and strategic merge with kube-apiserver's semantics, discovery,
//! OpenAPI v2 and v3, `kubectl` tables, a durable embedded store (etcd when you outgrow one
//! machine), and the controllers kube-controller-manager would run for them.
//!
//! # Start a project
//!
//! From a checkout of kapi, `cargo xtask new ../my-api --group my.example.com --kind Widget`
//! writes a workspace of your own (`api-types`, `generated`, `server`, `xtask`) with one
//! kind, its generated files and their freshness test; `cargo run -p my-api-server` serves
//! it, `cargo xtask test` runs its suite. The `kapi-tasks` crate is what its `xtask` runs.
//!
//! # Declare a kind
//!
//! Each kind is declared once, on its hub (internal) type, with [`macro@Resource`]: its
//! group, kind, scope, subresources, printer columns and the versions it serves. A version
//! with a type of its own converts through the hub with [`macro@Convert`]; [`Strategy`]
//! says what kube's strategies say (defaults, validation, what an update may change).
//!
//! ```rust,ignore
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, kapi::Resource)]
//! #[resource(group = "my.example.com", kind = "Widget", namespaced, status,
//!            version(name = "v1", storage))]
//! pub struct Widget {
//!     pub metadata: kapi::meta::ObjectMeta,
//!     pub spec: WidgetSpec,
//!     #[serde(default)]
//!     pub status: WidgetStatus,
//! }
//! impl kapi::Strategy for Widget {}
//! ```
//!
//! # List the API
//!
//! An API is its kinds and the sets of Kubernetes' kinds it serves beside them, put
//! together with [`kinds!`]. [`kinds::CORE`](mod@kinds) (Namespaces, ConfigMaps, Events,
//! Leases) is always there; the other sets are cargo features of this crate, compiled and
//! served only when chosen:
//!
//! | feature | set | what the server does with it |
//! |---|---|---|
//! | `rbac` | `kinds::RBAC` | RBAC objects, `--authorization-mode=RBAC`, the access reviews |
//! | `crds` | `kinds::CRDS` | CustomResourceDefinitions installed as kinds while it runs |
//! | `admission-webhooks` | `kinds::ADMISSION_WEBHOOKS` | webhook configurations it calls on writes |
//! | `aggregation` | `kinds::AGGREGATION` | APIServices it serves or proxies to other servers |
//!
//! ```rust,ignore
//! pub const KINDS: &[&kapi::api::KindInfo] =
//!     kapi::kinds![&[v1::Widget::INFO], kapi::kinds::CORE, kapi::kinds::RBAC];
//! ```
//!
//! # Generate and serve
//!
//! `cargo xtask generate` renders the API's OpenAPI documents, discovery and glue into
//! `generated/`; the server (feature `server`) is one call, [`server::app::main`] with the
//! generated crate's items, and takes kube-apiserver's flags, grouped as kube's options
//! ([`server::app::options`]). A server with flags of its own flattens
//! [`server::app::Options`] into its `clap` parser and calls [`server::app::main_with`];
//! one that assembles the layers itself starts from [`server::endpoints::router`].
//!
//! # Test
//!
//! The generated crate's round-trip tests use `kapi::testing` (feature `testing`); a storage
//! backend of your own runs kapi's conformance suite with `storage_conformance_tests!`.
//!
//! # The crates
//!
//! This crate re-exports kapi's layer crates, each of which depends only on those below it:
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`api`], [`meta`], [`error`], [`scheme`], [`validation`], [`unstructured`], [`user`] | `kapi-core` | the API description the derives emit, `meta.k8s.io` types, errors as `Status`, the scheme |
//! | [`kinds`](mod@kinds) | `kapi-kinds` | Kubernetes' own kinds in feature sets |
//! | `schema` (schema, server, testing) | `kapi-schema` | compiled schemas, metadata rules, selectors; objects validated with no server (`schema::offline`) |
//! | `storage` (server) | `kapi-storage` | storage with etcd's semantics, the watch cache |
//! | `fieldmanager` (server) | `kapi-fieldmanager` | field management, server-side apply |
//! | `registry` (server) | `kapi-registry` | the generic store, admission as a hook |
//! | `server` (server) | `kapi-apiserver` | the handler chain, endpoints, aggregator, controllers, the program |

pub use kapi_core::{
    ByteString, Convert, Resource, Strategy, api, byte_string, chunks, defaults, error, kinds,
    meta, scheme, unstructured, user, validation,
};
pub use kapi_kinds as kinds;

/// The derives, and `deflated!` for the generated crate's documents, with the `derive`
/// feature.
#[cfg(feature = "derive")]
pub use kapi_macros::{Convert, Protobuf, Resource, deflated, rules};

#[cfg(feature = "server")]
pub use kapi_apiserver as server;
#[cfg(feature = "server")]
pub use kapi_fieldmanager as fieldmanager;
#[cfg(feature = "server")]
pub use kapi_metrics as metrics;
#[cfg(feature = "server")]
pub use kapi_registry as registry;
#[cfg(feature = "schema")]
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
