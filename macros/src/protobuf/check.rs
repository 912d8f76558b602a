//! The rules on field numbers: positive, within protobuf's range, unique.

use std::collections::BTreeMap;

use super::attr::Field;

/// protobuf's largest field number.
const MAX_TAG: u32 = (1 << 29) - 1;

/// Every mistake, each at its number.
pub(crate) fn check(fields: &[Field], errors: &mut darling::error::Accumulator) {
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for field in fields {
        let Some((tag, span)) = field.tag else {
            continue;
        };
        if tag == 0 || tag > MAX_TAG {
            errors.push(
                darling::Error::custom(format!("field numbers are from 1 to {MAX_TAG}, not {tag}"))
                    .with_span(&span),
            );
        }
        if let Some(other) = seen.insert(tag, &field.json_name) {
            errors.push(
                darling::Error::custom(format!("field number {tag} is `{other}`'s already"))
                    .with_span(&span),
            );
        }
    }
}
