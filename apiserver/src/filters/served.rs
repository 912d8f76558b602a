//! A request's metric labels, as kube-apiserver 1.32 forms them, and the set of what the
//! server serves that bounds them: a request is labelled only when its group, version,
//! resource and subresource are a served route's, or when it is a health check, so no
//! client can grow the label sets by asking for paths that do not exist.

use axum::http::Method;

use crate::filters::RequestInfo;
use kapi_core::api::RouteBinding;
use kapi_metrics::{RequestLabels, RouteLabels};

/// The health endpoints kube instruments (the root paths only, as kube).
const HEALTH: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// A served group, version, resource and subresource (empty for the resource itself).
type Key = (&'static str, &'static str, &'static str, &'static str);

/// Every served `Key`, sorted: a request's labels are these strings, found without
/// allocating.
#[derive(Default)]
pub struct Served {
    keys: Vec<Key>,
    /// The scheme whose installed kinds (CustomResourceDefinitions') are served too.
    installed: Option<std::sync::Arc<kapi_core::scheme::Scheme>>,
}

impl Served {
    /// What `routes` serve.
    pub fn new(routes: &[RouteBinding]) -> Served {
        let mut keys: Vec<Key> = (routes.iter())
            .map(|binding| {
                (
                    binding.kind.group,
                    binding.version,
                    binding.kind.plural,
                    binding.route.subresource.unwrap_or_default(),
                )
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Served {
            keys,
            installed: None,
        }
    }

    /// Also what the kinds installed in `scheme` while the server runs serve: their
    /// strings are as lasting as the table's.
    pub fn with_installed_kinds(
        mut self,
        scheme: std::sync::Arc<kapi_core::scheme::Scheme>,
    ) -> Served {
        self.installed = Some(scheme);
        self
    }

    /// The key of a request to a kind installed while the server runs, if it serves it.
    fn installed_key(&self, info: &RequestInfo) -> Option<Key> {
        let scheme = self.installed.as_ref()?;
        let kind =
            (scheme.by_resource(&info.api_group, &info.resource)).filter(|k| k.is_dynamic())?;
        let version = kind.info.version(&info.api_version).filter(|v| v.served)?;
        let subresource = match info.subresource.as_str() {
            "" => "",
            wanted => {
                (version.routes.iter()).find_map(|r| r.subresource.filter(|s| *s == wanted))?
            }
        };
        Some((kind.info.group, version.name, kind.info.plural, subresource))
    }

    /// The served key equal to the request's, if any.
    fn find(&self, info: &RequestInfo) -> Option<Key> {
        let wanted = (
            info.api_group.as_str(),
            info.api_version.as_str(),
            info.resource.as_str(),
            info.subresource.as_str(),
        );
        let found = self
            .keys
            .binary_search_by(|&(g, v, r, s)| (g, v, r, s).cmp(&wanted));
        (found.ok().map(|i| self.keys[i])).or_else(|| self.installed_key(info))
    }

    /// The labels of a request, or `None` when it is not one kube instruments.
    /// `content_type` tells an apply from a patch; `query` is the raw query string.
    pub fn labels(
        &self,
        info: &RequestInfo,
        method: &Method,
        content_type: Option<&str>,
        query: Option<&str>,
    ) -> Option<RequestLabels> {
        if !info.resource_request {
            let health = HEALTH.iter().find(|path| **path == info.path)?;
            return Some(RequestLabels {
                route: RouteLabels {
                    verb: non_resource_verb(method),
                    group: "",
                    version: "",
                    resource: "",
                    subresource: health,
                    scope: "",
                    component: "",
                },
                dry_run: "",
            });
        }
        let (group, version, resource, subresource) = self.find(info)?;
        Some(RequestLabels {
            route: RouteLabels {
                verb: resource_verb(&info.verb, content_type),
                group,
                version,
                resource,
                subresource,
                scope: scope(info),
                component: "apiserver",
            },
            dry_run: dry_run(query),
        })
    }
}

/// kube's verb label of a resource request: the HTTP method, with collection reads as
/// `LIST`, watches as `WATCH`, and server-side apply as `APPLY`.
fn resource_verb(verb: &str, content_type: Option<&str>) -> &'static str {
    match verb {
        "get" => "GET",
        "list" => "LIST",
        "watch" => "WATCH",
        "create" => "POST",
        "update" => "PUT",
        "patch" if content_type.is_some_and(|t| t.starts_with("application/apply-patch")) => {
            "APPLY"
        }
        "patch" => "PATCH",
        "delete" | "deletecollection" => "DELETE",
        _ => "other",
    }
}

fn non_resource_verb(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        _ => "other",
    }
}

