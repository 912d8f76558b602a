//! Test support for APIs built on kapi (feature `testing`): arbitrary objects within a
//! version's OpenAPI v3 schema ([`arbitrary`]) and the hub-conversion round-trip properties
//! every kind and served version must have ([`RoundTrip`]). `cargo xtask generate` writes
//! one test per kind and served version calling [`RoundTrip::check`]
//! (`generated/src/round_trip.rs`), so a kind gets them without its author writing any.
//!
//! The properties run through the scheme's erased conversions ([`KindEntry`]) and the
//! registry's schema defaulting, the code paths the server uses. For a kind `K`, a served
//! version `V` and the storage version `S`:
//!
//! 1. **Generated objects are within the schema**: the registry's validation accepts every
//!    object the strategy produces (else the generator, not the kind, is wrong).
//! 2. **`V` → hub → `V` is the identity**: an arbitrary `V` object `v`, defaulted as the
//!    registry defaults a request body, converted to a new hub and back to `V`, is `v` —
//!    compared as [`canonical`] JSON: defaulted, with `apiVersion`/`kind` set, and with
//!    empty values (`null`, `{}`, `[]`) treated as absent, as Kubernetes' semantic
//!    equality treats nil and empty lists and maps. Nothing else is normalized: `""`, `0`
//!    and `false` are values.
//! 3. **hub → `V` → the same hub loses nothing**: for a hub `h` made from an arbitrary `S`
//!    object, `h` converted to `V`, defaulted, and converted back *onto a copy of `h`*
//!    ([`KindEntry::to_hub_over`], as the registry writes an update or patch) is exactly `h`
//!    (the hubs' JSON is equal). So a client reading through any version and writing back
//!    what it read changes nothing, whatever the version cannot express.
//! 4. **The storage version expresses the whole hub**: `h` converted to `S` and back to a
//!    *new* hub is `h`, since stored objects are read with no base.
//!
//! 5. **Protobuf loses nothing**: for a kind with a protobuf form, a `V` object written
//!    as protobuf (the server's encoder) and read back (its decoder) is the object, up to
//!    the zero scalars (`""`, `0`, `false`) that Go's JSON omits too. A field missing from
//!    the kind's descriptor fails it.
//!
//! A version declared `lossy` (its conversion keeps only part of the hub, as kube's
//! `autoscaling/v1` HorizontalPodAutoscaler's does) is held to properties 2 and 3 from
//! what one trip made: converting may change an object once, never twice.
//!
//! Hubs are the images of storage-version objects: the hub type has no schema of its own,
//! and property 4 says the storage version reaches every hub.

pub mod arbitrary;

use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{Map, Value};

use crate::{KindSchema, Schemas};
use kapi_core::api::OpenApiV3Document;
use kapi_core::scheme::{ErasedHub, KindEntry, Scheme};

/// Cases per test unless `PROPTEST_CASES` says otherwise: enough to meet every optional
/// field and list length many times, few enough for `cargo test` to stay quick.
pub const DEFAULT_CASES: u32 = 64;

/// A scheme and its compiled schemas, for checking the round-trip properties of its kinds.
#[derive(Debug)]
pub struct RoundTrip {
    scheme: Scheme,
    schemas: Schemas,
}

impl RoundTrip {
    /// The scheme with the generated OpenAPI v3 documents of its versions.
    ///
    /// # Panics
    /// When a schema does not compile: the same check fails the server at start-up.
    pub fn new(scheme: Scheme, documents: &[OpenApiV3Document]) -> RoundTrip {
        let schemas = Schemas::compiled_in(&scheme, documents)
            .unwrap_or_else(|e| panic!("the OpenAPI v3 schemas do not compile: {e}"));
        RoundTrip { scheme, schemas }
    }

    /// Checks the round-trip properties of `kind` (in `group`) in the served `version` on
    /// `PROPTEST_CASES` (default [`DEFAULT_CASES`]) arbitrary objects.
    ///
    /// # Panics
    /// With the property that failed and the smallest failing object found.
    pub fn check(&self, group: &str, kind: &str, version: &str) {
        let entry = (self.scheme.by_kind(group, kind))
            .unwrap_or_else(|| panic!("no kind {kind} in group {group:?} in the scheme"));
        // The hub's source is an object of the kind that stores this kind's objects.
        let stored_kind = entry.info.storage_kind();
        let storage_entry = (self.scheme.by_kind(stored_kind.group, stored_kind.kind))
            .unwrap_or_else(|| panic!("{kind} is stored with a kind not in the scheme"));
        let storage = entry.info.storage_version().name;
        let case = Case {
            entry: &entry,
            storage_entry: &storage_entry,
            version,
            storage,
            schema: self.schema(&entry, version),
            storage_schema: self.schema(&storage_entry, storage),
        };
        let strategy = (
            arbitrary::object(case.schema),
            arbitrary::object(case.storage_schema),
        );
        let config = Config {
            // Failures are reported with their smallest input; nothing is written to disk.
            failure_persistence: None,
            ..Config::with_cases(cases())
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |(object, stored)| {
            case.properties(object, stored).map_err(TestCaseError::fail)
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(reason, (object, stored))) => panic!(
                "{kind} {version}: {reason}\n\nsmallest failing input:\n  {version} object: \
                 {object}\n  {storage} object (the hub's source): {stored}"
            ),
            Err(TestError::Abort(reason)) => panic!("{kind} {version}: aborted: {reason}"),
        }
    }

