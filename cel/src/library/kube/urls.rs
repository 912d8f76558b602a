//! kube's URL library: `url()` reads a string that is an absolute URI or an absolute path
//! (`isURL()` tests that) as a `kubernetes.URL`, whose parts `getScheme()`, `getHost()`,
//! `getHostname()`, `getPort()`, `getEscapedPath()` and `getQuery()` give; two URLs are
//! `==` when they print the same.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_core::net::url::{self, Url};

use super::{equal_as, opaque};
use crate::library::{Env, Error, Implementation, Overload as O, Result, string};
use crate::value::{Key, Map, Opaque, Value};

/// The CEL type name of URLs.
pub const TYPE: &str = "kubernetes.URL";

/// A `kubernetes.URL` value.
#[derive(Clone, Debug)]
pub struct UrlValue(pub Url);

impl Opaque for UrlValue {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    /// The same text, as Go prints URLs.
    fn equals(&self, other: &dyn Opaque) -> bool {
        equal_as(self, other, |a, b| a.0 == b.0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `args[i]`'s URL.
fn arg(args: &[Value], i: usize) -> Result<&Url> {
    opaque::<UrlValue>(args, i).map(|v| &v.0)
}

/// Adds the URL library to `env`.
pub fn install(env: &mut Env) {
    env.add(
        "url",
        [O::new("string_to_url", "(string) -> kubernetes.URL", |a| {
            Url::parse(string(a, 0)?)
                .map(|u| Value::Opaque(Arc::new(UrlValue(u))))
                .map_err(|e| Error::new(e.cel_message()))
        })],
    );
    env.add(
        "isURL",
        [O::new("is_url_string", "(string) -> bool", |a| {
            Ok(Value::Bool(url::is_url(string(a, 0)?)))
        })],
    );
    let parts: [(&str, &'static str, Implementation); 5] = [
        ("getScheme", "url_get_scheme", |a| {
            Ok(Value::string(arg(a, 0)?.scheme()))
        }),
        ("getHost", "url_get_host", |a| {
            Ok(Value::string(arg(a, 0)?.host()))
        }),
        ("getHostname", "url_get_hostname", |a| {
            Ok(Value::string(arg(a, 0)?.hostname()))
        }),
        ("getPort", "url_get_port", |a| {
            Ok(Value::string(arg(a, 0)?.port()))
        }),
        ("getEscapedPath", "url_get_escaped_path", |a| {
            Ok(Value::string(arg(a, 0)?.escaped_path()))
        }),
    ];
    for (name, id, implementation) in parts {
        env.add(
            name,
            [O::new(id, "kubernetes.URL.() -> string", implementation)],
        );
    }
    env.add(
        "getQuery",
        [O::new(
            "url_get_query",
            "kubernetes.URL.() -> map(string, list(string))",
            |a| Ok(query(arg(a, 0)?.query())),
        )],
    );
}

/// The query's parameters as a CEL map of lists of strings.
fn query(parameters: BTreeMap<String, Vec<String>>) -> Value {
    let entries = (parameters.into_iter())
        .map(|(k, v)| {
            let values = v.into_iter().map(Value::string).collect();
            (Key::String(k.into()), Value::list(values))
        })
        .collect();
    Value::Map(Arc::new(Map {
        entries,
        type_name: None,
    }))
}
