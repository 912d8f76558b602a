//! Code generation: the `Resource` impl with its static `KindInfo`, and the compile-time
//! checks only rustc can make.
//!
//! The emitted code names kapi's items through one alias, `__kapi`, bound once to the
//! crate path (`::kapi`, or `#[resource(crate = "...")]`) in the `const _` block the whole
//! expansion sits in ([`in_crate`]), so it works whatever the user imported, and runs
//! nothing: `INFO` is a constant, and the checks live in closures and function items that
//! are type-checked but never called.

use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use crate::attr::NameRuleAttr;
use crate::json_path::{self, Segment};
use crate::model::{JsonPath, Kind, PrinterColumn, Subresource, Version, VersionType};
use kapi_routes::{self as routes, Action, Method};

/// The whole expansion of a kind that passed every check.
pub(crate) fn expand(kind: &Kind) -> TokenStream {
    let hub = &kind.hub.ident;
    let info = kind_info(kind);
    let checks = type_checks(kind, Schemas::InInfo);
    let k8s_openapi = k8s_openapi_impls(kind);
    let metadata_mut = kind.hub.field("metadata").map(|field| {
        let ident = &field.ident;
        quote! {
            fn metadata_mut(
                &mut self,
            ) -> ::core::option::Option<&mut __kapi::meta::ObjectMeta> {
                __kapi::__private::object_meta_mut(&mut self.#ident)
            }
        }
    });
    in_crate(
        &kind.krate,
        quote! {
            #[automatically_derived]
            impl __kapi::Resource for #hub {
                const INFO: &'static __kapi::api::KindInfo = &#info;
                #metadata_mut
            }

            #k8s_openapi

            #checks
        },
    )
}

/// `items` in a `const _` block that binds `__kapi` to `krate`: impls inside it apply as
/// anywhere, and the user's paths still resolve in the enclosing module.
pub(crate) fn in_crate(krate: &syn::Path, items: TokenStream) -> TokenStream {
    quote! {
        const _: () = {
            use #krate as __kapi;
            #items
        };
    }
}
/// k8s-openapi's `Resource`, `ListableResource` and `Metadata` for the type of each served
/// version, from the kind's names: kube-rs implements `kube::Resource` for every type with
/// them, so `kube::Api<v1::WebApp>` works on the type as declared, with no twin type. A
/// version served by another kind's type (`stored_with`) has them from that kind's derive.
/// Spanned on the version's type, so a version type without `metadata: ObjectMeta` is an
/// error there.
fn k8s_openapi_impls(kind: &Kind) -> TokenStream {
    let group = kind.group.as_ref().map(|g| g.value()).unwrap_or_default();
    let kind_name = &kind.kind.value;
    let plural = &kind.plural.value;
    let list_kind = format!("{kind_name}List");
    let scope = match kind.namespaced {
        true => quote!(NamespaceResourceScope),
        false => quote!(ClusterResourceScope),
    };
    let impls = (kind.versions.iter())
        .filter(|v| v.served)
        .filter_map(|version| {
            let ty = match (&version.ty, &kind.stored_with) {
                (VersionType::Hub, Some(_)) => return None,
                _ => version_type(kind, version),
            };
            // The hub as its own version: its metadata's declared type, whose being an
            // `ObjectMeta` the type checks report (once); kube-rs needs it to be one.
            let hub_metadata = (kind.hub.fields.iter().flatten())
                .find(|field| field.ident == "metadata")
                .map(|field| field.ty.to_token_stream());
            let meta = match (&version.ty, hub_metadata) {
                (VersionType::Hub, Some(declared)) => declared,
                _ => quote!(__kapi::meta::ObjectMeta),
            };
            let name = version.name.value();
            let api_version = match group.as_str() {
                "" => name.clone(),
                group => format!("{group}/{name}"),
            };
            Some(quote_spanned! {ty.span()=>
                #[automatically_derived]
                impl __kapi::__private::k8s_openapi::Resource for #ty {
                    const API_VERSION: &'static str = #api_version;
                    const GROUP: &'static str = #group;
                    const KIND: &'static str = #kind_name;
                    const VERSION: &'static str = #name;
                    const URL_PATH_SEGMENT: &'static str = #plural;
                    type Scope = __kapi::__private::k8s_openapi::#scope;
                }

                #[automatically_derived]
                impl __kapi::__private::k8s_openapi::ListableResource for #ty {
                    const LIST_KIND: &'static str = #list_kind;
                }

                #[automatically_derived]
                impl __kapi::__private::k8s_openapi::Metadata for #ty {
                    type Ty = #meta;

                    fn metadata(&self) -> &Self::Ty {
                        &self.metadata
                    }

                    fn metadata_mut(&mut self) -> &mut Self::Ty {
                        &mut self.metadata
                    }
                }
            })
        });
    quote!(#(#impls)*)
}

