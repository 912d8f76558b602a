//! kube's checks of common field shapes (`k8s.io/apimachinery/pkg/util/validation` and
//! `pkg/apis/core/validation`): label and annotation maps, numbers that may not be
//! negative, ports and their names, environment variable names, percentages. Each returns
//! field errors at the path given, with kube's messages.

use std::collections::BTreeMap;

use serde_json::Value;

use super::path::Path;
use super::{qualified_name, regex_error};
use crate::error::{FieldError, FieldErrorType};

/// kube's `TotalAnnotationSizeLimitB`.
pub const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// kube's `isNegativeErrorMsg`.
pub const NEGATIVE: &str = "must be greater than or equal to 0";

/// `validation.InclusiveRangeError(1, 65535)`, a port's range.
pub const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// apimachinery's `ValidateLabels`: each key a qualified name, each value a label value.
pub fn labels(labels: &BTreeMap<String, String>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in labels {
        for message in qualified_name(key) {
            errors.push(FieldError::invalid(path, key.as_str(), message));
        }
        for message in super::label_value(value) {
            errors.push(FieldError::invalid(path, value.as_str(), message));
        }
    }
    errors
}

/// apimachinery's `ValidateAnnotations`: each key a qualified name (case aside), all of
/// them together at most [`ANNOTATIONS_LIMIT`] bytes.
pub fn annotations(annotations: &BTreeMap<String, String>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut size = 0;
    for (key, value) in annotations {
        for message in qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid(path, key.as_str(), message));
        }
        size += key.len() + value.len();
    }
    if size > ANNOTATIONS_LIMIT {
        errors.push(FieldError::new(
            FieldErrorType::TooLong,
            path,
            None,
            format!("may not be more than {ANNOTATIONS_LIMIT} bytes"),
        ));
    }
    errors
}

/// kube's `ValidateNonnegativeField`.
pub fn non_negative(value: i64, path: &Path) -> Vec<FieldError> {
    match value < 0 {
        true => vec![FieldError::invalid(path, value, NEGATIVE)],
        false => Vec::new(),
    }
}

/// `validation.IsValidPortNum`.
pub fn port_number(port: i64) -> Vec<String> {
    match (1..=65535).contains(&port) {
        true => Vec::new(),
        false => vec![PORT_RANGE.to_owned()],
    }
}

/// `validation.IsValidPortName`: an IANA service name of at most 15 lower-case letters,
/// digits and single hyphens, with at least one letter.
pub fn port_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_owned());
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if name.is_empty() || !name.chars().all(allowed) {
        errors
            .push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".into());
    }
    errors
}

/// `validation.IsEnvVarName`: letters, digits, `_`, `-` and `.`, not starting with a
/// digit.
pub fn env_var_name(name: &str) -> Vec<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    let starts_right = name.chars().next().is_some_and(|c| !c.is_ascii_digit());
    let mut errors = Vec::new();
    if !(starts_right && name.chars().all(allowed)) {
        errors.push(regex_error(
            "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
            "[-._a-zA-Z][-._a-zA-Z0-9]*",
            &["my.env-name", "MY_ENV.NAME", "MyEnvName1"],
        ));
    }
    if name == "." {
        errors.push("must not be '.'".into());
    } else if name == ".." {
        errors.push("must not be '..'".into());
    } else if name.starts_with("..") {
        errors.push("must not start with '..'".into());
    }
    errors
}

/// `validation.IsRelaxedEnvVarName` (kube 1.32's `RelaxedEnvironmentVariableValidation`,
/// on by default): any printable ASCII character but `=`.
pub fn relaxed_env_var_name(name: &str) -> Vec<String> {
    let printable = |c: char| (' '..='~').contains(&c) && c != '=';
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push("environment variable name must be non-empty".to_owned());
    }
    if !name.chars().all(printable) {
        errors.push("a valid environment variable name must consist only of printable ASCII characters other than '='".into());
    }
    errors
}

