//! The `scale` subresource: an `autoscaling/v1` `Scale` view of an object, read from and
//! written to the kind's replica paths on the hub JSON (apiextensions'
//! `scaleFromCustomResource` / `scaleUpdatedObjectInfo`).

use serde_json::{Map, Value, json};

use super::object::meta;
use kapi_core::api::ScaleInfo;
pub(crate) use kapi_core::unstructured::{get_path, set_path};
use kapi_storage::Revision;

/// The `Scale` of an object (hub JSON) at a revision.
pub(crate) fn view(scale: &ScaleInfo, hub: &Value, revision: Revision) -> Value {
    let replicas = |path| {
        (get_path(hub, path).and_then(Value::as_i64)).map_or(0, |r| r.clamp(0, i64::from(i32::MAX)))
    };
    let mut metadata = Map::new();
    for field in ["name", "namespace", "uid"] {
        if let Some(value) = meta(hub)
            .and_then(|m| m.get(field))
            .filter(|v| !v.is_null())
        {
            metadata.insert(field.to_owned(), value.clone());
        }
    }
    metadata.insert("resourceVersion".into(), revision.to_string().into());
    if let Some(created) = meta(hub).and_then(|m| m.get("creationTimestamp")) {
        metadata.insert("creationTimestamp".into(), created.clone());
    }
    // `ScaleSpec.replicas` is `omitempty` in kube; `ScaleStatus.replicas` is not.
    let mut spec = Map::new();
    let spec_replicas = replicas(scale.spec_replicas_path);
    if spec_replicas != 0 {
        spec.insert("replicas".into(), spec_replicas.into());
    }
    let mut status = json!({"replicas": replicas(scale.status_replicas_path)});
    if let Some(selector) = (scale.label_selector_path)
        .and_then(|p| get_path(hub, p))
        .and_then(selector_string)
        .filter(|s| !s.is_empty())
    {
        status["selector"] = selector.into();
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

/// The selector at a scale's selector path in string form: a string as it is (custom
/// resources keep one in their status); a `LabelSelector` as kube's apps kinds' scales say
/// theirs (`LabelSelectorAsSelector(...).String()`: requirements sorted by key, `a=b`,
/// `a in (x,y)`, `a notin (x)`, `a`, `!a`); a map of labels as a replication
/// controller's (`SelectorFromSet(...).String()`).
fn selector_string(value: &Value) -> Option<String> {
    let object = match value {
        Value::String(selector) => return Some(selector.clone()),
        Value::Object(object) => object,
        _ => return None,
    };
    let structured = (object.iter()).all(|(key, value)| {
        matches!(
            (key.as_str(), value),
            ("matchLabels", Value::Object(_)) | ("matchExpressions", Value::Array(_))
        )
    });
    let mut requirements: Vec<(String, String)> = Vec::new();
    let labels = match structured {
        true => object.get("matchLabels").and_then(Value::as_object),
        false => Some(object),
    };
    for (key, value) in labels.into_iter().flatten() {
        requirements.push((key.clone(), format!("{key}={}", value.as_str()?)));
    }
    let expressions =
        (object.get("matchExpressions").and_then(Value::as_array)).filter(|_| structured);
    for expression in expressions.into_iter().flatten() {
        let key = expression.get("key").and_then(Value::as_str)?;
        let mut values: Vec<&str> = (expression.get("values").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let text = match expression.get("operator").and_then(Value::as_str)? {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        };
        requirements.push((key.to_owned(), text));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let texts: Vec<String> = requirements.into_iter().map(|(_, text)| text).collect();
    Some(texts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube's scales of its apps kinds and replication controllers.
    #[test]
    fn selectors_read_as_kubes_scales_say_them() {
        let cases = [
            (json!("app=web"), "app=web"),
            (
                json!({"matchLabels": {"tier": "a", "app": "web"}}),
                "app=web,tier=a",
            ),
            (
                json!({"matchLabels": {"z": "1"}, "matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                    {"key": "b", "operator": "DoesNotExist"},
                    {"key": "a", "operator": "Exists"},
                    {"key": "c", "operator": "NotIn", "values": ["x"]},
                ]}),
                "a,!b,c notin (x),env in (dev,prod),z=1",
            ),
            (json!({}), ""),
            (json!({"b": "2", "a": "1"}), "a=1,b=2"),
        ];
        for (selector, expected) in cases {
            assert_eq!(
                selector_string(&selector).as_deref(),
                Some(expected),
                "{selector}"
            );
        }
    }

    #[test]
    fn paths_read_and_write_nested_fields() {
        let mut object = json!({"spec": {"replicas": 3}, "status": {"replicas": null}});
        assert_eq!(get_path(&object, ".spec.replicas"), Some(&json!(3)));
        assert_eq!(get_path(&object, ".status.replicas"), None);
        assert_eq!(get_path(&object, ".status.selector"), None);
        set_path(&mut object, ".spec.replicas", json!(5));
        set_path(&mut object, ".status.selector.x", json!("y"));
        assert_eq!(
            object,
            json!({"spec": {"replicas": 5}, "status": {"replicas": null, "selector": {"x": "y"}}})
        );
    }
}
