//! Checks of a request body before the registry's rules apply (kube's create and update
//! handlers): type meta against the target, decode errors worded as kube words them,
//! the name and namespace against the URL, and unknown fields (`fieldValidation`).

use serde_json::Value;

use super::FieldValidation;
use super::object::{meta_str, set_meta};
use kapi_core::api::{KindInfo, Scope};
use kapi_core::error::ApiError;

/// What a body must be: `apiVersion` and `kind` (unset means "the target's").
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expected<'a> {
    /// `apps.example.dev/v1`.
    pub api_version: &'a str,
    /// `WebApp`.
    pub kind: &'a str,
}

impl Expected<'_> {
    /// The version part of `api_version`.
    fn version(&self) -> &str {
        self.api_version
            .rsplit('/')
            .next()
            .unwrap_or(self.api_version)
    }

    /// A decode failure, as kube's `transformDecodeError` words it.
    pub(crate) fn decode_error(&self, error: impl std::fmt::Display) -> ApiError {
        ApiError::BadRequest(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {error}",
            kind = self.kind,
            version = self.version(),
        ))
    }
}

/// The checks of a body that creates: its type meta, then its unknown and repeated fields
/// (`fieldValidation`); the warnings to answer with.
pub(crate) fn check_new(
    target: super::Target<'_>,
    body: &Value,
    options: &super::WriteOptions,
    expected: Expected<'_>,
) -> Result<Vec<String>, ApiError> {
    check_type_meta(body, expected)?;
    let kind = target.kind;
    check_unknown_fields(
        options.field_validation,
        body,
        || (kind.round_trip(body, target.version)).ok(),
        &options.duplicate_fields,
        expected,
    )
}

/// Checks `apiVersion` and `kind` of a body.
pub(crate) fn check_type_meta(body: &Value, expected: Expected<'_>) -> Result<(), ApiError> {
    if !body.is_object() {
        let mut summary = body.to_string();
        if summary.len() > 30 {
            let mut cut = 30;
            while !summary.is_char_boundary(cut) {
                cut -= 1;
            }
            summary.truncate(cut);
            summary.push_str(" ...");
        }
        return Err(ApiError::BadRequest(format!(
            "the object provided is unrecognized (must be of type {}): expected a JSON object ({summary})",
            expected.kind
        )));
    }
    let field = |name: &str| -> Result<Option<&str>, ApiError> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(expected.decode_error(format_args!(
                "invalid type: {other}, expected a string for {name:?}"
            ))),
        }
    };
    let api_version = field("apiVersion")?;
    if let Some(api_version) = api_version
        && api_version != expected.api_version
    {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            expected.api_version
        )));
    }
    if let Some(kind) = field("kind")?
        && kind != expected.kind
    {
        let version = api_version.unwrap_or(expected.api_version);
        return Err(ApiError::BadRequest(format!(
            "{kind} in version {:?} cannot be handled as a {}: no kind {kind:?} is registered for version {version:?}",
            version.rsplit('/').next().unwrap_or(version),
            expected.kind,
        )));
    }
    Ok(())
}

/// kube's `checkName` for update and patch: the body names the object of the URL.
pub(crate) fn check_name(
    object: &Value,
    name: &str,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    match meta_str(object, "name") {
        None => {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({name} based on URL) was undeterminable: name must be provided"
            )));
        }
        Some(actual) if actual != name => {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({actual}) does not match the name on the URL ({name})"
            )));
        }
        Some(_) => {}
    }
    if let (Some(expected), Some(actual)) = (
        namespace.filter(|n| !n.is_empty()),
        meta_str(object, "namespace"),
    ) && actual != expected
    {
        return Err(ApiError::BadRequest(format!(
            "the namespace of the object ({actual}) does not match the namespace on the request ({expected})"
        )));
    }
    Ok(())
}

