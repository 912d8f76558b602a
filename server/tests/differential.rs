//! The differential tables (`differential/`): every row's request is sent to the real
//! `kapi-server`, and its answer must be the one kube-apiserver gave to the same request
//! (recorded by [`record`] from the peer of `shared/peer/`), or what a newer kube answers
//! where the row says so. [`BUILTIN`]: the built-in kinds' metadata, lifecycles and
//! defaults; [`VALIDATION`]: their own rules (kube's `Validate*`). [`APPLY`]: a
//! sequence of writes by several field managers to a WebApp, which the peer serves as a
//! CustomResourceDefinition with WebApp's published v1 schema (the reference the
//! server-side apply issue names); its rows also compare the resulting object and its
//! `managedFields`, and run twice on kapi: on the compiled WebApp, and on the same kind
//! defined by a CustomResourceDefinition (in another group, which the expected answers are
//! rewritten to), so that both of kapi's paths answer as kube's custom resources do.
//! [`commands`]: kubectl's everyday commands, and the whole objects they leave.
//!
//! Compared: the status code; for a `Status`, its reason, its details (name, group, kind,
//! and the set of causes: kube's validation iterates Go maps, so their order is random, and
//! reports some causes twice, which its own message shows once) and its message when it
//! has at most one distinct cause (with several, their order in the message is random in
//! kube too). Uids and a failed precondition's stored resourceVersion are masked.
//! Successful answers compare by code, and, for rows with `object: true`, by
//! the object's labels, spec, status and `managedFields` (entries sorted, times left
//! out: their order follows their times); `object: spec` leaves `managedFields` out (rows
//! about defaults, whose newer fields would be owned there too). Names the server generates (`generateName`)
//! are masked, in the recording and in kapi's answers alike.

mod commands;
mod record;

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};
use support::http::Client;
use support::webapps::WebApps;

/// One request of the table, as written in the YAML file.
#[derive(Clone, Debug)]
struct Request {
    method: String,
    path: String,
    content_type: String,
    body: Option<Value>,
}

/// One table: its rows and the answers recorded for them, in `differential/`.
#[derive(Clone, Copy, Debug)]
struct Table {
    rows: &'static str,
    recorded: &'static str,
}

/// The built-in kinds' rows.
const BUILTIN: Table = Table {
    rows: "builtin.yaml",
    recorded: "recorded.json",
};

/// The built-in kinds' validation: valid, minimal and invalid objects, refused updates.
const VALIDATION: Table = Table {
    rows: "validation.yaml",
    recorded: "validation.recorded.json",
};

/// The built-in kinds' tables (`kubectl get`): columns and cells of each kind's object.
const PRINTED: Table = Table {
    rows: "tables.yaml",
    recorded: "tables.recorded.json",
};

/// Every table.
const TABLES: [Table; 4] = [BUILTIN, VALIDATION, PRINTED, APPLY];

/// Server-side apply and field management on WebApp.
const APPLY: Table = Table {
    rows: "apply.yaml",
    recorded: "apply.recorded.json",
};

/// One row: requests that must succeed, then the one whose answer is compared.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    /// Which of the answer's object is compared.
    object: Compared,
    before: Vec<Request>,
    request: Request,
    /// Requests after the compared one, whatever they answer: what would disturb other
    /// rows on the peer, which keeps its objects (a default StorageClass).
    after: Vec<Request>,
    /// Fields of the answer that kube after 1.20 gives differently (`newer`), that kapi
    /// deliberately answers otherwise (`differs`), or that kapi does not give yet and the
    /// issue that brings them (`pending`); `why` says why.
    overrides: Map<String, Value>,
    /// `peer: {batch/v1: batch/v1beta1}`: text replaced in the requests' paths and bodies
    /// when recording from the peer, for a kind kube 1.20 served in an older version alone.
    peer: Vec<(String, String)>,
}

