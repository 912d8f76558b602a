//! The static description of an API, as `#[derive(Resource)]` emits it.
//!
//! One [`KindInfo`] per kind, declared once on the kind's hub type, with one
//! [`VersionInfo`] per served version. Everything else (the API model, OpenAPI, discovery,
//! the route table, the handler glue) is derived from these values, so an API is never
//! described twice.

mod binding;
pub mod cells;
mod convert;
mod documents;
mod kind_sets;
pub mod protobuf;
mod route;
mod schema_keywords;
mod strategy;
pub mod wire;

pub use binding::{Handler, RouteBinding};
#[doc(hidden)]
pub use convert::__private as __convert;
pub use convert::Convert;
pub use documents::{
    Deflated, Documents, OpenApiV3Document, RenderedDocument, RenderedDocuments, RenderedOpenApiV3,
    Renderer,
};
pub use kapi_routes::version_order;
pub use kind_sets::{concat_kinds, kinds_len};
pub use protobuf::{ProtoField, ProtoKind, ProtoMessage};
pub use route::{Action, Method, Route};
pub use schema_keywords::SCHEMA_KEYWORDS;
pub use strategy::{STATUS_METADATA, Strategy};

use schemars::{Schema, SchemaGenerator};

/// Whether objects of a kind live in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `/namespaces/{namespace}/<plural>/...`
    Namespaced,
    /// `/<plural>/...`
    Cluster,
}

/// How the names of a kind's objects are checked on create (kube's `ValidateNameFunc`;
/// updates only check that a name is a path segment, for every kind).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NameRule {
    /// A DNS subdomain (`web.example-1`): most kinds, and every custom resource.
    #[default]
    DnsSubdomain,
    /// A DNS label (`team-a`): kube's namespaces.
    DnsLabel,
    /// Anything usable as one segment of a path: not `.` or `..`, no `/` or `%` (kube's
    /// RBAC kinds, whose names read `system:basic-user`).
    PathSegment,
}

impl Scope {
    /// The name discovery and CRDs use: `Namespaced` or `Cluster`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        }
    }
}

/// Everything about one kind that is the same in all its versions.
#[derive(Debug)]
pub struct KindInfo {
    /// API group; empty for the core (legacy) group served under `/api/v1`.
    pub group: &'static str,
    /// `WebApp`.
    pub kind: &'static str,
    /// `webapps`: the resource name in paths.
    pub plural: &'static str,
    /// `webapp`.
    pub singular: &'static str,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// How names of new objects are checked.
    pub names: NameRule,
    /// `kubectl get wa`.
    pub short_names: &'static [&'static str],
    /// `all` makes `kubectl get all` include the kind.
    pub categories: &'static [&'static str],
    /// The `status` and `scale` subresources.
    pub subresources: Subresources,
    /// Columns of `kubectl get` (a `meta.k8s.io/v1` Table), computed on the hub object.
    pub printer_columns: &'static [PrinterColumn],
    /// Fields (besides `metadata.name` and `metadata.namespace`) usable in field selectors.
    pub selectable_fields: &'static [SelectableField],
    /// Versions, in declaration order. Exactly one has `storage`.
    pub versions: &'static [VersionInfo],
    /// Rust path of the type the kind is declared on, for generated glue
    /// (`api_types::apps::WebApp`): the hub, unless the kind is `stored_with` another.
    pub rust_type: &'static str,
    /// The kind whose objects these are (`#[resource(stored_with = ...)]`): this kind is
    /// another view of them, through its own group and versions, sharing that kind's hub
    /// type, storage keys and storage version, as kube serves `events.k8s.io` Events from
    /// the core ones' storage (cohabiting resources). `None`: the kind stores its own.
    pub stored_with: Option<&'static KindInfo>,
    /// Only created, never stored (kube's reviews, `#[resource(create_only)]`): served by
    /// one `POST` route, answered by the review the server registers for the kind.
    pub create_only: bool,
    /// A delete answers with a `Success` Status naming the object, as kube's built-in kinds
    /// do (their stores' default), rather than with the object as deleted, as custom
    /// resources and the built-in kinds whose stores set `ReturnDeletedObject` (Pods,
    /// ServiceAccounts, StorageClasses, ...) do (`#[resource(delete_status)]`).
    pub delete_status: bool,
    /// Where its objects are stored under the storage prefix, when not kube's layout for
    /// custom kinds (`<group>/<plural>`, `<plural>` in the core group): kube's own kinds
    /// keep theirs (`deployments`, `services/specs`, `minions`; `#[resource(storage_key =
    /// "...")]`).
    pub storage_key: Option<&'static str>,
    /// Objects are judged by the kind's strategy alone, never against its schema
    /// (`#[resource(strategy_validates)]`): kube's own kinds, which kube-apiserver checks
    /// with their validation code and never against their OpenAPI.
    pub strategy_validates: bool,
    /// Objects are made when read, never stored (`#[resource(read_only)]`, kube's
    /// ComponentStatuses): served by a get and a list route alone, answered by what the
    /// server registers for the kind.
    pub read_only: bool,
    /// Every version's type implements [`crate::defaults::Defaults`]
    /// (`#[resource(defaults)]`): an object decoded from a request is defaulted by it.
    pub defaulted: bool,
    /// How objects carry `metadata.generation` (`#[resource(generation(...))]`).
    pub generation: Generation,
}

