//! Evaluation: the planned tree walked against the variables, the cost charged as each
//! step runs; errors held as values where CEL absorbs them.

use std::sync::Arc;

use crate::library::Error;
use crate::library::standard::{self};
use crate::value::{Key, List, ListKind, Map, Value};

use super::dispatch::{call, call_cost_of, dispatch, overload_for};
use super::{Failure, Fold, LazyFields, Node};

/// The error a value holds, when it is one held as a value.
pub(crate) fn held_error(value: &Value) -> Option<Error> {
    match value {
        Value::Opaque(o) => o.as_any().downcast_ref::<ErrorValue>().map(|e| e.0.clone()),
        _ => None,
    }
}

pub(super) struct State<'l> {
    pub(super) cost: u64,
    pub(super) limit: u64,
    pub(super) locals: Vec<(Arc<str>, Value)>,
    pub(super) lazy: Option<&'l dyn LazyFields>,
}

impl<'l> State<'l> {
    fn charge(&mut self, cost: u64) -> Result<(), Failure> {
        self.cost = self.cost.saturating_add(cost);
        if self.cost > self.limit {
            return Err(Failure::CostLimitExceeded);
        }
        Ok(())
    }

    pub(super) fn eval(&mut self, node: &Node) -> Result<Value, Failure> {
        crate::stack::guard(|| {
            match node {
                Node::Const(v) => Ok(v.clone()),
                Node::Var(name) => {
                    self.charge(1)?;
                    self.lookup(name)
                }
                Node::Select {
                    operand,
                    field,
                    test: false,
                    relative: false,
                } if let Some(lazy) = self.lazy_root(operand) => {
                    self.charge(1)?;
                    self.charge(1)?;
                    lazy_field(lazy, field)
                }
                Node::Select {
                    operand,
                    field,
                    test,
                    relative,
                } => {
                    let value = self.eval(operand)?;
                    if *relative {
                        self.charge(1)?;
                    }
                    if *test {
                        return match &value {
                            // A field set to null is not set (kube's unstructured maps); a field
                            // whose data is invalid fails the test.
                            Value::Map(m) => match m.get(field) {
                                Some(v) if held_error(v).is_some() => {
                                    Err(Failure::Error(held_error(v).expect("checked")))
                                }
                                found => Ok(Value::Bool(
                                    found.is_some_and(|v| !matches!(v, Value::Null)),
                                )),
                            },
                            Value::Null => Ok(Value::Bool(false)),
                            Value::Optional(Some(v)) => match &**v {
                                Value::Map(m) => Ok(Value::Bool(m.get(field).is_some())),
                                _ => Err(Error::new("no such overload").into()),
                            },
                            Value::Optional(None) => Ok(Value::Bool(false)),
                            _ => Err(Error::new("no such overload").into()),
                        };
                    }
                    self.charge(1)?;
                    select(&value, field).map_err(Failure::Error)
                }
                Node::OptionalSelect {
                    operand,
                    field,
                    relative,
                } => {
                    let value = self.eval(operand)?;
                    if *relative {
                        self.charge(1)?;
                    }
                    let result = match value {
                        Value::Optional(None) => Value::Optional(None),
                        Value::Optional(Some(v)) => optional_field(&v, field),
                        v => optional_field(&v, field),
                    };
                    // cel-go observes an optional qualifier only when the field is there.
                    if matches!(result, Value::Optional(Some(_))) {
                        self.charge(1)?;
                    }
                    Ok(result)
                }
                Node::Index {
                    operand,
                    index,
                    index_cost,
                    relative,
                    overloads,
                } => {
                    let value = self.eval(operand)?;
                    if *relative {
                        self.charge(1)?;
                    }
                    let key = self.eval(index)?;
                    self.charge(*index_cost)?;
                    match &value {
                        Value::Optional(_) => {
                            dispatch(overloads, &[value.clone(), key]).map_err(Failure::Error)
                        }
                        _ => standard::index(&[value, key]).map_err(Failure::Error),
                    }
                }
                Node::Call {
                    function,
                    args,
                    overloads,
                } => {
                    // Every argument is evaluated, and the call costs, even when one is an
                    // error (cel-go's calls see their arguments' errors and return the first).
                    let mut values = Vec::with_capacity(args.len());
                    let mut error = None;
                    for arg in args {
                        match self.eval(arg) {
                            Ok(v) => match held_error(&v) {
                                Some(e) => {
                                    error.get_or_insert(e);
                                    values.push(Value::Null);
                                }
                                None => values.push(v),
                            },
                            Err(Failure::CostLimitExceeded) => {
                                return Err(Failure::CostLimitExceeded);
                            }
                            Err(Failure::Error(e)) => {
                                error.get_or_insert(e);
                                values.push(Value::Null);
                            }
                        }
                    }
                    let overload = overload_for(overloads, &values);
                    let result = match error {
                        Some(e) => Err(e),
                        None => call(overload, &values),
                    };
                    let cost = call_cost_of(
                        function,
                        overload,
                        &values,
                        result.as_ref().unwrap_or(&Value::Null),
                    );
                    self.charge(cost)?;
                    result.map_err(Failure::Error)
                }
                Node::And(a, b) => self.logical(a, b, false),
                Node::Or(a, b) => self.logical(a, b, true),
                Node::Conditional(c, a, b) => match self.eval(c)? {
                    Value::Bool(true) => self.eval_branch(a),
                    Value::Bool(false) => self.eval_branch(b),
                    _ => Err(Error::new("no such overload").into()),
                },
                Node::NotStrictlyFalse(a) => {
                    let value = self.eval(a);
                    self.charge(1)?;
                    match value {
                        Ok(Value::Bool(b)) => Ok(Value::Bool(b)),
                        Err(Failure::CostLimitExceeded) => Err(Failure::CostLimitExceeded),
                        _ => Ok(Value::Bool(true)),
                    }
                }
                Node::OptionalOr {
                    target,
                    alternative,
                    or_value,
                } => {
                    let value = self.eval(target)?;
                    match value {
                        Value::Optional(Some(v)) if *or_value => Ok((*v).clone()),
                        Value::Optional(Some(_)) => Ok(value),
                        Value::Optional(None) => self.eval(alternative),
                        _ => Err(Error::new("no such overload").into()),
                    }
                }
                Node::SetMembership(element, set) => {
                    let value = self.eval(element)?;
                    Ok(Value::Bool(set.iter().any(|v| v.equals(&value))))
                }
                Node::List { elements, optional } => {
                    let mut items = Vec::with_capacity(elements.len());
                    for (i, element) in elements.iter().enumerate() {
                        let value = self.eval(element)?;
                        if optional.contains(&i) {
                            match value {
                                Value::Optional(Some(v)) => items.push((*v).clone()),
                                Value::Optional(None) => {}
                                _ => return Err(Error::new("no such overload").into()),
                            }
                        } else {
                            items.push(value);
                        }
                    }
                    self.charge(10)?;
                    Ok(Value::List(Arc::new(List {
                        items,
                        kind: ListKind::Atomic,
                    })))
                }
                Node::Map { entries } => {
                    let mut map = Map::default();
                    for (k, v, optional) in entries {
                        let key = self.eval(k)?;
                        let mut value = self.eval(v)?;
                        if *optional {
                            match value {
                                Value::Optional(Some(v)) => value = (*v).clone(),
                                Value::Optional(None) => continue,
                                _ => return Err(Error::new("no such overload").into()),
                            }
                        }
                        let key = Key::of(&key).ok_or_else(|| {
                            Error::new(format!("unsupported key type: {}", key.type_name()))
                        })?;
                        if map.entries.insert(key.clone(), value).is_some() {
                            return Err(Error::new(format!(
                                "Failed with repeated key: {}",
                                key.to_value()
                            ))
                            .into());
                        }
                    }
                    self.charge(30)?;
                    Ok(Value::Map(Arc::new(map)))
                }
                // The environment's struct types are kube's unstructured objects: a value is
                // the map of the fields set (an optional field without a value is unset).
                Node::Struct { name, fields } => {
                    let mut map = Map {
                        type_name: Some(name.clone()),
                        ..Map::default()
                    };
                    for (name, v, optional) in fields {
                        let mut value = self.eval(v)?;
                        if *optional {
                            match value {
                                Value::Optional(Some(v)) => value = (*v).clone(),
                                Value::Optional(None) => continue,
                                _ => return Err(Error::new("no such overload").into()),
                            }
                        }
                        map.entries.insert(Key::String(name.clone()), value);
                    }
                    self.charge(40)?;
                    Ok(Value::Map(Arc::new(map)))
                }
                Node::Fold(fold) => self.fold(fold),
            }
        })
    }

