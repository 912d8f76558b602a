//! OpenAPI with the other servers' APIs merged in.
//!
//! - `/openapi/v2`: the router's document plus, from each remote APIService's server (as
//!   last fetched), its paths under `/apis/` that the document does not have yet and the
//!   definitions it lacks (kube-openapi's `MergeSpecsIgnorePathConflict`; a definition of
//!   the same name is kept as this server has it, where kube would rename the other).
//!   JSON, or gnostic protobuf through the binary's encoder (kubectl 1.20 reads only that).
//!   The merge is made once per change of its inputs.
//! - `/openapi/v3`: the router's index plus `apis/<group>/<version>` of each remote
//!   APIService whose document was fetched; `/openapi/v3/apis/<group>/<version>` serves
//!   that document, by hash as kube-openapi's handler does.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::{ACCEPT, CACHE_CONTROL, HeaderValue, IF_NONE_MATCH, LOCATION, VARY};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::discovery::respond;
use super::{Aggregator, Document, Entry, Registered};
use crate::http::ErrorResponse as _;
use crate::http::Next;
use crate::http::{Prepared, fnv1a};

const JSON: &str = "application/json";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The last merged `/openapi/v2`: its inputs' fingerprint, its JSON and protobuf forms.
pub(super) type MergedV2 = Mutex<Option<(u64, Bytes, Bytes)>>;

/// The router's JSON answer at the request's path (asked as JSON, whole), and its hash.
async fn local_bytes(mut request: Request, next: impl Next) -> Option<(Bytes, u64)> {
    request.headers_mut().remove(IF_NONE_MATCH);
    (request.headers_mut()).insert(ACCEPT, HeaderValue::from_static(JSON));
    let response = next.run(request).await;
    if response.status() != StatusCode::OK {
        return None;
    }
    let body = response.into_body().collect().await.ok()?.to_bytes();
    let hash = fnv1a(&body);
    Some((body, hash))
}

/// `/openapi/v2`.
pub(super) async fn v2(
    aggregator: &Aggregator,
    registered: &Registered,
    request: Request,
    next: impl Next,
) -> Response {
    let headers = request.headers().clone();
    let wants_protobuf =
        (headers.get(ACCEPT).and_then(|v| v.to_str().ok())).is_some_and(|accept| {
            accept.contains("com.github.proto-openapi.spec.v2") && !accept.contains(JSON)
        });
    let remotes: Vec<(String, Arc<Document>)> = (registered.entries().iter())
        .filter(|e| !e.service.is_local())
        .filter_map(|e| Some((e.name().to_owned(), e.fetched().openapi_v2?)))
        .collect();
    // Nothing to merge: the router's own answer, whose forms it prepared when its kinds
    // changed (parsing and encoding the whole document again would cost a second in a
    // debug build each time a definition is installed).
    if remotes.is_empty() {
        return next.run(request).await;
    }
    let Some((local, local_hash)) = local_bytes(request, next).await else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    // What the merge is made of, by content: the same inputs, the same document and tag.
    let fingerprint = remotes.iter().fold(local_hash, |hash, (name, document)| {
        (hash.rotate_left(7) ^ fnv1a(name.as_bytes())).wrapping_mul(31) ^ document.hash
    });
    let cached = (aggregator
        .merged_v2
        .lock()
        .unwrap_or_else(|e| e.into_inner()))
    .clone()
    .filter(|(at, _, _)| *at == fingerprint);
    let (json, protobuf) = match cached {
        Some((_, json, protobuf)) => (json, protobuf),
        None => {
            let Ok(mut document) = serde_json::from_slice::<Value>(&local) else {
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            };
            for (_, remote) in &remotes {
                merge_v2(&mut document, &remote.value);
            }
            let json = Bytes::from(serde_json::to_vec(&document).unwrap_or_default());
            let protobuf = Bytes::from(match &aggregator.encoder {
                Some(encode) => encode(&document),
                None => Vec::new(),
            });
            *aggregator
                .merged_v2
                .lock()
                .unwrap_or_else(|e| e.into_inner()) =
                Some((fingerprint, json.clone(), protobuf.clone()));
            (json, protobuf)
        }
    };
    match wants_protobuf && !protobuf.is_empty() {
        true => Prepared::tagged(protobuf, fingerprint).respond(&headers, PROTOBUF_V2),
        false => Prepared::tagged(json, fingerprint).respond(&headers, JSON),
    }
}

