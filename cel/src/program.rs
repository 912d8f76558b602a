//! Compiling an expression: parse, check, plan; and the errors kube reports for each step.

use crate::checker::{Checked, check};
use crate::environment::Feature;
use crate::interpreter::Program;
use crate::library::Env;
use crate::syntax::{Expr, ExprKind, Issues, Literal, parse_with};

/// A compiled expression.
#[derive(Debug)]
pub struct Compiled {
    /// The checked expression (types, references).
    pub checked: Checked,
    /// The planned program.
    pub program: Program,
}

/// Parses, checks and plans `source` in `env`.
pub fn compile(source: &str, env: &Env) -> Result<Compiled, Issues> {
    let checked = check(
        parse_with(source, env.has(Feature::TwoVarComprehensions))?,
        env,
    )?;
    let program = Program::plan(&checked);
    Ok(Compiled { checked, program })
}

/// Why cel-go would fail to make a program of `checked` though it type-checks: a constant
/// pattern of kube's `find()` or `findAll()` that does not compile (kube precompiles them
/// when it makes the program; `matches()`'s are refused earlier, by the literal checks).
pub fn instantiation_error(checked: &Checked) -> Option<crate::library::Error> {
    fn walk(e: &Expr) -> Option<crate::library::Error> {
        match &e.kind {
            ExprKind::Call {
                function,
                target,
                args,
            } => {
                if matches!(function.as_str(), "find" | "findAll")
                    && target.is_some()
                    && let Some(ExprKind::Literal(Literal::String(pattern))) =
                        args.first().map(|a| &a.kind)
                    && let Err(error) = crate::library::regex::compile(pattern)
                {
                    return Some(error);
                }
                (target.iter().map(|t| &**t)).chain(args).find_map(walk)
            }
            ExprKind::Select { operand, .. } => walk(operand),
            ExprKind::List { elements, .. } => elements.iter().find_map(walk),
            ExprKind::Map { entries } => entries
                .iter()
                .find_map(|(k, v, _)| walk(k).or_else(|| walk(v))),
            ExprKind::Struct { fields, .. } => fields.iter().find_map(|(_, v, _)| walk(v)),
            ExprKind::Comprehension(c) => [&c.range, &c.init, &c.cond, &c.step, &c.result]
                .into_iter()
                .find_map(walk),
            _ => None,
        }
    }
    walk(&checked.ast.expr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::{KUBERNETES, stored_expressions};
    use crate::interpreter::Failure;
    use crate::ty::Type;
    use crate::value::Value;

    fn run(source: &str, this: Value) -> (Result<Value, Failure>, u64) {
        let mut env = Env::new(&stored_expressions(KUBERNETES));
        env.variable("self", Type::list(Type::Int));
        let compiled = compile(source, &env).unwrap_or_else(|e| panic!("{source}: {e}"));
        compiled.program.eval(&[("self", this)], u64::MAX)
    }

    fn ints(items: &[i64]) -> Value {
        Value::list(items.iter().map(|i| Value::Int(*i)).collect())
    }

    #[test]
    fn evaluates_with_cel_semantics() {
        let cases: &[(&str, Value)] = &[
            ("self.all(x, x > 0)", Value::Bool(true)),
            ("self.exists(x, x == 2)", Value::Bool(true)),
            ("self.exists_one(x, x > 1)", Value::Bool(false)),
            ("self.map(x, x * 2) == [2, 4, 6]", Value::Bool(true)),
            ("self.filter(x, x % 2 == 1).size()", Value::Int(2)),
            ("self[5] == 1 || true", Value::Bool(true)),
            ("self[?5].orValue(7)", Value::Int(7)),
            (
                "optional.of(self).optMap(l, l.size()).value()",
                Value::Int(3),
            ),
            ("'a-b-c'.split('-').join('+')", Value::string("a+b+c")),
            ("duration('1h') > duration('59m')", Value::Bool(true)),
            (
                "timestamp('2024-01-01T00:00:00Z').getFullYear()",
                Value::Int(2024),
            ),
            ("'abc'.matches('^a.c$')", Value::Bool(true)),
            (
                "'x1y22'.findAll('[0-9]+')",
                Value::list(vec![Value::string("1"), Value::string("22")]),
            ),
            (
                "self.sum() == 6 && self.isSorted() && self.max() == 3",
                Value::Bool(true),
            ),
            ("sets.contains(self, [1, 2])", Value::Bool(true)),
            ("1 < 1.5 && 2u > 1", Value::Bool(true)),
            ("string(1.0e6)", Value::string("1e+06")),
            ("type(self) == list", Value::Bool(true)),
            (
                "{'a': 1}.?a.orValue(0) + {'a': 1}.?b.orValue(0)",
                Value::Int(1),
            ),
        ];
        for (source, expected) in cases {
            let (result, _) = run(source, ints(&[1, 2, 3]));
            let value = result.unwrap_or_else(|e| panic!("{source}: {e:?}"));
            assert!(
                value.equals(expected),
                "{source}: {value:?} != {expected:?}"
            );
        }
    }

    #[test]
    fn errors_are_values_that_logic_absorbs() {
        assert_eq!(
            run("self[5] == 1", ints(&[1])).0,
            Err(Failure::Error(crate::library::Error::new(
                "index out of bounds: 5"
            )))
        );
        assert_eq!(
            run("self[5] == 1 || true", ints(&[1])).0,
            Ok(Value::Bool(true))
        );
        assert_eq!(
            run("false && self[5] == 1", ints(&[1])).0,
            Ok(Value::Bool(false))
        );
        assert!(
            run("self.all(x, 1 / (x - 1) > 0)", ints(&[1, 2]))
                .0
                .is_err()
        );
        assert_eq!(
            run("self.exists(x, 1 / (x - 1) > 0)", ints(&[1, 2])).0,
            Ok(Value::Bool(true))
        );
    }

    #[test]
    fn costs_are_counted_while_running() {
        // self (1) + each of 3 iterations: cond (2) and step (x: 1, > : 1, __result__: 1),
        // then the result (1).
        assert_eq!(
            run("self.all(x, x > 0)", ints(&[1, 2, 3])).1,
            1 + 3 * (2 + 3) + 1
        );
        let mut env = Env::new(&stored_expressions(KUBERNETES));
        env.variable("self", Type::list(Type::Int));
        let compiled = compile("self.all(x, x > 0)", &env).unwrap();
        let (result, cost) = compiled.program.eval(&[("self", ints(&[1; 1000]))], 100);
        assert_eq!(result, Err(Failure::CostLimitExceeded));
        assert_eq!(cost, 101);
    }
}
