//! The compiled schemas of a kind a CustomResourceDefinition defines: its versions'
//! schemas as written, completed as kube serves custom resources (`apiVersion`, `kind`,
//! an `ObjectMeta` `metadata` from the compiled documents' meta types).

use serde_json::{Value, json};

use super::{META_PREFIX, SchemaError, Schemas};

impl Schemas {
    /// The schemas of a kind defined while the server runs (by a CustomResourceDefinition):
    /// `versions` gives each version's schema of the object as written (`openAPIV3Schema`),
    /// to which `apiVersion`, `kind` and `metadata` (an `ObjectMeta`, with what the
    /// definition says of it) are added, as kube serves custom resources.
    pub fn definition(
        &self,
        group: &str,
        kind: &str,
        versions: &[(&str, &Value)],
    ) -> Result<Schemas, SchemaError> {
        let mut components = self.meta.clone();
        // `FieldsV1` is any JSON (kube decodes it raw): pruning keeps what it holds.
        if let Some(Value::Object(fields_v1)) =
            components.get_mut(&format!("{META_PREFIX}FieldsV1"))
        {
            fields_v1.insert(
                "x-kubernetes-preserve-unknown-fields".into(),
                Value::Bool(true),
            );
        }
        let object_meta = format!("{META_PREFIX}ObjectMeta");
        if !components.contains_key(&object_meta) {
            return Err(SchemaError(format!(
                "no {object_meta} schema to build {kind}.{group}'s on"
            )));
        }
        let mut schemas = Schemas {
            formats: true,
            ..Schemas::default()
        };
        for (version, schema) in versions {
            let name = format!("{group}.{version}.{kind}");
            let mut schema = (*schema).clone();
            let Some(object) = schema.as_object_mut() else {
                return Err(SchemaError(format!("{name}: the schema is not an object")));
            };
            let properties = object.entry("properties").or_insert_with(|| json!({}));
            let Some(properties) = properties.as_object_mut() else {
                return Err(SchemaError(format!("{name}: properties is not an object")));
            };
            let metadata = json!({"$ref": format!("#/components/schemas/{object_meta}")});
            let metadata = match properties.remove("metadata") {
                Some(declared) => json!({"allOf": [metadata, declared]}),
                None => metadata,
            };
            properties.insert("metadata".into(), metadata);
            properties.insert("apiVersion".into(), json!({"type": "string"}));
            properties.insert("kind".into(), json!({"type": "string"}));
            components.insert(name.clone(), schema);
            let root = schemas.compile_component(&name, &components, &name)?;
            // Rules compile in the stored-expressions environment: what was accepted once
            // keeps compiling (kube's `StoredExpressions` loader).
            let features =
                kapi_cel::environment::stored_expressions(kapi_cel::environment::KUBERNETES);
            if let Some(rules) =
                kapi_cel::validation::Validator::new(version_schema(versions, version), &features)
            {
                schemas.rules.insert(root, std::sync::Arc::new(rules));
            }
            let key = (group.to_owned(), (*version).to_owned(), kind.to_owned());
            schemas.roots.insert(key, root);
        }
        Ok(schemas)
    }

    /// The description of `metadata.<field>` in the `ObjectMeta` schema, if known.
    pub fn metadata_description(&self, field: &str) -> Option<&str> {
        let object_meta = self.meta.get(&format!("{META_PREFIX}ObjectMeta"))?;
        (object_meta.pointer(&format!("/properties/{field}/description")))?.as_str()
    }
}

/// The schema `versions` gives `version`.
fn version_schema<'a>(versions: &[(&str, &'a Value)], version: &str) -> &'a Value {
    versions
        .iter()
        .find(|(v, _)| *v == version)
        .map(|(_, s)| *s)
        .expect("a listed version")
}
