//! CustomResourceDefinitions: which names each may take (kube's naming controller), the
//! kinds they define served by this server (kube's CRD handler, on every replica) and
//! marked `Established` once they are (kube's establishing controller).
//!
//! Fed by the definitions' watch cache (`follow`); every change passes over all
//! definitions, which are few. A definition's names are accepted unless another
//! definition of its group, or a compiled kind there, already has them (kube's
//! `NamesAccepted` reasons and messages); once its status says so, each replica installs
//! the kind it defines ([`Registry::install_kind`]), again whenever its generation
//! changes, and removes it when the definition is gone. Status writes are conditional on
//! the resourceVersion read, so replicas repeat each other's work, never undo it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::follow::{follow, slot, take};
use crate::health::{Health, Hook};
use kapi_core::error::ApiError;
use kapi_core::meta::DeleteOptions;
use kapi_core::scheme::KindEntry;
use kapi_kinds::apiextensions::install::definition;
use kapi_kinds::apiextensions::{
    CLEANUP_FINALIZER, CustomResourceDefinition, CustomResourceDefinitionCondition,
    CustomResourceDefinitionNames, GROUP,
};
use kapi_registry::{ListOptions, PatchType, Registry, Subresource, Target, WriteOptions};

/// The kind of the definitions.
const KIND: &str = "CustomResourceDefinition";
/// The field manager of the controller's status writes.
const MANAGER: &str = "kube-apiserver";
/// How soon a pass that failed is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// A kind this replica serves for a definition.
struct Installed {
    uid: String,
    generation: i64,
    terminating: bool,
    group: String,
    plural: String,
}

/// apiextensions-apiserver's post-start hooks, which the controller reports done: its
/// informers and controllers started, and every definition of its first list served
/// (`crd-informer-synced`).
pub struct Hooks {
    informers: Arc<Hook>,
    controllers: Arc<Hook>,
    synced: Arc<Hook>,
}

impl Hooks {
    /// Registers them in `health`.
    pub fn register(health: &Health) -> Hooks {
        Hooks {
            informers: health.post_start_hook("start-apiextensions-informers"),
            controllers: health.post_start_hook("start-apiextensions-controllers"),
            synced: health.post_start_hook("crd-informer-synced"),
        }
    }
}

/// Runs until the registry goes.
pub async fn run(registry: Weak<Registry>, hooks: Hooks) {
    let Some(slot) = slot(&registry, GROUP, KIND) else {
        return;
    };
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let follower = tokio::spawn(follow(registry.clone(), slot, sender, "crd controller"));
    hooks.informers.done();
    hooks.controllers.done();
    let mut definitions: BTreeMap<String, CustomResourceDefinition> = BTreeMap::new();
    let mut installed: HashMap<String, Installed> = HashMap::new();
    let mut retry = false;
    loop {
        let followed = if retry {
            tokio::select! {
                followed = receiver.recv() => match followed {
                    Some(followed) => Some(followed),
                    None => break,
                },
                () = tokio::time::sleep(RETRY) => None,
            }
        } else {
            match receiver.recv().await {
                Some(followed) => Some(followed),
                None => break,
            }
        };
        for followed in followed
            .into_iter()
            .chain(std::iter::from_fn(|| receiver.try_recv().ok()))
        {
            take(&mut definitions, followed, |crd| &mut crd.metadata);
        }
        let Some(strong) = registry.upgrade() else {
            break;
        };
        let synced = sync(&strong, &definitions, &mut installed).await;
        // kube's hook waits for the definitions' first list, not for each to be served:
        // one definition that cannot be must not fail `/livez` for ever.
        hooks.synced.done();
        retry = match synced {
            Ok(busy) => busy,
            Err(error) => {
                tracing::warn!(%error, "crd controller: retrying");
                true
            }
        };
    }
    follower.abort();
}

/// One pass over every definition; busy while a deleted one waits for its objects to go.
async fn sync(
    registry: &Registry,
    definitions: &BTreeMap<String, CustomResourceDefinition>,
    installed: &mut HashMap<String, Installed>,
) -> Result<bool, ApiError> {
    // Kinds of definitions gone.
    installed.retain(|name, kind| {
        let kept = definitions.contains_key(name);
        if !kept {
            registry.remove_kind(&kind.group, &kind.plural);
        }
        kept
    });
    let mut failed = None;
    let mut busy = false;
    for (name, crd) in definitions {
        let result = match crd.metadata.deletion_timestamp {
            // Still served (creates refused) while its objects go.
            Some(_) => {
                if let Err(error) = install(registry, installed, name, crd) {
                    tracing::warn!(%error, definition = name, "cannot serve a deleted definition's kind");
                }
                finalize(registry, crd).await
            }
            None => sync_one(registry, definitions, installed, name, crd)
                .await
                .map(|()| false),
        };
        match result {
            Ok(more) => busy |= more,
            Err(error) => failed = Some(error),
        }
    }
    failed.map_or(Ok(busy), Err)
}

