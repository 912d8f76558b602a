//! The audit filter (kube's `WithAudit`), after authentication: asks the policy about the
//! request and writes its events (`crate::audit`). Inner filters leave what they learn in
//! the request's [`AuditNotes`]: the impersonated user, the authorization decision.
//! Failed authentications are audited by [`unauthenticated`], called by the
//! authentication filter (kube's `WithFailedAuthenticationAudit`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::RequestInfo;
use super::log::AuditId;
use crate::audit::event::{ObjectRef, User, now, without_managed_fields};
use crate::audit::policy::Decision;
use crate::audit::{Auditor, Event, Level, Stage};
use crate::authn::UserInfo;
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;
use kapi_registry::admission::AuditAnnotations;

/// What inner filters learn about an audited request.
#[derive(Clone, Default)]
pub struct AuditNotes(Arc<Mutex<Notes>>);

#[derive(Default)]
struct Notes {
    impersonated: Option<UserInfo>,
    annotations: BTreeMap<String, String>,
}

impl AuditNotes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Notes> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The request acts as `user`.
    pub fn impersonated(&self, user: &UserInfo) {
        self.lock().impersonated = Some(user.clone());
    }

    /// The authorization decision (`allow` or `forbid`) and its reason.
    pub fn authorized(&self, decision: &str, reason: &str) {
        let mut notes = self.lock();
        (notes.annotations).insert("authorization.k8s.io/decision".into(), decision.into());
        (notes.annotations).insert("authorization.k8s.io/reason".into(), reason.into());
    }
}

/// The client's addresses: those `X-Forwarded-For` names, then the connection's.
fn source_ips(request: &Request) -> Vec<String> {
    let mut ips: Vec<String> = (request.headers().get_all("x-forwarded-for").iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|ip| ip.trim().to_owned())
        .filter(|ip| !ip.is_empty())
        .collect();
    if let Some(ConnectInfo(addr)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let ip = addr.ip().to_string();
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    ips
}

/// A request's event, before any stage.
fn event(request: &Request, level: Level, user: User, info: Option<&RequestInfo>) -> Event {
    // The request log's filter gave every request its id.
    let audit_id = (request.extensions().get::<AuditId>())
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), |id| id.0.clone());
    let received = now();
    Event {
        kind: "Event",
        api_version: "audit.k8s.io/v1",
        level,
        audit_id,
        stage: Stage::RequestReceived,
        request_uri: (request.uri().path_and_query())
            .map_or_else(|| request.uri().path().to_owned(), |p| p.to_string()),
        verb: info.map_or_else(
            || request.method().as_str().to_lowercase(),
            |i| i.verb.clone(),
        ),
        user,
        impersonated_user: None,
        source_ips: source_ips(request),
        user_agent: (request
            .headers()
            .get("user-agent")
            .and_then(|v| v.to_str().ok()))
        .map(str::to_owned),
        object_ref: info.and_then(ObjectRef::of),
        response_status: None,
        request_object: None,
        response_object: None,
        stage_timestamp: received.clone(),
        request_received_timestamp: received,
        annotations: BTreeMap::new(),
    }
}

/// Writes `event` at `stage`, unless the policy omits it.
fn emit(auditor: &Auditor, omit: &[Stage], event: &mut Event, stage: Stage) {
    if omit.contains(&stage) {
        return;
    }
    event.stage = stage;
    event.stage_timestamp = now();
    auditor.log.write(event);
}

/// `responseStatus`: the code, and a failure's status and reason (from its `Status`).
fn response_status(code: StatusCode, body: Option<&Value>) -> Value {
    let mut status = json!({"metadata": {}, "code": code.as_u16()});
    if let Some(body) = body.filter(|b| b.get("kind").and_then(Value::as_str) == Some("Status")) {
        for field in ["status", "reason"] {
            if let Some(value) = body
                .get(field)
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            {
                status[field] = value.clone();
            }
        }
    }
    status
}

/// Audits a request whose authentication failed: one `ResponseStarted` event with no user
/// and the 401, if the policy selects it.
pub fn unauthenticated(auditor: &Auditor, request: &Request, response: &Response) {
    let info = request.extensions().get::<RequestInfo>();
    let nobody = UserInfo::default();
    let decision = match info {
        Some(info) => auditor.policy.decide(&nobody, info),
        None => Decision::default(),
    };
    if decision.level == Level::None {
        return;
    }
    let mut event = event(request, decision.level, User::default(), info);
    let status = json!({"kind": "Status", "status": "Failure", "reason": "Unauthorized"});
    event.response_status = Some(response_status(response.status(), Some(&status)));
    emit(
        auditor,
        &decision.omit_stages,
        &mut event,
        Stage::ResponseStarted,
    );
}

