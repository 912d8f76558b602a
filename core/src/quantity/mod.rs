//! Kubernetes' `resource.Quantity` (k8s.io/apimachinery v0.32.1, `pkg/api/resource`):
//! fixed-point amounts written `<number><suffix>` (`500m`, `1.5Gi`, `12e6`), with kube's
//! parsing, rounding, canonical form, arithmetic and JSON form, for resource
//! requests/limits and for the CEL `quantity()` library.
//!
//! - Suffixes: binary (`Ki` … `Ei`, powers of 1024), decimal SI (`n`, `u`, `m`, none,
//!   `k`, `M`, `G`, `T`, `P`, `E`) and decimal exponents (`e3`, `E-6`). A parsed quantity
//!   remembers which kind it was written with ([`Format`]) and prints with the same kind.
//! - Parsing rounds any non-zero value up (away from zero) to whole nano units, and caps
//!   binary-suffixed values at `2^63 - 1`; decimal ones are unbounded.
//! - Printing ([`Display`](std::fmt::Display)) gives kube's canonical form: no fraction
//!   digits, the largest suffix that loses nothing (`1.5` → `1500m`, `1.5Gi` → `1536Mi`),
//!   falling back to decimal SI when a binary value is not a whole number or is under
//!   1024. A string that was already canonical when parsed is printed as it was written,
//!   as kube does (`+1` stays `+1`, `1E3` stays `1E3`).
//! - Values are kept as kube keeps them: a scaled `i64` while they fit (the only form
//!   [`Quantity::as_i64`] answers for, as kube's `AsInt64`), an arbitrary-precision decimal
//!   otherwise; comparison and equality are by value (`1000m == 1`).
//! - JSON: a string; a JSON number is accepted too.

mod amount;
mod parse;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use amount::{Amount, Small, cmp_amounts, go_pow10, negative_scale_i64};
use num_bigint::{BigInt, Sign};

/// Scale of nano units (10^-9), for [`Quantity::new_scaled`] and [`Quantity::scaled_value`].
pub const NANO: i32 = -9;
/// Scale of micro units (10^-6).
pub const MICRO: i32 = -6;
/// Scale of milli units (10^-3).
pub const MILLI: i32 = -3;
/// Scale of kilo units (10^3).
pub const KILO: i32 = 3;
/// Scale of mega units (10^6).
pub const MEGA: i32 = 6;
/// Scale of giga units (10^9).
pub const GIGA: i32 = 9;
/// Scale of tera units (10^12).
pub const TERA: i32 = 12;
/// Scale of peta units (10^15).
pub const PETA: i32 = 15;
/// Scale of exa units (10^18).
pub const EXA: i32 = 18;
/// The largest value whose [`Quantity::milli_value`] does not overflow (kube's
/// `MaxMilliValue`).
pub const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

/// How a quantity is written: which kind of suffix it uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// `12e6`: a decimal exponent. Kube's zero `Quantity` has an empty format, which
    /// prints as this one; so does [`Quantity::default`].
    #[default]
    DecimalExponent,
    /// `12Mi`: powers of 1024.
    BinarySi,
    /// `12M`: SI powers of 1000.
    DecimalSi,
}

impl Format {
    /// Kube's name for the format (`"DecimalExponent"`, `"BinarySI"`, `"DecimalSI"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::DecimalExponent => "DecimalExponent",
            Format::BinarySi => "BinarySI",
            Format::DecimalSi => "DecimalSI",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a string is not a quantity; the messages are kube's (`ErrFormatWrong`,
/// `ErrNumeric`, `ErrSuffix`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Not shaped like a quantity at all (including the empty string).
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    FormatWrong,
    /// The number before the suffix has no digits.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// An unknown suffix.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// A fixed-point amount, as Kubernetes' `resource.Quantity`. See the [module
/// docs](self).
///
/// `Default` is zero (printing `0`); equality and order are by value.
#[derive(Clone, Debug)]
pub struct Quantity {
    amount: Amount,
    format: Format,
    /// The string form, when known: the input of a parse that was already canonical.
    /// Printing uses it; changes to the value clear it (changes to the format do not, as
    /// in kube).
    cached: Option<Box<str>>,
}

impl Default for Quantity {
    fn default() -> Self {
        Quantity {
            amount: Amount::Small(Small::ZERO),
            format: Format::default(),
            cached: None,
        }
    }
}

impl Quantity {
    /// Parses a quantity (kube's `ParseQuantity`): `[+-]<number><suffix>`, no whitespace.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        parse::parse(s)
    }

