//! Planning: a checked expression made into the tree of steps evaluation walks, constants
//! folded once and every call's overloads resolved.

use std::sync::Arc;

use crate::checker::{Checked, Reference};
use crate::library::standard::ids;
use crate::library::{Overload, optional};
use crate::syntax::{Expr, ExprKind, Literal};
use crate::value::{Key, Map, Value};

use super::dispatch::dispatch;
use super::{Fold, Node};

pub(super) struct Planner<'a> {
    pub(super) checked: &'a Checked,
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

    pub(super) fn plan(&self, e: &Expr) -> Node {
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
