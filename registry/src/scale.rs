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
        .and_then(Value::as_str)
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

#[cfg(test)]
mod tests {
    use super::*;

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
