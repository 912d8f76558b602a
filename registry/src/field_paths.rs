//! Field paths of a kind's own validation ([`Strategy`](kapi_core::api::Strategy), on the hub)
//! in the request's version: kube reports every cause in the version the client wrote.
//!
//! The registry knows no mapping between hub and version fields; the conversion does. So a
//! hub path is translated by probing: change the hub's value at the path (every scalar under
//! it, one at a time, to another value of the same type the hub still decodes), convert the
//! changed hub to the request's version, and see which fields of the version change. The
//! path is the longest common prefix of those fields (less the scalar's own path below the
//! field, when the version has it at the same relative place). Renames, moved fields and hand-written
//! `with` functions are all covered (hub `spec.container.image` is `v1beta1`'s
//! `spec.image`; hub `spec.container.ports` shows as `spec.port`). A field the version cannot
//! express shows as its nearest ancestor that it can; when none can, the hub's path is
//! kept. A field absent from the hub (a required one left out) is probed by setting it.

use serde_json::Value;

use kapi_core::error::FieldError;
use kapi_core::scheme::KindEntry;

/// One step of a field path: `spec`, `[2]`, `[key]`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Field(String),
    Index(usize),
    Key(String),
}

/// `errors` (paths in the hub's field names, for the hub `hub`) with paths in `version`.
pub(super) fn to_version(
    kind: &KindEntry,
    version: &str,
    hub: &Value,
    errors: Vec<FieldError>,
) -> Vec<FieldError> {
    // A version that is the hub itself has the hub's paths.
    let info = kind.info;
    let is_hub =
        (info.versions.iter()).any(|v| v.name == version && v.rust_type == info.hub_rust_type());
    if errors.is_empty() || is_hub {
        return errors;
    }
    let Some(base) = convert(kind, version, hub.clone()) else {
        return errors;
    };
    let probe = Probe {
        kind,
        version,
        hub,
        base: &base,
    };
    errors
        .into_iter()
        .map(|mut error| {
            let hub_path = parse(&error.field);
            if let Some(path) = probe.translate(&hub_path)
                && !same_steps(&path, &hub_path)
            {
                error.field = render(&path);
            }
            error
        })
        .collect()
}

/// The hub JSON as `version`, or `None` when it does not decode or convert.
fn convert(kind: &KindEntry, version: &str, hub: Value) -> Option<Value> {
    let hub = kind.hub_from_json(hub).ok()?;
    kind.from_hub(hub, version).ok()
}

/// One hub, and the request's version of it, whose paths are translated.
struct Probe<'a> {
    kind: &'a KindEntry,
    version: &'a str,
    hub: &'a Value,
    /// `hub` in `version`.
    base: &'a Value,
}

impl Probe<'_> {
    /// The version path of hub path `path`, trying its ancestors in turn.
    fn translate(&self, path: &[Segment]) -> Option<Vec<Segment>> {
        let Probe {
            kind,
            version,
            hub,
            base,
        } = *self;
        if get(hub, path).is_none()
            && let Some(found) = self.translate_absent(path)
        {
            return Some(found);
        }
        for len in (1..=path.len()).rev() {
            let prefix = &path[..len];
            let Some(value) = get(hub, prefix) else {
                continue;
            };
            let mut changed: Vec<Vec<Segment>> = Vec::new();
            for leaf in leaves(value) {
                let mut leaf_path = prefix.to_vec();
                leaf_path.extend(leaf.iter().cloned());
                let mut probe = hub.clone();
                let Some(slot) = get_mut(&mut probe, &leaf_path) else {
                    continue;
                };
                let Some(other) = another(slot) else {
                    continue;
                };
                *slot = other;
                let Some(converted) = convert(kind, version, probe) else {
                    continue;
                };
                let mut paths = Vec::new();
                differences(base, &converted, &mut Vec::new(), &mut paths);
                // A leaf found under the same relative path names the field itself
                // (`data.k` changes `data.k`: the field is `data`); one found elsewhere was
                // mapped, and its path is as close as the version gets.
                changed.extend(
                    paths
                        .into_iter()
                        .map(|path| match path.strip_suffix(&leaf[..]) {
                            Some(field) => field.to_vec(),
                            None => path,
                        }),
                );
            }
            if let Some(common) = common_prefix(&changed) {
                return Some(common);
            }
        }
        None
    }

    /// The version path of a field the hub does not have (a required field left out): set it
    /// to a scalar the hub decodes and see where that shows in the version.
    fn translate_absent(&self, path: &[Segment]) -> Option<Vec<Segment>> {
        let probes = [
            Value::from("kapi-probe"),
            // Timestamps decode only as timestamps (a `Time`, a `MicroTime`).
            Value::from("2001-02-03T04:05:06Z"),
            Value::from("2001-02-03T04:05:06.000007Z"),
            Value::from(1),
            Value::from(true),
        ];
        for probe in probes {
            let mut changed = self.hub.clone();
            if !insert(&mut changed, path, probe) {
                return None;
            }
            let Some(converted) = convert(self.kind, self.version, changed) else {
                continue;
            };
            let mut paths = Vec::new();
            differences(self.base, &converted, &mut Vec::new(), &mut paths);
            if let Some(common) = common_prefix(&paths) {
                return Some(common);
            }
        }
        None
    }
}

