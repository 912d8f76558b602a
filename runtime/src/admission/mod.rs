//! Admission: what judges a write, and may change it, between decoding and storage, as
//! kube's admission chain does. Two kinds of admitters, run by the registry in kube's
//! order for every kind, compiled or defined by a CustomResourceDefinition:
//!
//! 1. the mutating admission webhooks ([`webhooks`]), on the decoded and defaulted request
//!    object in the request's version (their JSON patches applied; the registry then
//!    defaults and validates what they made);
//! 2. after the kind's validation, the validating admission webhooks, called together,
//!    and the in-process checks the server registers ([`Admit`]: the RBAC escalation
//!    check is one);
//! 3. then storage.
//!
//! A DELETE goes through the webhooks whose rules name it, with the object as `oldObject`.
//! The webhook configurations themselves are never sent to webhooks, so that a broken
//! webhook cannot lock out its own repair (as kube exempts them).

mod checks;
pub mod webhooks;

use serde_json::Value;

pub use checks::{Admit, Checks};

use crate::authn::UserInfo;
use crate::scheme::KindEntry;

/// What a write does, as admission names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create (`POST`, or an update or apply that creates).
    Create,
    /// An update (`PUT`, `PATCH`, an apply).
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    /// kube's name of it: `CREATE`, `UPDATE`, `DELETE`.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
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
    /// The request's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`) as JSON.
    pub options: &'a Value,
}