    fn schema(&self, entry: &KindEntry, version: &str) -> KindSchema<'_> {
        let info = entry.info;
        (self.schemas.kind(info.group, version, info.kind))
            .unwrap_or_else(|| panic!("no schema for {} {}", entry.api_version(version), info.kind))
    }
}

fn cases() -> u32 {
    (std::env::var("PROPTEST_CASES").ok())
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

/// One kind and version under test.
struct Case<'a> {
    entry: &'a KindEntry,
    /// The kind whose storage version is `storage`: `entry`, or the kind it is stored with.
    storage_entry: &'a KindEntry,
    version: &'a str,
    storage: &'a str,
    schema: KindSchema<'a>,
    storage_schema: KindSchema<'a>,
}

impl Case<'_> {
    fn properties(&self, object: Value, stored: Value) -> Result<(), String> {
        let (version, storage) = (self.version, self.storage);
        let object = self.request(object, version, self.schema)?;
        let stored = with_type_meta(stored, self.storage_entry, storage);
        let stored = self.request(stored, storage, self.storage_schema)?;

        // 2. V -> hub -> V (for a lossy version, from what one trip made).
        let lossy = (self.entry.info.version(version)).is_some_and(|v| v.lossy);
        let object = match lossy {
            true => {
                let hub = self.hub_of(object.clone(), version, None)?;
                self.defaulted(self.as_version(&hub, version)?, version, self.schema)
            }
            false => object,
        };
        let hub = self.hub_of(object.clone(), version, None)?;
        let back = self.as_version(&hub, version)?;
        same(
            &canonical(object.clone(), self.schema),
            &canonical(back, self.schema),
            &format!("{version} -> hub -> {version} is not the identity"),
        )?;

        // 3. hub -> V -> onto the same hub.
        let hub = (self.storage_entry.to_hub(stored.clone(), storage)).map_err(|e| {
            format!("{storage} object does not convert to the hub: {e}\n  object: {stored}")
        })?;
        // A lossy version's first write may change the hub; the second may not.
        let hub = match lossy {
            true => {
                let read = self.defaulted(self.as_version(&hub, version)?, version, self.schema);
                let base = self.copy(&hub)?;
                self.hub_of(read, version, Some(base))?
            }
            false => hub,
        };
        let read = self.defaulted(self.as_version(&hub, version)?, version, self.schema);
        let base = self.copy(&hub)?;
        let written = self.hub_of(read, version, Some(base))?;
        same(
            &self.hub_json(&hub)?,
            &self.hub_json(&written)?,
            &format!("hub -> {version} -> onto the same hub loses or changes something"),
        )?;

        // 5. V -> protobuf -> V.
        if let Some(message) = self.entry.info.protobuf(self.version) {
            let body = kapi_core::api::protobuf::encode::object(message, &object)
                .map_err(|e| format!("{version} object does not encode as protobuf: {e}"))?;
            let read = kapi_core::api::protobuf::decode_body(message, &body)
                .map_err(|e| format!("the protobuf of a {version} object does not decode: {e}"))?;
            same(
                &canonical(without_zeros(object.clone()), self.schema),
                &canonical(without_zeros(read), self.schema),
                &format!("{version} -> protobuf -> {version} loses or changes something"),
            )?;
        }

        // 4. hub -> S -> new hub.
        if version == storage && std::ptr::eq(self.entry, self.storage_entry) {
            let again = self.hub_of(self.as_version(&hub, storage)?, storage, None)?;
            same(
                &self.hub_json(&hub)?,
                &self.hub_json(&again)?,
                &format!("hub -> {storage} (storage) -> new hub loses something"),
            )?;
        }
        Ok(())
    }

    /// A generated object as the registry sees a request body: with type meta, defaulted,
    /// and valid (property 1).
    fn request(
        &self,
        object: Value,
        version: &str,
        schema: KindSchema<'_>,
    ) -> Result<Value, String> {
        let object = match object.get("apiVersion") {
            Some(_) => object,
            None => with_type_meta(object, self.entry, version),
        };
        let mut object = object;
        schema.default(&mut object);
        let errors = schema.validate(&object);
        if !errors.is_empty() {
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(format!(
                "the generator made an object outside the {version} schema (a bug in \
                 kapi::testing::arbitrary):\n  {}\n  object: {object}",
                errors.join("\n  ")
            ));
        }
        // Code defaults after the check: kube's own types write a nil list as `null`,
        // which their strategies judge, never their schemas.
        Ok(self.defaulted(object, version, schema))
    }

    /// `object` (in `version`) with the defaults a request gets: its schema's, then those
    /// its type sets by code (`#[resource(defaults)]`), as the server's decoding sets them.
    fn defaulted(&self, mut object: Value, version: &str, schema: KindSchema<'_>) -> Value {
        schema.default(&mut object);
        match self.entry.default_in(&object, version) {
            Ok(Some(defaulted)) => defaulted,
            _ => object,
        }
    }

    fn hub_of(
        &self,
        object: Value,
        version: &str,
        base: Option<ErasedHub>,
    ) -> Result<ErasedHub, String> {
        let shown = object.to_string();
        let hub = match base {
            Some(base) => self.entry.to_hub_over(object, version, || Ok(base)),
            None => self.entry.to_hub(object, version),
        };
        hub.map_err(|e| {
            format!("{version} object does not convert to the hub: {e}\n  object: {shown}")
        })
    }

    fn as_version(&self, hub: &ErasedHub, version: &str) -> Result<Value, String> {
        (self.entry.from_hub(self.copy(hub)?, version))
            .map_err(|e| format!("the hub does not convert to {version}: {e}"))
    }

    fn hub_json(&self, hub: &ErasedHub) -> Result<Value, String> {
        (self.entry.hub_json(hub)).map_err(|e| format!("the hub does not serialize: {e}"))
    }

    /// A copy of `hub`, through its JSON as the registry copies one.
    fn copy(&self, hub: &ErasedHub) -> Result<ErasedHub, String> {
        (self.entry.hub_from_json(self.hub_json(hub)?))
            .map_err(|e| format!("the hub does not deserialize from its own JSON: {e}"))
    }
}

