//! The subresources kube serves from a node's kubelet or a Service's endpoints: a Pod's
//! `log`, `exec`, `attach`, `portforward` and `proxy`, a Service's and a Node's `proxy`.
//! kube checks the request and finds where it goes (the pod's node and its address, the
//! pod's IP, the Service's ready endpoints) before it dials; every check is made here as
//! kube makes it, in its order and with its answers. What passes them all would be dialled;
//! kapi runs no kubelets and proxies to no endpoints, so it answers as kube does when the
//! far end cannot be reached.

use std::net::IpAddr;

use serde_json::Value;

use super::{core_kind, plain_error, target};
use kapi_core::api::Method;
use kapi_core::error::{ApiError, FieldError, FieldErrorType};
use kapi_registry::{ConnectRequest, Connecting, Connection, Connector, Registry};

/// kube's default `--kubelet-preferred-address-types`.
const PREFERRED_ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// A Pod's `log`, `exec`, `attach`, `portforward` and `proxy`.
pub(super) struct Pods;

/// A Service's `proxy`.
pub(super) struct Services;

/// A Node's `proxy`.
pub(super) struct Nodes;

impl Connector for Pods {
    fn connect<'a>(
        &'a self,
        registry: &'a Registry,
        request: ConnectRequest<'a>,
    ) -> Connecting<'a> {
        Box::pin(async move {
            match request.subresource {
                "log" => log(registry, &request).await,
                "exec" | "attach" => stream(registry, &request, true).await,
                "portforward" => stream(registry, &request, false).await,
                _ => pod_proxy(registry, &request).await,
            }
        })
    }

    fn options(&self, request: &ConnectRequest<'_>) -> Option<(&'static str, Value)> {
        super::connect_options::options("pods", request)
    }
}

impl Connector for Services {
    fn connect<'a>(
        &'a self,
        registry: &'a Registry,
        request: ConnectRequest<'a>,
    ) -> Connecting<'a> {
        Box::pin(service_proxy(registry, request))
    }

    fn options(&self, request: &ConnectRequest<'_>) -> Option<(&'static str, Value)> {
        super::connect_options::options("services", request)
    }
}

impl Connector for Nodes {
    fn connect<'a>(
        &'a self,
        registry: &'a Registry,
        request: ConnectRequest<'a>,
    ) -> Connecting<'a> {
        Box::pin(node_proxy(registry, request))
    }

    fn options(&self, request: &ConnectRequest<'_>) -> Option<(&'static str, Value)> {
        super::connect_options::options("nodes", request)
    }
}

/// The pod the request names.
async fn pod(
    registry: &Registry,
    request: &ConnectRequest<'_>,
    name: &str,
) -> Result<Value, ApiError> {
    let pods = core_kind(registry, "pods")?;
    registry
        .get(target(&pods, request.target.namespace), name, None)
        .await
}

