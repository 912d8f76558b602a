//! Field selectors as kube parses and matches them (`k8s.io/apimachinery/pkg/fields`):
//! `f=v`, `f==v`, `f!=v`; commas are AND; `\,`, `\=` and `\\` escape in values.

/// One term of a field selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldTerm {
    /// The field label (`metadata.name`).
    pub field: String,
    /// The value, unescaped.
    pub value: String,
    /// `!=` rather than `=` / `==`.
    pub negated: bool,
}

/// A parsed field selector: every term must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The terms, sorted as kube sorts them.
    pub terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parses a selector; the error is kube's message (a 400 for the client).
    pub fn parse(selector: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(selector);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let Some((field, operator, value)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                ));
            };
            terms.push(FieldTerm {
                field: field.to_owned(),
                value: unescape_value(value)?,
                negated: operator == "!=",
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Selects everything.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Checks every field label with `supported`, as kube's field label conversion does:
    /// the first unsupported one is `field label not supported: <label>`.
    pub fn check_fields(&self, supported: impl Fn(&str) -> bool) -> Result<(), String> {
        match self.terms.iter().find(|t| !supported(&t.field)) {
            Some(term) => Err(format!("field label not supported: {}", term.field)),
            None => Ok(()),
        }
    }

    /// Whether the fields (looked up by label; a missing field is `""`) satisfy every term.
    pub fn matches(&self, field: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|term| {
            let value = field(&term.field).unwrap_or_default();
            (value == term.value) != term.negated
        })
    }
}

/// Splits on commas not escaped by a backslash (kept in the terms).
fn split_terms(selector: &str) -> Vec<String> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in selector.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                current.push(c);
            }
            '\\' => {
                escaped = true;
                current.push(c);
            }
            ',' => terms.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    terms.push(current);
    terms
}

/// The first operator splits the term (`!=`, then `==`, then `=` at each position).
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        for op in ["!=", "==", "="] {
            if term[i..].starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

fn unescape_value(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ));
                }
            }
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            // Go prints the rune with `%v`: its number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            _ => out.push(c),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}
