use super::*;

/// Which accessor a case reads.
#[derive(Clone, Copy, Debug)]
enum Get {
    Scheme,
    Host,
    Hostname,
    Port,
    EscapedPath,
    /// Go's `String()`.
    Display,
    Opaque,
    Path,
    Fragment,
}

fn get(url: &Url, what: Get) -> String {
    match what {
        Get::Scheme => url.scheme().to_owned(),
        Get::Host => url.host().into_owned(),
        Get::Hostname => url.hostname().into_owned(),
        Get::Port => url.port().to_owned(),
        Get::EscapedPath => url.escaped_path(),
        Get::Display => url.to_string(),
        Get::Opaque => url.opaque().to_owned(),
        Get::Path => url.path().into_owned(),
        Get::Fragment => url.fragment().into_owned(),
    }
}

/// The object's `url` in the test below.
const SELF_URL: &str = "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor";

/// k8s.io/apiextensions-apiserver v0.32.1 `pkg/apiserver/schema/cel/validation_test.go`
/// `TestValidationExpressions` "URL parsing" (each rule is `url(<input>).<get>() == <want>`),
/// then `pkg/cel/library/cost_test.go` `TestURLsCost`'s URL, then cases of Go's rules.
const ACCESSORS: &[(&str, &str, Get, &str)] = &[
    ("url('/path').getScheme() == ''", "/path", Get::Scheme, ""),
    (
        "url('https://example.com/').getScheme() == 'https'",
        "https://example.com/",
        Get::Scheme,
        "https",
    ),
    (
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        "https://example.com:80/",
        Get::Host,
        "example.com:80",
    ),
    (
        "url('https://example.com/').getHost() == 'example.com'",
        "https://example.com/",
        Get::Host,
        "example.com",
    ),
    (
        "url('https://[::1]:80/').getHost() == '[::1]:80'",
        "https://[::1]:80/",
        Get::Host,
        "[::1]:80",
    ),
    (
        "url('https://[::1]/').getHost() == '[::1]'",
        "https://[::1]/",
        Get::Host,
        "[::1]",
    ),
    ("url('/path').getHost() == ''", "/path", Get::Host, ""),
    (
        "url('https://example.com:80/').getHostname() == 'example.com'",
        "https://example.com:80/",
        Get::Hostname,
        "example.com",
    ),
    (
        "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
        "https://127.0.0.1/",
        Get::Hostname,
        "127.0.0.1",
    ),
    (
        "url('https://[::1]/').getHostname() == '::1'",
        "https://[::1]/",
        Get::Hostname,
        "::1",
    ),
    (
        "url('/path').getHostname() == ''",
        "/path",
        Get::Hostname,
        "",
    ),
    (
        "url('https://example.com:80/').getPort() == '80'",
        "https://example.com:80/",
        Get::Port,
        "80",
    ),
    (
        "url('https://example.com/').getPort() == ''",
        "https://example.com/",
        Get::Port,
        "",
    ),
    ("url('/path').getPort() == ''", "/path", Get::Port, ""),
    (
        "url('https://example.com/path').getEscapedPath() == '/path'",
        "https://example.com/path",
        Get::EscapedPath,
        "/path",
    ),
    (
        "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
        "https://example.com/with space/",
        Get::EscapedPath,
        "/with%20space/",
    ),
    (
        "url('https://example.com').getEscapedPath() == ''",
        "https://example.com",
        Get::EscapedPath,
        "",
    ),
    (
        "url(self.url).getScheme() == 'https'",
        SELF_URL,
        Get::Scheme,
        "https",
    ),
    (
        "url(self.url).getHost() == 'kubernetes.io:80'",
        SELF_URL,
        Get::Host,
        "kubernetes.io:80",
    ),
    (
        "url(self.url).getHostname() == 'kubernetes.io'",
        SELF_URL,
        Get::Hostname,
        "kubernetes.io",
    ),
    ("url(self.url).getPort() == '80'", SELF_URL, Get::Port, "80"),
    (
        "url(self.url).getEscapedPath() == '/docs/home'",
        SELF_URL,
        Get::EscapedPath,
        "/docs/home",
    ),
    // TestURLsCost (and the "cost for extended lib" rule `... getHostname() != 'test'`):
    // `https::` is a scheme with an opaque rest.
    (
        "url('https:://kubernetes.io/')",
        "https:://kubernetes.io/",
        Get::Scheme,
        "https",
    ),
    (
        "url('https:://kubernetes.io/')",
        "https:://kubernetes.io/",
        Get::Opaque,
        "://kubernetes.io/",
    ),
    (
        "url('https:://kubernetes.io/')",
        "https:://kubernetes.io/",
        Get::Hostname,
        "",
    ),
    (
        "url('https:://kubernetes.io/')",
        "https:://kubernetes.io/",
        Get::EscapedPath,
        "",
    ),
    (
        "url('https:://kubernetes.io/')",
        "https:://kubernetes.io/",
        Get::Display,
        "https:://kubernetes.io/",
    ),
    (
        "url('http://x.b')",
        "http://x.b",
        Get::Display,
        "http://x.b",
    ),
    // Go's rules (not in kube's tests).
    (
        "(extra) scheme lower-cased",
        "HTTP://Example.COM/",
        Get::Scheme,
        "http",
    ),
    (
        "(extra) host case kept",
        "HTTP://Example.COM/",
        Get::Host,
        "Example.COM",
    ),
    (
        "(extra) String",
        "HTTP://Example.COM/",
        Get::Display,
        "http://Example.COM/",
    ),
    (
        "(extra) String with userinfo",
        SELF_URL,
        Get::Display,
        SELF_URL,
    ),
    ("(extra) fragment", SELF_URL, Get::Fragment, "anchor"),
    (
        "(extra) opaque",
        "mailto:user@example.com",
        Get::Opaque,
        "user@example.com",
    ),
    (
        "(extra) opaque String",
        "mailto:user@example.com",
        Get::Display,
        "mailto:user@example.com",
    ),
    (
        "(extra) url() takes Parse's authority",
        "//host/path",
        Get::Host,
        "host",
    ),
    (
        "(extra) url() takes Parse's path",
        "//host/path",
        Get::EscapedPath,
        "/path",
    ),
    (
        "(extra) fragment cut",
        "/path#frag",
        Get::EscapedPath,
        "/path",
    ),
    ("(extra) fragment cut", "/path#frag", Get::Fragment, "frag"),
    ("(extra) path *", "*", Get::EscapedPath, "*"),
    ("(extra) empty port", "http://host:/", Get::Port, ""),
    ("(extra) empty port", "http://host:/", Get::Hostname, "host"),
    ("(extra) empty port", "http://host:/", Get::Host, "host:"),
    (
        "(extra) ipv6 zone host",
        "http://[fe80::1%25en0]:8080/",
        Get::Host,
        "[fe80::1%en0]:8080",
    ),
    (
        "(extra) ipv6 zone hostname",
        "http://[fe80::1%25en0]:8080/",
        Get::Hostname,
        "fe80::1%en0",
    ),
    (
        "(extra) ipv6 zone port",
        "http://[fe80::1%25en0]:8080/",
        Get::Port,
        "8080",
    ),
    (
        "(extra) ipv6 zone String",
        "http://[fe80::1%25en0]:8080/",
        Get::Display,
        "http://[fe80::1%25en0]:8080/",
    ),
    (
        "(extra) zone escapes",
        "http://[fe80::1%25%65n%200]/",
        Get::Hostname,
        "fe80::1%en 0",
    ),
    (
        "(extra) non-ASCII host",
        "http://é.com/",
        Get::Host,
        "é.com",
    ),
    (
        "(extra) non-ASCII host String",
        "http://é.com/",
        Get::Display,
        "http://%C3%A9.com/",
    ),
    (
        "(extra) escaped non-ASCII host",
        "http://%c3%a9.com/",
        Get::Host,
        "é.com",
    ),
    (
        "(extra) host with sub-delims",
        "http://a!$&'()*+,;=b/",
        Get::Host,
        "a!$&'()*+,;=b",
    ),
    (
        "(extra) escaped slash kept",
        "/a%2fb",
        Get::EscapedPath,
        "/a%2fb",
    ),
    ("(extra) escaped slash decoded", "/a%2fb", Get::Path, "/a/b"),
    (
        "(extra) needless escape kept",
        "/a%41",
        Get::EscapedPath,
        "/a%41",
    ),
    ("(extra) needless escape decoded", "/a%41", Get::Path, "/aA"),
    (
        "(extra) lower-case escape kept",
        "/a%3fb",
        Get::EscapedPath,
        "/a%3fb",
    ),
    (
        "(extra) canonical escape",
        "/a%3Fb",
        Get::EscapedPath,
        "/a%3Fb",
    ),
    (
        "(extra) raw path not valid: re-escaped",
        "/ %41",
        Get::EscapedPath,
        "/%20A",
    ),
    (
        "(extra) invalid UTF-8 kept raw",
        "/%ff",
        Get::EscapedPath,
        "/%ff",
    ),
    (
        "(extra) invalid UTF-8 re-escaped",
        "/ %ff",
        Get::EscapedPath,
        "/%20%FF",
    ),
    (
        "(extra) invalid UTF-8 lossy",
        "/%ff",
        Get::Path,
        "/\u{fffd}",
    ),
    (
        "(extra) path chars",
        "/a:b@c&d=e+f$g,h;i!j'k(l)m*n[o]p~q",
        Get::EscapedPath,
        "/a:b@c&d=e+f$g,h;i!j'k(l)m*n[o]p~q",
    ),
    (
        "(extra) quote in path",
        "/a\"b<c>d`e{f}g|h^i\\j",
        Get::EscapedPath,
        "/a%22b%3Cc%3Ed%60e%7Bf%7Dg%7Ch%5Ei%5Cj",
    ),
    ("(extra) non-ASCII path", "/é", Get::EscapedPath, "/%C3%A9"),
    (
        "(extra) empty authority",
        "http:///path",
        Get::Display,
        "http:///path",
    ),
    ("(extra) empty authority", "http:///path", Get::Host, ""),
    (
        "(extra) omitted authority",
        "file:/etc/hosts",
        Get::Display,
        "file:/etc/hosts",
    ),
    (
        "(extra) force query",
        "http://x/?",
        Get::Display,
        "http://x/?",
    ),
    (
        "(extra) no path",
        "http://h:8080",
        Get::Display,
        "http://h:8080",
    ),
    (
        "(extra) fragment escaped",
        "/p#a b",
        Get::Display,
        "/p#a%20b",
    ),
    (
        "(extra) fragment raw kept",
        "/p#%41",
        Get::Display,
        "/p#%41",
    ),
    (
        "(extra) fragment sub-delims",
        "/p#!()*",
        Get::Display,
        "/p#!()*",
    ),
    (
        "(extra) userinfo escaped",
        "http://us%20er:p%40ss@host/",
        Get::Display,
        "http://us%20er:p%40ss@host/",
    ),
    ("(extra) query with #", "/p?q=1#f", Get::Display, "/p?q=1#f"),
];