/// What of a successful answer's object a row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compared {
    /// Only the code.
    Nothing,
    /// Labels, spec, status and `managedFields`.
    Object,
    /// Labels, spec and status.
    Spec,
    /// The request asks for a `meta.k8s.io/v1` Table: its column definitions (name, type,
    /// format, priority) and its first row's cells, ages masked.
    Table,
}

fn table_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential")
}

/// The rows of the YAML file `file` in `differential/` as JSON, `$repeat` values expanded
/// (`$NS` stays), each with its name, which no other row has.
fn named_rows(file: &str) -> Vec<(String, Value)> {
    let path = table_dir().join(file);
    let text = std::fs::read_to_string(&path).expect("reading the table");
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
    let table = to_json(&yaml);
    let rows = table["rows"].as_array().expect("`rows:` is a list");
    let mut seen = std::collections::HashSet::new();
    (rows.iter())
        .map(|row| {
            let name = (row["name"].as_str().expect("every row has a name")).to_owned();
            assert!(seen.insert(name.clone()), "row {name:?} appears twice");
            (name, row.clone())
        })
        .collect()
}

/// The rows of `table`.
fn rows(table: Table) -> Vec<Row> {
    (named_rows(table.rows).into_iter())
        .map(|(name, row)| {
            let row = &row;
            let list = |key: &str| {
                (row.get(key).and_then(Value::as_array))
                    .map(|list| list.iter().map(request).collect())
                    .unwrap_or_default()
            };
            let (before, after) = (list("before"), list("after"));
            Row {
                object: match row.get("object") {
                    Some(Value::Bool(true)) => Compared::Object,
                    Some(Value::String(what)) if what == "spec" => Compared::Spec,
                    Some(Value::String(what)) if what == "table" => Compared::Table,
                    None | Some(Value::Bool(false)) => Compared::Nothing,
                    Some(other) => panic!("row {name:?}: `object: {other}`?"),
                },
                request: request(&row["request"]),
                before,
                after,
                overrides: overrides(row),
                peer: (row
                    .get("peer")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten())
                .map(|(from, to)| (from.clone(), to.as_str().unwrap_or_default().to_owned()))
                .collect(),
                name,
            }
        })
        .collect()
}

/// A row's `newer`, `differs` and `pending` overrides as one map: their `fields` merged.
fn overrides(row: &Value) -> Map<String, Value> {
    let mut merged = Map::new();
    let given = ["newer", "differs", "pending"]
        .iter()
        .filter_map(|key| row.get(*key)?.as_object().cloned())
        .flatten();
    for (key, value) in given {
        match (key.as_str(), merged.get_mut(&key)) {
            ("fields" | "rendered", Some(Value::Object(fields))) => {
                fields.extend(value.as_object().cloned().unwrap_or_default());
            }
            _ => {
                merged.insert(key, value);
            }
        }
    }
    merged
}

fn request(value: &Value) -> Request {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    Request {
        method: text("method").expect("a request has a method"),
        path: text("path").expect("a request has a path"),
        content_type: text("contentType").unwrap_or_else(|| "application/json".into()),
        body: value.get("body").cloned(),
    }
}

/// YAML to JSON, expanding `{$repeat: [text, count]}` in values and in map keys.
fn to_json(yaml: &serde_yaml_ng::Value) -> Value {
    use serde_yaml_ng::Value as Y;
    match yaml {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => serde_json::to_value(n).expect("a YAML number is JSON"),
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Y::Mapping(entries) => {
            if let Some(repeated) = repeat(yaml) {
                return Value::String(repeated);
            }
            let mut map = Map::new();
            for (key, value) in entries {
                let key = match key {
                    Y::String(s) => s.clone(),
                    other => repeat(other)
                        .unwrap_or_else(|| panic!("a map key is a string or $repeat: {other:?}")),
                };
                map.insert(key, to_json(value));
            }
            Value::Object(map)
        }
        Y::Tagged(tagged) => to_json(&tagged.value),
    }
}

