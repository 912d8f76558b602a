//! Objects encoded once and shared: [`SharedObject`] (a JSON value with its lazily computed
//! encodings: JSON, and derived ones such as a Table row) and [`Memo`] (one per served
//! version).

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON object shared by every watcher that sends it: cloning is cheap, and its
/// encoding ([`SharedObject::json`]) is computed at most once.
#[derive(Clone)]
pub struct SharedObject(Arc<Inner>);

struct Inner {
    value: Value,
    json: OnceLock<Bytes>,
    /// Other encodings derived from the value (a Table row), by name.
    derived: Mutex<Vec<(String, Bytes)>>,
}

impl SharedObject {
    /// The value.
    pub fn value(&self) -> &Value {
        &self.0.value
    }

    /// The value as compact JSON, encoded on first use and shared afterwards.
    pub fn json(&self) -> Bytes {
        (self.0.json.get_or_init(|| {
            // A `Value` always encodes.
            Bytes::from(serde_json::to_vec(&self.0.value).unwrap_or_default())
        }))
        .clone()
    }

    /// An encoding derived from the value under `name` (such as its Table row), made by
    /// `make` the first time it returns one and shared afterwards.
    pub fn encoded_as(&self, name: &str, make: impl FnOnce() -> Option<Bytes>) -> Option<Bytes> {
        let mut derived = self.0.derived.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, bytes)) = derived.iter().find(|(n, _)| n == name) {
            return Some(bytes.clone());
        }
        let bytes = make()?;
        derived.push((name.to_owned(), bytes.clone()));
        Some(bytes)
    }

    /// Whether two handles share one value (and so one encoding).
    pub fn ptr_eq(a: &SharedObject, b: &SharedObject) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl From<Value> for SharedObject {
    fn from(value: Value) -> SharedObject {
        SharedObject(Arc::new(Inner {
            value,
            json: OnceLock::new(),
            derived: Mutex::new(Vec::new()),
        }))
    }
}

impl Deref for SharedObject {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl fmt::Display for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl PartialEq for SharedObject {
    fn eq(&self, other: &SharedObject) -> bool {
        self.0.value == other.0.value
    }
}

impl PartialEq<Value> for SharedObject {
    fn eq(&self, other: &Value) -> bool {
        &self.0.value == other
    }
}

impl Serialize for SharedObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SharedObject, D::Error> {
        Value::deserialize(deserializer).map(SharedObject::from)
    }
}

/// One [`SharedObject`] per served group and version, computed on first use. Keyed by
/// both: kinds stored with another (`events.k8s.io` and core Events) share cached objects.
#[derive(Default)]
pub struct Memo(Mutex<Vec<(&'static str, String, SharedObject)>>);

impl Memo {
    /// The object in `version` of `group`, made by `make` the first time.
    pub fn get_or_try_insert<E>(
        &self,
        group: &'static str,
        version: &str,
        make: impl FnOnce() -> Result<Value, E>,
    ) -> Result<SharedObject, E> {
        let mut versions = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let found = versions
            .iter()
            .find(|(g, v, _)| *g == group && v == version);
        if let Some((_, _, object)) = found {
            return Ok(object.clone());
        }
        let object = SharedObject::from(make()?);
        versions.push((group, version.to_owned(), object.clone()));
        Ok(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_made_once_and_shared() {
        let object = SharedObject::from(serde_json::json!({"a": 1}));
        let copy = object.clone();
        assert_eq!(&object.json()[..], br#"{"a":1}"#);
        assert_eq!(object.json().as_ptr(), copy.json().as_ptr(), "one encoding");
        let row = object.encoded_as("row", || Some(Bytes::from_static(b"row")));
        assert_eq!(row.as_deref(), Some(&b"row"[..]));
        let again = copy.encoded_as("row", || panic!("made twice"));
        assert_eq!(again, row);
        assert_eq!(
            object.encoded_as("other", || None),
            None,
            "failures are not kept"
        );
        let memo = Memo::default();
        let v1 = memo
            .get_or_try_insert::<()>("", "v1", || Ok(serde_json::json!(1)))
            .unwrap();
        let v1_again = memo
            .get_or_try_insert::<()>("", "v1", || panic!("converted twice"))
            .unwrap();
        assert!(SharedObject::ptr_eq(&v1, &v1_again));
    }
}
