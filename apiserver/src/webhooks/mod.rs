//! Admission webhooks: the `MutatingWebhookConfiguration`s and
//! `ValidatingWebhookConfiguration`s the registry holds, called on writes as kube's
//! webhook admission plugins call them.
//!
//! - Configurations are read from the registry's watch caches, in name order (kube's
//!   order), and compiled into [`Hook`]s (an HTTPS client per webhook) again only when one
//!   of them changed (the caches share an unchanged object: nothing is decoded then).
//! - A write is sent to the webhooks whose rules, namespace selector and object selector
//!   match it ([`matching`]), in the request's version or, with `matchPolicy: Equivalent`,
//!   converted to another version of the kind the rules name.
//! - Mutating webhooks are called one after another, each on what the previous ones made;
//!   their JSON patches apply to the object sent, which then converts back. Those with
//!   `reinvocationPolicy: IfNeeded` are called once more when a later webhook changed the
//!   object after them. Validating webhooks are called together.
//! - A refusal answers with the webhook's status as kube's `ToStatusErr` shapes it (code
//!   at least 400, `admission webhook "<name>" denied the request: <message>`); a webhook
//!   that cannot be called, or answers wrongly, fails the write with kube's 500
//!   (`failed calling webhook "<name>": ...`) under `failurePolicy: Fail` and is skipped
//!   under `Ignore`. Warnings reach the client.

mod call;
pub mod matching;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use kapi_core::error::ApiError;
use kapi_core::meta::{LabelSelector, Status};
use kapi_kinds::admissionregistration::{
    GROUP, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookView,
};
use kapi_registry::admission::{Admission, Attributes};
use kapi_registry::{GetOptions, ListOptions, Registry, SharedObject, Stamp, Target};

use crate::admission::{Reinvocable, Reinvocation};
use crate::authz::AuthorizerSlot;
use crate::policies::conditions::{MatchConditions, Matched};

/// One webhook, ready to call.
pub struct Hook {
    /// Its name (`label.example.com`).
    pub name: String,
    rules: Vec<RuleWithOperations>,
    /// `failurePolicy: Fail`.
    fail: bool,
    /// `matchPolicy: Equivalent`.
    equivalent: bool,
    namespace_selector: LabelSelector,
    object_selector: LabelSelector,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    reinvoke: bool,
    /// A mutating webhook.
    mutating: bool,
    /// `matchConditions`, compiled.
    conditions: Arc<MatchConditions>,
    client: call::Client,
}

impl Hook {
    fn new(spec: WebhookView<'_>, mutating: bool) -> Hook {
        let seconds = spec.timeout_seconds.unwrap_or(10).clamp(1, 30);
        Hook {
            mutating,
            conditions: Arc::new(MatchConditions::new(spec.match_conditions, false)),
            name: spec.name.to_owned(),
            rules: spec.rules.to_vec(),
            fail: spec.failure_policy != Some("Ignore"),
            equivalent: spec.match_policy != Some("Exact"),
            namespace_selector: spec.namespace_selector.cloned().unwrap_or_default(),
            object_selector: spec.object_selector.cloned().unwrap_or_default(),
            reinvoke: spec.reinvocation_policy == Some("IfNeeded"),
            client: call::Client::new(
                spec.client_config,
                Duration::from_secs(seconds as u64),
                spec.admission_review_versions,
            ),
        }
    }
}

/// The two kinds of webhook configuration.
const MUTATING: &str = "MutatingWebhookConfiguration";
const VALIDATING: &str = "ValidatingWebhookConfiguration";

/// The compiled webhooks, and the configurations (as the watch caches share them) they
/// were compiled from.
struct Compiled {
    /// The two kinds' stamp before they were listed.
    revisions: Option<Stamp>,
    from: Vec<SharedObject>,
    mutating: Arc<Vec<Hook>>,
    validating: Arc<Vec<Hook>>,
}

/// The registry's webhooks, compiled from its configurations as they change.
#[derive(Default)]
pub struct Webhooks {
    compiled: Mutex<Option<Arc<Compiled>>>,
    /// The authorization modes match conditions ask (`authorizer`).
    authorizer: AuthorizerSlot,
}

