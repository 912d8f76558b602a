//! kapi-server's integration tests: one binary, so that the support module and the
//! clients are compiled and linked once rather than once per file. Each module drives the
//! real server binary with real clients (kubectl 1.32 and 1.20, kube-rs, the Python client,
//! raw HTTP); `support` starts servers, stores and clients.

mod support;

mod admission;
mod admission_plugins;
mod admission_policies;
mod aggregation;
mod apply;
mod apply_clients;
mod audit;
mod auth;
mod builtin_clients;
mod builtin_commands;
mod builtin_defaults;
mod builtin_kinds;
mod builtin_lifecycles;
mod builtin_subresources;
mod builtin_tables;
mod builtin_versions;
mod builtin_warnings;
mod compiled_rules;
mod component_statuses;
mod configmap;
mod connect_admission;
mod controller;
mod conversion;
mod crd_rules;
mod crd_schemas;
mod crds;
mod custom_resources;
mod differential;
mod durability;
#[cfg(feature = "etcd")]
mod etcd;
mod events;
mod feature_gates;
mod finalizers;
mod flowcontrol;
mod front_proxy;
mod gateway_api;
mod gc;
mod kube_types;
mod kubectl;
mod leases;
mod lists;
mod logging;
mod metrics;
mod mutating_admission_policies;
mod namespaces;
mod oidc;
mod operations;
mod protobuf;
mod python_client;
mod reflector;
mod rollouts;
mod runtime_config;
mod service_accounts;
mod services;
mod smoke;
mod strategic;
mod validation;
mod watch;
