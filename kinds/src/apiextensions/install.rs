//! A CustomResourceDefinition as one more kind of the scheme: its [`KindInfo`] (names,
//! scope, versions, subresources, printer columns, selectable fields), its compiled
//! schemas, and a [`KindEntry::dynamic`] whose hub is the object as JSON, as kube's
//! unstructured custom resources are.
//!
//! Decoding an object of a version (from a request or from storage) prunes it to that
//! version's schema, coerces its embedded resources' metadata and fills its defaults, as
//! kube's custom resource codec does; a `None`
//! conversion only changes `apiVersion`, which the scheme sets.
//!
//! A kind made here lives as long as the process: its description is `'static` like a
//! compiled kind's, so installing a changed definition keeps the few kilobytes of the
//! previous one (definitions change rarely; kube keeps each version's handler until its
//! requests drain, for the same reason).

use std::sync::Arc;

use serde_json::{Value, json};

use super::conversion::Webhook;
use super::{CLUSTER, CustomResourceColumnDefinition, CustomResourceDefinition};
use kapi_core::api::{
    KindInfo, NameRule, PrinterColumn, Route, ScaleInfo, Scope, SelectableField, Subresources,
    VersionInfo, VersionSchema,
};
use kapi_core::scheme::{ConversionError, DynamicVersion, JsonConversion, KindEntry};
use kapi_schema::Schemas;

/// What serving a definition takes: its kind, and the schemas its objects are checked
/// against.
pub struct Definition {
    /// The kind, for the registry's `install_kind`.
    pub kind: KindEntry,
    /// Each version's compiled schema.
    pub schemas: Arc<Schemas>,
}

/// Why a definition cannot be served (it passed validation, so only a schema the
/// server cannot compile).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DefinitionError(String);

impl DefinitionError {
    /// Why, in words.
    pub(super) fn new(why: impl Into<String>) -> DefinitionError {
        DefinitionError(why.into())
    }
}

/// The kind `crd` defines, its schemas built on `compiled`'s `ObjectMeta`.
pub fn definition(
    crd: &CustomResourceDefinition,
    compiled: &Schemas,
) -> Result<Definition, DefinitionError> {
    let spec = &crd.spec;
    let names = &spec.names;
    let empty = Value::Object(Default::default());
    let schemas: Vec<(&str, &Value)> = (spec.versions.iter())
        .map(|v| {
            let schema = (v.schema.as_ref()).and_then(|s| s.open_apiv3_schema.as_deref());
            (v.name.as_str(), schema.unwrap_or(&empty))
        })
        .collect();
    let schemas = (compiled.definition(&spec.group, &names.kind, &schemas))
        .map_err(|e| DefinitionError(e.to_string()))?;
    let schemas = Arc::new(schemas);
    let info = leak(kind_info(crd, compiled));
    let webhook = match &spec.conversion {
        Some(conversion) if conversion.strategy == "Webhook" => {
            Some(Arc::new(Webhook::new(conversion.webhook.as_ref())))
        }
        _ => None,
    };
    let storage = info.storage_version().name;
    let versions = (info.versions.iter())
        .map(|version| {
            let own = decode(info, version.name, Arc::clone(&schemas));
            let in_version = Arc::clone(&own);
            let (to_hub, from_hub): (JsonConversion, JsonConversion) = match &webhook {
                // The hub is the object in the storage version, which the webhook converts
                // to and from the others; each side is pruned and defaulted to its schema.
                Some(webhook) if version.name != storage => {
                    let to_storage = decode(info, storage, Arc::clone(&schemas));
                    let (to, from) = (Arc::clone(webhook), Arc::clone(webhook));
                    let storage_api_version = info.api_version(storage);
                    let own_api_version = info.api_version(version.name);
                    let decode_own = Arc::clone(&own);
                    (
                        Arc::new(move |object| {
                            let object = decode_own(object)?;
                            to_storage(to.convert(object, &storage_api_version)?)
                        }),
                        Arc::new(move |hub| own(from.convert(hub, &own_api_version)?)),
                    )
                }
                _ => (own, Arc::new(Ok)),
            };
            DynamicVersion {
                name: version.name,
                to_hub,
                from_hub,
                decode: in_version,
            }
        })
        .collect();
    let terminating =
        (crd.status.conditions.iter()).any(|c| c.r#type == "Terminating" && c.status == "True");
    Ok(Definition {
        kind: KindEntry::dynamic(info, versions).terminating(terminating),
        schemas,
    })
}

/// An object of `version` as the hub: pruned to the version's schema, its embedded
/// resources' metadata read as `ObjectMeta`, then defaulted.
fn decode(info: &'static KindInfo, version: &'static str, schemas: Arc<Schemas>) -> JsonConversion {
    Arc::new(move |mut object| {
        if !object.is_object() {
            let error = <serde_json::Error as serde::de::Error>::custom("expected a JSON object");
            return Err(ConversionError::Decode(error));
        }
        let schema = (schemas.kind(info.group, version, info.kind)).ok_or(
            ConversionError::UnknownVersion {
                kind: info.kind,
                version: version.to_owned(),
            },
        )?;
        schema.prune(&mut object);
        schema.coerce(&mut object);
        schema.default(&mut object);
        Ok(object)
    })
}

/// The description of the kind: the definition's names and scope, each version's printer
/// columns, and what its storage version declares of subresources and selectable fields
/// (a description holds these once per kind: versions declaring them differently, as kube
/// allows, are served with the storage version's, not yet per version).
fn kind_info(crd: &CustomResourceDefinition, compiled: &Schemas) -> KindInfo {
    let spec = &crd.spec;
    let names = &spec.names;
    let storage = (spec.versions.iter()).find(|v| v.storage);
    let subresources = storage.and_then(|v| v.subresources.as_ref());
    let kind = leak_str(&names.kind);
    let namespaced = spec.scope != CLUSTER;
    let routes = |version: &str| {
        let routes = kapi_routes::routes(&kapi_routes::Input {
            group: &spec.group,
            version,
            kind,
            plural: &names.plural,
            namespaced,
            status: subresources.is_some_and(|s| s.status.is_some()),
            scale: subresources.is_some_and(|s| s.scale.is_some()),
            finalize: false,
            create_only: false,
            read_only: false,
            others: &[],
        });
        Vec::leak(
            (routes.into_iter())
                .map(|route| Route {
                    method: route.method,
                    path: leak_str(&route.path),
                    action: route.action,
                    subresource: route.subresource.as_deref().map(leak_str),
                    operation_id: leak_str(&route.operation_id),
                })
                .collect(),
        ) as &'static [Route]
    };
    KindInfo {
        group: leak_str(&spec.group),
        kind,
        plural: leak_str(&names.plural),
        singular: leak_str(&match names.singular.as_str() {
            "" => names.kind.to_lowercase(),
            singular => singular.to_owned(),
        }),
        scope: if namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        },
        names: NameRule::DnsSubdomain,
        short_names: leak_strs(&names.short_names),
        categories: leak_strs(&names.categories),
        subresources: Subresources {
            status: subresources.is_some_and(|s| s.status.is_some()),
            scale: (subresources.and_then(|s| s.scale.as_ref())).map(|scale| ScaleInfo {
                spec_replicas_path: leak_str(&scale.spec_replicas_path),
                status_replicas_path: leak_str(&scale.status_replicas_path),
                label_selector_path: scale.label_selector_path.as_deref().map(leak_str),
            }),
            others: &[],
        },
        printer_columns: printer_columns(
            storage.map_or(&[][..], |v| &v.additional_printer_columns),
            compiled,
        ),
        selectable_fields: Vec::leak(
            (storage.into_iter().flat_map(|v| &v.selectable_fields))
                .map(|field| SelectableField {
                    label: leak_str(field.json_path.trim_start_matches('.')),
                    path: leak_str(&field.json_path),
                    or: None,
                })
                .collect(),
        ),
        versions: Vec::leak(
            (spec.versions.iter())
                .map(|version| VersionInfo {
                    name: leak_str(&version.name),
                    served: version.served,
                    storage: version.storage,
                    deprecated: version.deprecated,
                    deprecation_warning: version.deprecation_warning.as_deref().map(leak_str),
                    off_by_default: false,
                    lossy: false,
                    rust_type: "",
                    schema: VersionSchema::Json(leak(published(
                        (version.schema.as_ref())
                            .and_then(|s| s.open_apiv3_schema.as_deref())
                            .unwrap_or(&Value::Object(Default::default())),
                    ))),
                    routes: routes(&version.name),
                    printer_columns: Some(printer_columns(
                        &version.additional_printer_columns,
                        compiled,
                    )),
                    protobuf: None,
                    zero: None,
                })
                .collect(),
        ),
        rust_type: "",
        stored_with: None,
        create_only: false,
        delete_status: false,
        storage_key: None,
        strategy_validates: false,
        read_only: false,
        defaulted: false,
        generation: kapi_core::api::Generation::Object,
    }
}

