//! `rbac.authorization.k8s.io/v1`: who may do what. Roles hold rules (verbs on resources
//! of API groups, or on non-resource URLs); bindings grant a role to subjects (users,
//! groups, service accounts), in a namespace (RoleBinding) or everywhere
//! (ClusterRoleBinding). A ClusterRole with an `aggregationRule` holds the rules of the
//! ClusterRoles its selectors match, kept up to date by the server.
//!
//! The rules on the objects themselves are kube's `pkg/apis/rbac/validation`
//! (`validation`), with kube's defaults for the API group of subjects and role
//! references.

mod validation;

use kapi_core::Resource;
use kapi_core::api::{KindInfo, ProtoField, ProtoKind, ProtoMessage};
use kapi_core::error::FieldError;
use kapi_core::meta::{LABEL_SELECTOR_PROTO, LabelSelector, OBJECT_META_PROTO, ObjectMeta};
use kapi_macros::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The group of the RBAC kinds.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// The four kinds, for an API's list of kinds.
pub const KINDS: &[&KindInfo] = &[
    Role::INFO,
    ClusterRole::INFO,
    RoleBinding::INFO,
    ClusterRoleBinding::INFO,
];

/// Rules in one namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "rbac.authorization.k8s.io",
    kind = "Role",
    plural = "roles",
    delete_status,
    namespaced,
    names = "path_segment",
    printer_column(
        name = "Created At",
        type = "string",
        json_path = ".metadata.creationTimestamp",
        format = "date-time"
    ),
    version(name = "v1", storage),
    protobuf = ROLE_PROTO
)]
#[schemars(rename = "io.k8s.api.rbac.v1.Role")]
pub struct Role {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the role allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub rules: Vec<PolicyRule>,
}

/// Rules everywhere, or in the namespaces of RoleBindings that refer to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "rbac.authorization.k8s.io",
    kind = "ClusterRole",
    plural = "clusterroles",
    delete_status,
    names = "path_segment",
    printer_column(
        name = "Created At",
        type = "string",
        json_path = ".metadata.creationTimestamp",
        format = "date-time"
    ),
    version(name = "v1", storage),
    protobuf = CLUSTER_ROLE_PROTO
)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.ClusterRole")]
pub struct ClusterRole {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the role allows; with an `aggregationRule`, the server writes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub rules: Vec<PolicyRule>,
    /// Selects the ClusterRoles whose rules this one holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation_rule: Option<AggregationRule>,
}

/// The ClusterRoles an aggregated ClusterRole takes its rules from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.AggregationRule")]
pub struct AggregationRule {
    /// A ClusterRole matching any selector is aggregated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub cluster_role_selectors: Vec<LabelSelector>,
}

/// One rule: the verbs allowed on resources of API groups (optionally only the named
/// objects), or on non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.PolicyRule")]
pub struct PolicyRule {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// and others (`impersonate`, `bind`, `escalate`); `*` is every verb.
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub verbs: Vec<String>,
    /// API groups of the resources (`""` is the core group, `*` every group).
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "apiGroups")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub api_groups: Vec<String>,
    /// Resources, or `resource/subresource` (`webapps/status`); `*` is every resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resources: Vec<String>,
    /// Only these objects; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub resource_names: Vec<String>,
    /// Paths that are not resources (`/healthz`, `/apis/*`); only in ClusterRoles.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        rename = "nonResourceURLs"
    )]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub non_resource_urls: Vec<String>,
}

/// Grants a Role or ClusterRole in the binding's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "rbac.authorization.k8s.io",
    kind = "RoleBinding",
    plural = "rolebindings",
    delete_status,
    namespaced,
    names = "path_segment",
    printer_column(name = "Role", type = "string", json_path = ".roleRef.name"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage),
    protobuf = ROLE_BINDING_PROTO
)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.RoleBinding")]
pub struct RoleBinding {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Who is granted the role.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub subjects: Vec<Subject>,
    /// The role granted; cannot be changed.
    pub role_ref: RoleRef,
}

/// Grants a ClusterRole everywhere.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "rbac.authorization.k8s.io",
    kind = "ClusterRoleBinding",
    plural = "clusterrolebindings",
    delete_status,
    names = "path_segment",
    printer_column(name = "Role", type = "string", json_path = ".roleRef.name"),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    version(name = "v1", storage),
    protobuf = CLUSTER_ROLE_BINDING_PROTO
)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.ClusterRoleBinding")]
pub struct ClusterRoleBinding {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Who is granted the role.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    pub subjects: Vec<Subject>,
    /// The ClusterRole granted; cannot be changed.
    pub role_ref: RoleRef,
}

/// Who a binding grants its role to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.Subject")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// `rbac.authorization.k8s.io` for users and groups (the default), `""` for service
    /// accounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    /// The user's, group's or service account's name.
    pub name: String,
    /// The service account's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// The role a binding grants.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "io.k8s.api.rbac.v1.RoleRef")]
pub struct RoleRef {
    /// `rbac.authorization.k8s.io` (the default).
    #[serde(default = "rbac_group")]
    pub api_group: String,
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// The role's name.
    pub name: String,
}

