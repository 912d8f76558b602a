//! The scheme: every kind the server knows, with typed conversions between its versions
//! erased behind function pointers.
//!
//! The generated glue registers each kind's hub type and version types; the generic
//! machinery then converts JSON between any two versions through the hub without knowing
//! any Rust type, as kube-apiserver's Scheme converts through the internal version.
//!
//! Kinds may also be installed while the server runs (the kinds CustomResourceDefinitions
//! define, [`KindEntry::dynamic`]): their hub is the object as JSON, kube's unstructured
//! object, and their conversions are closures the installer provides. Every kind keeps the
//! slot it was first given ([`Scheme::kinds`] is indexed by it), so what remembers a kind by
//! index (watch streams, the garbage collector's graph) stays right when kinds come, change
//! or go.

use std::any::Any;
use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::api::{Convert, KindInfo, Resource, Strategy};
use crate::defaults::Defaults;
use crate::error::FieldError;
use crate::meta::ObjectMeta;

mod erased;
mod hooks;
mod stored;
mod type_meta;
pub use erased::stored_value_bytes;
use erased::{
    bytes_to_hub, bytes_to_hub_defaulted, defaults_json, encode, from_hub, from_hub_ref,
    hub_from_json, hub_from_json_ref, hub_metadata, hub_to_json, to_hub, to_hub_defaulted,
    typed_round_trip,
};
use hooks::StrategyHooks;

