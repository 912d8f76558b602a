//! The OpenAPI renderers on the example API: every route of every resource becomes the
//! operation kubectl and the clients expect, every schema the one the types declare, in the
//! v3 documents, the v2 document and its protobuf encoding.
//!
//! The checks walk the model (every group-version, resource and route) and look each one
//! up in the rendered documents, so a new kind or route is covered without a new test.

use std::collections::{BTreeSet, HashMap};

use kapi_codegen::openapi::v2_proto::messages::{self, additional_properties_item};
use kapi_codegen::openapi::{self, Error, v2, v2_proto, v3};
use kapi_codegen::{ApiModel, GroupVersionModel, ModelError, ResourceModel};
use kapi_core::api::{Action, KindInfo, Method, Route, SubresourceShape};
use serde_json::{Value, json};

fn kinds() -> Vec<&'static KindInfo> {
    api_types::KINDS.to_vec()
}

fn model() -> ApiModel {
    ApiModel::build(&kinds()).expect("the example API makes a model")
}

fn v3_json(gv: &GroupVersionModel) -> Value {
    let document = v3::render(gv).unwrap_or_else(|e| panic!("{}: {e}", gv.api_version()));
    serde_json::to_value(document).unwrap()
}

/// What the server accepts, in kube-apiserver's order. kubectl 1.32's client-side apply
/// sends a strategic merge patch only when the PATCH operation lists it.
const PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// kube-apiserver's description of PATCH's `force` (`PatchOptions.Force`).
const FORCE_DESCRIPTION: &str = "Force is going to \"force\" Apply requests. It means user will \
    re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply \
    patch requests.";

/// The description of the query parameter `name` of an operation, wherever it is declared.
fn query_description<'a>(path_item: &'a Value, operation: &'a Value, name: &str) -> &'a Value {
    let path_level = path_item["parameters"].as_array().into_iter().flatten();
    let operation_level = operation["parameters"].as_array().into_iter().flatten();
    (path_level.chain(operation_level))
        .find(|p| p["in"] == "query" && p["name"] == name)
        .map_or(&Value::Null, |p| &p["description"])
}

/// The query parameters kube-apiserver documents for an action (besides `pretty`).
fn expected_query_params(action: Action) -> BTreeSet<&'static str> {
    let list = [
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ];
    let write = ["dryRun", "fieldManager", "fieldValidation"];
    let delete = ["dryRun", "gracePeriodSeconds", "propagationPolicy"];
    let names: Vec<&str> = match action {
        Action::Get | Action::Connect => vec![],
        Action::List | Action::Watch | Action::WatchList => list.to_vec(),
        Action::Create | Action::Update => write.to_vec(),
        Action::Patch => [&write[..], &["force"]].concat(),
        Action::Delete => delete.to_vec(),
        Action::DeleteCollection => {
            let from_list = list
                .iter()
                .filter(|p| !["allowWatchBookmarks", "watch"].contains(p));
            delete.iter().chain(from_list).copied().collect()
        }
    };
    names.into_iter().chain(["pretty"]).collect()
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

fn expected_gvk(gv: &GroupVersionModel, kind: &KindInfo, route: &Route) -> Value {
    let other = (route.subresource).and_then(|name| kind.subresources.other(name));
    match other.map(|o| &o.shape) {
        _ if route.subresource == Some("scale") => {
            json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
        }
        Some(SubresourceShape::Create(body)) => {
            json!({"group": body.group, "kind": body.kind, "version": body.version})
        }
        Some(SubresourceShape::Connect { options, .. }) => {
            json!({"group": gv.group, "kind": options, "version": gv.version})
        }
        _ => json!({"group": gv.group, "kind": kind.kind, "version": gv.version}),
    }
}

/// A subresource that answers with another kind (`eviction`) or with text (`log`, `exec`),
/// as kube documents it: the body kind's schema and kind, or a string; a proxy's `path`.
fn check_other_subresource(
    shape: &SubresourceShape,
    resource: &ResourceModel,
    route: &Route,
    path_item: &Value,
    operation: &Value,
    at: &str,
) {
    match shape {
        SubresourceShape::Create(body) => {
            let name = route.subresource.unwrap();
            let schema = &resource.bodies.iter().find(|(s, _)| *s == name).unwrap().1;
            let reference = format!("#/components/schemas/{schema}");
            let content = &operation["requestBody"]["content"]["application/json"];
            assert_eq!(content["schema"]["$ref"], reference, "{at}");
            assert_eq!(
                operation["x-kubernetes-group-version-kind"],
                json!({"group": body.group, "kind": body.kind, "version": body.version}),
                "{at}"
            );
            let answer = &operation["responses"]["201"]["content"]["application/json"];
            assert_eq!(answer["schema"]["$ref"], reference, "{at}");
        }
        SubresourceShape::Read | SubresourceShape::Connect { .. } => {
            let answer = operation["responses"]["200"]["content"]
                .as_object()
                .unwrap();
            assert!(!answer.is_empty(), "{at}");
            for media in answer.values() {
                assert_eq!(media["schema"]["type"], "string", "{at}");
            }
            let path_param = parameter_names(path_item, operation, "path").contains(&"path");
            assert_eq!(path_param, route.path.ends_with("{path}"), "{at}");
        }
        SubresourceShape::Fields(_) => unreachable!("checked as the object"),
    }
}

