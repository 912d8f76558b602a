//! What kube admits a connect with: the options object of the subresource (a Pod's
//! `exec` is admitted as a `PodExecOptions`, its `proxy` as a `PodProxyOptions`), decoded
//! from the query as kube's parameter codec decodes it, and written as kube's versioned
//! types write themselves (their `omitempty` fields left out when empty).

use serde_json::{Map, Value, json};

use kapi_core::strconv::parse_bool;
use kapi_registry::ConnectRequest;

/// The options kind of `resource`'s connect subresource `subresource`, and its object.
pub(super) fn options(
    resource: &str,
    request: &ConnectRequest<'_>,
) -> Option<(&'static str, Value)> {
    let kind = match (resource, request.subresource) {
        ("pods", "exec") => "PodExecOptions",
        ("pods", "attach") => "PodAttachOptions",
        ("pods", "portforward") => "PodPortForwardOptions",
        ("pods", "proxy") => "PodProxyOptions",
        ("services", "proxy") => "ServiceProxyOptions",
        ("nodes", "proxy") => "NodeProxyOptions",
        _ => return None,
    };
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    object.insert("apiVersion".into(), json!(request.target.version));
    let flag = |name: &str| request.param(name).and_then(parse_bool).unwrap_or(false);
    match kind {
        "PodExecOptions" | "PodAttachOptions" => {
            for name in ["stdin", "stdout", "stderr", "tty"] {
                if flag(name) {
                    object.insert(name.into(), json!(true));
                }
            }
            if let Some(container) = request.param("container").filter(|c| !c.is_empty()) {
                object.insert("container".into(), json!(container));
            }
            if kind == "PodExecOptions" {
                // `command` has no `omitempty`: null when none is given.
                let command = values(request, "command");
                let command = match command.is_empty() {
                    true => Value::Null,
                    false => json!(command),
                };
                object.insert("command".into(), command);
            }
        }
        "PodPortForwardOptions" => {
            let ports: Vec<Value> = (values(request, "ports").iter())
                .map(|p| p.parse::<i64>().map_or_else(|_| json!(p), |n| json!(n)))
                .collect();
            if !ports.is_empty() {
                object.insert("ports".into(), Value::Array(ports));
            }
        }
        // The path after the subresource (`/` for `proxy/`: kube keeps a trailing slash).
        // kube sets the `path` parameter from the URL on both routes, so that a `path`
        // given in the query counts for nothing.
        _ => {
            let path = (request.path).map(|path| format!("/{}", path.trim_start_matches('/')));
            if let Some(path) = path.filter(|p| !p.is_empty()) {
                object.insert("path".into(), json!(path));
            }
        }
    }
    Some((kind, Value::Object(object)))
}

/// Every value of query parameter `name`, in order.
fn values<'a>(request: &'a ConnectRequest<'_>, name: &str) -> Vec<&'a str> {
    (request.query.iter())
        .filter(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
        .collect()
}
