//! Descriptors derived from Rust types: [`ProtoValue`] says what a field of a type is on
//! the wire, [`Protobuf`] is a struct's whole message. `#[derive(Protobuf)]` implements
//! both for a struct from its fields' types and their `#[protobuf(tag = N)]` numbers, so a
//! kind's wire shape is declared once, with its type.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{ProtoField, ProtoKind, ProtoMessage};
use crate::ByteString;
use crate::meta::{
    Condition, DELETE_OPTIONS_PROTO, DeleteOptions, FIELD_SELECTOR_REQUIREMENT_PROTO,
    FieldSelectorRequirement, LABEL_SELECTOR_PROTO, LABEL_SELECTOR_REQUIREMENT_PROTO,
    LabelSelector, LabelSelectorRequirement, OBJECT_META_PROTO, OBJECT_REFERENCE_PROTO,
    ObjectReference,
};

/// A struct's protobuf message.
pub trait Protobuf {
    /// Its descriptor.
    const MESSAGE: &'static ProtoMessage;
}

/// What a field of this type is on the wire.
pub trait ProtoValue {
    /// The kind of its values (a `Vec`'s items', an `Option`'s content's).
    const KIND: ProtoKind;
    /// Whether it is `repeated` (a `Vec`).
    const REPEATED: bool = false;
    /// Whether it is a Go pointer (an `Option`): its zero value is a value, kept in JSON.
    const POINTER: bool = false;
}

macro_rules! scalar {
    ($($ty:ty => $kind:expr),* $(,)?) => {
        $(impl ProtoValue for $ty {
            const KIND: ProtoKind = $kind;
        })*
    };
}

scalar! {
    String => ProtoKind::String,
    bool => ProtoKind::Bool,
    i32 => ProtoKind::Int32,
    i64 => ProtoKind::Int64,
    ByteString => ProtoKind::Bytes,
    Time => ProtoKind::Time,
    crate::meta::MicroTime => ProtoKind::MicroTime,
    Quantity => ProtoKind::Quantity,
    IntOrString => ProtoKind::IntOrString,
    RawExtension => ProtoKind::RawJson,
    ObjectMeta => ProtoKind::Message(&OBJECT_META_PROTO),
    LabelSelector => ProtoKind::Message(&LABEL_SELECTOR_PROTO),
    LabelSelectorRequirement => ProtoKind::Message(&LABEL_SELECTOR_REQUIREMENT_PROTO),
    FieldSelectorRequirement => ProtoKind::Message(&FIELD_SELECTOR_REQUIREMENT_PROTO),
    DeleteOptions => ProtoKind::Message(&DELETE_OPTIONS_PROTO),
    Condition => ProtoKind::Message(&CONDITION_PROTO),
    ObjectReference => ProtoKind::Message(&OBJECT_REFERENCE_PROTO),
}

impl<T: ProtoValue> ProtoValue for Option<T> {
    const KIND: ProtoKind = T::KIND;
    const REPEATED: bool = T::REPEATED;
    const POINTER: bool = true;
}

impl<T: ProtoValue> ProtoValue for Vec<T> {
    const KIND: ProtoKind = T::KIND;
    const REPEATED: bool = true;
}

impl<V: ProtoValue> ProtoValue for BTreeMap<String, V> {
    const KIND: ProtoKind = ProtoKind::Map(&ProtoKind::String, &V::KIND);
}

/// `k8s.io.apimachinery.pkg.apis.meta.v1.Condition` on the wire.
pub(crate) static CONDITION_PROTO: ProtoMessage = ProtoMessage {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Condition",
    fields: &[
        ProtoField::new(1, "type", ProtoKind::String),
        ProtoField::new(2, "status", ProtoKind::String),
        ProtoField::new(3, "observedGeneration", ProtoKind::Int64),
        ProtoField::new(4, "lastTransitionTime", ProtoKind::Time),
        ProtoField::new(5, "reason", ProtoKind::String),
        ProtoField::new(6, "message", ProtoKind::String),
    ],
};
