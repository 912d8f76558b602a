//! API Priority and Fairness's classification (kube's `WithPriorityAndFairness`, after
//! impersonation: the user a request acts as is classified): the FlowSchema and
//! PriorityLevelConfiguration a request matches are named by uid in kube's response
//! headers, whatever the answer. Long-running requests other than watches (`exec`,
//! `attach`, `portforward`, `log`, `proxy`, profiles) are not classified, as in kube.
//! kapi does not queue by priority level (`crate::flowcontrol`).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::Response;

use super::RequestInfo;
use crate::authn::UserInfo;
use crate::flowcontrol::FlowControl;

/// kube's header naming the FlowSchema's uid.
pub const FLOW_SCHEMA_UID: &str = "X-Kubernetes-PF-FlowSchema-UID";
/// kube's header naming the priority level's uid.
pub const PRIORITY_LEVEL_UID: &str = "X-Kubernetes-PF-PriorityLevel-UID";

/// Whether kube leaves the request out of APF.
fn long_running(info: &RequestInfo) -> bool {
    info.verb == "proxy"
        || matches!(
            info.subresource.as_str(),
            "attach" | "exec" | "proxy" | "log" | "portforward"
        )
        || info.path.starts_with("/debug/pprof/")
}

/// The filter.
pub async fn classify(
    flow: Option<&Arc<FlowControl>>,
    request: Request,
    next: impl super::Next,
) -> Response {
    let classified = match (
        flow,
        request.extensions().get::<RequestInfo>(),
        request.extensions().get::<UserInfo>(),
    ) {
        (Some(flow), Some(info), Some(user)) if !long_running(info) => {
            flow.classifier().classify(user, info).cloned()
        }
        _ => None,
    };
    let mut response = next.run(request).await;
    if let Some(classified) = classified {
        let headers = response.headers_mut();
        for (name, uid) in [
            (FLOW_SCHEMA_UID, &classified.flow_schema_uid),
            (PRIORITY_LEVEL_UID, &classified.priority_level_uid),
        ] {
            if let Ok(value) = HeaderValue::from_str(uid) {
                headers.insert(name, value);
            }
        }
    }
    response
}
