//! kube's API Priority and Fairness configuration objects and their keeper (kube's
//! `pkg/apis/flowcontrol/bootstrap` and `pkg/registry/flowcontrol/ensurer`): the
//! mandatory `exempt` and `catch-all` FlowSchemas and PriorityLevelConfigurations, kept as
//! kube keeps them (made when missing, their spec put back when changed, `exempt`'s
//! concurrency shares and lendable percent aside), and the suggested ones (made when
//! missing, their spec put back only while their `apf.kubernetes.io/autoupdate-spec`
//! annotation is `"true"`); objects outside the set that carry the annotation `"true"`
//! are deleted. The objects are kube 1.32's (`bootstrap.json`, transcribed from
//! k8s.io/apiserver v0.32.0 `pkg/apis/flowcontrol/bootstrap/default.go`).

use std::sync::OnceLock;

use serde_json::{Value, json};

use kapi_core::error::ApiError;
use kapi_core::scheme::KindEntry;
use kapi_core::strconv::parse_bool;
use kapi_registry::{Registry, Target, WriteOptions};

/// The annotation that says whether the keeper keeps an object's spec.
pub const AUTO_UPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// The keeper's field manager (kube's).
const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";

const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// kube 1.32's objects, by set (`mandatory`, `suggested`) and kind.
fn objects() -> &'static Value {
    static OBJECTS: OnceLock<Value> = OnceLock::new();
    OBJECTS.get_or_init(|| {
        serde_json::from_str(include_str!("bootstrap.json")).expect("bootstrap.json is JSON")
    })
}

fn of(set: &str, kind: &str) -> &'static [Value] {
    objects()[set][kind].as_array().map_or(&[], Vec::as_slice)
}

/// The mandatory FlowSchemas (what classification falls back on).
pub(super) fn mandatory_schemas() -> &'static [Value] {
    of("mandatory", "flowSchemas")
}

fn target(kind: &KindEntry) -> Target<'_> {
    Target {
        kind,
        version: "v1",
        namespace: None,
    }
}

fn producer() -> WriteOptions {
    WriteOptions {
        field_manager: Some(PRODUCER.into()),
        ..WriteOptions::default()
    }
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// One pass of the keeper (kube's `ensure`): the suggested levels and schemas, then the
/// mandatory ones, then what no longer belongs. Nothing when the scheme serves no
/// flowcontrol kinds.
pub async fn ensure(registry: &Registry) -> Result<(), ApiError> {
    let scheme = registry.scheme();
    let (Some(levels), Some(schemas)) = (
        scheme.by_resource(GROUP, "prioritylevelconfigurations"),
        scheme.by_resource(GROUP, "flowschemas"),
    ) else {
        return Ok(());
    };
    for (set, mandatory) in [("suggested", false), ("mandatory", true)] {
        for (kind, objects) in [
            (&levels, of(set, "priorityLevels")),
            (&schemas, of(set, "flowSchemas")),
        ] {
            for object in objects {
                ensure_one(registry, kind, object, mandatory).await?;
            }
        }
    }
    for (kind, field) in [(&schemas, "flowSchemas"), (&levels, "priorityLevels")] {
        let wanted = |n: &str| {
            ["mandatory", "suggested"]
                .iter()
                .any(|set| of(set, field).iter().any(|o| name(o) == n))
        };
        let list = registry.list(target(kind), &Default::default()).await?;
        for item in &list.items {
            let object = item.value();
            let auto = object["metadata"]["annotations"][AUTO_UPDATE]
                .as_str()
                .and_then(parse_bool);
            if wanted(name(&object)) || auto != Some(true) {
                continue;
            }
            match registry
                .delete(target(kind), name(&object), &Default::default())
                .await
            {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}

/// kube's `EnsureConfiguration` of one object.
async fn ensure_one(
    registry: &Registry,
    kind: &KindEntry,
    wanted: &Value,
    mandatory: bool,
) -> Result<(), ApiError> {
    let current = match registry.get(target(kind), name(wanted), None).await {
        Ok(current) => current,
        Err(ApiError::NotFound { .. }) => {
            return match registry
                .create(target(kind), wanted.clone(), &producer())
                .await
            {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                Err(error) => Err(error),
            };
        }
        Err(error) => return Err(error),
    };
    let annotation = current["metadata"]["annotations"][AUTO_UPDATE].as_str();
    let parsed = annotation.and_then(parse_bool);
    let auto = match (mandatory, parsed) {
        (true, _) => true,
        (false, Some(auto)) => auto,
        // Never edited since it was made: kept.
        (false, None) => current["metadata"]["generation"].as_i64() == Some(1),
    };
    let update_annotation = parsed != Some(auto);
    let spec_changed = auto && !same_spec(kind, wanted, &current)?;
    if !update_annotation && !spec_changed {
        return Ok(());
    }
    let mut revised = current.clone();
    if update_annotation {
        let annotations = &mut revised["metadata"]["annotations"];
        if !annotations.is_object() {
            *annotations = json!({});
        }
        annotations[AUTO_UPDATE] = json!(auto.to_string());
    }
    if spec_changed {
        revised["spec"] = wanted["spec"].clone();
    }
    match registry
        .update(target(kind), name(wanted), revised, None, &producer())
        .await
    {
        Ok(_) | Err(ApiError::Conflict { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

/// kube's `SpecEqualish`: the wanted spec, defaulted as the kind defaults it, is the
/// current one (for the `exempt` level, its concurrency shares and lendable percent are
/// the operator's).
fn same_spec(kind: &KindEntry, wanted: &Value, current: &Value) -> Result<bool, ApiError> {
    let internal = |e: kapi_core::scheme::ConversionError| ApiError::Internal(e.to_string());
    let defaulted = kind
        .default_in(wanted, "v1")
        .ok()
        .flatten()
        .unwrap_or_else(|| wanted.clone());
    let hub = kind.to_hub(defaulted, "v1").map_err(internal)?;
    let mut spec = kind.hub_json(&hub).map_err(internal)?["spec"].take();
    if name(wanted) == "exempt"
        && let (Some(exempt), Some(kept)) = (spec.get_mut("exempt"), current["spec"].get("exempt"))
    {
        for field in ["nominalConcurrencyShares", "lendablePercent"] {
            match kept.get(field) {
                Some(value) => exempt[field] = value.clone(),
                None => {
                    if let Some(exempt) = exempt.as_object_mut() {
                        exempt.remove(field);
                    }
                }
            }
        }
    }
    Ok(spec == current["spec"])
}
