//! Kubernetes' own kinds, declared with the same derives as a user's kinds, in feature sets
//! a server picks (cargo features of this crate, and the sets an API lists in its kinds):
//!
//! - [`CORE`], always: the core group's [`core::Namespace`], [`core::ConfigMap`] and
//!   [`core::Event`], the same Events as [`events`]' (`events.k8s.io`), and
//!   [`coordination`]'s Leases (controllers' leader election).
//! - [`RBAC`] (feature `rbac`): `rbac.authorization.k8s.io/v1` Role, ClusterRole,
//!   RoleBinding and ClusterRoleBinding, which the RBAC authorizer reads, and the reviews
//!   (`authorization.k8s.io`, `authentication.k8s.io`: `kubectl auth can-i`, `kubectl auth
//!   whoami`), created and answered, never stored.
//! - [`CRDS`] (feature `crds`): `apiextensions.k8s.io/v1` CustomResourceDefinitions,
//!   validated as kube validates them, and (feature `server`) installed as kinds of the
//!   scheme.
//! - [`ADMISSION_WEBHOOKS`] (feature `admission-webhooks`):
//!   `admissionregistration.k8s.io/v1` webhook configurations, which the API server's
//!   admission calls, and the admission policies it evaluates itself (`v1`'s
//!   ValidatingAdmissionPolicies, `v1beta1`'s MutatingAdmissionPolicies), with their
//!   bindings.
//! - [`AGGREGATION`] (feature `aggregation`): `apiregistration.k8s.io/v1` APIServices, the
//!   group-versions the aggregator serves itself or proxies to other servers.
//!
//! - `builtin` (feature `builtin`): every other GA kind kube 1.32 serves (Pods, Services,
//!   Deployments, Jobs, ...), generated from k8s.io/api (`kapi-builtin`), in the sets of
//!   `builtin::sets`.
//!
//! Every kind's declaration is generated ([`api`]) from kube's own description of its API
//! (k8s.io/api; k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator for the
//! CustomResourceDefinition and the APIService); the modules of each group add what
//! kube's strategies do with them.
//!
//! An API lists the sets it serves with its own kinds
//! (`kinds![kapi::kinds::CORE, kapi::kinds::RBAC, &[MyKind::INFO]]`); a set whose feature is
//! off is neither compiled nor served.

// clippy reads repeated `type = "integer"` in separate `printer_column(...)`s as duplicated
// attributes (rust-clippy#12923).
#![allow(clippy::duplicated_attributes)]

// The derives name `::kapi`, the path a user's crate reaches kapi by; here that is
// kapi-core, whose items the expansions name.
extern crate kapi_core as kapi;

#[cfg(feature = "admission-webhooks")]
pub mod admissionregistration;
pub mod api;
#[cfg(feature = "crds")]
pub mod apiextensions;
/// Kubernetes' built-in API (feature `builtin`): kube 1.32's GA kinds generated from
/// k8s.io/api, by group and version (`builtin::apps::v1::Deployment`), and the sets an
/// API lists (`builtin::sets::WORKLOADS`).
#[cfg(feature = "builtin")]
pub use kapi_builtin::api as builtin;
/// What kube's Service storage does to a Service's addresses around allocating them.
#[cfg(feature = "builtin")]
pub use kapi_builtin::services;
#[cfg(feature = "aggregation")]
pub mod apiregistration;
#[cfg(feature = "rbac")]
pub mod authentication;
#[cfg(feature = "rbac")]
pub mod authorization;
pub mod coordination;
pub mod core;
mod defaults;
pub mod events;
#[cfg(feature = "rbac")]
pub mod rbac;
#[cfg(any(feature = "admission-webhooks", feature = "aggregation"))]
mod webhook_url;

/// The kinds every server has: Namespaces, ConfigMaps, Events (both groups), Leases.
pub use api::sets::CORE;

/// RBAC's kinds and the reviews.
#[cfg(feature = "rbac")]
pub use api::sets::RBAC;

/// CustomResourceDefinitions.
#[cfg(feature = "crds")]
pub use api::sets::CRDS;

/// The admission webhook configurations.
#[cfg(feature = "admission-webhooks")]
pub use api::sets::ADMISSION_WEBHOOKS;

/// APIServices.
#[cfg(feature = "aggregation")]
pub use api::sets::AGGREGATION;
