//! API Priority and Fairness (kube's `flowcontrol`): every authenticated request
//! classified into a FlowSchema and its PriorityLevelConfiguration, said in kube's
//! `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID` response
//! headers (`filters::priority_and_fairness`); kube's configuration objects kept
//! (`bootstrap`); the FlowSchemas' `Dangling` condition kept, and the classifier rebuilt
//! whenever a FlowSchema or a level changes (`sync`, kube's config consumer).
//!
//! kapi classifies; it does not queue. Requests are limited by the max-in-flight pools
//! (`filters::max_inflight`), not by the levels' seats, queues and shuffle sharding.

pub mod bootstrap;
mod classifier;

use std::sync::Arc;

use arc_swap::ArcSwap;
use serde_json::{Value, json};

pub use classifier::{Classified, Classifier};
use kapi_core::error::ApiError;
use kapi_registry::{Passes, Registry, Subresource, Target, WriteOptions};

/// The status writer's field manager (kube's).
const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";

const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// The server's classifier, rebuilt by [`FlowControl::sync`].
#[derive(Default)]
pub struct FlowControl {
    classifier: ArcSwap<Classifier>,
    /// Whether a FlowSchema or a level changed since the classifier was built.
    passes: Passes,
}

impl FlowControl {
    /// The current classifier.
    pub fn classifier(&self) -> Arc<Classifier> {
        self.classifier.load_full()
    }

    /// One pass of kube's config consumer: when a FlowSchema or a level changed, the
    /// classifier is rebuilt and each FlowSchema's `Dangling` condition written where it
    /// says otherwise. Whether work is left (a condition not written).
    pub async fn sync(&self, registry: &Registry) -> Result<bool, ApiError> {
        let scheme = registry.scheme();
        let (Some(levels), Some(schemas)) = (
            scheme.by_resource(GROUP, "prioritylevelconfigurations"),
            scheme.by_resource(GROUP, "flowschemas"),
        ) else {
            return Ok(false);
        };
        let Some(stamp) = self.passes.start(registry, &[&schemas, &levels]) else {
            return Ok(false);
        };
        let list = async |kind| -> Result<Vec<Value>, ApiError> {
            let target = Target {
                kind,
                version: "v1",
                namespace: None,
            };
            let list = registry.list(target, &Default::default()).await?;
            Ok(list.items.iter().map(|item| item.value()).collect())
        };
        let level_objects = list(&levels).await?;
        let schema_objects = list(&schemas).await?;
        let by_name: Vec<(String, String)> = (level_objects.iter())
            .map(|l| {
                let field = |f: &str| l["metadata"][f].as_str().unwrap_or_default().to_owned();
                (field("name"), field("uid"))
            })
            .collect();
        self.classifier
            .store(Arc::new(Classifier::new(&schema_objects, &by_name)));
        let mut left = false;
        for schema in &schema_objects {
            let level = schema["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or_default();
            let found = by_name.iter().any(|(name, _)| name == level);
            let (status, reason, message) = match found {
                true => (
                    "False",
                    "Found",
                    format!(
                        "This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"
                    ),
                ),
                false => (
                    "True",
                    "NotFound",
                    format!(
                        "This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"
                    ),
                ),
            };
            let conditions = schema["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let current = conditions.iter().find(|c| c["type"] == "Dangling");
            let same = current.is_some_and(|c| {
                c["status"] == status && c["reason"] == reason && c["message"] == message.as_str()
            });
            if same {
                continue;
            }
            let mut written: Vec<Value> = conditions
                .into_iter()
                .filter(|c| c["type"] != "Dangling")
                .collect();
            written.push(json!({"type": "Dangling", "status": status, "lastTransitionTime": kapi_core::meta::now(),
                "reason": reason, "message": message}));
            let mut updated = schema.clone();
            updated["status"]["conditions"] = Value::Array(written);
            let name = schema["metadata"]["name"].as_str().unwrap_or_default();
            let options = WriteOptions {
                field_manager: Some(CONSUMER.into()),
                ..WriteOptions::default()
            };
            let target = Target {
                kind: &schemas,
                version: "v1",
                namespace: None,
            };
            match registry
                .update(target, name, updated, Some(Subresource::Status), &options)
                .await
            {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(ApiError::Conflict { .. }) => left = true,
                Err(error) => return Err(error),
            }
        }
        // Built from what was read: a write of a condition moved the cache, which the next
        // pass sees as a change (and finds nothing to write).
        self.passes.finish(stamp, left);
        Ok(left)
    }
}
