//! Values computed from whole kinds (every PriorityClass, every LimitRange by namespace,
//! the webhooks of every configuration), kept until one of those kinds changes.
//!
//! In-process readers (admission plugins on each write, controllers on each pass) would
//! otherwise list and decode the same objects again and again. A [`Stamp`] is the
//! revision of the last change each kind's watch cache saw; progress without a change
//! leaves it, so equal stamps mean the caches hold the same objects. The stamp is read
//! before the lists a value is built from: a change during the build only builds again
//! later, never keeps a stale value.

use std::sync::{Arc, Mutex};

use kapi_core::error::ApiError;
use kapi_core::scheme::KindEntry;
use kapi_storage::Revision;

use crate::Registry;

/// The last change of some kinds' watch caches (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp(Vec<Revision>);

impl Registry {
    /// The stamp of `kinds` now; `None` while any of their caches is not ready.
    pub fn stamp(&self, kinds: &[&KindEntry]) -> Option<Stamp> {
        (kinds.iter())
            .map(|kind| (self.caches.for_prefix(&self.keys().kind_prefix(kind.info)))?.changed())
            .collect::<Option<Vec<_>>>()
            .map(Stamp)
    }

    /// How many objects of `kind` its watch cache holds (`None`: it has no cache).
    pub fn cached_count(&self, kind: &KindEntry) -> Option<usize> {
        let cache = self
            .caches
            .for_prefix(&self.keys().kind_prefix(kind.info))?;
        cache.revision().map(|_| cache.len())
    }
}

/// A value built from whole kinds, built again only when one of them changed.
pub struct Derived<T> {
    built: Mutex<Option<(Stamp, Arc<T>)>>,
}

impl<T> Default for Derived<T> {
    fn default() -> Self {
        Derived::new()
    }
}

impl<T> Derived<T> {
    /// Nothing built yet.
    pub const fn new() -> Self {
        Derived {
            built: Mutex::new(None),
        }
    }

    /// The value for what `kinds` hold now: the last one built while none of them
    /// changed since, else `build`'s (kept unless a cache was not ready).
    pub async fn get<F, Fut>(
        &self,
        registry: &Registry,
        kinds: &[&KindEntry],
        build: F,
    ) -> Result<Arc<T>, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let stamp = registry.stamp(kinds);
        if let Some(stamp) = &stamp {
            let built = self.built.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, value)) = built.as_ref()
                && at == stamp
            {
                return Ok(Arc::clone(value));
            }
        }
        let value = Arc::new(build().await?);
        if let Some(stamp) = stamp {
            *self.built.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((stamp, Arc::clone(&value)));
        }
        Ok(value)
    }
}

/// Whether a periodic pass over whole kinds has work: none while they have not changed
/// since a pass that finished everything.
#[derive(Default)]
pub struct Passes {
    done_at: Mutex<Option<Stamp>>,
}

impl Passes {
    /// The stamp a pass starts from, or `None` when the last finished pass saw the same.
    pub fn start(&self, registry: &Registry, kinds: &[&KindEntry]) -> Option<Option<Stamp>> {
        let stamp = registry.stamp(kinds);
        let done = self.done_at.lock().unwrap_or_else(|e| e.into_inner());
        match (&stamp, done.as_ref()) {
            (Some(now), Some(done)) if now == done => None,
            _ => Some(stamp),
        }
    }

    /// The pass that started at `stamp` ended; `left` when it left work for the next.
    pub fn finish(&self, stamp: Option<Stamp>, left: bool) {
        *self.done_at.lock().unwrap_or_else(|e| e.into_inner()) = stamp.filter(|_| !left);
    }
}
