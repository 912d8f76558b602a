//! cel-go's sets extension (`ext.Sets`, kube from 1.29): `sets.contains`,
//! `sets.equivalent`, `sets.intersects` on lists, by CEL equality; each costs 1 plus the
//! product of the lists' sizes (twice that for `equivalent`), as cel-go's trackers count.

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
        .tracker(|a, _| 1 + a[0].size() * a[1].size())],
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
        .tracker(|a, _| 1 + 2 * a[0].size() * a[1].size())],
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
        .tracker(|a, _| 1 + a[0].size() * a[1].size())],
    );
}
