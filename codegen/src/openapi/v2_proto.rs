//! The Swagger 2.0 document as the gnostic `openapi_v2.Document` protobuf
//! (`github.com/google/gnostic`, `openapiv2/OpenAPIv2.proto`).
//!
//! kubectl 1.20 asks `/openapi/v2` for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
//! and decodes nothing else; it reads `definitions` (with their
//! `x-kubernetes-group-version-kind`) to validate and explain objects. Vendor extensions and
//! other free-form values (`default`, `enum`, `example`) travel as YAML text in an `Any`, as
//! gnostic's compiler writes them.
//!
//! [`messages`] holds the subset of the proto this document uses. Definitions are encoded
//! completely; of paths, the parameter kinds kube uses (body, query, path).

use prost::Message;
use serde_json::{Map, Value};

use messages::*;

/// The protobuf encoding of a Swagger 2.0 document (as [`v2::render`](super::v2::render)
/// returns it). Deterministic: same document, same bytes.
pub fn encode(document: &Value) -> Vec<u8> {
    to_message(document).encode_to_vec()
}

/// Decodes what [`encode`] produced (for tests and tools).
pub fn decode(bytes: &[u8]) -> Result<Document, prost::DecodeError> {
    Document::decode(bytes)
}

/// The gnostic message of a Swagger 2.0 document.
pub fn to_message(document: &Value) -> Document {
    Document {
        swagger: string(document, "swagger"),
        info: document.get("info").map(|info| Info {
            title: string(info, "title"),
            version: string(info, "version"),
            description: string(info, "description"),
            terms_of_service: string(info, "termsOfService"),
            vendor_extension: vendor_extensions(info),
        }),
        host: string(document, "host"),
        base_path: string(document, "basePath"),
        schemes: strings(document, "schemes"),
        consumes: strings(document, "consumes"),
        produces: strings(document, "produces"),
        paths: document.get("paths").map(|paths| Paths {
            vendor_extension: vendor_extensions(paths),
            path: (entries(paths))
                .filter(|(name, _)| name.starts_with('/'))
                .map(|(name, item)| NamedPathItem {
                    name: name.clone(),
                    value: Some(path_item(item)),
                })
                .collect(),
        }),
        definitions: document.get("definitions").map(|definitions| Definitions {
            additional_properties: named_schemas(definitions),
        }),
        external_docs: document.get("externalDocs").map(external_docs),
        vendor_extension: vendor_extensions(document),
    }
}

fn path_item(item: &Value) -> PathItem {
    let operation = |method: &str| item.get(method).map(operation);
    PathItem {
        r#ref: string(item, "$ref"),
        get: operation("get"),
        put: operation("put"),
        post: operation("post"),
        delete: operation("delete"),
        options: operation("options"),
        head: operation("head"),
        patch: operation("patch"),
        parameters: parameters(item),
        vendor_extension: vendor_extensions(item),
    }
}

fn operation(operation: &Value) -> Operation {
    Operation {
        tags: strings(operation, "tags"),
        summary: string(operation, "summary"),
        description: string(operation, "description"),
        external_docs: operation.get("externalDocs").map(external_docs),
        operation_id: string(operation, "operationId"),
        produces: strings(operation, "produces"),
        consumes: strings(operation, "consumes"),
        parameters: parameters(operation),
        responses: operation.get("responses").map(|responses| Responses {
            response_code: (entries(responses))
                .filter(|(code, _)| !code.starts_with("x-"))
                .map(|(code, response)| NamedResponseValue {
                    name: code.clone(),
                    value: Some(ResponseValue {
                        oneof: Some(match response.get("$ref") {
                            Some(_) => {
                                response_value::Oneof::JsonReference(json_reference(response))
                            }
                            None => response_value::Oneof::Response(Response {
                                description: string(response, "description"),
                                schema: response.get("schema").map(|s| SchemaItem {
                                    oneof: Some(schema_item::Oneof::Schema(schema(s))),
                                }),
                                vendor_extension: vendor_extensions(response),
                            }),
                        }),
                    }),
                })
                .collect(),
            vendor_extension: vendor_extensions(responses),
        }),
        schemes: strings(operation, "schemes"),
        deprecated: boolean(operation, "deprecated"),
        vendor_extension: vendor_extensions(operation),
    }
}

