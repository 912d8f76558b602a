//! Derives for kapi resource types: `#[derive(Resource)]` turns an annotated hub type into
//! the static API description of `kapi::api` (see [`macro@Resource`]);
//! `#[derive(Convert)]` converts a version type to and from its hub (see
//! [`macro@Convert`], in `convert/`, which follows the same pipeline).
//!
//! The derive is a pipeline, as serde_derive's is:
//!
//! 1. `attr`: darling parses `#[resource(...)]` (syntax only: keys, value types).
//! 2. `model`: defaults are applied and JSON paths parsed into a typed `model::Kind` that
//!    keeps every span.
//! 3. `check`: the rules, one small function each.
//! 4. `expand`: the `Resource` impl, its route table from `routes`, and the checks only
//!    rustc can make (JSON paths name fields, version types convert through the hub).
//!
//! Errors go into darling's `Accumulator` (our `Ctxt`) and are reported together, so a user
//! sees all their mistakes in one compile. When the attribute itself does not parse there is
//! nothing to check, so only darling's errors and the hub-shape errors are reported.

mod attr;
mod check;
mod convert;
mod deflated;
mod expand;
mod json_path;
mod model;
mod names;
mod protobuf;
mod rules;
mod serde_names;

use darling::FromDeriveInput;
use proc_macro::TokenStream;
use syn::DeriveInput;

