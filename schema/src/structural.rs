//! A compiled kind's schema as one self-contained structural schema, as a
//! CustomResourceDefinition's `openAPIV3Schema` is: every `$ref` replaced by the component
//! it names. kube's rules engine, its definition checks and a CustomResourceDefinition made
//! from a kind all read schemas of that shape; the documents kapi serves keep their
//! components.
//!
//! A property written as `allOf: [{$ref}]` beside its own keywords (the documents' style,
//! which keeps a field's description apart from its type's) becomes the component with the
//! property's keywords laid over it, its rules after the component's. At a resource's root,
//! `metadata` is `{"type": "object"}`, as a definition has it (kube gives rules `name` and
//! `generateName` there itself).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::SchemaError;

/// Where `$ref`s point.
const PREFIX: &str = "#/components/schemas/";
/// The rules' keyword.
const RULES: &str = "x-kubernetes-validations";

/// The components a `$ref` may name, looked up by name.
pub type Lookup<'a> = dyn Fn(&str) -> Result<Option<Cow<'a, Value>>, SchemaError> + 'a;

/// The structural schema of the resource whose schema is component `root`.
pub fn inline_resource(root: &str, lookup: &Lookup<'_>) -> Result<Value, SchemaError> {
    let mut inliner = Inliner {
        lookup,
        stack: Vec::new(),
    };
    let mut schema = inliner.component(root)?;
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut)
        && properties.contains_key("metadata")
    {
        properties.insert("metadata".into(), serde_json::json!({"type": "object"}));
    }
    if let Some(object) = schema.as_object_mut() {
        object.remove("x-kubernetes-group-version-kind");
    }
    Ok(schema)
}

