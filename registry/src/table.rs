//! `meta.k8s.io/v1` Tables, as apiextensions' `tableconvertor` builds them for custom
//! resources: a `Name` column, then the kind's printer columns evaluated on the hub JSON.
//!
//! Cells follow `cellForJSONValue`: `integer`, `number`, `boolean` and `string` cells keep
//! values of their type (strings also print numbers, booleans, and objects or arrays as
//! JSON); `date` cells are ages (`5m`), as kube renders them on the server; anything else,
//! and a missing value, is `null`. One addition: an `integer` column whose path holds an
//! object or an array shows its number of entries (kube's ConfigMap `Data` column).

use std::time::SystemTime;

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::object::{internal, meta, meta_str};
use super::{ObjectList, Target};
use super::{SharedObject, kept};
use kapi_core::api::{PrinterColumn, cells};
use kapi_core::chunks::{Chunks, ItemWriter};
use kapi_core::error::{ApiError, FieldError, FieldErrorType};
use kapi_core::meta::{ListMeta, Table, TableColumnDefinition, TableRow};

/// `ObjectMeta`'s documentation of `name`, kube's description of the name column.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// What each row carries (`includeObject`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Include {
    None,
    Metadata,
    Object,
}

/// What `includeObject` asks each row to carry.
fn include(include_object: &str) -> Result<Include, ApiError> {
    match include_object {
        "" | "Metadata" => Ok(Include::Metadata),
        "Object" => Ok(Include::Object),
        "None" => Ok(Include::None),
        other => Err(ApiError::Invalid {
            group: "meta.k8s.io".into(),
            kind: "TableOptions".into(),
            name: String::new(),
            causes: vec![FieldError::new(
                FieldErrorType::Invalid,
                "includeObject",
                Some(Value::String(other.to_owned())),
                "must be 'Metadata', 'Object', 'None', or empty",
            )],
        }),
    }
}

/// The Table of `objects` (in `target.version`).
pub(crate) fn table(
    target: Target<'_>,
    objects: &[Value],
    list: Option<&ObjectList>,
    include_object: &str,
) -> Result<Table, ApiError> {
    let include = include(include_object)?;
    let columns = target.kind.info.columns(target.version);
    let now = SystemTime::now();
    let mut rows = Vec::with_capacity(objects.len());
    for object in objects {
        let cells = aged(columns, undated_cells(target, object)?, now);
        let object = match include {
            Include::None => None,
            Include::Object => Some(object.clone()),
            Include::Metadata => Some(partial_metadata(object)),
        };
        rows.push(TableRow { cells, object });
    }
    Ok(Table {
        kind: Some("Table".into()),
        api_version: Some("meta.k8s.io/v1".into()),
        metadata: table_meta(objects, list),
        column_definitions: column_definitions(columns),
        rows,
    })
}

/// The Table of `list`'s items as compact JSON, in Table version `api_version`: byte for
/// byte what serializing [`table`]'s Table would write, without decoding the items again,
/// written as chunks while the body is sent ([`TableChunks`]). A row's cells (but the
/// ages) are made once per shared object and kept with it
/// ([`try_encoded_as`](kapi_storage::cache::SharedObject::try_encoded_as)); its
/// `PartialObjectMetadata` is the object's own `metadata` bytes; a request only turns
/// dates into ages and copies bytes. What may fail (the options, a row's cells, metadata
/// the cache does not locate) is done here, before the first byte: the chunks only copy.
pub(crate) fn table_json(
    target: Target<'_>,
    list: ObjectList,
    include_object: &str,
    api_version: &str,
) -> Result<TableChunks, ApiError> {
    let include = include(include_object)?;
    let kind = target.kind;
    let columns = kind.info.columns(target.version);
    let head = Table {
        kind: Some("Table".into()),
        api_version: Some(api_version.into()),
        metadata: table_meta(&[], Some(&list)),
        column_definitions: column_definitions(columns),
        rows: Vec::new(),
    };
    // `{...,"rows":[]}`: everything before `]}` opens the body.
    let mut open = serde_json::to_vec(&head).map_err(internal)?;
    open.truncate(open.len().saturating_sub(2));
    // The key names the columns themselves, not only the kind: a definition whose columns
    // change is served at once, while the cache may still hold rows made before.
    let cells_key = format!(
        "table-cells:{}:{}:{}:{:x}",
        kind.info.group,
        kind.info.kind,
        target.version,
        columns_fingerprint(columns)
    );
    let rows = (list.items.into_iter())
        .map(|item| {
            let undated = item.try_encoded_as(&cells_key, || {
                let cells = undated_cells(target, &item.value())?;
                serde_json::to_vec(&cells).map(kept).map_err(internal)
            })?;
            // The object's own `metadata` bytes: its encoding is serde's, so they are what
            // serializing its metadata gives (no second copy is kept). Where the cache
            // knows their place the chunks copy them; otherwise they are found by decoding.
            let metadata = match include {
                Include::Metadata if item.metadata_parts().is_none() => {
                    let json = item.json();
                    let only: MetadataOnly<'_> = serde_json::from_slice(&json).map_err(internal)?;
                    let metadata = only.metadata.map_or("null", RawValue::get);
                    Some(Bytes::copy_from_slice(metadata.as_bytes()))
                }
                _ => None,
            };
            Ok(Row {
                item,
                undated,
                metadata,
            })
        })
        .collect::<Result<Vec<Row>, ApiError>>()?;
    let rows = TableRows {
        rows: rows.into_iter(),
        columns,
        include,
        now: SystemTime::now(),
        first: true,
    };
    Ok(Chunks::new(&open, rows))
}

