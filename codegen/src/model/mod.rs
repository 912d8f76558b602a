//! The API model: every group, version and resource of an API, with the OpenAPI schemas
//! of each group-version, built once from the kinds the derives describe.
//!
//! Every renderer reads this model and nothing else, so routes, discovery, glue and
//! OpenAPI cannot disagree.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use kapi_core::api::{
    KindInfo, Route, SCHEMA_KEYWORDS, SubresourceShape, VersionInfo, VersionSchema,
};
use kapi_core::meta;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::transform::AddNullable;
use serde_json::{Value, json};

use crate::version_priority;

pub(crate) mod normalize;
mod patch_strategy;
mod rules;

/// Where the OpenAPI 3 schemas of a group-version live.
pub const SCHEMA_REF_PREFIX: &str = "#/components/schemas/";

/// A whole API.
#[derive(Debug)]
pub struct ApiModel {
    /// The core group (name `""`) first when present, then named groups by name.
    pub groups: Vec<GroupModel>,
    /// The kinds it was built of.
    kinds: Vec<&'static KindInfo>,
}

/// One API group.
#[derive(Debug)]
pub struct GroupModel {
    /// `apps.example.dev`, or `""` for the core group.
    pub name: &'static str,
    /// Served versions, most preferred first.
    pub versions: Vec<GroupVersionModel>,
}

/// One served group-version, with its resources and schemas.
#[derive(Debug)]
pub struct GroupVersionModel {
    /// `apps.example.dev`, or `""` for the core group.
    pub group: &'static str,
    /// `v1`.
    pub version: &'static str,
    /// Resources served in this group-version, in the order the kinds were given.
    pub resources: Vec<ResourceModel>,
    /// OpenAPI 3.0 schemas by qualified name, sorted by name, in Kubernetes' style
    /// (see `normalize`), lists with the strategic-merge-patch extensions
    /// their list types imply (see `patch_strategy`);
    /// `$ref`s point into [`SCHEMA_REF_PREFIX`].
    pub schemas: IndexMap<String, Value>,
    /// The schemas published as definitions gave them (kinds installed while the server
    /// runs): OpenAPI v2 carries them as kube's CRD OpenAPI builder does.
    pub given: std::collections::BTreeSet<String>,
}

/// One kind as served in one version.
#[derive(Debug)]
pub struct ResourceModel {
    /// Everything the kind declares.
    pub kind: &'static KindInfo,
    /// The version it is served in here.
    pub version: &'static VersionInfo,
    /// Qualified schema name of the kind (`dev.example.apps.v1.WebApp`).
    pub schema_name: String,
    /// Qualified schema name of its list (`dev.example.apps.v1.WebAppList`).
    pub list_schema_name: String,
    /// The qualified schema names of what its `Create` subresources take, by subresource
    /// (`eviction`: `io.k8s.api.policy.v1.Eviction`).
    pub bodies: Vec<(&'static str, String)>,
}

/// Why a set of kinds does not make a consistent API.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    /// Two kinds share a group and kind.
    #[error("kind {kind} is declared twice in group {group:?}")]
    DuplicateKind {
        /// The group.
        group: String,
        /// The kind.
        kind: String,
    },
    /// Two kinds share a resource name in one group.
    #[error("resource {plural} is declared by both {first} and {second} in group {group:?}")]
    DuplicateResource {
        /// The group.
        group: String,
        /// The plural resource name.
        plural: String,
        /// One kind.
        first: String,
        /// The other kind.
        second: String,
    },
    /// A kind without exactly one storage version, or a kind `stored_with` another with one
    /// (the derive prevents both).
    #[error("kind {kind} needs exactly one storage version, has {count}")]
    StorageVersions {
        /// The kind.
        kind: String,
        /// How many it has.
        count: usize,
    },
    /// A kind `stored_with` a kind that is not in the API.
    #[error("kind {kind} is stored with {stored_with}, which is not in the API")]
    StoredWithMissing {
        /// The kind.
        kind: String,
        /// The kind it names.
        stored_with: String,
    },
    /// A schema carries a keyword the server would not enforce: a typo in a
    /// `#[schemars(extend(...))]`, or a constraint the registry does not check (see
    /// `kapi::api::SCHEMA_KEYWORDS`).
    #[error(
        "schema {schema}: unsupported keyword `{keyword}` at {path} (the server enforces \
         or documents only: {supported}); misspelt in a #[schemars(...)] attribute?"
    )]
    UnsupportedKeyword {
        /// The qualified schema name.
        schema: String,
        /// Where in it: `properties.spec.properties.replicas`.
        path: String,
        /// The keyword.
        keyword: String,
        /// The keywords allowed, comma-separated.
        supported: String,
    },
    /// A list declares a strategic-merge-patch strategy or merge key its list type
    /// contradicts (`#[schemars(extend("x-kubernetes-patch-strategy" = ...))]`): kubectl
    /// would compute patches the server, which merges lists by their list type, applies
    /// differently. The list type implies the patch extensions; declaring them is optional.
    #[error(
        "schema {schema}: {declared} at {path} contradicts {list_type}, which implies \
         {implied}; drop the declared extension (the list type implies it) or change the \
         list type"
    )]
    PatchStrategyConflict {
        /// The qualified schema name.
        schema: String,
        /// Where in it: `properties.spec.properties.ports`.
        path: String,
        /// The extensions declared: `x-kubernetes-patch-merge-key: name`.
        declared: String,
        /// The list extensions: `x-kubernetes-list-type: map with x-kubernetes-list-map-keys: [port]`.
        list_type: String,
        /// What they imply: `x-kubernetes-patch-strategy: merge, x-kubernetes-patch-merge-key: port`.
        implied: String,
    },
    /// Validation rules (`#[kapi::rules]`) kube-apiserver would refuse in a
    /// CustomResourceDefinition: each error is kube's, prefixed with where the rule was
    /// written.
    #[error("{kind} in {api_version}: validation rules kube-apiserver would refuse:\n  {}", errors.join("\n  "))]
    Rules {
        /// The kind.
        kind: String,
        /// Its group-version.
        api_version: String,
        /// kube's errors, located.
        errors: Vec<String>,
    },
    /// Two different schemas got the same qualified name.
    #[error("schema {name} is generated twice with different content in {group_version}")]
    SchemaConflict {
        /// The qualified name.
        name: String,
        /// Where.
        group_version: String,
    },
}

