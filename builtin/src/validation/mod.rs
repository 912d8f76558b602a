//! kube's validation of its built-in kinds (`pkg/apis/*/validation`): what each kind's
//! strategy refuses on create and update, with kube's field paths and messages, because
//! clients and their users read them verbatim. The pieces several kinds embed live once:
//! a pod template's and a PodSpec's rules in [`pod`], label selectors here; each kind's
//! own rules in the module of its group. A strategy (`crate::strategies`) calls them.
//!
//! Values a field error shows are written as kube 1.34 writes them: a string quoted, a
//! number bare, anything else as its JSON (kube before 1.34 printed Go's syntax).

pub(crate) mod batch;
pub(crate) mod cluster;
pub(crate) mod limits;
pub(crate) mod networking;
pub(crate) mod pod;
pub(crate) mod policy;
mod resources;
pub(crate) mod scheduling;
pub(crate) mod secret;
pub(crate) mod service;
pub(crate) mod storage;
pub(crate) mod workloads;

use std::collections::BTreeMap;

use kapi::error::{FieldError, FieldErrorType};
use kapi::meta::LabelSelector;
use kapi::validation::{self as v, Path};
use serde::Serialize;
use serde_json::Value;

/// The JSON of `value`, as a field error shows a structured value.
pub(crate) fn json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// kube's `ValidateImmutableField`: `new` may not differ from `old`.
pub(crate) fn immutable<T: PartialEq + Serialize>(
    new: &T,
    old: &T,
    path: &Path,
) -> Vec<FieldError> {
    match new == old {
        true => Vec::new(),
        false => vec![FieldError::invalid(path, json(new), "field is immutable")],
    }
}

/// A `NotSupported` error unless `value` is one of `supported`.
pub(crate) fn one_of(value: &str, supported: &[&str], path: &Path) -> Vec<FieldError> {
    match supported.contains(&value) {
        true => Vec::new(),
        false => vec![FieldError::not_supported(path, value, supported)],
    }
}

/// A `Required` error when `value` is empty, else a `NotSupported` one unless it is one
/// of `supported` (kube's switch over an enum's values with an empty case).
pub(crate) fn required_one_of(value: &str, supported: &[&str], path: &Path) -> Vec<FieldError> {
    match value.is_empty() {
        true => vec![FieldError::required(path, "")],
        false => one_of(value, supported, path),
    }
}

/// A `NotSupported` error showing a structured `value` (kube shows a whole strategy).
pub(crate) fn unsupported(path: &Path, value: Value, supported: &[&str]) -> FieldError {
    let mut error = FieldError::not_supported(path, "", supported);
    error.value = Some(value);
    error
}

/// An `Invalid` error for each of `messages` about the string `value`.
pub(crate) fn invalid_each(messages: Vec<String>, value: &str, path: &Path) -> Vec<FieldError> {
    (messages.into_iter())
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}

/// A `Forbidden` error.
pub(crate) fn forbidden(path: &Path, detail: impl Into<String>) -> FieldError {
    FieldError::new(FieldErrorType::Forbidden, path, None, detail)
}

/// A `Duplicate` error showing `value`.
pub(crate) fn duplicate(path: &Path, value: impl Into<Value>) -> FieldError {
    FieldError::new(FieldErrorType::Duplicate, path, Some(value.into()), "")
}

/// A `NotFound` error showing `value`.
pub(crate) fn not_found(path: &Path, value: impl Into<Value>) -> FieldError {
    FieldError::new(FieldErrorType::NotFound, path, Some(value.into()), "")
}

/// A `Required` error with a detail.
pub(crate) fn required(path: &Path, detail: impl Into<String>) -> FieldError {
    FieldError::required(path, detail)
}

