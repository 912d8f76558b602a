//! Compiling OpenAPI v3 schemas into the arena of [`Schemas`]: `$ref`s resolved, each
//! component compiled once, keywords read into [`Node`]s.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::{IMMUTABLE_EXTENSION, ListType, META_PREFIX, Node, SchemaError, Schemas};
use kapi_core::api::OpenApiV3Document;
use kapi_core::scheme::Scheme;

/// Where a `$ref` finds its component.
#[derive(Clone, Copy)]
enum Components<'a> {
    /// Parsed already: a definition's schema, a test's.
    Parsed(&'a Map<String, Value>),
    /// As a document has them, parsed when a `$ref` first names them.
    Raw(&'a BTreeMap<Cow<'a, str>, &'a RawValue>),
}

impl<'a> Components<'a> {
    fn get(self, name: &str) -> Result<Option<Cow<'a, Value>>, serde_json::Error> {
        match self {
            Components::Parsed(components) => Ok(components.get(name).map(Cow::Borrowed)),
            Components::Raw(components) => (components.get(name))
                .map(|raw| serde_json::from_str(raw.get()).map(Cow::Owned))
                .transpose(),
        }
    }
}

/// Compiles schemas into the arena, each component once: `refs` is shared by every
/// kind compiled together, so that `ObjectMeta` or a `PodSpec` is compiled once for all
/// the kinds and documents that use it. A component that is not the same in every
/// document (a kind embedded in another kind's document, without its type meta), or
/// that reaches one that is not, is compiled per document: `local` names them.
struct Compiler<'a> {
    document: &'a str,
    components: Components<'a>,
    nodes: &'a mut Vec<Node>,
    refs: &'a mut HashMap<String, usize>,
    local: &'a HashSet<&'a str>,
}

impl Compiler<'_> {
    fn error(&self, message: impl std::fmt::Display) -> SchemaError {
        SchemaError(format!("OpenAPI v3 document {}: {message}", self.document))
    }

    fn reference(&mut self, reference: &Value) -> Result<usize, SchemaError> {
        let name = (reference.as_str())
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
            .ok_or_else(|| self.error(format_args!("unsupported $ref {reference}")))?;
        let key = match self.local.contains(name) {
            true => format!("{}#{name}", self.document),
            false => name.to_owned(),
        };
        if let Some(&index) = self.refs.get(&key) {
            return Ok(index);
        }
        let target = (self.components.get(name))
            .map_err(|e| self.error(format_args!("$ref {name:?}: {e}")))?
            .ok_or_else(|| self.error(format_args!("$ref {name:?} does not resolve")))?;
        // Reserved before compiling the target, so recursive schemas terminate.
        let index = self.nodes.len();
        self.nodes.push(Node {
            component: Some(name.to_owned()),
            ..Node::default()
        });
        self.refs.insert(key, index);
        let compiled = self.compile(&target)?;
        self.nodes[index].all_of.push(compiled);
        Ok(index)
    }

    fn compile(&mut self, schema: &Value) -> Result<usize, SchemaError> {
        let index = self.nodes.len();
        self.nodes.push(Node::default());
        let Some(schema) = schema.as_object() else {
            return Ok(index);
        };
        let mut node = Node::default();
        if let Some(reference) = schema.get("$ref") {
            node.all_of.push(self.reference(reference)?);
        }
        for branch in (schema.get("allOf").and_then(Value::as_array))
            .into_iter()
            .flatten()
        {
            node.all_of.push(self.compile(branch)?);
        }
        node.ty = schema
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_owned);
        node.format = (schema.get("format").and_then(Value::as_str)).map(str::to_owned);
        node.nullable = schema.get("nullable") == Some(&Value::Bool(true));
        node.int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
        node.immutable = schema.get(IMMUTABLE_EXTENSION) == Some(&Value::Bool(true));
        node.preserve_unknown =
            schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        node.embedded = schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
        node.atomic_map =
            schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
        node.default = schema.get("default").cloned();
        node.closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        for (name, property) in (schema.get("properties").and_then(Value::as_object))
            .into_iter()
            .flatten()
        {
            let child = self.compile(property)?;
            node.properties.push((name.clone(), child));
        }
        if let Some(additional) = schema.get("additionalProperties")
            && additional.is_object()
        {
            node.additional = Some(self.compile(additional)?);
        }
        if let Some(items) = schema.get("items") {
            node.items = Some(self.compile(items)?);
        }
        node.required = (schema.get("required").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect();
        node.minimum = bound(schema, "minimum", "exclusiveMinimum");
        node.maximum = bound(schema, "maximum", "exclusiveMaximum");
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        node.min_length = count("minLength");
        node.max_length = count("maxLength");
        node.min_items = count("minItems");
        node.max_items = count("maxItems");
        node.min_properties = count("minProperties");
        node.max_properties = count("maxProperties");
        node.multiple_of = schema.get("multipleOf").and_then(Value::as_f64);
        for (key, branches) in [("anyOf", &mut node.any_of), ("oneOf", &mut node.one_of)] {
            for branch in (schema.get(key).and_then(Value::as_array))
                .into_iter()
                .flatten()
            {
                branches.push(self.compile(branch)?);
            }
        }
        if let Some(not) = schema.get("not") {
            node.not = Some(self.compile(not)?);
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            let regex = regex_lite::Regex::new(pattern)
                .map_err(|e| self.error(format_args!("pattern {pattern:?}: {e}")))?;
            node.pattern = Some((pattern.to_owned(), regex));
        }
        node.enumeration = schema.get("enum").and_then(Value::as_array).cloned();
        node.list_type = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                (schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array))
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect(),
            ),
            _ => ListType::Atomic,
        };
        let extension = |name: &str| schema.get(name).and_then(Value::as_str).map(str::to_owned);
        node.patch_strategy = extension("x-kubernetes-patch-strategy");
        node.patch_merge_key = extension("x-kubernetes-patch-merge-key");
        self.nodes[index] = node;
        Ok(index)
    }
}

