//! The registry: kube-apiserver's generic store (`pkg/registry/generic/registry`) for every
//! kind of the scheme.
//!
//! It owns the rules of create, update, patch and delete (names, `generateName`, uid,
//! timestamps, generation, resourceVersion, namespaces, the status subresource, the kind's
//! [`Strategy`](kapi_core::api::Strategy)), converts between the request's version and the
//! storage version through the hub, and keeps objects in [`Storage`] as bytes under
//! kube-apiserver's key layout. It speaks [`ApiError`], never HTTP.
//!
//! Code map:
//!
//! - `create`, `update` (PUT, PATCH, `/status`, `/scale`: one read-modify-CAS loop, as
//!   kube's `GuaranteedUpdate`), `delete` (with the namespace lifecycle), `read` (get, and
//!   list with continue tokens and resourceVersion, from storage or the watch cache),
//!   `watch` (from the watch cache, [`kapi_storage::cache`]), `table` (`kubectl get`'s Table);
//! - `body` (type meta, name, namespace and unknown fields of request bodies),
//!   `field_paths` (the kind's own validation errors, in the request's version),
//!   `schema_checks` (defaulting and validation against the versions' OpenAPI v3 schemas,
//!   [`Schemas`], with object metadata and replica paths checked by
//!   [`kapi_schema::metadata`]), `patch` (patch formats), `scale` (the Scale view),
//!   `object` (keys, stored bytes, the one mapping of storage errors), `caches` (when a
//!   watch cache answers), `derived` (values kept until their kinds change); selectors are
//!   [`selector`]'s, kube's name and label rules [`kapi_core::validation`];
//! - [`admission`]: what a write goes through before storage: the in-process checks
//!   ([`admission::Admit`]) and the hook through which admission that calls out (the API
//!   server's webhooks) judges and changes writes ([`admission::Admission`]).
//!
//! Invariant: the registry imports nothing above it (no HTTP, no webhook client, no
//! controller): what it calls out to, it takes as a hook.
//!
//! Objects are stored in the kind's storage version; every rule of this module works on
//! the hub as JSON ([`KindEntry::hub_json`] / [`KindEntry::hub_from_json`]), so it is the
//! same in every served version, and the kind's [`Strategy`](kapi_core::api::Strategy) hooks
//! run on the typed hub in kube's order: prepare, validate, canonicalize.

mod actions;
pub mod admission;
mod admitting;
mod body;
mod caches;
pub mod computed;
mod connect;
mod create;
mod delete;
pub mod derived;
mod field_paths;
mod guaranteed;
mod hooks;
mod inventory;
mod namespaces;
mod new_metadata;
pub(crate) mod object;
mod patch;
mod read;
pub mod review;
mod scale;
mod schema_checks;
mod table;
mod update;
mod update_rules;
mod watch;
pub mod write_hooks;
mod written_json;

pub use actions::{Action, ActionRequest, Answer};
pub use connect::{ConnectRequest, Connecting, Connection, Connector};
pub use delete::Deleted;
pub use watch::{DEFAULT_BOOKMARK_INTERVAL, EventStream, INITIAL_EVENTS_END};

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_core::meta::{DeleteOptions, Table};
use kapi_core::scheme::{KindEntry, Scheme};
use kapi_storage::Storage;
use kapi_storage::cache::{CacheOptions, Caches};
pub use kapi_storage::cache::{SharedObject, kept};
use kapi_storage::instrumented::Instrumented;
pub use table::{TableChunks, TableRows};

pub use body::unknown_fields;
pub use derived::{Derived, Passes, Stamp};
pub use inventory::Content;
pub use kapi_schema::metadata::{FOREGROUND, ORPHAN};
pub use kapi_schema::{IMMUTABLE_EXTENSION, KindSchema, SchemaError, Schemas, selector};
pub use namespaces::NAMESPACE_FINALIZER;
pub use schema_checks::blocking;

/// What a request addresses: a kind in one of its served versions, in a namespace or not.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The kind.
    pub kind: &'a KindEntry,
    /// The served version the request speaks (`v1beta1`); bodies and responses use it.
    pub version: &'a str,
    /// The namespace from the path; `None` for cluster-scoped kinds and all-namespaces lists.
    pub namespace: Option<&'a str>,
}

