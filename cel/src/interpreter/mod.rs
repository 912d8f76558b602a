//! The interpreter: a checked expression planned once into a tree of steps, then evaluated
//! against variables with its cost counted as it runs (cel-go's `CostTracker` with kube's
//! options), stopping as soon as the cost passes the limit rather than after.
//!
//! Costs follow cel-go's planner: a variable costs 1, each field or constant index it is
//! qualified with 1 more (a selection from a computed value 1 more still, for the relative
//! attribute cel-go makes), a call what its overload says (1 by default, kube's figures by
//! function name first), a list literal 10 and a map literal 30 unless all their elements
//! are constants (folded once, with `OptOptimize`), conversions of constants nothing, and
//! `x in [constants]` only `x`. `&&`, `||`, `?:` and loops cost only what they evaluate.
//! Errors are values, absorbed by `&&` and `||` as CEL says; running out of budget is not.
//!
//! `plan` makes the tree from a checked expression, `eval` runs it, `dispatch` picks and
//! prices a function's overload.

mod dispatch;
mod eval;
mod plan;

use std::sync::Arc;

use crate::checker::Checked;
use crate::library::{Error, Overload};
use crate::value::Value;

use eval::State;
pub use eval::error_value;
pub(crate) use eval::held_error;
use plan::Planner;

/// A step of a planned expression.
#[derive(Debug)]
enum Node {
    Const(Value),
    Var(Arc<str>),
    Select {
        operand: Box<Node>,
        field: Value,
        test: bool,
        relative: bool,
    },
    Index {
        operand: Box<Node>,
        index: Box<Node>,
        /// What the index costs on top of its own evaluation: 1 for a constant, 0 for an
        /// attribute (it is its own qualifier), 1 for a computed value (a relative
        /// attribute).
        index_cost: u64,
        relative: bool,
        overloads: Arc<[Overload]>,
    },
    Call {
        function: Arc<str>,
        args: Vec<Node>,
        overloads: Arc<[Overload]>,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Conditional(Box<Node>, Box<Node>, Box<Node>),
    NotStrictlyFalse(Box<Node>),
    OptionalOr {
        target: Box<Node>,
        alternative: Box<Node>,
        or_value: bool,
    },
    OptionalSelect {
        operand: Box<Node>,
        field: Value,
        relative: bool,
    },
    SetMembership(Box<Node>, Vec<Value>),
    List {
        elements: Vec<Node>,
        optional: Vec<usize>,
    },
    Map {
        entries: Vec<(Node, Node, bool)>,
    },
    /// A struct value: its fields by name (whether optional), made as a map.
    Struct {
        name: Arc<str>,
        fields: Vec<(Arc<str>, Node, bool)>,
    },
    Fold(Box<Fold>),
}

#[derive(Debug)]
struct Fold {
    range: Node,
    var: Arc<str>,
    var2: Option<Arc<str>>,
    accu: Arc<str>,
    init: Node,
    cond: Node,
    step: Node,
    result: Node,
}

/// Why an evaluation stopped without a value.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The expression evaluated to an error.
    Error(Error),
    /// The cost passed the limit.
    CostLimitExceeded,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

/// A planned expression, ready to evaluate any number of times.
#[derive(Debug)]
pub struct Program {
    root: Node,
}

/// Variables of an evaluation, by name.
pub type Activation<'a> = &'a [(&'a str, Value)];

/// A variable whose fields are evaluated when first read, as kube's admission `variables`
/// are (cel-go's lazy map): `name.field` asks for that field alone, other uses of the
/// variable for every field.
pub trait LazyFields {
    /// The variable's name.
    fn name(&self) -> &str;
    /// Field `field`, evaluated now unless it was before; `None` when there is none.
    fn field(&self, field: &str) -> Option<Value>;
    /// Every field, as a map.
    fn all(&self) -> Value;
}

impl Program {
    /// Plans `checked`.
    pub fn plan(checked: &Checked) -> Program {
        Program {
            root: Planner { checked }.plan(&checked.ast.expr),
        }
    }

    /// Evaluates with `variables`, stopping when the cost passes `limit`. Returns the result
    /// and the cost.
    pub fn eval(&self, variables: Activation<'_>, limit: u64) -> (Result<Value, Failure>, u64) {
        self.eval_with(variables, None, limit)
    }

    /// [`Program::eval`] with `lazy`, one more variable, whose fields are evaluated when
    /// read (their cost is `lazy`'s to count, not the result's).
    pub fn eval_with(
        &self,
        variables: Activation<'_>,
        lazy: Option<&dyn LazyFields>,
        limit: u64,
    ) -> (Result<Value, Failure>, u64) {
        let mut state = State {
            cost: 0,
            limit,
            locals: variables
                .iter()
                .map(|(n, v)| (Arc::<str>::from(*n), v.clone()))
                .collect(),
            lazy,
        };
        let result = state.eval(&self.root);
        (result, state.cost)
    }
}