/// How a kind's objects carry `metadata.generation`: custom resources' way by default;
/// kube's own kinds each as their strategy sets it (`PrepareForCreate` and
/// `PrepareForUpdate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// 1 on create, moved by every change to what is neither metadata nor, for a kind
    /// with a status subresource, status (custom resources').
    Object,
    /// 1 on create, moved when the value at one of these simple JSON paths changes
    /// (`.spec`; a Deployment's `.spec` and `.metadata.annotations`). An absent value and
    /// an empty one are the same, as for kube's semantic equality.
    Paths(&'static [&'static str]),
    /// 1 on create, never moved (kube's PriorityClasses).
    Created,
    /// None kept (kube's Pods, Services, ConfigMaps, RBAC kinds, ...).
    Untracked,
}

/// A field usable in field selectors.
#[derive(Debug)]
pub struct SelectableField {
    /// What a selector names (`regarding.kind`); the path without its dot unless declared.
    pub label: &'static str,
    /// Simple JSON path into the hub object (`.involvedObject.kind`).
    pub path: &'static str,
    /// The path whose value counts when `path`'s is absent or empty (kube's core Event
    /// `source`: `.source.component`, else `.reportingComponent`).
    pub or: Option<&'static str>,
}

impl KindInfo {
    /// The core group has no name and is served under `/api`.
    pub fn is_core(&self) -> bool {
        self.group.is_empty()
    }

    /// Not served unless the server is told to: every served version is off by default
    /// ([`VersionInfo::off_by_default`]). A kind with some versions on is served whole.
    pub fn off_by_default(&self) -> bool {
        let mut served = self.versions.iter().filter(|v| v.served).peekable();
        served.peek().is_some() && served.all(|v| v.off_by_default)
    }

    /// `webapps.apps.example.dev`, or `namespaces` for the core group: the name
    /// kube-apiserver uses in messages (`webapps.apps.example.dev "web" not found`).
    pub fn qualified_resource(&self) -> String {
        if self.is_core() {
            self.plural.to_owned()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether the kind keeps objects of its own in storage: not when they are another
    /// kind's (`stored_with`) or never stored (`create_only`).
    pub fn stores_objects(&self) -> bool {
        self.stored_with.is_none() && !self.create_only
    }

    /// The kind that keeps the objects in storage: this one, or the one it is stored with.
    pub fn storage_kind(&'static self) -> &'static KindInfo {
        self.stored_with.unwrap_or(self)
    }

    /// The version objects are stored in (a version of [`storage_kind`](Self::storage_kind)).
    pub fn storage_version(&self) -> &'static VersionInfo {
        let versions = match self.stored_with {
            Some(other) => other.versions,
            None => self.versions,
        };
        versions
            .iter()
            .find(|v| v.storage)
            .expect("#[derive(Resource)] guarantees exactly one storage version")
    }

    /// Whether objects carry `metadata.generation`, set to 1 on create ([`Generation`]:
    /// the kind whose objects these are decides).
    pub fn tracks_generation(&'static self) -> bool {
        self.storage_kind().generation != Generation::Untracked
    }

    /// Rust path of the hub type (the `stored_with` kind's for a kind stored with another).
    pub fn hub_rust_type(&self) -> &'static str {
        match self.stored_with {
            Some(other) => other.rust_type,
            None => self.rust_type,
        }
    }

    /// `v1` for the core group, `apps.example.dev/v1` otherwise: objects' `apiVersion`.
    pub fn api_version(&self, version: &str) -> String {
        if self.is_core() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    /// The columns of `kubectl get` in `version`: its own, else the kind's.
    pub fn columns(&self, version: &str) -> &'static [PrinterColumn] {
        (self.version(version).and_then(|v| v.printer_columns)).unwrap_or(self.printer_columns)
    }

    /// The protobuf message of `version`'s bodies, when it takes them.
    pub fn protobuf(&self, version: &str) -> Option<&'static ProtoMessage> {
        self.version(version).and_then(|v| v.protobuf)
    }