/// `fieldValidation`: what to do with unknown or duplicate fields in a body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (`Warning` headers): the default.
    #[default]
    Warn,
    /// Reject the request with 400.
    Strict,
}

/// Query options of create, update and patch.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: run every step, store nothing.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// Paths of the fields the body (or merge patch) repeats, found while decoding it:
    /// reported per `fieldValidation` like unknown fields.
    pub duplicate_fields: Vec<String>,
    /// `force`: a server-side apply takes the fields it conflicts on.
    pub force: bool,
    /// Who writes (the authenticated, possibly impersonated, user); `None` for the
    /// server's own writes.
    pub user: Option<kapi_core::user::UserInfo>,
}

/// Who computes a write's `managedFields`: the registry, from the change the write makes
/// (create, update, patch), or a server-side apply, which already did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fields {
    /// The registry records the write as an `Update` by its manager.
    Update,
    /// The body's `managedFields` come from the apply.
    Applied,
}

impl Registry {
    /// The `managedFields` of `new` (a view in the request's version) after a write other
    /// than apply, from `old` (the stored hub and its view; `None` for a create). Field
    /// errors when the client sent malformed entries. Without schemas (a registry for
    /// tests), ownership is not tracked.
    pub(crate) fn manage_fields(
        &self,
        target: Target<'_>,
        old: Option<(&Value, &Value)>,
        new: &Value,
        subresource: &str,
        options: &WriteOptions,
    ) -> Result<kapi_fieldmanager::entries::Managed, Vec<kapi_core::error::FieldError>> {
        let Some(schemas) = self.schemas_for(target.kind) else {
            return Ok(Default::default());
        };
        let manager = kapi_fieldmanager::FieldManager::new(
            target.kind,
            &schemas,
            old.map(|(hub, _)| hub),
            subresource,
        );
        manager.update(
            old.map(|(_, view)| view),
            new,
            &target.kind.api_version(target.version),
            options.field_manager.as_deref().unwrap_or(""),
        )
    }
}

/// Query options of list (and deletecollection).
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `labelSelector`, unparsed.
    pub label_selector: Option<String>,
    /// `fieldSelector`, unparsed.
    pub field_selector: Option<String>,
    /// `limit`; 0 = no limit.
    pub limit: u64,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
}

/// Query options of a get (`GetOptions`).
#[derive(Clone, Debug, Default)]
pub struct GetOptions {
    /// `resourceVersion`: none reads the latest (from storage); `0` any (the watch cache);
    /// `N` not older than `N` (the cache once it has reached `N`).
    pub resource_version: Option<String>,
}

/// Query options of a watch.
#[derive(Clone, Debug, Default)]
pub struct WatchOptions {
    /// `labelSelector`, unparsed.
    pub label_selector: Option<String>,
    /// `fieldSelector`, unparsed.
    pub field_selector: Option<String>,
    /// `resourceVersion`: changes after it; `0` or none starts with the current objects.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (only `NotOlderThan`, with `sendInitialEvents`).
    pub resource_version_match: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<bool>,
    /// How long the watch lasts (`timeoutSeconds`); `None`: until the client leaves.
    pub timeout: Option<std::time::Duration>,
    /// How often bookmarks are sent; `None`: the watch cache's
    /// [`CacheOptions::bookmark_interval`] ([`DEFAULT_BOOKMARK_INTERVAL`] unless configured).
    pub bookmark_interval: Option<std::time::Duration>,
}

/// The type of a [`WatchEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum WatchEventType {
    /// An object was created, or started matching the selectors.
    Added,
    /// An object changed.
    Modified,
    /// An object was deleted, or stopped matching the selectors.
    Deleted,
    /// The watch reached a revision (`object` has only `metadata.resourceVersion`).
    Bookmark,
    /// The watch failed (`object` is a `Status`); it ends.
    Error,
}

/// One event of a watch (`{"type": "ADDED", "object": {...}}` on the wire).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WatchEvent {
    /// What happened.
    #[serde(rename = "type")]
    pub type_: WatchEventType,
    /// The object in the request's version, with its resourceVersion; a `Status` for
    /// `ERROR`. Shared with every watcher sending the same change in the same version, so
    /// it is encoded once ([`SharedObject::json`]).
    pub object: SharedObject,
}

