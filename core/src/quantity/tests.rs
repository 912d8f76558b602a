//! Kube's tests (k8s.io/apimachinery v0.32.1, pkg/api/resource/quantity_test.go,
//! amount_test.go, math_test.go, scale_int_test.go), ported as data tables.

use super::*;
use Format::{BinarySi as Bin, DecimalExponent as Exp, DecimalSi as Si};

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

/// Kube's `decQuantity`.
fn dec(unscaled: i64, exponent: i32, format: Format) -> Quantity {
    Quantity::test_dec(unscaled, exponent, format)
}

/// Kube's `intQuantity`.
fn int(value: i64, scale: i32, format: Format) -> Quantity {
    Quantity::test_int(value, scale, format)
}

/// A small deterministic generator, standing in for Go's `rand.Int63`.
struct Lcg(u64);

impl Lcg {
    fn next_i63(&mut self) -> i64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 1) as i64
    }
}

/// TestQuantityParse: input, expected `unscaled × 10^exponent`, format.
const PARSE: &[(&str, i64, i32, Format)] = &[
    ("0", 0, 0, Si),
    ("0n", 0, 0, Si),
    ("0u", 0, 0, Si),
    ("0m", 0, 0, Si),
    ("0Ki", 0, 0, Bin),
    ("0k", 0, 0, Si),
    ("0Mi", 0, 0, Bin),
    ("0M", 0, 0, Si),
    ("0Gi", 0, 0, Bin),
    ("0G", 0, 0, Si),
    ("0Ti", 0, 0, Bin),
    ("0T", 0, 0, Si),
    ("1", 1, 0, Si),
    ("1Ki", 1024, 0, Bin),
    ("8Ki", 8 * 1024, 0, Bin),
    ("7Mi", 7 * 1024 * 1024, 0, Bin),
    ("6Gi", 6 * 1024 * 1024 * 1024, 0, Bin),
    ("5Ti", 5 * 1024 * 1024 * 1024 * 1024, 0, Bin),
    ("4Pi", 4 * 1024 * 1024 * 1024 * 1024 * 1024, 0, Bin),
    ("3Ei", 3 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, Bin),
    ("10Ti", 10 * 1024 * 1024 * 1024 * 1024, 0, Bin),
    ("100Ti", 100 * 1024 * 1024 * 1024 * 1024, 0, Bin),
    ("5n", 5, -9, Si),
    ("4u", 4, -6, Si),
    ("3m", 3, -3, Si),
    ("9", 9, 0, Si),
    ("8k", 8, 3, Si),
    ("50k", 5, 4, Si),
    ("7M", 7, 6, Si),
    ("6G", 6, 9, Si),
    ("5T", 5, 12, Si),
    ("40T", 4, 13, Si),
    ("300T", 3, 14, Si),
    ("2P", 2, 15, Si),
    ("1E", 1, 18, Si),
    ("1E-3", 1, -3, Exp),
    ("1e3", 1, 3, Exp),
    ("1E6", 1, 6, Exp),
    ("1e9", 1, 9, Exp),
    ("1E12", 1, 12, Exp),
    ("1e15", 1, 15, Exp),
    ("1E18", 1, 18, Exp),
    ("1e14", 1, 14, Exp),
    ("1e13", 1, 13, Exp),
    ("1e3", 1, 3, Exp),
    ("100.035k", 100035, 0, Si),
    ("0.001", 1, -3, Si),
    ("0.0005k", 5, -1, Si),
    ("0.005", 5, -3, Si),
    ("0.05", 5, -2, Si),
    ("0.5", 5, -1, Si),
    ("0.00050k", 5, -1, Si),
    ("0.00500", 5, -3, Si),
    ("0.05000", 5, -2, Si),
    ("0.50000", 5, -1, Si),
    ("0.5e0", 5, -1, Exp),
    ("0.5e-1", 5, -2, Exp),
    ("0.5e-2", 5, -3, Exp),
    ("0.5e0", 5, -1, Exp),
    ("10.035M", 10035, 3, Si),
    ("1.2e3", 12, 2, Exp),
    ("1.3E+6", 13, 5, Exp),
    ("1.40e9", 14, 8, Exp),
    ("1.53E12", 153, 10, Exp),
    ("1.6e15", 16, 14, Exp),
    ("1.7E18", 17, 17, Exp),
    ("9.01", 901, -2, Si),
    ("8.1k", 81, 2, Si),
    ("7.123456M", 7123456, 0, Si),
    ("6.987654321G", 6987654321, 0, Si),
    ("5.444T", 5444, 9, Si),
    ("40.1T", 401, 11, Si),
    ("300.2T", 3002, 11, Si),
    ("2.5P", 25, 14, Si),
    ("1.01E", 101, 16, Si),
    ("3.001n", 4, -9, Si),
    ("1.1E-9", 2, -9, Exp),
    ("0.0000000001", 1, -9, Si),
    ("0.0000000005", 1, -9, Si),
    ("0.00000000050", 1, -9, Si),
    ("0.5e-9", 1, -9, Exp),
    ("0.9n", 1, -9, Si),
    ("0.00000012345", 124, -9, Si),
    ("0.00000012354", 124, -9, Si),
    ("9Ei", i64::MAX, 0, Bin),
    ("9223372036854775807Ki", i64::MAX, 0, Bin),
    ("12E", 12, 18, Si),
    ("100.035Ki", 10243584, -2, Bin),
    ("0.5Mi", 512 * 1024, 0, Bin),
    ("0.05Gi", 536870912, -1, Bin),
    ("0.025Ti", 274877906944, -1, Bin),
    ("0.000000000001Ki", 2, -9, Si),
    (".001", 1, -3, Si),
    (".0001k", 100, -3, Si),
    ("1.", 1, 0, Si),
    ("1.G", 1, 9, Si),
];

/// TestQuantityParse's invalid inputs.
const PARSE_INVALID: &[&str] = &[
    "", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ",
];