impl Webhooks {
    /// Webhooks whose match conditions ask the modes `authorizer` will hold.
    pub fn new(authorizer: AuthorizerSlot) -> Webhooks {
        Webhooks {
            compiled: Mutex::default(),
            authorizer,
        }
    }

    /// The current mutating and validating webhooks, in kube's order (configurations by
    /// name, as the caches list them; webhooks as each lists them). Compiled again only
    /// when a configuration changed: an unchanged one is the cache's same shared object.
    ///
    /// Every write asks: while neither kind changed since the last compilation (their
    /// [`Stamp`]), that one stands, with no list of either kind.
    async fn current(&self, registry: &Registry) -> Result<Arc<Compiled>, ApiError> {
        let kind = |kind| registry.scheme().by_kind(GROUP, kind);
        let revisions = match (kind(MUTATING), kind(VALIDATING)) {
            (Some(mutating), Some(validating)) => registry.stamp(&[&mutating, &validating]),
            _ => None,
        };
        let compiled = || {
            self.compiled
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        };
        if let Some(current) =
            compiled().filter(|c| c.revisions.is_some() && c.revisions == revisions)
        {
            return Ok(current);
        }
        let mutating = configurations(registry, MUTATING).await?;
        let validating = configurations(registry, VALIDATING).await?;
        let from: Vec<SharedObject> = mutating.iter().chain(&validating).cloned().collect();
        if let Some(current) = compiled().filter(|c| same(&c.from, &from)) {
            let current = Arc::new(Compiled {
                revisions,
                from,
                mutating: Arc::clone(&current.mutating),
                validating: Arc::clone(&current.validating),
            });
            *self.compiled.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&current));
            return Ok(current);
        }
        let mut mutating_hooks = Vec::new();
        for object in &mutating {
            let configuration: MutatingWebhookConfiguration = typed(object)?;
            mutating_hooks.extend(
                configuration
                    .webhooks
                    .iter()
                    .map(|hook| Hook::new(hook.view(), true)),
            );
        }
        let mut validating_hooks = Vec::new();
        for object in &validating {
            let configuration: ValidatingWebhookConfiguration = typed(object)?;
            validating_hooks.extend(
                configuration
                    .webhooks
                    .iter()
                    .map(|hook| Hook::new(hook.view(), false)),
            );
        }
        let current = Arc::new(Compiled {
            revisions,
            from,
            mutating: Arc::new(mutating_hooks),
            validating: Arc::new(validating_hooks),
        });
        *self.compiled.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&current));
        Ok(current)
    }
}

#[async_trait::async_trait]
impl Admission for Webhooks {
    /// Whether any mutating and any validating webhook is configured (which a write
    /// of an exempt kind never meets): writes skip preparing what webhooks would be sent
    /// when none is.
    async fn configured(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
    ) -> Result<(bool, bool), ApiError> {
        if exempt(attributes) {
            return Ok((false, false));
        }
        let compiled = self.current(registry).await?;
        Ok((
            !compiled.mutating.is_empty(),
            !compiled.validating.is_empty(),
        ))
    }

    /// Calls the mutating webhooks that match a write of `object` (in the request's
    /// version; `old` for an update), reinvoking as kube does when they are the only
    /// reinvocable admission: the object as they leave it, and their warnings.
    async fn mutate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Value,
        old: Option<&Value>,
    ) -> Result<(Value, Vec<String>), ApiError> {
        crate::admission::reinvocation::reinvoking(self, registry, attributes, object, old).await
    }

    /// Calls the validating webhooks that match a write (`object` in the request's
    /// version, none for a delete; `old` for an update or delete), together: their warnings,
    /// or the first refusal or failure in their order.
    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        if exempt(attributes) {
            return Ok(Vec::new());
        }
        let compiled = self.current(registry).await?;
        let calls = compiled.validating.iter().map(|hook| async move {
            let mut warnings = Vec::new();
            let Some(version) =
                matched(registry, hook, attributes, object, old, &self.authorizer).await?
            else {
                return Ok(warnings);
            };
            let sent = in_version(attributes, object, &version)?;
            let old_sent = in_version(attributes, old, &version)?;
            let request = request(attributes, &version, sent.as_ref(), old_sent.as_ref());
            if let Some(verdict) = judged(hook, request, false).await? {
                warnings.extend(verdict.warnings);
                if !verdict.allowed {
                    return Err(denied(&hook.name, verdict.status));
                }
            }
            Ok(warnings)
        });
        let results = futures_util::future::join_all(calls).await;
        let mut warnings = Vec::new();
        for result in results {
            warnings.extend(result?);
        }
        Ok(warnings)
    }
}

