//! Schemas, validation and selectors: what a server checks of an object before anything
//! is stored, with no storage and no requests of its own.
//!
//! - [`Schemas`]: each served version's OpenAPI v3 schema, compiled once; an object's
//!   defaulting, validation (and immutable fields on update) and pruning against it
//!   ([`KindSchema`]).
//! - [`metadata`]: the rules every object's metadata follows (kube's
//!   `ValidateObjectMeta`), embedded resources' included, and the replica paths of kinds
//!   with a scale subresource.
//! - [`structural`]: a compiled kind's schema inlined into one structural schema, as
//!   validation rules and CustomResourceDefinitions read schemas.
//! - [`offline`]: an API's objects judged against their schemas and rules with no server,
//!   with the server's errors.
//! - [`selector`]: label and field selectors, parsed and matched as kube's.
//! - `testing` (feature `testing`): arbitrary objects within a version's schema and the
//!   hub-conversion round-trip properties `cargo xtask generate` writes tests for.
//!
//! Invariant: this crate reads objects as JSON and kinds through `kapi-core`'s description;
//! it imports no layer above that.

pub mod metadata;
pub mod offline;
mod prune;
mod schemas;
pub mod selector;
pub mod structural;
#[cfg(feature = "testing")]
pub mod testing;

pub use schemas::{Flat, IMMUTABLE_EXTENSION, KindSchema, ListType, Node, SchemaError, Schemas};