/// A page of a list, in the request's version.
#[derive(Clone, Debug, Default)]
pub struct ObjectList {
    /// The objects, each with `apiVersion` and `kind`, encoded: a list from the watch cache
    /// shares each object's bytes with the cache, so serving it copies them.
    pub items: Vec<SharedObject>,
    /// The revision the list was read at.
    pub resource_version: String,
    /// Token for the next page.
    pub continue_token: Option<String>,
    /// Items after this page, when known.
    pub remaining_item_count: Option<i64>,
}

/// The patch formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchType {
    /// Every patch type, in kube's order.
    pub const ALL: [PatchType; 4] = [
        PatchType::Json,
        PatchType::Merge,
        PatchType::StrategicMerge,
        PatchType::Apply,
    ];

    /// The patch type's `Content-Type`.
    pub fn media_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// The subresource an update or patch addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// `/status`: only status changes.
    Status,
    /// `/scale`: an `autoscaling/v1` Scale view of the replica paths.
    Scale,
    /// `/finalize` (kube's namespaces): a replacement in which `spec.finalizers` change
    /// and the status does not.
    Finalize,
    /// Another subresource of the object's own fields (`SubresourceShape::Fields`: kube's
    /// `approval`, `ephemeralcontainers`): only those fields change.
    Fields(&'static str),
}

impl Subresource {
    /// Its name, as `managedFields` and messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Finalize => "finalize",
            Subresource::Fields(name) => name,
        }
    }
}

/// The outcome of a write: the object (in the request's version) and whether it was created.
#[derive(Clone, Debug)]
pub struct Written {
    /// The object as stored (or as it would be, on a dry run), when it was at hand as a
    /// value; else decoded from `json` when asked for.
    object: Option<Value>,
    /// The object's compact JSON, when the registry has it without encoding the object
    /// (the bytes just stored, with the resourceVersion inserted). One of the two is set.
    json: Option<Bytes>,
    /// Created rather than updated (201 rather than 200).
    pub created: bool,
    /// Warnings for the client (`Warning: 299 - "..."` headers), e.g. unknown fields.
    pub warnings: Vec<String>,
}

impl Written {
    /// A write answered with `object`.
    pub fn new(object: Value, created: bool, warnings: Vec<String>) -> Written {
        Written {
            object: Some(object),
            json: None,
            created,
            warnings,
        }
    }

    /// A write answered with the object whose compact JSON is `json`: a JSON answer sends
    /// the bytes as they are, and the object is only decoded when something else asks.
    pub(crate) fn encoded(json: Bytes, created: bool, warnings: Vec<String>) -> Written {
        Written {
            object: None,
            json: Some(json),
            created,
            warnings,
        }
    }

    /// The object's compact JSON, when the registry had it.
    pub fn json(&self) -> Option<&Bytes> {
        self.json.as_ref()
    }

    /// The object.
    pub fn into_object(self) -> Result<Value, ApiError> {
        match (self.object, self.json) {
            (Some(object), _) => Ok(object),
            (None, Some(json)) => serde_json::from_slice(&json)
                .map_err(|e| ApiError::Internal(format!("decoding a written object: {e}"))),
            (None, None) => Err(ApiError::Internal("a write answered nothing".into())),
        }
    }
}

/// The generic store of every kind of one scheme.
pub struct Registry {
    scheme: Arc<Scheme>,
    storage: Arc<dyn Storage>,
    prefix: String,
    schemas: Option<Arc<Schemas>>,
    /// The schemas of the kinds installed while the server runs, by group and plural.
    installed_schemas: std::sync::RwLock<HashMap<(String, String), Arc<Schemas>>>,
    /// One watch cache per kind.
    caches: Caches,
    /// The in-process admission checks, in the order added.
    checks: crate::admission::Checks,
    /// Admission that calls out (the API server's webhooks), when the server has any.
    admission: Option<Arc<dyn admission::Admission>>,
    /// The answers of the `create_only` kinds, by group and kind.
    reviews: std::sync::RwLock<HashMap<(String, String), Arc<dyn review::Review>>>,
    /// What makes the objects of the `read_only` kinds, by group and kind.
    computed: std::sync::RwLock<HashMap<(String, String), Arc<dyn computed::Computed>>>,
    /// What answers `Create` subresources, by group, resource and subresource.
    actions: actions::Actions,
    /// What answers `Read` and `Connect` subresources, by group, resource and subresource.
    connectors: connect::Connectors,
    /// What runs around the writes of a kind (kube's `BeginCreate`, `BeginUpdate`,
    /// `AfterDelete`), by group and resource.
    write_hooks: write_hooks::Hooks,
}