/// Merges `remote`'s paths under `/apis/` and the definitions into `document`; what
/// `document` has already wins.
fn merge_v2(document: &mut Value, remote: &Value) {
    if let Some(paths) = remote["paths"].as_object() {
        let target = &mut document["paths"];
        if !target.is_object() {
            *target = json!({});
        }
        let target = target.as_object_mut().expect("an object");
        for (path, item) in paths.iter().filter(|(path, _)| path.starts_with("/apis/")) {
            target.entry(path.clone()).or_insert_with(|| item.clone());
        }
    }
    if let Some(definitions) = remote["definitions"].as_object() {
        let target = &mut document["definitions"];
        if !target.is_object() {
            *target = json!({});
        }
        let target = target.as_object_mut().expect("an object");
        for (name, schema) in definitions {
            target.entry(name.clone()).or_insert_with(|| schema.clone());
        }
    }
}

/// `/openapi/v3`: the router's index with the remote group-versions.
pub(super) async fn v3_index(
    registered: &Registered,
    request: Request,
    next: impl Next,
) -> Response {
    let headers = request.headers().clone();
    let Some((local, _)) = local_bytes(request, next).await else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    let Ok(mut index) = serde_json::from_slice::<Value>(&local) else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    if !index["paths"].is_object() {
        index["paths"] = json!({});
    }
    for entry in registered
        .entries()
        .iter()
        .filter(|e| !e.service.is_local())
    {
        let Some(document) = entry.fetched().openapi_v3 else {
            continue;
        };
        let path = path_of(entry);
        let url = format!("/openapi/v3/{path}?hash={:016X}", document.hash);
        index["paths"][path] = json!({"serverRelativeURL": url});
    }
    respond(
        &headers,
        serde_json::to_vec(&index).unwrap_or_default(),
        JSON,
    )
}

/// `apis/<group>/<version>`.
fn path_of(entry: &Entry) -> String {
    let spec = &entry.service.spec;
    format!("apis/{}/{}", spec.group, spec.version)
}

/// `/openapi/v3/apis/<group>/<version>` of a remote APIService.
pub(super) fn v3_document(entry: &Entry, request: &Request) -> Response {
    let Some(document) = entry.fetched().openapi_v3 else {
        return kapi_core::error::ApiError::NoRoute.into_response();
    };
    let current = format!("{:016X}", document.hash);
    let asked = (request.uri().query().unwrap_or_default().split('&'))
        .find_map(|pair| pair.strip_prefix("hash="))
        .map(str::to_owned);
    if let Some(asked) = &asked
        && *asked != current
    {
        let mut response = StatusCode::MOVED_PERMANENTLY.into_response();
        let location = format!("/openapi/v3/{}?hash={current}", path_of(entry));
        if let Ok(location) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(LOCATION, location);
        }
        return response;
    }
    let body = Bytes::from(serde_json::to_vec(&document.value).unwrap_or_default());
    let mut response = Prepared::tagged(body, document.hash).respond(request.headers(), JSON);
    (response.headers_mut()).insert(VARY, HeaderValue::from_static("Accept"));
    if asked.is_some() {
        (response.headers_mut())
            .insert(CACHE_CONTROL, HeaderValue::from_static("public, immutable"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_document_adds_only_what_is_missing() {
        let mut local = json!({
            "paths": {"/apis/apps/v1/": {"get": "local"}},
            "definitions": {"A": {"description": "local"}}
        });
        let remote = json!({
            "paths": {
                "/apis/apps/v1/": {"get": "remote"},
                "/apis/metrics.example/v1/": {"get": "remote"},
                "/version/": {"get": "remote"}
            },
            "definitions": {"A": {"description": "remote"}, "B": {"description": "remote"}}
        });
        merge_v2(&mut local, &remote);
        assert_eq!(
            local,
            json!({
                "paths": {
                    "/apis/apps/v1/": {"get": "local"},
                    "/apis/metrics.example/v1/": {"get": "remote"}
                },
                "definitions": {"A": {"description": "local"}, "B": {"description": "remote"}}
            })
        );
    }
}