/// Names of the parameters at `location`, from the path item and the operation.
fn parameter_names<'a>(path_item: &'a Value, operation: &'a Value, location: &str) -> Vec<&'a str> {
    let path_level = path_item["parameters"].as_array().into_iter().flatten();
    let operation_level = operation["parameters"].as_array().into_iter().flatten();
    (path_level.chain(operation_level))
        .filter(|p| p["in"] == location)
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

#[test]
fn v3_documents_have_every_route_as_kube_documents_it() {
    let model = model();
    for gv in model.group_versions() {
        let document = v3_json(gv);
        let at = gv.api_version();
        assert_eq!(document["openapi"], "3.0.0");
        assert_eq!(document["info"]["title"], "Kubernetes");
        let schemas = &document["components"]["schemas"];
        let mut operation_ids = BTreeSet::new();
        for resource in &gv.resources {
            for route in resource.routes() {
                let at = format!("{at} {} {}", route.method.as_str(), route.path);
                let path_item = &document["paths"][route.path];
                let operation = &path_item[method_key(route.method)];
                assert!(operation.is_object(), "{at}: missing");

                assert_eq!(operation["operationId"], route.operation_id, "{at}");
                assert!(
                    operation_ids.insert(route.operation_id),
                    "{at}: operation id used twice"
                );
                assert_eq!(
                    operation["x-kubernetes-action"],
                    route.action.as_str(),
                    "{at}"
                );
                let other = (route.subresource)
                    .and_then(|name| resource.kind.subresources.other(name))
                    .filter(|o| !matches!(o.shape, SubresourceShape::Fields(_)));
                if let Some(other) = other {
                    check_other_subresource(
                        &other.shape,
                        resource,
                        route,
                        path_item,
                        operation,
                        &at,
                    );
                    continue;
                }
                assert_eq!(
                    operation["x-kubernetes-group-version-kind"],
                    expected_gvk(gv, resource.kind, route),
                    "{at}"
                );
                assert_eq!(operation["tags"].as_array().map(Vec::len), Some(1), "{at}");
                assert!(
                    operation["description"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty()),
                    "{at}"
                );
                assert_eq!(
                    operation["deprecated"].as_bool().unwrap_or(false),
                    resource.version.deprecated,
                    "{at}"
                );

                // Path parameters: on the path item, required, one per template variable.
                let path_params: Vec<_> = path_item["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["in"] == "path")
                    .collect();
                let mut names: Vec<&str> = path_params
                    .iter()
                    .map(|p| p["name"].as_str().unwrap())
                    .collect();
                names.sort_unstable();
                let mut expected = Vec::new();
                if route.is_object() {
                    expected.push("name");
                }
                if route.is_namespaced() {
                    expected.push("namespace");
                }
                assert_eq!(names, expected, "{at}");
                assert!(
                    path_params
                        .iter()
                        .all(|p| p["required"] == true && p["schema"]["type"] == "string"),
                    "{at}"
                );
                assert!(
                    parameter_names(path_item, operation, "path").len() == expected.len(),
                    "{at}: path parameters repeated"
                );

                // Query parameters: exactly kube's, each once.
                let query = parameter_names(path_item, operation, "query");
                let unique: BTreeSet<&str> = query.iter().copied().collect();
                assert_eq!(
                    unique.len(),
                    query.len(),
                    "{at}: a query parameter twice: {query:?}"
                );
                assert_eq!(unique, expected_query_params(route.action), "{at}");
                if route.action == Action::Patch {
                    assert_eq!(
                        query_description(path_item, operation, "force"),
                        FORCE_DESCRIPTION,
                        "{at}"
                    );
                }

                // Request bodies.
                let body = &operation["requestBody"];
                let object_schema = if route.subresource == Some("scale") {
                    "io.k8s.api.autoscaling.v1.Scale".to_owned()
                } else {
                    resource.schema_name.clone()
                };
                let body_schema = match route.action {
                    Action::Create | Action::Update => Some(object_schema.as_str()),
                    Action::Patch => Some("io.k8s.apimachinery.pkg.apis.meta.v1.Patch"),
                    Action::Delete | Action::DeleteCollection => {
                        Some("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
                    }
                    _ => None,
                };
                match body_schema {
                    None => assert!(body.is_null(), "{at}: unexpected body"),
                    Some(schema) => {
                        let content = body["content"].as_object().unwrap();
                        let types: Vec<&str> = content.keys().map(String::as_str).collect();
                        if route.action == Action::Patch {
                            assert_eq!(types, PATCH_TYPES, "{at}");
                            // kubectl 1.32 trusts the server's field validation only when
                            // the PATCH operation itself lists fieldValidation.
                            let own: Vec<_> = operation["parameters"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|p| &p["name"])
                                .collect();
                            assert!(own.contains(&&json!("fieldValidation")), "{at}");
                        } else {
                            assert!(types.contains(&"application/json"), "{at}");
                            assert!(
                                !types
                                    .iter()
                                    .any(|t| t.contains("patch") || t.contains("apply")),
                                "{at}"
                            );
                        }
                        for media in content.values() {
                            assert_eq!(
                                media["schema"]["$ref"],
                                format!("#/components/schemas/{schema}"),
                                "{at}"
                            );
                        }
                        let required =
                            !matches!(route.action, Action::Delete | Action::DeleteCollection);
                        assert_eq!(
                            body["required"].as_bool().unwrap_or(false),
                            required,
                            "{at}"
                        );
                    }
                }

                // Responses.
                let (codes, schema): (&[&str], &str) = match route.action {
                    Action::Get => (&["200"], &object_schema),
                    Action::List => (&["200"], &resource.list_schema_name),
                    Action::Watch | Action::WatchList => {
                        (&["200"], "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent")
                    }
                    Action::Create => (&["200", "201", "202"], &object_schema),
                    Action::Update | Action::Patch => (&["200", "201"], &object_schema),
                    Action::Delete => (
                        &["200", "202"],
                        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                    ),
                    Action::DeleteCollection => {
                        (&["200"], "io.k8s.apimachinery.pkg.apis.meta.v1.Status")
                    }
                    Action::Connect => unreachable!("connects are checked above"),
                };
                let responses = operation["responses"].as_object().unwrap();
                let actual: Vec<&str> = responses.keys().map(String::as_str).collect();
                assert_eq!(actual, [codes, &["401"]].concat(), "{at}");
                assert_eq!(responses["401"]["description"], "Unauthorized", "{at}");
                for code in codes {
                    let content = responses[*code]["content"].as_object().unwrap();
                    let mut types = vec!["application/json", "application/yaml"];
                    if matches!(
                        route.action,
                        Action::List | Action::Watch | Action::WatchList
                    ) {
                        types.push("application/json;stream=watch");
                    }
                    assert_eq!(
                        content.keys().map(String::as_str).collect::<Vec<_>>(),
                        types,
                        "{at} {code}"
                    );
                    for media in content.values() {
                        assert_eq!(
                            media["schema"]["$ref"],
                            format!("#/components/schemas/{schema}"),
                            "{at} {code}"
                        );
                    }
                }
                assert!(
                    schemas[&object_schema].is_object(),
                    "{at}: no schema {object_schema}"
                );
            }
        }
        // Nothing but the routes.
        let operations: usize = (document["paths"].as_object().unwrap().values())
            .map(|item| {
                ["get", "put", "post", "patch", "delete", "head", "options"]
                    .iter()
                    .filter(|m| item.get(**m).is_some())
                    .count()
            })
            .sum();
        assert_eq!(
            operations,
            gv.resources.iter().map(|r| r.routes().len()).sum::<usize>(),
            "{at}"
        );
        assert_refs_resolve(&document, "#/components/schemas/", schemas, &at);
    }
}

/// Every `$ref` in `value` names a schema of `schemas`.
fn assert_refs_resolve(value: &Value, prefix: &str, schemas: &Value, at: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if key == "$ref" {
                    let name = v
                        .as_str()
                        .and_then(|r| r.strip_prefix(prefix))
                        .unwrap_or_else(|| panic!("{at}: $ref {v}"));
                    assert!(
                        schemas.get(name).is_some(),
                        "{at}: $ref {name} does not resolve"
                    );
                } else {
                    assert_refs_resolve(v, prefix, schemas, at);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| assert_refs_resolve(v, prefix, schemas, at)),
        _ => {}
    }
}

/// Applies `f` to a schema and, recursively, to all its subschemas.
fn walk_schema(
    schema: &Value,
    at: &str,
    f: &mut impl FnMut(&serde_json::Map<String, Value>, &str),
) {
    let Some(map) = schema.as_object() else {
        return;
    };
    f(map, at);
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                for (name, property) in value.as_object().unwrap() {
                    walk_schema(property, &format!("{at}.{name}"), f);
                }
            }
            "items" | "additionalProperties" | "not" => {
                walk_schema(value, &format!("{at}.{key}"), f)
            }
            "allOf" | "anyOf" | "oneOf" => value
                .as_array()
                .unwrap()
                .iter()
                .for_each(|v| walk_schema(v, &format!("{at}.{key}"), f)),
            _ => {}
        }
    }
}

