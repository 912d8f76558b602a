//! The typed functions behind a compiled kind's entry in the scheme: generic over the
//! hub and version types, each erased to a function pointer (`KindEntry::version`,
//! `KindEntry::stored_with`), so that the registry converts, encodes and edits objects of
//! any kind without knowing its types.
//!
//! Objects are decoded into their types from two sources only: stored bytes, and a
//! borrowed `Value`. Every decoder is a copy of the whole type tree's deserializer (for a
//! Pod, hundreds of kilobytes of the program), so an owned `Value` is read through a
//! reference too: it costs a copy of its strings, where a third copy of every kind's
//! deserializers cost megabytes.

use std::any::Any;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ConversionError, ErasedHub, type_meta};
use crate::api::{Convert, Resource};
use crate::defaults::Defaults;
use crate::meta::ObjectMeta;

pub(super) fn to_hub<Hub, V>(
    object: Value,
    base: Option<ErasedHub>,
) -> Result<ErasedHub, ConversionError>
where
    Hub: Resource + Default + Send + 'static,
    V: Convert<Hub> + DeserializeOwned + 'static,
{
    onto_hub::<Hub, V>(V::deserialize(&object)?, base)
}

/// [`to_hub`] with `V`'s defaults set on the decoded object before it converts.
pub(super) fn to_hub_defaulted<Hub, V>(
    object: Value,
    base: Option<ErasedHub>,
) -> Result<ErasedHub, ConversionError>
where
    Hub: Resource + Default + Send + 'static,
    V: Convert<Hub> + Defaults + DeserializeOwned + 'static,
{
    let mut typed = V::deserialize(&object)?;
    typed.set_defaults();
    onto_hub::<Hub, V>(typed, base)
}

/// `object` decoded as `V`, defaulted, and encoded again.
pub(super) fn defaults_json<V>(object: &Value) -> Result<Value, ConversionError>
where
    V: Defaults + Serialize + DeserializeOwned,
{
    let mut typed = V::deserialize(object)?;
    typed.set_defaults();
    let mut defaulted = serde_json::to_value(typed)?;
    // The type has no type meta of its own: the object's stays.
    if let (Some(from), Some(to)) = (object.as_object(), defaulted.as_object_mut()) {
        for key in ["apiVersion", "kind"] {
            if let Some(value) = from.get(key) {
                to.insert(key.to_owned(), value.clone());
            }
        }
    }
    Ok(defaulted)
}

/// An object's bytes decoded as version `V` and converted to a new hub: [`to_hub`] without
/// the `Value` in between (which hashed every key into a map only to be read once).
pub(super) fn bytes_to_hub<Hub, V>(bytes: &[u8]) -> Result<ErasedHub, ConversionError>
where
    Hub: Resource + Default + Send + 'static,
    V: Convert<Hub> + DeserializeOwned + 'static,
{
    onto_hub::<Hub, V>(serde_json::from_slice(bytes)?, None)
}

/// [`bytes_to_hub`] with `V`'s defaults set on the decoded object: kube's storage decodes
/// with defaults too, so what an object read back from storage lacks (a field added since
/// it was written, a Job's labels copied from its template) is filled as on a request.
pub(super) fn bytes_to_hub_defaulted<Hub, V>(bytes: &[u8]) -> Result<ErasedHub, ConversionError>
where
    Hub: Resource + Default + Send + 'static,
    V: Convert<Hub> + Defaults + DeserializeOwned + 'static,
{
    let mut typed: V = serde_json::from_slice(bytes)?;
    typed.set_defaults();
    onto_hub::<Hub, V>(typed, None)
}

/// `typed` converted onto `base` (a new hub when `None`).
fn onto_hub<Hub, V>(typed: V, base: Option<ErasedHub>) -> Result<ErasedHub, ConversionError>
where
    Hub: Resource + Default + Send + 'static,
    V: Convert<Hub> + 'static,
{
    // The version that is the hub type (`Convert`'s identity) is the hub, with no default
    // made to be replaced.
    if base.is_none() && std::any::TypeId::of::<V>() == std::any::TypeId::of::<Hub>() {
        let same = (Box::new(typed) as Box<dyn Any>).downcast::<Hub>();
        return same
            .map(|hub| hub as ErasedHub)
            .map_err(|_| ConversionError::Registration(Hub::INFO.kind));
    }
    let mut hub = match base {
        Some(base) => base
            .downcast::<Hub>()
            .map_err(|_| ConversionError::Registration(Hub::INFO.kind))?,
        None => Box::default(),
    };
    typed.into_hub(&mut hub);
    Ok(hub)
}