/// Whether component `root`, or any component it reaches, has validation rules.
pub fn reaches_rules(root: &str, lookup: &Lookup<'_>) -> Result<bool, SchemaError> {
    let mut seen = std::collections::HashSet::new();
    let mut pending = vec![root.to_owned()];
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(schema) = lookup(&name)? else {
            continue;
        };
        let mut found = false;
        walk(&schema, &mut |node| {
            if let Some(object) = node.as_object() {
                found |= object.contains_key(RULES);
                if let Some(reference) = object.get("$ref").and_then(Value::as_str)
                    && let Some(name) = reference.strip_prefix(PREFIX)
                {
                    pending.push(name.to_owned());
                }
            }
        });
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Calls `f` on every value within `value`, `value` first.
fn walk(value: &Value, f: &mut impl FnMut(&Value)) {
    f(value);
    match value {
        Value::Object(fields) => fields.values().for_each(|v| walk(v, f)),
        Value::Array(items) => items.iter().for_each(|v| walk(v, f)),
        _ => {}
    }
}

struct Inliner<'a, 'b> {
    lookup: &'b Lookup<'a>,
    /// The components being inlined, outermost first: a schema that reaches itself has no
    /// structural form.
    stack: Vec<String>,
}

impl Inliner<'_, '_> {
    fn component(&mut self, name: &str) -> Result<Value, SchemaError> {
        if self.stack.iter().any(|n| n == name) {
            return Err(SchemaError(format!(
                "{name} contains itself ({} -> {name}): a recursive type has no structural \
                 schema, so rules cannot be checked or applied on it",
                self.stack.join(" -> ")
            )));
        }
        let schema = (self.lookup)(name)?
            .ok_or_else(|| SchemaError(format!("no component {name} for a $ref to name")))?
            .into_owned();
        self.stack.push(name.to_owned());
        let inlined = self.node(schema);
        self.stack.pop();
        inlined
    }

    fn node(&mut self, schema: Value) -> Result<Value, SchemaError> {
        let Value::Object(mut fields) = schema else {
            return Ok(schema);
        };
        if let Some(reference) = fields.remove("$ref") {
            let target = self.reference(&reference)?;
            return Ok(overlay(target, fields));
        }
        if let Some(Value::Array(branches)) = fields.get("allOf")
            && let [only] = branches.as_slice()
            && let Some(reference) = only.get("$ref")
            && only.as_object().is_some_and(|o| o.len() == 1)
        {
            let target = self.reference(&reference.clone())?;
            fields.remove("allOf");
            return Ok(overlay(target, fields));
        }
        let mut out = Map::new();
        for (key, value) in fields {
            let value = match key.as_str() {
                "items" | "additionalProperties" | "not" => self.node(value)?,
                "properties" => match value {
                    Value::Object(properties) => Value::Object(
                        (properties.into_iter())
                            .map(|(name, schema)| Ok((name, self.node(schema)?)))
                            .collect::<Result<_, SchemaError>>()?,
                    ),
                    other => other,
                },
                "allOf" | "anyOf" | "oneOf" => match value {
                    Value::Array(branches) => Value::Array(
                        (branches.into_iter())
                            .map(|branch| self.node(branch))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other,
                },
                _ => value,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn reference(&mut self, reference: &Value) -> Result<Value, SchemaError> {
        let name = (reference.as_str())
            .and_then(|r| r.strip_prefix(PREFIX))
            .ok_or_else(|| SchemaError(format!("unsupported $ref {reference}")))?;
        self.component(name)
    }
}

/// `target` with `fields` (a property's own keywords) laid over it; rules from both.
fn overlay(mut target: Value, fields: Map<String, Value>) -> Value {
    let Some(object) = target.as_object_mut() else {
        return target;
    };
    for (key, value) in fields {
        match (key.as_str(), object.get_mut(&key), value) {
            (RULES, Some(Value::Array(rules)), Value::Array(more)) => rules.extend(more),
            (_, _, value) => {
                object.insert(key, value);
            }
        }
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn components() -> Map<String, Value> {
        json!({
            "App": {"type": "object", "x-kubernetes-group-version-kind": [{}], "properties": {
                "metadata": {"allOf": [{"$ref": "#/components/schemas/Meta"}]},
                "spec": {"description": "Desired.", "allOf": [{"$ref": "#/components/schemas/Spec"}],
                         "x-kubernetes-validations": [{"rule": "has(self.image)"}]},
                "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}}},
            "Meta": {"type": "object", "properties": {"name": {"type": "string"}}},
            "Spec": {"type": "object", "description": "A spec.",
                     "x-kubernetes-validations": [{"rule": "self.image != ''"}],
                     "properties": {"image": {"type": "string"}}},
            "Item": {"type": "object"},
            "Loop": {"type": "object", "properties": {"next": {"allOf": [{"$ref": "#/components/schemas/Loop"}]}}},
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn lookup<'a>(
        components: &'a Map<String, Value>,
    ) -> impl Fn(&str) -> Result<Option<Cow<'a, Value>>, SchemaError> + 'a {
        move |name| Ok(components.get(name).map(Cow::Borrowed))
    }

    #[test]
    fn references_are_inlined_with_the_propertys_keywords_over_them() {
        let components = components();
        let inlined = inline_resource("App", &lookup(&components)).unwrap();
        assert_eq!(
            inlined,
            json!({"type": "object", "properties": {
                "metadata": {"type": "object"},
                "spec": {"type": "object", "description": "Desired.",
                         "x-kubernetes-validations": [{"rule": "self.image != ''"}, {"rule": "has(self.image)"}],
                         "properties": {"image": {"type": "string"}}},
                "items": {"type": "array", "items": {"type": "object"}}}})
        );
        assert!(reaches_rules("App", &lookup(&components)).unwrap());
        assert!(!reaches_rules("Item", &lookup(&components)).unwrap());
    }

    #[test]
    fn a_recursive_type_is_refused() {
        let components = components();
        let error = inline_resource("Loop", &lookup(&components)).unwrap_err();
        assert!(error.0.contains("Loop contains itself"), "{error}");
    }
}
