//! Subresources that reach what serves an object (`SubresourceShape::Read` and
//! `Connect`: kube's Pod `log`, `exec`, `attach`, `portforward` and `proxy`, Service and
//! Node `proxy`): the registry hands each request to the [`Connector`] the server
//! registered for the subresource, which reads what it needs through the registry and
//! says where the request goes ([`Connection`]), or why it cannot.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::{Registry, Target};
use kapi_core::api::{Method, SubresourceShape};
use kapi_core::error::ApiError;

/// A boxed future of a connector's answer.
pub type Connecting<'a> = Pin<Box<dyn Future<Output = Result<Connection, ApiError>> + Send + 'a>>;

/// What answers one subresource's connects.
pub trait Connector: Send + Sync {
    /// Where `request` goes, or why it cannot.
    fn connect<'a>(&'a self, registry: &'a Registry, request: ConnectRequest<'a>)
    -> Connecting<'a>;
}

/// One connect (or read) of a subresource.
pub struct ConnectRequest<'a> {
    /// The kind and namespace of the path.
    pub target: Target<'a>,
    /// The object's name, from the path (for a proxy, possibly `name:port` or
    /// `scheme:name:port`).
    pub name: &'a str,
    /// `exec`, `log`, `proxy`.
    pub subresource: &'a str,
    /// The request's method.
    pub method: Method,
    /// The query's parameters, decoded, in order (repeatable: `command=a&command=b`).
    pub query: &'a [(String, String)],
    /// The rest of the path after the subresource (`proxy/{path}`), when the route has one.
    pub path: Option<&'a str>,
    /// The request asks to upgrade the connection (`Connection: Upgrade`).
    pub upgrade: bool,
}

impl ConnectRequest<'_> {
    /// The last value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        (self.query.iter().rev())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Where a connect goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Nowhere, and that is the answer: `204 No Content` (kube's log of a pod no node
    /// runs).
    NoContent,
    /// Again, at the request's path with a trailing `/` (kube's proxies: `301`, so that
    /// relative links resolve below the proxy).
    AddTrailingSlash,
}

/// The registered connectors, by group, resource and subresource.
pub(crate) type Connectors = super::hooks::ByResource<dyn Connector>;

impl Registry {
    /// Answers the connects (and reads) of `group`/`plural`'s subresource `subresource`
    /// with `connector`.
    pub fn set_connector(
        &self,
        group: &str,
        plural: &str,
        subresource: &str,
        connector: Arc<dyn Connector>,
    ) {
        self.connectors.set(group, plural, subresource, connector);
    }

    /// A connect to, or read of, a `Read` or `Connect` subresource, answered by its
    /// connector; a subresource without one is not supported (405), as kube answers a verb
    /// its storage lacks.
    pub async fn connect(&self, request: ConnectRequest<'_>) -> Result<Connection, ApiError> {
        let info = request.target.kind.info;
        let shape = info
            .subresources
            .other(request.subresource)
            .map(|s| &s.shape);
        if !matches!(
            shape,
            Some(SubresourceShape::Read | SubresourceShape::Connect { .. })
        ) {
            return Err(ApiError::NoRoute);
        }
        let connector = (self.connectors).get(info.group, info.plural, request.subresource);
        let Some(connector) = connector else {
            return Err(ApiError::MethodNotSupported {
                resource: super::object::resource(info),
                action: "connect".into(),
            });
        };
        connector.connect(self, request).await
    }
}