/// apimachinery's `LabelSelectorAsSelector` succeeds: every requirement has a known
/// operator with the values it needs, a qualified key and label values.
pub(crate) fn selector_is_valid(selector: &LabelSelector) -> bool {
    let labels = selector.match_labels.iter().flatten();
    let labels_valid = labels
        .into_iter()
        .all(|(k, val)| v::qualified_name(k).is_empty() && v::label_value(val).is_empty());
    let requirement_valid = |r: &kapi::meta::LabelSelectorRequirement| {
        let operator_valid = match r.operator.as_str() {
            "In" | "NotIn" => !r.values.is_empty(),
            "Exists" | "DoesNotExist" => r.values.is_empty(),
            _ => false,
        };
        operator_valid
            && v::qualified_name(&r.key).is_empty()
            && r.values
                .iter()
                .all(|value| v::label_value(value).is_empty())
    };
    labels_valid && selector.match_expressions.iter().all(requirement_valid)
}

/// Whether `selector` (valid) selects everything: no labels and no requirements.
pub(crate) fn selector_is_empty(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector.match_expressions.is_empty()
}

/// Whether `selector` (valid) selects an object with `labels`.
pub(crate) fn selector_matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    let exact = (selector.match_labels.iter().flatten()).all(|(k, val)| labels.get(k) == Some(val));
    exact
        && selector.match_expressions.iter().all(|r| {
            let value = labels.get(&r.key);
            match r.operator.as_str() {
                "In" => value.is_some_and(|val| r.values.contains(val)),
                "NotIn" => value.is_none_or(|val| !r.values.contains(val)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// `map[string]string` selectors (a ReplicationController's, a Service's): every pair
/// present in `labels`.
pub(crate) fn map_selector_matches(
    selector: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
) -> bool {
    selector.iter().all(|(k, val)| labels.get(k) == Some(val))
}

/// apimachinery's `ValidateLabelSelector`, at `path`.
pub(crate) fn label_selector(selector: &LabelSelector, path: &Path) -> Vec<FieldError> {
    v::label_selector(selector, path.as_str())
}

/// The labels of an embedded object's metadata, none when unset.
pub(crate) fn labels_of(meta: &kapi::meta::ObjectMeta) -> &BTreeMap<String, String> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    meta.labels.as_ref().unwrap_or(&NONE)
}

/// kube's `ValidateNonSpecialIP` (Service external IPs, endpoint addresses): not
/// unspecified, loopback, link-local, or link-local multicast.
pub(crate) fn non_special_ip(
    address: std::net::IpAddr,
    shown: &str,
    path: &Path,
) -> Vec<FieldError> {
    use std::net::IpAddr;
    let v4 = address.is_ipv4();
    let message = match address {
        a if a.is_unspecified() => format!(
            "may not be unspecified ({})",
            if v4 { "0.0.0.0" } else { "::" }
        ),
        a if a.is_loopback() => format!(
            "may not be in the loopback range ({})",
            if v4 { "127.0.0.0/8" } else { "::1/128" }
        ),
        IpAddr::V4(a) if a.is_link_local() => {
            "may not be in the link-local range (169.254.0.0/16)".into()
        }
        IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfe80 => {
            "may not be in the link-local range (fe80::/10)".into()
        }
        IpAddr::V4(a) if a.octets()[..3] == [224, 0, 0] => {
            "may not be in the link-local multicast range (224.0.0.0/24)".into()
        }
        IpAddr::V6(a) if (a.segments()[0] & 0xff0f) == 0xff02 => {
            "may not be in the link-local multicast range (ff02::/16)".into()
        }
        _ => return Vec::new(),
    };
    vec![FieldError::invalid(path, shown, message)]
}

/// An int-or-string as kube's percent rules read it.
pub(crate) fn int_or_percent(value: &kapi::meta::IntOrString) -> v::IntOrPercent<'_> {
    match value {
        kapi::meta::IntOrString::Int(n) => v::IntOrPercent::Int((*n).into()),
        kapi::meta::IntOrString::String(s) => v::IntOrPercent::Str(s),
    }
}

/// kube's `ValidateNonnegativeField` of an optional number.
pub(crate) fn non_negative(value: Option<impl Into<i64>>, path: &Path) -> Vec<FieldError> {
    value
        .map(|n| v::non_negative(n.into(), path))
        .unwrap_or_default()
}
