//! Estimates of kube's library tests (`k8s.io/apiserver` v0.32.1
//! `pkg/cel/library/cost_test.go`), whose size estimator gives strings and bytes at most
//! 12 and nothing else; and estimates on schemas, against sums worked out by hand.

use serde_json::json;

use super::estimator::{Estimator, Sizes};
use super::{CostEstimate, Size, estimate};
use crate::environment::{KUBERNETES, stored_expressions};
use crate::library::Env;
use crate::program::compile;
use crate::ty::Type;
use crate::types::DeclType;

/// kube's test sizes: strings and bytes of up to 12.
fn by_type(ty: &Type) -> Option<Size> {
    matches!(ty, Type::String | Type::Bytes).then_some(Size::new(0, 12))
}

fn library_estimate(source: &str) -> CostEstimate {
    let env = Env::new(&stored_expressions(KUBERNETES));
    let compiled = compile(source, &env).unwrap_or_else(|e| panic!("{source}: {e}"));
    Estimator::new(&compiled.checked, Sizes::ByType(by_type)).run()
}

fn check(cases: &[(&str, u64, u64)]) {
    let mut wrong = Vec::new();
    for &(source, min, max) in cases {
        let estimate = library_estimate(source);
        if estimate != CostEstimate::new(min, max) {
            wrong.push(format!(
                "{source}: {}..{}, kube's {min}..{max}",
                estimate.min, estimate.max
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

const INTS: &str = "[1, 2, 3, 4, 5]";
const UINTS: &str = "[uint(1), uint(2), uint(3), uint(4), uint(5)]";
const STRINGS: &str =
    "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']";
const BYTES: &str = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]";
const DURATIONS: &str =
    "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";

#[test]
fn list_library() {
    let mut cases = Vec::new();
    let sum = [(INTS, 15, 15), (UINTS, 20, 20), (DURATIONS, 20, 20)];
    for (list, min, max) in sum {
        cases.push((format!("{list}.sum()"), min, max));
    }
    for op in [".isSorted()", ".max()", ".min()"] {
        for (list, min, max) in [
            (INTS, 15, 15),
            (UINTS, 20, 20),
            (STRINGS, 15, 25),
            (BYTES, 25, 35),
        ] {
            cases.push((format!("{list}{op}"), min, max));
        }
    }
    for op in [".indexOf", ".lastIndexOf"] {
        for (list, param, min, max) in [
            (INTS, "3", 15, 15),
            (UINTS, "uint(3)", 21, 21),
            (STRINGS, "'x'", 15, 25),
            (BYTES, "bytes('x')", 26, 36),
            (
                "'01234567890123456789012345678901234567890123456789'",
                "'123'",
                5,
                5,
            ),
        ] {
            cases.push((format!("{list}{op}({param})"), min, max));
        }
    }
    let cases: Vec<(&str, u64, u64)> = (cases.iter())
        .map(|(s, min, max)| (s.as_str(), *min, *max))
        .collect();
    check(&cases);
}

#[test]
fn string_library() {
    check(&[
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3),
        (
            "'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()",
            7,
            9,
        ),
        ("'ABCDEFGHIJ abcdefghij'.upperAscii()", 3, 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3),
        (
            "strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')",
            7,
            11,
        ),
        ("'abc 123 def 123'.replace('123', '456')", 3, 3),
        ("'abc 123 def 123'.replace('', 'x')", 3, 3),
        ("'abc 123 def 123'.replace('123', '')", 3, 3),
        ("'abc 123 def 123'.replace('123', '456', 1)", 3, 3),
        ("'abc 123 def 123'.split(' ')", 3, 3),
        ("'abc 123 def 123'.split(' ', 1)", 3, 3),
        ("'abc 123 def 123'.substring(5)", 2, 2),
        ("'abc 123 def 123'.substring(5, 8)", 2, 2),
        ("'  abc 123 def 123  '.trim()", 2, 2),
        (
            "['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')",
            11,
            23,
        ),
        (
            "['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()",
            10,
            22,
        ),
        ("'abc 123 def 123'.find('123')", 2, 2),
        ("'abc 123 def 123'.findAll('123')", 2, 2),
        ("'abc 123 def 123'.findAll('123', 1)", 2, 2),
    ]);
}

#[test]
fn url_quantity_and_format_libraries() {
    let url = "url('https:://kubernetes.io/')";
    let mut cases: Vec<(String, u64, u64)> = [
        ".getScheme()",
        ".getHostname()",
        ".getHost()",
        ".getPort()",
        ".getEscapedPath()",
        ".getQuery()",
    ]
    .iter()
    .map(|op| (format!("{url}{op}"), 4, 4))
    .collect();
    cases.push((format!("{url} == url('https:://kubernetes.io/')"), 7, 9));
    cases.push((format!("{url} == url('http://x.b')"), 5, 5));
    for (source, min, max) in [
        (r#"quantity("12Mi")"#, 1, 1),
        (r#"isQuantity("20M")"#, 1, 1),
        (r#"quantity("200M") == quantity("200M")"#, 3, 3),
        (
            r#"quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")"#,
            3,
            6,
        ),
        (r#"quantity("50M").isLessThan(quantity("50Mi"))"#, 3, 3),
        (r#"quantity("200M").compareTo(quantity("0.2G")) > 0"#, 4, 4),
        (r#"quantity("50k").sub(20) == quantity("49980")"#, 4, 4),
        (
            r#"quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0"#,
            7,
            7,
        ),
        (r#"quantity("50.703k").asApproximateFloat() > 0.0"#, 3, 3),
        (r#"format.named("dns1123subdomain")"#, 1, 1),
        (
            r#"format.named("dns1123Subdomain").value().validate("my-name")"#,
            34,
            34,
        ),
    ] {
        cases.push((source.to_owned(), min, max));
    }
    let cases: Vec<(&str, u64, u64)> = (cases.iter())
        .map(|(s, min, max)| (s.as_str(), *min, *max))
        .collect();
    check(&cases);
}

#[test]
fn ip_and_cidr_libraries() {
    let v4 = "ip('192.168.0.1')";
    let v6 = "ip('2001:db8:3333:4444:5555:6666:7777:8888')";
    let mut cases: Vec<(String, u64, u64)> = Vec::new();
    for (ip, base) in [(v4, 2), (v6, 4)] {
        cases.push((ip.to_owned(), base, base));
        for op in [".family()", ".isLoopback()", ".isGlobalUnicast()"] {
            cases.push((format!("{ip}{op}"), base + 1, base + 1));
        }
        cases.push((format!("{ip} == ip('192.168.0.1')"), base + 3, base + 3));
    }
    for (source, min, max) in [
        ("ip.isCanonical('192.168.0.1')", 3, 3),
        (
            "ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')",
            8,
            8,
        ),
        ("cidr('192.168.0.0/16')", 2, 2),
        ("cidr('192.168.0.0/16').prefixLength()", 3, 3),
        ("cidr('192.168.0.0/16') == cidr('2001:db8::/32')", 5, 5),
        (
            "cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))",
            7,
            11,
        ),
        ("cidr('192.168.0.0/16').containsCIDR('192.0.0.0/30')", 7, 11),
        ("cidr('192.168.0.0/16').containsIP(ip('192.169.0.1'))", 5, 8),
        ("cidr('192.168.0.0/16').containsIP('192.0.0.1')", 4, 7),
        (
            "cidr('2001:db8::/32').containsIP('2001:db8:3333:4444:5555:6666:7777:8888')",
            7,
            10,
        ),
    ] {
        cases.push((source.to_owned(), min, max));
    }
    let cases: Vec<(&str, u64, u64)> = (cases.iter())
        .map(|(s, min, max)| (s.as_str(), *min, *max))
        .collect();
    check(&cases);
}

#[test]
fn sets_library() {
    check(&[
        ("sets.contains([], [])", 21, 21),
        ("sets.contains([1], [])", 21, 21),
        ("sets.contains([1], [1])", 22, 22),
        ("sets.contains([1], [1, 1])", 23, 23),
        ("sets.contains([1, 2, 3, 4], [2, 3])", 29, 29),
        ("!sets.contains([1], [1, 2])", 24, 24),
        ("sets.equivalent([], [])", 21, 21),
        ("sets.equivalent([1], [1, 1])", 25, 25),
    ]);
}

/// The estimate of `rule` with `self` of `schema`'s type.
fn schema_estimate(schema: serde_json::Value, rule: &str) -> CostEstimate {
    let decl = DeclType::of_schema(&schema, false).expect("a typed schema");
    let mut env = Env::new(&stored_expressions(KUBERNETES));
    env.variable("self", Type::of_decl(&decl, "selfType0"));
    let compiled = compile(rule, &env).unwrap_or_else(|e| panic!("{rule}: {e}"));
    estimate(&compiled.checked, Some(&decl))
}

#[test]
fn sizes_come_from_the_schema_by_path() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10},
            "items": {"type": "array", "maxItems": 5,
                      "items": {"type": "string", "maxLength": 3}},
            "labels": {"type": "object", "maxProperties": 4,
                       "additionalProperties": {"type": "string", "maxLength": 2}},
        },
    });
    // self, .name (1 each), startsWith: 'ab' traversed (ceil(0.2) = 1).
    assert_eq!(
        schema_estimate(schema.clone(), "self.name.startsWith('ab')"),
        CostEstimate::new(3, 3)
    );
    // == of strings: up to a tenth of the shorter (40 bytes), at least 1.
    assert_eq!(
        schema_estimate(schema.clone(), "self.name == self.name"),
        CostEstimate::new(5, 8)
    );
    // all(): self.items 2, init 0, result 1; per item (at most 5): the condition 2, the
    // step 1 + x.size() 2 (x 1, size 1): 5 → 3 + 25.
    assert_eq!(
        schema_estimate(schema.clone(), "self.items.all(x, x.size() < 3)"),
        CostEstimate::new(3, 3 + 5 * 6)
    );
    // A map's values by index: self.labels[k] is a string of up to 8 bytes.
    assert_eq!(
        schema_estimate(schema.clone(), "self.labels['a'].contains('b')"),
        CostEstimate::new(3, 4)
    );
    // has() costs only its operand.
    assert_eq!(
        schema_estimate(schema, "has(self.name)"),
        CostEstimate::new(1, 1)
    );
}

#[test]
fn two_variable_comprehensions() {
    check(&[
        ("{'a': 1, 'b': 2}.all(k, v, v > 0)", 37, 41),
        ("{'a': 1, 'b': 2}.exists(k, v, v > 0)", 39, 43),
        ("{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 38, 40),
        ("{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71, 71),
        ("{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 67, 75),
        (
            "{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})",
            131,
            131,
        ),
        (
            "{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})",
            67,
            135,
        ),
        ("[1, 2].all(i, v, v > 0)", 17, 21),
        ("[1, 2].exists(i, v, v > 0)", 19, 23),
        ("[1, 2].existsOne(i, v, v > 0)", 18, 20),
        ("[1, 2].transformList(i, v, v + 1)", 49, 49),
        ("[1, 2].transformList(i, v, v < 5, v + 1)", 27, 53),
    ]);
}