/// The filter.
pub async fn audit(
    auditor: Option<&Arc<Auditor>>,
    request: Request,
    next: impl super::Next,
) -> Response {
    let Some(auditor) = auditor else {
        return next.run(request).await;
    };
    let (Some(user), Some(info)) = (
        request.extensions().get::<UserInfo>().cloned(),
        request.extensions().get::<RequestInfo>().cloned(),
    ) else {
        return next.run(request).await;
    };
    let decision = auditor.policy.decide(&user, &info);
    if decision.level == Level::None {
        return next.run(request).await;
    }
    // Boxed: the event and what records it would otherwise make every request's future
    // larger, audited or not.
    Box::pin(audited(auditor, decision, &user, &info, request, next)).await
}

/// `request` through the rest of the chain, recorded as `decision` says.
async fn audited(
    auditor: &Arc<Auditor>,
    decision: Decision,
    user: &UserInfo,
    info: &RequestInfo,
    request: Request,
    next: impl super::Next,
) -> Response {
    let omit = decision.omit_stages.clone();
    let strip = |object: Value| {
        if decision.omit_managed_fields {
            without_managed_fields(object)
        } else {
            object
        }
    };
    let long_running = info.verb == "watch";
    let mut event = event(&request, decision.level, User::from(user), Some(info));
    let (mut parts, body) = request.into_parts();
    let body = if decision.level >= Level::Request && !long_running {
        let bytes = match axum::body::to_bytes(body, crate::http::MAX_REQUEST_BODY_BYTES).await {
            Ok(bytes) => bytes,
            Err(_) => {
                return ApiError::RequestEntityTooLarge("limit is 3145728".into()).into_response();
            }
        };
        event.request_object = serde_json::from_slice::<Value>(&bytes).ok().map(strip);
        Body::from(bytes)
    } else {
        body
    };
    emit(auditor, &omit, &mut event, Stage::RequestReceived);
    let notes = AuditNotes::default();
    parts.extensions.insert(notes.clone());
    // What admission says of the write (kube's admission audit annotations).
    let admission = AuditAnnotations::default();
    let mut response = (admission.clone())
        .scope(next.run(Request::from_parts(parts, body)))
        .await;
    {
        let notes = notes.lock();
        event.impersonated_user = notes.impersonated.as_ref().map(User::from);
        event.annotations = notes.annotations.clone();
        event.annotations.extend(admission.taken());
    }
    let code = response.status();
    if long_running && code.is_success() {
        event.response_status = Some(response_status(code, None));
        emit(auditor, &omit, &mut event, Stage::ResponseStarted);
        let (parts, body) = response.into_parts();
        let completion = Completion {
            auditor: Arc::clone(auditor),
            omit,
            event: Some(event),
        };
        return Response::from_parts(parts, Body::new(Completed { body, completion }));
    }
    let needs_body = decision.level == Level::RequestResponse || !code.is_success();
    if needs_body {
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        let object = serde_json::from_slice::<Value>(&bytes).ok();
        event.response_status = Some(response_status(code, object.as_ref()));
        if decision.level == Level::RequestResponse {
            event.response_object = object.map(strip);
        }
        response = Response::from_parts(parts, Body::from(bytes));
    } else {
        event.response_status = Some(response_status(code, None));
    }
    emit(auditor, &omit, &mut event, Stage::ResponseComplete);
    response
}

/// Writes a long-running request's `ResponseComplete` once its body is done (sent, or
/// dropped with the connection).
struct Completion {
    auditor: Arc<Auditor>,
    omit: Vec<Stage>,
    event: Option<Event>,
}

impl Drop for Completion {
    fn drop(&mut self) {
        if let Some(mut event) = self.event.take() {
            emit(
                &self.auditor,
                &self.omit,
                &mut event,
                Stage::ResponseComplete,
            );
        }
    }
}

/// A body that completes its request's audit when it goes.
struct Completed {
    body: Body,
    #[allow(dead_code)] // Held for its `Drop`.
    completion: Completion,
}

impl HttpBody for Completed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
