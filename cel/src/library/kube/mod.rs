//! kube's own CEL libraries (`k8s.io/apiserver/pkg/cel/library`) and the runtime costs
//! kube's cost estimator gives calls by function name, ahead of cel-go's.

pub mod cost;
pub mod lists;
pub mod regex;

use super::Env;
use crate::environment::Feature;

/// Adds the kube libraries `features` enable to `env`.
pub fn install(env: &mut Env, features: &[Feature]) {
    let has = |f: Feature| features.contains(&f);
    if has(Feature::Regex) {
        regex::install(env);
    }
    if has(Feature::KubeListsV0) || has(Feature::KubeListsV1) {
        lists::install(env);
    }
}