/// An int-or-string (kube's `intstr.IntOrString`) as its two forms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntOrPercent<'a> {
    /// A number.
    Int(i64),
    /// A string, meant to be a percentage (`25%`).
    Str(&'a str),
}

impl<'a> IntOrPercent<'a> {
    /// Reads an int-or-string from its JSON form; `None` for any other shape.
    pub fn from_json(value: &'a Value) -> Option<IntOrPercent<'a>> {
        match value {
            Value::String(s) => Some(IntOrPercent::Str(s)),
            other => other.as_i64().map(IntOrPercent::Int),
        }
    }

    /// The value as kube's field errors print it: a number bare, a string quoted.
    pub fn to_json(self) -> Value {
        match self {
            IntOrPercent::Int(n) => n.into(),
            IntOrPercent::Str(s) => s.into(),
        }
    }

    /// The percentage a valid percent string states (`"25%"` → 25).
    pub fn percent(self) -> Option<i64> {
        match self {
            IntOrPercent::Str(s) => s.strip_suffix('%')?.parse().ok(),
            IntOrPercent::Int(_) => None,
        }
    }

    /// Whether the value is zero (`0` or `"0%"`), as kube's `getIntOrPercentValue` reads it.
    pub fn is_zero(self) -> bool {
        match self {
            IntOrPercent::Int(n) => n == 0,
            IntOrPercent::Str(_) => self.percent() == Some(0),
        }
    }
}

/// kube's `ValidatePositiveIntOrPercent`: a non-negative number, or a percent string.
pub fn positive_int_or_percent(value: IntOrPercent<'_>, path: &Path) -> Vec<FieldError> {
    match value {
        IntOrPercent::Int(n) => non_negative(n, path),
        IntOrPercent::Str(s) if !is_percent(s) => vec![FieldError::invalid(
            path,
            s,
            regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                "[0-9]+%",
                &["1%", "93%"],
            ),
        )],
        IntOrPercent::Str(_) => Vec::new(),
    }
}

/// kube's `IsNotMoreThan100Percent`.
pub fn not_more_than_100_percent(value: IntOrPercent<'_>, path: &Path) -> Vec<FieldError> {
    match value.percent() {
        Some(percent) if percent > 100 => vec![FieldError::invalid(
            path,
            value.to_json(),
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}

/// `validation.IsValidPercent`: digits, then `%`.
fn is_percent(value: &str) -> bool {
    value
        .strip_suffix('%')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_as_kube_judges_them() {
        assert!(port_name("http").is_empty());
        assert!(port_name("h2c-8080").is_empty());
        assert_eq!(
            port_name("8080"),
            ["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name("a-very-long-port-name"),
            ["must be no more than 15 characters"]
        );
        assert_eq!(port_name("-a").len(), 1);
        assert_eq!(port_name("a--b").len(), 1);
        assert_eq!(port_name("http_port").len(), 1);
    }

    #[test]
    fn percents() {
        let path = Path::new("maxSurge");
        assert!(positive_int_or_percent(IntOrPercent::Str("25%"), &path).is_empty());
        assert_eq!(
            positive_int_or_percent(IntOrPercent::Str("-1"), &path).len(),
            1
        );
        assert_eq!(
            positive_int_or_percent(IntOrPercent::Int(-1), &path).len(),
            1
        );
        assert_eq!(
            not_more_than_100_percent(IntOrPercent::Str("110%"), &path).len(),
            1
        );
        assert!(IntOrPercent::Str("0%").is_zero());
    }

    #[test]
    fn environment_variable_names() {
        assert!(env_var_name("MY_ENV.NAME").is_empty());
        assert_eq!(env_var_name("A=B").len(), 1);
        assert_eq!(env_var_name("1A").len(), 1);
        assert!(relaxed_env_var_name("1 A").is_empty());
        assert_eq!(relaxed_env_var_name("A=B").len(), 1);
    }
}
