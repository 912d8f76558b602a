//! The type checker, as cel-go's: every node gets a type, every name a meaning (a variable,
//! a type, a function of a namespace such as `optional.of`), every call the overloads its
//! argument types allow; errors are cel-go's (`undeclared reference to 'x' (in container
//! '')`, `found no matching overload for '_+_' applied to '(int, string)'`, `undefined
//! field 'x'`), at the node's place in the source.
//!
//! Empty lists and maps get fresh type variables that later uses bind (`[]` as the
//! accumulator of `map()` becomes a `list(int)`), so that results are typed as precisely as
//! cel-go types them.

use std::collections::HashMap;
use std::sync::Arc;

use crate::environment::Feature;
use crate::library::{Env, Overload};
use crate::syntax::{Ast, Expr, ExprKind, Issue, Issues, Literal};
use crate::ty::{OPTIONAL, Type};

/// What a name or a call refers to.
#[derive(Clone, Debug)]
pub enum Reference {
    /// A variable of the environment or of a comprehension.
    Variable(String),
    /// A type used as a value (`int`).
    Type(Arc<str>),
    /// A field selected by a name other than its key: a CEL keyword (`namespace`) whose
    /// property is escaped (`__namespace__`), which kube lets rules name plainly.
    Field(String),
    /// A function: its full name, whether called without its target (a namespaced
    /// function), and the overloads that may apply.
    Function {
        /// The function's name (`optional.of`, `_+_`).
        name: String,
        /// Whether the call's target was a namespace, not an argument.
        namespaced: bool,
        /// The overloads the argument types allow, in declaration order.
        overloads: Vec<Overload>,
    },
}

/// A checked expression.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The expression.
    pub ast: Ast,
    /// Each node's type.
    pub types: HashMap<u64, Type>,
    /// What names and calls refer to.
    pub references: HashMap<u64, Reference>,
}

impl Checked {
    /// The type of the whole expression.
    pub fn output(&self) -> &Type {
        &self.types[&self.ast.expr.id]
    }
}

/// The names of types usable as values, with their types.
fn type_ident(name: &str) -> Option<Type> {
    Some(match name {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "null_type" => Type::Null,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "type" => Type::of_type(Type::Dyn),
        "dyn" => Type::Dyn,
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "optional_type" => Type::optional(Type::Dyn),
        _ => return None,
    })
}

/// Type-checks `ast` in `env`.
pub fn check(ast: Ast, env: &Env) -> Result<Checked, Issues> {
    let mut checker = Checker {
        env,
        ast: &ast,
        types: HashMap::new(),
        references: HashMap::new(),
        scopes: Vec::new(),
        subs: HashMap::new(),
        fresh: 0,
        issues: Vec::new(),
        mixed_ok: false,
    };
    checker.check(&ast.expr);
    if env.has(Feature::LiteralValidators) {
        validate_literals(&ast.expr, &ast, &mut checker.issues);
    }
    if !checker.issues.is_empty() {
        return Err(Issues(checker.issues));
    }
    let subs = std::mem::take(&mut checker.subs);
    let types = (checker.types.into_iter())
        .map(|(id, t)| (id, t.substitute(&subs, true)))
        .collect();
    let references = checker.references;
    Ok(Checked {
        ast,
        types,
        references,
    })
}

struct Checker<'a> {
    env: &'a Env,
    ast: &'a Ast,
    types: HashMap<u64, Type>,
    references: HashMap<u64, Reference>,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, Type)>,
    /// Bindings of the checker's type variables (`_var0`).
    subs: HashMap<Arc<str>, Type>,
    fresh: usize,
    issues: Vec<Issue>,
    /// Inside the list argument of `format()`, which may mix types (cel-go exempts it
    /// from homogeneous literals).
    mixed_ok: bool,
}