/// A hub object with its type erased.
pub type ErasedHub = Box<dyn Any + Send>;

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ConversionError {
    /// The object does not decode as the version's type.
    #[error("{0}")]
    Decode(#[from] serde_json::Error),
    /// The kind is not served in that version.
    #[error("no version {version} of {kind}")]
    UnknownVersion {
        /// The kind.
        kind: &'static str,
        /// The version asked for.
        version: String,
    },
    /// A conversion webhook failed (kube's message: `conversion webhook for ... failed`).
    #[error("{0}")]
    Webhook(String),
    /// The scheme was registered inconsistently: a programmer error.
    #[error("scheme registration of {0} is inconsistent")]
    Registration(&'static str),
}

/// Decodes an object of one version into a hub (onto a base hub when given).
type ToHub =
    Arc<dyn Fn(Value, Option<ErasedHub>) -> Result<ErasedHub, ConversionError> + Send + Sync>;
/// Encodes a hub in one version.
type FromHub = Arc<dyn Fn(ErasedHub) -> Result<Value, ConversionError> + Send + Sync>;
/// Decodes an object as one version's type and encodes it again.
type JsonRoundTrip = fn(&Value) -> Result<Value, ConversionError>;
/// Encodes a hub in one version, leaving it as it is.
type FromHubRef = fn(&ErasedHub) -> Result<Value, ConversionError>;
/// Encodes a hub as stored in one version (`apiVersion`, `kind` given): `None` when the
/// version's type does not serialize as a struct ([`type_meta`]).
type Encode = fn(&ErasedHub, &str, &str) -> Result<Option<Vec<u8>>, ConversionError>;
/// Decodes an object's bytes in one version and converts it to a new hub.
type BytesToHub = fn(&[u8]) -> Result<ErasedHub, ConversionError>;
/// One direction of a dynamic kind's conversion, on JSON (see [`DynamicVersion`]).
pub type JsonConversion = Arc<dyn Fn(Value) -> Result<Value, ConversionError> + Send + Sync>;

/// One registered version of a kind.
#[derive(Clone)]
struct VersionEntry {
    name: &'static str,
    to_hub: ToHub,
    from_hub: FromHub,
    /// How an object of the version decodes in it, without reaching the hub (a dynamic
    /// kind's prune and defaults, so that finding unknown fields never calls a conversion
    /// webhook); `None`: through the hub and back.
    decode: Option<JsonConversion>,
    /// Whether the version's type is the hub type: its JSON is the hub JSON.
    is_hub: bool,
    /// An object of the version decoded as its type and encoded again, not converted (a
    /// compiled kind's); `None`: through `decode` (a dynamic kind's).
    typed_round_trip: Option<JsonRoundTrip>,
    /// A hub in the version, the hub left as it is (a compiled kind's); `None`: through
    /// the hub's JSON (a dynamic kind's).
    from_hub_ref: Option<FromHubRef>,
    /// How a hub is stored in the version straight from its type (a compiled kind's);
    /// `None`: through its `Value` (a dynamic kind's).
    encode: Option<Encode>,
    /// How an object's bytes in the version become a hub straight from its type (a
    /// compiled kind's); `None`: through their `Value` (a dynamic kind's).
    from_bytes: Option<BytesToHub>,
    /// An object of the version decoded, defaulted by its type's `Defaults` and encoded
    /// again (a kind registered with [`KindEntry::defaulted_version`]); `None`: no defaults
    /// by code.
    defaults: Option<JsonRoundTrip>,
}

impl VersionEntry {
    /// Whether `to_hub` makes the whole hub, never reading the base it is given (the
    /// version that is the hub type; a dynamic kind's versions, those with `decode`): an
    /// update then needs none.
    fn makes_whole_hub(&self) -> bool {
        self.is_hub || self.decode.is_some()
    }
}

/// One version of a kind installed at runtime, whose hub is JSON: how an object of the
/// version becomes the hub (decoded: pruned, defaulted, converted) and back.
#[derive(Clone)]
pub struct DynamicVersion {
    /// `v1`.
    pub name: &'static str,
    /// An object in this version to the hub.
    pub to_hub: JsonConversion,
    /// The hub to this version (`apiVersion` and `kind` are set after).
    pub from_hub: JsonConversion,
    /// An object of this version decoded in it (pruned, defaulted), not converted.
    pub decode: JsonConversion,
}

/// One registered kind.
#[derive(Clone)]
pub struct KindEntry {
    /// The kind's static description (for a kind installed at runtime, made once per
    /// installation and kept for the life of the process).
    pub info: &'static KindInfo,
    versions: Vec<VersionEntry>,
    hub_to_json: fn(&ErasedHub) -> Result<Value, ConversionError>,
    hub_from_json: fn(Value) -> Result<ErasedHub, ConversionError>,
    hub_from_json_ref: fn(&Value) -> Result<ErasedHub, ConversionError>,
    /// The hub's metadata, when its type has it (`Resource::metadata_mut`).
    hub_metadata: fn(&mut ErasedHub) -> Option<&mut ObjectMeta>,
    hooks: StrategyHooks,
    /// `TypeId` of the hub, so that a kind stored with another is checked to share its hub.
    hub_type: std::any::TypeId,
    /// For a kind `stored_with` another: that kind's versions, which stored objects are in
    /// (set by [`Scheme::add`]). Empty for a kind that stores its own.
    stored_versions: Vec<VersionEntry>,
    /// An installed kind whose definition is being deleted: no new objects.
    terminating: bool,
}

impl std::fmt::Debug for KindEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let versions: Vec<_> = self.versions.iter().map(|v| v.name).collect();
        (f.debug_struct("KindEntry"))
            .field("kind", &self.info.kind)
            .field("versions", &versions)
            .finish()
    }
}

impl KindEntry {
    /// Registers `Hub` with no versions yet.
    pub fn new<Hub>() -> KindEntry
    where
        Hub: Resource + Strategy + Serialize + DeserializeOwned + Send + 'static,
    {
        KindEntry::stored_with::<Hub>(Hub::INFO)
    }

