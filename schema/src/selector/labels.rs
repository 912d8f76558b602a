//! Label selectors as kube parses and matches them (`k8s.io/apimachinery/pkg/labels`):
//! `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`; commas are
//! AND.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::validation as names;

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

/// Where a selector looks labels up: an object's `metadata.labels` as decoded JSON, or
/// the compact form the watch cache keeps ([`crate::cache::Labels`]).
pub trait LabelLookup {
    /// The value of label `key`, if set (to a string).
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelLookup for Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

impl Requirement {
    fn matches<L: LabelLookup + ?Sized>(&self, labels: Option<&L>) -> bool {
        let value = labels.and_then(|l| l.label(&self.key));
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
    pub fn matches<L: LabelLookup + ?Sized>(&self, labels: Option<&L>) -> bool {
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
