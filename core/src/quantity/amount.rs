//! The two forms a quantity's amount takes, as kube keeps them: a scaled `i64` while it
//! fits, a big decimal otherwise. Which form a value is in is observable (`as_i64` only
//! answers for the small form; `as_approximate_f64` and `scaled_value` read the exact
//! digits of the big form), so these helpers keep kube's forms and its overflow rules.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{ToPrimitive, Zero};

/// The scale every parsed value is rounded up to: nano units.
pub(super) const NANO: i32 = -9;

/// Trailing zeros of a big amount's unscaled value left implicit rather than written
/// out, beyond this many (see [`Dec::pad`]).
const PAD_KEEP: u64 = 64;

/// `value × 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Small {
    pub(super) value: i64,
    pub(super) scale: i32,
}

/// `unscaled × 10^pad × 10^(−scale)`: kube's big decimal (`inf.Dec`, whose scale counts
/// digits after the point), whose unscaled value is `unscaled × 10^pad`. The padding is
/// zeros kube writes out in full and we leave implicit when there are many of them
/// (rounding `1234567890123456789e999999` to nano units appends a million zeros).
#[derive(Clone, Debug)]
pub(super) struct Dec {
    pub(super) unscaled: BigInt,
    pub(super) scale: i32,
    pub(super) pad: u64,
}

/// A quantity's amount.
#[derive(Clone, Debug)]
pub(super) enum Amount {
    Small(Small),
    Dec(Dec),
}

pub(super) fn pow10_big(exp: u64) -> BigUint {
    let exp = u32::try_from(exp).expect("a power of ten with more than 2^32 digits");
    BigUint::from(10u8).pow(exp)
}

/// An upper bound of the number of decimal digits of `x`.
fn digits_upper(x: &BigUint) -> u64 {
    x.bits() * 30103 / 100_000 + 1
}

/// The low 64 bits of `x`'s magnitude, negated when `x` is negative: Go's `big.Int.Int64`.
pub(super) fn low64(x: &BigInt) -> i64 {
    let low = x.magnitude().iter_u64_digits().next().unwrap_or(0) as i64;
    if x.sign() == Sign::Minus {
        low.wrapping_neg()
    } else {
        low
    }
}

/// `10^exp mod 2^64`.
fn pow10_wrapping(exp: u64) -> i64 {
    if exp >= 64 {
        0
    } else {
        10i64.wrapping_pow(exp as u32)
    }
}

/// `x / 10^exp` truncated toward zero, and whether a remainder was dropped.
pub(super) fn div_pow10_trunc(x: &BigInt, exp: u64) -> (BigInt, bool) {
    if exp == 0 {
        return (x.clone(), false);
    }
    if exp >= digits_upper(x.magnitude()) {
        return (BigInt::zero(), !x.is_zero());
    }
    let divisor = BigInt::from(pow10_big(exp));
    let remainder = x % &divisor;
    (x / divisor, !remainder.is_zero())
}

/// `x / 10^exp` rounded toward −∞, and whether a remainder was dropped.
fn div_pow10_floor(x: &BigInt, exp: u64) -> (BigInt, bool) {
    let (quotient, inexact) = div_pow10_trunc(x, exp);
    if inexact && x.sign() == Sign::Minus {
        (quotient - 1, true)
    } else {
        (quotient, inexact)
    }
}

/// `x` with `x`'s sign added to it when `inexact`: rounding away from zero.
fn away_from_zero(x: BigInt, sign: Sign, inexact: bool) -> BigInt {
    match (inexact, sign) {
        (true, Sign::Plus) => x + 1,
        (true, Sign::Minus) => x - 1,
        _ => x,
    }
}

/// `base × 10^scale` by kube's rules: on overflow, false with the wrapped product (one
/// step of 10, 100, 1000, 10^6 or 10^9) or 0 (longer steps); `base` itself for scales
/// not above 0.
pub(super) fn positive_scale_i64(base: i64, scale: i64) -> (i64, bool) {
    let step = match scale {
        ..=0 => return (base, true),
        1 => 10,
        2 => 100,
        3 => 1000,
        6 => 1_000_000,
        9 => 1_000_000_000,
        _ => {
            if base == 0 {
                return (0, true);
            }
            return match u32::try_from(scale).ok().and_then(|s| 10i64.checked_pow(s)) {
                Some(factor) => base.checked_mul(factor).map_or((0, false), |v| (v, true)),
                None => (0, false),
            };
        }
    };
    match base.checked_mul(step) {
        Some(product) => (product, true),
        None if base == i64::MIN => (0, false),
        None => (base.wrapping_mul(step), false),
    }
}