    /// Registers the kind `info`, whose hub is `Hub`: a kind `stored_with` the kind of
    /// `Hub` (`events.k8s.io` Event, whose objects are core Events), or `Hub`'s own.
    pub fn stored_with<Hub>(info: &'static KindInfo) -> KindEntry
    where
        Hub: Resource + Strategy + Serialize + DeserializeOwned + Send + 'static,
    {
        KindEntry {
            info,
            versions: Vec::new(),
            hub_to_json: hub_to_json::<Hub>,
            hub_from_json: hub_from_json::<Hub>,
            hub_from_json_ref: hub_from_json_ref::<Hub>,
            hub_metadata: hub_metadata::<Hub>,
            hooks: StrategyHooks::of::<Hub>(),
            hub_type: std::any::TypeId::of::<Hub>(),
            stored_versions: Vec::new(),
            terminating: false,
        }
    }

    /// A kind installed at runtime (what a CustomResourceDefinition defines), its hub the
    /// object as JSON, with no strategy of its own: `versions` convert each version to and
    /// from that JSON.
    pub fn dynamic(info: &'static KindInfo, versions: Vec<DynamicVersion>) -> KindEntry {
        let versions = (versions.into_iter())
            .map(|version| {
                let (to_hub, from_hub) = (version.to_hub, version.from_hub);
                VersionEntry {
                    name: version.name,
                    decode: Some(version.decode),
                    is_hub: false,
                    typed_round_trip: None,
                    from_hub_ref: None,
                    encode: None,
                    from_bytes: None,
                    defaults: None,
                    to_hub: Arc::new(move |object, _base| Ok(Box::new(to_hub(object)?))),
                    from_hub: Arc::new(move |hub| {
                        let hub = (hub.downcast::<Value>())
                            .map_err(|_| ConversionError::Registration(info.kind))?;
                        from_hub(*hub)
                    }),
                }
            })
            .collect();
        KindEntry {
            info,
            versions,
            hub_to_json: hub_to_json::<Value>,
            hub_from_json: hub_from_json::<Value>,
            hub_from_json_ref: hub_from_json_ref::<Value>,
            // kube's unstructured objects have their metadata in their JSON.
            hub_metadata: |_| None,
            hooks: StrategyHooks::NONE,
            hub_type: std::any::TypeId::of::<Value>(),
            stored_versions: Vec::new(),
            terminating: false,
        }
    }

    /// Registers the version `name`, whose type is `V`.
    pub fn version<Hub, V>(mut self, name: &'static str) -> KindEntry
    where
        Hub: Resource + Default + Send + 'static,
        V: Convert<Hub> + Serialize + DeserializeOwned + 'static,
    {
        self.versions.push(VersionEntry {
            name,
            to_hub: Arc::new(to_hub::<Hub, V>),
            from_hub: Arc::new(from_hub::<Hub, V>),
            decode: None,
            is_hub: std::any::TypeId::of::<V>() == std::any::TypeId::of::<Hub>(),
            typed_round_trip: Some(typed_round_trip::<V>),
            from_hub_ref: Some(from_hub_ref::<Hub, V>),
            encode: Some(encode::<Hub, V>),
            from_bytes: Some(bytes_to_hub::<Hub, V>),
            defaults: None,
        });
        self
    }

    /// Registers the version `name`, whose type `V` defaults what it decodes from a
    /// request ([`Defaults`], `#[resource(defaults)]`): every object converted to the hub
    /// from it is defaulted first, as kube defaults on decode.
    pub fn defaulted_version<Hub, V>(self, name: &'static str) -> KindEntry
    where
        Hub: Resource + Default + Send + 'static,
        V: Convert<Hub> + Defaults + Serialize + DeserializeOwned + 'static,
    {
        let mut entry = self.version::<Hub, V>(name);
        if let Some(version) = entry.versions.last_mut() {
            version.to_hub = Arc::new(to_hub_defaulted::<Hub, V>);
            version.from_bytes = Some(bytes_to_hub_defaulted::<Hub, V>);
            version.defaults = Some(defaults_json::<V>);
        }
        entry
    }

    /// `object` (in `version`) with the defaults its type sets by code, for those who read
    /// a request's object before it is converted (mutating admission); `None` when the
    /// version sets none.
    pub fn default_in(
        &self,
        object: &Value,
        version: &str,
    ) -> Result<Option<Value>, ConversionError> {
        match self.entry(version)?.defaults {
            Some(defaults) => defaults(object).map(Some),
            None => Ok(None),
        }
    }

    /// The kind, its definition being deleted: it takes no new objects
    /// ([`KindEntry::is_terminating`]).
    pub fn terminating(mut self, terminating: bool) -> KindEntry {
        self.terminating = terminating;
        self
    }

    /// Whether the kind's definition is being deleted (no creates).
    pub fn is_terminating(&self) -> bool {
        self.terminating
    }

    /// Whether the kind was installed while the server runs ([`KindEntry::dynamic`]).
    pub fn is_dynamic(&self) -> bool {
        self.hub_type == std::any::TypeId::of::<Value>()
    }

    /// Names of the registered versions.
    pub fn versions(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.versions.iter().map(|v| v.name)
    }

    fn entry(&self, version: &str) -> Result<&VersionEntry, ConversionError> {
        (self.versions.iter().find(|v| v.name == version)).ok_or_else(|| {
            ConversionError::UnknownVersion {
                kind: self.info.kind,
                version: version.to_owned(),
            }
        })
    }

    /// Decodes `object` as version `version` and converts it to a new hub: onto the hub's
    /// default, so hub fields the version cannot express get their defaults. Right for a
    /// new object (create) and for reading one in a version that expresses the whole hub
    /// (the storage version); a write over an existing object uses
    /// [`to_hub_over`](KindEntry::to_hub_over).
    pub fn to_hub(&self, object: Value, version: &str) -> Result<ErasedHub, ConversionError> {
        (self.entry(version)?.to_hub)(object, None)
    }

    /// Decodes `object` as version `version` and converts it onto `base`, the hub of the
    /// object it replaces: only the hub fields the version expresses are overwritten, so
    /// an update through a version that cannot express some fields (`v1beta1` WebApp's
    /// `env`, `paused`, extra ports) keeps them as stored.
    /// `base` is only made when the version does not make the whole hub itself.
    pub fn to_hub_over(
        &self,
        object: Value,
        version: &str,
        base: impl FnOnce() -> Result<ErasedHub, ConversionError>,
    ) -> Result<ErasedHub, ConversionError> {
        let entry = self.entry(version)?;
        match entry.makes_whole_hub() {
            true => (entry.to_hub)(object, None),
            false => (entry.to_hub)(object, Some(base()?)),
        }
    }

    /// Converts a hub to version `version`, with `apiVersion` and `kind` set.
    pub fn from_hub(&self, hub: ErasedHub, version: &str) -> Result<Value, ConversionError> {
        let body = (self.entry(version)?.from_hub)(hub)?;
        Ok(with_type_meta(
            body,
            &self.api_version(version),
            self.info.kind,
        ))
    }

    /// `hub` in version `version`, with `apiVersion` and `kind` set, the hub left as it
    /// is: [`from_hub`](KindEntry::from_hub) of a copy.
    pub fn from_hub_ref(&self, hub: &ErasedHub, version: &str) -> Result<Value, ConversionError> {
        let entry = self.entry(version)?;
        let body = match entry.from_hub_ref {
            Some(from_hub_ref) => from_hub_ref(hub)?,
            None => return self.from_hub(self.hub_from_json(self.hub_json(hub)?)?, version),
        };
        Ok(with_type_meta(
            body,
            &self.api_version(version),
            self.info.kind,
        ))
    }

    /// The metadata of `hub`, when the kind's hub type has it as an `ObjectMeta` (a
    /// compiled kind's, not a dynamic kind's JSON).
    pub fn metadata_mut<'h>(&self, hub: &'h mut ErasedHub) -> Option<&'h mut ObjectMeta> {
        (self.hub_metadata)(hub)
    }

    /// Hub JSON (what [`hub_json`](KindEntry::hub_json) makes, perhaps edited by the
    /// registry's metadata rules) in `version`, with `apiVersion` and `kind` set. The
    /// version that is the hub type takes it as it is: a round trip through that type
    /// would give it back unchanged (debug builds check that it does); any other decodes
    /// and converts it.
    pub fn hub_json_in(&self, json: &Value, version: &str) -> Result<Value, ConversionError> {
        if !self.entry(version)?.is_hub {
            return self.from_hub(self.hub_from_json_ref(json)?, version);
        }
        let object = with_type_meta(json.clone(), &self.api_version(version), self.info.kind);
        #[cfg(debug_assertions)]
        if let Ok(hub) = self.hub_from_json_ref(json) {
            let converted = self.from_hub(hub, version)?;
            debug_assert_eq!(
                object, converted,
                "{} hub JSON changes in a round trip through its type",
                self.info.kind
            );
        }
        Ok(object)
    }

    /// `hub` in `version`, with `apiVersion` and `kind` set, its hub JSON (`json`, what
    /// [`hub_json`](KindEntry::hub_json) made of it) at hand: the version that is the hub
    /// type copies the JSON ([`hub_json_in`](KindEntry::hub_json_in)); any other of a
    /// compiled kind converts the hub as it is, without decoding the JSON again (a dynamic
    /// kind's hub is its JSON).
    pub fn hub_in(
        &self,
        hub: &ErasedHub,
        json: &Value,
        version: &str,
    ) -> Result<Value, ConversionError> {
        let entry = self.entry(version)?;
        match entry.is_hub || entry.from_hub_ref.is_none() {
            true => self.hub_json_in(json, version),
            false => self.from_hub_ref(hub, version),
        }
    }

    /// `object` (of `version`) as its version keeps it: decoded and encoded again, which
    /// drops what the version does not declare (how unknown fields are found). As the
    /// version's type, not through the hub: what the version declares is known, whether
    /// or not the hub keeps it.
    pub fn round_trip(&self, object: &Value, version: &str) -> Result<Value, ConversionError> {
        let entry = self.entry(version)?;
        let body = match (&entry.decode, entry.typed_round_trip) {
            (Some(decode), _) => decode(object.clone())?,
            (None, Some(round_trip)) => round_trip(object)?,
            (None, None) => return self.convert(object.clone(), version, version),
        };
        Ok(with_type_meta(
            body,
            &self.api_version(version),
            self.info.kind,
        ))
    }

    /// Converts `object` from one version to another through the hub.
    pub fn convert(&self, object: Value, from: &str, to: &str) -> Result<Value, ConversionError> {
        let hub = self.to_hub(object, from)?;
        self.from_hub(hub, to)
    }

    /// The hub as JSON: what printer columns and the scale subresource read.
    pub fn hub_json(&self, hub: &ErasedHub) -> Result<Value, ConversionError> {
        (self.hub_to_json)(hub)
    }

    /// The hub from its JSON (what [`hub_json`](KindEntry::hub_json) gives): lets the
    /// registry edit a hub as JSON (the scale subresource's replica path, generic metadata
    /// rules) and copy one.
    pub fn hub_from_json(&self, json: Value) -> Result<ErasedHub, ConversionError> {
        (self.hub_from_json)(json)
    }

    /// [`hub_from_json`](KindEntry::hub_from_json) of JSON the caller keeps: decoded from
    /// the reference, not from a copy.
    pub fn hub_from_json_ref(&self, json: &Value) -> Result<ErasedHub, ConversionError> {
        (self.hub_from_json_ref)(json)
    }

    /// [`Strategy::prepare_for_create_by`] of the kind, for a create by `user` (`None`:
    /// the server's own).
    pub fn prepare_for_create(&self, hub: &mut ErasedHub, user: Option<&crate::user::UserInfo>) {
        (self.hooks.prepare_for_create)(hub, user)
    }

    /// [`Strategy::prepare_for_update`] of the kind.
    pub fn prepare_for_update(&self, hub: &mut ErasedHub, old: &ErasedHub) {
        (self.hooks.prepare_for_update)(hub, old)
    }

    /// [`Strategy::warnings`] of a valid new object, or [`Strategy::warnings_on_update`]
    /// with the object it replaces.
    pub fn warnings(&self, hub: &ErasedHub, old: Option<&ErasedHub>) -> Vec<String> {
        (self.hooks.warnings)(hub, old)
    }

    /// [`Strategy::validate_in`] of the kind, for a request in `version`.
    pub fn validate(&self, hub: &ErasedHub, version: &str) -> Vec<FieldError> {
        (self.hooks.validate)(hub, &self.api_version(version))
    }

    /// [`Strategy::validate_update_in`] of the kind, for a request in `version`; for a
    /// write through `subresource` (not empty), [`Strategy::validate_subresource_update`].
    pub fn validate_update(
        &self,
        hub: &ErasedHub,
        old: &ErasedHub,
        version: &str,
        subresource: &str,
    ) -> Vec<FieldError> {
        (self.hooks.validate_update)(hub, old, &self.api_version(version), subresource)
    }

    /// [`Strategy::allow_create_on_update`] of the kind.
    pub fn allow_create_on_update(&self) -> bool {
        self.hooks.allow_create_on_update
    }

    /// [`Strategy::allow_unconditional_update`] of the kind.
    pub fn allow_unconditional_update(&self) -> bool {
        self.hooks.allow_unconditional_update
    }

    /// Whether the kind changes objects on their first delete ([`Strategy::has_delete_rules`]).
    pub fn has_delete_rules(&self) -> bool {
        self.hooks.prepare_for_delete.is_some()
    }

    /// The grace period of a delete of `hub` asking for `requested` seconds, for kinds that
    /// delete gracefully ([`Strategy::grace_period`]); `None` for the others.
    pub fn grace_period(&self, hub: &ErasedHub, requested: Option<i64>) -> Option<i64> {
        self.hooks.grace_period.map(|grace| grace(hub, requested))
    }

    /// The metadata fields a write through `subresource` may change
    /// ([`Strategy::subresource_metadata`]).
    pub fn subresource_metadata(&self, subresource: &str) -> &'static [&'static str] {
        (self.hooks.subresource_metadata)(subresource)
    }