/// kube's CRD finalizer: a deleted definition's objects are deleted (their own finalizers
/// honoured), then its cleanup finalizer is taken off, which deletes it; its `Terminating`
/// condition tells how far it got. Busy while objects remain.
async fn finalize(registry: &Registry, crd: &CustomResourceDefinition) -> Result<bool, ApiError> {
    let finalizers = crd.metadata.finalizers.as_deref().unwrap_or_default();
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        return Ok(false);
    }
    let established = condition(crd, "Established").is_some_and(|c| c.status == "True");
    let done = if established {
        let kind = (registry.scheme())
            .by_resource(&crd.spec.group, &crd.spec.names.plural)
            .filter(|kind| kind.is_dynamic());
        // Its objects may exist: the finalizer stays until they are seen gone.
        let kind = kind.ok_or_else(|| {
            ApiError::Internal(format!(
                "the kind of the deleted definition {:?} is not served here: its objects cannot be deleted yet",
                crd.metadata.name.as_deref().unwrap_or_default()
            ))
        })?;
        let (failures, left) = delete_objects(registry, &kind).await?;
        let waiting = match (failures.is_empty(), left) {
            (false, _) => Some(new_condition(
                "Terminating",
                true,
                "InstanceDeletionFailed",
                &format!("could not issue all deletes: {}", failures.join(", ")),
            )),
            (true, 0) => None,
            (true, _) => Some(new_condition(
                "Terminating",
                true,
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            )),
        };
        if let Some(waiting) = waiting {
            // Written once: an unchanged status makes no event, so the next pass comes
            // after the controller's pause, not at once.
            if condition(crd, "Terminating").is_none_or(|c| !same(c, &waiting)) {
                write_status(registry, crd, None, &[waiting]).await?;
            }
            return Ok(true);
        }
        new_condition(
            "Terminating",
            false,
            "InstanceDeletionCompleted",
            "removed all instances",
        )
    } else {
        new_condition(
            "Terminating",
            false,
            "NeverEstablished",
            "resource was never established",
        )
    };
    let Some(revision) = write_status(registry, crd, None, &[done]).await? else {
        return Ok(true); // changed meanwhile: judged again from the change
    };
    let kept: Vec<&String> = finalizers
        .iter()
        .filter(|f| *f != CLEANUP_FINALIZER)
        .collect();
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(false);
    };
    let target = definitions_target(&kind);
    let patch = json!({"metadata": {"finalizers": kept, "resourceVersion": revision}});
    let options = controller_writes();
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    match (registry.patch(target, name, PatchType::Merge, patch, None, &options)).await {
        Ok(_) | Err(ApiError::Conflict { .. } | ApiError::NotFound { .. }) => Ok(false),
        Err(error) => Err(error),
    }
}

async fn sync_one(
    registry: &Registry,
    definitions: &BTreeMap<String, CustomResourceDefinition>,
    installed: &mut HashMap<String, Installed>,
    name: &str,
    crd: &CustomResourceDefinition,
) -> Result<(), ApiError> {
    let status = crd.status.clone();
    if crd.metadata.deletion_timestamp.is_none() && status.accepted_names != crd.spec.names {
        let (accepted, names_accepted, established) = naming(registry, definitions, crd);
        let unchanged = status.accepted_names == accepted
            && condition(crd, "NamesAccepted").is_some_and(|c| same(c, &names_accepted));
        if !unchanged {
            let conditions = [names_accepted, established];
            return write_status(registry, crd, Some(&accepted), &conditions)
                .await
                .map(drop);
        }
    }
    if !install(registry, installed, name, crd)? {
        return Ok(());
    }
    if condition(crd, "Established").is_none_or(|c| c.status != "True") {
        let established = new_condition(
            "Established",
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
        );
        return write_status(registry, crd, None, &[established])
            .await
            .map(drop);
    }
    Ok(())
}

