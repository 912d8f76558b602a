//! CEL's types, as the checker reasons about them: primitives, lists and maps of their
//! element types, the object types of a schema (named, with their fields), opaque types of
//! libraries (`optional_type(T)`, `kubernetes.Quantity`), type parameters of generic
//! overloads, and `dyn`. Printed as cel-go prints them in its errors.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::types::{DeclType, Kind};

/// A CEL type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// Any type, checked when evaluated.
    Dyn,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `list(T)`.
    List(Arc<Type>),
    /// `map(K, V)`.
    Map(Arc<Type>, Arc<Type>),
    /// An object of a schema.
    Object(Arc<ObjectType>),
    /// A library's type, with its parameters (`optional_type(T)`).
    Opaque(Arc<str>, Vec<Type>),
    /// `type(T)`: the type of a type.
    Type(Arc<Type>),
    /// A type parameter of a generic overload (`A` in `list(A)`).
    Param(Arc<str>),
    /// A type that failed to check: assignable to anything, so that one error is reported
    /// once.
    Error,
}

/// A schema object's type: its name and fields.
#[derive(Debug, PartialEq)]
pub struct ObjectType {
    /// Its name (kube's `selfType<N>.spec` style).
    pub name: String,
    /// Its fields by escaped name.
    pub fields: BTreeMap<String, Type>,
    /// The schema type it was made from, for cost estimates.
    pub decl: DeclType,
}

/// The optional type's name.
pub const OPTIONAL: &str = "optional_type";

impl Type {
    /// `list(t)`.
    pub fn list(t: Type) -> Type {
        Type::List(Arc::new(t))
    }

    /// `map(k, v)`.
    pub fn map(k: Type, v: Type) -> Type {
        Type::Map(Arc::new(k), Arc::new(v))
    }

    /// `optional_type(t)`.
    pub fn optional(t: Type) -> Type {
        Type::Opaque(OPTIONAL.into(), vec![t])
    }

    /// A library type without parameters.
    pub fn opaque(name: &str) -> Type {
        Type::Opaque(name.into(), Vec::new())
    }

    /// `type(t)`.
    pub fn of_type(t: Type) -> Type {
        Type::Type(Arc::new(t))
    }

    /// Whether this is `dyn` or an error.
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// Parses a type written as in overload signatures: `int`, `list(A)`, `map(K, V)`,
    /// `optional_type(T)`, `type(A)`, a single capital letter for a parameter, or a
    /// library type's name.
    pub fn parse(text: &str) -> Type {
        let text = text.trim();
        let (name, args) = match text.find('(') {
            Some(open) if text.ends_with(')') => {
                let inner = &text[open + 1..text.len() - 1];
                (&text[..open], split_top_level(inner))
            }
            _ => (text, Vec::new()),
        };
        let arg = |i: usize| Type::parse(args[i]);
        match name {
            "dyn" => Type::Dyn,
            "null_type" => Type::Null,
            "bool" => Type::Bool,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "string" => Type::String,
            "bytes" => Type::Bytes,
            "duration" | "google.protobuf.Duration" => Type::Duration,
            "timestamp" | "google.protobuf.Timestamp" => Type::Timestamp,
            "list" => Type::list(arg(0)),
            "map" => Type::map(arg(0), arg(1)),
            "type" => Type::of_type(arg(0)),
            _ if name.len() <= 2 && name.chars().all(|c| c.is_ascii_uppercase()) => {
                Type::Param(name.into())
            }
            _ => Type::Opaque(name.into(), args.iter().map(|a| Type::parse(a)).collect()),
        }
    }

    /// The CEL type of values of a schema type: objects get `name`, their fields
    /// `name.field`.
    pub fn of_decl(decl: &DeclType, name: &str) -> Type {
        match &decl.kind {
            Kind::Bool => Type::Bool,
            Kind::Int => Type::Int,
            Kind::Double => Type::Double,
            Kind::String => Type::String,
            Kind::Bytes => Type::Bytes,
            Kind::Duration => Type::Duration,
            Kind::Timestamp => Type::Timestamp,
            Kind::Dyn => Type::Dyn,
            Kind::List(item) => Type::list(Type::of_decl(item, &format!("{name}.@idx"))),
            Kind::Map(value) => {
                Type::map(Type::String, Type::of_decl(value, &format!("{name}.@elem")))
            }
            Kind::Object(fields) => Type::Object(Arc::new(ObjectType {
                name: name.to_owned(),
                fields: (fields.iter())
                    .map(|(field, f)| {
                        (
                            field.clone(),
                            Type::of_decl(&f.ty, &format!("{name}.{field}")),
                        )
                    })
                    .collect(),
                decl: decl.clone(),
            })),
        }
    }

    /// This type with the parameters bound in `subs` replaced, the unbound ones by `dyn`
    /// when `free_to_dyn`.
    pub fn substitute(&self, subs: &HashMap<Arc<str>, Type>, free_to_dyn: bool) -> Type {
        match self {
            Type::Param(name) => match subs.get(name) {
                Some(t) => t.substitute(subs, free_to_dyn),
                None if free_to_dyn => Type::Dyn,
                None => self.clone(),
            },
            Type::List(e) => Type::list(e.substitute(subs, free_to_dyn)),
            Type::Map(k, v) => Type::map(
                k.substitute(subs, free_to_dyn),
                v.substitute(subs, free_to_dyn),
            ),
            Type::Opaque(name, params) => Type::Opaque(
                name.clone(),
                params
                    .iter()
                    .map(|p| p.substitute(subs, free_to_dyn))
                    .collect(),
            ),
            Type::Type(t) => Type::of_type(t.substitute(subs, free_to_dyn)),
            _ => self.clone(),
        }
    }