impl Registry {
    /// A registry keeping objects of `scheme` in `storage`, under keys starting with
    /// `prefix` (`/registry`; cleaned as kube-apiserver's `path.Join("/", prefix)`: `registry`
    /// and `/registry/` are `/registry`), with a watch cache per kind
    /// ([`CacheOptions::default`]; see [`Registry::with_watch_cache`]) fed by tasks on the
    /// current tokio runtime. Creates the `default` namespace when the scheme has the core
    /// `namespaces` resource and it is missing.
    pub async fn new(
        scheme: Arc<Scheme>,
        storage: Arc<dyn Storage>,
        prefix: impl Into<String>,
    ) -> Result<Registry, ApiError> {
        let prefix = object::clean_prefix(&prefix.into());
        let keys = object::Keys::new(&prefix);
        // One cache per prefix: kinds stored with another share its cache, and its
        // resource names it in metrics (`webapps.apps.example.dev`).
        let mut prefixes: Vec<(String, String)> = Vec::new();
        for kind in scheme.kinds().iter().filter(|k| k.info.stores_objects()) {
            let key = keys.kind_prefix(kind.info);
            if !prefixes.iter().any(|(p, _)| *p == key) {
                let stored = kind.info.stored_with.unwrap_or(kind.info);
                prefixes.push((key, stored.qualified_resource()));
            }
        }
        let storage: Arc<dyn Storage> =
            Arc::new(Instrumented::new(storage, prefixes.iter().cloned()));
        let caches = Caches::start(&storage, prefixes, CacheOptions::default());
        let registry = Registry {
            scheme,
            storage,
            prefix,
            schemas: None,
            installed_schemas: Default::default(),
            caches,
            reviews: Default::default(),
            computed: Default::default(),
            actions: Default::default(),
            connectors: Default::default(),
            write_hooks: Default::default(),
            checks: Default::default(),
            admission: None,
        };
        registry.start_namespaces().await?;
        Ok(registry)
    }

    /// Defaults and validates request objects (create, update, patch) against `schemas`,
    /// the OpenAPI v3 schemas of the scheme's versions ([`Schemas::new`]).
    pub fn with_schemas(mut self, schemas: Arc<Schemas>) -> Registry {
        self.schemas = Some(schemas);
        self
    }

    /// Runs `admission` on every later write, in kube's order: its mutation on the decoded,
    /// defaulted request object, its validation after the kind's own.
    pub fn with_admission(mut self, admission: Arc<dyn admission::Admission>) -> Registry {
        self.admission = Some(admission);
        self
    }

    /// The schemas of the compiled kinds ([`Registry::with_schemas`]).
    pub fn schemas(&self) -> Option<&Schemas> {
        self.schemas.as_deref()
    }

    /// The compiled schemas of `kind`: its own when it was installed while the server runs
    /// (a kind a CustomResourceDefinition defines), else the scheme's.
    pub fn kind_schemas(&self, kind: &KindEntry) -> Option<Arc<Schemas>> {
        self.schemas_for(kind)
    }

    /// [`Registry::kind_schemas`].
    pub(crate) fn schemas_for(&self, kind: &KindEntry) -> Option<Arc<Schemas>> {
        let installed = self
            .installed_schemas
            .read()
            .unwrap_or_else(|e| e.into_inner());
        let key = (kind.info.group.to_owned(), kind.info.plural.to_owned());
        (installed.get(&key).cloned()).or_else(|| self.schemas.clone())
    }

