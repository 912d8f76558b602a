//! Evicting a Pod (kube's `EvictionREST`): `POST pods/{name}/eviction` deletes the pod
//! unless its PodDisruptionBudget forbids it. A pod that is pending, finished or already
//! being deleted goes at once; otherwise the one budget selecting it must allow a
//! disruption, which the eviction takes (`disruptionsAllowed` down by one, the pod among
//! `disruptedPods`) before marking the pod `DisruptionTarget` and deleting it. More than
//! one budget is refused as kube refuses it: a `Failure` Status inside a 201.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{condition, core_kind, plain_error, set_condition, success, target};
use kapi_core::error::{ApiError, GroupResource};
use kapi_core::meta::{
    DeleteOptions, LabelSelector, Preconditions, Status, StatusCause, StatusDetails,
};
use kapi_core::unstructured::{meta_str, now, set_path};
use kapi_registry::{Action, ActionRequest, Answer, ListOptions, Registry, SharedObject, Written};

/// kube's cap on the evictions a budget has not yet seen go.
const MAX_DISRUPTED_PODS: usize = 2000;

/// The action.
pub(super) struct Evict;

impl Action for Evict {
    fn create<'a>(&'a self, registry: &'a Registry, request: ActionRequest<'a>) -> Answer<'a> {
        Box::pin(evict(registry, request))
    }
}

async fn evict(registry: &Registry, mut request: ActionRequest<'_>) -> Result<Written, ApiError> {
    let eviction = request.body.clone();
    let name = request.name;
    if meta_str(&eviction, "name").unwrap_or_default() != name {
        return Err(ApiError::BadRequest(
            "name in URL does not match name in Eviction object".into(),
        ));
    }
    let mut options: DeleteOptions = match eviction.get("deleteOptions") {
        Some(Value::Null) | None => DeleteOptions::default(),
        Some(given) => serde_json::from_value(given.clone())
            .map_err(|e| ApiError::BadRequest(format!("the Eviction's deleteOptions: {e}")))?,
    };
    let dry_run = dry_run(&mut options, request.options.dry_run)?;
    // kube's `createValidation`: after the checks of the Eviction, before the pod is read.
    request.validate(registry, &eviction).await?;
    let pods = core_kind(registry, "pods")?;
    let namespace = request.target.namespace;
    let pods_target = target(&pods, namespace);
    let pod = registry.get(pods_target, name, None).await?;
    let user = request.options.user.as_ref();
    if can_ignore_budgets(&pod) {
        // A pending pod goes only as it was read, unless the client said otherwise.
        let pending = pod.pointer("/status/phase").and_then(Value::as_str) == Some("Pending")
            && meta_str(&pod, "deletionTimestamp").is_none();
        let has_revision =
            (options.preconditions.as_ref()).is_some_and(|p| p.resource_version.is_some());
        if pending && !has_revision {
            let preconditions = options
                .preconditions
                .get_or_insert_with(Preconditions::default);
            preconditions.resource_version = meta_str(&pod, "resourceVersion").map(str::to_owned);
        }
        registry
            .delete_admitted(pods_target, name, &options, user)
            .await?;
        return Ok(Written::new(success(), true, Vec::new()));
    }
    let budgets = budgets_selecting(registry, namespace, &pod).await?;
    match budgets.as_slice() {
        [] => {}
        [budget] => take_disruption(registry, namespace, budget, &pod, dry_run).await?,
        _ => {
            let refused = json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                "code": 500,
            });
            return Ok(Written::new(refused, true, Vec::new()));
        }
    }
    if !dry_run {
        let time = now();
        let marked = registry.change_stored(pods_target, name, false, |pod, _| {
            let disruption = json!({
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            });
            set_condition(pod, disruption, &time);
            Ok(())
        });
        marked.await?;
    }
    registry
        .delete_admitted(pods_target, name, &options, user)
        .await?;
    Ok(Written::new(success(), true, Vec::new()))
}

/// Whether the eviction is a dry run: the query's `dryRun` or the body's, which must agree
/// when both are given (kube's `propagateDryRun`); the options then carry it.
fn dry_run(options: &mut DeleteOptions, query: bool) -> Result<bool, ApiError> {
    let body = options.dry_run.clone().unwrap_or_default();
    let query_values: Vec<String> = match query {
        true => vec!["All".into()],
        false => Vec::new(),
    };
    if !body.is_empty() && query && body != query_values {
        return Err(plain_error(
            500,
            format!(
                "Non-matching dry-run options in request and content: {} and {}",
                go_list(&query_values),
                go_list(&body)
            ),
        ));
    }
    if body.is_empty() && query {
        options.dry_run = Some(query_values);
    }
    Ok(query || !body.is_empty())
}

/// A Go `[]string` as `%v` prints it.
fn go_list(values: &[String]) -> String {
    format!("[{}]", values.join(" "))
}

/// kube's `canIgnorePDB`: a pod that is pending, has finished, or is being deleted
/// disrupts nothing a budget counts.
fn can_ignore_budgets(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(phase, "Succeeded" | "Failed" | "Pending")
        || meta_str(pod, "deletionTimestamp").is_some()
}

