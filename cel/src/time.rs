//! CEL's durations and timestamps: Go's duration syntax (`1h30m`, as cel-go parses it),
//! RFC 3339 timestamps, the ranges CEL allows (years 1 to 9999; ±10000 years of
//! duration), and calendar fields in UTC or at a fixed offset.

use std::fmt;

/// Nanoseconds in a second.
const NANOS: i128 = 1_000_000_000;
/// The first second CEL timestamps allow (0001-01-01T00:00:00Z).
const MIN_SECONDS: i128 = -62_135_596_800;
/// The last second CEL timestamps allow (9999-12-31T23:59:59Z).
const MAX_SECONDS: i128 = 253_402_300_799;
/// The longest duration, in seconds (10000 years, as protobuf's Duration allows).
const MAX_DURATION_SECONDS: i128 = 315_576_000_000;

/// A signed span of time, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub i128);

/// A point in time, in nanoseconds since the Unix epoch, and the offset from UTC (in
/// seconds) it was written with, which converting it to a string keeps (as Go's
/// `time.Time` keeps its location). Equal and ordered by the point alone.
#[derive(Clone, Copy, Debug)]
pub struct Timestamp(pub i128, pub i32);

impl PartialEq for Timestamp {
    fn eq(&self, other: &Timestamp) -> bool {
        self.0 == other.0
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Timestamp) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Timestamp) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl Duration {
    /// A duration, if within CEL's range.
    pub fn checked(nanos: i128) -> Option<Duration> {
        (nanos.abs() <= MAX_DURATION_SECONDS * NANOS).then_some(Duration(nanos))
    }

    /// Parses Go's duration syntax: `[-+]` then one or more `<number><unit>`, units `ns`,
    /// `us` (`µs`), `ms`, `s`, `m`, `h`; or `0`.
    pub fn parse(text: &str) -> Result<Duration, String> {
        let invalid = || format!("time: invalid duration \"{text}\"");
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if rest == "0" {
            return Ok(Duration(0));
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: i128 = 0;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap_or(rest.len());
            let number = &rest[..digits];
            if number.is_empty() || number == "." {
                return Err(invalid());
            }
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let unit = match &rest[..unit_len] {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => NANOS,
                "m" => 60 * NANOS,
                "h" => 3600 * NANOS,
                "" => return Err(format!("time: missing unit in duration \"{text}\"")),
                other => {
                    return Err(format!(
                        "time: unknown unit \"{other}\" in duration \"{text}\""
                    ));
                }
            };
            rest = &rest[unit_len..];
            let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
            let whole: i128 = if whole.is_empty() {
                0
            } else {
                whole.parse().map_err(|_| invalid())?
            };
            let mut value = whole.checked_mul(unit).ok_or_else(invalid)?;
            let mut scale = unit;
            for digit in fraction.bytes() {
                scale /= 10;
                value += (digit - b'0') as i128 * scale;
            }
            total = total
                .checked_add(value)
                .filter(|t| *t <= i64::MAX as i128)
                .ok_or_else(invalid)?;
        }
        Ok(Duration(if negative { -total } else { total }))
    }

    /// Whole hours, minutes, seconds or milliseconds in it, truncated.
    pub fn in_units(self, unit_nanos: i128) -> i64 {
        (self.0 / unit_nanos) as i64
    }
}

impl fmt::Display for Duration {
    /// As cel-go converts a duration to a string: seconds with a fraction, then `s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.0 as f64 / NANOS as f64;
        write!(f, "{seconds}s")
    }
}

impl Timestamp {
    /// A timestamp, if within CEL's range.
    pub fn checked(nanos: i128) -> Option<Timestamp> {
        (nanos.div_euclid(NANOS) >= MIN_SECONDS && nanos.div_euclid(NANOS) <= MAX_SECONDS)
            .then_some(Timestamp(nanos, 0))
    }