    /// A version by name.
    pub fn version(&self, name: &str) -> Option<&'static VersionInfo> {
        self.versions.iter().find(|v| v.name == name)
    }
}

/// The subresources a kind has.
#[derive(Debug, Default)]
pub struct Subresources {
    /// `/status`: status is written only through it; the main resource ignores status changes.
    pub status: bool,
    /// `/scale`: an `autoscaling/v1` `Scale` view of the object.
    pub scale: Option<ScaleInfo>,
    /// The others, in declaration order (kube's `approval`, `binding`, `eviction`, `log`,
    /// `exec`, `proxy`, ...).
    pub others: &'static [SubresourceInfo],
}

impl Subresources {
    /// The other subresource called `name`.
    pub fn other(&self, name: &str) -> Option<&'static SubresourceInfo> {
        self.others.iter().find(|s| s.name == name)
    }
}

/// A subresource beside `status`, `scale` and `finalize`.
#[derive(Debug)]
pub struct SubresourceInfo {
    /// `approval`: its path segment.
    pub name: &'static str,
    /// What it is.
    pub shape: SubresourceShape,
}

/// What a subresource is, which decides its routes and what serves them.
#[derive(Debug)]
pub enum SubresourceShape {
    /// The object, read, replaced and patched, of which a write changes only the fields at
    /// these paths of the hub (kube's CSR `approval`: `.status.conditions`; Pod
    /// `ephemeralcontainers`: `.spec.ephemeralContainers`).
    Fields(&'static [&'static str]),
    /// A `POST` of another kind's object about the object (kube's Pod `binding` and
    /// `eviction`), answered by the action the server registers for it.
    Create(&'static BodyKind),
    /// Read with options, answered by the connector the server registers (kube's `log`).
    Read,
    /// Connected to (kube's `exec`, `attach`, `portforward`, `proxy`), answered by the
    /// connector the server registers.
    Connect {
        /// The methods, in kube's order.
        methods: &'static [Method],
        /// Whether `.../<name>/{path}` is connected to as well (`proxy`).
        path: bool,
        /// The kind of its options (`PodExecOptions`), which discovery names.
        options: &'static str,
    },
}

impl SubresourceShape {
    /// The shape of its routes.
    pub fn routes(&self) -> kapi_routes::Shape<'static> {
        match *self {
            SubresourceShape::Fields(_) => kapi_routes::Shape::View,
            SubresourceShape::Create(_) => kapi_routes::Shape::Create,
            SubresourceShape::Read => kapi_routes::Shape::Read,
            SubresourceShape::Connect { methods, path, .. } => {
                kapi_routes::Shape::Connect { methods, path }
            }
        }
    }
}

/// The kind a `Create` subresource takes (kube's `policy/v1` `Eviction`).
#[derive(Debug)]
pub struct BodyKind {
    /// `policy`; empty for the core group.
    pub group: &'static str,
    /// `v1`.
    pub version: &'static str,
    /// `Eviction`.
    pub kind: &'static str,
    /// Its OpenAPI schema (a `$ref`, registering the definitions it needs).
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// Its protobuf message, for protobuf bodies; `None` refuses them with 415.
    pub protobuf: Option<&'static ProtoMessage>,
}

impl BodyKind {
    /// `policy/v1`, or `v1` for the core group: its objects' `apiVersion`.
    pub fn api_version(&self) -> String {
        match self.group {
            "" => self.version.to_owned(),
            group => format!("{group}/{}", self.version),
        }
    }
}

/// Where the `scale` subresource reads and writes replica counts (JSON paths on the hub).
#[derive(Debug)]
pub struct ScaleInfo {
    /// `.spec.replicas`
    pub spec_replicas_path: &'static str,
    /// `.status.replicas`
    pub status_replicas_path: &'static str,
    /// `.status.selector`, when the kind publishes one.
    pub label_selector_path: Option<&'static str>,
}

