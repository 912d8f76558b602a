//! Swagger 2.0: the document of the whole API (`/openapi/v2`), as kube-apiserver serves it.
//!
//! The same operations as the [`v3`](super::v3) documents, with two differences that come
//! from holding every group-version in one document:
//! - operation ids are kube-apiserver's document-wide ones, with the group and version after
//!   the verb (`listAppsExampleDevV1NamespacedWebApp`, `readCoreV1Namespace`);
//! - `definitions` is the union of every group-version's schemas, so a name two
//!   group-versions define differently is an error.
//!
//! Schemas are converted from OpenAPI 3.0 (references into `#/definitions/`, a single-`$ref`
//! `allOf` as a plain `$ref`, no `nullable`/`writeOnly`/`oneOf`/`anyOf`/`not`); kubectl 1.20
//! reads them through [`v2_proto`](super::v2_proto) to validate and explain.

use std::collections::HashMap;

use indexmap::IndexMap;
use kapi_core::api::Method;
use serde_json::{Map, Value, json};

use super::plan::{JSON_YAML, OperationPlan, Param, kube_operation_id, plan};
use super::schema::{DEFINITION_REF_PREFIX, document_schemas, to_swagger2};
use super::{Error, TITLE, VERSION};
use crate::ApiModel;

/// The Swagger 2.0 document of the whole API.
pub fn render(model: &ApiModel) -> Result<Value, Error> {
    let mut definitions: IndexMap<String, (Value, String)> = IndexMap::new();
    let mut paths: IndexMap<String, Value> = IndexMap::new();
    // Operation id -> `METHOD path`, to keep ids unique across the document.
    let mut ids: HashMap<String, String> = HashMap::new();
    // A kind's schema that another group-version nests (`StatefulSet`'s
    // `volumeClaimTemplates` are `PersistentVolumeClaim`s) is the kind's in the one
    // document, with its `apiVersion`, `kind` and group-version-kind, as kube's is.
    let kinds: std::collections::HashSet<&str> = model
        .group_versions()
        .flat_map(|gv| gv.resources.iter().map(|r| r.schema_name.as_str()))
        .collect();
    for gv in model.group_versions() {
        let api_version = gv.api_version();
        for (name, schema) in document_schemas(gv) {
            if kinds.contains(name.as_str()) && !gv.resources.iter().any(|r| r.schema_name == name)
            {
                continue;
            }
            let schema = match gv.given.contains(&name) {
                true => to_swagger2(&super::schema::definition_v2(&schema)),
                false => to_swagger2(&schema),
            };
            match definitions.get(&name) {
                Some((existing, first)) if *existing != schema => {
                    return Err(Error::DefinitionConflict {
                        name,
                        first: first.clone(),
                        second: api_version,
                    });
                }
                Some(_) => {}
                None => {
                    definitions.insert(name, (schema, api_version.clone()));
                }
            }
        }
        for path in plan(gv)? {
            let mut item = Map::new();
            let mut operations: Vec<&OperationPlan> = path.operations.iter().collect();
            // As kube's document orders them (JSON object keys sorted).
            operations.sort_by_key(|o| method_key(o.route.method));
            for operation in operations {
                let id = kube_operation_id(operation.route)?;
                let at = format!(
                    "{} {}",
                    operation.route.method.as_str(),
                    operation.route.path
                );
                if let Some(first) = ids.insert(id.clone(), at.clone()) {
                    return Err(Error::DuplicateOperationId {
                        id,
                        first,
                        second: at,
                    });
                }
                item.insert(
                    method_key(operation.route.method).into(),
                    render_operation(operation, id),
                );
            }
            if !path.parameters.is_empty() {
                item.insert(
                    "parameters".into(),
                    path.parameters.iter().map(parameter).collect(),
                );
            }
            item.sort_keys();
            paths.insert(path.path.to_owned(), Value::Object(item));
        }
    }
    paths.sort_keys();
    definitions.sort_keys();
    let definitions: Map<String, Value> = definitions
        .into_iter()
        .map(|(name, (schema, _))| (name, schema))
        .collect();
    Ok(json!({
        "swagger": "2.0",
        "info": {"title": TITLE, "version": VERSION},
        "consumes": JSON_YAML,
        "produces": JSON_YAML,
        "paths": paths,
        "definitions": definitions,
    }))
}

fn method_key(method: Method) -> &'static str {
    match method {
        Method::Get => "get",
        Method::Post => "post",
        Method::Put => "put",
        Method::Patch => "patch",
        Method::Delete => "delete",
        Method::Head => "head",
        Method::Options => "options",
    }
}

fn render_operation(plan: &OperationPlan, operation_id: String) -> Value {
    let mut operation = Map::new();
    let mut parameters = Vec::new();
    if let Some(body) = &plan.body {
        operation.insert("consumes".into(), json!(body.consumes));
        let mut param = json!({
            "in": "body",
            "name": "body",
            "schema": {"$ref": format!("{DEFINITION_REF_PREFIX}{}", body.schema)},
        });
        if body.required {
            param["required"] = json!(true);
        }
        parameters.push(param);
    }
    parameters.extend(plan.parameters.iter().map(parameter));
    operation.insert("description".into(), json!(plan.description));
    operation.insert("operationId".into(), json!(operation_id));
    if !parameters.is_empty() {
        operation.insert("parameters".into(), Value::Array(parameters));
    }
    operation.insert("produces".into(), json!(plan.produces));
    let responses: Map<String, Value> = (plan.responses.iter())
        .map(|r| {
            let mut response = json!({"description": r.description});
            if let Some(schema) = &r.schema {
                response["schema"] = json!({"$ref": format!("{DEFINITION_REF_PREFIX}{schema}")});
            }
            if r.text {
                response["schema"] = json!({"type": "string"});
            }
            (r.code.to_string(), response)
        })
        .collect();
    operation.insert("responses".into(), Value::Object(responses));
    operation.insert("tags".into(), json!([plan.tag]));
    if plan.deprecated {
        operation.insert("deprecated".into(), json!(true));
    }
    operation.insert(
        "x-kubernetes-action".into(),
        json!(plan.route.action.as_str()),
    );
    operation.insert("x-kubernetes-group-version-kind".into(), plan.gvk.clone());
    Value::Object(operation)
}

/// A Swagger 2.0 path or query parameter (with kube's `uniqueItems: true`).
fn parameter(param: &Param) -> Value {
    let mut value = json!({
        "description": param.description,
        "in": param.location.as_str(),
        "name": param.name,
        "type": param.param_type,
        "uniqueItems": true,
    });
    if param.required() {
        value["required"] = json!(true);
    }
    value
}
