//! kube's string validations (`k8s.io/apimachinery/pkg/util/validation` and the few of
//! `pkg/apis/core/validation` that are about strings): DNS names, qualified names, label
//! values, path segments, config keys and finalizer names, with kube's exact messages,
//! because clients show them verbatim.
//!
//! Each returns the list of what is wrong (empty when the value is valid), as kube's do;
//! the registry uses them for object metadata, and a kind's [`Strategy`](crate::Strategy)
//! for its own fields (the core `ConfigMap` of `api-types` checks its keys with
//! [`config_map_key`]).

mod fields;
mod path;

pub use fields::*;
pub use path::Path;

/// `DNS1123LabelMaxLength`.
const DNS1123_LABEL_MAX: usize = 63;
/// `DNS1123SubdomainMaxLength`.
const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// `qualifiedNameMaxLength` and `LabelValueMaxLength`.
const QUALIFIED_NAME_MAX: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `validation.RegexError`: the message, examples and the regular expression.
fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{format}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{message} (e.g. {}regex used for validation is '{format}')",
        examples.join(" or ")
    )
}

/// `validation.MaxLenError`.
fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label_shape(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && is_lower_alnum(bytes[0])
        && is_lower_alnum(bytes[bytes.len() - 1])
        && bytes.iter().all(|&c| is_lower_alnum(c) || c == b'-')
}

/// `validation.IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errors.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !is_dns1123_label_shape(value) {
        errors.push(regex_error(
            DNS1123_LABEL_ERR,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errors
}

/// `validation.IsDNS1035Label`: a DNS-1123 label that starts with a letter (the names of
/// custom resources and their versions).
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errors.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !is_dns1123_label_shape(value) || !value.starts_with(|c: char| c.is_ascii_lowercase()) {
        errors.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

/// `validation.IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !value.split('.').all(is_dns1123_label_shape) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// `maskTrailingDash`: a `generateName` prefix may end with `-`.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        // kube cuts bytes: the result only needs to fail validation where the name does.
        let mut bytes = name.as_bytes()[..name.len() - 2].to_vec();
        bytes.push(b'a');
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        name.to_owned()
    }
}

/// `NameIsDNSSubdomain`: the names of most kinds.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        dns1123_subdomain(&mask_trailing_dash(name))
    } else {
        dns1123_subdomain(name)
    }
}

/// `NameIsDNSLabel`: namespace names.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        dns1123_label(&mask_trailing_dash(name))
    } else {
        dns1123_label(name)
    }
}

/// `NameIsDNS1035Label`: names that must be DNS-1035 labels (a `generateName` prefix may
/// end with `-`).
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        dns1035_label(&mask_trailing_dash(name))
    } else {
        dns1035_label(name)
    }
}

