//! Discovery: `/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`, each
//! also with a trailing slash.
//!
//! `/api` and `/apis` answer with the aggregated document (`apidiscovery.k8s.io/v2` or
//! `v2beta1` `APIGroupDiscoveryList`) when `Accept` prefers it, naming that media type in
//! `Content-Type`, since clients (kubectl 1.32) decide the format by it alone; otherwise
//! with the legacy `APIVersions` / `APIGroupList` as `application/json`.
//!
//! The generated documents describe the compiled kinds. Once kinds are installed while the
//! server runs (CustomResourceDefinitions), every discovery path answers from documents
//! rendered again for the whole scheme by the server's [`Renderer`] (`Live`), made once per
//! change of the scheme; the paths of groups only installed kinds have are reached through
//! the router's fallback (`super::dynamic`).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::HeaderMap;
use axum::http::header::{HeaderValue, VARY};
use axum::response::Response;
use axum::routing::get;
use serde_json::Value;

use super::Documents;
use super::media::{self, JSON};
use crate::http::{ErrorResponse as _, Prepared};
use kapi_core::api::{KindInfo, Renderer, RouteBinding};
use kapi_core::error::ApiError;
use kapi_registry::Registry;

const AGGREGATED_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const AGGREGATED_V2BETA1: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// The discovery paths: every path the documents answer among those the route table
/// implies, and always `/api`, `/api/v1` and `/apis` (kube-rs fails on a 404 there).
pub(super) fn paths(bindings: &[RouteBinding], documents: &Documents) -> Vec<String> {
    let mut paths = BTreeSet::from(["/api".to_owned(), "/api/v1".to_owned(), "/apis".to_owned()]);
    for binding in bindings {
        let group = binding.kind.group;
        if group.is_empty() {
            paths.insert(format!("/api/{}", binding.version));
        } else {
            paths.insert(format!("/apis/{group}"));
            paths.insert(format!("/apis/{group}/{}", binding.version));
        }
    }
    (paths.into_iter())
        .filter(|path| (documents.discovery)(path).is_some() || empty_document(path).is_some())
        .collect()
}

/// The discovery documents of the scheme as it now is, when it holds kinds installed while
/// the server runs.
pub(super) struct Live {
    registry: Arc<Registry>,
    renderer: Option<Renderer>,
    /// Rendered even while the scheme holds only compiled kinds: they are not all served.
    always: bool,
    /// The documents of one generation of the scheme (`None`: it could not be rendered,
    /// logged once).
    rendered: Mutex<Option<(u64, Option<Arc<Rendered>>)>>,
}

/// Documents ready to serve, by path.
#[derive(Default)]
struct Rendered {
    legacy: HashMap<String, Prepared>,
    aggregated: HashMap<String, (Prepared, Prepared)>,
    openapi: Option<Arc<super::openapi::OpenApi>>,
}

impl Live {
    pub(super) fn new(registry: Arc<Registry>, renderer: Option<Renderer>, always: bool) -> Live {
        Live {
            registry,
            renderer,
            always,
            rendered: Mutex::new(None),
        }
    }

    /// Renders the documents now, at start-up, when they are always rendered: not on a
    /// first request, which would wait for it (a failure is logged, as later).
    pub(super) fn prime(&self) {
        if self.always {
            let _ = self.current();
        }
    }

    /// The documents of the scheme now; `None` while it holds only compiled kinds, all of
    /// them served (the generated documents are theirs), or when it cannot be rendered
    /// (logged).
    fn current(&self) -> Option<Arc<Rendered>> {
        let renderer = self.renderer.as_ref()?;
        let scheme = self.registry.scheme();
        let generation = scheme.generation();
        let mut rendered = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, documents)) = rendered.as_ref()
            && *at == generation
        {
            return documents.clone();
        }
        let kinds = scheme.kinds();
        if !self.always && !kinds.iter().any(|kind| kind.is_dynamic()) {
            *rendered = None;
            return None;
        }
        let infos: Vec<&'static KindInfo> = kinds.iter().map(|kind| kind.info).collect();
        let documents = match renderer(&infos) {
            Ok(documents) => documents,
            Err(error) => {
                tracing::error!(%error, "cannot render the API's documents");
                *rendered = Some((generation, None));
                return None;
            }
        };
        let mut prepared = Rendered {
            openapi: Some(Arc::new(super::openapi::OpenApi::rendered(&documents))),
            ..Rendered::default()
        };
        for document in documents.discovery {
            if document.aggregated {
                let v2beta1 = std::str::from_utf8(&document.bytes)
                    .ok()
                    .and_then(as_v2beta1);
                let v2beta1 = Prepared::new(v2beta1.unwrap_or_default());
                let v2 = Prepared::new(document.bytes);
                prepared.aggregated.insert(document.path, (v2, v2beta1));
            } else {
                prepared
                    .legacy
                    .insert(document.path, Prepared::new(document.bytes));
            }
        }
        for path in ["/api", "/api/v1", "/apis"] {
            if !prepared.legacy.contains_key(path)
                && let Some(empty) = empty_document(path)
            {
                prepared
                    .legacy
                    .insert(path.to_owned(), Prepared::new(empty));
            }
        }
        let prepared = Arc::new(prepared);
        *rendered = Some((generation, Some(Arc::clone(&prepared))));
        Some(prepared)
    }

    /// The OpenAPI documents of the scheme now; `None` when they are the generated ones.
    pub(super) fn openapi(&self) -> Option<Arc<super::openapi::OpenApi>> {
        self.current()?.openapi.clone()
    }

    /// The answer at `path` (without a trailing slash) from the documents of the scheme
    /// now: `None` when they are the generated ones, 404 when they have none there.
    pub(super) fn serve(&self, path: &str, headers: &HeaderMap) -> Option<Response> {
        let rendered = self.current()?;
        Some(match rendered.legacy.get(path) {
            Some(legacy) => serve(headers, legacy, rendered.aggregated.get(path)),
            None => ApiError::NoRoute.into_response(),
        })
    }
}

