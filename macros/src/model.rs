//! The typed model of one kind: the attribute with its defaults applied, and the hub
//! struct's fields.
//!
//! Every value keeps the span of the token it came from (or, for a default, of the token it
//! was derived from), so that [`crate::check`] can point at the offending token and the
//! expansion can make rustc point at it too. Nothing here rejects input except the shape of
//! the hub type, which the checks and the expansion need.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Generics, Ident, LitStr, Type};

use crate::attr::{
    ConnectAttrs, CreateAttrs, Deprecation, NameRuleAttr, PrinterColumnAttrs, ResourceAttrs,
    ScaleAttrs, SelectableFieldAttrs, SubresourceAttrs, VersionAttrs, Word,
};
use crate::json_path::{self, Segment};
use crate::names;

/// One kind, declared on its hub type.
pub(crate) struct Kind {
    /// The path the expansion reaches kapi by (`::kapi`, or `crate = "..."`).
    pub krate: syn::Path,
    /// The hub struct.
    pub hub: Hub,
    /// The `resource` of the first `#[resource(...)]` (the struct name when there is none):
    /// where errors about something missing from the attribute point.
    pub attr_span: Span,
    /// `None` when missing, which [`crate::check`] reports.
    pub group: Option<LitStr>,
    /// `WebApp`.
    pub kind: Name,
    /// `webapps`.
    pub plural: Name,
    /// `webapp`.
    pub singular: Name,
    /// Objects live in namespaces.
    pub namespaced: bool,
    /// How names of new objects are checked.
    pub names: NameRuleAttr,
    /// `wa`.
    pub short_names: Vec<LitStr>,
    /// `all`.
    pub categories: Vec<LitStr>,
    /// The `status` subresource, with the span of the `status` word.
    pub status: Word,
    /// The `scale` subresource.
    pub scale: Option<Scale>,
    /// The `finalize` subresource.
    pub finalize: Word,
    /// Only created, never stored.
    pub create_only: Word,
    /// Judged by its strategy alone, never against its schema.
    pub strategy_validates: Word,
    /// Creates own what changed from the versions' `Default` objects.
    pub zero_object: Word,
    /// `generation(...)`, with the span of the attribute; `None`: custom resources' way.
    pub generation: Option<(Span, GenerationRule)>,
    /// Made when read, never stored.
    pub read_only: Word,
    /// Its versions' types default objects by code.
    pub defaults: Word,
    /// The other subresources, in declaration order.
    pub subresources: Vec<Subresource>,
    /// A delete answers with a Status.
    pub delete_status: Word,
    /// Columns of `kubectl get`.
    pub printer_columns: Vec<PrinterColumn>,
    /// Fields usable in field selectors.
    pub selectable_fields: Vec<SelectableField>,
    /// Versions, in declaration order.
    pub versions: Vec<Version>,
    /// The path of the kind's protobuf descriptor, when it accepts protobuf bodies.
    pub protobuf: Option<crate::attr::ProtobufAttr>,
    /// `storage_key`.
    pub storage_key: Option<LitStr>,
    /// The hub of the kind whose objects (and storage) this kind shares; `None`: the
    /// struct the derive is on is the hub.
    pub stored_with: Option<syn::Path>,
}

/// A field usable in field selectors.
pub(crate) struct SelectableField {
    /// What selectors name: the given label, or the path without its leading dot.
    pub label: String,
    /// The label's literal, or the path's when there is none: where errors point.
    pub label_span: Span,
    /// The path into the hub.
    pub path: JsonPath,
    /// The path whose value counts when `path`'s is absent or empty.
    pub or: Option<JsonPath>,
}

/// The struct the derive is on.
pub(crate) struct Hub {
    /// `WebApp`.
    pub ident: Ident,
    /// Must be empty: `INFO` is one value per kind.
    pub generics: Generics,
    /// Named fields; `None` when the type is not a struct with named fields.
    pub fields: Option<Vec<HubField>>,
    /// A unit struct: what a kind `stored_with` another is declared on.
    pub unit: bool,
}

/// A named field of the hub struct.
pub(crate) struct HubField {
    /// `metadata`.
    pub ident: Ident,
    /// `ObjectMeta`.
    pub ty: Type,
}

