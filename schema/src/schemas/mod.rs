//! Defaulting and validation of request objects against the OpenAPI v3 schema of their
//! version: apiextensions-apiserver's structural defaulting (`pkg/apiserver/schema/defaulting`)
//! and schema validation (`pkg/apiserver/validation`, `pkg/apiserver/schema/listtype`), on
//! the documents `cargo xtask generate` writes from the version types' `schemars`
//! attributes -- one source of truth for docs, clients and the server.
//!
//! [`Schemas`] is compiled once at start-up: per (group, version, kind) of the scheme, the
//! document's component with that `x-kubernetes-group-version-kind`, `$ref`s resolved into
//! one arena of nodes. A kind or version without a schema, or a `$ref` that does not
//! resolve, is a start-up error.
//!
//! At request time, in the request's version, before conversion to the hub (kube's order:
//! default on decode, then validate):
//!
//! - defaulting fills absent properties (and non-nullable `null`s) from `default`, top-down,
//!   in nested objects, map values and list items; non-nullable `null`s without a default
//!   are dropped. Stored objects need none: they decode through the version types, whose
//!   `#[serde(default = ..)]` are the same defaults;
//! - validation reports every problem as one [`FieldError`]: type, `required`,
//!   `minimum`/`maximum` (and exclusive), `minLength`/`maxLength`, `pattern`, `enum`,
//!   `minItems`/`maxItems`, `x-kubernetes-list-type: set` and `map` uniqueness;
//! - on update, fields marked `x-kapi-immutable: true` may not change once set, also
//!   inside map entries and list-map items, matched by key as kube's transition rules
//!   match them.
//!
//! Messages are go-openapi's, as apiextensions-apiserver reports them, less the
//! `<path> in body` prefix that repeats the field kubectl already prints; bounds say "must
//! be" (the wording of kube's built-in types) where go-openapi says "should be".
//!
//! The object's `apiVersion`, `kind` and `metadata` are left to the generic rules
//! (`validation::object_meta`), as kube does for custom resources.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};
use smallvec::SmallVec;

mod cel_schema;
mod compile;
mod definition;
mod formats;
mod matches;

use kapi_core::error::{FieldError, FieldErrorType, go_unstructured};

/// The extension marking a field immutable once set.
pub const IMMUTABLE_EXTENSION: &str = "x-kapi-immutable";

/// The most an object's validation rules may cost (in CEL cost units, about 10 ns each)
/// to be evaluated right where the request is handled.
pub(crate) const QUICK_RULES_COST: u64 = 100_000;

/// kube's `FieldImmutableErrorMsg`.
const FIELD_IMMUTABLE: &str = "field is immutable";

/// Top-level properties the schema does not govern.
const GENERIC_PROPERTIES: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// A schema that cannot be used: missing, or with a `$ref` or keyword that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub(crate) String);

/// The compiled schemas of every kind and served version of a scheme.
#[derive(Debug, Default)]
pub struct Schemas {
    nodes: Vec<Node>,
    roots: HashMap<(String, String, String), usize>,
    /// The validation rules of the roots whose schema has any (CustomResourceDefinitions'
    /// `x-kubernetes-validations`).
    rules: HashMap<usize, std::sync::Arc<kapi_cel::validation::Validator>>,
    /// The `meta.k8s.io/v1` components of the documents (`ObjectMeta` and what it uses),
    /// which the schemas of kinds installed later refer to ([`Schemas::definition`]).
    meta: Map<String, Value>,
    /// Whether values are checked against their node's `format`, as kube checks custom
    /// resources (and CustomResourceDefinitions' defaults) but not built-in kinds.
    formats: bool,
}

/// The prefix of the `meta.k8s.io/v1` schema names.
const META_PREFIX: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// `x-kubernetes-list-type`: how a list's items are told apart (uniqueness in validation,
/// merging in field management and strategic merge).
#[derive(Debug, Default, Clone, PartialEq)]
pub enum ListType {
    /// Replaced whole (the default).
    #[default]
    Atomic,
    /// Scalars, each at most once.
    Set,
    /// Objects keyed by these fields (`x-kubernetes-list-map-keys`).
    Map(Vec<String>),
}