/// Fails on JSON Schema constructs that are not Kubernetes-style OpenAPI: type arrays,
/// `type: null`, `nullable`, `const`, null alternatives.
fn assert_kube_style(schemas: &Value, at: &str) {
    for (name, schema) in schemas.as_object().unwrap() {
        walk_schema(schema, &format!("{at}: {name}"), &mut |map, at| {
            if let Some(t) = map.get("type") {
                assert!(t.is_string() && t != "null", "{at}: type {t}");
            }
            for key in ["nullable", "const", "$schema", "$defs", "definitions"] {
                assert!(!map.contains_key(key), "{at}: {key}");
            }
        });
    }
}

/// The schema a property path leads to, following references (`$ref` or a single `allOf`)
/// and array items: `spec.container.ports[].containerPort`.
fn property<'a>(schemas: &'a Value, schema: &str, path: &str, ref_prefix: &str) -> &'a Value {
    let resolve = |mut s: &'a Value| -> &'a Value {
        loop {
            let reference = s.get("$ref").or_else(|| {
                s.get("allOf")
                    .and_then(|a| a.get(0))
                    .and_then(|a| a.get("$ref"))
            });
            match reference {
                Some(r) => s = &schemas[r.as_str().unwrap().strip_prefix(ref_prefix).unwrap()],
                None => return s,
            }
        }
    };
    let mut current = &schemas[schema];
    for segment in path.split('.') {
        let (name, items) = match segment.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (segment, false),
        };
        current = &resolve(current)["properties"][name];
        assert!(current.is_object(), "{schema}: no {path} (at {name})");
        if items {
            current = &resolve(current)["items"];
        }
    }
    current
}

/// The property with its reference (if any) resolved.
fn resolved<'a>(schemas: &'a Value, schema: &'a Value, ref_prefix: &str) -> &'a Value {
    match schema.get("$ref").or_else(|| {
        schema
            .get("allOf")
            .and_then(|a| a.get(0))
            .and_then(|a| a.get("$ref"))
    }) {
        Some(r) => &schemas[r.as_str().unwrap().strip_prefix(ref_prefix).unwrap()],
        None => schema,
    }
}

/// How a strategic merge patch treats a list: its `x-kubernetes-patch-strategy` and
/// `x-kubernetes-patch-merge-key` (`null` when absent).
fn patch_strategy(list: &Value) -> (&Value, &Value) {
    (
        &list["x-kubernetes-patch-strategy"],
        &list["x-kubernetes-patch-merge-key"],
    )
}

const META: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Table",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
];

