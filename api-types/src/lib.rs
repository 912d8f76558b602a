//! The example API of kapi, written as a user writes theirs.
//!
//! - [`apps`]: `WebApp`, in two versions (`v1` stored, `v1beta1` deprecated) that
//!   convert through a hub type.
//! - [`platform`]: `Tenant`, cluster-scoped.
//!
//! and every set of Kubernetes' own kinds kapi has (`kapi_kinds`: the core set's
//! Namespaces, ConfigMaps, Events and Leases, RBAC and the reviews, CRDs, admission
//! webhooks, APIServices), re-exported here under their modules' names.
//!
//! Each kind is declared once, with `#[derive(Resource)]` on its hub type; [`KINDS`] lists
//! them for the scheme, as Kubernetes' `AddToScheme` does.

// clippy reads repeated `type = "integer"` in separate `printer_column(...)`s as duplicated
// attributes (rust-clippy#12923).
#![allow(clippy::duplicated_attributes)]

pub mod apps;
pub mod platform;

use kapi::Resource;
use kapi::api::KindInfo;
pub use kapi::kinds::{
    admissionregistration, apiextensions, apiregistration, authentication, authorization,
    coordination, core, events, rbac,
};

/// Every kind of the example API: its own first, then the sets of Kubernetes' kinds it
/// serves (all of them).
pub const KINDS: &[&KindInfo] = kapi::kinds![
    &[apps::WebApp::INFO, platform::Tenant::INFO],
    // Namespaces, ConfigMaps, Events (both groups), Leases.
    kapi::kinds::CORE,
    // Kubernetes' RBAC kinds (its authorizer reads them) and the reviews `kubectl auth
    // can-i` and `kubectl auth whoami` create.
    kapi::kinds::RBAC,
    // CustomResourceDefinitions, whose kinds the server installs while it runs.
    kapi::kinds::CRDS,
    // Admission webhooks, which the server calls on writes.
    kapi::kinds::ADMISSION_WEBHOOKS,
    // APIServices: the group-versions this server serves, and those it proxies.
    kapi::kinds::AGGREGATION,
    // Kubernetes' built-in API: Pods, Services, Deployments, Jobs and the rest of kube
    // 1.32's GA kinds.
    kapi::kinds::builtin::sets::WORKLOADS,
    kapi::kinds::builtin::sets::NETWORKING,
    kapi::kinds::builtin::sets::STORAGE,
    kapi::kinds::builtin::sets::CONFIG,
    kapi::kinds::builtin::sets::POLICY,
    kapi::kinds::builtin::sets::CLUSTER,
    kapi::kinds::builtin::sets::CERTIFICATES,
    kapi::kinds::builtin::sets::FLOWCONTROL,
];
