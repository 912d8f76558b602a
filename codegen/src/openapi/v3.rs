//! OpenAPI 3.0: the document of each group-version (`/openapi/v3/apis/<g>/<v>`, or
//! `/openapi/v3/api/v1`), and the `/openapi/v3` index pointing to them.
//!
//! kubectl 1.32 needs, per document: the resource paths, whose operations carry
//! `x-kubernetes-group-version-kind` as an object (`explain` finds the kind's schema
//! through it); the kind's schema in `components.schemas` with the same GVK in its
//! `x-kubernetes-group-version-kind` array; and on each PATCH operation a
//! `fieldValidation` query parameter, which tells kubectl the server validates fields
//! (so `--validate=strict` sends `fieldValidation=Strict` instead of validating locally).

use indexmap::IndexMap;
use kapi_core::api::Method;
use openapiv3::{
    Components, Info, MediaType, OpenAPI, Operation, Parameter, ParameterData,
    ParameterSchemaOrContent, PathItem, PathStyle, Paths, QueryStyle, ReferenceOr, RequestBody,
    Response, Responses, Schema, SchemaData, SchemaKind, StatusCode, Type,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha512};

use super::plan::{Location, OperationPlan, Param, plan};
use super::schema::document_schemas;
use super::{Error, TITLE, VERSION};
use crate::GroupVersionModel;
use crate::model::SCHEMA_REF_PREFIX;

/// The OpenAPI 3.0 document of one group-version: every route of every resource as an
/// operation, and every schema of the group-version (plus the PATCH body schema).
pub fn render(gv: &GroupVersionModel) -> Result<OpenAPI, Error> {
    let mut components = Components::default();
    for (name, schema) in document_schemas(gv) {
        let typed = typed_schema(&schema).map_err(|message| Error::Schema {
            name: name.clone(),
            message,
        })?;
        components.schemas.insert(name, ReferenceOr::Item(typed));
    }
    let mut paths = Paths::default();
    for path in plan(gv)? {
        let mut item = PathItem {
            parameters: path.parameters.iter().map(parameter).collect(),
            ..PathItem::default()
        };
        for plan in &path.operations {
            let operation = Some(operation(plan));
            match plan.route.method {
                Method::Get => item.get = operation,
                Method::Post => item.post = operation,
                Method::Put => item.put = operation,
                Method::Patch => item.patch = operation,
                Method::Delete => item.delete = operation,
                Method::Head => item.head = operation,
                Method::Options => item.options = operation,
            }
        }
        paths
            .paths
            .insert(path.path.to_owned(), ReferenceOr::Item(item));
    }
    Ok(OpenAPI {
        openapi: "3.0.0".into(),
        info: Info {
            title: TITLE.into(),
            version: VERSION.into(),
            ..Info::default()
        },
        paths,
        components: Some(components),
        ..OpenAPI::default()
    })
}

/// A document as compact JSON.
pub fn to_json(document: &OpenAPI) -> Vec<u8> {
    // Serializing derived structs with string keys into memory cannot fail.
    serde_json::to_vec(document).expect("an OpenAPI document serializes to JSON")
}

