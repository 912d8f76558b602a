//! The RBAC authorizer (kube's `rbac.RBACAuthorizer`): a request is allowed when a rule of
//! a role bound to its user, or to one of the user's groups, allows it. ClusterRoleBindings
//! grant ClusterRoles everywhere; RoleBindings grant a Role or ClusterRole in their
//! namespace (so only to namespaced requests). Nothing denies: without an allowing rule
//! the authorizer has no opinion, with the bindings that name missing roles as its reason.
//!
//! Decisions read an [`Index`] in memory, never storage: one task per RBAC kind follows
//! that kind's watch cache ([`Registry::follow_stored`]) and, on every change, builds a
//! new index, which requests read without a lock (`arc-swap`). [`Rbac::start`] returns
//! once the index holds what storage held, so the first request is judged on it. A
//! change is visible to requests once the cache has seen it (kube's informers have the
//! same delay).
//!
//! [`bootstrap`] holds kube's default roles and bindings, reconciled at every start.

pub mod bootstrap;
pub mod escalation;
mod rules;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

use super::{Attributes, Authorizer, Decision};
use kapi_core::error::ApiError;
use kapi_kinds::rbac::{
    ClusterRole, ClusterRoleBinding, GROUP, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kapi_registry::Registry;
use kapi_storage::cache::{CachedObject, Change, End, Snapshot, Subscription};

pub use rules::allows;

/// The RBAC authorizer.
pub struct Rbac {
    index: Arc<ArcSwap<Index>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Rbac {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Rbac {
    /// The rules of the role a binding in `namespace` refers to, if it exists.
    pub fn role_rules(&self, role_ref: &RoleRef, namespace: &str) -> Option<Vec<PolicyRule>> {
        let index = self.index.load();
        index
            .role(role_ref, namespace)
            .ok()
            .map(<[PolicyRule]>::to_vec)
    }

    /// Loads the RBAC objects from the watch caches and follows them. Fails when the
    /// scheme does not serve the four RBAC kinds.
    pub async fn start(registry: &Arc<Registry>) -> Result<Rbac, ApiError> {
        let shared = Arc::new(Shared {
            sources: Mutex::new(Sources::default()),
            index: Arc::new(ArcSwap::from_pointee(Index::default())),
        });
        let mut first = Vec::new();
        for kind in Kind::ALL {
            let (snapshot, subscription) = registry.follow_stored(GROUP, kind.name()).await?;
            shared.reset(kind, &snapshot);
            first.push((kind, subscription));
        }
        let tasks = (first.into_iter())
            .map(|(kind, subscription)| {
                let follower = Follower {
                    registry: Arc::downgrade(registry),
                    kind,
                    shared: Arc::clone(&shared),
                };
                tokio::spawn(follower.run(subscription))
            })
            .collect();
        Ok(Rbac {
            index: Arc::clone(&shared.index),
            tasks,
        })
    }
}

impl Authorizer for Rbac {
    fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let index = self.index.load();
        let request = attributes.request;
        let mut errors = Vec::new();
        let mut allowed = None;
        index.visit(attributes.user, &request.namespace, |found| match found {
            Ok((grant, rules)) => {
                if rules.iter().any(|rule| rules::allows(rule, request)) {
                    allowed = Some(Arc::clone(&grant.reason));
                    return true;
                }
                false
            }
            Err(error) => {
                errors.push(error);
                false
            }
        });
        if let Some(reason) = allowed {
            return Decision::Allow(reason);
        }
        Decision::NoOpinion(match errors.len() {
            0 => super::no_reason(),
            1 => Arc::from(format!("RBAC: {}", errors[0])),
            _ => Arc::from(format!("RBAC: [{}]", errors.join(", "))),
        })
    }

    /// The rules of every role bound to `user` (cluster-wide, then `namespace`'s), with the
    /// bindings that name missing roles as errors; never incomplete.
    fn rules_for(&self, user: &crate::authn::UserInfo, namespace: &str) -> super::RulesFor {
        let index = self.index.load();
        let mut found = super::RulesFor::default();
        index.visit(user, namespace, |visited| {
            match visited {
                Ok((_, rules)) => found.rules.extend(rules.iter().cloned()),
                Err(error) => found.errors.push(error),
            }
            false
        });
        found
    }
}

/// One binding's grant of a role to a subject.
#[derive(Clone, Debug)]
struct Grant {
    /// `ClusterRoleBinding` or `RoleBinding`.
    binding_kind: &'static str,
    binding: String,
    /// The binding's namespace (RoleBindings).
    namespace: String,
    role: RoleRef,
    /// `User "alice"`, `Group "devs"`.
    subject: String,
    /// What an allowed request's reason says ([`Grant::describe`]), written once.
    reason: Arc<str>,
}

impl Grant {
    /// kube's reason of an allowed request.
    fn describe(&self) -> String {
        let binding = if self.namespace.is_empty() {
            format!("{} {:?}", self.binding_kind, self.binding)
        } else {
            format!(
                "{} \"{}/{}\"",
                self.binding_kind, self.namespace, self.binding
            )
        };
        format!(
            "RBAC: allowed by {binding} of {} {:?} to {}",
            self.role.kind, self.role.name, self.subject
        )
    }
}

/// Grants by subject.
#[derive(Default)]
struct Grants {
    users: HashMap<String, Vec<Grant>>,
    groups: HashMap<String, Vec<Grant>>,
}

impl Grants {
    fn add(&mut self, subject: &Subject, binding_namespace: &str, mut grant: Grant) {
        let (user, described_as) = match subject.kind.as_str() {
            "User" => (
                Some(subject.name.clone()),
                format!("User {:?}", subject.name),
            ),
            "Group" => (None, format!("Group {:?}", subject.name)),
            "ServiceAccount" => {
                let namespace = match subject.namespace.as_str() {
                    "" => binding_namespace,
                    namespace => namespace,
                };
                if namespace.is_empty() {
                    return;
                }
                let user = format!("system:serviceaccount:{namespace}:{}", subject.name);
                let described_as = format!("ServiceAccount \"{namespace}/{}\"", subject.name);
                (Some(user), described_as)
            }
            _ => return,
        };
        grant.subject = described_as;
        grant.reason = Arc::from(grant.describe());
        let entries = match user {
            Some(user) => self.users.entry(user),
            None => self.groups.entry(subject.name.clone()),
        };
        entries.or_default().push(grant);
    }

    /// The grants of `user` and its groups.
    fn of<'a>(&'a self, user: &'a crate::authn::UserInfo) -> impl Iterator<Item = &'a Grant> {
        let users = self.users.get(&user.name).into_iter().flatten();
        let groups = (user.groups.iter()).flat_map(|g| self.groups.get(g).into_iter().flatten());
        users.chain(groups)
    }
}

/// Everything a decision reads.
#[derive(Default)]
pub struct Index {
    cluster_roles: HashMap<String, Arc<Vec<PolicyRule>>>,
    /// By namespace, then name.
    roles: HashMap<String, HashMap<String, Arc<Vec<PolicyRule>>>>,
    cluster_grants: Grants,
    /// RoleBindings' grants, by namespace.
    grants: HashMap<String, Grants>,
}

impl Index {
    fn build(sources: &Sources) -> Index {
        let mut index = Index::default();
        for role in sources.cluster_roles.values() {
            let name = role.metadata.name.clone().unwrap_or_default();
            index
                .cluster_roles
                .insert(name, Arc::new(role.rules.clone()));
        }
        for role in sources.roles.values() {
            let namespace = role.metadata.namespace.clone().unwrap_or_default();
            let name = role.metadata.name.clone().unwrap_or_default();
            let rules = Arc::new(role.rules.clone());
            index
                .roles
                .entry(namespace)
                .or_default()
                .insert(name, rules);
        }
        for binding in sources.cluster_role_bindings.values() {
            let grant = Grant {
                binding_kind: "ClusterRoleBinding",
                binding: binding.metadata.name.clone().unwrap_or_default(),
                namespace: String::new(),
                role: binding.role_ref.clone(),
                subject: String::new(),
                reason: Arc::from(""),
            };
            for subject in &binding.subjects {
                index.cluster_grants.add(subject, "", grant.clone());
            }
        }
        for binding in sources.role_bindings.values() {
            let namespace = binding.metadata.namespace.clone().unwrap_or_default();
            let grant = Grant {
                binding_kind: "RoleBinding",
                binding: binding.metadata.name.clone().unwrap_or_default(),
                namespace: namespace.clone(),
                role: binding.role_ref.clone(),
                subject: String::new(),
                reason: Arc::from(""),
            };
            let grants = index.grants.entry(namespace.clone()).or_default();
            for subject in &binding.subjects {
                grants.add(subject, &namespace, grant.clone());
            }
        }
        index
    }

    /// Calls `visit` with each grant of `user` that applies in `namespace` and its role's
    /// rules (or the error of a missing role), until it returns true.
    fn visit(
        &self,
        user: &crate::authn::UserInfo,
        namespace: &str,
        mut visit: impl FnMut(Result<(&Grant, &[PolicyRule]), String>) -> bool,
    ) {
        for grant in self.cluster_grants.of(user) {
            let found = self.role(&grant.role, "").map(|rules| (grant, rules));
            if visit(found) {
                return;
            }
        }
        if namespace.is_empty() {
            return;
        }
        let Some(grants) = self.grants.get(namespace) else {
            return;
        };
        for grant in grants.of(user) {
            let found = self
                .role(&grant.role, namespace)
                .map(|rules| (grant, rules));
            if visit(found) {
                return;
            }
        }
    }

    /// The rules of the role `role_ref` names from `namespace` (a Role is looked up there,
    /// a ClusterRole everywhere), or kube's error for a missing one.
    fn role(&self, role_ref: &RoleRef, namespace: &str) -> Result<&[PolicyRule], String> {
        let name = &role_ref.name;
        if role_ref.kind == "Role" {
            (self.roles.get(namespace).and_then(|roles| roles.get(name)))
                .map(|rules| &rules[..])
                .ok_or_else(|| not_found("role", name))
        } else {
            (self.cluster_roles.get(name))
                .map(|rules| &rules[..])
                .ok_or_else(|| not_found("clusterrole", name))
        }
    }
}

fn not_found(kind: &str, name: &str) -> String {
    format!("{kind}.{GROUP} {name:?} not found")
}

/// The RBAC objects, by storage key.
#[derive(Default)]
struct Sources {
    roles: BTreeMap<String, Role>,
    cluster_roles: BTreeMap<String, ClusterRole>,
    role_bindings: BTreeMap<String, RoleBinding>,
    cluster_role_bindings: BTreeMap<String, ClusterRoleBinding>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

impl Kind {
    const ALL: [Kind; 4] = [
        Kind::Role,
        Kind::ClusterRole,
        Kind::RoleBinding,
        Kind::ClusterRoleBinding,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Role => "Role",
            Kind::ClusterRole => "ClusterRole",
            Kind::RoleBinding => "RoleBinding",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
        }
    }
}

/// The sources and the index built from them.
struct Shared {
    sources: Mutex<Sources>,
    index: Arc<ArcSwap<Index>>,
}

impl Shared {
    fn sources(&self) -> std::sync::MutexGuard<'_, Sources> {
        self.sources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces what `kind` holds with `snapshot`.
    fn reset(&self, kind: Kind, snapshot: &Snapshot) {
        let mut sources = self.sources();
        match kind {
            Kind::Role => sources.roles.clear(),
            Kind::ClusterRole => sources.cluster_roles.clear(),
            Kind::RoleBinding => sources.role_bindings.clear(),
            Kind::ClusterRoleBinding => sources.cluster_role_bindings.clear(),
        }
        for object in &snapshot.objects {
            put(&mut sources, kind, object);
        }
        self.index.store(Arc::new(Index::build(&sources)));
    }

    fn apply(&self, kind: Kind, change: &Change) {
        let mut sources = self.sources();
        match change {
            Change::Put { object, .. } => put(&mut sources, kind, object),
            Change::Delete { prev } => {
                let key = &prev.kv.key;
                match kind {
                    Kind::Role => drop(sources.roles.remove(key)),
                    Kind::ClusterRole => drop(sources.cluster_roles.remove(key)),
                    Kind::RoleBinding => drop(sources.role_bindings.remove(key)),
                    Kind::ClusterRoleBinding => drop(sources.cluster_role_bindings.remove(key)),
                }
            }
            Change::Progress => return,
        }
        self.index.store(Arc::new(Index::build(&sources)));
    }
}

fn decode<T: DeserializeOwned>(object: &CachedObject) -> Option<T> {
    match serde_json::from_slice(&object.kv.value) {
        Ok(decoded) => Some(decoded),
        Err(e) => {
            tracing::warn!(key = %object.kv.key, error = %e, "RBAC: an object does not decode; ignored");
            None
        }
    }
}

fn put(sources: &mut Sources, kind: Kind, object: &CachedObject) {
    let key = object.kv.key.clone();
    match kind {
        Kind::Role => {
            if let Some(role) = decode(object) {
                sources.roles.insert(key, role);
            }
        }
        Kind::ClusterRole => {
            if let Some(role) = decode(object) {
                sources.cluster_roles.insert(key, role);
            }
        }
        Kind::RoleBinding => {
            if let Some(binding) = decode(object) {
                sources.role_bindings.insert(key, binding);
            }
        }
        Kind::ClusterRoleBinding => {
            if let Some(binding) = decode(object) {
                sources.cluster_role_bindings.insert(key, binding);
            }
        }
    }
}

/// Follows one kind's cache; lists again when its watch ends (the cache relisted, or this
/// follower lagged), until the registry is gone.
struct Follower {
    registry: Weak<Registry>,
    kind: Kind,
    shared: Arc<Shared>,
}

impl Follower {
    async fn run(self, mut subscription: Subscription) {
        loop {
            loop {
                match subscription.next().await {
                    Ok(event) => self.shared.apply(self.kind, &event.change),
                    Err(End::Closed) => return,
                    Err(end) => {
                        tracing::info!(kind = self.kind.name(), ?end, "RBAC: relisting");
                        break;
                    }
                }
            }
            loop {
                let Some(registry) = self.registry.upgrade() else {
                    return;
                };
                match registry.follow_stored(GROUP, self.kind.name()).await {
                    Ok((snapshot, next)) => {
                        self.shared.reset(self.kind, &snapshot);
                        subscription = next;
                        break;
                    }
                    Err(e) => {
                        drop(registry);
                        tracing::warn!(kind = self.kind.name(), error = %e, "RBAC: cannot list; retrying");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        }
    }
}
