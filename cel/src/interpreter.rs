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

use std::sync::Arc;

use crate::checker::{Checked, Reference};
use crate::library::kube::cost::call_cost;
use crate::library::standard::{self, ids};
use crate::library::{Error, Overload, optional};
use crate::syntax::{Expr, ExprKind, Literal};
use crate::ty::Type;
use crate::value::{Key, List, ListKind, Map, Value};

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

struct Planner<'a> {
    checked: &'a Checked,
}

/// Whether a step is an attribute in cel-go's planner: a variable, or fields and indexes of
/// one.
fn is_attribute(node: &Node) -> bool {
    matches!(
        node,
        Node::Var(_) | Node::Select { test: false, .. } | Node::Index { .. }
    )
}

impl Planner<'_> {
    fn overloads(&self, id: u64) -> (Arc<str>, bool, Arc<[Overload]>) {
        match self.checked.references.get(&id) {
            Some(Reference::Function {
                name,
                namespaced,
                overloads,
            }) => (name.as_str().into(), *namespaced, overloads.clone().into()),
            _ => ("".into(), false, Arc::from(Vec::new())),
        }
    }

    fn plan(&self, e: &Expr) -> Node {
        crate::stack::guard(|| {
            match &e.kind {
                ExprKind::Literal(literal) => Node::Const(match literal {
                    Literal::Null => Value::Null,
                    Literal::Bool(b) => Value::Bool(*b),
                    Literal::Int(i) => Value::Int(*i),
                    Literal::Uint(u) => Value::Uint(*u),
                    Literal::Double(d) => Value::Double(*d),
                    Literal::String(s) => Value::String(s.clone()),
                    Literal::Bytes(b) => Value::Bytes(b.clone()),
                }),
                ExprKind::Ident(_) | ExprKind::Select { .. } if self.named(e).is_some() => {
                    self.named(e).expect("checked above")
                }
                ExprKind::Ident(name) => Node::Var(name.as_str().into()),
                ExprKind::Select {
                    operand,
                    field,
                    test,
                } => {
                    let operand = self.plan(operand);
                    // A keyword named plainly selects its escaped property.
                    let field = match self.checked.references.get(&e.id) {
                        Some(Reference::Field(key)) => key.as_str(),
                        _ => field.as_str(),
                    };
                    Node::Select {
                        relative: !is_attribute(&operand),
                        operand: Box::new(operand),
                        field: Value::string(field),
                        test: *test,
                    }
                }
                ExprKind::Call {
                    function,
                    target,
                    args,
                } => self.call(e, function, target.as_deref(), args),
                ExprKind::List { elements, optional } => {
                    let elements: Vec<Node> = elements.iter().map(|x| self.plan(x)).collect();
                    if optional.is_empty() && elements.iter().all(|x| matches!(x, Node::Const(_))) {
                        let items = elements.into_iter().map(|x| match x {
                            Node::Const(v) => v,
                            _ => unreachable!("all constants"),
                        });
                        return Node::Const(Value::list(items.collect()));
                    }
                    Node::List {
                        elements,
                        optional: optional.clone(),
                    }
                }
                ExprKind::Map { entries } => {
                    let entries: Vec<(Node, Node, bool)> = entries
                        .iter()
                        .map(|(k, v, o)| (self.plan(k), self.plan(v), *o))
                        .collect();
                    if entries
                        .iter()
                        .all(|(k, v, o)| !o && matches!((k, v), (Node::Const(_), Node::Const(_))))
                    {
                        let mut map = Map::default();
                        for (k, v, _) in entries {
                            if let (Node::Const(k), Node::Const(v)) = (k, v)
                                && let Some(key) = Key::of(&k)
                            {
                                map.entries.insert(key, v);
                            }
                        }
                        return Node::Const(Value::Map(Arc::new(map)));
                    }
                    Node::Map { entries }
                }
                ExprKind::Struct { name, fields } => Node::Struct {
                    name: name.as_str().into(),
                    fields: (fields.iter())
                        .map(|(name, value, optional)| {
                            (name.as_str().into(), self.plan(value), *optional)
                        })
                        .collect(),
                },
                ExprKind::Comprehension(c) => Node::Fold(Box::new(Fold {
                    range: self.plan(&c.range),
                    var: c.var.as_str().into(),
                    var2: c.var2.as_deref().map(Into::into),
                    accu: c.accu.as_str().into(),
                    init: self.plan(&c.init),
                    cond: self.plan(&c.cond),
                    step: self.plan(&c.step),
                    result: self.plan(&c.result),
                })),
            }
        })
    }

    /// A name the checker resolved to a variable or a type (`a.b` included).
    fn named(&self, e: &Expr) -> Option<Node> {
        match self.checked.references.get(&e.id)? {
            Reference::Variable(name) => Some(Node::Var(name.as_str().into())),
            Reference::Type(name) => Some(Node::Const(Value::Type(type_value_name(name).into()))),
            Reference::Function { .. } | Reference::Field(_) => None,
        }
    }

    fn call(&self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) -> Node {
        let (name, namespaced, overloads) = self.overloads(e.id);
        let mut planned: Vec<Node> = Vec::new();
        if let Some(target) = target.filter(|_| !namespaced) {
            planned.push(self.plan(target));
        }
        planned.extend(args.iter().map(|a| self.plan(a)));
        let first = overloads.first().map(|o| o.id);
        match (function, first) {
            ("_&&_", _) => {
                let b = planned.pop().expect("two operands");
                return Node::And(Box::new(planned.pop().expect("two operands")), Box::new(b));
            }
            ("_||_", _) => {
                let b = planned.pop().expect("two operands");
                return Node::Or(Box::new(planned.pop().expect("two operands")), Box::new(b));
            }
            ("_?_:_", _) => {
                let mut it = planned.into_iter();
                let (c, a, b) = (
                    it.next().expect("3"),
                    it.next().expect("3"),
                    it.next().expect("3"),
                );
                return Node::Conditional(Box::new(c), Box::new(a), Box::new(b));
            }
            ("@not_strictly_false", _) => {
                return Node::NotStrictlyFalse(Box::new(planned.pop().expect("one operand")));
            }
            ("_?._", _) => {
                let field = match planned.pop() {
                    Some(Node::Const(v)) => v,
                    _ => Value::string(""),
                };
                let operand = planned.pop().expect("an operand");
                return Node::OptionalSelect {
                    relative: !is_attribute(&operand),
                    operand: Box::new(operand),
                    field,
                };
            }
            (_, Some(optional::ids::OR | optional::ids::OR_VALUE)) => {
                let alternative = planned.pop().expect("an argument");
                let target = planned.pop().expect("a target");
                return Node::OptionalOr {
                    target: Box::new(target),
                    alternative: Box::new(alternative),
                    or_value: first == Some(optional::ids::OR_VALUE),
                };
            }
            ("_[_]", _) => {
                let index = planned.pop().expect("an index");
                let operand = planned.pop().expect("an operand");
                let index_cost = match &index {
                    Node::Const(_) => 1,
                    i if is_attribute(i) => 0,
                    _ => 1,
                };
                return Node::Index {
                    relative: !is_attribute(&operand),
                    operand: Box::new(operand),
                    index: Box::new(index),
                    index_cost,
                    overloads,
                };
            }
            ("@in", Some(ids::IN_LIST)) => {
                // `x in [constants]` of primitive values is a set lookup, folded once.
                if let Some(Node::Const(Value::List(list))) = planned.last()
                    && list.items.iter().all(|v| {
                        matches!(
                            v,
                            Value::Bool(_)
                                | Value::Int(_)
                                | Value::Uint(_)
                                | Value::Double(_)
                                | Value::String(_)
                        )
                    })
                {
                    let items = list.items.clone();
                    planned.pop();
                    return Node::SetMembership(
                        Box::new(planned.pop().expect("an element")),
                        items,
                    );
                }
            }
            _ => {}
        }
        // Conversions of constants are folded once.
        if is_conversion(function)
            && planned.len() == 1
            && let Node::Const(value) = &planned[0]
            && let Ok(folded) = dispatch(&overloads, std::slice::from_ref(value))
        {
            return Node::Const(folded);
        }
        Node::Call {
            function: name,
            args: planned,
            overloads,
        }
    }
}