impl ApiModel {
    /// Builds the model of the API made of `kinds`.
    pub fn build(kinds: &[&'static KindInfo]) -> Result<ApiModel, ModelError> {
        check_kinds(kinds)?;
        let mut by_group: BTreeMap<&'static str, BTreeMap<&'static str, Vec<_>>> = BTreeMap::new();
        for &kind in kinds {
            for version in kind.versions.iter().filter(|v| v.served) {
                (by_group.entry(kind.group).or_default())
                    .entry(version.name)
                    .or_default()
                    .push((kind, version));
            }
        }
        // BTreeMap order puts the core group ("") first, then groups by name.
        let mut groups = Vec::new();
        for (group, versions) in by_group {
            let mut versions = versions
                .into_iter()
                .map(|(version, kinds)| GroupVersionModel::build(group, version, &kinds))
                .collect::<Result<Vec<_>, _>>()?;
            versions.sort_by(|a, b| version_priority::compare(a.version, b.version));
            groups.push(GroupModel {
                name: group,
                versions,
            });
        }
        Ok(ApiModel {
            groups,
            kinds: kinds.to_vec(),
        })
    }

    /// The API as a server serves it by default: without the kinds all of whose versions
    /// are off by default ([`KindInfo::off_by_default`]), which a server serves only when
    /// told to (and then describes with documents it renders itself).
    pub fn served_by_default(&self) -> Result<ApiModel, ModelError> {
        let kinds: Vec<&'static KindInfo> = (self.kinds.iter())
            .copied()
            .filter(|kind| !kind.off_by_default())
            .collect();
        ApiModel::build(&kinds)
    }

    /// The core group, when the API has one.
    pub fn core_group(&self) -> Option<&GroupModel> {
        self.groups.iter().find(|g| g.name.is_empty())
    }

    /// Named groups (served under `/apis`), by name.
    pub fn named_groups(&self) -> impl Iterator<Item = &GroupModel> {
        self.groups.iter().filter(|g| !g.name.is_empty())
    }

    /// Every served group-version.
    pub fn group_versions(&self) -> impl Iterator<Item = &GroupVersionModel> {
        self.groups.iter().flat_map(|g| &g.versions)
    }

    /// Every resource in every served version.
    pub fn resources(&self) -> impl Iterator<Item = (&GroupVersionModel, &ResourceModel)> {
        self.group_versions()
            .flat_map(|gv| gv.resources.iter().map(move |r| (gv, r)))
    }
}

impl GroupModel {
    /// The version clients should use: the first by Kubernetes' version priority.
    pub fn preferred_version(&self) -> &GroupVersionModel {
        &self.versions[0]
    }
}

impl GroupVersionModel {
    fn build(
        group: &'static str,
        version: &'static str,
        kinds: &[(&'static KindInfo, &'static VersionInfo)],
    ) -> Result<GroupVersionModel, ModelError> {
        let prefix = schema_prefix(group, version);
        let mut generator = schema_generator();
        let mut names = Vec::new();
        // The schemas definitions give (kinds installed while the server runs), by name.
        let mut given = Vec::new();
        // What each kind's `Create` subresources take: (kind, subresource, body, name).
        let mut bodies = Vec::new();
        for (kind, _) in kinds {
            for other in kind.subresources.others {
                if let SubresourceShape::Create(body) = other.shape {
                    let reference = (body.schema)(&mut generator);
                    let name = ref_name(reference.as_value()).unwrap_or_default();
                    bodies.push((kind.kind, other.name, body, name.to_owned()));
                }
            }
        }
        for (kind, v) in kinds {
            match v.schema {
                VersionSchema::Type(schema) => {
                    let reference = schema(&mut generator);
                    names.push(
                        ref_name(reference.as_value())
                            .unwrap_or_default()
                            .to_owned(),
                    );
                }
                VersionSchema::Json(schema) => {
                    let name = format!("{prefix}.{}", kind.kind);
                    given.push((name.clone(), schema.clone()));
                    names.push(name);
                }
            }
        }
        if !given.is_empty() {
            // What their `metadata` refers to.
            generator.subschema_for::<meta::ObjectMeta>();
        }
        // The shared meta types every group-version document carries.
        generator.subschema_for::<meta::ListMeta>();
        generator.subschema_for::<meta::Status>();
        generator.subschema_for::<meta::WatchEvent>();
        generator.subschema_for::<meta::DeleteOptions>();
        generator.subschema_for::<meta::Table>();
        if kinds.iter().any(|(k, _)| k.subresources.scale.is_some()) {
            generator.subschema_for::<meta::Scale>();
        }
        let mut raw = generator.take_definitions(true);
        meta::kube_extensions(&mut raw);

        let qualify = |name: &str| -> String {
            if name.contains('.') {
                name.to_owned()
            } else {
                format!("{prefix}.{name}")
            }
        };
        let mut schemas = IndexMap::new();
        for (name, mut schema) in raw {
            rewrite_refs(&mut schema, &qualify);
            normalize::normalize(&mut schema);
            patch_strategy::patch_strategies(&qualify(&name), &mut schema, "")?;
            check_keywords(&qualify(&name), &schema, "")?;
            schemas.insert(qualify(&name), schema);
        }
        // A definition's schema is published as given: its keywords were judged by the
        // definition's validation, and its lists merge as JSON (no patch strategies).
        let given_names = given.iter().map(|(name, _)| name.clone()).collect();
        for (name, mut schema) in given {
            rewrite_refs(&mut schema, &qualify);
            schemas.insert(name, schema);
        }
        for (name, gvk) in meta_gvks() {
            if let Some(schema) = schemas.get_mut(name) {
                set_gvk(schema, gvk);
            }
        }
        // A body is an object of its kind, which names itself.
        for (_, _, body, name) in &bodies {
            if let Some(schema) = schemas.get_mut(&qualify(name)) {
                let (group, version) = (body.group, body.version);
                add_type_meta(schema, &api_version(group, version), body.kind);
                set_gvk(
                    schema,
                    json!({"group": group, "kind": body.kind, "version": version}),
                );
            }
        }

        let mut resources = Vec::new();
        for ((kind, v), name) in kinds.iter().zip(names) {
            let schema_name = qualify(&name);
            let list_schema_name = format!("{prefix}.{}List", kind.kind);
            let gvk = json!({"group": group, "kind": kind.kind, "version": version});
            if let Some(schema) = schemas.get_mut(&schema_name) {
                add_type_meta(schema, &api_version(group, version), kind.kind);
                set_gvk(schema, gvk);
            }
            let list = list_schema(kind, group, version, &schema_name);
            if schemas.insert(list_schema_name.clone(), list).is_some() {
                return Err(ModelError::SchemaConflict {
                    name: list_schema_name,
                    group_version: api_version(group, version),
                });
            }
            let bodies = (bodies.iter())
                .filter(|(of, ..)| *of == kind.kind)
                .map(|(_, subresource, _, name)| (*subresource, qualify(name)))
                .collect();
            resources.push(ResourceModel {
                kind,
                version: v,
                schema_name,
                list_schema_name,
                bodies,
            });
        }
        for resource in &resources {
            if let VersionSchema::Type(_) = resource.version.schema {
                let api_version = api_version(group, version);
                rules::check(
                    resource.kind.kind,
                    &api_version,
                    &resource.schema_name,
                    &schemas,
                )?;
            }
        }
        schemas.values_mut().for_each(rules::strip_sources);
        schemas.sort_keys();
        Ok(GroupVersionModel {
            group,
            version,
            resources,
            schemas,
            given: given_names,
        })
    }

