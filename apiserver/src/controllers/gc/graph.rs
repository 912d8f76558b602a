//! The collector's view of ownership, kept from the watch caches' changes (kube's
//! `GraphBuilder`): every object that has owner references, indexed by its owners' uids,
//! and the owners being deleted with the `orphan` or `foregroundDeletion` finalizer. It
//! holds nothing for an object with no owner reference that is not deleting: whether an
//! owner exists is read from its kind's watch cache when a dependent is judged.
//!
//! [`Graph::apply`] takes one change and says what it makes worth looking at again
//! ([`Work`]): a dependent whose references changed or one of whose owners changed, an
//! owner waiting for its dependents when one of them changed.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;
use serde_json::Value;

use kapi_registry::{FOREGROUND, ORPHAN};
use kapi_storage::cache::{CachedObject, Change};

/// What to look at again.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Work {
    /// The dependent at this key: do its owners still hold it?
    Dependent(String),
    /// The owner of this kind (an index into the scheme's kinds) at this key, deleting with
    /// the `orphan` or `foregroundDeletion` finalizer: are its dependents done?
    Owner(usize, String),
}

/// The metadata the collector reads from a stored object; the rest (`managedFields` above
/// all) is skipped by the decoder.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    name: String,
    namespace: Option<String>,
    #[serde(default)]
    uid: String,
    deletion_timestamp: Option<Value>,
    #[serde(default)]
    finalizers: Vec<String>,
    #[serde(default)]
    owner_references: Vec<Value>,
}

