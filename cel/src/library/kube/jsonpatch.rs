//! kube's JSON patch library, which mutating admission policies compile with:
//! `jsonpatch.escapeKey(k)` escapes a map key for a JSON pointer (RFC 6901: `~` as `~0`,
//! `/` as `~1`), so that `"/metadata/labels/" + jsonpatch.escapeKey("example.com/x")`
//! names one label.

use std::sync::Arc;

use crate::library::{Env, Overload as O, string};
use crate::value::Value;

/// Adds the library to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "jsonpatch.escapeKey",
        [O::new(
            "string_jsonpatch_escapeKey_string",
            "(string) -> string",
            |a| Ok(Value::String(Arc::from(escape_key(string(a, 0)?)))),
        )],
    );
}

/// `key` as one JSON pointer token.
pub fn escape_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::escape_key;

    #[test]
    fn tildes_then_slashes_are_escaped() {
        assert_eq!(escape_key("example.com/a~b"), "example.com~1a~0b");
        assert_eq!(escape_key("~1"), "~01");
        assert_eq!(escape_key("plain"), "plain");
    }
}