    /// `a && b` (`decisive` false) or `a || b` (`decisive` true): `b` is evaluated only
    /// when `a` does not decide; a side that decides wins over an error on the other, as
    /// CEL's logic is commutative over errors.
    fn logical(&mut self, a: &Node, b: &Node, decisive: bool) -> Result<Value, Failure> {
        let left = self.eval(a).and_then(boolean);
        if matches!(left, Ok(Value::Bool(v)) if v == decisive)
            || matches!(left, Err(Failure::CostLimitExceeded))
        {
            return left;
        }
        let right = self.eval(b);
        match (left, right) {
            (_, Err(Failure::CostLimitExceeded)) => Err(Failure::CostLimitExceeded),
            (_, Ok(Value::Bool(v))) if v == decisive => Ok(Value::Bool(v)),
            (Ok(Value::Bool(_)), right) => right.and_then(boolean),
            (Err(e), _) => Err(e),
            (Ok(_), _) => Err(Error::new("no such overload").into()),
        }
    }

    /// The innermost variable named `name`.
    fn lookup(&self, name: &str) -> Result<Value, Failure> {
        let value = self.locals.iter().rev().find(|(n, _)| &**n == name);
        match (value, self.lazy) {
            (Some((_, value)), _) => Ok(value.clone()),
            (None, Some(lazy)) if lazy.name() == name => Ok(lazy.all()),
            (None, _) => Err(Failure::Error(Error::new(format!(
                "no such attribute(s): {name}"
            )))),
        }
    }

