//! Pruning: an object without the fields its schema does not declare, as kube prunes
//! custom resources (`apiextensions-apiserver/pkg/apiserver/schema/pruning`) when it decodes
//! them from a request or from storage.
//!
//! A field survives when a property of its object names it, when the object's
//! `additionalProperties` has a schema, or when the object (or a branch of it) says
//! `x-kubernetes-preserve-unknown-fields`; everything else goes, at any depth. An object's
//! own `apiVersion` and `kind` survive at the root and in an
//! `x-kubernetes-embedded-resource`, whose `metadata` is kept as sent unless its schema
//! declares it (kube prunes and checks it as an `ObjectMeta`: not yet here).
//!
//! Compiled kinds never need it: their version types drop what they do not declare while
//! decoding. The fields pruned from a request are what `fieldValidation` reports as unknown
//! (the registry finds them by decoding the body and comparing).

use serde_json::Value;

use super::schema_validation::KindSchema;

impl KindSchema<'_> {
    /// Removes from `object` every field its schema does not declare.
    pub fn prune(&self, object: &mut Value) {
        self.prune_node(self.root(), object, true);
    }

    /// Removes from `value` every field the schema's root does not declare, the root being
    /// any value rather than an object's root (a CustomResourceDefinition's default).
    pub(crate) fn prune_value(&self, value: &mut Value) {
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