/// What the example API's types declare, checked in one document's schemas. Returns the
/// kinds whose own fields were checked (`apps.example.dev/v1 WebApp`).
fn check_example_schemas(
    gv: &GroupVersionModel,
    schemas: &Value,
    ref_prefix: &str,
) -> BTreeSet<String> {
    let mut checked = BTreeSet::new();
    let at = gv.api_version();
    for name in META {
        assert!(schemas[name].is_object(), "{at}: no {name}");
    }
    // ObjectMeta declares its lists' patch extensions as kube does; they are kept.
    let meta = |path: &str| {
        property(
            schemas,
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            path,
            ref_prefix,
        )
    };
    assert_eq!(
        patch_strategy(meta("ownerReferences")),
        (&json!("merge"), &json!("uid")),
        "{at}"
    );
    assert_eq!(
        patch_strategy(meta("finalizers")),
        (&json!("merge"), &Value::Null),
        "{at}"
    );
    assert_eq!(
        patch_strategy(meta("managedFields")),
        (&Value::Null, &Value::Null),
        "{at}: a list without list type"
    );
    let scales = gv
        .resources
        .iter()
        .any(|r| r.kind.subresources.scale.is_some());
    if ref_prefix == "#/components/schemas/" {
        // A group-version's document has Scale only when one of its kinds scales.
        assert_eq!(
            schemas["io.k8s.api.autoscaling.v1.Scale"].is_object(),
            scales,
            "{at}: Scale"
        );
    }
    if scales {
        assert_eq!(
            schemas["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"],
            json!([{"group": "autoscaling", "kind": "Scale", "version": "v1"}])
        );
    }
    for resource in &gv.resources {
        let kind = resource.kind.kind;
        let gvk = |kind: &str| json!([{"group": gv.group, "kind": kind, "version": gv.version}]);
        assert_eq!(
            schemas[&resource.schema_name]["x-kubernetes-group-version-kind"],
            gvk(kind),
            "{at} {kind}"
        );
        assert_eq!(
            schemas[&resource.list_schema_name]["x-kubernetes-group-version-kind"],
            gvk(&format!("{kind}List")),
            "{at} {kind}"
        );
        assert_eq!(
            property(schemas, &resource.schema_name, "kind", ref_prefix)["type"],
            "string"
        );
        assert_eq!(
            property(schemas, &resource.schema_name, "apiVersion", ref_prefix)["type"],
            "string"
        );
        let metadata = property(schemas, &resource.schema_name, "metadata", ref_prefix);
        assert_eq!(
            resolved(schemas, metadata, ref_prefix),
            &schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"],
            "{at} {kind}"
        );
        let items = property(schemas, &resource.list_schema_name, "items[]", ref_prefix);
        assert_eq!(
            resolved(schemas, items, ref_prefix),
            &schemas[&resource.schema_name],
            "{at} {kind}List items"
        );

        let p = |path: &str| property(schemas, &resource.schema_name, path, ref_prefix);
        checked.insert(format!("{at} {kind}"));
        match (gv.group, gv.version, kind) {
            ("apps.example.dev", "v1", "WebApp") => {
                let replicas = p("spec.replicas");
                assert_eq!(
                    (
                        &replicas["default"],
                        &replicas["minimum"],
                        &replicas["maximum"]
                    ),
                    (&json!(1), &json!(0), &json!(1000))
                );
                assert_eq!(p("spec.container.image")["minLength"], 1);
                let ports = p("spec.container.ports");
                assert_eq!(ports["x-kubernetes-list-type"], "map");
                assert_eq!(
                    ports["x-kubernetes-list-map-keys"],
                    json!(["containerPort"])
                );
                // A list map with one key: strategic merge patch merges by that key.
                assert_eq!(
                    patch_strategy(ports),
                    (&json!("merge"), &json!("containerPort")),
                    "{at}"
                );
                assert_eq!(
                    patch_strategy(p("spec.container.env")),
                    (&json!("merge"), &json!("name")),
                    "{at}"
                );
                let port = p("spec.container.ports[].containerPort");
                assert_eq!(
                    (&port["minimum"], &port["maximum"]),
                    (&json!(1), &json!(65535))
                );
                let protocol = resolved(schemas, p("spec.container.ports[].protocol"), ref_prefix);
                assert_eq!(protocol["enum"], json!(["TCP", "UDP"]), "{at}");
                assert_eq!(
                    p("status.conditions")["x-kubernetes-list-map-keys"],
                    json!(["type"])
                );
                assert_eq!(
                    patch_strategy(p("status.conditions")),
                    (&json!("merge"), &json!("type")),
                    "{at}"
                );
                let spec = resolved(schemas, p("spec"), ref_prefix);
                assert_eq!(spec["required"], json!(["container"]), "{at}");
                assert_eq!(p("spec.paused")["default"], false, "{at}");
                assert_eq!(
                    p("spec.container.ports[].protocol")["default"],
                    "TCP",
                    "{at}: a default inside list items"
                );
                assert_eq!(p("spec.container.ports[].name")["x-kapi-immutable"], true);
                assert_eq!(
                    p("spec.container.env[].name")["pattern"],
                    "^[A-Za-z_][A-Za-z0-9_]*$"
                );
            }
            ("apps.example.dev", "v1beta1", "WebApp") => {
                assert_eq!(p("spec.replicas")["default"], 1);
                let port = p("spec.port");
                assert_eq!(
                    (&port["default"], &port["minimum"], &port["maximum"]),
                    (&json!(8080), &json!(1), &json!(65535))
                );
                assert_eq!(p("spec.image")["minLength"], 1);
                assert_eq!(
                    patch_strategy(p("status.conditions")),
                    (&json!("merge"), &json!("type")),
                    "{at}"
                );
            }
            ("platform.example.dev", "v1", "Tenant") => {
                let max = p("spec.quota.maxWebApps");
                assert_eq!((&max["default"], &max["minimum"]), (&json!(10), &json!(0)));
                assert_eq!(
                    p("spec.quota")["default"],
                    json!({"maxWebApps": 10}),
                    "{at}: a nested struct's default"
                );
                let owners = p("spec.owners");
                assert_eq!(
                    (
                        &owners["x-kubernetes-list-type"],
                        &owners["minItems"],
                        &owners["maxItems"]
                    ),
                    (&json!("set"), &json!(1), &json!(10))
                );
                // A set: strategic merge patch merges the values, no merge key.
                assert_eq!(
                    patch_strategy(owners),
                    (&json!("merge"), &Value::Null),
                    "{at}"
                );
                assert_eq!(p("spec.displayName")["maxLength"], 63);
                // A number's bounds: `0.0` in v3, `0` in v2 (the same number in JSON).
                let cpu = p("spec.quota.cpu");
                assert_eq!(
                    (
                        cpu["minimum"].as_f64(),
                        &cpu["exclusiveMinimum"],
                        cpu["maximum"].as_f64(),
                        &cpu["exclusiveMaximum"]
                    ),
                    (Some(0.0), &json!(true), Some(1024.0), &json!(true)),
                    "{at}"
                );
            }
            ("", "v1", "Namespace") => {
                let phase = resolved(schemas, p("status.phase"), ref_prefix);
                assert_eq!(phase["enum"], json!(["Active", "Terminating"]));
                // kube 1.32's finalizers of a namespace are an atomic list.
                let finalizers = p("spec.finalizers");
                assert_eq!(finalizers["x-kubernetes-list-type"], "atomic", "{at}");
                assert_eq!(
                    patch_strategy(finalizers),
                    (&Value::Null, &Value::Null),
                    "{at}"
                );
            }
            ("", "v1", "ConfigMap") => {
                let data = p("data");
                assert_eq!(
                    (&data["type"], &data["additionalProperties"]["type"]),
                    (&json!("object"), &json!("string"))
                );
                assert_eq!(p("immutable")["type"], "boolean");
            }
            _ => {
                checked.remove(&format!("{at} {kind}"));
            }
        }
    }
    checked
}