/// Declares a kind on its hub type: implements `kapi::Resource`, whose `INFO`
/// describes the kind, its versions and every route kube-apiserver would serve for it.
///
/// ```ignore
/// #[derive(Resource)]
/// #[resource(
///     group = "apps.example.dev",
///     kind = "WebApp",
///     plural = "webapps",
///     namespaced,
///     short_name = "wa",
///     category = "all",
///     status,
///     scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"),
///     printer_column(name = "Image", type = "string", json_path = ".spec.container.image"),
///     selectable_field = ".spec.container.image",
///     version(name = "v1", ty = v1::WebApp, storage),
///     version(name = "v1beta1", ty = v1beta1::WebApp, deprecated = "use v1"),
/// )]
/// pub struct WebApp {
///     pub metadata: ObjectMeta,
///     pub spec: WebAppSpec,
///     pub status: WebAppStatus,
/// }
/// ```
///
/// # Keys of `#[resource(...)]`
///
/// | key | meaning |
/// |---|---|
/// | `group = "apps.example.dev"` | required; a DNS subdomain, or `""` for the core group (`/api/v1`) |
/// | `kind = "WebApp"` | UpperCamelCase ASCII; defaults to the struct's name |
/// | `plural = "webapps"` | a DNS label; defaults to the lower-case kind pluralized (`policy` -> `policies`, `ingress` -> `ingresses`) |
/// | `singular = "webapp"` | a DNS label; defaults to the lower-case kind |
/// | `namespaced` | objects live in namespaces; cluster-scoped without it |
/// | `short_name = "wa"` | repeatable, no duplicates |
/// | `category = "all"` | repeatable |
/// | `status` | a `status` subresource; the struct needs a `status` field |
/// | `finalize` | a `finalize` subresource (kube's namespaces): `PUT .../finalize` alone writes `spec.finalizers`, and a terminating object goes when they are empty |
/// | `scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas", label_selector_path = ".status.selector")` | a `scale` subresource; the selector is optional; paths under `.spec`, `.status`, `.spec` or `.status` |
/// | `subresource(name = "approval", field = ".status.conditions")` | repeatable; another subresource, a lower-case name no other has (not `status`, `scale`, `finalize`), of exactly one shape: `field = ...` (repeatable): the object, read, replaced and patched, of which a write changes only these fields (kube's CSR `approval`); `create(group = "policy", version = "v1", kind = "Eviction", body = path::Eviction, protobuf)`: a `POST` of another kind's object, answered by the action the server registers (kube's Pod `eviction`); `read`: a `GET` answered by the server's connector (`log`); `connect(options = "PodExecOptions", method = "GET", method = "POST", path)`: connected to with those methods (and under `.../{path}` with `path`), answered by the server's connector |
/// | `read_only` | objects are made when read, never stored (kube's ComponentStatuses): a get and a list route alone, answered by what the server registers for the kind (`Registry::set_computed`); one version, no subresources |
/// | `defaults` | every version's type implements `kapi::defaults::Defaults`: an object decoded from a request is defaulted by it (kube's `SetDefaults_*` functions), before admission, field management and validation see it |
/// | `strategy_validates` | objects are judged by the kind's strategy alone, never against its schema (kube's own kinds, which kube-apiserver checks with their validation code and never against their OpenAPI) |
/// | `generation(path = ".spec")`, `generation(created)`, `generation(untracked)` | how objects carry `metadata.generation`: 1 on create and moved when a value at one of the paths (repeatable; simple field paths) changes, nil and empty alike; 1 on create and never moved; or not at all. Without it, custom resources' way: 1 on create, moved by any change to what is neither metadata nor (with `status`) status. kube's own kinds each follow their strategy |
/// | `zero_object` | every version's type implements `Default`, and a create owns (in `managedFields`) what its object changed from that empty object, as kube-apiserver compares a new object of its own kinds with Go's zero value of the type (structs that are not pointers are there, so a create owns no `.` of them); without it, what the object holds, as for custom resources |
/// | `delete_status` | a delete answers with a `Success` Status naming the object (kube's built-in kinds, their stores' default) rather than with the object as deleted (custom resources, and kube's kinds whose stores set `ReturnDeletedObject`) |
/// | `printer_column(name = "Image", type = "string", json_path = ".spec.x", priority = 1, format = "int32", description = "...")` | repeatable; `type` is `integer`, `number`, `string`, `boolean` or `date`; `priority` defaults to 0, `format` and `description` to empty |
/// | `selectable_field = ".spec.x"` or `selectable_field(label = "regarding.kind", path = ".involvedObject.kind")` | repeatable; a field selector names it by `label` (by default the path without its dot), which is unique and not `metadata.name`/`metadata.namespace` (every kind has those) |
/// | `stored_with = crate::core::Event` | on a unit struct: the kind is another view of that kind's objects (its hub type, storage keys and storage version; kube's cohabiting resources, as `events.k8s.io` Events are core Events); no version is `storage` |
/// | `version(name = "v1", ty = v1::WebApp, storage, served = false, deprecated = "warning", lossy, off_by_default)` | repeatable, at least one, exactly one `storage` (none with `stored_with`), names unique; `ty` (a path or a string) defaults to `Self`, `served` to true; `deprecated` is a flag or the warning text; `lossy` says that converting through the version loses what it cannot express (as kube's `autoscaling/v1` HorizontalPodAutoscaler does), so that the round-trip tests ask of it that a second trip changes nothing rather than the first; `off_by_default` (on a served version) serves it only when the server's `--runtime-config` turns it on, as kube-apiserver serves some beta group-versions (a kind with other versions on is served whole), and leaves a kind all of whose versions are off out of the documents `generated/` holds |
/// | `protobuf = CONFIG_MAP_PROTO` or `protobuf` | optional; a path (or a string) to the kind's `kapi::api::ProtoMessage` (a `static` or `const`), or, alone, the message `#[derive(Protobuf)]` made for each version's type (the hub's for the version that is the hub): its `application/vnd.kubernetes.protobuf` request bodies are decoded to JSON, as kubectl sends them for kinds built into it; without it they get 415 |
///
/// # What the expansion checks with rustc
///
/// - Every JSON path (printer columns, scale, selectable fields, subresource fields) names a field of the hub:
///   each JSON field name is mapped to the snake_case Rust field (`readyReplicas` ->
///   `ready_replicas`, `type` -> `r#type`) and `[N]` to indexing, and an access is
///   type-checked, so a typo fails with rustc's "no field" error on the string literal.
///   Under `.metadata` only the first field is checked, since `ObjectMeta`'s fields are all
///   `Option`s.
/// - `metadata` is a `kapi::meta::ObjectMeta`.
/// - `protobuf` names a `kapi::api::ProtoMessage`.
/// - Every version type implements `Convert<Hub>` (the identity impl covers `Self`),
///   `JsonSchema`, `Serialize` and `DeserializeOwned` (the expansion names `::serde`, so the
///   crate must depend on serde under that name).
///
/// # Limitations
///
/// - JSON paths are checked as plain field accesses: every segment but the last must be a
///   struct field (not an `Option`, a map or an enum), and the fields must be visible from the
///   hub's module, as on hub types. The JSON names must be the camelCase forms of the Rust
///   field names: `#[serde(rename = "...")]` is not followed.
/// - `rust_type` is the version type's path as written, made absolute with `module_path!()`
///   (or the crate's name for `crate::` paths); a `ty` that is an imported name yields the
///   import's path, and `super::` is rejected.
/// - The hub type cannot be generic.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    derive(&input).into()
}