/// The discovery routes, one per path of [`paths`].
pub(super) fn router(bindings: &[RouteBinding], documents: &Documents, live: &Arc<Live>) -> Router {
    let mut router = Router::new();
    for path in paths(bindings, documents) {
        let legacy = (documents.discovery)(&path)
            .map(|document| document.as_bytes().to_vec())
            .or_else(|| empty_document(&path));
        let Some(legacy) = legacy else {
            continue;
        };
        let legacy = Prepared::new(legacy);
        let aggregated = (documents.aggregated_discovery)(&path).and_then(|document| {
            Some((
                Prepared::new(document.as_bytes().to_vec()),
                Prepared::new(as_v2beta1(document)?),
            ))
        });
        let live = Arc::clone(live);
        let document_path = path.clone();
        let handler = move |headers: HeaderMap| {
            let (legacy, aggregated) = (legacy.clone(), aggregated.clone());
            let (live, path) = (Arc::clone(&live), document_path.clone());
            async move {
                match live.serve(&path, &headers) {
                    Some(response) => response,
                    None => serve(&headers, &legacy, aggregated.as_ref()),
                }
            }
        };
        // kube-apiserver's discovery routes also answer with a trailing slash (go-restful
        // routes `/api/`, `/apis/<group>/<version>/`, ...), the paths the Python client's
        // typed APIs call (`CoreApi.get_api_versions`: `GET /api/`).
        router = router
            .route(
                &path,
                get(handler.clone()).fallback(super::method_not_allowed),
            )
            .route(
                &format!("{path}/"),
                get(handler).fallback(super::method_not_allowed),
            );
    }
    router
}

/// What `/api`, `/api/v1` and `/apis` say when the API has nothing there.
fn empty_document(path: &str) -> Option<Vec<u8>> {
    let document = match path {
        "/api" => serde_json::json!({
            "kind": "APIVersions",
            "versions": [],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
        }),
        "/api/v1" => serde_json::json!({
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [],
        }),
        "/apis" => serde_json::json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [],
        }),
        _ => return None,
    };
    serde_json::to_vec_pretty(&document).ok()
}

/// The aggregated document as `apidiscovery.k8s.io/v2beta1`: the same shape.
fn as_v2beta1(document: &str) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_str(document).ok()?;
    value
        .as_object_mut()?
        .insert("apiVersion".into(), "apidiscovery.k8s.io/v2beta1".into());
    let mut body = serde_json::to_vec_pretty(&value).ok()?;
    body.push(b'\n');
    Some(body)
}

#[derive(Debug, PartialEq, Eq)]
enum Choice {
    Legacy,
    V2,
    V2beta1,
}

fn choose(headers: &HeaderMap, aggregated: bool) -> Option<Choice> {
    let ranges = media::accept(headers);
    if !media::has_accept(headers) {
        return Some(Choice::Legacy);
    }
    for range in ranges {
        if !range.matches("application", "json") {
            continue;
        }
        match (range.param("as"), range.param("g"), range.param("v")) {
            (None, _, _) => return Some(Choice::Legacy),
            (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io"), Some(v)) if aggregated => {
                match v {
                    "v2" => return Some(Choice::V2),
                    "v2beta1" => return Some(Choice::V2beta1),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    None
}

fn serve(
    headers: &HeaderMap,
    legacy: &Prepared,
    aggregated: Option<&(Prepared, Prepared)>,
) -> Response {
    let mut response = match (choose(headers, aggregated.is_some()), aggregated) {
        (Some(Choice::V2), Some((v2, _))) => v2.respond(headers, AGGREGATED_V2),
        (Some(Choice::V2beta1), Some((_, v2beta1))) => v2beta1.respond(headers, AGGREGATED_V2BETA1),
        (Some(_), _) => legacy.respond(headers, JSON),
        (None, _) => ApiError::NotAcceptable(JSON.into()).into_response(),
    };
    response
        .headers_mut()
        .insert(VARY, HeaderValue::from_static("Accept"));
    response
}

#[cfg(test)]
mod tests {
    use axum::http::header::ACCEPT;

    use super::*;

    #[track_caller]
    fn check(accept: &str, expected: Option<Choice>) {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_str(accept).unwrap());
        assert_eq!(choose(&headers, true), expected, "{accept}");
    }

    #[test]
    fn aggregated_only_when_preferred() {
        check(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            Some(Choice::V2),
        );
        check(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            Some(Choice::V2beta1),
        );
        check(
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json",
            Some(Choice::Legacy),
        );
        check("application/json", Some(Choice::Legacy));
        check("*/*", Some(Choice::Legacy));
        check(
            "application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            Some(Choice::V2),
        );
        check("application/vnd.kubernetes.protobuf", None);
    }
}
