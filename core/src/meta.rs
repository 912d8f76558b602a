//! The shared `meta.k8s.io/v1` (and `autoscaling/v1` Scale) types.
//!
//! Field names, JSON shapes and schema names follow Kubernetes exactly, because real
//! clients decode them: kubectl, client-go, kube-rs and the Python client. Schema names
//! are the canonical ones (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`), which
//! `kapi-codegen` keeps as they are.
//!
//! The protobuf descriptors (`*_PROTO`) of the types clients send as protobuf are declared
//! beside them, with the field numbers of k8s.io/apimachinery's
//! `pkg/apis/meta/v1/generated.proto` (see [`crate::api::protobuf`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::protobuf::{ProtoField, ProtoKind, ProtoMessage};

/// The metadata every object carries, and the timestamps: k8s-openapi's, the types kube-rs
/// and its users already hold, so a kapi kind is a `kube::Resource` as it is declared
/// (ARCHITECTURE.md, "Metadata"). `Time` is written with second precision
/// (`2026-11-22T13:01:40Z`), `MicroTime` with microseconds. Their schemas lack kube's list
/// types and patch strategies, which [`kube_extensions`] adds to the documents.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, MicroTime, ObjectMeta, OwnerReference, Time,
};

/// apimachinery's other value types kinds carry, k8s-openapi's as the metadata is:
/// `resource.Quantity`, `intstr.IntOrString`, `runtime.RawExtension`.
pub use k8s_openapi::apimachinery::pkg::{
    api::resource::Quantity, runtime::RawExtension, util::intstr::IntOrString,
};

/// `k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta` on the wire. Numbers not here (15,
/// the removed `clusterName`, and 16) are skipped.
pub static OBJECT_META_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    fields: &[
        ProtoField::new(1, "name", ProtoKind::String),
        ProtoField::new(2, "generateName", ProtoKind::String),
        ProtoField::new(3, "namespace", ProtoKind::String),
        ProtoField::new(4, "selfLink", ProtoKind::String),
        ProtoField::new(5, "uid", ProtoKind::String),
        ProtoField::new(6, "resourceVersion", ProtoKind::String),
        ProtoField::new(7, "generation", ProtoKind::Int64),
        ProtoField::new(8, "creationTimestamp", ProtoKind::Time),
        ProtoField::new(9, "deletionTimestamp", ProtoKind::Time),
        // `*int64` in Go: a 0 sent is a 0 meant.
        ProtoField::new(10, "deletionGracePeriodSeconds", ProtoKind::Int64).keep_zero(),
        ProtoField::map(11, "labels", &ProtoKind::String, &ProtoKind::String),
        ProtoField::map(12, "annotations", &ProtoKind::String, &ProtoKind::String),
        ProtoField::repeated(
            13,
            "ownerReferences",
            ProtoKind::Message(&OWNER_REFERENCE_PROTO),
        ),
        ProtoField::repeated(14, "finalizers", ProtoKind::String),
        ProtoField::repeated(
            17,
            "managedFields",
            ProtoKind::Message(&MANAGED_FIELDS_ENTRY_PROTO),
        ),
    ],
};

/// `k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference` on the wire. Every field keeps its
/// zero: the strings have no `omitempty`, the bools are pointers.
pub static OWNER_REFERENCE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference",
    fields: &[
        ProtoField::new(5, "apiVersion", ProtoKind::String).keep_zero(),
        ProtoField::new(1, "kind", ProtoKind::String).keep_zero(),
        ProtoField::new(3, "name", ProtoKind::String).keep_zero(),
        ProtoField::new(4, "uid", ProtoKind::String).keep_zero(),
        ProtoField::new(6, "controller", ProtoKind::Bool).keep_zero(),
        ProtoField::new(7, "blockOwnerDeletion", ProtoKind::Bool).keep_zero(),
    ],
};

/// `k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry` on the wire (5 was the
/// pre-1.15 `Fields`). `fieldsV1` is `FieldsV1 {bytes Raw = 1}`, JSON in bytes.
pub static MANAGED_FIELDS_ENTRY_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    fields: &[
        ProtoField::new(1, "manager", ProtoKind::String),
        ProtoField::new(2, "operation", ProtoKind::String),
        ProtoField::new(3, "apiVersion", ProtoKind::String),
        ProtoField::new(4, "time", ProtoKind::Time),
        ProtoField::new(6, "fieldsType", ProtoKind::String),
        ProtoField::new(7, "fieldsV1", ProtoKind::RawJson),
        ProtoField::new(8, "subresource", ProtoKind::String),
    ],
};