    /// The lazy variable `operand` names, unless a local of its name hides it.
    fn lazy_root(&self, operand: &Node) -> Option<&'l dyn LazyFields> {
        let lazy = self.lazy?;
        match operand {
            Node::Var(name)
                if lazy.name() == &**name && !self.locals.iter().any(|(n, _)| n == name) =>
            {
                Some(lazy)
            }
            _ => None,
        }
    }

    /// A branch of `?:`: cel-go resolves an attribute there without observing its root
    /// (its qualifiers still cost).
    fn eval_branch(&mut self, node: &Node) -> Result<Value, Failure> {
        match node {
            Node::Var(name) => self.lookup(name),
            Node::Select {
                operand,
                field,
                test: false,
                relative: false,
            } if let Some(lazy) = self.lazy_root(operand) => {
                self.charge(1)?;
                lazy_field(lazy, field)
            }
            Node::Select {
                operand,
                field,
                test: false,
                relative: false,
            } => {
                let value = self.eval_branch(operand)?;
                self.charge(1)?;
                select(&value, field).map_err(Failure::Error)
            }
            _ => self.eval(node),
        }
    }

    fn fold(&mut self, fold: &Fold) -> Result<Value, Failure> {
        let range = self.eval(&fold.range)?;
        let accu = self.eval(&fold.init)?;
        let base = self.locals.len();
        self.locals.push((fold.accu.clone(), accu));
        let items: Vec<(Value, Value)> = match &range {
            Value::List(l) => (l.items.iter().enumerate())
                .map(|(i, v)| match fold.var2 {
                    Some(_) => (Value::Int(i as i64), v.clone()),
                    None => (v.clone(), Value::Null),
                })
                .collect(),
            Value::Map(m) => m
                .entries
                .iter()
                .map(|(k, v)| (k.to_value(), v.clone()))
                .collect(),
            other => {
                self.locals.truncate(base);
                return Err(
                    Error::new(format!("cannot iterate over {}", other.type_name())).into(),
                );
            }
        };
        for (first, second) in items {
            self.locals.push((fold.var.clone(), first));
            if let Some(var2) = &fold.var2 {
                self.locals.push((var2.clone(), second));
            }
            let cond = self.eval(&fold.cond);
            let go_on = match cond {
                Err(Failure::CostLimitExceeded) => {
                    self.locals.truncate(base);
                    return Err(Failure::CostLimitExceeded);
                }
                Ok(Value::Bool(false)) => false,
                _ => true,
            };
            if !go_on {
                self.locals.truncate(base + 1);
                break;
            }
            let step = self.eval(&fold.step);
            self.locals.truncate(base + 1);
            match step {
                Ok(v) => self.locals[base].1 = v,
                Err(Failure::CostLimitExceeded) => {
                    self.locals.truncate(base);
                    return Err(Failure::CostLimitExceeded);
                }
                // An error accumulates as a value: `&&` and `||` in later steps may absorb it.
                Err(Failure::Error(e)) => {
                    self.locals[base].1 = Value::Opaque(Arc::new(ErrorValue(e)))
                }
            }
        }
        let result = self.eval(&fold.result);
        self.locals.truncate(base);
        match result {
            Ok(v) => match held_error(&v) {
                Some(e) => Err(Failure::Error(e)),
                None => Ok(v),
            },
            other => other,
        }
    }
}

