//! kube's escaping cases (`k8s.io/apiserver/pkg/cel/escaping_test.go`: `TestEscaping`,
//! `TestUnescapeMalformed`, and `TestEscapingFuzz`'s round trip as a property), as data.

use kapi_cel::escape::{escape, unescape};
use proptest::prelude::*;

/// Property name, and its identifier (`None`: it has none).
const CASES: &[(&str, Option<&str>)] = &[
    // '.', '-', '/' and '__' are escaped: CEL identifiers are [a-zA-Z_][a-zA-Z0-9_]*.
    ("a.a", Some("a__dot__a")),
    ("a-a", Some("a__dash__a")),
    ("a__a", Some("a__underscores__a")),
    ("a.-/__a", Some("a__dot____dash____slash____underscores__a")),
    ("a._a", Some("a__dot___a")),
    ("a__.__a", Some("a__underscores____dot____underscores__a")),
    ("a___a", Some("a__underscores___a")),
    ("a____a", Some("a__underscores____underscores__a")),
    ("a__dot__a", Some("a__underscores__dot__underscores__a")),
    (
        "a__underscores__a",
        Some("a__underscores__underscores__underscores__a"),
    ),
    // The reserved words.
    ("true", Some("__true__")),
    ("false", Some("__false__")),
    ("null", Some("__null__")),
    ("in", Some("__in__")),
    ("as", Some("__as__")),
    ("break", Some("__break__")),
    ("const", Some("__const__")),
    ("continue", Some("__continue__")),
    ("else", Some("__else__")),
    ("for", Some("__for__")),
    ("function", Some("__function__")),
    ("if", Some("__if__")),
    ("import", Some("__import__")),
    ("let", Some("__let__")),
    ("loop", Some("__loop__")),
    ("package", Some("__package__")),
    ("namespace", Some("__namespace__")),
    ("return", Some("__return__")),
    ("var", Some("__var__")),
    ("void", Some("__void__")),
    ("while", Some("__while__")),
    // Not every name has an identifier.
    ("@", None),
    ("1up", None),
    ("👑", None),
    // Macro and function names live apart from identifiers: not escaped.
    ("has", Some("has")),
    ("all", Some("all")),
    ("exists", Some("exists")),
    ("exists_one", Some("exists_one")),
    ("filter", Some("filter")),
    ("size", Some("size")),
    ("contains", Some("contains")),
    ("startsWith", Some("startsWith")),
    ("endsWith", Some("endsWith")),
    ("matches", Some("matches")),
    ("duration", Some("duration")),
    ("timestamp", Some("timestamp")),
    ("getDate", Some("getDate")),
    ("getDayOfMonth", Some("getDayOfMonth")),
    ("getDayOfWeek", Some("getDayOfWeek")),
    ("getFullYear", Some("getFullYear")),
    ("getHours", Some("getHours")),
    ("getMilliseconds", Some("getMilliseconds")),
    ("getMinutes", Some("getMinutes")),
    ("getMonth", Some("getMonth")),
    ("getSeconds", Some("getSeconds")),
    // A single `_` is not escaped.
    ("_if", Some("_if")),
    ("_has", Some("_has")),
    ("_int", Some("_int")),
    ("_anything", Some("_anything")),
];

/// `[a-zA-Z_][a-zA-Z0-9_]*`.
fn identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[test]
fn names_escape_and_unescape_as_kube_escapes_them() {
    for (name, expected) in CASES {
        let escaped = escape(name);
        assert_eq!(escaped.as_deref(), *expected, "{name}");
        if let Some(escaped) = escaped {
            assert!(identifier(&escaped), "{name}: {escaped}");
            assert_eq!(unescape(&escaped).as_deref(), Some(*name), "{escaped}");
        }
    }
}

#[test]
fn malformed_escapes_do_not_unescape() {
    for escaped in ["__int__extra", "__illegal__"] {
        assert_eq!(unescape(escaped), None, "{escaped}");
    }
}

proptest! {
    /// What escapes is an identifier, and unescapes to the name.
    #[test]
    fn escaping_round_trips(name in "\\PC{1,24}|[a-z_./-]{1,24}") {
        if let Some(escaped) = escape(&name) {
            prop_assert!(identifier(&escaped), "{} -> {}", name, escaped);
            prop_assert_eq!(unescape(&escaped), Some(name));
        }
    }
}
