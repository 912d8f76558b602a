//! cel-go's strings extension (`ext.Strings`), versions 0 and 2 as kube enables them:
//! `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`,
//! `substring`, `trim`, `join`, and from version 1 `strings.quote` and `format`. Indices
//! count characters (code points), as cel-go's do.

use super::{Env, Error, Overload as O, Result, int, list, string};
use crate::value::Value;

/// Adds the strings extension at `version` to `env`.
pub fn install(env: &mut Env, version: u32) {
    env.add(
        "charAt",
        [O::new(
            "string_char_at_int",
            "string.(int) -> string",
            |a| {
                let (s, i) = (chars(a)?, int(a, 1)?);
                match usize::try_from(i) {
                    Ok(i) if i < s.len() => Ok(Value::string(s[i].to_string())),
                    Ok(i) if i == s.len() => Ok(Value::string("")),
                    _ => Err(Error::new(format!("index out of range: {i}"))),
                }
            },
        )],
    );
    env.add(
        "indexOf",
        [
            O::new("string_index_of_string", "string.(string) -> int", |a| {
                index_of(a, false)
            }),
            O::new(
                "string_index_of_string_int",
                "string.(string, int) -> int",
                |a| index_of(a, false),
            ),
        ],
    );
    env.add(
        "lastIndexOf",
        [
            O::new(
                "string_last_index_of_string",
                "string.(string) -> int",
                |a| index_of(a, true),
            ),
            O::new(
                "string_last_index_of_string_int",
                "string.(string, int) -> int",
                |a| index_of(a, true),
            ),
        ],
    );
    env.add(
        "lowerAscii",
        [O::new("string_lower_ascii", "string.() -> string", |a| {
            Ok(Value::string(string(a, 0)?.to_ascii_lowercase()))
        })],
    );
    env.add(
        "upperAscii",
        [O::new("string_upper_ascii", "string.() -> string", |a| {
            Ok(Value::string(string(a, 0)?.to_ascii_uppercase()))
        })],
    );
    env.add(
        "replace",
        [
            O::new(
                "string_replace_string_string",
                "string.(string, string) -> string",
                replace,
            ),
            O::new(
                "string_replace_string_string_int",
                "string.(string, string, int) -> string",
                replace,
            ),
        ],
    );
    env.add(
        "split",
        [
            O::new(
                "string_split_string",
                "string.(string) -> list(string)",
                split,
            ),
            O::new(
                "string_split_string_int",
                "string.(string, int) -> list(string)",
                split,
            ),
        ],
    );
    env.add(
        "substring",
        [
            O::new("string_substring_int", "string.(int) -> string", substring),
            O::new(
                "string_substring_int_int",
                "string.(int, int) -> string",
                substring,
            ),
        ],
    );
    env.add(
        "trim",
        [O::new("string_trim", "string.() -> string", |a| {
            Ok(Value::string(string(a, 0)?.trim()))
        })],
    );
    env.add(
        "join",
        [
            O::new("list_join", "list(string).() -> string", join),
            O::new("list_join_string", "list(string).(string) -> string", join),
        ],
    );
    if version >= 1 {
        env.add(
            "strings.quote",
            [O::new("strings_quote", "(string) -> string", |a| {
                Ok(Value::string(quote(string(a, 0)?)))
            })],
        );
        env.add(
            "format",
            [O::new(
                "string_format",
                "string.(list(dyn)) -> string",
                format,
            )],
        );
    }
}

fn chars(a: &[Value]) -> Result<Vec<char>> {
    Ok(string(a, 0)?.chars().collect())
}

