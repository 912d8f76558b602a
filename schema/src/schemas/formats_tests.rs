//! The format validators against kube's own cases, as data.

use super::{is_valid, supported};

/// (format, value, valid): kube-openapi 32ad38e42d3f `pkg/validation/strfmt/default_test.go`
/// (each test's valid value, its listed valid and invalid values).
const STRFMT_DEFAULT_TEST: &[(&str, &str, bool)] = &[
    ("uri", "http://somewhereelse.com", true),
    ("uri", "somewhere.com", false),
    ("email", "somebodyelse@somewhere.com", true),
    ("email", "blah@gmail.com", true),
    ("email", "test@d.verylongtoplevel", true),
    ("email", "email+tag@gmail.com", true),
    ("email", r#"" "@example.com"#, true),
    ("email", r#""Doe, John" <john.doe@example.com>"#, true),
    ("email", "customer/department=shipping@example.com", true),
    ("email", "$A12345@example.com", true),
    ("email", "!def!xyz%abc@example.com", true),
    ("email", "_somename@example.com", true),
    ("email", "!#$%&'*+-/=?^_`{}|~@example.com", true),
    ("email", "Miles.O'Brian@example.com", true),
    ("email", "postmaster@☁→❄→☃→☀→☺→☂→☹→✝.ws", true),
    ("email", "root@localhost", true),
    ("email", "john@com", true),
    ("email", "api@piston.ninja", true),
    ("email", "somebody@somewhere@com", false),
    ("hostname", "somewhere.com", true),
    ("hostname", "somewhere.com!", false),
    ("hostname", "user@email.domain", false),
    ("hostname", "1.1.1.1", false),
    ("hostname", "www.example-.org", false),
    ("hostname", "www.--example.org", false),
    ("hostname", "-www.example.org", false),
    ("hostname", "www-.example.org", false),
    ("hostname", "www.d-.org", false),
    ("hostname", "www.-d.org", false),
    ("hostname", "www-", false),
    ("hostname", "-www", false),
    ("hostname", "www.ex ample.org", false),
    ("hostname", "_www.example.org", false),
    ("hostname", "www.ex;ample.org", false),
    ("hostname", "www.example_underscored.org", false),
    ("hostname", "www.詹姆斯.x", false),
    ("hostname", "a.b.c.d", false),
    ("hostname", "-xyz", false),
    ("hostname", "xyz-", false),
    ("hostname", "x.", false),
    ("hostname", "a.b.c.dot-", false),
    ("hostname", "a.b.c.é;ö", false),
    ("hostname", "somewhere.com", true),
    ("hostname", "888.com", true),
    ("hostname", "a.com", true),
    ("hostname", "a.b.com", true),
    ("hostname", "a.b.c.com", true),
    ("hostname", "a.b.c.d.com", true),
    ("hostname", "a.b.c.d.e.com", true),
    ("hostname", "1.com", true),
    ("hostname", "1.2.com", true),
    ("hostname", "1.2.3.com", true),
    ("hostname", "1.2.3.4.com", true),
    ("hostname", "99.domain.com", true),
    ("hostname", "99.99.domain.com", true),
    ("hostname", "1wwworg.example.com", true),
    ("hostname", "1000wwworg.example.com", true),
    ("hostname", "xn--bcher-kva.example.com", true),
    ("hostname", "xn-80ak6aa92e.co", true),
    ("hostname", "xn-80ak6aa92e.com", true),
    ("hostname", "xn--ls8h.la", true),
    ("hostname", "☁→❄→☃→☀→☺→☂→☹→✝.ws", true),
    ("hostname", "www.example.onion", true),
    ("hostname", "www.example.ôlà", true),
    ("hostname", "ôlà.ôlà", true),
    ("hostname", "ôlà.ôlà.ôlà", true),
    ("hostname", "ex$ample", true),
    ("hostname", "localhost", true),
    ("hostname", "example", true),
    ("hostname", "x", true),
    ("hostname", "x-y", true),
    ("hostname", "a.b.c.dot", true),
    ("hostname", "www.example.org", true),
    ("hostname", "a.b.c.d.e.f.g.dot", true),
    ("hostname", "ex=ample.com", true),
    ("hostname", "<foo>", true),
    ("hostname", "www.example-hyphenated.org", true),
    ("hostname", "www.詹姆斯.org", true),
    ("hostname", "www.élégigôö.org", true),
    ("hostname", "www.詹姆斯.london", true),
    ("ipv4", "192.168.254.2", true),
    ("ipv4", "127.0.0.1", true),
    ("ipv4", "192.168.1.1", true),
    ("ipv4", "192.168.1.01", true),
    ("ipv4", "198.168.254.2.2", false),
    ("ipv6", "::2", true),
    ("ipv6", "127.0.0.1", false),
    ("cidr", "192.168.254.2/24", true),
    ("cidr", "192.0.2.1/24", true),
    ("cidr", "192.0.02.1/24", true),
    ("cidr", "2001:db8:a0b:12f0::1/32", true),
    ("cidr", "198.168.254.2", false),
    ("cidr", "2001:db8:a0b:12f0::1", false),
    ("mac", "06:05:04:03:02:01", true),
    ("mac", "01:02:03:04:05", false),
    ("uuid3", "bcd02e22-68f0-3046-a512-327cca9def8f", true),
    ("uuid3", "not-a-uuid", false),
    ("uuid4", "025b0d74-00a2-4048-bf57-227c5111bb34", true),
    ("uuid4", "not-a-uuid", false),
    ("uuid5", "886313e1-3b8a-5372-9b90-0c9aee199e5d", true),
    ("uuid5", "not-a-uuid", false),
    ("uuid", "886313e1-3b8a-5372-9b90-0c9aee199e5d", true),
    ("uuid", "not-a-uuid", false),
    ("isbn", "0321751043", true),
    ("isbn", "836217463", false),
    ("isbn10", "0321751043", true),
    ("isbn10", "836217463", false),
    ("isbn13", "978-0321751041", true),
    ("isbn13", "978-0321751042", false),
    ("hexcolor", "#000000", true),
    ("hexcolor", "#fffffffz", false),
    ("rgbcolor", "rgb(0,0,0)", true),
    ("rgbcolor", "rgb(300,0,0)", false),
    ("ssn", "999 99 9999", true),
    ("ssn", "999 99 999", false),
    ("creditcard", "4012-8888-8888-1881", true),
    ("creditcard", "9999-9999-9999-999", false),
    ("password", "super secret!!!", true),
    ("password", "even more secret", true),
    // The URL-safe encoding of its bytes, which has no `-` or `_` here.
    (
        "byte",
        "VGhpcyBpcyBhIGJ5dGUgYXJyYXkgd2l0aCB1bnByaW50YWJsZSBjaGFycywgYnV0IGl0IGFsc28gaXNu",
        true,
    ),
    ("byte", "ZWxpemFiZXRocG9zZXk=", true),
    ("byte", "ZWxpemFiZXRocG9zZXk", false),
];

/// kube-openapi 32ad38e42d3f `strfmt/time_test.go`, `date_test.go`, `duration_test.go`
/// and `bson_test.go`.
const STRFMT_TIME_TESTS: &[(&str, &str, bool)] = &[
    ("date-time", "2014-12-15T08:00:00.000Z", true),
    ("date-time", "2011-08-18T19:03:37.000000000+01:00", true),
    ("date-time", "2014-12-15T19:30:20Z", true),
    ("date-time", "0001-01-01T00:00:00Z", true),
    ("date-time", "2014-12-15T08:00:00", false),
    ("date-time", "", false),
    ("date", "2014-12-15", true),
    ("date", "2014-12-15T08:00:00Z", false),
    ("duration", "0ms", true),
    ("duration", "2ms", true),
    ("duration", "yada", false),
    ("duration", "three week", false),
    (
        "duration",
        "9999999999999999999999999999999999999999999999999999999 weeks",
        false,
    ),
    ("duration", "12 parsecs", false),
    ("duration", "12 y", false),
    ("duration", "45 wekk", false),
    ("duration", "45 weeekks", false),
    ("duration", "1ns", true),
    ("duration", "1us", true),
    ("duration", "1µs", true),
    ("duration", "1hr", true),
    ("duration", "1d", true),
    ("duration", "1wk", true),
    ("duration", "1nanoseconds", true),
    ("duration", "1micros", true),
    ("duration", "1millis", true),
    ("duration", "1second", true),
    ("duration", "1minute", true),
    ("duration", "1hour", true),
    ("duration", "1day", true),
    ("duration", "1week", true),
    ("duration", "1  µs", true),
    ("duration", "1  wk", true),
    ("duration", "1  milliseconds", true),
    ("bsonobjectid", "507f1f77bcf86cd799439011", true),
    ("bsonobjectid", "507f1f77bcf86cd79943901", false),
    ("bsonobjectid", "507f1f77bcf86cd79943901g", false),
];

/// Go's standard library behind the validators (Go 1.23: `net.ParseIP` is
/// `netip.ParseAddr` without a zone, `net.ParseCIDR`, `net.ParseMAC`, `time.Parse`,
/// `time.ParseDuration`, `net/mail`), and `k8s.io/utils/net`'s sloppy retries.
const GO_BEHAVIOUR: &[(&str, &str, bool)] = &[
    // The Gateway API case.
    ("ipv4", "1.2.3.4:8080", false),
    ("ipv6", "1.2.3.4:8080", false),
    ("ipv4", "1111:2222:3333:4444::", false),
    ("ipv6", "1111:2222:3333:4444::", true),
    ("ipv4", "001.002.003.004", true),
    ("ipv4", "1.2.3", false),
    ("ipv4", "256.1.1.1", false),
    ("ipv4", "::ffff:1.2.3.4", true),
    ("ipv4", "::ffff:01.2.3.4", true),
    ("ipv6", "::ffff:1.2.3.4", true),
    ("ipv6", "::ffff:01.2.3.4", false),
    ("ipv6", "fe80::1%eth0", false),
    ("ipv6", "::", true),
    ("ipv4", "", false),
    ("cidr", "10.0.0.0/024", true),
    ("cidr", "10.0.0.0/33", false),
    ("cidr", "10.0.0.0/", false),
    ("cidr", "10.0.0.0/+8", false),
    ("cidr", "::ffff:1.2.3.0/120", true),
    ("cidr", "fe80::%eth0/64", false),
    ("cidr", "010.0.0.0/8", true),
    ("mac", "00:00:5e:00:53:01", true),
    ("mac", "00-00-5E-00-53-01", true),
    ("mac", "0000.5e00.5301", true),
    ("mac", "02:00:5e:10:00:00:00:01", true),
    (
        "mac",
        "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01",
        true,
    ),
    ("mac", "00:00:5e:00:53:01:02", false),
    ("mac", "00:00-5e:00:53:01", false),
    ("mac", "0000.5e00.530", false),
    ("date", "2020-02-29", true),
    ("date", "2019-02-29", false),
    ("date", "2019-04-31", false),
    ("date", "2019-13-01", false),
    ("date", "2019-00-01", false),
    ("date", "2019-1-01", false),
    ("date", "+019-01-01", false),
    ("date-time", "2019-01-01t10:00:00z", true),
    ("date-time", "2019-01-01T24:00:00Z", false),
    ("date-time", "2019-01-01T10:00:60Z", false),
    ("date-time", "2019-01-01T10:00:00+99:99", true),
    ("date-time", "2019-01-01T10:00:00Ztrailing", true),
    ("datetime", "2019-01-01T10:00:00,5Z", true),
    ("duration", "0", true),
    ("duration", "-1.5h", true),
    ("duration", ".5s", true),
    ("duration", "1.s", true),
    ("duration", "1", false),
    ("duration", "", false),
    ("duration", "2562047h", true),
    ("duration", "1 fortnight", false),
    ("duration", "5 hrs", false),
    ("duration", "5 days", true),
    ("email", "Gogh Fir <gf@example.com>", true),
    ("email", "gf@example.com (Gogh Fir)", true),
    ("email", "<gf@example.com>", true),
    ("email", "group: gf@example.com;", true),
    ("email", "group: a@example.com, b@example.com;", false),
    ("email", "group:;", false),
    ("email", "joe@[127.0.0.1]", true),
    ("email", "joe@[not an ip]", false),
    ("email", "john.doe", false),
    ("email", "John Doe", false),
    ("email", "a..b@example.com", false),
    ("email", ".a@example.com", false),
    ("email", "a@example.com.", false),
    ("email", r#"""@example.com"#, false),
    ("email", "=?utf-8?q?J=C3=B6rg?= <j@example.com>", true),
    ("email", "=?windows-1252?q?J=F6rg?= <j@example.com>", false),
    ("email", "=?windows-1252?x?J=F6rg?= <j@example.com>", true),
    ("email", "j@example.com (=?koi8-r?b?ZGVy?=)", false),
    ("email", "", false),
    ("uri", "/just/a/path", true),
    ("uri", "http://[::1]:namedport", false),
    ("uri", "", false),
    ("uuid", "886313E13B8A53729B900C9AEE199E5D", true),
    ("uuid4", "886313e1-3b8a-5372-9b90-0c9aee199e5d", false),
    ("isbn10", "0-321-75104-3", true),
    ("isbn10", "080442957X", true),
    ("isbn", "978 0321751041", true),
    ("creditcard", "4111 1111 1111 1111", true),
    ("creditcard", "4111 1111 1111 1112", false),
    ("ssn", "111-11-1111", true),
    ("ssn", "111111111", false),
    ("hexcolor", "fff", true),
    ("hexcolor", "#ffff", false),
    ("rgbcolor", "rgb( 255 , 255 , 255 )", true),
    ("rgbcolor", "rgb(01,0,0)", false),
    ("byte", "", false),
    ("byte", "aGk=", true),
    ("byte", "aGk", false),
    ("byte", "a-_b", false),
    ("password", "", true),
];

#[test]
fn formats_judge_as_kube() {
    let mut wrong = Vec::new();
    for (source, table) in [
        ("strfmt default_test.go", STRFMT_DEFAULT_TEST),
        ("strfmt time/date/duration/bson tests", STRFMT_TIME_TESTS),
        ("Go's behaviour", GO_BEHAVIOUR),
    ] {
        for &(format, value, valid) in table {
            let normalized = supported(format).expect("a supported format");
            if is_valid(normalized, value) != valid {
                wrong.push(format!(
                    "{source}: {format} {value:?} should be valid: {valid}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// apiextensions-apiserver v0.32.1 `formats_test.go` (`TestRegistryFormats`): the supported
/// formats, normalized, and no others.
#[test]
fn supported_formats_are_apiextensions() {
    for format in [
        "date-time",
        "datetime",
        "bsonobjectid",
        "uuid-3",
        "byte",
        "password",
    ] {
        assert!(supported(format).is_some(), "{format}");
    }
    for format in [
        "int32",
        "int64",
        "double",
        "float",
        "int-or-string",
        "IPv4",
        "quantity",
    ] {
        assert!(supported(format).is_none(), "{format}");
    }
}

/// Gateway API v1.3.0's `Gateway` `spec.addresses[]`: `anyOf: [{format: ipv4}, {format:
/// ipv6}]` inside a `oneOf`, judged as kube-openapi does (branch errors of the best
/// failure after the `oneOf`/`anyOf` errors), and a value of another type than its format.
#[test]
fn formats_in_branches_and_other_types() {
    use serde_json::json;

    use crate::schemas::{KindSchema, Schemas};

    let schema = json!({
        "type": "object",
        "oneOf": [
            {"properties": {
                "type": {"enum": ["IPAddress"]},
                "value": {"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
            }},
            {"properties": {"type": {"not": {"enum": ["IPAddress"]}}}}
        ],
        "properties": {
            "type": {"type": "string"},
            "value": {"type": "string"},
            "when": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"}
        }
    });
    let (schemas, root) = Schemas::standalone(&schema, &Default::default()).unwrap();
    let schema = KindSchema::of(&schemas, root);
    let render = |value| -> Vec<String> {
        (schema.validate_value(&value, "spec.addresses[0]").iter())
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        render(json!({"type": "IPAddress", "value": "1.2.3.4:8080"})),
        [
            r#"spec.addresses[0]: Invalid value: map[string]interface {}{"type":"IPAddress", "value":"1.2.3.4:8080"}: must validate one and only one schema (oneOf)"#,
            r#"spec.addresses[0].value: Invalid value: "1.2.3.4:8080": must validate at least one schema (anyOf)"#,
            r#"spec.addresses[0].value: Invalid value: "1.2.3.4:8080": must be of type ipv4: "1.2.3.4:8080""#,
        ]
    );
    assert!(render(json!({"type": "IPAddress", "value": "::1"})).is_empty());
    assert!(render(json!({"type": "Hostname", "value": "foo.bar"})).is_empty());
    assert_eq!(
        render(json!({"type": "Hostname", "when": 5, "id": true})),
        [
            r#"spec.addresses[0].when: Invalid value: "int64": must be of type date-time: "int64""#,
            r#"spec.addresses[0].id: Invalid value: "": must be of type uuid: """#,
        ]
    );
    // go-openapi passes a list where a formatted string is expected.
    assert!(render(json!({"type": "Hostname", "when": ["x"]})).is_empty());
}
