//! A request's metric labels, as kube-apiserver 1.32 forms them, and the set of what the
//! server serves that bounds them: a request is labelled only when its group, version,
//! resource and subresource are a served route's, or when it is a health check, so no
//! client can grow the label sets by asking for paths that do not exist.

use std::collections::HashSet;

use axum::http::Method;

use super::{RequestLabels, RouteLabels};
use crate::api::RouteBinding;
use crate::filters::RequestInfo;

/// The health endpoints kube instruments (the root paths only, as kube).
const HEALTH: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// Every served group, version, resource and subresource (empty for the resource itself).
#[derive(Debug, Default)]
pub struct Served(HashSet<(String, String, String, String)>);

impl Served {
    /// What `routes` serve.
    pub fn new(routes: &[RouteBinding]) -> Served {
        Served(
            (routes.iter())
                .map(|binding| {
                    (
                        binding.kind.group.to_owned(),
                        binding.version.to_owned(),
                        binding.kind.plural.to_owned(),
                        binding.route.subresource.unwrap_or_default().to_owned(),
                    )
                })
                .collect(),
        )
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
            let health = HEALTH.contains(&info.path.as_str());
            return health.then(|| RequestLabels {
                route: RouteLabels {
                    verb: non_resource_verb(method),
                    group: String::new(),
                    version: String::new(),
                    resource: String::new(),
                    subresource: info.path.clone(),
                    scope: "",
                    component: "",
                },
                dry_run: "",
            });
        }
        let key = (
            info.api_group.clone(),
            info.api_version.clone(),
            info.resource.clone(),
            info.subresource.clone(),
        );
        if !self.0.contains(&key) {
            return None;
        }
        let (group, version, resource, subresource) = key;
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
        let mut served = Served::default();
        for sub in ["", "status"] {
            served.0.insert((
                "apps.example.dev".into(),
                "v1".into(),
                "webapps".into(),
                sub.into(),
            ));
        }
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
        assert_eq!(
            (status.verb, status.subresource.as_str()),
            ("PUT", "status")
        );
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
                health.subresource.as_str(),
                health.scope,
                health.component
            ),
            ("GET", "/readyz", "", "")
        );
    }
}