/// Body, query and path parameters, and references; header and form parameters (which
/// kube does not use) are left out.
fn parameters(owner: &Value) -> Vec<ParametersItem> {
    let items = owner
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    (items.filter_map(|p| {
        let oneof = if p.get("$ref").is_some() {
            parameters_item::Oneof::JsonReference(json_reference(p))
        } else {
            let parameter = match p.get("in").and_then(Value::as_str) {
                Some("body") => parameter::Oneof::BodyParameter(BodyParameter {
                    description: string(p, "description"),
                    name: string(p, "name"),
                    r#in: string(p, "in"),
                    required: boolean(p, "required"),
                    schema: p.get("schema").map(schema),
                    vendor_extension: vendor_extensions(p),
                }),
                Some("query") => non_body(non_body_parameter::Oneof::QueryParameterSubSchema(
                    QueryParameterSubSchema {
                        required: boolean(p, "required"),
                        r#in: string(p, "in"),
                        description: string(p, "description"),
                        name: string(p, "name"),
                        allow_empty_value: boolean(p, "allowEmptyValue"),
                        r#type: string(p, "type"),
                        format: string(p, "format"),
                        collection_format: string(p, "collectionFormat"),
                        default: p.get("default").map(any),
                        maximum: number(p, "maximum"),
                        exclusive_maximum: boolean(p, "exclusiveMaximum"),
                        minimum: number(p, "minimum"),
                        exclusive_minimum: boolean(p, "exclusiveMinimum"),
                        max_length: integer(p, "maxLength"),
                        min_length: integer(p, "minLength"),
                        pattern: string(p, "pattern"),
                        max_items: integer(p, "maxItems"),
                        min_items: integer(p, "minItems"),
                        unique_items: boolean(p, "uniqueItems"),
                        r#enum: anys(p, "enum"),
                        multiple_of: number(p, "multipleOf"),
                        vendor_extension: vendor_extensions(p),
                    },
                )),
                Some("path") => non_body(non_body_parameter::Oneof::PathParameterSubSchema(
                    PathParameterSubSchema {
                        required: boolean(p, "required"),
                        r#in: string(p, "in"),
                        description: string(p, "description"),
                        name: string(p, "name"),
                        r#type: string(p, "type"),
                        format: string(p, "format"),
                        collection_format: string(p, "collectionFormat"),
                        default: p.get("default").map(any),
                        maximum: number(p, "maximum"),
                        exclusive_maximum: boolean(p, "exclusiveMaximum"),
                        minimum: number(p, "minimum"),
                        exclusive_minimum: boolean(p, "exclusiveMinimum"),
                        max_length: integer(p, "maxLength"),
                        min_length: integer(p, "minLength"),
                        pattern: string(p, "pattern"),
                        max_items: integer(p, "maxItems"),
                        min_items: integer(p, "minItems"),
                        unique_items: boolean(p, "uniqueItems"),
                        r#enum: anys(p, "enum"),
                        multiple_of: number(p, "multipleOf"),
                        vendor_extension: vendor_extensions(p),
                    },
                )),
                _ => return None,
            };
            parameters_item::Oneof::Parameter(Parameter {
                oneof: Some(parameter),
            })
        };
        Some(ParametersItem { oneof: Some(oneof) })
    }))
    .collect()
}

fn non_body(oneof: non_body_parameter::Oneof) -> parameter::Oneof {
    parameter::Oneof::NonBodyParameter(NonBodyParameter { oneof: Some(oneof) })
}

fn json_reference(value: &Value) -> JsonReference {
    JsonReference {
        r#ref: string(value, "$ref"),
        description: string(value, "description"),
    }
}

/// A schema, with everything gnostic's `Schema` has but `xml`.
fn schema(value: &Value) -> Schema {
    Schema {
        r#ref: string(value, "$ref"),
        format: string(value, "format"),
        title: string(value, "title"),
        description: string(value, "description"),
        default: value.get("default").map(any),
        multiple_of: number(value, "multipleOf"),
        maximum: number(value, "maximum"),
        exclusive_maximum: boolean(value, "exclusiveMaximum"),
        minimum: number(value, "minimum"),
        exclusive_minimum: boolean(value, "exclusiveMinimum"),
        max_length: integer(value, "maxLength"),
        min_length: integer(value, "minLength"),
        pattern: string(value, "pattern"),
        max_items: integer(value, "maxItems"),
        min_items: integer(value, "minItems"),
        unique_items: boolean(value, "uniqueItems"),
        max_properties: integer(value, "maxProperties"),
        min_properties: integer(value, "minProperties"),
        required: strings(value, "required"),
        r#enum: anys(value, "enum"),
        additional_properties: value.get("additionalProperties").and_then(|a| {
            let oneof = match a {
                Value::Bool(b) => additional_properties_item::Oneof::Boolean(*b),
                Value::Object(_) => additional_properties_item::Oneof::Schema(Box::new(schema(a))),
                _ => return None,
            };
            Some(AdditionalPropertiesItem { oneof: Some(oneof) })
        }),
        r#type: value.get("type").map(|t| TypeItem {
            value: match t {
                Value::Array(types) => types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                other => other.as_str().map(str::to_owned).into_iter().collect(),
            },
        }),
        items: value.get("items").map(|items| ItemsItem {
            schema: match items {
                Value::Array(items) => items.iter().map(schema).collect(),
                item => vec![schema(item)],
            },
        }),
        all_of: value
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(schema)
            .collect(),
        properties: value.get("properties").map(|properties| Properties {
            additional_properties: named_schemas(properties),
        }),
        discriminator: string(value, "discriminator"),
        read_only: boolean(value, "readOnly"),
        external_docs: value.get("externalDocs").map(external_docs),
        example: value.get("example").map(any),
        vendor_extension: vendor_extensions(value),
    }
}