/// One compiled schema; `$ref`, `allOf` and the other sub-schemas are indices into the
/// arena of [`Schemas`]. The fields are the OpenAPI v3 keywords of the same names.
#[derive(Debug, Default)]
pub struct Node {
    /// `type`.
    pub ty: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `nullable`.
    pub nullable: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `properties`, in the schema's order.
    pub properties: Vec<(String, usize)>,
    /// `additionalProperties`, when a schema.
    pub additional: Option<usize>,
    /// `items`.
    pub items: Option<usize>,
    /// `required`.
    pub required: Vec<String>,
    /// `default`.
    pub default: Option<Value>,
    /// `minimum`, and whether it is exclusive.
    pub minimum: Option<(Number, bool)>,
    /// `maximum`, and whether it is exclusive.
    pub maximum: Option<(Number, bool)>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `pattern`, as written and compiled.
    pub pattern: Option<(String, regex_lite::Regex)>,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// Value validations (a CustomResourceDefinition's): the value must pass at least one
    /// (`anyOf`), exactly one (`oneOf`), or not (`not`) of these schemas.
    pub any_of: Vec<usize>,
    /// `oneOf`, as `any_of` says.
    pub one_of: Vec<usize>,
    /// `not`, as `any_of` says.
    pub not: Option<usize>,
    /// `x-kubernetes-list-type` with its map keys.
    pub list_type: ListType,
    /// `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`: how a strategic
    /// merge patch merges the list, as kubectl computed the patch from them.
    pub patch_strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`, as `patch_strategy` says.
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-map-type: atomic`: the object is replaced whole by server-side apply.
    pub atomic_map: bool,
    /// `additionalProperties: false`: an object of its properties alone (an empty Go
    /// struct's, which has none), never a free-form one.
    pub closed: bool,
    /// `x-kapi-immutable`: the field may not change once set.
    pub immutable: bool,
    /// `x-kubernetes-preserve-unknown-fields`: pruning keeps fields no property names.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource`: an object with its own `apiVersion`, `kind` and
    /// `metadata`, kept by pruning.
    pub embedded: bool,
    /// `allOf`, and the `$ref` a node stands for.
    pub all_of: Vec<usize>,
    /// The component a `$ref` named, on the node standing for it (`...meta.v1.MicroTime`):
    /// what the test objects' generator (`testing`) tells timestamps apart by.
    pub component: Option<String>,
}

impl Schemas {
    /// The schema of `kind` in `group`/`version`.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<KindSchema<'_>> {
        let key = (group.to_owned(), version.to_owned(), kind.to_owned());
        (self.roots.get(&key)).map(|&root| KindSchema {
            schemas: self,
            root,
        })
    }

    /// `id` and its `allOf` (and `$ref`) branches, depth first. Inline: every value a
    /// schema walk reads asks for them, and most have a handful.
    fn flatten(&self, id: usize) -> Flat<'_> {
        let mut nodes = Flat::new();
        let mut stack: SmallVec<[usize; 8]> = smallvec::smallvec![id];
        while let Some(id) = stack.pop() {
            // A `$ref` cycle made of `allOf` alone would have no end.
            if nodes.len() > 64 {
                break;
            }
            let node = &self.nodes[id];
            nodes.push(node);
            stack.extend(node.all_of.iter().rev().copied());
        }
        nodes
    }
}

/// The schema of one kind in one version.
#[derive(Clone, Copy, Debug)]
pub struct KindSchema<'a> {
    schemas: &'a Schemas,
    root: usize,
}

/// A node and its `allOf` (and `$ref`) branches, depth first.
pub type Flat<'a> = SmallVec<[&'a Node; 4]>;

/// The flattened view of a node and its branches.
pub(crate) struct View<'a> {
    nodes: Flat<'a>,
}