/// The kinds [`check_example_schemas`] knows the fields of.
const EXAMPLE_KINDS: [&str; 5] = [
    "apps.example.dev/v1 WebApp",
    "apps.example.dev/v1beta1 WebApp",
    "platform.example.dev/v1 Tenant",
    "v1 ConfigMap",
    "v1 Namespace",
];

#[test]
fn v3_schemas_are_what_the_types_declare() {
    let model = model();
    let mut checked = BTreeSet::new();
    for gv in model.group_versions() {
        let document = v3_json(gv);
        let schemas = &document["components"]["schemas"];
        assert_kube_style(schemas, &gv.api_version());
        checked.extend(check_example_schemas(gv, schemas, "#/components/schemas/"));
        for name in gv.schemas.keys() {
            assert!(
                schemas[name].is_object(),
                "{}: {name} missing",
                gv.api_version()
            );
        }
    }
}

#[test]
fn v2_document_covers_every_route_with_unique_ids() {
    let model = model();
    let document = v2::render(&model).unwrap();
    assert_eq!(document["swagger"], "2.0");
    let definitions = &document["definitions"];
    let mut ids = HashMap::new();
    for gv in model.group_versions() {
        for resource in &gv.resources {
            for route in resource.routes() {
                let at = format!(
                    "{} {} {}",
                    gv.api_version(),
                    route.method.as_str(),
                    route.path
                );
                let path_item = &document["paths"][route.path];
                let operation = &path_item[method_key(route.method)];
                assert!(operation.is_object(), "{at}: missing");
                let id = operation["operationId"].as_str().unwrap();
                assert!(
                    ids.insert(id.to_owned(), at.clone()).is_none(),
                    "{at}: id {id} also used by {:?}",
                    ids.get(id)
                );
                assert_eq!(
                    operation["x-kubernetes-action"],
                    route.action.as_str(),
                    "{at}"
                );
                assert_eq!(
                    operation["x-kubernetes-group-version-kind"],
                    expected_gvk(gv, resource.kind, route),
                    "{at}"
                );
                let query: BTreeSet<&str> = parameter_names(path_item, operation, "query")
                    .into_iter()
                    .collect();
                assert_eq!(query, expected_query_params(route.action), "{at}");
                if route.action == Action::Patch {
                    assert_eq!(
                        query_description(path_item, operation, "force"),
                        FORCE_DESCRIPTION,
                        "{at}"
                    );
                }
                let all = path_item["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(operation["parameters"].as_array().into_iter().flatten());
                for param in all {
                    match param["in"].as_str().unwrap() {
                        "body" => assert!(
                            param["schema"]["$ref"]
                                .as_str()
                                .unwrap()
                                .starts_with("#/definitions/"),
                            "{at}"
                        ),
                        "path" | "query" => {
                            assert!(param["type"].is_string(), "{at}: {param}");
                            assert_eq!(
                                param["required"].as_bool().unwrap_or(false),
                                param["in"] == "path",
                                "{at}: {param}"
                            );
                        }
                        other => panic!("{at}: parameter in {other}"),
                    }
                }
                let has_body = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["in"] == "body");
                // A connect's body is the far end's, which no schema describes.
                let expects_body = route.action != Action::Connect
                    && matches!(
                        route.method,
                        Method::Post | Method::Put | Method::Patch | Method::Delete
                    );
                assert_eq!(has_body, expects_body, "{at}");
                if route.action == Action::Patch {
                    assert_eq!(operation["consumes"], json!(PATCH_TYPES), "{at}");
                }
            }
        }
    }
    // kube's form, on a few known routes.
    for (id, path, method) in [
        (
            "listAppsExampleDevV1NamespacedWebApp",
            "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps",
            "get",
        ),
        (
            "deleteAppsExampleDevV1beta1CollectionNamespacedWebApp",
            "/apis/apps.example.dev/v1beta1/namespaces/{namespace}/webapps",
            "delete",
        ),
        (
            "patchAppsExampleDevV1NamespacedWebAppScale",
            "/apis/apps.example.dev/v1/namespaces/{namespace}/webapps/{name}/scale",
            "patch",
        ),
        (
            "listCoreV1NamespacedConfigMap",
            "/api/v1/namespaces/{namespace}/configmaps",
            "get",
        ),
        ("readCoreV1Namespace", "/api/v1/namespaces/{name}", "get"),
        (
            "readPlatformExampleDevV1Tenant",
            "/apis/platform.example.dev/v1/tenants/{name}",
            "get",
        ),
        (
            "watchAppsExampleDevV1WebAppListForAllNamespaces",
            "/apis/apps.example.dev/v1/watch/webapps",
            "get",
        ),
    ] {
        assert_eq!(document["paths"][path][method]["operationId"], id);
    }
    assert_refs_resolve(&document, "#/definitions/", definitions, "v2");
    assert_swagger2(definitions);
    let mut checked = BTreeSet::new();
    for gv in model.group_versions() {
        checked.extend(check_example_schemas(gv, definitions, "#/definitions/"));
        for name in gv.schemas.keys() {
            assert!(definitions[name].is_object(), "{name} missing");
        }
    }
    assert_eq!(checked, EXAMPLE_KINDS.map(String::from).into());
}

