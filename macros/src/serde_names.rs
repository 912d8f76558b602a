//! What serde makes of a struct's fields: their JSON names (`rename`, `rename_all =
//! "camelCase"`) and flags (`flatten`, `skip`), read from `#[serde(...)]` as written.

use syn::LitStr;

/// serde's `lowerCamelCase` of a snake_case field name, as `rename_all = "camelCase"`.
pub(crate) fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The string values of `key = "..."` in `#[serde(...)]` attributes.
pub(crate) fn serde_values(attrs: &[syn::Attribute], key: &str) -> Vec<LitStr> {
    let mut values = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                if let Ok(value) = meta.value().and_then(|v| v.parse::<LitStr>()) {
                    values.push(value);
                }
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    values
}

/// Whether `#[serde(key)]` is on the field.
pub(crate) fn serde_flag(attrs: &[syn::Attribute], key: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                found = true;
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn camel_case_is_serdes() {
        assert_eq!(super::camel("last_transition_time"), "lastTransitionTime");
        assert_eq!(super::camel("type"), "type");
    }
}
