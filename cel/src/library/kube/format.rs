//! kube's format library: named string formats (`kubernetes.NamedFormat`), each
//! `format.<name>()` or looked up with `format.named(name)`, whose `validate(s)` gives
//! what is wrong with `s` (an optional list of kube's messages, none when `s` is valid).
//!
//! The Kubernetes names (`dns1123Label`, `qualifiedName`, `labelValue`, ...) check with
//! kube's validations ([`kapi_core::validation`]); `uri` with Go's
//! `url.ParseRequestURI`; `uuid`, `byte`, `date` and `datetime` as kube-openapi's
//! `strfmt` registry checks those OpenAPI formats.

use std::any::Any;
use std::sync::{Arc, LazyLock};

use kapi_core::net::url::Url;
use kapi_core::validation;

use super::{equal_as, opaque};
use crate::library::{Env, Implementation, Overload as O, Result, string};
use crate::value::{Opaque, Value};

/// The CEL type name of named formats.
pub const TYPE: &str = "kubernetes.NamedFormat";

/// A `kubernetes.NamedFormat` value.
#[derive(Clone, Copy, Debug)]
pub struct NamedFormat {
    /// kube's name for it (`DNS1123Label`, `uuid`), which equality compares.
    pub name: &'static str,
    /// What is wrong with a string, empty when it is valid.
    pub validate: fn(&str) -> Vec<String>,
    /// The length of the regular expression (or of one as costly) the format checks
    /// with, which the runtime cost of `validate()` is computed from.
    pub max_regex_size: u64,
}

impl Opaque for NamedFormat {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    /// The same format, by name.
    fn equals(&self, other: &dyn Opaque) -> bool {
        equal_as(self, other, |a, b| a.name == b.name)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The formats, by the name CEL knows them (`format.<name>()`, `format.named("<name>")`).
pub const FORMATS: [(&str, NamedFormat); 13] = [
    (
        "dns1123Label",
        NamedFormat {
            name: "DNS1123Label",
            validate: |s| validation::name_is_dns_label(s, false),
            max_regex_size: 30,
        },
    ),
    (
        "dns1123Subdomain",
        NamedFormat {
            name: "DNS1123Subdomain",
            validate: |s| validation::name_is_dns_subdomain(s, false),
            max_regex_size: 60,
        },
    ),
    (
        "dns1035Label",
        NamedFormat {
            name: "DNS1035Label",
            validate: |s| validation::name_is_dns1035_label(s, false),
            max_regex_size: 30,
        },
    ),
    (
        "qualifiedName",
        NamedFormat {
            name: "QualifiedName",
            validate: validation::qualified_name,
            // Checked with the subdomain's expression.
            max_regex_size: 60,
        },
    ),
    (
        "dns1123LabelPrefix",
        NamedFormat {
            name: "DNS1123LabelPrefix",
            validate: |s| validation::name_is_dns_label(s, true),
            max_regex_size: 30,
        },
    ),
    (
        "dns1123SubdomainPrefix",
        NamedFormat {
            name: "DNS1123SubdomainPrefix",
            validate: |s| validation::name_is_dns_subdomain(s, true),
            max_regex_size: 60,
        },
    ),
    (
        "dns1035LabelPrefix",
        NamedFormat {
            name: "DNS1035LabelPrefix",
            validate: |s| validation::name_is_dns1035_label(s, true),
            max_regex_size: 30,
        },
    ),
    (
        "labelValue",
        NamedFormat {
            name: "LabelValue",
            validate: validation::label_value,
            max_regex_size: 40,
        },
    ),
    (
        "uri",
        NamedFormat {
            name: "URI",
            validate: |s| match Url::go_parse_request_uri(s) {
                Ok(_) => Vec::new(),
                Err(e) => vec![e.to_string()],
            },
            // govalidator's URL expression.
            max_regex_size: 1103,
        },
    ),
    (
        "uuid",
        NamedFormat {
            name: "uuid",
            validate: |s| complaint(is_uuid(s), "does not match the UUID format"),
            // strfmt's UUID expression.
            max_regex_size: 70,
        },
    ),
    (
        "byte",
        NamedFormat {
            name: "byte",
            validate: |s| complaint(is_base64(s), "invalid base64"),
            // govalidator's base64 expression.
            max_regex_size: 84,
        },
    ),
    (
        "date",
        NamedFormat {
            name: "date",
            validate: |s| complaint(kapi_core::validation::is_full_date(s), "invalid date"),
            // strfmt's date-time expression.
            max_regex_size: 71,
        },
    ),
    (
        "datetime",
        NamedFormat {
            name: "datetime",
            validate: |s| complaint(is_date_time(s), "invalid datetime"),
            max_regex_size: 71,
        },
    ),
];

/// `format.<name>()` of the `I`th format.
fn constant<const I: usize>(_: &[Value]) -> Result {
    Ok(Value::Opaque(Arc::new(FORMATS[I].1)))
}

/// The implementations of `format.<name>()`, in the order of [`FORMATS`].
const CONSTANTS: [Implementation; 13] = [
    constant::<0>,
    constant::<1>,
    constant::<2>,
    constant::<3>,
    constant::<4>,
    constant::<5>,
    constant::<6>,
    constant::<7>,
    constant::<8>,
    constant::<9>,
    constant::<10>,
    constant::<11>,
    constant::<12>,
];

/// The overload ids (and function names) of `format.<name>()`, in the order of
/// [`FORMATS`].
const IDS: [&str; 13] = [
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];

/// Adds the format library to `env`.
pub fn install(env: &mut Env) {
    for (id, implementation) in IDS.into_iter().zip(CONSTANTS) {
        env.add(
            id,
            [O::new(id, "() -> kubernetes.NamedFormat", implementation)],
        );
    }
    env.add(
        "format.named",
        [O::new(
            "format-named",
            "(string) -> optional_type(kubernetes.NamedFormat)",
            |a| {
                let name = string(a, 0)?;
                let found = (FORMATS.iter()).find(|(n, _)| **n == **name);
                Ok(Value::Optional(found.map(|(_, format)| {
                    Arc::new(Value::Opaque(Arc::new(*format)))
                })))
            },
        )],
    );
    env.add(
        "validate",
        [O::new(
            "format-validate",
            "kubernetes.NamedFormat.(string) -> optional_type(list(string))",
            |a| {
                let format = opaque::<NamedFormat>(a, 0)?;
                let errors = (format.validate)(string(a, 1)?);
                Ok(Value::Optional((!errors.is_empty()).then(|| {
                    Arc::new(Value::list(errors.into_iter().map(Value::string).collect()))
                })))
            },
        )],
    );
}

/// No complaint when `valid`, else `message`.
fn complaint(valid: bool, message: &str) -> Vec<String> {
    if valid {
        Vec::new()
    } else {
        vec![message.to_owned()]
    }
}

/// strfmt's `uuid`: 32 hexadecimal digits, either case, in groups of 8, 4, 4, 4 and 12,
/// each but the first optionally after a `-`.
fn is_uuid(s: &str) -> bool {
    let mut rest = s.as_bytes();
    for (i, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0
            && let [b'-', after @ ..] = rest
        {
            rest = after;
        }
        if rest.len() < len || !rest[..len].iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        rest = &rest[len..];
    }
    rest.is_empty()
}

/// strfmt's `byte` (govalidator's `IsBase64`): standard base64 with its padding, in
/// whole groups of four, at least one.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    let alphabet = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let (body, last) = b.split_at(b.len() - 4);
    let last_ok = match last {
        [x, y, b'=', b'='] => alphabet(x) && alphabet(y),
        [x, y, z, b'='] => alphabet(x) && alphabet(y) && alphabet(z),
        _ => last.iter().all(alphabet),
    };
    last_ok && body.iter().all(alphabet)
}

/// strfmt's time of day after a date-time's `T`.
static TIME: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
        .expect("a valid expression")
});

