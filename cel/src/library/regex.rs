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
    if let Some(operators) = nested_repetition(pattern) {
        return Err(Error::new(format!(
            "error parsing regexp: invalid nested repetition operator: `{operators}`"
        )));
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

/// A repetition of a repetition (`a**`, `a+*`, `a{2}+`), which RE2 refuses and the
/// `regex` crate takes: the two operators. A `?` right after a repetition makes it lazy,
/// and is not one.
fn nested_repetition(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut in_class = false;
    let mut last_repetition: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                i += 2;
                last_repetition = None;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            _ if in_class => {}
            '*' | '+' | '?' | '{' => {
                let start = i;
                if c == '{' {
                    match chars[i..].iter().position(|&c| c == '}') {
                        Some(end)
                            if chars[i + 1..i + end]
                                .iter()
                                .all(|c| c.is_ascii_digit() || *c == ',') =>
                        {
                            i += end
                        }
                        _ => {
                            last_repetition = None;
                            i += 1;
                            continue;
                        }
                    }
                }
                if let Some(previous) = last_repetition {
                    return Some(chars[previous..=i].iter().collect());
                }
                // A lazy marker belongs to the repetition.
                if chars.get(i + 1) == Some(&'?') {
                    i += 1;
                }
                last_repetition = Some(start);
                i += 1;
                continue;
            }
            _ => {}
        }
        last_repetition = None;
        i += 1;
    }
    None
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