    /// `v1` for the core group, `apps.example.dev/v1` otherwise: the `apiVersion` of objects.
    pub fn api_version(&self) -> String {
        api_version(self.group, self.version)
    }

    /// `/api/v1` or `/apis/apps.example.dev/v1`.
    pub fn path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// `api/v1` or `apis/apps.example.dev/v1`: the key of `/openapi/v3`'s index.
    pub fn openapi_v3_key(&self) -> String {
        self.path().trim_start_matches('/').to_owned()
    }
}

impl ResourceModel {
    /// The routes of this kind in this version.
    pub fn routes(&self) -> &'static [Route] {
        self.version.routes
    }

    /// Discovery verbs of the resource (`None`) or one of its subresources, sorted.
    pub fn verbs(&self, subresource: Option<&str>) -> Vec<&'static str> {
        let mut verbs: Vec<_> = (self.routes().iter())
            .filter(|r| r.subresource == subresource)
            .filter_map(Route::verb)
            .collect();
        verbs.sort_unstable();
        verbs.dedup();
        verbs
    }

    /// `status`, `scale`: the subresources with at least one route.
    pub fn subresources(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.routes().iter().filter_map(|r| r.subresource).collect();
        names.dedup();
        names
    }
}

/// `v1` for the core group, `<group>/<version>` otherwise.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// Schema names are qualified as Kubernetes qualifies them: `io.k8s.api.core.v1` for the
/// core group, the reversed group name otherwise (`dev.example.apps.v1`).
pub fn schema_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("io.k8s.api.core.{version}")
    } else {
        let reversed: Vec<_> = group.split('.').rev().collect();
        format!("{}.{version}", reversed.join("."))
    }
}

