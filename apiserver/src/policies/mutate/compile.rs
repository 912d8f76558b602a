//! A MutatingAdmissionPolicy compiled once, when it changes (kube's `compilePolicy`): its
//! match conditions and variables in the admission environment, its mutations with the
//! types they build (`Object`, `JSONPatch`, `jsonpatch.escapeKey`, kube's
//! `HasPatchTypes`), all in the environment of stored expressions. What does not compile
//! is kept with its error, which kube reports when the policy is invoked, under its
//! failure policy.

use kapi_cel::admission::{Compiler, Declarations, Returns};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_kinds::admissionregistration::{MatchCondition, MatchResources, ParamKind, v1beta1};

use crate::policies::compile::Expression;
use crate::policies::conditions::MatchConditions;

/// How a mutation's value changes the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// An `Object` merged into it (structured-merge-diff's merge).
    ApplyConfiguration,
    /// A `list(JSONPatch)` applied to it (RFC 6902).
    JsonPatch,
}

/// One mutation: what it builds, and its expression; `Err` when the policy says neither
/// (kube's internal error at invocation).
pub(crate) type Mutation = Result<(PatchKind, Expression), String>;

/// A policy, compiled.
pub(crate) struct CompiledPolicy {
    /// Its name.
    pub(crate) name: String,
    /// `matchConstraints`, as the validating policies' matching reads them.
    pub(crate) constraints: Option<MatchResources>,
    /// `paramKind`.
    pub(crate) param_kind: Option<ParamKind>,
    /// `failurePolicy: Fail` (kube's default).
    pub(crate) fail: bool,
    /// `reinvocationPolicy: IfNeeded` (anything else is `Never`).
    pub(crate) reinvoke: bool,
    pub(crate) match_conditions: MatchConditions,
    /// `variables`, in order, by name.
    pub(crate) variables: Vec<(String, Expression)>,
    pub(crate) mutations: Vec<Mutation>,
}

impl CompiledPolicy {
    /// Compiles `policy`.
    pub(crate) fn new(policy: &v1beta1::MutatingAdmissionPolicy) -> CompiledPolicy {
        let spec = &policy.spec;
        let features = stored_expressions(KUBERNETES);
        let params = spec.param_kind.is_some();
        let declarations = |patch_types| Declarations {
            params,
            authorizer: true,
            patch_types,
        };
        let mut with_variables = Compiler::new(&features, declarations(false));
        let mut mutating = Compiler::new(&features, declarations(true));
        let mut variables = Vec::new();
        for variable in &spec.variables {
            let program = with_variables.variable(&variable.name, &variable.expression);
            let _ = mutating.variable(&variable.name, &variable.expression);
            let expression = Expression {
                source: variable.expression.clone(),
                program,
            };
            variables.push((variable.name.clone(), expression));
        }
        let conditions: Vec<MatchCondition> =
            spec.match_conditions.iter().map(Into::into).collect();
        let mutations = (spec.mutations.iter())
            .map(|mutation| {
                let (kind, source, returns) = match (
                    mutation.patch_type.as_str(),
                    &mutation.apply_configuration,
                    &mutation.json_patch,
                ) {
                    ("ApplyConfiguration", Some(apply), _) => (
                        PatchKind::ApplyConfiguration,
                        &apply.expression,
                        Returns::Object,
                    ),
                    ("JSONPatch", _, Some(patch)) => (
                        PatchKind::JsonPatch,
                        &patch.expression,
                        Returns::JsonPatches,
                    ),
                    _ => {
                        return Err(format!(
                            "expected {} compiled evaluators for policy {}, got fewer",
                            spec.mutations.len(),
                            policy.metadata.name.as_deref().unwrap_or_default()
                        ));
                    }
                };
                Ok((kind, Expression::new(&mutating, source, returns)))
            })
            .collect();
        CompiledPolicy {
            name: policy.metadata.name.clone().unwrap_or_default(),
            constraints: spec.match_constraints.as_ref().map(Into::into),
            param_kind: spec.param_kind.as_ref().map(Into::into),
            fail: spec.failure_policy.as_deref() != Some("Ignore"),
            reinvoke: spec.reinvocation_policy == "IfNeeded",
            match_conditions: MatchConditions::new(&conditions, params),
            variables,
            mutations,
        }
    }
}