    /// `value` in `format` (kube's `NewQuantity`).
    pub fn new(value: i64, format: Format) -> Quantity {
        Quantity::from_small(value, 0, format)
    }

    /// `value / 1000` in `format` (kube's `NewMilliQuantity`).
    pub fn new_milli(value: i64, format: Format) -> Quantity {
        Quantity::from_small(value, MILLI, format)
    }

    /// `value × 10^scale` in [`Format::DecimalSi`] (kube's `NewScaledQuantity`).
    pub fn new_scaled(value: i64, scale: i32) -> Quantity {
        Quantity::from_small(value, scale, Format::DecimalSi)
    }

    fn from_small(value: i64, scale: i32, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Small(Small { value, scale }),
            format,
            cached: None,
        }
    }

    /// The format the quantity prints with.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Sets the format. As when kube's `Format` field is assigned, a string form kept
    /// from parsing is still what prints.
    pub fn set_format(&mut self, format: Format) {
        self.format = format;
    }

    /// Sets the value to `value` (kube's `Set`), keeping the format.
    pub fn set(&mut self, value: i64) {
        self.set_scaled(value, 0);
    }

    /// Sets the value to `value / 1000` (kube's `SetMilli`).
    pub fn set_milli(&mut self, value: i64) {
        self.set_scaled(value, MILLI);
    }

    /// Sets the value to `value × 10^scale` (kube's `SetScaled`).
    pub fn set_scaled(&mut self, value: i64, scale: i32) {
        self.amount = Amount::Small(Small { value, scale });
        self.cached = None;
    }

    /// -1, 0 or 1 (kube's `Sign`).
    pub fn sign(&self) -> i32 {
        match self.amount.sign() {
            Sign::Minus => -1,
            Sign::NoSign => 0,
            Sign::Plus => 1,
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.amount.sign() == Sign::NoSign
    }

    /// Compares with an integer (kube's `CmpInt64`).
    pub fn cmp_i64(&self, other: i64) -> Ordering {
        cmp_amounts(
            &self.amount,
            &Amount::Small(Small {
                value: other,
                scale: 0,
            }),
        )
    }

    /// The value as an `i64` (kube's `AsInt64`): only for a value kept in the small form
    /// that is a whole number and fits. Values kube keeps as big decimals (more than 18
    /// digits, fractions of binary suffixes, `Pi`/`Ei` and large `Ti` suffixes, sums that
    /// overflowed, anything [`to_dec`](Self::to_dec) was called on) give `None`, as they
    /// do in kube (CEL's `isInteger()` is this).
    pub fn as_i64(&self) -> Option<i64> {
        match &self.amount {
            Amount::Small(small) => small.as_i64(),
            Amount::Dec(_) => None,
        }
    }

    /// The value as the nearest-ish `f64` (kube's `AsApproximateFloat64`: the unscaled
    /// value as a float times a power of ten, so not always the nearest float); ±infinity
    /// beyond the range of `f64`.
    pub fn as_approximate_f64(&self) -> f64 {
        match &self.amount {
            Amount::Small(small) => {
                let base = small.value as f64;
                if small.scale == 0 {
                    base
                } else {
                    base * go_pow10(small.scale.into())
                }
            }
            Amount::Dec(dec) => dec.approximate_f64(),
        }
    }

    /// The value rounded up to an integer (kube's `Value`; away from zero for the small
    /// form, toward +∞ for the big one, and overflowing as kube's does: check against
    /// [`MAX_MILLI_VALUE`] and the like first).
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// The value in thousandths, rounded up (kube's `MilliValue`; may overflow).
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(MILLI)
    }

    /// The value in units of `10^scale`, rounded up (kube's `ScaledValue`; may overflow).
    pub fn scaled_value(&self, scale: i32) -> i64 {
        match &self.amount {
            Amount::Small(small) => small.scaled_i64(scale).0,
            Amount::Dec(dec) => dec.scaled_value(scale.wrapping_neg()),
        }
    }

    /// Switches to the big-decimal form (kube's `ToDec`), after which
    /// [`as_i64`](Self::as_i64) gives `None`.
    pub fn to_dec(&mut self) -> &mut Self {
        if let Amount::Small(small) = self.amount {
            self.amount = Amount::Dec(small.to_dec());
        }
        self
    }

    /// Adds `other` (kube's `Add`). A zero quantity takes `other`'s format.
    pub fn add(&mut self, other: &Quantity) {
        self.cached = None;
        if let (Amount::Small(a), Amount::Small(b)) = (&mut self.amount, &other.amount) {
            if a.value == 0 {
                self.format = other.format;
            }
            if let Some(sum) = a.checked_add(*b) {
                *a = sum;
                return;
            }
        } else if self.is_zero() {
            self.format = other.format;
        }
        self.amount = Amount::Dec(self.amount.to_dec().add(&other.amount.to_dec()));
    }

    /// Subtracts `other` (kube's `Sub`). A zero quantity takes `other`'s format.
    pub fn sub(&mut self, other: &Quantity) {
        self.cached = None;
        if self.is_zero() {
            self.format = other.format;
        }
        if let (Amount::Small(a), Amount::Small(b)) = (&mut self.amount, &other.amount) {
            // Kube negates with wrap-around: subtracting `i64::MIN` adds it.
            let negated = Small {
                value: b.value.wrapping_neg(),
                scale: b.scale,
            };
            if let Some(difference) = a.checked_add(negated) {
                *a = difference;
                return;
            }
        }
        let mut negated = other.amount.to_dec();
        negated.neg();
        self.amount = Amount::Dec(self.amount.to_dec().add(&negated));
    }

    /// Multiplies by `factor` (kube's `Mul`); false when the result's unscaled value does
    /// not fit an `i64`.
    pub fn mul(&mut self, factor: i64) -> bool {
        self.cached = None;
        if let Amount::Small(small) = &mut self.amount
            && let Some(product) = small.checked_mul(factor)
        {
            *small = product;
            return true;
        }
        let product = self.amount.to_dec().mul_i64(factor);
        let fits = product.unscaled_fits_i64();
        self.amount = Amount::Dec(product);
        fits
    }

    /// Negates the value (kube's `Neg`; `i64::MIN` in the small form stays as it is).
    pub fn neg(&mut self) {
        self.cached = None;
        match &mut self.amount {
            Amount::Small(small) => small.value = small.value.wrapping_neg(),
            Amount::Dec(dec) => dec.neg(),
        }
    }

    /// Rounds away from zero to a multiple of `10^scale` (kube's `RoundUp`); false when
    /// that lost precision.
    pub fn round_up(&mut self, scale: i32) -> bool {
        match &mut self.amount {
            Amount::Dec(dec) => {
                self.cached = None;
                let (rounded, exact) = dec.round_up(scale.wrapping_neg());
                *dec = rounded;
                exact
            }
            Amount::Small(small) => {
                if small.scale >= scale {
                    return true;
                }
                self.cached = None;
                let (rounded, exact) = small.round_up(scale);
                *small = rounded;
                exact
            }
        }
    }

    /// The canonical string form (kube's `CanonicalizeBytes`), ignoring a string kept
    /// from parsing: the number and the suffix.
    pub fn canonicalize(&self) -> (String, String) {
        if self.is_zero() {
            return ("0".to_owned(), String::new());
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            if self.cmp_i64(-1024).is_gt() && self.cmp_i64(1024).is_lt() {
                format = Format::DecimalSi;
            } else if let Some(whole) = self.whole_value() {
                return binary_form(whole);
            } else {
                format = Format::DecimalSi;
            }
        }
        let (m, e) = self.amount.value_parts();
        let digits = m.to_string();
        let trimmed = digits.trim_end_matches('0');
        let mut exponent = e + (digits.len() - trimmed.len()) as i64;
        let mut number = trimmed.to_owned();
        let extra = exponent.rem_euclid(3);
        number.extend(std::iter::repeat_n('0', extra as usize));
        exponent -= extra;
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{}", exponent as i32),
            _ => decimal_si_suffix(exponent).to_owned(),
        };
        (number, suffix)
    }

    /// The value when it is a whole number (for the binary form).
    fn whole_value(&self) -> Option<BigInt> {
        match &self.amount {
            Amount::Small(small) if small.scale < 0 => {
                let (value, exact) = negative_scale_i64(small.value, -i64::from(small.scale));
                exact.then(|| BigInt::from(value))
            }
            _ => {
                let (m, e) = self.amount.value_parts();
                if e >= 0 {
                    Some(m * BigInt::from(amount::pow10_big(e as u64)))
                } else {
                    let (whole, inexact) = amount::div_pow10_trunc(&m, e.unsigned_abs());
                    (!inexact).then_some(whole)
                }
            }
        }
    }
}

