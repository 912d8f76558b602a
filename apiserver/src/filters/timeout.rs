//! The request deadline (kube's `WithRequestDeadline` and
//! `WithTimeoutForNonLongRunningRequests`): a request that is not long-running (not a
//! watch) gets `--request-timeout` (60 s by default), or less when its `timeout` query
//! parameter asks for less; past it, the work is dropped where it waits (reading the body,
//! storage) and the client gets kube's 504 `Timeout` Status. A write whose storage
//! transaction was already sent may still take effect, as kube warns ("it may still
//! succeed"); a request whose body never arrived stores nothing.

use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;

use super::RequestInfo;
use super::metrics::Terminated;
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

/// kube's default `--request-timeout`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The `timeout` query parameter, as Go's `time.ParseDuration` reads the usual forms.
fn requested(query: Option<&str>) -> Option<Duration> {
    let value = form_urlencoded::parse(query?.as_bytes())
        .find(|(key, _)| key == "timeout")
        .map(|(_, value)| value.into_owned())?;
    humantime::parse_duration(&value)
        .ok()
        .filter(|d| !d.is_zero())
}

/// The filter; `limit` is `--request-timeout`.
pub async fn deadline(limit: Duration, request: Request, next: impl super::Next) -> Response {
    let long_running =
        (request.extensions().get::<RequestInfo>()).is_some_and(|i| i.verb == "watch");
    if long_running || limit.is_zero() {
        return next.run(request).await;
    }
    let timeout = requested(request.uri().query()).map_or(limit, |asked| asked.min(limit));
    match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let mut response = ApiError::Timeout {
                message:
                    "request did not complete within requested timeout - context deadline exceeded"
                        .into(),
                retry_after_seconds: 0,
            }
            .into_response();
            response.extensions_mut().insert(Terminated);
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_timeout_parameter() {
        assert_eq!(
            requested(Some("timeout=30s")),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            requested(Some("a=b&timeout=1m")),
            Some(Duration::from_secs(60))
        );
        assert_eq!(requested(Some("timeout=0s")), None);
        assert_eq!(requested(Some("timeout=soon")), None);
        assert_eq!(requested(None), None);
    }
}
