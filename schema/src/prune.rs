//! Pruning: an object without the fields its schema does not declare, as kube prunes
//! custom resources (`apiextensions-apiserver/pkg/apiserver/schema/pruning`) when it decodes
//! them from a request or from storage.
//!
//! A field survives when a property of its object names it, when the object's
//! `additionalProperties` has a schema, or when the object (or a branch of it) says
//! `x-kubernetes-preserve-unknown-fields`; everything else goes, at any depth. An object's
//! own `apiVersion` and `kind` survive at the root and in an
//! `x-kubernetes-embedded-resource`, whose `metadata` pruning leaves to coercion.
//!
//! Then, as kube's `schemaobjectmeta.Coerce`, each embedded resource's `metadata` is read
//! as an `ObjectMeta` and written back, which drops what `ObjectMeta` does not know
//! ([`KindSchema::coerce`]).
//!
//! Compiled kinds never need it: their version types drop what they do not declare while
//! decoding. The fields pruned from a request are what `fieldValidation` reports as unknown
//! (the registry finds them by decoding the body and comparing).

use serde_json::Value;

use crate::schemas::KindSchema;
use kapi_core::meta::ObjectMeta;

impl KindSchema<'_> {
    /// Removes from `object` every field its schema does not declare.
    pub fn prune(&self, object: &mut Value) {
        self.prune_node(self.root(), object, true);
    }

    /// Removes from `value` every field the schema's root does not declare, the root being
    /// any value rather than an object's root (a CustomResourceDefinition's default).
    pub fn prune_value(&self, value: &mut Value) {
        self.prune_node(self.root(), value, false);
    }

    fn prune_node(&self, id: usize, value: &mut Value, resource: bool) {
        let view = self.view(id);
        match value {
            Value::Object(fields) => {
                let resource = resource || view.any(|n| n.embedded);
                let preserve = view.any(|n| n.preserve_unknown);
                let additional = view.first(|n| n.additional);
                fields.retain(|name, field| {
                    let declared = (view.properties()).find(|(property, _)| property == name);
                    let schema = declared.map(|(_, child)| *child).or(additional);
                    match schema {
                        Some(child) => {
                            self.prune_node(child, field, false);
                            true
                        }
                        None => {
                            preserve
                                || (resource
                                    && matches!(name.as_str(), "apiVersion" | "kind" | "metadata"))
                        }
                    }
                });
            }
            Value::Array(items) => {
                if let Some(item) = view.first(|n| n.items) {
                    for value in items {
                        self.prune_node(item, value, false);
                    }
                }
            }
            _ => {}
        }
    }
}

impl KindSchema<'_> {
    /// kube's `schemaobjectmeta.Coerce` below the root, dropping what is malformed: in
    /// every embedded resource of `object`, an `apiVersion` or `kind` must be a string and
    /// `metadata` is read as an `ObjectMeta` and written back (unknown fields dropped).
    pub fn coerce(&self, object: &mut Value) {
        self.coerce_node(self.root(), object, true);
    }

    fn coerce_node(&self, id: usize, value: &mut Value, root: bool) {
        let view = self.view(id);
        match value {
            Value::Object(fields) => {
                if !root && view.any(|n| n.embedded) {
                    coerce_embedded(fields);
                }
                let additional = view.first(|n| n.additional);
                for (name, field) in fields.iter_mut() {
                    if root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    let declared = (view.properties()).find(|(property, _)| property == name);
                    if let Some(child) = declared.map(|(_, child)| *child).or(additional) {
                        self.coerce_node(child, field, false);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = view.first(|n| n.items) {
                    for value in items {
                        self.coerce_node(item, value, false);
                    }
                }
            }
            _ => {}
        }
    }
}

/// One embedded resource's type and object meta (its fields), as kube coerces them when it
/// reads an object: an `apiVersion` or `kind` that is not a string goes, and so do the
/// fields of `metadata` that do not read as an `ObjectMeta`'s (a request with such fields
/// is refused before: [`super::validation::embedded_resource`]).
fn coerce_embedded(fields: &mut serde_json::Map<String, Value>) {
    fields.retain(|key, value| !matches!(key.as_str(), "apiVersion" | "kind") || value.is_string());
    let Some(Value::Object(metadata)) = fields.get_mut("metadata") else {
        return;
    };
    // Field by field, as kube's `GetObjectMeta` does when it drops malformed fields.
    metadata.retain(|key, value| {
        let single = Value::Object(std::iter::once((key.clone(), value.clone())).collect());
        serde_json::from_value::<ObjectMeta>(single).is_ok()
    });
    if let Ok(meta) = serde_json::from_value::<ObjectMeta>(Value::Object(metadata.clone())) {
        *metadata = match serde_json::to_value(meta) {
            Ok(Value::Object(known)) => known,
            _ => return,
        };
    }
}