fn repeat(yaml: &serde_yaml_ng::Value) -> Option<String> {
    let args = yaml.as_mapping()?.get("$repeat")?.as_sequence()?;
    let (text, count) = (args.first()?.as_str()?, args.get(1)?.as_u64()?);
    Some(text.repeat(usize::try_from(count).ok()?))
}

/// `$NS` replaced by `namespace` in every string and key of `value`.
fn with_namespace(value: &Value, namespace: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("$NS", namespace)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| with_namespace(v, namespace)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.replace("$NS", namespace), with_namespace(v, namespace)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A namespace name no earlier run used (the peer keeps its objects between runs).
fn run_namespace() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_nanos();
    let mut suffix = String::new();
    let mut n = nanos ^ u128::from(std::process::id());
    for _ in 0..6 {
        suffix.push(char::from_digit((n % 36) as u32, 36).expect("a base-36 digit"));
        n /= 36;
    }
    format!("kapi-diff-{suffix}")
}

fn send(client: &Client, request: &Request, namespace: &str) -> support::http::Response {
    let path = request.path.replace("$NS", namespace);
    let body = (request.body.as_ref()).map(|b| with_namespace(b, namespace).to_string());
    client
        .request(
            &request.method,
            &path,
            &request.content_type,
            body.as_deref(),
        )
        .unwrap_or_else(|e| panic!("{} {path}: {e}", request.method))
}

