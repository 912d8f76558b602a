//! Go's JSON rules for serde fields, which the built-in kinds' declarations name: a value
//! field is omitted when zero only under `omitempty` ([`is_zero`]), and `null` decodes to
//! a value field's zero ([`null_as_default`]), as Go's `encoding/json` reads it.

use serde::{Deserialize, Deserializer};

/// Whether a value is its type's zero (`""`, `0`, `false`): what `omitempty` omits.
pub fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A value, or its zero when the JSON has `null` (Go leaves a value field untouched by
/// `null`; kubectl and YAML manifests send it for empty fields).
pub fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A list Go writes without `omitempty`: empty is `null`, as Go writes the nil slice a
/// decoded object has where its JSON had none (`"rules": null`, `"currentMetrics": null`).
pub fn empty_list_as_null<S, T>(list: &[T], serializer: S) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    T: serde::Serialize,
{
    match list.is_empty() {
        true => serializer.serialize_none(),
        false => serializer.collect_seq(list),
    }
}

/// A map Go writes without `omitempty`: empty is `null`, as Go writes a nil map.
pub fn empty_map_as_null<S, K, V>(
    map: &std::collections::BTreeMap<K, V>,
    serializer: S,
) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    K: serde::Serialize,
    V: serde::Serialize,
{
    match map.is_empty() {
        true => serializer.serialize_none(),
        false => serializer.collect_map(map),
    }
}

/// The extension a generated field carries its `+default` marker's value in: kube's
/// published default, which [`drop_defaults`] makes the property's `default`.
pub const KUBE_DEFAULT: &str = "x-kapi-kube-default";

/// A schemars transform for kube's types marked `+structType=atomic`: the struct is one
/// value to server-side apply (`x-kubernetes-map-type: atomic`). A transform rather than an
/// `extend`, which schemars applies before transforms, so that it comes after
/// [`drop_defaults`].
pub fn atomic_struct(schema: &mut schemars::Schema) {
    schema.insert("x-kubernetes-map-type".into(), "atomic".into());
}

/// A schemars transform for kube's own types: their properties' `default`s are kube's
/// published ones. serde's `default` on a field (Go's zero for a missing field) is not
/// kube's default, and the registry would apply it: it is dropped; a `+default` marker's
/// value (in [`KUBE_DEFAULT`], as the generator writes it) takes its place, as kube's
/// OpenAPI has it (server-side apply reads it for a list-map key an item leaves out: a
/// Service port's `protocol`). An embedded (inlined) struct's `x-kubernetes-map-type` goes
/// too: flattening copies it into the struct that embeds it, where kube's OpenAPI has none
/// (a ConfigMap volume source, which embeds the atomic LocalObjectReference, is granular);
/// a struct's own marker is [`atomic_struct`], a transform after this one.
pub fn drop_defaults(schema: &mut schemars::Schema) {
    if let Some(object) = schema.as_object_mut() {
        object.remove("x-kubernetes-map-type");
    }
    if let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    {
        for property in properties.values_mut() {
            if let Some(property) = property.as_object_mut() {
                property.remove("default");
                if let Some(default) = property.remove(KUBE_DEFAULT) {
                    property.insert("default".into(), default);
                }
            }
        }
    }
}
