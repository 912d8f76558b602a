//! Just enough of proto2 to read k8s.io/api's `generated.proto` files: each message's
//! fields (label, type, name, number). Comments, options and imports are skipped.

use anyhow::{Result, bail};

/// One message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// `PodSpec`.
    pub name: String,
    /// Its fields, in file order.
    pub fields: Vec<Field>,
}

/// One field of a message.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// `optional`, `repeated`, or empty for a map.
    pub label: String,
    /// `string`, `int32`, `.k8s.io.api.core.v1.PodSpec`, `PodSpec`, or `map<string, bytes>`.
    pub ty: String,
    /// The field's name (kube writes the JSON name).
    pub name: String,
    /// Its number.
    pub number: u32,
}

/// The `package` and messages of one file.
pub fn parse(text: &str) -> Result<(String, Vec<Message>)> {
    let mut package = String::new();
    let mut messages = Vec::new();
    let mut current: Option<Message> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let n = index + 1;
        if let Some(name) = line.strip_prefix("package ") {
            package = name.trim_end_matches(';').trim().to_string();
        } else if let Some(rest) = line.strip_prefix("message ") {
            if current.is_some() {
                bail!("line {n}: nested messages are not expected");
            }
            let name = rest.trim_end_matches('{').trim().to_string();
            current = Some(Message {
                name,
                fields: Vec::new(),
            });
        } else if line == "}" {
            match current.take() {
                Some(message) => messages.push(message),
                None => bail!("line {n}: `}}` outside a message"),
            }
        } else if let Some(message) = current.as_mut() {
            message.fields.push(field(line, n)?);
        }
        // Outside messages: syntax, imports, options.
    }
    if current.is_some() {
        bail!("unterminated message");
    }
    Ok((package, messages))
}

fn field(line: &str, n: usize) -> Result<Field> {
    let Some(body) = line.strip_suffix(';') else {
        bail!("line {n}: expected a field, found `{line}`");
    };
    let Some((left, number)) = body.rsplit_once('=') else {
        bail!("line {n}: expected a field number in `{line}`");
    };
    let number: u32 = number.trim().parse()?;
    let left = left.trim();
    let (label, rest) = match left.split_once(' ') {
        Some((label @ ("optional" | "repeated"), rest)) => (label.to_string(), rest.trim()),
        _ => (String::new(), left),
    };
    let Some((ty, name)) = rest.rsplit_once(' ') else {
        bail!("line {n}: expected a type and a name in `{line}`");
    };
    Ok(Field {
        label,
        ty: ty.trim().to_string(),
        name: name.trim().to_string(),
        number,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_messages() {
        let (package, messages) = super::parse(
            "syntax = \"proto2\";\npackage k8s.io.api.core.v1;\n// A pod.\nmessage Pod {\n  // +optional\n  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;\n\n  repeated string finalizers = 2;\n  map<string, bytes> data = 3;\n}\n",
        )
        .unwrap();
        assert_eq!(package, "k8s.io.api.core.v1");
        assert_eq!(messages[0].fields.len(), 3);
        assert_eq!(messages[0].fields[2].ty, "map<string, bytes>");
        assert_eq!(messages[0].fields[2].label, "");
        assert_eq!(messages[0].fields[1].number, 2);
    }
}
