//! Label and field selectors, parsed and matched as kube does
//! (`k8s.io/apimachinery/pkg/labels/selector.go`, `pkg/fields/selector.go`), with kube's
//! error messages: clients print them as the server sends them.
//!
//! - [`LabelSelector`]: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//!   `a>1`, `a<1`; commas are AND.
//! - [`FieldSelector`]: `f=v`, `f==v`, `f!=v`; commas are AND; `\,`, `\=` and `\\` escape
//!   in values.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::object::{meta, meta_str};
use super::scale::get_path;
use crate::api::{KindInfo, Scope};
use crate::error::{ApiError, FieldError, FieldErrorType};
use crate::validation as names;

/// The selectors of a list or watch of one kind: parsed, with the field labels checked
/// against what the kind supports (`metadata.name`, `metadata.namespace` and its
/// selectable fields, by their labels).
#[derive(Clone, Debug, Default)]
pub struct Selectors {
    /// The label selector.
    pub labels: LabelSelector,
    /// The field selector.
    pub fields: FieldSelector,
}

impl Selectors {
    /// Parses `labelSelector` and `fieldSelector`; failures are kube's 400s.
    pub fn parse(
        info: &KindInfo,
        labels: Option<&str>,
        fields: Option<&str>,
    ) -> Result<Selectors, ApiError> {
        let labels = LabelSelector::parse(labels.unwrap_or("")).map_err(ApiError::BadRequest)?;
        let fields = FieldSelector::parse(fields.unwrap_or("")).map_err(ApiError::BadRequest)?;
        fields
            .check_fields(|label| {
                label == "metadata.name"
                    || label == "metadata.namespace"
                    || (info.selectable_fields.iter()).any(|f| f.label == label)
            })
            .map_err(ApiError::BadRequest)?;
        Ok(Selectors { labels, fields })
    }

    /// Selects everything.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether the field selector needs [`matches_fields`](Selectors::matches_fields).
    pub fn selects_fields(&self) -> bool {
        !self.fields.is_empty()
    }

    /// Whether the labels of an object (in any version) match.
    pub fn matches_labels(&self, object: &Value) -> bool {
        let labels = meta(object).and_then(|m| m.get("labels")?.as_object());
        self.labels.matches(labels)
    }

    /// Whether the fields of an object match; selectable fields are paths on the hub, so
    /// `hub` is the object's hub JSON ([`KindEntry::hub_json`](crate::scheme::KindEntry::hub_json)).
    pub fn matches_fields(&self, info: &KindInfo, hub: &Value) -> bool {
        self.fields.matches(|label| match label {
            "metadata.name" => meta_str(hub, "name").map(str::to_owned),
            "metadata.namespace" if info.scope == Scope::Namespaced => {
                meta_str(hub, "namespace").map(str::to_owned)
            }
            "metadata.namespace" => None,
            _ => match get_path(hub, selectable_path(info, label)?)? {
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            },
        })
    }
}

/// The hub path a selectable field's label names.
fn selectable_path(info: &KindInfo, label: &str) -> Option<&'static str> {
    let field = info.selectable_fields.iter().find(|f| f.label == label)?;
    Some(field.path)
}