/// The type checks, for when the attribute has errors and no `INFO` is emitted: they go out
/// with the errors so that all mistakes show in one compile.
pub(crate) fn type_checks_alone(kind: &Kind) -> TokenStream {
    in_crate(&kind.krate, type_checks(kind, Schemas::Here))
}

/// Where `V: JsonSchema` is checked. `INFO`'s `schema: SchemaGenerator::subschema_for::<V>`
/// already requires it, spanned on `ty`; requiring it again would report it twice.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Schemas {
    /// `INFO` is emitted and checks it.
    InInfo,
    /// No `INFO` (the attribute has errors): the checks name `subschema_for` themselves.
    Here,
}

/// What only rustc can check, each error spanned on the token the user wrote:
///
/// - every JSON path names a field: `.spec.container.image` becomes
///   `&o.spec.container.image` (camelCase to snake_case) spanned on the string literal, so
///   rustc's "no field `imgae` on type `Container`" points at the path;
/// - `metadata` is an `ObjectMeta`;
/// - every version type converts through the hub and has a schema and serde impls;
/// - `protobuf` names a `ProtoMessage`.
///
/// All inside `const _: () = { ... };`: a closure and function items that are type-checked,
/// referenced (so never dead code) and never called. Left out when the hub's shape would make
/// them fail for unrelated reasons.
fn type_checks(kind: &Kind, schemas: Schemas) -> TokenStream {
    let hub = &kind.hub;
    let shaped = hub.fields.is_some() || (kind.stored_with.is_some() && hub.unit);
    if !shaped || !hub.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = kind.hub_type();
    let metadata = hub.field("metadata").map(|f| {
        quote_spanned! {f.ty.span()=>
            let _: &__kapi::meta::ObjectMeta = &o.metadata;
        }
    });
    let paths = kind.json_paths().filter_map(field_access);
    // Each helper only when something uses it.
    let converts = (kind.versions.iter())
        .any(|v| matches!(v.ty, VersionType::Path(_)))
        .then(|| {
            quote!(
                fn __kapi_converts_through_hub<V: __kapi::Convert<H>, H>() {}
            )
        });
    let has_serde = (!kind.versions.is_empty()).then(|| {
        quote!(
            fn __kapi_has_serde<
                V: __kapi::__private::serde::Serialize
                    + __kapi::__private::serde::de::DeserializeOwned,
            >() {
            }
        )
    });
    let defaults = (kind.defaults.is_present()).then(|| {
        quote!(
            fn __kapi_defaults<V: __kapi::defaults::Defaults>() {}
        )
    });
    let versions = (kind.versions.iter()).map(|v| version_assertions(kind, v, schemas));
    // `INFO`'s `protobuf: Some(&PATH)` checks the descriptor's type when it is emitted.
    let protobuf = (kind.protobuf.as_ref())
        .filter(|_| schemas == Schemas::Here)
        .and_then(|protobuf| match protobuf {
            crate::attr::ProtobufAttr::Path(path) => Some(path),
            // The derived message's type is checked where `INFO` names it.
            crate::attr::ProtobufAttr::Derived => None,
        })
        .map(|path| {
            quote_spanned! {path.span()=>
                let _: &'static __kapi::api::ProtoMessage = &#path;
            }
        });
    quote! {
        const _: () = {
            #converts
            #has_serde
            #defaults
            #(#versions)*
            let _ = |o: &#ident| {
                #[allow(unused_imports)]
                use __kapi::__private::path::{ThroughOption as _, ThroughPlain as _};
                #metadata
                #(#paths)*
                #protobuf
            };
        };
    }
}

