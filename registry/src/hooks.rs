//! What the server registers with the registry for one subresource of one resource (its
//! actions and connectors), found again by group, resource and subresource.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// `(group, plural, subresource)`.
type Key = (String, String, String);

/// Registered hooks of one kind (`dyn Action`, `dyn Connector`), by resource.
pub(crate) struct ByResource<T: ?Sized>(RwLock<HashMap<Key, Arc<T>>>);

impl<T: ?Sized> Default for ByResource<T> {
    fn default() -> Self {
        ByResource(RwLock::new(HashMap::new()))
    }
}

impl<T: ?Sized> ByResource<T> {
    /// Registers `hook` for `group`/`plural`'s `subresource` (replacing any before).
    pub(crate) fn set(&self, group: &str, plural: &str, subresource: &str, hook: Arc<T>) {
        let mut hooks = self.0.write().unwrap_or_else(|e| e.into_inner());
        hooks.insert(key(group, plural, subresource), hook);
    }

    /// The hook registered for `group`/`plural`'s `subresource`.
    pub(crate) fn get(&self, group: &str, plural: &str, subresource: &str) -> Option<Arc<T>> {
        let hooks = self.0.read().unwrap_or_else(|e| e.into_inner());
        hooks.get(&key(group, plural, subresource)).cloned()
    }
}

fn key(group: &str, plural: &str, subresource: &str) -> Key {
    (group.to_owned(), plural.to_owned(), subresource.to_owned())
}
