//! Go's `strconv` rules, which kube reads flags, query parameters and settings with.

/// Go's `strconv.ParseBool`: `1`, `t`, `T`, `true`, `TRUE`, `True` and their false forms.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}
