//! `apiextensions.k8s.io/v1` CustomResourceDefinition: a kind defined at runtime, with its
//! group, names, scope, versions (each with its OpenAPI v3 schema, subresources, printer
//! columns and selectable fields) and how objects convert between versions.
//!
//! The object itself is declared here like any kind and validated as kube validates it
//! (`validation`: kube's `apiextensions/validation` for the v1 API, with its field paths
//! and messages; `structural`: its checks of each version's schema); its defaults and server-owned status are kube's strategy's. The schema of
//! each version is kept as written (`openAPIV3Schema`, like a `/status` subresource's `{}`,
//! is any JSON value to the CRD's own schema).

#[cfg(feature = "server")]
mod conversion;
#[cfg(feature = "server")]
mod defaults;
#[cfg(feature = "server")]
pub mod install;
mod openapi_schema;
mod structural;
mod validation;

use kapi_core::error::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The group of CustomResourceDefinitions.
pub const GROUP: &str = "apiextensions.k8s.io";

/// The finalizer that holds a definition being deleted until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `spec.scope` of a namespaced kind.
pub const NAMESPACED: &str = "Namespaced";
/// `spec.scope` of a cluster-scoped kind.
pub const CLUSTER: &str = "Cluster";

pub use crate::api::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionCondition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, SelectableField, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};

/// A version's schema (`openAPIV3Schema`), kept as written: any JSON value to the
/// definition's own schema, its validation (`structural`, `openapi_schema`) the judge of
/// it. Every field of it is known (server-side apply merges and owns it, strict field
/// validation accepts it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonSchemaProps(pub Value);

impl std::ops::Deref for JsonSchemaProps {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

impl JsonSchema for JsonSchemaProps {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonSchemaProps".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"x-kubernetes-preserve-unknown-fields": true})
    }
}

impl kapi_core::meta::StatusCondition for CustomResourceDefinitionCondition {
    fn condition_type(&self) -> &str {
        &self.r#type
    }

    fn condition_status(&self) -> &str {
        &self.status
    }

    fn last_transition(&mut self) -> &mut Option<kapi_core::meta::Time> {
        &mut self.last_transition_time
    }
}

impl CustomResourceDefinition {
    /// The version objects are stored in: the first marked `storage` (validation refuses
    /// more than one).
    pub fn storage_version(&self) -> Option<&str> {
        (self.spec.versions.iter())
            .find(|v| v.storage)
            .map(|v| v.name.as_str())
    }

    /// kube's v1 defaults: the singular name is the kind in lower case, the list kind
    /// `<kind>List`, the conversion `None`, a webhook Service's port 443.
    fn default_fields(&mut self) {
        let names = &mut self.spec.names;
        if names.singular.is_empty() {
            names.singular = names.kind.to_lowercase();
        }
        if names.list_kind.is_empty() && !names.kind.is_empty() {
            names.list_kind = format!("{}List", names.kind);
        }
        let conversion = (self.spec.conversion).get_or_insert_with(|| CustomResourceConversion {
            strategy: "None".into(),
            webhook: None,
        });
        let service = (conversion.webhook.as_mut())
            .and_then(|webhook| webhook.client_config.as_mut())
            .and_then(|config| config.service.as_mut());
        if let Some(service) = service {
            service.port.get_or_insert(443);
        }
    }

    /// kube's `SetCRDCondition`: sets the condition of its type, its transition time now
    /// unless its status stays the same.
    pub fn set_condition(&mut self, condition: CustomResourceDefinitionCondition) {
        kapi_core::meta::set_condition(&mut self.status.conditions, condition);
    }

    /// Adds the storage version to `status.storedVersions` (kube's strategy: every
    /// version objects may have been stored in stays listed until a migration removes it).
    fn record_storage_version(&mut self) {
        let Some(storage) = self.storage_version().map(str::to_owned) else {
            return;
        };
        let status = &mut self.status;
        if !status.stored_versions.contains(&storage) {
            status.stored_versions.push(storage);
        }
    }
}

impl kapi_core::Strategy for CustomResourceDefinition {
    /// kube 1.32's status strategy means to reset the metadata but passes the new object
    /// as the old (`ResetObjectMetaForStatus(&new, &new)`, since 1.21): all of it passes.
    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => kapi_core::api::STATUS_METADATA,
            _ => &[],
        }
    }

    fn prepare_for_create(&mut self) {
        self.default_fields();
        self.record_storage_version();
    }

    fn prepare_for_update(&mut self, _old: &Self) {
        self.default_fields();
        self.record_storage_version();
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::create(self)
    }

    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        validation::update(self, old)
    }

    fn has_delete_rules() -> bool {
        true
    }

    /// kube's CRD REST `Delete`: its objects go first, so the definition waits for the
    /// cleanup finalizer, and its status says so.
    fn prepare_for_delete(&mut self) {
        let finalizers = self.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_owned());
        }
        self.set_condition(CustomResourceDefinitionCondition {
            r#type: "Terminating".into(),
            status: "True".into(),
            last_transition_time: None,
            reason: "InstanceDeletionPending".into(),
            message:
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
                    .into(),
        });
    }
}
