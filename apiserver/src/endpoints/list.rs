//! List responses: `{apiVersion, kind: <Kind>List, metadata, items}` in the request's
//! version.
//!
//! Compact JSON (what clients ask for) is written from the items' shared encodings
//! ([`SharedObject::json`]): the list's head, then each item's bytes, copied into chunks of
//! [`CHUNK`](kapi_core::chunks::CHUNK) bytes as the body is sent, with a `Content-Length`. No item is decoded or
//! encoded again, and no tree or string of the whole list is built. The bytes are exactly
//! what `serde_json::to_vec` writes for the same list of values (the slow path, which
//! pretty JSON and YAML still take), as a unit test and the server's list tests check.
//!
//! Protobuf (for a kind that has a protobuf form) is written the same way from each item's
//! shared message ([`media::shared_message`], made once per object and version), each
//! copied once into the chunks: the same bytes as encoding the whole list (a unit test
//! checks it).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::StatusCode;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, VARY};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use serde::Serialize;

use super::media::{self, Format, Output};
use crate::http::ErrorResponse as _;
use kapi_core::api::protobuf::{ProtoMessage, encode};
use kapi_core::chunks::{Chunks, ItemWriter};
use kapi_core::error::ApiError;
use kapi_core::meta::ListMeta;
use kapi_registry::{ObjectList, SharedObject, Target};

/// A list as the slow path serializes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct List<'a> {
    api_version: String,
    kind: String,
    metadata: ListMeta,
    items: &'a [SharedObject],
}

/// The list metadata of `list`.
pub(super) fn list_meta(list: &ObjectList) -> ListMeta {
    ListMeta {
        resource_version: Some(list.resource_version.clone()),
        continue_: list.continue_token.clone().filter(|t| !t.is_empty()),
        remaining_item_count: list.remaining_item_count,
        self_link: None,
    }
}

/// The response for `list` in `target`'s version.
pub(super) fn render(target: Target<'_>, list: ObjectList, output: Output) -> Response {
    let body = List {
        api_version: target.kind.api_version(target.version),
        kind: format!("{}List", target.kind.info.kind),
        metadata: list_meta(&list),
        items: &[],
    };
    if let Format::Protobuf(message) = output.format {
        return match protobuf(&body, list.items, message) {
            Ok((length, chunks)) => streamed(Some(length), chunks, media::PROTOBUF),
            Err(error) => error.into_response(),
        };
    }
    if output.format != Format::Json || output.pretty {
        let body = List {
            items: &list.items,
            ..body
        };
        return media::respond(StatusCode::OK, &body, output);
    }
    let (length, chunks) = compact(&body, list.items);
    streamed(Some(length), chunks, media::JSON)
}

/// A 200 response sent as `chunks` (of `length` bytes in all, when known beforehand; else
/// chunked). An error among the chunks cuts the body short, as kube's encoder does when
/// it fails while writing: the client sees an incomplete response, never a wrong one.
pub(super) fn streamed<E>(
    length: Option<usize>,
    chunks: impl Iterator<Item = Result<Bytes, E>> + Send + 'static,
    content_type: &'static str,
) -> Response
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(VARY, HeaderValue::from_static("Accept"));
    if let Some(length) = length {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    }
    response
}

/// The compact JSON of `head` (a list without items) with `items`: its length, and its
/// bytes as chunks.
fn compact(head: &List<'_>, items: Vec<SharedObject>) -> (usize, Chunks<Items>) {
    // `{...,"items":[]}`: everything before `]}` opens the body.
    let mut open = serde_json::to_vec(head).unwrap_or_default();
    open.truncate(open.len().saturating_sub(2));
    let separators = items.len().saturating_sub(1);
    let length = open.len() + items.iter().map(SharedObject::len).sum::<usize>() + separators + 3;
    let items = Items::Json(items.into_iter(), true);
    (length, Chunks::new(&open, items))
}

/// The protobuf of `head` (a list without items) with `items`, each item's shared message
/// ([`media::shared_message`]) as it is: its length, and its bytes as chunks.
fn protobuf(
    head: &List<'_>,
    items: Vec<SharedObject>,
    message: &'static ProtoMessage,
) -> Result<(usize, Chunks<Items>), ApiError> {
    let messages = (items.iter())
        .map(|item| media::shared_message(item, message))
        .collect::<Result<Vec<Bytes>, ApiError>>()?;
    let metadata = serde_json::to_value(&head.metadata).unwrap_or_default();
    let parts = encode::ListParts::new(
        &head.api_version,
        &head.kind,
        &metadata,
        messages.iter().map(Bytes::len),
    )
    .map_err(|e| ApiError::Internal(format!("encoding the list as protobuf: {e}")))?;
    let items = Items::Protobuf(messages.into_iter());
    Ok((parts.length, Chunks::new(&parts.head, items)))
}

