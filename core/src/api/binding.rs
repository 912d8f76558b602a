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
}

impl Handler {
    /// The handler serving `route`, or `None` for a subresource no handler exists for.
    pub fn for_route(route: &Route) -> Option<Handler> {
        use Action::*;
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
            (Some("status"), Get) => Handler::GetStatus,
            (Some("status"), Update) => Handler::UpdateStatus,
            (Some("status"), Patch) => Handler::PatchStatus,
            (Some("scale"), Get) => Handler::GetScale,
            (Some("scale"), Update) => Handler::UpdateScale,
            (Some("scale"), Patch) => Handler::PatchScale,
            (Some("finalize"), Update) => Handler::UpdateFinalize,
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
