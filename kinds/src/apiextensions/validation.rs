//! kube's `apiextensions/validation` for CustomResourceDefinitions written in v1: the name,
//! group, scope, names, versions (storage, schemas, deprecation warnings, subresources,
//! printer columns, selectable fields), conversion and stored versions, with kube's field
//! paths and messages. kube validates its internal version, so some paths are the internal
//! type's (`spec.conversion.webhookClientConfig`, a column's `JSONPath`), as it reports
//! them.
//! Each version's `openAPIV3Schema` is checked by `structural` (once, as
//! `spec.validation.openAPIV3Schema`, when every version has the same schema: kube's
//! internal version holds it there).

use serde_json::json;

use super::structural;
use super::{
    CLUSTER, CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionVersion, CustomResourceSubresources,
    NAMESPACED,
};
use kapi_cel::definition::Previous;
use kapi_core::error::FieldError;
use kapi_core::error::FieldError as E;
use kapi_core::validation as strings;

/// `printerColumnDatatypes`, sorted as kube lists them.
const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
/// `customResourceColumnDefinitionFormats`, sorted.
const COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// The `ConversionReview` versions this server understands.
const CONVERSION_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// `validateEnumStrings`: required, and one of `accepted`.
fn enum_string(field: &str, value: &str, accepted: &[&str]) -> Vec<FieldError> {
    if value.is_empty() {
        vec![E::required(field, "")]
    } else if !accepted.contains(&value) {
        vec![E::not_supported(field, value, accepted)]
    } else {
        Vec::new()
    }
}

/// `ValidateCustomResourceDefinition`: a new CustomResourceDefinition.
pub(super) fn create(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = &crd.spec;
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    if name != format!("{}.{}", spec.names.plural, spec.group) {
        errors.push(E::invalid(
            "metadata.name",
            name,
            r#"must be spec.names.plural+"."+spec.group"#,
        ));
    }
    errors.extend(spec_errors(crd, None));
    errors.extend(status_errors(crd));
    errors.extend(stored_versions(crd));
    if spec.preserve_unknown_fields {
        errors.push(E::invalid(
            "spec.preserveUnknownFields",
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in openAPIV3Schema instead",
        ));
    }
    errors
}

