//! Documents served whole (discovery, OpenAPI, the aggregator's merged ones) with an
//! entity tag, answering `If-None-Match` with 304.

use axum::http::header::{CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// A document ready to serve, with its entity tag (also the aggregator's merged ones).
#[derive(Clone)]
pub struct Prepared {
    /// The document.
    pub body: axum::body::Bytes,
    /// Its entity tag.
    pub etag: HeaderValue,
}

impl Prepared {
    /// `body`, tagged by its hash.
    pub fn new(body: impl Into<axum::body::Bytes>) -> Prepared {
        let body = body.into();
        let hash = fnv1a(&body);
        Prepared::tagged(body, hash)
    }

    /// `body`, tagged by `hash` (of what it was made from, when hashing the body itself
    /// would cost more).
    pub fn tagged(body: impl Into<axum::body::Bytes>, hash: u64) -> Prepared {
        let etag = format!("\"{hash:016X}\"");
        Prepared {
            body: body.into(),
            etag: HeaderValue::from_str(&etag).unwrap_or_else(|_| HeaderValue::from_static("\"\"")),
        }
    }

    /// 200 with `content_type`, or 304 when the request already has this version.
    pub fn respond(&self, headers: &HeaderMap, content_type: &str) -> Response {
        let mut response = if not_modified(headers, &self.etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            (StatusCode::OK, self.body.clone()).into_response()
        };
        let response_headers = response.headers_mut();
        if let Ok(content_type) = HeaderValue::from_str(content_type) {
            response_headers.insert(CONTENT_TYPE, content_type);
        }
        response_headers.insert(ETAG, self.etag.clone());
        response
    }
}

/// `If-None-Match` names `etag` (or `*`).
pub fn not_modified(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    (headers.get_all(IF_NONE_MATCH).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag.as_bytes() == etag.as_bytes())
}

/// A stable 64-bit hash for entity tags.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
