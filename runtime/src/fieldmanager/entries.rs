//! `metadata.managedFields`: the entries as clients see them, read into [`Managers`] and
//! written back (k8s.io/apimachinery `managedfields`: `DecodeManagedFields`,
//! `sortEncodedManagedFields`, `ValidateManagedFields`, `capManagers`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::set::Set;
use super::updater::{ManagerId, Managers, Operation, VersionedSet};
use crate::error::{FieldError, FieldErrorType};

/// kube's `FieldManagerMaxLength`.
pub const MAX_MANAGER_LENGTH: usize = 128;
/// kube's `MaxSubresourceNameLength`.
const MAX_SUBRESOURCE_LENGTH: usize = 256;
/// kube's `DefaultMaxUpdateManagers`: more update entries are merged into `ancient-changes`.
const MAX_UPDATE_MANAGERS: usize = 10;

/// The managers of an object and when each last changed its fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entries {
    /// Every manager's fields.
    pub managers: Managers,
    /// RFC 3339 times, per manager (absent for an entry that never changed anything).
    pub times: BTreeMap<ManagerId, String>,
}

/// The field path of entry `index`'s `field`.
fn path(index: usize, field: &str) -> String {
    format!("metadata.managedFields[{index}].{field}")
}

/// kube's `ValidateManagedFields` (a client may write `managedFields`), and what must hold
/// to read an entry at all: an `apiVersion`, and `fieldsV1` kube can decode.
pub fn validate(entries: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(entries) = entries.as_array() else {
        return errors;
    };
    for (index, entry) in entries.iter().enumerate() {
        let text = |field: &str| entry.get(field).and_then(Value::as_str).unwrap_or("");
        match text("operation") {
            "" => errors.push(FieldError::new(
                FieldErrorType::Required,
                path(index, "operation"),
                None,
                "must not be empty",
            )),
            "Apply" | "Update" => {}
            other => errors.push(FieldError::new(
                FieldErrorType::NotSupported,
                path(index, "operation"),
                Some(json!(other)),
                "supported values: \"Apply\", \"Update\"",
            )),
        }
        let fields_type = text("fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                path(index, "fieldsType"),
                Some(json!(fields_type)),
                "must be `FieldsV1`",
            ));
        }
        errors.extend(validate_manager(text("manager"), &path(index, "manager")));
        if text("subresource").len() > MAX_SUBRESOURCE_LENGTH {
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                path(index, "subresource"),
                None,
                format!("may not be more than {MAX_SUBRESOURCE_LENGTH} bytes"),
            ));
        }
        if text("apiVersion").is_empty() && is_entry(entry) {
            errors.push(FieldError::new(
                FieldErrorType::Required,
                path(index, "apiVersion"),
                None,
                "must not be empty",
            ));
        }
        if let Some(fields) = entry.get("fieldsV1")
            && let Err(error) = Set::from_fields_v1(fields)
        {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                path(index, "fieldsV1"),
                None,
                error,
            ));
        }
    }
    errors
}

/// kube's `ValidateFieldManager`: at most 128 bytes, printable.
pub fn validate_manager(manager: &str, field: &str) -> Vec<FieldError> {
    if manager.len() > MAX_MANAGER_LENGTH {
        return vec![FieldError::new(
            FieldErrorType::TooLong,
            field,
            None,
            format!("may not be more than {MAX_MANAGER_LENGTH} bytes"),
        )];
    }
    match manager.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, c)) => vec![FieldError::new(
            FieldErrorType::Invalid,
            field,
            Some(json!(manager)),
            format!(
                "invalid character U+{:04X} (at position {at})",
                u32::from(c)
            ),
        )],
        None => Vec::new(),
    }
}

/// An entry that is not `{}` (the empty entry resets ownership).
fn is_entry(entry: &Value) -> bool {
    entry.as_object().is_some_and(|e| !e.is_empty())
}

/// Whether `managedFields` asks for ownership to be forgotten: `[]` or `[{}]`.
pub fn is_reset(entries: &Value) -> bool {
    match entries.as_array().map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => !is_entry(only),
        _ => false,
    }
}

