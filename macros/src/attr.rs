//! The `#[resource(...)]` attribute as written: darling receivers, one per nesting level.
//!
//! These structs check only syntax (known keys, value types, no duplicates of single keys);
//! darling collects those errors, with "did you mean" suggestions for misspelled keys.
//! Values stay as `syn` literals so that later checks can point at them; defaults and meaning
//! are applied in [`crate::model`].

use darling::util::SpannedValue;
use darling::{FromDeriveInput, FromMeta};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Lit, LitStr, Meta};

/// `#[resource(...)]` on the hub struct. Several `#[resource]` attributes are merged.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(resource))]
pub(crate) struct ResourceAttrs {
    /// `crate = "::my_kapi"`: the path the expansion reaches kapi by, for a crate that
    /// renames or re-exports it (as serde's `#[serde(crate = "...")]`); `::kapi` by default.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
    /// `group = "apps.example.dev"`: the API group; `""` is the core group. Required.
    pub group: Option<LitStr>,
    /// `kind = "WebApp"`: defaults to the struct's name.
    pub kind: Option<LitStr>,
    /// `plural = "webapps"`: the resource name in paths; defaults to the lower-case kind,
    /// pluralized.
    pub plural: Option<LitStr>,
    /// `singular = "webapp"`: defaults to the lower-case kind.
    pub singular: Option<LitStr>,
    /// `namespaced`: objects live in namespaces; without it the kind is cluster-scoped.
    pub namespaced: Word,
    /// `short_name = "wa"`, repeatable: aliases for `kubectl get`.
    #[darling(multiple, rename = "short_name")]
    pub short_names: Vec<LitStr>,
    /// `category = "all"`, repeatable: groups of resources `kubectl get <category>` lists.
    #[darling(multiple, rename = "category")]
    pub categories: Vec<LitStr>,
    /// `status`: the kind has a `status` subresource (and so a `status` field).
    pub status: Word,
    /// `scale(...)`: the kind has a `scale` subresource.
    pub scale: Option<ScaleAttrs>,
    /// `finalize`: the kind has a `finalize` subresource (kube's namespaces), which alone
    /// writes `spec.finalizers`.
    pub finalize: Word,
    /// `create_only`: the kind is only created, never stored (kube's reviews,
    /// `SelfSubjectAccessReview`): one `POST` route, answered by the review the server
    /// registers for the kind.
    pub create_only: Word,
    /// `strategy_validates`: objects are judged by the kind's strategy alone, never against
    /// its schema (kube's own kinds: kube-apiserver checks them with their validation code,
    /// not their OpenAPI, so a list keyed by name reports a repeated name once).
    pub strategy_validates: Word,
    /// `zero_object`: every version's type implements `Default`, and a create owns what
    /// its object changed from that empty object (kube's own kinds: kube-apiserver compares
    /// a new object with Go's zero value of its type), rather than everything it holds.
    pub zero_object: Word,
    /// `generation(path = ".spec")`, `generation(created)`, `generation(untracked)`: how
    /// objects carry `metadata.generation`; custom resources' way without it.
    pub generation: Option<SpannedValue<GenerationAttrs>>,
    /// `read_only`: objects are made when read, never stored (kube's ComponentStatuses): a
    /// get and a list route alone, answered by what the server registers for the kind.
    pub read_only: Word,
    /// `defaults`: every version's type implements `kapi::defaults::Defaults`, which
    /// defaults an object decoded from a request.
    pub defaults: Word,
    /// `subresource(...)`, repeatable: the kind's other subresources (kube's `approval`,
    /// `binding`, `eviction`, `log`, `exec`, `proxy`).
    #[darling(multiple, rename = "subresource")]
    pub subresources: Vec<SpannedValue<SubresourceAttrs>>,
    /// `delete_status`: a delete answers with a `Success` Status, as kube's built-in kinds
    /// do, rather than with the deleted object, as custom resources do.
    pub delete_status: Word,
    /// `printer_column(...)`, repeatable: the columns of `kubectl get`.
    #[darling(multiple, rename = "printer_column")]
    pub printer_columns: Vec<PrinterColumnAttrs>,
    /// `selectable_field = ".spec.x"` or `selectable_field(label = "regarding.kind", path =
    /// ".involvedObject.kind")`, repeatable: fields usable in field selectors.
    #[darling(multiple, rename = "selectable_field")]
    pub selectable_fields: Vec<SelectableFieldAttrs>,
    /// `version(...)`, repeatable, at least one: the served versions.
    #[darling(multiple, rename = "version")]
    pub versions: Vec<SpannedValue<VersionAttrs>>,
    /// `stored_with = crate::core::Event`: the kind's objects are those of another kind (its
    /// hub type), kept in that kind's storage and storage version, as kube keeps
    /// `events.k8s.io` Events with the core ones (cohabiting resources). Declared on a unit
    /// struct.
    pub stored_with: Option<syn::Path>,
    /// `names = "path_segment"`: how names of new objects are checked: `dns_subdomain`
    /// (the default), `dns_label` (kube's namespaces) or `path_segment` (kube's RBAC kinds,
    /// `system:basic-user`).
    pub names: Option<NameRuleAttr>,
    /// `protobuf = NAMESPACE_PROTO`: a path to the kind's `kapi::api::ProtoMessage`
    /// (a `static` or `const`), for protobuf request bodies; `protobuf` alone: each version
    /// type's derived message (`#[derive(Protobuf)]`). None by default.
    pub protobuf: Option<ProtobufAttr>,
    /// `storage_key = "services/specs"`: where objects are stored under the prefix, for
    /// kube's own kinds (whose keys have no group); kube's layout for custom kinds by
    /// default.
    pub storage_key: Option<LitStr>,
}

