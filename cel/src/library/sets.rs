//! cel-go's sets extension (`ext.Sets`, kube from 1.29): `sets.contains`,
//! `sets.equivalent`, `sets.intersects` on lists, by CEL equality.

use super::{Env, Overload as O, list};
use crate::value::Value;

/// Adds the sets extension to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "sets.contains",
        [O::new(
            "list_sets_contains_list",
            "(list(T), list(T)) -> bool",
            |a| {
                let (x, y) = (list(a, 0)?, list(a, 1)?);
                Ok(Value::Bool(y.iter().all(|v| x.iter().any(|w| w.equals(v)))))
            },
        )
        .cost(product_cost)],
    );
    env.add(
        "sets.equivalent",
        [O::new(
            "list_sets_equivalent_list",
            "(list(T), list(T)) -> bool",
            |a| {
                let (x, y) = (list(a, 0)?, list(a, 1)?);
                let within =
                    |p: &[Value], q: &[Value]| p.iter().all(|v| q.iter().any(|w| w.equals(v)));
                Ok(Value::Bool(within(x, y) && within(y, x)))
            },
        )
        .cost(product_cost)],
    );
    env.add(
        "sets.intersects",
        [O::new(
            "list_sets_intersects_list",
            "(list(T), list(T)) -> bool",
            |a| {
                let (x, y) = (list(a, 0)?, list(a, 1)?);
                Ok(Value::Bool(y.iter().any(|v| x.iter().any(|w| w.equals(v)))))
            },
        )
        .cost(product_cost)],
    );
}

/// cel-go's runtime cost of a set function: the product of the lists' sizes (at least 1).
fn product_cost(a: &[Value], _: &Value) -> u64 {
    (a[0].size() * a[1].size()).max(1)
}
