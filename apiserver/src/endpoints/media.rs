//! Media types: `Accept` negotiation of responses and `Content-Type` decoding of bodies.
//!
//! Bodies are JSON or YAML, or Kubernetes protobuf for a kind with a protobuf descriptor
//! ([`kapi_core::api::protobuf`]): decoded to JSON here, so that the handlers and the registry
//! see JSON only. Responses are JSON, YAML, Tables, or protobuf for such a kind (its
//! objects, lists, watch events and errors, as kube-apiserver answers typed clients that
//! ask for it).

use std::borrow::Cow;
use std::cmp::Ordering;

use axum::http::header::{ACCEPT, CONTENT_TYPE, HeaderValue, USER_AGENT, VARY};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::http::ErrorResponse as _;
use kapi_core::api::protobuf::{self, ProtoMessage};
use kapi_core::error::ApiError;
use kapi_registry::{PatchType, SharedObject, kept};

pub(super) const JSON: &str = "application/json";
pub(super) const YAML: &str = "application/yaml";
pub(super) const PROTOBUF: &str = protobuf::MEDIA_TYPE;
/// A protobuf watch stream's content type.
pub(super) const PROTOBUF_WATCH: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// What kube-apiserver lists in a 406 or 415 for objects.
const SERIALIZERS: &str = "application/json, application/yaml";

/// One media range of an `Accept` header, borrowed from it (lower-cased copies only
/// where the header has capitals: every request parses its `Accept`).
#[derive(Debug, PartialEq)]
pub(super) struct MediaRange<'a> {
    /// Lower-case type: `application`, `*`.
    pub type_: Cow<'a, str>,
    /// Lower-case subtype: `json`, `*`.
    pub subtype: Cow<'a, str>,
    /// Parameters other than `q`, keys lower-case, values unquoted.
    pub params: Vec<(Cow<'a, str>, &'a str)>,
    q: f32,
}

/// `text` in lower case, copied only when it has capitals.
fn lower(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

impl MediaRange<'_> {
    /// The value of parameter `key`.
    pub(super) fn param(&self, key: &str) -> Option<&str> {
        (self.params.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }

    /// Matches `type_/subtype`, wildcards included.
    pub(super) fn matches(&self, type_: &str, subtype: &str) -> bool {
        (self.type_ == "*" || self.type_ == type_)
            && (self.subtype == "*" || self.subtype == subtype)
    }
}

/// The media ranges of the request's `Accept` headers, most preferred first (by `q`, then
/// in the order given), without those with `q=0`. Empty when there is no `Accept`.
pub(super) fn accept(headers: &HeaderMap) -> Vec<MediaRange<'_>> {
    let mut ranges: Vec<_> = (headers.get_all(ACCEPT).iter())
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(parse_range)
        .filter(|range| range.q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.q.partial_cmp(&a.q).unwrap_or(Ordering::Equal));
    ranges
}

/// The request states what it accepts (a missing or blank `Accept` accepts anything).
pub(super) fn has_accept(headers: &HeaderMap) -> bool {
    (headers.get_all(ACCEPT).iter()).any(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace))
}

fn parse_range(text: &str) -> Option<MediaRange<'_>> {
    let mut parts = text.split(';');
    let essence = parts.next()?.trim();
    let (type_, subtype) = essence.split_once('/')?;
    let (type_, subtype) = (type_.trim(), subtype.trim());
    if type_.is_empty() || subtype.is_empty() {
        return None;
    }
    let mut range = MediaRange {
        type_: lower(type_),
        subtype: lower(subtype),
        params: Vec::new(),
        q: 1.0,
    };
    for param in parts {
        let Some((key, value)) = param.split_once('=') else {
            continue;
        };
        let key = lower(key.trim());
        let value = value.trim().trim_matches('"');
        if key == "q" {
            range.q = value.parse().unwrap_or(1.0);
        } else {
            range.params.push((key, value));
        }
    }
    Some(range)
}

/// The `meta.k8s.io` version of a Table response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TableVersion {
    V1,
    V1beta1,
}

impl TableVersion {
    pub(super) fn api_version(self) -> &'static str {
        match self {
            TableVersion::V1 => "meta.k8s.io/v1",
            TableVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }
}

/// How to render the response object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Yaml,
    /// A `meta.k8s.io` Table of the object(s) (kubectl's human output).
    Table(TableVersion),
    /// Kubernetes protobuf, the kind's objects written as this message.
    Protobuf(&'static ProtoMessage),
}

