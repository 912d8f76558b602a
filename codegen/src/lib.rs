//! kapi's code generator: one [`ApiModel`] built from what the derives registered, and the
//! renderers that turn it into OpenAPI documents, discovery documents and handler glue.
//!
//! Invariant: this crate does no I/O. It takes `&'static KindInfo`s and returns strings and
//! bytes; `xtask` decides where they go.

pub mod crd;
pub mod discovery;
pub mod glue;
pub mod model;
pub mod openapi;
pub mod render;
pub use kapi_core::api::version_order as version_priority;

pub use model::{ApiModel, GroupModel, GroupVersionModel, ModelError, ResourceModel};
pub use render::{
    DiscoveryDocument, FileKind, GeneratedFile, RenderError, discovery_documents, render,
    served_documents,
};
