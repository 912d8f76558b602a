//! The typed model of one `#[derive(Convert)]`: each field with where its value lives in
//! the hub, and the shape of its type. Spans are kept for the checks and the expansion.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{GenericArgument, Generics, Ident, LitStr, PathArguments, Type};

use super::attr::{ConvertAttrs, FieldAttrs};

/// A struct that converts to and from a hub struct.
pub(super) struct Struct {
    /// `WebAppSpec`.
    pub ident: Ident,
    /// Carried over to the impl.
    pub generics: Generics,
    /// `super::WebAppSpec`.
    pub hub: syn::Path,
    /// The path the impl reaches kapi by (`::kapi`, or `crate = "..."`).
    pub krate: syn::Path,
    /// Named fields, in declaration order.
    pub fields: Vec<Field>,
}

/// One field of the version struct.
pub(super) struct Field {
    /// `image`.
    pub ident: Ident,
    /// The field's type, for spans.
    pub ty: Type,
    /// Where it goes in the hub.
    pub mapping: Mapping,
    /// How its type converts.
    pub shape: Shape,
    /// Every key written, with its span, for the "one key per field" rule.
    pub keys: Vec<(&'static str, Span)>,
}

/// Where a field's value lives in the hub struct.
pub(super) enum Mapping {
    /// A field: the same name, `rename` or `path`. The literal is `None` for the same name.
    Field {
        /// `rename` or `path` as written.
        lit: Option<LitStr>,
        /// The field names from the hub struct, or why the literal is not a field path.
        segments: Result<Vec<Ident>, String>,
    },
    /// `with = module`.
    With(syn::Path),
    /// `skip`.
    Skip,
}

/// How a field's type converts to its hub field's type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `Convert<HubField>` (the identity impl for same-typed fields).
    Plain,
    /// `Vec<T>` to `Vec<U>`, element by element.
    Vec,
    /// `Option<T>` to `Option<U>`, or to `U` (`None` is `U`'s default).
    Option,
}

impl Struct {
    /// The model of `attrs`.
    pub(super) fn new(attrs: ConvertAttrs) -> Struct {
        let fields = (attrs.data.take_struct())
            .map(|fields| fields.fields.into_iter().map(Field::new).collect())
            .unwrap_or_default();
        Struct {
            ident: attrs.ident,
            generics: attrs.generics,
            hub: attrs.hub,
            krate: attrs.krate.unwrap_or_else(crate::model::default_crate),
            fields,
        }
    }
}

impl Field {
    fn new(attrs: FieldAttrs) -> Field {
        let ident = attrs.ident.expect("darling: struct_named");
        let mut keys = Vec::new();
        if let Some(lit) = &attrs.rename {
            keys.push(("rename", lit.span()));
        }
        if let Some(lit) = &attrs.path {
            keys.push(("path", lit.span()));
        }
        if let Some(path) = &attrs.with {
            keys.push(("with", path.span()));
        }
        if attrs.skip.is_present() {
            keys.push(("skip", attrs.skip.span()));
        }
        let mapping = if attrs.skip.is_present() {
            Mapping::Skip
        } else if let Some(with) = attrs.with {
            Mapping::With(with)
        } else if let Some(lit) = attrs.path.or(attrs.rename) {
            let segments = field_path(&lit);
            Mapping::Field {
                lit: Some(lit),
                segments,
            }
        } else {
            Mapping::Field {
                lit: None,
                segments: Ok(vec![ident.clone()]),
            }
        };
        Field {
            shape: shape(&attrs.ty),
            ty: attrs.ty,
            ident,
            mapping,
            keys,
        }
    }
}

/// `container.image` as field identifiers spanned on the literal (`type` is `r#type`).
fn field_path(lit: &LitStr) -> Result<Vec<Ident>, String> {
    let value = lit.value();
    (value.split('.'))
        .map(|segment| {
            let mut ident = syn::parse_str::<Ident>(segment)
                .or_else(|_| syn::parse_str::<Ident>(&format!("r#{segment}")))
                .map_err(|_| {
                    format!(
                        "`{value}` is not a hub field path: write Rust field names separated by \
                         dots, such as `container.image`"
                    )
                })?;
            ident.set_span(lit.span());
            Ok(ident)
        })
        .collect()
}

/// `Vec<..>` and `Option<..>` by their last path segment, as written.
fn shape(ty: &Type) -> Shape {
    let Type::Path(path) = ty else {
        return Shape::Plain;
    };
    let Some(last) = path.path.segments.last() else {
        return Shape::Plain;
    };
    let one_arg = matches!(&last.arguments, PathArguments::AngleBracketed(args)
        if args.args.len() == 1 && matches!(args.args[0], GenericArgument::Type(_)));
    match last.ident.to_string().as_str() {
        "Vec" if one_arg => Shape::Vec,
        "Option" if one_arg => Shape::Option,
        _ => Shape::Plain,
    }
}