/// Metadata of a list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")]
pub struct ListMeta {
    /// The revision the list was read at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// Token for the next page, when the list was truncated by `limit`.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "continue")]
    pub continue_: Option<String>,
    /// How many items follow this page, when cheap to know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
    /// Deprecated; not set by this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_link: Option<String>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta` on the wire: the metadata of protobuf
/// lists and of `Status`.
pub static LIST_META_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta",
    fields: &[
        ProtoField::new(1, "selfLink", ProtoKind::String),
        ProtoField::new(2, "resourceVersion", ProtoKind::String),
        ProtoField::new(3, "continue", ProtoKind::String),
        // `*int64` in Go.
        ProtoField::new(4, "remainingItemCount", ProtoKind::Int64).keep_zero(),
    ],
};

/// A label query over objects: the requirements are ANDed; an empty selector matches
/// everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")]
#[schemars(extend("x-kubernetes-map-type" = "atomic"))]
pub struct LabelSelector {
    /// Labels that must have exactly these values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Requirements on labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One requirement of a [`LabelSelector`]: a key, an operator and values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement")]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values of `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub values: Vec<String>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector` on the wire.
pub static LABEL_SELECTOR_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector",
    fields: &[
        ProtoField::map(1, "matchLabels", &ProtoKind::String, &ProtoKind::String),
        ProtoField::repeated(
            2,
            "matchExpressions",
            ProtoKind::Message(&LABEL_SELECTOR_REQUIREMENT_PROTO),
        ),
    ],
};

/// `k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement` on the wire.
pub static LABEL_SELECTOR_REQUIREMENT_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    fields: &[
        ProtoField::new(1, "key", ProtoKind::String),
        ProtoField::new(2, "operator", ProtoKind::String),
        ProtoField::repeated(3, "values", ProtoKind::String),
    ],
};

/// One requirement of a field selector (`authorization.k8s.io`'s `fieldSelector`): a field,
/// an operator and values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement")]
pub struct FieldSelectorRequirement {
    /// The field's path (`spec.nodeName`).
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values of `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub values: Vec<String>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement` on the wire.
pub static FIELD_SELECTOR_REQUIREMENT_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement",
    fields: &[
        ProtoField::new(1, "key", ProtoKind::String),
        ProtoField::new(2, "operator", ProtoKind::String),
        ProtoField::repeated(3, "values", ProtoKind::String),
    ],
};

impl LabelSelector {
    /// Whether `labels` satisfy every requirement (kube's `LabelSelectorAsSelector` then
    /// `Matches`); an operator kube does not know matches nothing.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let match_labels = self.match_labels.iter().flatten();
        match_labels.clone().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => value.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !r.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }

    /// kube's `LabelSelectorAsSelector(...).String()`: the requirements sorted by key
    /// (`k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`), empty for none; `None` for a
    /// selector kube cannot read (an unknown operator, values where none belong).
    pub fn text(&self) -> Option<String> {
        let mut requirements: Vec<(&str, String)> = (self.match_labels.iter().flatten())
            .map(|(k, v)| (k.as_str(), format!("{k}={v}")))
            .collect();
        for r in &self.match_expressions {
            let mut values: Vec<&str> = r.values.iter().map(String::as_str).collect();
            values.sort_unstable();
            values.dedup();
            let key = &r.key;
            let shown = match r.operator.as_str() {
                "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
                "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
                "Exists" if values.is_empty() => key.clone(),
                "DoesNotExist" if values.is_empty() => format!("!{key}"),
                _ => return None,
            };
            requirements.push((key, shown));
        }
        requirements.sort();
        let shown: Vec<String> = requirements.into_iter().map(|(_, s)| s).collect();
        Some(shown.join(","))
    }
}

/// The result of an operation that returns no object, and every error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.Status")]
pub struct Status {
    /// Always `Status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Always `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Standard list metadata (empty).
    #[serde(default)]
    pub metadata: ListMeta,
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Machine-readable reason (`NotFound`, `AlreadyExists`, `Invalid`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Extended data about the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

/// Details of a [`Status`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails")]
pub struct StatusDetails {
    /// Name of the object concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Group of the object concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind (in practice the plural resource name) of the object concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// UID of the object concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// One entry per field-level problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causes: Option<Vec<StatusCause>>,
    /// Seconds a client should wait before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<i32>,
}

/// One field-level problem in a [`Status`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause")]
pub struct StatusCause {
    /// `FieldValueInvalid`, `FieldValueRequired`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The field path (`spec.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.Status` on the wire: errors (and delete results)
/// for clients that accept only protobuf.
pub static STATUS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Status",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&LIST_META_PROTO)),
        ProtoField::new(2, "status", ProtoKind::String),
        ProtoField::new(3, "message", ProtoKind::String),
        ProtoField::new(4, "reason", ProtoKind::String),
        ProtoField::new(5, "details", ProtoKind::Message(&STATUS_DETAILS_PROTO)),
        ProtoField::new(6, "code", ProtoKind::Int32),
    ],
};

/// `StatusDetails` on the wire.
pub static STATUS_DETAILS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.StatusDetails",
    fields: &[
        ProtoField::new(1, "name", ProtoKind::String),
        ProtoField::new(2, "group", ProtoKind::String),
        ProtoField::new(3, "kind", ProtoKind::String),
        ProtoField::repeated(4, "causes", ProtoKind::Message(&STATUS_CAUSE_PROTO)),
        ProtoField::new(5, "retryAfterSeconds", ProtoKind::Int32),
        ProtoField::new(6, "uid", ProtoKind::String),
    ],
};

