//! A policy's `variables`, each evaluated when an expression first reads it, as kube's
//! composition environment evaluates them (cel-go's lazy map): a variable nothing reads
//! costs nothing and fails nothing, one read twice is evaluated once, and what evaluating
//! one costs is charged to the evaluation's budget, not to the expression that read it.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::interpreter::{Failure, LazyFields, error_value, held_error};
use crate::library::Error;
use crate::program::Compiled;
use crate::value::{Key, Map, Value};

use super::PER_CALL_LIMIT;

/// A variable: its name, and its program or why it has none.
pub type Variable<'p> = (&'p str, Result<&'p Compiled, &'p str>);

/// One evaluation's variables and the values read so far.
pub(super) struct Variables<'p> {
    programs: Vec<Variable<'p>>,
    values: RefCell<Vec<Option<Value>>>,
    /// What evaluating them has cost since it was last taken.
    cost: Cell<u64>,
    /// The variable being evaluated, if any: it and those after it are not visible to it
    /// (as they are not declared to it), so that no variable evaluates itself.
    evaluating: Cell<Option<usize>>,
}

impl<'p> Variables<'p> {
    pub(super) fn new(programs: &[Variable<'p>]) -> Variables<'p> {
        Variables {
            programs: programs.to_vec(),
            values: RefCell::new(vec![None; programs.len()]),
            cost: Cell::new(0),
            evaluating: Cell::new(None),
        }
    }

    /// What evaluating variables has cost since the last call.
    pub(super) fn take_cost(&self) -> u64 {
        self.cost.take()
    }

    /// The variables as the expressions evaluated in `activation` read them.
    pub(super) fn in_activation<'a>(
        &'a self,
        activation: &'a [(&'static str, Value)],
    ) -> Lazy<'a, 'p> {
        Lazy {
            variables: self,
            activation,
        }
    }
}

/// [`Variables`] bound to the activation their programs run in.
pub(super) struct Lazy<'a, 'p> {
    variables: &'a Variables<'p>,
    activation: &'a [(&'static str, Value)],
}

impl Lazy<'_, '_> {
    /// The value of the variable at `index`, evaluated now unless it was before; an error
    /// value, with kube's words, when it does not compile or fails.
    fn value(&self, index: usize) -> Value {
        if let Some(value) = &self.variables.values.borrow()[index] {
            return value.clone();
        }
        let (name, program) = self.variables.programs[index];
        let value = match program {
            Ok(program) => {
                let outer = self.variables.evaluating.replace(Some(index));
                let (result, cost) =
                    (program.program).eval_with(self.activation, Some(self), PER_CALL_LIMIT);
                self.variables.evaluating.set(outer);
                let spent = &self.variables.cost;
                spent.set(spent.get().saturating_add(cost));
                match outcome(result) {
                    Ok(value) => value,
                    Err(error) => error_value(Error::new(format!(
                        "composited variable {name:?} fails to evaluate: {error}"
                    ))),
                }
            }
            Err(error) => error_value(Error::new(format!(
                "composited variable {name:?} fails to compile: {error}"
            ))),
        };
        self.variables.values.borrow_mut()[index] = Some(value.clone());
        value
    }
}

impl Lazy<'_, '_> {
    /// The variables visible now: all of them to an expression, those before it to a
    /// variable.
    fn visible(&self) -> &[Variable<'_>] {
        let programs = &self.variables.programs;
        &programs[..self.variables.evaluating.get().unwrap_or(programs.len())]
    }
}

impl LazyFields for Lazy<'_, '_> {
    fn name(&self) -> &str {
        "variables"
    }

    fn field(&self, field: &str) -> Option<Value> {
        let index = (self.visible().iter()).position(|(name, _)| *name == field)?;
        Some(self.value(index))
    }

    fn all(&self) -> Value {
        let mut map = Map::default();
        for (index, (name, _)) in self.visible().iter().enumerate() {
            map.entries
                .insert(Key::String((*name).into()), self.value(index));
        }
        Value::Map(Arc::new(map))
    }
}

/// A program's result as kube words it: its value, or its error's text.
pub(super) fn outcome(result: Result<Value, Failure>) -> Result<Value, String> {
    match result {
        Ok(value) => match held_error(&value) {
            Some(error) => Err(error.to_string()),
            None => Ok(value),
        },
        Err(Failure::Error(error)) => Err(error.to_string()),
        Err(Failure::CostLimitExceeded) => {
            Err("operation cancelled: actual cost limit exceeded".to_owned())
        }
    }
}
