//! kube's regex library: `find` and `findAll` on strings.

use crate::library::{Env, Overload as O, Result, int, regex::compile, string};
use crate::value::Value;

/// Adds `find` and `findAll` to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "find",
        [O::new(
            "string_find_string",
            "string.(string) -> string",
            |a| {
                let re = compile(string(a, 1)?)?;
                Ok(Value::string(
                    re.find(string(a, 0)?).map_or("", |m| m.as_str()),
                ))
            },
        )],
    );
    env.add(
        "findAll",
        [
            O::new(
                "string_find_all_string",
                "string.(string) -> list(string)",
                |a| find_all(a, -1),
            ),
            O::new(
                "string_find_all_string_int",
                "string.(string, int) -> list(string)",
                |a| find_all(a, int(a, 2)?),
            ),
        ],
    );
}

/// Up to `limit` matches (all when negative), as Go's `FindAllString`.
fn find_all(a: &[Value], limit: i64) -> Result {
    let re = compile(string(a, 1)?)?;
    let s = string(a, 0)?;
    let matches = re.find_iter(s).map(|m| Value::string(m.as_str()));
    Ok(Value::list(match usize::try_from(limit) {
        Ok(0) => Vec::new(),
        Ok(n) => matches.take(n).collect(),
        Err(_) => matches.collect(),
    }))
}