/// One row of a streamed Table: its object, its cells as kept (dates undated), and its
/// metadata when the cache does not locate it in the object's bytes.
struct Row {
    item: SharedObject,
    undated: Bytes,
    metadata: Option<Bytes>,
}

/// A Table's body as chunks: the head, then each row, then `]}` and a newline. Each
/// row's bytes are copied once, into the chunk being filled; no buffer of the whole Table
/// exists.
pub type TableChunks = Chunks<TableRows>;

/// Writes a Table's rows, their cells aged at the request's time. Its only error is a kept
/// row that no longer decodes (its bytes were made by this server), so never in practice.
pub struct TableRows {
    rows: std::vec::IntoIter<Row>,
    columns: &'static [PrinterColumn],
    include: Include,
    now: SystemTime,
    first: bool,
}

impl ItemWriter for TableRows {
    type Error = ApiError;

    fn write_next(&mut self, body: &mut BytesMut) -> Result<bool, ApiError> {
        let Some(row) = self.rows.next() else {
            body.extend_from_slice(b"]}\n");
            return Ok(false);
        };
        if !std::mem::take(&mut self.first) {
            body.put_u8(b',');
        }
        body.extend_from_slice(b"{\"cells\":");
        write_aged(body, self.columns, &row.undated, self.now)?;
        match self.include {
            Include::None => {}
            Include::Object => {
                body.extend_from_slice(b",\"object\":");
                row.item
                    .parts()
                    .iter()
                    .for_each(|p| body.extend_from_slice(p));
            }
            Include::Metadata => {
                body.extend_from_slice(PARTIAL_METADATA_OPEN);
                match (&row.metadata, row.item.metadata_parts()) {
                    (Some(metadata), _) => body.extend_from_slice(metadata),
                    (None, Some(parts)) => parts.iter().for_each(|p| body.extend_from_slice(p)),
                    (None, None) => body.extend_from_slice(b"null"),
                }
                body.put_u8(b'}');
            }
        }
        body.put_u8(b'}');
        Ok(true)
    }
}

/// What a row's `PartialObjectMetadata` starts with, as [`partial_metadata`] serializes.
const PARTIAL_METADATA_OPEN: &[u8] =
    br#","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;

/// An object's `metadata`, as its bytes.
#[derive(serde::Deserialize)]
struct MetadataOnly<'a> {
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
}

/// The cells of `object`'s row: its name, then each printer column evaluated on the hub
/// JSON, `date` columns left as the value found (a timestamp) for [`aged`] to render;
/// computed cells as made (deferred ones too).
fn undated_cells(target: Target<'_>, object: &Value) -> Result<Vec<Value>, ApiError> {
    let kind = target.kind;
    let columns = kind.info.columns(target.version);
    let hub = kind
        .to_hub(object.clone(), target.version)
        .and_then(|hub| kind.hub_json(&hub))
        .map_err(internal)?;
    let (name, columns) = split_name(columns);
    let mut cells = Vec::with_capacity(columns.len() + 1);
    cells.push(match name.and_then(|name| name.cell) {
        Some(make) => make(&hub),
        None => Value::String(meta_str(object, "name").unwrap_or_default().to_owned()),
    });
    for column in columns {
        // A computed cell is the table convertor's own, kept as it is made (kube's printers
        // put numbers in columns they declare strings).
        if let Some(make) = column.cell {
            cells.push(make(&hub));
            continue;
        }
        let value = parse_path(column.json_path).and_then(|path| evaluate(&hub, &path));
        cells.push(match column.column_type {
            "date" => value
                .filter(|v| v.is_string())
                .cloned()
                .unwrap_or(Value::Null),
            other => cell(other, value, SystemTime::UNIX_EPOCH),
        });
    }
    Ok(cells)
}