impl Checker<'_> {
    /// `name{fields}`: a value of the environment's struct type `name`, each field's value
    /// of the field's type (cel-go's errors otherwise).
    fn make_struct(&mut self, id: u64, name: &str, fields: &[(String, Expr, bool)]) -> Type {
        let Some(declared) = self.env.find_struct(name) else {
            return self.error(
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            );
        };
        for (field, value, optional) in fields {
            let mut ty = self.check(value);
            if *optional {
                ty = match self.resolved(&ty) {
                    Type::Opaque(name, params) if &*name == OPTIONAL => params[0].clone(),
                    _ => Type::Dyn,
                };
            }
            let Some(types) = &declared.fields else {
                continue;
            };
            match types.get(field) {
                None => _ = self.error(value.id, format!("undefined field '{field}'")),
                Some(expected) => {
                    let mut subs = self.subs.clone();
                    if expected.accepts(&ty, &mut subs) {
                        self.subs = subs;
                    } else {
                        let message = format!(
                            "expected type of field '{field}' is '{expected}' but provided type is '{}'",
                            self.resolved(&ty)
                        );
                        self.error(value.id, message);
                    }
                }
            }
        }
        Type::Opaque(declared.name, Vec::new())
    }

    fn error(&mut self, id: u64, message: String) -> Type {
        self.issues.push(self.ast.issue(id, message));
        Type::Error
    }

    fn fresh_var(&mut self) -> Type {
        self.fresh += 1;
        Type::Param(format!("_var{}", self.fresh - 1).into())
    }

    /// `t` with the checker's bindings applied (unbound variables kept).
    fn resolved(&self, t: &Type) -> Type {
        t.substitute(&self.subs, false)
    }

    fn check(&mut self, e: &Expr) -> Type {
        crate::stack::guard(|| {
            let t = self.check_kind(e);
            self.types.insert(e.id, t.clone());
            t
        })
    }

    fn check_kind(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Literal(literal) => match literal {
                Literal::Null => Type::Null,
                Literal::Bool(_) => Type::Bool,
                Literal::Int(_) => Type::Int,
                Literal::Uint(_) => Type::Uint,
                Literal::Double(_) => Type::Double,
                Literal::String(_) => Type::String,
                Literal::Bytes(_) => Type::Bytes,
            },
            ExprKind::Ident(name) => self.ident(e.id, name),
            ExprKind::Select {
                operand,
                field,
                test,
            } => {
                // `a.b.c` may name a type or a variable before it selects fields.
                if let Some(name) = e.qualified_name()
                    && let Some(t) = self.qualified(e.id, &name)
                {
                    return t;
                }
                let operand_type = self.check(operand);
                let field_type = self.select(e.id, &operand_type, field);
                if *test { Type::Bool } else { field_type }
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(e.id, function, target.as_deref(), args),
            ExprKind::List { elements, optional } => {
                let mut element = None::<Type>;
                for (i, item) in elements.iter().enumerate() {
                    let mut t = self.check(item);
                    if optional.contains(&i) {
                        t = match self.resolved(&t) {
                            Type::Opaque(name, params) if &*name == OPTIONAL => params[0].clone(),
                            Type::Dyn | Type::Error => Type::Dyn,
                            other => self.error(
                                item.id,
                                format!("expected type 'optional_type' but found '{other}'"),
                            ),
                        };
                    }
                    element = Some(self.join_aggregate(item.id, element, t));
                }
                let element = element.unwrap_or_else(|| self.fresh_var());
                Type::list(element)
            }
            ExprKind::Map { entries } => {
                let (mut key, mut value) = (None::<Type>, None::<Type>);
                for (k, v, optional) in entries {
                    let kt = self.check(k);
                    let mut vt = self.check(v);
                    if *optional {
                        vt = match self.resolved(&vt) {
                            Type::Opaque(name, params) if &*name == OPTIONAL => params[0].clone(),
                            _ => Type::Dyn,
                        };
                    }
                    key = Some(self.join_aggregate(k.id, key, kt));
                    value = Some(self.join_aggregate(v.id, value, vt));
                }
                let key = key.unwrap_or_else(|| self.fresh_var());
                let value = value.unwrap_or_else(|| self.fresh_var());
                Type::map(key, value)
            }
            ExprKind::Struct { name, fields } => self.make_struct(e.id, name, fields),
            ExprKind::Comprehension(c) => {
                let range = self.check(&c.range);
                let (var, var2) = match self.resolved(&range) {
                    Type::List(element) => match &c.var2 {
                        Some(_) => (Type::Int, (*element).clone()),
                        None => ((*element).clone(), Type::Dyn),
                    },
                    Type::Map(key, value) => ((*key).clone(), (*value).clone()),
                    Type::Dyn | Type::Error => (Type::Dyn, Type::Dyn),
                    other => {
                        let message = format!(
                            "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                        );
                        (self.error(c.range.id, message), Type::Dyn)
                    }
                };
                let accu = self.check(&c.init);
                self.scopes.push((c.accu.clone(), accu.clone()));
                self.scopes.push((c.var.clone(), var));
                if let Some(name) = &c.var2 {
                    self.scopes.push((name.clone(), var2));
                }
                let cond = self.check(&c.cond);
                self.assignable(c.cond.id, &Type::Bool, &cond);
                let step = self.check(&c.step);
                self.assignable(c.step.id, &accu, &step);
                if c.var2.is_some() {
                    self.scopes.pop();
                }
                self.scopes.pop();
                let result = self.check(&c.result);
                self.scopes.pop();
                result
            }
        }
    }

    /// Checks that `actual` can be used where `expected` is, binding variables.
    fn assignable(&mut self, id: u64, expected: &Type, actual: &Type) {
        let mut subs = self.subs.clone();
        if expected.accepts(actual, &mut subs) {
            self.subs = subs;
        } else {
            let (expected, actual) = (self.resolved(expected), self.resolved(actual));
            self.error(
                id,
                format!("expected type '{expected}' but found '{actual}'"),
            );
        }
    }

    /// The element type of a literal so far with one more element: with homogeneous
    /// literals (kube's option) every element must be of the first's type.
    fn join_aggregate(&mut self, id: u64, so_far: Option<Type>, t: Type) -> Type {
        let Some(so_far) = so_far else {
            return t;
        };
        let mut subs = self.subs.clone();
        if so_far.accepts(&t, &mut subs) && t.accepts(&so_far, &mut subs.clone()) {
            self.subs = subs;
            return so_far;
        }
        if self.env.has(Feature::HomogeneousAggregateLiterals) && !self.mixed_ok {
            let (so_far, t) = (self.resolved(&so_far), self.resolved(&t));
            self.error(id, format!("expected type '{so_far}' but found '{t}'"));
            return so_far;
        }
        so_far.join(&t)
    }

    fn ident(&mut self, id: u64, name: &str) -> Type {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            self.references
                .insert(id, Reference::Variable(name.to_owned()));
            return t.clone();
        }
        if let Some(t) = self.qualified(id, name) {
            return t;
        }
        self.error(
            id,
            format!("undeclared reference to '{name}' (in container '')"),
        )
    }

    /// A variable or type of the environment named `name`.
    fn qualified(&mut self, id: u64, name: &str) -> Option<Type> {
        if self
            .scopes
            .iter()
            .any(|(n, _)| Some(n.as_str()) == name.split('.').next())
        {
            return None;
        }
        if let Some(t) = self.env.variables.get(name) {
            // A library's type declared by name (`net.IP`) is that type as a value.
            let reference = match t {
                Type::Type(inner) => Reference::Type(inner.to_string().into()),
                _ => Reference::Variable(name.to_owned()),
            };
            self.references.insert(id, reference);
            return Some(t.clone());
        }
        let t = type_ident(name)?;
        self.references.insert(id, Reference::Type(name.into()));
        Some(Type::of_type(t))
    }

    /// The type of `field` selected from a value of `operand`.
    fn select(&mut self, id: u64, operand: &Type, field: &str) -> Type {
        match self.resolved(operand) {
            Type::Map(_, value) => (*value).clone(),
            Type::Object(object) => match object.fields.get(field) {
                Some(t) => t.clone(),
                None => match object.fields.get(&format!("__{field}__")) {
                    Some(t) if crate::escape::is_reserved(field) => {
                        self.references
                            .insert(id, Reference::Field(format!("__{field}__")));
                        t.clone()
                    }
                    _ => self.error(id, format!("undefined field '{field}'")),
                },
            },
            Type::Dyn | Type::Error | Type::Param(_) => Type::Dyn,
            Type::Opaque(name, params) if &*name == OPTIONAL => {
                let inner = self.select(id, &params[0], field);
                Type::optional(inner)
            }
            // A field of a struct value the expression made (`Object{a: 1}.a`).
            Type::Opaque(name, params) if params.is_empty() => {
                match self.env.find_struct(&name).map(|s| s.fields) {
                    Some(None) => Type::Dyn,
                    Some(Some(fields)) => match fields.get(field) {
                        Some(t) => t.clone(),
                        None => self.error(id, format!("undefined field '{field}'")),
                    },
                    None => self.error(
                        id,
                        format!("type '{name}' does not support field selection"),
                    ),
                }
            }
            other => self.error(
                id,
                format!("type '{other}' does not support field selection"),
            ),
        }
    }

    fn call(&mut self, id: u64, function: &str, target: Option<&Expr>, args: &[Expr]) -> Type {
        // `ns.f(x)`: a function of a namespace, when one is declared so.
        if let Some(target) = target
            && let Some(namespace) = target.qualified_name()
            && !self
                .scopes
                .iter()
                .any(|(n, _)| Some(n.as_str()) == namespace.split('.').next())
            && !self
                .env
                .variables
                .contains_key(namespace.split('.').next().unwrap_or_default())
        {
            let full = format!("{namespace}.{function}");
            if self.env.function(&full).is_some() {
                return self.resolve(id, &full, true, None, args);
            }
        }
        if function == "_?._" && args.len() == 2 {
            let operand = self.check(&args[0]);
            self.types.insert(args[1].id, Type::String);
            let field = match &args[1].kind {
                ExprKind::Literal(Literal::String(s)) => s.to_string(),
                _ => String::new(),
            };
            let field_type = match self.resolved(&operand) {
                Type::Opaque(name, params) if &*name == OPTIONAL => {
                    self.select(id, &params[0], &field)
                }
                other => self.select(id, &other, &field),
            };
            let overloads = self
                .env
                .function(function)
                .map(|o| (**o).clone())
                .unwrap_or_default();
            self.references.insert(
                id,
                Reference::Function {
                    name: function.to_owned(),
                    namespaced: false,
                    overloads,
                },
            );
            return Type::optional(field_type);
        }
        self.resolve(id, function, false, target, args)
    }

    /// Resolves a call's overloads from its argument types.
    fn resolve(
        &mut self,
        id: u64,
        function: &str,
        namespaced: bool,
        target: Option<&Expr>,
        args: &[Expr],
    ) -> Type {
        let mut arg_types = Vec::new();
        if let Some(target) = target {
            arg_types.push(self.check(target));
        }
        for arg in args {
            let mixed_ok = function == "format" && matches!(arg.kind, ExprKind::List { .. });
            let outer = std::mem::replace(&mut self.mixed_ok, mixed_ok);
            arg_types.push(self.check(arg));
            self.mixed_ok = outer;
        }
        let Some(overloads) = self.env.function(function).cloned() else {
            return self.error(
                id,
                format!("undeclared reference to '{function}' (in container '')"),
            );
        };
        let mut matched = Vec::new();
        let mut result: Option<Type> = None;
        for overload in overloads.iter() {
            if overload.receiver != target.is_some() || overload.params.len() != arg_types.len() {
                continue;
            }
            let mut subs = self.subs.clone();
            let accepted = (overload.params.iter())
                .zip(&arg_types)
                .all(|(param, arg)| param.accepts(&self.resolved(arg), &mut subs));
            if !accepted {
                continue;
            }
            let t = overload.result.substitute(&subs, false);
            // Keep the checker's own variables bound; drop the overload's parameters.
            subs.retain(|name, _| name.starts_with("_var"));
            let t = rename_params(&t, &mut self.fresh);
            self.subs = subs;
            result = Some(match result {
                None => t,
                Some(previous) => previous.join(&t),
            });
            matched.push(overload.clone());
        }
        match result {
            Some(t) => {
                self.references.insert(
                    id,
                    Reference::Function {
                        name: function.to_owned(),
                        namespaced,
                        overloads: matched,
                    },
                );
                t
            }
            None => {
                let shown: Vec<String> = arg_types
                    .iter()
                    .map(|t| {
                        self.resolved(t)
                            .substitute(&HashMap::new(), true)
                            .to_string()
                    })
                    .collect();
                let applied = match target {
                    Some(_) => format!("{}.({})", shown[0], shown[1..].join(", ")),
                    None => format!("({})", shown.join(", ")),
                };
                self.error(
                    id,
                    format!("found no matching overload for '{function}' applied to '{applied}'"),
                )
            }
        }
    }
}

