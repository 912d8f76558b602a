//! A ValidatingAdmissionPolicy compiled once, when it changes: its match conditions,
//! variables, validations with their message expressions, and audit annotations, in the
//! environment of stored expressions (kube's runtime compiler; what was written was checked
//! in the stricter one). An expression that does not compile is kept with its error, which
//! the evaluation reports as kube does (`compilation error: ...`), under the failure
//! policy.

use kapi_cel::admission::{Compiler, Declarations, Returns};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::program::Compiled;
use kapi_kinds::admissionregistration::ValidatingAdmissionPolicy;

use super::conditions::MatchConditions;

/// One expression: its text and its program, or why it has none.
pub(crate) struct Expression {
    /// The text as written.
    pub(crate) source: String,
    /// The program, or kube's compile error.
    pub(crate) program: Result<Compiled, String>,
}

impl Expression {
    pub(crate) fn new(compiler: &Compiler, source: &str, returns: Returns) -> Expression {
        Expression {
            source: source.to_owned(),
            program: compiler.compile(source, returns),
        }
    }
}

/// One validation.
pub(crate) struct Validation {
    pub(crate) expression: Expression,
    /// `messageExpression`, when set.
    pub(crate) message_expression: Option<Expression>,
    /// `message`.
    pub(crate) message: String,
    /// `reason` (kube's default `Invalid` when unset).
    pub(crate) reason: Option<String>,
}

/// A policy, compiled.
pub(crate) struct CompiledPolicy {
    /// The policy as written (its match constraints and param kind are read as they are).
    pub(crate) policy: ValidatingAdmissionPolicy,
    /// `failurePolicy: Fail` (kube's default).
    pub(crate) fail: bool,
    /// `matchConditions`.
    pub(crate) match_conditions: MatchConditions,
    /// `variables`, in order, by name.
    pub(crate) variables: Vec<(String, Expression)>,
    pub(crate) validations: Vec<Validation>,
    /// `auditAnnotations`: the key and its value expression.
    pub(crate) audit_annotations: Vec<(String, Expression)>,
}

impl CompiledPolicy {
    /// Compiles `policy`.
    pub(crate) fn new(policy: ValidatingAdmissionPolicy) -> CompiledPolicy {
        let spec = &policy.spec;
        let features = stored_expressions(KUBERNETES);
        let params = spec.param_kind.is_some();
        let declarations = |authorizer| Declarations {
            params,
            authorizer,
            ..Default::default()
        };
        // Variables are visible to everything but the match conditions, which kube
        // checks without them.
        let mut with_variables = Compiler::new(&features, declarations(true));
        let mut messages = Compiler::new(&features, declarations(false));
        let mut variables = Vec::new();
        for variable in &spec.variables {
            let program = with_variables.variable(&variable.name, &variable.expression);
            let _ = messages.variable(&variable.name, &variable.expression);
            variables.push((
                variable.name.clone(),
                Expression {
                    source: variable.expression.clone(),
                    program,
                },
            ));
        }
        let match_conditions = MatchConditions::new(&spec.match_conditions, params);
        let validations = (spec.validations.iter())
            .map(|v| Validation {
                expression: Expression::new(&with_variables, &v.expression, Returns::Bool),
                message_expression: Some(&v.message_expression)
                    .filter(|m| !m.trim().is_empty())
                    .map(|m| Expression::new(&messages, m, Returns::String)),
                message: v.message.clone(),
                reason: v.reason.clone(),
            })
            .collect();
        let audit_annotations = (spec.audit_annotations.iter())
            .map(|a| {
                let source = a.value_expression.trim();
                let expression = Expression::new(&with_variables, source, Returns::StringOrNull);
                (a.key.clone(), expression)
            })
            .collect();
        CompiledPolicy {
            fail: spec.failure_policy.as_deref() != Some("Ignore"),
            match_conditions,
            variables,
            validations,
            audit_annotations,
            policy,
        }
    }

    /// The policy's name.
    pub(crate) fn name(&self) -> &str {
        self.policy.metadata.name.as_deref().unwrap_or_default()
    }
}