impl<'a> View<'a> {
    pub(crate) fn properties(&self) -> impl Iterator<Item = &'a (String, usize)> + '_ {
        self.nodes.iter().flat_map(|n| n.properties.iter())
    }

    pub(crate) fn first<T>(&self, f: impl Fn(&'a Node) -> Option<T>) -> Option<T> {
        self.nodes.iter().find_map(|n| f(n))
    }

    fn nullable(&self) -> bool {
        self.nodes.iter().any(|n| n.nullable)
    }

    /// Whether any of the nodes says so.
    pub(crate) fn any(&self, f: impl Fn(&Node) -> bool) -> bool {
        self.nodes.iter().any(|n| f(n))
    }
}

impl<'a> KindSchema<'a> {
    /// The root node: the kind's component (for `crate::testing`, which generates objects
    /// within the same compiled schema the registry validates against, and for the field
    /// manager, which merges along it).
    pub fn root(&self) -> usize {
        self.root
    }

    /// Node `root` of `schemas` as a kind's schema.
    pub fn of(schemas: &'a Schemas, root: usize) -> KindSchema<'a> {
        KindSchema { schemas, root }
    }

    /// Node `id` and its `allOf` (and `$ref`) branches, depth first.
    pub fn nodes(&self, id: usize) -> Flat<'a> {
        self.schemas.flatten(id)
    }