/// A name with a default: given in the attribute, or derived from another name.
pub(crate) struct Name {
    /// `webapps`.
    pub value: String,
    /// The literal, or the token the default was derived from.
    pub span: Span,
    /// Written in the attribute (a default is valid when what it derives from is).
    pub explicit: bool,
}

/// A simple JSON path as written, and its parse.
pub(crate) struct JsonPath {
    /// The string literal, for spans and for the path as the runtime sees it.
    pub lit: LitStr,
    /// Its segments, or why it is not a simple JSON path (reported by [`crate::check`]).
    pub segments: Result<Vec<Segment>, String>,
}

/// How objects carry `metadata.generation` (`generation(...)`).
pub(crate) struct GenerationRule {
    /// `path = ...`: moved when one of these changes.
    pub paths: Vec<JsonPath>,
    /// `created`.
    pub created: Word,
    /// `untracked`.
    pub untracked: Word,
}

/// The `scale` subresource.
pub(crate) struct Scale {
    /// `.spec.replicas`.
    pub spec_replicas_path: JsonPath,
    /// `.status.replicas`.
    pub status_replicas_path: JsonPath,
    /// `.status.selector`.
    pub label_selector_path: Option<JsonPath>,
}

/// A subresource beside `status`, `scale` and `finalize`.
pub(crate) struct Subresource {
    /// `approval`.
    pub name: LitStr,
    /// The `subresource(...)` attribute: where errors about its shape point.
    pub span: Span,
    /// The paths a write changes, for the object's own view.
    pub fields: Vec<JsonPath>,
    /// `create(...)`.
    pub create: Option<CreateAttrs>,
    /// `read`.
    pub read: Word,
    /// `connect(...)`.
    pub connect: Option<ConnectAttrs>,
}

impl Subresource {
    fn new(span: Span, attrs: SubresourceAttrs) -> Subresource {
        Subresource {
            name: attrs.name,
            span,
            fields: attrs.fields.into_iter().map(JsonPath::new).collect(),
            create: attrs.create,
            read: attrs.read,
            connect: attrs.connect,
        }
    }
}

/// One column of `kubectl get`.
pub(crate) struct PrinterColumn {
    /// Header.
    pub name: LitStr,
    /// `string`, ...; checked by [`crate::check`].
    pub column_type: LitStr,
    /// Path into the hub.
    pub json_path: JsonPath,
    /// 0 by default.
    pub priority: i32,
    /// `int32`, ...; `None` for none.
    pub format: Option<LitStr>,
    /// `None` for none.
    pub description: Option<LitStr>,
    /// A function making the cell; `None`: the JSON path's value.
    pub cell: Option<syn::Path>,
}

/// One version of the kind.
pub(crate) struct Version {
    /// The `version` word.
    pub span: Span,
    /// `v1`.
    pub name: LitStr,
    /// The version's Rust type.
    pub ty: VersionType,
    /// The `storage` word when present.
    pub storage: Word,
    /// Served over HTTP.
    pub served: bool,
    /// Served with a `Warning` header.
    pub deprecated: bool,
    /// The header's text, when given.
    pub deprecation_warning: Option<LitStr>,
    /// Converting through the version loses what it cannot express.
    pub lossy: bool,
    /// The `off_by_default` word when present.
    pub off_by_default: Word,
}

/// The Rust type of a version.
pub(crate) enum VersionType {
    /// No `ty`, or `ty = Self`: the hub serves as its own version.
    Hub,
    /// `ty = v1::WebApp`: a path relative to the hub's module.
    Path(syn::Path),
}

