//! The HTTP handler chain in front of the endpoints: kube-apiserver's
//! `DefaultBuildHandlerChain`, one concern per filter, in kube's order (outermost first):
//!
//! 1. request info ([`request_info`]): what the request asks for, as kube reads paths;
//! 2. the request log and audit id ([`log`]): one line per request, with the verb, user
//!    and audit id, which every response carries as `Audit-Id`;
//! 3. request metrics ([`metrics`]): counts, latencies and sizes of served resources'
//!    requests (`kapi_metrics`);
//! 4. panic recovery: a panicking handler answers a 500 `Status`;
//! 5. the request deadline ([`timeout`]): past `--request-timeout`, a 504 `Status`;
//! 6. authentication ([`authentication`]): who sent it (`crate::authn`), or 401 (audited);
//! 7. audit ([`audit`]): the request's audit events (`crate::audit`);
//! 8. impersonation ([`impersonation`]): acting as another user, if allowed, or 403;
//! 9. API Priority and Fairness ([`priority_and_fairness`]): the FlowSchema and priority
//!    level the request matches, named in response headers (no queuing);
//! 10. max in flight ([`max_inflight`]): a slot of the read-only or mutating pool, or 429;
//! 11. authorization ([`authorization`]): whether they may (`crate::authz`), or 403;
//!
//! then the router. What later filters and handlers need travels as request extensions:
//! [`RequestInfo`] and the resolved [`UserInfo`](crate::authn::UserInfo). Unknown paths
//! are authorized too (a user who may not read `/foo` gets 403, not 404), as in kube.

pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod impersonation;
pub mod log;
pub mod max_inflight;
pub mod metrics;
pub mod priority_and_fairness;
mod request_info;
mod served;
pub mod timeout;

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use futures_util::FutureExt;
use tower::ServiceExt;

pub use crate::http::RequestInfo;
pub use log::REQUEST_LOG_TARGET;
pub use served::Served;

use crate::audit::Auditor;
use crate::authn::Authenticator;
use crate::authz::{AlwaysAllow, Mode};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

/// What the chain checks requests with.
#[derive(Clone)]
pub struct Filters {
    /// Who sent a request.
    pub authenticator: Arc<Authenticator>,
    /// Whether they may.
    pub authorizer: Mode,
    /// What is recorded (`None`: nothing).
    pub auditor: Option<Arc<Auditor>>,
    /// How many requests may run at once.
    pub limits: max_inflight::Limits,
    /// How long a request that is not long-running may take (0: no limit).
    pub request_timeout: std::time::Duration,
    /// The classifier of API Priority and Fairness (none: requests are not classified).
    pub flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
}

impl Default for Filters {
    /// No authentication (everyone is `system:anonymous`), everything allowed: a server on
    /// loopback for development.
    fn default() -> Filters {
        Filters {
            authenticator: Arc::new(Authenticator::new().anonymous(true)),
            authorizer: Mode::new().with("AlwaysAllow", Arc::new(AlwaysAllow)),
            auditor: None,
            limits: max_inflight::Limits::default(),
            request_timeout: timeout::DEFAULT_REQUEST_TIMEOUT,
            flow_control: None,
        }
    }
}

pub use crate::http::Next;

/// The filters in order, outermost first, each as `path[its arguments before the
/// request]`, then what answers behind them: expands to each filter called with a closure
/// that runs the rest. No filter clones a service; each level's future is boxed once
/// ([`Next::run`]).
macro_rules! nest {
    ($request:expr; then $inner:expr) => {
        $inner($request)
    };
    ($request:expr; $filter:path [$($argument:expr),*], $($rest:tt)+) => {
        $filter($($argument,)* $request, move |request| nest!(request; $($rest)+))
    };
}

/// What sits between authorization and the router: the aggregator, when the API has
/// APIServices.
#[cfg(feature = "aggregation")]
pub type Aggregation = Option<Arc<crate::aggregator::Aggregator>>;

/// What sits between authorization and the router: nothing, without the `aggregation` set.
#[cfg(not(feature = "aggregation"))]
pub type Aggregation = Option<NoAggregator>;

/// The aggregator of a build without the `aggregation` set: there is none to give.
#[cfg(not(feature = "aggregation"))]
#[derive(Clone, Debug)]
pub enum NoAggregator {}

/// The chain's filters with their state, and the router behind them.
struct Chain {
    served: Arc<crate::filters::Served>,
    request_timeout: std::time::Duration,
    /// Authentication's state, whose auditor the audit filter records with too.
    authentication: authentication::Authentication,
    authorizer: Mode,
    limits: max_inflight::Limits,
    flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
    #[cfg_attr(not(feature = "aggregation"), allow(dead_code))]
    aggregator: Aggregation,
    router: Router,
}

