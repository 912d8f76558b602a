//! How a kind's objects are stored: read from storage in whichever version of the storing
//! kind they were written in (from their `Value` or straight from their bytes), and
//! written in its storage version (as a `Value`, or as bytes straight from the type).

use serde_json::Value;

use super::erased::stored_value_bytes;
use super::{ConversionError, ErasedHub, KindEntry, VersionEntry, type_meta, with_type_meta};

impl KindEntry {
    /// A stored object (in any version of the kind that stores it, named by its
    /// `apiVersion`; the storage version when it names none) as a hub.
    pub fn from_stored(&self, object: Value) -> Result<ErasedHub, ConversionError> {
        let api_version = object.get("apiVersion").and_then(Value::as_str);
        (self.stored_entry(api_version)?.to_hub)(object, None)
    }

    /// [`from_stored`](KindEntry::from_stored) of a stored object's bytes: a compiled
    /// kind's decode straight into the version's type, with no `Value` between (debug
    /// builds check that the hub is the one the `Value` way makes).
    pub fn from_stored_bytes(&self, bytes: &[u8]) -> Result<ErasedHub, ConversionError> {
        let api_version = type_meta::api_version_of(bytes);
        let entry = self.stored_entry(api_version.as_deref())?;
        let Some(from_bytes) = entry.from_bytes else {
            return (entry.to_hub)(serde_json::from_slice(bytes)?, None);
        };
        let hub = from_bytes(bytes)?;
        #[cfg(debug_assertions)]
        {
            let by_value = self.from_stored(serde_json::from_slice(bytes)?)?;
            debug_assert_eq!(
                self.hub_json(&hub)?,
                self.hub_json(&by_value)?,
                "a stored {} decoded from its bytes is not as decoded from its value",
                self.info.kind
            );
        }
        Ok(hub)
    }

    /// The version of the storing kind a stored object's `apiVersion` names (the storage
    /// version when it names none of them).
    fn stored_entry(&self, api_version: Option<&str>) -> Result<&VersionEntry, ConversionError> {
        let storage = self.info.storage_kind();
        let versions = self.storage_versions();
        let named = api_version.and_then(|v| match v.rsplit_once('/') {
            Some((group, version)) => (group == storage.group).then_some(version),
            None => storage.is_core().then_some(v),
        });
        let storage_version = self.info.storage_version().name;
        (named.and_then(|n| versions.iter().find(|v| v.name == n)))
            .or_else(|| versions.iter().find(|v| v.name == storage_version))
            .ok_or(ConversionError::Registration(self.info.kind))
    }

    /// A hub as it is stored: in the storage version (of the kind that stores it), with its
    /// `apiVersion` and `kind`.
    pub fn to_stored(&self, hub: ErasedHub) -> Result<Value, ConversionError> {
        let (entry, api_version) = self.storage_entry()?;
        let body = (entry.from_hub)(hub)?;
        Ok(with_type_meta(
            body,
            &api_version,
            self.info.storage_kind().kind,
        ))
    }

    /// The storage version (of the kind that stores this kind's objects), with the
    /// `apiVersion` stored objects carry.
    fn storage_entry(&self) -> Result<(&VersionEntry, String), ConversionError> {
        let storage = self.info.storage_kind();
        let name = self.info.storage_version().name;
        let entry = (self.storage_versions().iter())
            .find(|v| v.name == name)
            .ok_or(ConversionError::Registration(self.info.kind))?;
        let api_version = match storage.is_core() {
            true => name.to_owned(),
            false => format!("{}/{name}", storage.group),
        };
        Ok((entry, api_version))
    }

    /// [`to_stored`](KindEntry::to_stored) of `hub`, whose JSON (`json`, what
    /// [`hub_json`](KindEntry::hub_json) made of it) is at hand: a storage version that is
    /// the hub type takes that as it is (debug builds check that encoding the hub again
    /// would give the same).
    pub fn to_stored_from(&self, hub: ErasedHub, json: &Value) -> Result<Value, ConversionError> {
        let name = self.info.storage_version().name;
        let own = self.info.stored_with.is_none();
        if !own || !self.entry(name).is_ok_and(|entry| entry.is_hub) {
            return self.to_stored(hub);
        }
        let object = with_type_meta(json.clone(), &self.api_version(name), self.info.kind);
        #[cfg(debug_assertions)]
        {
            let encoded = self.to_stored(hub)?;
            debug_assert_eq!(
                object, encoded,
                "{} hub JSON is not the stored form of its hub",
                self.info.kind
            );
        }
        Ok(object)
    }

    /// The bytes `hub` is stored as: [`to_stored`](KindEntry::to_stored)'s value (or
    /// [`to_stored_from`](KindEntry::to_stored_from)'s, when `json`, its hub JSON, is at
    /// hand) as compact JSON, without `metadata.resourceVersion`. A compiled kind's are
    /// written straight from the storage version's type; debug builds check that they
    /// are the value's.
    pub fn stored_bytes(
        &self,
        hub: ErasedHub,
        json: Option<&Value>,
    ) -> Result<Vec<u8>, ConversionError> {
        let (entry, api_version) = self.storage_entry()?;
        if let Some(encode) = entry.encode
            && let Some(bytes) = encode(&hub, &api_version, self.info.storage_kind().kind)?
        {
            #[cfg(debug_assertions)]
            {
                let by_value = stored_value_bytes(self.to_stored(hub)?)?;
                debug_assert!(
                    type_meta::same_encoding(&bytes, &by_value),
                    "{} stored straight from its type is not its stored value:\n{}\n{}",
                    self.info.kind,
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&by_value),
                );
            }
            return Ok(bytes);
        }
        let value = match json {
            Some(json) => self.to_stored_from(hub, json)?,
            None => self.to_stored(hub)?,
        };
        stored_value_bytes(value)
    }

    /// A stored object in `version` of this kind.
    pub fn stored_to(&self, object: Value, version: &str) -> Result<Value, ConversionError> {
        let hub = self.from_stored(object)?;
        self.from_hub(hub, version)
    }

    /// The versions of the kind that stores this kind's objects.
    fn storage_versions(&self) -> &[VersionEntry] {
        match self.info.stored_with {
            Some(_) => &self.stored_versions,
            None => &self.versions,
        }
    }
}
