//! An API's objects judged against their version's schema and validation rules with no
//! server: what a controller, a CLI or a test can ask before it sends anything (kube-rs#1670
//! asks this of schema derives). The answer is the server's: the same compiled schemas
//! (from the generated OpenAPI v3 documents), defaults, checks and rules, in the order the
//! registry runs them, and a refusal is the `ApiError` the server would send (`422
//! Invalid`, one cause per field), so its `Status` is the one a client would read.
//!
//! What needs the server is not judged here: `metadata` beyond its schema (names, labels),
//! a kind's own cross-field checks (`Strategy::validate`), admission.

use k8s_openapi::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::{SchemaError, Schemas};
use kapi_core::api::OpenApiV3Document;
use kapi_core::error::ApiError;
use kapi_core::scheme::Scheme;

/// The compiled schemas of an API, to judge its objects with.
#[derive(Debug)]
pub struct Validator {
    schemas: Schemas,
}

impl Validator {
    /// The validator of the kinds of `scheme`, whose schemas `documents` (the generated
    /// `documents::SCHEMAS_V3`) hold.
    pub fn new(scheme: &Scheme, documents: &[OpenApiV3Document]) -> Result<Validator, SchemaError> {
        Ok(Validator {
            schemas: Schemas::compiled_in(scheme, documents)?,
        })
    }

    /// Judges a new object (kube's create): its schema (defaults first) and its rules.
    /// `Ok` holds the warnings the server would send (rules ratcheted on unchanged values).
    pub fn create<T: Resource + Serialize>(&self, object: &T) -> Result<Vec<String>, ApiError> {
        self.json(&typed(object)?, None)
    }

    /// Judges `object` replacing `old` (kube's update): also immutable fields and
    /// transition rules.
    pub fn update<T: Resource + Serialize>(
        &self,
        object: &T,
        old: &T,
    ) -> Result<Vec<String>, ApiError> {
        self.json(&typed(object)?, Some(&typed(old)?))
    }

    /// [`Validator::create`] or [`Validator::update`] of objects as JSON, which name
    /// their `apiVersion` and `kind`.
    pub fn json(&self, object: &Value, old: Option<&Value>) -> Result<Vec<String>, ApiError> {
        let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let schema = self.schemas.kind(group, version, kind).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "no kind {kind:?} is registered for version {api_version:?}"
            ))
        })?;
        let mut object = object.clone();
        // The registry's own judgement; no async workers to spare here.
        let (errors, warnings) = schema.judge(&mut object, old, |run| run());
        if errors.is_empty() {
            return Ok(warnings);
        }
        let name = (object.pointer("/metadata/name").and_then(Value::as_str)).unwrap_or_default();
        Err(ApiError::Invalid {
            group: group.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
            causes: errors,
        })
    }
}

/// `object` as JSON with its type's `apiVersion` and `kind`.
fn typed<T: Resource + Serialize>(object: &T) -> Result<Value, ApiError> {
    let mut json = serde_json::to_value(object).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if let Some(fields) = json.as_object_mut() {
        fields.insert("apiVersion".into(), T::API_VERSION.into());
        fields.insert("kind".into(), T::KIND.into());
    }
    Ok(json)
}
