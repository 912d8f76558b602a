//! Admission policies: the `ValidatingAdmissionPolicy`s the registry holds, applied to
//! writes through their `ValidatingAdmissionPolicyBinding`s as kube's
//! ValidatingAdmissionPolicy plugin applies them (`k8s.io/apiserver`'s
//! `admission/plugin/policy/validating`).
//!
//! - Policies and bindings are read from the registry's watch caches; a policy is compiled
//!   (`compile`) when it changes, not per request, and only while a binding names it. A
//!   write reuses what was compiled while neither kind's cache moved.
//! - A write goes through each policy whose `matchConstraints` match it and, for each of
//!   its bindings whose `matchResources` match too (`matching`), once per param the
//!   binding references (`inputs`: params, the namespace, the request, the authorizer).
//!   The expressions then run on the blocking pool (`evaluate`), under kube's budgets.
//! - Each denial is acted on as the binding's `validationActions` say: `Deny` refuses the
//!   write (kube's message, reason and code: the first denial in policy and binding
//!   name order), `Warn` answers a warning, `Audit` adds kube's
//!   `validation.policy.admission.k8s.io/validation_failure` annotation to the audit
//!   event. A policy's `auditAnnotations` are added as `<policy>/<key>`. Configuration
//!   errors (an unknown param kind, a missing param under `parameterNotFoundAction:
//!   Deny`) deny under `failurePolicy: Fail` and are ignored under `Ignore`.
//! - Counted in kube's `apiserver_validating_admission_policy_check_*` metrics.
//! - The policies and bindings themselves are exempt (kube's rule), as are kube's
//!   reviews.
//! - `access`: who may point policies and bindings at params (an in-process check of
//!   their writes, as kube's strategies authorize them).
//! - `typecheck` checks a policy's expressions against the kinds it names, for the
//!   warnings of its status (`controllers::policy_status` writes them).

pub mod access;
mod compile;
pub(crate) mod conditions;
mod evaluate;
pub(crate) mod inputs;
mod matching;
pub(crate) mod mutate;
pub(crate) mod source;
mod typecheck;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use kapi_cel::admission::{Inputs, value};
use kapi_core::error::ApiError;
use kapi_core::meta::{Status, StatusCause};
use kapi_kinds::admissionregistration::{
    GROUP, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, annotate};

use crate::admission::{Plugin, forbidden};
use crate::authz::AuthorizerSlot;
use compile::CompiledPolicy;
use evaluate::{Decision, Verdict};
use inputs::ConfigError;
pub(crate) use typecheck::type_check;

const POLICY: &str = "ValidatingAdmissionPolicy";
const BINDING: &str = "ValidatingAdmissionPolicyBinding";
/// The annotation an `Audit` action adds.
const VALIDATION_FAILURE: &str = "validation.policy.admission.k8s.io/validation_failure";

