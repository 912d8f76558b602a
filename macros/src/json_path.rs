//! The simple JSON paths of printer columns, the scale subresource and selectable fields
//! (`.spec.container.image`, `.spec.ports[0].name`), and the Rust fields they name.
//!
//! Kubernetes accepts only this subset of JSONPath in those places (no wildcards or
//! quoting; printer columns also take equality filters on lists, `[?(@.type=="Ready")]`,
//! as CRDs' columns of conditions do), which is what lets the derive map a path to Rust
//! field accesses and have rustc check that every path names a field.

use heck::ToSnakeCase;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// `.image`: a JSON field name, as written (camelCase).
    Field(String),
    /// `[0]`: an index into an array.
    Index(usize),
    /// `[?(@.type=="Ready")]`: the first item of an array whose value at the path (itself
    /// simple) equals a literal.
    Filter(Vec<Segment>),
}

/// Parses `.seg.seg[0].seg`: a `.` before every field, fields matching
/// `[A-Za-z_][A-Za-z0-9_]*`, each optionally followed by `[N]` indexes.
///
/// The error is a sentence explaining the first problem, for the user.
pub(crate) fn parse(path: &str) -> Result<Vec<Segment>, String> {
    if path.is_empty() {
        return Err("the JSON path is empty".to_owned());
    }
    if !path.starts_with('.') {
        return Err(format!("the JSON path `{path}` must start with `.`"));
    }
    let mut segments = Vec::new();
    let mut rest = path;
    while let Some(after_dot) = rest.strip_prefix('.') {
        let len = after_dot
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after_dot.len());
        let name = &after_dot[..len];
        if name.is_empty() {
            return Err(match after_dot.chars().next() {
                None => format!("the JSON path `{path}` ends with `.`"),
                Some(c) => {
                    format!("the JSON path `{path}` has `{c}` where a field name should follow `.`")
                }
            });
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "the field name `{name}` in `{path}` starts with a digit"
            ));
        }
        segments.push(Segment::Field(name.to_owned()));
        rest = &after_dot[len..];
        while let Some(after_bracket) = rest.strip_prefix('[') {
            if let Some(condition) = after_bracket.strip_prefix("?(") {
                let Some(close) = condition.find(")]") else {
                    return Err(format!("the JSON path `{path}` has an unclosed `[?(`"));
                };
                segments.push(filter(&condition[..close], path)?);
                rest = &condition[close + 2..];
                continue;
            }
            let Some(close) = after_bracket.find(']') else {
                return Err(format!("the JSON path `{path}` has an unclosed `[`"));
            };
            let index = &after_bracket[..close];
            if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "the index `[{index}]` in `{path}` is not a number; only `[N]` indexes are supported"
                ));
            }
            let index = index
                .parse()
                .map_err(|_| format!("the index `[{index}]` in `{path}` is too large"))?;
            segments.push(Segment::Index(index));
            rest = &after_bracket[close + 1..];
        }
    }
    match rest.chars().next() {
        None => Ok(segments),
        Some(c) => Err(format!(
            "the JSON path `{path}` has `{c}` after a field name: field names match \
             `[A-Za-z_][A-Za-z0-9_]*`, and only `.field` and `[N]` may follow one"
        )),
    }
}

/// A filter's condition: `@.field.field==literal`, the literal quoted (`"Ready"`,
/// `'Ready'`), a number or a boolean.
fn filter(condition: &str, path: &str) -> Result<Segment, String> {
    let wrong =
        || format!("the filter `[?({condition})]` in `{path}` is not `[?(@.field==\"value\")]`");
    let (field, literal) = condition.split_once("==").ok_or_else(wrong)?;
    let field = field.trim().strip_prefix('@').ok_or_else(wrong)?;
    let literal = literal.trim();
    let quoted = |q: char| literal.len() >= 2 && literal.starts_with(q) && literal.ends_with(q);
    let plain = literal == "true" || literal == "false" || literal.parse::<f64>().is_ok();
    if !(quoted('"') || quoted('\'') || plain) {
        return Err(wrong());
    }
    Ok(Segment::Filter(parse(field).map_err(|_| wrong())?))
}

/// Rust keywords, which must be written as raw identifiers (`r#type`) to name a field.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers, so no field can have the name.
const NOT_RAW: &[&str] = &["crate", "self", "super", "_"];