/// The negotiated response format, and whether to indent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Output {
    pub format: Format,
    pub pretty: bool,
}

/// Chooses the response format of a resource request from `Accept`; `tables` when the
/// handler can answer with a Table (reads), `protobuf` when its objects have a protobuf
/// form. 406 when nothing acceptable is left.
pub(super) fn negotiate(
    headers: &HeaderMap,
    pretty: Option<bool>,
    tables: bool,
    protobuf: Option<&'static ProtoMessage>,
) -> Result<Output, ApiError> {
    let user_agent_pretty = || {
        let agent = headers.get(USER_AGENT).and_then(|v| v.to_str().ok());
        // kube-apiserver indents for browsers and command-line HTTP tools.
        agent.is_some_and(|a| {
            a.starts_with("curl") || a.starts_with("Wget") || a.starts_with("Mozilla/5.0")
        })
    };
    if !has_accept(headers) {
        return Ok(Output {
            format: Format::Json,
            pretty: pretty.unwrap_or_else(user_agent_pretty),
        });
    }
    for range in &accept(headers) {
        let Some(format) = format_of(range, tables, protobuf) else {
            continue;
        };
        let param_pretty = range
            .param("pretty")
            .and_then(kapi_core::strconv::parse_bool);
        let pretty = pretty.or(param_pretty).unwrap_or_else(user_agent_pretty);
        return Ok(Output { format, pretty });
    }
    Err(ApiError::NotAcceptable(match protobuf {
        Some(_) => format!("{SERIALIZERS}, {PROTOBUF}"),
        None => SERIALIZERS.into(),
    }))
}

/// Whether the request's most preferred acceptable media type is protobuf (for a kind
/// that has a protobuf form).
pub(super) fn prefers_protobuf(headers: &HeaderMap) -> bool {
    // Most requests name no protobuf at all: they are answered without parsing `Accept`
    // (every request asks this, for the form its errors would take).
    let names_protobuf = (headers.get_all(ACCEPT).iter()).any(|value| {
        (value.as_bytes().windows(b"protobuf".len()))
            .any(|window| window.eq_ignore_ascii_case(b"protobuf"))
    });
    if !names_protobuf {
        return false;
    }
    let stand_in = Some(&kapi_core::meta::STATUS_PROTO);
    (accept(headers).iter())
        .find(|range| format_of(range, false, stand_in).is_some())
        .is_some_and(|range| matches!(format_of(range, false, stand_in), Some(Format::Protobuf(_))))
}