/// Reads valid entries (see [`validate`]); a later entry of the same manager wins.
pub fn decode(entries: &Value) -> Entries {
    let mut out = Entries::default();
    for entry in entries.as_array().into_iter().flatten() {
        let text = |field: &str| entry.get(field).and_then(Value::as_str).unwrap_or("");
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => continue,
        };
        let api_version = text("apiVersion").to_owned();
        let Ok(set) = Set::from_fields_v1(entry.get("fieldsV1").unwrap_or(&json!({}))) else {
            continue;
        };
        let id = ManagerId {
            manager: text("manager").to_owned(),
            operation,
            api_version: (operation == Operation::Update).then(|| api_version.clone()),
            subresource: text("subresource").to_owned(),
        };
        if let Some(time) = entry.get("time").and_then(Value::as_str) {
            out.times.insert(id.clone(), time.to_owned());
        }
        out.managers.insert(id, VersionedSet { set, api_version });
    }
    out
}

/// The entries as `managedFields`, in kube's order (applies first, then by time, manager,
/// version, subresource); `None` when no manager owns anything.
pub fn encode(entries: &Entries) -> Option<Value> {
    let mut list: Vec<(&ManagerId, &VersionedSet, Option<&String>)> = (entries.managers.iter())
        .filter(|(_, owned)| !owned.set.is_empty())
        .map(|(id, owned)| (id, owned, entries.times.get(id)))
        .collect();
    if list.is_empty() {
        return None;
    }
    list.sort_by(|a, b| {
        (a.0.operation.as_str().cmp(b.0.operation.as_str()))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.0.manager.cmp(&b.0.manager))
            .then_with(|| a.1.api_version.cmp(&b.1.api_version))
            .then_with(|| a.0.subresource.cmp(&b.0.subresource))
    });
    let encoded = list
        .into_iter()
        .map(|(id, owned, time)| {
            let mut entry = Map::new();
            entry.insert("manager".into(), json!(id.manager));
            entry.insert("operation".into(), json!(id.operation.as_str()));
            entry.insert("apiVersion".into(), json!(owned.api_version));
            if let Some(time) = time {
                entry.insert("time".into(), json!(time));
            }
            entry.insert("fieldsType".into(), json!("FieldsV1"));
            entry.insert("fieldsV1".into(), owned.set.to_fields_v1());
            if !id.subresource.is_empty() {
                entry.insert("subresource".into(), json!(id.subresource));
            }
            Value::Object(entry)
        })
        .collect();
    Some(Value::Array(encoded))
}

/// kube's `capManagers`: past ten update entries, the oldest are merged, per version, into
/// one `ancient-changes` entry.
pub fn cap_update_managers(entries: &mut Entries) {
    let mut updates: Vec<ManagerId> = (entries.managers.keys())
        .filter(|id| id.operation == Operation::Update)
        .cloned()
        .collect();
    if updates.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    // Oldest first (no time counts as the oldest).
    updates.sort_by(|a, b| {
        entries
            .times
            .get(a)
            .cmp(&entries.times.get(b))
            .then(a.cmp(b))
    });
    let mut count = updates.len();
    let mut first_of_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    for id in updates {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries.managers[&id].api_version.clone();
        let bucket = ManagerId {
            manager: "ancient-changes".into(),
            operation: Operation::Update,
            api_version: Some(version.clone()),
            subresource: String::new(),
        };
        let Some(first) = first_of_version.get(&version) else {
            first_of_version.insert(version, id);
            continue;
        };
        if id == bucket {
            continue;
        }
        // The bucket starts as the version's oldest entry.
        if !entries.managers.contains_key(&bucket)
            && let Some(owned) = entries.managers.remove(first)
        {
            entries.times.remove(first);
            entries.managers.insert(bucket.clone(), owned);
        }
        let merged = entries
            .managers
            .remove(&id)
            .map(|o| o.set)
            .unwrap_or_default();
        match entries.times.remove(&id) {
            Some(time) => entries.times.insert(bucket.clone(), time),
            None => entries.times.remove(&bucket),
        };
        if let Some(owned) = entries.managers.get_mut(&bucket) {
            owned.set = owned.set.union(&merged);
        }
        count -= 1;
    }
}