/// The values of `protobuf`.
#[derive(Debug)]
pub(crate) enum ProtobufAttr {
    /// `protobuf`: each version type's `Protobuf::MESSAGE` (the hub's for the hub).
    Derived,
    /// `protobuf = PATH`.
    Path(syn::Path),
}

impl FromMeta for ProtobufAttr {
    fn from_word() -> darling::Result<Self> {
        Ok(ProtobufAttr::Derived)
    }

    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        syn::Path::from_expr(expr).map(ProtobufAttr::Path)
    }

    fn from_string(value: &str) -> darling::Result<Self> {
        syn::Path::from_string(value).map(ProtobufAttr::Path)
    }
}

/// The values of `names = "..."`.
#[derive(Clone, Copy, Debug, FromMeta)]
pub(crate) enum NameRuleAttr {
    /// `dns_subdomain`.
    #[darling(rename = "dns_subdomain")]
    DnsSubdomain,
    /// `dns_label`.
    #[darling(rename = "dns_label")]
    DnsLabel,
    /// `path_segment`.
    #[darling(rename = "path_segment")]
    PathSegment,
}

/// `generation(...)`: exactly one of its forms.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct GenerationAttrs {
    /// `path = ".spec"`, repeatable: 1 on create, moved when a value at one of the paths
    /// changes.
    #[darling(multiple, rename = "path")]
    pub paths: Vec<LitStr>,
    /// `created`: 1 on create, never moved.
    pub created: Word,
    /// `untracked`: none kept.
    pub untracked: Word,
}

/// `scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")`.
#[derive(Debug, FromMeta)]
pub(crate) struct ScaleAttrs {
    /// `.spec.replicas`: the desired replica count, under `.spec`.
    pub spec_replicas_path: LitStr,
    /// `.status.replicas`: the observed replica count, under `.status`.
    pub status_replicas_path: LitStr,
    /// `.status.selector`: the label selector in string form, under `.spec` or `.status`.
    pub label_selector_path: Option<LitStr>,
}

/// `subresource(name = "approval", field = ".status.conditions")`: one of `field`
/// (repeatable), `create(...)`, `read` or `connect(...)` says what it is.
#[derive(Debug, FromMeta)]
pub(crate) struct SubresourceAttrs {
    /// `approval`: its path segment.
    pub name: LitStr,
    /// `field = ".status.conditions"`, repeatable: the object, read, replaced and patched,
    /// of which a write changes only these fields.
    #[darling(multiple, rename = "field")]
    pub fields: Vec<LitStr>,
    /// `create(...)`: a `POST` of another kind's object about the object.
    pub create: Option<CreateAttrs>,
    /// `read`: read with options, answered by the server's connector (`log`).
    pub read: Word,
    /// `connect(...)`: connected to, answered by the server's connector (`exec`).
    pub connect: Option<ConnectAttrs>,
}

/// `create(group = "policy", version = "v1", kind = "Eviction", body = path::Eviction,
/// protobuf)`.
#[derive(Debug, FromMeta)]
pub(crate) struct CreateAttrs {
    /// The body kind's group; `""` for the core group.
    pub group: LitStr,
    /// Its version.
    pub version: LitStr,
    /// Its kind.
    pub kind: LitStr,
    /// Its Rust type (with a JSON schema).
    pub body: syn::Path,
    /// `protobuf`: the type derives `Protobuf`, so protobuf bodies are accepted.
    pub protobuf: Word,
}

/// `connect(options = "PodExecOptions", method = "GET", method = "POST", path)`.
#[derive(Debug, FromMeta)]
pub(crate) struct ConnectAttrs {
    /// The kind of the options, which discovery names.
    pub options: LitStr,
    /// `method = "GET"`, repeatable, at least one.
    #[darling(multiple, rename = "method")]
    pub methods: Vec<LitStr>,
    /// `path`: `.../<name>/{path}` is connected to as well (kube's `proxy`).
    pub path: Word,
}