/// cel-go's literal validators (kube from 1.29): `duration()`, `timestamp()` and
/// `matches()` of constants must succeed when the rule is compiled, not when it runs.
fn validate_literals(e: &Expr, ast: &Ast, issues: &mut Vec<Issue>) {
    crate::stack::guard(|| {
        use crate::time::{Duration, Timestamp};
        match &e.kind {
            ExprKind::Call {
                function,
                target,
                args,
            } => {
                let literal = |i: usize| args.get(i).map(|a| (&a.kind, a.id));
                let bad = match (function.as_str(), target.is_some(), literal(0), literal(1)) {
                    (
                        "duration",
                        false,
                        Some((ExprKind::Literal(Literal::String(s)), id)),
                        None,
                    ) => (Duration::parse(s)
                        .ok()
                        .and_then(|d| Duration::checked(d.0))
                        .is_none())
                    .then_some((id, "invalid duration argument")),
                    (
                        "timestamp",
                        false,
                        Some((ExprKind::Literal(Literal::String(s)), id)),
                        None,
                    ) => Timestamp::parse(s)
                        .is_err()
                        .then_some((id, "invalid timestamp")),
                    (
                        "timestamp",
                        false,
                        Some((ExprKind::Call { function, args, .. }, id)),
                        None,
                    ) if function == "-_"
                        && matches!(
                            args.first().map(|a| &a.kind),
                            Some(ExprKind::Literal(Literal::Int(_)))
                        ) =>
                    {
                        let Some(ExprKind::Literal(Literal::Int(i))) =
                            args.first().map(|a| &a.kind)
                        else {
                            unreachable!("matched above")
                        };
                        Timestamp::checked(-(*i as i128) * 1_000_000_000)
                            .is_none()
                            .then_some((id, "invalid timestamp"))
                    }
                    ("timestamp", false, Some((ExprKind::Literal(Literal::Int(i)), id)), None) => {
                        Timestamp::checked(*i as i128 * 1_000_000_000)
                            .is_none()
                            .then_some((id, "invalid timestamp"))
                    }
                    ("matches", true, Some((ExprKind::Literal(Literal::String(p)), id)), None)
                    | ("matches", false, _, Some((ExprKind::Literal(Literal::String(p)), id))) => {
                        crate::library::regex::compile(p)
                            .is_err()
                            .then_some((id, "invalid matches argument"))
                    }
                    _ => None,
                };
                if let Some((id, message)) = bad {
                    issues.push(ast.issue(id, message));
                }
                target
                    .iter()
                    .for_each(|t| validate_literals(t, ast, issues));
                args.iter().for_each(|a| validate_literals(a, ast, issues));
            }
            ExprKind::Select { operand, .. } => validate_literals(operand, ast, issues),
            ExprKind::List { elements, .. } => elements
                .iter()
                .for_each(|x| validate_literals(x, ast, issues)),
            ExprKind::Map { entries } => entries.iter().for_each(|(k, v, _)| {
                validate_literals(k, ast, issues);
                validate_literals(v, ast, issues);
            }),
            ExprKind::Struct { fields, .. } => fields
                .iter()
                .for_each(|(_, v, _)| validate_literals(v, ast, issues)),
            ExprKind::Comprehension(c) => {
                for x in [&c.range, &c.init, &c.cond, &c.step, &c.result] {
                    validate_literals(x, ast, issues);
                }
            }
            _ => {}
        }
    })
}