/// `minimum` (or `maximum`) and whether it is exclusive: OpenAPI 3.0's boolean
/// `exclusiveMinimum`, or JSON Schema's numeric one.
fn bound(schema: &Map<String, Value>, key: &str, exclusive: &str) -> Option<(Number, bool)> {
    match (schema.get(key), schema.get(exclusive)) {
        (_, Some(Value::Number(n))) => Some((n.clone(), true)),
        (Some(Value::Number(n)), flag) => Some((n.clone(), flag == Some(&Value::Bool(true)))),
        _ => None,
    }
}

impl Schemas {
    /// Compiles one free-standing OpenAPI v3 `schema` (its `$ref`s resolving in
    /// `components`): a node of a CustomResourceDefinition's schema, whose default is
    /// checked against it, and tests of what reads schemas, such as the field manager's.
    pub fn standalone(
        schema: &Value,
        components: &Map<String, Value>,
    ) -> Result<(Schemas, usize), SchemaError> {
        let mut schemas = Schemas {
            formats: true,
            ..Schemas::default()
        };
        let mut compiler = Compiler {
            document: "standalone",
            components: Components::Parsed(components),
            nodes: &mut schemas.nodes,
            refs: &mut HashMap::new(),
            local: &HashSet::new(),
        };
        let root = compiler.compile(schema)?;
        Ok((schemas, root))
    }

