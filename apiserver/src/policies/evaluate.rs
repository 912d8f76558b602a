//! One policy's verdict on one request, for one binding and one param (kube's
//! `validating.Validate`): synchronous and free of I/O, so it runs on the blocking pool
//! and is tested as data.
//!
//! 1. The match conditions, under their own budget: one false and the policy does not
//!    apply; errors (none false) fail it under `failurePolicy: Fail`, skip it under
//!    `Ignore`.
//! 2. The validations, sharing the policy's budget with its variables: each true admits,
//!    each false denies with its message (the message expression's string, else
//!    `message`, else `failed expression: <expression>`) and reason; an error denies
//!    under `Fail`. The message expressions run after them, on what budget is left.
//! 3. The audit annotations, under a fresh budget: each string value kept for the audit
//!    log under `<policy>/<key>`.
//!
//! kube's variables are lazy; kapi evaluates them once, in order, before the expressions
//! (an erroring one is held as an error and fails only what reads it), so an unused
//! variable's cost counts against the budget here.

use std::time::{Duration, Instant};

use kapi_cel::admission::{Evaluation, Inputs, Outcome, POLICY_BUDGET, Variable};
use kapi_cel::value::Value;

use super::compile::{CompiledPolicy, Expression};
use super::conditions::Matched;

/// The longest message a message expression may make.
const MAX_MESSAGE: usize = 5 * 1024;
/// The longest audit annotation value kept.
const MAX_ANNOTATION: usize = 10 * 1024;

/// What one validation (or an error in its place) decided.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decision {
    /// Whether it denies (a false validation; an error under `Fail`).
    pub(crate) deny: bool,
    /// Whether it comes of an error rather than of a validation's value.
    pub(crate) error: bool,
    /// Whether it denies whatever the binding's actions (kube's configuration and audit
    /// annotation errors under `Fail`).
    pub(crate) forced: bool,
    /// Why.
    pub(crate) message: String,
    /// A false validation's `reason` (kube's default `Invalid`).
    pub(crate) reason: Option<String>,
    /// The validation's index (0 for errors of the whole evaluation).
    pub(crate) index: usize,
    /// How long its expression took.
    pub(crate) elapsed: Duration,
}

impl Decision {
    pub(crate) fn error(deny: bool, message: String, index: usize) -> Decision {
        Decision {
            deny,
            error: true,
            forced: false,
            message,
            reason: None,
            index,
            elapsed: Duration::ZERO,
        }
    }
}

/// A policy's verdict: its decisions and its audit annotations (key, value).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Verdict {
    pub(crate) decisions: Vec<Decision>,
    pub(crate) annotations: Vec<(String, String)>,
}

/// What `policy` says of a request with `inputs`; `None` when its match conditions keep it
/// from applying.
pub(crate) fn evaluate(
    policy: &CompiledPolicy,
    inputs: &Inputs,
    requested: &Value,
) -> Option<Verdict> {
    evaluate_within(policy, inputs, requested, POLICY_BUDGET)
}

/// [`evaluate`] with the validations' and the audit annotations' budgets `budget`.
fn evaluate_within(
    policy: &CompiledPolicy,
    inputs: &Inputs,
    requested: &Value,
    budget: u64,
) -> Option<Verdict> {
    if let Some(verdict) = conditions(policy, inputs, requested)? {
        return Some(verdict);
    }
    let (decisions, aborted) = validations(policy, inputs, budget);
    let mut verdict = Verdict {
        decisions,
        annotations: Vec::new(),
    };
    // kube answers with the one error when the validations' evaluation itself failed.
    if aborted {
        return Some(verdict);
    }
    match annotations(policy, inputs, budget) {
        Ok((annotations, errors)) => {
            verdict.annotations = annotations;
            verdict.decisions.extend(errors);
        }
        // kube replaces the whole result with the error.
        Err(error) => verdict.decisions = vec![error],
    }
    Some(verdict)
}

/// The match conditions: `None` when they keep the policy from applying,
/// `Some(Some(error))` when they fail it, `Some(None)` when they hold.
fn conditions(
    policy: &CompiledPolicy,
    inputs: &Inputs,
    requested: &Value,
) -> Option<Option<Verdict>> {
    if policy.match_conditions.is_empty() {
        return Some(None);
    }
    let mut inputs = inputs.clone();
    inputs.request = requested.clone();
    match (policy.match_conditions).evaluate_for_policy(policy.name(), &inputs, policy.fail) {
        Matched::Yes => Some(None),
        Matched::No(_) => None,
        Matched::Failed(message) => Some(Some(Verdict {
            decisions: vec![Decision::error(true, message, 0)],
            annotations: Vec::new(),
        })),
    }
}

/// Runs one expression: its outcome and time, or the evaluation's budget error.
fn run(
    evaluation: &mut Evaluation,
    expression: &Expression,
) -> Result<(Outcome, Duration), String> {
    let started = Instant::now();
    let outcome = match &expression.program {
        Ok(program) => evaluation.eval(program, &expression.source)?,
        Err(error) => Outcome::Error(format!("compilation error: {error}")),
    };
    Ok((outcome, started.elapsed()))
}

