//! Label and field selectors, parsed and matched as kube does
//! (`k8s.io/apimachinery/pkg/labels/selector.go`, `pkg/fields/selector.go`), with kube's
//! error messages: clients print them as the server sends them.
//!
//! - [`LabelSelector`]: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//!   `a>1`, `a<1`; commas are AND.
//! - [`FieldSelector`]: `f=v`, `f==v`, `f!=v`; commas are AND; `\,`, `\=` and `\\` escape
//!   in values.
//!
//! `labels` parses and matches label selectors, `fields` field selectors; [`Selectors`]
//! checks a request's pair against the kind.

mod fields;
mod labels;

pub use fields::{FieldSelector, FieldTerm};
pub use labels::{LabelLookup, LabelSelector, Operator, Requirement};

use serde_json::Value;

use kapi_core::api::{KindInfo, Scope};
use kapi_core::error::ApiError;
use kapi_core::unstructured::{get_path, meta, meta_str};

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

    /// Whether the label selector needs an object's labels (an empty one selects every
    /// object, labelled or not).
    pub fn selects_labels(&self) -> bool {
        !self.labels.is_empty()
    }

    /// Whether the field selector needs [`matches_fields`](Selectors::matches_fields).
    pub fn selects_fields(&self) -> bool {
        !self.fields.is_empty()
    }

    /// Whether the labels of an object (in any version) match.
    pub fn matches_labels(&self, object: &Value) -> bool {
        self.matches_label_map(meta(object).and_then(|m| m.get("labels")?.as_object()))
    }

    /// Whether an object's `metadata.labels` match.
    pub fn matches_label_map<L: LabelLookup + ?Sized>(&self, labels: Option<&L>) -> bool {
        self.labels.matches(labels)
    }

    /// Whether the fields of an object match; selectable fields are paths on the hub, so
    /// `hub` is the object's hub JSON ([`KindEntry::hub_json`](crate::scheme::KindEntry::hub_json)).
    pub fn matches_fields(&self, info: &KindInfo, hub: &Value) -> bool {
        self.fields.matches(|label| field_value(info, hub, label))
    }

    /// The values of every field a selector may name (`metadata.name`, `metadata.namespace`
    /// and the kind's selectable fields), by label: what a cached object keeps instead of
    /// its hub ([`Selectors::matches_selectable_values`]).
    pub fn selectable_values(info: &KindInfo, hub: &Value) -> Value {
        let labels = ["metadata.name", "metadata.namespace"]
            .into_iter()
            .chain(info.selectable_fields.iter().map(|f| f.label));
        let values = labels
            .filter_map(|label| {
                Some((
                    label.to_owned(),
                    Value::String(field_value(info, hub, label)?),
                ))
            })
            .collect();
        Value::Object(values)
    }

    /// Whether the fields match, given the object's [`Selectors::selectable_values`].
    pub fn matches_selectable_values(&self, values: &Value) -> bool {
        self.fields
            .matches(|label| values.get(label)?.as_str().map(str::to_owned))
    }
}

/// The value a field selector compares for `label` on `hub`.
fn field_value(info: &KindInfo, hub: &Value, label: &str) -> Option<String> {
    match label {
        "metadata.name" => meta_str(hub, "name").map(str::to_owned),
        "metadata.namespace" if info.scope == Scope::Namespaced => {
            meta_str(hub, "namespace").map(str::to_owned)
        }
        "metadata.namespace" => None,
        _ => {
            let field = info.selectable_fields.iter().find(|f| f.label == label)?;
            let value = |path| match get_path(hub, path)? {
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            };
            match (value(field.path), field.or) {
                (Some(found), _) if !found.is_empty() => Some(found),
                (found, None) => found,
                (found, Some(or)) => value(or).or(found),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

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