/// `StatusCause` on the wire (its Go field `Type` is JSON's `reason`).
pub static STATUS_CAUSE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.StatusCause",
    fields: &[
        ProtoField::new(1, "reason", ProtoKind::String),
        ProtoField::new(2, "message", ProtoKind::String),
        ProtoField::new(3, "field", ProtoKind::String),
    ],
};

/// One event of a watch stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent")]
pub struct WatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The object (a `Status` for `ERROR`).
    pub object: Value,
}

/// Options of a DELETE.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")]
pub struct DeleteOptions {
    /// `DeleteOptions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Seconds before the object is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i64>,
    /// Must be fulfilled before a deletion is carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preconditions: Option<Preconditions>,
    /// `Orphan`, `Background` or `Foreground`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<String>,
    /// Deprecated: `true` is `propagationPolicy: Orphan`, `false` is `Background`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphan_dependents: Option<bool>,
    /// `All` processes the request without persisting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<Vec<String>>,
    /// Deletes an object storage cannot read (kube 1.32, alpha): not honoured by kapi,
    /// kept so that the options read back as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_store_read_error_with_cluster_breaking_potential: Option<bool>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions` on the wire: typed clients may
/// send DELETE bodies as protobuf. Its scalars are Go pointers, so their zeros are kept
/// (`gracePeriodSeconds: 0` is "now"); `orphanDependents` is decoded as JSON has it.
pub static DELETE_OPTIONS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    fields: &[
        ProtoField::new(1, "gracePeriodSeconds", ProtoKind::Int64).keep_zero(),
        ProtoField::new(2, "preconditions", ProtoKind::Message(&PRECONDITIONS_PROTO)),
        ProtoField::new(3, "orphanDependents", ProtoKind::Bool).keep_zero(),
        ProtoField::new(4, "propagationPolicy", ProtoKind::String).keep_zero(),
        ProtoField::repeated(5, "dryRun", ProtoKind::String),
        ProtoField::new(
            6,
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            ProtoKind::Bool,
        )
        .keep_zero(),
    ],
};

/// Preconditions of a DELETE.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions")]
pub struct Preconditions {
    /// The target's resourceVersion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// The target's UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.Preconditions` on the wire (Go pointers: zeros
/// kept).
pub static PRECONDITIONS_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Preconditions",
    fields: &[
        ProtoField::new(1, "uid", ProtoKind::String).keep_zero(),
        ProtoField::new(2, "resourceVersion", ProtoKind::String).keep_zero(),
    ],
};

/// `autoscaling/v1` Scale: the view the `scale` subresource gives of an object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.autoscaling.v1.Scale")]
pub struct Scale {
    /// `Scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `autoscaling/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The scaled object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ScaleSpec>,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ScaleStatus>,
}

