//! Auditing (`--audit-policy-file`, `--audit-log-path`): one `audit.k8s.io/v1` `Event`
//! JSON line per stage of each request the policy ([`policy`]) selects, as kube-apiserver
//! writes them: `RequestReceived` once the user is known, `ResponseStarted` for
//! long-running requests (watches) once their headers are sent, `ResponseComplete` once the
//! response has been sent, with the user, the impersonated user, the verb, the object
//! referred to, the source IPs, the user agent, the response's code (and, for failures,
//! the Status' status and reason), the authorization decision as annotations, and the
//! bodies at the `Request` and `RequestResponse` levels. Requests that fail authentication
//! are audited too, at `ResponseStarted`, with no user (kube's
//! `WithFailedAuthenticationAudit`). Every response carries its `Audit-Id`.
//!
//! Writing never blocks a request: events go through a bounded buffer to a writer thread
//! ([`log`]); see there for what happens when it is full or the disk is.

pub mod event;
pub mod log;
pub mod policy;

pub use event::Event;
pub use log::{AuditLog, LogOptions};
pub use policy::{Level, Policy, Stage};

/// The policy and where events go.
pub struct Auditor {
    /// Which requests, at which level.
    pub policy: Policy,
    /// The log.
    pub log: AuditLog,
}