pub(super) fn from_hub<Hub, V>(hub: ErasedHub) -> Result<Value, ConversionError>
where
    Hub: Resource + 'static,
    V: Convert<Hub> + Serialize + 'static,
{
    // The version that is the hub type (`Convert`'s identity, a clone) serializes the hub
    // as it is.
    if let Some(same) = hub.downcast_ref::<V>() {
        return Ok(serde_json::to_value(same)?);
    }
    let hub = hub
        .downcast::<Hub>()
        .map_err(|_| ConversionError::Registration(Hub::INFO.kind))?;
    Ok(serde_json::to_value(V::from_hub(&hub))?)
}

pub(super) fn typed_round_trip<V: Serialize + DeserializeOwned>(
    object: &Value,
) -> Result<Value, ConversionError> {
    Ok(serde_json::to_value(V::deserialize(object)?)?)
}

/// `f` of `hub` in version `V`, the hub left as it is: the version that is the hub type
/// is the hub itself, not a copy of it.
pub(super) fn as_version<Hub, V, T>(
    hub: &ErasedHub,
    f: impl FnOnce(&V) -> Result<T, serde_json::Error>,
) -> Result<T, ConversionError>
where
    Hub: Resource + 'static,
    V: Convert<Hub> + 'static,
{
    if let Some(same) = hub.downcast_ref::<V>() {
        return Ok(f(same)?);
    }
    let hub = (hub.downcast_ref::<Hub>()).ok_or(ConversionError::Registration(Hub::INFO.kind))?;
    Ok(f(&V::from_hub(hub))?)
}

pub(super) fn from_hub_ref<Hub, V>(hub: &ErasedHub) -> Result<Value, ConversionError>
where
    Hub: Resource + 'static,
    V: Convert<Hub> + Serialize + 'static,
{
    as_version::<Hub, V, _>(hub, |object| serde_json::to_value(object))
}

pub(super) fn hub_metadata<Hub: Resource + 'static>(
    hub: &mut ErasedHub,
) -> Option<&mut ObjectMeta> {
    hub.downcast_mut::<Hub>()?.metadata_mut()
}

pub(super) fn encode<Hub, V>(
    hub: &ErasedHub,
    api_version: &str,
    kind: &str,
) -> Result<Option<Vec<u8>>, ConversionError>
where
    Hub: Resource + 'static,
    V: Convert<Hub> + Serialize + 'static,
{
    as_version::<Hub, V, _>(hub, |object| type_meta::encode(object, api_version, kind))
}

/// A stored value (as [`KindEntry::to_stored`] makes it) as its stored bytes: without
/// `metadata.resourceVersion` (the storage revision is the resourceVersion; the other
/// fields keep their order), with no spare capacity (the watch cache keeps them).
pub fn stored_value_bytes(mut value: Value) -> Result<Vec<u8>, ConversionError> {
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.shift_remove("resourceVersion");
    }
    let mut bytes = serde_json::to_vec(&value)?;
    bytes.shrink_to_fit();
    Ok(bytes)
}

pub(super) fn hub_to_json<Hub: Serialize + 'static>(
    hub: &ErasedHub,
) -> Result<Value, ConversionError> {
    let hub = (hub.downcast_ref::<Hub>())
        .ok_or(ConversionError::Registration(std::any::type_name::<Hub>()))?;
    Ok(serde_json::to_value(hub)?)
}

pub(super) fn hub_from_json_ref<Hub: DeserializeOwned + Send + 'static>(
    json: &Value,
) -> Result<ErasedHub, ConversionError> {
    Ok(Box::new(Hub::deserialize(json)?))
}

pub(super) fn hub_from_json<Hub: DeserializeOwned + Send + 'static>(
    json: Value,
) -> Result<ErasedHub, ConversionError> {
    hub_from_json_ref::<Hub>(&json)
}