/// The name webhooks' records go by in a write's reinvocation context.
const REINVOCATION: &str = "MutatingAdmissionWebhook";

#[async_trait::async_trait]
impl Reinvocable for Webhooks {
    /// One pass of the mutating webhooks, each on what the previous ones made (kube's
    /// dispatcher): in the second pass only those with `reinvocationPolicy: IfNeeded`
    /// that something changed the object after; a webhook not called in the first pass
    /// is not called in the second.
    async fn mutate_pass(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        mut object: Value,
        old: Option<&Value>,
        reinvocation: &mut Reinvocation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let mut warnings = Vec::new();
        if exempt(attributes) {
            return Ok((object, warnings));
        }
        let compiled = self.current(registry).await?;
        if compiled.mutating.is_empty() {
            return Ok((object, warnings));
        }
        let again = reinvocation.again;
        reinvocation.record(REINVOCATION).begin(&object);
        for (index, hook) in compiled.mutating.iter().enumerate() {
            let key = index.to_string();
            if !reinvocation.record(REINVOCATION).runs(&key, again) {
                continue;
            }
            let after = mutate_one(
                registry,
                hook,
                attributes,
                &object,
                old,
                &mut warnings,
                &self.authorizer,
            )
            .await?;
            if let Some(after) = after {
                let changed = after != object;
                object = after;
                reinvocation.wanted |= changed;
                (reinvocation.record(REINVOCATION)).ran(key, hook.reinvoke, changed);
            }
        }
        reinvocation.record(REINVOCATION).end(&object);
        Ok((object, warnings))
    }
}

/// The webhook configurations are never sent to webhooks (kube exempts them, so that a
/// broken webhook cannot keep itself from being fixed).
fn exempt(attributes: &Attributes<'_>) -> bool {
    attributes.kind.info.group == GROUP
}

/// The objects of `admissionregistration.k8s.io` `kind` (webhook configurations,
/// policies, bindings), as the watch cache lists them (by name); none when the scheme does
/// not serve the kind.
pub(crate) async fn configurations(
    registry: &Registry,
    kind: &str,
) -> Result<Vec<SharedObject>, ApiError> {
    let Some(kind) = registry.scheme().by_kind(GROUP, kind) else {
        return Ok(Vec::new());
    };
    // Read in the version the kind is served in (`v1`; the mutating policies' `v1beta1`).
    let Some(version) = kind.versions().next() else {
        return Ok(Vec::new());
    };
    let target = Target {
        kind: &kind,
        version,
        namespace: None,
    };
    let options = ListOptions {
        resource_version: Some("0".into()),
        ..ListOptions::default()
    };
    Ok(registry.list(target, &options).await?.items)
}

/// Whether two lists of configurations are the same shared objects.
pub(crate) fn same(a: &[SharedObject], b: &[SharedObject]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| SharedObject::ptr_eq(a, b))
}

/// A configuration as its type.
fn typed<K: serde::de::DeserializeOwned>(object: &SharedObject) -> Result<K, ApiError> {
    serde_json::from_value(object.value())
        .map_err(|e| ApiError::Internal(format!("reading a webhook configuration: {e}")))
}