/// `let _ = &(*(&o.spec).__kapi_through()).ports ...;` for `.spec.ports[0].name`, every token spanned on the literal: each step may be inside
/// an `Option` (`kapi::__private::path`). Only the first field under `.metadata`
/// is accessed: what follows it is a map's key (`labels`, `annotations`). `None` for a path
/// with errors (reported by the checks).
fn field_access(path: &JsonPath) -> Option<TokenStream> {
    let segments = path.segments.as_ref().ok()?;
    // Where the literal is, but marked as coming from this derive: rustc then reports the
    // error on the literal without "similar name" rewrites of the literal into an ident.
    let span = Span::call_site().located_at(path.lit.span());
    let mut access = quote!(o);
    // Filters' own paths, checked on an item of the list they filter.
    let mut filters = TokenStream::new();
    for (i, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Field(name) => {
                let field = json_path::rust_field(name).ok()?;
                let ident = if field.raw {
                    Ident::new_raw(&field.name, span)
                } else {
                    Ident::new(&field.name, span)
                };
                access.extend(quote_spanned!(span=> .#ident));
                if i == 1 && matches!(&segments[0], Segment::Field(root) if root == "metadata") {
                    break;
                }
            }
            Segment::Index(index) => {
                let mut index = Literal::usize_unsuffixed(*index);
                index.set_span(span);
                let mut group = Group::new(Delimiter::Bracket, index.into_token_stream());
                group.set_span(span);
                access.extend(group.into_token_stream());
            }
            Segment::Filter(condition) => {
                let mut group = Group::new(Delimiter::Bracket, quote_spanned!(span=> 0));
                group.set_span(span);
                access.extend(group.into_token_stream());
                let mut item = access.clone();
                for step in condition {
                    item = quote_spanned!(span=> (*(&#item).__kapi_through()));
                    let Segment::Field(name) = step else {
                        continue;
                    };
                    let field = json_path::rust_field(name).ok()?;
                    let ident = if field.raw {
                        Ident::new_raw(&field.name, span)
                    } else {
                        Ident::new(&field.name, span)
                    };
                    item.extend(quote_spanned!(span=> .#ident));
                }
                filters.extend(quote_spanned!(span=> let _ = &#item;));
            }
        }
        // What follows may be inside an `Option`.
        if i + 1 < segments.len() {
            access = quote_spanned!(span=> (*(&#access).__kapi_through()));
        }
    }
    Some(quote_spanned!(span=> let _ = &#access; #filters))
}

/// `V: Convert<Hub>`, `V: Serialize + DeserializeOwned` and (see [`Schemas`])
/// `V: JsonSchema`, spanned on `ty`, or on the `version` word when the hub is its own version.
fn version_assertions(kind: &Kind, version: &Version, schemas: Schemas) -> TokenStream {
    let hub = kind.hub_type();
    let ty = version_type(kind, version);
    let convert = match &version.ty {
        // `Convert<T> for T` covers the hub.
        VersionType::Hub => None,
        VersionType::Path(_) => Some(quote_spanned! {ty.span()=>
            let _ = __kapi_converts_through_hub::<#ty, #hub>;
        }),
    };
    let schema = (schemas == Schemas::Here).then(|| {
        quote_spanned! {ty.span()=>
            let _ = __kapi::__private::schemars::SchemaGenerator::subschema_for::<#ty>;
        }
    });
    let defaults = (kind.defaults.is_present()).then(|| {
        quote_spanned! {ty.span()=>
            let _ = __kapi_defaults::<#ty>;
        }
    });
    quote_spanned! {ty.span()=>
        #convert
        let _ = __kapi_has_serde::<#ty>;
        #schema
        #defaults
    }
}

/// The version's type as written, or the hub's name spanned on the `version` word (so
/// errors about it point into the attribute).
fn version_type(kind: &Kind, version: &Version) -> TokenStream {
    match &version.ty {
        VersionType::Path(path) => path.to_token_stream(),
        VersionType::Hub if kind.stored_with.is_some() => kind.hub_type(),
        VersionType::Hub => {
            let mut hub = kind.hub.ident.clone();
            hub.set_span(version.span);
            hub.to_token_stream()
        }
    }
}

fn kind_info(kind: &Kind) -> TokenStream {
    let group = kind.group.as_ref().map(|g| g.value()).unwrap_or_default();
    let kind_name = &kind.kind.value;
    let plural = &kind.plural.value;
    let singular = &kind.singular.value;
    let scope = if kind.namespaced {
        quote!(__kapi::api::Scope::Namespaced)
    } else {
        quote!(__kapi::api::Scope::Cluster)
    };
    let short_names = kind.short_names.iter().map(|l| l.value());
    let categories = kind.categories.iter().map(|l| l.value());
    let status = kind.status.is_present();
    let scale = match &kind.scale {
        None => quote!(::core::option::Option::None),
        Some(scale) => {
            let spec = scale.spec_replicas_path.lit.value();
            let status = scale.status_replicas_path.lit.value();
            let selector = option_str(scale.label_selector_path.as_ref().map(|p| p.lit.value()));
            quote! {
                ::core::option::Option::Some(__kapi::api::ScaleInfo {
                    spec_replicas_path: #spec,
                    status_replicas_path: #status,
                    label_selector_path: #selector,
                })
            }
        }
    };
    let others = kind.subresources.iter().map(subresource_info);
    let printer_columns = kind.printer_columns.iter().map(printer_column);
    let selectable_fields = kind.selectable_fields.iter().map(|f| {
        let (label, path) = (&f.label, f.path.lit.value());
        let or = match &f.or {
            Some(or) => {
                let or = or.lit.value();
                quote!(::core::option::Option::Some(#or))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(__kapi::api::SelectableField { label: #label, path: #path, or: #or })
    });
    let stored_with = match &kind.stored_with {
        None => quote!(::core::option::Option::None),
        Some(path) => quote_spanned! {path.span()=>
            ::core::option::Option::Some(<#path as __kapi::Resource>::INFO)
        },
    };
    let versions = kind.versions.iter().map(|v| version_info(kind, &group, v));
    let storage_key = match &kind.storage_key {
        None => quote!(::core::option::Option::None),
        Some(key) => quote!(::core::option::Option::Some(#key)),
    };
    let rust_type = hub_rust_type(kind);
    let create_only = kind.create_only.is_present();
    let delete_status = kind.delete_status.is_present();
    let strategy_validates = kind.strategy_validates.is_present();
    let read_only = kind.read_only.is_present();
    let defaulted = kind.defaults.is_present();
    let generation = match &kind.generation {
        None => quote!(__kapi::api::Generation::Object),
        Some((_, rule)) if rule.created.is_present() => quote!(__kapi::api::Generation::Created),
        Some((_, rule)) if rule.untracked.is_present() => {
            quote!(__kapi::api::Generation::Untracked)
        }
        Some((_, rule)) => {
            let paths = rule.paths.iter().map(|p| p.lit.value());
            quote!(__kapi::api::Generation::Paths(&[#(#paths),*]))
        }
    };
    let names = match kind.names {
        NameRuleAttr::DnsSubdomain => quote!(__kapi::api::NameRule::DnsSubdomain),
        NameRuleAttr::DnsLabel => quote!(__kapi::api::NameRule::DnsLabel),
        NameRuleAttr::PathSegment => quote!(__kapi::api::NameRule::PathSegment),
    };
    quote! {
        __kapi::api::KindInfo {
            group: #group,
            kind: #kind_name,
            plural: #plural,
            singular: #singular,
            scope: #scope,
            names: #names,
            short_names: &[#(#short_names),*],
            categories: &[#(#categories),*],
            subresources: __kapi::api::Subresources {
                status: #status,
                scale: #scale,
                others: &[#(#others),*],
            },
            printer_columns: &[#(#printer_columns),*],
            selectable_fields: &[#(#selectable_fields),*],
            versions: &[#(#versions),*],
            rust_type: #rust_type,
            stored_with: #stored_with,
            create_only: #create_only,
            delete_status: #delete_status,
            storage_key: #storage_key,
            strategy_validates: #strategy_validates,
            read_only: #read_only,
            defaulted: #defaulted,
            generation: #generation,
        }
    }
}

fn subresource_info(sub: &Subresource) -> TokenStream {
    let name = sub.name.value();
    let shape = if let Some(create) = &sub.create {
        let (group, version, kind) = (&create.group, &create.version, &create.kind);
        let body = &create.body;
        // Spanned on the path, so that a type without a schema or a message is reported there.
        let schema = quote_spanned! {body.span()=>
            __kapi::__private::schemars::SchemaGenerator::subschema_for::<#body>
        };
        let protobuf = match create.protobuf.is_present() {
            true => quote_spanned! {body.span()=>
                ::core::option::Option::Some(<#body as __kapi::api::protobuf::Protobuf>::MESSAGE)
            },
            false => quote!(::core::option::Option::None),
        };
        quote! {
            __kapi::api::SubresourceShape::Create(&__kapi::api::BodyKind {
                group: #group,
                version: #version,
                kind: #kind,
                schema: #schema,
                protobuf: #protobuf,
            })
        }
    } else if sub.read.is_present() {
        quote!(__kapi::api::SubresourceShape::Read)
    } else if let Some(connect) = &sub.connect {
        let options = &connect.options;
        let methods = connect.methods.iter().map(|m| method_tokens(&m.value()));
        let path = connect.path.is_present();
        quote! {
            __kapi::api::SubresourceShape::Connect {
                methods: &[#(__kapi::api::Method::#methods),*],
                path: #path,
                options: #options,
            }
        }
    } else {
        let fields = sub.fields.iter().map(|f| f.lit.value());
        quote!(__kapi::api::SubresourceShape::Fields(&[#(#fields),*]))
    };
    quote!(__kapi::api::SubresourceInfo { name: #name, shape: #shape })
}

/// The variant of `Method` for a checked method name.
fn method_tokens(method: &str) -> TokenStream {
    match method {
        "GET" => quote!(Get),
        "POST" => quote!(Post),
        "PUT" => quote!(Put),
        "PATCH" => quote!(Patch),
        "DELETE" => quote!(Delete),
        "HEAD" => quote!(Head),
        _ => quote!(Options),
    }
}

/// The routes' method of a checked method name.
fn route_method(method: &str) -> Method {
    Method::from_http(method).unwrap_or(Method::Options)
}

fn printer_column(column: &PrinterColumn) -> TokenStream {
    let name = column.name.value();
    let column_type = column.column_type.value();
    let format = column
        .format
        .as_ref()
        .map(|l| l.value())
        .unwrap_or_default();
    let json_path = column.json_path.lit.value();
    let priority = column.priority;
    let description = column
        .description
        .as_ref()
        .map(|l| l.value())
        .unwrap_or_default();
    // A function of the wrong type is reported on its path.
    let cell = match &column.cell {
        Some(path) => quote_spanned! {path.span()=>
            ::core::option::Option::Some(#path as __kapi::api::ColumnCell)
        },
        None => quote!(::core::option::Option::None),
    };
    quote! {
        __kapi::api::PrinterColumn {
            name: #name,
            column_type: #column_type,
            format: #format,
            json_path: #json_path,
            priority: #priority,
            description: #description,
            cell: #cell,
        }
    }
}

fn version_info(kind: &Kind, group: &str, version: &Version) -> TokenStream {
    let name = version.name.value();
    let served = version.served;
    let storage = version.storage.is_present();
    let deprecated = version.deprecated;
    let warning = option_str(version.deprecation_warning.as_ref().map(|l| l.value()));
    let lossy = version.lossy;
    let off_by_default = version.off_by_default.is_present();
    let ty = version_type(kind, version);
    let rust_type = match (&version.ty, &kind.stored_with) {
        (VersionType::Hub, Some(path)) => {
            quote!(<#path as __kapi::Resource>::INFO.rust_type)
        }
        (VersionType::Hub, None) => hub_rust_type(kind),
        (VersionType::Path(path), _) => path_rust_type(path),
    };
    let names: Vec<String> = kind.subresources.iter().map(|s| s.name.value()).collect();
    let methods: Vec<Vec<Method>> = (kind.subresources.iter())
        .map(|s| {
            let methods = s.connect.iter().flat_map(|c| &c.methods);
            methods.map(|m| route_method(&m.value())).collect()
        })
        .collect();
    let others: Vec<routes::Other> = (kind.subresources.iter())
        .zip(&names)
        .zip(&methods)
        .map(|((sub, name), methods)| routes::Other {
            name,
            shape: if sub.create.is_some() {
                routes::Shape::Create
            } else if sub.read.is_present() {
                routes::Shape::Read
            } else if let Some(connect) = &sub.connect {
                routes::Shape::Connect {
                    methods,
                    path: connect.path.is_present(),
                }
            } else {
                routes::Shape::View
            },
        })
        .collect();
    let routes = routes::routes(&routes::Input {
        group,
        version: &name,
        kind: &kind.kind.value,
        plural: &kind.plural.value,
        namespaced: kind.namespaced,
        status: kind.status.is_present(),
        scale: kind.scale.is_some(),
        finalize: kind.finalize.is_present(),
        create_only: kind.create_only.is_present(),
        read_only: kind.read_only.is_present(),
        others: &others,
    });
    let routes = routes.iter().map(route);
    let protobuf = version_protobuf(kind, version);
    // A version type without `Default` is reported on its version, naming the type.
    let zero = if kind.zero_object.is_present() {
        quote_spanned! {kind.zero_object.span()=>
            ::core::option::Option::Some(__kapi::__private::zero_object::<#ty>)
        }
    } else {
        quote!(::core::option::Option::None)
    };
    quote! {
        __kapi::api::VersionInfo {
            name: #name,
            served: #served,
            storage: #storage,
            deprecated: #deprecated,
            deprecation_warning: #warning,
            off_by_default: #off_by_default,
            lossy: #lossy,
            rust_type: #rust_type,
            schema: __kapi::api::VersionSchema::Type(
                __kapi::__private::schemars::SchemaGenerator::subschema_for::<#ty>,
            ),
            printer_columns: ::core::option::Option::None,
            routes: &[#(#routes),*],
            protobuf: #protobuf,
            zero: #zero,
        }
    }
}

/// A version's protobuf message: with `protobuf`, its own type's (the hub's for the
/// version that is the hub); with `protobuf = PATH`, that message for every version.
fn version_protobuf(kind: &Kind, version: &Version) -> TokenStream {
    match (&kind.protobuf, &version.ty) {
        (None, _) => quote!(::core::option::Option::None),
        (Some(crate::attr::ProtobufAttr::Derived), VersionType::Hub) => {
            let hub = kind.hub_type();
            quote!(::core::option::Option::Some(
                <#hub as __kapi::api::protobuf::Protobuf>::MESSAGE
            ))
        }
        (Some(crate::attr::ProtobufAttr::Derived), VersionType::Path(path)) => {
            quote_spanned! {path.span()=>
                ::core::option::Option::Some(<#path as __kapi::api::protobuf::Protobuf>::MESSAGE)
            }
        }
        // Typed and spanned on the path, so that rustc's "expected `&ProtoMessage`" points at it.
        (Some(crate::attr::ProtobufAttr::Path(path)), _) => quote_spanned! {path.span()=>
            ::core::option::Option::Some({
                let protobuf: &'static __kapi::api::ProtoMessage = &#path;
                protobuf
            })
        },
    }
}

fn route(route: &routes::Route) -> TokenStream {
    let method = match route.method {
        Method::Get => quote!(Get),
        Method::Post => quote!(Post),
        Method::Put => quote!(Put),
        Method::Patch => quote!(Patch),
        Method::Delete => quote!(Delete),
        Method::Head => quote!(Head),
        Method::Options => quote!(Options),
    };
    let action = match route.action {
        Action::Get => quote!(Get),
        Action::List => quote!(List),
        Action::Create => quote!(Create),
        Action::Update => quote!(Update),
        Action::Patch => quote!(Patch),
        Action::Delete => quote!(Delete),
        Action::DeleteCollection => quote!(DeleteCollection),
        Action::Watch => quote!(Watch),
        Action::WatchList => quote!(WatchList),
        Action::Connect => quote!(Connect),
    };
    let path = &route.path;
    let subresource = option_str(route.subresource.clone());
    let operation_id = &route.operation_id;
    quote! {
        __kapi::api::Route {
            method: __kapi::api::Method::#method,
            path: #path,
            action: __kapi::api::Action::#action,
            subresource: #subresource,
            operation_id: #operation_id,
        }
    }
}

/// `api_types::apps::WebApp`, from where the derive expands.
fn hub_rust_type(kind: &Kind) -> TokenStream {
    let name = kind.hub.ident.to_string();
    quote!(::core::concat!(::core::module_path!(), "::", #name))
}

/// The absolute Rust path of a version type written relative to the hub's module:
/// `v1::WebApp` and `self::v1::WebApp` are under `module_path!()`, `crate::x::Y` under the
/// crate's name, `::other::Y` is already absolute. (`super::` is rejected by the checks.)
fn path_rust_type(path: &syn::Path) -> TokenStream {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|s| {
            // Generic arguments are rare here; keep them as written, minus token spacing.
            let args = s.arguments.to_token_stream().to_string().replace(' ', "");
            format!("{}{args}", s.ident)
        })
        .collect();
    let first = segments.first().map(String::as_str);
    if path.leading_colon.is_some() {
        let absolute = segments.join("::");
        return quote!(#absolute);
    }
    match first {
        Some("crate") => {
            let rest = segments[1..].join("::");
            quote!(::core::concat!(::core::env!("CARGO_CRATE_NAME"), "::", #rest))
        }
        Some("self") => {
            let rest = segments[1..].join("::");
            quote!(::core::concat!(::core::module_path!(), "::", #rest))
        }
        _ => {
            let relative = segments.join("::");
            quote!(::core::concat!(::core::module_path!(), "::", #relative))
        }
    }
}

fn option_str(value: Option<String>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}