/// `indexOf` / `lastIndexOf`, with an optional start (or end) character offset.
fn index_of(a: &[Value], last: bool) -> Result {
    let s = chars(a)?;
    let needle: Vec<char> = string(a, 1)?.chars().collect();
    let start = match a.get(2) {
        Some(_) => int(a, 2)?,
        None if last => s.len() as i64,
        None => 0,
    };
    if start < 0 || start as usize > s.len() {
        return Err(Error::new(format!("index out of range: {start}")));
    }
    let start = start as usize;
    let found = if last {
        let end = (start + needle.len()).min(s.len());
        (0..=end.saturating_sub(needle.len()))
            .rev()
            .find(|&i| s[i..].starts_with(&needle) && i <= start)
    } else {
        (start..=s.len().saturating_sub(needle.len())).find(|&i| s[i..].starts_with(&needle))
    };
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn replace(a: &[Value]) -> Result {
    let (s, from, to) = (string(a, 0)?, string(a, 1)?, string(a, 2)?);
    let limit = if a.len() > 3 { int(a, 3)? } else { -1 };
    Ok(Value::string(match usize::try_from(limit) {
        Ok(n) => s.replacen(&**from, to, n),
        Err(_) => s.replace(&**from, to),
    }))
}

fn split(a: &[Value]) -> Result {
    let (s, sep) = (string(a, 0)?, string(a, 1)?);
    let limit = if a.len() > 2 { int(a, 2)? } else { -1 };
    let parts: Vec<Value> = match limit {
        0 => Vec::new(),
        n if n < 0 && sep.is_empty() => s.chars().map(|c| Value::string(c.to_string())).collect(),
        n if n < 0 => s.split(&**sep).map(Value::string).collect(),
        n if sep.is_empty() => {
            let chars: Vec<char> = s.chars().collect();
            let n = (n as usize).min(chars.len());
            let mut parts: Vec<Value> = chars[..n.saturating_sub(1)]
                .iter()
                .map(|c| Value::string(c.to_string()))
                .collect();
            if n > 0 {
                parts.push(Value::string(chars[n - 1..].iter().collect::<String>()));
            }
            parts
        }
        n => s.splitn(n as usize, &**sep).map(Value::string).collect(),
    };
    Ok(Value::list(parts))
}

fn substring(a: &[Value]) -> Result {
    let s = chars(a)?;
    let start = int(a, 1)?;
    let end = if a.len() > 2 {
        int(a, 2)?
    } else {
        s.len() as i64
    };
    if start < 0 || start as usize > s.len() {
        return Err(Error::new(format!("index out of range: {start}")));
    }
    if end < 0 || end as usize > s.len() {
        return Err(Error::new(format!("index out of range: {end}")));
    }
    if start > end {
        return Err(Error::new(format!(
            "invalid substring range. start: {start}, end: {end}"
        )));
    }
    Ok(Value::string(
        s[start as usize..end as usize].iter().collect::<String>(),
    ))
}

fn join(a: &[Value]) -> Result {
    let sep = if a.len() > 1 {
        string(a, 1)?.to_string()
    } else {
        String::new()
    };
    let mut parts = Vec::new();
    for item in list(a, 0)? {
        match item {
            Value::String(s) => parts.push(s.to_string()),
            other => {
                return Err(Error::new(format!(
                    "join: invalid input: {}",
                    other.type_name()
                )));
            }
        }
    }
    Ok(Value::string(parts.join(&sep)))
}

/// `strings.quote`: a double-quoted CEL string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `format`: `%s`, `%d`, `%f` (with a precision), `%e`, `%x`, `%X`, `%o`, `%b`, `%%`.
fn format(a: &[Value]) -> Result {
    let template = string(a, 0)?;
    let args = list(a, 1)?;
    let mut out = String::new();
    let mut next = 0;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut precision = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = digits.parse::<usize>().ok();
        }
        let Some(verb) = chars.next() else {
            return Err(Error::new("unexpected end of format string"));
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let arg = args
            .get(next)
            .ok_or_else(|| Error::new(format!("index {next} out of range")))?;
        next += 1;
        let text = match (verb, arg) {
            ('s', v) => v.to_string(),
            ('d', Value::Int(_) | Value::Uint(_)) => arg.to_string(),
            ('f' | 'e', v) if !number(v)?.is_finite() => non_finite(number(v)?),
            ('f', v) => format!("{:.*}", precision.unwrap_or(6), number(v)?),
            ('e', v) => {
                let s = format!("{:.*e}", precision.unwrap_or(6), number(v)?);
                match s.split_once('e').map(|(m, e)| (m, e.parse::<i32>())) {
                    Some((m, Ok(e))) => {
                        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
                    }
                    _ => s,
                }
            }
            ('x', Value::Int(i)) => format!("{i:x}"),
            ('x', Value::Uint(u)) => format!("{u:x}"),
            ('x', Value::String(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
            ('x', Value::Bytes(s)) => s.iter().map(|b| format!("{b:02x}")).collect(),
            ('X', Value::Bytes(s)) => s.iter().map(|b| format!("{b:02X}")).collect(),
            ('d', Value::Double(d)) if !d.is_finite() => non_finite(*d),
            ('X', Value::Int(i)) => format!("{i:X}"),
            ('X', Value::Uint(u)) => format!("{u:X}"),
            ('X', Value::String(s)) => s.bytes().map(|b| format!("{b:02X}")).collect(),
            ('o', Value::Int(i)) => format!("{i:o}"),
            ('o', Value::Uint(u)) => format!("{u:o}"),
            ('b', Value::Int(i)) => format!("{i:b}"),
            ('b', Value::Uint(u)) => format!("{u:b}"),
            ('b', Value::Bool(b)) => u8::from(*b).to_string(),
            (verb, v) => {
                return Err(Error::new(format!(
                    "error during formatting: unrecognized formatting clause \"{verb}\" for {}",
                    v.type_name()
                )));
            }
        };
        out.push_str(&text);
    }
    Ok(Value::string(out))
}

/// NaN and the infinities as cel-go's `format()` writes them.
fn non_finite(d: f64) -> String {
    match d {
        d if d.is_nan() => "NaN".into(),
        d if d > 0.0 => "Infinity".into(),
        _ => "-Infinity".into(),
    }
}

fn number(v: &Value) -> Result<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Uint(u) => Ok(*u as f64),
        Value::Double(d) => Ok(*d),
        other => Err(Error::new(format!(
            "error during formatting: expected a number, got {}",
            other.type_name()
        ))),
    }
}
