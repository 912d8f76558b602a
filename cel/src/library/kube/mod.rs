//! kube's own CEL libraries (`k8s.io/apiserver/pkg/cel/library`) and the runtime costs
//! kube's cost estimator gives calls by function name, ahead of cel-go's.

pub mod authz;
pub mod cidr;
pub mod cost;
pub mod format;
pub mod ip;
pub mod jsonpatch;
pub mod lists;
pub mod quantity;
pub mod regex;
pub mod urls;

use super::{Env, Result, no_such_overload};
use crate::environment::Feature;
use crate::value::{Opaque, Value};

/// Adds the kube libraries `features` enable to `env`.
pub fn install(env: &mut Env, features: &[Feature]) {
    let has = |f: Feature| features.contains(&f);
    if has(Feature::Regex) {
        regex::install(env);
    }
    if has(Feature::KubeListsV0) || has(Feature::KubeListsV1) {
        lists::install(env);
    }
    if has(Feature::Urls) {
        urls::install(env);
    }
    if has(Feature::Quantity) {
        quantity::install(env);
    }
    if has(Feature::Ip) {
        ip::install(env);
    }
    if has(Feature::Cidr) {
        cidr::install(env);
    }
    if has(Feature::Format) {
        format::install(env);
    }
    if has(Feature::Authz) {
        authz::install(env);
    }
}

/// `args[i]` as the library value `T`, or "no such overload".
fn opaque<T: Opaque>(args: &[Value], i: usize) -> Result<&T> {
    args[i].downcast::<T>().ok_or_else(no_such_overload)
}

/// Whether `other` is a `T` that `same` says equals `this` (kube's `Equal` of its library
/// types: a value of another type is never equal).
fn equal_as<T: Opaque>(this: &T, other: &dyn Opaque, same: impl Fn(&T, &T) -> bool) -> bool {
    other
        .as_any()
        .downcast_ref::<T>()
        .is_some_and(|other| same(this, other))
}
