//! Watch responses: `?watch=true` on a collection and the legacy `/watch/...` paths.
//!
//! HTTP 200, `Content-Type: application/json`, then one `{"type": ..., "object": ...}` JSON
//! document per line, each sent as soon as it is ready (one chunk per event); or, for a
//! kind with a protobuf form and a client asking for it, kube's protobuf stream
//! (`;stream=watch`: length-prefixed `WatchEvent`s whose objects are shared messages). Under a Table
//! `Accept` each object is a one-row `Table`, with the column definitions in the first event
//! only; bookmarks are row-less Tables carrying the revision, errors stay `Status`es. The
//! stream ends at `timeoutSeconds` (default: kube's `--min-request-timeout` of 30 minutes
//! with up to as much jitter); a client going away drops it, which unregisters it from the
//! watch cache. Each event's object is the registry's shared encoding, framed per watcher.
//! Invalid options fail before the stream starts, as ordinary `Status` responses.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_TYPE, HeaderValue};
use axum::response::Response;
use http_body::Frame;
use serde_json::Value;

use kapi_metrics::Counter;
use kapi_metrics::Gauge;
use kapi_metrics::Histogram;

use super::media::{Format, Output, TableVersion};
use kapi_core::api::protobuf::{ProtoMessage, encode};
use kapi_core::error::ApiError;
use kapi_core::meta::{ListMeta, STATUS_PROTO};
use kapi_metrics::{KindLabels, global};
use kapi_registry::{EventStream, Registry, Target, WatchEvent, WatchEventType, WatchOptions};

/// kube-apiserver's `--min-request-timeout`: watches without `timeoutSeconds` last between
/// this and twice this.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

/// Serves a watch of `target` as a stream of JSON lines.
pub(super) async fn serve(
    registry: Arc<Registry>,
    target: Target<'_>,
    mut options: WatchOptions,
    output: Output,
    include_object: &str,
) -> Result<Response, ApiError> {
    if options.timeout.is_none() {
        options.timeout = Some(default_timeout());
    }
    let events = registry.watch(target, &options).await?;
    let kind = (registry.scheme().current(target.kind))
        .ok_or_else(|| ApiError::Internal("the watched kind is not registered".into()))?;
    let version = target.version.to_owned();
    let include_object = include_object.to_owned();
    let table = match output.format {
        Format::Table(table) => Some(table),
        Format::Json | Format::Yaml | Format::Protobuf(_) => None,
    };
    let protobuf = match output.format {
        Format::Protobuf(message) => Some(message),
        _ => None,
    };
    let type_meta = (kind.api_version(target.version), kind.info.kind);
    let mut first = true;
    let sent = Sent::new(target);
    let lines = move |event: WatchEvent| {
        if let Some(message) = protobuf {
            return sent.count(protobuf_frame(event, message, &type_meta));
        }
        let Some(table_version) = table else {
            return sent.count(frame(event.type_, &event.object.parts()));
        };
        let target = Target {
            kind: &kind,
            version: &version,
            namespace: None,
        };
        let row = matches!(
            event.type_,
            WatchEventType::Added | WatchEventType::Modified | WatchEventType::Deleted
        );
        // Row-only Tables (every row event but a watch's first) are shared by every
        // watcher of the change in this version, Table version and `includeObject`.
        let key = format!("{}:{include_object}", table_version.api_version());
        let shared = (row && !first).then(|| {
            (event.object).encoded_as(&key, || {
                let table = as_table(
                    &registry,
                    target,
                    event.clone(),
                    table_version,
                    &include_object,
                    false,
                );
                (table.type_ == event.type_).then(|| table.object.json())
            })
        });
        let line = match shared.flatten() {
            Some(bytes) => frame(event.type_, &[&bytes]),
            None => {
                let table = as_table(
                    &registry,
                    target,
                    event,
                    table_version,
                    &include_object,
                    first,
                );
                frame(table.type_, &table.object.parts())
            }
        };
        if row {
            first = false;
        }
        sent.count(line)
    };
    let mut response = Response::new(Body::new(Lines {
        events,
        frame: lines,
    }));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    let content_type = match protobuf {
        Some(_) => super::media::PROTOBUF_WATCH,
        None => super::media::JSON,
    };
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        axum::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(response)
}

/// The response body: each event framed as it comes. A body of its own rather than a
/// mapped stream, so that the connection's poll for the next event reaches the watch in
/// one call (it is made once per change by every watcher).
struct Lines<F> {
    events: EventStream,
    frame: F,
}

impl<F: FnMut(WatchEvent) -> Bytes + Unpin> http_body::Body for Lines<F> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let lines = self.get_mut();
        (lines.events.as_mut().poll_next(cx))
            .map(|event| event.map(|event| Ok(Frame::data((lines.frame)(event)))))
    }
}

/// A watcher's metrics: it is one of `apiserver_registered_watchers` while its stream
/// lives, and each event it sends counts in `apiserver_watch_events_total` and
/// `apiserver_watch_events_sizes` (of the kind and version it watches).
struct Sent {
    registered: Gauge,
    events: Counter,
    sizes: Histogram,
}

impl Sent {
    fn new(target: Target<'_>) -> Sent {
        let metrics = global();
        let labels = KindLabels {
            group: target.kind.info.group.to_owned(),
            version: target.version.to_owned(),
            kind: target.kind.info.kind.to_owned(),
        };
        let registered = metrics
            .registered_watchers
            .with_or_new(&labels, Gauge::clone);
        registered.inc();
        Sent {
            registered,
            events: metrics.watch_events.with_or_new(&labels, Counter::clone),
            sizes: metrics
                .watch_event_sizes
                .with_or_new(&labels, Histogram::clone),
        }
    }

