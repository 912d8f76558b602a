//! Routes: what kube-apiserver's installer registers for a resource.

pub use kapi_routes::{Action, Method};

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
    /// `status`, `scale` or another subresource's name, for subresource routes.
    pub subresource: Option<&'static str>,
    /// kube-apiserver installer style, unique within a group-version:
    /// `listNamespacedWebApp`, `readNamespacedWebAppStatus`, `listWebAppForAllNamespaces`.
    pub operation_id: &'static str,
}

impl Route {
    /// The authorization and discovery verb of the route ([`kapi_routes::Route::verb`]).
    pub fn verb(&self) -> Option<&'static str> {
        match self.action {
            Action::Connect => kapi_routes::connect_verb(self.method),
            action => Some(action.verb()),
        }
    }

    /// The route's path names a `{namespace}`.
    pub fn is_namespaced(&self) -> bool {
        self.path.contains("{namespace}")
    }

    /// The route addresses one object (its path names a `{name}`).
    pub fn is_object(&self) -> bool {
        self.path.contains("{name}")
    }
}
