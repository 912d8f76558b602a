//! The CEL of admission configurations, checked when they are written as kube checks it
//! (`pkg/apis/admissionregistration/validation`): match conditions of webhooks and
//! policies, and a ValidatingAdmissionPolicy's variables, validations, message expressions
//! and audit annotations. An expression compiles in the environment of expressions written
//! now (kube's compatibility version), or, when the object already held it, in that of
//! stored expressions, so that what was accepted stays accepted. Errors carry kube's
//! wording (`compilation failed: ...`, `must evaluate to bool but got string`).

use kapi_cel::admission::{Compiler, Declarations, Returns};
use kapi_cel::environment::{KUBERNETES, new_expressions, stored_expressions};
use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::validation as names;
use serde_json::Value;

use super::MatchCondition;

/// The most match conditions a webhook or policy may have.
const MAX_MATCH_CONDITIONS: usize = 64;

/// A compiler for expressions written now and one for expressions already stored, both
/// with the same declarations and variables.
pub(crate) struct Compilers {
    new: Compiler,
    stored: Compiler,
}

impl Compilers {
    pub(crate) fn new(declarations: Declarations) -> Compilers {
        Compilers {
            new: Compiler::new(&new_expressions(KUBERNETES), declarations),
            stored: Compiler::new(&stored_expressions(KUBERNETES), declarations),
        }
    }

    /// Compiles `source` (`stored`: the object already held it): kube's error, if any.
    pub(crate) fn check(&self, source: &str, returns: Returns, stored: bool) -> Option<String> {
        let compiler = if stored { &self.stored } else { &self.new };
        compiler.compile(source, returns).err()
    }

    /// Compiles the variable `name` into both, declaring it to what follows: the error in
    /// the environment `stored` picks, if any.
    pub(crate) fn variable(&mut self, name: &str, source: &str, stored: bool) -> Option<String> {
        let new = self.new.variable(name, source).err();
        let old = self.stored.variable(name, source).err();
        if stored { old } else { new }
    }
}

/// kube's `convertCELErrorToValidationError` of an `Invalid` compile error.
pub(crate) fn invalid(path: &str, source: &str, error: String) -> FieldError {
    FieldError::invalid(path, source, error)
}

/// `validateMatchConditions`: at most 64, each named by a unique qualified name with an
/// expression that compiles to a bool (`params` declared when the policy has a
/// `paramKind`; no variables). `preexisting`: the expressions the stored object held.
pub(crate) fn match_conditions(
    conditions: &[MatchCondition],
    path: &str,
    params: bool,
    preexisting: &[&str],
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if conditions.is_empty() {
        return errors;
    }
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errors.push(FieldError::new(
            FieldErrorType::TooMany,
            path,
            Some(Value::from(conditions.len())),
            format!("must have at most {MAX_MATCH_CONDITIONS} items"),
        ));
    }
    let compilers = Compilers::new(Declarations {
        params,
        authorizer: true,
        ..Default::default()
    });
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let expression = condition.expression.trim();
        if expression.is_empty() {
            errors.push(FieldError::required(format!("{at}.expression"), ""));
        } else if let Some(error) =
            compilers.check(expression, Returns::Bool, preexisting.contains(&expression))
        {
            errors.push(invalid(&format!("{at}.expression"), expression, error));
        }
        if condition.name.is_empty() {
            errors.push(FieldError::required(format!("{at}.name"), ""));
        } else {
            for detail in names::qualified_name(&condition.name) {
                errors.push(FieldError::invalid(
                    format!("{at}.name"),
                    condition.name.as_str(),
                    detail,
                ));
            }
            if seen.contains(&condition.name.as_str()) {
                errors.push(FieldError::new(
                    FieldErrorType::Duplicate,
                    format!("{at}.name"),
                    Some(Value::String(condition.name.clone())),
                    "",
                ));
            }
            seen.push(&condition.name);
        }
    }
    errors
}

/// Which of a MutatingAdmissionPolicy's mutation expressions, by its `patchType`: what it
/// must evaluate to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patch {
    /// `applyConfiguration.expression`: an apply configuration, `Object{...}`.
    ApplyConfiguration,
    /// `jsonPatch.expression`: a list of `JSONPatch{...}` operations.
    JsonPatch,
}

/// kube's `validateApplyConfiguration` and `validateJSONPatch` of a mutation's
/// `expression` (at `path`, `spec.mutations[i].applyConfiguration.expression`): required
/// once trimmed, then compiled, trimmed, in the environment of new expressions (`stored`:
/// of stored ones) with the policy's variables (`compilers`, which declare them and
/// `params` when the policy has a `paramKind`), the authorizer, and the patch types
/// (`Object`, `Object.<field>...`, `JSONPatch`, `jsonpatch.escapeKey`); a compile error is
/// kube's `Invalid` with the trimmed expression as its value.
pub(crate) fn mutation_expression(
    compilers: &Compilers,
    patch: Patch,
    expression: &str,
    stored: bool,
    path: &str,
) -> Option<FieldError> {
    let expression = expression.trim();
    if expression.is_empty() {
        return Some(FieldError::required(path, ""));
    }
    let returns = match patch {
        Patch::ApplyConfiguration => Returns::Object,
        Patch::JsonPatch => Returns::JsonPatches,
    };
    let error = compilers.check(expression, returns, stored)?;
    Some(invalid(path, expression, error))
}
