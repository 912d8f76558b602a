//! Objects encoded once and shared: [`SharedObject`] (a JSON object as its encoding, with
//! derived encodings such as a Table row made on first use) and [`Memo`] (one per served
//! version).

use std::fmt;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON object shared by every watcher and list that sends it, held as its encoding
/// only: cloning is cheap, the bytes ([`SharedObject::json`]) are what responses copy, and
/// the decoded form ([`SharedObject::value`]) is made again where a request needs it (a
/// Table, YAML), so a cached object costs its JSON, not a tree of maps.
#[derive(Clone)]
pub struct SharedObject(Arc<Inner>);

struct Inner {
    json: Bytes,
    /// Other encodings derived from the value (a Table row), by name.
    derived: Mutex<Vec<(String, Bytes)>>,
}

impl SharedObject {
    /// The object as compact JSON, as `serde_json::to_vec` writes its value.
    pub fn json(&self) -> Bytes {
        self.0.json.clone()
    }

    /// The length of [`SharedObject::json`].
    pub fn len(&self) -> usize {
        self.0.json.len()
    }

    /// Whether the encoding is empty (never, for an object).
    pub fn is_empty(&self) -> bool {
        self.0.json.is_empty()
    }

    /// The value, decoded from its encoding.
    pub fn value(&self) -> Value {
        // The bytes were encoded from a `Value`, so they decode.
        serde_json::from_slice(&self.0.json).unwrap_or(Value::Null)
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

    /// Whether two handles share one encoding.
    pub fn ptr_eq(a: &SharedObject, b: &SharedObject) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl From<&Value> for SharedObject {
    fn from(value: &Value) -> SharedObject {
        // A `Value` always encodes. Kept for long: without the spare capacity the
        // encoder's doubling left.
        let mut json = serde_json::to_vec(value).unwrap_or_default();
        json.shrink_to_fit();
        SharedObject(Arc::new(Inner {
            json: Bytes::from(json),
            derived: Mutex::new(Vec::new()),
        }))
    }
}

impl From<Value> for SharedObject {
    fn from(value: Value) -> SharedObject {
        SharedObject::from(&value)
    }
}

impl fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0.json))
    }
}

impl fmt::Display for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0.json))
    }
}

impl PartialEq for SharedObject {
    fn eq(&self, other: &SharedObject) -> bool {
        self.0.json == other.0.json
    }
}

impl PartialEq<Value> for SharedObject {
    fn eq(&self, other: &Value) -> bool {
        &self.value() == other
    }
}

impl Serialize for SharedObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
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

/// What a [`Derived`] value is kept under: a kind's group and name.
pub type DerivedKey = (&'static str, &'static str);

/// Values derived from an object once per key (a kind's group and name), kept beside it.
#[derive(Default)]
pub struct Derived(Mutex<Vec<(DerivedKey, Arc<Value>)>>);

impl Derived {
    /// The value under `key`, made by `make` the first time.
    pub fn get_or_try_insert<E>(
        &self,
        key: DerivedKey,
        make: impl FnOnce() -> Result<Value, E>,
    ) -> Result<Arc<Value>, E> {
        let mut derived = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = derived.iter().find(|(k, _)| *k == key) {
            return Ok(value.clone());
        }
        let value = Arc::new(make()?);
        derived.push((key, value.clone()));
        Ok(value)
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
