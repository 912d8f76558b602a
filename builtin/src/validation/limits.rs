//! kube's `ValidateLimitRange`: each item's type (one item per type), the resources it
//! names (a container's or a pod's, or any qualified name for other types), and its bounds
//! in order: min within max, the default request between min, the default and max, a
//! ratio of at least 1 and within max/min, and defaults that equal where nothing may be
//! overcommitted. A quantity that does not parse is left to decoding (kube refuses it
//! before any rule); these rules skip it.

use std::collections::{BTreeMap, BTreeSet};

use kapi::error::FieldError;
use kapi::meta::Quantity;
use kapi::quantity::Quantity as Amount;
use kapi::validation::{self as v, Path};

use super::{duplicate, forbidden, invalid_each, required, resources};
use crate::api::core::v1::{LimitRange, LimitRangeItem};

/// kube's `resource.MaxMilliValue`: the largest value whose thousandths fit an int64.
const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

pub(crate) fn limit_range(range: &LimitRange) -> Vec<FieldError> {
    let path = Path::new("spec").child("limits");
    let mut errors = Vec::new();
    let mut types = BTreeSet::new();
    for (i, item) in range.spec.limits.iter().enumerate() {
        let at = path.index(i);
        errors.extend(type_name(&item.r#type, &at.child("type")));
        if !types.insert(item.r#type.as_str()) {
            errors.push(duplicate(&at.child("type"), item.r#type.as_str()));
        }
        errors.extend(item_bounds(item, &at));
    }
    errors
}

/// kube's `validateLimitRangeTypeName`: a qualified name, one of kube's own without a
/// domain.
fn type_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = invalid_each(v::qualified_name(name), name, path);
    let standard = ["Pod", "Container", "PersistentVolumeClaim"];
    if errors.is_empty() && !name.contains('/') && !standard.contains(&name) {
        let message = "must be a standard limit type or fully qualified";
        errors.push(FieldError::invalid(path, name, message));
    }
    errors
}

/// One item's resource names and bounds.
fn item_bounds(item: &LimitRangeItem, at: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut keys = BTreeSet::new();
    let mut named = |field: &str, map: &BTreeMap<String, Quantity>| {
        let mut amounts = BTreeMap::new();
        for (name, quantity) in map {
            let path = at.child(field).key(name);
            errors.extend(match item.r#type.as_str() {
                "Pod" | "Container" => resources::container_name(name, &path),
                _ => resources::name(name, &path),
            });
            keys.insert(name.clone());
            if let Ok(amount) = Amount::parse(&quantity.0) {
                amounts.insert(name.clone(), amount);
            }
        }
        amounts
    };
    let max = named("max", &item.max);
    let min = named("min", &item.min);
    let (defaults, requests) = match item.r#type.as_str() {
        "Pod" => (BTreeMap::new(), BTreeMap::new()),
        _ => (
            named("default", &item.default),
            named("defaultRequest", &item.default_request),
        ),
    };
    let ratios = named("maxLimitRequestRatio", &item.max_limit_request_ratio);
    if item.r#type == "Pod" {
        let message = "may not be specified when `type` is 'Pod'";
        if !item.default.is_empty() {
            errors.push(forbidden(&at.child("default"), message));
        }
        if !item.default_request.is_empty() {
            errors.push(forbidden(&at.child("defaultRequest"), message));
        }
    }
    if item.r#type == "PersistentVolumeClaim"
        && !item.min.contains_key("storage")
        && !item.max.contains_key("storage")
    {
        let message =
            "either minimum or maximum storage value is required, but neither was provided";
        errors.push(required(&at.child("limits"), message));
    }
    for key in &keys {
        let (min, max) = (min.get(key), max.get(key));
        let (default, request) = (defaults.get(key), requests.get(key));
        let invalid = |field: &str, value: &Amount, message: String| {
            FieldError::invalid(at.child(field).key(key), value.to_string(), message)
        };
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            errors.push(invalid(
                "min",
                min,
                format!("min value {min} is greater than max value {max}"),
            ));
        }
        if let (Some(request), Some(min)) = (request, min)
            && min > request
        {
            let message =
                format!("min value {min} is greater than default request value {request}");
            errors.push(invalid("defaultRequest", request, message));
        }
        if let (Some(request), Some(max)) = (request, max)
            && request > max
        {
            let message =
                format!("default request value {request} is greater than max value {max}");
            errors.push(invalid("defaultRequest", request, message));
        }
        if let (Some(request), Some(default)) = (request, default)
            && request > default
        {
            let message = format!(
                "default request value {request} is greater than default limit value {default}"
            );
            errors.push(invalid("defaultRequest", request, message));
        }
        if let (Some(default), Some(min)) = (default, min)
            && min > default
        {
            let message = format!("min value {min} is greater than default value {default}");
            errors.push(invalid("default", min, message));
        }
        if let (Some(default), Some(max)) = (default, max)
            && default > max
        {
            let message = format!("default value {default} is greater than max value {max}");
            errors.push(invalid("default", max, message));
        }
        if let Some(ratio) = ratios.get(key) {
            if ratio.cmp_i64(1).is_lt() {
                let message = format!("ratio {ratio} is less than 1");
                errors.push(invalid("maxLimitRequestRatio", ratio, message));
            }
            if let (Some(min), Some(max)) = (min, max) {
                let limit = ratio_limit(ratio, min, max);
                if limit.0 > limit.1 {
                    let message = format!("ratio {ratio} is greater than max/min = {:.6}", limit.1);
                    errors.push(invalid("maxLimitRequestRatio", ratio, message));
                }
            }
        }
        if !resources::overcommit_allowed(key)
            && let (Some(default), Some(request)) = (default, request)
            && default != request
        {
            let message = format!(
                "default value {default} must equal to defaultRequest value {request} in {key}"
            );
            errors.push(invalid("defaultRequest", request, message));
        }
    }
    errors
}

/// The ratio asked for and max/min, as kube computes them: in thousandths when all three
/// fit, else in whole units.
fn ratio_limit(ratio: &Amount, min: &Amount, max: &Amount) -> (f64, f64) {
    let fits = [ratio, min, max]
        .iter()
        .all(|q| q.value() < MAX_MILLI_VALUE);
    let (ratio, min, max) = match fits {
        true => (
            ratio.milli_value() as f64 / 1000.0,
            min.milli_value(),
            max.milli_value(),
        ),
        false => (ratio.value() as f64, min.value(), max.value()),
    };
    (ratio, max as f64 / min as f64)
}
