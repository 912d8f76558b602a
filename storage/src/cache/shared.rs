//! Objects encoded once and shared: [`SharedObject`] (a JSON object as its encoding, with
//! derived encodings such as a Table row made on first use) and [`Memo`] (one per served
//! version).

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::CachedObject;

/// A JSON object shared by every watcher and list that sends it, held as its encoding
/// only: cloning is cheap, the bytes ([`SharedObject::parts`], [`SharedObject::json`]) are
/// what responses copy, and the decoded form ([`SharedObject::value`]) is made again where
/// a request needs it (a Table, YAML), so a cached object costs its JSON, not a tree of
/// maps. The object served in its storage version does not even cost that: it is the
/// cached object's stored bytes with the resourceVersion inserted ([`CachedObject::served`]).
#[derive(Clone)]
pub struct SharedObject(Repr);

#[derive(Clone)]
enum Repr {
    /// An encoding held on its own.
    Encoded(Arc<Inner>),
    /// A cached object in the version its [`Splice`] serves: its stored bytes with one
    /// insertion, kept with the cached object (no encoding of its own per object served).
    Stored(Arc<CachedObject>, Arc<Splice>),
}

struct Inner {
    json: Encoding,
    /// Other encodings derived from the value (a Table row), by name.
    derived: Derived<Name, Bytes>,
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

/// A cached object served in one version (its storage version) as its stored bytes with
/// one insertion (its resourceVersion), checked byte for byte when it was made.
pub struct Splice {
    group: &'static str,
    version: Box<str>,
    at: usize,
    insert: Box<[u8]>,
    /// Other encodings derived from the served object (a Table row), by name.
    derived: Derived<Name, Bytes>,
}

/// The name of a derived encoding, held once in the process: every cached object that
/// keeps an encoding under a name points at the same string, rather than each holding a
/// copy of it (at 10k objects with their Table cells, the copies cost more than the
/// cells).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Name(Arc<str>);

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for Name {
    fn from(name: String) -> Name {
        // Names are few (per kind, version and output form), so the set stays small.
        static NAMES: LazyLock<Mutex<HashSet<Name>>> = LazyLock::new(Mutex::default);
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(name) = names.get(name.as_str()) {
            return name.clone();
        }
        let interned = Name(Arc::from(name));
        names.insert(interned.clone());
        interned
    }
}

/// Where `json` (an encoding of a value) is `base` with one insertion, the insertion's
/// offset and length.
fn insertion(base: &[u8], json: &[u8]) -> Option<(usize, usize)> {
    let extra = json.len().checked_sub(base.len()).filter(|n| *n > 0)?;
    let at = (json.iter().zip(base.iter()))
        .take_while(|(a, b)| a == b)
        .count();
    (json[at + extra..] == base[at..]).then_some((at, extra))
}

impl SharedObject {
    /// `cached` in the version `splice` (its own) serves.
    pub(super) fn stored(cached: Arc<CachedObject>, splice: Arc<Splice>) -> SharedObject {
        SharedObject(Repr::Stored(cached, splice))
    }

    fn new(json: Encoding) -> SharedObject {
        SharedObject(Repr::Encoded(Arc::new(Inner {
            json,
            derived: Derived::default(),
        })))
    }

    /// `value` encoded, sharing `base`'s bytes when the encoding is `base` with one
    /// insertion: the stored object served in its own version, whose encoding differs
    /// only by its resourceVersion. Checked byte for byte here, so the encoding is always
    /// exactly `serde_json::to_vec(value)`; anything else gets bytes of its own.
    pub fn over(base: &Bytes, value: &Value) -> SharedObject {
        SharedObject::over_json(base, serde_json::to_vec(value).unwrap_or_default())
    }

    /// [`SharedObject::over`] for an encoding already made.
    fn over_json(base: &Bytes, json: Vec<u8>) -> SharedObject {
        match insertion(base, &json) {
            Some((at, extra)) => SharedObject::new(Encoding::Spliced {
                base: base.clone(),
                at,
                insert: json[at..at + extra].into(),
            }),
            None => SharedObject::from_vec(json),
        }
    }

    /// An encoding of its own ([`kept`]: cached objects keep it for long).
    fn from_vec(json: Vec<u8>) -> SharedObject {
        SharedObject::new(Encoding::Own(kept(json)))
    }