/// A digest of what makes a row's cells: each column's path, type and format. A kind's
/// compiled columns never change; a definition's change with its definition.
fn columns_fingerprint(columns: &[PrinterColumn]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for column in columns {
        (column.json_path, column.column_type, column.format).hash(&mut hasher);
        column.cell.map(|cell| cell as usize).hash(&mut hasher);
    }
    hasher.finish()
}

/// `cells` with their `date` columns rendered as ages at `now`, and deferred cells (a time
/// since, [`cells::since`]) written out.
fn aged(columns: &[PrinterColumn], mut cells: Vec<Value>, now: SystemTime) -> Vec<Value> {
    let (_, columns) = split_name(columns);
    for (column, cell_value) in columns.iter().zip(cells.iter_mut().skip(1)) {
        // A computed cell is as made (`created_at` is a date kept as text).
        if column.column_type == "date" && column.cell.is_none() {
            *cell_value = cell("date", Some(cell_value), now);
        } else if cells::is_deferred(cell_value) {
            *cell_value = cells::resolve(cell_value, now);
        }
    }
    cells
}

/// [`aged`] for cells kept as their encoding (`undated`), written to `body` as serializing
/// the aged cells would write them: only the `date` cells and objects (a deferred cell is
/// one) are decoded, the others copied.
fn write_aged(
    body: &mut BytesMut,
    columns: &[PrinterColumn],
    undated: &[u8],
    now: SystemTime,
) -> Result<(), ApiError> {
    let cells: Vec<&RawValue> = serde_json::from_slice(undated).map_err(internal)?;
    let (_, columns) = split_name(columns);
    body.put_u8(b'[');
    for (i, raw) in cells.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        // Cell 0 is the name; cell `i` is column `i - 1`'s.
        match i.checked_sub(1).and_then(|column| columns.get(column)) {
            Some(column) if column.column_type == "date" && column.cell.is_none() => {
                let value: Value = serde_json::from_str(raw.get()).map_err(internal)?;
                serde_json::to_writer((&mut *body).writer(), &cell("date", Some(&value), now))
                    .map_err(internal)?;
            }
            Some(_) if raw.get().starts_with('{') => {
                let value: Value = serde_json::from_str(raw.get()).map_err(internal)?;
                serde_json::to_writer((&mut *body).writer(), &cells::resolve(&value, now))
                    .map_err(internal)?;
            }
            _ => body.extend_from_slice(raw.get().as_bytes()),
        }
    }
    body.put_u8(b']');
    Ok(())
}

/// A row's object by default: `PartialObjectMetadata` of `object`.
fn partial_metadata(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta(object).cloned().unwrap_or_default(),
    })
}

/// A Table's list metadata: the list's, or for one object its resourceVersion.
fn table_meta(objects: &[Value], list: Option<&ObjectList>) -> ListMeta {
    match list {
        Some(list) => ListMeta {
            resource_version: Some(list.resource_version.clone()),
            continue_: list.continue_token.clone(),
            remaining_item_count: list.remaining_item_count,
            self_link: None,
        },
        None => ListMeta {
            resource_version: match objects {
                [one] => meta_str(one, "resourceVersion").map(str::to_owned),
                _ => None,
            },
            ..ListMeta::default()
        },
    }
}

/// A kind's own `Name` column (first, named `Name`, with a computed cell, which a
/// definition's columns never have: kube's StorageClass printer adds ` (default)` to the
/// default class's name) and the columns after the name.
fn split_name(columns: &[PrinterColumn]) -> (Option<&PrinterColumn>, &[PrinterColumn]) {
    match columns.split_first() {
        Some((first, rest)) if first.name == "Name" && first.cell.is_some() => (Some(first), rest),
        _ => (None, columns),
    }
}

fn column_definitions(columns: &[PrinterColumn]) -> Vec<TableColumnDefinition> {
    let (_, columns) = split_name(columns);
    let name = TableColumnDefinition {
        name: "Name".into(),
        column_type: "string".into(),
        format: "name".into(),
        description: NAME_DESCRIPTION.into(),
        priority: 0,
    };
    let rest = columns.iter().map(|c| TableColumnDefinition {
        name: c.name.into(),
        column_type: c.column_type.into(),
        format: c.format.into(),
        description: if c.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                c.json_path
            )
        } else {
            c.description.into()
        },
        priority: c.priority,
    });
    std::iter::once(name).chain(rest).collect()
}