/// Fails on what Swagger 2.0 does not have.
fn assert_swagger2(definitions: &Value) {
    assert_kube_style(definitions, "v2");
    for (name, schema) in definitions.as_object().unwrap() {
        walk_schema(schema, name, &mut |map, at| {
            for key in ["nullable", "oneOf", "anyOf", "not", "writeOnly"] {
                assert!(!map.contains_key(key), "{at}: {key}");
            }
            if let Some(all_of) = map.get("allOf") {
                assert!(all_of.as_array().unwrap().len() > 1, "{at}: single allOf");
            }
        });
    }
}

#[test]
fn v2_rejects_a_definition_two_group_versions_define_differently() {
    let error = v2::render(&ApiModel::build(&fixture::conflicting_kinds()).unwrap()).unwrap_err();
    assert_eq!(
        error,
        Error::DefinitionConflict {
            name: "dev.example.shared.Thing".into(),
            first: "a.example.dev/v1".into(),
            second: "b.example.dev/v1".into(),
        }
    );
}

#[test]
fn routes_must_not_collide() {
    let model = ApiModel::build(&fixture::duplicate_route()).unwrap();
    let expected = Error::DuplicateRoute {
        method: "GET",
        path: "/apis/x.example.dev/v1/twices/{name}".into(),
        first: "readTwice".into(),
        second: "readTwiceAgain".into(),
    };
    let gv = model.group_versions().next().unwrap();
    assert_eq!(v3::render(gv).unwrap_err(), expected);
    assert_eq!(v2::render(&model).unwrap_err(), expected);

    let model = ApiModel::build(&fixture::duplicate_operation_id()).unwrap();
    assert_eq!(
        v2::render(&model).unwrap_err(),
        Error::DuplicateOperationId {
            id: "readYExampleDevV1Same".into(),
            first: "GET /apis/y.example.dev/v1/others/{name}".into(),
            second: "GET /apis/y.example.dev/v1/sames/{name}".into(),
        }
    );
}

#[test]
fn documents_are_deterministic() {
    let model = model();
    for gv in model.group_versions() {
        assert_eq!(
            v3::to_json(&v3::render(gv).unwrap()),
            v3::to_json(&v3::render(gv).unwrap())
        );
    }
    let v2 = v2::render(&model).unwrap();
    assert_eq!(
        serde_json::to_vec(&v2).unwrap(),
        serde_json::to_vec(&v2::render(&model).unwrap()).unwrap()
    );
    assert_eq!(
        v2_proto::encode(&v2),
        v2_proto::encode(&v2::render(&model).unwrap())
    );
}

#[test]
fn v2_protobuf_round_trips_definitions_and_paths() {
    let model = model();
    let document = v2::render(&model).unwrap();
    let bytes = v2_proto::encode(&document);
    let decoded = v2_proto::decode(&bytes).unwrap();
    assert_eq!(decoded.swagger, "2.0");
    assert_eq!(decoded.info.as_ref().unwrap().title, openapi::TITLE);

    let definitions = &decoded.definitions.as_ref().unwrap().additional_properties;
    let json_definitions = document["definitions"].as_object().unwrap();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        json_definitions
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    for definition in definitions {
        check_proto_schema(
            &json_definitions[&definition.name],
            definition.value.as_ref().unwrap(),
            &definition.name,
        );
    }
    // The GVK extension kubectl 1.20 reads, as YAML.
    let gvk_yaml = |name: &str| {
        let definition = definitions
            .iter()
            .find(|d| d.name == name)
            .unwrap()
            .value
            .as_ref()
            .unwrap();
        let extension = definition
            .vendor_extension
            .iter()
            .find(|e| e.name == "x-kubernetes-group-version-kind")
            .unwrap();
        extension.value.as_ref().unwrap().yaml.clone()
    };
    assert_eq!(
        gvk_yaml("dev.example.apps.v1.WebApp"),
        "- group: apps.example.dev\n  kind: WebApp\n  version: v1\n"
    );
    assert_eq!(
        gvk_yaml("io.k8s.api.core.v1.ConfigMap"),
        "- group: \"\"\n  kind: ConfigMap\n  version: v1\n"
    );
    for resource in model.resources().map(|(_, r)| r) {
        assert!(
            gvk_yaml(&resource.schema_name).contains(&format!("kind: {}\n", resource.kind.kind))
        );
    }

    let paths = &decoded.paths.as_ref().unwrap().path;
    let json_paths = document["paths"].as_object().unwrap();
    assert_eq!(
        paths.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        json_paths.keys().map(String::as_str).collect::<Vec<_>>()
    );
    for path in paths {
        let item = path.value.as_ref().unwrap();
        let json_item = &json_paths[&path.name];
        assert_eq!(
            item.parameters.len(),
            json_item["parameters"].as_array().map_or(0, Vec::len),
            "{}",
            path.name
        );
        for (method, operation) in [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
        ] {
            let json_operation = &json_item[method];
            let Some(operation) = operation else {
                assert!(json_operation.is_null(), "{} {method}", path.name);
                continue;
            };
            assert_eq!(
                operation.operation_id, json_operation["operationId"],
                "{} {method}",
                path.name
            );
            assert_eq!(
                operation.parameters.len(),
                json_operation["parameters"].as_array().map_or(0, Vec::len)
            );
            assert_eq!(
                operation.consumes,
                json_operation["consumes"].as_array().map_or(vec![], |c| c
                    .iter()
                    .map(|c| c.as_str().unwrap().to_owned())
                    .collect())
            );
            let responses = &operation.responses.as_ref().unwrap().response_code;
            assert_eq!(
                responses.len(),
                json_operation["responses"].as_object().unwrap().len()
            );
            let extensions: Vec<&str> = operation
                .vendor_extension
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            assert_eq!(
                extensions,
                ["x-kubernetes-action", "x-kubernetes-group-version-kind"]
            );
        }
    }
}

