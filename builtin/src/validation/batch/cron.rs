//! A CronJob's schedule as kube parses it (robfig/cron v3's `ParseStandard`): five fields
//! (minute, hour, day of month, month, day of week) of values, ranges, steps, `*` and `?`
//! and the names of months and days, or a descriptor (`@hourly`, `@every 1h30m`),
//! optionally after `TZ=` or `CRON_TZ=`. Errors read as the parser's. (kapi checks the
//! schedule here, and no crate parses robfig's dialect with its messages.)

/// The bounds of each field, and the names it takes.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ],
};
const WEEKDAYS: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
};

const DESCRIPTORS: [&str; 7] = [
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// Parses `spec`; the parser's message when it does not.
pub(super) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(space) = spec.find(' ') else {
            return Err(format!(
                "provided bad location {}: unknown time zone",
                &spec[spec.find('=').unwrap_or(0) + 1..]
            ));
        };
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip([MINUTES, HOURS, DAYS, MONTHS, WEEKDAYS]) {
        for range in field.split(',') {
            self::range(range, &bounds)?;
        }
    }
    Ok(())
}

/// `@every <duration>` or one of the named schedules.
fn descriptor(spec: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return match go_duration(duration) {
            true => Ok(()),
            false => Err(format!(
                "failed to parse duration {spec}: time: invalid duration \"{duration}\""
            )),
        };
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// Go's `time.ParseDuration` accepts `value`: numbers with units, in sequence.
fn go_duration(value: &str) -> bool {
    let mut rest = value.strip_prefix(['+', '-']).unwrap_or(value);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let Some(unit) = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .iter()
            .rev()
            .find(|u| rest.starts_with(**u))
        else {
            return false;
        };
        rest = &rest[unit.len()..];
    }
    true
}

/// One range of a field: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let parts: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = parts[0].split('-').collect();
    let single_digit = low_high.len() == 1;
    let (start, end) = match low_high[0] {
        "*" | "?" => (bounds.min, bounds.max),
        first => {
            let start = value(first, bounds)?;
            match low_high.len() {
                1 => (start, start),
                2 => (start, value(low_high[1], bounds)?),
                _ => return Err(format!("too many hyphens: {expr}")),
            }
        }
    };
    let end = match parts.len() {
        1 => end,
        2 => {
            if number(parts[1])? == 0 {
                return Err(format!("step of range should be a positive number: {expr}"));
            }
            // A single value with a step runs to the end of the field.
            match single_digit && low_high[0] != "*" && low_high[0] != "?" {
                true => bounds.max,
                false => end,
            }
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    Ok(())
}

/// A name of the field, or a number.
fn value(expr: &str, bounds: &Bounds) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some(index) = bounds.names.iter().position(|name| *name == lower) {
        return Ok(bounds.min + index as u32);
    }
    number(expr)
}

/// robfig's `mustParseInt`.
fn number(expr: &str) -> Result<u32, String> {
    match expr.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        Ok(n) => u32::try_from(n)
            .map_err(|_| format!("failed to parse int from {expr}: value out of range")),
        Err(_) => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_standard;

    #[test]
    fn schedules_kube_accepts() {
        for spec in [
            "*/5 * * * *",
            "0 0 1 1 *",
            "0 9-17 * * MON-FRI",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
            "5 4 * * sun",
            "0 0 ? * 1/2",
        ] {
            assert_eq!(parse_standard(spec), Ok(()), "{spec}");
        }
    }

    #[test]
    fn schedules_kube_refuses_with_its_messages() {
        assert_eq!(
            parse_standard("every minute").unwrap_err(),
            "expected exactly 5 fields, found 2: [every minute]"
        );
        assert_eq!(
            parse_standard("60 * * * *").unwrap_err(),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(
            parse_standard("* * 0 * *").unwrap_err(),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            parse_standard("5-1 * * * *").unwrap_err(),
            "beginning of range (5) beyond end of range (1): 5-1"
        );
        assert_eq!(
            parse_standard("@sometimes").unwrap_err(),
            "unrecognized descriptor: @sometimes"
        );
        assert!(
            parse_standard("x * * * *")
                .unwrap_err()
                .starts_with("failed to parse int from x")
        );
    }
}