    /// Serves `kind` from now on (a kind a CustomResourceDefinition defines), validated
    /// and defaulted against `schemas`, with a watch cache of its own: it replaces the kind
    /// of its group and plural, if one was installed, and its cache and objects stay.
    pub fn install_kind(&self, kind: KindEntry, schemas: Arc<Schemas>) {
        let info = kind.info;
        let key = (info.group.to_owned(), info.plural.to_owned());
        (self
            .installed_schemas
            .write()
            .unwrap_or_else(|e| e.into_inner()))
        .insert(key, schemas);
        let prefix = self.keys().kind_prefix(info);
        if self.scheme.by_resource(info.group, info.plural).is_some() {
            // A changed definition gets a cache of its own, as kube builds new storage for
            // it: what the old cache made from its objects (their encodings per version,
            // Table rows, selectable fields) was made under the old definition. Its watches
            // end, and clients watch again and get the kind as it now is. Replaced in one
            // step, so that no request finds the kind without a cache.
            self.scheme.install(kind);
            self.caches.replace(prefix, info.qualified_resource());
        } else {
            self.caches.add(prefix, info.qualified_resource());
            self.scheme.install(kind);
        }
    }

    /// Stops serving the kind `plural` of `group` installed by [`Registry::install_kind`]:
    /// its watches end and its cache goes; its objects stay in storage.
    pub fn remove_kind(&self, group: &str, plural: &str) {
        let Some(kind) = self.scheme.by_resource(group, plural) else {
            return;
        };
        self.scheme.remove(group, plural);
        self.caches.remove(&self.keys().kind_prefix(kind.info));
        let key = (group.to_owned(), plural.to_owned());
        (self
            .installed_schemas
            .write()
            .unwrap_or_else(|e| e.into_inner()))
        .remove(&key);
    }

    /// The scheme served.
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The scheme served, shared (what follows kinds installed later holds it).
    pub fn shared_scheme(&self) -> Arc<Scheme> {
        Arc::clone(&self.scheme)
    }

    /// The slot of `kind` in the scheme (what remembers a kind keeps it rather than a
    /// borrow).
    fn kind_index(&self, kind: &KindEntry) -> Result<usize, ApiError> {
        (self.scheme.slot_of(kind)).ok_or_else(|| {
            object::internal(format!(
                "{} is not in the registry's scheme",
                kind.info.kind
            ))
        })
    }