    fn count(&self, line: Bytes) -> Bytes {
        self.events.inc();
        self.sizes.observe(line.len() as f64);
        line
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        self.registered.dec();
    }
}

/// One line of the stream: `{"type":"...","object":...}` and a newline, the object given in
/// pieces ([`SharedObject::parts`](kapi_registry::SharedObject::parts)). The object's
/// encoding is the one the registry shares between every watcher of the change in that
/// version; only the frame is written per watcher.
fn frame(type_: WatchEventType, object: &[&[u8]]) -> Bytes {
    const OPEN: &[u8] = b"{\"type\":\"";
    const OBJECT: &[u8] = b"\",\"object\":";
    const CLOSE: &[u8] = b"}\n";
    let type_ = type_name(type_);
    let length: usize = object.iter().map(|part| part.len()).sum();
    // Exactly the line's length: `Bytes` takes a full vector as it is, where spare
    // capacity would cost every watcher one more allocation per event.
    let mut line =
        Vec::with_capacity(OPEN.len() + type_.len() + OBJECT.len() + length + CLOSE.len());
    line.extend_from_slice(OPEN);
    line.extend_from_slice(type_.as_bytes());
    line.extend_from_slice(OBJECT);
    for part in object {
        line.extend_from_slice(part);
    }
    line.extend_from_slice(CLOSE);
    debug_assert_eq!(line.len(), line.capacity());
    Bytes::from(line)
}

/// One frame of a protobuf watch stream. A change's object is its shared message (made
/// once for every watcher) in an envelope; a bookmark is encoded as it is, an error as a
/// `Status`.
fn protobuf_frame(
    event: WatchEvent,
    message: &'static ProtoMessage,
    (api_version, kind): &(String, &str),
) -> Bytes {
    let enveloped = match event.type_ {
        WatchEventType::Added | WatchEventType::Modified | WatchEventType::Deleted => {
            match super::media::shared_message(&event.object, message) {
                // The envelope is written straight into the frame.
                Ok(raw) => {
                    let type_ = type_name(event.type_);
                    let frame = encode::enveloped_watch_event(type_, api_version, kind, &raw);
                    return Bytes::from(frame);
                }
                Err(error) => Err(error),
            }
        }
        WatchEventType::Bookmark => encode::object(message, &event.object.value())
            .map_err(|e| ApiError::Internal(format!("encoding a bookmark: {e}"))),
        WatchEventType::Error => encode::object(&STATUS_PROTO, &event.object.value())
            .map_err(|e| ApiError::Internal(format!("encoding an error: {e}"))),
    };
    let (type_, enveloped) = match enveloped {
        Ok(enveloped) => (event.type_, enveloped),
        Err(error) => {
            let status = serde_json::to_value(error.to_status()).unwrap_or_default();
            let enveloped = encode::object(&STATUS_PROTO, &status).unwrap_or_default();
            (WatchEventType::Error, enveloped)
        }
    };
    Bytes::from(encode::watch_event(type_name(type_), &enveloped))
}

fn type_name(type_: WatchEventType) -> &'static str {
    match type_ {
        WatchEventType::Added => "ADDED",
        WatchEventType::Modified => "MODIFIED",
        WatchEventType::Deleted => "DELETED",
        WatchEventType::Bookmark => "BOOKMARK",
        WatchEventType::Error => "ERROR",
    }
}

/// 30 to 60 minutes, as kube-apiserver spreads watch ends over time.
fn default_timeout() -> Duration {
    let jitter = uuid::Uuid::new_v4().as_u128() % u128::from(MIN_REQUEST_TIMEOUT.as_secs());
    MIN_REQUEST_TIMEOUT + Duration::from_secs(u64::try_from(jitter).unwrap_or(0))
}

/// An event whose object is a one-row Table (or, for a bookmark, a row-less one).
fn as_table(
    registry: &Registry,
    target: Target<'_>,
    event: WatchEvent,
    version: TableVersion,
    include_object: &str,
    first: bool,
) -> WatchEvent {
    if event.type_ == WatchEventType::Error {
        return event;
    }
    let object = event.object.value();
    let resource_version = (object.pointer("/metadata/resourceVersion"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let table = match event.type_ {
        WatchEventType::Bookmark => Ok(kapi_core::meta::Table::default()),
        _ => registry.table(target, std::slice::from_ref(&object), None, include_object),
    };
    let mut table = match table {
        Ok(table) => table,
        Err(error) => {
            return WatchEvent {
                type_: WatchEventType::Error,
                object: serde_json::to_value(error.to_status())
                    .unwrap_or_default()
                    .into(),
            };
        }
    };
    table.kind = Some("Table".into());
    table.api_version = Some(version.api_version().into());
    table.metadata = ListMeta {
        resource_version,
        ..ListMeta::default()
    };
    if !first || event.type_ == WatchEventType::Bookmark {
        table.column_definitions.clear();
    }
    match serde_json::to_value(&table) {
        Ok(object) => WatchEvent {
            type_: event.type_,
            object: object.into(),
        },
        Err(e) => WatchEvent {
            type_: WatchEventType::Error,
            object: serde_json::to_value(
                ApiError::Internal(format!("encoding a Table: {e}")).to_status(),
            )
            .unwrap_or_default()
            .into(),
        },
    }
}