/// Calls one mutating webhook when it matches: the object as its patch leaves it (in the
/// request's version), or `None` when it was not called or skipped. A delete's object is
/// null: the webhook is sent none, and a patch fails the delete (kube's words).
async fn mutate_one(
    registry: &Registry,
    hook: &Hook,
    attributes: &Attributes<'_>,
    object: &Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
    authorizer: &AuthorizerSlot,
) -> Result<Option<Value>, ApiError> {
    let given = (!object.is_null()).then_some(object);
    let Some(version) = matched(registry, hook, attributes, given, old, authorizer).await? else {
        return Ok(None);
    };
    let sent = in_version(attributes, given, &version)?;
    let old_sent = in_version(attributes, old, &version)?;
    let request = request(attributes, &version, sent.as_ref(), old_sent.as_ref());
    let Some(verdict) = judged(hook, request, true).await? else {
        return Ok(None);
    };
    warnings.extend(verdict.warnings);
    if !verdict.allowed {
        return Err(denied(&hook.name, verdict.status));
    }
    let Some(patch) = verdict.patch.filter(|patch| !patch.0.is_empty()) else {
        return Ok(Some(object.clone()));
    };
    let Some(mut patched) = sent else {
        return Err(ApiError::Internal(format!(
            "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
            hook.name
        )));
    };
    json_patch::patch(&mut patched, &patch).map_err(|e| {
        ApiError::Internal(format!(
            "applying the patch of webhook {:?}: {e}",
            hook.name
        ))
    })?;
    if version == attributes.version {
        return Ok(Some(patched));
    }
    let back = (attributes.kind).convert(patched, &version, attributes.version);
    back.map(Some).map_err(|e| {
        ApiError::Internal(format!(
            "converting what webhook {:?} made back to {}: {e}",
            hook.name, attributes.version
        ))
    })
}

/// The version `hook` is called in for this write, when its rules and selectors match it.
async fn matched(
    registry: &Registry,
    hook: &Hook,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    authorizer: &AuthorizerSlot,
) -> Result<Option<String>, ApiError> {
    let Some(version) = matching::version_for(hook, attributes) else {
        return Ok(None);
    };
    if !matching::object_selected(hook, object, old) {
        return Ok(None);
    }
    if !namespace_selected(registry, &hook.namespace_selector, attributes, object, old).await? {
        return Ok(None);
    }
    if !conditions_hold(hook, attributes, &version, object, old, authorizer).await? {
        return Ok(None);
    }
    Ok(Some(version))
}

/// Whether `hook`'s match conditions hold for this write, seen in `version` (kube's
/// `ShouldCallHook`): evaluated on the blocking pool; errors under `failurePolicy: Fail`
/// refuse the write with kube's 403.
async fn conditions_hold(
    hook: &Hook,
    attributes: &Attributes<'_>,
    version: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    authorizer: &AuthorizerSlot,
) -> Result<bool, ApiError> {
    if hook.conditions.is_empty() {
        return Ok(true);
    }
    use kapi_cel::admission::value;
    // The name the object has by now (a generated one included), as kube's attributes.
    let name = match attributes.name {
        "" => (object.or(old))
            .and_then(|o| o.pointer("/metadata/name")?.as_str())
            .unwrap_or_default(),
        name => name,
    };
    let seen = in_version(attributes, object, version)?;
    let seen_old = in_version(attributes, old, version)?;
    let inputs = kapi_cel::admission::Inputs {
        object: seen.as_ref().map_or(kapi_cel::value::Value::Null, value),
        old_object: seen_old
            .as_ref()
            .map_or(kapi_cel::value::Value::Null, value),
        request: value(&crate::policies::inputs::request(
            attributes, version, name, true,
        )),
        authorizer: authorizer.get().map(|modes| {
            let modes = Arc::new(crate::policies::inputs::ServerAuthorizer(modes.clone()));
            crate::policies::inputs::authorizer(modes, attributes, name)
        }),
        ..kapi_cel::admission::Inputs::default()
    };
    let labels = |type_: &str| kapi_metrics::MatchConditionLabels {
        name: hook.name.clone(),
        kind: "webhook".to_owned(),
        type_: type_.to_owned(),
        operation: attributes.operation.name().to_owned(),
    };
    let (checked, excluded) = match hook.mutating {
        true => ("admit", "admit"),
        false => ("validating", "validate"),
    };
    let conditions = Arc::clone(&hook.conditions);
    let fail = hook.fail;
    let error_labels = labels(checked);
    let started = std::time::Instant::now();
    let matched = tokio::task::spawn_blocking(move || {
        let metrics = kapi_metrics::global();
        let counted = || {
            (metrics.match_condition_errors)
                .with_or_new(&error_labels, |c| c.clone())
                .inc()
        };
        conditions.evaluate(&inputs, fail, counted)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("evaluating match conditions: {e}")))?;
    let metrics = kapi_metrics::global();
    match matched {
        Matched::Yes => Ok(true),
        Matched::No(_) => {
            (metrics
                .match_condition_duration
                .with_or_new(&labels(checked), |h| h.clone()))
            .observe(started.elapsed().as_secs_f64());
            (metrics
                .match_condition_exclusions
                .with_or_new(&labels(excluded), |c| c.clone()))
            .inc();
            Ok(false)
        }
        Matched::Failed(message) => {
            (metrics
                .match_condition_duration
                .with_or_new(&labels(checked), |h| h.clone()))
            .observe(started.elapsed().as_secs_f64());
            tracing::warn!(webhook = %hook.name, "failed evaluating match conditions, failing closed: {message}");
            let info = attributes.kind.info;
            Err(ApiError::Forbidden {
                resource: kapi_core::error::GroupResource::new(info.group, info.plural),
                name: attributes.name.to_owned(),
                message,
            })
        }
    }
}