/// `ValidateCustomResourceDefinitionUpdate`: a changed CustomResourceDefinition. The group
/// and plural (its name) never change; once the kind is established, its scope and kind
/// neither, since they shape how its objects are stored.
pub(super) fn update(
    crd: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> Vec<FieldError> {
    let schemas = (old.spec.versions.iter())
        .filter_map(|v| Some(v.schema.as_ref()?.open_apiv3_schema.clone()?.0))
        .collect();
    let previous = Previous::of(schemas);
    let mut errors = spec_errors(crd, Some(&previous));
    let immutable = |field: &str, new: &str, old: &str| {
        (new != old).then(|| E::invalid(field, new, "field is immutable"))
    };
    if established(old) {
        errors.extend(immutable("spec.scope", &crd.spec.scope, &old.spec.scope));
        errors.extend(immutable(
            "spec.names.kind",
            &crd.spec.names.kind,
            &old.spec.names.kind,
        ));
    }
    errors.extend(immutable("spec.group", &crd.spec.group, &old.spec.group));
    errors.extend(immutable(
        "spec.names.plural",
        &crd.spec.names.plural,
        &old.spec.names.plural,
    ));
    errors.extend(status_errors(crd));
    errors.extend(stored_versions(crd));
    if crd.spec.preserve_unknown_fields && !old.spec.preserve_unknown_fields {
        errors.push(E::invalid(
            "spec.preserveUnknownFields",
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in openAPIV3Schema instead",
        ));
    }
    errors
}

/// Whether the `Established` condition is `True`.
fn established(crd: &CustomResourceDefinition) -> bool {
    (crd.status.conditions.iter()).any(|c| c.r#type == "Established" && c.status == "True")
}

/// `validateCustomResourceDefinitionSpec`.
fn spec_errors(crd: &CustomResourceDefinition, previous: Option<&Previous>) -> Vec<FieldError> {
    let spec = &crd.spec;
    let mut errors = Vec::new();
    if spec.group.is_empty() {
        errors.push(E::required("spec.group", ""));
    } else {
        let wrong = strings::dns1123_subdomain(&spec.group);
        if !wrong.is_empty() {
            errors.push(E::invalid(
                "spec.group",
                spec.group.as_str(),
                wrong.join(","),
            ));
        } else if !spec.group.contains('.') {
            errors.push(E::invalid(
                "spec.group",
                spec.group.as_str(),
                "should be a domain with at least one dot",
            ));
        }
    }
    errors.extend(enum_string(
        "spec.scope",
        &spec.scope,
        &[CLUSTER, NAMESPACED],
    ));

    // kube validates its internal version, into which v1's per-version subresources,
    // columns and selectable fields convert to one top-level field when every version has
    // the same: errors in them are reported once, there.
    let hoisted = Hoisted::of(&spec.versions);
    if let Some(first) = spec.versions.first() {
        let schema = first
            .schema
            .as_ref()
            .and_then(|s| s.open_apiv3_schema.as_deref());
        if hoisted.schema
            && let Some(schema) = schema
        {
            errors.extend(structural::errors(
                schema,
                "spec.validation.openAPIV3Schema",
                previous,
            ));
        }
        if hoisted.subresources
            && let Some(subresources) = &first.subresources
        {
            errors.extend(subresource_errors(subresources, "spec.subresources"));
        }
        if hoisted.columns {
            errors.extend(columns_errors(first, "spec"));
        }
        if hoisted.selectable_fields {
            errors.extend(selectable_fields_errors(first, "spec"));
        }
        // The internal `spec.version` is the first version's name.
        for detail in strings::dns1035_label(&first.name) {
            errors.push(E::invalid("spec.version", first.name.as_str(), detail));
        }
    }
    let mut storage = 0;
    let mut unique = true;
    for (i, version) in spec.versions.iter().enumerate() {
        let path = format!("spec.versions[{i}]");
        storage += usize::from(version.storage);
        if spec.versions[..i].iter().any(|v| v.name == version.name) {
            unique = false;
        }
        let wrong = strings::dns1035_label(&version.name);
        if !wrong.is_empty() {
            errors.push(E::invalid(
                format!("{path}.name"),
                version.name.as_str(),
                wrong.join(","),
            ));
        }
        match (version.schema.as_ref()).and_then(|s| s.open_apiv3_schema.as_deref()) {
            None => errors.push(E::required(
                format!("{path}.schema.openAPIV3Schema"),
                "schemas are required",
            )),
            Some(schema) if !hoisted.schema => errors.extend(structural::errors(
                schema,
                &format!("{path}.schema.openAPIV3Schema"),
                previous,
            )),
            Some(_) => {}
        }
        errors.extend(version_errors(version, &path, &hoisted));
    }
    let versions = json!(spec.versions);
    if !unique {
        errors.push(E::invalid(
            "spec.versions",
            versions.clone(),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errors.push(E::invalid(
            "spec.versions",
            versions,
            "must have exactly one version marked as storage version",
        ));
    }

    let names = &spec.names;
    for (field, value) in [
        ("plural", names.plural.as_str()),
        ("singular", names.singular.as_str()),
        ("kind", names.kind.as_str()),
        ("listKind", names.list_kind.as_str()),
    ] {
        if value.is_empty() {
            errors.push(E::required(format!("spec.names.{field}"), ""));
        }
    }
    errors.extend(names_errors(names, "spec.names"));
    if let Some(conversion) = &spec.conversion {
        errors.extend(conversion_errors(conversion));
    }
    errors
}

/// Which per-version fields are the same in every version, so kube's internal version
/// holds them once, at the top.
struct Hoisted {
    schema: bool,
    subresources: bool,
    columns: bool,
    selectable_fields: bool,
}

impl Hoisted {
    fn of(versions: &[CustomResourceDefinitionVersion]) -> Hoisted {
        let same = |differ: fn(
            &CustomResourceDefinitionVersion,
            &CustomResourceDefinitionVersion,
        ) -> bool| {
            !versions.is_empty() && !versions.iter().any(|v| differ(v, &versions[0]))
        };
        Hoisted {
            schema: same(|a, b| a.schema != b.schema),
            subresources: same(|a, b| a.subresources != b.subresources),
            columns: same(|a, b| a.additional_printer_columns != b.additional_printer_columns),
            selectable_fields: same(|a, b| a.selectable_fields != b.selectable_fields),
        }
    }
}

/// `validateCustomResourceDefinitionVersion`, but for the schema (structural checks); the
/// fields `hoisted` are checked once, at the top.
fn version_errors(
    version: &CustomResourceDefinitionVersion,
    path: &str,
    hoisted: &Hoisted,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(warning) = &version.deprecation_warning {
        for detail in deprecation_warning(version.deprecated, warning) {
            errors.push(E::invalid(
                format!("{path}.deprecationWarning"),
                warning.as_str(),
                detail,
            ));
        }
    }
    if let Some(subresources) = &version.subresources
        && !hoisted.subresources
    {
        errors.extend(subresource_errors(
            subresources,
            &format!("{path}.subresources"),
        ));
    }
    if !hoisted.columns {
        errors.extend(columns_errors(version, path));
    }
    if !hoisted.selectable_fields {
        errors.extend(selectable_fields_errors(version, path));
    }
    errors
}

/// The printer columns of `version`, reported under `path`.
fn columns_errors(version: &CustomResourceDefinitionVersion, path: &str) -> Vec<FieldError> {
    (version.additional_printer_columns.iter().enumerate())
        .flat_map(|(i, column)| {
            column_errors(column, &format!("{path}.additionalPrinterColumns[{i}]"))
        })
        .collect()
}

/// The selectable fields of `version`, reported under `path`: each a simple JSON path.
fn selectable_fields_errors(
    version: &CustomResourceDefinitionVersion,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, field) in version.selectable_fields.iter().enumerate() {
        let path = format!("{path}.selectableFields[{i}].jsonPath");
        if field.json_path.is_empty() {
            errors.push(E::required(path, ""));
        } else if let Some(error) = simple_json_path(&field.json_path, &path) {
            errors.push(error);
        }
    }
    errors
}

/// `validateDeprecationWarning`.
fn deprecation_warning(deprecated: bool, warning: &str) -> Vec<String> {
    if !deprecated {
        return vec!["can only be set for deprecated versions".into()];
    }
    let mut errors = Vec::new();
    if warning.len() > 256 {
        errors.push("must be <= 256 characters long".into());
    }
    if warning.is_empty() {
        errors.push("must not be an empty string".into());
    }
    if let Some((at, _)) = warning.char_indices().find(|(_, c)| c.is_control()) {
        errors.push(format!(
            "must only contain printable UTF-8 characters; control character found at index {at}"
        ));
    }
    errors
}

/// `ValidateCustomResourceDefinitionSubresources`: `/scale`'s paths, each a simple JSON
/// path under `.spec` or `.status`.
fn subresource_errors(subresources: &CustomResourceSubresources, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(scale) = &subresources.scale else {
        return errors;
    };
    for (field, value, under) in [
        ("specReplicasPath", &scale.spec_replicas_path, ".spec."),
        (
            "statusReplicasPath",
            &scale.status_replicas_path,
            ".status.",
        ),
    ] {
        let field = format!("{path}.scale.{field}");
        if value.is_empty() {
            errors.push(E::required(field, ""));
        } else if let Some(error) = simple_json_path(value, &field) {
            errors.push(error);
        } else if !value.starts_with(under) {
            let under = under.trim_end_matches('.');
            errors.push(E::invalid(
                field,
                value.as_str(),
                format!("should be a json path under {under}"),
            ));
        }
    }
    if let Some(selector) = scale
        .label_selector_path
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        let field = format!("{path}.scale.labelSelectorPath");
        if let Some(error) = simple_json_path(selector, &field) {
            errors.push(error);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(E::invalid(
                field,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errors
}

/// `ValidateCustomResourceColumnDefinition` (kube's internal field `JSONPath` names the
/// path).
fn column_errors(column: &CustomResourceColumnDefinition, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if column.name.is_empty() {
        errors.push(E::required(format!("{path}.name"), ""));
    }
    if column.r#type.is_empty() {
        errors.push(E::required(
            format!("{path}.type"),
            format!("must be one of {}", COLUMN_TYPES.join(",")),
        ));
    } else if !COLUMN_TYPES.contains(&column.r#type.as_str()) {
        errors.push(E::invalid(
            format!("{path}.type"),
            column.r#type.as_str(),
            format!("must be one of {}", COLUMN_TYPES.join(",")),
        ));
    }
    let format = column.format.as_str();
    if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
        errors.push(E::invalid(
            format!("{path}.format"),
            format,
            format!("must be one of {}", COLUMN_FORMATS.join(",")),
        ));
    }
    let json_path = format!("{path}.JSONPath");
    if column.json_path.is_empty() {
        errors.push(E::required(json_path, ""));
    } else if let Some(error) = simple_json_path(&column.json_path, &json_path) {
        errors.push(error);
    }
    errors
}

/// `validateSimpleJSONPath`: a path kube can follow field by field (`.spec.replicas`).
fn simple_json_path(value: &str, field: &str) -> Option<FieldError> {
    (!value.starts_with('.'))
        .then(|| E::invalid(field, value, "must be a simple json path starting with ."))
}

/// `ValidateCustomResourceDefinitionNames`: every name a DNS-1035 label (the kinds in
/// lower case), and the kind and list kind different.
fn names_errors(names: &CustomResourceDefinitionNames, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let singular = names.singular.as_str();
    let list_kind = names.list_kind.as_str();
    for (field, value) in [("plural", names.plural.as_str()), ("singular", singular)] {
        let wrong = strings::dns1035_label(value);
        if !value.is_empty() && !wrong.is_empty() {
            errors.push(E::invalid(
                format!("{path}.{field}"),
                value,
                wrong.join(","),
            ));
        }
    }
    for (field, value) in [("kind", names.kind.as_str()), ("listKind", list_kind)] {
        let wrong = strings::dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !wrong.is_empty() {
            errors.push(E::invalid(
                format!("{path}.{field}"),
                value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    wrong.join(",")
                ),
            ));
        }
    }
    for (field, values) in [
        ("shortNames", &names.short_names),
        ("categories", &names.categories),
    ] {
        for (i, value) in values.iter().enumerate() {
            let wrong = strings::dns1035_label(value);
            if !wrong.is_empty() {
                errors.push(E::invalid(
                    format!("{path}.{field}[{i}]"),
                    value.as_str(),
                    wrong.join(","),
                ));
            }
        }
    }
    if !names.kind.is_empty() && names.kind == list_kind {
        errors.push(E::invalid(
            format!("{path}.listKind"),
            list_kind,
            "kind and listKind may not be the same",
        ));
    }
    errors
}

/// `validateCustomResourceConversion`, with kube's internal paths: the webhook's client
/// configuration is `spec.conversion.webhookClientConfig`, its versions
/// `spec.conversion.conversionReviewVersions`.
fn conversion_errors(conversion: &CustomResourceConversion) -> Vec<FieldError> {
    let mut errors = enum_string(
        "spec.conversion.strategy",
        &conversion.strategy,
        &["None", "Webhook"],
    );
    let webhook = conversion.webhook.as_ref();
    let client_config = webhook.and_then(|w| w.client_config.as_ref());
    let review_versions = webhook.map(|w| w.conversion_review_versions.as_slice());
    if conversion.strategy != "Webhook" {
        if client_config.is_some() {
            errors.push(E::forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if review_versions.is_some_and(|v| !v.is_empty()) {
            errors.push(E::forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return errors;
    }
    match client_config {
        None => errors.push(E::required(
            "spec.conversion.webhookClientConfig",
            "required when strategy is set to Webhook",
        )),
        Some(config) if config.url.is_some() == config.service.is_some() => {
            errors.push(E::required(
                "spec.conversion.webhookClientConfig",
                "exactly one of url or service is required",
            ))
        }
        Some(config) => {
            if let Some(url) = &config.url
                && !url.starts_with("https://")
            {
                errors.push(E::invalid(
                    "spec.conversion.webhookClientConfig.url",
                    url.as_str(),
                    "'https' is the only allowed URL scheme",
                ));
            }
        }
    }
    let path = "spec.conversion.conversionReviewVersions";
    let versions = review_versions.unwrap_or_default();
    if versions.is_empty() {
        errors.push(E::required(path, ""));
        return errors;
    }
    for (i, version) in versions.iter().enumerate() {
        if versions[..i].contains(version) {
            errors.push(E::invalid(
                format!("{path}[{i}]"),
                version.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for detail in strings::dns1035_label(version) {
            errors.push(E::invalid(format!("{path}[{i}]"), version.as_str(), detail));
        }
    }
    if !(versions.iter()).any(|v| CONVERSION_REVIEW_VERSIONS.contains(&v.as_str())) {
        errors.push(E::invalid(
            path,
            json!(versions),
            format!(
                "must include at least one of {}",
                CONVERSION_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errors
}

/// `ValidateCustomResourceDefinitionStatus`: the accepted names, as the spec's.
fn status_errors(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    names_errors(&crd.status.accepted_names, "status.acceptedNames")
}

/// `ValidateCustomResourceDefinitionStoredVersions`: at least one; the storage version
/// among them; each still in `spec.versions`.
fn stored_versions(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let path = "status.storedVersions";
    let stored: &[String] = &crd.status.stored_versions;
    if stored.is_empty() {
        return vec![E::invalid(
            path,
            json!([]),
            "must have at least one stored version",
        )];
    }
    let mut errors = Vec::new();
    for version in &crd.spec.versions {
        if version.storage && !stored.contains(&version.name) {
            errors.push(E::invalid(
                path,
                json!(stored),
                format!("must have the storage version {}", version.name),
            ));
        }
    }
    for (i, version) in stored.iter().enumerate() {
        if !crd.spec.versions.iter().any(|v| &v.name == version) {
            errors.push(E::invalid(
                format!("{path}[{i}]"),
                version.as_str(),
                format!(
                    "missing from spec.versions; {version} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {version} and removes {version} from status.storedVersions"
                ),
            ));
        }
    }
    errors
}