/// `printer_column(name = "Image", type = "string", json_path = ".spec.container.image")`.
#[derive(Debug, FromMeta)]
pub(crate) struct PrinterColumnAttrs {
    /// Column header.
    pub name: LitStr,
    /// `type = "..."`: `integer`, `number`, `string`, `boolean` or `date`.
    #[darling(rename = "type")]
    pub column_type: LitStr,
    /// Simple JSON path into the hub object.
    pub json_path: LitStr,
    /// `priority = 1`: 0 (the default) shows always; greater shows with `-o wide` only.
    pub priority: Option<i32>,
    /// OpenAPI format hint (`int32`, `date-time`, ...); empty by default.
    pub format: Option<LitStr>,
    /// Column description; empty by default.
    pub description: Option<LitStr>,
    /// `cell = some::function`: the cell made by a function of the hub object's JSON
    /// (`fn(&serde_json::Value) -> serde_json::Value`), for what a JSON path cannot say
    /// (kube's own table convertors: `Local` or `namespace/name`); `json_path` then names
    /// the field the cell is about. None by default.
    pub cell: Option<syn::Path>,
}

/// A selectable field: its path, selected by the path without the leading dot
/// (`selectable_field = ".spec.x"`), or by another label (`selectable_field(label = "...",
/// path = "...")`, kube's field label conversions), with a path to fall back on when the
/// first is absent or empty (`or = ".reportingComponent"`, as kube's core Event `source`).
#[derive(Debug)]
pub(crate) struct SelectableFieldAttrs {
    /// `regarding.kind`; `None`: the path without its leading dot.
    pub label: Option<LitStr>,
    /// `.involvedObject.kind`: a simple JSON path into the hub.
    pub path: LitStr,
    /// The path whose value counts when `path`'s is absent or empty.
    pub or: Option<LitStr>,
}

/// The list form of [`SelectableFieldAttrs`].
#[derive(Debug, FromMeta)]
struct LabelledField {
    label: LitStr,
    path: LitStr,
    #[darling(default)]
    or: Option<LitStr>,
}

impl FromMeta for SelectableFieldAttrs {
    fn from_value(value: &Lit) -> darling::Result<Self> {
        match value {
            Lit::Str(path) => Ok(SelectableFieldAttrs {
                label: None,
                path: path.clone(),
                or: None,
            }),
            _ => Err(darling::Error::custom(
                "expected `selectable_field = \".spec.x\"` or \
                 `selectable_field(label = \"x\", path = \".spec.x\")`",
            )
            .with_span(value)),
        }
    }

    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        let field = LabelledField::from_list(items)?;
        Ok(SelectableFieldAttrs {
            label: Some(field.label),
            path: field.path,
            or: field.or,
        })
    }
}

/// `version(name = "v1", ty = v1::WebApp, storage)`.
#[derive(Debug, FromMeta)]
pub(crate) struct VersionAttrs {
    /// `v1`, `v1beta1`.
    pub name: LitStr,
    /// The version's type, as a path (`v1::WebApp`) or a string (`"v1::WebApp"`), relative
    /// to the hub's module. Defaults to `Self`: the hub is its own version.
    pub ty: Option<syn::Path>,
    /// `storage`: objects are stored in this version. Exactly one version has it.
    pub storage: Word,
    /// `served = false` stops serving the version; served by default.
    pub served: Option<bool>,
    /// `deprecated` or `deprecated = "warning text"`.
    pub deprecated: Option<Deprecation>,
    /// `lossy`: converting through this version loses what it cannot express.
    pub lossy: Word,
    /// `off_by_default`: served only when the server is told to.
    pub off_by_default: Word,
}

/// The value of `deprecated`: a flag, or the warning clients get.
#[derive(Debug)]
pub(crate) enum Deprecation {
    /// `deprecated`: the runtime builds a default warning.
    Flag,
    /// `deprecated = "..."`.
    Warning(LitStr),
}

impl FromMeta for Deprecation {
    fn from_word() -> darling::Result<Self> {
        Ok(Deprecation::Flag)
    }

    fn from_value(value: &Lit) -> darling::Result<Self> {
        match value {
            Lit::Str(text) => Ok(Deprecation::Warning(text.clone())),
            _ => Err(darling::Error::custom(
                "expected `deprecated` or `deprecated = \"warning text\"`",
            )
            .with_span(value)),
        }
    }
}

/// A key written alone (`namespaced`, `status`, `storage`), with the span of the word so
/// errors can point at it. Like darling's `Flag`, with a message that says what to write.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Word(Option<Span>);

impl Word {
    /// The word was written.
    pub(crate) fn is_present(&self) -> bool {
        self.0.is_some()
    }

    /// The word's span (the call site when absent).
    pub(crate) fn span(&self) -> Span {
        self.0.unwrap_or_else(Span::call_site)
    }
}

impl FromMeta for Word {
    fn from_none() -> Option<Self> {
        Some(Word(None))
    }

    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        match meta {
            Meta::Path(path) => Ok(Word(Some(path.span()))),
            Meta::NameValue(nv) => Err(takes_no_value(meta).with_span(&nv.value)),
            Meta::List(_) => Err(takes_no_value(meta).with_span(meta)),
        }
    }
}

fn takes_no_value(meta: &Meta) -> darling::Error {
    let key = meta
        .path()
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    darling::Error::custom(format!(
        "`{key}` is a flag and takes no value: write just `{key}`"
    ))
}
