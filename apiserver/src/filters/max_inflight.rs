//! Overload protection (kube's `WithMaxInFlightLimit`): at most `--max-requests-inflight`
//! read-only and `--max-mutating-requests-inflight` mutating requests run at once; a
//! request over its limit is answered at once with kube's 429 `TooManyRequests` and
//! `Retry-After: 1`, so a client backs off instead of queueing. Long-running requests
//! (watches) are not counted, nor are health checks, nor the requests of `system:masters`
//! (kube's exempt priority level), so an administrator can always get in.
//!
//! This is kube's max-in-flight filter, which API Priority and Fairness replaced as kube's
//! default: there are two pools and no priority levels, flow schemas, fair queuing or
//! queues (a request over the limit waits for nothing); the exemptions are APF's `exempt`
//! level's (`system:masters`, health checks).
//!
//! `apiserver_current_inflight_requests{request_kind}` is the number of slots taken at the
//! scrape (kube's is the highest in the last second); a refused request counts in
//! `apiserver_dropped_requests_total` and `apiserver_request_terminations_total`.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use tokio::sync::Semaphore;

use kapi_metrics::Gauge;

use super::RequestInfo;
use super::metrics::Terminated;
use crate::authn::{MASTERS, UserInfo};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;
use kapi_metrics::{KindOfRequest, global};

/// kube's defaults.
pub const DEFAULT_READONLY: usize = 400;
/// kube's defaults.
pub const DEFAULT_MUTATING: usize = 200;

/// The two pools; a limit of 0 is no limit, as kube's.
#[derive(Clone)]
pub struct Limits {
    readonly: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl Limits {
    /// Pools of `readonly` and `mutating` requests (0: unlimited).
    pub fn new(readonly: usize, mutating: usize) -> Limits {
        let pool = |size: usize| (size > 0).then(|| Arc::new(Semaphore::new(size)));
        Limits {
            readonly: pool(readonly),
            mutating: pool(mutating),
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new(DEFAULT_READONLY, DEFAULT_MUTATING)
    }
}

/// Verbs that change state (kube's `nonMutatingRequestVerbs` are the others).
fn mutating(verb: &str) -> bool {
    !matches!(verb, "get" | "list" | "watch" | "head" | "options")
}

/// Whether the request takes no slot.
fn exempt(info: &RequestInfo, user: Option<&UserInfo>) -> bool {
    let health = ["/healthz", "/livez", "/readyz"].iter().any(|p| {
        (info.path.strip_prefix(p)).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    info.verb == "watch" || health || user.is_some_and(|u| u.in_group(MASTERS))
}

/// The filter.
pub async fn limit(limits: &Limits, request: Request, next: impl super::Next) -> Response {
    let Some(info) = request.extensions().get::<RequestInfo>() else {
        return next.run(request).await;
    };
    if exempt(info, request.extensions().get::<UserInfo>()) {
        return next.run(request).await;
    }
    let (pool, kind) = if mutating(&info.verb) {
        (&limits.mutating, "mutating")
    } else {
        (&limits.readonly, "readOnly")
    };
    let Some(pool) = pool else {
        return next.run(request).await;
    };
    let labels = KindOfRequest { request_kind: kind };
    let Ok(_permit) = Arc::clone(pool).try_acquire_owned() else {
        global().dropped.with_or_new(&labels, |c| c.inc());
        let mut response = ApiError::TooManyRequests {
            message: "please try again later".into(),
            retry_after_seconds: 1,
        }
        .into_response();
        response.extensions_mut().insert(Terminated);
        return response;
    };
    let _inflight = InFlight::enter(labels);
    next.run(request).await
}

/// A request holding a slot, counted in `apiserver_current_inflight_requests` until it is
/// answered (or dropped).
struct InFlight(Gauge);

impl InFlight {
    fn enter(labels: KindOfRequest) -> InFlight {
        let gauge = global().inflight.with_or_new(&labels, Gauge::clone);
        gauge.inc();
        InFlight(gauge)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    #[test]
    fn watches_health_and_masters_take_no_slot() {
        let info = |method: Method, path: &str| RequestInfo::new(&method, path, None);
        let alice = UserInfo {
            name: "alice".into(),
            ..UserInfo::default()
        };
        let admin = UserInfo {
            groups: vec![MASTERS.into()],
            ..alice.clone()
        };
        let list = info(Method::GET, "/api/v1/namespaces");
        assert!(!exempt(&list, Some(&alice)));
        assert!(exempt(&list, Some(&admin)));
        let watch = RequestInfo::new(&Method::GET, "/api/v1/namespaces", Some("watch=true"));
        assert!(exempt(&watch, Some(&alice)));
        assert!(exempt(&info(Method::GET, "/readyz"), None));
        assert!(exempt(&info(Method::GET, "/livez/ping"), None));
        assert!(!exempt(&info(Method::GET, "/readyzz"), None));
        assert!(mutating("create") && mutating("deletecollection") && !mutating("list"));
    }
}