/// The columns of `kubectl get`: the definition's, or kube's `Age` when it declares none.
fn printer_columns(
    columns: &[CustomResourceColumnDefinition],
    compiled: &Schemas,
) -> &'static [PrinterColumn] {
    if columns.is_empty() {
        let description = compiled.metadata_description("creationTimestamp");
        return Vec::leak(vec![PrinterColumn {
            name: "Age",
            column_type: "date",
            format: "",
            json_path: ".metadata.creationTimestamp",
            priority: 0,
            description: leak_str(description.unwrap_or_default()),
            cell: None,
        }]);
    }
    Vec::leak(
        (columns.iter())
            .map(|column| PrinterColumn {
                name: leak_str(&column.name),
                column_type: leak_str(&column.r#type),
                format: leak_str(&column.format),
                json_path: leak_str(&column.json_path),
                priority: column.priority,
                description: leak_str(&match column.description.as_str() {
                    "" => format!(
                        "Custom resource definition column (in JSONPath format): {}",
                        column.json_path
                    ),
                    description => description.to_owned(),
                }),
                cell: None,
            })
            .collect(),
    )
}

/// A version's schema as kube publishes it in the OpenAPI documents: the definition's,
/// with `apiVersion` and `kind` described and `metadata` an `ObjectMeta` (what kube's CRD
/// OpenAPI builder adds).
fn published(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        let properties = object.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert(
                "apiVersion".into(),
                json!({"type": "string", "description": API_VERSION_DESCRIPTION}),
            );
            properties.insert(
                "kind".into(),
                json!({"type": "string", "description": KIND_DESCRIPTION}),
            );
            properties.insert(
                "metadata".into(),
                json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}),
            );
        }
    }
    schema
}

/// kube's description of `apiVersion`, as its CRD OpenAPI builder publishes it.
const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";

/// kube's description of `kind`, as its CRD OpenAPI builder publishes it.
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn leak_str(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn leak_strs(texts: &[String]) -> &'static [&'static str] {
    Vec::leak(texts.iter().map(|t| leak_str(t)).collect())
}