/// Serves the kind `crd` defines once its names are accepted, again when its generation
/// or its termination changes; whether its names are accepted.
fn install(
    registry: &Registry,
    installed: &mut HashMap<String, Installed>,
    name: &str,
    crd: &CustomResourceDefinition,
) -> Result<bool, ApiError> {
    // Established once, a definition stays served even while a later change of its names
    // is not accepted, as kube serves it by the names it accepted.
    let accepted = condition(crd, "NamesAccepted").is_some_and(|c| c.status == "True")
        || condition(crd, "Established").is_some_and(|c| c.status == "True");
    if !accepted {
        return Ok(false);
    }
    let uid = crd.metadata.uid.clone().unwrap_or_default();
    let generation = crd.metadata.generation.unwrap_or_default();
    let terminating = condition(crd, "Terminating").is_some_and(|c| c.status == "True");
    let current = installed.get(name);
    let same =
        |k: &Installed| (&k.uid, k.generation, k.terminating) == (&uid, generation, terminating);
    if current.is_none_or(|k| !same(k)) {
        let schemas = registry.schemas().ok_or_else(|| {
            ApiError::Internal("the server has no schemas to build definitions on".into())
        })?;
        let defined = definition(crd, schemas).map_err(|e| ApiError::Internal(e.to_string()))?;
        if let Some(previous) = installed.remove(name)
            && (previous.group != crd.spec.group || previous.plural != crd.spec.names.plural)
        {
            registry.remove_kind(&previous.group, &previous.plural);
        }
        registry.install_kind(defined.kind, defined.schemas);
        tracing::info!(definition = name, "serving a custom resource");
        installed.insert(
            name.to_owned(),
            Installed {
                uid,
                generation,
                terminating,
                group: crd.spec.group.clone(),
                plural: crd.spec.names.plural.clone(),
            },
        );
    }
    Ok(true)
}

/// Deletes every object of `kind` not already being deleted (their finalizers are
/// honoured); the failures, and how many objects are left.
async fn delete_objects(
    registry: &Registry,
    kind: &KindEntry,
) -> Result<(Vec<String>, usize), ApiError> {
    let target = Target {
        kind,
        version: kind.info.storage_version().name,
        namespace: None,
    };
    let mut failures = Vec::new();
    for item in registry.list(target, &ListOptions::default()).await?.items {
        let item = item.value();
        let meta = |field: &str| item.pointer(&format!("/metadata/{field}"));
        if meta("deletionTimestamp").is_some() {
            continue;
        }
        let one = Target {
            namespace: meta("namespace").and_then(Value::as_str),
            ..target
        };
        let name = meta("name").and_then(Value::as_str).unwrap_or_default();
        match registry.delete(one, name, &DeleteOptions::default()).await {
            Ok(_) | Err(ApiError::NotFound { .. }) => {}
            Err(error) => failures.push(error.to_string()),
        }
    }
    let left = registry
        .list(target, &ListOptions::default())
        .await?
        .items
        .len();
    Ok((failures, left))
}

/// kube's `calculateNamesAndConditions`: the names `crd` may take given those its group's
/// other definitions accepted and the compiled kinds there, its `NamesAccepted` condition,
/// and its `Established` condition as the naming controller leaves it.
fn naming(
    registry: &Registry,
    definitions: &BTreeMap<String, CustomResourceDefinition>,
    crd: &CustomResourceDefinition,
) -> (
    CustomResourceDefinitionNames,
    CustomResourceDefinitionCondition,
    CustomResourceDefinitionCondition,
) {
    let group = crd.spec.group.as_str();
    let mut resources = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    for other in definitions.values() {
        if other.spec.group != group || other.metadata.name == crd.metadata.name {
            continue;
        }
        // Names not accepted yet are empty.
        let names = &other.status.accepted_names;
        let given = |name: &String| (!name.is_empty()).then(|| name.clone());
        resources.extend(given(&names.plural));
        resources.extend(given(&names.singular));
        resources.extend(names.short_names.iter().cloned());
        kinds.extend(given(&names.kind));
        kinds.extend(given(&names.list_kind));
    }
    // The compiled kinds of the group, served or switched off (definitions installed here
    // are skipped: their names are their definitions' accepted ones, above).
    let scheme = registry.scheme();
    let served = scheme.kinds();
    let compiled = (served.iter())
        .filter(|kind| !kind.is_dynamic())
        .map(|kind| kind.info)
        .chain(scheme.switched_off());
    for info in compiled {
        if info.group != group {
            continue;
        }
        resources.insert(info.plural.to_owned());
        resources.insert(info.singular.to_owned());
        resources.extend(info.short_names.iter().map(|s| (*s).to_owned()));
        kinds.insert(info.kind.to_owned());
        kinds.insert(format!("{}List", info.kind));
    }
    let requested = &crd.spec.names;
    let current = crd.status.accepted_names.clone();
    let mut accepted = current.clone();
    let mut conflict: Option<(&str, String)> = None;
    let fresh = |requested: &str, accepted: &str, used: &BTreeSet<String>| {
        if requested == accepted || !used.contains(requested) {
            Ok(())
        } else {
            Err(format!("{requested:?} is already in use"))
        }
    };
    match fresh(&requested.plural, &current.plural, &resources) {
        Ok(()) => accepted.plural = requested.plural.clone(),
        Err(message) => conflict = Some(("PluralConflict", message)),
    }
    match fresh(&requested.singular, &current.singular, &resources) {
        Ok(()) => accepted.singular = requested.singular.clone(),
        Err(message) => conflict = Some(("SingularConflict", message)),
    }
    if requested.short_names != current.short_names {
        let errors: Vec<String> = (requested.short_names.iter())
            .filter(|name| !current.short_names.contains(name))
            .filter_map(|name| fresh(name, "", &resources).err())
            .collect();
        match errors.as_slice() {
            [] => accepted.short_names = requested.short_names.clone(),
            [one] => conflict = Some(("ShortNamesConflict", one.clone())),
            many => conflict = Some(("ShortNamesConflict", format!("[{}]", many.join(", ")))),
        }
    }
    match fresh(&requested.kind, &current.kind, &kinds) {
        Ok(()) => accepted.kind = requested.kind.clone(),
        Err(message) => conflict = Some(("KindConflict", message)),
    }
    match fresh(&requested.list_kind, &current.list_kind, &kinds) {
        Ok(()) => accepted.list_kind = requested.list_kind.clone(),
        Err(message) => conflict = Some(("ListKindConflict", message)),
    }
    accepted.categories = requested.categories.clone();
    let names_accepted = match &conflict {
        None => new_condition("NamesAccepted", true, "NoConflicts", "no conflicts found"),
        Some((reason, message)) => new_condition("NamesAccepted", false, reason, message),
    };
    let mut established = (condition(crd, "Established").cloned()).unwrap_or_else(|| {
        new_condition(
            "Established",
            false,
            "NotAccepted",
            "not all names are accepted",
        )
    });
    if established.status != "True" && conflict.is_none() {
        established = new_condition(
            "Established",
            false,
            "Installing",
            "the initial names have been accepted",
        );
    }
    (accepted, names_accepted, established)
}