/// How a label requirement relates a key to its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key!=value`
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key>1`
    GreaterThan,
    /// `key<1`
    LessThan,
}

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values, sorted and without duplicates.
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .and_then(Value::as_str);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(has),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(value), [bound]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (value.parse::<i64>(), bound.parse::<i64>()) {
                    (Ok(v), Ok(b)) if self.operator == Operator::GreaterThan => v > b,
                    (Ok(v), Ok(b)) => v < b,
                    _ => false,
                }
            }
        }
    }
}

/// A parsed label selector: every requirement must hold (sorted by key, as kube keeps them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements.
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses a selector; the error is kube's message (a 400 for the client).
    pub fn parse(selector: &str) -> Result<LabelSelector, String> {
        let mut parser = Parser {
            items: lex(selector),
            position: 0,
        };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `labels` (an object's `metadata.labels`) satisfy every requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(literal: &str) -> Option<Token> {
    Some(match literal {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// kube's lexer: identifiers run to whitespace or a special symbol; special symbols are read
/// greedily while they form a token (`!=`, `==`).
fn lex(input: &str) -> Vec<(Token, String)> {
    let bytes = input.as_bytes();
    let mut items = Vec::new();
    let mut pos = 0;
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            items.push((Token::EndOfString, String::new()));
            return items;
        }
        let start = pos;
        if is_special(bytes[pos]) {
            let mut last: Option<(Token, usize)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                pos += 1;
                match keyword(&input[start..pos]) {
                    Some(token) => last = Some((token, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            // Every single special symbol is a token, so `last` is always set.
            let (token, end) = last.unwrap_or((Token::Identifier, pos));
            pos = end;
            items.push((token, input[start..end].to_owned()));
        } else {
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_whitespace(bytes[pos]) {
                pos += 1;
            }
            let literal = &input[start..pos];
            let token = keyword(literal).unwrap_or(Token::Identifier);
            items.push((token, literal.to_owned()));
        }
    }
}

/// Where a token is read: `in` and `notin` are identifiers among values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn token(&self, index: usize, context: Context) -> (Token, String) {
        let (token, literal) = self.items[index.min(self.items.len() - 1)].clone();
        let token = match token {
            Token::In | Token::NotIn if context == Context::Values => Token::Identifier,
            other => other,
        };
        (token, literal)
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        self.token(self.position, context)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.token(self.position, context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let requirement = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(requirement);
                    let (token, literal) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, literal) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{literal}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!(
                                "found '{literal}', expected: ',' or 'end of string'"
                            ));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(operator) = operator {
            return new_requirement(key, operator, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, operator, values.into_iter().collect())
    }

    /// The key, and `Exists` / `DoesNotExist` when no binary operator follows.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        if let Some(error) = invalid_key(&literal, "<nil>") {
            return Err(error);
        }
        let (next, _) = self.lookahead(Context::Values);
        if (next == Token::EndOfString || next == Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{literal}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<BTreeSet<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let (token, _) = self.consume(Context::Values);
                if token != Token::ClosedPar {
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!(
                "found '{literal}', expected: ',', ')' or identifier"
            )),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut values = BTreeSet::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    values.insert(literal);
                    let (next, literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        values.insert(String::new());
                        return Ok(values);
                    }
                    if next == Token::Comma {
                        values.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (token, _) = self.lookahead(Context::Values);
        if token == Token::EndOfString || token == Token::Comma {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            Ok(BTreeSet::from([literal]))
        } else {
            Err(format!("found '{literal}', expected: identifier"))
        }
    }
}

/// A key's validation error as `field.Invalid(path, key, ...)` prints it.
fn invalid_key(key: &str, path: &str) -> Option<String> {
    let errors = names::label_key(key);
    (!errors.is_empty()).then(|| {
        FieldError::new(
            FieldErrorType::Invalid,
            path,
            Some(Value::String(key.to_owned())),
            errors.join("; "),
        )
        .to_string()
    })
}

/// `labels.NewRequirement`: checks the values against the operator.
fn new_requirement(
    key: String,
    operator: Operator,
    values: Vec<String>,
) -> Result<Requirement, String> {
    let mut errors: Vec<String> = Vec::new();
    let invalid = |field: &str, value: Value, detail: &str| {
        FieldError::new(FieldErrorType::Invalid, field, Some(value), detail).to_string()
    };
    match operator {
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errors.push(invalid(
                    "values",
                    Value::from(values.clone()),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, value) in values.iter().enumerate() {
                if value.parse::<i64>().is_err() {
                    errors.push(invalid(
                        &format!("values[{i}]"),
                        Value::String(value.clone()),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errors.push(invalid(
                "values",
                Value::from(values.clone()),
                "exact-match compatibility requires one single value",
            ));
        }
        _ => {}
    }
    for (i, value) in values.iter().enumerate() {
        let problems = names::label_value(value);
        if !problems.is_empty() {
            errors.push(invalid(
                &format!("values[{i}][{key}]"),
                Value::String(value.clone()),
                &problems.join("; "),
            ));
        }
    }
    match errors.as_slice() {
        [] => Ok(Requirement {
            key,
            operator,
            values,
        }),
        [one] => Err(one.clone()),
        many => Err(format!("[{}]", many.join(", "))),
    }
}

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    /// Parses `selector` and checks it against each label set: `Ok(expected matches)` or the
    /// parse error.
    #[track_caller]
    fn check(selector: &str, cases: &[(Value, bool)]) {
        let parsed = LabelSelector::parse(selector).unwrap_or_else(|e| panic!("{selector}: {e}"));
        for (set, expected) in cases {
            let set = labels(set.clone());
            assert_eq!(
                parsed.matches(Some(&set)),
                *expected,
                "{selector} on {set:?}"
            );
        }
    }

    #[track_caller]
    fn check_error(selector: &str, expected: &str) {
        assert_eq!(
            LabelSelector::parse(selector).unwrap_err(),
            expected,
            "{selector}"
        );
    }

    #[test]
    fn label_selectors_match_as_kube() {
        let app_web = json!({"app": "web", "tier": "front"});
        let app_db = json!({"app": "db"});
        let none = json!({});
        check("", &[(app_web.clone(), true), (none.clone(), true)]);
        check(
            "app=web",
            &[
                (app_web.clone(), true),
                (app_db.clone(), false),
                (none.clone(), false),
            ],
        );
        check(
            "app==web",
            &[(app_web.clone(), true), (app_db.clone(), false)],
        );
        check(
            "app!=web",
            &[
                (app_web.clone(), false),
                (app_db.clone(), true),
                (none.clone(), true),
            ],
        );
        check(
            "app in (web, db)",
            &[
                (app_web.clone(), true),
                (app_db.clone(), true),
                (none.clone(), false),
            ],
        );
        check(
            "app notin (web)",
            &[
                (app_web.clone(), false),
                (app_db.clone(), true),
                (none.clone(), true),
            ],
        );
        check("tier", &[(app_web.clone(), true), (app_db.clone(), false)]);
        check("!tier", &[(app_web.clone(), false), (app_db.clone(), true)]);
        check(
            "app=web,tier=front",
            &[(app_web.clone(), true), (app_db.clone(), false)],
        );
        check(" app = web , !x ", &[(app_web.clone(), true)]);
        check(
            "app=",
            &[(json!({"app": ""}), true), (app_web.clone(), false)],
        );
        check(
            "app in (in, notin)",
            &[(json!({"app": "in"}), true), (app_web.clone(), false)],
        );
        check(
            "app in (,web)",
            &[
                (json!({"app": ""}), true),
                (app_web.clone(), true),
                (app_db.clone(), false),
            ],
        );
        check(
            "n>1,n<10",
            &[
                (json!({"n": "5"}), true),
                (json!({"n": "10"}), false),
                (json!({"n": "x"}), false),
            ],
        );
        check(
            "example.com/app=web",
            &[(json!({"example.com/app": "web"}), true)],
        );
        assert_eq!(
            LabelSelector::parse("b=1,a in (y,x)").unwrap().requirements,
            vec![
                Requirement {
                    key: "a".into(),
                    operator: Operator::In,
                    values: vec!["x".into(), "y".into()]
                },
                Requirement {
                    key: "b".into(),
                    operator: Operator::Equals,
                    values: vec!["1".into()]
                },
            ]
        );
    }

    #[test]
    fn label_selector_errors_are_kubes() {
        check_error(
            "app web",
            "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt",
        );
        check_error("app=web=x", "found '=', expected: ',' or 'end of string'");
        check_error("app=web,", "found '', expected: identifier after ','");
        check_error(
            ",app",
            "found ',', expected: !, identifier, or 'end of string'",
        );
        check_error(
            "app in web",
            "unable to parse requirement: found 'web' expected: '('",
        );
        check_error(
            "app in (web",
            "unable to parse requirement: found '', expected: ',' or ')'",
        );
        check_error(
            "!",
            "unable to parse requirement: found '', expected: identifier",
        );
        check_error(
            "app=(",
            "unable to parse requirement: found '(', expected: identifier",
        );
        check_error(
            "app:monolith",
            "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        );
        check_error(
            "app=-web",
            "unable to parse requirement: values[0][app]: Invalid value: \"-web\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        );
        check_error(
            "n>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        );
    }

    #[test]
    fn field_selectors_parse_and_match_as_kube() {
        fn fields(name: &str) -> impl Fn(&str) -> Option<String> + '_ {
            move |label| (label == "metadata.name").then(|| name.to_owned())
        }
        let selector = FieldSelector::parse("metadata.name=web").unwrap();
        assert!(selector.matches(fields("web")));
        assert!(!selector.matches(fields("db")));
        let selector = FieldSelector::parse("metadata.name!=web,metadata.namespace==").unwrap();
        assert!(selector.matches(fields("db")));
        assert!(!selector.matches(fields("web")));
        let selector = FieldSelector::parse(r"metadata.name=a\,b\=c\\").unwrap();
        assert_eq!(selector.terms[0].value, r"a,b=c\");
        assert!(FieldSelector::parse("").unwrap().is_empty());
        assert_eq!(
            FieldSelector::parse("metadata.name").unwrap_err(),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        assert_eq!(
            FieldSelector::parse(r"a=b\x").unwrap_err(),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            FieldSelector::parse("a=b=c").unwrap_err(),
            "invalid field selector: unescaped character in value: 61"
        );
        let selector = FieldSelector::parse("spec.foo=1,metadata.name=x").unwrap();
        assert_eq!(
            selector
                .check_fields(|f| f.starts_with("metadata."))
                .unwrap_err(),
            "field label not supported: spec.foo"
        );
    }
}