/// What is compared of an answer: the code and, for a `Status`, its reason, message and
/// details; the run's namespace written as `$NS`, and a name generated from
/// `generate_name` as that prefix and `*****`.
fn answer(
    response: &support::http::Response,
    namespace: &str,
    generate_name: Option<&str>,
    object: Compared,
) -> Value {
    let mut answer = json!({"code": response.status});
    if object != Compared::Nothing && (200..300).contains(&response.status) {
        let body: Value = serde_json::from_str(&response.body).expect("an object");
        let mut entries: Vec<Value> = (body.pointer("/metadata/managedFields"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|entry| {
                let mut entry = entry.clone();
                if let Some(entry) = entry.as_object_mut() {
                    entry.remove("time");
                }
                entry
            })
            .collect();
        sort_by_manager(&mut entries);
        answer["object"] = json!({
            "labels": body.pointer("/metadata/labels"),
            "spec": body.get("spec"),
            "status": body.get("status"),
            "managedFields": entries,
        });
        if object == Compared::Spec
            && let Some(object) = answer["object"].as_object_mut()
        {
            object.remove("managedFields");
        }
        drop_null_creation_timestamps(&mut answer["object"]);
    }
    if !(200..300).contains(&response.status) {
        let status: Value = serde_json::from_str(&response.body).unwrap_or_else(|e| {
            panic!(
                "a {} answer is not a Status ({e}): {}",
                response.status, response.body
            )
        });
        for field in ["reason", "message", "details"] {
            if let Some(value) = status.get(field) {
                answer[field] = value.clone();
            }
        }
    }
    let mut text = mask_run_values(&answer.to_string().replace(namespace, "$NS"));
    if let Some(prefix) = generate_name.filter(|p| !p.is_empty()) {
        // kube's generated suffix: five characters of `bcdfghjklmnpqrstvwxz2456789`.
        let mut masked = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(prefix) {
            let after = &rest[at + prefix.len()..];
            masked.push_str(&rest[..at + prefix.len()]);
            let suffix: String = after.chars().take(5).collect();
            if suffix.len() == 5 && suffix.chars().all(|c| c.is_ascii_alphanumeric()) {
                masked.push_str("*****");
                rest = &after[5..];
            } else {
                rest = after;
            }
        }
        masked.push_str(rest);
        text = masked;
    }
    serde_json::from_str(&text).expect("still JSON")
}

/// `managedFields` entries in the order of who they are (their own order follows their
/// times, which differ between runs).
fn sort_by_manager(entries: &mut [Value]) {
    entries.sort_by_key(|e| {
        let field = |name: &str| e.get(name).and_then(Value::as_str).unwrap_or("").to_owned();
        (field("manager"), field("operation"), field("subresource"))
    });
}

/// `text` with what differs between runs masked: uids as `$UID`, the stored
/// resourceVersion kube names in a failed precondition (`in record (718)`) as `$RV`, and
/// the Go pointers kube prints in a structured value (`(*int64)(0xc00e669830)`) as `$PTR`.
fn mask_run_values(text: &str) -> String {
    let is_uid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if rest.len() >= 36 && rest.is_char_boundary(36) && is_uid(&rest[..36]) {
            out.push_str("$UID");
            rest = &rest[36..];
        } else if let Some(after) = rest.strip_prefix("0xc")
            && after.starts_with(|c: char| c.is_ascii_hexdigit())
        {
            out.push_str("$PTR");
            rest = after.trim_start_matches(|c: char| c.is_ascii_hexdigit());
        } else if let Some(after) = rest.strip_prefix("in record (")
            && let Some(end) = after.find(')')
            && after[..end].chars().all(|c| c.is_ascii_digit())
        {
            out.push_str("in record ($RV)");
            rest = &after[end + 1..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Runs every row of `table` against `client` and returns each row's answer, by name.
fn run(client: &Client, namespace: &str, rows: &[Row]) -> Vec<(String, Value)> {
    let created = send(
        client,
        &Request {
            method: "POST".into(),
            path: "/api/v1/namespaces".into(),
            content_type: "application/json".into(),
            body: Some(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "$NS"}}),
            ),
        },
        namespace,
    );
    assert_eq!(
        created.status, 201,
        "creating the run's namespace: {}",
        created.body
    );
    rows.iter()
        .map(|row| {
            for before in &row.before {
                let response = send(client, before, namespace);
                assert!(
                    (200..300).contains(&response.status),
                    "row {}: setup {} {} answered {}: {}",
                    row.name,
                    before.method,
                    before.path,
                    response.status,
                    response.body
                );
            }
            let answer = if row.object == Compared::Table {
                let path = row.request.path.replace("$NS", namespace);
                let (status, body) = (client.get_accepting(&path, TABLE_ACCEPT))
                    .unwrap_or_else(|e| panic!("GET {path} as a Table: {e}"));
                table_answer(status, &body, namespace)
            } else {
                let response = send(client, &row.request, namespace);
                let generate_name = (row.request.body.as_ref())
                    .and_then(|b| b.pointer("/metadata/generateName")?.as_str());
                answer(&response, namespace, generate_name, row.object)
            };
            for after in &row.after {
                send(client, after, namespace);
            }
            (row.name.clone(), answer)
        })
        .collect()
}

/// What kubectl asks for when it prints.
const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// A Table answer as compared: the code, the column definitions and the first row's
/// cells, with what moves between runs masked (ages as `$AGE`, the run's namespace, uids).
fn table_answer(status: u16, body: &[u8], namespace: &str) -> Value {
    let table: Value = serde_json::from_slice(body).expect("a JSON answer");
    let columns: Vec<Value> = (table["columnDefinitions"].as_array().into_iter().flatten())
        .map(|c| json!([c["name"], c["type"], c["format"], c["priority"]]))
        .collect();
    let cells: Vec<Value> = (table.pointer("/rows/0/cells").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .map(|cell| match cell.as_str() {
            Some(text) if is_age(text) => json!("$AGE"),
            Some(text) if humantime::parse_rfc3339(text).is_ok() => json!("$TIME"),
            _ => cell.clone(),
        })
        .collect();
    let answer = json!({"code": status, "object": {"columns": columns, "cells": cells}});
    serde_json::from_str(&mask_run_values(
        &answer.to_string().replace(namespace, "$NS"),
    ))
    .expect("masked JSON")
}

/// Whether a cell is an age of seconds or minutes (`0s`, `2m5s`, `3m`): what differs
/// between two runs of a row.
fn is_age(text: &str) -> bool {
    let rest = text.trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, 's' | 'm'));
    rest.is_empty()
        && (text.ends_with('s') || text.ends_with('m'))
        && text.starts_with(|c: char| c.is_ascii_digit())
}