/// Sets the value at `path` (fields only), making the objects on the way; `false` when the
/// path runs through something else.
fn insert(value: &mut Value, path: &[Segment], leaf: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut current = value;
    for segment in parents {
        let (Segment::Field(name), Value::Object(map)) = (segment, current) else {
            return false;
        };
        current = (map.entry(name.clone())).or_insert_with(|| Value::Object(Default::default()));
        if current.is_null() {
            *current = Value::Object(Default::default());
        }
    }
    match (last, current) {
        (Segment::Field(name), Value::Object(map)) => {
            map.insert(name.clone(), leaf);
            true
        }
        _ => false,
    }
}

/// Paths (relative to `value`) of every scalar in it.
fn leaves(value: &Value) -> Vec<Vec<Segment>> {
    match value {
        Value::Object(fields) => (fields.iter())
            .flat_map(|(name, child)| {
                leaves(child).into_iter().map(move |mut path| {
                    path.insert(0, Segment::Field(name.clone()));
                    path
                })
            })
            .collect(),
        Value::Array(items) => (items.iter().enumerate())
            .flat_map(|(index, child)| {
                leaves(child).into_iter().map(move |mut path| {
                    path.insert(0, Segment::Index(index));
                    path
                })
            })
            .collect(),
        Value::Null => Vec::new(),
        _ => vec![Vec::new()],
    }
}

/// A different value of the same JSON type. Strings that must be one of an enum will not
/// decode changed; their probe is skipped.
fn another(value: &Value) -> Option<Value> {
    match value {
        Value::Bool(b) => Some(Value::Bool(!b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i < i64::from(i32::MAX) => Some(Value::from(i + 1)),
            Some(i) => Some(Value::from(i - 1)),
            None => n.as_f64().map(|f| Value::from(f + 1.0)),
        },
        Value::String(s) => Some(Value::String(
            another_timestamp(s).unwrap_or_else(|| format!("{s}x")),
        )),
        _ => None,
    }
}

/// An RFC 3339 timestamp (`2026-11-22T13:01:40Z`, with or without a fraction) a second
/// away, in the same form: a timestamp changed like any string would no longer decode.
fn another_timestamp(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let shaped = bytes.len() >= 20
        && s.ends_with('Z')
        && (bytes[4], bytes[7], bytes[10], bytes[13], bytes[16]) == (b'-', b'-', b'T', b':', b':');
    let second = *bytes.get(18)?;
    if !shaped || !second.is_ascii_digit() {
        return None;
    }
    let other = if second == b'9' {
        '8'
    } else {
        char::from(second + 1)
    };
    Some(format!("{}{other}{}", &s[..18], &s[19..]))
}

/// Appends to `out` the paths where `a` and `b` differ, as deep as both have structure.
fn differences(a: &Value, b: &Value, at: &mut Vec<Segment>, out: &mut Vec<Vec<Segment>>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                at.push(Segment::Field(key.clone()));
                match (x.get(key), y.get(key)) {
                    (Some(x), Some(y)) => differences(x, y, at, out),
                    (x, y) if x != y => out.push(at.clone()),
                    _ => {}
                }
                at.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (x, y)) in x.iter().zip(y).enumerate() {
                at.push(Segment::Index(index));
                differences(x, y, at, out);
                at.pop();
            }
        }
        _ if a != b => out.push(at.clone()),
        _ => {}
    }
}

