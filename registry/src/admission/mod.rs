//! Admission: what judges a write, and may change it, between decoding and storage, as
//! kube's admission chain does. Two kinds of admitters, run by the registry in kube's
//! order for every kind, compiled or defined by a CustomResourceDefinition:
//!
//! 1. the mutating side of an [`Admission`] (the API server's admission webhooks), on the
//!    decoded and defaulted request object in the request's version (what it changes is
//!    then defaulted and validated again);
//! 2. after the kind's validation, the validating side of the [`Admission`], and the
//!    in-process checks the server registers ([`Admit`]: the RBAC escalation check is
//!    one);
//! 3. then storage.
//!
//! A create answered by an action (`pods/eviction`, `pods/binding`,
//! `serviceaccounts/token`, `bindings`) goes through the mutating side with its body as the
//! object before the action runs on the body as it left it; the action asks for the
//! validating side once its own checks passed (`ActionRequest::validate`), as kube's REST
//! storages call `createValidation`. A DELETE goes through both sides too, with the
//! stored object as `oldObject` and no object (the mutating side may refuse it, not change
//! it), and a CONNECT (`pods/exec`, the proxies) with its options as the object (the
//! connector says what they are), which the mutating side may change before the connector
//! reads them. What admission says for the audit log is [`annotate`]d (`annotations`).

mod annotations;
mod checks;

use serde_json::Value;

pub use annotations::{AuditAnnotations, annotate};
pub use checks::{Admit, Checks};

use crate::Registry;
use kapi_core::error::ApiError;
use kapi_core::scheme::KindEntry;
use kapi_core::user::UserInfo;

/// What a write does, as admission names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create (`POST`, or an update or apply that creates).
    Create,
    /// An update (`PUT`, `PATCH`, an apply).
    Update,
    /// A delete.
    Delete,
    /// A connect to a subresource (`pods/exec`, `services/proxy`): admitted with its
    /// options as the object.
    Connect,
}

impl Operation {
    /// kube's name of it: `CREATE`, `UPDATE`, `DELETE`, `CONNECT`.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// A write, as admission sees it.
#[derive(Clone, Copy)]
pub struct Attributes<'a> {
    /// What it does.
    pub operation: Operation,
    /// The kind written.
    pub kind: &'a KindEntry,
    /// The version the request speaks.
    pub version: &'a str,
    /// `status`, `scale`, or empty.
    pub subresource: &'a str,
    /// The object's namespace (none for a cluster-scoped kind).
    pub namespace: Option<&'a str>,
    /// The object's name (empty for a create whose name is generated).
    pub name: &'a str,
    /// Who writes; `None` for the server's own writes.
    pub user: Option<&'a UserInfo>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The request's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`) as JSON;
    /// null for a connect, whose options are its object.
    pub options: &'a Value,
    /// The kind of the object admitted when it is not the resource's (kube's request kind
    /// of such a subresource): a connect's options (`PodExecOptions`, in the resource's
    /// group and the request's version), the body of a create an action answers
    /// (`policy/v1` `Eviction` for `pods/eviction`).
    pub object_kind: Option<ObjectKind<'a>>,
}

/// The kind of an object admitted on a resource of another kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectKind<'a> {
    /// Its group (empty for the core group).
    pub group: &'a str,
    /// Its version.
    pub version: &'a str,
    /// Its kind.
    pub kind: &'a str,
}

/// Admission that calls out of the registry, as kube's mutating and validating admission
/// plugins do (the API server's webhooks are one): the registry calls it on every write of
/// every kind, handing itself in, so that the admission may read what it needs (its
/// configurations, the namespace) through the registry it judges.
#[async_trait::async_trait]
pub trait Admission: Send + Sync {
    /// Whether anything mutating, and anything validating, applies to this write (the
    /// registry skips the work of preparing what would not be sent).
    async fn configured(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
    ) -> Result<(bool, bool), ApiError>;

    /// The object (in the request's version; `old` in the same version for an update or
    /// delete) as the mutating side leaves it, with its warnings. A delete's object is
    /// null: nothing may change it (kube's mutating webhooks fail a delete they patch); a
    /// connect's is its options.
    async fn mutate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Value,
        old: Option<&Value>,
    ) -> Result<(Value, Vec<String>), ApiError>;

    /// The validating side's verdict on a write (`object` and `old` in the request's
    /// version; no object for a delete): its warnings, or why it refuses.
    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError>;
}
