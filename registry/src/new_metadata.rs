//! What the server sets of a new object's metadata (kube's `rest.BeforeCreate` and
//! `FillObjectMetaSystemFields`): a name drawn from `generateName` when the object has
//! none, a uid, the creation timestamp and the first generation; what only the server sets
//! (`resourceVersion`, `selfLink`, the deletion fields) is cleared.
//!
//! On the typed object where its kind has one (kube's `meta.Accessor`): a create then
//! neither encodes the hub as JSON to edit it nor decodes it again. On the hub's JSON
//! otherwise (a dynamic kind's, kube's unstructured object). Debug builds check that
//! both give the same object.

use serde_json::Value;

use super::object::{self, meta_str, set_meta};
use kapi_core::error::ApiError;
use kapi_core::meta::{ObjectMeta, Time};

/// The metadata a create sets, drawn once (so that both ways set the same).
pub(super) struct NewMetadata {
    uid: String,
    created: String,
    /// The random part of a generated name.
    suffix: String,
    /// Whether the kind counts generations (then it starts at 1).
    generation: bool,
}

impl NewMetadata {
    pub(super) fn new(tracks_generation: bool) -> NewMetadata {
        NewMetadata {
            uid: object::new_uid(),
            created: object::now(),
            suffix: object::name_suffix(),
            generation: tracks_generation,
        }
    }

    /// Sets it on typed metadata; the prefix the name was drawn from, when it was.
    pub(super) fn set(&self, metadata: &mut ObjectMeta) -> Result<Option<String>, ApiError> {
        let empty = |value: &Option<String>| value.as_deref().is_none_or(str::is_empty);
        let prefix = match empty(&metadata.name) && !empty(&metadata.generate_name) {
            true => metadata.generate_name.clone(),
            false => None,
        };
        if let Some(prefix) = &prefix {
            metadata.name = Some(object::generated_name(prefix, &self.suffix));
        }
        metadata.uid = Some(self.uid.clone());
        let created: Time = serde_json::from_value(Value::String(self.created.clone()))
            .map_err(|e| ApiError::Internal(format!("the creation timestamp: {e}")))?;
        metadata.creation_timestamp = Some(created);
        metadata.generation = self.generation.then_some(1);
        metadata.resource_version = None;
        metadata.self_link = None;
        metadata.deletion_timestamp = None;
        metadata.deletion_grace_period_seconds = None;
        Ok(prefix)
    }

    /// Sets it on an object's JSON; the prefix the name was drawn from, when it was.
    pub(super) fn set_json(&self, json: &mut Value) -> Option<String> {
        let prefix = match meta_str(json, "name") {
            None => meta_str(json, "generateName").map(str::to_owned),
            Some(_) => None,
        };
        if let Some(prefix) = &prefix {
            let name = object::generated_name(prefix, &self.suffix);
            set_meta(json, "name", Some(Value::String(name)));
        }
        set_meta(json, "uid", Some(Value::String(self.uid.clone())));
        set_meta(json, "creationTimestamp", Some(self.created.clone().into()));
        set_meta(json, "generation", self.generation.then(|| Value::from(1)));
        for cleared in [
            "resourceVersion",
            "selfLink",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            set_meta(json, cleared, None);
        }
        prefix
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Both ways set the same metadata, whatever the object brought: a name or only a
    /// `generateName`, an empty name, fields only the server sets.
    #[test]
    fn typed_and_json_metadata_agree() {
        let objects = [
            json!({"name": "a", "generation": 7, "resourceVersion": "5"}),
            json!({"generateName": "web-", "selfLink": "/x", "uid": "theirs"}),
            json!({"name": "", "generateName": "web-", "deletionGracePeriodSeconds": 3,
                   "deletionTimestamp": "2020-01-01T00:00:00Z"}),
            json!({"name": "b", "generateName": "ignored-", "labels": {"k": "v"}}),
            json!({}),
        ];
        for tracks_generation in [true, false] {
            let new = NewMetadata::new(tracks_generation);
            for object in &objects {
                let mut typed: ObjectMeta = serde_json::from_value(object.clone()).unwrap();
                let typed_prefix = new.set(&mut typed).unwrap();
                let mut by_json = json!({"metadata": object});
                let json_prefix = new.set_json(&mut by_json);
                assert_eq!(typed_prefix, json_prefix, "{object}");
                let by_json: ObjectMeta =
                    serde_json::from_value(by_json["metadata"].clone()).unwrap();
                assert_eq!(typed, by_json, "{object}");
                assert_eq!(typed.uid.as_deref(), Some(new.uid.as_str()));
                assert!(typed.resource_version.is_none() && typed.self_link.is_none());
                assert_eq!(typed.generation, tracks_generation.then_some(1));
            }
        }
    }
}