/// `base / 10^scale`, rounded away from zero, and whether that was exact; `base` itself
/// for scales not above 0.
pub(super) fn negative_scale_i64(base: i64, scale: i64) -> (i64, bool) {
    if scale <= 0 {
        return (base, true);
    }
    let (quotient, remainder) = match u32::try_from(scale)
        .ok()
        .and_then(|s| 10i128.checked_pow(s))
    {
        Some(divisor) => ((base as i128 / divisor) as i64, base as i128 % divisor),
        None => (0, base as i128),
    };
    if remainder == 0 {
        (quotient, true)
    } else {
        (quotient + base.signum(), false)
    }
}

impl Small {
    pub(super) const ZERO: Small = Small { value: 0, scale: 0 };

    pub(super) fn to_dec(self) -> Dec {
        Dec {
            unscaled: BigInt::from(self.value),
            scale: self.scale.wrapping_neg(),
            pad: 0,
        }
    }

    /// The value as an integer when that is exact and fits (`AsInt64`).
    pub(super) fn as_i64(self) -> Option<i64> {
        match self.scale.cmp(&0) {
            Ordering::Equal => Some(self.value),
            Ordering::Less => None,
            Ordering::Greater => match positive_scale_i64(self.value, self.scale.into()) {
                (value, true) => Some(value),
                _ => None,
            },
        }
    }

    /// The value in units of `10^scale`, rounded away from zero; may overflow as kube's
    /// does (`AsScaledInt64`).
    pub(super) fn scaled_i64(self, scale: i32) -> (i64, bool) {
        let diff = i64::from(self.scale) - i64::from(scale);
        if diff < 0 {
            (negative_scale_i64(self.value, -diff).0, true)
        } else {
            positive_scale_i64(self.value, diff)
        }
    }

    /// The sum, or `None` when it does not fit this form.
    pub(super) fn checked_add(self, other: Small) -> Option<Small> {
        if other.value == 0 {
            return Some(self);
        }
        if self.value == 0 {
            return Some(other);
        }
        let (scale, a, b) = match self.scale.cmp(&other.scale) {
            Ordering::Equal => (self.scale, self.value, other.value),
            Ordering::Greater => {
                let diff = i64::from(self.scale) - i64::from(other.scale);
                match positive_scale_i64(self.value, diff) {
                    (a, true) => (other.scale, a, other.value),
                    _ => return None,
                }
            }
            Ordering::Less => {
                let diff = i64::from(other.scale) - i64::from(self.scale);
                match positive_scale_i64(other.value, diff) {
                    (b, true) => (self.scale, self.value, b),
                    _ => return None,
                }
            }
        };
        Some(Small {
            value: a.checked_add(b)?,
            scale,
        })
    }

    /// The product, or `None` when kube's rules say it does not fit this form.
    pub(super) fn checked_mul(self, factor: i64) -> Option<Small> {
        if self.value == 0 {
            return Some(self);
        }
        if factor == 0 {
            return Some(Small::ZERO);
        }
        let value = self.value.checked_mul(factor)?;
        let fits = match self.scale.cmp(&0) {
            Ordering::Equal => true,
            Ordering::Greater => positive_scale_i64(value, self.scale.into()).1,
            Ordering::Less => negative_scale_i64(value, -i64::from(self.scale)).1,
        };
        fits.then_some(Small {
            value,
            scale: self.scale,
        })
    }

    /// Rounded away from zero to at least `scale` (`AsScale`), and whether that was exact.
    pub(super) fn round_up(self, scale: i32) -> (Small, bool) {
        if self.scale >= scale {
            return (self, true);
        }
        let (value, exact) =
            negative_scale_i64(self.value, i64::from(scale) - i64::from(self.scale));
        (Small { value, scale }, exact)
    }
}

impl Dec {
    pub(super) fn new(unscaled: BigInt, scale: i32) -> Dec {
        Dec {
            unscaled,
            scale,
            pad: 0,
        }
    }

    /// Writes out the padding unless it is long (or the value is zero).
    fn normalized(mut self) -> Dec {
        if self.unscaled.is_zero() {
            self.pad = 0;
        } else if self.pad > 0 && self.pad <= PAD_KEEP {
            self.unscaled *= BigInt::from(pow10_big(self.pad));
            self.pad = 0;
        }
        self
    }

    pub(super) fn sign(&self) -> Sign {
        self.unscaled.sign()
    }

    pub(super) fn is_zero(&self) -> bool {
        self.unscaled.is_zero()
    }

    pub(super) fn neg(&mut self) {
        self.unscaled = -std::mem::take(&mut self.unscaled);
    }

