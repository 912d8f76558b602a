//! What a request asks for, read from its path, method and query as kube's
//! `RequestInfoFactory` reads it: a resource request (`/api/v1/namespaces/a/configmaps/x`:
//! verb `get`, resource `configmaps`, name `x`, namespace `a`) or a non-resource one
//! (`/healthz`: verb `get`, the path). Authorization, audit and the request log all use it.

use axum::http::Method;

/// What a request asks for (kube's `request.RequestInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// Under `/api` or `/apis` with a group-version and a resource.
    pub resource_request: bool,
    /// The URL path.
    pub path: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`;
    /// for non-resource requests the lower-case method (`get`, `post`).
    pub verb: String,
    /// `api` or `apis`.
    pub api_prefix: String,
    /// Empty for the core group.
    pub api_group: String,
    /// `v1`.
    pub api_version: String,
    /// Empty for cluster-scoped requests (and for namespaces: the namespace's own name).
    pub namespace: String,
    /// `webapps`.
    pub resource: String,
    /// `status`, `scale`, `finalize`.
    pub subresource: String,
    /// The object's name, when the request names one.
    pub name: String,
}

/// Subresources of a namespace, not resources inside it.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

impl RequestInfo {
    /// Reads `method`, `path` and `query` (the raw query string).
    pub fn new(method: &Method, path: &str, query: Option<&str>) -> RequestInfo {
        let mut info = RequestInfo {
            path: path.to_owned(),
            verb: method.as_str().to_lowercase(),
            ..RequestInfo::default()
        };
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        if parts.len() < 3 || !matches!(parts[0], "api" | "apis") {
            return info;
        }
        info.api_prefix = parts[0].to_owned();
        let mut rest = &parts[1..];
        if info.api_prefix == "apis" {
            if rest.len() < 3 {
                return info;
            }
            info.api_group = rest[0].to_owned();
            rest = &rest[1..];
        }
        info.resource_request = true;
        info.api_version = rest[0].to_owned();
        rest = &rest[1..];
        if rest.first() == Some(&"watch") && rest.len() >= 2 {
            info.verb = "watch".to_owned();
            rest = &rest[1..];
        } else {
            info.verb = match *method {
                Method::POST => "create",
                Method::GET | Method::HEAD => "get",
                Method::PUT => "update",
                Method::PATCH => "patch",
                Method::DELETE => "delete",
                _ => "",
            }
            .to_owned();
        }
        if rest.first() == Some(&"namespaces")
            && let Some(namespace) = rest.get(1)
        {
            info.namespace = (*namespace).to_owned();
            if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
                rest = &rest[2..];
            }
        }
        if let Some(resource) = rest.first() {
            info.resource = (*resource).to_owned();
        }
        if let Some(name) = rest.get(1) {
            info.name = (*name).to_owned();
        }
        if let Some(subresource) = rest.get(2) {
            info.subresource = (*subresource).to_owned();
        }
        if info.name.is_empty() && info.verb == "get" {
            let query = query_pairs(query);
            let watch = (query.iter().find(|(k, _)| k == "watch"))
                .is_some_and(|(_, v)| !matches!(v.to_lowercase().as_str(), "false" | "0"));
            info.verb = if watch { "watch" } else { "list" }.to_owned();
            // A list or watch of one object by name is authorized as of that object.
            if let Some((_, selector)) = query.iter().find(|(k, _)| k == "fieldSelector")
                && let Some(name) = exact_name(selector)
            {
                info.name = name;
            }
        }
        if info.name.is_empty() && info.verb == "delete" {
            info.verb = "deletecollection".to_owned();
        }
        info
    }
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The name of a field selector that requires `metadata.name` to be exactly one value
/// (`metadata.name=x` or `metadata.name==x`, alone or among other terms), when it is a
/// valid path segment.
fn exact_name(selector: &str) -> Option<String> {
    let name = selector.split(',').find_map(|term| {
        let term = term.trim();
        let value = (term.strip_prefix("metadata.name=="))
            .or_else(|| term.strip_prefix("metadata.name="))?;
        (!value.starts_with('=')).then(|| value.trim().to_owned())
    })?;
    (!name.is_empty() && kapi_core::validation::path_segment_name(&name).is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(method: Method, uri: &str, expected: (&str, &str, &str, &str, &str, &str)) {
        let (path, query) = uri
            .split_once('?')
            .map_or((uri, None), |(p, q)| (p, Some(q)));
        let info = RequestInfo::new(&method, path, query);
        let got = (
            info.verb.as_str(),
            info.api_group.as_str(),
            info.namespace.as_str(),
            info.resource.as_str(),
            info.subresource.as_str(),
            info.name.as_str(),
        );
        assert_eq!(got, expected, "{method} {uri}");
        assert_eq!(
            info.resource_request,
            !expected.3.is_empty(),
            "{method} {uri}"
        );
    }

    #[test]
    fn reads_requests_as_kube_does() {
        let g = Method::GET;
        check(g.clone(), "/healthz", ("get", "", "", "", "", ""));
        check(Method::POST, "/apis/x", ("post", "", "", "", "", ""));
        check(g.clone(), "/api/v1", ("get", "", "", "", "", ""));
        check(
            g.clone(),
            "/apis/apps.example.dev/v1",
            ("get", "", "", "", "", ""),
        );
        check(
            g.clone(),
            "/api/v1/namespaces/a/configmaps",
            ("list", "", "a", "configmaps", "", ""),
        );
        check(
            g.clone(),
            "/apis/apps.example.dev/v1/namespaces/a/webapps?watch=true",
            ("watch", "apps.example.dev", "a", "webapps", "", ""),
        );
        check(
            g.clone(),
            "/apis/apps.example.dev/v1/watch/namespaces/a/webapps/w",
            ("watch", "apps.example.dev", "a", "webapps", "", "w"),
        );
        check(
            g.clone(),
            "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Done&watch=1",
            ("watch", "", "a", "configmaps", "", "one"),
        );
        check(
            Method::PUT,
            "/apis/apps.example.dev/v1/namespaces/a/webapps/w/status",
            ("update", "apps.example.dev", "a", "webapps", "status", "w"),
        );
        check(
            g.clone(),
            "/api/v1/namespaces/a",
            ("get", "", "a", "namespaces", "", "a"),
        );
        check(
            Method::PUT,
            "/api/v1/namespaces/a/finalize",
            ("update", "", "a", "namespaces", "finalize", "a"),
        );
        check(
            g.clone(),
            "/api/v1/namespaces",
            ("list", "", "", "namespaces", "", ""),
        );
        check(
            Method::DELETE,
            "/apis/platform.example.dev/v1/tenants",
            (
                "deletecollection",
                "platform.example.dev",
                "",
                "tenants",
                "",
                "",
            ),
        );
        check(
            Method::PATCH,
            "/apis/platform.example.dev/v1/tenants/t",
            ("patch", "platform.example.dev", "", "tenants", "", "t"),
        );
    }
}