/// The differences between `expected` and `actual` (empty when they agree).
fn differences(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for field in ["code", "reason"] {
        if expected.get(field) != actual.get(field) {
            out.push(format!(
                "{field}: expected {:?}, got {:?}",
                expected.get(field),
                actual.get(field)
            ));
        }
    }
    let causes = |answer: &Value| -> Vec<String> {
        let mut causes: Vec<String> = (answer.pointer("/details/causes").and_then(Value::as_array))
            .map(|c| c.iter().map(Value::to_string).collect())
            .unwrap_or_default();
        causes.sort();
        causes.dedup();
        causes
    };
    let (expected_causes, actual_causes) = (causes(expected), causes(actual));
    if expected_causes != actual_causes {
        out.push(format!(
            "causes:\n  expected {expected_causes:#?}\n  got      {actual_causes:#?}"
        ));
    }
    for field in ["name", "group", "kind"] {
        let pointer = format!("/details/{field}");
        if expected.pointer(&pointer) != actual.pointer(&pointer) {
            out.push(format!(
                "details.{field}: expected {:?}, got {:?}",
                expected.pointer(&pointer),
                actual.pointer(&pointer)
            ));
        }
    }
    if expected.get("object") != actual.get("object") {
        out.push(format!(
            "object:\n  expected {}\n  got      {}",
            expected.get("object").unwrap_or(&Value::Null),
            actual.get("object").unwrap_or(&Value::Null)
        ));
    }
    if expected_causes.len() <= 1 && expected.get("message") != actual.get("message") {
        out.push(format!(
            "message:\n  expected {}\n  got      {}",
            expected.get("message").unwrap_or(&Value::Null),
            actual.get("message").unwrap_or(&Value::Null)
        ));
    }
    out
}

/// The recorded answers of `table`, by row name.
fn recorded(table: Table) -> BTreeMap<String, Value> {
    let path = table_dir().join(table.recorded);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it: see builtin.yaml)", path.display()));
    let recorded: Value = serde_json::from_str(&text).expect("recorded.json is JSON");
    let answers = recorded["answers"]
        .as_object()
        .expect("`answers` is an object");
    answers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The answer a row expects: kube-apiserver's as recorded, with the row's overrides over
/// it (`causes` replaces `details.causes`; `subresources` names the subresource of some
/// managedFields entries; `fields` sets values in the object by JSON pointer, `null`
/// removing one; `rendered` replaces text in the message and the causes' messages, for
/// values kube printed in Go's syntax and prints as JSON since 1.34).
fn expected(row: &Row, recorded: &BTreeMap<String, Value>) -> Value {
    let mut expected = (recorded.get(&row.name).cloned()).unwrap_or_else(|| {
        panic!(
            "row {:?} has no recorded answer: record it (see builtin.yaml)",
            row.name
        )
    });
    for (field, value) in &row.overrides {
        match field.as_str() {
            "why" | "rendered" => {}
            "causes" => expected["details"]["causes"] = value.clone(),
            // `{manager: subresource}`: those managedFields entries carry a subresource.
            "subresources" => {
                let entries = expected
                    .pointer_mut("/object/managedFields")
                    .and_then(Value::as_array_mut);
                for entry in entries.into_iter().flatten() {
                    let manager = entry["manager"].as_str().unwrap_or_default().to_owned();
                    if let Some(subresource) = value.get(&manager) {
                        entry["subresource"] = subresource.clone();
                    }
                }
            }
            "fields" => {
                let fields = value.as_object().expect("`fields` is a map of pointers");
                for (pointer, value) in fields {
                    set_pointer(&mut expected["object"], pointer, value.clone());
                }
            }
            field if value.is_null() => {
                if let Some(answer) = expected.as_object_mut() {
                    answer.remove(field);
                }
            }
            field => expected[field] = value.clone(),
        }
    }
    if let Some(rendered) = row.overrides.get("rendered").and_then(Value::as_object) {
        let replace = |text: &mut Value| {
            if let Some(s) = text.as_str() {
                let replaced = (rendered.iter()).fold(s.to_owned(), |s, (go, json)| {
                    s.replace(go, json.as_str().unwrap_or_default())
                });
                *text = Value::String(replaced);
            }
        };
        if let Some(message) = expected.get_mut("message") {
            replace(message);
        }
        let causes = expected
            .pointer_mut("/details/causes")
            .and_then(Value::as_array_mut);
        for cause in causes.into_iter().flatten() {
            if let Some(message) = cause.get_mut("message") {
                replace(message);
            }
        }
    }
    expected
}

