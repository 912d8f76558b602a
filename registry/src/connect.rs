//! Subresources that reach what serves an object (`SubresourceShape::Read` and
//! `Connect`: kube's Pod `log`, `exec`, `attach`, `portforward` and `proxy`, Service and
//! Node `proxy`): the registry hands each request to the [`Connector`] the server
//! registered for the subresource, which reads what it needs through the registry and
//! says where the request goes ([`Connection`]), or why it cannot. A connect is admitted
//! first, as kube admits it: its options ([`Connector::options`], `PodExecOptions` for an
//! exec) are the object, operation `CONNECT`, that the mutating admission may change and
//! the validating admission judges; the connector then reads the options as admission left
//! them ([`ConnectRequest::options`]), as kube's connectors read the options object it
//! admitted (a webhook that swaps an exec's container sends the exec there).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::{Registry, Target};
use crate::admission::{Attributes, ObjectKind, Operation};
use kapi_core::api::{Method, SubresourceShape};
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;

/// A boxed future of a connector's answer.
pub type Connecting<'a> = Pin<Box<dyn Future<Output = Result<Connection, ApiError>> + Send + 'a>>;

/// What answers one subresource's connects.
pub trait Connector: Send + Sync {
    /// Where `request` goes, or why it cannot.
    fn connect<'a>(&'a self, registry: &'a Registry, request: ConnectRequest<'a>)
    -> Connecting<'a>;

    /// The options a connect is admitted with, as kube decodes them from the query: their
    /// kind (`PodExecOptions`, in the resource's group and the request's version) and the
    /// object. `None`: the request is not admitted (a read, as a pod's `log` is).
    fn options(&self, request: &ConnectRequest<'_>) -> Option<(&'static str, Value)> {
        let _ = request;
        None
    }
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
    /// Who connects; `None` for the server itself.
    pub user: Option<&'a UserInfo>,
    /// The options as admission left them (the registry sets them before the connector
    /// runs; `None` for a read, which is not admitted). What they carry (an exec's
    /// `container`, a proxy's `path`) is read from here, not from the query.
    pub options: Option<Value>,
}

impl ConnectRequest<'_> {
    /// The last value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        (self.query.iter().rev())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The admitted options' string field `name` (an exec's `container`, a proxy's
    /// `path`), when set and not empty.
    pub fn option(&self, name: &str) -> Option<&str> {
        (self.options.as_ref())
            .and_then(|options| options.get(name))
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
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
    /// connector once admitted, on the options as the admission left them (its warnings go
    /// to `warnings`, whatever the connector answers); a subresource without one is not
    /// supported (405), as kube answers a verb its storage lacks.
    pub async fn connect(
        &self,
        mut request: ConnectRequest<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<Connection, ApiError> {
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
        // Reads (a pod's `log`) are not admitted.
        let admitted = matches!(shape, Some(SubresourceShape::Connect { .. }))
            .then(|| connector.options(&request))
            .flatten();
        if let Some((kind, options)) = admitted {
            let options = (self.admit_connect(&request, kind, options, warnings)).await?;
            request.options = Some(options);
        }
        connector.connect(self, request).await
    }

    /// The admission of a connect, its options the object (kube's connect handler): the
    /// mutating side, then the validating side on what it made: the options as they
    /// leave it (its warnings added to `warnings` as they come).
    async fn admit_connect(
        &self,
        request: &ConnectRequest<'_>,
        kind: &str,
        options: Value,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        let attributes = Attributes {
            operation: Operation::Connect,
            kind: request.target.kind,
            version: request.target.version,
            subresource: request.subresource,
            namespace: request.target.namespace,
            name: request.name,
            user: request.user,
            dry_run: false,
            options: &Value::Null,
            object_kind: Some(ObjectKind {
                group: request.target.kind.info.group,
                version: request.target.version,
                kind,
            }),
        };
        let configured = self.webhooks_configured(&attributes).await?;
        (self.admit_through(&attributes, configured, options, None, warnings)).await
    }
}
