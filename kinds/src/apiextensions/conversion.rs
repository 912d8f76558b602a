//! A definition's `Webhook` conversion: kube's webhook converter
//! (`apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go`). An object is
//! sent in a `ConversionReview` (`apiextensions.k8s.io/v1`) over HTTPS to the definition's
//! `clientConfig.url`, trusting its `caBundle`, and the converted object checked as kube
//! checks it: the response's uid, `Success`, one object, the desired `apiVersion`, the same
//! kind, name, namespace and uid; its metadata is the original's, but for the labels and
//! annotations the webhook may change.
//!
//! The registry converts synchronously, so the call blocks its thread (moved off the
//! runtime's workers with `block_in_place`), as kube's converter blocks its goroutine.
//! `clientConfig.service` is refused: this server has no Services to resolve it with.

use std::time::Duration;

use serde_json::{Value, json};

use super::WebhookConversion;
use super::install::DefinitionError;
use kapi_core::scheme::ConversionError;

/// The review versions this server speaks.
const REVIEW_VERSION: &str = "v1";

/// One definition's conversion webhook: its client, or why it cannot be called (then every
/// conversion fails with that reason, as kube's calls to an unreachable webhook do).
pub(super) struct Webhook {
    client: Result<kapi_webhook::Webhook, String>,
}

impl Webhook {
    /// The webhook `config` names.
    pub(super) fn new(config: Option<&WebhookConversion>) -> Webhook {
        let client = match config {
            Some(config) => Webhook::client(config).map_err(|e| e.to_string()),
            None => Err("the definition names no webhook".to_owned()),
        };
        Webhook { client }
    }

    fn client(config: &WebhookConversion) -> Result<kapi_webhook::Webhook, DefinitionError> {
        if !config
            .conversion_review_versions
            .iter()
            .any(|v| v == REVIEW_VERSION)
        {
            return Err(DefinitionError::new(format!(
                "no supported conversion review versions in {:?} (this server speaks {REVIEW_VERSION})",
                config.conversion_review_versions
            )));
        }
        let client = config.client_config.as_ref();
        let Some(url) = client.and_then(|c| c.url.clone()) else {
            return Err(DefinitionError::new(
                "a conversion webhook reached through a Service is not supported by this server: give clientConfig.url",
            ));
        };
        let bundle = client
            .map(|c| &c.ca_bundle)
            .filter(|b| !b.0.is_empty())
            .map(|b| b.0.as_slice());
        // kube's webhook timeout.
        kapi_webhook::Webhook::new(url, bundle, Duration::from_secs(30))
            .map_err(|e| DefinitionError::new(e.to_string()))
    }

    /// `object` in `api_version`: itself when it is in it already, else what the webhook
    /// converts it to.
    pub(super) fn convert(
        &self,
        object: Value,
        api_version: &str,
    ) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if from == api_version {
            return Ok(object);
        }
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let failed = |why: String| {
            let gvk = match from.rsplit_once('/') {
                Some((group, version)) => format!("{group}/{version}, Kind={kind}"),
                None => format!("{from}, Kind={kind}"),
            };
            ConversionError::Webhook(format!("conversion webhook for {gvk} failed: {why}"))
        };
        let webhook = self.client.as_ref().map_err(|why| failed(why.clone()))?;
        let uid = kapi_core::unstructured::new_uid();
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": [object]},
        });
        let call = || webhook.post(&review).map_err(|e| e.to_string());
        let answer = blocking(call).map_err(failed)?;
        let converted = checked(&answer, &uid).map_err(failed)?;
        let mut converted = converted.clone();
        validate(&object, &converted, api_version).map_err(|why| {
            ConversionError::Webhook(format!(
                "conversion webhook for {from}, Kind={kind} returned invalid object: {why}"
            ))
        })?;
        restore_metadata(&object, &mut converted);
        Ok(converted)
    }
}

/// Runs a blocking call from async code: off the runtime's worker when it has others.
fn blocking<T>(call: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}

/// The one converted object of a review's response, as kube's
/// `getConvertedObjectsFromResponse` checks it.
fn checked<'a>(answer: &'a Value, uid: &str) -> Result<&'a Value, String> {
    let kind = (answer.get("apiVersion"), answer.get("kind"));
    if kind
        != (
            Some(&json!("apiextensions.k8s.io/v1")),
            Some(&json!("ConversionReview")),
        )
    {
        return Err(format!(
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {}, Kind={}",
            kind.0.and_then(Value::as_str).unwrap_or_default(),
            kind.1.and_then(Value::as_str).unwrap_or_default()
        ));
    }
    let response = answer.get("response").ok_or("no response provided")?;
    let got = response
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let status = (response.pointer("/result/status").and_then(Value::as_str)).unwrap_or_default();
    if status != "Success" {
        let message = response.pointer("/result/message").and_then(Value::as_str);
        return Err(match message {
            Some(message) => {
                format!("response.result.status was '{status}', not 'Success': {message}")
            }
            None => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    let objects = (response.get("convertedObjects").and_then(Value::as_array))
        .map(Vec::as_slice)
        .unwrap_or_default();
    match objects {
        [one] => Ok(one),
        [] => Err("no objects returned".into()),
        many => Err(format!("returned {} objects, expected 1", many.len())),
    }
}

/// kube's checks of a converted object: the desired `apiVersion`, and the same kind,
/// name, namespace and uid.
fn validate(original: &Value, converted: &Value, api_version: &str) -> Result<(), String> {
    let text = |object: &Value, pointer: &str| -> String {
        (object.pointer(pointer).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned()
    };
    let got = text(converted, "/apiVersion");
    if got != api_version {
        return Err(format!(
            "invalid groupVersion (expected {api_version}, received {got})"
        ));
    }
    for (pointer, what) in [
        ("/kind", "kind"),
        ("/metadata/name", "name"),
        ("/metadata/namespace", "namespace"),
        ("/metadata/uid", "UID"),
    ] {
        let (expected, received) = (text(original, pointer), text(converted, pointer));
        if expected != received {
            return Err(format!(
                "must have the same {what}: {expected} != {received}"
            ));
        }
    }
    Ok(())
}

/// kube's `restoreObjectMeta`: the original's metadata, with the converted object's labels
/// and annotations.
fn restore_metadata(original: &Value, converted: &mut Value) {
    let mut metadata = original
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for field in ["labels", "annotations"] {
        match converted.pointer(&format!("/metadata/{field}")).cloned() {
            Some(value) if !value.is_null() => metadata[field] = value,
            _ => {
                if let Some(map) = metadata.as_object_mut() {
                    map.remove(field);
                }
            }
        }
    }
    converted["metadata"] = metadata;
}
