//! [`CachedObject`]: one object as the watch cache holds it (its stored bytes, its labels,
//! where its metadata lies, its encodings per served version), and [`Labels`], the form
//! label selectors read.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::shared::Served;
use super::{Derived, Memo, SharedObject, Splice};
use crate::KeyValue;

/// One object as the cache holds it: its stored bytes (the one copy of its data), what
/// selectors read, extracted once, and its encodings per served version, each made on
/// first use. The decoded form is made again where a request needs it
/// ([`CachedObject::decode`]).
pub struct CachedObject {
    /// The stored key and value.
    pub kv: KeyValue,
    /// Its labels and where its metadata lies, found on first use: the cache's feed
    /// applies every write, and most are read by no selector and no Table (finding them
    /// cost a create on etcd some 9,000 of its 241,000 instructions).
    located: OnceLock<Located>,
    /// Values the registry derives once from the object, per kind reading it (the
    /// selectable fields' values, for field selectors): kinds stored together name their
    /// fields differently.
    pub derived: Derived,
    /// The object in each served version, with its `mod_revision` as resourceVersion,
    /// but for the one [`splice`](CachedObject::served) serves.
    versions: Memo,
    /// The object in the first version served whose encoding is the stored bytes with
    /// its resourceVersion inserted (its storage version): that insertion, kept here
    /// rather than as an encoding of its own in `versions`.
    splice: OnceLock<Arc<Splice>>,
}

impl CachedObject {
    pub(super) fn new(kv: KeyValue) -> Arc<CachedObject> {
        Arc::new(CachedObject {
            kv,
            located: OnceLock::new(),
            derived: Derived::default(),
            versions: Memo::default(),
            splice: OnceLock::new(),
        })
    }

    /// `metadata.labels`, for label selectors (`None` when absent or undecodable).
    pub fn labels(&self) -> Option<&Labels> {
        self.located().labels.as_ref()
    }

    /// Where the stored bytes hold `metadata` (`None` when absent or undecodable): a Table
    /// row's `PartialObjectMetadata` copies them rather than decoding the object.
    pub(super) fn metadata(&self) -> Option<std::ops::Range<u32>> {
        self.located().metadata.clone()
    }

    fn located(&self) -> &Located {
        self.located
            .get_or_init(|| Located::in_value(&self.kv.value))
    }

    /// The object in `version` of `group` with its `mod_revision` as resourceVersion, made
    /// from the value `make` returns the first time and shared by every request after.
    pub fn served<E>(
        self: &Arc<Self>,
        group: &'static str,
        version: &str,
        make: impl FnOnce() -> Result<Value, E>,
    ) -> Result<SharedObject, E> {
        let served = (self.versions).serve(&self.splice, group, version, &self.kv.value, make)?;
        Ok(match served {
            Served::Spliced(splice) => SharedObject::stored(Arc::clone(self), splice),
            Served::Memo(object) => object,
        })
    }

    /// The stored object, decoded, or why it does not decode.
    pub fn decode(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.kv.value)
            .map_err(|e| format!("decoding the object at {}: {e}", self.kv.key))
    }
}

/// What selectors and Table rows read of a stored object's metadata.
struct Located {
    labels: Option<Labels>,
    metadata: Option<std::ops::Range<u32>>,
}

