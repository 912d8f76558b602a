//! The API server: everything that serves a scheme over HTTP, above the registry.
//!
//! - [`http`]: what the HTTP side shares below all of it (the `ApiError` response, what a
//!   request asks for, documents with entity tags, the chain's contract).
//! - [`filters`]: the handler chain in front of the endpoints (request info, logging,
//!   metrics, panics, timeouts, authentication, audit, impersonation, limits,
//!   authorization), with [`authn`], [`authz`] and [`audit`], which it runs.
//! - `aggregator` (feature `aggregation`): APIServices served here or proxied to other
//!   servers, and the merged discovery and OpenAPI documents.
//! - [`endpoints`]: the routes of every kind bound to the registry, discovery, OpenAPI,
//!   health ([`health`]), metrics and profiling.
//! - `webhooks` (feature `admission-webhooks`): the admission webhooks, the registry's
//!   admission hook.
//! - [`controllers`]: the built-in controllers (namespaces, garbage collection, event
//!   expiry, CRDs, APIServices, RBAC aggregation), clients of the registry.
//! - `serviceaccount` (feature `builtin`): service-account tokens issued (TokenRequest),
//!   accepted (an `authn` method), and published (the issuer's discovery documents).
//! - [`kubeconfig`]: kubeconfig files, for clients of other servers.
//! - [`app`]: the server as a program: its flags under kube-apiserver's names and its
//!   start-up and shutdown, for an API `cargo xtask generate` made.
//!
//! Kubernetes' feature sets (`rbac`, `crds`, `admission-webhooks`, `aggregation`, as
//! kapi-kinds') switch what serving each takes on: a set left out is not compiled, and a
//! flag that needs it is a start-up error naming it.
//!
//! Invariant: this crate names no concrete resource type of an API (only Kubernetes' own
//! kinds its machinery reads, from `kapi-kinds`); it learns them from the generated scheme
//! at start-up. Nothing below it imports it.

pub mod admission;
#[cfg(feature = "aggregation")]
pub mod aggregator;
pub mod app;
pub mod audit;
pub mod authn;
pub mod authz;
#[cfg(feature = "builtin")]
pub mod builtin;
pub mod controllers;
pub mod endpoints;
pub mod filters;
pub mod flowcontrol;
pub mod health;
pub mod http;
pub mod kubeconfig;
#[cfg(feature = "admission-webhooks")]
pub mod policies;
pub mod quota;
#[cfg(feature = "builtin")]
pub mod serviceaccount;
#[cfg(feature = "admission-webhooks")]
pub mod webhooks;