/// `path.IsValidPathSegmentName`: a name that can be a path segment (and a key segment).
pub fn path_segment_name(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|illegal| name.contains(*illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn is_qualified_name_part(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && is_alnum(bytes[0])
        && is_alnum(bytes[bytes.len() - 1])
        && (bytes.iter()).all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// `validation.IsQualifiedName`: label keys, annotation keys.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    (dns1123_subdomain(prefix).into_iter()).map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errors.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errors.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !is_qualified_name_part(name) {
        errors.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errors
}

/// `validation.IsValidLabelValue`.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > QUALIFIED_NAME_MAX {
        errors.push(max_len_error(QUALIFIED_NAME_MAX));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errors.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// `validation.IsLabelKey` (kube's label keys are qualified names).
pub fn label_key(value: &str) -> Vec<String> {
    qualified_name(value)
}

const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/// `validation.IsConfigMapKey`: keys of ConfigMap and Secret data, which become file names
/// when mounted: at most 253 characters of `[-._a-zA-Z0-9]`, and not `.`, `..` or a name
/// starting with `..`.
pub fn config_map_key(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    let valid_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_');
    if value.is_empty() || !value.bytes().all(valid_char) {
        errors.push(regex_error(
            CONFIG_MAP_KEY_ERR,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    // `hasChDirPrefix`.
    if value == "." {
        errors.push("must not be '.'".to_owned());
    } else if value == ".." {
        errors.push("must not be '..'".to_owned());
    } else if value.starts_with("..") {
        errors.push("must not start with '..'".to_owned());
    }
    errors
}

/// Finalizers kube's own controllers run under an unqualified name
/// (`helper.IsStandardFinalizerName`).
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// A finalizer name of a core kind: a qualified name (apimachinery's
/// `ValidateFinalizerName`) and [`kube_finalizer_name`].
pub fn finalizer_name(value: &str) -> Vec<String> {
    let mut errors = qualified_name(value);
    errors.extend(kube_finalizer_name(value));
    errors
}

/// Core's `validateKubeFinalizerName`: a name without a `/` must be one of kube's
/// standard finalizers.
pub fn kube_finalizer_name(value: &str) -> Vec<String> {
    if !value.contains('/') && !STANDARD_FINALIZERS.contains(&value) {
        return vec!["name is neither a standard finalizer name nor is it fully qualified".into()];
    }
    Vec::new()
}

/// apimachinery's `ValidateLabelSelector`.
pub fn label_selector(
    selector: &crate::meta::LabelSelector,
    path: &str,
) -> Vec<crate::error::FieldError> {
    let mut errors = Vec::new();
    for (i, requirement) in selector.match_expressions.iter().enumerate() {
        let at = |child: &str| format!("{path}.matchExpressions[{i}].{child}");
        match requirement.operator.as_str() {
            "In" | "NotIn" if requirement.values.is_empty() => {
                errors.push(crate::error::FieldError::required(
                    at("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ))
            }
            "Exists" | "DoesNotExist" if !requirement.values.is_empty() => {
                errors.push(crate::error::FieldError::new(
                    crate::error::FieldErrorType::Forbidden,
                    at("values"),
                    None,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errors.push(crate::error::FieldError::invalid(
                at("operator"),
                serde_json::Value::String(other.to_owned()),
                "not a valid selector operator",
            )),
        }
        for message in qualified_name(&requirement.key) {
            errors.push(crate::error::FieldError::invalid(
                at("key"),
                serde_json::Value::String(requirement.key.clone()),
                message,
            ));
        }
    }
    for (key, value) in selector.match_labels.iter().flatten() {
        for message in qualified_name(key) {
            let field = format!("{path}.matchLabels");
            errors.push(crate::error::FieldError::invalid(
                field,
                serde_json::Value::String(key.clone()),
                message,
            ));
        }
        for message in label_value(value) {
            let field = format!("{path}.matchLabels");
            errors.push(crate::error::FieldError::invalid(
                field,
                serde_json::Value::String(value.clone()),
                message,
            ));
        }
    }
    errors
}

/// Go's `time.Parse("2006-01-02", s)` succeeds: four-digit year, two-digit month 01-12
/// and day within the month.
pub fn is_full_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| {
        b[range.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[range].parse::<u32>().unwrap_or(0))
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(actual: Vec<String>, expected: &[&str]) {
        assert_eq!(actual, expected);
    }

    #[test]
    fn dns_names() {
        check(dns1123_subdomain("web.example-1"), &[]);
        check(
            dns1123_subdomain("Web"),
            &[
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ],
        );
        check(dns1123_subdomain("a..b"), &[&dns1123_subdomain("A")[0]]);
        check(
            dns1123_label("my.ns"),
            &[
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        );
        check(
            dns1123_label(&"a".repeat(64)),
            &["must be no more than 63 characters"],
        );
        check(name_is_dns_subdomain("web-", true), &[]);
        check(name_is_dns_label("web-", true), &[]);
        assert_eq!(name_is_dns_label("é-", true).len(), 1);
        check(path_segment_name(".."), &["may not be '..'"]);
        check(
            path_segment_name("a/b%"),
            &["may not contain '/'", "may not contain '%'"],
        );
    }

    #[test]
    fn config_map_keys() {
        check(config_map_key("a.b-c_D9"), &[]);
        check(config_map_key(".x"), &[]);
        let regex = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
        check(config_map_key(""), &[regex]);
        check(config_map_key("a/b"), &[regex]);
        check(config_map_key("."), &["must not be '.'"]);
        check(config_map_key(".."), &["must not be '..'"]);
        check(config_map_key("..a"), &["must not start with '..'"]);
        check(
            config_map_key(&"a/".repeat(127)),
            &["must be no more than 253 characters", regex],
        );
        check(config_map_key(&"k".repeat(253)), &[]);
    }

    #[test]
    fn finalizer_names() {
        check(finalizer_name("kubernetes"), &[]);
        check(finalizer_name("example.com/cleanup"), &[]);
        check(
            finalizer_name("cleanup"),
            &["name is neither a standard finalizer name nor is it fully qualified"],
        );
        assert_eq!(finalizer_name("a/b/c"), qualified_name("a/b/c"));
    }

    #[test]
    fn qualified_names_and_label_values() {
        check(qualified_name("example.com/MyName"), &[]);
        check(
            qualified_name("app:x"),
            &[
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        );
        check(
            qualified_name("a/b/c"),
            &[
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            ],
        );
        check(qualified_name("/a"), &["prefix part must be non-empty"]);
        check(label_value(""), &[]);
        check(label_value("v_1.2-x"), &[]);
        check(
            label_value("-x"),
            &[
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ],
        );
    }
}
