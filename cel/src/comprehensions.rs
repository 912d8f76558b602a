//! cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`, kube 1.32's stored
//! expressions): the macros `all(i, v, p)`, `exists(i, v, p)`, `existsOne(i, v, p)`
//! (and `exists_one`), `transformList(i, v, [filter,] f)`, `transformMap(k, v, [filter,]
//! f)`, `transformMapEntry(k, v, [filter,] e)`, expanded as cel-go v0.22 expands them, and
//! the `cel.@mapInsert` function the map transforms build their results with.

use std::sync::Arc;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};
use cel::parser::{Macro, MacroExprHelper, ParseError};

use crate::library::{Env, Error, Overload as O, no_such_overload};
use crate::value::{Key, Map, Value};

/// The accumulator's name, as the `cel` crate's own macros name it.
const ACCU: &str = "@result";

/// What a macro builds.
#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

/// The macros.
pub fn macros() -> Vec<Macro> {
    let mut all = Vec::new();
    for (name, kind) in [
        ("all", Kind::All),
        ("exists", Kind::Exists),
        ("existsOne", Kind::ExistsOne),
        ("exists_one", Kind::ExistsOne),
    ] {
        all.push(Macro::receiver(name, 3, move |h, t, a| {
            expand(h, t, a, kind)
        }));
    }
    for (name, kind) in [
        ("transformList", Kind::TransformList),
        ("transformMap", Kind::TransformMap),
        ("transformMapEntry", Kind::TransformMapEntry),
    ] {
        all.push(Macro::receiver(name, 3, move |h, t, a| {
            expand(h, t, a, kind)
        }));
        all.push(Macro::receiver(name, 4, move |h, t, a| {
            expand(h, t, a, kind)
        }));
    }
    all
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_owned()))
}

fn call(h: &mut MacroExprHelper<'_>, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: function.to_owned(),
        target: None,
        args,
    }))
}

fn expand(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    kind: Kind,
) -> Result<Option<IdedExpr>, ParseError> {
    let name = |e: &IdedExpr| match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        _ => None,
    };
    let Some(var1) = name(&args[0]) else {
        return Err(h.new_error(args[0].id, "argument must be a simple name"));
    };
    let Some(var2) = name(&args[1]) else {
        return Err(h.new_error(args[1].id, "argument must be a simple name"));
    };
    if var1 == var2 {
        return Err(h.new_error(args[1].id, format!("duplicate variable name: {var1}")));
    }
    for (i, var) in [&var1, &var2].into_iter().enumerate() {
        if var == ACCU || var == "__result__" {
            return Err(h.new_error(
                args[i].id,
                "iteration variable overwrites accumulator variable",
            ));
        }
    }
    let mut rest: Vec<IdedExpr> = args.drain(2..).collect();
    args.clear();
    let range = target.take().expect("a receiver macro");
    let bool_literal = |h: &mut MacroExprHelper<'_>, b: bool| {
        h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
    };
    let (init, cond, step, result) = match kind {
        Kind::All => {
            let init = bool_literal(h, true);
            let accu = ident(h, ACCU);
            let cond = call(h, "@not_strictly_false", vec![accu]);
            let accu = ident(h, ACCU);
            let step = call(h, "_&&_", vec![accu, rest.remove(0)]);
            (init, cond, step, ident(h, ACCU))
        }
        Kind::Exists => {
            let init = bool_literal(h, false);
            let accu = ident(h, ACCU);
            let not = call(h, "!_", vec![accu]);
            let cond = call(h, "@not_strictly_false", vec![not]);
            let accu = ident(h, ACCU);
            let step = call(h, "_||_", vec![accu, rest.remove(0)]);
            (init, cond, step, ident(h, ACCU))
        }
        Kind::ExistsOne => {
            let init = h.next_expr(Expr::Literal(LiteralValue::Int(0.into())));
            let cond = bool_literal(h, true);
            let accu = ident(h, ACCU);
            let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
            let plus = call(h, "_+_", vec![accu, one]);
            let accu = ident(h, ACCU);
            let step = call(h, "_?_:_", vec![rest.remove(0), plus, accu]);
            let accu = ident(h, ACCU);
            let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
            (init, cond, step, call(h, "_==_", vec![accu, one]))
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let transform = rest.pop().expect("a transform");
            let filter = rest.pop();
            let init = match kind {
                Kind::TransformList => h.next_expr(Expr::List(ListExpr::new(vec![]))),
                _ => h.next_expr(Expr::Map(MapExpr::default())),
            };
            let cond = bool_literal(h, true);
            let accu = ident(h, ACCU);
            let mut step = match kind {
                Kind::TransformList => {
                    let list = h.next_expr(Expr::List(ListExpr::new(vec![transform])));
                    call(h, "_+_", vec![accu, list])
                }
                Kind::TransformMap => {
                    let key = ident(h, &var1);
                    call(h, "cel.@mapInsert", vec![accu, key, transform])
                }
                _ => call(h, "cel.@mapInsert", vec![accu, transform]),
            };
            if let Some(filter) = filter {
                let accu = ident(h, ACCU);
                step = call(h, "_?_:_", vec![filter, step, accu]);
            }
            (init, cond, step, ident(h, ACCU))
        }
    };
    Ok(Some(h.next_expr(Expr::Comprehension(Box::new(
        ComprehensionExpr {
            iter_range: range,
            iter_var: var1,
            iter_var2: Some(var2),
            accu_var: ACCU.to_owned(),
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        },
    )))))
}

/// Adds `cel.@mapInsert` to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "cel.@mapInsert",
        [
            O::new(
                "@mapInsert_map_key_value",
                "(map(K, V), K, V) -> map(K, V)",
                |a| {
                    let Value::Map(m) = &a[0] else {
                        return Err(no_such_overload());
                    };
                    insert(m, [(a[1].clone(), a[2].clone())])
                },
            ),
            O::new(
                "@mapInsert_map_map",
                "(map(K, V), map(K, V)) -> map(K, V)",
                |a| {
                    let (Value::Map(m), Value::Map(u)) = (&a[0], &a[1]) else {
                        return Err(no_such_overload());
                    };
                    insert(m, u.entries.iter().map(|(k, v)| (k.to_value(), v.clone())))
                },
            ),
        ],
    );
}

/// `m` with `entries` added, none of whose keys it may have.
fn insert(m: &Map, entries: impl IntoIterator<Item = (Value, Value)>) -> Result<Value, Error> {
    let mut map = m.clone();
    for (k, v) in entries {
        let key = Key::of(&k)
            .ok_or_else(|| Error::new(format!("unsupported key type: {}", k.type_name())))?;
        if map.get(&k).is_some() {
            return Err(Error::new(format!("insert failed: key {k} already exists")));
        }
        map.entries.insert(key, v);
    }
    Ok(Value::Map(Arc::new(map)))
}
