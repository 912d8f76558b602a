//! Reading a quantity from its string form, as kube's `ParseQuantity` reads it.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;

use super::amount::{Amount, Dec, NANO, Small};
use super::{Format, Quantity, QuantityError};

/// The pieces of a quantity string: its sign, the numeric text (sign, digits, point),
/// the integer digits without leading zeros (`"0"` when none), the fraction digits and
/// the suffix.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pieces<'a> {
    pub(super) positive: bool,
    pub(super) value: &'a str,
    pub(super) num: &'a str,
    pub(super) denom: &'a str,
    pub(super) suffix: &'a str,
}

/// The bytes a suffix may start with (before an exponent's sign and digits).
const SUFFIX_LETTERS: &[u8] = b"eEinumkKMGTP";

/// Splits `s` into its pieces, with kube's scanner: permissive about the suffix (checked
/// later), strict that nothing but an optional sign and digits follow its letters.
pub(super) fn split(s: &str) -> Result<Pieces<'_>, QuantityError> {
    let bytes = s.as_bytes();
    let end = bytes.len();
    let digits_from = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut pieces = Pieces {
        positive: true,
        value: "0",
        num: "0",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match bytes.first() {
        Some(b'-') => {
            pieces.positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    pos += bytes[pos..].iter().take_while(|&&b| b == b'0').count();
    if pos == end {
        return Ok(pieces);
    }
    let num_end = digits_from(pos);
    if num_end == end {
        pieces.value = s;
        pieces.num = &s[pos..];
        return Ok(pieces);
    }
    if num_end > pos {
        pieces.num = &s[pos..num_end];
    }
    pos = num_end;
    if bytes[pos] == b'.' {
        let denom_end = digits_from(pos + 1);
        pieces.denom = &s[pos + 1..denom_end];
        if denom_end == end {
            pieces.value = s;
            return Ok(pieces);
        }
        pos = denom_end;
    }
    pieces.value = &s[..pos];
    let suffix_start = pos;
    pos += bytes[pos..]
        .iter()
        .take_while(|b| SUFFIX_LETTERS.contains(b))
        .count();
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    if pos == end || digits_from(pos) == end {
        pieces.suffix = &s[suffix_start..];
        return Ok(pieces);
    }
    Err(QuantityError::FormatWrong)
}

/// What a suffix means: `(base, exponent, format)`, the value being multiplied by
/// `base^exponent`. Kube's suffix tables (suffix.go).
pub(super) fn interpret_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSi));
    let binary = |exponent| Some((2, exponent, Format::BinarySi));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix
                .strip_prefix(['e', 'E'])
                .filter(|rest| !rest.is_empty())?;
            // Go parses an int64 and keeps its low 32 bits.
            let exponent: i64 = exponent.parse().ok()?;
            Some((10, exponent as i32, Format::DecimalExponent))
        }
    }
}

/// Reads a decimal number (`[+-]digits[.digits]`, at least one digit) as kube's big
/// decimal does: the unscaled digits and the count of digits after the point.
fn parse_decimal(text: &str) -> Option<(BigInt, i32)> {
    let (sign, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (Sign::Minus, &text[1..]),
        Some(b'+') => (Sign::Plus, &text[1..]),
        _ => (Sign::Plus, text),
    };
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = [int_part, frac_part].concat();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = BigUint::parse_bytes(digits.as_bytes(), 10)?;
    Some((
        BigInt::from_biguint(sign, magnitude),
        i32::try_from(frac_part.len()).ok()?,
    ))
}

/// `ParseQuantity`.
pub(super) fn parse(s: &str) -> Result<Quantity, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::FormatWrong);
    }
    if s == "0" {
        return Ok(Quantity {
            amount: Amount::Small(Small::ZERO),
            format: Format::DecimalSi,
            cached: Some(s.into()),
        });
    }
    let pieces = split(s)?;
    let (base, exponent, format) = interpret_suffix(pieces.suffix).ok_or(QuantityError::Suffix)?;
    if let Some(quantity) = parse_small(s, &pieces, exponent, format) {
        return Ok(quantity);
    }

    let (mut unscaled, mut scale) = parse_decimal(pieces.value).ok_or(QuantityError::Numeric)?;
    if base == 10 {
        scale = scale.wrapping_add(exponent.wrapping_neg());
    } else {
        unscaled <<= exponent as usize;
    }
    let negative = unscaled.sign() == Sign::Minus;
    if negative {
        unscaled = -unscaled;
    }
    let mut dec = Dec::new(unscaled, scale);
    // Anything not zero is rounded up to a whole number of nano units: asking for a tiny
    // amount of something gets some of it.
    if !dec.is_zero() {
        dec = dec.round_up(-NANO).0;
    }
    let mut format = format;
    if format == Format::BinarySi {
        let (m, e) = dec.value_parts();
        if super::amount::cmp_values(m, e, &BigInt::from(i64::MAX), 0).is_gt() {
            dec = Dec::new(BigInt::from(i64::MAX), 0);
        }
        let (m, e) = dec.value_parts();
        if !m.is_zero() && super::amount::cmp_values(m, e, &BigInt::from(1), 0).is_lt() {
            format = Format::DecimalSi;
        }
    }
    if negative {
        dec.neg();
    }
    Ok(Quantity {
        amount: Amount::Dec(dec),
        format,
        cached: None,
    })
}

/// The fast path: up to 18 significant digits at a scale of nano or above give a scaled
/// `i64`, keeping the input as the string form when it is already canonical.
fn parse_small(s: &str, pieces: &Pieces<'_>, exponent: i32, format: Format) -> Option<Quantity> {
    let digits = (pieces.num.len() + pieces.denom.len()) as i64;
    let (precision, scale, mantissa) = match format {
        Format::BinarySi if exponent >= 0 && pieces.denom.is_empty() => {
            // 2^10 has about three decimal digits.
            (
                15 - pieces.num.len() as i64 - i64::from(exponent) * 3 / 10 - 1,
                0,
                1i64 << exponent,
            )
        }
        Format::BinarySi => return None,
        _ => (18 - digits, exponent, 1),
    };
    if precision < 0 {
        return None;
    }
    let scale = scale.wrapping_sub(pieces.denom.len() as i32);
    if scale < NANO {
        return None;
    }
    let shifted = [pieces.num, pieces.denom].concat();
    let value: i64 = shifted.parse().ok()?;
    let mut result = value.checked_mul(mantissa)?;
    if !pieces.positive {
        result = -result;
    }
    let canonical = match format {
        Format::BinarySi => exponent % 10 == 0 && value & 7 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    Some(Quantity {
        amount: Amount::Small(Small {
            value: result,
            scale,
        }),
        format,
        cached: canonical.then(|| s.into()),
    })
}
