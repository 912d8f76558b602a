//! `GET /debug/pprof/profile?seconds=N` (`--profiling`, kube's default on): a CPU profile
//! of the whole process over N seconds (30 by default, as Go's `net/http/pprof`), sampled
//! at 100 Hz by pprof-rs, answered as Go answers it: the `perftools.profiles` protobuf,
//! gzipped, which `go tool pprof` and every pprof viewer read. A non-resource URL under
//! authorization: only those granted `/debug/pprof/*` (cluster-admin) may profile.
//!
//! One profile at a time (the profiler is process-wide, as Go's); a second request while
//! one runs is a 500, as Go answers it. A profile longer than `--request-timeout` is cut
//! by it.

use std::io::Write;
use std::time::Duration;

use axum::Router;
use axum::extract::RawQuery;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use pprof::protos::Message;

use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

/// Samples per second, as Go's CPU profiler.
const FREQUENCY: i32 = 100;

/// Go's default profile length.
const DEFAULT_SECONDS: u64 = 30;

/// Libraries whose frames are not unwound from the signal handler: unwinding through them
/// can deadlock (pprof-rs' advice).
const BLOCKLIST: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

pub(super) fn router() -> Router {
    Router::new().route(
        "/debug/pprof/profile",
        get(profile).fallback(super::method_not_allowed),
    )
}

fn seconds(query: Option<&str>) -> Result<u64, ApiError> {
    let asked = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(key, _)| key == "seconds")
        .map(|(_, value)| value.into_owned());
    match asked {
        None => Ok(DEFAULT_SECONDS),
        Some(value) => match value.parse::<u64>() {
            Ok(seconds) if seconds > 0 => Ok(seconds),
            _ => Err(ApiError::BadRequest(format!(
                "invalid seconds {value:?}: a positive number of seconds"
            ))),
        },
    }
}

async fn profile(RawQuery(query): RawQuery) -> Response {
    let seconds = match seconds(query.as_deref()) {
        Ok(seconds) => seconds,
        Err(e) => return e.into_response(),
    };
    // The profiler samples from a signal handler; this thread only waits for it.
    let profiled = tokio::task::spawn_blocking(move || record(Duration::from_secs(seconds))).await;
    match profiled {
        Ok(Ok(body)) => (
            [
                (CONTENT_TYPE, "application/octet-stream"),
                (CONTENT_DISPOSITION, "attachment; filename=\"profile\""),
            ],
            body,
        )
            .into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => ApiError::Internal(format!("the profiler stopped: {e}")).into_response(),
    }
}

/// Profiles the process for `length`; the gzipped protobuf.
fn record(length: Duration) -> Result<Vec<u8>, ApiError> {
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(FREQUENCY)
        .blocklist(&BLOCKLIST)
        .build()
        .map_err(|e| ApiError::Internal(format!("could not enable CPU profiling: {e}")))?;
    std::thread::sleep(length);
    let report = (guard.report().build())
        .map_err(|e| ApiError::Internal(format!("building the profile: {e}")))?;
    drop(guard);
    let profile = report
        .pprof()
        .map_err(|e| ApiError::Internal(format!("encoding the profile: {e}")))?;
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&profile.encode_to_vec())
        .and_then(|()| gzip.finish())
        .map_err(|e| ApiError::Internal(format!("compressing the profile: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_positive_and_default_to_thirty() {
        assert_eq!(seconds(None).unwrap(), 30);
        assert_eq!(seconds(Some("seconds=2")).unwrap(), 2);
        assert!(seconds(Some("seconds=0")).is_err());
        assert!(seconds(Some("seconds=soon")).is_err());
    }
}