/// A result type's unbound overload parameters, renamed to fresh checker variables (an
/// `optional.none()` is an `optional_type(_varN)` to be bound by its use).
fn rename_params(t: &Type, fresh: &mut usize) -> Type {
    let mut names: HashMap<Arc<str>, Type> = HashMap::new();
    collect_params(t, &mut names, fresh);
    t.substitute(&names, false)
}

fn collect_params(t: &Type, names: &mut HashMap<Arc<str>, Type>, fresh: &mut usize) {
    match t {
        Type::Param(p) if !p.starts_with("_var") && !names.contains_key(p) => {
            names.insert(p.clone(), Type::Param(format!("_var{fresh}").into()));
            *fresh += 1;
        }
        Type::List(e) | Type::Type(e) => collect_params(e, names, fresh),
        Type::Map(k, v) => {
            collect_params(k, names, fresh);
            collect_params(v, names, fresh);
        }
        Type::Opaque(_, params) => params.iter().for_each(|p| collect_params(p, names, fresh)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::{KUBERNETES, stored_expressions};
    use crate::syntax::parse;

    fn env() -> Env {
        let mut env = Env::new(&stored_expressions(KUBERNETES));
        env.variable("self", Type::list(Type::Int));
        env
    }

    fn output(source: &str) -> Result<String, String> {
        check(parse(source).unwrap(), &env())
            .map(|c| c.output().to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn types_flow_through_calls_and_macros() {
        assert_eq!(output("self.all(x, x > 1)").unwrap(), "bool");
        assert_eq!(output("self.map(x, x * 2)").unwrap(), "list(int)");
        assert_eq!(output("self.filter(x, x > 1).size()").unwrap(), "int");
        assert_eq!(output("[1, 2][0] + 1").unwrap(), "int");
        assert_eq!(output("{'a': 1}['a']").unwrap(), "int");
        assert_eq!(output("optional.of(1).orValue(2)").unwrap(), "int");
        assert_eq!(output("optional.none().orValue(2)").unwrap(), "int");
        assert_eq!(output("self[?0].hasValue()").unwrap(), "bool");
        assert_eq!(output("type(1) == int").unwrap(), "bool");
        assert_eq!(output("dyn(1) == 1.0").unwrap(), "bool");
        assert_eq!(output("'abc'.substring(1).upperAscii()").unwrap(), "string");
    }

    #[test]
    fn errors_are_cel_go_errors() {
        assert_eq!(
            output("self.foo + 1").unwrap_err(),
            "ERROR: <input>:1:5: type 'list(int)' does not support field selection\n | self.foo + 1\n | ....^"
        );
        assert!(
            output("x == 1")
                .unwrap_err()
                .contains("undeclared reference to 'x' (in container '')")
        );
        assert!(
            output("1 + 'a'")
                .unwrap_err()
                .contains("found no matching overload for '_+_' applied to '(int, string)'")
        );
        assert!(
            output("1.startsWith('a')")
                .unwrap_err()
                .contains("applied to 'int.(string)'")
        );
        assert!(
            output("[1, 'a']")
                .unwrap_err()
                .contains("expected type 'int' but found 'string'")
        );
    }
}
