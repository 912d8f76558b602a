//! The facts the generator needs about kube's API, as checked in: what `extract` reduces
//! k8s.io/api to (names, types, protobuf numbers, list and patch extensions, enums; never
//! kube's descriptions), and the resources kube-apiserver serves them as.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One Go module of kube's API (k8s.io/api, or the modules of the CustomResourceDefinition
/// and the APIService) reduced: the packages the served kinds reach, with their source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Api {
    /// Where the facts come from.
    pub source: Source,
    /// Where `types.go` and `generated.proto` disagree, said in words (kept, not fatal:
    /// the generator follows `types.go`, whose tags kube's own codecs are generated from).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<String>,
    /// `core/v1` → its types.
    pub packages: BTreeMap<String, Package>,
}

impl Api {
    /// Adds another facts file's packages (another module's, or a later tag's), each
    /// remembering where it comes from; a package has one source, so one both hold is
    /// refused.
    pub fn merge(&mut self, other: Api) -> anyhow::Result<()> {
        for (name, mut package) in other.packages {
            if self.packages.contains_key(&name) {
                anyhow::bail!(
                    "{name} is in two facts files ({} {} and {} {})",
                    self.source_of(&name).repository,
                    self.source_of(&name).tag,
                    other.source.repository,
                    other.source.tag
                );
            }
            package.origin = Some(other.source.clone());
            self.packages.insert(name, package);
        }
        Ok(())
    }

    /// Where a package's facts come from.
    pub fn source_of(&self, package: &str) -> &Source {
        (self.packages.get(package))
            .and_then(|p| p.origin.as_ref())
            .unwrap_or(&self.source)
    }
}

/// The repository, tag and commit facts were read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// `github.com/kubernetes/api`.
    pub repository: String,
    /// `v0.32.1`.
    pub tag: String,
    /// The tag's commit.
    pub commit: String,
}

/// One Go package of kube's API (one group-version).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Package {
    /// Its Go import path, when not k8s.io/api's (`k8s.io/kube-aggregator/pkg/apis/
    /// apiregistration/v1`): kube's OpenAPI names its types after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_path: Option<String>,
    /// Its protobuf package (`k8s.io.api.core.v1`).
    pub proto_package: String,
    /// Its types the kinds reach, by name.
    pub types: BTreeMap<String, Type>,
    /// The module it was merged from ([`Api::merge`]), when not the first.
    #[serde(skip)]
    pub origin: Option<Source>,
}

impl Package {
    /// The prefix of its types' names in kube's OpenAPI (`io.k8s.api.core.v1`,
    /// `io.k8s.kube-aggregator.pkg.apis.apiregistration.v1`): the import path, its domain
    /// reversed.
    pub fn openapi_prefix(&self, name: &str) -> String {
        let path = (self.import_path.clone()).unwrap_or_else(|| format!("k8s.io/api/{name}"));
        let rest = path.strip_prefix("k8s.io/").unwrap_or(&path);
        format!("io.k8s.{}", rest.replace('/', "."))
    }
}

/// A type: a struct, or a named type (`type Protocol string`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Type {
    /// The markers kept (see `extract::KEPT_MARKERS`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub markers: BTreeMap<String, Vec<String>>,
    /// A struct's fields, in declaration order (JSON and protobuf order follow it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<Field>>,
    /// A named type's underlying type (`string`, `map[string]resource.Quantity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underlying: Option<String>,
    /// A named string type's constants' values, in declaration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A struct field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// The Go name (`RestartPolicy`).
    pub go: String,
    /// The JSON name; `None` for a field inlined into its parent (`json:",inline"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    /// The type, written as Go writes it with packages named canonically (`[]core/v1.
    /// Container`, `*int32`, `map[string]resource.Quantity`, `meta/v1.Time`).
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the JSON tag says `omitempty`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub omitempty: bool,
    /// The protobuf field number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proto: Option<u32>,
    /// `patchStrategy` (`merge`, `merge,retainKeys`, `retainKeys`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_strategy: Option<String>,
    /// `patchMergeKey`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_merge_key: Option<String>,
    /// The markers kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub markers: BTreeMap<String, Vec<String>>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The resources kube-apiserver 1.32 serves by default in its GA groups, as its
/// discovery lists them, with what discovery does not say (field selectors, storage keys),
/// and those of later kubes kapi serves too (each naming the tag its kind is read at).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// Where these facts come from.
    pub source: Vec<String>,
    /// What each subresource beside `status` and `scale` is, by name.
    #[serde(default, rename = "subresourceShapes")]
    pub subresource_shapes: BTreeMap<String, SubresourceShape>,
    /// Types no kind reaches that kapi-builtin's conversions read and write
    /// (`autoscaling/v1.MetricSpec`: how kube keeps a v2 HorizontalPodAutoscaler's
    /// metrics in a v1 one's annotations), generated beside the kinds' types.
    #[serde(default, rename = "conversionTypes")]
    pub conversion_types: Vec<String>,
    /// Packages whose kinds are served in JSON alone (no `Protobuf` derive), by package,
    /// with why.
    #[serde(
        default,
        rename = "jsonOnly",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub json_only: BTreeMap<String, String>,
    /// The types kube has a defaulting function of its own for (`SetDefaults_PodSpec`:
    /// `core/v1.PodSpec`), which kapi writes by hand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defaulters: Vec<String>,
    /// Fields kapi adds to kube's types (`url` of an APIService's spec), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Extension>,
    /// The resources.
    pub resources: Vec<Resource>,
}