/// The installer's scope: one object (or a create) is `resource`, a collection in a
/// namespace `namespace`, any other collection `cluster`.
fn scope(info: &RequestInfo) -> &'static str {
    if !info.name.is_empty() || info.verb == "create" {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    }
}

/// kube's `dry_run` label: `""` without the parameter, `All` when every value is `All`,
/// `invalid` otherwise.
fn dry_run(query: Option<&str>) -> &'static str {
    let values: Vec<String> = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .filter(|(key, _)| key == "dryRun")
        .map(|(_, value)| value.into_owned())
        .collect();
    if values.is_empty() {
        ""
    } else if values.iter().all(|v| v == "All") {
        "All"
    } else {
        "invalid"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(method: Method, path: &str, query: Option<&str>) -> Option<RequestLabels> {
        let served = Served {
            keys: vec![
                ("apps.example.dev", "v1", "webapps", ""),
                ("apps.example.dev", "v1", "webapps", "status"),
            ],
            installed: None,
        };
        let info = RequestInfo::new(&method, path, query);
        served.labels(&info, &method, None, query)
    }

    #[test]
    fn resource_requests_are_labelled_as_kube_labels_them() {
        let ns = "/apis/apps.example.dev/v1/namespaces/a/webapps";
        let route = |method, path: &str, query| labels(method, path, query).unwrap().route;
        let get = route(Method::GET, &format!("{ns}/x"), None);
        assert_eq!(
            (get.verb, get.scope, get.component),
            ("GET", "resource", "apiserver")
        );
        let list = route(Method::GET, ns, None);
        assert_eq!((list.verb, list.scope), ("LIST", "namespace"));
        let all = route(Method::GET, "/apis/apps.example.dev/v1/webapps", None);
        assert_eq!((all.verb, all.scope), ("LIST", "cluster"));
        assert_eq!(route(Method::GET, ns, Some("watch=true")).verb, "WATCH");
        let create = labels(Method::POST, ns, Some("dryRun=All")).unwrap();
        assert_eq!(
            (create.route.verb, create.route.scope, create.dry_run),
            ("POST", "resource", "All")
        );
        let status = route(Method::PUT, &format!("{ns}/x/status"), None);
        assert_eq!((status.verb, status.subresource), ("PUT", "status"));
        let bad = labels(Method::DELETE, ns, Some("dryRun=Some")).unwrap();
        assert_eq!((bad.route.verb, bad.dry_run), ("DELETE", "invalid"));
    }

    #[test]
    fn unserved_paths_are_not_labelled() {
        assert!(
            labels(
                Method::GET,
                "/apis/apps.example.dev/v1/namespaces/a/gadgets",
                None
            )
            .is_none()
        );
        assert!(
            labels(
                Method::GET,
                "/apis/apps.example.dev/v1/namespaces/a/webapps/x/scale",
                None
            )
            .is_none()
        );
        assert!(labels(Method::GET, "/apis/other.dev/v1/webapps", None).is_none());
        assert!(labels(Method::GET, "/version", None).is_none());
        assert!(labels(Method::GET, "/readyz/etcd", None).is_none());
        let health = labels(Method::GET, "/readyz", None).unwrap().route;
        assert_eq!(
            (
                health.verb,
                health.subresource,
                health.scope,
                health.component
            ),
            ("GET", "/readyz", "", "")
        );
    }
}