/// An error held as a value: in a loop's accumulator, or a field whose data does not
/// convert (an unparsable `format: duration`), which fails the rules that read it.
#[derive(Debug)]
struct ErrorValue(Error);

/// `error` as a value that fails whatever reads it.
pub fn error_value(error: Error) -> Value {
    Value::Opaque(Arc::new(ErrorValue(error)))
}

impl crate::value::Opaque for ErrorValue {
    fn type_name(&self) -> &'static str {
        "error"
    }
    fn equals(&self, _: &dyn crate::value::Opaque) -> bool {
        false
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A value as a boolean operand, an accumulated error as the error it is.
fn boolean(v: Value) -> Result<Value, Failure> {
    match v {
        Value::Bool(_) => Ok(v),
        _ => Err(held_error(&v)
            .unwrap_or_else(|| Error::new("no such overload"))
            .into()),
    }
}

/// `value.field`.
fn select(value: &Value, field: &Value) -> Result<Value, Error> {
    match value {
        Value::Map(m) => m
            .get(field)
            .cloned()
            .ok_or_else(|| standard::no_such_key(field)),
        Value::Optional(Some(v)) => Ok(optional_field(v, field)),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::List(_) | Value::Opaque(_) | Value::Type(_) => {
            Err(held_error(value).unwrap_or_else(|| Error::new("no such overload")))
        }
        // cel-go qualifies what is neither a map nor a list (`null.x`, a null `params`)
        // as a missing key.
        _ => Err(standard::no_such_key(field)),
    }
}

/// `lazy.field`, evaluated now if it was not.
fn lazy_field(lazy: &dyn LazyFields, field: &Value) -> Result<Value, Failure> {
    let found = match field {
        Value::String(name) => lazy.field(name),
        _ => None,
    };
    found.ok_or_else(|| Failure::Error(standard::no_such_key(field)))
}

/// `value.?field`.
fn optional_field(value: &Value, field: &Value) -> Value {
    match value {
        Value::Map(m) => Value::Optional(m.get(field).map(|v| Arc::new(v.clone()))),
        _ => Value::Optional(None),
    }
}