/// The runtime name of a type used as a value.
fn type_value_name(name: &str) -> &str {
    match name {
        "optional_type" => "optional_type",
        other => other,
    }
}

/// cel-go's type conversion functions.
fn is_conversion(function: &str) -> bool {
    matches!(
        function,
        "bool"
            | "bytes"
            | "double"
            | "duration"
            | "dyn"
            | "int"
            | "string"
            | "timestamp"
            | "type"
            | "uint"
    )
}

/// Whether `value` can be passed where `ty` is declared.
fn fits(value: &Value, ty: &Type) -> bool {
    match (ty, value) {
        (Type::Dyn | Type::Param(_) | Type::Error, _) => true,
        (Type::Null, Value::Null) => true,
        (Type::Bool, Value::Bool(_)) => true,
        (Type::Int, Value::Int(_)) => true,
        (Type::Uint, Value::Uint(_)) => true,
        (Type::Double, Value::Double(_)) => true,
        (Type::String, Value::String(_)) => true,
        (Type::Bytes, Value::Bytes(_)) => true,
        (Type::Duration, Value::Duration(_)) => true,
        (Type::Timestamp, Value::Timestamp(_)) => true,
        (Type::List(element), Value::List(l)) => match &**element {
            Type::Dyn | Type::Param(_) => true,
            element => l.items.first().is_none_or(|v| fits(v, element)),
        },
        (Type::Map(..) | Type::Object(_), Value::Map(_)) => true,
        (Type::Type(_), Value::Type(_)) => true,
        (Type::Opaque(name, _), Value::Optional(_)) => &**name == crate::ty::OPTIONAL,
        (Type::Opaque(name, _), Value::Opaque(o)) => **name == *o.type_name(),
        _ => false,
    }
}