/// The resources no policy applies to: the policies' own kinds (so that a broken policy
/// can be fixed), and kube's reviews.
const EXEMPT: &[(&str, &str)] = &[
    (GROUP, "validatingadmissionpolicies"),
    (GROUP, "validatingadmissionpolicybindings"),
    (GROUP, "mutatingadmissionpolicies"),
    (GROUP, "mutatingadmissionpolicybindings"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
];

/// ValidatingAdmissionPolicies and their bindings, as [`source::Source`] reads them.
pub(crate) struct Validating;

impl source::PolicyKind for Validating {
    type Policy = ValidatingAdmissionPolicy;
    type Binding = ValidatingAdmissionPolicyBinding;
    type Compiled = CompiledPolicy;
    const POLICY: &'static str = POLICY;
    const BINDING: &'static str = BINDING;

    fn metadata(policy: &ValidatingAdmissionPolicy) -> &kapi_core::meta::ObjectMeta {
        &policy.metadata
    }

    fn policy_name(binding: &ValidatingAdmissionPolicyBinding) -> &str {
        &binding.spec.policy_name
    }

    fn compile(policy: ValidatingAdmissionPolicy) -> CompiledPolicy {
        CompiledPolicy::new(policy)
    }
}

/// kube's ValidatingAdmissionPolicy admission plugin.
pub(crate) struct ValidatingPolicies {
    source: source::Source<Validating>,
    authorizer: AuthorizerSlot,
}

impl ValidatingPolicies {
    pub(crate) fn new(authorizer: AuthorizerSlot) -> ValidatingPolicies {
        ValidatingPolicies {
            source: source::Source::default(),
            authorizer,
        }
    }
}

/// Whether no policy applies to writes of this resource.
pub(crate) fn exempt(attributes: &Attributes<'_>) -> bool {
    let info = attributes.kind.info;
    EXEMPT.contains(&(info.group, info.plural))
}

/// One evaluation to run: a policy, the inputs of one param, and the request as the
/// match conditions see it.
struct Job {
    policy: Arc<CompiledPolicy>,
    inputs: Inputs,
    requested: kapi_cel::value::Value,
}

/// What one binding of a policy decided, to act on.
struct Outcome {
    policy: Arc<CompiledPolicy>,
    binding: ValidatingAdmissionPolicyBinding,
    verdict: Verdict,
}

#[async_trait::async_trait]
impl Plugin for ValidatingPolicies {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        (false, !exempt(attributes))
    }

    /// Idle while no binding exists.
    fn idle(&self, registry: &Registry) -> bool {
        source::Source::<Validating>::idle(registry)
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let hooks = self.source.current(registry).await?;
        if hooks.is_empty() {
            return Ok(Vec::new());
        }
        // The name the object has by now (a generated one included).
        let name = match attributes.name {
            "" => (object.or(old))
                .and_then(|o| o.pointer("/metadata/name")?.as_str())
                .unwrap_or_default(),
            name => name,
        };
        let mut outcomes: Vec<Outcome> = Vec::new();
        let mut jobs: Vec<(usize, Job)> = Vec::new();
        // What the expressions see, made once per version a policy matched in.
        let mut bases: Vec<(String, Inputs, kapi_cel::value::Value)> = Vec::new();
        let mut namespace_object: Option<kapi_cel::value::Value> = None;
        for hook in hooks.iter() {
            let policy = &hook.policy;
            let Some(constraints) = &policy.policy.spec.match_constraints else {
                let error = "policy contained no match constraints, a required field";
                outcomes.push(configuration(
                    policy,
                    None,
                    ConfigError::Policy(error.to_owned()),
                ));
                continue;
            };
            let Some(version) = matching::version(constraints, attributes, name) else {
                continue;
            };
            if !matching::selected(registry, constraints, attributes, object, old).await? {
                continue;
            }
            if let Some(kind) = &policy.policy.spec.param_kind
                && let Err(error) = inputs::param_kind(registry, kind)
            {
                outcomes.push(configuration(policy, None, error));
                continue;
            }
            for binding in &hook.bindings {
                if let Some(resources) = &binding.spec.match_resources {
                    let matched = matching::version(resources, attributes, name).is_some()
                        && matching::selected(registry, resources, attributes, object, old).await?;
                    if !matched {
                        continue;
                    }
                }
                let spec = &policy.policy.spec;
                let params = inputs::params(
                    registry,
                    spec.param_kind.as_ref(),
                    binding.spec.param_ref.as_ref(),
                    attributes.namespace,
                )
                .await;
                let params = match params {
                    Ok(params) => params,
                    Err(error) => {
                        outcomes.push(configuration(policy, Some(binding), error));
                        continue;
                    }
                };
                if params.is_empty() {
                    continue;
                }
                if namespace_object.is_none() {
                    let trimmed = inputs::namespace_object(registry, attributes).await?;
                    namespace_object = Some(value(&trimmed));
                }
                if !bases.iter().any(|(v, _, _)| *v == version) {
                    let seen = crate::webhooks::in_version(attributes, object, &version)?;
                    let seen_old = crate::webhooks::in_version(attributes, old, &version)?;
                    let authorizer = self.authorizer.get().map(|modes| {
                        let modes = Arc::new(inputs::ServerAuthorizer(modes.clone()));
                        inputs::authorizer(modes, attributes, name)
                    });
                    let base = Inputs {
                        object: seen.as_ref().map_or(kapi_cel::value::Value::Null, value),
                        old_object: (seen_old.as_ref()).map_or(kapi_cel::value::Value::Null, value),
                        request: value(&inputs::request(attributes, &version, name, false)),
                        params: kapi_cel::value::Value::Null,
                        namespace_object: (namespace_object.clone())
                            .unwrap_or(kapi_cel::value::Value::Null),
                        authorizer,
                    };
                    let requested = value(&inputs::request(attributes, &version, name, true));
                    bases.push((version.clone(), base, requested));
                }
                let (_, base, requested) = (bases.iter())
                    .find(|(v, _, _)| *v == version)
                    .expect("made above");
                outcomes.push(Outcome {
                    policy: Arc::clone(policy),
                    binding: binding.clone(),
                    verdict: Verdict::default(),
                });
                let slot = outcomes.len() - 1;
                for param in params {
                    let mut inputs = base.clone();
                    inputs.params = value(&param);
                    jobs.push((
                        slot,
                        Job {
                            policy: Arc::clone(policy),
                            inputs,
                            requested: requested.clone(),
                        },
                    ));
                }
            }
        }
        if jobs.is_empty() {
            return act(attributes, object.or(old), outcomes);
        }
        // The expressions run off the async workers: a policy may spend its whole budget.
        let verdicts = tokio::task::spawn_blocking(move || {
            (jobs.into_iter())
                .map(|(slot, job)| {
                    let verdict = evaluate::evaluate(&job.policy, &job.inputs, &job.requested);
                    (slot, verdict)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::Internal(format!("evaluating admission policies: {e}")))?;
        for (slot, verdict) in verdicts {
            if let Some(verdict) = verdict {
                let outcome = &mut outcomes[slot].verdict;
                outcome.decisions.extend(verdict.decisions);
                outcome.annotations.extend(verdict.annotations);
            }
        }
        act(attributes, object.or(old), outcomes)
    }
}

/// A configuration error as the policy's verdict: a denial under `Fail`, nothing under
/// `Ignore`.
fn configuration(
    policy: &Arc<CompiledPolicy>,
    binding: Option<&ValidatingAdmissionPolicyBinding>,
    error: ConfigError,
) -> Outcome {
    // kube denies a configuration error under `Fail`, whatever the binding's actions.
    let decisions = match policy.fail {
        true => vec![Decision {
            forced: true,
            ..Decision::error(true, error.message(), 0)
        }],
        false => Vec::new(),
    };
    Outcome {
        policy: Arc::clone(policy),
        // kube acts on a policy's own errors as a refusal without a binding.
        binding: binding
            .cloned()
            .unwrap_or_else(|| ValidatingAdmissionPolicyBinding {
                spec: kapi_kinds::admissionregistration::ValidatingAdmissionPolicyBindingSpec {
                    validation_actions: vec!["Deny".to_owned()],
                    ..Default::default()
                },
                ..Default::default()
            }),
        verdict: Verdict {
            decisions,
            annotations: Vec::new(),
        },
    }
}

/// Acts on the outcomes: warnings, audit annotations and metrics for all, the first
/// denial refused.
fn act(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    outcomes: Vec<Outcome>,
) -> Result<Vec<String>, ApiError> {
    let metrics = kapi_metrics::global();
    let mut warnings = Vec::new();
    let mut denied: Option<(String, Option<String>)> = None;
    let mut audited = false;
    let mut annotations: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for outcome in &outcomes {
        let policy = outcome.policy.name();
        let binding = outcome.binding.metadata.name.as_deref().unwrap_or_default();
        for (key, value) in &outcome.verdict.annotations {
            let values = annotations.entry(format!("{policy}/{key}")).or_default();
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        for decision in &outcome.verdict.decisions {
            let denial = || match outcome.binding.metadata.name.as_deref() {
                Some(binding) => format!(
                    "ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {}",
                    decision.message
                ),
                None => format!(
                    "ValidatingAdmissionPolicy '{policy}' denied request: {}",
                    decision.message
                ),
            };
            if decision.forced {
                if denied.is_none() {
                    denied = Some((denial(), None));
                }
                continue;
            }
            let observe = |action: &str| {
                let labels = kapi_metrics::PolicyCheckLabels {
                    policy: policy.to_owned(),
                    policy_binding: binding.to_owned(),
                    error_type: error_type(decision).to_owned(),
                    enforcement_action: action.to_owned(),
                };
                metrics
                    .policy_checks
                    .with_or_new(&labels, |c| c.clone())
                    .inc();
                (metrics
                    .policy_check_duration
                    .with_or_new(&labels, |h| h.clone()))
                .observe(decision.elapsed.as_secs_f64());
            };
            if !decision.deny {
                if decision.error {
                    observe("allow");
                }
                continue;
            }
            for action in &outcome.binding.spec.validation_actions {
                match action.as_str() {
                    "Deny" => {
                        observe("deny");
                        if denied.is_none() {
                            denied = Some((denial(), decision.reason.clone()));
                        }
                    }
                    "Warn" => {
                        observe("warn");
                        warnings.push(format!(
                            "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {}",
                            decision.message
                        ));
                    }
                    "Audit" => {
                        observe("audit");
                        // kube keeps the first value of an annotation.
                        if !audited {
                            audited = true;
                            let failure = json!([{
                                "message": decision.message,
                                "policy": outcome.binding.spec.policy_name,
                                "binding": binding,
                                "expressionIndex": decision.index,
                                "validationActions": outcome.binding.spec.validation_actions,
                            }]);
                            annotate(VALIDATION_FAILURE, failure.to_string());
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for (key, values) in annotations {
        annotate(key, values.join(", "));
    }
    match denied {
        None => Ok(warnings),
        Some((message, reason)) => Err(refusal(attributes, object, message, reason)),
    }
}

/// kube's `error_type` label of a decision.
fn error_type(decision: &Decision) -> &'static str {
    if !decision.deny && !decision.error {
        "no_error"
    } else if decision.message.starts_with("compilation") {
        "compile_error"
    } else if decision
        .message
        .starts_with(kapi_cel::admission::OUT_OF_BUDGET)
    {
        "out_of_budget"
    } else {
        "invalid_error"
    }
}

/// kube's refusal: a 403 naming the object, its reason and code those of the validation
/// (`Invalid` and 422 by default), the message its one cause.
fn refusal(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    message: String,
    reason: Option<String>,
) -> ApiError {
    let mut status: Status = forbidden(attributes, object, message.clone()).to_status();
    let reason = reason.unwrap_or_else(|| "Invalid".to_owned());
    status.code = Some(match reason.as_str() {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    });
    status.reason = Some(reason);
    let details = status.details.get_or_insert_with(Default::default);
    details
        .causes
        .get_or_insert_with(Vec::new)
        .push(StatusCause {
            message: Some(message),
            ..StatusCause::default()
        });
    ApiError::Denied(Box::new(status))
}