    /// The same value at scale `scale` (not below the current one).
    /// (The shift is 32-bit as in kube: past 2^31 it wraps, and divides.)
    fn upscaled(&self, scale: i32) -> (BigInt, u64) {
        let shift = scale.wrapping_sub(self.scale);
        match u64::try_from(shift) {
            Ok(shift) => (self.unscaled.clone(), self.pad + shift),
            Err(_) => {
                let drop = shift.unsigned_abs().into();
                match self.pad.checked_sub(drop) {
                    Some(pad) => (self.unscaled.clone(), pad),
                    None => (div_pow10_trunc(&self.unscaled, drop - self.pad).0, 0),
                }
            }
        }
    }

    /// The sum, at the larger of the two scales (as kube's decimal adds).
    pub(super) fn add(&self, other: &Dec) -> Dec {
        let scale = self.scale.max(other.scale);
        let (a, pad_a) = self.upscaled(scale);
        let (b, pad_b) = other.upscaled(scale);
        if a.is_zero() {
            return Dec {
                unscaled: b,
                scale,
                pad: pad_b,
            }
            .normalized();
        }
        if b.is_zero() {
            return Dec {
                unscaled: a,
                scale,
                pad: pad_a,
            }
            .normalized();
        }
        let pad = pad_a.min(pad_b);
        let unscaled =
            a * BigInt::from(pow10_big(pad_a - pad)) + b * BigInt::from(pow10_big(pad_b - pad));
        Dec {
            unscaled,
            scale,
            pad,
        }
        .normalized()
    }

    pub(super) fn mul_i64(&self, factor: i64) -> Dec {
        Dec {
            unscaled: &self.unscaled * factor,
            scale: self.scale,
            pad: self.pad,
        }
        .normalized()
    }

    /// Whether kube's unscaled value fits an `i64`.
    pub(super) fn unscaled_fits_i64(&self) -> bool {
        if self.unscaled.is_zero() {
            return true;
        }
        self.pad < 19
            && (&self.unscaled * BigInt::from(pow10_big(self.pad)))
                .to_i64()
                .is_some()
    }

    /// Rounded away from zero to scale `scale` (kube's decimal `Round` with `RoundUp`),
    /// and whether that was exact. The result's scale is `scale`, above or below.
    /// (The shift is 32-bit as in kube: past 2^31 it wraps.)
    pub(super) fn round_up(&self, scale: i32) -> (Dec, bool) {
        let shift = i64::from(scale.wrapping_sub(self.scale));
        if shift >= 0 {
            let rounded = Dec {
                unscaled: self.unscaled.clone(),
                scale,
                pad: self.pad + shift as u64,
            };
            return (rounded.normalized(), true);
        }
        let drop = shift.unsigned_abs();
        if self.pad >= drop {
            let rounded = Dec {
                unscaled: self.unscaled.clone(),
                scale,
                pad: self.pad - drop,
            };
            return (rounded.normalized(), true);
        }
        let (quotient, inexact) = div_pow10_trunc(&self.unscaled, drop - self.pad);
        let unscaled = away_from_zero(quotient, self.unscaled.sign(), inexact);
        (Dec::new(unscaled, scale), !inexact)
    }

    /// `(m, e)` with the value `m × 10^e`.
    pub(super) fn value_parts(&self) -> (&BigInt, i64) {
        (&self.unscaled, self.pad as i64 - i64::from(self.scale))
    }

    /// Go's `Int64()` of kube's unscaled value.
    fn unscaled_low64(&self) -> i64 {
        if self.unscaled.is_zero() {
            return 0;
        }
        low64(&self.unscaled).wrapping_mul(pow10_wrapping(self.pad))
    }