/// The variables as [`Evaluation::new`] takes them.
fn variables(policy: &CompiledPolicy) -> Vec<Variable<'_>> {
    (policy.variables.iter())
        .map(|(name, e)| (name.as_str(), e.program.as_ref().map_err(String::as_str)))
        .collect()
}

/// The validations' decisions.
/// The validations' decisions, and whether the evaluation itself failed (one decision in
/// place of all).
fn validations(policy: &CompiledPolicy, inputs: &Inputs, budget: u64) -> (Vec<Decision>, bool) {
    let fail = policy.fail;
    let mut evaluation = Evaluation::new(inputs.clone(), &variables(policy), budget);
    let mut decisions = Vec::new();
    for (index, validation) in policy.validations.iter().enumerate() {
        let (outcome, elapsed) = match run(&mut evaluation, &validation.expression) {
            Ok(ran) => ran,
            Err(error) => return (vec![Decision::error(fail, error, 0)], true),
        };
        decisions.push(match outcome {
            Outcome::Error(message) => Decision {
                elapsed,
                ..Decision::error(fail, message, index)
            },
            Outcome::Value(Value::Bool(true)) => Decision {
                deny: false,
                error: false,
                forced: false,
                message: String::new(),
                reason: None,
                index,
                elapsed,
            },
            Outcome::Value(_) => Decision {
                deny: true,
                error: false,
                forced: false,
                message: String::new(),
                reason: validation.reason.clone(),
                index,
                elapsed,
            },
        });
    }
    // Every message expression runs, on what is left of the budget, whatever the
    // validations decided.
    let mut messages: Vec<Option<String>> = Vec::new();
    for validation in &policy.validations {
        let Some(expression) = &validation.message_expression else {
            messages.push(None);
            continue;
        };
        match run(&mut evaluation, expression) {
            Ok((Outcome::Value(Value::String(text)), _)) => {
                let text = text.trim();
                let usable = !text.is_empty() && text.len() <= MAX_MESSAGE && !text.contains('\n');
                messages.push(usable.then(|| text.to_owned()));
            }
            Ok(_) => messages.push(None),
            Err(error) => {
                for decision in decisions.iter_mut().filter(|d| !d.error) {
                    *decision = Decision {
                        elapsed: decision.elapsed,
                        ..Decision::error(
                            fail,
                            format!("failed messageExpression: {error}"),
                            decision.index,
                        )
                    };
                }
                return (decisions, false);
            }
        }
    }
    for decision in decisions.iter_mut().filter(|d| d.deny && !d.error) {
        let validation = &policy.validations[decision.index];
        let message = validation.message.trim();
        decision.message = match messages[decision.index].take() {
            Some(text) => text,
            None if !message.is_empty() => message.to_owned(),
            None => format!("failed expression: {}", validation.expression.source.trim()),
        };
    }
    (decisions, false)
}

/// Audit annotations' values (key, value), and the errors that deny under `Fail`.
type Annotated = (Vec<(String, String)>, Vec<Decision>);

/// The audit annotations' values and errors; an `Err` replaces the whole verdict (the
/// budget ran out).
fn annotations(
    policy: &CompiledPolicy,
    inputs: &Inputs,
    budget: u64,
) -> Result<Annotated, Decision> {
    if policy.audit_annotations.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let fail = policy.fail;
    let mut bound = inputs.clone();
    // kube declares the authorizer to audit annotations but binds none.
    bound.authorizer = None;
    let mut evaluation = Evaluation::new(bound, &variables(policy), budget);
    let mut values = Vec::new();
    let mut errors = Vec::new();
    for (key, expression) in &policy.audit_annotations {
        match run(&mut evaluation, expression) {
            Err(error) => return Err(Decision::error(fail, error, 0)),
            Ok((Outcome::Value(Value::String(text)), _)) => {
                let mut text = text.trim().to_owned();
                if text.is_empty() {
                    continue;
                }
                if text.len() > MAX_ANNOTATION {
                    let mut end = MAX_ANNOTATION;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.truncate(end);
                }
                values.push((key.clone(), text));
            }
            Ok((Outcome::Value(Value::Null), _)) => {}
            Ok((Outcome::Value(other), elapsed)) if fail => errors.push(Decision {
                elapsed,
                forced: true,
                ..Decision::error(
                    true,
                    format!(
                        "valueExpression '{}' resulted in unsupported return type: {}. Return \
                         type must be either string or null.",
                        expression.source,
                        other.type_name()
                    ),
                    0,
                )
            }),
            // kube denies for an annotation's error under `Fail`, whatever the actions.
            Ok((Outcome::Error(error), elapsed)) if fail => errors.push(Decision {
                elapsed,
                forced: true,
                ..Decision::error(true, error, 0)
            }),
            Ok((Outcome::Value(_) | Outcome::Error(_), _)) => {}
        }
    }
    Ok((values, errors))
}

#[cfg(test)]
mod tests;
