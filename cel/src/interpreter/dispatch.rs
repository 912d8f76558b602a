//! Calls: the overload a call's arguments fit, and what the call costs (a library's own
//! tracker, kube's figures by function name, cel-go's default).

use crate::library::kube::cost::call_cost;
use crate::library::{Error, Overload};
use crate::ty::Type;
use crate::value::Value;

/// Whether `value` can be passed where `ty` is declared.
pub(super) fn fits(value: &Value, ty: &Type) -> bool {
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
pub(super) fn overload_for<'a>(overloads: &'a [Overload], args: &[Value]) -> Option<&'a Overload> {
    overloads.iter().find(|o| {
        o.params.len() == args.len() && o.params.iter().zip(args).all(|(t, v)| fits(v, t))
    })
}

/// Calls `overload` (the one the arguments fit, if any).
pub(super) fn call(overload: Option<&Overload>, args: &[Value]) -> Result<Value, Error> {
    match overload.and_then(|o| o.implementation) {
        Some(implementation) => implementation(args),
        None => Err(Error::new("no such overload")),
    }
}

/// Calls the first overload whose parameters fit the arguments.
pub(super) fn dispatch(overloads: &[Overload], args: &[Value]) -> Result<Value, Error> {
    call(overload_for(overloads, args), args)
}

/// The runtime cost of a call of `function` by `overload`: a cel-go library's own tracker
/// first, then kube's figure by function name, then cel-go's default.
pub(super) fn call_cost_of(
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
