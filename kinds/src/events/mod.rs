//! `events.k8s.io`: the Events of the core group, seen through the group newer reporters
//! use (client-go's `events` package, kube-rs's `Recorder`).
//!
//! kube-apiserver keeps both groups' Events in one storage, as one internal type; so does
//! kapi: [`Event`] (generated, [`crate::api::events`]) is declared `stored_with` the core
//! [`crate::core::Event`], whose hub, storage keys (`/registry/events/...`) and storage
//! version (`v1`) it shares. An Event written through either group is read through both,
//! and one watch of either sees the other's writes.

pub mod v1;

pub use crate::api::events::Event;