    /// Whether any field of the document this schema was compiled from is immutable
    /// (updates then need the stored object in the request's version).
    pub fn has_immutable_fields(&self) -> bool {
        self.schemas.nodes.iter().any(|n| n.immutable)
    }
}

impl KindSchema<'_> {
    pub(crate) fn view(&self, id: usize) -> View<'_> {
        View {
            nodes: self.schemas.flatten(id),
        }
    }

    /// Fills absent fields of `object` from the schema's defaults.
    pub fn default(&self, object: &mut Value) {
        self.default_node(self.root, object, true);
    }

    fn default_node(&self, id: usize, value: &mut Value, top: bool) {
        let view = self.view(id);
        match value {
            Value::Object(fields) => {
                for (name, child) in view.properties() {
                    if top && GENERIC_PROPERTIES.contains(&name.as_str()) {
                        continue;
                    }
                    let child_view = self.view(*child);
                    match fields.get(name) {
                        None | Some(Value::Null) => {
                            match child_view.first(|n| n.default.as_ref()) {
                                Some(default) => {
                                    fields.insert(name.clone(), default.clone());
                                }
                                None if fields.contains_key(name) && !child_view.nullable() => {
                                    fields.remove(name);
                                }
                                None => {}
                            }
                        }
                        Some(_) => {}
                    }
                    if let Some(field) = fields.get_mut(name) {
                        self.default_node(*child, field, false);
                    }
                }
                if let Some(additional) = view.first(|n| n.additional) {
                    for field in fields.values_mut() {
                        self.default_node(additional, field, false);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = view.first(|n| n.items) {
                    for value in items {
                        self.default_node(item, value, false);
                    }
                }
            }
            _ => {}
        }
    }

    /// Every problem of `object` (defaulted) against the schema.
    pub fn validate(&self, object: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        self.validate_node(self.root, object, &mut String::new(), &mut errors, true);
        dedup(&mut errors);
        // kube checks sets and list-maps (`listtype`) after the schema: their duplicates
        // come last.
        let (duplicates, mut errors): (Vec<_>, Vec<_>) =
            (errors.into_iter()).partition(|e| e.error_type == FieldErrorType::Duplicate);
        errors.extend(duplicates);
        errors
    }

    /// Every problem of `value` against the schema's root as any value (not an object's
    /// root: its `apiVersion`, `kind` and `metadata` are the schema's too), reported under
    /// `path`: a CustomResourceDefinition's default against the schema it sits in.
    pub fn validate_value(&self, value: &Value, path: &str) -> Vec<FieldError> {
        let mut errors = Vec::new();
        self.validate_node(self.root, value, &mut path.to_owned(), &mut errors, false);
        dedup(&mut errors);
        errors
    }

    /// The normalized `format` of `node` when kube checks it here.
    fn format_of<'n>(&self, node: &'n Node) -> Option<(&'n str, &'static str)> {
        let format = node.format.as_deref().filter(|_| self.schemas.formats)?;
        formats::supported(format).map(|normalized| (format, normalized))
    }

    /// kube-openapi's type validator on one node: the error of `value` not being of the
    /// node's type, if any. With a checked `format`, strings and lists pass whatever the
    /// type (go-openapi takes them for formatted data), and other values of another type
    /// are reported as not of the format, with Go's name of their kind.
    fn type_error(
        &self,
        node: &Node,
        value: &Value,
        path: &str,
        nullable: bool,
    ) -> Option<FieldError> {
        let invalid = |value: &str, detail: String| {
            let value = Some(Value::String(value.into()));
            FieldError::new(FieldErrorType::Invalid, path, value, detail)
        };
        if let Some((format, _)) = self.format_of(node)
            && !value.is_null()
        {
            let typed = node.ty.as_deref().is_some_and(|ty| has_type(value, ty))
                || (node.int_or_string && (value.is_string() || has_type(value, "integer")));
            let numeric =
                matches!(node.ty.as_deref(), Some("number" | "integer")) || node.int_or_string;
            match value {
                Value::String(_) | Value::Array(_) if !numeric => return None,
                Value::Number(_) | Value::Bool(_) | Value::Object(_) if !typed => {
                    let kind = match value {
                        Value::Number(n) if n.is_i64() => "int64",
                        Value::Number(_) => "float64",
                        _ => "",
                    };
                    return Some(invalid(kind, format!("must be of type {format}: {kind:?}")));
                }
                _ => {}
            }
        }
        if let Some(ty) = &node.ty
            && !has_type(value, ty)
            && !(value.is_null() && nullable)
        {
            let name = type_name(value);
            return Some(invalid(name, format!("must be of type {ty}: {name:?}")));
        }
        if node.int_or_string && !(value.is_string() || has_type(value, "integer")) {
            let name = type_name(value);
            return Some(invalid(
                name,
                format!("must be of type integer or string: {name:?}"),
            ));
        }
        None
    }

    fn validate_node(
        &self,
        id: usize,
        value: &Value,
        path: &mut String,
        errors: &mut Vec<FieldError>,
        top: bool,
    ) {
        let view = self.view(id);
        // kube-openapi's type errors carry the value's type name as their value.
        for node in &view.nodes {
            if let Some(error) = self.type_error(node, value, path, view.nullable()) {
                errors.push(error);
                return;
            }
        }
        for node in &view.nodes {
            check_scalar(node, value, path, errors);
            if let (Some((format, normalized)), Value::String(s)) = (self.format_of(node), value)
                && !formats::is_valid(normalized, s)
            {
                errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    path.as_str(),
                    Some(value.clone()),
                    formats::message(format, s),
                ));
            }
            self.check_branches(node, value, path, errors);
        }
        match value {
            Value::Object(fields) => {
                if !top && view.any(|n| n.embedded) {
                    errors.extend(crate::metadata::embedded_resource(value, path));
                }
                for node in &view.nodes {
                    for required in &node.required {
                        if top && GENERIC_PROPERTIES.contains(&required.as_str()) {
                            continue;
                        }
                        if fields.get(required).is_none_or(Value::is_null) {
                            let path = child_path(path, required);
                            errors.push(FieldError::new(FieldErrorType::Required, path, None, ""));
                        }
                    }
                }
                for (name, child) in view.properties() {
                    if top && GENERIC_PROPERTIES.contains(&name.as_str()) {
                        continue;
                    }
                    if let Some(field) = fields.get(name) {
                        let len = path.len();
                        push_property(path, name);
                        self.validate_node(*child, field, path, errors, false);
                        path.truncate(len);
                    }
                }
                if let Some(additional) = view.first(|n| n.additional) {
                    for (key, field) in fields {
                        let len = path.len();
                        path.push_str(&format!("[{key}]"));
                        self.validate_node(additional, field, path, errors, false);
                        path.truncate(len);
                    }
                }
            }
            Value::Array(items) => {
                for node in &view.nodes {
                    check_list(node, items, path, errors);
                }
                if let Some(item) = view.first(|n| n.items) {
                    for (index, field) in items.iter().enumerate() {
                        let len = path.len();
                        path.push_str(&format!("[{index}]"));
                        self.validate_node(item, field, path, errors, false);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    /// A CustomResourceDefinition's value validations of `node` on `value`: `anyOf`,
    /// `oneOf`, `not` (each branch judged on its own), `multipleOf`, `minProperties` and
    /// `maxProperties`, with kube-openapi's messages.
    fn check_branches(&self, node: &Node, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
        let invalid = |detail: String| match value {
            // kube prints a map or a list as Go prints an unstructured value, which a JSON
            // value in the error cannot show: it goes in the detail.
            Value::Object(_) | Value::Array(_) => FieldError::new(
                FieldErrorType::Invalid,
                path,
                None,
                format!("{}: {detail}", go_unstructured(value)),
            ),
            _ => FieldError::new(FieldErrorType::Invalid, path, Some(value.clone()), detail),
        };
        let run = |branch: usize| {
            let mut found = Vec::new();
            self.validate_node(branch, value, &mut path.to_owned(), &mut found, false);
            found
        };
        let passes = |branch: usize| run(branch).is_empty();
        // kube-openapi adds the errors of the failed branch that matched most (the first
        // among equals: `MatchCount`, `matches.rs`) after the `anyOf` or `oneOf` error.
        let keep = |best: &mut Option<(usize, Vec<FieldError>)>, branch: usize, found| {
            let count = self.match_count(branch, value);
            if best.as_ref().is_none_or(|(most, _)| count > *most) {
                *best = Some((count, found));
            }
        };
        if !node.any_of.is_empty() {
            let mut best = None;
            let mut valid = false;
            for branch in &node.any_of {
                let found = run(*branch);
                if found.is_empty() {
                    valid = true;
                    break;
                }
                keep(&mut best, *branch, found);
            }
            if !valid {
                errors.push(invalid("must validate at least one schema (anyOf)".into()));
                errors.extend(best.map(|(_, found)| found).unwrap_or_default());
            }
        }
        if !node.one_of.is_empty() {
            let mut best = None;
            let mut valid = 0;
            for branch in &node.one_of {
                let found = run(*branch);
                if found.is_empty() {
                    valid += 1;
                    best = None;
                } else if valid == 0 {
                    keep(&mut best, *branch, found);
                }
            }
            if valid != 1 {
                errors.push(invalid(
                    "must validate one and only one schema (oneOf)".into(),
                ));
                errors.extend(best.map(|(_, found)| found).unwrap_or_default());
            }
        }
        if let Some(not) = node.not
            && passes(not)
        {
            errors.push(invalid("must not validate the schema (not)".into()));
        }
        if let (Some(multiple), Some(number)) = (node.multiple_of, value.as_f64())
            && multiple > 0.0
        {
            let quotient = number / multiple;
            if (quotient - quotient.round()).abs() > 1e-9 {
                let multiple = serde_json::Number::from_f64(multiple)
                    .map_or_else(|| multiple.to_string(), |n| go_number(&n));
                errors.push(invalid(format!("should be a multiple of {multiple}")));
            }
        }
        if let Value::Object(fields) = value {
            let count = fields.len() as u64;
            if let Some(min) = node.min_properties
                && count < min
            {
                errors.push(invalid(format!("should have at least {min} properties")));
            }
            if let Some(max) = node.max_properties
                && count > max
            {
                errors.push(invalid(format!("should have at most {max} properties")));
            }
        }
    }

    /// A write's whole judgement by its schema, in the order kube runs it: `object`
    /// defaulted, validated, checked against `old` (defaulted too: immutable fields), then
    /// the validation rules (transition rules on `old`), a costly evaluation handed to
    /// `long`. Returns the errors and the warnings of ratcheted rules.
    pub fn judge(
        &self,
        object: &mut Value,
        old: Option<&Value>,
        long: impl FnOnce(
            &mut dyn FnMut() -> kapi_cel::validation::Outcome,
        ) -> kapi_cel::validation::Outcome,
    ) -> (Vec<FieldError>, Vec<String>) {
        self.default(object);
        let mut errors = self.validate(object);
        let old = old.map(|old| {
            let mut old = old.clone();
            self.default(&mut old);
            old
        });
        if let Some(old) = &old {
            errors.extend(self.validate_update(object, old));
        }
        let mut warnings = Vec::new();
        if self.has_rules() {
            let (rule_errors, ratcheted) = self.validate_rules(object, old.as_ref(), &errors, long);
            errors.extend(rule_errors);
            warnings = ratcheted;
        }
        (errors, warnings)
    }

    /// Whether the schema has validation rules (updates then need the stored object, for
    /// transition rules and ratcheting).
    pub fn has_rules(&self) -> bool {
        self.schemas.rules.contains_key(&self.root)
    }

    /// The errors of the schema's validation rules on `new` (`old` on update), after the
    /// schema's own validation found `schema_errors`: when any of those blocks (a value of
    /// the wrong type, missing, too long or too many), the rules are not run and kube's
    /// note says so. Also the warnings of errors ratcheted on unchanged values.
    ///
    /// The rules run at once when they cost little (at most [`QUICK_RULES_COST`]); an
    /// object whose rules cost more is handed to `long`, which runs the evaluation given
    /// to it where it may take its time (off an async worker).
    pub fn validate_rules(
        &self,
        new: &Value,
        old: Option<&Value>,
        schema_errors: &[FieldError],
        long: impl FnOnce(
            &mut dyn FnMut() -> kapi_cel::validation::Outcome,
        ) -> kapi_cel::validation::Outcome,
    ) -> (Vec<FieldError>, Vec<String>) {
        let Some(rules) = self.schemas.rules.get(&self.root) else {
            return (Vec::new(), Vec::new());
        };
        // kube's type errors are `FieldValueTypeInvalid`; this crate reports them as
        // invalid values that say so.
        let blocking = schema_errors.iter().any(|e| {
            matches!(
                e.error_type,
                FieldErrorType::NotSupported
                    | FieldErrorType::Required
                    | FieldErrorType::TooLong
                    | FieldErrorType::TooMany
            ) || (e.error_type == FieldErrorType::Invalid
                && e.detail.starts_with("must be of type"))
        });
        if blocking {
            let note = "some validation rules were not checked because the object was invalid; \
                        correct the existing errors to complete validation";
            return (vec![FieldError::invalid("<nil>", "null", note)], Vec::new());
        }
        let outcome = match rules.validate_within(new, old, QUICK_RULES_COST) {
            Some(outcome) => outcome,
            None => long(&mut || rules.validate(new, old, kapi_cel::validation::RUNTIME_BUDGET)),
        };
        let errors = (outcome.errors.into_iter())
            .map(|e| {
                use kapi_cel::validation::ErrorKind;
                match e.kind {
                    ErrorKind::Invalid => FieldError::invalid(e.path, e.value, e.detail),
                    ErrorKind::Forbidden => FieldError::forbidden(e.path, e.detail),
                    ErrorKind::Required => FieldError::required(e.path, e.detail),
                    ErrorKind::Duplicate => FieldError::new(
                        FieldErrorType::Duplicate,
                        e.path,
                        Some(Value::String(e.value)),
                        "",
                    ),
                    ErrorKind::Internal => {
                        FieldError::new(FieldErrorType::Invalid, e.path, None, e.detail)
                    }
                }
            })
            .collect();
        (errors, outcome.warnings)
    }

    /// Changes to immutable fields between `old` and `new` (both defaulted).
    pub fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        self.immutable_node(self.root, new, old, &mut String::new(), &mut errors, true);
        errors
    }

    /// Walks `new` and `old` together where kube's ratcheting and transition rules
    /// correlate them: object properties, map entries (by key) and list-map items (by their
    /// keys). Atomic lists and sets have no correlated items: an immutable field inside
    /// one is not checked (mark the list itself immutable).
    fn immutable_node(
        &self,
        id: usize,
        new: &Value,
        old: &Value,
        path: &mut String,
        errors: &mut Vec<FieldError>,
        top: bool,
    ) {
        let view = self.view(id);
        match (new, old) {
            (Value::Object(new_fields), Value::Object(old_fields)) => {
                for (name, child) in view.properties() {
                    if top && GENERIC_PROPERTIES.contains(&name.as_str()) {
                        continue;
                    }
                    let Some(old_field) = old_fields.get(name) else {
                        continue;
                    };
                    let new_field = new_fields.get(name).unwrap_or(&Value::Null);
                    let len = path.len();
                    push_property(path, name);
                    self.immutable_child(*child, new_field, old_field, path, errors);
                    path.truncate(len);
                }
                if let Some(additional) = view.first(|n| n.additional) {
                    let declared = |key: &String| view.properties().any(|(name, _)| name == key);
                    for (key, old_field) in old_fields.iter().filter(|(k, _)| !declared(k)) {
                        // A removed entry is not a changed field of it.
                        let Some(new_field) = new_fields.get(key) else {
                            continue;
                        };
                        let len = path.len();
                        path.push_str(&format!("[{key}]"));
                        self.immutable_child(additional, new_field, old_field, path, errors);
                        path.truncate(len);
                    }
                }
            }
            (Value::Array(new_items), Value::Array(old_items)) => {
                let keys = view.first(|n| match &n.list_type {
                    ListType::Map(keys) => Some(keys),
                    _ => None,
                });
                let (Some(keys), Some(item)) = (keys, view.first(|n| n.items)) else {
                    return;
                };
                let key_of = |item: &Value| -> Vec<Value> {
                    (keys.iter())
                        .map(|k| item.get(k).cloned().unwrap_or(Value::Null))
                        .collect()
                };
                let mut seen = Vec::new();
                for (index, new_item) in new_items.iter().enumerate() {
                    let key = key_of(new_item);
                    // A repeated key is a duplicate (reported as such), not a changed item.
                    if seen.contains(&key) {
                        continue;
                    }
                    // An item with a new key is a new item, not a changed one.
                    let Some(old_item) = old_items.iter().find(|old| key_of(old) == key) else {
                        seen.push(key);
                        continue;
                    };
                    seen.push(key);
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    self.immutable_node(item, new_item, old_item, path, errors, false);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// An immutable field compared whole, or any other walked into.
    fn immutable_child(
        &self,
        id: usize,
        new: &Value,
        old: &Value,
        path: &mut String,
        errors: &mut Vec<FieldError>,
    ) {
        if self.view(id).nodes.iter().any(|n| n.immutable) {
            if new != old {
                errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    path.as_str(),
                    Some(new.clone()),
                    FIELD_IMMUTABLE,
                ));
            }
        } else {
            self.immutable_node(id, new, old, path, errors, false);
        }
    }
}

/// Removes repeated errors, keeping the first: kube-openapi's results drop an error whose
/// message one already holds (`Result.AddErrors`), as branches repeat the value's own.
fn dedup(errors: &mut Vec<FieldError>) {
    let mut seen: Vec<FieldError> = Vec::with_capacity(errors.len());
    errors.retain(|e| {
        let new = !seen.contains(e);
        if new {
            seen.push(e.clone());
        }
        new
    });
}

fn push_property(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

fn child_path(path: &str, name: &str) -> String {
    let mut path = path.to_owned();
    push_property(&mut path, name);
    path
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

/// The JSON type of a value, as kube-openapi names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Values as Go's `%q` / `%v` print them in kube's messages.
fn render(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A bound as Go's `%v` prints it: `0`, not `0.0`, for a whole `float64`.
fn go_number(number: &Number) -> String {
    match number.as_f64() {
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        _ => number.to_string(),
    }
}

/// `enum`, numeric bounds, string lengths and `pattern`.
fn check_scalar(node: &Node, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let invalid = |detail: String| {
        FieldError::new(FieldErrorType::Invalid, path, Some(value.clone()), detail)
    };
    if let Some(values) = &node.enumeration
        && !values.contains(value)
    {
        let supported: Vec<String> = values.iter().map(render).collect();
        errors.push(FieldError::new(
            FieldErrorType::NotSupported,
            path,
            Some(value.clone()),
            format!("supported values: {}", supported.join(", ")),
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some((minimum, exclusive)) = &node.minimum
            && let Some(min) = minimum.as_f64()
        {
            let minimum = go_number(minimum);
            if *exclusive && number <= min {
                errors.push(invalid(format!("must be greater than {minimum}")));
            } else if number < min {
                errors.push(invalid(format!(
                    "must be greater than or equal to {minimum}"
                )));
            }
        }
        if let Some((maximum, exclusive)) = &node.maximum
            && let Some(max) = maximum.as_f64()
        {
            let maximum = go_number(maximum);
            if *exclusive && number >= max {
                errors.push(invalid(format!("must be less than {maximum}")));
            } else if number > max {
                errors.push(invalid(format!("must be less than or equal to {maximum}")));
            }
        }
    }
    if let Some(string) = value.as_str() {
        let chars = string.chars().count() as u64;
        if let Some(max) = node.max_length
            && chars > max
        {
            let unit = if max == 1 { "byte" } else { "bytes" };
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                path,
                None,
                format!("may not be more than {max} {unit}"),
            ));
        }
        if let Some(min) = node.min_length
            && chars < min
        {
            errors.push(invalid(format!("should be at least {min} chars long")));
        }
        if let Some((pattern, regex)) = &node.pattern
            && !regex.is_match(string)
        {
            errors.push(invalid(format!("should match '{pattern}'")));
        }
    }
}

/// `minItems`, `maxItems` and the uniqueness of sets and list-maps.
fn check_list(node: &Node, items: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    if let Some(max) = node.max_items
        && items.len() as u64 > max
    {
        errors.push(FieldError::new(
            FieldErrorType::TooMany,
            path,
            Some(Value::from(items.len())),
            format!("must have at most {max} items"),
        ));
    }
    if let Some(min) = node.min_items
        && (items.len() as u64) < min
    {
        // kube's value is the count, as for `maxItems`.
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            path,
            Some(Value::from(items.len())),
            format!("should have at least {min} items"),
        ));
    }
    match &node.list_type {
        ListType::Atomic => {}
        ListType::Set => {
            for (index, item) in items.iter().enumerate() {
                if items[..index].contains(item) {
                    errors.push(FieldError::new(
                        FieldErrorType::Duplicate,
                        format!("{path}[{index}]"),
                        Some(item.clone()),
                        "",
                    ));
                }
            }
        }
        ListType::Map(keys) => {
            let key_of = |item: &'_ Value| -> Vec<Value> {
                (keys.iter())
                    .map(|k| item.get(k).cloned().unwrap_or(Value::Null))
                    .collect()
            };
            let mut seen: Vec<Vec<Value>> = Vec::new();
            for (index, item) in items.iter().enumerate() {
                if !item.is_object() {
                    continue;
                }
                let key = key_of(item);
                if seen.contains(&key) {
                    let present: Map<String, Value> = (keys.iter())
                        .zip(&key)
                        .filter(|(_, v)| !v.is_null())
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    // The value is Go's rendering, which `FieldError` cannot print: it
                    // goes in the detail, so the message reads as kube's.
                    errors.push(FieldError::new(
                        FieldErrorType::Duplicate,
                        format!("{path}[{index}]"),
                        None,
                        go_unstructured(&Value::Object(present)),
                    ));
                }
                seen.push(key);
            }
        }
    }
}

#[cfg(test)]
mod tests;
