//! Kubernetes' own kinds that the runtime itself relies on, declared with the same derives
//! as a user's kinds and served like them once listed in an API's kinds.
//!
//! - [`rbac`]: `rbac.authorization.k8s.io/v1` Role, ClusterRole, RoleBinding and
//!   ClusterRoleBinding, which the RBAC authorizer (`authz::rbac`) reads.
//! - [`apiextensions`]: `apiextensions.k8s.io/v1` CustomResourceDefinitions, validated as
//!   kube validates them.
//! - [`admissionregistration`]: `admissionregistration.k8s.io/v1` webhook configurations,
//!   which the server's admission (`admission`) calls.
//! - [`apiregistration`]: `apiregistration.k8s.io/v1` APIServices, the group-versions
//!   the aggregator (`aggregator`) serves itself or proxies to other servers.
//! - [`authorization`] and [`authentication`]: the reviews (`kubectl auth can-i`,
//!   `kubectl auth whoami`), created and answered, never stored.
//!
//! An API that authorizes with RBAC lists [`rbac::KINDS`] among its kinds; the server
//! refuses `--authorization-mode=RBAC` for a scheme without them.

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod authentication;
pub mod authorization;
pub mod rbac;
