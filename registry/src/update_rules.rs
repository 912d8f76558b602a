//! The generic rules of an update, on hub JSON, whatever the kind: which metadata the
//! server keeps from the stored object, how the status subresource splits what each
//! endpoint may change, when `metadata.generation` moves, and when an update deletes.

use serde_json::{Map, Value};

use super::Subresource;
use super::object::{meta, meta_str, set_meta};
use kapi_core::api::{Generation, KindInfo, Scope};

/// Whether an update deletes the object: its deletion was requested (with no grace
/// period left) and the update removes its last finalizer.
pub(super) fn deletes_on_update(old: &Value, new: &Value) -> bool {
    let grace = meta(old)
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64);
    // A namespace is also held by `spec.finalizers` (kube's
    // `ShouldDeleteNamespaceDuringUpdate`).
    meta_str(old, "deletionTimestamp").is_some()
        && grace.unwrap_or(0) == 0
        && kapi_schema::metadata::finalizer_list(new).is_empty()
        && super::namespaces::spec_finalizers(new).is_empty()
}

/// The generic rules of an update, on hub JSON: server-owned metadata comes from the
/// stored object, and the status subresource splits what each endpoint may change (with
/// the metadata fields the kind lets a write through the subresource change, `through`).
pub(super) fn apply_update_rules(
    (info, through): (&KindInfo, &[&str]),
    new: &mut Value,
    old: &Value,
    subresource: Option<Subresource>,
    namespace: Option<&str>,
    name: &str,
) {
    match subresource {
        // `/status` changes the status only (and managedFields, tracked per request, and
        // the metadata the kind's status strategy lets through).
        Some(Subresource::Status) => {
            let status = new.get("status").cloned();
            let metadata = taken_metadata(new, through);
            *new = old.clone();
            set_top(new, "status", status);
            for (field, value) in metadata {
                set_meta(new, field, value);
            }
        }
        // The Scale already wrote its path into a copy of the stored object.
        Some(Subresource::Scale) => {}
        // Another subresource changes its fields only (and managedFields, per request, and
        // the metadata the kind's strategy for it lets through).
        Some(Subresource::Fields(name)) => {
            let paths = super::object::fields_of(info, name).unwrap_or_default();
            let taken: Vec<_> = (paths.iter())
                .map(|path| (*path, kapi_core::unstructured::get_path(new, path).cloned()))
                .collect();
            let metadata = taken_metadata(new, through);
            *new = old.clone();
            for (path, value) in taken {
                match value {
                    Some(value) => kapi_core::unstructured::set_path(new, path, value),
                    None => kapi_core::unstructured::remove_path(new, path),
                }
            }
            for (field, value) in metadata {
                set_meta(new, field, value);
            }
        }
        // `/finalize` replaces all but the status (kube's finalize strategy).
        Some(Subresource::Finalize) => set_top(new, "status", old.get("status").cloned()),
        None if info.subresources.status => set_top(new, "status", old.get("status").cloned()),
        None => {}
    }
    let old_meta = |field: &str| meta(old).and_then(|m| m.get(field)).cloned();
    for kept in ["creationTimestamp", "deletionTimestamp", "generation"] {
        set_meta(new, kept, old_meta(kept));
    }
    // An update without a uid keeps the stored one; a different one fails validation.
    if meta_str(new, "uid").is_none() {
        set_meta(new, "uid", old_meta("uid"));
    }
    if meta(new)
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .is_none()
    {
        set_meta(
            new,
            "deletionGracePeriodSeconds",
            old_meta("deletionGracePeriodSeconds"),
        );
    }
    for cleared in ["resourceVersion", "selfLink"] {
        set_meta(new, cleared, None);
    }
    set_meta(new, "name", Some(Value::String(name.to_owned())));
    let namespace = match info.scope {
        Scope::Namespaced => namespace.map(|n| Value::String(n.to_owned())),
        Scope::Cluster => None,
    };
    set_meta(new, "namespace", namespace);
}

/// The metadata a subresource write keeps from the request: `managedFields` (tracked per
/// request) and the fields `through`.
fn taken_metadata<'a>(new: &Value, through: &[&'a str]) -> Vec<(&'a str, Option<Value>)> {
    (["managedFields"].iter().chain(through))
        .map(|field| (*field, meta(new).and_then(|m| m.get(*field)).cloned()))
        .collect()
}

fn set_top(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(fields) = object.as_object_mut() {
        match value {
            Some(value) => {
                fields.insert(field.to_owned(), value);
            }
            None => {
                fields.remove(field);
            }
        }
    }
}

