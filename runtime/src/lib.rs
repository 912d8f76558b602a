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
pub mod admission;
#[cfg(feature = "server")]
pub mod aggregator;
pub mod api;
#[cfg(feature = "server")]
pub mod audit;
#[cfg(feature = "server")]
pub mod authn;
#[cfg(feature = "server")]
pub mod authz;
pub mod byte_string;
#[cfg(feature = "server")]
pub mod cache;
#[cfg(feature = "server")]
pub mod chunks;
#[cfg(feature = "server")]
pub mod controllers;
pub mod defaults;
#[cfg(feature = "server")]
pub mod endpoints;
pub mod error;
#[cfg(feature = "server")]
pub mod fieldmanager;
#[cfg(feature = "server")]
pub mod filters;
#[cfg(feature = "server")]
pub mod health;
#[cfg(feature = "server")]
pub(crate) mod https_client;
#[cfg(feature = "derive")]
pub mod kinds;
#[cfg(feature = "server")]
pub mod kubeconfig;
pub mod meta;
#[cfg(feature = "server")]
pub mod metrics;
#[cfg(feature = "server")]
pub mod registry;
pub mod scheme;
#[cfg(feature = "server")]
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
pub mod validation;

pub use api::{Convert, Resource, Strategy};
pub use byte_string::ByteString;

/// The `#[derive(Resource)]` and `#[derive(Convert)]` macros, with the `derive` feature.
#[cfg(feature = "derive")]
pub use kapi_macros::{Convert, Resource};

/// Items the derive expansions name. Not a public API: may change at any time.
#[doc(hidden)]
pub mod __private {
    pub use k8s_openapi;
    pub use schemars;
    pub use serde;

    /// The derive's `Resource::metadata_mut`: the `metadata` field, when it is an
    /// `ObjectMeta`. Whether it is, the derive's type checks report (once, on the field's
    /// type); this compiles either way, so that they stay the only report.
    pub fn object_meta_mut<T: std::any::Any>(
        metadata: &mut T,
    ) -> Option<&mut crate::meta::ObjectMeta> {
        (metadata as &mut dyn std::any::Any).downcast_mut()
    }

    /// How the derive's compile-time checks of JSON paths step through a field that may be
    /// an `Option` (`.source.component` where `source: Option<EventSource>`): the method
    /// is found on `Option<T>` itself before the blanket one on references (autoref
    /// order), so `(&field).__kapi_through()` is `&T` for both. Type-checked, never called.
    pub mod path {
        /// Through an `Option`.
        pub trait ThroughOption {
            /// The type inside.
            type Inner;
            /// The value inside.
            fn __kapi_through(&self) -> &Self::Inner;
        }

        impl<T> ThroughOption for Option<T> {
            type Inner = T;
            fn __kapi_through(&self) -> &T {
                match self {
                    Some(inner) => inner,
                    None => unreachable!("JSON path checks are never run"),
                }
            }
        }

        /// Through any other field: itself.
        pub trait ThroughPlain {
            /// The field's type.
            type Inner;
            /// The field.
            fn __kapi_through(&self) -> &Self::Inner;
        }

        impl<T> ThroughPlain for &T {
            type Inner = T;
            fn __kapi_through(&self) -> &T {
                self
            }
        }
    }
}