fn condition<'a>(
    crd: &'a CustomResourceDefinition,
    type_: &str,
) -> Option<&'a CustomResourceDefinitionCondition> {
    (crd.status.conditions.iter()).find(|c| c.r#type == type_)
}

fn new_condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
) -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition {
        r#type: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        last_transition_time: None,
        reason: reason.to_owned(),
        message: message.to_owned(),
    }
}

/// kube's `IsCRDConditionEquivalent`: type, status, reason and message.
fn same(a: &CustomResourceDefinitionCondition, b: &CustomResourceDefinitionCondition) -> bool {
    (&a.r#type, &a.status, &a.reason, &a.message) == (&b.r#type, &b.status, &b.reason, &b.message)
}

/// Writes `crd`'s status with `names` accepted (when given) and `conditions` set (kube's
/// `SetCRDCondition`: a condition keeps its transition time while its status holds),
/// conditional on the resourceVersion read; returns the new resourceVersion. A conflict
/// or a deletion meanwhile is left to the change that caused it (`None`).
async fn write_status(
    registry: &Registry,
    crd: &CustomResourceDefinition,
    names: Option<&CustomResourceDefinitionNames>,
    conditions: &[CustomResourceDefinitionCondition],
) -> Result<Option<String>, ApiError> {
    let mut updated = crd.clone();
    if let Some(names) = names {
        updated.status.accepted_names = names.clone();
    }
    for condition in conditions {
        updated.set_condition(condition.clone());
    }
    let Some(kind) = registry.scheme().by_kind(GROUP, KIND) else {
        return Ok(None);
    };
    let target = definitions_target(&kind);
    let mut body = serde_json::to_value(&updated)
        .map_err(|e| ApiError::Internal(format!("encoding a definition: {e}")))?;
    body["apiVersion"] = json!(format!("{GROUP}/v1"));
    body["kind"] = Value::from(KIND);
    let options = controller_writes();
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    let written = registry
        .update(target, name, body, Some(Subresource::Status), &options)
        .await;
    match written {
        Ok(written) => Ok((written.into_object()?)
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)),
        Err(ApiError::Conflict { .. } | ApiError::NotFound { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// What the controller writes to: the definitions, in `v1`.
fn definitions_target(kind: &KindEntry) -> Target<'_> {
    Target {
        kind,
        version: "v1",
        namespace: None,
    }
}

/// The options of the controller's writes: its field manager's.
fn controller_writes() -> WriteOptions {
    WriteOptions {
        field_manager: Some(MANAGER.into()),
        ..WriteOptions::default()
    }
}