/// The Rust field name a JSON field name stands for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RustField {
    /// `ready_replicas`, `type`.
    pub name: String,
    /// The name is a keyword and must be written `r#type`.
    pub raw: bool,
}

/// `readyReplicas` -> `ready_replicas`: the inverse of serde's `rename_all = "camelCase"`,
/// the convention of Kubernetes types. Leading underscores are kept as written.
pub(crate) fn rust_field(json_name: &str) -> Result<RustField, String> {
    let body = json_name.trim_start_matches('_');
    let name = format!(
        "{}{}",
        &json_name[..json_name.len() - body.len()],
        body.to_snake_case()
    );
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid || NOT_RAW.contains(&name.as_str()) {
        return Err(format!(
            "no Rust field can stand for the JSON field `{json_name}`"
        ));
    }
    let raw = KEYWORDS.contains(&name.as_str());
    Ok(RustField { name, raw })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(segments: &[Segment]) -> String {
        (segments.iter())
            .map(|s| match s {
                Segment::Field(f) => format!(".{f}"),
                Segment::Index(i) => format!("[{i}]"),
                Segment::Filter(path) => format!("[?(@{})]", show(path)),
            })
            .collect()
    }

    fn check(path: &str, expected: Result<&str, &str>) {
        let actual = parse(path).map(|segments| show(&segments));
        match (actual, expected) {
            (Ok(actual), Ok(expected)) => assert_eq!(actual, expected, "{path}"),
            (Err(actual), Err(expected)) => assert!(actual.contains(expected), "{path}: {actual}"),
            (actual, expected) => panic!("{path}: expected {expected:?}, got {actual:?}"),
        }
    }

    #[test]
    fn paths() {
        check(".spec.replicas", Ok(".spec.replicas"));
        check(".spec.container.image", Ok(".spec.container.image"));
        check(
            ".spec.ports[0].containerPort",
            Ok(".spec.ports[0].containerPort"),
        );
        check(".matrix[1][2]", Ok(".matrix[1][2]"));
        check("._private", Ok("._private"));
        check("", Err("empty"));
        check("spec.replicas", Err("must start with `.`"));
        check(".spec.", Err("ends with `.`"));
        check(".spec..replicas", Err("has `.` where a field name"));
        check(".spec.container-image", Err("has `-` after a field name"));
        check(
            ".spec.ports[x]",
            Err("`[x]` in `.spec.ports[x]` is not a number"),
        );
        check(".spec.ports[]", Err("`[]`"));
        check(".spec.ports[0", Err("unclosed `[`"));
        check(".spec.ports[99999999999999999999999]", Err("too large"));
        check(".spec.1st", Err("starts with a digit"));
        check(".spec[*]", Err("`[*]`"));
        check("..spec", Err("has `.` where"));
        check(".spec.ü", Err("has `ü` where"));
        check(
            ".status.conditions[?(@.type==\"Ready\")].status",
            Ok(".status.conditions[?(@.type)].status"),
        );
        check(".a[?(@.b.c=='x')]", Ok(".a[?(@.b.c)]"));
        check(".a[?(@.b==1)]", Ok(".a[?(@.b)]"));
        check(".a[?(@.b==x)]", Err("is not `[?(@.field==\"value\")]`"));
        check(".a[?(@.b)]", Err("is not `[?(@.field==\"value\")]`"));
        check(".a[?(@.b==\"x\"", Err("unclosed `[?(`"));
    }

    #[test]
    fn rust_fields() {
        let field = |name: &str, raw| {
            Ok(RustField {
                name: name.to_owned(),
                raw,
            })
        };
        assert_eq!(rust_field("image"), field("image", false));
        assert_eq!(rust_field("readyReplicas"), field("ready_replicas", false));
        assert_eq!(rust_field("maxWebApps"), field("max_web_apps", false));
        assert_eq!(
            rust_field("creationTimestamp"),
            field("creation_timestamp", false)
        );
        assert_eq!(rust_field("type"), field("type", true));
        assert_eq!(rust_field("_hidden"), field("_hidden", false));
        assert!(rust_field("self").is_err());
        assert!(rust_field("_").is_err());
    }
}
