//! The walk over a checked expression that sums what each node costs (cel-go's `coster`),
//! tracking for each node the path from a variable to the schema node its value comes from
//! (`self.spec.items` is `[self, spec, items]`, an element of it `[..., @items]`), and the
//! sizes the expression itself shows (literals, results of calls, loops over a range).

use std::collections::HashMap;

use super::functions::CallEstimate;
use super::{CostEstimate, Size};
use crate::checker::{Checked, Reference};
use crate::syntax::{Expr, ExprKind, Literal};
use crate::ty::Type;
use crate::types::{DeclType, Kind};

/// A variable or field costs 1.
const SELECT_AND_IDENT: CostEstimate = CostEstimate::exactly(1);
/// A constant costs nothing.
const CONSTANT: CostEstimate = CostEstimate::exactly(0);
/// Making a list.
const LIST_CREATE: CostEstimate = CostEstimate::exactly(10);
/// Making a map.
const MAP_CREATE: CostEstimate = CostEstimate::exactly(30);
/// Making a message.
const STRUCT_CREATE: CostEstimate = CostEstimate::exactly(40);
/// What `has()` adds to its operand's cost: nothing, kube's option (cel-go's
/// `PresenceTestHasCost(false)`, [`crate::environment::Feature::PresenceTestWithoutCost`],
/// which every kube environment has).
const PRESENCE_TEST: CostEstimate = CostEstimate::exactly(0);

/// The names of a macro's accumulator: cel-go's, and the one kapi's parser gives.
const ACCUMULATORS: [&str; 2] = ["__result__", "@result"];

/// A node as the function estimates see it: its path, its type, the node itself (absent
/// for the element of a list, which is no node), and the size the expression shows.
pub(super) struct Node<'a> {
    /// From a variable through fields and `@items`/`@keys`/`@values`; empty when unknown.
    pub(super) path: Vec<String>,
    /// Its checked type.
    pub(super) ty: Type,
    /// The expression.
    pub(super) expr: Option<&'a Expr>,
    /// The size computed for it (a call's result, a loop's range).
    pub(super) derived: Option<Size>,
}

impl Node<'_> {
    /// The size the expression itself gives: a literal's, a literal list's or map's, or
    /// the one computed (cel-go's `ComputedSize`).
    pub(super) fn computed_size(&self) -> Option<Size> {
        if self.derived.is_some() {
            return self.derived;
        }
        let n = match &self.expr?.kind {
            ExprKind::Literal(literal) => match literal {
                Literal::String(s) => s.chars().count() as u64,
                Literal::Bytes(b) => b.len() as u64,
                _ => 1,
            },
            ExprKind::List { elements, .. } => elements.len() as u64,
            ExprKind::Map { entries } => entries.len() as u64,
            _ => return None,
        };
        Some(Size::exactly(n))
    }

    /// The type's first parameter: a list's element, a map's key.
    pub(super) fn first_parameter(&self) -> Option<&Type> {
        match &self.ty {
            Type::List(element) => Some(element),
            Type::Map(key, _) => Some(key),
            Type::Type(t) => Some(t),
            Type::Opaque(_, params) => params.first(),
            _ => None,
        }
    }
}

/// Where the sizes the expression does not show come from.
#[derive(Clone, Copy)]
pub(super) enum Sizes<'a> {
    /// The schema: the type of `self`, where paths are looked up (kube's estimator).
    Schema(Option<&'a DeclType>),
    /// By type alone, as kube's library tests size values.
    #[cfg(test)]
    ByType(fn(&Type) -> Option<Size>),
}

/// The state of one estimate.
pub(super) struct Estimator<'a> {
    checked: &'a Checked,
    /// Where sizes are looked up.
    sizes: Sizes<'a>,
    /// Each node's path.
    paths: HashMap<u64, Vec<String>>,
    /// For each loop variable in scope, the ranges it iterates, innermost last.
    ranges: HashMap<String, Vec<u64>>,
    /// The sizes of calls' results and of loops.
    computed: HashMap<u64, Size>,
}

