//! kapi's CEL engine: Kubernetes' validation rules (`x-kubernetes-validations` in
//! CustomResourceDefinitions, later the derives' rules and admission policies) evaluated as
//! kube-apiserver evaluates them.
//!
//! Built in parts. So far:
//!
//! - [`escape`]: how a schema's property names become CEL identifiers
//!   (`self.spec.max__dash__size`), kube's `Escape` and `Unescape`.
//! - [`types`]: the CEL type of each node of a structural schema, with the bounds kube's
//!   cost estimator reads (kube's `SchemaDeclType`).
//! - [`environment`]: what the language and its libraries offer a rule, by Kubernetes
//!   version, for rules written now and for rules already stored.
//! - [`admission`]: the expressions of admission policies and webhooks' match
//!   conditions, with kube's variables (`object`, `request`, `params`, `authorizer`, ...).

pub mod admission;
pub mod checker;
pub mod comprehensions;
pub mod cost;
pub mod definition;
pub mod environment;
pub mod escape;
pub mod interpreter;
pub mod library;
pub mod program;
mod stack;
pub mod syntax;
pub mod time;
pub mod ty;
pub mod types;
pub mod validation;
pub mod value;
