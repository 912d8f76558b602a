//! Request metrics (kube's `InstrumentRouteFunc`): `apiserver_request_total`,
//! `apiserver_request_duration_seconds`, `apiserver_response_sizes`,
//! `apiserver_longrunning_requests` and `apiserver_request_terminations_total`, for the
//! requests [`Served`] labels (served resources and health checks; nothing else, so the
//! label sets stay bounded).
//!
//! A response is recorded when its body ends (or is dropped, when the client goes away), so
//! a list's duration covers writing it and a watch's its whole life, as kube's do. Unlike
//! kube, requests refused by authentication or authorization (401, 403) are counted too:
//! this filter sits outside them, where it sees every answer the client got, the 429s of
//! the max-in-flight filter and the 504s of the deadline included.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use http_body::{Frame, SizeHint};

use super::RequestInfo;
use super::Served;
use kapi_metrics::{RequestLabels, global};

/// Put on a response by a filter that refused the request in self-defense (429 over the
/// in-flight limit, 504 past the deadline): counted in `apiserver_request_terminations_total`.
#[derive(Clone, Copy, Debug)]
pub struct Terminated;

/// The filter.
pub async fn instrument(served: &Served, request: Request, next: impl super::Next) -> Response {
    let labels = request.extensions().get::<RequestInfo>().and_then(|info| {
        let content_type = (request.headers().get(CONTENT_TYPE)).and_then(|v| v.to_str().ok());
        served.labels(info, request.method(), content_type, request.uri().query())
    });
    let Some(labels) = labels else {
        return next.run(request).await;
    };
    let started = Instant::now();
    let longrunning = labels.route.verb == "WATCH";
    if longrunning {
        global().longrunning.with_or_new(&labels.route, |g| g.inc());
    }
    let response = next.run(request).await;
    let record = Record {
        code: response.status().as_u16(),
        terminated: response.extensions().get::<Terminated>().is_some(),
        labels,
        started,
        longrunning,
        bytes: 0,
    };
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        Body::new(Measured {
            body,
            record: Some(record),
        }),
    )
}

/// What is recorded once the response ends.
struct Record {
    labels: RequestLabels,
    code: u16,
    terminated: bool,
    started: Instant,
    longrunning: bool,
    bytes: u64,
}

impl Record {
    fn finish(self) {
        let metrics = global();
        let labels = &self.labels;
        metrics
            .requests
            .with_or_new(&labels.with_code(self.code), |c| c.inc());
        metrics
            .request_duration
            .with_or_new(labels, |h| h.observe(self.started.elapsed().as_secs_f64()));
        // kube observes sizes of reads only (a watch is not one).
        if matches!(labels.route.verb, "GET" | "LIST") {
            (metrics.response_sizes).with_or_new(&labels.route, |h| h.observe(self.bytes as f64));
        }
        if self.terminated {
            (metrics.terminations).with_or_new(&labels.with_code(self.code), |c| c.inc());
        }
        if self.longrunning {
            metrics.longrunning.with_or_new(&labels.route, |g| g.dec());
        }
    }
}

/// The response body, counting its bytes and recording the request when it ends.
struct Measured {
    body: Body,
    record: Option<Record>,
}

impl http_body::Body for Measured {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(record)) = (frame.data_ref(), self.record.as_mut()) {
                    record.bytes += data.len() as u64;
                }
                if self.body.is_end_stream() {
                    self.finish();
                }
            }
            Poll::Ready(_) => self.finish(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Measured {
    /// Records the request, once.
    fn finish(&mut self) {
        if let Some(record) = self.record.take() {
            record.finish();
        }
    }
}

impl Drop for Measured {
    fn drop(&mut self) {
        self.finish();
    }
}
