//! kube's table printers for its built-in kinds (`pkg/printers/internalversion/printers.go`
//! of kube 1.32): the cells a JSON path cannot make, each a function of the hub object's
//! JSON named by the kind's printer columns (the generator writes them from the facts).
//! A cell that shows a time since (an age, a restart's "ago", a running Job's duration) is
//! deferred ([`kapi::api::cells::since`]): the server writes it when it answers, so a row it
//! keeps stays true as time passes. Cells keep kube's JSON types (numbers where kube's
//! printers put numbers, whatever the column's declared type).

mod cluster;
mod control;
mod network;
mod pods;
mod storage;
mod workloads;

pub(crate) use cluster::*;
pub(crate) use control::*;
pub(crate) use network::*;
pub(crate) use pods::*;
pub(crate) use storage::*;
pub(crate) use workloads::*;

use std::collections::BTreeMap;

use kapi::api::cells;
use serde_json::Value;

/// The string at `pointer`, empty when absent.
fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The number at `pointer`, 0 when absent (Go's zero).
fn number(object: &Value, pointer: &str) -> i64 {
    object
        .pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or_default()
}

/// The items of the list at `pointer`, none when absent.
fn items<'a>(object: &'a Value, pointer: &str) -> &'a [Value] {
    object
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `value`, or `<none>` when it is empty.
fn or_none(value: &str) -> Value {
    match value.is_empty() {
        true => "<none>".into(),
        false => value.into(),
    }
}

/// kube's `translateTimestampSince` of the time at `pointer`: deferred until answered.
fn since(object: &Value, pointer: &str) -> Value {
    cells::since("", object.pointer(pointer).and_then(Value::as_str), "")
}

/// The object's age (kube's `Age` column of its own kinds).
pub(crate) fn age(object: &Value) -> Value {
    since(object, "/metadata/creationTimestamp")
}

/// kube's `labels.FormatLabels`: `k=v` pairs by key, `<none>` when there are none.
fn format_labels(labels: Option<&Value>) -> Value {
    let pairs: BTreeMap<&str, &str> = (labels.and_then(Value::as_object).into_iter().flatten())
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
        .collect();
    let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    or_none(&pairs.join(","))
}

/// kube's `LabelSelectorAsSelector(...).String()`: requirements by key (`k=v`,
/// `k in (a,b)`, `k notin (a,b)`, `k`, `!k`), empty for none, `None` for an invalid one.
fn selector_string(selector: Option<&Value>) -> Option<String> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Some(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    for (key, value) in selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        requirements.push((
            key.clone(),
            format!("{key}={}", value.as_str().unwrap_or_default()),
        ));
    }
    for expression in items(selector, "/matchExpressions") {
        let key = text(expression, "/key");
        let mut values: Vec<&str> = items(expression, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let shown = match text(expression, "/operator") {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.to_owned(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return None,
        };
        requirements.push((key.to_owned(), shown));
    }
    requirements.sort();
    Some(
        requirements
            .into_iter()
            .map(|(_, shown)| shown)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// kube's `metav1.FormatLabelSelector`: `<none>` for none, `<error>` for an invalid one.
fn format_selector(selector: Option<&Value>) -> Value {
    match selector_string(selector) {
        None => "<error>".into(),
        Some(shown) => or_none(&shown),
    }
}

/// kube's `layoutContainerCells`: the names and the images of `containers`, each joined
/// by commas.
fn containers(containers: &[Value]) -> (Value, Value) {
    let names: Vec<&str> = containers.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, "/image")).collect();
    (names.join(",").into(), images.join(",").into())
}

/// kube's `printBoolPtr`: `<unset>`, `True` or `False`.
fn bool_text(value: Option<&Value>) -> Value {
    match value.and_then(Value::as_bool) {
        None => "<unset>".into(),
        Some(true) => "True".into(),
        Some(false) => "False".into(),
    }
}

/// The string at `pointer`, or `<unset>` (kube's cells of optional strings).
fn or_unset(object: &Value, pointer: &str) -> Value {
    match object.pointer(pointer).and_then(Value::as_str) {
        Some(value) => value.into(),
        None => "<unset>".into(),
    }
}

/// kube's `GetAccessModesAsString`: `RWO,ROX,RWX,RWOP`, each once, in that order.
fn access_modes(modes: &[Value]) -> Value {
    let given: Vec<&str> = modes.iter().filter_map(Value::as_str).collect();
    let shown: Vec<&str> = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| given.contains(mode))
    .map(|(_, short)| *short)
    .collect();
    shown.join(",").into()
}

/// A quantity as kube prints it (`Quantity.String()`, its canonical form), `0` when absent.
fn quantity(value: Option<&Value>) -> String {
    let text = value.and_then(Value::as_str).unwrap_or("0");
    match kapi::quantity::Quantity::parse(text) {
        Ok(quantity) => quantity.to_string(),
        Err(_) => text.to_owned(),
    }
}

/// Up to three of `entries` joined by commas, then ` + N more...` (kube's hosts, ports
/// and endpoints cells).
fn at_most_three(entries: &[String], total: usize) -> String {
    let shown = entries
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(",");
    match total > 3 {
        true => format!("{shown} + {} more...", total - 3),
        false => shown,
    }
}