#[test]
fn parse_table() {
    for as_dec in [false, true] {
        for &(input, unscaled, exponent, format) in PARSE {
            let expect = dec(unscaled, exponent, format);
            for (text, sign) in [
                (input.to_owned(), 1),
                (format!("-{input}"), -1),
                (format!("+{input}"), 1),
            ] {
                let mut got = q(&text);
                if as_dec {
                    got.to_dec();
                    assert_eq!(got.as_i64(), None, "{text}");
                }
                let mut want = expect.clone();
                if sign < 0 {
                    want.neg();
                }
                assert_eq!(
                    got.cmp(&want),
                    Ordering::Equal,
                    "{text}: got {got}, want {want}"
                );
                assert_eq!(got.format(), format, "{text}");
            }
            // Decomposing and rebuilding the input gives the same value.
            let got = q(input);
            let pieces = parse::split(input).unwrap();
            assert_eq!(got.sign() >= 0, pieces.positive, "{input}");
            let mut rebuilt = String::from(if pieces.positive { "" } else { "-" });
            rebuilt.push_str(pieces.num);
            if !pieces.denom.is_empty() {
                rebuilt.push('.');
                rebuilt.push_str(pieces.denom);
            }
            rebuilt.push_str(pieces.suffix);
            assert_eq!(q(&rebuilt), got, "{input} vs {rebuilt}");
        }
    }
    for input in PARSE_INVALID {
        assert!(Quantity::parse(input).is_err(), "{input:?} parsed");
    }
}

#[test]
fn parse_errors() {
    // Which error, and kube's messages (quantity.go).
    let cases: &[(&str, QuantityError)] = &[
        ("", QuantityError::FormatWrong),
        ("1.1.M", QuantityError::FormatWrong),
        (" 1", QuantityError::FormatWrong),
        ("1 ", QuantityError::FormatWrong),
        ("-3.01e-", QuantityError::Suffix),
        ("0.1mi", QuantityError::Suffix),
        ("1e", QuantityError::Suffix),
        ("1e99999999999999999999", QuantityError::Suffix),
        ("aoeu", QuantityError::FormatWrong),
        (".e-20", QuantityError::Numeric),
    ];
    for (input, want) in cases {
        assert_eq!(Quantity::parse(input).err(), Some(*want), "{input:?}");
    }
    assert_eq!(
        QuantityError::FormatWrong.to_string(),
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    assert_eq!(
        QuantityError::Numeric.to_string(),
        "unable to parse numeric part of quantity"
    );
    assert_eq!(
        QuantityError::Suffix.to_string(),
        "unable to parse quantity's suffix"
    );
}

/// TestParseQuantityString: input, positive, value, num, denom, suffix.
const SPLIT: &[(&str, bool, &str, &str, &str, &str)] = &[
    ("0.025Ti", true, "0.025", "0", "025", "Ti"),
    ("1.025Ti", true, "1.025", "1", "025", "Ti"),
    ("-1.025Ti", false, "-1.025", "1", "025", "Ti"),
    (".", true, ".", "0", "", ""),
    ("-.", false, "-.", "0", "", ""),
    ("1E-3", true, "1", "1", "", "E-3"),
];

#[test]
fn split_table() {
    for &(input, positive, value, num, denom, suffix) in SPLIT {
        let want = parse::Pieces {
            positive,
            value,
            num,
            denom,
            suffix,
        };
        assert_eq!(parse::split(input), Ok(want), "{input}");
    }
}

#[test]
fn zero_and_suffix_preservation() {
    // TestQuantityParseZero.
    assert_eq!(q("0").to_string(), "0");
    // TestQuantityParseNonNumericPanic (MustParse panics = parse fails).
    assert!(Quantity::parse("Non-Numeric").is_err());
    // TestQuantityAddZeroPreservesSuffix, TestQuantitySubZeroPreservesSuffix.
    for value in ["100m", "1Gi"] {
        let zero = q("0");
        let mut v1 = q(value);
        v1.add(&zero);
        assert_eq!(v1.to_string(), value);
        let mut v2 = zero.clone();
        v2.add(&q(value));
        assert_eq!(v2.to_string(), value);
        let mut v3 = q(value);
        v3.sub(&zero);
        assert_eq!(v3.to_string(), value);
        let mut v4 = zero.clone();
        v4.sub(&q(value));
        assert_eq!(v4.to_string(), (-q(value)).to_string());
    }
    // TestQuantityCanocicalizeZero.
    let mut v = q("1000m");
    v.sub(&Quantity::new(1, Si));
    assert_eq!(v.to_string(), "0");
}

/// TestQuantityCmp (first table).
const CMP: &[(&str, &str, i8)] = &[
    ("0", "0", 0),
    ("100m", "50m", 1),
    ("50m", "100m", -1),
    ("10000T", "100Gi", 1),
];

/// TestQuantityCmpInt64AndDec: a, b as (value, scale) in the small form, and a vs b.
/// A small-form value: (value, scale).
type SmallParts = (i64, i32);

const CMP_INT_DEC: &[(SmallParts, SmallParts, i8)] = &[
    ((901, -2), (901, -2), 0),
    ((90, -1), (901, -2), -1),
    ((901, -2), (900, -2), 1),
    ((0, 0), (0, 0), 0),
    ((0, 1), (0, -1), 0),
    ((0, -1), (0, 1), 0),
    ((800, -3), (1, 0), -1),
    ((800, -3), (79, -2), 1),
    ((i64::MAX, 0), (1, -1), 1),
    ((i64::MAX, 1), (1, 0), 1),
    ((i64::MAX, 1), (1, 1), 1),
    ((i64::MAX, 1), (0, 1), 1),
    ((i64::MAX, -16), (1, 3), -1),
    ((i64::MIN, 0), (0, 0), -1),
    ((i64::MIN, -18), (-1, 0), -1),
    ((i64::MIN, -19), (-1, 0), 1),
    ((1_000_000_000_000_000_000, -17), (1, 1), 0),
    ((1_000_000_000_000_000_000, -17), (-10, 0), 1),
    ((-1_000_000_000_000_000_000, -17), (-10, 0), 0),
    ((1_000_000_000_000_000_000, -17), (1, 0), 1),
    ((1_000_000_000_000_000_001, -17), (1, 1), 1),
    ((999_999_999_999_999_999, -17), (1, 1), -1),
];

fn ordering(c: i8) -> Ordering {
    c.cmp(&0)
}

#[test]
fn cmp_tables() {
    for &(x, y, want) in CMP {
        assert_eq!(q(x).cmp(&q(y)), ordering(want), "{x} vs {y}");
    }
    // TestQuantityCmp (second table: kube's nil decimals are zero).
    let zero_int = Quantity {
        format: Si,
        ..Quantity::default()
    };
    let cases = [
        (dec(0, 0, Si), dec(0, 0, Si), 0),
        (zero_int.clone(), dec(0, 0, Si), 0),
        (dec(0, 0, Si), zero_int.clone(), 0),
        (zero_int.clone(), zero_int.clone(), 0),
        (zero_int.clone(), dec(10, 0, Si), -1),
        (zero_int.clone(), dec(-10, 0, Si), 1),
        (dec(10, 0, Si), zero_int.clone(), 1),
        (dec(-10, 0, Si), zero_int.clone(), -1),
    ];
    for (a, b, want) in cases {
        assert_eq!(a.cmp(&b), ordering(want), "{a:?} vs {b:?}");
    }
    for &((av, ascale), (bv, bscale), want) in CMP_INT_DEC {
        for (a_dec, b_dec) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut a = int(av, ascale, Si);
            let mut b = int(bv, bscale, Si);
            if a_dec {
                a.to_dec();
            }
            if b_dec {
                b.to_dec();
            }
            assert_eq!(a.cmp(&b), ordering(want), "{a:?} vs {b:?}");
            assert_eq!(b.cmp(&a), ordering(-want), "{b:?} vs {a:?}");
        }
    }
}

