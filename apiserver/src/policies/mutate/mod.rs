//! Mutating admission policies: the `MutatingAdmissionPolicy`s the registry holds
//! (`admissionregistration.k8s.io/v1beta1`), applied to writes through their bindings as
//! kube 1.34's MutatingAdmissionPolicy plugin applies them (`k8s.io/apiserver`'s
//! `admission/plugin/policy/mutating`), when kube's `MutatingAdmissionPolicy` feature
//! gate is on.
//!
//! - Policies and bindings come from the watch caches ([`source`](super::source)),
//!   compiled when a policy changes (`compile`).
//! - A create or update (a connect's options too; never a delete) goes through each
//!   policy whose `matchConstraints` match it (the
//!   validating policies' `matching`, `inputs` and params: one invocation per binding and
//!   param), in the policy's and the binding's name order (kube's order is its caches'),
//!   each on the object as the previous ones left it, seen in the matched version.
//! - Each invocation (`invoke`, on the blocking pool) runs the match conditions, then the
//!   mutations in order (`patch`: apply configurations merged, JSON patches applied), the
//!   object defaulted again after each.
//! - Errors are the policy's under its `failurePolicy`: under `Fail` the write is refused
//!   with kube's 403 (reason `Invalid`, `policy '<p>' with binding '<b>' denied request:
//!   <error>`, every error a cause), under `Ignore` nothing happens. A kind without a
//!   schema, or an object a JSON patch left undecodable, is kube's error as it is.
//! - Reinvocation (kube's): any mutation asks for a second pass of the mutating chain, in
//!   which the invocations of `reinvocationPolicy: IfNeeded` policies run again when
//!   something changed the object after them.
//! - Counted in kube's `apiserver_mutating_admission_policy_check_*` metrics, and their
//!   match conditions in kube's `apiserver_admission_match_condition_*`. No field
//!   manager owns what a policy sets (kube's field manager runs before admission).
//! - The policies' own kinds and kube's reviews are exempt, as for validating policies.

mod compile;
mod invoke;
mod json_patch;
mod patch;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;

use kapi_cel::admission::{Inputs, value};
use kapi_core::error::ApiError;
use kapi_core::meta::{Status, StatusCause};
use kapi_kinds::admissionregistration::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ParamRef,
};
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation};

use super::inputs::{self, ConfigError};
use super::matching;
use super::source::{PolicyKind, Source};
use crate::admission::{Plugin, Reinvocable, Reinvocation, forbidden};
use crate::authz::AuthorizerSlot;
use compile::CompiledPolicy;

/// The name the plugin's records go by in a write's reinvocation context.
const REINVOCATION: &str = "MutatingAdmissionPolicy";

/// MutatingAdmissionPolicies and their bindings, as [`Source`] reads them.
pub(crate) struct Mutating;

impl PolicyKind for Mutating {
    type Policy = MutatingAdmissionPolicy;
    type Binding = MutatingAdmissionPolicyBinding;
    type Compiled = CompiledPolicy;
    const POLICY: &'static str = "MutatingAdmissionPolicy";
    const BINDING: &'static str = "MutatingAdmissionPolicyBinding";

    fn metadata(policy: &MutatingAdmissionPolicy) -> &kapi_core::meta::ObjectMeta {
        &policy.metadata
    }

    fn policy_name(binding: &MutatingAdmissionPolicyBinding) -> &str {
        &binding.spec.policy_name
    }

    fn compile(policy: MutatingAdmissionPolicy) -> CompiledPolicy {
        CompiledPolicy::new(&policy)
    }
}

/// kube's MutatingAdmissionPolicy admission plugin.
pub(crate) struct MutatingPolicies {
    source: Source<Mutating>,
    authorizer: AuthorizerSlot,
}

impl MutatingPolicies {
    pub(crate) fn new(authorizer: AuthorizerSlot) -> MutatingPolicies {
        MutatingPolicies {
            source: Source::default(),
            authorizer,
        }
    }
}

/// Whether policies see this write: creates, updates and connects (their options
/// mutated as an object), of anything but the exempt kinds. Never a delete: kube's plugin
/// does not handle deletes, which have no object to mutate.
fn handled(attributes: &Attributes<'_>) -> bool {
    attributes.operation != Operation::Delete && !super::exempt(attributes)
}

#[async_trait::async_trait]
impl Plugin for MutatingPolicies {
    /// The mutation itself runs as the chain's [`Reinvocable`] step.
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        (handled(attributes), false)
    }

    fn idle(&self, registry: &Registry) -> bool {
        Source::<Mutating>::idle(registry)
    }
}

/// A policy's error, to refuse the write with under `failurePolicy: Fail`.
struct PolicyError {
    message: String,
    /// kube's reason: `Invalid` for what the policy's expressions did, none (`Forbidden`)
    /// for its configuration.
    invalid: bool,
}