/// The items a list's body is written from (JSON: separated by commas, then `]}` and a
/// newline; protobuf: each as field 2 of the list, then the envelope's tail).
enum Items {
    /// The items, and whether the next is the first.
    Json(std::vec::IntoIter<SharedObject>, bool),
    Protobuf(std::vec::IntoIter<Bytes>),
}

impl ItemWriter for Items {
    type Error = Infallible;

    fn write_next(&mut self, buffer: &mut BytesMut) -> Result<bool, Infallible> {
        match self {
            Items::Json(items, first) => {
                let Some(item) = items.next() else {
                    buffer.extend_from_slice(b"]}\n");
                    return Ok(false);
                };
                if !std::mem::take(first) {
                    buffer.extend_from_slice(b",");
                }
                for part in item.parts() {
                    buffer.extend_from_slice(part);
                }
            }
            Items::Protobuf(items) => {
                let Some(item) = items.next() else {
                    buffer.extend_from_slice(encode::ENVELOPE_TAIL);
                    return Ok(false);
                };
                buffer.extend_from_slice(&encode::field_head(2, item.len()));
                buffer.extend_from_slice(&item);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use kapi_core::chunks::CHUNK;

    fn head() -> List<'static> {
        List {
            api_version: "v1".into(),
            kind: "ConfigMapList".into(),
            metadata: ListMeta {
                resource_version: Some("7".into()),
                continue_: Some("token".into()),
                remaining_item_count: Some(3),
                self_link: None,
            },
            items: &[],
        }
    }

    /// The fast path's bytes are the slow path's, for no items, one, and enough to span
    /// several chunks.
    #[test]
    fn chunks_are_what_serde_writes() {
        for count in [0, 1, 2, 500] {
            let items: Vec<SharedObject> = (0..count)
                .map(|i| {
                    SharedObject::from(json!({
                        "metadata": {"name": format!("c{i}"), "labels": {"a": "é\"\\"}},
                        "data": {"v": "x".repeat(i % 300)},
                    }))
                })
                .collect();
            let mut slow = serde_json::to_vec(&List {
                items: &items,
                ..head()
            })
            .unwrap();
            slow.push(b'\n');
            let (length, chunks) = compact(&head(), items);
            let chunks: Vec<Bytes> = chunks.map(Result::unwrap).collect();
            assert!(
                chunks.iter().all(|c| c.len() < CHUNK + 1024),
                "chunks are bounded"
            );
            let fast: Vec<u8> = chunks.concat();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                String::from_utf8(slow.clone()).unwrap()
            );
            assert_eq!(length, slow.len(), "{count} items");
        }
    }

    /// A ConfigMap-like message, for the protobuf path.
    static ITEM: ProtoMessage = ProtoMessage {
        name: "test.Item",
        fields: &[
            kapi_core::api::protobuf::ProtoField::new(
                1,
                "metadata",
                kapi_core::api::protobuf::ProtoKind::Message(&kapi_core::meta::OBJECT_META_PROTO),
            ),
            kapi_core::api::protobuf::ProtoField::map(
                2,
                "data",
                &kapi_core::api::protobuf::ProtoKind::String,
                &kapi_core::api::protobuf::ProtoKind::String,
            ),
        ],
    };

    #[test]
    fn protobuf_lists_are_what_the_slow_path_writes() {
        for count in [0, 1, 3, 2000] {
            let items: Vec<SharedObject> = (0..count)
                .map(|i| {
                    SharedObject::from(json!({
                        "metadata": {"name": format!("c{i}"), "labels": {"a": "b"}},
                        "data": {"v": "x".repeat(i % 300)},
                    }))
                })
                .collect();
            let values: Vec<serde_json::Value> = items.iter().map(SharedObject::value).collect();
            let slow_list = json!({"apiVersion": "v1", "kind": "ConfigMapList",
                "metadata": {"resourceVersion": "7", "continue": "token", "remainingItemCount": 3},
                "items": values});
            let slow = media::protobuf_body(&ITEM, &slow_list).unwrap();
            let (length, chunks) = protobuf(&head(), items, &ITEM).unwrap();
            let chunks: Vec<Bytes> = chunks.map(Result::unwrap).collect();
            assert!(
                chunks.iter().all(|c| c.len() < CHUNK + 1024),
                "chunks are bounded"
            );
            let fast: Vec<u8> = chunks.concat();
            assert!(fast == slow, "{count} items: the fast path differs");
            assert_eq!(length, slow.len(), "{count} items");
        }
    }
}