    /// Compiles the schema of every kind and served version of `scheme` from the OpenAPI v3
    /// documents, given as (`path`, `json`): `api/v1`, `apis/<group>/<version>`.
    ///
    /// Only what the kinds use is parsed and compiled, each component once: the documents
    /// are read for their components' places alone (their `paths` skipped), and a
    /// component is parsed when a `$ref` first names it. At start-up this is most of
    /// what the server does before it is ready.
    pub fn new<'a>(
        scheme: &Scheme,
        documents: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Schemas, SchemaError> {
        let mut parsed: BTreeMap<&str, RawComponents<'a>> = BTreeMap::new();
        let mut schemas = Schemas::default();
        for (path, json) in documents {
            let document: DocumentComponents<'a> = serde_json::from_str(json)
                .map_err(|e| SchemaError(format!("OpenAPI v3 document {path}: {e}")))?;
            let components = document.components.schemas;
            for (name, raw) in &components {
                if name.starts_with(META_PREFIX) && !schemas.meta.contains_key(name.as_ref()) {
                    let schema = serde_json::from_str(raw.get()).map_err(|e| {
                        SchemaError(format!("OpenAPI v3 document {path}: {name}: {e}"))
                    })?;
                    schemas.meta.insert(name.to_string(), schema);
                }
            }
            parsed.insert(path, components);
        }
        let local = local_components(&parsed);
        // Each document's kinds, read once from its components' `x-kubernetes-group-version-kind`.
        let kinds: HashMap<&str, HashMap<(String, String, String), &str>> = (parsed.iter())
            .map(|(path, components)| (*path, kinds_of(components)))
            .collect();
        let mut refs = HashMap::new();
        for kind in scheme.kinds().iter() {
            let info = kind.info;
            for version in kind.versions() {
                let path = match info.group {
                    "" => format!("api/{version}"),
                    group => format!("apis/{group}/{version}"),
                };
                let missing = || {
                    SchemaError(format!(
                        "no OpenAPI v3 schema for {} {} (document {path})",
                        kind.api_version(version),
                        info.kind
                    ))
                };
                let components = parsed.get(path.as_str()).ok_or_else(missing)?;
                let gvk = (
                    info.group.to_owned(),
                    version.to_owned(),
                    info.kind.to_owned(),
                );
                let name = (kinds.get(path.as_str()))
                    .and_then(|kinds| kinds.get(&gvk))
                    .ok_or_else(missing)?;
                let mut compiler = Compiler {
                    document: &path,
                    components: Components::Raw(components),
                    nodes: &mut schemas.nodes,
                    refs: &mut refs,
                    local: &local,
                };
                let root =
                    compiler.reference(&Value::String(format!("#/components/schemas/{name}")))?;
                // A kind its strategy judges is never judged by its schema's rules.
                if !info.strategy_validates && !schemas.rules.contains_key(&root) {
                    let lookup = |name: &str| {
                        (Components::Raw(components).get(name))
                            .map_err(|e| SchemaError(format!("OpenAPI v3 document {path}: {e}")))
                    };
                    if let Some(rules) = compiled_kind_rules(name, &lookup)? {
                        schemas.rules.insert(root, rules);
                    }
                }
                schemas
                    .roots
                    .insert((info.group.into(), version.into(), info.kind.into()), root);
            }
        }
        Ok(schemas)
    }

    /// [`Schemas::new`] on the OpenAPI v3 documents compiled into the program (the
    /// generated `documents::SCHEMAS_V3`), inflated while their schemas compile.
    pub fn compiled_in(
        scheme: &Scheme,
        documents: &[OpenApiV3Document],
    ) -> Result<Schemas, SchemaError> {
        // Inflated on two threads, the documents split in halves by size: at start-up
        // this is most of what stands between the server and its first request.
        let inflate = |documents: &[OpenApiV3Document]| -> Vec<(&'static str, String)> {
            (documents.iter())
                .map(|d| (d.path, d.json.inflate_text()))
                .collect()
        };
        let total: usize = documents.iter().map(|d| d.json.len()).sum();
        let mut half = 0;
        let split = (documents.iter())
            .take_while(|d| {
                half += d.json.len();
                half <= total / 2
            })
            .count();
        let (first, second) = documents.split_at(split);
        let inflated = std::thread::scope(|scope| {
            let other = scope.spawn(|| inflate(second));
            let mut inflated = inflate(first);
            // The other half's panic (`Deflated::inflate` on bytes it did not write) is ours.
            inflated.extend(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
            inflated
        });
        Schemas::new(
            scheme,
            inflated.iter().map(|(path, json)| (*path, json.as_str())),
        )
    }

    /// Compiles one component of `components` (`document` names it in errors), and
    /// registers nothing: for [`Schemas::new`] and tests.
    pub fn compile_component(
        &mut self,
        document: &str,
        components: &Map<String, Value>,
        name: &str,
    ) -> Result<usize, SchemaError> {
        let mut compiler = Compiler {
            document,
            components: Components::Parsed(components),
            nodes: &mut self.nodes,
            refs: &mut HashMap::new(),
            local: &HashSet::new(),
        };
        compiler.reference(&Value::String(format!("#/components/schemas/{name}")))
    }
}

/// The validation rules of a compiled kind whose schema is component `name`, if it has
/// any: compiled once, on the structural form of its schema, in the environment stored
/// rules get (what `cargo xtask generate` accepted in the stricter one keeps compiling).
fn compiled_kind_rules(
    name: &str,
    lookup: &crate::structural::Lookup<'_>,
) -> Result<Option<std::sync::Arc<kapi_cel::validation::Validator>>, SchemaError> {
    if !crate::structural::reaches_rules(name, lookup)? {
        return Ok(None);
    }
    let schema = crate::structural::inline_resource(name, lookup)?;
    let features = kapi_cel::environment::stored_expressions(kapi_cel::environment::KUBERNETES);
    Ok(kapi_cel::validation::Validator::new(&schema, &features).map(std::sync::Arc::new))
}

/// A document's components as written, by name.
type RawComponents<'a> = BTreeMap<Cow<'a, str>, &'a RawValue>;

/// The components that are not the same in every document that has them, and those that
/// reach one of them through their `$ref`s: each document's are its own.
fn local_components<'a>(documents: &'a BTreeMap<&str, RawComponents<'a>>) -> HashSet<&'a str> {
    let mut first: HashMap<&str, &str> = HashMap::new();
    let mut local = HashSet::new();
    for components in documents.values() {
        for (name, raw) in components {
            if *first.entry(name).or_insert(raw.get()) != raw.get() {
                local.insert(name.as_ref());
            }
        }
    }
    if local.is_empty() {
        return local;
    }
    // Then whatever reaches them, until nothing more is found.
    let uses: Vec<(&str, Vec<&str>)> = (documents.values())
        .flatten()
        .map(|(name, raw)| (name.as_ref(), references(raw.get())))
        .collect();
    loop {
        let before = local.len();
        for (name, references) in &uses {
            if references.iter().any(|r| local.contains(r)) {
                local.insert(name);
            }
        }
        if local.len() == before {
            return local;
        }
    }
}

/// The components a schema's `$ref`s name (`"#/components/schemas/<name>"`).
fn references(schema: &str) -> Vec<&str> {
    const PREFIX: &str = "\"#/components/schemas/";
    (memchr::memmem::find_iter(schema.as_bytes(), PREFIX))
        .filter_map(|at| schema.get(at + PREFIX.len()..))
        .filter_map(|rest| rest.split_once('"').map(|(name, _)| name))
        .collect()
}

/// An OpenAPI v3 document read for its components alone.
#[derive(Deserialize)]
struct DocumentComponents<'a> {
    #[serde(borrow, default)]
    components: ComponentsObject<'a>,
}

