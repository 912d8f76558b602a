//! The API's own kinds as CustomResourceDefinitions (`apiextensions.k8s.io/v1`), for users
//! who also run them on kube-apiserver: each kind judged by its schema (not Kubernetes' own
//! kinds, which their strategies judge) with its names, scope, subresources, printer
//! columns and selectable fields, and each served version's schema in the structural form
//! a definition holds (`kapi_schema::structural`), its validation rules included, less
//! the vendor keywords a definition has no field for.

use serde_json::{Map, Value, json};

use crate::model::ApiModel;
use kapi_core::api::{KindInfo, PrinterColumn, VersionSchema};

/// Keywords the schemas carry that a definition's `JSONSchemaProps` has no field for.
const NOT_IN_DEFINITIONS: &[&str] = &[
    "x-kubernetes-group-version-kind",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kapi-immutable",
    "deprecated",
];

/// Each exported kind's definition, by file name (`<plural>.<group>.json`).
pub fn custom_resource_definitions(model: &ApiModel) -> Result<Vec<(String, Value)>, String> {
    let mut kinds: Vec<&'static KindInfo> = Vec::new();
    for (_, resource) in model.resources() {
        let kind = resource.kind;
        // A definition's group is a domain with a dot; kube's own (`""`, `*.k8s.io`) are
        // not for definitions.
        let group = kind.group;
        let own_group =
            !group.contains('.') || group.ends_with(".k8s.io") || group.ends_with(".kubernetes.io");
        let exported = !own_group
            && !kind.strategy_validates
            && !kind.create_only
            && !kind.read_only
            && kind.stored_with.is_none()
            && matches!(resource.version.schema, VersionSchema::Type(_));
        if exported && !kinds.iter().any(|k| std::ptr::eq(*k, kind)) {
            kinds.push(kind);
        }
    }
    kinds
        .into_iter()
        .map(|kind| definition(model, kind))
        .collect()
}

fn definition(model: &ApiModel, kind: &'static KindInfo) -> Result<(String, Value), String> {
    let mut versions = Vec::new();
    for version in kind.versions.iter().filter(|v| v.served) {
        let (gv, resource) = (model.resources())
            .find(|(gv, r)| {
                gv.group == kind.group && gv.version == version.name && std::ptr::eq(r.kind, kind)
            })
            .ok_or_else(|| format!("{} {} is not in the model", kind.kind, version.name))?;
        let lookup = |name: &str| Ok(gv.schemas.get(name).map(std::borrow::Cow::Borrowed));
        let mut schema = kapi_schema::structural::inline_resource(&resource.schema_name, &lookup)
            .map_err(|e| format!("{} {}: {e}", kind.kind, version.name))?;
        strip(&mut schema);
        let mut entry = json!({
            "name": version.name,
            "served": true,
            "storage": version.storage,
            "schema": {"openAPIV3Schema": schema},
        });
        if version.deprecated {
            entry["deprecated"] = json!(true);
            if let Some(warning) = version.deprecation_warning {
                entry["deprecationWarning"] = json!(warning);
            }
        }
        let mut subresources = Map::new();
        if kind.subresources.status {
            subresources.insert("status".into(), json!({}));
        }
        if let Some(scale) = &kind.subresources.scale {
            let mut shown = json!({
                "specReplicasPath": scale.spec_replicas_path,
                "statusReplicasPath": scale.status_replicas_path,
            });
            if let Some(selector) = scale.label_selector_path {
                shown["labelSelectorPath"] = json!(selector);
            }
            subresources.insert("scale".into(), shown);
        }
        if !subresources.is_empty() {
            entry["subresources"] = Value::Object(subresources);
        }
        let columns = version.printer_columns.unwrap_or(kind.printer_columns);
        if !columns.is_empty() {
            entry["additionalPrinterColumns"] = columns.iter().map(column).collect();
        }
        if !kind.selectable_fields.is_empty() {
            let fields = kind
                .selectable_fields
                .iter()
                .map(|f| json!({"jsonPath": f.path}));
            entry["selectableFields"] = fields.collect();
        }
        versions.push(entry);
    }
    let mut names = json!({
        "plural": kind.plural,
        "singular": kind.singular,
        "kind": kind.kind,
        "listKind": format!("{}List", kind.kind),
    });
    if !kind.short_names.is_empty() {
        names["shortNames"] = json!(kind.short_names);
    }
    if !kind.categories.is_empty() {
        names["categories"] = json!(kind.categories);
    }
    let name = format!("{}.{}", kind.plural, kind.group);
    let definition = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": kind.group,
            "names": names,
            "scope": kind.scope.as_str(),
            "versions": versions,
        }
    });
    Ok((format!("{name}.json"), definition))
}

/// A printer column as a definition declares it.
fn column(column: &PrinterColumn) -> Value {
    let mut shown =
        json!({"name": column.name, "type": column.column_type, "jsonPath": column.json_path});
    if column.priority != 0 {
        shown["priority"] = json!(column.priority);
    }
    if !column.format.is_empty() {
        shown["format"] = json!(column.format);
    }
    if !column.description.is_empty() {
        shown["description"] = json!(column.description);
    }
    shown
}

/// Drops what a definition's schema has no field for, at every node.
fn strip(schema: &mut Value) {
    let Value::Object(fields) = schema else {
        return;
    };
    for key in NOT_IN_DEFINITIONS {
        fields.remove(*key);
    }
    for (key, value) in fields.iter_mut() {
        match key.as_str() {
            "properties" => value
                .as_object_mut()
                .into_iter()
                .flat_map(|p| p.values_mut())
                .for_each(strip),
            "items" | "additionalProperties" | "not" => strip(value),
            "allOf" | "anyOf" | "oneOf" => {
                value.as_array_mut().into_iter().flatten().for_each(strip)
            }
            _ => {}
        }
    }
}
