//! Where admission policies come from (kube's `policy_source`): the policies and bindings
//! of one pair of kinds, read from the registry's watch caches and compiled when they
//! change. A policy is compiled when its resource version moves, and only while a
//! binding names it; a write reuses what was compiled while neither kind's cache moved
//! (their [`Stamp`]), with no list of either.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use kapi_core::error::ApiError;
use kapi_core::meta::ObjectMeta;
use kapi_kinds::admissionregistration::GROUP;
use kapi_registry::{Registry, SharedObject, Stamp};

use crate::webhooks::{configurations, same};

/// A kind of admission policy, with its binding.
pub(crate) trait PolicyKind: Send + Sync + 'static {
    /// The policy as stored.
    type Policy: serde::de::DeserializeOwned;
    /// The binding as stored.
    type Binding: serde::de::DeserializeOwned + Clone + Send + Sync;
    /// The policy compiled.
    type Compiled: Send + Sync;
    /// The policies' kind (in `admissionregistration.k8s.io`).
    const POLICY: &'static str;
    /// The bindings' kind.
    const BINDING: &'static str;
    /// The policy's metadata.
    fn metadata(policy: &Self::Policy) -> &ObjectMeta;
    /// The policy a binding names.
    fn policy_name(binding: &Self::Binding) -> &str;
    /// Compiles a policy.
    fn compile(policy: Self::Policy) -> Self::Compiled;
}

/// A policy with the bindings that name it.
pub(crate) struct Hook<K: PolicyKind> {
    pub(crate) policy: Arc<K::Compiled>,
    pub(crate) bindings: Vec<K::Binding>,
}

/// The compiled policies, and what they were compiled from.
struct State<K: PolicyKind> {
    revisions: Option<Stamp>,
    from: Vec<SharedObject>,
    hooks: Arc<Vec<Hook<K>>>,
    /// Each policy compiled, by name, with the resource version it was compiled at.
    by_name: HashMap<String, (String, Arc<K::Compiled>)>,
}

/// The policies of one kind, compiled as they change.
pub(crate) struct Source<K: PolicyKind> {
    state: Mutex<Option<Arc<State<K>>>>,
}

impl<K: PolicyKind> Default for Source<K> {
    fn default() -> Self {
        Source {
            state: Mutex::new(None),
        }
    }
}

impl<K: PolicyKind> Source<K> {
    /// Whether no binding exists (read from the binding kind's cache count).
    pub(crate) fn idle(registry: &Registry) -> bool {
        let bindings = registry.scheme().by_kind(GROUP, K::BINDING);
        bindings.is_none_or(|kind| registry.cached_count(&kind) == Some(0))
    }

    /// The policies that have bindings, compiled, in name order (their bindings in name
    /// order too); compiled again only when a policy changed.
    pub(crate) async fn current(&self, registry: &Registry) -> Result<Arc<Vec<Hook<K>>>, ApiError> {
        let kind = |kind| registry.scheme().by_kind(GROUP, kind);
        let revisions = match (kind(K::POLICY), kind(K::BINDING)) {
            (Some(policies), Some(bindings)) => registry.stamp(&[&policies, &bindings]),
            _ => None,
        };
        let last = || self.state.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(current) = last().filter(|c| c.revisions.is_some() && c.revisions == revisions)
        {
            return Ok(Arc::clone(&current.hooks));
        }
        let policies = configurations(registry, K::POLICY).await?;
        let bindings = configurations(registry, K::BINDING).await?;
        let from: Vec<SharedObject> = policies.iter().chain(&bindings).cloned().collect();
        let previous = last();
        if let Some(previous) = previous.as_ref().filter(|c| same(&c.from, &from)) {
            let current = Arc::new(State {
                revisions,
                from,
                hooks: Arc::clone(&previous.hooks),
                by_name: previous.by_name.clone(),
            });
            *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(current);
            return Ok(Arc::clone(&previous.hooks));
        }
        let mut named: BTreeMap<String, Vec<K::Binding>> = BTreeMap::new();
        for object in &bindings {
            let Some(binding) = typed::<K::Binding>(object) else {
                continue;
            };
            (named.entry(K::policy_name(&binding).to_owned()))
                .or_default()
                .push(binding);
        }
        let mut hooks = Vec::new();
        let mut by_name = HashMap::new();
        for object in &policies {
            let Some(policy) = typed::<K::Policy>(object) else {
                continue;
            };
            let metadata = K::metadata(&policy);
            let name = metadata.name.clone().unwrap_or_default();
            // A policy no binding names is neither compiled nor evaluated.
            let Some(bindings) = named.remove(&name) else {
                continue;
            };
            let version = metadata.resource_version.clone().unwrap_or_default();
            let reused = (previous.as_ref())
                .and_then(|p| p.by_name.get(&name))
                .filter(|(at, _)| *at == version)
                .map(|(_, compiled)| Arc::clone(compiled));
            // Compiling leaves the worker: a policy may hold many expressions.
            let compiled =
                reused.unwrap_or_else(|| Arc::new(kapi_registry::blocking(|| K::compile(policy))));
            by_name.insert(name, (version, Arc::clone(&compiled)));
            hooks.push(Hook {
                policy: compiled,
                bindings,
            });
        }
        let hooks = Arc::new(hooks);
        let current = Arc::new(State {
            revisions,
            from,
            hooks: Arc::clone(&hooks),
            by_name,
        });
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(current);
        Ok(hooks)
    }
}

/// A stored policy or binding as its type; one that does not read (which validation
/// keeps from being stored) is logged and left out rather than failing every write.
fn typed<K: serde::de::DeserializeOwned>(object: &SharedObject) -> Option<K> {
    match serde_json::from_value(object.value()) {
        Ok(typed) => Some(typed),
        Err(error) => {
            tracing::warn!(%error, "an admission policy or binding that does not read is ignored");
            None
        }
    }
}