/// Whether a namespace selector matches: on the namespace's labels, on a Namespace's own,
/// and always for other cluster-scoped objects.
pub(crate) async fn namespace_selected(
    registry: &Registry,
    selector: &LabelSelector,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<bool, ApiError> {
    if *selector == LabelSelector::default() {
        return Ok(true);
    }
    let info = attributes.kind.info;
    if info.group.is_empty() && info.plural == "namespaces" {
        let labels = matching::labels(object.or(old));
        return Ok(selector.matches(&labels));
    }
    let Some(namespace) = attributes.namespace else {
        return Ok(true);
    };
    let Some(namespaces) = registry.scheme().by_resource("", "namespaces") else {
        return Ok(true);
    };
    let target = Target {
        kind: &namespaces,
        version: "v1",
        namespace: None,
    };
    let options = GetOptions {
        resource_version: Some("0".into()),
    };
    let labels = match registry.get_with(target, namespace, None, &options).await {
        Ok(found) => matching::labels(Some(&found.value())),
        Err(ApiError::NotFound { .. }) => Default::default(),
        Err(error) => return Err(error),
    };
    Ok(selector.matches(&labels))
}

/// `object` (in the request's version) in `version`.
pub(crate) fn in_version(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    version: &str,
) -> Result<Option<Value>, ApiError> {
    let Some(object) = object else {
        return Ok(None);
    };
    if version == attributes.version {
        return Ok(Some(object.clone()));
    }
    (attributes
        .kind
        .convert(object.clone(), attributes.version, version))
    .map(Some)
    .map_err(|e| ApiError::Internal(format!("converting for a webhook: {e}")))
}

/// The `AdmissionRequest` of this write, the object sent in `version`.
pub(crate) fn request(
    attributes: &Attributes<'_>,
    version: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    let info = attributes.kind.info;
    let scale = attributes.subresource == "scale";
    let kind = |version: &str| match (scale, attributes.object_kind) {
        (true, _) => json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}),
        // A connect's options, an action's body.
        (false, Some(object)) => {
            json!({"group": object.group, "version": object.version, "kind": object.kind})
        }
        (false, None) => json!({"group": info.group, "version": version, "kind": info.kind}),
    };
    let resource =
        |version: &str| json!({"group": info.group, "version": version, "resource": info.plural});
    let user = match attributes.user {
        Some(user) => json!({"username": user.name, "uid": user.uid, "groups": user.groups,
            "extra": user.extra}),
        // The server's own writes, as kube's loopback client makes them.
        None => json!({"username": "system:apiserver", "groups": ["system:masters"]}),
    };
    let mut request = json!({
        "uid": kapi_core::unstructured::new_uid(),
        "kind": kind(version),
        "resource": resource(version),
        "requestKind": kind(attributes.version),
        "requestResource": resource(attributes.version),
        "name": attributes.name,
        "operation": attributes.operation.name(),
        "userInfo": user,
        "object": object,
        "oldObject": old,
        "dryRun": attributes.dry_run,
        "options": attributes.options,
    });
    if !attributes.subresource.is_empty() {
        request["subResource"] = json!(attributes.subresource);
        request["requestSubResource"] = json!(attributes.subresource);
    }
    if let Some(namespace) = attributes.namespace {
        request["namespace"] = json!(namespace);
    }
    request
}