    /// Parses an RFC 3339 timestamp (`2006-01-02T15:04:05.999Z`, `...+07:00`).
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        let invalid =
            || format!("parsing time \"{text}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse");
        let b = text.as_bytes();
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't')
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(invalid());
        }
        let num = |range: std::ops::Range<usize>| -> Result<i128, String> {
            let s = &text[range];
            if s.bytes().all(|c| c.is_ascii_digit()) {
                s.parse().map_err(|_| invalid())
            } else {
                Err(invalid())
            }
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(invalid());
        }
        let mut rest = &text[19..];
        let mut nanos = 0i128;
        if let Some(fraction) = rest.strip_prefix('.') {
            let digits = fraction
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(fraction.len());
            if digits == 0 || digits > 9 {
                return Err(invalid());
            }
            nanos = fraction[..digits].parse::<i128>().map_err(|_| invalid())?
                * 10i128.pow(9 - digits as u32);
            rest = &fraction[digits..];
        }
        let offset = match rest {
            "Z" | "z" => 0,
            _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
                let sign = if rest.starts_with('-') { -1 } else { 1 };
                let h: i128 = rest[1..3].parse().map_err(|_| invalid())?;
                let m: i128 = rest[4..6].parse().map_err(|_| invalid())?;
                if h > 23 || m > 59 {
                    return Err(invalid());
                }
                sign * (h * 3600 + m * 60)
            }
            _ => return Err(invalid()),
        };
        let seconds =
            days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
        Timestamp::checked(seconds * NANOS + nanos)
            .map(|t| Timestamp(t.0, offset as i32))
            .ok_or_else(|| "timestamp out of range".to_owned())
    }

    /// The calendar fields at `offset_seconds` from UTC.
    pub fn fields(self, offset_seconds: i128) -> Fields {
        let local = self.0.div_euclid(NANOS) + offset_seconds;
        let days = local.div_euclid(86400);
        let secs = local.rem_euclid(86400);
        let (year, month, day) = civil_from_days(days);
        Fields {
            year,
            month,
            day,
            day_of_year: days - days_from_civil(year, 1, 1),
            day_of_week: (days + 4).rem_euclid(7),
            hour: secs / 3600,
            minute: secs % 3600 / 60,
            second: secs % 60,
            nanos: self.0.rem_euclid(NANOS),
        }
    }
}

/// A timestamp's calendar fields.
#[derive(Debug, PartialEq)]
pub struct Fields {
    /// The year.
    pub year: i128,
    /// 1 to 12.
    pub month: i128,
    /// 1 to 31.
    pub day: i128,
    /// 0 to 365.
    pub day_of_year: i128,
    /// 0 (Sunday) to 6.
    pub day_of_week: i128,
    /// 0 to 23.
    pub hour: i128,
    /// 0 to 59.
    pub minute: i128,
    /// 0 to 59.
    pub second: i128,
    /// Nanoseconds into the second.
    pub nanos: i128,
}

/// Parses a time zone argument: `UTC`, or a fixed offset `+hh:mm`/`-hh:mm`. IANA zone
/// names need a zone database, which kapi does not carry.
pub fn zone_offset(zone: &str) -> Result<i128, String> {
    if zone.eq_ignore_ascii_case("utc") || zone == "Z" {
        return Ok(0);
    }
    let (sign, rest) = match zone.as_bytes().first() {
        Some(b'+') => (1, &zone[1..]),
        Some(b'-') => (-1, &zone[1..]),
        _ => (1, zone),
    };
    if let Some((h, m)) = rest.split_once(':')
        && let (Ok(h), Ok(m)) = (h.parse::<i128>(), m.parse::<i128>())
    {
        return Ok(sign * (h * 3600 + m * 60));
    }
    Err(format!("unknown time zone {zone}"))
}

fn is_leap(year: i128) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i128, month: i128) -> i128 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i128, month: i128, day: i128) -> i128 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
fn civil_from_days(days: i128) -> (i128, i128, i128) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Timestamp {
    /// RFC 3339 at its offset with as many fraction digits as needed (Go's
    /// `RFC3339Nano`): `Z` in UTC.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.fields(self.1 as i128);
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            t.year, t.month, t.day, t.hour, t.minute, t.second
        )?;
        if t.nanos != 0 {
            let fraction = format!("{:09}", t.nanos);
            write!(f, ".{}", fraction.trim_end_matches('0'))?;
        }
        match self.1 {
            0 => f.write_str("Z"),
            offset => {
                let sign = if offset < 0 { '-' } else { '+' };
                let offset = offset.abs();
                write!(f, "{sign}{:02}:{:02}", offset / 3600, offset % 3600 / 60)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_go_parses_them() {
        assert_eq!(Duration::parse("1h30m").unwrap(), Duration(5400 * NANOS));
        assert_eq!(Duration::parse("-1.5s").unwrap(), Duration(-1_500_000_000));
        assert_eq!(Duration::parse("0").unwrap(), Duration(0));
        assert!(Duration::parse("1").is_err());
        assert!(Duration::parse("1x").is_err());
        assert_eq!(Duration(1_500_000_000).to_string(), "1.5s");
    }

    #[test]
    fn timestamps_round_trip() {
        for text in [
            "2006-01-02T15:04:05Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.5Z",
            "2024-02-29T00:00:00.000000001Z",
        ] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
        }
        let t = Timestamp::parse("2006-01-02T15:04:05-07:00").unwrap();
        assert_eq!(t.to_string(), "2006-01-02T15:04:05-07:00");
        assert_eq!(t, Timestamp::parse("2006-01-02T22:04:05Z").unwrap());
        assert_eq!(t.fields(0).day_of_week, 1);
        assert!(Timestamp::parse("2023-02-29T00:00:00Z").is_err());
    }
}