/// Converts a version struct (or a struct nested in one) to and from its hub struct:
/// implements `kapi::Convert<Hub>` field by field.
///
/// `into_hub` writes onto a base hub and overwrites only the hub fields the struct
/// expresses, so fields a version cannot express keep the base's values (the stored
/// object's on an update). `from_hub` reads them.
///
/// ```ignore
/// #[derive(Convert)]
/// #[convert(hub = super::WebAppSpec)]
/// pub struct WebAppSpec {
///     pub replicas: i32,                    // hub `replicas`
///     #[convert(path = "container.image")]  // hub `container.image`
///     pub image: String,
///     #[convert(with = "first_port")]       // `first_port::{into_hub, from_hub}`
///     pub port: i32,
/// }
/// ```
///
/// # Keys
///
/// | where | key | meaning |
/// |---|---|---|
/// | struct | `hub = path` | required; the hub struct (a path or a string) |
/// | field | (none) | the hub field of the same name |
/// | field | `rename = "hub_field"` | the hub field of another name |
/// | field | `path = "container.image"` | a nested hub field: Rust field names from the hub struct |
/// | field | `with = "module"` (or a path) | `module::into_hub(value, &mut Hub)` and `module::from_hub(&Hub) -> value`, given the whole hub struct |
/// | field | `skip` | no hub counterpart; `Default` when read from the hub |
///
/// A field takes at most one key.
///
/// # How field types convert
///
/// - `Vec<T>` to `Vec<U>` element by element (`T: Convert<U>`): the i-th element converts
///   onto the base's i-th.
/// - `Option<T>` to `Option<U>`, or to a plain `U`: then `None` writes `U::default()`, and a
///   default `U` reads as `None`.
/// - Anything else through `Convert<HubField>`: the identity impl for the same type, the
///   derived impl for a nested struct.
///
/// `Vec` and `Option` are recognized by name, as written.
///
/// # What rustc checks
///
/// Hub fields are accessed with tokens spanned on the field name or on the `rename`/`path`
/// literal: a field that does not exist is rustc's "no field" error there, and a type that
/// does not convert is a "`Convert<..>` is not implemented" error on the field's type.
#[proc_macro_derive(Convert, attributes(convert))]
pub fn derive_convert(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    convert::derive(&input).into()
}

/// A struct's protobuf message (kube's `generated.proto`), from its fields: implements
/// `kapi::api::protobuf::Protobuf` (the descriptor) and `ProtoValue` (a field of this type
/// is that message).
///
/// ```ignore
/// #[derive(Serialize, Deserialize, Protobuf)]
/// #[serde(rename_all = "camelCase")]
/// #[protobuf(name = "k8s.io.api.core.v1.ContainerPort")]
/// pub struct ContainerPort {
///     #[protobuf(tag = 1)]
///     pub name: String,
///     #[protobuf(tag = 3)]
///     pub container_port: i32,
///     #[protobuf(skip)]
///     pub note: String,
/// }
/// ```
///
/// Each field's JSON name is serde's (`rename`, or `rename_all = "camelCase"` of the Rust
/// name); `#[serde(flatten)]` inlines a field's message into the parent's JSON, as Go's
/// `json:",inline"`. Its kind comes from its type (`kapi::api::protobuf::ProtoValue`):
/// `Option<T>` is a pointer (its zero kept), `Vec<T>` repeated, `BTreeMap<String, V>` a
/// map, a struct with this derive a message. A kind with `#[resource(protobuf)]` takes
/// protobuf bodies with this message.
#[proc_macro_derive(Protobuf, attributes(protobuf))]
pub fn derive_protobuf(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    protobuf::derive(&input).into()
}