impl Hub {
    /// Reads the hub struct, reporting (into `errors`) a type that is not a struct with
    /// named fields. Independent of the attribute, so it runs even when the attribute
    /// does not parse.
    /// A unit struct is reported only when the attribute has no `stored_with`.
    pub(crate) fn from_input(input: &DeriveInput, errors: &mut darling::error::Accumulator) -> Hub {
        const NEED: &str = "`#[derive(Resource)]` needs a struct with named fields \
                            (`metadata`, `spec`, `status`)";
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Some(
                    named
                        .named
                        .iter()
                        .filter_map(|f| {
                            Some(HubField {
                                ident: f.ident.clone()?,
                                ty: f.ty.clone(),
                            })
                        })
                        .collect(),
                ),
                Fields::Unnamed(unnamed) => {
                    errors.push(error(unnamed.span(), format!("{NEED}, not a tuple struct")));
                    None
                }
                Fields::Unit => {
                    if !mentions_stored_with(input) {
                        errors.push(error(
                            input.ident.span(),
                            format!("{NEED}, not a unit struct"),
                        ));
                    }
                    None
                }
            },
            Data::Enum(data) => {
                errors.push(error(data.enum_token.span, format!("{NEED}, not an enum")));
                None
            }
            Data::Union(data) => {
                errors.push(error(data.union_token.span, format!("{NEED}, not a union")));
                None
            }
        };
        Hub {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            fields,
            unit: matches!(&input.data, Data::Struct(data) if matches!(data.fields, Fields::Unit)),
        }
    }

    /// The named field `name`, if the hub has it.
    pub(crate) fn field(&self, name: &str) -> Option<&HubField> {
        self.fields
            .as_ref()?
            .iter()
            .find(|f| f.ident.unraw() == name)
    }
}

/// `::kapi`: the facade crate, which re-exports everything the expansions name.
pub(crate) fn default_crate() -> syn::Path {
    syn::parse_quote!(::kapi)
}

impl Kind {
    /// Applies the defaults of the grammar to the parsed attribute.
    pub(crate) fn new(input: &DeriveInput, hub: Hub, attrs: ResourceAttrs) -> Kind {
        let attr_span = attr_span(input);
        let kind = match &attrs.kind {
            Some(lit) => Name::given(lit),
            None => Name {
                value: hub.ident.unraw().to_string(),
                span: hub.ident.span(),
                explicit: false,
            },
        };
        let lower = kind.value.to_lowercase();
        let singular = match &attrs.singular {
            Some(lit) => Name::given(lit),
            None => Name {
                value: lower.clone(),
                span: kind.span,
                explicit: false,
            },
        };
        let plural = match &attrs.plural {
            Some(lit) => Name::given(lit),
            None => Name {
                value: names::pluralize(&lower),
                span: kind.span,
                explicit: false,
            },
        };
        Kind {
            krate: attrs.krate.unwrap_or_else(default_crate),
            hub,
            attr_span,
            group: attrs.group,
            kind,
            plural,
            singular,
            namespaced: attrs.namespaced.is_present(),
            names: attrs.names.unwrap_or(NameRuleAttr::DnsSubdomain),
            short_names: attrs.short_names,
            categories: attrs.categories,
            status: attrs.status,
            scale: attrs.scale.map(Scale::new),
            finalize: attrs.finalize,
            create_only: attrs.create_only,
            strategy_validates: attrs.strategy_validates,
            zero_object: attrs.zero_object,
            generation: attrs
                .generation
                .map(|g| (g.span(), GenerationRule::new(g.into_inner()))),
            read_only: attrs.read_only,
            defaults: attrs.defaults,
            subresources: (attrs.subresources.into_iter())
                .map(|s| Subresource::new(s.span(), s.into_inner()))
                .collect(),
            delete_status: attrs.delete_status,
            printer_columns: attrs
                .printer_columns
                .into_iter()
                .map(PrinterColumn::new)
                .collect(),
            selectable_fields: attrs
                .selectable_fields
                .into_iter()
                .map(SelectableField::new)
                .collect(),
            versions: (attrs.versions.into_iter())
                .map(|v| Version::new(v.span(), v.into_inner()))
                .collect(),
            protobuf: attrs.protobuf,
            storage_key: attrs.storage_key,
            stored_with: attrs.stored_with,
        }
    }

    /// The hub type as tokens: the `stored_with` path, or the struct the derive is on.
    pub(crate) fn hub_type(&self) -> proc_macro2::TokenStream {
        match &self.stored_with {
            Some(path) => quote::ToTokens::to_token_stream(path),
            None => quote::ToTokens::to_token_stream(&self.hub.ident),
        }
    }

