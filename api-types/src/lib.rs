//! The example API of kapi, written as a user writes theirs.
//!
//! - [`core`]: `Namespace` (cluster-scoped), `ConfigMap` and `Event`, served under
//!   `/api/v1`.
//! - [`events`]: `events.k8s.io` Event, the core Events in that group's shape.
//! - [`apps`]: `WebApp`, in two versions (`v1` stored, `v1beta1` deprecated) that
//!   convert through a hub type.
//! - [`platform`]: `Tenant`, cluster-scoped.
//! - [`rbac`]: Kubernetes' `rbac.authorization.k8s.io` kinds, which the runtime declares
//!   (its authorizer reads them) and this API serves; [`authorization`] and
//!   [`authentication`]: the reviews kubectl's `auth can-i` and `auth whoami` create;
//!   [`apiextensions`]: CustomResourceDefinitions, which the runtime declares;
//!   [`admissionregistration`]: the admission webhook configurations, which it calls.
//!
//! Each kind is declared once, with `#[derive(Resource)]` on its hub type; [`KINDS`] lists
//! them for the scheme, as Kubernetes' `AddToScheme` does.

// clippy reads repeated `type = "integer"` in separate `printer_column(...)`s as duplicated
// attributes (rust-clippy#12923).
#![allow(clippy::duplicated_attributes)]

pub mod apps;
pub mod coordination;
pub mod core;
pub mod events;
pub mod platform;

use kapi_runtime::Resource;
use kapi_runtime::api::KindInfo;
pub use kapi_runtime::kinds::{
    admissionregistration, apiextensions, apiregistration, authentication, authorization, rbac,
};

/// Every kind of the example API.
pub const KINDS: &[&KindInfo] = &[
    core::Namespace::INFO,
    core::ConfigMap::INFO,
    core::Event::INFO,
    events::Event::INFO,
    apps::WebApp::INFO,
    platform::Tenant::INFO,
    // Leases, for controllers' leader election.
    coordination::Lease::INFO,
    // Kubernetes' RBAC kinds, declared in the runtime (its authorizer reads them).
    rbac::Role::INFO,
    rbac::ClusterRole::INFO,
    rbac::RoleBinding::INFO,
    rbac::ClusterRoleBinding::INFO,
    // CustomResourceDefinitions, whose kinds the server installs while it runs.
    apiextensions::CustomResourceDefinition::INFO,
    // Admission webhooks, which the server calls on writes.
    admissionregistration::MutatingWebhookConfiguration::INFO,
    admissionregistration::ValidatingWebhookConfiguration::INFO,
    // APIServices: the group-versions this server serves, and those it proxies.
    apiregistration::APIService::INFO,
    // The reviews `kubectl auth can-i` and `kubectl auth whoami` create.
    authorization::SelfSubjectAccessReview::INFO,
    authorization::SubjectAccessReview::INFO,
    authorization::LocalSubjectAccessReview::INFO,
    authorization::SelfSubjectRulesReview::INFO,
    authentication::SelfSubjectReview::INFO,
    authentication::TokenReview::INFO,
];