/// kube's `EnsureObjectNamespaceMatchesRequestNamespace`: a missing namespace is taken
/// from the request, cluster-scoped objects lose theirs, a different one is a 400.
pub(crate) fn ensure_namespace(
    object: &mut Value,
    info: &KindInfo,
    request: Option<&str>,
) -> Result<(), ApiError> {
    let expected = match info.scope {
        Scope::Namespaced => request.unwrap_or(""),
        Scope::Cluster => "",
    };
    let actual = meta_str(object, "namespace").unwrap_or("");
    if actual == expected {
        if actual.is_empty() {
            set_meta(object, "namespace", None);
        }
        return Ok(());
    }
    if actual.is_empty() {
        set_meta(
            object,
            "namespace",
            Some(Value::String(expected.to_owned())),
        );
        return Ok(());
    }
    if expected.is_empty() {
        set_meta(object, "namespace", None);
        return Ok(());
    }
    Err(ApiError::BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"
            .into(),
    ))
}

/// Applies `fieldValidation` to a body and what its type kept of it (`typed`: the body
/// decoded and encoded again; `None` when it does not decode, which the decode itself
/// reports), and to the fields it repeated (`duplicates`, found while decoding its JSON):
/// returns the warnings (`Warn`) or fails (`Strict`), listing every one.
pub(crate) fn check_unknown_fields(
    mode: FieldValidation,
    body: &Value,
    typed: impl FnOnce() -> Option<Value>,
    duplicates: &[String],
    expected: Expected<'_>,
) -> Result<Vec<String>, ApiError> {
    check_unknown_fields_within(mode, body, None, typed, duplicates, expected)
}

/// [`check_unknown_fields`] of `body`, looking only where `patch` reaches when it is the
/// merge or strategic merge patch that made `body` of an object with no unknown fields
/// (the stored object as its version's type gives it back): only the patch can have
/// brought any. The stored object's `managedFields` and the rest are not walked again.
pub(crate) fn check_unknown_fields_within(
    mode: FieldValidation,
    body: &Value,
    patch: Option<&Value>,
    typed: impl FnOnce() -> Option<Value>,
    duplicates: &[String],
    expected: Expected<'_>,
) -> Result<Vec<String>, ApiError> {
    if mode == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let mut unknown = Vec::new();
    if let Some(typed) = typed() {
        walk(&mut String::new(), body, &typed, patch, &mut unknown);
    }
    // Kube finds repeated fields while decoding, before unknown ones.
    let messages: Vec<String> = (duplicates.iter())
        .map(|path| format!("duplicate field {path:?}"))
        .chain(unknown.iter().map(|path| format!("unknown field {path:?}")))
        .collect();
    if mode == FieldValidation::Strict && !messages.is_empty() {
        return Err(expected.decode_error(format_args!(
            "strict decoding error: {}",
            messages.join(", ")
        )));
    }
    Ok(messages)
}

/// The fields of `body` that `typed` (the same object through its version's type) does not
/// have, as a strict decoding names them (`spec.ports[0].x`): what kube's strict decoder
/// refuses of an object admission changed.
pub fn unknown_fields(body: &Value, typed: &Value) -> Vec<String> {
    let mut unknown = Vec::new();
    walk(&mut String::new(), body, typed, None, &mut unknown);
    unknown
}