#[async_trait::async_trait]
impl Reinvocable for MutatingPolicies {
    async fn mutate_pass(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        mut object: Value,
        old: Option<&Value>,
        reinvocation: &mut Reinvocation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        if !handled(attributes) || Source::<Mutating>::idle(registry) {
            return Ok((object, Vec::new()));
        }
        let hooks = self.source.current(registry).await?;
        if hooks.is_empty() {
            return Ok((object, Vec::new()));
        }
        // The name the object has by now (a generated one included).
        let name = match attributes.name {
            "" => (object.pointer("/metadata/name").and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned(),
            name => name.to_owned(),
        };
        let again = reinvocation.again;
        reinvocation.record(REINVOCATION).begin(&object);
        let mut errors: Vec<PolicyError> = Vec::new();
        let mut patched = false;
        let mut namespace_object: Option<kapi_cel::value::Value> = None;
        for hook in hooks.iter() {
            let policy = &hook.policy;
            let configuration = |error: ConfigError, binding: Option<&str>| PolicyError {
                message: denial(&policy.name, binding, &error.message()),
                invalid: false,
            };
            let Some(constraints) = &policy.constraints else {
                if policy.fail {
                    let error = "policy contained no match constraints, a required field";
                    errors.push(configuration(ConfigError::Policy(error.to_owned()), None));
                }
                continue;
            };
            let Some(version) = matching::version(constraints, attributes, &name) else {
                continue;
            };
            if !matching::selected(registry, constraints, attributes, Some(&object), old).await? {
                continue;
            }
            if let Some(kind) = &policy.param_kind
                && let Err(error) = inputs::param_kind(registry, kind)
            {
                if policy.fail {
                    errors.push(configuration(error, None));
                }
                continue;
            }
            for binding in &hook.bindings {
                let binding_name = binding.metadata.name.as_deref().unwrap_or_default();
                if let Some(resources) = &binding.spec.match_resources {
                    let resources = resources.into();
                    let matched = matching::version(&resources, attributes, &name).is_some()
                        && matching::selected(registry, &resources, attributes, Some(&object), old)
                            .await?;
                    if !matched {
                        continue;
                    }
                }
                let reference: Option<ParamRef> = binding.spec.param_ref.as_ref().map(Into::into);
                let params = inputs::params(
                    registry,
                    policy.param_kind.as_ref(),
                    reference.as_ref(),
                    attributes.namespace,
                )
                .await;
                let params = match params {
                    Ok(params) => params,
                    Err(error) => {
                        if policy.fail {
                            errors.push(configuration(error, Some(binding_name)));
                        }
                        continue;
                    }
                };
                for param in params {
                    let key = invocation_key(&policy.name, binding_name, &param);
                    if !reinvocation.record(REINVOCATION).runs(&key, again) {
                        continue;
                    }
                    if namespace_object.is_none() {
                        let trimmed = inputs::namespace_object(registry, attributes).await?;
                        namespace_object = Some(value(&trimmed));
                    }
                    let seen = crate::webhooks::in_version(attributes, Some(&object), &version)?
                        .unwrap_or_default();
                    let seen_old = crate::webhooks::in_version(attributes, old, &version)?;
                    let authorizer = self.authorizer.get().map(|modes| {
                        let modes = Arc::new(inputs::ServerAuthorizer(modes.clone()));
                        inputs::authorizer(modes, attributes, &name)
                    });
                    let inputs = Inputs {
                        object: kapi_cel::value::Value::Null,
                        old_object: (seen_old.as_ref()).map_or(kapi_cel::value::Value::Null, value),
                        request: value(&inputs::request(attributes, &version, &name, false)),
                        params: value(&param),
                        namespace_object: namespace_object
                            .clone()
                            .unwrap_or(kapi_cel::value::Value::Null),
                        authorizer,
                    };
                    let requested = value(&inputs::request(attributes, &version, &name, true));
                    let before = seen.clone();
                    let (after, invocation) = invoke_on(
                        registry, attributes, &version, policy, &inputs, &requested, seen,
                    )?;
                    observe(&policy.name, binding_name, &invocation.observations);
                    if policy.fail {
                        errors.extend(invocation.errors.iter().map(|error| PolicyError {
                            message: denial(&policy.name, Some(binding_name), error),
                            invalid: true,
                        }));
                    }
                    let changed = after != before;
                    if changed {
                        object = match version == attributes.version {
                            true => after,
                            false => (attributes.kind)
                                .convert(after, &version, attributes.version)
                                .map_err(|e| {
                                    ApiError::Internal(format!("failed to convert object: {e}"))
                                })?,
                        };
                    }
                    patched |= invocation.patched;
                    (reinvocation.record(REINVOCATION)).ran(key, policy.reinvoke, changed);
                }
            }
        }
        // kube: any mutation that applied asks for the second pass, and for the
        // `IfNeeded` policies that ran before it.
        if patched {
            reinvocation.record(REINVOCATION).changed();
            reinvocation.wanted = true;
        }
        reinvocation.record(REINVOCATION).end(&object);
        match refusal(attributes, &object, errors) {
            Some(error) => Err(error),
            None => Ok((object, Vec::new())),
        }
    }
}

/// Runs one invocation on `object` (in `version`) on the blocking pool: the object as it
/// leaves it, and what it did. An object of another kind than the resource's (a
/// connect's options, an eviction) is typed by its own kind's schema when there is one (a
/// connect's options have none: apply configurations cannot be typed, the policy's
/// error), and not defaulted again.
fn invoke_on(
    registry: &Registry,
    attributes: &Attributes<'_>,
    version: &str,
    policy: &CompiledPolicy,
    inputs: &Inputs,
    requested: &kapi_cel::value::Value,
    mut object: Value,
) -> Result<(Value, invoke::Invocation), ApiError> {
    let kind = attributes.kind;
    let info = kind.info;
    let options = attributes.object_kind;
    let (group, version_of, kind_name) = match options {
        Some(object) => (object.group, object.version, object.kind),
        None => (info.group, version, info.kind),
    };
    let schemas = registry.kind_schemas(kind);
    let schema = (schemas.as_deref()).and_then(|s| s.kind(group, version_of, kind_name));
    let gvk = match group {
        "" => format!("/{version_of}, Kind={kind_name}"),
        group => format!("{group}/{version_of}, Kind={kind_name}"),
    };
    let typed = !kind.is_dynamic() && options.is_none();
    // Compiled kinds decode into their types; a definition's objects are unstructured.
    let through_type = |object: &Value| {
        let hub = (kind.to_hub(object.clone(), version)).map_err(|e| e.to_string())?;
        kind.from_hub_ref(&hub, version).map_err(|e| e.to_string())
    };
    let target = patch::Target {
        schema,
        gvk: &gvk,
        typed: typed.then_some(&through_type as &patch::ThroughType<'_>),
        served_without_schema: options.is_some() && schema.is_none(),
    };
    // Defaulted again as the kind is: a compiled kind by its defaulter, a definition's
    // by its schema's defaults (kube's structural defaulting).
    let default = |mut patched: Value| {
        if options.is_some() {
            return Ok(patched);
        }
        if kind.is_dynamic() {
            if let Some(schema) = schema {
                schema.default(&mut patched);
            }
            return Ok(patched);
        }
        (kind.default_in(&patched, version))
            .map(|defaulted| defaulted.unwrap_or(patched))
            .map_err(|e| e.to_string())
    };
    let invocation = kapi_registry::blocking(|| {
        invoke::invoke(policy, inputs, requested, &mut object, target, &default)
    })?;
    Ok((object, invocation))
}

/// The key of one invocation in the reinvocation context: policy, binding and param.
fn invocation_key(policy: &str, binding: &str, param: &Value) -> String {
    let meta = |field: &str| {
        param["metadata"][field]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    format!("{policy}/{binding}/{}/{}", meta("namespace"), meta("name"))
}

/// kube's words of a policy's error.
fn denial(policy: &str, binding: Option<&str>, error: &str) -> String {
    match binding {
        Some(binding) => {
            format!("policy '{policy}' with binding '{binding}' denied request: {error}")
        }
        None => format!("policy {policy:?} denied request: {error}"),
    }
}

/// Counts each mutation in kube's metrics.
fn observe(policy: &str, binding: &str, observations: &[invoke::Observation]) {
    let metrics = kapi_metrics::global();
    for observation in observations {
        let labels = kapi_metrics::MutationCheckLabels {
            policy: policy.to_owned(),
            policy_binding: binding.to_owned(),
            error_type: observation.error_type.to_owned(),
        };
        metrics
            .mutation_checks
            .with_or_new(&labels, |c| c.clone())
            .inc();
        (metrics
            .mutation_check_duration
            .with_or_new(&labels, |h| h.clone()))
        .observe(observation.elapsed.as_secs_f64());
    }
}

/// kube's refusal of the errors under `Fail`: a 403 naming the object, its message the
/// first error's, its reason `Invalid` when that error is an expression's, every error a
/// cause.
fn refusal(
    attributes: &Attributes<'_>,
    object: &Value,
    mut errors: Vec<PolicyError>,
) -> Option<ApiError> {
    // kube gathers configuration errors before the errors of what ran.
    errors.sort_by_key(|error| error.invalid);
    let first = errors.first()?;
    let mut status: Status = forbidden(
        attributes,
        Some(object),
        "admission request denied by policy",
    )
    .to_status();
    status.message = Some(first.message.clone());
    if first.invalid {
        status.reason = Some("Invalid".to_owned());
    }
    let details = status.details.get_or_insert_with(Default::default);
    let causes = details.causes.get_or_insert_with(Vec::new);
    causes.extend(errors.iter().map(|error| StatusCause {
        message: Some(error.message.clone()),
        ..StatusCause::default()
    }));
    Some(ApiError::Denied(Box::new(status)))
}