fn named_schemas(map: &Value) -> Vec<NamedSchema> {
    (entries(map))
        .map(|(name, value)| NamedSchema {
            name: name.clone(),
            value: Some(schema(value)),
        })
        .collect()
}

fn external_docs(value: &Value) -> ExternalDocs {
    ExternalDocs {
        description: string(value, "description"),
        url: string(value, "url"),
        vendor_extension: vendor_extensions(value),
    }
}

/// The `x-` members of an object, in order.
fn vendor_extensions(value: &Value) -> Vec<NamedAny> {
    (entries(value))
        .filter(|(name, _)| name.starts_with("x-"))
        .map(|(name, value)| NamedAny {
            name: name.clone(),
            value: Some(any(value)),
        })
        .collect()
}

fn any(value: &Value) -> Any {
    Any {
        value: None,
        yaml: to_yaml(value),
    }
}

fn anys(owner: &Value, key: &str) -> Vec<Any> {
    owner
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(any)
        .collect()
}

fn entries(value: &Value) -> impl Iterator<Item = (&String, &Value)> {
    value.as_object().into_iter().flat_map(Map::iter)
}

fn string(owner: &Value, key: &str) -> String {
    owner
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn strings(owner: &Value, key: &str) -> Vec<String> {
    let items = owner
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    items.filter_map(Value::as_str).map(str::to_owned).collect()
}

fn boolean(owner: &Value, key: &str) -> bool {
    owner.get(key).and_then(Value::as_bool).unwrap_or_default()
}

fn number(owner: &Value, key: &str) -> f64 {
    owner.get(key).and_then(Value::as_f64).unwrap_or_default()
}

fn integer(owner: &Value, key: &str) -> i64 {
    owner.get(key).and_then(Value::as_i64).unwrap_or_default()
}

/// A JSON value as block-style YAML, as gnostic writes vendor extensions (yaml.v2 style:
/// sequences in a mapping are not indented). Strings that could read as anything else are
/// double-quoted with JSON escapes, which YAML reads the same.
fn to_yaml(value: &Value) -> String {
    let mut out = yaml_lines(value).join("\n");
    out.push('\n');
    out
}

fn yaml_lines(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut lines = Vec::new();
            for (key, value) in map {
                let key = yaml_scalar_string(key);
                match value {
                    Value::Object(m) if !m.is_empty() => {
                        lines.push(format!("{key}:"));
                        lines.extend(yaml_lines(value).into_iter().map(|l| format!("  {l}")));
                    }
                    Value::Array(a) if !a.is_empty() => {
                        lines.push(format!("{key}:"));
                        lines.extend(yaml_lines(value));
                    }
                    scalar => lines.push(format!("{key}: {}", yaml_scalar(scalar))),
                }
            }
            lines
        }
        Value::Array(items) if !items.is_empty() => {
            let mut lines = Vec::new();
            for item in items {
                for (i, line) in yaml_lines(item).into_iter().enumerate() {
                    lines.push(if i == 0 {
                        format!("- {line}")
                    } else {
                        format!("  {line}")
                    });
                }
            }
            lines
        }
        scalar => vec![yaml_scalar(scalar)],
    }
}

fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::String(s) => yaml_scalar_string(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string as a plain YAML scalar when it cannot read as anything else, quoted otherwise.
fn yaml_scalar_string(s: &str) -> String {
    const RESERVED: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_owned()
    } else {
        Value::String(s.to_owned()).to_string()
    }
}

