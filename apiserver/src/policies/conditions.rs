//! Match conditions (kube's `webhook/matchconditions`), of webhooks and policies alike:
//! CEL that says whether a write is for them, every condition evaluated in order under
//! one budget. A false one says no at once (whatever the others' errors); errors without
//! a false one fail the write under `failurePolicy: Fail` and skip it under `Ignore`.
//! A policy's (validating or mutating) are counted in kube's match condition metrics as
//! kube's policy matcher counts them ([`MatchConditions::evaluate_for_policy`]).

use kapi_cel::admission::{
    Compiler, Declarations, Evaluation, Inputs, MATCH_CONDITIONS_BUDGET, Outcome, Returns,
};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use std::time::Instant;

use kapi_cel::value::Value;
use kapi_kinds::admissionregistration::MatchCondition;

use super::compile::Expression;

/// Compiled match conditions.
pub(crate) struct MatchConditions(Vec<(String, Expression)>);

/// What match conditions say of a write.
#[derive(Debug, PartialEq)]
pub(crate) enum Matched {
    /// All hold (or there are none).
    Yes,
    /// The named condition is false, or they erred under `Ignore`.
    No(Option<String>),
    /// They erred under `Fail`: kube's message (one error, or `[e1, e2]`).
    Failed(String),
}

impl MatchConditions {
    /// Compiles `conditions` (`params`: the policy has a param kind), in the environment of
    /// stored expressions, with the authorizer.
    pub(crate) fn new(conditions: &[MatchCondition], params: bool) -> MatchConditions {
        if conditions.is_empty() {
            return MatchConditions(Vec::new());
        }
        let compiler = Compiler::new(
            &stored_expressions(KUBERNETES),
            Declarations {
                params,
                authorizer: true,
                ..Default::default()
            },
        );
        MatchConditions(
            (conditions.iter())
                .map(|c| {
                    let source = c.expression.trim();
                    let expression = Expression::new(&compiler, source, Returns::Bool);
                    (c.name.clone(), expression)
                })
                .collect(),
        )
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What they say of a write with `inputs` (whose namespace object they never see);
    /// `errors`: called with each condition's error, for the metrics.
    pub(crate) fn evaluate(
        &self,
        inputs: &Inputs,
        fail: bool,
        mut errors_seen: impl FnMut(),
    ) -> Matched {
        if self.0.is_empty() {
            return Matched::Yes;
        }
        let failed = |message: String| match fail {
            true => Matched::Failed(message),
            false => Matched::No(None),
        };
        let mut bound = inputs.clone();
        bound.namespace_object = Value::Null;
        let mut evaluation = Evaluation::new(bound, &[], MATCH_CONDITIONS_BUDGET);
        let mut errors: Vec<String> = Vec::new();
        for (name, condition) in &self.0 {
            let outcome = match &condition.program {
                Ok(program) => match evaluation.eval(program, &condition.source) {
                    Ok(outcome) => outcome,
                    Err(error) => return failed(error),
                },
                Err(error) => Outcome::Error(format!("compilation error: {error}")),
            };
            match outcome {
                Outcome::Value(Value::Bool(false)) => return Matched::No(Some(name.clone())),
                Outcome::Value(_) => {}
                Outcome::Error(error) => {
                    errors_seen();
                    if !errors.contains(&error) {
                        errors.push(error);
                    }
                }
            }
        }
        match errors.len() {
            0 => Matched::Yes,
            1 => failed(errors.remove(0)),
            _ => failed(format!("[{}]", errors.join(", "))),
        }
    }
}

impl MatchConditions {
    /// [`MatchConditions::evaluate`] for the policy `name`, with kube's metrics of a
    /// policy's matcher (`kind` `policy`, `type` `validate` for validating and mutating
    /// policies alike): each erring condition counted, the time observed when they do not
    /// all hold.
    pub(crate) fn evaluate_for_policy(&self, name: &str, inputs: &Inputs, fail: bool) -> Matched {
        if self.is_empty() {
            return Matched::Yes;
        }
        let metrics = kapi_metrics::global();
        let labels = kapi_metrics::MatchConditionLabels {
            name: name.to_owned(),
            kind: "policy".to_owned(),
            type_: "validate".to_owned(),
            operation: operation(inputs),
        };
        let counted = || {
            (metrics.match_condition_errors)
                .with_or_new(&labels, |c| c.clone())
                .inc()
        };
        let started = Instant::now();
        let matched = self.evaluate(inputs, fail, counted);
        if matched != Matched::Yes {
            (metrics.match_condition_duration)
                .with_or_new(&labels, |h| h.clone())
                .observe(started.elapsed().as_secs_f64());
        }
        matched
    }
}

/// The operation of the request `inputs` bind, for metrics.
fn operation(inputs: &Inputs) -> String {
    match &inputs.request {
        Value::Map(map) => match map.field("operation") {
            Some(Value::String(operation)) => operation.to_string(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}
