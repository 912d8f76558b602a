//! Regular expressions, in linear time as RE2 runs them (the `regex` crate implements
//! RE2's syntax and guarantees), compiled once per pattern: patterns are cached, as rules
//! use the same few again and again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;

use super::{Error, Result};

/// How many compiled patterns the cache keeps before it starts over.
const CACHE_SIZE: usize = 256;
/// The largest compiled program a pattern may make (RE2's default budget is of the same
/// order): a huge pattern is an error, not a stall.
const SIZE_LIMIT: usize = 1 << 20;

/// `pattern` compiled, with Go's error text for a pattern that does not parse.
pub fn compile(pattern: &str) -> Result<Arc<Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(re) = cache.lock().expect("regex cache").get(pattern) {
        return Ok(re.clone());
    }
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| {
            Error::new(format!(
                "error parsing regexp: {}: `{pattern}`",
                describe(&e)
            ))
        })?;
    let re = Arc::new(re);
    let mut cache = cache.lock().expect("regex cache");
    if cache.len() >= CACHE_SIZE {
        cache.clear();
    }
    cache.insert(pattern.to_owned(), re.clone());
    Ok(re)
}

/// The cause of a pattern's error, in Go's `regexp/syntax` words where the two libraries
/// agree on the cause.
fn describe(error: &regex::Error) -> String {
    let cause = match error {
        regex::Error::Syntax(text) => (text.lines())
            .rev()
            .find_map(|l| l.strip_prefix("error: "))
            .unwrap_or(text)
            .to_owned(),
        regex::Error::CompiledTooBig(_) => return "expression too large".to_owned(),
        other => other.to_string(),
    };
    let go = [
        ("unopened group", "unexpected )"),
        ("unclosed group", "missing closing )"),
        ("unclosed character class", "missing closing ]"),
        (
            "repetition operator missing expression",
            "missing argument to repetition operator",
        ),
        ("unrecognized escape sequence", "invalid escape sequence"),
        (
            "invalid character class range",
            "invalid character class range",
        ),
        (
            "incomplete escape sequence",
            "trailing backslash at end of expression",
        ),
        (
            "repetition quantifier expects a valid decimal",
            "invalid repeat count",
        ),
    ];
    (go.iter())
        .find(|(rust, _)| cause.starts_with(rust))
        .map_or(cause.clone(), |(_, go)| (*go).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_patterns_are_errors() {
        assert!(
            compile("(")
                .unwrap_err()
                .0
                .starts_with("error parsing regexp: ")
        );
        assert!(compile("a{1000}{1000}").is_err());
        assert!(compile("^[a-z]+$").unwrap().is_match("abc"));
    }
}
