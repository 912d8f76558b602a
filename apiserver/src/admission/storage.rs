//! kube's storage admission plugins: `DefaultStorageClass` (a new claim without a class
//! gets the default StorageClass: the newest of those annotated default),
//! `StorageObjectInUseProtection` (new claims and volumes get kube's protection
//! finalizers) and `PersistentVolumeClaimResize` (a claim grows only when bound and its
//! class allows expansion).

use serde_json::{Value, json};

use super::{Lister, Plugin, forbidden, is};
use kapi_core::error::ApiError;
use kapi_core::quantity::Quantity;
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

/// `DefaultStorageClass`.
pub(super) struct DefaultStorageClass {
    classes: Lister,
}

impl Default for DefaultStorageClass {
    fn default() -> Self {
        DefaultStorageClass {
            classes: Lister::new(GROUP, "storageclasses"),
        }
    }
}

/// `StorageObjectInUseProtection`.
pub(super) struct InUseProtection;

/// `PersistentVolumeClaimResize`.
pub(super) struct ClaimResize {
    classes: Lister,
}

impl Default for ClaimResize {
    fn default() -> Self {
        ClaimResize {
            classes: Lister::new(GROUP, "storageclasses"),
        }
    }
}

const GROUP: &str = "storage.k8s.io";

const BETA_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

#[async_trait::async_trait]
impl Plugin for DefaultStorageClass {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let create = attributes.operation == Operation::Create;
        (
            create && is(attributes, "", "persistentvolumeclaims"),
            false,
        )
    }

    async fn admit(
        &self,
        registry: &Registry,
        _attributes: &Attributes<'_>,
        claim: &mut Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let has_class = claim["spec"]
            .get("storageClassName")
            .is_some_and(|c| !c.is_null())
            || claim
                .pointer(&format!(
                    "/metadata/annotations/{}",
                    BETA_CLASS.replace('/', "~1")
                ))
                .is_some();
        if has_class {
            return Ok(());
        }
        let classes = self.classes.objects(registry).await?;
        let classes = classes.of("");
        let is_default = |class: &Value| {
            [
                "storageclass.kubernetes.io/is-default-class",
                "storageclass.beta.kubernetes.io/is-default-class",
            ]
            .iter()
            .any(|key| class["metadata"]["annotations"][*key] == "true")
        };
        // The newest default; on a tie, the first name.
        let default = (classes.iter().filter(|c| is_default(c))).max_by(|a, b| {
            let created = |c: &Value| {
                c["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            };
            let name = |c: &Value| c["metadata"]["name"].as_str().unwrap_or("").to_owned();
            created(a)
                .cmp(&created(b))
                .then_with(|| name(b).cmp(&name(a)))
        });
        if let Some(class) = default {
            claim["spec"]["storageClassName"] = class["metadata"]["name"].clone();
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Plugin for InUseProtection {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let create = attributes.operation == Operation::Create;
        let kind =
            is(attributes, "", "persistentvolumeclaims") || is(attributes, "", "persistentvolumes");
        (create && kind, false)
    }

    async fn admit(
        &self,
        _registry: &Registry,
        attributes: &Attributes<'_>,
        object: &mut Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let finalizer = match attributes.kind.info.plural {
            "persistentvolumeclaims" => "kubernetes.io/pvc-protection",
            _ => "kubernetes.io/pv-protection",
        };
        let finalizers = &mut object["metadata"]["finalizers"];
        if !finalizers.is_array() {
            *finalizers = json!([]);
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == finalizer)
        {
            list.push(json!(finalizer));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Plugin for ClaimResize {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let update = attributes.operation == Operation::Update;
        (
            false,
            update && is(attributes, "", "persistentvolumeclaims"),
        )
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        claim: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let (Some(claim), Some(old)) = (claim, old) else {
            return Ok(Vec::new());
        };
        let storage = |c: &Value| {
            (c.pointer("/spec/resources/requests/storage")
                .and_then(Value::as_str))
            .and_then(|q| Quantity::parse(q).ok())
        };
        let grows = match (storage(claim), storage(old)) {
            (Some(new), Some(before)) => new.cmp(&before) == std::cmp::Ordering::Greater,
            _ => false,
        };
        if !grows {
            return Ok(Vec::new());
        }
        if old["status"]["phase"] != "Bound" {
            let message = "Only bound persistent volume claims can be expanded";
            return Err(forbidden(attributes, Some(claim), message));
        }
        let class_of = |c: &Value| {
            (c.pointer(&format!(
                "/metadata/annotations/{}",
                BETA_CLASS.replace('/', "~1")
            )))
            .or_else(|| c.pointer("/spec/storageClassName"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
        };
        let (class, before) = (class_of(claim), class_of(old));
        let classes = self.classes.objects(registry).await?;
        let classes = classes.of("");
        let expands = !class.is_empty()
            && class == before
            && (classes.iter()).any(|c| {
                c["metadata"]["name"] == class.as_str() && c["allowVolumeExpansion"] == json!(true)
            });
        if !expands {
            let message = "only dynamically provisioned pvc can be resized and the storageclass \
                           that provisions the pvc must support resize";
            return Err(forbidden(attributes, Some(claim), message));
        }
        Ok(Vec::new())
    }
}