/// The budgets of `namespace` whose selector matches the pod's labels (an empty selector
/// matches every pod, none matches none; one that does not parse is skipped).
async fn budgets_selecting(
    registry: &Registry,
    namespace: Option<&str>,
    pod: &Value,
) -> Result<Vec<Value>, ApiError> {
    let Some(budgets) = registry
        .scheme()
        .by_resource("policy", "poddisruptionbudgets")
    else {
        return Ok(Vec::new());
    };
    let list = registry
        .list(target(&budgets, namespace), &ListOptions::default())
        .await?;
    let labels: BTreeMap<String, String> = (pod.pointer("/metadata/labels").cloned())
        .and_then(|labels| serde_json::from_value(labels).ok())
        .unwrap_or_default();
    let selects = |budget: &Value| {
        let Some(selector) = budget.pointer("/spec/selector") else {
            return false;
        };
        let known = |r: &Value| {
            matches!(
                r.get("operator").and_then(Value::as_str),
                Some("In" | "NotIn" | "Exists" | "DoesNotExist")
            )
        };
        let expressions = (selector.get("matchExpressions").and_then(Value::as_array))
            .into_iter()
            .flatten();
        if !expressions.clone().all(known) {
            return false;
        }
        serde_json::from_value::<LabelSelector>(selector.clone()).is_ok_and(|s| s.matches(&labels))
    };
    Ok((list.items.iter())
        .map(SharedObject::value)
        .filter(selects)
        .collect())
}

/// kube's `checkAndDecrement` for an eviction under `budget`: a budget the disruption
/// controller has not caught up with, or with no disruption left, refuses (429); else one
/// disruption is taken and the pod recorded among its `disruptedPods` (not on a dry run).
/// A pod that is not ready goes without taking one when the budget's unhealthy-pod policy
/// allows it.
async fn take_disruption(
    registry: &Registry,
    namespace: Option<&str>,
    budget: &Value,
    pod: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    let ready = condition(pod, "Ready").and_then(|c| c.get("status")) == Some(&json!("True"));
    let status_int = |b: &Value, field: &str| {
        b.pointer(&format!("/status/{field}"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    if !ready {
        let policy = budget
            .pointer("/spec/unhealthyPodEvictionPolicy")
            .and_then(Value::as_str);
        let desired = status_int(budget, "desiredHealthy");
        let healthy_enough = status_int(budget, "currentHealthy") >= desired && desired > 0;
        if policy == Some("AlwaysAllow") || healthy_enough {
            return Ok(());
        }
    }
    let budget_name = meta_str(budget, "name").unwrap_or_default().to_owned();
    let budgets = registry
        .scheme()
        .by_resource("policy", "poddisruptionbudgets")
        .ok_or(ApiError::NoRoute)?;
    let pod_name = meta_str(pod, "name").unwrap_or_default().to_owned();
    let time = now();
    let take = registry.change_stored(target(&budgets, namespace), &budget_name, dry_run, |budget, _| {
        let generation = budget.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
        let observed = status_int(budget, "observedGeneration");
        if observed < generation {
            let cause = format!("The disruption budget {budget_name} is still being processed by the server.");
            return Err(too_many(cause, 10));
        }
        let allowed = status_int(budget, "disruptionsAllowed");
        let forbidden = |message: &str| ApiError::Forbidden {
            resource: GroupResource {
                group: "policy".into(),
                resource: "poddisruptionbudget".into(),
            },
            name: budget_name.clone(),
            message: message.into(),
        };
        if allowed < 0 {
            return Err(forbidden("pdb disruptions allowed is negative"));
        }
        let disrupted = (budget.pointer("/status/disruptedPods").and_then(Value::as_object))
            .map_or(0, |pods| pods.len());
        if disrupted > MAX_DISRUPTED_PODS {
            return Err(forbidden(
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            let cause = format!(
                "The disruption budget {budget_name} needs {} healthy pods and has {} currently",
                status_int(budget, "desiredHealthy"),
                status_int(budget, "currentHealthy"),
            );
            return Err(too_many(cause, 0));
        }
        set_path(budget, ".status.disruptionsAllowed", json!(allowed - 1));
        if allowed == 1 {
            let insufficient = json!({
                "type": "DisruptionAllowed",
                "status": "False",
                "reason": "InsufficientPods",
                "message": "",
                "observedGeneration": observed,
            });
            set_condition(budget, insufficient, &time);
        }
        // Pod names may hold dots: not a dotted path.
        let mut disrupted = (budget.pointer("/status/disruptedPods").and_then(Value::as_object))
            .cloned()
            .unwrap_or_default();
        disrupted.insert(pod_name.clone(), json!(time));
        set_path(budget, ".status.disruptedPods", Value::Object(disrupted));
        Ok(())
    });
    take.await.map(|_| ())
}

/// kube's refusal of an eviction a budget forbids: 429 with a `DisruptionBudget` cause,
/// and a time to retry when the budget is still being processed.
fn too_many(cause: String, retry_after_seconds: i32) -> ApiError {
    ApiError::Denied(Box::new(Status {
        kind: Some("Status".into()),
        api_version: Some("v1".into()),
        status: Some("Failure".into()),
        message: Some("Cannot evict pod as it would violate the pod's disruption budget.".into()),
        reason: Some("TooManyRequests".into()),
        details: Some(StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("DisruptionBudget".into()),
                message: Some(cause),
                field: None,
            }]),
            retry_after_seconds: (retry_after_seconds > 0).then_some(retry_after_seconds),
            ..StatusDetails::default()
        }),
        code: Some(429),
        ..Status::default()
    }))
}
