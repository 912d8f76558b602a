//! The one place an [`ApiError`] becomes an HTTP response: its `Status` as JSON (or as
//! protobuf for a request that asked for it), its code, and `Retry-After` when it carries
//! one.

use axum::http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER, WARNING};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use kapi_core::api::protobuf;
use kapi_core::error::ApiError;
use kapi_core::meta::STATUS_PROTO;

/// An [`ApiError`] as the response it is: a trait of this layer's, since the error is
/// `kapi-core`'s and HTTP types stop at the API server.
pub trait ErrorResponse {
    /// Its `Status` as JSON.
    fn into_response(self) -> Response;
    /// Its `Status` as Kubernetes protobuf, for a request that asked for protobuf.
    fn into_protobuf_response(self) -> Response;
}

impl ErrorResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.to_status();
        let mut body = serde_json::to_vec(&status).unwrap_or_else(|_| b"{}".to_vec());
        body.push(b'\n');
        respond(&self, body, "application/json")
    }

    fn into_protobuf_response(self) -> Response {
        let status = serde_json::to_value(self.to_status()).unwrap_or_default();
        match protobuf::encode::object(&STATUS_PROTO, &status) {
            Ok(body) => respond(&self, body, protobuf::MEDIA_TYPE),
            Err(_) => ErrorResponse::into_response(self),
        }
    }
}

fn respond(error: &ApiError, body: Vec<u8>, content_type: &'static str) -> Response {
    let code = StatusCode::from_u16(error.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(seconds) = error.retry_after_seconds() {
        headers.insert(RETRY_AFTER, HeaderValue::from(seconds.max(0)));
    }
    response
}

/// Adds `Warning: 299 - "<text>"`, as kube-apiserver sends warnings to clients (kubectl
/// prints `Warning: <text>`).
pub fn add_warning(headers: &mut HeaderMap, text: &str) {
    let mut value = String::with_capacity(text.len() + 10);
    value.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                value.push('\\');
                value.push(c);
            }
            // Header values cannot carry control characters.
            c if c.is_control() => value.push(' '),
            c => value.push(c),
        }
    }
    value.push('"');
    if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
        headers.append(WARNING, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_code_and_retry_after() {
        let response = ApiError::TooManyRequests {
            message: "slow down".into(),
            retry_after_seconds: 3,
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[RETRY_AFTER], "3");
        assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
        let response = ApiError::NoRoute.into_response();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(response.headers().get(RETRY_AFTER).is_none());
    }

    #[test]
    fn warnings_are_quoted_strings() {
        let mut headers = HeaderMap::new();
        add_warning(&mut headers, "unknown field \"spec.bogus\"");
        add_warning(&mut headers, "a\\b\nc");
        let values: Vec<_> = headers.get_all(WARNING).iter().collect();
        assert_eq!(values[0], r#"299 - "unknown field \"spec.bogus\"""#);
        assert_eq!(values[1], r#"299 - "a\\b c""#);
    }
}
