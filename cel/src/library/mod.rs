//! The functions a rule can call, as declarations the checker resolves overloads against
//! and implementations the interpreter runs, with what each call costs at run time.
//!
//! Each library is a module adding its functions to an [`Env`]: the standard library
//! ([`standard`]), cel-go's extensions kube enables ([`strings`], [`sets`], [`optional`]),
//! and kube's own libraries ([`kube`]). Overloads are written as cel-go names and types
//! them (`("add_int64", "(int, int) -> int")`, receiver calls as
//! `"string.(string) -> bool"`), so the declarations read like cel-go's and errors print
//! the same types.

pub mod kube;
pub mod optional;
pub mod regex;
pub mod sets;
pub mod standard;
pub mod strings;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::environment::Feature;
use crate::ty::Type;
use crate::value::Value;

/// A runtime error: a CEL error value, with cel-go's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Error(pub Arc<str>);

impl Error {
    /// An error with `message`.
    pub fn new(message: impl Into<Arc<str>>) -> Error {
        Error(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A call's result.
pub type Result<T = Value> = std::result::Result<T, Error>;

/// An implementation: the arguments (the receiver first) to the result.
pub type Implementation = fn(&[Value]) -> Result;

/// What a call costs at run time, given its arguments and result; `None` for cel-go's
/// default of 1.
pub type RuntimeCost = fn(&[Value], &Value) -> u64;

/// One overload of a function.
#[derive(Clone)]
pub struct Overload {
    /// cel-go's id for it (`add_int64`).
    pub id: &'static str,
    /// Whether it is called on a receiver (`x.f()`).
    pub receiver: bool,
    /// Its parameters, the receiver first.
    pub params: Vec<Type>,
    /// Its result.
    pub result: Type,
    /// What it does; `None` for the operators the interpreter evaluates itself
    /// (`&&`, `||`, `?:`, ...).
    pub implementation: Option<Implementation>,
    /// Its runtime cost.
    pub cost: Option<RuntimeCost>,
    /// Whether its cost comes before kube's figures by function name (a cel-go library's
    /// own tracker) rather than after (cel-go's defaults).
    pub tracker: bool,
}

impl fmt::Debug for Overload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

impl Overload {
    /// An overload from cel-go's id and a signature: `(int, int) -> int` for a global
    /// call, `string.(string) -> bool` for a receiver call.
    pub fn new(id: &'static str, signature: &str, implementation: Implementation) -> Overload {
        let mut overload = Overload::special(id, signature);
        overload.implementation = Some(implementation);
        overload
    }

    /// An overload the interpreter evaluates itself.
    pub fn special(id: &'static str, signature: &str) -> Overload {
        let (params, result) = signature
            .rsplit_once("->")
            .expect("a signature has a result");
        let params = params.trim();
        let (receiver, params) = match params.split_once(".(") {
            Some((target, rest)) if !target.is_empty() && !target.starts_with('(') => {
                (true, format!("{target}, {}", strip_suffix(rest, ")")))
            }
            _ => (
                false,
                strip_suffix(params.strip_prefix('(').unwrap_or(params), ")").to_owned(),
            ),
        };
        let params: Vec<Type> = crate::ty::split_top_level(&params)
            .into_iter()
            .map(Type::parse)
            .collect();
        Overload {
            id,
            receiver,
            params,
            result: Type::parse(result),
            implementation: None,
            cost: None,
            tracker: false,
        }
    }

    /// With a runtime cost other than 1.
    pub fn cost(mut self, cost: RuntimeCost) -> Overload {
        self.cost = Some(cost);
        self
    }

    /// With a runtime cost that comes before kube's (a cel-go library's tracker).
    pub fn tracker(mut self, cost: RuntimeCost) -> Overload {
        self.cost = Some(cost);
        self.tracker = true;
        self
    }
}

/// `text` without one `suffix`.
fn strip_suffix<'a>(text: &'a str, suffix: &str) -> &'a str {
    text.strip_suffix(suffix).unwrap_or(text)
}

/// The functions, variables and options a rule is compiled with.
#[derive(Clone, Default)]
pub struct Env {
    functions: HashMap<String, Arc<Vec<Overload>>>,
    /// The variables (`self`, `oldSelf`) and their types.
    pub variables: HashMap<String, Type>,
    /// The language options and libraries enabled.
    pub features: Vec<Feature>,
    /// The struct types values may be made of (`JSONPatch{op: "add"}`), by name.
    structs: HashMap<String, StructType>,
    /// Names whose struct types take any field (kube's `Object`: `Object`,
    /// `Object.spec`, `Object.spec.template`, ...).
    open_structs: Vec<Arc<str>>,
}

/// A struct type of an environment: what `Name{field: value}` makes.
#[derive(Clone, Debug)]
pub struct StructType {
    /// Its name.
    pub name: Arc<str>,
    /// Its fields and their types; `None` when it takes any field, as `dyn` (kube's
    /// `Object` types, whose fields only the object's schema knows).
    pub fields: Option<BTreeMap<String, Type>>,
}

impl Env {
    /// The environment of `features`: the standard library and the libraries they enable.
    pub fn new(features: &[Feature]) -> Env {
        let mut env = Env {
            features: features.to_vec(),
            ..Env::default()
        };
        standard::install(&mut env);
        let has = |f: Feature| features.contains(&f);
        if has(Feature::OptionalTypes) {
            optional::install(&mut env);
        }
        if has(Feature::StringsV2) {
            strings::install(&mut env, 2);
        } else if has(Feature::StringsV0) {
            strings::install(&mut env, 0);
        }
        if has(Feature::Sets) {
            sets::install(&mut env);
        }
        if has(Feature::TwoVarComprehensions) {
            crate::comprehensions::install(&mut env);
        }
        kube::install(&mut env, features);
        env
    }