    /// Whether a value of type `arg` can be passed where `self` is expected, binding
    /// type parameters in `subs` (cel-go's `isAssignable`). On failure `subs` may hold
    /// partial bindings: callers pass a copy.
    pub fn accepts(&self, arg: &Type, subs: &mut HashMap<Arc<str>, Type>) -> bool {
        match (self, arg) {
            (Type::Param(p), _) => match subs.get(p).cloned() {
                Some(bound) => {
                    if bound.accepts(arg, subs) {
                        true
                    } else if arg.accepts(&bound, subs) {
                        // A more general argument widens the binding (int then dyn).
                        subs.insert(p.clone(), arg.clone());
                        true
                    } else {
                        false
                    }
                }
                None => {
                    if let Type::Param(q) = arg
                        && q == p
                    {
                        return true;
                    }
                    subs.insert(p.clone(), arg.clone());
                    true
                }
            },
            (_, Type::Param(p)) => match subs.get(p).cloned() {
                Some(bound) => self.accepts(&bound, subs),
                None => {
                    subs.insert(p.clone(), self.clone());
                    true
                }
            },
            (Type::Dyn | Type::Error, _) | (_, Type::Dyn | Type::Error) => {
                // dyn stands for every type; a parameter nested in `self` binds to dyn.
                bind_params_to_dyn(self, subs);
                true
            }
            // null is a value of the nullable types: objects, wrappers, opaque types.
            (Type::Object(_) | Type::Opaque(..) | Type::Timestamp | Type::Duration, Type::Null) => {
                !matches!(self, Type::Opaque(name, _) if &**name == OPTIONAL)
            }
            (Type::List(a), Type::List(b)) => a.accepts(b, subs),
            (Type::Map(ak, av), Type::Map(bk, bv)) => ak.accepts(bk, subs) && av.accepts(bv, subs),
            // Types of types compare whatever they are of (`type(x) == null_type`).
            (Type::Type(_), Type::Type(_)) => true,
            (Type::Opaque(an, ap), Type::Opaque(bn, bp)) => {
                an == bn
                    && ap.len() == bp.len()
                    && ap.iter().zip(bp).all(|(a, b)| a.accepts(b, subs))
            }
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// The most specific type both `self` and `other` are: itself when equal, else `dyn`
    /// (how the checker joins list elements and overload results).
    pub fn join(&self, other: &Type) -> Type {
        if self == other {
            return self.clone();
        }
        match (self, other) {
            (Type::Error, t) | (t, Type::Error) => t.clone(),
            (Type::List(a), Type::List(b)) => Type::list(a.join(b)),
            (Type::Map(ak, av), Type::Map(bk, bv)) => Type::map(ak.join(bk), av.join(bv)),
            _ => Type::Dyn,
        }
    }
}

/// Binds every unbound parameter of `t` to `dyn`.
fn bind_params_to_dyn(t: &Type, subs: &mut HashMap<Arc<str>, Type>) {
    match t {
        Type::Param(p) => {
            subs.entry(p.clone()).or_insert(Type::Dyn);
        }
        Type::List(e) | Type::Type(e) => bind_params_to_dyn(e, subs),
        Type::Map(k, v) => {
            bind_params_to_dyn(k, subs);
            bind_params_to_dyn(v, subs);
        }
        Type::Opaque(_, params) => params.iter().for_each(|p| bind_params_to_dyn(p, subs)),
        _ => {}
    }
}

/// `a, map(b, c), d` split at its top-level commas.
pub(crate) fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        parts.push(text[start..].trim());
    }
    parts
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            // cel-go prints the null type as `null` in its errors.
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Object(o) => f.write_str(&o.name),
            Type::Opaque(name, params) if params.is_empty() => f.write_str(name),
            Type::Opaque(name, params) => {
                write!(f, "{name}(")?;
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")
            }
            Type::Type(t) => write!(f, "type({t})"),
            Type::Param(p) => f.write_str(p),
            Type::Error => f.write_str("*error*"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse_and_print() {
        for text in [
            "int",
            "list(A)",
            "map(string, list(int))",
            "optional_type(A)",
            "type(dyn)",
        ] {
            assert_eq!(Type::parse(text).to_string(), text);
        }
        assert_eq!(
            Type::parse("kubernetes.Quantity"),
            Type::opaque("kubernetes.Quantity")
        );
    }

    #[test]
    fn parameters_bind_and_widen() {
        let mut subs = HashMap::new();
        let param = Type::parse("list(A)");
        assert!(param.accepts(&Type::list(Type::Int), &mut subs));
        assert!(Type::parse("A").accepts(&Type::Int, &mut subs));
        assert!(!Type::parse("A").accepts(&Type::String, &mut subs.clone()));
        assert!(Type::parse("A").accepts(&Type::Dyn, &mut subs));
        assert_eq!(subs[&Arc::<str>::from("A")], Type::Int);
    }
}