#[test]
fn accessor_cases() {
    for (name, input, what, want) in ACCESSORS {
        let url = Url::parse(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(get(&url, *what), *want, "{name} ({what:?})");
        assert!(is_url(input), "{name}");
    }
}

/// `getQuery()`: (rule or case, input, want as (key, values)). The first six are
/// `TestValidationExpressions` "URL parsing".
#[allow(clippy::type_complexity)]
const QUERIES: &[(&str, &str, &[(&str, &[&str])])] = &[
    (
        "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
        "https://example.com/path?k1=a&k2=b&k2=c",
        &[("k1", &["a"]), ("k2", &["b", "c"])],
    ),
    (
        "url('https://example.com/path?key with spaces=value with spaces').getQuery() == { 'key with spaces': ['value with spaces']}",
        "https://example.com/path?key with spaces=value with spaces",
        &[("key with spaces", &["value with spaces"])],
    ),
    (
        "url('https://example.com/path?').getQuery() == {}",
        "https://example.com/path?",
        &[],
    ),
    (
        "url('https://example.com/path').getQuery() == {}",
        "https://example.com/path",
        &[],
    ),
    (
        "url(self.url).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
        SELF_URL,
        &[("k1", &["a"]), ("k2", &["b", "c"])],
    ),
    (
        "(extra) semicolon pairs dropped",
        "/p?a=1;b=2&c=3",
        &[("c", &["3"])],
    ),
    (
        "(extra) bad escapes dropped",
        "/p?a=%zz&b=1&%zz=2",
        &[("b", &["1"])],
    ),
    (
        "(extra) no value, empty key",
        "/p?a&b=&=c&&",
        &[("", &["c"]), ("a", &[""]), ("b", &[""])],
    ),
    (
        "(extra) plus and escapes",
        "/p?a+b=c+d%20e%2B",
        &[("a b", &["c d e+"])],
    ),
    ("(extra) second = in value", "/p?a=b=c", &[("a", &["b=c"])]),
    (
        "(extra) fragment not in query for url()",
        "/p?a=1#b=2",
        &[("a", &["1"])],
    ),
    (
        "(extra) ? in query",
        "/p?a=?&b",
        &[("a", &["?"]), ("b", &[""])],
    ),
];

#[test]
fn query_cases() {
    for (name, input, want) in QUERIES {
        let got = Url::parse(input)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .query();
        let want: BTreeMap<String, Vec<String>> = want
            .iter()
            .map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_string()).collect()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

/// `isURL()`: (rule or case, input, result). The first four are
/// `TestValidationExpressions` "URL parsing".
const IS_URL: &[(&str, &str, bool)] = &[
    (
        "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
        "https://user:pass@example.com:80/path?query=val#fragment",
        true,
    ),
    ("isURL('/path') == true", "/path", true),
    ("isURL('https://a:b:c/') == false", "https://a:b:c/", false),
    (
        "isURL('../relative-path') == false",
        "../relative-path",
        false,
    ),
    // pkg/cel/environment/environment_test.go
    ("isURL('http://example.com')", "http://example.com", true),
    (
        "(extra) fragment without query is in the host",
        "http://example.com#frag",
        false,
    ),
    ("(extra) fragment in path", "/path#frag", true),
    ("(extra) opaque", "mailto:a@b", true),
    ("(extra) star", "*", true),
    ("(extra) relative", "example.com", false),
    ("(extra) network-path", "//host/path", true),
    ("(extra) empty", "", false),
];

#[test]
fn is_url_cases() {
    for (name, input, want) in IS_URL {
        assert_eq!(is_url(input), *want, "{name}");
    }
}

/// kube's `url()` refusals: (case, input, CEL error text). None is in kube's tests.
const URL_ERRORS: &[(&str, &str, &str)] = &[
    (
        "relative",
        "example.com",
        r#"parse "example.com": invalid URI for request"#,
    ),
    (
        "relative path",
        "../relative-path",
        r#"parse "../relative-path": invalid URI for request"#,
    ),
    ("empty", "", r#"parse "": empty url"#),
    (
        "leading colon",
        ":foo",
        r#"parse ":foo": missing protocol scheme"#,
    ),
    (
        "control",
        "http://x/a\u{1}",
        r#"parse "http://x/a\x01": net/url: invalid control character in URL"#,
    ),
    (
        "control in fragment",
        "/a#\t",
        r#"parse "/a#\t": net/url: invalid control character in URL"#,
    ),
    (
        "DEL",
        "/a\u{7f}",
        r#"parse "/a\x7f": net/url: invalid control character in URL"#,
    ),
    (
        "bracket",
        "http://[::1",
        r#"parse "http://[::1": missing ']' in host"#,
    ),
    (
        "port",
        "https://a:b:c/",
        r#"parse "https://a:b:c/": invalid port ":c" after host"#,
    ),
    (
        "port letters",
        "http://host:80x/",
        r#"parse "http://host:80x/": invalid port ":80x" after host"#,
    ),
    (
        "after bracket",
        "http://[::1]x/",
        r#"parse "http://[::1]x/": invalid port "x" after host"#,
    ),
    (
        "fragment after bracket",
        "http://[::1]#x",
        r##"parse "http://[::1]#x": invalid port "#x" after host"##,
    ),
    (
        "fragment in host",
        "http://example.com#frag",
        r##"parse "http://example.com#frag": invalid character "#" in host name"##,
    ),
    (
        "space in host",
        "http://a b.com/",
        r#"parse "http://a b.com/": invalid character " " in host name"#,
    ),
    (
        "ASCII escape in host",
        "http://%41.com/",
        r#"parse "http://%41.com/": invalid URL escape "%41""#,
    ),
    (
        "bad zone escape",
        "http://[fe80::1%25%2f]/",
        r#"parse "http://[fe80::1%25%2f]/": invalid URL escape "%2f""#,
    ),
    (
        "userinfo",
        "http://us er@host/",
        r#"parse "http://us er@host/": net/url: invalid userinfo"#,
    ),
    (
        "userinfo escape",
        "http://u%zz@host/",
        r#"parse "http://u%zz@host/": invalid URL escape "%zz""#,
    ),
    (
        "host before userinfo",
        "http://us er@a b/",
        r#"parse "http://us er@a b/": invalid character " " in host name"#,
    ),
    (
        "path escape",
        "/x%zz",
        r#"parse "/x%zz": invalid URL escape "%zz""#,
    ),
    (
        "path escape at end",
        "/x%",
        r#"parse "/x%": invalid URL escape "%""#,
    ),
    (
        "path escape short",
        "/x%4",
        r#"parse "/x%4": invalid URL escape "%4""#,
    ),
    (
        "escape cut inside UTF-8",
        "/x%zé",
        r#"parse "/x%zé": invalid URL escape "%z\xc3""#,
    ),
    (
        "scheme starting with a digit",
        "1http://x",
        r#"parse "1http://x": invalid URI for request"#,
    ),
    // ParseRequestURI accepts (the `#` is in the query); Parse refuses the fragment, naming
    // the whole string.
    (
        "fragment escape",
        "http://h/?x#%zz",
        r#"parse "http://h/?x#%zz": invalid URL escape "%zz""#,
    ),
];

#[test]
fn url_error_cases() {
    for (name, input, want) in URL_ERRORS {
        let err = Url::parse(input).unwrap_err();
        assert_eq!(err.to_string(), *want, "{name}");
        assert_eq!(
            err.cel_message(),
            format!("URL parse error during conversion from string: {want}"),
            "{name}"
        );
    }
}

/// Where Go's `Parse` and `ParseRequestURI` differ (not in kube's tests).
#[test]
fn parse_versus_parse_request_uri() {
    // Relative references: only Parse.
    let rel = Url::go_parse("a/b").unwrap();
    assert_eq!(rel.path(), "a/b");
    assert_eq!(
        Url::go_parse("a:b/c").map(|u| u.to_string()),
        Ok("a:b/c".to_owned()),
        "a:b is a scheme"
    );
    assert_eq!(
        Url::go_parse("1a:b/c").unwrap_err().to_string(),
        r#"parse "1a:b/c": first path segment in URL cannot contain colon"#
    );
    assert_eq!(Url::go_parse("./a:b").unwrap().to_string(), "./a:b");
    assert_eq!(Url::go_parse("").unwrap().to_string(), "");
    // Network-path reference: authority for Parse, path for ParseRequestURI.
    let req = Url::go_parse_request_uri("//host/path").unwrap();
    assert_eq!((req.host(), req.path()), ("".into(), "//host/path".into()));
    let p = Url::go_parse("///path").unwrap();
    assert_eq!((p.host(), p.path()), ("".into(), "///path".into()));
    // Fragment: Parse cuts it, ParseRequestURI keeps it in the path.
    assert_eq!(Url::go_parse_request_uri("/a#b").unwrap().path(), "/a#b");
    // The error of a Parse failure names the string before the fragment.
    assert_eq!(
        Url::go_parse("/%zz#frag").unwrap_err().to_string(),
        r#"parse "/%zz": invalid URL escape "%zz""#
    );
    // Control characters in a fragment pass Parse.
    assert_eq!(Url::go_parse("/a#\t").unwrap().fragment(), "\t");
}

#[test]
fn userinfo_and_equality() {
    let url = Url::parse("http://user:p%40ss@host/").unwrap();
    let user = url.user().unwrap();
    assert_eq!(user.username(), "user");
    assert_eq!(user.password().as_deref(), Some("p@ss"));
    assert_eq!(url.to_string(), "http://user:p%40ss@host/");
    let url = Url::parse("http://user@host/").unwrap();
    assert_eq!(url.user().unwrap().password(), None);
    let url = Url::parse("http://a@b@host/").unwrap();
    assert_eq!(url.user().unwrap().username(), "a@b");
    assert_eq!(url.to_string(), "http://a%40b@host/");
    assert_eq!(url.host(), "host");
    // kube compares URLs by their String().
    assert_eq!(
        Url::parse("HTTP://x/").unwrap(),
        Url::parse("http://x/").unwrap()
    );
    assert_ne!(
        Url::parse("http://x/").unwrap(),
        Url::parse("http://x").unwrap()
    );
}

#[test]
fn bytes_accessors() {
    let url = Url::parse("http://%ff.com/%fe?%fd=%fc#%fb").unwrap();
    assert_eq!(url.host_bytes(), b"\xff.com");
    assert_eq!(url.path_bytes(), b"/\xfe");
    assert_eq!(url.fragment_bytes(), b"\xfb");
    assert_eq!(url.to_string(), "http://%FF.com/%fe?%fd=%fc#%fb");
    let query = parse_query(url.raw_query());
    assert_eq!(query.get(&b"\xfd"[..]), Some(&vec![b"\xfc".to_vec()]));
    assert_eq!(url.hostname(), "\u{fffd}.com");
}
