//! The route table: each route of each served version bound to a generic handler.
//!
//! The generated glue lists every binding; the HTTP layer mounts them. A route maps to a
//! handler by what it does (its action and subresource), never by kind.

use super::{Action, KindInfo, Route};

/// The generic handler a route is served by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Handler {
    /// Read one object.
    Get,
    /// List (or, with `?watch=true`, watch) a collection.
    List,
    /// Create an object.
    Create,
    /// Replace an object.
    Update,
    /// Patch an object.
    Patch,
    /// Delete an object.
    Delete,
    /// Delete a collection.
    DeleteCollection,
    /// Watch one object (deprecated `/watch/` path).
    Watch,
    /// Watch a collection (deprecated `/watch/` path).
    WatchList,
    /// Read the status subresource.
    GetStatus,
    /// Replace the status subresource.
    UpdateStatus,
    /// Patch the status subresource.
    PatchStatus,
    /// Read the scale subresource.
    GetScale,
    /// Replace the scale subresource.
    UpdateScale,
    /// Patch the scale subresource.
    PatchScale,
    /// Replace the finalize subresource (`spec.finalizers`).
    UpdateFinalize,
    /// Read a `Fields` subresource: the object.
    GetOther,
    /// Replace a `Fields` subresource.
    UpdateOther,
    /// Patch a `Fields` subresource.
    PatchOther,
    /// Create on a `Create` subresource (`binding`, `eviction`).
    CreateOther,
    /// Read a `Read` subresource, answered by its connector (`log`).
    Read,
    /// Connect to a `Connect` subresource (`exec`, `proxy`).
    Connect,
}

impl Handler {
    /// The handler serving `route` of `kind`, or `None` for a subresource no handler
    /// exists for, or that the kind does not declare.
    pub fn for_route(kind: &KindInfo, route: &Route) -> Option<Handler> {
        use super::SubresourceShape as Shape;
        use Action::*;
        let subresources = &kind.subresources;
        Some(match (route.subresource, route.action) {
            (None, Get) => Handler::Get,
            (None, List) => Handler::List,
            (None, Create) => Handler::Create,
            (None, Update) => Handler::Update,
            (None, Patch) => Handler::Patch,
            (None, Delete) => Handler::Delete,
            (None, DeleteCollection) => Handler::DeleteCollection,
            (None, Watch) => Handler::Watch,
            (None, WatchList) => Handler::WatchList,
            (Some("status"), _) if !subresources.status => return None,
            (Some("status"), Get) => Handler::GetStatus,
            (Some("status"), Update) => Handler::UpdateStatus,
            (Some("status"), Patch) => Handler::PatchStatus,
            (Some("scale"), _) if subresources.scale.is_none() => return None,
            (Some("scale"), Get) => Handler::GetScale,
            (Some("scale"), Update) => Handler::UpdateScale,
            (Some("scale"), Patch) => Handler::PatchScale,
            (Some("finalize"), Update) => Handler::UpdateFinalize,
            (Some(name), action) => match (&subresources.other(name)?.shape, action) {
                (Shape::Fields(_), Get) => Handler::GetOther,
                (Shape::Fields(_), Update) => Handler::UpdateOther,
                (Shape::Fields(_), Patch) => Handler::PatchOther,
                (Shape::Create(_), Create) => Handler::CreateOther,
                (Shape::Read, Get) => Handler::Read,
                (Shape::Connect { .. }, Connect) => Handler::Connect,
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// One route of one kind in one version, bound to its handler.
#[derive(Clone, Copy, Debug)]
pub struct RouteBinding {
    /// The kind.
    pub kind: &'static KindInfo,
    /// The served version (`v1`).
    pub version: &'static str,
    /// The route.
    pub route: &'static Route,
    /// Its handler.
    pub handler: Handler,
}
