//! Resource requests for the kinds installed while the server runs (what
//! CustomResourceDefinitions define): the paths no route of the table serves are resolved
//! against the scheme, as kube-apiserver's CRD handler resolves them, and served by the
//! same handlers as the table's routes (`resources::Call`).
//!
//! The paths are the installer's: `/apis/<group>/<version>/[namespaces/<ns>/]<plural>`,
//! then `/<name>` and `/<name>/status` or `/<name>/scale`, and the deprecated `/watch/`
//! forms. A path naming no installed kind is 404, a known path with a method it does not
//! take 405, as for the table's routes.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::Method;
use axum::response::{IntoResponse, Response};

use super::Shared;
use super::resources::{Call, Names, deprecation};
use crate::api::{Handler, Scope};
use crate::error::ApiError;

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

/// The path's parts after `/apis/<group>/<version>/`.
struct Path<'a> {
    watch: bool,
    namespace: Option<&'a str>,
    plural: &'a str,
    name: Option<&'a str>,
    subresource: Option<&'a str>,
}

fn parse<'a>(segments: &[&'a str]) -> Option<Path<'a>> {
    let (watch, rest) = match segments {
        ["watch", rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (Some(*namespace), rest),
        rest => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, subresource] if !watch => (*plural, Some(*name), Some(*subresource)),
        _ => return None,
    };
    Some(Path {
        watch,
        namespace,
        plural,
        name,
        subresource,
    })
}

fn resolve(shared: &Shared, method: &Method, path: &str) -> Result<Call<'static>, ApiError> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let ["apis", group, version, rest @ ..] = segments.as_slice() else {
        return Err(ApiError::NoRoute);
    };
    let path = parse(rest).ok_or(ApiError::NoRoute)?;
    let kind = (shared.registry.scheme().by_resource(group, path.plural))
        .filter(|kind| kind.is_dynamic())
        .ok_or(ApiError::NoRoute)?;
    let info = kind.info;
    let version = (info.version(version))
        .filter(|v| v.served)
        .ok_or(ApiError::NoRoute)?;
    let namespaced = info.scope == Scope::Namespaced;
    if path.namespace.is_some() && !namespaced {
        return Err(ApiError::NoRoute);
    }
    let subresources = &info.subresources;
    let status = match path.subresource {
        None => None,
        Some("status") if subresources.status => Some(true),
        Some("scale") if subresources.scale.is_some() => Some(false),
        Some(_) => return Err(ApiError::NoRoute),
    };
    let handler = match (path.watch, path.name.is_some(), status) {
        (true, true, _) => (*method == Method::GET).then_some(Handler::Watch),
        (true, false, _) => (*method == Method::GET).then_some(Handler::WatchList),
        (false, false, _) => match *method {
            Method::GET => Some(Handler::List),
            Method::POST => Some(Handler::Create),
            Method::DELETE => Some(Handler::DeleteCollection),
            _ => None,
        },
        (false, true, None) => match *method {
            Method::GET => Some(Handler::Get),
            Method::PUT => Some(Handler::Update),
            Method::PATCH => Some(Handler::Patch),
            Method::DELETE => Some(Handler::Delete),
            _ => None,
        },
        (false, true, Some(true)) => match *method {
            Method::GET => Some(Handler::GetStatus),
            Method::PUT => Some(Handler::UpdateStatus),
            Method::PATCH => Some(Handler::PatchStatus),
            _ => None,
        },
        (false, true, Some(false)) => match *method {
            Method::GET => Some(Handler::GetScale),
            Method::PUT => Some(Handler::UpdateScale),
            Method::PATCH => Some(Handler::PatchScale),
            _ => None,
        },
    };
    // Only lists and watches of every namespace go without one.
    let all_namespaces = matches!(handler, Some(Handler::List | Handler::WatchList));
    if namespaced && path.namespace.is_none() && !all_namespaces {
        return Err(ApiError::NoRoute);
    }
    let handler = handler.ok_or(ApiError::MethodNotAllowed)?;
    Ok(Call {
        version: version.name,
        handler,
        names: Names {
            namespace: path.namespace.map(str::to_owned),
            name: path.name.map(str::to_owned),
        },
        deprecation: deprecation(info, version),
        kind: Some(kind),
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn paths_read_as_the_installer_lays_them_out() {
        let path = parse(&["namespaces", "a", "foos", "x", "status"]).unwrap();
        assert_eq!(
            (
                path.watch,
                path.namespace,
                path.plural,
                path.name,
                path.subresource
            ),
            (false, Some("a"), "foos", Some("x"), Some("status"))
        );
        let path = parse(&["watch", "foos"]).unwrap();
        assert_eq!(
            (path.watch, path.namespace, path.plural),
            (true, None, "foos")
        );
        let path = parse(&["namespaces", "a"]).unwrap();
        assert_eq!(
            (path.namespace, path.plural, path.name),
            (None, "namespaces", Some("a"))
        );
        assert!(parse(&["watch", "foos", "x", "status"]).is_none());
        assert!(parse(&["foos", "x", "status", "more"]).is_none());
    }
}