/// The messages of gnostic's `openapiv2/OpenAPIv2.proto` this encoder uses, with the
/// proto's field names and numbers (`r#ref` is `_ref`).
///
/// Field documentation is the proto's (and the OpenAPI 2.0 specification's): the structs
/// are a wire format, named and numbered to match it, so they are not documented here. Nor
/// are oneof variants boxed to even out their sizes: these values are built once per
/// document, and plain variants keep them as prost-build would write them.
#[allow(missing_docs, clippy::large_enum_variant)]
pub mod messages {
    /// `additionalProperties`: a schema or a boolean.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AdditionalPropertiesItem {
        #[prost(oneof = "additional_properties_item::Oneof", tags = "1, 2")]
        pub oneof: Option<additional_properties_item::Oneof>,
    }

    /// The alternatives of [`AdditionalPropertiesItem`].
    pub mod additional_properties_item {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "1")]
            Schema(Box<super::Schema>),
            #[prost(bool, tag = "2")]
            Boolean(bool),
        }
    }

    /// A free-form value, as YAML text (`value` is never set here).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Any {
        #[prost(message, optional, tag = "1")]
        pub value: Option<ProtobufAny>,
        #[prost(string, tag = "2")]
        pub yaml: String,
    }

    /// `google.protobuf.Any`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ProtobufAny {
        #[prost(string, tag = "1")]
        pub type_url: String,
        #[prost(bytes = "vec", tag = "2")]
        pub value: Vec<u8>,
    }

    /// A body parameter.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BodyParameter {
        #[prost(string, tag = "1")]
        pub description: String,
        #[prost(string, tag = "2")]
        pub name: String,
        #[prost(string, tag = "3")]
        pub r#in: String,
        #[prost(bool, tag = "4")]
        pub required: bool,
        #[prost(message, optional, tag = "5")]
        pub schema: Option<Schema>,
        #[prost(message, repeated, tag = "6")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// `definitions`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Definitions {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSchema>,
    }

    /// The document.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Document {
        #[prost(string, tag = "1")]
        pub swagger: String,
        #[prost(message, optional, tag = "2")]
        pub info: Option<Info>,
        #[prost(string, tag = "3")]
        pub host: String,
        #[prost(string, tag = "4")]
        pub base_path: String,
        #[prost(string, repeated, tag = "5")]
        pub schemes: Vec<String>,
        #[prost(string, repeated, tag = "6")]
        pub consumes: Vec<String>,
        #[prost(string, repeated, tag = "7")]
        pub produces: Vec<String>,
        #[prost(message, optional, tag = "8")]
        pub paths: Option<Paths>,
        #[prost(message, optional, tag = "9")]
        pub definitions: Option<Definitions>,
        #[prost(message, optional, tag = "15")]
        pub external_docs: Option<ExternalDocs>,
        #[prost(message, repeated, tag = "16")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// `externalDocs`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExternalDocs {
        #[prost(string, tag = "1")]
        pub description: String,
        #[prost(string, tag = "2")]
        pub url: String,
        #[prost(message, repeated, tag = "3")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// `info`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Info {
        #[prost(string, tag = "1")]
        pub title: String,
        #[prost(string, tag = "2")]
        pub version: String,
        #[prost(string, tag = "3")]
        pub description: String,
        #[prost(string, tag = "4")]
        pub terms_of_service: String,
        #[prost(message, repeated, tag = "7")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// `items`: one schema (or several, for tuples).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ItemsItem {
        #[prost(message, repeated, tag = "1")]
        pub schema: Vec<Schema>,
    }

    /// A `$ref`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct JsonReference {
        #[prost(string, tag = "1")]
        pub r#ref: String,
        #[prost(string, tag = "2")]
        pub description: String,
    }

    /// One entry of a map of free-form values (vendor extensions).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedAny {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Any>,
    }

    /// One path.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedPathItem {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<PathItem>,
    }

    /// One response, by status code.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedResponseValue {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<ResponseValue>,
    }

    /// One named schema (a definition or a property).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NamedSchema {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Schema>,
    }

    /// A parameter that is not the body.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NonBodyParameter {
        #[prost(oneof = "non_body_parameter::Oneof", tags = "3, 4")]
        pub oneof: Option<non_body_parameter::Oneof>,
    }

    /// The alternatives of [`NonBodyParameter`] used here (1, header, and 2, form data,
    /// are not).
    pub mod non_body_parameter {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "3")]
            QueryParameterSubSchema(super::QueryParameterSubSchema),
            #[prost(message, tag = "4")]
            PathParameterSubSchema(super::PathParameterSubSchema),
        }
    }

    /// An operation.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Operation {
        #[prost(string, repeated, tag = "1")]
        pub tags: Vec<String>,
        #[prost(string, tag = "2")]
        pub summary: String,
        #[prost(string, tag = "3")]
        pub description: String,
        #[prost(message, optional, tag = "4")]
        pub external_docs: Option<ExternalDocs>,
        #[prost(string, tag = "5")]
        pub operation_id: String,
        #[prost(string, repeated, tag = "6")]
        pub produces: Vec<String>,
        #[prost(string, repeated, tag = "7")]
        pub consumes: Vec<String>,
        #[prost(message, repeated, tag = "8")]
        pub parameters: Vec<ParametersItem>,
        #[prost(message, optional, tag = "9")]
        pub responses: Option<Responses>,
        #[prost(string, repeated, tag = "10")]
        pub schemes: Vec<String>,
        #[prost(bool, tag = "11")]
        pub deprecated: bool,
        #[prost(message, repeated, tag = "13")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A parameter: the body or another.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Parameter {
        #[prost(oneof = "parameter::Oneof", tags = "1, 2")]
        pub oneof: Option<parameter::Oneof>,
    }

    /// The alternatives of [`Parameter`].
    pub mod parameter {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "1")]
            BodyParameter(super::BodyParameter),
            #[prost(message, tag = "2")]
            NonBodyParameter(super::NonBodyParameter),
        }
    }

    /// An entry of `parameters`: a parameter or a reference to one.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ParametersItem {
        #[prost(oneof = "parameters_item::Oneof", tags = "1, 2")]
        pub oneof: Option<parameters_item::Oneof>,
    }

    /// The alternatives of [`ParametersItem`].
    pub mod parameters_item {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "1")]
            Parameter(super::Parameter),
            #[prost(message, tag = "2")]
            JsonReference(super::JsonReference),
        }
    }

    /// A path's operations and common parameters.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PathItem {
        #[prost(string, tag = "1")]
        pub r#ref: String,
        #[prost(message, optional, tag = "2")]
        pub get: Option<Operation>,
        #[prost(message, optional, tag = "3")]
        pub put: Option<Operation>,
        #[prost(message, optional, tag = "4")]
        pub post: Option<Operation>,
        #[prost(message, optional, tag = "5")]
        pub delete: Option<Operation>,
        #[prost(message, optional, tag = "6")]
        pub options: Option<Operation>,
        #[prost(message, optional, tag = "7")]
        pub head: Option<Operation>,
        #[prost(message, optional, tag = "8")]
        pub patch: Option<Operation>,
        #[prost(message, repeated, tag = "9")]
        pub parameters: Vec<ParametersItem>,
        #[prost(message, repeated, tag = "10")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A path parameter.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PathParameterSubSchema {
        #[prost(bool, tag = "1")]
        pub required: bool,
        #[prost(string, tag = "2")]
        pub r#in: String,
        #[prost(string, tag = "3")]
        pub description: String,
        #[prost(string, tag = "4")]
        pub name: String,
        #[prost(string, tag = "5")]
        pub r#type: String,
        #[prost(string, tag = "6")]
        pub format: String,
        #[prost(string, tag = "8")]
        pub collection_format: String,
        #[prost(message, optional, tag = "9")]
        pub default: Option<Any>,
        #[prost(double, tag = "10")]
        pub maximum: f64,
        #[prost(bool, tag = "11")]
        pub exclusive_maximum: bool,
        #[prost(double, tag = "12")]
        pub minimum: f64,
        #[prost(bool, tag = "13")]
        pub exclusive_minimum: bool,
        #[prost(int64, tag = "14")]
        pub max_length: i64,
        #[prost(int64, tag = "15")]
        pub min_length: i64,
        #[prost(string, tag = "16")]
        pub pattern: String,
        #[prost(int64, tag = "17")]
        pub max_items: i64,
        #[prost(int64, tag = "18")]
        pub min_items: i64,
        #[prost(bool, tag = "19")]
        pub unique_items: bool,
        #[prost(message, repeated, tag = "20")]
        pub r#enum: Vec<Any>,
        #[prost(double, tag = "21")]
        pub multiple_of: f64,
        #[prost(message, repeated, tag = "22")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// `paths`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Paths {
        #[prost(message, repeated, tag = "1")]
        pub vendor_extension: Vec<NamedAny>,
        #[prost(message, repeated, tag = "2")]
        pub path: Vec<NamedPathItem>,
    }

    /// `properties`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Properties {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSchema>,
    }

    /// A query parameter.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct QueryParameterSubSchema {
        #[prost(bool, tag = "1")]
        pub required: bool,
        #[prost(string, tag = "2")]
        pub r#in: String,
        #[prost(string, tag = "3")]
        pub description: String,
        #[prost(string, tag = "4")]
        pub name: String,
        #[prost(bool, tag = "5")]
        pub allow_empty_value: bool,
        #[prost(string, tag = "6")]
        pub r#type: String,
        #[prost(string, tag = "7")]
        pub format: String,
        #[prost(string, tag = "9")]
        pub collection_format: String,
        #[prost(message, optional, tag = "10")]
        pub default: Option<Any>,
        #[prost(double, tag = "11")]
        pub maximum: f64,
        #[prost(bool, tag = "12")]
        pub exclusive_maximum: bool,
        #[prost(double, tag = "13")]
        pub minimum: f64,
        #[prost(bool, tag = "14")]
        pub exclusive_minimum: bool,
        #[prost(int64, tag = "15")]
        pub max_length: i64,
        #[prost(int64, tag = "16")]
        pub min_length: i64,
        #[prost(string, tag = "17")]
        pub pattern: String,
        #[prost(int64, tag = "18")]
        pub max_items: i64,
        #[prost(int64, tag = "19")]
        pub min_items: i64,
        #[prost(bool, tag = "20")]
        pub unique_items: bool,
        #[prost(message, repeated, tag = "21")]
        pub r#enum: Vec<Any>,
        #[prost(double, tag = "22")]
        pub multiple_of: f64,
        #[prost(message, repeated, tag = "23")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A response.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Response {
        #[prost(string, tag = "1")]
        pub description: String,
        #[prost(message, optional, tag = "2")]
        pub schema: Option<SchemaItem>,
        #[prost(message, repeated, tag = "5")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A response or a reference to one.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ResponseValue {
        #[prost(oneof = "response_value::Oneof", tags = "1, 2")]
        pub oneof: Option<response_value::Oneof>,
    }

    /// The alternatives of [`ResponseValue`].
    pub mod response_value {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "1")]
            Response(super::Response),
            #[prost(message, tag = "2")]
            JsonReference(super::JsonReference),
        }
    }

    /// An operation's responses.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Responses {
        #[prost(message, repeated, tag = "1")]
        pub response_code: Vec<NamedResponseValue>,
        #[prost(message, repeated, tag = "2")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A schema.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Schema {
        #[prost(string, tag = "1")]
        pub r#ref: String,
        #[prost(string, tag = "2")]
        pub format: String,
        #[prost(string, tag = "3")]
        pub title: String,
        #[prost(string, tag = "4")]
        pub description: String,
        #[prost(message, optional, tag = "5")]
        pub default: Option<Any>,
        #[prost(double, tag = "6")]
        pub multiple_of: f64,
        #[prost(double, tag = "7")]
        pub maximum: f64,
        #[prost(bool, tag = "8")]
        pub exclusive_maximum: bool,
        #[prost(double, tag = "9")]
        pub minimum: f64,
        #[prost(bool, tag = "10")]
        pub exclusive_minimum: bool,
        #[prost(int64, tag = "11")]
        pub max_length: i64,
        #[prost(int64, tag = "12")]
        pub min_length: i64,
        #[prost(string, tag = "13")]
        pub pattern: String,
        #[prost(int64, tag = "14")]
        pub max_items: i64,
        #[prost(int64, tag = "15")]
        pub min_items: i64,
        #[prost(bool, tag = "16")]
        pub unique_items: bool,
        #[prost(int64, tag = "17")]
        pub max_properties: i64,
        #[prost(int64, tag = "18")]
        pub min_properties: i64,
        #[prost(string, repeated, tag = "19")]
        pub required: Vec<String>,
        #[prost(message, repeated, tag = "20")]
        pub r#enum: Vec<Any>,
        #[prost(message, optional, tag = "21")]
        pub additional_properties: Option<AdditionalPropertiesItem>,
        #[prost(message, optional, tag = "22")]
        pub r#type: Option<TypeItem>,
        #[prost(message, optional, tag = "23")]
        pub items: Option<ItemsItem>,
        #[prost(message, repeated, tag = "24")]
        pub all_of: Vec<Schema>,
        #[prost(message, optional, tag = "25")]
        pub properties: Option<Properties>,
        #[prost(string, tag = "26")]
        pub discriminator: String,
        #[prost(bool, tag = "27")]
        pub read_only: bool,
        #[prost(message, optional, tag = "29")]
        pub external_docs: Option<ExternalDocs>,
        #[prost(message, optional, tag = "30")]
        pub example: Option<Any>,
        #[prost(message, repeated, tag = "31")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// A response's schema (a file schema is not used here).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SchemaItem {
        #[prost(oneof = "schema_item::Oneof", tags = "1")]
        pub oneof: Option<schema_item::Oneof>,
    }

    /// The alternatives of [`SchemaItem`] used here.
    pub mod schema_item {
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Oneof {
            #[prost(message, tag = "1")]
            Schema(super::Schema),
        }
    }

    /// `type`: one type name (or several).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TypeItem {
        #[prost(string, repeated, tag = "1")]
        pub value: Vec<String>,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn check_yaml(value: Value, expected: &str) {
        assert_eq!(to_yaml(&value), expected);
    }

    #[test]
    fn yaml_is_block_style_as_gnostic_writes_it() {
        check_yaml(
            json!([{"group": "apps.example.dev", "kind": "WebApp", "version": "v1"}]),
            "- group: apps.example.dev\n  kind: WebApp\n  version: v1\n",
        );
        // The core group's empty name must stay a string.
        check_yaml(
            json!([{"group": "", "kind": "ConfigMap", "version": "v1"}]),
            "- group: \"\"\n  kind: ConfigMap\n  version: v1\n",
        );
        check_yaml(json!("list"), "list\n");
        check_yaml(json!("map"), "map\n");
        check_yaml(json!(["containerPort"]), "- containerPort\n");
        check_yaml(json!(1), "1\n");
        check_yaml(json!(true), "true\n");
        check_yaml(json!({}), "{}\n");
        check_yaml(json!([]), "[]\n");
        check_yaml(
            json!({"a": {"b": [1, 2], "c": {}}, "d": "x"}),
            "a:\n  b:\n  - 1\n  - 2\n  c: {}\nd: x\n",
        );
        check_yaml(json!([[1, 2], {"a": 1}]), "- - 1\n  - 2\n- a: 1\n");
    }

    #[test]
    fn yaml_quotes_what_could_read_as_something_else() {
        for s in [
            "",
            "true",
            "No",
            "null",
            "~",
            "8080",
            "1.5",
            "-x",
            "a: b",
            "# c",
            " lead",
            "multi\nline",
            "x\"y",
        ] {
            let yaml = to_yaml(&json!(s));
            assert!(yaml.starts_with('"'), "{s:?} -> {yaml:?}");
            // Double-quoted YAML with JSON escapes is JSON.
            let back: String = serde_json::from_str(yaml.trim_end()).unwrap();
            assert_eq!(back, s);
        }
        for s in [
            "TCP",
            "apps.example.dev",
            "v1beta1",
            "io.k8s.api.core.v1.ConfigMap",
            "a_b-c/d",
        ] {
            assert_eq!(to_yaml(&json!(s)), format!("{s}\n"));
        }
    }

    #[test]
    fn encoding_round_trips_and_is_deterministic() {
        let document = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1.32.0-kapi"},
            "consumes": ["application/json"],
            "paths": {
                "/api/v1/namespaces/{name}": {
                    "get": {
                        "operationId": "readCoreV1Namespace",
                        "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/N"}}, "401": {"description": "Unauthorized"}},
                        "x-kubernetes-action": "get"
                    },
                    "patch": {
                        "consumes": [
                            "application/json-patch+json",
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json",
                            "application/apply-patch+yaml"
                        ],
                        "operationId": "patchCoreV1Namespace",
                        "parameters": [
                            {"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/P"}},
                            {"in": "query", "name": "force", "type": "boolean", "uniqueItems": true}
                        ],
                        "responses": {"200": {"description": "OK"}}
                    },
                    "parameters": [{"in": "path", "name": "name", "required": true, "type": "string", "description": "name of the Namespace"}]
                }
            },
            "definitions": {
                "N": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "spec": {"$ref": "#/definitions/S", "description": "Spec."},
                        "n": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535, "default": 8080},
                        "p": {"type": "string", "enum": ["TCP", "UDP"], "minLength": 1},
                        "m": {"type": "object", "additionalProperties": {"type": "string"}},
                        "o": {"type": "object", "additionalProperties": false},
                        "l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                            "x-kubernetes-patch-strategy": "merge"},
                        "ports": {"type": "array", "items": {"$ref": "#/definitions/P"},
                            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                            "x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge"}
                    },
                    "x-kubernetes-group-version-kind": [{"group": "", "kind": "Namespace", "version": "v1"}]
                }
            }
        });
        let bytes = encode(&document);
        assert_eq!(bytes, encode(&document));
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded, to_message(&document));

        assert_eq!(decoded.swagger, "2.0");
        assert_eq!(decoded.info.as_ref().unwrap().version, "v1.32.0-kapi");
        let definitions = &decoded.definitions.as_ref().unwrap().additional_properties;
        let n = definitions[0].value.as_ref().unwrap();
        assert_eq!(definitions[0].name, "N");
        assert_eq!(n.r#type.as_ref().unwrap().value, ["object"]);
        assert_eq!(n.required, ["spec"]);
        assert_eq!(
            n.vendor_extension[0].name,
            "x-kubernetes-group-version-kind"
        );
        assert_eq!(
            n.vendor_extension[0].value.as_ref().unwrap().yaml,
            "- group: \"\"\n  kind: Namespace\n  version: v1\n"
        );
        let properties = &n.properties.as_ref().unwrap().additional_properties;
        let property = |name: &str| {
            properties
                .iter()
                .find(|p| p.name == name)
                .unwrap()
                .value
                .as_ref()
                .unwrap()
        };
        assert_eq!(property("spec").r#ref, "#/definitions/S");
        assert_eq!(property("spec").description, "Spec.");
        assert_eq!(
            (property("n").minimum, property("n").maximum),
            (1.0, 65535.0)
        );
        assert_eq!(property("n").default.as_ref().unwrap().yaml, "8080\n");
        assert_eq!(property("n").format, "int32");
        let enums: Vec<_> = property("p")
            .r#enum
            .iter()
            .map(|a| a.yaml.as_str())
            .collect();
        assert_eq!(enums, ["TCP\n", "UDP\n"]);
        assert_eq!(property("p").min_length, 1);
        let additional = |name: &str| {
            property(name)
                .additional_properties
                .as_ref()
                .unwrap()
                .oneof
                .clone()
                .unwrap()
        };
        let additional_properties_item::Oneof::Schema(m) = additional("m") else {
            panic!()
        };
        assert_eq!(m.r#type.unwrap().value, ["string"]);
        assert_eq!(
            additional("o"),
            additional_properties_item::Oneof::Boolean(false)
        );
        assert_eq!(
            property("l").items.as_ref().unwrap().schema[0]
                .r#type
                .as_ref()
                .unwrap()
                .value,
            ["string"]
        );
        // Vendor extensions in order, their values as YAML: how kubectl 1.20 learns how a
        // strategic merge patch treats each list.
        let extensions = |name: &str| -> Vec<(String, String)> {
            (property(name).vendor_extension.iter())
                .map(|e| (e.name.clone(), e.value.as_ref().unwrap().yaml.clone()))
                .collect()
        };
        let pair = |name: &str, yaml: &str| (name.to_owned(), yaml.to_owned());
        assert_eq!(
            extensions("l"),
            [
                pair("x-kubernetes-list-type", "set\n"),
                pair("x-kubernetes-patch-strategy", "merge\n")
            ]
        );
        assert_eq!(
            extensions("ports"),
            [
                pair("x-kubernetes-list-type", "map\n"),
                pair("x-kubernetes-list-map-keys", "- port\n"),
                pair("x-kubernetes-patch-merge-key", "port\n"),
                pair("x-kubernetes-patch-strategy", "merge\n")
            ]
        );

        let paths = &decoded.paths.as_ref().unwrap().path;
        assert_eq!(paths[0].name, "/api/v1/namespaces/{name}");
        let item = paths[0].value.as_ref().unwrap();
        assert_eq!(
            item.get.as_ref().unwrap().operation_id,
            "readCoreV1Namespace"
        );
        let patch = item.patch.as_ref().unwrap();
        assert_eq!(
            patch.consumes,
            [
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"
            ]
        );
        let Some(parameters_item::Oneof::Parameter(Parameter {
            oneof: Some(parameter::Oneof::BodyParameter(body)),
        })) = &patch.parameters[0].oneof
        else {
            panic!("{:?}", patch.parameters[0]);
        };
        assert_eq!(body.schema.as_ref().unwrap().r#ref, "#/definitions/P");
        assert!(body.required);
        let Some(parameters_item::Oneof::Parameter(Parameter {
            oneof: Some(parameter::Oneof::NonBodyParameter(query)),
        })) = &patch.parameters[1].oneof
        else {
            panic!();
        };
        let Some(non_body_parameter::Oneof::QueryParameterSubSchema(query)) = &query.oneof else {
            panic!()
        };
        assert_eq!(
            (
                query.name.as_str(),
                query.r#type.as_str(),
                query.unique_items
            ),
            ("force", "boolean", true)
        );
        let Some(parameters_item::Oneof::Parameter(Parameter {
            oneof: Some(parameter::Oneof::NonBodyParameter(path)),
        })) = &item.parameters[0].oneof
        else {
            panic!();
        };
        let Some(non_body_parameter::Oneof::PathParameterSubSchema(path)) = &path.oneof else {
            panic!()
        };
        assert!(path.required);
        let responses = &item
            .get
            .as_ref()
            .unwrap()
            .responses
            .as_ref()
            .unwrap()
            .response_code;
        assert_eq!(
            responses
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            ["200", "401"]
        );
        let Some(response_value::Oneof::Response(ok)) = &responses[0].value.as_ref().unwrap().oneof
        else {
            panic!()
        };
        let Some(schema_item::Oneof::Schema(schema)) = &ok.schema.as_ref().unwrap().oneof else {
            panic!()
        };
        assert_eq!(schema.r#ref, "#/definitions/N");
    }
}
