//! kube's quantity library: `quantity()` and `isQuantity()` read a string as a
//! `resource.Quantity` (`kubernetes.Quantity`), which then compares (`isLessThan()`,
//! `isGreaterThan()`, `compareTo()`, `==` by value), does sums (`add()`, `sub()`, of
//! quantities or integers) and converts (`asInteger()`, `isInteger()`,
//! `asApproximateFloat()`, `sign()`).

use std::any::Any;
use std::cmp::Ordering;
use std::sync::Arc;

use kapi_core::quantity::{Format, Quantity};

use super::{equal_as, opaque};
use crate::library::{Env, Error, Overload as O, Result, int, string};
use crate::value::{Opaque, Value};

/// The CEL type name of quantities.
pub const TYPE: &str = "kubernetes.Quantity";

/// A `kubernetes.Quantity` value.
#[derive(Clone, Debug)]
pub struct QuantityValue(pub Quantity);

impl Opaque for QuantityValue {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    /// Equal in value (`200M == 0.2G`).
    fn equals(&self, other: &dyn Opaque) -> bool {
        equal_as(self, other, |a, b| a.0 == b.0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A quantity as a CEL value.
fn value(q: Quantity) -> Value {
    Value::Opaque(Arc::new(QuantityValue(q)))
}

/// `args[i]`'s quantity.
fn arg(args: &[Value], i: usize) -> Result<&Quantity> {
    opaque::<QuantityValue>(args, i).map(|q| &q.0)
}

/// Adds the quantity library to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "quantity",
        [O::new(
            "string_to_quantity",
            "(string) -> kubernetes.Quantity",
            |a| {
                Quantity::parse(string(a, 0)?)
                    .map(value)
                    .map_err(|e| Error::new(e.to_string()))
            },
        )],
    );
    env.add(
        "isQuantity",
        [O::new("is_quantity_string", "(string) -> bool", |a| {
            Ok(Value::Bool(Quantity::parse(string(a, 0)?).is_ok()))
        })],
    );
    // A global function in kube (`sign(q)`), unlike the other accessors.
    env.add(
        "sign",
        [O::new(
            "quantity_sign",
            "(kubernetes.Quantity) -> int",
            |a| Ok(Value::Int(arg(a, 0)?.sign().into())),
        )],
    );
    env.add(
        "isGreaterThan",
        [O::new(
            "quantity_is_greater_than",
            "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
            |a| Ok(Value::Bool(arg(a, 0)?.cmp(arg(a, 1)?) == Ordering::Greater)),
        )],
    );
    env.add(
        "isLessThan",
        [O::new(
            "quantity_is_less_than",
            "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
            |a| Ok(Value::Bool(arg(a, 0)?.cmp(arg(a, 1)?) == Ordering::Less)),
        )],
    );
    env.add(
        "compareTo",
        [O::new(
            "quantity_compare_to",
            "kubernetes.Quantity.(kubernetes.Quantity) -> int",
            |a| Ok(Value::Int(arg(a, 0)?.cmp(arg(a, 1)?) as i64)),
        )],
    );
    env.add(
        "asApproximateFloat",
        [O::new(
            "quantity_get_float",
            "kubernetes.Quantity.() -> double",
            |a| Ok(Value::Double(arg(a, 0)?.as_approximate_f64())),
        )],
    );
    env.add(
        "asInteger",
        [O::new(
            "quantity_get_int",
            "kubernetes.Quantity.() -> int",
            |a| {
                arg(a, 0)?
                    .as_i64()
                    .map(Value::Int)
                    .ok_or_else(|| Error::new("cannot convert value to integer"))
            },
        )],
    );
    env.add(
        "isInteger",
        [O::new(
            "quantity_is_integer",
            "kubernetes.Quantity.() -> bool",
            |a| Ok(Value::Bool(arg(a, 0)?.as_i64().is_some())),
        )],
    );
    env.add(
        "add",
        [
            O::new(
                "quantity_add",
                "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
                |a| sum(arg(a, 0)?, arg(a, 1)?, Quantity::add),
            ),
            O::new(
                "quantity_add_int",
                "kubernetes.Quantity.(int) -> kubernetes.Quantity",
                |a| sum(arg(a, 0)?, &integer(int(a, 1)?), Quantity::add),
            ),
        ],
    );
    env.add(
        "sub",
        [
            O::new(
                "quantity_sub",
                "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
                |a| sum(arg(a, 0)?, arg(a, 1)?, Quantity::sub),
            ),
            O::new(
                "quantity_sub_int",
                "kubernetes.Quantity.(int) -> kubernetes.Quantity",
                |a| sum(arg(a, 0)?, &integer(int(a, 1)?), Quantity::sub),
            ),
        ],
    );
}

/// An integer operand of `add()` / `sub()`, as kube makes it a quantity (decimal exponent
/// format).
fn integer(v: i64) -> Quantity {
    Quantity::new(v, Format::DecimalExponent)
}

/// `op` applied to a copy of `q` and `other`; the receiver's format is kept.
fn sum(q: &Quantity, other: &Quantity, op: fn(&mut Quantity, &Quantity)) -> Result {
    let mut result = q.clone();
    op(&mut result, other);
    Ok(value(result))
}