    /// Every JSON path of the kind, in declaration order.
    pub(crate) fn json_paths(&self) -> impl Iterator<Item = &JsonPath> {
        let scale = self.scale.iter().flat_map(|s| {
            [
                Some(&s.spec_replicas_path),
                Some(&s.status_replicas_path),
                s.label_selector_path.as_ref(),
            ]
            .into_iter()
            .flatten()
        });
        let columns = self.printer_columns.iter().map(|c| &c.json_path);
        let selectable = (self.selectable_fields.iter())
            .flat_map(|f| std::iter::once(&f.path).chain(f.or.as_ref()));
        let subresources = self.subresources.iter().flat_map(|s| &s.fields);
        scale.chain(columns).chain(selectable).chain(subresources)
    }
}

impl Name {
    fn given(lit: &LitStr) -> Name {
        Name {
            value: lit.value(),
            span: lit.span(),
            explicit: true,
        }
    }
}

impl JsonPath {
    fn new(lit: LitStr) -> JsonPath {
        let segments = json_path::parse(&lit.value());
        JsonPath { lit, segments }
    }
}

impl SelectableField {
    fn new(attrs: SelectableFieldAttrs) -> SelectableField {
        let (label, label_span) = match &attrs.label {
            Some(label) => (label.value(), label.span()),
            None => (
                attrs.path.value().trim_start_matches('.').to_owned(),
                attrs.path.span(),
            ),
        };
        SelectableField {
            label,
            label_span,
            path: JsonPath::new(attrs.path),
            or: attrs.or.map(JsonPath::new),
        }
    }
}

impl GenerationRule {
    fn new(attrs: crate::attr::GenerationAttrs) -> GenerationRule {
        GenerationRule {
            paths: attrs.paths.into_iter().map(JsonPath::new).collect(),
            created: attrs.created,
            untracked: attrs.untracked,
        }
    }
}

impl Scale {
    fn new(attrs: ScaleAttrs) -> Scale {
        Scale {
            spec_replicas_path: JsonPath::new(attrs.spec_replicas_path),
            status_replicas_path: JsonPath::new(attrs.status_replicas_path),
            label_selector_path: attrs.label_selector_path.map(JsonPath::new),
        }
    }
}

impl PrinterColumn {
    fn new(attrs: PrinterColumnAttrs) -> PrinterColumn {
        PrinterColumn {
            name: attrs.name,
            column_type: attrs.column_type,
            json_path: JsonPath::new(attrs.json_path),
            priority: attrs.priority.unwrap_or(0),
            format: attrs.format,
            description: attrs.description,
            cell: attrs.cell,
        }
    }
}

impl Version {
    fn new(span: Span, attrs: VersionAttrs) -> Version {
        let ty = match attrs.ty {
            Some(path) if !path.is_ident("Self") => VersionType::Path(path),
            _ => VersionType::Hub,
        };
        let (deprecated, deprecation_warning) = match attrs.deprecated {
            None => (false, None),
            Some(Deprecation::Flag) => (true, None),
            Some(Deprecation::Warning(text)) => (true, Some(text)),
        };
        Version {
            span,
            name: attrs.name,
            ty,
            storage: attrs.storage,
            served: attrs.served.unwrap_or(true),
            deprecated,
            deprecation_warning,
            lossy: attrs.lossy.is_present(),
            off_by_default: attrs.off_by_default,
        }
    }
}

/// The `resource` of the first `#[resource(...)]`, or the struct's name when there is none.
pub(crate) fn attr_span(input: &DeriveInput) -> Span {
    (input.attrs.iter())
        .find(|a| a.path().is_ident("resource"))
        .map_or_else(|| input.ident.span(), |a| a.path().span())
}

/// Whether a `#[resource(...)]` of `input` says `stored_with`: read from the tokens, as the
/// hub's shape is checked before (and whether or not) the attribute parses.
fn mentions_stored_with(input: &DeriveInput) -> bool {
    fn has(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(ident) => ident == "stored_with",
            proc_macro2::TokenTree::Group(group) => has(group.stream()),
            _ => false,
        })
    }
    (input.attrs.iter())
        .filter(|a| a.path().is_ident("resource"))
        .any(|a| match &a.meta {
            syn::Meta::List(list) => has(list.tokens.clone()),
            _ => false,
        })
}

/// An error pointing at `span`.
pub(crate) fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    syn::Error::new(span, message).into()
}
