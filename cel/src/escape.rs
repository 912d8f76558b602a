//! Property names as CEL identifiers, as kube escapes them (`k8s.io/apiserver/pkg/cel`,
//! `Escape` and `Unescape`): a rule reaches `spec["max-size"]` as `self.spec.max__dash__size`.
//!
//! A CEL identifier is `[a-zA-Z_][a-zA-Z0-9_]*` and must not be one of the language's
//! reserved words. A name that is a reserved word is wrapped (`namespace` is
//! `__namespace__`); inside a name, `__` becomes `__underscores__`, `.` `__dot__`, `-`
//! `__dash__` and `/` `__slash__`. A name that starts with a digit, is empty, or holds any
//! other character cannot be reached from a rule (kube leaves such properties out of the
//! rule's view).

/// The words CEL's grammar reserves: no identifier may be one of them.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The escape of each character (or `__`) that needs one.
const ESCAPES: &[(&str, &str)] = &[
    ("__", "__underscores__"),
    (".", "__dot__"),
    ("-", "__dash__"),
    ("/", "__slash__"),
];

/// Whether `c` may stand in an identifier as it is.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `name` is a CEL identifier as it is (`[a-zA-Z_][a-zA-Z0-9_]*`, no reserved
/// word): what an admission policy's variables may be named.
pub fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(plain)
        && !is_reserved(name)
}

/// Whether `name` is one of CEL's reserved words, which escaping wraps in `__`.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

/// The CEL identifier of the property `name`, or `None` when it has none (empty, a leading
/// digit, or a character other than letters, digits, `_`, `.`, `-` and `/`).
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut escaped = String::with_capacity(name.len());
    let mut rest = name;
    // Left to right, `__` before a single character, as kube's expanding pattern matches.
    while let Some(c) = rest.chars().next() {
        if let Some((from, to)) = (ESCAPES.iter()).find(|(from, _)| rest.starts_with(from)) {
            escaped.push_str(to);
            rest = &rest[from.len()..];
        } else if plain(c) {
            escaped.push(c);
            rest = &rest[c.len_utf8()..];
        } else {
            return None;
        }
    }
    Some(escaped)
}

/// The property name of the CEL identifier `escaped`, or `None` when it holds an escape
/// sequence kube does not make (`__illegal__`), or a reserved word's escape among other
/// characters (`__int__extra`).
pub fn unescape(escaped: &str) -> Option<String> {
    let mut name = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while !rest.is_empty() {
        if let Some(length) = sequence(rest) {
            let contents = &rest[2..length - 2];
            let unescaped = match (ESCAPES.iter()).find(|(_, to)| to[2..to.len() - 2] == *contents)
            {
                Some((from, _)) => *from,
                // A reserved word's escape stands alone.
                None if RESERVED.contains(&contents) && length == escaped.len() => contents,
                None => return None,
            };
            name.push_str(unescaped);
            rest = &rest[length..];
        } else {
            let c = rest.chars().next()?;
            name.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(name)
}

/// The length of the escape sequence `rest` starts with (`__`, one or more characters other
/// than `_`, `__`), if it starts with one.
fn sequence(rest: &str) -> Option<usize> {
    let inner = rest.strip_prefix("__")?;
    let contents = inner.len() - inner.trim_start_matches(|c| c != '_').len();
    (contents > 0 && inner[contents..].starts_with("__")).then_some(contents + 4)
}