impl<'a> Estimator<'a> {
    /// An estimator of `checked` with sizes from `sizes`.
    pub(super) fn new(checked: &'a Checked, sizes: Sizes<'a>) -> Estimator<'a> {
        Estimator {
            checked,
            sizes,
            paths: HashMap::new(),
            ranges: HashMap::new(),
            computed: HashMap::new(),
        }
    }

    /// The estimate of the whole expression.
    pub(super) fn run(mut self) -> CostEstimate {
        self.cost(&self.checked.ast.expr)
    }

    fn ty(&self, e: &Expr) -> Type {
        self.checked.types.get(&e.id).cloned().unwrap_or(Type::Dyn)
    }

    fn path(&self, e: &Expr) -> Vec<String> {
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    fn extended(&self, e: &Expr, step: &str) -> Vec<String> {
        let mut path = self.path(e);
        path.push(step.to_owned());
        path
    }

    /// `e` as a node for the function estimates (cel-go's `newAstNode`): paths from an
    /// accumulator are not given.
    pub(super) fn node(&self, e: &'a Expr) -> Node<'a> {
        let mut path = self.path(e);
        if path
            .first()
            .is_some_and(|first| ACCUMULATORS.contains(&first.as_str()))
        {
            path.clear();
        }
        Node {
            path,
            ty: self.ty(e),
            expr: Some(e),
            derived: self.computed.get(&e.id).copied(),
        }
    }

    /// The size the estimator's source gives a node it cannot compute.
    pub(super) fn declared_size(&self, node: &Node<'_>) -> Option<Size> {
        match self.sizes {
            Sizes::Schema(root) => schema_size(root?, &node.path),
            #[cfg(test)]
            Sizes::ByType(size) => size(&node.ty),
        }
    }

    /// A node's size as cel-go's estimator sizes it: computed, declared, 1 for scalars,
    /// else unknown.
    pub(super) fn size(&self, node: &Node<'_>) -> Size {
        if let Some(size) = node.computed_size().or_else(|| self.declared_size(node)) {
            return size;
        }
        match node.ty {
            Type::Bool
            | Type::Double
            | Type::Duration
            | Type::Int
            | Type::Timestamp
            | Type::Uint => Size::exactly(1),
            _ => Size::UNKNOWN,
        }
    }

    /// A node's size as kube's and the sets extension's estimates size it: computed,
    /// declared, else unknown.
    pub(super) fn size_or_unknown(&self, node: &Node<'_>) -> Size {
        (node.computed_size())
            .or_else(|| self.declared_size(node))
            .unwrap_or(Size::UNKNOWN)
    }

    fn cost(&mut self, e: &'a Expr) -> CostEstimate {
        crate::stack::guard(|| {
            match &e.kind {
                ExprKind::Literal(_) => CONSTANT,
                ExprKind::Ident(name) => self.ident(e, name),
                ExprKind::Select {
                    operand,
                    field,
                    test,
                } => {
                    if let Some(name) = self.resolved_name(e) {
                        // A qualified name the checker resolved: one identifier to cel-go.
                        return self.ident(e, &name);
                    }
                    if *test {
                        return PRESENCE_TEST.add(self.cost(operand));
                    }
                    let mut sum = self.cost(operand);
                    if matches!(
                        self.ty(operand),
                        Type::Map(..) | Type::Object(_) | Type::Param(_)
                    ) {
                        sum = sum.add(SELECT_AND_IDENT);
                    }
                    let path = self.extended(operand, field);
                    self.paths.insert(e.id, path);
                    sum
                }
                ExprKind::Call {
                    function,
                    target,
                    args,
                } => self.call(e, function, target.as_deref(), args),
                ExprKind::List { elements, .. } => (elements.iter())
                    .fold(CostEstimate::default(), |sum, element| {
                        sum.add(self.cost(element))
                    })
                    .add(LIST_CREATE),
                ExprKind::Map { entries } => (entries.iter())
                    .fold(CostEstimate::default(), |sum, (key, value, _)| {
                        sum.add(self.cost(key)).add(self.cost(value))
                    })
                    .add(MAP_CREATE),
                ExprKind::Struct { fields, .. } => (fields.iter())
                    .fold(CostEstimate::default(), |sum, (_, value, _)| {
                        sum.add(self.cost(value))
                    })
                    .add(STRUCT_CREATE),
                ExprKind::Comprehension(c) => {
                    let mut sum = self.cost(&c.range).add(self.cost(&c.init));
                    self.ranges
                        .entry(c.var.clone())
                        .or_default()
                        .push(c.range.id);
                    let iteration = self.cost(&c.cond);
                    let iteration = self.cost(&c.step).add(iteration);
                    if let Some(stack) = self.ranges.get_mut(&c.var) {
                        stack.pop();
                    }
                    sum = sum.add(self.cost(&c.result));
                    let count = self.size(&self.node(&c.range));
                    self.computed.insert(e.id, count);
                    sum.add(count.multiply(iteration))
                }
            }
        })
    }

    /// The variable or type a qualified name (`a.b.c`) at `e` resolved to.
    fn resolved_name(&self, e: &Expr) -> Option<String> {
        match self.checked.references.get(&e.id)? {
            Reference::Variable(name) => Some(name.clone()),
            Reference::Type(name) => Some(name.to_string()),
            _ => None,
        }
    }

    fn ident(&mut self, e: &'a Expr, name: &str) -> CostEstimate {
        let range = (self.ranges.get(name)).and_then(|stack| stack.last().copied());
        match range {
            Some(range) => {
                let step = match self.checked.types.get(&range) {
                    Some(Type::List(_)) => Some("@items"),
                    Some(Type::Map(..)) => Some("@keys"),
                    _ => None,
                };
                if let Some(step) = step {
                    let mut path = self.paths.get(&range).cloned().unwrap_or_default();
                    path.push(step.to_owned());
                    self.paths.insert(e.id, path);
                }
            }
            None => {
                self.paths.insert(e.id, vec![name.to_owned()]);
            }
        }
        SELECT_AND_IDENT
    }

    fn call(
        &mut self,
        e: &'a Expr,
        function: &str,
        target: Option<&'a Expr>,
        args: &'a [Expr],
    ) -> CostEstimate {
        let mut arg_costs = Vec::with_capacity(args.len());
        let mut arg_nodes = Vec::with_capacity(args.len());
        for arg in args {
            arg_costs.push(self.cost(arg));
            arg_nodes.push(self.node(arg));
        }
        let Some(Reference::Function {
            name,
            namespaced,
            overloads,
        }) = self.checked.references.get(&e.id)
        else {
            return CostEstimate::default();
        };
        if overloads.is_empty() {
            return CostEstimate::default();
        }
        let function = if name.is_empty() { function } else { name };
        let mut sum = CostEstimate::default();
        let target = match target {
            Some(target) if !namespaced => {
                sum = sum.add(self.cost(target));
                Some(self.node(target))
            }
            _ => None,
        };
        let mut cost = CostEstimate::new(u64::MAX, 0);
        let mut result_size: Option<Size> = None;
        for overload in overloads {
            let CallEstimate {
                cost: overload_cost,
                result_size: size,
            } = self.call_estimate(
                function,
                overload.id,
                target.as_ref(),
                &arg_nodes,
                &arg_costs,
            );
            cost = cost.union(overload_cost);
            if let Some(size) = size {
                result_size = Some(result_size.map_or(size, |s| s.union(size)));
            }
            let step = match overload.id {
                "index_list" => "@items",
                "index_map" => "@values",
                _ => continue,
            };
            if let Some(first) = args.first() {
                let path = self.extended(first, step);
                self.paths.insert(e.id, path);
            }
        }
        if let Some(size) = result_size {
            self.computed.insert(e.id, size);
        }
        sum.add(cost)
    }
}

/// The size the schema gives the value at `path` (kube's `sizeEstimator`): the path's
/// first element (the variable) stands for `self`'s type, `root`; `None` where the path
/// leaves the declared types.
fn schema_size(root: &DeclType, path: &[String]) -> Option<Size> {
    /// A map's keys: kube's plain string type, with no maximum.
    const KEY: DeclType = DeclType {
        kind: Kind::String,
        max_elements: 0,
        min_serialized_size: 2,
    };
    let (_, rest) = path.split_first()?;
    let mut node = root;
    for step in rest {
        node = match (step.as_str(), &node.kind) {
            ("@items" | "@values", Kind::List(element) | Kind::Map(element)) => element,
            ("@items" | "@values", _) => return None,
            ("@keys", Kind::Map(_)) => &KEY,
            ("@keys", _) => return None,
            (field, Kind::Object(fields)) => &fields.get(field)?.ty,
            _ => return None,
        };
    }
    Some(Size::new(0, node.max_elements.max(0) as u64))
}
