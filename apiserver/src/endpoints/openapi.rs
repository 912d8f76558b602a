//! `/openapi/v2` and `/openapi/v3`, as kube-openapi's handlers serve them.
//!
//! - v2: JSON, or the gnostic protobuf for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
//!   (kubectl 1.20 validates with it), answered with the dot form of that media type,
//!   which Go's MIME parser accepts.
//! - v3: the index, then one document per group-version. A request naming the current
//!   `?hash=` is cacheable forever (`Cache-Control: public, immutable`); a stale hash is
//!   redirected (301) to the current URL (`kube-openapi/pkg/handler3`).
//!
//! The generated documents are compiled in deflated: each is inflated when first asked
//! for, and kept.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Path, RawQuery};
use axum::http::header::{CACHE_CONTROL, ETAG, EXPIRES, HeaderValue, LOCATION, VARY};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Documents;
use super::discovery::Live;
use super::media::{self, JSON};
use super::params::Query;
use crate::http::ErrorResponse as _;
use crate::http::{Prepared, not_modified};
use kapi_core::api::{Deflated, RenderedDocuments};
use kapi_core::error::ApiError;

const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const PROTOBUF_V2_SUBTYPES: [&str; 2] = [
    "com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "com.github.proto-openapi.spec.v2.v1.0+protobuf",
];

/// A document's bytes: rendered already, or compiled in deflated and inflated once.
enum Body {
    Ready(axum::body::Bytes),
    Deflated(Deflated, OnceLock<axum::body::Bytes>),
}

impl Body {
    fn deflated(deflated: Deflated) -> Body {
        Body::Deflated(deflated, OnceLock::new())
    }

    fn get(&self) -> &axum::body::Bytes {
        match self {
            Body::Ready(bytes) => bytes,
            Body::Deflated(deflated, inflated) => {
                inflated.get_or_init(|| deflated.inflate().into())
            }
        }
    }
}

/// A document tagged by its own hash ([`Prepared`]), made when first served.
struct Tagged {
    body: Body,
    prepared: OnceLock<Prepared>,
}

impl Tagged {
    fn new(body: Body) -> Tagged {
        Tagged {
            body,
            prepared: OnceLock::new(),
        }
    }

    fn get(&self) -> &Prepared {
        (self.prepared).get_or_init(|| Prepared::new(self.body.get().clone()))
    }
}

/// A v3 document ready to serve, tagged by the hash its URL carries.
struct V3Document {
    body: Body,
    hash: String,
    etag: HeaderValue,
}

impl V3Document {
    fn new(body: Body, hash: &str) -> V3Document {
        let etag = HeaderValue::from_str(&format!("\"{hash}\""))
            .unwrap_or_else(|_| HeaderValue::from_static("\"\""));
        V3Document {
            body,
            hash: hash.to_owned(),
            etag,
        }
    }
}

/// The OpenAPI documents of one scheme, ready to serve: the generated ones, or those
/// rendered again once kinds were installed (`super::discovery::Live`).
pub(super) struct OpenApi {
    v2_json: Tagged,
    v2_protobuf: Tagged,
    v3_index: Prepared,
    v3: HashMap<String, V3Document>,
}

impl OpenApi {
    fn generated(documents: &Documents) -> OpenApi {
        OpenApi {
            v2_json: Tagged::new(Body::deflated(documents.openapi_v2_json)),
            v2_protobuf: Tagged::new(Body::deflated(documents.openapi_v2_protobuf)),
            v3_index: Prepared::new(documents.openapi_v3_index.as_bytes()),
            v3: (documents.openapi_v3.iter())
                .map(|d| {
                    let body = Body::deflated(d.json);
                    (d.path.to_owned(), V3Document::new(body, d.hash))
                })
                .collect(),
        }
    }

    pub(super) fn rendered(documents: &RenderedDocuments) -> OpenApi {
        let ready = |bytes: &Vec<u8>| Body::Ready(bytes.clone().into());
        OpenApi {
            v2_json: Tagged::new(ready(&documents.openapi_v2_json)),
            v2_protobuf: Tagged::new(ready(&documents.openapi_v2_protobuf)),
            v3_index: Prepared::new(documents.openapi_v3_index.clone()),
            v3: (documents.openapi_v3.iter())
                .map(|d| (d.path.clone(), V3Document::new(ready(&d.json), &d.hash)))
                .collect(),
        }
    }
}

pub(super) fn router(documents: &Documents, live: &Arc<Live>) -> Router {
    let generated = Arc::new(OpenApi::generated(documents));
    let current = move || {
        let (live, generated) = (Arc::clone(live), Arc::clone(&generated));
        move || live.openapi().unwrap_or_else(|| Arc::clone(&generated))
    };
    let now = current();
    let v2 = move |headers: HeaderMap| {
        let documents = now();
        async move { serve_v2(&headers, &documents.v2_json, &documents.v2_protobuf) }
    };
    let now = current();
    let index = move |headers: HeaderMap| {
        let documents = now();
        async move { documents.v3_index.respond(&headers, JSON) }
    };
    let now = current();
    let group_version =
        move |Path(path): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap| {
            let documents = now();
            async move { serve_v3(&documents.v3, &path, query.as_deref(), &headers) }
        };
    Router::new()
        .route("/openapi/v2", get(v2).fallback(super::method_not_allowed))
        .route(
            "/openapi/v3",
            get(index).fallback(super::method_not_allowed),
        )
        .route(
            "/openapi/v3/{*path}",
            get(group_version).fallback(super::method_not_allowed),
        )
}

/// Accepts the JSON or the protobuf form; kube-openapi treats a missing `Accept` as `*/*`.
fn serve_v2(headers: &HeaderMap, json: &Tagged, protobuf: &Tagged) -> Response {
    let ranges = media::accept(headers);
    if !media::has_accept(headers) {
        return json.get().respond(headers, JSON);
    }
    for range in &ranges {
        if range.matches("application", "json") {
            return json.get().respond(headers, JSON);
        }
        if range.type_ == "application" && PROTOBUF_V2_SUBTYPES.contains(&&*range.subtype) {
            return protobuf.get().respond(headers, PROTOBUF_V2);
        }
    }
    ApiError::NotAcceptable(format!("{JSON}, {PROTOBUF_V2}")).into_response()
}

fn serve_v3(
    documents: &HashMap<String, V3Document>,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    let Some(document) = documents.get(path) else {
        return ApiError::NoRoute.into_response();
    };
    let ranges = media::accept(headers);
    if media::has_accept(headers) && !ranges.iter().any(|r| r.matches("application", "json")) {
        return ApiError::NotAcceptable(JSON.into()).into_response();
    }
    let hash = Query::parse(query).string("hash");
    if let Some(hash) = &hash
        && *hash != document.hash
    {
        let location = format!("/openapi/v3/{path}?hash={}", document.hash);
        let mut response = StatusCode::MOVED_PERMANENTLY.into_response();
        if let Ok(location) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(LOCATION, location);
        }
        return response;
    }
    let mut response = if not_modified(headers, &document.etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = (StatusCode::OK, document.body.get().clone()).into_response();
        (response.headers_mut()).insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static(JSON),
        );
        response
    };
    let response_headers = response.headers_mut();
    response_headers.insert(ETAG, document.etag.clone());
    response_headers.insert(VARY, HeaderValue::from_static("Accept"));
    if hash.is_some() {
        response_headers.insert(CACHE_CONTROL, HeaderValue::from_static("public, immutable"));
        let expires = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(365 * 86400));
        if let Ok(expires) = HeaderValue::from_str(&expires) {
            response_headers.insert(EXPIRES, expires);
        }
    }
    response
}
