//! Kubernetes' built-in kinds: every kind kube-apiserver 1.32 serves by default in its GA
//! groups beside those `kapi-kinds` declares by hand, declared with kapi's own derives like
//! a user's kinds, and generated from kube's own description of its API (k8s.io/api at the
//! tag kube 1.32 ships; `apigen/` reads it, `cargo xtask generate` writes [`api`]).
//!
//! The kinds are served in sets an API lists ([`api::sets`]: `WORKLOADS`, `NETWORKING`,
//! `STORAGE`, `CONFIG`, `POLICY`, `CLUSTER`, `CERTIFICATES`, `FLOWCONTROL`); this crate
//! is compiled only when a server chooses it (`kapi`'s `builtin` feature).

// The derives name `::kapi`, the path a user's crate reaches kapi by; here that is
// kapi-core, whose items the expansions name.
extern crate kapi_core as kapi;

pub mod api;
mod conversions;
mod defaults;
pub mod services;
mod strategies;
mod tables;
mod validation;
mod warnings;