/// The longest common prefix of `paths`; `None` when there are none or it is empty (the
/// whole object: no better than the hub's path).
fn common_prefix(paths: &[Vec<Segment>]) -> Option<Vec<Segment>> {
    let (first, rest) = paths.split_first()?;
    let mut len = first.len();
    for path in rest {
        len = len.min(path.len());
        len = (0..len).find(|&i| first[i] != path[i]).unwrap_or(len);
    }
    (len > 0).then(|| first[..len].to_vec())
}

fn get<'a>(value: &'a Value, path: &[Segment]) -> Option<&'a Value> {
    path.iter().try_fold(value, |value, segment| match segment {
        Segment::Field(name) | Segment::Key(name) => value.get(name),
        Segment::Index(index) => value.get(index),
    })
}

fn get_mut<'a>(value: &'a mut Value, path: &[Segment]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |value, segment| match segment {
        Segment::Field(name) | Segment::Key(name) => value.get_mut(name),
        Segment::Index(index) => value.get_mut(index),
    })
}

/// `spec.ports[0].name`, `metadata.labels[app]`, `data[a.b/c]` as segments (a key in
/// brackets may hold dots).
fn parse(path: &str) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut field = String::new();
    let mut chars = path.chars();
    let end_field = |field: &mut String, segments: &mut Vec<Segment>| {
        if !field.is_empty() {
            segments.push(Segment::Field(std::mem::take(field)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => end_field(&mut field, &mut segments),
            '[' => {
                end_field(&mut field, &mut segments);
                let key: String = chars.by_ref().take_while(|&c| c != ']').collect();
                segments.push(match key.parse() {
                    Ok(index) => Segment::Index(index),
                    Err(_) => Segment::Key(key),
                });
            }
            c => field.push(c),
        }
    }
    end_field(&mut field, &mut segments);
    segments
}

/// Whether two paths name the same steps, a map key and a field of that name alike (a
/// JSON difference cannot tell them apart; the kind's own path can).
fn same_steps(a: &[Segment], b: &[Segment]) -> bool {
    let name = |segment: &Segment| match segment {
        Segment::Field(name) | Segment::Key(name) => Ok(name.clone()),
        Segment::Index(index) => Err(*index),
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| name(x) == name(y))
}

fn render(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Field(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Segment::Index(index) => out.push_str(&format!("[{index}]")),
            Segment::Key(key) => out.push_str(&format!("[{key}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_and_render_back() {
        for path in [
            "spec.replicas",
            "spec.ports[0].name",
            "metadata.labels[app]",
            "a[1][2].b",
            "data[a.b/c]",
        ] {
            assert_eq!(render(&parse(path)), path);
        }
        assert_eq!(
            parse("spec.ports[3]"),
            [
                Segment::Field("spec".into()),
                Segment::Field("ports".into()),
                Segment::Index(3)
            ]
        );
    }

    #[test]
    fn map_keys_and_fields_of_one_name_are_the_same_step() {
        assert!(same_steps(&parse("data[k]"), &parse("data.k")));
        assert!(!same_steps(&parse("data[0]"), &parse("data.0")));
        assert!(!same_steps(
            &parse("spec.image"),
            &parse("spec.container.image")
        ));
    }

    #[test]
    fn the_common_prefix_of_changed_paths_is_the_field() {
        let path = |p: &str| parse(p);
        assert_eq!(common_prefix(&[path("spec.port")]), Some(path("spec.port")));
        assert_eq!(
            common_prefix(&[path("spec.a.x"), path("spec.a.y"), path("spec.a")]),
            Some(path("spec.a"))
        );
        assert_eq!(common_prefix(&[path("spec.a"), path("status.b")]), None);
        assert_eq!(common_prefix(&[]), None);
    }

    #[test]
    fn differences_stop_where_structure_differs() {
        let mut out = Vec::new();
        differences(
            &serde_json::json!({"spec": {"a": 1, "b": [1, 2], "c": [1]}}),
            &serde_json::json!({"spec": {"a": 2, "b": [1, 3], "c": [1, 2], "d": true}}),
            &mut Vec::new(),
            &mut out,
        );
        let out: Vec<String> = out.iter().map(|p| render(p)).collect();
        assert_eq!(out, ["spec.a", "spec.b[1]", "spec.c", "spec.d"]);
    }
}
