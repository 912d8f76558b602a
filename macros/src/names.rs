//! Naming rules of Kubernetes API names: what a kind, a resource name, a group and a version
//! may look like, and how the default plural is formed.
//!
//! The rules follow apimachinery's validation (`IsDNS1123Label`, `IsDNS1123Subdomain`,
//! `IsDNS1035Label`), so a kind the derive accepts is one kube-apiserver would accept too.

/// The longest DNS label: 63 characters.
const MAX_LABEL: usize = 63;
/// The longest DNS subdomain: 253 characters.
const MAX_SUBDOMAIN: usize = 253;

/// `WebApp`: an ASCII letter in upper case, then ASCII letters and digits.
///
/// Kinds are Go-style type names; `kubectl` and the OpenAPI operation ids
/// (`listNamespacedWebApp`) splice them in verbatim.
pub(crate) fn is_upper_camel_case(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// A DNS-1123 label (`webapps`, `wa`, `all`): lower-case letters, digits and `-`, starting and
/// ending with a letter or digit, at most 63 characters. Resource names, short names and
/// categories are path segments and `kubectl` arguments, hence the restriction.
pub(crate) fn is_dns_label(s: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= MAX_LABEL
        && s.starts_with(ok_char)
        && s.ends_with(ok_char)
        && s.chars().all(|c| ok_char(c) || c == '-')
}

/// A DNS-1035 label (`v1`, `v1beta1`): a DNS-1123 label that starts with a letter.
/// Version names must be one, as in CRDs.
pub(crate) fn is_dns1035_label(s: &str) -> bool {
    is_dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// A DNS-1123 subdomain (`apps.example.dev`): dot-separated labels, at most 253 characters.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_SUBDOMAIN && s.split('.').all(is_dns_label)
}

/// The default plural of a lower-case kind name, by the simple English rules CRD tooling
/// uses: `policy` -> `policies`, `ingress` -> `ingresses`, `box` -> `boxes`,
/// `gateway` -> `gateways`, `webapp` -> `webapps`.
pub(crate) fn pluralize(singular: &str) -> String {
    let vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u');
    if let Some(stem) = singular.strip_suffix('y')
        && stem.chars().next_back().is_some_and(|c| !vowel(c))
    {
        return format!("{stem}ies");
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| singular.ends_with(end))
    {
        return format!("{singular}es");
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        let cases = [
            ("webapp", "webapps"),
            ("tenant", "tenants"),
            ("policy", "policies"),
            ("gateway", "gateways"),
            ("ingress", "ingresses"),
            ("box", "boxes"),
            ("quiz", "quizes"),
            ("batch", "batches"),
            ("mesh", "meshes"),
            ("y", "ys"),
        ];
        for (singular, plural) in cases {
            assert_eq!(pluralize(singular), plural, "plural of {singular}");
        }
    }

    #[test]
    fn labels() {
        for ok in ["webapps", "wa", "a", "x-1", "9lives"] {
            assert!(is_dns_label(ok), "{ok}");
        }
        for bad in [
            "",
            "WebApps",
            "web_apps",
            "-a",
            "a-",
            "a.b",
            &"a".repeat(64),
        ] {
            assert!(!is_dns_label(bad), "{bad}");
        }
        assert!(is_dns1035_label("v1beta1"));
        assert!(!is_dns1035_label("1v"));
    }

    #[test]
    fn subdomains() {
        assert!(is_dns_subdomain("apps.example.dev"));
        assert!(is_dns_subdomain("batch"));
        assert!(!is_dns_subdomain(""));
        assert!(!is_dns_subdomain("apps..dev"));
        assert!(!is_dns_subdomain("Apps.example.dev"));
    }

    #[test]
    fn kinds() {
        assert!(is_upper_camel_case("WebApp"));
        assert!(is_upper_camel_case("V1"));
        assert!(!is_upper_camel_case("webApp"));
        assert!(!is_upper_camel_case("Web_App"));
        assert!(!is_upper_camel_case(""));
        assert!(!is_upper_camel_case("Wébapp"));
    }
}