/// TestQuantityRoundUp: input, scale, expected (unscaled, exponent), exact.
const ROUND_UP: &[(&str, i32, (i64, i32), bool)] = &[
    ("9.01", -3, (901, -2), true),
    ("9.01", -2, (901, -2), true),
    ("9.01", -1, (91, -1), false),
    ("9.01", 0, (10, 0), false),
    ("9.01", 1, (10, 0), false),
    ("9.01", 2, (100, 0), false),
    ("-9.01", -3, (-901, -2), true),
    ("-9.01", -2, (-901, -2), true),
    ("-9.01", -1, (-91, -1), false),
    ("-9.01", 0, (-10, 0), false),
    ("-9.01", 1, (-10, 0), false),
    ("-9.01", 2, (-100, 0), false),
];

#[test]
fn round_up_table() {
    for as_dec in [false, true] {
        for &(input, scale, (unscaled, exponent), exact) in ROUND_UP {
            let mut got = q(input);
            if as_dec {
                got.to_dec();
            }
            assert_eq!(got.round_up(scale), exact, "{input} {scale} {as_dec}");
            assert_eq!(
                got,
                dec(unscaled, exponent, Si),
                "{input} {scale} {as_dec}: {got}"
            );
        }
    }
}

#[test]
fn neg_tables() {
    // TestQuantityNeg.
    for a in [int(901, -2, Si), dec(901, -2, Si)] {
        let mut out = a.clone();
        out.neg();
        assert_ne!(out, a);
        assert_eq!(out.to_string(), "-9010m");
    }
    // TestNeg.
    let cases = [
        (int(0, 0, Si), int(0, 0, Si)),
        (Quantity::default(), Quantity::default()),
        (int(10, 0, Bin), int(-10, 0, Bin)),
        (int(-10, 0, Bin), int(10, 0, Bin)),
        (dec(0, 0, Si), int(0, 0, Si)),
        (dec(10, 0, Bin), int(-10, 0, Bin)),
        (dec(-10, 0, Bin), int(10, 0, Bin)),
    ];
    for (a, want) in cases {
        assert_eq!(-a, want);
    }
}

/// TestQuantityString: the value as (unscaled, exponent, format), its string, and an
/// alternate spelling that parses to it.
const STRING: &[((i64, i32, Format), &str, &str)] = &[
    ((1024 * 1024 * 1024, 0, Bin), "1Gi", "1024Mi"),
    ((300 * 1024 * 1024, 0, Bin), "300Mi", "307200Ki"),
    ((6 * 1024, 0, Bin), "6Ki", ""),
    ((1001 * 1024 * 1024 * 1024, 0, Bin), "1001Gi", "1025024Mi"),
    ((1024 * 1024 * 1024 * 1024, 0, Bin), "1Ti", "1024Gi"),
    ((5, 0, Bin), "5", "5000m"),
    ((500, -3, Bin), "500m", "0.5"),
    ((1, 9, Si), "1G", "1000M"),
    ((1000, 6, Si), "1G", "0.001T"),
    ((1000000, 3, Si), "1G", ""),
    ((1000000000, 0, Si), "1G", ""),
    ((1, -3, Si), "1m", "1000u"),
    ((80, -3, Si), "80m", ""),
    ((1080, -3, Si), "1080m", "1.08"),
    ((108, -2, Si), "1080m", "1080000000n"),
    ((10800, -4, Si), "1080m", ""),
    ((300, 6, Si), "300M", ""),
    ((1, 12, Si), "1T", ""),
    ((1234567, 6, Si), "1234567M", ""),
    ((1234567, -3, Bin), "1234567m", ""),
    ((3, 3, Si), "3k", ""),
    ((1025, 0, Bin), "1025", ""),
    ((0, 0, Si), "0", ""),
    ((0, 0, Bin), "0", ""),
    ((1, 9, Exp), "1e9", ".001e12"),
    ((1, -3, Exp), "1e-3", "0.001e0"),
    ((1, -9, Exp), "1e-9", "1000e-12"),
    ((80, -3, Exp), "80e-3", ""),
    ((300, 6, Exp), "300e6", ""),
    ((1, 12, Exp), "1e12", ""),
    ((1, 3, Exp), "1e3", ""),
    ((3, 3, Exp), "3e3", ""),
    ((3, 3, Si), "3k", ""),
    ((0, 0, Exp), "0", "00"),
    ((1, -9, Si), "1n", ""),
    ((80, -9, Si), "80n", ""),
    ((1080, -9, Si), "1080n", ""),
    ((108, -8, Si), "1080n", ""),
    ((10800, -10, Si), "1080n", ""),
    ((1, -6, Si), "1u", ""),
    ((80, -6, Si), "80u", ""),
    ((1080, -6, Si), "1080u", ""),
];