/// strfmt's `datetime`: lower-cased and split at each `t`, a date before the
/// first and, after it, a time of day (hour to 23, minutes and seconds to 59, a fraction
/// after any one character) and a zone (`z` or `±hh:mm`); anything after a second `t` is
/// not looked at.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    // Go lower-cases each character alone (`İ` becomes `i`, not `i̇`).
    let lower: String = (s.chars())
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !kapi_core::validation::is_full_date(date) {
        return false;
    }
    TIME.captures(time)
        .is_some_and(|c| &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_formats_in_order() {
        for (id, (name, _)) in IDS.iter().zip(FORMATS) {
            assert_eq!(id.strip_prefix("format."), Some(name));
        }
    }

    #[test]
    fn strfmt_formats() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123E4567E89B12D3A456426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400"));
        assert!(!is_uuid("123e4567--e89b-12d3-a456-426614174000"));
        assert!(is_base64("aGVsbG8="));
        assert!(is_base64("aGk="));
        assert!(is_base64("aGVsbG8gd29ybGQ="));
        assert!(!is_base64("aGVsbG8"));
        assert!(!is_base64(""));
        assert!(!is_base64("a==="));
        assert!(kapi_core::validation::is_full_date("2020-02-29"));
        assert!(!kapi_core::validation::is_full_date("2019-02-29"));
        assert!(!kapi_core::validation::is_full_date("2020-01-32"));
        assert!(!kapi_core::validation::is_full_date("2020-13-01"));
        assert!(is_date_time("2020-01-01T00:00:00Z"));
        assert!(is_date_time("2020-01-01t23:59:59.123+01:00"));
        assert!(!is_date_time("2020-01-32T00:00:00Z"));
        assert!(!is_date_time("2020-01-01T24:00:00Z"));
        assert!(!is_date_time("2020-01-01"));
        assert!(is_date_time("2020-01-01T00:00:00\u{130}5Z"));
        assert!(is_date_time("2020-01-01T00:00:00Zt anything"));
    }
}