    fn keys(&self) -> object::Keys<'_> {
        object::Keys::new(&self.prefix)
    }

    /// kube's system namespaces controller: `default`, `kube-system`, `kube-public` and
    /// `kube-node-lease` made again when missing (the registry makes them at start too).
    pub async fn ensure_system_namespaces(&self) -> Result<(), ApiError> {
        self.start_namespaces().await
    }

    /// The storage key of `path` under the registry's prefix (`ranges/serviceips`:
    /// `/registry/ranges/serviceips`), for what the server keeps beside objects.
    pub fn raw_key(&self, path: &str) -> String {
        format!("{}/{}", self.prefix, path.trim_start_matches('/'))
    }

    /// Reads the latest state of one object (`GET .../{name}`), or its `status` / `scale`
    /// view.
    pub async fn get(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: Option<Subresource>,
    ) -> Result<Value, ApiError> {
        (self.get_object(target, name, subresource, &GetOptions::default()))
            .await
            .map(|object| object.value())
    }

    /// Reads one object with `GetOptions` (`resourceVersion`), as its shared encoding (the
    /// one lists and watches of its version send, when the watch cache answers).
    pub async fn get_with(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: Option<Subresource>,
        options: &GetOptions,
    ) -> Result<SharedObject, ApiError> {
        self.get_object(target, name, subresource, options).await
    }

    /// Lists a collection.
    pub async fn list(
        &self,
        target: Target<'_>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        self.list_objects(target, options).await
    }

    /// Watches a collection (narrowed to one object by a `metadata.name` field selector):
    /// see the `watch` module for the events. Invalid options fail before the stream
    /// starts; failures after are one `ERROR` event.
    pub async fn watch(
        &self,
        target: Target<'_>,
        options: &WatchOptions,
    ) -> Result<EventStream, ApiError> {
        self.watch_objects(target, options).await
    }

    /// Creates an object from a decoded body (`POST`).
    pub async fn create(
        &self,
        target: Target<'_>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if target.kind.info.create_only {
            if let Some(action) = self.own_action(target) {
                return self.act_on_kind(target, action, body, options).await;
            }
            return self.review_object(target, body, options);
        }
        self.create_object(target, body, options, Fields::Update)
            .await
    }

    /// Replaces an object or one of its subresources (`PUT`); creates it when the kind allows
    /// create-on-update and the body has no resourceVersion.
    pub async fn update(
        &self,
        target: Target<'_>,
        name: &str,
        body: Value,
        subresource: Option<Subresource>,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let change = update::Change::Replace(body);
        self.update_object(target, name, subresource, change, options)
            .await
    }

    /// Patches an object or one of its subresources (`PATCH`), retrying on conflicts
    /// between its read and its write.
    pub async fn patch(
        &self,
        target: Target<'_>,
        name: &str,
        patch_type: PatchType,
        patch: Value,
        subresource: Option<Subresource>,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let change = update::Change::Patch(patch_type, &patch);
        self.update_object(target, name, subresource, change, options)
            .await
    }

    /// Deletes an object, answering as kube's store does (`delete::answer`): with the
    /// object as it was, or with a `Success` Status for built-in kinds. Deleting a namespace
    /// deletes its content at once (kube's namespace controller does it asynchronously).
    pub async fn delete(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        Ok(self.delete_as(target, name, options, None).await?.answer)
    }

    /// [`Registry::delete`] by `user` (none for the server's own deletes), as admission
    /// is told: what it answers, and admission's warnings.
    pub async fn delete_as(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
        user: Option<&kapi_core::user::UserInfo>,
    ) -> Result<Deleted, ApiError> {
        self.delete_answered(target, name, options, user, true)
            .await
    }

    /// [`Registry::delete_as`] of a delete admitted as something else, which admission
    /// does not see again: an eviction, admitted as the create of `pods/eviction`, deletes
    /// its pod as kube's eviction does (`rest.ValidateAllObjectFunc`), so that what refuses
    /// pod deletes does not refuse evictions.
    pub async fn delete_admitted(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
        user: Option<&kapi_core::user::UserInfo>,
    ) -> Result<Value, ApiError> {
        let deleted = (self.delete_answered(target, name, options, user, false)).await?;
        Ok(deleted.answer)
    }

    /// A delete (`admit`: through admission) answered as kube's store answers it: a gone
    /// object by [`delete::answer`], one its finalizers hold as it now is, for every kind.
    async fn delete_answered(
        &self,
        target: Target<'_>,
        name: &str,
        options: &DeleteOptions,
        user: Option<&kapi_core::user::UserInfo>,
        admit: bool,
    ) -> Result<Deleted, ApiError> {
        let mut deleted = (self.delete_object(target, name, options, user, admit)).await?;
        if deleted.gone {
            deleted.answer = delete::answer(target.kind.info, deleted.answer);
        }
        Ok(deleted)
    }

    /// Deletes the objects of a collection that match `list`, each through admission:
    /// them, and admission's warnings.
    pub async fn delete_collection(
        &self,
        target: Target<'_>,
        list: &ListOptions,
        options: &DeleteOptions,
        user: Option<&kapi_core::user::UserInfo>,
    ) -> Result<(ObjectList, Vec<String>), ApiError> {
        self.delete_objects(target, list, options, user).await
    }

    /// The `meta.k8s.io/v1` Table of objects of `target`'s kind (in `target.version`), with
    /// the name column and the kind's printer columns computed on the hub; `include_object`
    /// is `None`, `Metadata` (default: `PartialObjectMetadata`) or `Object`.
    pub fn table(
        &self,
        target: Target<'_>,
        objects: &[Value],
        list_meta: Option<&ObjectList>,
        include_object: &str,
    ) -> Result<Table, ApiError> {
        table::table(target, objects, list_meta, include_object)
    }

    /// The Table of `list`'s items as compact JSON in Table version `api_version`, as the
    /// chunks of a body: the bytes serializing [`Registry::table`]'s Table would give, each
    /// row made from what its shared object keeps ([`table::table_json`]).
    pub fn table_json(
        &self,
        target: Target<'_>,
        list: ObjectList,
        include_object: &str,
        api_version: &str,
    ) -> Result<table::TableChunks, ApiError> {
        table::table_json(target, list, include_object, api_version)
    }
}