/// Collects the paths of `input` that `typed` does not have. Values a type may leave out
/// when empty (`null`, `[]`, `{}`, `""`, `false`, `0`) are not reported: the round trip
/// cannot tell them from unknown fields.
///
/// With `reach` (the patch that made `input`), only what it reaches: below a key the patch
/// has an object for, only the keys of that object; anywhere else (a list, a value, an
/// object the patch replaced) all of it. Always in `input`'s order, so that what is found,
/// and its order, is what a walk of the whole finds.
fn walk(
    path: &mut String,
    input: &Value,
    typed: &Value,
    reach: Option<&Value>,
    unknown: &mut Vec<String>,
) {
    let reach = reach.and_then(Value::as_object);
    match (input, typed) {
        (Value::Object(input), Value::Object(typed)) => {
            for (key, value) in input {
                let below = match reach {
                    Some(patch) => match patch.get(key) {
                        Some(below) => Some(below),
                        None => continue,
                    },
                    None => None,
                };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match typed.get(key) {
                    Some(kept) => walk(path, value, kept, below, unknown),
                    None if !is_empty(value) => unknown.push(path.clone()),
                    None => {}
                }
                path.truncate(len);
            }
        }
        (Value::Array(input), Value::Array(typed)) if input.len() == typed.len() => {
            for (i, (value, kept)) in input.iter().zip(typed).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(path, value, kept, None, unknown);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_empty),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const WEBAPP: Expected<'static> = Expected {
        api_version: "apps.example.dev/v1",
        kind: "WebApp",
    };

    #[test]
    fn type_meta_is_checked_as_kube() {
        assert!(check_type_meta(&json!({}), WEBAPP).is_ok());
        assert!(
            check_type_meta(
                &json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp"}),
                WEBAPP
            )
            .is_ok()
        );
        assert_eq!(
            check_type_meta(&json!({"apiVersion": "apps.example.dev/v1beta1"}), WEBAPP).unwrap_err(),
            ApiError::BadRequest("the API version in the data (apps.example.dev/v1beta1) does not match the expected API version (apps.example.dev/v1)".into())
        );
        assert_eq!(
            check_type_meta(&json!({"kind": "Tenant"}), WEBAPP).unwrap_err(),
            ApiError::BadRequest("Tenant in version \"v1\" cannot be handled as a WebApp: no kind \"Tenant\" is registered for version \"apps.example.dev/v1\"".into())
        );
    }

    /// Where a patch made the object (of one that had no unknown fields), looking only
    /// where the patch reaches finds what a walk of the whole finds, in the same order.
    #[test]
    fn a_patch_is_looked_at_where_it_reaches() {
        let typed = json!({"metadata": {"name": "a", "annotations": {"x": "1"},
                "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"replicas": 1, "ports": [{"p": 1}], "container": {"image": "i"}}});
        let cases = [
            // Unknown fields the patch brings, at several depths, in a list it replaces,
            // and a value the patch sets where an object was.
            (
                json!({"spec": {"foo": 1, "container": {"imagex": "j"}, "ports": [{"p": 1, "q": 2}]},
                    "bar": {"baz": 1}, "metadata": {"annotations": {"y": "2"}}}),
                json!({"metadata": {"name": "a", "annotations": {"x": "1", "y": "2"},
                    "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
                "spec": {"replicas": 1, "ports": [{"p": 1, "q": 2}],
                    "container": {"image": "i", "imagex": "j"}, "foo": 1},
                "bar": {"baz": 1}}),
            ),
            // Nothing unknown: a label, a deletion.
            (
                json!({"metadata": {"labels": {"k": "v"}}, "spec": {"replicas": null}}),
                json!({"metadata": {"name": "a", "annotations": {"x": "1"}, "labels": {"k": "v"},
                    "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]},
                "spec": {"ports": [{"p": 1}], "container": {"image": "i"}}}),
            ),
        ];
        for (patch, patched) in cases {
            let find = |patch: Option<&Value>| {
                check_unknown_fields_within(
                    FieldValidation::Warn,
                    &patched,
                    patch,
                    || Some(typed.clone()),
                    &[],
                    WEBAPP,
                )
                .unwrap()
            };
            assert_eq!(find(Some(&patch)), find(None), "{patch}");
        }
    }

    #[test]
    fn unknown_fields_are_found_by_the_round_trip() {
        let body = json!({"spec": {"replicas": 1, "foo": 1, "ports": [{"x": "y", "p": 1}], "empty": {}},
            "metadata": {"labels": {"a": "b"}}});
        let typed = json!({"spec": {"replicas": 1, "ports": [{"p": 1}]}, "metadata": {"labels": {"a": "b"}}});
        let warnings = check_unknown_fields(
            FieldValidation::Warn,
            &body,
            || Some(typed.clone()),
            &[],
            WEBAPP,
        )
        .unwrap();
        assert_eq!(
            warnings,
            [
                "unknown field \"spec.foo\"",
                "unknown field \"spec.ports[0].x\""
            ]
        );
        assert_eq!(
            check_unknown_fields(FieldValidation::Strict, &body, || Some(typed.clone()), &["spec.replicas".into()], WEBAPP).unwrap_err(),
            ApiError::BadRequest("WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: duplicate field \"spec.replicas\", unknown field \"spec.foo\", unknown field \"spec.ports[0].x\"".into())
        );
        assert!(
            check_unknown_fields(
                FieldValidation::Ignore,
                &body,
                || unreachable!(),
                &["spec.replicas".into()],
                WEBAPP
            )
            .unwrap()
            .is_empty()
        );
    }
}