impl Located {
    /// Found in `value` (stored JSON): only its metadata is parsed, the rest skipped.
    fn in_value(value: &[u8]) -> Located {
        /// Only the metadata of a stored object, as its bytes; the rest is skipped, not
        /// decoded.
        #[derive(serde::Deserialize)]
        struct Outer<'a> {
            #[serde(borrow)]
            metadata: Option<&'a serde_json::value::RawValue>,
        }
        /// Only the labels of the metadata.
        #[derive(serde::Deserialize)]
        struct Metadata {
            labels: Option<Labels>,
        }
        let metadata = serde_json::from_slice::<Outer<'_>>(value)
            .ok()
            .and_then(|object| object.metadata);
        // Metadata without the name `labels` (as the encoders write it: neither Go's nor
        // serde's escapes a letter) has none, and is not parsed a second time for them.
        let labels = metadata
            .filter(|raw| memchr::memmem::find(raw.get().as_bytes(), br#""labels""#).is_some())
            .and_then(|raw| serde_json::from_str::<Metadata>(raw.get()).ok())
            .and_then(|metadata| metadata.labels);
        // The raw value borrows from the stored bytes: its place in them.
        let metadata = metadata.and_then(|raw| {
            let start = (raw.get().as_ptr() as usize).checked_sub(value.as_ptr() as usize)?;
            let start = u32::try_from(start).ok()?;
            let end = start.checked_add(u32::try_from(raw.get().len()).ok()?)?;
            Some(start..end)
        });
        Located { labels, metadata }
    }
}

/// An object's labels as the cache keeps them for selectors: the pairs, sorted by key, in
/// one string (`key NUL value NUL key NUL value`), one allocation per object (a decoded
/// JSON map costs several times their size; a boxed string per key and value, four
/// allocations for two labels). Label keys and values never hold a NUL: the registry
/// validates them; labels that would are not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels(Box<str>);

impl<'de> serde::Deserialize<'de> for Labels {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Labels, D::Error> {
        let map = std::collections::BTreeMap::<String, String>::deserialize(deserializer)?;
        if (map.iter()).any(|(k, v)| k.contains('\0') || v.contains('\0')) {
            return Err(serde::de::Error::custom("a label holds a NUL"));
        }
        let length = map.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        let mut pairs = String::with_capacity(length);
        for (key, value) in &map {
            pairs.push_str(key);
            pairs.push('\0');
            pairs.push_str(value);
            pairs.push('\0');
        }
        Ok(Labels(pairs.into_boxed_str()))
    }
}

impl kapi_schema::selector::LabelLookup for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        let mut parts = self.0.split_terminator('\0');
        while let (Some(k), Some(v)) = (parts.next(), parts.next()) {
            if k == key {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{CachedObject, Labels};
    use crate::KeyValue;
    use kapi_schema::selector::LabelLookup;

    fn cached(value: &'static str) -> std::sync::Arc<CachedObject> {
        CachedObject::new(KeyValue {
            key: "/k".into(),
            value: value.as_bytes().to_vec().into(),
            create_revision: 1,
            mod_revision: 1,
        })
    }

    /// The labels of the metadata are kept; metadata without them (whatever its values
    /// say, wherever else the word is) has none, and its place is known either way.
    #[test]
    fn an_object_keeps_its_labels_and_where_its_metadata_is() {
        let labelled = cached(r#"{"metadata":{"name":"a","labels":{"app":"web"}},"spec":{}}"#);
        assert_eq!(labelled.labels().and_then(|l| l.label("app")), Some("web"));
        let value =
            r#"{"labels":{"x":"y"},"metadata":{"name":"b","annotations":{"n":"\"labels\""}}}"#;
        let unlabelled = cached(value);
        assert_eq!(unlabelled.labels(), None);
        let range = unlabelled.metadata().expect("its metadata");
        assert!(value[range.start as usize..range.end as usize].starts_with(r#"{"name":"b""#));
        assert_eq!(cached(r#"{"spec":{}}"#).labels(), None);
    }

    /// Every label is found by its key, an empty value included; absent keys are not.
    #[test]
    fn labels_are_found_by_key() {
        let labels: Labels =
            serde_json::from_str(r#"{"tier":"t1","app":"web","empty":"","example.com/x":"y"}"#)
                .unwrap();
        for (key, value) in [
            ("app", "web"),
            ("tier", "t1"),
            ("empty", ""),
            ("example.com/x", "y"),
        ] {
            assert_eq!(labels.label(key), Some(value), "{key}");
        }
        for key in ["", "web", "t1", "ap", "example.com"] {
            assert_eq!(labels.label(key), None, "{key:?}");
        }
        let none: Labels = serde_json::from_str("{}").unwrap();
        assert_eq!(none.label("app"), None);
        assert!(serde_json::from_str::<Labels>(r#"{"a":"b\u0000c"}"#).is_err());
    }
}
