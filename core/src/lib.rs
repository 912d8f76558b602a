//! kapi's core: what an API is, before any server serves it.
//!
//! - [`api`]: the static description of an API (kinds, versions, routes, printer columns)
//!   that `#[derive(Resource)]` emits and `kapi-codegen` turns into an API model; the
//!   `Resource`, `Convert` and `Strategy` traits; protobuf descriptors.
//! - [`meta`]: the shared `meta.k8s.io` types (ObjectMeta, Status, Table, ...) every
//!   resource and every response uses.
//! - [`error`]: `ApiError`, every failure as the `Status` kube answers with.
//! - [`scheme`]: the registered kinds, converting JSON between versions through each
//!   kind's hub type.
//! - [`ByteString`]: bytes, base64 in JSON as Go's `[]byte` (decoded as Go decodes it).
//! - [`defaults`]: literal field defaults (`#[serde(default = "kapi::defaults::i32::<1>")]`).
//! - [`validation`]: kube's string validations (names, label values, config keys,
//!   finalizers) with kube's messages, for the registry and for kinds' own rules.
//! - [`user`]: who a request is from.
//! - [`unstructured`]: objects as JSON: metadata fields, dotted paths, uids, timestamps.
//! - [`chunks`]: bodies written in pieces.
//! - [`net`]: IP addresses, CIDRs and URLs as Go's `net/netip` and `net/url` read them (kube's
//!   CEL `ip()`, `cidr()`, `url()`).
//! - [`quantity`]: kube's `resource.Quantity` (`500m`, `1.5Gi`): parsing, canonical form,
//!   arithmetic, as kube does them.
//!
//! Invariant: this crate is the bottom of kapi's layers (with `kapi-routes`): it imports
//! no other kapi crate, and does no I/O.

pub mod api;
pub mod byte_string;
pub mod chunks;
pub mod defaults;
pub mod error;
pub mod meta;
pub mod net;
pub mod quantity;
pub mod scheme;
pub mod strconv;
pub mod unstructured;
pub mod user;
pub mod validation;

pub use api::{Convert, Resource, Strategy};
pub use byte_string::ByteString;

/// Items the derive expansions name. Not a public API: may change at any time.
#[doc(hidden)]
pub mod __private {
    pub use k8s_openapi;
    pub use schemars;
    pub use serde;

    /// The derive's `VersionInfo::zero` of a `zero_object` kind: `T::default()` as JSON.
    pub fn zero_object<T: Default + serde::Serialize>() -> serde_json::Value {
        serde_json::to_value(T::default()).unwrap_or_default()
    }

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