    /// Whether some objects of the kind may not be deleted ([`Strategy::refuses_deletes`]).
    pub fn refuses_deletes(&self) -> bool {
        self.hooks.delete_refused.is_some()
    }

    /// Why `hub` may not be deleted ([`Strategy::delete_refused`]).
    pub fn delete_refused(&self, hub: &ErasedHub) -> Option<String> {
        self.hooks.delete_refused.and_then(|refused| refused(hub))
    }

    /// Whether the kind deletes gracefully ([`Strategy::deletes_gracefully`]).
    pub fn deletes_gracefully(&self) -> bool {
        self.hooks.grace_period.is_some()
    }

    /// [`Strategy::prepare_for_delete`] of the kind.
    pub fn prepare_for_delete(&self, hub: &mut ErasedHub) {
        if let Some(prepare) = self.hooks.prepare_for_delete {
            prepare(hub)
        }
    }

    /// [`Strategy::canonicalize`] of the kind, when it has a canonical form; whether it
    /// has (whether `hub` may have changed).
    pub fn canonicalize(&self, hub: &mut ErasedHub) -> bool {
        match self.hooks.canonicalize {
            Some(canonicalize) => {
                canonicalize(hub);
                true
            }
            None => false,
        }
    }

    /// `v1` or `apps.example.dev/v1`.
    pub fn api_version(&self, version: &str) -> String {
        self.info.api_version(version)
    }
}