/// The binary form of a whole number: the fewest digits times a power of 1024 that has
/// a suffix (2^70 and above have none, and print as their multiple of it, as in kube).
fn binary_form(whole: BigInt) -> (String, String) {
    let steps = whole.magnitude().trailing_zeros().unwrap_or(0) / 10;
    let number = BigInt::from_biguint(whole.sign(), whole.magnitude() >> (steps * 10));
    let suffix = match steps {
        1 => "Ki",
        2 => "Mi",
        3 => "Gi",
        4 => "Ti",
        5 => "Pi",
        6 => "Ei",
        _ => "",
    };
    (number.to_string(), suffix.to_owned())
}

/// The SI suffix of a power of ten; none for powers without one (kube prints just the
/// mantissa then: 10^21 in decimal SI prints as `1`).
fn decimal_si_suffix(exponent: i64) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    }
}

impl fmt::Display for Quantity {
    /// The string kept from parsing, or the canonical form (kube's `String`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(cached) = &self.cached {
            return f.pad(cached);
        }
        let (mut number, suffix) = self.canonicalize();
        number.push_str(&suffix);
        f.pad(&number)
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// By value (kube's `Cmp`).
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_amounts(&self.amount, &other.amount)
    }
}

impl std::ops::AddAssign<&Quantity> for Quantity {
    fn add_assign(&mut self, other: &Quantity) {
        Quantity::add(self, other);
    }
}

