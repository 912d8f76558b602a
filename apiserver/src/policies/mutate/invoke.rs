//! One invocation of a mutating policy (one binding, one param) on an object (kube's
//! `dispatchOne` loop): synchronous and free of I/O, so it runs on the blocking pool and is
//! tested as data.
//!
//! 1. The match conditions, on the object as it is now, under their budget: one false
//!    and the policy does not apply; errors fail it (under `Ignore`, it does not apply).
//! 2. Each mutation in order, on the object the previous ones left, each under a budget
//!    of its own (kube's 10,000,000 per mutation, variables evaluated again for it): its
//!    value applied (`patch`), the result defaulted again. A mutation that fails is the
//!    policy's error and the next mutation still runs; an error kube returns as it is (a
//!    kind without a schema) ends the write.

use std::time::{Duration, Instant};

use kapi_cel::admission::{Evaluation, Inputs, OUT_OF_BUDGET, Outcome, POLICY_BUDGET, value};
use kapi_core::error::ApiError;
use serde_json::Value;

use super::compile::CompiledPolicy;
use super::patch::{self, Failure, Target};
use crate::policies::conditions::Matched;

/// One mutation's metric: kube's `error_type` and how long it took.
#[derive(Debug, PartialEq)]
pub(crate) struct Observation {
    pub(crate) error_type: &'static str,
    pub(crate) elapsed: Duration,
}

/// What one invocation did.
#[derive(Debug, Default)]
pub(crate) struct Invocation {
    /// A mutation applied (even one that changed nothing: kube's `Dirty`).
    pub(crate) patched: bool,
    /// The policy's errors, in order: each acted on as its `failurePolicy` says.
    pub(crate) errors: Vec<String>,
    pub(crate) observations: Vec<Observation>,
}

/// Runs `policy` on `object` (in the matched version) with `inputs` (their `object`
/// replaced as the mutations go) and, for the match conditions, `requested`; `default`
/// defaults what a mutation made (or says why it does not decode).
pub(crate) fn invoke(
    policy: &CompiledPolicy,
    inputs: &Inputs,
    requested: &kapi_cel::value::Value,
    object: &mut Value,
    target: Target<'_>,
    default: &dyn Fn(Value) -> Result<Value, String>,
) -> Result<Invocation, ApiError> {
    let mut invocation = Invocation::default();
    let mut inputs = inputs.clone();
    inputs.object = value(object);
    if !policy.match_conditions.is_empty() {
        let mut conditions = inputs.clone();
        conditions.request = requested.clone();
        match (policy.match_conditions).evaluate_for_policy(&policy.name, &conditions, policy.fail)
        {
            Matched::Yes => {}
            Matched::No(_) => return Ok(invocation),
            Matched::Failed(error) => {
                invocation.errors.push(error);
                return Ok(invocation);
            }
        }
    }
    let variables: Vec<kapi_cel::admission::Variable<'_>> = (policy.variables)
        .iter()
        .map(|(name, e)| (name.as_str(), e.program.as_ref().map_err(String::as_str)))
        .collect();
    for mutation in &policy.mutations {
        let (kind, expression) = mutation
            .as_ref()
            .map_err(|e| ApiError::Internal(e.clone()))?;
        let start = Instant::now();
        let outcome = match &expression.program {
            Err(error) => Err(error.clone()),
            Ok(program) => Evaluation::new(inputs.clone(), &variables, POLICY_BUDGET)
                .eval(program, &expression.source)
                .and_then(|outcome| match outcome {
                    Outcome::Value(value) => Ok(value),
                    Outcome::Error(error) => Err(error),
                }),
        };
        let applied = outcome.map_err(Failure::Policy).and_then(|value| {
            let patched = patch::apply(*kind, &value, object, target)?;
            // What does not decode into the kind is the policy's error (kube's conversion
            // back to the typed object).
            default(patched).map_err(Failure::Policy)
        });
        let elapsed = start.elapsed();
        match applied {
            Ok(patched) => {
                *object = patched;
                inputs.object = value(object);
                invocation.patched = true;
                invocation.observations.push(Observation {
                    error_type: "no_error",
                    elapsed,
                });
            }
            Err(Failure::Status(error)) => return Err(error),
            Err(Failure::Policy(error)) => {
                invocation.observations.push(Observation {
                    error_type: error_type(&error),
                    elapsed,
                });
                invocation.errors.push(error);
            }
        }
    }
    Ok(invocation)
}

/// kube's `error_type` of a mutation's error, by its prefix.
fn error_type(error: &str) -> &'static str {
    if error.starts_with("compilation") {
        "compile_error"
    } else if error.starts_with(OUT_OF_BUDGET) {
        "out_of_budget"
    } else {
        "invalid_error"
    }
}
