//! kube's defaulting functions for the kinds of this crate (`SetDefaults_<Type>` in kube
//! 1.32's `pkg/apis/<group>/<version>/defaults.go`), one module per group-version, called by
//! the generated `Defaults` impls as kapi-builtin's are.

pub(crate) mod core_v1;
#[cfg(feature = "rbac")]
pub(crate) mod rbac_v1;