/// `GET pods/{name}/log`: the options checked (kube's `ValidatePodLogOptions`, before the
/// pod is read), the container chosen; a pod no node runs has no log yet (204).
async fn log(registry: &Registry, request: &ConnectRequest<'_>) -> Result<Connection, ApiError> {
    let name = request.name;
    let mut causes = Vec::new();
    let int = |key: &str| -> Result<Option<i64>, ApiError> {
        match request.param(key).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                ApiError::BadRequest(format!("invalid value {v:?} for query parameter {key:?}"))
            }),
        }
    };
    let invalid = |field: &str, value: i64, detail: &str| FieldError {
        error_type: FieldErrorType::Invalid,
        field: field.into(),
        value: Some(value.into()),
        detail: detail.into(),
    };
    if let Some(tail) = int("tailLines")?.filter(|t| *t < 0) {
        causes.push(invalid(
            "tailLines",
            tail,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(limit) = int("limitBytes")?.filter(|l| *l < 1) {
        causes.push(invalid("limitBytes", limit, "must be greater than 0"));
    }
    let since_seconds = int("sinceSeconds")?;
    if let Some(since) = since_seconds.filter(|s| *s < 1) {
        causes.push(invalid("sinceSeconds", since, "must be greater than 0"));
    }
    if since_seconds.is_some() && request.param("sinceTime").is_some_and(|t| !t.is_empty()) {
        causes.push(FieldError {
            error_type: FieldErrorType::Forbidden,
            field: String::new(),
            value: None,
            detail: "at most one of `sinceTime` or `sinceSeconds` may be specified".into(),
        });
    }
    if !causes.is_empty() {
        return Err(ApiError::Invalid {
            group: String::new(),
            kind: "PodLogOptions".into(),
            name: name.into(),
            causes,
        });
    }
    let pod = pod(registry, request, name).await?;
    container(&pod, name, request.param("container"))?;
    let Some(node) = node_name(&pod) else {
        return Ok(Connection::NoContent);
    };
    node_address(registry, node).await?;
    Err(unreachable(&format!("the kubelet of node {node:?}")))
}

/// `exec` and `attach` (`containers`: a container is chosen) and `portforward`: the pod
/// must be on a node whose kubelet can be reached, and the request an upgrade.
async fn stream(
    registry: &Registry,
    request: &ConnectRequest<'_>,
    containers: bool,
) -> Result<Connection, ApiError> {
    let name = request.name;
    let pod = pod(registry, request, name).await?;
    if containers {
        container(&pod, name, request.option("container"))?;
    }
    let Some(node) = node_name(&pod) else {
        return Err(ApiError::BadRequest(format!(
            "pod {name} does not have a host assigned"
        )));
    };
    node_address(registry, node).await?;
    if !request.upgrade {
        return Err(ApiError::BadRequest("Upgrade request required".into()));
    }
    Err(unreachable(&format!("the kubelet of node {node:?}")))
}

/// `pods/{name[:port]}/proxy[/path]`: the pod must have an address one may proxy to.
async fn pod_proxy(
    registry: &Registry,
    request: &ConnectRequest<'_>,
) -> Result<Connection, ApiError> {
    let Some((_, name, _)) = split_scheme_name_port(request.name) else {
        return Err(ApiError::BadRequest(format!(
            "invalid pod request {:?}",
            request.name
        )));
    };
    let pod = pod(registry, request, name).await?;
    let ip = (pod
        .pointer("/status/podIPs/0/ip")
        .or_else(|| pod.pointer("/status/podIP")))
    .and_then(Value::as_str)
    .and_then(|ip| ip.parse::<IpAddr>().ok());
    if !ip.is_some_and(is_global_unicast) {
        return Err(ApiError::BadRequest("address not allowed".into()));
    }
    proxied(request, "the pod")
}

/// `services/{name[:port]}/proxy[/path]`: the Service's port (when a number names it),
/// then its Endpoints with a ready address on that port.
async fn service_proxy(
    registry: &Registry,
    request: ConnectRequest<'_>,
) -> Result<Connection, ApiError> {
    let id = request.name;
    let Some((_, name, port)) = split_scheme_name_port(id) else {
        return Err(ApiError::BadRequest(format!(
            "invalid service request {id:?}"
        )));
    };
    let namespace = request.target.namespace;
    let mut port_name = port.to_owned();
    if let Ok(number) = port.parse::<i64>() {
        let services = core_kind(registry, "services")?;
        let service = registry
            .get(target(&services, namespace), name, None)
            .await?;
        let ports = service.pointer("/spec/ports").and_then(Value::as_array);
        let found = (ports.into_iter().flatten())
            .find(|p| p.get("port").and_then(Value::as_i64) == Some(number));
        match found {
            Some(found) => {
                port_name = found
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into();
            }
            None => {
                return Err(ApiError::ServiceUnavailable(format!(
                    "no service port {number} found for service {name:?}"
                )));
            }
        }
    }
    let endpoints = core_kind(registry, "endpoints")?;
    let found = registry
        .get(target(&endpoints, namespace), name, None)
        .await?;
    let subsets = (found.get("subsets").and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    if subsets.is_empty() {
        return Err(ApiError::ServiceUnavailable(format!(
            "no endpoints available for service {name:?}"
        )));
    }
    let serving = subsets.iter().any(|subset| {
        let ready = subset
            .get("addresses")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        let ports = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        ready
            && ports
                .clone()
                .any(|p| p.get("name").and_then(Value::as_str).unwrap_or_default() == port_name)
    });
    if !serving {
        return Err(ApiError::ServiceUnavailable(format!(
            "no endpoints available for service {id:?}"
        )));
    }
    proxied(&request, "the service's endpoints")
}

/// `nodes/{name[:port]}/proxy[/path]`: the node must have an address.
async fn node_proxy(
    registry: &Registry,
    request: ConnectRequest<'_>,
) -> Result<Connection, ApiError> {
    let Some((_, name, _)) = split_scheme_name_port(request.name) else {
        return Err(ApiError::BadRequest(format!(
            "invalid node request {:?}",
            request.name
        )));
    };
    node_address(registry, name).await?;
    proxied(&request, "the node")
}

/// What a proxy whose target passed every check answers: a `GET` or `HEAD` of the proxy
/// with no path (as admitted: the path after `proxy/`, else the `path` parameter) is sent
/// to `.../proxy/` first (so relative links resolve), as kube's proxy handler does;
/// anything else would be proxied.
fn proxied(request: &ConnectRequest<'_>, what: &str) -> Result<Connection, ApiError> {
    let root = request.option("path").is_none();
    if root && matches!(request.method, Method::Get | Method::Head) {
        return Ok(Connection::AddTrailingSlash);
    }
    Err(unreachable(what))
}

/// kube's answer when it cannot reach what it proxies to (503 `error trying to reach
/// service`), saying why here.
fn unreachable(what: &str) -> ApiError {
    ApiError::ServiceUnavailable(format!(
        "error trying to reach service: kapi does not connect to {what}: it runs no kubelets and proxies to no endpoints"
    ))
}

/// The pod's node, when one is assigned.
fn node_name(pod: &Value) -> Option<&str> {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

/// kube's `validateContainer`: the container named, or the only one; names are checked
/// among init, regular and ephemeral containers.
fn container<'a>(pod: &'a Value, name: &str, given: Option<&str>) -> Result<&'a str, ApiError> {
    let names = |field: &str| {
        (pod.pointer(&format!("/spec/{field}"))
            .and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
    };
    let all: Vec<&str> = (names("initContainers").chain(names("containers")))
        .chain(names("ephemeralContainers"))
        .collect();
    match given.filter(|c| !c.is_empty()) {
        Some(given) => all.iter().find(|c| **c == given).copied().ok_or_else(|| {
            ApiError::BadRequest(format!("container {given} is not valid for pod {name}"))
        }),
        None => {
            let regular: Vec<&str> = names("containers").collect();
            match regular.as_slice() {
                [only] => Ok(only),
                [] => Err(ApiError::BadRequest(format!(
                    "a container name must be specified for pod {name}"
                ))),
                _ => Err(ApiError::BadRequest(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    all.join(" ")
                ))),
            }
        }
    }
}

/// kube's `GetPreferredNodeAddress` of node `name` (read through the registry): the first
/// address of the first preferred type (a `Hostname` also from the node's
/// `kubernetes.io/hostname` label); none is a 500 without a reason, as kube's plain error.
async fn node_address(registry: &Registry, name: &str) -> Result<String, ApiError> {
    let nodes = core_kind(registry, "nodes")?;
    let node = registry.get(target(&nodes, None), name, None).await?;
    let addresses = (node.pointer("/status/addresses").and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    for preferred in PREFERRED_ADDRESS_TYPES {
        let found = (addresses.iter())
            .find(|a| a.get("type").and_then(Value::as_str) == Some(preferred))
            .and_then(|a| a.get("address").and_then(Value::as_str));
        if let Some(found) = found {
            return Ok(found.to_owned());
        }
        if *preferred == "Hostname"
            && let Some(label) = node
                .pointer("/metadata/labels/kubernetes.io~1hostname")
                .and_then(Value::as_str)
        {
            return Ok(label.to_owned());
        }
    }
    let known: Vec<String> = (addresses.iter())
        .map(|a| {
            let field = |f: &str| {
                a.get(f)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            format!("{{{} {}}}", field("type"), field("address"))
        })
        .collect();
    Err(plain_error(
        500,
        format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        ),
    ))
}

/// kube's `SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`, with the
/// scheme `http` or `https` when given; `None` when the id is none of these.
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    let scheme_ok = matches!(scheme, "" | "http" | "https");
    (scheme_ok && !name.is_empty()).then_some((scheme, name, port))
}

/// Go's `IP.IsGlobalUnicast`: not unspecified, loopback, multicast, link-local or the
/// IPv4 broadcast address.
fn is_global_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || link_local)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_split_as_kubes() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(
            split_scheme_name_port("web:8080"),
            Some(("", "web", "8080"))
        );
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
    }

    #[test]
    fn containers_are_chosen_as_kube_chooses_them() {
        let pod = json!({"spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "app"}, {"name": "side"}],
        }});
        assert_eq!(
            container(&pod, "p", None).unwrap_err().to_string(),
            "a container name must be specified for pod p, choose one of: [init app side]"
        );
        assert_eq!(container(&pod, "p", Some("init")).unwrap(), "init");
        assert_eq!(
            container(&pod, "p", Some("x")).unwrap_err().to_string(),
            "container x is not valid for pod p"
        );
        let one = json!({"spec": {"containers": [{"name": "app"}]}});
        assert_eq!(container(&one, "p", None).unwrap(), "app");
    }

    #[test]
    fn only_global_unicast_addresses_are_proxied_to() {
        for (ip, allowed) in [
            ("10.1.2.3", true),
            ("127.0.0.1", false),
            ("169.254.1.1", false),
            ("0.0.0.0", false),
            ("fe80::1", false),
            ("2001:db8::1", true),
        ] {
            assert_eq!(is_global_unicast(ip.parse().unwrap()), allowed, "{ip}");
        }
    }
}