    /// The object as compact JSON, as `serde_json::to_vec` writes its value, in up to three
    /// pieces to be written one after the other: what responses copy.
    pub fn parts(&self) -> [&[u8]; 3] {
        match &self.0 {
            Repr::Encoded(inner) => match &inner.json {
                Encoding::Own(json) => [json, &[], &[]],
                Encoding::Spliced { base, at, insert } => [&base[..*at], insert, &base[*at..]],
            },
            Repr::Stored(cached, splice) => {
                let base = &cached.kv.value;
                [&base[..splice.at], &splice.insert, &base[splice.at..]]
            }
        }
    }

    /// The object's `metadata` as compact JSON, in up to three pieces, when it is known
    /// where the encoding holds it without decoding it: for a cached object served in its
    /// storage version (its stored bytes, with the resourceVersion inserted where it
    /// falls within them). `None` otherwise.
    pub fn metadata_parts(&self) -> Option<[&[u8]; 3]> {
        let Repr::Stored(cached, splice) = &self.0 else {
            return None;
        };
        let range = cached.metadata()?;
        let (start, end) = (range.start as usize, range.end as usize);
        let base = &cached.kv.value;
        Some(if start < splice.at && splice.at < end {
            [
                &base[start..splice.at],
                &splice.insert,
                &base[splice.at..end],
            ]
        } else {
            [&base[start..end], &[], &[]]
        })
    }

