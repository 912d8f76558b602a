//! A rule's `fieldPath`, as kube's `ValidFieldPath` reads and prints it.

use serde_json::Value as Json;

/// kube's `ValidFieldPath`: a rule's `fieldPath` (`.a.b`, `.a['b.c']`, `.map.key`) checked
/// against the schema it is declared on, and printed as kube prints field paths
/// (`a.b`, `map[key]`).
pub fn valid_field_path(json_path: &str, schema: &Json) -> Result<String, String> {
    let tokens = field_path_tokens(json_path);
    let mut tokens = tokens.iter().map(String::as_str);
    let mut schema = schema;
    let mut printed = String::new();
    let mut step = |name: &str, schema: &mut &Json| -> Result<(), String> {
        match (
            schema.get("properties").and_then(Json::as_object),
            schema.get("additionalProperties"),
        ) {
            (Some(properties), _) => {
                *schema = properties
                    .get(name)
                    .ok_or("does not refer to a valid field")?;
                if !printed.is_empty() {
                    printed.push('.');
                }
                printed.push_str(name);
            }
            (None, Some(values)) if values.is_object() => {
                *schema = values;
                printed.push_str(&format!("[{name}]"));
            }
            _ => return Err("does not refer to a valid field".into()),
        }
        Ok(())
    };
    while let Some(token) = tokens.next() {
        match token {
            "[" => {
                let quoted = tokens.next().ok_or("unexpected end of JSON path")?;
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {quoted}"));
                }
                let name = unescape_single_quote(&quoted[1..quoted.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                step(&name, &mut schema)?;
                match tokens.next() {
                    None => return Err("unexpected end of JSON path".into()),
                    Some("]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                }
            }
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                step(name, &mut schema)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(printed)
}

/// The tokens of a field path: `.`, `[` and `]` alone, single-quoted strings whole, the
/// rest between them (kube's scanner).
fn field_path_tokens(path: &str) -> Vec<String> {
    let bytes = path.as_bytes();
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let data = &bytes[start..];
        let mut end = data.len();
        for i in 0..data.len() {
            if data[0] == b'\'' {
                if i > 0 && data[i] == b'\'' && data[i - 1] != b'\\' {
                    end = i + 1;
                    break;
                }
                continue;
            }
            if matches!(data[i], b'.' | b'[' | b']') {
                end = if i == 0 { 1 } else { i };
                break;
            }
        }
        tokens.push(String::from_utf8_lossy(&data[..end]).into_owned());
        start += end;
    }
    tokens
}

/// kube's `unescapeSingleQuote`: `\a \b \f \n \r \t \v \' \\`.
fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push(c);
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}