/// kube-apiserver's content hash of a document: SHA-512 of its bytes, upper-case hex.
pub fn hash(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// The `/openapi/v3` index of documents given as (`apis/<g>/<v>` key, hash) pairs:
/// `{"paths": {"apis/apps.example.dev/v1": {"serverRelativeURL": "/openapi/v3/apis/apps.example.dev/v1?hash=..."}}}`.
pub fn index_of(entries: impl IntoIterator<Item = (String, String)>) -> Value {
    let mut paths: IndexMap<String, Value> = (entries.into_iter())
        .map(|(key, hash)| {
            let url = format!("/openapi/v3/{key}?hash={hash}");
            (key, json!({"serverRelativeURL": url}))
        })
        .collect();
    paths.sort_keys();
    json!({"paths": paths})
}

/// The `openapiv3` form of a schema, checked to say all the JSON says: `openapiv3` ignores
/// keywords it has no field for, and a schema must not lose a constraint on the way.
fn typed_schema(schema: &Value) -> Result<Schema, String> {
    let typed: Schema = serde_json::from_value(schema.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if same(schema, &back) {
        Ok(typed)
    } else {
        Err(format!(
            "openapiv3 cannot represent it: {schema} reads as {back}"
        ))
    }
}

/// JSON equality up to what serialization may change without changing meaning: number
/// representation (`1` and `1.0`), and `false`, `[]` or `{}` standing for an absent keyword.
fn same(a: &Value, b: &Value) -> bool {
    let absent = |v: &Value| {
        matches!(v, Value::Bool(false))
            || v.as_array().is_some_and(Vec::is_empty)
            || v.as_object().is_some_and(|o| o.is_empty())
    };
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        // Each pair of values compared once: comparing both ways at every level would
        // double the work per level, and a CustomResourceDefinition's schema is deep.
        (Value::Object(x), Value::Object(y)) => {
            (x.iter()).all(|(k, v)| match y.get(k) {
                Some(w) => same(v, w),
                None => absent(v),
            }) && (y.iter()).all(|(k, w)| x.contains_key(k) || absent(w))
        }
        _ => a == b,
    }
}

fn operation(plan: &OperationPlan) -> Operation {
    let request_body = plan.body.as_ref().map(|body| {
        ReferenceOr::Item(RequestBody {
            content: content(body.consumes, &body.schema),
            required: body.required,
            ..RequestBody::default()
        })
    });
    let responses = (plan.responses.iter())
        .map(|r| {
            let response = Response {
                description: r.description.into(),
                content: match (r.schema.as_deref(), r.text) {
                    (_, true) => text_content(plan.produces),
                    (Some(schema), false) => content(plan.produces, schema),
                    (None, false) => IndexMap::new(),
                },
                ..Response::default()
            };
            (StatusCode::Code(r.code), ReferenceOr::Item(response))
        })
        .collect();
    let extensions = IndexMap::from([
        (
            "x-kubernetes-action".to_owned(),
            json!(plan.route.action.as_str()),
        ),
        (
            "x-kubernetes-group-version-kind".to_owned(),
            plan.gvk.clone(),
        ),
    ]);
    Operation {
        tags: vec![plan.tag.clone()],
        description: Some(plan.description.clone()),
        operation_id: Some(plan.route.operation_id.to_owned()),
        parameters: plan.parameters.iter().map(parameter).collect(),
        request_body,
        responses: Responses {
            responses,
            ..Responses::default()
        },
        deprecated: plan.deprecated,
        extensions,
        ..Operation::default()
    }
}

fn content(content_types: &[&str], schema: &str) -> IndexMap<String, MediaType> {
    (content_types.iter())
        .map(|content_type| {
            let media = MediaType {
                schema: Some(ReferenceOr::ref_(&format!("{SCHEMA_REF_PREFIX}{schema}"))),
                ..MediaType::default()
            };
            ((*content_type).to_owned(), media)
        })
        .collect()
}

/// Each content type with a string schema: a log, what a connect answers.
fn text_content(content_types: &[&str]) -> IndexMap<String, MediaType> {
    (content_types.iter())
        .map(|content_type| {
            let schema = Schema {
                schema_data: SchemaData::default(),
                schema_kind: SchemaKind::Type(Type::String(Default::default())),
            };
            let media = MediaType {
                schema: Some(ReferenceOr::Item(schema)),
                ..MediaType::default()
            };
            ((*content_type).to_owned(), media)
        })
        .collect()
}

fn parameter(param: &Param) -> ReferenceOr<Parameter> {
    let schema_kind = match param.param_type {
        "integer" => Type::Integer(Default::default()),
        "boolean" => Type::Boolean(Default::default()),
        _ => Type::String(Default::default()),
    };
    let parameter_data = ParameterData {
        name: param.name.to_owned(),
        description: Some(param.description.clone()),
        required: param.required(),
        deprecated: None,
        format: ParameterSchemaOrContent::Schema(ReferenceOr::Item(Schema {
            schema_data: SchemaData::default(),
            schema_kind: SchemaKind::Type(schema_kind),
        })),
        example: None,
        examples: IndexMap::new(),
        explode: None,
        extensions: IndexMap::new(),
    };
    ReferenceOr::Item(match param.location {
        Location::Path => Parameter::Path {
            parameter_data,
            style: PathStyle::Simple,
        },
        Location::Query => Parameter::Query {
            parameter_data,
            allow_reserved: false,
            style: QueryStyle::Form,
            allow_empty_value: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_openapiv3_cannot_say_are_rejected() {
        let representable = json!({
            "type": "object",
            "properties": {
                "n": {"type": "number", "minimum": 1, "default": 0.5},
                "m": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
                "u": {"type": "array", "items": {"type": "string"}, "uniqueItems": false}
            },
            "required": []
        });
        assert!(typed_schema(&representable).is_ok());
        // JSON Schema keywords OpenAPI 3.0 does not have would be dropped silently.
        let lost = json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}});
        assert!(typed_schema(&lost).is_err(), "{:?}", typed_schema(&lost));
    }

    #[test]
    fn hash_is_upper_hex_sha512() {
        // `printf '' | sha512sum`
        assert_eq!(
            hash(b""),
            "CF83E1357EEFB8BDF1542850D66D8007D620E4050B5715DC83F4A921D36CE9CE47D0D13C5D85F2B0FF8318D2877EEC2F63B931BD47417A81A538327AF927DA3E"
        );
    }

    #[test]
    fn index_lists_documents_by_key() {
        let index = index_of([
            ("apis/apps.example.dev/v1".to_owned(), "AB".to_owned()),
            ("api/v1".to_owned(), "CD".to_owned()),
        ]);
        assert_eq!(
            index,
            json!({"paths": {
                "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=CD"},
                "apis/apps.example.dev/v1": {"serverRelativeURL": "/openapi/v3/apis/apps.example.dev/v1?hash=AB"}
            }})
        );
    }
}