impl Chain {
    /// `request` through every filter, then the aggregator (when the API has
    /// APIServices) and the router.
    async fn serve(&self, request: Request) -> Response {
        nest!(request;
            request_info::attach[],
            log::log_request[],
            metrics::instrument[&self.served],
            recover[],
            timeout::deadline[self.request_timeout],
            authentication::authenticate[&self.authentication],
            audit::audit[self.authentication.auditor.as_ref()],
            impersonation::impersonate[&self.authorizer],
            priority_and_fairness::classify[self.flow_control.as_ref()],
            max_inflight::limit[&self.limits],
            authorization::authorize[&self.authorizer],
            then |request| self.aggregate(request)
        )
        .await
    }

    /// The aggregator's answer, or the router's.
    #[cfg(feature = "aggregation")]
    async fn aggregate(&self, request: Request) -> Response {
        let route = |request| self.route(request);
        crate::aggregator::layer(self.aggregator.as_deref(), request, route).await
    }

    /// The router's answer.
    #[cfg(not(feature = "aggregation"))]
    async fn aggregate(&self, request: Request) -> Response {
        self.route(request).await
    }

    /// The router's answer.
    async fn route(&self, request: Request) -> Response {
        match self.router.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// `handler` behind the chain, with the aggregator (when the API has APIServices)
/// between authorization and the handler; `served` bounds what the request metrics label.
///
/// The filters are async functions that each take what follows as a [`Next`], composed
/// once around the whole router: a request runs them as one future. (As tower layers,
/// with `axum::middleware::from_fn`, every filter boxed its future and the service behind
/// it for each request and moved them about: about 10k instructions more per GET, a sixth
/// of its whole.)
pub fn chain(
    handler: Router,
    filters: &Filters,
    served: Arc<crate::filters::Served>,
    aggregator: Aggregation,
) -> Router {
    let chain = Arc::new(Chain {
        served,
        request_timeout: filters.request_timeout,
        authentication: authentication::Authentication {
            authenticator: Arc::clone(&filters.authenticator),
            auditor: filters.auditor.clone(),
        },
        authorizer: filters.authorizer.clone(),
        limits: filters.limits.clone(),
        flow_control: filters.flow_control.clone(),
        aggregator,
        router: handler,
    });
    Router::new().fallback_service(tower::service_fn(move |request: Request| {
        let chain = Arc::clone(&chain);
        async move { Ok::<_, Infallible>(chain.serve(request).await) }
    }))
}

/// Panic recovery: a handler that panicked is a bug. The client gets a 500 `Status`, the
/// log the message.
async fn recover(request: Request, next: impl Next) -> Response {
    match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(panic) => panicked(panic),
    }
}

fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = if let Some(message) = panic.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else {
        "unknown panic".to_owned()
    };
    tracing::error!(%message, "handler panicked");
    ApiError::Internal(format!("the request handler panicked: {message}")).into_response()
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;
    use crate::authn::token_file::TokenFile;
    use crate::authz::AlwaysDeny;

    async fn send(
        router: &Router,
        uri: &str,
        token: Option<&str>,
    ) -> (StatusCode, serde_json::Value) {
        let mut request = Request::get(uri);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = router
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&body).unwrap_or_default())
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_and_unknown_paths_404() {
        #[allow(clippy::unused_async)]
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let routes = Router::new()
            .route("/boom", get(boom))
            .fallback(|| async { ApiError::NoRoute.into_response() });
        let router = chain(routes, &Filters::default(), Arc::default(), None);
        let (code, status) = send(&router, "/boom", None).await;
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(status["reason"], "InternalError");
        assert_eq!(
            status["message"],
            "Internal error occurred: the request handler panicked: boom"
        );
        assert_eq!(
            send(&router, "/nowhere", None).await.0,
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn unauthenticated_and_unauthorized_requests_get_kubes_statuses() {
        let routes = Router::new()
            .route("/ok", get(|| async { "{}" }))
            .fallback(|| async { ApiError::NoRoute.into_response() });
        let tokens = TokenFile::parse("good,alice,1,devs\n").unwrap();
        let filters = Filters {
            authenticator: Arc::new(Authenticator::new().with(tokens).anonymous(false)),
            authorizer: Mode::new().with("AlwaysDeny", Arc::new(AlwaysDeny)),
            auditor: None,
            limits: max_inflight::Limits::default(),
            request_timeout: timeout::DEFAULT_REQUEST_TIMEOUT,
            flow_control: None,
        };
        let router = chain(routes, &filters, Arc::default(), None);

        let (code, status) = send(&router, "/ok", Some("bad")).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED);
        assert_eq!(
            status,
            serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                "code": 401})
        );
        assert_eq!(send(&router, "/ok", None).await.0, StatusCode::UNAUTHORIZED);

        // Unknown paths are authorized before they are routed.
        let (code, status) = send(&router, "/nowhere", Some("good")).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        assert_eq!(
            status["message"],
            "forbidden: User \"alice\" cannot get path \"/nowhere\": Everything is forbidden."
        );
        assert_eq!(status["details"], serde_json::json!({}));
    }
}