/// `value` without the `creationTimestamp: null` of embedded objects' metadata (a pod
/// template's): kube writes Go's zero time so, kapi leaves an unset time out, and both
/// read back the same (a difference `builtin.yaml`'s header states).
fn drop_null_creation_timestamps(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("creationTimestamp") == Some(&Value::Null) {
                map.remove("creationTimestamp");
            }
            map.values_mut().for_each(drop_null_creation_timestamps);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_creation_timestamps),
        _ => {}
    }
}

/// Sets `value` at `pointer` (`/spec/template/spec/enableServiceLinks`) in `object`,
/// making the maps on the way; `null` removes what is there; `-` (or the length) as the
/// last index appends to a list.
fn set_pointer(object: &mut Value, pointer: &str, value: Value) {
    let mut parts: Vec<String> = (pointer.split('/').skip(1))
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect();
    let last = parts.pop().expect("a pointer names a field");
    let mut here = object;
    for part in parts {
        here = match here {
            Value::Array(items) => {
                let index: usize = part.parse().expect("an index into a list");
                &mut items[index]
            }
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                other
                    .as_object_mut()
                    .expect("made an object")
                    .entry(part)
                    .or_insert_with(|| json!({}))
            }
        };
    }
    match (here, value) {
        (Value::Object(map), Value::Null) => {
            map.remove(&last);
        }
        (Value::Object(map), value) => {
            map.insert(last, value);
        }
        (Value::Array(items), value) if last == "-" || last == items.len().to_string() => {
            items.push(value);
        }
        (Value::Array(items), Value::Null) => {
            let index: usize = last.parse().expect("an index into a list");
            items.remove(index);
        }
        (Value::Array(items), value) => {
            let index: usize = last.parse().expect("an index into a list");
            items[index] = value;
        }
        (other, _) => panic!("{pointer}: not in an object or list: {other}"),
    }
}

/// `object` (an object, or a Table answer's columns and cells) with the cluster IPs an
/// allocator picked (not `None`) as `$CLUSTER_IP`: what differs between two servers.
fn mask_cluster_ips(object: &mut Value) {
    let is_ip = |value: &Value| {
        value
            .as_str()
            .is_some_and(|ip| ip.parse::<std::net::IpAddr>().is_ok())
    };
    for pointer in [
        "/spec/clusterIP",
        "/spec/clusterIPs/0",
        "/spec/clusterIPs/1",
    ] {
        if let Some(ip) = object.pointer_mut(pointer)
            && is_ip(ip)
        {
            *ip = json!("$CLUSTER_IP");
        }
    }
    let column = (object.get("columns").and_then(Value::as_array))
        .and_then(|columns| columns.iter().position(|c| c[0] == "Cluster-IP"));
    if let Some(column) = column
        && let Some(cell) = object.pointer_mut(&format!("/cells/{column}"))
        && is_ip(cell)
    {
        *cell = json!("$CLUSTER_IP");
    }
}

