//! The OpenAPI schema keywords a kapi server understands: the contract between what
//! `kapi-codegen` publishes and what the registry's schema validation enforces.
//!
//! Constraints are written as `schemars` attributes, some of them free-form
//! (`#[schemars(extend("exclusiveMinimum" = true))]`). A keyword the server does not
//! enforce would be published (clients and `kubectl explain` believe it) but never
//! checked, and a misspelt one would be neither; so `ApiModel::build` refuses a schema with
//! any keyword outside [`SCHEMA_KEYWORDS`], at generate time, naming the schema and field.

/// Every keyword a published schema may carry. The registry's `schema_validation` enforces
/// each constraint here; adding one means enforcing it there.
pub const SCHEMA_KEYWORDS: &[&str] = &[
    // Structure.
    "type",
    "properties",
    "additionalProperties",
    "items",
    "required",
    "allOf",
    "$ref",
    "nullable",
    // Pruning keeps, and server-side apply owns, fields no property names.
    "x-kubernetes-preserve-unknown-fields",
    // Defaulting.
    "default",
    // Constraints.
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "enum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    // CEL validation rules (`#[kapi::rules]`), checked by `cargo xtask generate` and
    // applied with the schema's own checks, as custom resources' rules are.
    "x-kubernetes-validations",
    // Merge semantics, which the field manager (server-side apply) follows.
    "x-kubernetes-map-type",
    "x-kapi-immutable",
    "x-kubernetes-int-or-string",
    // Documentation and client hints, not constraints.
    "description",
    "title",
    "format",
    "example",
    "deprecated",
    "x-kubernetes-group-version-kind",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
];
