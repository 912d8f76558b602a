//! JSON request bodies decoded with the paths of the fields they repeat
//! (`{"spec": {"replicas": 1, "replicas": 2}}` → `spec.replicas`), which a plain decode
//! silently drops (the last one wins). The registry reports them per `fieldValidation`, as
//! kube's strict decoding does: `duplicate field "spec.replicas"`.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// `body` as JSON, and the paths of its repeated fields in document order (paths as
/// kube writes them: `spec.ports[0].name`).
pub(super) fn decode(body: &[u8]) -> serde_json::Result<(Value, Vec<String>)> {
    let mut duplicates = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = Node {
        path: String::new(),
        duplicates: &mut duplicates,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, duplicates))
}

/// One value being decoded, at `path`.
struct Node<'a> {
    path: String,
    duplicates: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let item = Node {
                path: format!("{}[{}]", self.path, items.len()),
                duplicates: &mut *self.duplicates,
            };
            match seq.next_element_seed(item)? {
                Some(value) => items.push(value),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = match self.path.is_empty() {
                true => key.clone(),
                false => format!("{}.{key}", self.path),
            };
            let value = map.next_value_seed(Node {
                path: path.clone(),
                duplicates: &mut *self.duplicates,
            })?;
            // Kube keeps the last of a repeated field; so does a plain decode.
            if fields.insert(key, value).is_some() {
                self.duplicates.push(path);
            }
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::decode;

    #[test]
    fn repeated_fields_are_found_at_every_depth_and_the_last_wins() {
        let (value, duplicates) = decode(
            br#"{"kind": "WebApp", "spec": {"replicas": 1, "replicas": 2,
                "ports": [{"name": "a", "name": "b"}]}, "kind": "WebApp"}"#,
        )
        .unwrap();
        assert_eq!(
            value,
            json!({"kind": "WebApp", "spec": {"replicas": 2, "ports": [{"name": "b"}]}})
        );
        assert_eq!(duplicates, ["spec.replicas", "spec.ports[0].name", "kind"]);
    }

    #[test]
    fn plain_json_decodes_as_serde_json_does() {
        let body = br#"{"a": [1, -2, 3.5, "x", null, true, {}], "b": {"c": 18446744073709551615}}"#;
        let (value, duplicates) = decode(body).unwrap();
        assert_eq!(
            value,
            serde_json::from_slice::<serde_json::Value>(body).unwrap()
        );
        assert!(duplicates.is_empty());
        assert!(decode(b"{} x").is_err());
        assert!(decode(b"{\"a\": }").is_err());
    }
}