/// `value` with WebApp's group replaced by `kind`'s (none replaced for the compiled kind).
fn in_group(value: &Value, kind: WebApps) -> Value {
    let text = value.to_string();
    let text = text.replace(WebApps::Compiled.group(), kind.group());
    serde_json::from_str(&text).expect("still JSON")
}

impl Row {
    /// The row with `on` applied to each of its requests.
    fn with_requests(&self, on: impl Fn(&Request) -> Request) -> Row {
        Row {
            before: self.before.iter().map(&on).collect(),
            request: on(&self.request),
            after: self.after.iter().map(&on).collect(),
            ..self.clone()
        }
    }

    /// The row as sent to the peer: its `peer` replacements made.
    fn for_peer(&self) -> Row {
        let replaced = |text: &str| {
            (self.peer.iter()).fold(text.to_owned(), |text, (from, to)| text.replace(from, to))
        };
        self.with_requests(|request| Request {
            path: replaced(&request.path),
            body: (request.body.as_ref())
                .map(|body| serde_json::from_str(&replaced(&body.to_string())).expect("JSON")),
            ..request.clone()
        })
    }

    /// The row sent to `kind`'s WebApps.
    fn on(&self, kind: WebApps) -> Row {
        self.with_requests(|request| Request {
            path: (request.path).replace(WebApps::Compiled.group(), kind.group()),
            body: request.body.as_ref().map(|body| in_group(body, kind)),
            ..request.clone()
        })
    }
}

/// Runs `table` against a fresh server and compares every row. With
/// [`WebApps::Defined`], the rows about WebApp go to the same kind defined by a
/// CustomResourceDefinition in another group, and expect the same answers in that group.
fn check(table: Table, kind: WebApps) {
    let rows: Vec<Row> = rows(table).iter().map(|row| row.on(kind)).collect();
    let recorded = recorded(table);
    let server = kind.start();
    let client = Client::new(server.addr());
    let answers = run(&client, &run_namespace(), &rows);
    let mut failures = Vec::new();
    for (row, (name, actual)) in rows.iter().zip(&answers) {
        assert_eq!(&row.name, name);
        let mut expected = in_group(&expected(row, &recorded), kind);
        let mut actual = actual.clone();
        mask_cluster_ips(&mut expected["object"]);
        mask_cluster_ips(&mut actual["object"]);
        let differences = differences(&expected, &actual);
        if !differences.is_empty() {
            failures.push(format!("row {name}:\n{}", differences.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows of {} differ from kube-apiserver:\n\n{}",
        failures.len(),
        rows.len(),
        table.rows,
        failures.join("\n\n")
    );
}

#[test]
fn builtin_kinds_answer_as_kube_apiserver_does() {
    check(BUILTIN, WebApps::Compiled);
}

#[test]
fn builtin_kinds_validate_as_kube_apiserver_does() {
    check(VALIDATION, WebApps::Compiled);
}

#[test]
fn builtin_kinds_print_as_kube_apiserver_does() {
    check(PRINTED, WebApps::Compiled);
}

#[test]
fn field_managers_and_applies_answer_as_kube_apiserver_does() {
    check(APPLY, WebApps::Compiled);
}

/// The peer serves WebApp as a CustomResourceDefinition: kapi's kinds so defined must
/// answer as it does too.
#[test]
fn field_managers_and_applies_on_a_defined_kind_answer_as_kube_apiserver_does() {
    check(APPLY, WebApps::Defined);
}

/// Every row has a recording, and every recording a row (a removed row takes its answer).
#[test]
fn every_row_is_recorded() {
    for table in TABLES {
        let mut names: Vec<String> = rows(table).into_iter().map(|r| r.name).collect();
        names.sort();
        let recorded: Vec<String> = recorded(table).into_keys().collect();
        assert_eq!(
            names, recorded,
            "rows and recorded answers of {} differ: record again",
            table.rows
        );
    }
}
