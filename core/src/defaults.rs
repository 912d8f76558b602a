//! Literal defaults for fields of version types, written where serde takes a function:
//!
//! ```
//! # extern crate kapi_core as kapi;
//! # use serde::Deserialize;
//! # use schemars::JsonSchema;
//! #[derive(Deserialize, JsonSchema)]
//! struct Spec {
//!     /// How many instances to run.
//!     #[serde(default = "kapi::defaults::i32::<1>")]
//!     replicas: i32,
//!     /// Stop reconciling while true.
//!     #[serde(default = "kapi::defaults::bool::<false>")]
//!     paused: bool,
//! }
//! # let spec: Spec = serde_json::from_str("{}").unwrap();
//! # assert_eq!((spec.replicas, spec.paused), (1, false));
//! # let schema = serde_json::to_value(schemars::schema_for!(Spec)).unwrap();
//! # assert_eq!(schema["properties"]["replicas"]["default"], 1);
//! ```
//!
//! A default is one attribute, read by both derives: serde fills the field when a body or a
//! stored object lacks it (decoding is where Kubernetes defaults), and schemars publishes
//! the value as the field's `default` in the OpenAPI schemas, where the registry applies it
//! to request bodies and `kubectl explain` shows it. So the literal is written once, like a
//! `+default=` marker in Go, and cannot drift between the two.
//!
//! Const generics carry the literal, so only integers, `bool` and `char` fit (Rust has no
//! `&str` const parameters yet); any other default is a function of the user's, written
//! the same way (`#[serde(default = "default_image")]`).
//!
//! Defaults that depend on other fields (kube's `SetDefaults_*` functions: a container's
//! image pull policy from its image's tag, a Deployment's rolling update only for that
//! strategy) are code: a version type implements [`Defaults`], and a kind declared with
//! `#[resource(defaults)]` has every version decoded from a request defaulted by it, before
//! admission, field management and validation see the object, as kube defaults on decode.

macro_rules! literal_defaults {
    ($($ty:ident),* $(,)?) => {$(
        #[doc = concat!("The literal `N` as a `", stringify!($ty), "` default: `#[serde(default = \"kapi::defaults::", stringify!($ty), "::<N>\")]`.")]
        #[must_use]
        pub const fn $ty<const N: $ty>() -> $ty {
            N
        }
    )*};
}

literal_defaults!(i8, i16, i32, i64, u8, u16, u32, u64, bool, char);

/// Defaults set by code on a decoded object: kube's defaulting functions. An
/// implementation sets its own fields' defaults first, then its fields' types', in field
/// order, as kube's generated defaulters walk an object.
pub trait Defaults {
    /// Sets what is unset.
    fn set_defaults(&mut self);
}

impl<T: Defaults> Defaults for Option<T> {
    fn set_defaults(&mut self) {
        if let Some(value) = self {
            value.set_defaults();
        }
    }
}

impl<T: Defaults> Defaults for Vec<T> {
    fn set_defaults(&mut self) {
        self.iter_mut().for_each(Defaults::set_defaults);
    }
}

impl<K, T: Defaults> Defaults for std::collections::BTreeMap<K, T> {
    fn set_defaults(&mut self) {
        self.values_mut().for_each(Defaults::set_defaults);
    }
}

impl<T: Defaults> Defaults for Box<T> {
    fn set_defaults(&mut self) {
        T::set_defaults(self);
    }
}