/// One column of `kubectl get` output.
#[derive(Debug)]
pub struct PrinterColumn {
    /// Column header.
    pub name: &'static str,
    /// OpenAPI type: `integer`, `number`, `string`, `boolean` or `date`.
    pub column_type: &'static str,
    /// OpenAPI format hint (`int32`, `name`, ...), or empty.
    pub format: &'static str,
    /// Simple JSON path into the hub object (`.spec.container.image`).
    pub json_path: &'static str,
    /// 0 shows always; greater shows with `-o wide` only.
    pub priority: i32,
    /// Shown by `kubectl explain`-like tools.
    pub description: &'static str,
    /// A function making the cell from the hub object's JSON, for what a JSON path cannot
    /// say; `None`: the value at `json_path`.
    pub cell: Option<ColumnCell>,
}

/// A printer column's cell made by a function of the hub object's JSON.
pub type ColumnCell = fn(&serde_json::Value) -> serde_json::Value;

/// One version of a kind.
#[derive(Debug)]
pub struct VersionInfo {
    /// `v1`, `v1beta1`.
    pub name: &'static str,
    /// Served over HTTP.
    pub served: bool,
    /// Objects are stored in this version.
    pub storage: bool,
    /// Deprecated versions are served with a `Warning` header.
    pub deprecated: bool,
    /// The warning text for a deprecated version (a default is built when empty).
    pub deprecation_warning: Option<&'static str>,
    /// Served only when the server is told to (`#[resource(version(off_by_default))]`, as
    /// kube-apiserver serves some beta group-versions only when `--runtime-config` names
    /// them): a kind all of whose versions are off by default is left out of the documents
    /// `generated/` holds, which describe the API as a server serves it by default.
    pub off_by_default: bool,
    /// Converting through this version loses what it cannot express, as kube's own
    /// conversion of it does (`autoscaling/v1` HorizontalPodAutoscaler keeps part of v2 in
    /// annotations, and gives a v1 object without a target kube's CPU default): reading
    /// an object through it and writing back what was read may change the object once,
    /// never twice. The round-trip tests hold it to that.
    pub lossy: bool,
    /// Rust path of the version's type (`api_types::apps::v1::WebApp`).
    pub rust_type: &'static str,
    /// The version's OpenAPI schema.
    pub schema: VersionSchema,
    /// The version's own columns of `kubectl get` (a CustomResourceDefinition may give
    /// each version its own); `None`: the kind's ([`KindInfo::columns`]).
    pub printer_columns: Option<&'static [PrinterColumn]>,
    /// Every route kube-apiserver would install for this kind in this version.
    pub routes: &'static [Route],
    /// The version's protobuf message, for `application/vnd.kubernetes.protobuf` bodies
    /// (kubectl sends them for kinds built into it); `None` refuses them with 415. With
    /// `#[resource(protobuf)]`, each version's type's own message (`autoscaling/v1`'s
    /// HorizontalPodAutoscaler is not `v2`'s).
    pub protobuf: Option<&'static ProtoMessage>,
    /// The version type's empty object (its `Default`, as JSON), for kinds declared
    /// `zero_object`: what a create's field ownership is computed against, as kube-apiserver
    /// compares a new object of its own kinds with Go's zero value of the type (where
    /// structs that are not pointers are present, so a create owns no `.` of them), and a
    /// custom resource's with nothing. `None`: with nothing.
    pub zero: Option<fn() -> serde_json::Value>,
}

/// Where a version's OpenAPI schema comes from.
#[derive(Clone, Copy, Debug)]
pub enum VersionSchema {
    /// `SchemaGenerator::subschema_for::<VersionType>`: registers the version type's schema
    /// (and those of the types it uses) in the generator and returns a `$ref` to it.
    Type(fn(&mut SchemaGenerator) -> Schema),
    /// The schema itself, as a CustomResourceDefinition gives it (with `apiVersion`,
    /// `kind` and `metadata` as kube publishes them): kinds installed while the server runs.
    Json(&'static serde_json::Value),
}

/// A hub (internal) type: the one all versions of a kind convert through.
pub trait Resource: Sized {
    /// The kind's static description.
    const INFO: &'static KindInfo;

    /// The object's metadata: the derive gives a type with a `metadata` field its
    /// `ObjectMeta` (a kind `stored_with` another may be a marker type without). Lets the
    /// registry set what the server owns of a new object's metadata on the typed object,
    /// as kube's `meta.Accessor` does, rather than on its JSON.
    fn metadata_mut(&mut self) -> Option<&mut crate::meta::ObjectMeta> {
        None
    }
}