impl std::ops::SubAssign<&Quantity> for Quantity {
    fn sub_assign(&mut self, other: &Quantity) {
        Quantity::sub(self, other);
    }
}

impl std::ops::Add<&Quantity> for Quantity {
    type Output = Quantity;

    fn add(mut self, other: &Quantity) -> Quantity {
        Quantity::add(&mut self, other);
        self
    }
}

impl std::ops::Sub<&Quantity> for Quantity {
    type Output = Quantity;

    fn sub(mut self, other: &Quantity) -> Quantity {
        Quantity::sub(&mut self, other);
        self
    }
}

impl std::ops::Neg for Quantity {
    type Output = Quantity;

    fn neg(mut self) -> Quantity {
        Quantity::neg(&mut self);
        self
    }
}

impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Quantity {
    /// A string (surrounding whitespace ignored, as kube does), a number, or `null` (zero).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

struct QuantityVisitor;

impl QuantityVisitor {
    fn parse<E: serde::de::Error>(text: &str) -> Result<Quantity, E> {
        Quantity::parse(text.trim()).map_err(E::custom)
    }
}

impl serde::de::Visitor<'_> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
        Self::parse(v)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
        Self::parse(&v.to_string())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
        Self::parse(&v.to_string())
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Quantity, E> {
        Self::parse(&v.to_string())
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Quantity, E> {
        Self::parse(&v.to_string())
    }

    /// A float has lost the number's text: it is read from its shortest decimal form
    /// (so `1e3` reads as `1000`, in decimal SI, where kube keeps the exponent).
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
        Self::parse(&v.to_string())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::default())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::default())
    }
}

#[cfg(test)]
impl Quantity {
    /// Kube's tests' `decQuantity`: `unscaled × 10^exponent` as a big decimal.
    fn test_dec(unscaled: i64, exponent: i32, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Dec(amount::Dec::new(
                BigInt::from(unscaled),
                exponent.wrapping_neg(),
            )),
            format,
            cached: None,
        }
    }

    /// Kube's tests' `intQuantity`: `value × 10^scale` in the small form.
    fn test_int(value: i64, scale: i32, format: Format) -> Quantity {
        Quantity::from_small(value, scale, format)
    }

    fn is_dec(&self) -> bool {
        matches!(self.amount, Amount::Dec(_))
    }

    fn cached(&self) -> Option<&str> {
        self.cached.as_deref()
    }
}