    /// Kube's unscaled value as the nearest `f64`.
    fn unscaled_f64(&self) -> f64 {
        match self.unscaled.sign() {
            Sign::NoSign => 0.0,
            sign if self.pad > 330 => {
                if sign == Sign::Minus {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            _ => (&self.unscaled * BigInt::from(pow10_big(self.pad)))
                .to_f64()
                .unwrap_or(f64::NAN),
        }
    }

    /// `AsApproximateFloat64`: the unscaled value as a float times `10^-scale`.
    pub(super) fn approximate_f64(&self) -> f64 {
        let base = self.unscaled_f64();
        let exponent = i64::from(self.scale.wrapping_neg());
        if exponent == 0 {
            base
        } else {
            base * go_pow10(exponent)
        }
    }

    /// `ScaledValue` of the big form: the value in units of `10^new_scale`, rounded up
    /// (toward +∞), with kube's overflow behaviour (the low 64 bits).
    pub(super) fn scaled_value(&self, new_scale: i32) -> i64 {
        let dif = i64::from(self.scale) - i64::from(new_scale);
        let low = self.unscaled_low64();
        if dif == 0 {
            return low;
        }
        if dif < 0 {
            return low.wrapping_mul(go_f64_to_i64(go_pow10(-dif)));
        }
        let below_max = match self.unscaled.sign() {
            Sign::Minus | Sign::NoSign => true,
            Sign::Plus => {
                self.pad < 19
                    && &self.unscaled * BigInt::from(pow10_big(self.pad)) < BigInt::from(i64::MAX)
            }
        };
        if below_max && dif < 19 {
            let divisor = 10i64.pow(dif as u32);
            let quotient = low / divisor;
            return if low % divisor != 0 {
                quotient + 1
            } else {
                quotient
            };
        }
        let dif = dif as u64;
        if self.pad >= dif {
            return low64(&self.unscaled).wrapping_mul(pow10_wrapping(self.pad - dif));
        }
        let (quotient, inexact) = div_pow10_floor(&self.unscaled, dif - self.pad);
        low64(&quotient).wrapping_add(i64::from(inexact))
    }
}

/// Go's `math.Pow10`, which builds the power from two table entries (so it rounds as Go
/// does): `+Inf` above 10^308, 0 below 10^-323.
pub(super) fn go_pow10(n: i64) -> f64 {
    const SMALL: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    if (0..=308).contains(&n) {
        let n = n as usize;
        POS32[n / 32] * SMALL[n % 32]
    } else if (-323..=0).contains(&n) {
        let n = n.unsigned_abs() as usize;
        NEG32[n / 32] / SMALL[n % 32]
    } else if n > 0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Go's `int64(f)` on amd64: out-of-range values and NaN give `i64::MIN`.
fn go_f64_to_i64(f: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

impl Amount {
    /// `(m, e)` with the value `m × 10^e`.
    pub(super) fn value_parts(&self) -> (BigInt, i64) {
        match self {
            Amount::Small(small) => (BigInt::from(small.value), i64::from(small.scale)),
            Amount::Dec(dec) => {
                let (m, e) = dec.value_parts();
                (m.clone(), e)
            }
        }
    }

    pub(super) fn sign(&self) -> Sign {
        match self {
            Amount::Small(small) => match small.value.signum() {
                1 => Sign::Plus,
                -1 => Sign::Minus,
                _ => Sign::NoSign,
            },
            Amount::Dec(dec) => dec.sign(),
        }
    }

    pub(super) fn to_dec(&self) -> Dec {
        match self {
            Amount::Small(small) => small.to_dec(),
            Amount::Dec(dec) => dec.clone(),
        }
    }
}

/// Compares `a × 10^ea` with `b × 10^eb`, without writing out large powers of ten.
pub(super) fn cmp_values(a: &BigInt, ea: i64, b: &BigInt, eb: i64) -> Ordering {
    let rank = |s: Sign| match s {
        Sign::Minus => -1,
        Sign::NoSign => 0,
        Sign::Plus => 1,
    };
    match rank(a.sign()).cmp(&rank(b.sign())) {
        Ordering::Equal => {}
        other => return other,
    }
    let magnitudes = match a.sign() {
        Sign::NoSign => return Ordering::Equal,
        _ => cmp_magnitudes(a.magnitude(), ea, b.magnitude(), eb),
    };
    if a.sign() == Sign::Minus {
        magnitudes.reverse()
    } else {
        magnitudes
    }
}

fn cmp_magnitudes(a: &BigUint, ea: i64, b: &BigUint, eb: i64) -> Ordering {
    if ea >= eb {
        let shift = ea.abs_diff(eb);
        if shift >= digits_upper(b) {
            return Ordering::Greater;
        }
        (a * pow10_big(shift)).cmp(b)
    } else {
        cmp_magnitudes(b, eb, a, ea).reverse()
    }
}

/// Compares two amounts by value.
pub(super) fn cmp_amounts(a: &Amount, b: &Amount) -> Ordering {
    if let (Amount::Small(x), Amount::Small(y)) = (a, b) {
        let diff = i64::from(x.scale) - i64::from(y.scale);
        if (0..=18).contains(&diff) {
            return (i128::from(x.value) * 10i128.pow(diff as u32)).cmp(&i128::from(y.value));
        }
        if (-18..0).contains(&diff) {
            return i128::from(x.value)
                .cmp(&(i128::from(y.value) * 10i128.pow(diff.unsigned_abs() as u32)));
        }
    }
    let (am, ae) = a.value_parts();
    let (bm, be) = b.value_parts();
    cmp_values(&am, ae, &bm, be)
}