/// One step of a simple JSON path.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
    /// `[?(@.type=="Ready")]`: the first item of a list whose value at the path equals the
    /// literal (CRDs' columns of conditions, as kube's JSONPath finds them).
    Filter(Vec<Step>, Value),
}

/// Parses a simple JSON path: `.a.b[0]['c']`, with equality filters on lists
/// (`[?(@.type=="Ready")]`), optionally in braces. `None` when it is not a simple path
/// (its cells are then `null`).
fn parse_path(path: &str) -> Option<Vec<Step>> {
    let path = path.trim();
    let path = (path.strip_prefix('{').and_then(|p| p.strip_suffix('}'))).unwrap_or(path);
    let mut steps = Vec::new();
    let mut rest = path.strip_prefix('$').unwrap_or(path);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end > 0 {
                steps.push(Step::Field(after[..end].to_owned()));
            }
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("[?(") {
            let end = after.find(")]")?;
            steps.push(filter(&after[..end])?);
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = after[..end].trim();
            let quoted = (inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            steps.push(match quoted {
                Some(field) => Step::Field(field.to_owned()),
                None => Step::Index(inner.parse().ok()?),
            });
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// A filter's condition, `@.path==literal` (the literal a quoted string, a number or a
/// boolean).
fn filter(condition: &str) -> Option<Step> {
    let (path, literal) = condition.split_once("==")?;
    let path = parse_path(path.trim().strip_prefix('@')?)?;
    let literal = literal.trim();
    let quoted = (literal
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\'')))
    .or_else(|| literal.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
    let literal = match quoted {
        Some(text) => Value::String(text.to_owned()),
        None => serde_json::from_str(literal).ok()?,
    };
    Some(Step::Filter(path, literal))
}

fn evaluate<'v>(value: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(value, |value, step| match step {
        Step::Field(name) => value.get(name),
        Step::Index(i) => value.get(i),
        Step::Filter(path, literal) => (value.as_array()?.iter())
            .find(|item| evaluate(item, path).is_some_and(|found| found == literal)),
    })
}

/// The cell of one column for one value.
fn cell(column_type: &str, value: Option<&Value>, now: SystemTime) -> Value {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match (column_type, value) {
        ("string", Value::String(s)) => Value::String(s.clone()),
        ("string", other) => Value::String(other.to_string()),
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => n.as_f64().map_or(Value::Null, |f| Value::from(f as i64)),
        },
        ("integer", Value::Object(entries)) => Value::from(entries.len()),
        ("integer", Value::Array(items)) => Value::from(items.len()),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, Value::from),
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("date", Value::String(s)) => Value::String(cells::age(s, now)),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn simple_paths_and_cells() {
        let object = json!({"spec": {"container": {"image": "nginx", "ports": [{"p": 80}]}, "replicas": 2.7},
            "data": {"a": "1", "b": "2"}, "status": {"ready": null}});
        let at = |path: &str| evaluate(&object, &parse_path(path).unwrap()).cloned();
        assert_eq!(at(".spec.container.image"), Some(json!("nginx")));
        assert_eq!(at(".spec.container.ports[0].p"), Some(json!(80)));
        assert_eq!(at("{.spec['container'].image}"), Some(json!("nginx")));
        assert_eq!(at(".spec.missing"), None);
        assert_eq!(parse_path(".spec[?(@.x)]"), None);
        let conditions = serde_json::json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "Available", "status": "True"},
        ]}});
        let available = parse_path(".status.conditions[?(@.type==\"Available\")].status");
        assert_eq!(
            evaluate(&conditions, &available.unwrap()),
            Some(&Value::from("True"))
        );
        let missing = parse_path(".status.conditions[?(@.type=='Gone')].status").unwrap();
        assert_eq!(evaluate(&conditions, &missing), None);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let cell = |ty: &str, path: &str| cell(ty, at(path).as_ref(), now);
        assert_eq!(cell("string", ".spec.container.image"), json!("nginx"));
        assert_eq!(
            cell("string", ".spec.container.ports"),
            json!("[{\"p\":80}]")
        );
        assert_eq!(cell("integer", ".spec.replicas"), json!(2));
        assert_eq!(cell("number", ".spec.replicas"), json!(2.7));
        assert_eq!(cell("integer", ".data"), json!(2));
        assert_eq!(cell("integer", ".status.ready"), Value::Null);
        assert_eq!(cell("boolean", ".spec.container.image"), Value::Null);
        assert_eq!(
            super::cell("date", Some(&json!("2001-09-09T01:43:40Z")), now),
            json!("3m")
        );
        assert_eq!(
            super::cell("date", Some(&json!("yesterday")), now),
            json!("<invalid>")
        );
    }
}
