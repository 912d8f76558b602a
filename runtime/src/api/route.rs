//! Routes: what kube-apiserver's installer registers for a resource.

/// HTTP method of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
}

impl Method {
    /// Upper-case name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// What a route does: kube-apiserver's `x-kubernetes-action`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read one object.
    Get,
    /// List a collection (and watch it with `?watch=true`).
    List,
    /// Create an object in a collection (`post`).
    Create,
    /// Replace an object (`put`).
    Update,
    /// Patch an object.
    Patch,
    /// Delete an object.
    Delete,
    /// Delete the objects of a collection that match the selectors.
    DeleteCollection,
    /// Watch one object: the deprecated `/watch/.../{name}` path.
    Watch,
    /// Watch a collection: the deprecated `/watch/...` path.
    WatchList,
}

impl Action {
    /// The value of `x-kubernetes-action`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Get => "get",
            Action::List => "list",
            Action::Create => "post",
            Action::Update => "put",
            Action::Patch => "patch",
            Action::Delete => "delete",
            Action::DeleteCollection => "deletecollection",
            Action::Watch => "watch",
            Action::WatchList => "watchlist",
        }
    }

    /// The authorization / discovery verb the action belongs to.
    pub fn verb(self) -> &'static str {
        match self {
            Action::Get => "get",
            Action::List => "list",
            Action::Create => "create",
            Action::Update => "update",
            Action::Patch => "patch",
            Action::Delete => "delete",
            Action::DeleteCollection => "deletecollection",
            Action::Watch | Action::WatchList => "watch",
        }
    }
}

/// One route of a resource in one version.
#[derive(Debug)]
pub struct Route {
    /// HTTP method.
    pub method: Method,
    /// Path template with `{namespace}` and `{name}` parameters:
    /// `/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/status`.
    pub path: &'static str,
    /// What the route does.
    pub action: Action,
    /// `status` or `scale`, for subresource routes.
    pub subresource: Option<&'static str>,
    /// kube-apiserver installer style, unique within a group-version:
    /// `listNamespacedWebApp`, `readNamespacedWebAppStatus`, `listWebAppForAllNamespaces`.
    pub operation_id: &'static str,
}

impl Route {
    /// The route's path names a `{namespace}`.
    pub fn is_namespaced(&self) -> bool {
        self.path.contains("{namespace}")
    }

    /// The route addresses one object (its path names a `{name}`).
    pub fn is_object(&self) -> bool {
        self.path.contains("{name}")
    }
}