/// Every kind a server knows: the compiled ones, registered once by the generated glue
/// ([`Scheme::add`]), and those installed while it runs ([`Scheme::install`]).
#[derive(Default)]
pub struct Scheme {
    /// Every kind by its slot. Replaced whole (copy on write) by the rare installs and
    /// removals, so that a reader takes a snapshot without holding a lock.
    slots: RwLock<Arc<Vec<Slot>>>,
    /// Moves with every change of the kinds, so that what is derived from them (the
    /// discovery documents) knows when to be made again.
    generation: std::sync::atomic::AtomicU64,
    /// The compiled kinds switched off for good ([`Scheme::switch_off`]).
    switched_off: RwLock<Vec<&'static KindInfo>>,
}

/// The slot of one group and resource: it keeps its index when its kind is replaced or
/// removed, and serves the kind installed for that resource again.
#[derive(Clone)]
struct Slot {
    group: &'static str,
    plural: &'static str,
    kind: Option<Arc<KindEntry>>,
}

impl std::fmt::Debug for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.kinds().iter()).finish()
    }
}

/// A snapshot of a scheme's kinds, indexed by slot.
#[derive(Clone)]
pub struct Kinds(Arc<Vec<Slot>>);

impl Kinds {
    /// Every kind served, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<KindEntry>> {
        self.0.iter().filter_map(|slot| slot.kind.as_ref())
    }

    /// Every kind served, with its slot.
    pub fn slots(&self) -> impl Iterator<Item = (usize, &Arc<KindEntry>)> {
        (self.0.iter().enumerate()).filter_map(|(index, slot)| Some((index, slot.kind.as_ref()?)))
    }

    /// The kind in `slot`, if one is served there.
    pub fn get(&self, slot: usize) -> Option<&Arc<KindEntry>> {
        self.0.get(slot)?.kind.as_ref()
    }
}