/// `value` without the zero scalars (`""`, `0`, `false`) of its objects' fields, at any
/// depth (list items are kept).
fn without_zeros(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            (fields.into_iter())
                .filter(|(_, v)| !matches!(v, Value::String(s) if s.is_empty()))
                .filter(|(_, v)| !matches!(v, Value::Bool(false)))
                .filter(|(_, v)| v.as_f64() != Some(0.0))
                .map(|(k, v)| (k, without_zeros(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_zeros).collect()),
        other => other,
    }
}

fn with_type_meta(object: Value, entry: &KindEntry, version: &str) -> Value {
    let mut with = Map::new();
    with.insert("apiVersion".into(), entry.api_version(version).into());
    with.insert("kind".into(), entry.info.kind.into());
    if let Value::Object(fields) = object {
        with.extend(fields);
    }
    Value::Object(with)
}

/// `object` as the round-trip identity compares it: defaulted by `schema`, and with empty
/// values (`null`, `{}`, `[]`) dropped from objects, innermost first. List items are kept
/// whatever they hold: their position is meaningful.
pub fn canonical(mut object: Value, schema: KindSchema<'_>) -> Value {
    schema.default(&mut object);
    prune(&mut object);
    object
}

fn prune(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.values_mut().for_each(prune);
            fields.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(fields) => fields.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// `Ok` when `expected == actual`; else `what`, the first difference and both values.
fn same(expected: &Value, actual: &Value, what: &str) -> Result<(), String> {
    let Some(at) = difference(expected, actual, &mut String::new()) else {
        return Ok(());
    };
    Err(format!(
        "{what}\n  first difference at {at}\n  expected: {expected}\n  actual:   {actual}"
    ))
}

/// The JSON path of the first difference between `a` and `b`, with both values there. A
/// field that is a zero (`""`, `0`, `false`, an object of zeros) on one side may be absent
/// on the other: a type
/// may leave a zero out or write it, as Go's `omitempty` leaves it out and a field without
/// it writes it (kube's own kinds).
fn difference(a: &Value, b: &Value, path: &mut String) -> Option<String> {
    match (a, b) {
        (Value::Object(a_fields), Value::Object(b_fields)) => {
            let keys = a_fields
                .keys()
                .chain(b_fields.keys().filter(|k| !a_fields.contains_key(*k)));
            for key in keys {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let (x, y) = (a_fields.get(key), b_fields.get(key));
                let found = match (x, y) {
                    (Some(x), Some(y)) => difference(x, y, path),
                    (Some(zero), None) | (None, Some(zero)) if is_zero(zero) => None,
                    _ if x == y => None,
                    _ => Some(format!("{path}: {} vs {}", shown(x), shown(y))),
                };
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (x, y)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{index}]"));
                let found = difference(x, y, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some(format!("{path}: {a} vs {b}")),
    }
}

/// Go's zero: of a scalar, or a struct of zeros (Go writes a value struct always).
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(flag) => !flag,
        Value::String(text) => text.is_empty(),
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.values().all(is_zero),
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), ToString::to_string)
}