/// The first overload whose parameters fit the arguments.
fn overload_for<'a>(overloads: &'a [Overload], args: &[Value]) -> Option<&'a Overload> {
    overloads.iter().find(|o| {
        o.params.len() == args.len() && o.params.iter().zip(args).all(|(t, v)| fits(v, t))
    })
}

/// Calls `overload` (the one the arguments fit, if any).
fn call(overload: Option<&Overload>, args: &[Value]) -> Result<Value, Error> {
    match overload.and_then(|o| o.implementation) {
        Some(implementation) => implementation(args),
        None => Err(Error::new("no such overload")),
    }
}

/// Calls the first overload whose parameters fit the arguments.
fn dispatch(overloads: &[Overload], args: &[Value]) -> Result<Value, Error> {
    call(overload_for(overloads, args), args)
}

/// The runtime cost of a call of `function` by `overload`: a cel-go library's own tracker
/// first, then kube's figure by function name, then cel-go's default.
fn call_cost_of(
    function: &str,
    overload: Option<&Overload>,
    args: &[Value],
    result: &Value,
) -> u64 {
    let id = overload.map_or("", |o| o.id);
    if let Some(o) = overload.filter(|o| o.tracker)
        && let Some(cost) = o.cost
    {
        return cost(args, result);
    }
    if let Some(cost) = call_cost(function, id, args, result) {
        return cost;
    }
    match overload.and_then(|o| o.cost) {
        Some(cost) => cost(args, result),
        None => 1,
    }
}

/// The error a value holds, when it is one held as a value.
pub(crate) fn held_error(value: &Value) -> Option<Error> {
    match value {
        Value::Opaque(o) => o.as_any().downcast_ref::<ErrorValue>().map(|e| e.0.clone()),
        _ => None,
    }
}

struct State<'l> {
    cost: u64,
    limit: u64,
    locals: Vec<(Arc<str>, Value)>,
    lazy: Option<&'l dyn LazyFields>,
}

impl<'l> State<'l> {
    fn charge(&mut self, cost: u64) -> Result<(), Failure> {
        self.cost = self.cost.saturating_add(cost);
        if self.cost > self.limit {
            return Err(Failure::CostLimitExceeded);
        }
        Ok(())
    }

    fn eval(&mut self, node: &Node) -> Result<Value, Failure> {
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