impl IntoIterator for Kinds {
    type Item = Arc<KindEntry>;
    type IntoIter = std::vec::IntoIter<Arc<KindEntry>>;

    /// Every kind served, in slot order.
    fn into_iter(self) -> Self::IntoIter {
        self.iter().cloned().collect::<Vec<_>>().into_iter()
    }
}

impl Scheme {
    /// An empty scheme.
    pub fn new() -> Scheme {
        Scheme::default()
    }

    /// Adds a kind. A kind `stored_with` another comes after that kind, with the same hub
    /// type: it reads and writes objects in that kind's versions.
    ///
    /// # Panics
    ///
    /// When a kind `stored_with` another comes before it or has another hub type: the
    /// generated glue never registers one so.
    #[allow(clippy::should_implement_trait)] // a builder step, not `+`
    pub fn add(self, mut kind: KindEntry) -> Scheme {
        if let Some(storage) = kind.info.stored_with {
            let owner = self
                // By group and kind: `INFO` is a constant, whose address may differ by use.
                .by_kind(storage.group, storage.kind)
                .unwrap_or_else(|| {
                    panic!(
                        "{} is stored with {}, which must be added to the scheme first",
                        kind.info.kind, storage.kind
                    )
                });
            assert!(
                owner.hub_type == kind.hub_type,
                "{} is stored with {} and must have its hub type",
                kind.info.kind,
                storage.kind
            );
            kind.stored_versions = owner.versions.clone();
        }
        self.install(kind);
        self
    }

