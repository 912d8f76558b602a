//! The OpenAPI documents kube-apiserver serves, rendered from the [`ApiModel`](crate::ApiModel).
//!
//! - [`v3`]: one OpenAPI 3.0 document per group-version (`/openapi/v3/apis/<g>/<v>`), and the
//!   `/openapi/v3` index that points to them with content hashes. kubectl 1.32 reads these
//!   for `explain` and to decide whether the server validates fields itself.
//! - [`v2`]: one Swagger 2.0 document for the whole API (`/openapi/v2`).
//! - [`v2_proto`]: that document as the gnostic `openapi_v2.Document` protobuf, the only
//!   form kubectl 1.20 accepts (for `explain` and client-side validation).
//!
//! Both documents come from one plan of the routes (the private `plan` module: paths,
//! parameters, bodies, responses) and one normalization of the model's schemas (the private
//! `schema` module), so they cannot disagree. Everything here is pure: values in, values out.

mod plan;
pub(crate) mod schema;
pub mod v2;
pub mod v2_proto;
pub mod v3;

/// `info.title` of every document, as kube-apiserver has it.
pub const TITLE: &str = "Kubernetes";

/// `info.version` of every document. Semver, as kubectl expects of the server's version.
pub const VERSION: &str = "v1.32.0-kapi";

/// Why the routes and schemas of an API do not make a valid OpenAPI document.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// A schema that `openapiv3` cannot represent (a bug in the normalization, or a schema
    /// attribute OpenAPI 3.0 does not have).
    #[error("schema {name} is not a valid OpenAPI 3.0 schema: {message}")]
    Schema {
        /// Qualified schema name.
        name: String,
        /// What the parser said.
        message: String,
    },
    /// Two routes of a group-version share a path and method.
    #[error("{method} {path} is declared twice ({first} and {second})")]
    DuplicateRoute {
        /// HTTP method.
        method: &'static str,
        /// Path template.
        path: String,
        /// One operation id.
        first: String,
        /// The other.
        second: String,
    },
    /// An operation id that does not start with one of kube-apiserver's verbs, so no
    /// document-wide id can be made from it.
    #[error("operation id {0} does not start with a verb (get, list, read, create, ...)")]
    OperationVerb(String),
    /// Two operations of the whole-API document get the same id.
    #[error("operation id {id} is used by both {first} and {second}")]
    DuplicateOperationId {
        /// The id.
        id: String,
        /// `METHOD path` of one operation.
        first: String,
        /// `METHOD path` of the other.
        second: String,
    },
    /// Two group-versions define a schema of the same name differently, so the whole-API
    /// document cannot hold both.
    #[error("definition {name} differs between {first} and {second}")]
    DefinitionConflict {
        /// Qualified schema name.
        name: String,
        /// Group-version (`apiVersion` form) that defined it first.
        first: String,
        /// The other group-version.
        second: String,
    },
}
