//! Resource requests for the kinds installed while the server runs (what
//! CustomResourceDefinitions define): the paths no route of the table serves name a kind of
//! the scheme by group and plural; its version's own routes (kube's installer, the same
//! `kapi-routes` the table's come from) are matched by the path's shape and the method,
//! and served by the same handlers as the table's routes (`resources::Call`). A path that
//! names no installed kind, or none of its routes, is 404; a route's path with another
//! method 405, as for the table's routes.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;

use super::Shared;
use super::resources::{Call, Names, deprecation};
use crate::http::ErrorResponse as _;
use kapi_core::api::Handler;
use kapi_core::error::ApiError;

/// Serves `request` if it addresses an installed kind or the discovery of a group only
/// installed kinds have; 404 otherwise.
pub(super) async fn serve(shared: Arc<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().trim_end_matches('/');
    let segments = path.split('/').filter(|s| !s.is_empty()).count();
    if path.starts_with("/apis/") && segments <= 3 && parts.method == Method::GET {
        return (shared.discovery.serve(path, &parts.headers))
            .unwrap_or_else(|| ApiError::NoRoute.into_response());
    }
    match resolve(&shared, &parts.method, parts.uri.path()) {
        Ok(call) => call.serve(&shared, parts, body).await,
        Err(error) => error.into_response(),
    }
}

/// The plural a path under `/apis/<group>/<version>/` names: after `watch/` and
/// `namespaces/<ns>/` when present.
fn plural<'a>(rest: &[&'a str]) -> Option<&'a str> {
    let rest = rest.strip_prefix(&["watch"]).unwrap_or(rest);
    match rest {
        ["namespaces", _, plural, ..] => Some(plural),
        [plural, ..] => Some(plural),
        [] => None,
    }
}

/// The values of a route template's parameters in `path`, if the path has its shape.
fn matches<'a>(template: &str, path: &[&'a str]) -> Option<Vec<(&'static str, &'a str)>> {
    let template: Vec<&str> = template.trim_matches('/').split('/').collect();
    if template.len() != path.len() {
        return None;
    }
    let mut values = Vec::new();
    for (part, segment) in template.iter().zip(path) {
        match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some("namespace") => values.push(("namespace", *segment)),
            Some("name") => values.push(("name", *segment)),
            Some(_) => return None,
            None if part == segment => {}
            None => return None,
        }
    }
    Some(values)
}

fn resolve(shared: &Shared, method: &Method, path: &str) -> Result<Call<'static>, ApiError> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let ["apis", group, version, rest @ ..] = segments.as_slice() else {
        return Err(ApiError::NoRoute);
    };
    let plural = plural(rest).ok_or(ApiError::NoRoute)?;
    let kind = (shared.registry.scheme().by_resource(group, plural))
        .filter(|kind| kind.is_dynamic())
        .ok_or(ApiError::NoRoute)?;
    let info = kind.info;
    let version = (info.version(version))
        .filter(|v| v.served)
        .ok_or(ApiError::NoRoute)?;
    // The kind's own routes (kube's installer, `kapi-routes`), as the table's are mounted:
    // the path's shape finds them, the method the one that serves it.
    let shaped: Vec<_> = (version.routes.iter())
        .filter_map(|route| Some((route, matches(route.path, &segments)?)))
        .collect();
    if shaped.is_empty() {
        return Err(ApiError::NoRoute);
    }
    let (route, values) = (shaped.into_iter())
        .find(|(route, _)| route.method.as_str() == method.as_str())
        .ok_or(ApiError::MethodNotAllowed)?;
    let handler = Handler::for_route(info, route).ok_or(ApiError::MethodNotAllowed)?;
    let value = |param: &str| {
        (values.iter())
            .find(|(name, _)| *name == param)
            .map(|(_, value)| (*value).to_owned())
    };
    Ok(Call {
        version: version.name,
        handler,
        subresource: route.subresource,
        names: Names {
            namespace: value("namespace"),
            name: value("name"),
            path: value("path"),
        },
        deprecation: deprecation(info, version),
        kind: Some(kind),
    })
}

#[cfg(test)]
mod tests {
    use super::{matches, plural};

    #[test]
    fn paths_are_matched_against_route_templates() {
        let path = ["apis", "g", "v1", "namespaces", "a", "foos", "x", "status"];
        let template = "/apis/g/v1/namespaces/{namespace}/foos/{name}/status";
        assert_eq!(
            matches(template, &path),
            Some(vec![("namespace", "a"), ("name", "x")])
        );
        assert_eq!(
            matches("/apis/g/v1/namespaces/{namespace}/foos/{name}", &path),
            None
        );
        assert_eq!(matches("/apis/g/v1/foos/{name}/status", &path), None);
        assert_eq!(plural(&["watch", "namespaces", "a", "foos"]), Some("foos"));
        assert_eq!(plural(&["foos", "x"]), Some("foos"));
        assert_eq!(plural(&[]), None);
    }
}