    /// Installs a kind, in the slot of its group and plural (replacing the kind there) or
    /// in a new one; returns the slot.
    pub fn install(&self, kind: KindEntry) -> usize {
        let (group, plural) = (kind.info.group, kind.info.plural);
        let kind = Some(Arc::new(kind));
        self.edit(|slots| {
            match (slots.iter()).position(|s| (s.group, s.plural) == (group, plural)) {
                Some(index) => {
                    slots[index].kind = kind;
                    index
                }
                None => {
                    slots.push(Slot {
                        group,
                        plural,
                        kind,
                    });
                    slots.len() - 1
                }
            }
        })
    }

    /// Stops serving the kind `plural` of `group`; its slot stays reserved for it.
    pub fn remove(&self, group: &str, plural: &str) {
        self.edit(|slots| {
            for slot in slots.iter_mut() {
                if (slot.group, slot.plural) == (group, plural) {
                    slot.kind = None;
                }
            }
        })
    }

    /// Stops serving the kind `plural` of `group` for good (`--runtime-config`): its names
    /// stay taken ([`Scheme::switched_off`]), so that no kind installed later (a
    /// CustomResourceDefinition) serves its objects under another schema.
    pub fn switch_off(&self, group: &str, plural: &str) {
        if let Some(kind) = self.by_resource(group, plural) {
            let mut off = self.switched_off.write().unwrap_or_else(|e| e.into_inner());
            off.push(kind.info);
        }
        self.remove(group, plural);
    }