// The wire shapes of k8s.io/api's `rbac/v1/generated.proto`: kubectl sends the kinds it
// knows as protobuf (`kubectl create role`, `create rolebinding`).

/// `k8s.io.api.rbac.v1.Role` on the wire.
pub static ROLE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.Role",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::repeated(2, "rules", ProtoKind::Message(&POLICY_RULE_PROTO)),
    ],
};

/// `k8s.io.api.rbac.v1.ClusterRole` on the wire.
pub static CLUSTER_ROLE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.ClusterRole",
    fields: &[
        ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
        ProtoField::repeated(2, "rules", ProtoKind::Message(&POLICY_RULE_PROTO)),
        ProtoField::new(
            3,
            "aggregationRule",
            ProtoKind::Message(&AGGREGATION_RULE_PROTO),
        ),
    ],
};

/// `k8s.io.api.rbac.v1.AggregationRule` on the wire.
pub static AGGREGATION_RULE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.AggregationRule",
    fields: &[ProtoField::repeated(
        1,
        "clusterRoleSelectors",
        ProtoKind::Message(&LABEL_SELECTOR_PROTO),
    )],
};

/// `k8s.io.api.rbac.v1.PolicyRule` on the wire.
pub static POLICY_RULE_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.PolicyRule",
    fields: &[
        ProtoField::repeated(1, "verbs", ProtoKind::String),
        ProtoField::repeated(2, "apiGroups", ProtoKind::String),
        ProtoField::repeated(3, "resources", ProtoKind::String),
        ProtoField::repeated(4, "resourceNames", ProtoKind::String),
        ProtoField::repeated(5, "nonResourceURLs", ProtoKind::String),
    ],
};

/// `k8s.io.api.rbac.v1.RoleBinding` on the wire.
pub static ROLE_BINDING_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.RoleBinding",
    fields: BINDING_FIELDS,
};

/// `k8s.io.api.rbac.v1.ClusterRoleBinding` on the wire.
pub static CLUSTER_ROLE_BINDING_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.ClusterRoleBinding",
    fields: BINDING_FIELDS,
};

const BINDING_FIELDS: &[ProtoField] = &[
    ProtoField::new(1, "metadata", ProtoKind::Message(&OBJECT_META_PROTO)),
    ProtoField::repeated(2, "subjects", ProtoKind::Message(&SUBJECT_PROTO)),
    ProtoField::new(3, "roleRef", ProtoKind::Message(&ROLE_REF_PROTO)),
];

/// `k8s.io.api.rbac.v1.Subject` on the wire.
pub static SUBJECT_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.Subject",
    fields: &[
        ProtoField::new(1, "kind", ProtoKind::String),
        ProtoField::new(2, "apiGroup", ProtoKind::String),
        ProtoField::new(3, "name", ProtoKind::String),
        ProtoField::new(4, "namespace", ProtoKind::String),
    ],
};

/// `k8s.io.api.rbac.v1.RoleRef` on the wire.
pub static ROLE_REF_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.api.rbac.v1.RoleRef",
    fields: &[
        ProtoField::new(1, "apiGroup", ProtoKind::String),
        ProtoField::new(2, "kind", ProtoKind::String),
        ProtoField::new(3, "name", ProtoKind::String),
    ],
};

fn rbac_group() -> String {
    GROUP.to_owned()
}

/// kube's `SetDefaults_Subject`: users and groups are in the RBAC group.
fn default_subjects(subjects: &mut [Subject]) {
    for subject in subjects {
        let unset = subject.api_group.as_deref().is_none_or(str::is_empty);
        if unset && (subject.kind == "User" || subject.kind == "Group") {
            subject.api_group = Some(GROUP.to_owned());
        }
    }
}

impl kapi_core::Strategy for Role {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::rules(&self.rules, true)
    }
}

impl kapi_core::Strategy for ClusterRole {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn validate(&self) -> Vec<FieldError> {
        let mut errors = validation::rules(&self.rules, false);
        errors.extend(validation::aggregation_rule(self.aggregation_rule.as_ref()));
        errors
    }
}

/// The strategy of a binding kind: users and groups defaulted into the RBAC group,
/// kube's rules (`namespaced` for RoleBindings), `roleRef` immutable.
macro_rules! binding_strategy {
    ($kind:ty, namespaced = $namespaced:expr) => {
        impl kapi_core::Strategy for $kind {
            /// kube's own kinds may be replaced without a resourceVersion.
            fn allow_unconditional_update() -> bool {
                true
            }

            fn prepare_for_create(&mut self) {
                default_subjects(&mut self.subjects);
            }

            fn prepare_for_update(&mut self, _old: &Self) {
                default_subjects(&mut self.subjects);
            }

            fn validate(&self) -> Vec<FieldError> {
                validation::binding(&self.role_ref, &self.subjects, $namespaced)
            }

            fn validate_update(&self, old: &Self) -> Vec<FieldError> {
                let mut errors = self.validate();
                let changed = validation::role_ref_unchanged(&self.role_ref, &old.role_ref);
                errors.extend(changed);
                errors
            }
        }
    };
}

binding_strategy!(RoleBinding, namespaced = true);
binding_strategy!(ClusterRoleBinding, namespaced = false);