#[test]
fn string_table() {
    for &((unscaled, exponent, format), want, alternate) in STRING {
        let value = dec(unscaled, exponent, format);
        assert_eq!(value.to_string(), want, "{value:?}");
        assert_eq!(
            q(want).cached(),
            Some(want),
            "{want}: the canonical input is kept"
        );
        if !alternate.is_empty() {
            let parsed = q(alternate);
            assert_eq!(parsed.cached(), None, "{alternate}");
            assert_eq!(parsed.to_string(), want, "{alternate}");
        }
        if !value.is_zero() {
            assert_eq!((-value).to_string(), format!("-{want}"));
        }
    }
}

/// TestQuantityParseEmit.
const PARSE_EMIT: &[(&str, &str)] = &[
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
];

#[test]
fn parse_emit_table() {
    for &(input, want) in PARSE_EMIT {
        assert_eq!(q(input).to_string(), want, "{input}");
        assert_eq!(
            q(&format!("-{input}")).to_string(),
            format!("-{want}"),
            "-{input}"
        );
    }
}

/// Behaviour of kube's canonical form not covered by its tests, checked against
/// quantity.go's code paths.
const STRING_EXTRA: &[(&str, &str)] = &[
    // Canonical inputs print as written, sign and exponent letter included.
    ("+1", "+1"),
    ("1E3", "1E3"),
    ("0100", "0100"),
    // Non-canonical ones are rebuilt.
    ("1.0", "1"),
    ("100000", "100k"),
    ("-", "0"),
    (".", "0"),
    ("1.5", "1500m"),
    ("1.5Gi", "1536Mi"),
    ("1.1Ki", "1126400m"),
    ("8Ki", "8Ki"),
    ("1536Ki", "1536Ki"),
    ("1024Ki", "1Mi"),
    // Binary values are capped at 2^63 - 1.
    ("8Ei", "9223372036854775807"),
    ("10Ei", "9223372036854775807"),
    ("7Ei", "7Ei"),
    ("1Ei", "1Ei"),
    ("0.5Ki", "512"),
    // Decimal SI beyond `E` has no suffix: kube prints the bare mantissa.
    ("1000E", "1"),
    ("1e21", "1e21"),
    ("1e1000000", "10e999999"),
    ("1e-1000", "1e-9"),
    (
        "123456789012345678901234567890",
        "123456789012345678901234567890",
    ),
    ("1234567890123456789e999999", "1234567890123456789e999999"),
    ("-1234567890123456789e-999999", "-1e-9"),
    ("0.0000000000", "0"),
    ("1e-2147483648", "1e-9"),
];

#[test]
fn string_extra() {
    for &(input, want) in STRING_EXTRA {
        assert_eq!(q(input).to_string(), want, "{input}");
    }
}