    /// The kinds switched off.
    pub fn switched_off(&self) -> Vec<&'static KindInfo> {
        (self.switched_off.read().unwrap_or_else(|e| e.into_inner())).clone()
    }

    /// Every kind, as of now.
    pub fn kinds(&self) -> Kinds {
        Kinds(Arc::clone(
            &self.slots.read().unwrap_or_else(|e| e.into_inner()),
        ))
    }

    /// The kind in `slot`.
    pub fn kind(&self, slot: usize) -> Option<Arc<KindEntry>> {
        self.kinds().get(slot).cloned()
    }

    /// The slot of `kind`: its group and plural's.
    pub fn slot_of(&self, kind: &KindEntry) -> Option<usize> {
        let (group, plural) = (kind.info.group, kind.info.plural);
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .position(|s| (s.group, s.plural) == (group, plural))
    }

    /// The kind now served in `kind`'s slot (`kind` itself unless it was replaced), shared.
    pub fn current(&self, kind: &KindEntry) -> Option<Arc<KindEntry>> {
        self.kind(self.slot_of(kind)?)
    }

    /// The kind serving `plural` in `group`.
    pub fn by_resource(&self, group: &str, plural: &str) -> Option<Arc<KindEntry>> {
        (self.kinds().iter())
            .find(|k| k.info.group == group && k.info.plural == plural)
            .cloned()
    }

    /// The kind named `kind` in `group` (what `apiVersion` and `kind` name).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<Arc<KindEntry>> {
        (self.kinds().iter())
            .find(|k| k.info.group == group && k.info.kind == kind)
            .cloned()
    }

    /// A number that changes whenever a kind is installed or removed.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn edit<T>(&self, change: impl FnOnce(&mut Vec<Slot>) -> T) -> T {
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let mut edited = Vec::clone(&slots);
        let result = change(&mut edited);
        *slots = Arc::new(edited);
        (self.generation).fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        result
    }
}

/// Puts `apiVersion` and `kind` first, as Kubernetes serializes objects.
fn with_type_meta(body: Value, api_version: &str, kind: &str) -> Value {
    // In place, the other fields keeping their order: a map built anew would hash every
    // key again, on each conversion a write makes.
    let mut object = match body {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    object.shift_insert(0, "apiVersion".into(), Value::String(api_version.into()));
    object.shift_insert(1, "kind".into(), Value::String(kind.into()));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_meta_comes_first_and_the_other_fields_keep_their_order() {
        let body = serde_json::json!({
            "spec": {"a": 1},
            "kind": "Old",
            "metadata": {"name": "n"},
            "apiVersion": "old/v0",
            "status": {},
        });
        let object = with_type_meta(body, "g/v1", "Kind");
        let keys: Vec<&str> = object
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(keys, ["apiVersion", "kind", "spec", "metadata", "status"]);
        assert_eq!(object["apiVersion"], "g/v1");
        assert_eq!(object["kind"], "Kind");
        let bare = with_type_meta(Value::Null, "v1", "Kind");
        assert_eq!(
            bare,
            serde_json::json!({"apiVersion": "v1", "kind": "Kind"})
        );
        let plain = with_type_meta(serde_json::json!({"data": 1}), "v1", "Kind");
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"apiVersion":"v1","kind":"Kind","data":1}"#
        );
    }
}
