//! Objects encoded once and shared: [`SharedObject`] (a JSON object as its encoding, with
//! derived encodings such as a Table row made on first use) and [`Memo`] (one per served
//! version).

use std::fmt;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON object shared by every watcher and list that sends it, held as its encoding
/// only: cloning is cheap, the bytes ([`SharedObject::parts`], [`SharedObject::json`]) are
/// what responses copy, and the decoded form ([`SharedObject::value`]) is made again where
/// a request needs it (a Table, YAML), so a cached object costs its JSON, not a tree of
/// maps. The object served in its storage version does not even cost that: it is the
/// stored bytes with the resourceVersion inserted ([`SharedObject::over`]).
#[derive(Clone)]
pub struct SharedObject(Arc<Inner>);

struct Inner {
    json: Encoding,
    /// Other encodings derived from the value (a Table row), by name.
    derived: Mutex<Vec<(String, Bytes)>>,
}

/// How an encoding is held.
enum Encoding {
    /// Bytes of its own.
    Own(Bytes),
    /// The bytes it was made from, shared, with one insertion: `base[..at]`, `insert`,
    /// `base[at..]`.
    Spliced {
        base: Bytes,
        at: usize,
        insert: Box<[u8]>,
    },
}

impl SharedObject {
    fn new(json: Encoding) -> SharedObject {
        SharedObject(Arc::new(Inner {
            json,
            derived: Mutex::new(Vec::new()),
        }))
    }

    /// `value` encoded, sharing `base`'s bytes when the encoding is `base` with one
    /// insertion: the stored object served in its own version, whose encoding differs
    /// only by its resourceVersion. Checked byte for byte here, so the encoding is always
    /// exactly `serde_json::to_vec(value)`; anything else gets bytes of its own.
    pub fn over(base: &Bytes, value: &Value) -> SharedObject {
        let json = serde_json::to_vec(value).unwrap_or_default();
        let extra = json.len().saturating_sub(base.len());
        if extra > 0 {
            let at = (json.iter().zip(base.iter()))
                .take_while(|(a, b)| a == b)
                .count();
            if json[at + extra..] == base[at..] {
                return SharedObject::new(Encoding::Spliced {
                    base: base.clone(),
                    at,
                    insert: json[at..at + extra].into(),
                });
            }
        }
        SharedObject::from_vec(json)
    }

    /// An encoding of its own, without the spare capacity the encoder's doubling left
    /// (cached objects keep it for long).
    fn from_vec(mut json: Vec<u8>) -> SharedObject {
        json.shrink_to_fit();
        SharedObject::new(Encoding::Own(Bytes::from(json)))
    }

    /// The object as compact JSON, as `serde_json::to_vec` writes its value, in up to three
    /// pieces to be written one after the other: what responses copy.
    pub fn parts(&self) -> [&[u8]; 3] {
        match &self.0.json {
            Encoding::Own(json) => [json, &[], &[]],
            Encoding::Spliced { base, at, insert } => [&base[..*at], insert, &base[*at..]],
        }
    }

    /// The object as compact JSON in one piece (made for the call when it is held in
    /// [`parts`](SharedObject::parts)).
    pub fn json(&self) -> Bytes {
        match &self.0.json {
            Encoding::Own(json) => json.clone(),
            Encoding::Spliced { .. } => Bytes::from(self.parts().concat()),
        }
    }

    /// The length of [`SharedObject::json`].
    pub fn len(&self) -> usize {
        self.parts().iter().map(|part| part.len()).sum()
    }

    /// Whether the encoding is empty (never, for an object).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value, decoded from its encoding.
    pub fn value(&self) -> Value {
        // The bytes were encoded from a `Value`, so they decode.
        serde_json::from_slice(&self.json()).unwrap_or(Value::Null)
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
        // A `Value` always encodes.
        SharedObject::from_vec(serde_json::to_vec(value).unwrap_or_default())
    }
}

impl From<Value> for SharedObject {
    fn from(value: Value) -> SharedObject {
        SharedObject::from(&value)
    }
}

impl fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.json()))
    }
}

impl fmt::Display for SharedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.json()))
    }
}

impl PartialEq for SharedObject {
    fn eq(&self, other: &SharedObject) -> bool {
        self.json() == other.json()
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
    /// The object in `version` of `group`, made by `make` the first time, sharing the
    /// bytes of `base` (the stored object) where it can ([`SharedObject::over`]).
    pub fn get_or_try_insert<E>(
        &self,
        group: &'static str,
        version: &str,
        base: &Bytes,
        make: impl FnOnce() -> Result<Value, E>,
    ) -> Result<SharedObject, E> {
        let mut versions = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let found = versions
            .iter()
            .find(|(g, v, _)| *g == group && v == version);
        if let Some((_, _, object)) = found {
            return Ok(object.clone());
        }
        let object = SharedObject::over(base, &make()?);
        versions.push((group, version.to_owned(), object.clone()));
        // Most objects are served in one version: no room kept for more.
        versions.shrink_to_fit();
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
        let base = Bytes::new();
        let v1 = memo
            .get_or_try_insert::<()>("", "v1", &base, || Ok(serde_json::json!(1)))
            .unwrap();
        let v1_again = memo
            .get_or_try_insert::<()>("", "v1", &base, || panic!("converted twice"))
            .unwrap();
        assert!(SharedObject::ptr_eq(&v1, &v1_again));
    }

    /// An encoding that is its base with one insertion shares the base's bytes; any other
    /// has its own; either way the bytes are exactly serde's.
    #[test]
    fn encodings_share_the_stored_bytes_when_one_insertion_apart() {
        let stored = serde_json::json!({"metadata": {"name": "a", "uid": "u"}, "spec": {"x": 1}});
        let base = Bytes::from(serde_json::to_vec(&stored).unwrap());
        let mut served = stored.clone();
        served["metadata"]["resourceVersion"] = "42".into();
        let cases = [
            (served, true),
            // Equal to the base: nothing inserted, so nothing to share.
            (stored.clone(), false),
            // Two changes: not one insertion.
            (
                serde_json::json!({"metadata": {"name": "b", "uid": "u", "resourceVersion": "4"}, "spec": {"x": 1}}),
                false,
            ),
            (serde_json::json!({"kind": "X"}), false),
        ];
        for (value, shares) in cases {
            let object = SharedObject::over(&base, &value);
            let expected = serde_json::to_vec(&value).unwrap();
            assert_eq!(&object.json()[..], &expected[..], "{value}");
            assert_eq!(object.parts().concat(), expected);
            assert_eq!(object.len(), expected.len());
            assert_eq!(object.value(), value);
            let [first, _, last] = object.parts();
            let shared = first.as_ptr() == base.as_ptr() && !last.is_empty();
            assert_eq!(shared, shares, "{value}");
        }
    }
}