/// One object as the collector sees it.
#[derive(Clone, Debug)]
pub(super) struct Node {
    /// Its kind, an index into the scheme's kinds.
    pub kind: usize,
    /// Its storage key.
    pub key: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// `metadata.uid`.
    pub uid: String,
    /// The revision of its last change: what a conditional write of it expects.
    pub revision: u64,
    /// Whether it has a `deletionTimestamp`.
    pub deleting: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences`, as stored.
    pub owners: Vec<Value>,
}

impl Node {
    /// The object as the collector sees it, or `None` when its metadata does not decode
    /// (it cannot be judged; a later change may fix it).
    pub(super) fn of(kind: usize, object: &CachedObject) -> Option<Node> {
        #[derive(Deserialize)]
        struct Object {
            #[serde(default)]
            metadata: Metadata,
        }
        let object_meta = match serde_json::from_slice::<Object>(&object.kv.value) {
            Ok(decoded) => decoded.metadata,
            Err(error) => {
                tracing::warn!(key = object.kv.key, %error, "garbage collector: undecodable metadata");
                return None;
            }
        };
        Some(Node {
            kind,
            key: object.kv.key.clone(),
            name: object_meta.name,
            namespace: object_meta.namespace,
            uid: object_meta.uid,
            revision: object.kv.mod_revision,
            deleting: object_meta.deletion_timestamp.is_some_and(|t| !t.is_null()),
            finalizers: object_meta.finalizers,
            owners: object_meta.owner_references,
        })
    }

    /// Whether it carries `finalizer`.
    pub(super) fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Whether it is deleting and waits for the collector (orphaning or foreground).
    fn waits(&self) -> bool {
        self.deleting && (self.has_finalizer(ORPHAN) || self.has_finalizer(FOREGROUND))
    }

    /// The uids its owner references name.
    pub(super) fn owner_uids(&self) -> impl Iterator<Item = &str> {
        (self.owners.iter()).filter_map(|owner| owner.get("uid").and_then(Value::as_str))
    }
}

/// An owner waiting for the collector, by uid.
#[derive(Clone, Debug)]
pub(super) struct Waiting {
    /// Its kind.
    pub kind: usize,
    /// Its key.
    pub key: String,
    /// Whether it waits in the foreground (else it is orphaning).
    pub foreground: bool,
}

/// Dependents by their owners, and the owners that wait.
#[derive(Default)]
pub(super) struct Graph {
    /// Every object with owner references, by key.
    dependents: HashMap<String, Node>,
    /// The keys of the dependents that name each owner uid.
    by_owner: HashMap<String, BTreeSet<String>>,
    /// Owners deleting with the `orphan` or `foregroundDeletion` finalizer, by uid.
    waiting: HashMap<String, Waiting>,
    /// The uid of every waiting owner, by key (to forget it when it changes).
    waiting_keys: HashMap<String, String>,
}

impl Graph {
    /// The dependent at `key`.
    pub(super) fn dependent(&self, key: &str) -> Option<&Node> {
        self.dependents.get(key)
    }

    /// The dependents naming owner `uid`.
    pub(super) fn dependents_of(&self, uid: &str) -> impl Iterator<Item = &Node> {
        (self.by_owner.get(uid).into_iter().flatten()).filter_map(|key| self.dependents.get(key))
    }

    /// Whether any object names owner `uid`.
    pub(super) fn has_dependents(&self, uid: &str) -> bool {
        self.by_owner.get(uid).is_some_and(|keys| !keys.is_empty())
    }

    /// The owner `uid`, if it waits for the collector.
    pub(super) fn waiting(&self, uid: &str) -> Option<&Waiting> {
        self.waiting.get(uid)
    }

    /// Forgets every object of kind `kind` (its cache listed again; the new list follows
    /// as changes).
    pub(super) fn forget_kind(&mut self, kind: usize) {
        let keys: Vec<String> = (self.dependents.values())
            .filter(|node| node.kind == kind)
            .map(|node| node.key.clone())
            .collect();
        for key in keys {
            self.remove_dependent(&key);
        }
        self.waiting.retain(|_, owner| owner.kind != kind);
        let waiting = &self.waiting;
        self.waiting_keys.retain(|_, uid| waiting.contains_key(uid));
    }

    /// Takes in one change of an object of kind `kind`; adds to `work` what it makes worth
    /// looking at again.
    pub(super) fn apply(&mut self, kind: usize, change: &Change, work: &mut BTreeSet<Work>) {
        match change {
            Change::Put { object, .. } => self.put_object(kind, object, work),
            Change::Delete { prev } => self.remove(&prev.kv.key, Node::of(kind, prev), work),
            Change::Progress => {}
        }
    }

    /// An object created or updated as the cache holds it (also each object of a fresh
    /// list): decoded only when it [`concerns`](Graph::concerns) the collector.
    pub(super) fn put_object(
        &mut self,
        kind: usize,
        object: &CachedObject,
        work: &mut BTreeSet<Work>,
    ) {
        if !self.concerns(&object.kv.key, &object.kv.value) {
            return;
        }
        if let Some(node) = Node::of(kind, object) {
            self.put(node, work);
        }
    }

    /// Whether a write of the object at `key` (its stored bytes `value`) may change what
    /// the collector holds or looks at: the graph holds it already (the write may have
    /// taken away what put it there), or its bytes name owner references or a deletion
    /// timestamp. Otherwise a put does nothing, and most writes' objects (no owner, not
    /// deleting) are not decoded at all. The names are looked for as the encoders write
    /// them (neither Go's nor serde's escapes a letter); a value that merely holds the text
    /// costs a decode, nothing more.
    pub(super) fn concerns(&self, key: &str, value: &[u8]) -> bool {
        use memchr::memmem;
        self.dependents.contains_key(key)
            || self.waiting_keys.contains_key(key)
            || memmem::find(value, br#""ownerReferences""#).is_some()
            || memmem::find(value, br#""deletionTimestamp""#).is_some()
    }

    /// An object created or updated (also each object of a fresh list).
    pub(super) fn put(&mut self, node: Node, work: &mut BTreeSet<Work>) {
        // Owners waiting for it look again: it may have stopped blocking them.
        if let Some(old) = self.remove_dependent(&node.key) {
            self.wake_waiting(&old, work);
        }
        self.forget_waiting(&node.key);
        if node.deleting {
            // Its dependents look again: an owner deleting makes them go or lose it.
            for dependent in self.dependents_of(&node.uid) {
                work.insert(Work::Dependent(dependent.key.clone()));
            }
        }
        if node.waits() {
            let waiting = Waiting {
                kind: node.kind,
                key: node.key.clone(),
                foreground: node.has_finalizer(FOREGROUND),
            };
            work.insert(Work::Owner(node.kind, node.key.clone()));
            self.waiting_keys.insert(node.key.clone(), node.uid.clone());
            self.waiting.insert(node.uid.clone(), waiting);
        }
        if !node.owners.is_empty() {
            self.wake_waiting(&node, work);
            if !node.deleting {
                work.insert(Work::Dependent(node.key.clone()));
            }
            for uid in node.owner_uids() {
                (self.by_owner.entry(uid.to_owned()).or_default()).insert(node.key.clone());
            }
            self.dependents.insert(node.key.clone(), node);
        }
    }

    /// The object at `key` deleted (`prev`: as it was, when its metadata decodes): its
    /// dependents lose an owner, the owners it blocked may go on.
    pub(super) fn remove(&mut self, key: &str, prev: Option<Node>, work: &mut BTreeSet<Work>) {
        if let Some(old) = self.remove_dependent(key) {
            self.wake_waiting(&old, work);
        }
        self.forget_waiting(key);
        if let Some(node) = prev {
            for dependent in self.dependents_of(&node.uid) {
                work.insert(Work::Dependent(dependent.key.clone()));
            }
        }
    }

    /// Asks the waiting owners `dependent` names to look again.
    fn wake_waiting(&self, dependent: &Node, work: &mut BTreeSet<Work>) {
        for uid in dependent.owner_uids() {
            if let Some(owner) = self.waiting.get(uid) {
                work.insert(Work::Owner(owner.kind, owner.key.clone()));
            }
        }
    }

    fn remove_dependent(&mut self, key: &str) -> Option<Node> {
        let node = self.dependents.remove(key)?;
        for uid in node.owner_uids() {
            if let Some(keys) = self.by_owner.get_mut(uid) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_owner.remove(uid);
                }
            }
        }
        Some(node)
    }

    fn forget_waiting(&mut self, key: &str) {
        if let Some(uid) = self.waiting_keys.remove(key) {
            self.waiting.remove(&uid);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(key: &str, uid: &str, owners: &[(&str, bool)]) -> Node {
        Node {
            kind: 0,
            key: key.into(),
            name: key.into(),
            namespace: Some("ns".into()),
            uid: uid.into(),
            revision: 1,
            deleting: false,
            finalizers: Vec::new(),
            owners: (owners.iter())
                .map(|(uid, block)| json!({"uid": uid, "blockOwnerDeletion": block}))
                .collect(),
        }
    }

    fn deleting(mut node: Node, finalizer: &str) -> Node {
        node.deleting = true;
        node.finalizers.push(finalizer.into());
        node
    }

    fn put(graph: &mut Graph, node: Node) -> Vec<Work> {
        let mut work = BTreeSet::new();
        graph.put(node, &mut work);
        work.into_iter().collect()
    }

    fn dependent(key: &str) -> Work {
        Work::Dependent(key.into())
    }

    #[test]
    fn only_objects_with_owners_are_kept_and_judged() {
        let mut graph = Graph::default();
        assert_eq!(put(&mut graph, node("owner", "o", &[])), vec![]);
        assert_eq!(
            put(&mut graph, node("a", "a", &[("o", false)])),
            vec![dependent("a")]
        );
        assert!(graph.dependent("owner").is_none());
        assert!(graph.has_dependents("o"));
        // Its references gone, it is forgotten.
        assert_eq!(put(&mut graph, node("a", "a", &[])), vec![]);
        assert!(!graph.has_dependents("o"));
        assert!(graph.dependent("a").is_none());
    }

    #[test]
    fn an_owner_deleted_or_deleting_has_its_dependents_judged() {
        let mut graph = Graph::default();
        put(&mut graph, node("a", "a", &[("o", false)]));
        put(&mut graph, node("b", "b", &[("o", false), ("p", false)]));
        put(&mut graph, node("c", "c", &[("p", false)]));
        let mut work = BTreeSet::new();
        graph.remove("owner", Some(node("owner", "o", &[])), &mut work);
        assert_eq!(
            work.into_iter().collect::<Vec<_>>(),
            vec![dependent("a"), dependent("b")]
        );
        let work = put(
            &mut graph,
            deleting(node("other", "p", &[]), "example.com/x"),
        );
        assert_eq!(work, vec![dependent("b"), dependent("c")]);
    }

    #[test]
    fn a_waiting_owner_looks_again_when_a_dependent_changes_or_goes() {
        let mut graph = Graph::default();
        put(&mut graph, node("a", "a", &[("o", true)]));
        let work = put(&mut graph, deleting(node("owner", "o", &[]), FOREGROUND));
        assert_eq!(work, vec![dependent("a"), Work::Owner(0, "owner".into())]);
        assert!(graph.waiting("o").is_some_and(|w| w.foreground));
        // The dependent starts deleting: the owner looks again; the dependent is not
        // judged while it deletes.
        let work = put(
            &mut graph,
            deleting(node("a", "a", &[("o", true)]), "example.com/hold"),
        );
        assert_eq!(work, vec![Work::Owner(0, "owner".into())]);
        let mut work = BTreeSet::new();
        graph.remove("a", Some(node("a", "a", &[("o", true)])), &mut work);
        assert_eq!(
            work.into_iter().collect::<Vec<_>>(),
            vec![Work::Owner(0, "owner".into())]
        );
        assert!(!graph.has_dependents("o"));
        // The owner's finalizer gone, it no longer waits.
        put(&mut graph, node("owner", "o", &[]));
        assert!(graph.waiting("o").is_none());
    }

    /// A write concerns the collector when its object names owners or is deleting, or
    /// the graph holds it (dependent or waiting owner); any other is not decoded.
    #[test]
    fn only_writes_that_may_change_the_graph_are_decoded() {
        let mut graph = Graph::default();
        let plain = br#"{"metadata":{"name":"p","uid":"u","finalizers":["x"]},"data":{}}"#;
        assert!(!graph.concerns("p", plain));
        let owned = br#"{"metadata":{"name":"a","ownerReferences":[{"uid":"o"}]}}"#;
        assert!(graph.concerns("a", owned));
        let deleting = br#"{"metadata":{"name":"d","deletionTimestamp":"2026-01-01T00:00:00Z"}}"#;
        assert!(graph.concerns("d", deleting));
        // Held as a dependent or as a waiting owner: its next write may take it out.
        put(&mut graph, node("a", "a", &[("o", true)]));
        put(&mut graph, deleting_node());
        assert!(graph.concerns("a", plain));
        assert!(graph.concerns("owner", plain));
        assert!(!graph.concerns("p", plain));
    }

    fn deleting_node() -> Node {
        deleting(node("owner", "o", &[]), FOREGROUND)
    }

    #[test]
    fn a_fresh_list_replaces_what_a_kind_held() {
        let mut graph = Graph::default();
        put(&mut graph, node("a", "a", &[("o", false)]));
        put(&mut graph, deleting(node("owner", "o", &[]), ORPHAN));
        let mut other = node("x", "x", &[("o", false)]);
        other.kind = 1;
        put(&mut graph, other);
        graph.forget_kind(0);
        assert!(graph.dependent("a").is_none());
        assert!(graph.waiting("o").is_none());
        assert_eq!(graph.dependents_of("o").count(), 1);
    }
}