    /// Whether `feature` is enabled.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }

    /// Adds overloads of `function`.
    pub fn add(&mut self, function: &str, overloads: impl IntoIterator<Item = Overload>) {
        let entry = self.functions.entry(function.to_owned()).or_default();
        Arc::make_mut(entry).extend(overloads);
    }

    /// The overloads of `function`.
    pub fn function(&self, function: &str) -> Option<&Arc<Vec<Overload>>> {
        self.functions.get(function)
    }

    /// Declares a variable.
    pub fn variable(&mut self, name: &str, ty: Type) {
        self.variables.insert(name.to_owned(), ty);
    }

    /// Declares a struct type with these fields.
    pub fn struct_type(&mut self, name: &str, fields: BTreeMap<String, Type>) {
        let ty = StructType {
            name: name.into(),
            fields: Some(fields),
        };
        self.structs.insert(name.to_owned(), ty);
    }

    /// Declares `root` and every name under it (`root.a.b`) open struct types: any field,
    /// of type `dyn`.
    pub fn open_struct_types(&mut self, root: &str) {
        self.open_structs.push(root.into());
    }

    /// The struct type named `name`, if declared.
    pub fn find_struct(&self, name: &str) -> Option<StructType> {
        if let Some(ty) = self.structs.get(name) {
            return Some(ty.clone());
        }
        let open = self.open_structs.iter().any(|root| {
            name.strip_prefix(&**root)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        open.then(|| StructType {
            name: name.into(),
            fields: None,
        })
    }
}

/// A "no such overload" error for a call of `function`.
pub fn no_such_overload() -> Error {
    Error::new("no such overload")
}

/// `args[i]` as a string.
pub fn string(args: &[Value], i: usize) -> Result<&Arc<str>> {
    match &args[i] {
        Value::String(s) => Ok(s),
        _ => Err(no_such_overload()),
    }
}

/// `args[i]` as an int.
pub fn int(args: &[Value], i: usize) -> Result<i64> {
    match &args[i] {
        Value::Int(v) => Ok(*v),
        _ => Err(no_such_overload()),
    }
}

/// `args[i]` as a list's items.
pub fn list(args: &[Value], i: usize) -> Result<&[Value]> {
    match &args[i] {
        Value::List(l) => Ok(&l.items),
        _ => Err(no_such_overload()),
    }
}

/// cel-go's cost of traversing a string or bytes: a tenth of its size, rounded up.
pub fn traversal(size: u64) -> u64 {
    (size as f64 * 0.1).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse() {
        let o = Overload::special("starts_with_string", "string.(string) -> bool");
        assert!(o.receiver);
        assert_eq!(o.params, vec![Type::String, Type::String]);
        let o = Overload::special("index_map", "(map(K, V), K) -> V");
        assert!(!o.receiver);
        assert_eq!(o.params.len(), 2);
        let o = Overload::special("optional_none", "() -> optional_type(T)");
        assert!(o.params.is_empty());
        let o = Overload::special("add_list", "(list(A), list(A)) -> list(A)");
        assert_eq!(
            o.params,
            vec![Type::parse("list(A)"), Type::parse("list(A)")]
        );
        let o = Overload::special("list_size", "list(A).() -> int");
        assert!(o.receiver);
        assert_eq!(o.params.len(), 1);
    }
}
