//! Table cells that name a time since (an age, a restart's "ago", a running Job's
//! duration), as kube's printers write them (`translateTimestampSince`,
//! `duration.HumanDuration`).
//!
//! A row's cells are made once per change of the object and kept; a time since would be
//! stale by the next read. A cell function (a printer column's `cell`) returns such a
//! cell deferred, [`since`]: an object `{"$since": <RFC 3339 time>, "before": .., "after":
//! ..}`, which no cell of kube's ever is, and the server writes it out with [`resolve`]
//! when it answers (`before` + the age + `after`).

use std::time::SystemTime;

use serde_json::{Value, json};

/// The key of a deferred cell.
const SINCE: &str = "$since";

/// A cell showing the time since `timestamp` between `before` and `after` (`3 (` … `
/// ago)`), written when the server answers; kube's `<unknown>` when there is no time.
pub fn since(before: &str, timestamp: Option<&str>, after: &str) -> Value {
    match timestamp.filter(|t| !t.is_empty()) {
        None => "<unknown>".into(),
        Some(timestamp) => json!({SINCE: timestamp, "before": before, "after": after}),
    }
}

/// kube's default table convertor's `Created At` cell (its kinds without a printer of
/// their own, and RBAC roles' printers): the creation time as RFC 3339 text, not an age.
pub fn created_at(object: &Value) -> Value {
    match object.pointer("/metadata/creationTimestamp") {
        Some(Value::String(time)) => time.as_str().into(),
        _ => Value::Null,
    }
}

/// Whether `cell` is deferred ([`since`]).
pub fn is_deferred(cell: &Value) -> bool {
    cell.get(SINCE).is_some()
}

/// `cell` as the server answers it at `now`: a deferred cell written out, any other as
/// it is.
pub fn resolve(cell: &Value, now: SystemTime) -> Value {
    let Some(timestamp) = cell.get(SINCE).and_then(Value::as_str) else {
        return cell.clone();
    };
    let text = |key: &str| cell.get(key).and_then(Value::as_str).unwrap_or_default();
    format!("{}{}{}", text("before"), age(timestamp, now), text("after")).into()
}

/// The time from `start` to `end` (RFC 3339), as kube prints a finished Job's duration.
pub fn between(start: &str, end: &str) -> String {
    match (
        humantime::parse_rfc3339(start),
        humantime::parse_rfc3339(end),
    ) {
        (Ok(start), Ok(end)) => human_duration(seconds_between(start, end)),
        _ => "<invalid>".into(),
    }
}

/// kube's `ConvertToHumanReadableDateType`: the age of an RFC 3339 timestamp at `now`.
pub fn age(timestamp: &str, now: SystemTime) -> String {
    match humantime::parse_rfc3339(timestamp) {
        Ok(time) => human_duration(seconds_between(time, now)),
        Err(_) => "<invalid>".into(),
    }
}

/// Whole seconds from `from` to `to`, negative when `to` is earlier.
fn seconds_between(from: SystemTime, to: SystemTime) -> i64 {
    match to.duration_since(from) {
        Ok(elapsed) => i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
        Err(ahead) => -i64::try_from(ahead.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// kube's `duration.HumanDuration`: two or three significant figures.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn a_deferred_cell_is_written_when_answered() {
        let cell = since("3 (", Some("1970-01-01T00:00:00Z"), " ago)");
        assert!(is_deferred(&cell));
        let now = UNIX_EPOCH + Duration::from_secs(150);
        assert_eq!(resolve(&cell, now), json!("3 (2m30s ago)"));
        assert_eq!(since("", None, ""), json!("<unknown>"));
        assert_eq!(resolve(&json!("Running"), now), json!("Running"));
    }

    #[test]
    fn durations_as_kube_prints_them() {
        for (seconds, expected) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (47 * 3600, "47h"),
            (2 * 86400 + 3600, "2d1h"),
            (8 * 86400, "8d"),
            (3 * 365 * 86400 + 86400, "3y1d"),
            (9 * 365 * 86400, "9y"),
        ] {
            assert_eq!(human_duration(seconds), expected, "{seconds}");
        }
    }

    #[test]
    fn finished_durations() {
        assert_eq!(
            between("2026-01-01T00:00:00Z", "2026-01-01T00:00:08Z"),
            "8s"
        );
    }
}