fn format_of(
    range: &MediaRange<'_>,
    tables: bool,
    protobuf: Option<&'static ProtoMessage>,
) -> Option<Format> {
    let json = range.matches("application", "json");
    let yaml = range.type_ == "application" && range.subtype == "yaml";
    let proto = range.type_ == "application" && range.subtype == "vnd.kubernetes.protobuf";
    match range.param("as") {
        None if json => Some(Format::Json),
        None if yaml => Some(Format::Yaml),
        None if proto => protobuf.map(Format::Protobuf),
        Some("Table") if json && tables && range.param("g") == Some("meta.k8s.io") => {
            match range.param("v") {
                Some("v1") => Some(Format::Table(TableVersion::V1)),
                Some("v1beta1") => Some(Format::Table(TableVersion::V1beta1)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A serialized response: 200 unless changed, with its content type.
pub(super) fn respond<T: Serialize>(status: StatusCode, value: &T, output: Output) -> Response {
    let encoded = match output.format {
        Format::Yaml => serde_yaml_ng::to_string(value)
            .map(String::into_bytes)
            .map_err(|e| e.to_string()),
        Format::Protobuf(message) => serde_json::to_value(value)
            .map_err(|e| e.to_string())
            .and_then(|value| protobuf_body(message, &value).map_err(|e| e.to_string())),
        Format::Json | Format::Table(_) => {
            let encoded = if output.pretty {
                serde_json::to_vec_pretty(value)
            } else {
                serde_json::to_vec(value)
            };
            encoded
                .map(|mut body| {
                    body.push(b'\n');
                    body
                })
                .map_err(|e| e.to_string())
        }
    };
    let body = match encoded {
        Ok(body) => body,
        Err(e) => return ApiError::Internal(format!("encoding the response: {e}")).into_response(),
    };
    let content_type = match output.format {
        Format::Yaml => YAML,
        Format::Json | Format::Table(_) => JSON,
        Format::Protobuf(_) => PROTOBUF,
    };
    typed(status, body, content_type)
}

/// Whether `output` is compact JSON: what an object's compact JSON answers as it is.
pub(super) fn is_plain_json(output: Output) -> bool {
    output.format == Format::Json && !output.pretty
}

/// An object's compact JSON as the answer, for an `output` that [`is_plain_json`].
pub(super) fn respond_json(status: StatusCode, json: &[u8]) -> Response {
    let mut body = Vec::with_capacity(json.len() + 1);
    body.extend_from_slice(json);
    body.push(b'\n');
    typed(status, body, JSON)
}

/// The protobuf body of a response value: a `Status` (a delete's, say) as a `Status`, a
/// list (`items`) as the kind's list of `message`s, else an object of `message`.
pub(super) fn protobuf_body(
    message: &'static ProtoMessage,
    value: &Value,
) -> Result<Vec<u8>, protobuf::ProtoError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
    if text("kind") == "Status" && text("apiVersion") == "v1" {
        return protobuf::encode::object(&kapi_core::meta::STATUS_PROTO, value);
    }
    if let Some(items) = value.get("items").and_then(Value::as_array) {
        let items = (items.iter())
            .map(|item| protobuf::encode::message(message, item))
            .collect::<Result<Vec<_>, _>>()?;
        let metadata = value.get("metadata").cloned().unwrap_or_default();
        let items = items.iter().map(Vec::as_slice);
        return protobuf::encode::list(text("apiVersion"), text("kind"), &metadata, items);
    }
    protobuf::encode::object(message, value)
}

/// A response of protobuf `body` (made by a fast path that writes what [`respond`]
/// would).
pub(super) fn respond_protobuf(status: StatusCode, body: Vec<u8>) -> Response {
    typed(status, body, PROTOBUF)
}

/// `body` with its content type, varying by `Accept`.
fn typed(status: StatusCode, body: Vec<u8>, content_type: &'static str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(VARY, HeaderValue::from_static("Accept"));
    response
}

/// The protobuf message of a shared object (no envelope), made the first time it is asked
/// for and shared by every response and watch event that sends the object afterwards.
pub(super) fn shared_message(
    object: &SharedObject,
    message: &'static ProtoMessage,
) -> Result<Bytes, ApiError> {
    object.try_encoded_as("protobuf", || {
        (protobuf::encode::message(message, &object.value()))
            .map(kept)
            .map_err(|e| ApiError::Internal(format!("encoding the response as protobuf: {e}")))
    })
}

/// A shared object (of `api_version` and `kind`) as a 200 response: its bytes as they are
/// for compact JSON (what [`respond`] would write, with no decoding or encoding), its
/// shared message in an envelope for protobuf, else [`respond`]'s.
pub(super) fn respond_shared(
    object: &SharedObject,
    (api_version, kind): (&str, &str),
    output: Output,
) -> Response {
    if let Format::Protobuf(message) = output.format {
        return match shared_message(object, message) {
            Ok(raw) => respond_protobuf(
                StatusCode::OK,
                protobuf::encode::envelope(api_version, kind, &raw),
            ),
            Err(error) => error.into_response(),
        };
    }
    if output.format != Format::Json || output.pretty {
        return respond(StatusCode::OK, &object.value(), output);
    }
    let mut body = Vec::with_capacity(object.len() + 1);
    for part in object.parts() {
        body.extend_from_slice(part);
    }
    body.push(b'\n');
    typed(StatusCode::OK, body, JSON)
}

/// The essence of the request's `Content-Type` (`application/json`), lower-case, or `None`.
fn content_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next().unwrap_or("").trim();
    (!essence.is_empty()).then(|| essence.to_ascii_lowercase())
}

/// Decodes an object body by its `Content-Type`: JSON (also when missing or `*/*`), YAML,
/// or Kubernetes protobuf when `message` is the body's protobuf shape; 415 for the others.
/// Returns the paths of the fields a JSON body repeats beside it.
pub(super) fn decode_object(
    headers: &HeaderMap,
    body: &[u8],
    message: Option<&ProtoMessage>,
) -> Result<(Value, Vec<String>), ApiError> {
    match (content_type(headers).as_deref(), message) {
        (None | Some("*/*") | Some(JSON), _) => decode_json(body),
        (Some(YAML), _) => decode_yaml(body).map(|value| (value, Vec::new())),
        (Some(PROTOBUF), Some(message)) => {
            decode_protobuf(message, body).map(|value| (value, Vec::new()))
        }
        (Some(_), None) => Err(ApiError::UnsupportedMediaType(SERIALIZERS.into())),
        (Some(_), Some(_)) => Err(ApiError::UnsupportedMediaType(format!(
            "{SERIALIZERS}, {PROTOBUF}"
        ))),
    }
}

/// The patch format named by the request's `Content-Type`; 415 for any other.
pub(super) fn patch_type(headers: &HeaderMap) -> Result<PatchType, ApiError> {
    let content_type = content_type(headers).unwrap_or_default();
    (PatchType::ALL.into_iter())
        .find(|patch_type| patch_type.media_type() == content_type)
        .ok_or_else(|| {
            let names: Vec<_> = PatchType::ALL.iter().map(|t| t.media_type()).collect();
            ApiError::UnsupportedMediaType(names.join(", "))
        })
}

/// Decodes a patch body: YAML (or JSON) for apply, JSON for the others. Returns the paths
/// of the fields a merge patch repeats beside it (a JSON patch's operations are not
/// fields of the object).
pub(super) fn decode_patch(
    patch_type: PatchType,
    body: &[u8],
) -> Result<(Value, Vec<String>), ApiError> {
    match patch_type {
        PatchType::Apply => decode_yaml(body).map(|value| (value, Vec::new())),
        PatchType::Json => decode_json(body).map(|(value, _)| (value, Vec::new())),
        PatchType::Merge | PatchType::StrategicMerge => decode_json(body),
    }
}

fn decode_json(body: &[u8]) -> Result<(Value, Vec<String>), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::BadRequest("the request body is empty".into()));
    }
    super::json::decode(body)
        .map_err(|e| ApiError::BadRequest(format!("error decoding the request body as JSON: {e}")))
}