/// A field kapi adds to one of kube's types: declared after kube's, never on the
/// protobuf wire.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Extension {
    /// `apiregistration/v1.APIServiceSpec`.
    #[serde(rename = "type")]
    pub ty: String,
    /// Why kapi has it.
    pub why: String,
    /// The field.
    pub field: Field,
}

/// What a subresource is (kapi's `#[resource(subresource(...))]`): one of its fields says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubresourceShape {
    /// The object's paths its updates take (`approval`: `.status.conditions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// The `group/version/Kind` its creates take (`policy/v1/Eviction`; `v1/Binding`;
    /// `authentication.k8s.io/v1/TokenRequest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<String>,
    /// Only read (`log`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub read: bool,
    /// The methods it connects with (`exec`: `GET`, `POST`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<String>,
    /// The kind of a connect's options; `{kind}` stands for the resource's kind
    /// (`{kind}ProxyOptions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
    /// A connect takes the rest of the path too (`proxy/{path}`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub path: bool,
    /// Why kapi does not serve it yet, when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

/// A table column (kapi's `printer_column(...)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrinterColumn {
    /// `Last Seen`.
    pub name: String,
    /// `string`, `integer`, `date`.
    #[serde(rename = "type")]
    pub ty: String,
    /// `date-time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `.lastTimestamp`.
    pub json_path: String,
    /// 1: shown with `-o wide` only (kube's printers' priority-1 columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// kube's column description, where kapi's tables give one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The function making the cell where a JSON path cannot (`crate::apiregistration::
    /// service_cell`), written by hand beside the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
}

/// One resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// `apps/v1`, `v1` for the core group.
    pub group_version: String,
    /// `Deployment`.
    pub kind: String,
    /// `deployments`.
    pub plural: String,
    /// Whether objects live in namespaces.
    #[serde(default, skip_serializing_if = "is_false")]
    pub namespaced: bool,
    /// Only created, never stored or read (kube's `bindings`: discovery's verbs are
    /// `create` alone).
    #[serde(default, skip_serializing_if = "is_false")]
    pub create_only: bool,
    /// The warning kube answers every request for the kind with, when it is deprecated
    /// (`v1 ComponentStatus is deprecated in v1.19+`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<String>,
    /// Made when read, never stored (kube's ComponentStatuses: discovery's verbs are `get`
    /// and `list` alone).
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_only: bool,
    /// Served only when `--runtime-config` turns its group-version on (kube's
    /// `betaAPIGroupVersionsDisabledByDefault`): the derive's `off_by_default`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub off_by_default: bool,
    /// A delete answers with the object as deleted (its store sets
    /// `ReturnDeletedObject`), not with a `Success` Status.
    #[serde(default, skip_serializing_if = "is_false")]
    pub returns_deleted_object: bool,
    /// What the kind is, in a sentence of kapi's own (kube's descriptions are not carried):
    /// its type's documentation and its schema's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `deploy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    /// `all`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// `status`, `scale`, `binding`, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subresources: Vec<String>,
    /// Field selector labels beyond `metadata.name` and `metadata.namespace`: the path
    /// without its dot, or `label=.path` where kube's label is another name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<String>,
    /// The storage key's resource part when it is not the plural (`services/specs`,
    /// `minions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_key: Option<String>,
    /// The feature set serving it (`workloads`, `networking`, ...).
    pub set: String,
    /// kube's name rule when it is not a DNS subdomain (`dns_label` for namespaces,
    /// `path_segment` for RBAC's kinds): the derive's `names`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<String>,
    /// The columns of kube's table printer that a JSON path expresses, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub printer_columns: Vec<PrinterColumn>,
    /// Another group's kind it is stored with, as kube keeps one internal type for both
    /// (`events.k8s.io/v1` Event with `v1/Event`): it shares that kind's storage, hub and
    /// storage version, and converts to and from it by hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_with: Option<String>,
    /// Another version of the kind served in this group-version (`autoscaling/v2`): the
    /// hub, which this version converts to and from by hand (kapi-builtin's
    /// `conversions`); it is declared there as one more `version(...)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<String>,
    /// Why kapi does not serve it yet, when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// The tag of its module its kind is read at when not the release's (`v0.34.1`: a kind
    /// of a later kube), into a facts file of that tag holding only what such kinds reach
    /// beyond the release's facts (see `extract`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl Resource {
    /// Whether the generator declares its type (as a kind, or as another version of one).
    pub fn generated(&self) -> bool {
        self.pending.is_none()
    }

    /// Whether the generator declares it as a kind of its own (not another version of one).
    pub fn is_hub(&self) -> bool {
        self.generated() && self.hub.is_none()
    }
}