/// The name a `{"$ref": "#/components/schemas/<name>"}` schema points to.
pub fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix(SCHEMA_REF_PREFIX)
}

/// OpenAPI 3.0 schemas in Kubernetes' style: optional fields are simply not required,
/// so no `nullable` (kube-openapi does not emit it either).
fn schema_generator() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|s| {
            s.meta_schema = None;
            s.transforms.retain(|t| !t.is::<AddNullable>());
        })
        .into_generator()
}

fn check_kinds(kinds: &[&'static KindInfo]) -> Result<(), ModelError> {
    let mut seen_kind = BTreeMap::new();
    let mut seen_plural = BTreeMap::new();
    for kind in kinds {
        if seen_kind.insert((kind.group, kind.kind), ()).is_some() {
            return Err(ModelError::DuplicateKind {
                group: kind.group.into(),
                kind: kind.kind.into(),
            });
        }
        if let Some(first) = seen_plural.insert((kind.group, kind.plural), kind.kind) {
            return Err(ModelError::DuplicateResource {
                group: kind.group.into(),
                plural: kind.plural.into(),
                first: first.into(),
                second: kind.kind.into(),
            });
        }
        let count = kind.versions.iter().filter(|v| v.storage).count();
        if let Some(storage) = kind.stored_with
            && !(kinds.iter()).any(|k| (k.group, k.kind) == (storage.group, storage.kind))
        {
            return Err(ModelError::StoredWithMissing {
                kind: kind.kind.into(),
                stored_with: storage.kind.into(),
            });
        }
        if count != usize::from(kind.stored_with.is_none()) {
            return Err(ModelError::StorageVersions {
                kind: kind.kind.into(),
                count,
            });
        }
    }
    Ok(())
}

/// Refuses a keyword outside [`SCHEMA_KEYWORDS`] anywhere in `schema` (at `path`).
fn check_keywords(name: &str, schema: &Value, path: &str) -> Result<(), ModelError> {
    let Some(map) = schema.as_object() else {
        return Ok(());
    };
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    for (key, value) in map {
        if !SCHEMA_KEYWORDS.contains(&key.as_str()) {
            return Err(ModelError::UnsupportedKeyword {
                schema: name.to_owned(),
                path: if path.is_empty() {
                    "the top".to_owned()
                } else {
                    path.to_owned()
                },
                keyword: key.clone(),
                supported: SCHEMA_KEYWORDS.join(", "),
            });
        }
        match key.as_str() {
            "properties" => {
                for (property, schema) in value.as_object().into_iter().flatten() {
                    check_keywords(name, schema, &at(&format!("properties.{property}")))?;
                }
            }
            "items" | "additionalProperties" => check_keywords(name, value, &at(key))?,
            "allOf" => {
                for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                    check_keywords(name, branch, &at(&format!("allOf[{i}]")))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn rewrite_refs(value: &mut Value, qualify: &impl Fn(&str) -> String) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "$ref"
                    && let Some(name) = v.as_str().and_then(|s| s.strip_prefix(SCHEMA_REF_PREFIX))
                {
                    *v = Value::String(format!("{SCHEMA_REF_PREFIX}{}", qualify(name)));
                } else {
                    rewrite_refs(v, qualify);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, qualify)),
        _ => {}
    }
}

fn set_gvk(schema: &mut Value, gvk: Value) {
    if let Some(map) = schema.as_object_mut() {
        map.insert("x-kubernetes-group-version-kind".into(), json!([gvk]));
    }
}

/// Objects carry `apiVersion` and `kind` on the wire; the Rust types leave them to the
/// runtime's codec, so the schema gets them here.
fn add_type_meta(schema: &mut Value, api_version: &str, kind: &str) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let properties = map.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        let mut with_type_meta = serde_json::Map::new();
        with_type_meta.insert(
            "apiVersion".into(),
            type_meta_property("apiVersion", api_version),
        );
        with_type_meta.insert("kind".into(), type_meta_property("kind", kind));
        with_type_meta.extend(std::mem::take(properties));
        *properties = with_type_meta;
    }
}