/// Desired replicas of a [`Scale`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.autoscaling.v1.ScaleSpec")]
pub struct ScaleSpec {
    /// Desired number of instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// Observed replicas of a [`Scale`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.autoscaling.v1.ScaleStatus")]
pub struct ScaleStatus {
    /// Actual number of observed instances.
    pub replicas: i32,
    /// Label query over the scaled pods, in string form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// `meta.k8s.io/v1` Table: the server-side rendering `kubectl get` asks for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.Table")]
pub struct Table {
    /// `Table`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `meta.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// resourceVersion and continue of the underlying list.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The columns; only in the first event of a watch.
    #[serde(default)]
    pub column_definitions: Vec<TableColumnDefinition>,
    /// One row per object.
    #[serde(default)]
    pub rows: Vec<TableRow>,
}

/// A column of a [`Table`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.TableColumnDefinition")]
pub struct TableColumnDefinition {
    /// Header.
    pub name: String,
    /// OpenAPI type of the cells.
    #[serde(rename = "type")]
    pub column_type: String,
    /// OpenAPI format; `name` marks the name column.
    pub format: String,
    /// What the column shows.
    pub description: String,
    /// 0 shows always; greater with `-o wide` only.
    pub priority: i32,
}

/// A row of a [`Table`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.TableRow")]
pub struct TableRow {
    /// One cell per column definition.
    pub cells: Vec<Value>,
    /// The object, as `PartialObjectMetadata` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
}

/// `metav1.Condition`: one aspect of an object's observed state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition")]
pub struct Condition {
    /// Condition type, in CamelCase (`Ready`).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Machine-readable CamelCase reason for the last transition.
    #[serde(default)]
    pub reason: String,
    /// Human-readable details of the last transition.
    #[serde(default)]
    pub message: String,
    /// When the condition last changed status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// The `metadata.generation` the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// A condition as kube's `Set<Kind>Condition` helpers keep them: by type, with the time
/// its status last changed.
pub trait StatusCondition {
    /// `Available`, `Established`.
    fn condition_type(&self) -> &str;
    /// `True`, `False` or `Unknown`.
    fn condition_status(&self) -> &str;
    /// When the status last changed.
    fn last_transition(&mut self) -> &mut Option<Time>;
}

/// kube's `SetCRDCondition` and `SetAPIServiceCondition`: sets the condition of its type
/// in `conditions` (appended when new), its transition time now unless its status stays
/// the same.
pub fn set_condition<C: StatusCondition>(conditions: &mut Vec<C>, mut condition: C) {
    let existing =
        (conditions.iter_mut()).find(|c| c.condition_type() == condition.condition_type());
    match existing {
        Some(existing) => {
            *condition.last_transition() =
                match existing.condition_status() == condition.condition_status() {
                    true => existing.last_transition().clone(),
                    false => Some(now_time()),
                };
            *existing = condition;
        }
        None => {
            *condition.last_transition() = Some(now_time());
            conditions.push(condition);
        }
    }
}

/// The current time as kube writes timestamps: RFC 3339, UTC, seconds.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The current time as an object's timestamp (`creationTimestamp`, a condition's
/// `lastTransitionTime`), written with second precision.
pub fn now_time() -> Time {
    Time(timestamp(std::time::SystemTime::now()))
}

/// `at` as a timestamp, to the microsecond (jiff's clock needs its `std` feature, which
/// k8s-openapi leaves off).
pub fn timestamp(at: std::time::SystemTime) -> k8s_openapi::jiff::Timestamp {
    let since = (at.duration_since(std::time::UNIX_EPOCH)).unwrap_or_default();
    let micros = i64::try_from(since.as_micros()).unwrap_or(i64::MAX);
    k8s_openapi::jiff::Timestamp::from_microsecond(micros).unwrap_or_default()
}

/// kube's list types and patch strategies on `ObjectMeta`'s lists, as kube-apiserver
/// publishes them and k8s-openapi's schemas leave out: owner references are a list map by
/// `uid`, finalizers a set. Added to the `ObjectMeta` of `definitions` (schema name ->
/// schema, as schemars collects them), where server-side apply and strategic merge read
/// them.
pub fn kube_extensions(definitions: &mut serde_json::Map<String, Value>) {
    let object_meta = definitions
        .get_mut("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .and_then(|schema| schema.get_mut("properties"))
        .and_then(Value::as_object_mut);
    let Some(properties) = object_meta else {
        return;
    };
    let extensions = [
        (
            "ownerReferences",
            serde_json::json!({
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["uid"],
                "x-kubernetes-patch-merge-key": "uid",
                "x-kubernetes-patch-strategy": "merge"
            }),
        ),
        (
            "finalizers",
            serde_json::json!({
                "x-kubernetes-list-type": "set",
                "x-kubernetes-patch-strategy": "merge"
            }),
        ),
    ];
    for (field, added) in extensions {
        let schema = properties.get_mut(field).and_then(Value::as_object_mut);
        if let (Some(schema), Value::Object(added)) = (schema, added) {
            schema.extend(added);
        }
    }
}

/// `core/v1` ObjectReference: a reference to an object (an event's subject, a binding's
/// target, an endpoint's pod). Shared by the Events `kapi-kinds` declares and the built-in
/// kinds generated from k8s.io/api, so the API has one definition of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.core.v1.ObjectReference")]
#[schemars(extend("x-kubernetes-map-type" = "atomic"))]
pub struct ObjectReference {
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Namespace of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// UID of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The referent's resourceVersion the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// A part of the referent (`spec.containers{web}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

/// `k8s.io.api.core.v1.ObjectReference` on the wire: Go's fields are values, so an empty
/// one on the wire is an absent one here.
pub static OBJECT_REFERENCE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.core.v1.ObjectReference",
    fields: &[
        ProtoField::new(1, "kind", ProtoKind::String),
        ProtoField::new(2, "namespace", ProtoKind::String),
        ProtoField::new(3, "name", ProtoKind::String),
        ProtoField::new(4, "uid", ProtoKind::String),
        ProtoField::new(5, "apiVersion", ProtoKind::String),
        ProtoField::new(6, "resourceVersion", ProtoKind::String),
        ProtoField::new(7, "fieldPath", ProtoKind::String),
    ],
};