/// `components`: each schema as written.
#[derive(Default, Deserialize)]
struct ComponentsObject<'a> {
    #[serde(borrow, default)]
    schemas: BTreeMap<Cow<'a, str>, &'a RawValue>,
}

/// A component read for the kinds it is the schema of.
#[derive(Deserialize)]
struct KindsOf<'a> {
    #[serde(borrow, default, rename = "x-kubernetes-group-version-kind")]
    kinds: Vec<GroupVersionKind<'a>>,
}

/// One entry of `x-kubernetes-group-version-kind`.
#[derive(Deserialize)]
struct GroupVersionKind<'a> {
    #[serde(borrow, default)]
    group: Cow<'a, str>,
    #[serde(borrow, default)]
    version: Cow<'a, str>,
    #[serde(borrow, default)]
    kind: Cow<'a, str>,
}

/// The component of each kind a document's components give the schema of (by their
/// `x-kubernetes-group-version-kind`; the first by name when several do; a component that
/// does not parse gives none: compiling it reports why).
fn kinds_of<'a>(components: &'a RawComponents<'_>) -> HashMap<(String, String, String), &'a str> {
    let mut kinds = HashMap::new();
    for (name, raw) in components {
        let Ok(of) = serde_json::from_str::<KindsOf<'_>>(raw.get()) else {
            continue;
        };
        for gvk in of.kinds {
            let key = (
                gvk.group.into_owned(),
                gvk.version.into_owned(),
                gvk.kind.into_owned(),
            );
            kinds.entry(key).or_insert(name.as_ref());
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use super::{DocumentComponents, local_components};

    /// A component that differs between documents is each document's own, and so is what
    /// reaches it; the rest is shared.
    #[test]
    fn components_differing_between_documents_are_local() {
        let core = r##"{"components":{"schemas":{
            "Claim":{"type":"object","properties":{"kind":{"type":"string"}}},
            "Meta":{"type":"object"},
            "Pod":{"properties":{"metadata":{"$ref":"#/components/schemas/Meta"}}}}}}"##;
        let apps = r##"{"paths":{"/x":{}},"components":{"schemas":{
            "Claim":{"type":"object"},
            "Meta":{"type":"object"},
            "SetSpec":{"properties":{"claims":{"items":{"$ref":"#/components/schemas/Claim"}}}},
            "Set":{"properties":{"spec":{"$ref":"#/components/schemas/SetSpec"}}}}}}"##;
        let parse = |json| serde_json::from_str::<DocumentComponents<'_>>(json).unwrap();
        let documents = BTreeMap::from([
            ("api/v1", parse(core).components.schemas),
            ("apis/apps/v1", parse(apps).components.schemas),
        ]);
        let local = local_components(&documents);
        assert_eq!(local, HashSet::from(["Claim", "SetSpec", "Set"]));
    }
}
