//! kube-openapi's `Result.MatchCount` (`pkg/validation/validate`, at the commit
//! apiextensions-apiserver v0.32.1 pins): how much of a schema a value went through. When
//! every branch of an `anyOf` (or every one of a `oneOf`) fails, kube reports the errors
//! of the failed branch with the highest count, the first among equals, after the
//! `anyOf`/`oneOf` error itself.
//!
//! A schema validator counts one for itself, and one for each of its validators that
//! applies, plus what each returns: the type validator 1 when the value has the type
//! (0 on a type error), the `allOf`/`anyOf`/`oneOf`/`not` validator 1 plus the counts of
//! the branches it keeps (every `allOf` branch; the first passing `anyOf` branch or else
//! the best failure; the one passing `oneOf` branch, or when none passes the best
//! failure), the number validator 1, the list validator 1 plus its items', the object
//! validator its properties' and additional properties' counts; string, format and enum
//! checks add nothing of their own. A `null` counts only the type validator's result.
//!
//! This is an approximation where kapi's compiled nodes differ from kube's: `allOf` and
//! `$ref` nodes are counted as `allOf` branches.

use serde_json::Value;

use super::KindSchema;

impl KindSchema<'_> {
    /// kube-openapi's `MatchCount` of validating `value` against node `id`.
    pub(super) fn match_count(&self, id: usize, value: &Value) -> usize {
        let node = &self.schemas.nodes[id];
        let format = self.format_of(node);
        let typed = node.ty.is_some() || node.int_or_string || format.is_some();
        let type_ok = || usize::from(self.type_error(node, value, "", node.nullable).is_none());
        if value.is_null() {
            return if typed { type_ok() } else { 0 };
        }
        let mut count = 1;
        if typed {
            count += 1 + type_ok();
        }
        count += 1 + self.branches_count(id, value);
        match value {
            Value::String(_) => {
                let constrained = node.min_length.is_some()
                    || node.max_length.is_some()
                    || node.pattern.is_some();
                count += usize::from(constrained) + usize::from(format.is_some());
            }
            Value::Number(_) => count += 2,
            Value::Array(items) => {
                count += 2;
                if let Some(item) = node.items {
                    count += items
                        .iter()
                        .map(|v| self.match_count(item, v))
                        .sum::<usize>();
                }
            }
            Value::Object(fields) => {
                count += 1;
                for (key, field) in fields {
                    match node.properties.iter().find(|(name, _)| name == key) {
                        Some((_, child)) => count += self.match_count(*child, field),
                        None => {
                            if let Some(additional) = node.additional {
                                count += self.match_count(additional, field);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        // The enum (common) validator applies to every value.
        count + 1
    }

    /// The count of the `allOf`/`anyOf`/`oneOf`/`not` validator of node `id`.
    fn branches_count(&self, id: usize, value: &Value) -> usize {
        let node = &self.schemas.nodes[id];
        let passes = |branch: usize| {
            let mut found = Vec::new();
            self.validate_node(branch, value, &mut String::new(), &mut found, false);
            found.is_empty()
        };
        let best_failure = |branches: &[usize]| {
            let mut best: Option<usize> = None;
            for branch in branches {
                let count = self.match_count(*branch, value);
                if best.is_none_or(|most| count > most) {
                    best = Some(count);
                }
            }
            best.unwrap_or(0)
        };
        let mut count = 1;
        count += (node.all_of.iter())
            .map(|b| self.match_count(*b, value))
            .sum::<usize>();
        if !node.any_of.is_empty() {
            count += match node.any_of.iter().find(|b| passes(**b)) {
                Some(first) => self.match_count(*first, value),
                None => best_failure(&node.any_of),
            };
        }
        if !node.one_of.is_empty() {
            let valid: Vec<usize> = node.one_of.iter().copied().filter(|b| passes(*b)).collect();
            count += match valid.as_slice() {
                [] => best_failure(&node.one_of),
                [one] => self.match_count(*one, value),
                _ => 0,
            };
        }
        count
    }
}