/// Whether an update moves `metadata.generation`, as the kind whose objects these are
/// says ([`Generation`]).
pub(super) fn generation_moves(info: &'static KindInfo, new: &Value, old: &Value) -> bool {
    match info.storage_kind().generation {
        Generation::Object => spec_changed(info.subresources.status, new, old),
        Generation::Paths(paths) => (paths.iter()).any(|path| !same(at(new, path), at(old, path))),
        Generation::Created | Generation::Untracked => false,
    }
}

/// The value at a simple JSON path (`.metadata.annotations`).
fn at<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    (path.split('.').filter(|step| !step.is_empty())).try_fold(value, |here, step| here.get(step))
}

/// Whether two values are equal as kube's semantic equality has it: a missing, null or
/// empty map or list is the same as another (Go's nil and empty).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(map)) => map.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    };
    if empty(a) && empty(b) {
        return true;
    }
    match (a, b) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            // Each key once: a key in both visited twice doubles the work at every level.
            let only_b = b.keys().filter(|key| !a.contains_key(*key));
            (a.keys().chain(only_b)).all(|key| same(a.get(key), b.get(key)))
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(Some(a), Some(b)))
        }
        (a, b) => a == b,
    }
}

/// Whether anything but metadata (and status, for kinds with a status subresource)
/// differs: what makes a custom resource's `metadata.generation` move. Compared field by
/// field in place (a copy of each object without those fields cost two whole copies per
/// update).
fn spec_changed(status_subresource: bool, new: &Value, old: &Value) -> bool {
    let compared = |field: &str| field != "metadata" && !(status_subresource && field == "status");
    let empty = Map::new();
    let new = new.as_object().unwrap_or(&empty);
    let old = old.as_object().unwrap_or(&empty);
    let count = |fields: &Map<String, Value>| fields.keys().filter(|f| compared(f)).count();
    count(new) != count(old)
        || (new.iter())
            .filter(|(field, _)| compared(field))
            .any(|(field, value)| old.get(field) != Some(value))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{same, spec_changed};

    /// Metadata never counts, status only for kinds without a status subresource; added,
    /// removed and changed fields do, whatever the order.
    #[test]
    fn only_the_spec_moves_the_generation() {
        let old = json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"y": 1}});
        let same = json!({"status": {"y": 1}, "spec": {"x": 1}, "metadata": {"name": "b"}});
        let status = json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"y": 2}});
        let spec = json!({"metadata": {"name": "a"}, "spec": {"x": 2}, "status": {"y": 1}});
        let added = json!({"metadata": {}, "spec": {"x": 1}, "status": {"y": 1}, "z": 0});
        let removed = json!({"metadata": {}, "status": {"y": 1}});
        assert!(!spec_changed(false, &same, &old));
        assert!(spec_changed(false, &status, &old));
        for changed in [&spec, &added, &removed] {
            assert!(spec_changed(false, changed, &old), "{changed}");
        }
        assert!(!spec_changed(true, &status, &old));
        assert!(spec_changed(true, &spec, &old));
        assert!(!spec_changed(true, &json!(null), &json!({"metadata": {}})));
    }

    /// A kind's paths compare as kube's semantic equality: nil and empty alike, deeply.
    #[test]
    fn paths_compare_nil_and_empty_alike() {
        let old = json!({"metadata": {"annotations": {}}, "spec": {"a": [], "b": {"c": 1}}});
        let new = json!({"metadata": {}, "spec": {"b": {"c": 1, "d": null}}});
        let at = |v: &serde_json::Value, path| super::at(v, path).cloned();
        for path in [".spec", ".metadata.annotations", ".missing"] {
            assert!(
                same(at(&new, path).as_ref(), at(&old, path).as_ref()),
                "{path}"
            );
        }
        let changed = json!({"metadata": {"annotations": {"x": "1"}}, "spec": {"b": {"c": 2}}});
        for path in [".spec", ".metadata.annotations"] {
            assert!(
                !same(at(&changed, path).as_ref(), at(&old, path).as_ref()),
                "{path}"
            );
        }
        assert!(!same(Some(&json!(0)), None), "a zero is not nothing");
    }

    /// Deep objects (a CRD's schema) compare in time linear in their size: each key is
    /// visited once (visiting shared keys twice doubled the work per level, and a CRD's
    /// status write spun).
    #[test]
    fn deep_objects_compare_in_linear_time() {
        let mut deep = json!(1);
        for _ in 0..64 {
            deep = json!({"properties": deep});
        }
        assert!(same(Some(&deep), Some(&deep.clone())));
    }
}
