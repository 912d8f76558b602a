//! Binding a Pod to a Node (kube's `BindingREST` and `LegacyBindingREST`): `POST
//! pods/{name}/binding` and `POST namespaces/{ns}/bindings` set the pod's `spec.nodeName`,
//! merge the Binding's annotations into the pod's and mark it `PodScheduled`, in one
//! storage update with no strategy or admission on the pod, as kube's scheduler expects.

use serde_json::{Map, Value, json};

use super::{core_kind, plain_error, set_condition, success, target};
use kapi_core::error::{ApiError, GroupResource};
use kapi_core::unstructured::{meta_str, now, set_path};
use kapi_registry::{Action, ActionRequest, Answer, Registry, Written};

/// The action of both routes.
pub(super) struct Bind;

impl Action for Bind {
    fn create<'a>(&'a self, registry: &'a Registry, request: ActionRequest<'a>) -> Answer<'a> {
        Box::pin(bind(registry, request))
    }
}

async fn bind(registry: &Registry, mut request: ActionRequest<'_>) -> Result<Written, ApiError> {
    let body = request.body.clone();
    let binding = &body;
    let on_pod = request.target.kind.info.plural == "pods";
    let name = meta_str(binding, "name").unwrap_or_default();
    if on_pod && name != request.name {
        return Err(ApiError::BadRequest(
            "name in URL does not match name in Binding object".into(),
        ));
    }
    validate(binding)?;
    // kube's `createValidation`: once the Binding is valid, before the pod is written.
    request.validate(registry, binding).await?;
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Err(ApiError::BadRequest("Name parameter required.".into()));
    }
    // The collection's creates lose the uid (kube wipes it before a non-subresource
    // create); both keep the resourceVersion. Either, when given, must be the pod's.
    let uid = meta_str(binding, "uid").filter(|u| on_pod && !u.is_empty());
    let revision = meta_str(binding, "resourceVersion").filter(|r| !r.is_empty());
    let annotations = (binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object))
    .cloned()
    .unwrap_or_default();
    let pods = core_kind(registry, "pods")?;
    let pods_target = target(&pods, request.target.namespace);
    let refused = |message: String| ApiError::Conflict {
        resource: GroupResource {
            group: String::new(),
            resource: "pods/binding".into(),
        },
        name: name.to_owned(),
        message,
    };
    let precondition = |message: String| ApiError::Conflict {
        resource: GroupResource {
            group: String::new(),
            resource: "pods".into(),
        },
        name: name.to_owned(),
        message: format!("Precondition failed: {message}"),
    };
    let time = now();
    let dry_run = request.options.dry_run;
    let change = registry.change_stored(pods_target, name, dry_run, |pod, stored_revision| {
        let pod_uid = meta_str(pod, "uid").unwrap_or_default();
        if let Some(uid) = uid.filter(|uid| *uid != pod_uid) {
            return Err(precondition(format!(
                "UID in precondition: {uid}, UID in object meta: {pod_uid}"
            )));
        }
        if let Some(revision) = revision.filter(|r| *r != stored_revision.to_string()) {
            return Err(precondition(format!(
                "ResourceVersion in precondition: {revision}, ResourceVersion in object meta: {stored_revision}"
            )));
        }
        if meta_str(pod, "deletionTimestamp").is_some() {
            return Err(refused(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            )));
        }
        if let Some(assigned) = (pod.pointer("/spec/nodeName").and_then(Value::as_str))
            .filter(|n| !n.is_empty())
        {
            return Err(refused(format!(
                "pod {name} is already assigned to node {assigned:?}"
            )));
        }
        let gated = (pod.pointer("/spec/schedulingGates").and_then(Value::as_array))
            .is_some_and(|gates| !gates.is_empty());
        if gated {
            return Err(refused(format!(
                "pod {name} has non-empty .spec.schedulingGates"
            )));
        }
        set_path(pod, ".spec.nodeName", json!(node));
        if !annotations.is_empty() {
            let mut merged = (pod.pointer("/metadata/annotations").and_then(Value::as_object))
                .cloned()
                .unwrap_or_else(Map::new);
            merged.extend(annotations.clone());
            set_path(pod, ".metadata.annotations", Value::Object(merged));
        }
        set_condition(pod, json!({"type": "PodScheduled", "status": "True"}), &time);
        Ok(())
    });
    change.await?;
    Ok(Written::new(success(), true, Vec::new()))
}

/// kube's `ValidatePodBinding`: the target is a Node (or says no kind) and is named. Its
/// errors are not a Status in kube (a 500 without a reason), and are answered as such.
fn validate(binding: &Value) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errors.push(format!(
            "target.kind: Unsupported value: {kind:?}: supported values: \"Node\", \"<empty>\""
        ));
    }
    let name = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        errors.push("target.name: Required value".to_owned());
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(plain_error(500, errors.remove(0))),
        _ => Err(plain_error(500, format!("[{}]", errors.join(", ")))),
    }
}