#[test]
fn json() {
    // TestJSONWhitespace.
    let cases: &[(&str, &str)] = &[
        (r#"" 1""#, "1"),
        (r#""1 ""#, "1"),
        ("1", "1"),
        (" 1", "1"),
        ("1 ", "1"),
        ("10", "10"),
        ("-1", "-1"),
        (" -1", "-1"),
        ("1.5", "1500m"),
        (r#""1Mi""#, "1Mi"),
        ("null", "0"),
    ];
    for &(input, want) in cases {
        let got: Quantity = serde_json::from_str(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(got.to_string(), want, "{input}");
    }
    assert!(serde_json::from_str::<Quantity>(r#""1 Mi""#).is_err());
    // TestQuantityValueSet.
    let value = q("1Mi");
    assert_eq!(value.value(), 1024 * 1024);
    assert_eq!(serde_json::to_string(&value).unwrap(), r#""1Mi""#);
    assert_eq!(serde_json::to_string(&q("1.5")).unwrap(), r#""1500m""#);
}

#[test]
fn json_round_trip() {
    // TestJSON: random values in each format survive a JSON round trip (kube's fuzzer's
    // shapes: big decimals, binary multiples of powers of 1024, small decimals).
    let mut rng = Lcg(1);
    for i in 0..500 {
        let r = rng.next_i63();
        let value = match i % 4 {
            0 => dec(r, 0, Bin),
            1 => dec((r % 1024) << (10 * (r % 5)), 0, Bin),
            2 => dec(r, -(r % 4) as i32, if r % 2 == 0 { Si } else { Exp }),
            _ => dec(
                r % 1000,
                (r % 15) as i32 - 3,
                if r % 2 == 0 { Si } else { Exp },
            ),
        };
        let text = serde_json::to_string(&value).unwrap();
        let back: Quantity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value, "{text}");
        assert_eq!(back.to_string(), value.to_string());
    }
}

/// TestMilliNewSet: value, format, string, exact. (Kube's "invalid format" row prints
/// as a decimal exponent, which is what it is here.)
const MILLI_NEW: &[(i64, Format, &str, bool)] = &[
    (1, Si, "1m", true),
    (1000, Si, "1", true),
    (1234000, Si, "1234", true),
    (1024, Bin, "1024m", false),
    (1000000, Exp, "1e3", true),
    (1024 * 1024, Bin, "1048576m", false),
];

/// TestNewSet.
const NEW: &[(i64, Format, &str)] = &[
    (1, Si, "1"),
    (1000, Si, "1k"),
    (1234000, Si, "1234k"),
    (1024, Bin, "1Ki"),
    (1000000, Exp, "1e6"),
    (1024 * 1024, Bin, "1Mi"),
];

/// TestNewScaledSet.
const NEW_SCALED: &[(i64, i32, &str)] = &[
    (1, NANO, "1n"),
    (1000, NANO, "1u"),
    (1, MICRO, "1u"),
    (1000, MICRO, "1m"),
    (1, MILLI, "1m"),
    (1000, MILLI, "1"),
    (1, 0, "1"),
    (0, NANO, "0"),
    (0, MICRO, "0"),
    (0, MILLI, "0"),
    (0, 0, "0"),
];

/// TestScaledValue: from scale, to scale, value of 1 at the first in units of the second.
const SCALED_VALUE: &[(i32, i32, i64)] = &[
    (NANO, NANO, 1),
    (NANO, MICRO, 1),
    (NANO, MILLI, 1),
    (NANO, 0, 1),
    (MICRO, NANO, 1000),
    (MICRO, MICRO, 1),
    (MICRO, MILLI, 1),
    (MICRO, 0, 1),
    (MILLI, NANO, 1000 * 1000),
    (MILLI, MICRO, 1000),
    (MILLI, MILLI, 1),
    (MILLI, 0, 1),
    (0, NANO, 1000 * 1000 * 1000),
    (0, MICRO, 1000 * 1000),
    (0, MILLI, 1000),
    (0, 0, 1),
    (2, -2, 100 * 100),
];

#[test]
fn constructors() {
    for &(value, format, want, exact) in MILLI_NEW {
        let made = Quantity::new_milli(value, format);
        assert_eq!(made.to_string(), want);
        if exact {
            assert_eq!(q(&made.to_string()).milli_value(), value);
        }
        let mut set = Quantity::new(0, format);
        set.set_milli(value);
        assert_eq!(set.to_string(), want);
    }
    for as_dec in [false, true] {
        for &(value, format, want) in NEW {
            let mut made = Quantity::new(value, format);
            if as_dec {
                made.to_dec();
            }
            assert_eq!(made.to_string(), want);
            assert_eq!(q(&made.to_string()).value(), value);
            let mut set = Quantity::new(0, format);
            set.set(value);
            if as_dec {
                set.to_dec();
            }
            assert_eq!(set.to_string(), want);
        }
    }
    for &(value, scale, want) in NEW_SCALED {
        let made = Quantity::new_scaled(value, scale);
        assert_eq!(made.to_string(), want);
        assert_eq!(q(want).scaled_value(scale), value);
        let mut set = Quantity::new(0, Si);
        set.set_scaled(value, scale);
        assert_eq!(set, made);
    }
    for &(from, to, want) in SCALED_VALUE {
        assert_eq!(
            Quantity::new_scaled(1, from).scaled_value(to),
            want,
            "{from} -> {to}"
        );
    }
    // TestUninitializedNoCrash.
    let zero = Quantity::default();
    assert_eq!(
        (zero.value(), zero.milli_value(), zero.to_string()),
        (0, 0, "0".to_owned())
    );
    // ExampleFormat, ExampleMustParse.
    assert_eq!(
        Quantity::new(5 * 1024 * 1024 * 1024, Bin).to_string(),
        "5Gi"
    );
    assert_eq!(Quantity::new(5 * 1000 * 1000 * 1000, Si).to_string(), "5G");
    assert_eq!(Quantity::new_milli(5300, Si).to_string(), "5300m");
    assert_eq!(
        (q("5Gi").value(), q("5Gi").format().as_str()),
        (5368709120, "BinarySI")
    );
    assert_eq!(
        (q("5G").value(), q("5G").format().as_str()),
        (5000000000, "DecimalSI")
    );
    assert_eq!(q("5300m").milli_value(), 5300);
    assert_eq!(q("5.4").milli_value(), 5400);
}

#[test]
fn add_sub_mul_tables() {
    let zero_si = Quantity {
        format: Si,
        ..Quantity::default()
    };
    // TestAdd, TestSub: a, b, a + b, a - b.
    let cases = [
        (dec(10, 0, Si), dec(1, 1, Si), dec(20, 0, Si), dec(0, 0, Si)),
        (
            dec(10, 0, Si),
            dec(1, 0, Bin),
            dec(11, 0, Si),
            dec(9, 0, Si),
        ),
        (
            dec(10, 0, Bin),
            dec(1, 0, Si),
            dec(11, 0, Bin),
            dec(9, 0, Bin),
        ),
        (
            zero_si.clone(),
            dec(50, 0, Si),
            dec(50, 0, Si),
            dec(-50, 0, Si),
        ),
        (
            dec(50, 0, Si),
            zero_si.clone(),
            dec(50, 0, Si),
            dec(50, 0, Si),
        ),
        (
            zero_si.clone(),
            zero_si.clone(),
            dec(0, 0, Si),
            dec(0, 0, Si),
        ),
    ];
    for (a, b, sum, difference) in cases {
        assert_eq!(a.clone() + &b, sum, "{a:?} + {b:?}");
        assert_eq!(a.clone() - &b, difference, "{a:?} - {b:?}");
    }
    // TestMul: a, factor, product, whether it fit.
    let big = |digits: &str, exponent: i32| {
        let mut value = q(digits);
        value.to_dec();
        let mut scaled = value.clone();
        scaled.set_format(Si);
        if exponent > 0 {
            scaled.mul(10i64.pow(exponent as u32));
        }
        scaled
    };
    let max = i64::MAX;
    let min = i64::MIN;
    let cases = [
        (dec(10, 0, Si), 10, dec(100, 0, Si), true),
        (dec(10, 0, Si), 1, dec(10, 0, Si), true),
        (dec(10, 0, Bin), 1, dec(10, 0, Bin), true),
        (zero_si.clone(), 50, dec(0, 0, Si), true),
        (dec(50, 0, Si), 0, dec(0, 0, Si), true),
        (zero_si.clone(), 0, dec(0, 0, Si), true),
        (dec(10, 0, Si), -10, dec(-100, 0, Si), true),
        (dec(-10, 0, Si), 1, dec(-10, 0, Si), true),
        (dec(10, 0, Bin), -1, dec(-10, 0, Bin), true),
        (dec(-50, 0, Si), 0, dec(0, 0, Si), true),
        (dec(-50, 0, Si), -50, dec(2500, 0, Si), true),
        (zero_si.clone(), -50, dec(0, 0, Si), true),
        (dec(max, 0, Si), 0, dec(0, 1, Si), true),
        (dec(max, 0, Si), 1, dec(max, 0, Si), true),
        (dec(max, 0, Si), -1, dec(-max, 0, Si), true),
        (dec(max / 2, 0, Si), 2, dec((max / 2) * 2, 0, Si), true),
        (dec(max / -2, 0, Si), -2, dec((max / 2) * 2, 0, Si), true),
        (dec(max, 0, Si), 2, big("18446744073709551614", 0), false),
        (dec(max, 0, Si), 10, dec(max, 1, Si), false),
        (dec(max, 0, Si), -10, dec(-max, 1, Si), false),
        (dec(min, 0, Si), 0, dec(0, 1, Si), true),
        (dec(min, 0, Si), 1, dec(min, 0, Si), true),
        (dec(min, 0, Si), -1, big("9223372036854775808", 0), false),
        (dec(min / 2, 0, Si), 2, dec(min, 0, Si), true),
        (dec(min / -2, 0, Si), -2, dec(min, 0, Si), true),
        (dec(min, 0, Si), 2, big("-18446744073709551616", 0), false),
        (dec(min, 0, Si), 10, dec(min, 1, Si), false),
        (dec(min, 0, Si), -10, big("9223372036854775808", 1), false),
    ];
    for (mut a, factor, want, fits) in cases {
        let before = format!("{a:?}");
        assert_eq!(a.mul(factor), fits, "{before} * {factor}");
        assert_eq!(a, want, "{before} * {factor}");
    }
}

#[test]
fn round_trips() {
    let mut rng = Lcg(7);
    // TestAddSubRoundTrip.
    for k in -10..=10 {
        let mut sum = Quantity {
            format: Si,
            ..Quantity::default()
        };
        let order: Vec<i64> = (0..100).map(|_| rng.next_i63()).collect();
        for &j in &order {
            sum.add(&Quantity::new_scaled(j, k));
        }
        for &j in &order {
            sum.sub(&Quantity::new_scaled(j, k));
        }
        assert!(sum.is_zero(), "{sum}");
    }
    // TestAddSubRoundTripAcrossScales.
    let mut sum = Quantity {
        format: Si,
        ..Quantity::default()
    };
    let order: Vec<i64> = (0..100).map(|_| rng.next_i63()).collect();
    for &j in &order {
        sum.add(&Quantity::new_scaled(j, (j % 20 - 10) as i32));
    }
    for &j in &order {
        sum.sub(&Quantity::new_scaled(j, (j % 20 - 10) as i32));
    }
    assert!(sum.is_zero(), "{sum}");
    // TestNegateRoundTrip.
    for as_dec in [false, true] {
        for k in -10..=10 {
            for _ in 0..100 {
                let mut value = Quantity::new_scaled(rng.next_i63(), k);
                if as_dec {
                    value.to_dec();
                }
                assert_eq!(-(-value.clone()), value);
            }
        }
    }
    // Printing and parsing again gives the same value and string.
    for _ in 0..2000 {
        let r = rng.next_i63();
        let format = [Si, Bin, Exp][(r % 3) as usize];
        let value = Quantity::test_int(r >> (r % 50), (r % 31) as i32 - 9, format);
        if format == Bin && value.cmp_i64(i64::MAX).is_gt() {
            continue; // parsing caps binary values
        }
        if format == Si && value >= q("1000E") {
            continue; // no SI suffix beyond E: kube prints the bare mantissa
        }
        let text = value.to_string();
        let back = q(&text);
        assert_eq!(back, value, "{value:?} -> {text}");
        if format != Bin {
            // (A binary value without a binary suffix reads back as decimal SI.)
            assert_eq!(back.to_string(), text);
        }
    }
}

/// TestQuantityAsApproximateFloat64: value as (unscaled, exponent, format), and its float.
/// (Rows that repeat another row's value in a second format are left out: the format
/// takes no part in the conversion; the three `math.Pow10(-1)` rows are below.)
const APPROXIMATE_F64: &[((i64, i32, Format), f64)] = &[
    ((0, 0, Si), 0.0),
    ((0, 0, Exp), 0.0),
    ((0, 0, Bin), 0.0),
    ((1, 0, Si), 1.0),
    ((1, 0, Exp), 1.0),
    ((1, 0, Bin), 1.0),
    ((1024, 0, Bin), 1024.0),
    ((8 * 1024, 0, Bin), 8.0 * 1024.0),
    ((7 * 1024 * 1024, 0, Bin), 7340032.0),
    ((7 * 1024 * 1024, 1, Bin), 73400320.0),
    ((7 * 1024 * 1024, 4, Bin), 73400320000.0),
    ((7 * 1024 * 1024, 8, Bin), 734003200000000.0),
    ((7 * 1024 * 1024, -8, Bin), 7340032.0 / 100000000.0),
    ((1024, 0, Si), 1024.0),
    ((7 * 1024 * 1024, 8, Si), 734003200000000.0),
    ((7 * 1024 * 1024, -8, Si), 7340032.0 / 100000000.0),
    ((7 * 1024 * 1024, 4, Exp), 73400320000.0),
    ((7 * 1024 * 1024, -8, Exp), 7340032.0 / 100000000.0),
    ((i64::MAX, 0, Si), 9223372036854775807.0),
    ((i64::MAX, 0, Bin), 9223372036854775807.0),
    ((12, 18, Si), 1.2e19),
    ((12, 500, Si), f64::INFINITY),
    ((-12, 500, Si), f64::NEG_INFINITY),
];

#[test]
fn approximate_f64_tables() {
    for &((unscaled, exponent, format), want) in APPROXIMATE_F64 {
        assert_eq!(
            dec(unscaled, exponent, format).as_approximate_f64(),
            want,
            "{unscaled}e{exponent}"
        );
    }
    // The rows kube computes with `math.Pow10(-1)`.
    for format in [Si, Bin, Exp] {
        assert_eq!(
            dec(7 * 1024 * 1024, -1, format).as_approximate_f64(),
            7340032.0 * 0.1
        );
    }
    // TestStringQuantityAsApproximateFloat64.
    for (input, want) in [
        ("2Ki", 2048.0),
        ("1.1Ki", 1126.4),
        ("1Mi", 1.048576e+06),
        ("2Gi", 2.147483648e+09),
    ] {
        assert_eq!(q(input).as_approximate_f64(), want, "{input}");
    }
    assert!(
        q("0e999").as_approximate_f64().is_nan(),
        "0 × +Inf, as in Go"
    );
    assert_eq!(q("1e999").as_approximate_f64(), f64::INFINITY);
    assert_eq!(
        q("1234567890123456789e999999").as_approximate_f64(),
        f64::INFINITY
    );
}

/// TestInt64AmountAsInt64 (value, scale, result); plus whole forms.
const AS_I64: &[(&str, Option<i64>)] = &[
    ("100", Some(100)),
    ("1k", Some(1000)),
    ("1Ki", Some(1024)),
    ("10Ti", Some(10 * (1 << 40))),
    ("100Ti", None),
    ("1Ei", None),
    ("1.5", None),
    ("1500m", None),
    ("1e19", None),
    ("-9e18", Some(-9_000_000_000_000_000_000)),
    ("1234567890123456789", None),
    ("0", Some(0)),
];

#[test]
fn as_i64_tables() {
    for (value, scale, want) in [
        (100, 0, Some(100)),
        (100, 1, Some(1000)),
        (100, -5, None),
        (100, 100, None),
    ] {
        assert_eq!(int(value, scale, Si).as_i64(), want, "{value}e{scale}");
    }
    for &(input, want) in AS_I64 {
        assert_eq!(q(input).as_i64(), want, "{input}");
    }
    // Which inputs kube keeps as big decimals.
    for (input, big) in [
        ("1Ki", false),
        ("10Ti", false),
        ("100Ti", true),
        ("1Pi", true),
        ("1.5Ki", true),
        ("0.1n", true),
        ("1n", false),
    ] {
        assert_eq!(q(input).is_dec(), big, "{input}");
    }
}

#[test]
fn amount_tables() {
    use amount::{Small, negative_scale_i64, positive_scale_i64};
    let s = |value, scale| Small { value, scale };
    let max = i64::MAX;
    let min = i64::MIN;
    // TestInt64AmountAdd: a + b, or None on overflow (commutative).
    for (a, b, want) in [
        (s(100, 1), s(10, 2), Some(s(200, 1))),
        (s(100, 1), s(1, 2), Some(s(110, 1))),
        (s(100, 1), s(1, 100), None),
        (s(-5, 2), s(50, 1), Some(s(0, 1))),
        (s(-5, 2), s(5, 2), Some(s(0, 2))),
        (s(max, -1), s(1, -1), None),
        (s(max, -1), s(0, -1), Some(s(max, -1))),
        (s(max / 10, 1), s(10, 0), None),
    ] {
        assert_eq!(a.checked_add(b), want, "{a:?} + {b:?}");
        assert_eq!(b.checked_add(a), want, "{b:?} + {a:?}");
    }
    // TestInt64AmountMul.
    for (a, factor, want) in [
        (s(100, 1), 1000, Some(s(100000, 1))),
        (s(100, -1), 1000, Some(s(100000, -1))),
        (s(1, 100), 10, None),
        (s(1, -100), 10, None),
        (s(-5, 2), 500, Some(s(-2500, 2))),
        (s(-5, -2), 500, Some(s(-2500, -2))),
        (s(0, 1), 0, Some(s(0, 1))),
        (s(max, -1), 10, None),
        (s(max, -1), 0, Some(s(0, 0))),
        (s(max, 0), 1, Some(s(max, 0))),
        (s(max / 10, 1), 10, None),
        (s(max, 0), -1, Some(s(-max, 0))),
        (s(min, 0), 1, Some(s(min, 0))),
        (s(min, 1), 0, Some(s(0, 0))),
        (s(min, 1), 1, None),
    ] {
        assert_eq!(a.checked_mul(factor), want, "{a:?} * {factor}");
    }
    // TestInt64AmountAsScaledInt64.
    for (a, scale, want) in [
        (s(100, 0), 5, (1, true)),
        (s(100, 1), 1, (100, true)),
        (s(100, 5), 2, (100000, true)),
        (s(876, 30), 4, (0, false)),
        (s(93, -1), 0, (10, true)),
        (s(100, -1), 0, (10, true)),
        (s(-1932, 2), 4, (-20, true)),
        (s(-1900, 2), 4, (-19, true)),
    ] {
        assert_eq!(a.scaled_i64(scale), want, "{a:?} at {scale}");
    }
    // TestInt64AsCanonicalString: value, scale, mantissa and exponent of the canonical form.
    for (value, scale, number, exponent) in [
        (100, 0, "100", ""),
        (100, 1, "1", "e3"),
        (100, -1, "10", ""),
        (10800, -10, "1080", "e-9"),
    ] {
        let (got_number, got_suffix) = int(value, scale, Exp).canonicalize();
        assert_eq!(
            (got_number.as_str(), got_suffix.as_str()),
            (number, exponent)
        );
    }
    // TestAmountSign.
    for (value, scale, want) in [
        (-50, 1, -1),
        (0, 1, 0),
        (300, 1, 1),
        (-50, -8, -1),
        (50, -8, 1),
        (0, -8, 0),
        (-50, 0, -1),
        (50, 0, 1),
        (0, 0, 0),
    ] {
        assert_eq!(int(value, scale, Si).sign(), want);
    }
    // TestDetectOverflowScale (the wrapped product on one-step overflow, 0 otherwise).
    assert_eq!(positive_scale_i64(max, 1), (max.wrapping_mul(10), false));
    assert_eq!(positive_scale_i64(min, 1), (0, false));
    assert_eq!(positive_scale_i64(max, 4), (0, false));
    assert_eq!(positive_scale_i64(0, 1000), (0, true));
    // TestNegativeScaleInt64.
    for (base, scale, want) in [
        (1234567, 0, (1234567, true)),
        (1234567, 1, (123457, false)),
        (1234567, 2, (12346, false)),
        (1234567, 3, (1235, false)),
        (1234567, 4, (124, false)),
        (-1234567, 0, (-1234567, true)),
        (-1234567, 1, (-123457, false)),
        (-1234567, 2, (-12346, false)),
        (-1234567, 3, (-1235, false)),
        (-1234567, 4, (-124, false)),
        (1000, 0, (1000, true)),
        (1000, 1, (100, true)),
        (1000, 2, (10, true)),
        (1000, 3, (1, true)),
        (1000, 4, (1, false)),
        (-1000, 0, (-1000, true)),
        (-1000, 1, (-100, true)),
        (-1000, 2, (-10, true)),
        (-1000, 3, (-1, true)),
        (-1000, 4, (-1, false)),
        (0, 0, (0, true)),
        (0, 1, (0, true)),
        (0, 2, (0, true)),
        (1000, -1, (1000, true)),
    ] {
        assert_eq!(negative_scale_i64(base, scale), want, "{base} {scale}");
    }
}

/// TestScaledValueInternal: unscaled (as digits), scale, new scale, result.
const SCALED_VALUE_INTERNAL: &[(&str, i32, i32, i64)] = &[
    ("1000", 0, 0, 1000),
    ("1000", 0, -3, 1),
    ("1000", 3, 0, 1),
    ("0", 3, 0, 0),
    ("999", 3, 0, 1),
    ("500", 3, 0, 1),
    ("499", 3, 0, 1),
    ("1", 3, 0, 1),
    ("9223372036854775806", 1, 0, (i64::MAX - 1) / 10 + 1),
    (
        "10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        100,
        0,
        1,
    ),
    ("0", 0, 3, 0),
    ("1", 0, 3, 1000),
    ("1", -3, 0, 1000),
    ("1000", -3, 2, 100000000),
    ("9223372036854775", 0, 3, (i64::MAX / 1000) * 1000),
];

#[test]
fn scaled_value_internal() {
    for &(digits, scale, new_scale, want) in SCALED_VALUE_INTERNAL {
        let dec = amount::Dec::new(digits.parse().unwrap(), scale);
        assert_eq!(
            dec.scaled_value(new_scale),
            want,
            "{digits} {scale} {new_scale}"
        );
    }
    // Kube's overflow and rounding behaviours, kept.
    assert_eq!(q("10E").value(), 0, "scaling by 10^19 overflows to 0");
    assert_eq!(q("1E").value(), 1_000_000_000_000_000_000);
    assert_eq!(
        q("-100n").milli_value(),
        -1,
        "small form rounds away from zero"
    );
    assert_eq!(
        q("-0.1n").milli_value(),
        1,
        "big form rounds toward +inf, from -1n"
    );
    assert_eq!(
        q("1234567890123456789e999999").value(),
        0,
        "low 64 bits of a multiple of 2^64"
    );
    assert_eq!(q("0e-2000000000").value(), 0);
}

#[test]
fn edge_values() {
    // Binary values are capped at 2^63 - 1; decimal ones are not.
    assert_eq!(q("9Ei"), q("9223372036854775807"));
    assert_eq!(q("9Ei").format(), Bin);
    assert!(q("1e100") > q("9Ei"));
    assert!(q("-1e100") < q("-9Ei"));
    assert!(q("1e999999999") > q("1e999999998"));
    assert!(q("1e-999999999") == q("1n"));
    assert_eq!(q("1000m"), q("1"));
    assert_eq!(q("1Ki").cmp_i64(1024), Ordering::Equal);
    // A zero takes the other side's format; CEL's `add(int)` adds a decimal-exponent value.
    let mut sum = q("0");
    sum.add(&Quantity::new(5, Exp));
    assert_eq!((sum.to_string().as_str(), sum.format()), ("5", Exp));
    let mut sum = q("1Ki");
    sum.add(&Quantity::new(1, Exp));
    assert_eq!(sum.to_string(), "1025");
    // Sums beyond i64 switch to the big form, and stop being integers for `as_i64`.
    let mut sum = q("4Ei");
    sum.add(&q("4Ei"));
    assert_eq!((sum.to_string().as_str(), sum.as_i64()), ("8Ei", None));
    let mut sum = q("4");
    sum.add(&q("9223372036854775807"));
    assert_eq!(
        (sum.to_string().as_str(), sum.as_i64()),
        ("9223372036854775811", None)
    );
    let mut sum = q("4Ei");
    sum.to_dec();
    sum.add(&q("4Ei"));
    sum.mul(128);
    assert_eq!(
        sum.to_string(),
        "1",
        "2^70 has no binary suffix; kube prints its multiple"
    );
    // Subtracting kube's i64::MIN adds it (kube negates with wrap-around).
    let mut most_negative = Quantity::new(i64::MIN / 2, Si);
    most_negative.add(&Quantity::new(i64::MIN / 2, Si));
    assert_eq!(most_negative.as_i64(), Some(i64::MIN));
    let mut difference = q("0");
    difference.sub(&most_negative);
    assert_eq!(difference.as_i64(), Some(i64::MIN));
    // Changing the format keeps a string kept from parsing, as in kube.
    let mut value = q("1Ki");
    value.set_format(Si);
    assert_eq!(value.to_string(), "1Ki");
    value.add(&q("0"));
    assert_eq!(value.to_string(), "1024");
}