/// Sends `request` to `hook` (`admit`: a mutating webhook): its verdict, or `None` when
/// the call failed under `failurePolicy: Ignore`. Counted in kube's webhook metrics.
async fn judged(
    hook: &Hook,
    request: Value,
    admit: bool,
) -> Result<Option<call::Verdict>, ApiError> {
    let uid = request["uid"].as_str().unwrap_or_default().to_owned();
    let operation = request["operation"].as_str().unwrap_or_default().to_owned();
    let version = hook.client.review_version;
    let started = std::time::Instant::now();
    let verdict = match hook.client.call(call::review(version, request)).await {
        Ok(answer) => call::verdict(&answer, version, &uid).map_err(call::Failure::from),
        Err(failure) => Err(failure),
    };
    let type_ = if admit { "admit" } else { "validating" };
    let refused = match &verdict {
        Ok(verdict) if !verdict.allowed => Some(("no_error", denied_code(verdict.status.as_ref()))),
        Ok(_) => None,
        Err(_) => Some(("calling_webhook_error", 0)),
    };
    let metrics = kapi_metrics::global();
    let labels = kapi_metrics::WebhookLabels {
        name: hook.name.clone(),
        type_: type_.into(),
        operation: operation.clone(),
        rejected: refused.is_some().to_string(),
    };
    (metrics.webhook_duration.with_or_new(&labels, |h| h.clone()))
        .observe(started.elapsed().as_secs_f64());
    if let Some((error_type, code)) = refused {
        let labels = kapi_metrics::WebhookRejectionLabels {
            name: hook.name.clone(),
            type_: type_.into(),
            operation,
            error_type: error_type.into(),
            rejection_code: code.to_string(),
        };
        metrics
            .webhook_rejections
            .with_or_new(&labels, |c| c.clone())
            .inc();
    }
    match verdict {
        Ok(verdict) => Ok(Some(verdict)),
        Err(why) if hook.fail => Err(ApiError::Internal(format!(
            "failed calling webhook {:?}: {why}",
            hook.name
        ))),
        Err(why) => {
            tracing::warn!(webhook = %hook.name, "failed calling webhook, ignoring: {why}");
            Ok(None)
        }
    }
}

/// The code a refusal answers with (kube's: at least 400, at most 600 in metrics).
fn denied_code(status: Option<&Value>) -> i64 {
    let code = status.and_then(|s| s.get("code")?.as_i64()).unwrap_or(0);
    if code < 400 { 400 } else { code.min(600) }
}

/// A refusal, as kube's `ToStatusErr` makes it of the webhook's status.
fn denied(name: &str, status: Option<Value>) -> ApiError {
    let mut status: Status =
        (status.and_then(|s| serde_json::from_value(s).ok())).unwrap_or_default();
    let denied_by = format!("admission webhook {name:?} denied the request");
    let message = status.message.as_deref().filter(|m| !m.is_empty());
    let reason = status.reason.as_deref().filter(|r| !r.is_empty());
    status.message = Some(match (message, reason) {
        (Some(message), _) => format!("{denied_by}: {message}"),
        (None, Some(reason)) => format!("{denied_by}: {reason}"),
        (None, None) => format!("{denied_by} without explanation"),
    });
    if status.code.is_none_or(|code| code < 400) {
        status.code = Some(400);
    }
    if status
        .status
        .as_deref()
        .is_none_or(|s| s.is_empty() || s == "Success")
    {
        status.status = Some("Failure".into());
    }
    status.kind = Some("Status".into());
    status.api_version = Some("v1".into());
    ApiError::Denied(Box::new(status))
}
