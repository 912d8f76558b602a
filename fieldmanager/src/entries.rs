//! `metadata.managedFields`: the entries as clients see them, read into [`Managers`] and
//! written back (k8s.io/apimachinery `managedfields`: `DecodeManagedFields`,
//! `sortEncodedManagedFields`, `ValidateManagedFields`, `capManagers`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::set::Set;
use super::updater::{ManagerId, Managers, Operation, VersionedSet};
use kapi_core::error::{FieldError, FieldErrorType};
use kapi_core::meta::{FieldsV1, ManagedFieldsEntry, Time};

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

/// What a write leaves in `managedFields`: its entries (`None`: the field goes), as JSON
/// for an object held as JSON ([`Managed::into_json`]) or as the typed entries of a
/// compiled kind's metadata ([`Managed::into_typed`]).
#[derive(Debug, Default)]
pub struct Managed(pub Option<Entries>);

impl Managed {
    /// The entries as JSON ([`encode`]).
    pub fn into_json(self) -> Option<Value> {
        self.0.as_ref().and_then(encode)
    }

    /// The entries as typed ([`encode_typed`]; debug builds check they are the JSON's).
    pub fn into_typed(self) -> Result<Option<Vec<ManagedFieldsEntry>>, String> {
        let typed = match &self.0 {
            Some(entries) => encode_typed(entries),
            None => Ok(None),
        };
        #[cfg(debug_assertions)]
        if let Ok(typed) = &typed {
            let by_json = self.into_json().map(serde_json::from_value).transpose();
            debug_assert_eq!(
                Ok(typed),
                by_json.as_ref().map_err(ToString::to_string),
                "typed managedFields are not the JSON's"
            );
        }
        typed
    }
}

/// The entries that own something, in kube's order (applies first, then by time,
/// manager, version, subresource).
fn in_order(entries: &Entries) -> Vec<(&ManagerId, &VersionedSet, Option<&String>)> {
    let mut list: Vec<(&ManagerId, &VersionedSet, Option<&String>)> = (entries.managers.iter())
        .filter(|(_, owned)| !owned.set.is_empty())
        .map(|(id, owned)| (id, owned, entries.times.get(id)))
        .collect();
    list.sort_by(|a, b| {
        (a.0.operation.as_str().cmp(b.0.operation.as_str()))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.0.manager.cmp(&b.0.manager))
            .then_with(|| a.1.api_version.cmp(&b.1.api_version))
            .then_with(|| a.0.subresource.cmp(&b.0.subresource))
    });
    list
}

/// [`encode`] as the typed entries a compiled kind's metadata holds, built as they are
/// rather than decoded from that JSON (which hashed every entry's keys twice and rebuilt
/// its `fieldsV1`). Fails on a time that is not RFC 3339, which only a client can send (a
/// compiled kind's body, decoded into its type, was refused for it already).
pub fn encode_typed(entries: &Entries) -> Result<Option<Vec<ManagedFieldsEntry>>, String> {
    let list = in_order(entries);
    if list.is_empty() {
        return Ok(None);
    }
    let typed = list.into_iter().map(|(id, owned, time)| {
        let time = (time.map(|t| t.parse().map(Time)).transpose())
            .map_err(|e| format!("the managedFields time of {:?}: {e}", id.manager))?;
        Ok(ManagedFieldsEntry {
            api_version: Some(owned.api_version.clone()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(owned.set.to_fields_v1())),
            manager: Some(id.manager.clone()),
            operation: Some(id.operation.as_str().into()),
            subresource: (!id.subresource.is_empty()).then(|| id.subresource.clone()),
            time,
        })
    });
    typed.collect::<Result<Vec<_>, String>>().map(Some)
}

/// The entries as `managedFields`, in kube's order (applies first, then by time, manager,
/// version, subresource); `None` when no manager owns anything.
pub fn encode(entries: &Entries) -> Option<Value> {
    let list = in_order(entries);
    if list.is_empty() {
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed entries are the JSON entries decoded: in kube's order, an entry without a
    /// time or a subresource without them, `fieldsV1` as it is; a time that is not RFC
    /// 3339 is refused; no owner, no entries.
    #[test]
    fn typed_entries_are_the_json_entries() {
        let sent = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Apply", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}},
            {"manager": "c", "operation": "Update", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}, "subresource": "status"}
        ]);
        let entries = decode(&sent);
        let typed = encode_typed(&entries).unwrap().expect("entries");
        let by_json: Vec<ManagedFieldsEntry> =
            serde_json::from_value(encode(&entries).expect("entries")).unwrap();
        assert_eq!(typed, by_json);
        let managers: Vec<_> = typed
            .iter()
            .map(|e| e.manager.as_deref().unwrap())
            .collect();
        assert_eq!(managers, ["a", "c", "b"]);
        assert_eq!(typed[1].subresource.as_deref(), Some("status"));
        assert_eq!(typed[0].time, None);

        let mut bad = entries.clone();
        for time in bad.times.values_mut() {
            *time = "yesterday".into();
        }
        assert!(encode_typed(&bad).is_err());
        assert_eq!(encode_typed(&Entries::default()), Ok(None));
        assert_eq!(Managed(None).into_typed(), Ok(None));
    }
}