/// CEL validation rules on a version type and its fields, as kube's
/// `x-kubernetes-validations`: published in the type's schema (so in the OpenAPI documents
/// and in a CustomResourceDefinition made from the kind), enforced by the server with the
/// engine and semantics of custom resources' rules, and checked twice before any server
/// runs: here, on what the item shows, and by `cargo xtask generate` against the whole
/// schema (types and costs).
///
/// ```ignore
/// #[kapi::rules]
/// #[derive(Serialize, Deserialize, JsonSchema, Convert)]
/// #[rule("!self.container.image.endsWith(':latest')",
///        message = "the image must name a tag other than latest",
///        field_path = ".container.image")]
/// pub struct WebAppSpec {
///     pub container: Container,
///     #[rule("self == oldSelf", message = "displayName is immutable")]
///     pub display_name: Option<String>,
/// }
/// ```
///
/// It goes above `#[derive(...)]`: it must see the derives, and schemars what it writes.
///
/// # Keys of `#[rule(...)]`
///
/// | key | meaning |
/// |---|---|
/// | `"expr"` (first) or `rule = "expr"` | required; the CEL expression, true when the value is valid; `self` is the value where the rule sits, `oldSelf` the value before an update (a transition rule) |
/// | `message = "..."` | what a failure says; no line breaks; by default kube's `failed rule: <rule>` |
/// | `message_expression = "..."` | a CEL expression making the message |
/// | `reason = "FieldValueForbidden"` | the error type: `FieldValueInvalid` (the default), `FieldValueForbidden`, `FieldValueRequired` or `FieldValueDuplicate` |
/// | `field_path = ".container.image"` | where a failure is reported, below the rule's place |
/// | `optional_old_self` | a transition rule that also runs on create, `oldSelf` then an empty optional |
///
/// # What is checked where
///
/// - Here, with spans: the keys as kube checks them, the rule and message expression
///   parsed, and on a struct the fields `self.x`/`oldSelf.x` select and the first step of
///   `field_path` (serde's JSON names, escaped as kube escapes them: `self.__namespace__`).
/// - By `cargo xtask generate`, naming the rule's file and line: the rule compiled against
///   the whole schema of where it sits (nested types, lists, maps, optional fields,
///   int-or-string), `oldSelf` only where kube can correlate old values, and its estimated
///   cost within kube's limits per rule and per kind (naming the fields that need a
///   `maxItems`, `maxProperties` or `maxLength`).
#[proc_macro_attribute]
pub fn rules(args: TokenStream, item: TokenStream) -> TokenStream {
    rules::expand(args.into(), item.into()).into()
}

/// A file of the calling crate compiled in deflated: a `kapi::api::Deflated` that
/// inflates to the file's bytes. The path is relative to the crate's directory (where its
/// `Cargo.toml` is); the crate is built again when the file changes.
///
/// ```ignore
/// pub const OPENAPI_V2_JSON: kapi::api::Deflated = kapi::deflated!("openapi/v2.json");
/// ```
#[proc_macro]
pub fn deflated(input: TokenStream) -> TokenStream {
    let path = syn::parse_macro_input!(input as syn::LitStr);
    deflated::expand(&path).into()
}

fn derive(input: &DeriveInput) -> proc_macro2::TokenStream {
    let mut errors = darling::Error::accumulator();
    // The hub's shape does not depend on the attribute: report it even if that fails to parse.
    let hub = model::Hub::from_input(input, &mut errors);
    let attrs = attr::ResourceAttrs::from_derive_input(input)
        .map_err(|e| span_unspanned(e, model::attr_span(input)));
    let Some(attrs) = errors.handle(attrs) else {
        return errors
            .finish()
            .err()
            .map(darling::Error::write_errors)
            .unwrap_or_default();
    };
    let kind = model::Kind::new(input, hub, attrs);
    check::check(&kind, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&kind),
        Err(errors) => {
            // The type checks go out with the errors, so that a path naming no field shows
            // up in the same compile as the attribute's other mistakes.
            let mut tokens = errors.write_errors();
            tokens.extend(expand::type_checks_alone(&kind));
            tokens
        }
    }
}

/// darling leaves an error unspanned when a nested item (`printer_column(...)`) has several;
/// point it at the `resource` attribute rather than at the derive, keeping darling's
/// `at printer_column[0]` location in the message.
fn span_unspanned(error: darling::Error, span: proc_macro2::Span) -> darling::Error {
    let errors = (error.flatten().into_iter())
        .map(|e| {
            if e.has_span() {
                e
            } else {
                model::error(span, e)
            }
        })
        .collect();
    darling::Error::multiple(errors)
}