fn type_meta_property(field: &str, value: &str) -> Value {
    let description = match field {
        "apiVersion" => format!(
            "APIVersion defines the versioned schema of this representation of an object: `{value}`."
        ),
        _ => format!(
            "Kind is a string value representing the REST resource this object represents: `{value}`."
        ),
    };
    json!({"description": description, "type": "string"})
}

fn list_schema(kind: &KindInfo, group: &str, version: &str, item_schema: &str) -> Value {
    json!({
        "description": format!("{}List is a list of {}.", kind.kind, kind.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": type_meta_property("apiVersion", &api_version(group, version)),
            "items": {
                "description": format!("List of {}.", kind.plural),
                "type": "array",
                "items": {"$ref": format!("{SCHEMA_REF_PREFIX}{item_schema}")}
            },
            "kind": type_meta_property("kind", &format!("{}List", kind.kind)),
            "metadata": {
                "description": "Standard list metadata.",
                "allOf": [{"$ref": format!("{SCHEMA_REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")}]
            }
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": format!("{}List", kind.kind), "version": version}]
    })
}

/// The group-version-kinds of the shared meta types, the same in every document so the
/// whole-API (v2) document can merge them.
fn meta_gvks() -> [(&'static str, Value); 5] {
    let gvk = |group: &str, version: &str, kind: &str| json!({"group": group, "kind": kind, "version": version});
    [
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            gvk("", "v1", "Status"),
        ),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
            gvk("", "v1", "DeleteOptions"),
        ),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            gvk("", "v1", "WatchEvent"),
        ),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.Table",
            gvk("meta.k8s.io", "v1", "Table"),
        ),
        (
            "io.k8s.api.autoscaling.v1.Scale",
            gvk("autoscaling", "v1", "Scale"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(schema: Value, expected: Option<(&str, &str)>) {
        let found = match check_keywords("dev.example.v1.Spec", &schema, "") {
            Ok(()) => None,
            Err(ModelError::UnsupportedKeyword { path, keyword, .. }) => Some((path, keyword)),
            Err(other) => panic!("{other}"),
        };
        let expected = expected.map(|(p, k)| (p.to_owned(), k.to_owned()));
        assert_eq!(found, expected);
    }

    #[test]
    fn schemas_may_carry_only_keywords_the_server_understands() {
        check(
            json!({"type": "object", "properties": {"replicas": {"type": "integer",
                "minimum": 0, "exclusiveMinimum": true, "default": 1}}}),
            None,
        );
        check(
            json!({"type": "object", "properties": {"replicas": {"type": "integer",
                "minimum": 0, "exclusiveMinimun": true}}}),
            Some(("properties.replicas", "exclusiveMinimun")),
        );
        check(
            json!({"type": "array", "items": {"allOf": [{"multipleOf": 2}]}}),
            Some(("items.allOf[0]", "multipleOf")),
        );
        check(
            json!({"oneOf": [{"type": "string"}]}),
            Some(("the top", "oneOf")),
        );
        let error = check_keywords(
            "S",
            &json!({"properties": {"a": {"uniqueItems": true}}}),
            "",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "schema S: unsupported keyword `uniqueItems` at properties.a (the server \
                 enforces or documents only: type, "
            ),
            "{error}"
        );
    }
}