/// A decoded schema says what its JSON says.
fn check_proto_schema(json: &Value, proto: &messages::Schema, at: &str) {
    let string = |key: &str| json[key].as_str().unwrap_or_default();
    assert_eq!(proto.r#ref, string("$ref"), "{at}");
    assert_eq!(proto.description, string("description"), "{at}");
    assert_eq!(proto.format, string("format"), "{at}");
    assert_eq!(proto.pattern, string("pattern"), "{at}");
    assert_eq!(
        proto
            .r#type
            .as_ref()
            .map(|t| t.value.join(","))
            .unwrap_or_default(),
        string("type"),
        "{at}"
    );
    let required: Vec<&str> = json["required"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(proto.required, required, "{at}");
    assert_eq!(
        proto.minimum,
        json["minimum"].as_f64().unwrap_or_default(),
        "{at}"
    );
    assert_eq!(
        proto.maximum,
        json["maximum"].as_f64().unwrap_or_default(),
        "{at}"
    );
    assert_eq!(
        proto.min_length,
        json["minLength"].as_i64().unwrap_or_default(),
        "{at}"
    );
    assert_eq!(
        proto.r#enum.len(),
        json["enum"].as_array().map_or(0, Vec::len),
        "{at}"
    );
    assert_eq!(
        proto.default.is_some(),
        json.get("default").is_some(),
        "{at}"
    );
    let extensions: Vec<&str> = proto
        .vendor_extension
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    let json_extensions: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("x-"))
        .map(String::as_str)
        .collect();
    assert_eq!(extensions, json_extensions, "{at}");
    let properties = proto
        .properties
        .as_ref()
        .map_or(&[][..], |p| &p.additional_properties[..]);
    let json_properties = json["properties"].as_object();
    assert_eq!(
        properties.len(),
        json_properties.map_or(0, |p| p.len()),
        "{at}"
    );
    for property in properties {
        let name = &property.name;
        check_proto_schema(
            &json_properties.unwrap()[name],
            property.value.as_ref().unwrap(),
            &format!("{at}.{name}"),
        );
    }
    match (&json["items"], &proto.items) {
        (Value::Null, None) => {}
        (items, Some(proto_items)) => {
            check_proto_schema(items, &proto_items.schema[0], &format!("{at}[]"))
        }
        (items, None) => panic!("{at}: items {items} lost"),
    }
    match (
        &json["additionalProperties"],
        proto
            .additional_properties
            .as_ref()
            .and_then(|a| a.oneof.as_ref()),
    ) {
        (Value::Null, None) => {}
        (Value::Bool(b), Some(additional_properties_item::Oneof::Boolean(p))) => {
            assert_eq!(b, p, "{at}")
        }
        (schema, Some(additional_properties_item::Oneof::Schema(p))) => {
            check_proto_schema(schema, p, &format!("{at}{{}}"))
        }
        (json, proto) => panic!("{at}: additionalProperties {json} became {proto:?}"),
    }
    assert_eq!(
        proto.all_of.len(),
        json["allOf"].as_array().map_or(0, Vec::len),
        "{at}"
    );
}

#[test]
fn lists_say_how_strategic_merge_patch_treats_them_in_every_document() {
    let model = ApiModel::build(&fixture::lists()).unwrap();
    let gv = model.group_versions().next().unwrap();
    let v3 = v3_json(gv);
    let v2 = v2::render(&model).unwrap();
    let name = "dev.example.l.v1.Lists";
    // (field, x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key)
    let expected = [
        // A list map with one key merges by it.
        ("ports", Some("merge"), Some("name")),
        ("backends", Some("merge"), Some("name")),
        // A set merges values.
        ("tags", Some("merge"), None),
        // A list map with several keys and an atomic list are replaced.
        ("endpoints", None, None),
        ("args", None, None),
    ];
    for (schemas, prefix) in [
        (&v3["components"]["schemas"], "#/components/schemas/"),
        (&v2["definitions"], "#/definitions/"),
    ] {
        for (field, strategy, key) in expected {
            assert_eq!(
                patch_strategy(property(schemas, name, field, prefix)),
                (&json!(strategy), &json!(key)),
                "{prefix}{name} {field}"
            );
        }
    }
    // kubectl 1.20 reads them from the protobuf, as YAML.
    let proto = v2_proto::decode(&v2_proto::encode(&v2)).unwrap();
    let definitions = proto.definitions.unwrap().additional_properties;
    let lists = (definitions.iter().find(|d| d.name == name))
        .and_then(|d| d.value.as_ref())
        .unwrap();
    for (field, strategy, key) in expected {
        let list = (lists
            .properties
            .as_ref()
            .unwrap()
            .additional_properties
            .iter())
        .find(|p| p.name == field)
        .and_then(|p| p.value.as_ref())
        .unwrap();
        let extension = |name: &str| {
            (list.vendor_extension.iter())
                .find(|e| e.name == name)
                .map(|e| e.value.as_ref().unwrap().yaml.clone())
        };
        assert_eq!(
            (
                extension("x-kubernetes-patch-strategy"),
                extension("x-kubernetes-patch-merge-key")
            ),
            (
                strategy.map(|s| format!("{s}\n")),
                key.map(|k| format!("{k}\n"))
            ),
            "{field}"
        );
    }
}

#[test]
fn declared_patch_extensions_must_agree_with_the_list_type() {
    let error = ApiModel::build(&fixture::contradicting_merge_key()).unwrap_err();
    assert_eq!(
        error,
        ModelError::PatchStrategyConflict {
            schema: "dev.example.c.v1.Contradicts".into(),
            path: "properties.ports".into(),
            declared: "x-kubernetes-patch-merge-key: port".into(),
            list_type: "x-kubernetes-list-type: map with x-kubernetes-list-map-keys: [name]".into(),
            implied: "x-kubernetes-patch-strategy: merge, x-kubernetes-patch-merge-key: name"
                .into(),
        }
    );
    assert_eq!(
        error.to_string(),
        "schema dev.example.c.v1.Contradicts: x-kubernetes-patch-merge-key: port at \
         properties.ports contradicts x-kubernetes-list-type: map with \
         x-kubernetes-list-map-keys: [name], which implies x-kubernetes-patch-strategy: merge, \
         x-kubernetes-patch-merge-key: name; drop the declared extension (the list type implies \
         it) or change the list type"
    );
}

/// Kinds that do not make one API document, or make one only to test a corner.
mod fixture {
    #![allow(dead_code)]

    use kapi_core::api::{
        Action, KindInfo, Method, NameRule, Route, Scope, Subresources, VersionInfo,
    };
    use kapi_core::meta::ObjectMeta;
    use schemars::JsonSchema;

    /// Two groups whose types share a schema name but not a shape.
    pub(crate) fn conflicting_kinds() -> Vec<&'static KindInfo> {
        vec![&ALPHA, &BETA]
    }

    /// A kind with two routes for one path and method.
    pub(crate) fn duplicate_route() -> Vec<&'static KindInfo> {
        vec![&TWICE]
    }

    /// A kind with one operation id on two routes.
    pub(crate) fn duplicate_operation_id() -> Vec<&'static KindInfo> {
        vec![&SAME_ID]
    }

    /// A kind with lists of every list type.
    pub(crate) fn lists() -> Vec<&'static KindInfo> {
        vec![&LISTS]
    }

    /// A kind declaring a patch merge key its list type contradicts.
    pub(crate) fn contradicting_merge_key() -> Vec<&'static KindInfo> {
        vec![&CONTRADICTS]
    }

    static LISTS: KindInfo = kind("l.example.dev", "Lists", "lists", &LISTS_VERSIONS);
    static LISTS_VERSIONS: [VersionInfo; 1] = [version("v1", |g| g.subschema_for::<Lists>())];
    static CONTRADICTS: KindInfo = kind(
        "c.example.dev",
        "Contradicts",
        "contradicts",
        &CONTRADICTS_VERSIONS,
    );
    static CONTRADICTS_VERSIONS: [VersionInfo; 1] =
        [version("v1", |g| g.subschema_for::<Contradicts>())];

    static TWICE: KindInfo = kind("x.example.dev", "Twice", "twices", &TWICE_VERSIONS);
    static TWICE_VERSIONS: [VersionInfo; 1] = [VersionInfo {
        routes: &[
            get("/apis/x.example.dev/v1/twices/{name}", "readTwice"),
            get("/apis/x.example.dev/v1/twices/{name}", "readTwiceAgain"),
        ],
        ..version("v1", |g| g.subschema_for::<Alpha>())
    }];
    static SAME_ID: KindInfo = kind("y.example.dev", "Same", "sames", &SAME_ID_VERSIONS);
    static SAME_ID_VERSIONS: [VersionInfo; 1] = [VersionInfo {
        routes: &[
            get("/apis/y.example.dev/v1/sames/{name}", "readSame"),
            get("/apis/y.example.dev/v1/others/{name}", "readSame"),
        ],
        ..version("v1", |g| g.subschema_for::<Alpha>())
    }];

    const fn get(path: &'static str, operation_id: &'static str) -> Route {
        Route {
            method: Method::Get,
            path,
            action: Action::Get,
            subresource: None,
            operation_id,
        }
    }

    static ALPHA: KindInfo = kind("a.example.dev", "Alpha", "alphas", &ALPHA_VERSIONS);
    static ALPHA_VERSIONS: [VersionInfo; 1] = [version("v1", |g| g.subschema_for::<Alpha>())];
    static BETA: KindInfo = kind("b.example.dev", "Beta", "betas", &BETA_VERSIONS);
    static BETA_VERSIONS: [VersionInfo; 1] = [version("v1", |g| g.subschema_for::<Beta>())];

    const fn kind(
        group: &'static str,
        kind: &'static str,
        plural: &'static str,
        versions: &'static [VersionInfo],
    ) -> KindInfo {
        KindInfo {
            group,
            kind,
            plural,
            singular: "",
            scope: Scope::Namespaced,
            names: NameRule::DnsSubdomain,
            short_names: &[],
            categories: &[],
            subresources: Subresources {
                status: false,
                scale: None,
                others: &[],
            },
            printer_columns: &[],
            selectable_fields: &[],
            versions,
            rust_type: "fixture",
            stored_with: None,
            create_only: false,
            delete_status: false,
            storage_key: None,
            strategy_validates: false,
            defaulted: false,
            generation: kapi_core::api::Generation::Object,
            read_only: false,
        }
    }

    const fn version(
        name: &'static str,
        schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    ) -> VersionInfo {
        VersionInfo {
            name,
            served: true,
            storage: true,
            deprecated: false,
            deprecation_warning: None,
            off_by_default: false,
            lossy: false,
            rust_type: "fixture",
            schema: kapi_core::api::VersionSchema::Type(schema),
            printer_columns: None,
            protobuf: None,
            zero: None,
            routes: &[],
        }
    }

    #[derive(JsonSchema)]
    struct Alpha {
        metadata: ObjectMeta,
        thing: ThingA,
    }

    #[derive(JsonSchema)]
    #[schemars(rename = "dev.example.shared.Thing")]
    struct ThingA {
        a: String,
    }

    #[derive(JsonSchema)]
    struct Beta {
        metadata: ObjectMeta,
        thing: ThingB,
    }

    #[derive(JsonSchema)]
    #[schemars(rename = "dev.example.shared.Thing")]
    struct ThingB {
        b: i32,
    }

    #[derive(JsonSchema)]
    struct Lists {
        metadata: ObjectMeta,
        #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
        ports: Vec<Endpoint>,
        /// Optional: the null alternative is gone before the extensions are derived.
        #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
        backends: Option<Vec<Endpoint>>,
        #[schemars(extend("x-kubernetes-list-type" = "set"))]
        tags: Vec<String>,
        #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name", "port"]))]
        endpoints: Vec<Endpoint>,
        #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
        args: Vec<String>,
    }

    #[derive(JsonSchema)]
    struct Endpoint {
        name: String,
        port: i32,
    }

    #[derive(JsonSchema)]
    struct Contradicts {
        metadata: ObjectMeta,
        #[schemars(extend(
            "x-kubernetes-list-type" = "map",
            "x-kubernetes-list-map-keys" = ["name"],
            "x-kubernetes-patch-merge-key" = "port"
        ))]
        ports: Vec<Endpoint>,
    }
}