/// A `k8s\0` envelope and the object's message, as the JSON the object would have been.
fn decode_protobuf(message: &ProtoMessage, body: &[u8]) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Err(ApiError::BadRequest("the request body is empty".into()));
    }
    protobuf::decode_body(message, body).map_err(|e| {
        ApiError::BadRequest(format!("error decoding the request body as protobuf: {e}"))
    })
}

fn decode_yaml(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::BadRequest("the request body is empty".into()));
    }
    serde_yaml_ng::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("error converting YAML to JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(accept: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_str(accept).unwrap());
        headers
    }

    #[test]
    fn errors_are_protobuf_for_clients_that_prefer_it() {
        let prefers = |accept: &str| prefers_protobuf(&headers(accept));
        assert!(!prefers("application/json"));
        assert!(!prefers("*/*"));
        assert!(prefers(
            "application/vnd.kubernetes.protobuf, application/json"
        ));
        assert!(prefers("Application/VND.Kubernetes.Protobuf"));
        assert!(!prefers(
            "application/json, application/vnd.kubernetes.protobuf;q=0.5"
        ));
        assert!(!prefers("application/vnd.kubernetes.protobuf;q=0"));
        assert!(!prefers_protobuf(&HeaderMap::new()));
    }

    #[track_caller]
    fn check(accept: &str, tables: bool, expected: Option<Format>) {
        let actual = negotiate(&headers(accept), None, tables, None)
            .ok()
            .map(|o| o.format);
        assert_eq!(actual, expected, "{accept}");
    }

    #[test]
    fn negotiation_follows_preference_and_capability() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        check(kubectl, true, Some(Format::Table(TableVersion::V1)));
        check(kubectl, false, Some(Format::Json));
        check(
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            true,
            Some(Format::Table(TableVersion::V1beta1)),
        );
        check("application/json;as=Table;v=v1;g=meta.k8s.io", false, None);
        check("application/yaml", true, Some(Format::Yaml));
        check("*/*", true, Some(Format::Json));
        check("application/*", true, Some(Format::Json));
        check(
            "text/html, application/yaml;q=0.9, application/json;q=0.5",
            true,
            Some(Format::Yaml),
        );
        check(
            "application/json;q=0.1, application/yaml",
            true,
            Some(Format::Yaml),
        );
        check("application/vnd.kubernetes.protobuf", true, None);
        check(
            "application/vnd.kubernetes.protobuf, application/json",
            true,
            Some(Format::Json),
        );
        check(
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            true,
            None,
        );
        check("application/json;q=0", true, None);
    }
}