    /// The object as compact JSON in one piece (made for the call when it is held in
    /// [`parts`](SharedObject::parts)).
    pub fn json(&self) -> Bytes {
        match &self.0 {
            Repr::Encoded(inner) => match &inner.json {
                Encoding::Own(json) => json.clone(),
                Encoding::Spliced { .. } => Bytes::from(self.parts().concat()),
            },
            Repr::Stored(..) => Bytes::from(self.parts().concat()),
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
        self.try_encoded_as(name, || make().ok_or(())).ok()
    }

    /// [`encoded_as`](SharedObject::encoded_as) for an encoding whose making may fail:
    /// the failure is returned, and nothing kept.
    pub fn try_encoded_as<E>(
        &self,
        name: &str,
        make: impl FnOnce() -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        let derived = match &self.0 {
            Repr::Encoded(inner) => &inner.derived,
            Repr::Stored(_, splice) => &splice.derived,
        };
        derived.get_or_try_insert(name, make)
    }

    /// Whether two handles share one encoding.
    pub fn ptr_eq(a: &SharedObject, b: &SharedObject) -> bool {
        match (&a.0, &b.0) {
            (Repr::Encoded(a), Repr::Encoded(b)) => Arc::ptr_eq(a, b),
            (Repr::Stored(a, _), Repr::Stored(b, _)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// `bytes` to be kept for long (a cached object's encoding, or one derived from it),
/// without the spare capacity an encoder's doubling left: that can be as much again.
pub fn kept(mut bytes: Vec<u8>) -> Bytes {
    bytes.shrink_to_fit();
    Bytes::from(bytes)
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

/// What [`Memo::serve`] found: the version the object's splice serves, or another.
pub(super) enum Served {
    Spliced(Arc<Splice>),
    Memo(SharedObject),
}

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
        let mut versions = self.lock();
        if let Some(object) = find(&versions, group, version) {
            return Ok(object);
        }
        let object = SharedObject::over(base, &make()?);
        keep(&mut versions, group, version, &object);
        Ok(object)
    }

    /// The object at `base` in `version` of `group`: the version `splice` serves (set
    /// here by the first version whose encoding is `base` with one insertion), else the
    /// memoized encoding, made by `make` the first time.
    pub(super) fn serve<E>(
        &self,
        splice: &OnceLock<Arc<Splice>>,
        group: &'static str,
        version: &str,
        base: &Bytes,
        make: impl FnOnce() -> Result<Value, E>,
    ) -> Result<Served, E> {
        let serving = |splice: &OnceLock<Arc<Splice>>| {
            (splice.get())
                .filter(|s| s.group == group && *s.version == *version)
                .map(|s| Served::Spliced(Arc::clone(s)))
        };
        if let Some(served) = serving(splice) {
            return Ok(served);
        }
        let mut versions = self.lock();
        // Made by another caller while this one waited for the lock.
        if let Some(served) = serving(splice) {
            return Ok(served);
        }
        if let Some(object) = find(&versions, group, version) {
            return Ok(Served::Memo(object));
        }
        let json = serde_json::to_vec(&make()?).unwrap_or_default();
        if splice.get().is_none()
            && let Some((at, extra)) = insertion(base, &json)
        {
            let made = Arc::new(Splice {
                group,
                version: version.into(),
                at,
                insert: json[at..at + extra].into(),
                derived: Derived::default(),
            });
            // The slot is only set under this lock: it is free.
            let _ = splice.set(Arc::clone(&made));
            return Ok(Served::Spliced(made));
        }
        let object = SharedObject::over_json(base, json);
        keep(&mut versions, group, version, &object);
        Ok(Served::Memo(object))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(&'static str, String, SharedObject)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn find(
    versions: &[(&'static str, String, SharedObject)],
    group: &str,
    version: &str,
) -> Option<SharedObject> {
    (versions.iter())
        .find(|(g, v, _)| *g == group && v == version)
        .map(|(_, _, object)| object.clone())
}

fn keep(
    versions: &mut Vec<(&'static str, String, SharedObject)>,
    group: &'static str,
    version: &str,
    object: &SharedObject,
) {
    versions.push((group, version.to_owned(), object.clone()));
    // Most objects are served in one version: no room kept for more.
    versions.shrink_to_fit();
}

/// What a [`Derived`] value of a cached object is kept under: a kind's group and name.
pub type DerivedKey = (&'static str, &'static str);

/// Values derived from an object once per key, kept beside it: a cached object's
/// selectable fields per kind reading it, a served object's Table rows by name.
pub struct Derived<K = DerivedKey, V = Arc<Value>>(Mutex<Vec<(K, V)>>);

impl<K, V> Default for Derived<K, V> {
    fn default() -> Self {
        Derived(Mutex::new(Vec::new()))
    }
}

impl<K, V: Clone> Derived<K, V> {
    /// The value under `key`, made by `make` the first time it succeeds.
    pub fn get_or_try_insert<Q, E>(
        &self,
        key: &Q,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E>
    where
        K: Borrow<Q> + From<Q::Owned>,
        Q: PartialEq + ToOwned + ?Sized,
    {
        let mut derived = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = derived.iter().find(|(k, _)| k.borrow() == key) {
            return Ok(value.clone());
        }
        let value = make()?;
        derived.push((K::from(key.to_owned()), value.clone()));
        // Most objects keep one derived value: no room kept for more.
        derived.shrink_to_fit();
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

    /// Objects that keep an encoding under one name share that name's string.
    #[test]
    fn derived_names_are_held_once() {
        let a = Name::from(String::from("table-cells:g:K:v1"));
        let b = Name::from(String::from("table-cells:g:K:v1"));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let other = Name::from(String::from("protobuf"));
        assert!(!Arc::ptr_eq(&a.0, &other.0));
        let derived: Derived<Name, u8> = Derived::default();
        assert_eq!(
            derived.get_or_try_insert::<str, ()>("protobuf", || Ok(1)),
            Ok(1)
        );
        let held = derived.0.lock().unwrap();
        assert!(
            Arc::ptr_eq(&held[0].0.0, &other.0),
            "the entry holds the shared name"
        );
        assert_eq!(held.capacity(), 1, "no room kept for more");
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

    /// The first version whose encoding is the stored bytes with one insertion is served
    /// from the cached object itself, every time the same handle; another version, or the
    /// same version of another group (kinds stored together), gets an encoding of its own;
    /// either way the bytes are serde's, and derived encodings (Table rows) are kept.
    #[test]
    fn the_storage_version_is_served_from_the_cached_object() {
        let stored = serde_json::json!({"apiVersion": "g/v1", "metadata": {"name": "a"}});
        let cached = CachedObject::new(crate::KeyValue {
            key: "/k".into(),
            value: Bytes::from(serde_json::to_vec(&stored).unwrap()),
            create_revision: 7,
            mod_revision: 7,
        });
        let with_version = |api_version: &str| {
            let mut value = stored.clone();
            value["apiVersion"] = api_version.into();
            value["metadata"]["resourceVersion"] = "7".into();
            value
        };
        // Served first in another version: that one is not the splice's.
        let beta = (cached.served::<()>("g", "v1beta1", || Ok(with_version("g/v1beta1")))).unwrap();
        let v1 = (cached.served::<()>("g", "v1", || Ok(with_version("g/v1")))).unwrap();
        let again = (cached.served::<()>("g", "v1", || panic!("converted twice"))).unwrap();
        let beta_again = (cached.served::<()>("g", "v1beta1", || panic!("twice"))).unwrap();
        let other_group = (cached.served::<()>("h", "v1", || Ok(with_version("h/v1")))).unwrap();
        assert!(SharedObject::ptr_eq(&v1, &again));
        assert!(SharedObject::ptr_eq(&beta, &beta_again));
        assert!(matches!(v1.0, Repr::Stored(..)), "v1 is spliced");
        assert!(matches!(beta.0, Repr::Encoded(_)));
        assert!(matches!(other_group.0, Repr::Encoded(_)));
        for (object, api_version) in [(&v1, "g/v1"), (&beta, "g/v1beta1"), (&other_group, "h/v1")] {
            let expected = serde_json::to_vec(&with_version(api_version)).unwrap();
            assert_eq!(object.parts().concat(), expected);
            assert_eq!(&object.json()[..], &expected[..]);
            assert_eq!(object.len(), expected.len());
        }
        let row = v1.encoded_as("row", || Some(Bytes::from_static(b"r")));
        assert_eq!(again.encoded_as("row", || panic!("made twice")), row);
    }

    #[test]
    fn metadata_is_found_in_the_stored_bytes_with_its_resource_version() {
        let stored = serde_json::json!({
            "apiVersion": "g/v1",
            "metadata": {"labels": {"a": "b"}, "name": "a", "uid": "u"},
            "spec": {"metadata": {"name": "not this one"}},
        });
        let cached = CachedObject::new(crate::KeyValue {
            key: "/k".into(),
            value: Bytes::from(serde_json::to_vec(&stored).unwrap()),
            create_revision: 7,
            mod_revision: 7,
        });
        let mut served = stored.clone();
        served["metadata"]["resourceVersion"] = "7".into();
        let v1 = (cached.served::<()>("g", "v1", || Ok(served.clone()))).unwrap();
        let parts = v1.metadata_parts().expect("the stored version's metadata");
        assert!(!parts[1].is_empty(), "the resourceVersion falls within it");
        let expected = serde_json::to_vec(&served["metadata"]).unwrap();
        assert_eq!(parts.concat(), expected);
        // Another version's encoding is its own: not known without decoding it.
        let beta = (cached.served::<()>("g", "v1beta1", || {
            let mut beta = served.clone();
            beta["apiVersion"] = "g/v1beta1".into();
            Ok(beta)
        }))
        .unwrap();
        assert!(beta.metadata_parts().is_none());
        // An object without metadata has none.
        let bare = CachedObject::new(crate::KeyValue {
            key: "/b".into(),
            value: Bytes::from_static(br#"{"apiVersion":"g/v1"}"#),
            create_revision: 8,
            mod_revision: 8,
        });
        assert!(bare.metadata().is_none());
        let null = CachedObject::new(crate::KeyValue {
            key: "/n".into(),
            value: Bytes::from_static(br#"{"apiVersion":"g/v1","metadata":null}"#),
            create_revision: 9,
            mod_revision: 9,
        });
        assert!(null.metadata().is_none());
        // A version whose insertion falls before the metadata: its bytes as stored.
        let before = CachedObject::new(crate::KeyValue {
            key: "/o".into(),
            value: Bytes::from_static(br#"{"apiVersion":"g/v1","metadata":{"name":"o"}}"#),
            create_revision: 10,
            mod_revision: 10,
        });
        let kinded =
            serde_json::json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "o"}});
        let served = (before.served::<()>("g", "v1", || Ok(kinded))).unwrap();
        assert!(matches!(served.0, Repr::Stored(..)), "spliced");
        let parts = served
            .metadata_parts()
            .expect("the stored version's metadata");
        assert_eq!(parts.concat(), br#"{"name":"o"}"#);
        assert!(parts[1].is_empty());
    }
}
