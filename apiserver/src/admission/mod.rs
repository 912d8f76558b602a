//! kube-apiserver's admission plugins, in process and under kube's names
//! (`plugin/pkg/admission`), chained with the admission webhooks in kube's order
//! (`AllOrderedPlugins`): every enabled plugin's mutation, then the mutating webhooks; then
//! every enabled plugin's validation before the validating webhooks, the webhooks, and
//! the plugins kube runs after them. The [`Chain`] is the registry's admission hook.
//!
//! `--enable-admission-plugins` and `--disable-admission-plugins` ([`Enabled`]) choose
//! among kube's names; kapi implements those listed in [`IMPLEMENTED`], on by default as
//! kube's are. A name kube knows and kapi does not implement may be disabled (envtest
//! disables `ServiceAccount`), not enabled. Plugins: `priority`, `tolerations`
//! (DefaultTolerationSeconds), `limit_ranger`, `pod_security` (PodSecurity), `storage`
//! (DefaultStorageClass,
//! StorageObjectInUseProtection, PersistentVolumeClaimResize), `runtime_class`
//! (RuntimeClass), `resource_quota`
//! (ResourceQuota, with the usage of `crate::quota`).

mod limit_ranger;
mod pod_security;
mod priority;
pub mod reinvocation;
mod resource_quota;
mod runtime_class;
mod storage;
mod tolerations;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use kapi_core::error::{ApiError, GroupResource};
use kapi_core::scheme::KindEntry;
use kapi_registry::admission::{Admission, Attributes};
use kapi_registry::{Derived, Registry};

pub use reinvocation::{Invoked, Reinvocation};

/// kube 1.32's plugins in the order they run (`AllOrderedPlugins`), with whether each is
/// on by default.
pub const KUBE_PLUGINS: &[(&str, bool)] = &[
    ("AlwaysAdmit", false),
    ("NamespaceAutoProvision", false),
    ("NamespaceLifecycle", true),
    ("NamespaceExists", false),
    ("LimitPodHardAntiAffinityTopology", false),
    ("LimitRanger", true),
    ("ServiceAccount", true),
    ("NodeRestriction", false),
    ("TaintNodesByCondition", true),
    ("AlwaysPullImages", false),
    ("ImagePolicyWebhook", false),
    ("PodSecurity", true),
    ("PodNodeSelector", false),
    ("Priority", true),
    ("DefaultTolerationSeconds", true),
    ("PodTolerationRestriction", false),
    ("EventRateLimit", false),
    ("ExtendedResourceToleration", false),
    ("DefaultStorageClass", true),
    ("StorageObjectInUseProtection", true),
    ("OwnerReferencesPermissionEnforcement", false),
    ("PersistentVolumeClaimResize", true),
    ("RuntimeClass", true),
    ("CertificateApproval", true),
    ("CertificateSigning", true),
    ("ClusterTrustBundleAttest", true),
    ("CertificateSubjectRestriction", true),
    ("DefaultIngressClass", true),
    ("DenyServiceExternalIPs", false),
    ("MutatingAdmissionPolicy", true),
    ("MutatingAdmissionWebhook", true),
    ("ValidatingAdmissionPolicy", true),
    ("ValidatingAdmissionWebhook", true),
    ("ResourceQuota", true),
    ("AlwaysDeny", false),
];

/// The plugins kapi implements (`NamespaceLifecycle` is the registry's own check; the
/// webhooks are the `webhooks` module's).
pub const IMPLEMENTED: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// The plugins a server runs, from kube's flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enabled(Vec<&'static str>);

impl Enabled {
    /// kube's rule: the default set, plus `enable`, less `disable`; a name in both, an
    /// unknown name, or one kapi does not implement enabled, is an error.
    pub fn new(enable: &[String], disable: &[String]) -> Result<Enabled, Vec<String>> {
        let known = |name: &str| KUBE_PLUGINS.iter().any(|(n, _)| *n == name);
        let mut errors = Vec::new();
        for (flag, names) in [("enable", enable), ("disable", disable)] {
            for name in names.iter().filter(|n| !known(n)) {
                errors.push(format!(
                    "{flag}-admission-plugins plugin {name:?} is unknown"
                ));
            }
        }
        let mut both: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
        if !both.is_empty() {
            both.sort();
            let both: Vec<&str> = both.iter().map(|s| s.as_str()).collect();
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                both.join(" ")
            ));
        }
        for name in enable
            .iter()
            .filter(|n| known(n) && !IMPLEMENTED.contains(&n.as_str()))
        {
            errors.push(format!(
                "enable-admission-plugins plugin {name:?} is kube-apiserver's but not implemented by kapi"
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let on = (KUBE_PLUGINS.iter())
            .filter(|(name, default)| {
                let named = |list: &[String]| list.iter().any(|n| n == name);
                (*default || named(enable)) && !named(disable) && IMPLEMENTED.contains(name)
            })
            .map(|(name, _)| *name)
            .collect();
        Ok(Enabled(on))
    }

    /// Whether `name` runs.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(&name)
    }
}

/// One in-process plugin: kube's `admission.MutationInterface` and
/// `ValidationInterface` on the objects of a write (JSON, in the request's version).
#[async_trait::async_trait]
pub(crate) trait Plugin: Send + Sync {
    /// Whether it mutates, and whether it validates, this write.
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool);

    /// Whether nothing it judges by exists at all (no ResourceQuota anywhere), so that the
    /// registry need not prepare what it would be handed. Read from the watch caches.
    fn idle(&self, registry: &Registry) -> bool {
        let _ = registry;
        false
    }

    /// Changes the object (kube's `Admit`).
    async fn admit(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let _ = (registry, attributes, object, old);
        Ok(())
    }

    /// Judges the write (kube's `Validate`): its warnings, or why it refuses.
    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let _ = (registry, attributes, object, old);
        Ok(Vec::new())
    }
}

/// What mutates as kube reinvokes (the mutating admission policies, the webhooks): one
/// pass over a write, its steps recorded in the write's [`Reinvocation`].
#[async_trait::async_trait]
pub trait Reinvocable: Send + Sync {
    /// Mutates `object` (in the request's version; `old` for an update) in this pass: the
    /// object as it leaves, and warnings.
    async fn mutate_pass(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Value,
        old: Option<&Value>,
        reinvocation: &mut Reinvocation,
    ) -> Result<(Value, Vec<String>), ApiError>;
}

/// The admission webhooks as the chain calls them: an [`Admission`] whose mutation is
/// [`Reinvocable`].
pub trait Webhooks: Admission + Reinvocable {}

impl<T: Admission + Reinvocable> Webhooks for T {}

/// The admission of a server: its plugins around its webhooks, in kube's order.
pub struct Chain {
    /// The plugins kube runs before the webhooks, in its order.
    before: Vec<Arc<dyn Plugin>>,
    /// The mutating admission policies (the last of `before` to mutate, kube's
    /// `MutatingAdmissionPolicy`), when on.
    mutating_policies: Option<Arc<dyn Reinvocable>>,
    webhooks: Option<Arc<dyn Webhooks>>,
    /// Those it runs after them (ResourceQuota).
    after: Vec<Arc<dyn Plugin>>,
}

impl Chain {
    /// The `enabled` plugins kapi implements, around `webhooks`; the admission policies
    /// ask the authorization modes `authorizer` will hold. The mutating admission policies
    /// run only with `mutating_policies` (kube's `MutatingAdmissionPolicy` feature gate).
    pub fn new(
        enabled: &Enabled,
        webhooks: Option<Arc<dyn Webhooks>>,
        authorizer: &crate::authz::AuthorizerSlot,
        mutating_policies: bool,
    ) -> Chain {
        let _ = mutating_policies;
        let mut reinvocable: Option<Arc<dyn Reinvocable>> = None;
        // Only the admission policies (feature `admission-webhooks`) ask the authorizer.
        let _ = authorizer;
        let mut before: Vec<Arc<dyn Plugin>> = Vec::new();
        let mut after: Vec<Arc<dyn Plugin>> = Vec::new();
        for (name, _) in KUBE_PLUGINS.iter().filter(|(name, _)| enabled.has(name)) {
            let plugin: Arc<dyn Plugin> = match *name {
                "LimitRanger" => Arc::new(limit_ranger::LimitRanger::default()),
                "PodSecurity" => Arc::new(pod_security::PodSecurity::default()),
                "Priority" => Arc::new(priority::Priority::default()),
                "DefaultTolerationSeconds" => Arc::new(tolerations::DefaultTolerationSeconds),
                "DefaultStorageClass" => Arc::new(storage::DefaultStorageClass::default()),
                "StorageObjectInUseProtection" => Arc::new(storage::InUseProtection),
                "PersistentVolumeClaimResize" => Arc::new(storage::ClaimResize::default()),
                "RuntimeClass" => Arc::new(runtime_class::RuntimeClass::default()),
                #[cfg(feature = "admission-webhooks")]
                "ValidatingAdmissionPolicy" => Arc::new(crate::policies::ValidatingPolicies::new(
                    Arc::clone(authorizer),
                )),
                #[cfg(feature = "admission-webhooks")]
                "MutatingAdmissionPolicy" if mutating_policies => {
                    let policies = Arc::new(crate::policies::mutate::MutatingPolicies::new(
                        Arc::clone(authorizer),
                    ));
                    reinvocable = Some(Arc::clone(&policies) as Arc<dyn Reinvocable>);
                    policies
                }
                "ResourceQuota" => {
                    after.push(Arc::new(resource_quota::ResourceQuota::default()));
                    continue;
                }
                _ => continue,
            };
            before.push(plugin);
        }
        let webhooks = webhooks.filter(|_| {
            enabled.has("MutatingAdmissionWebhook") || enabled.has("ValidatingAdmissionWebhook")
        });
        Chain {
            before,
            mutating_policies: reinvocable,
            webhooks,
            after,
        }
    }
}

#[async_trait::async_trait]
impl Admission for Chain {
    async fn configured(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
    ) -> Result<(bool, bool), ApiError> {
        let (mut mutating, mut validating) = match &self.webhooks {
            Some(webhooks) => webhooks.configured(registry, attributes).await?,
            None => (false, false),
        };
        for plugin in self.before.iter().chain(&self.after) {
            let (mutates, validates) = plugin.handles(attributes);
            let busy = (mutates || validates) && !plugin.idle(registry);
            mutating |= mutates && busy;
            validating |= validates && busy;
        }
        Ok((mutating, validating))
    }

    /// kube's reinvoking chain: a second pass when a policy or webhook changed the object.
    async fn mutate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Value,
        old: Option<&Value>,
    ) -> Result<(Value, Vec<String>), ApiError> {
        reinvocation::reinvoking(self, registry, attributes, object, old).await
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let mut warnings = Vec::new();
        for plugin in &self.before {
            if plugin.handles(attributes).1 && !plugin.idle(registry) {
                warnings.extend(plugin.validate(registry, attributes, object, old).await?);
            }
        }
        if let Some(webhooks) = &self.webhooks {
            warnings.extend(webhooks.validate(registry, attributes, object, old).await?);
        }
        for plugin in &self.after {
            if plugin.handles(attributes).1 && !plugin.idle(registry) {
                warnings.extend(plugin.validate(registry, attributes, object, old).await?);
            }
        }
        Ok(warnings)
    }
}

#[async_trait::async_trait]
impl Reinvocable for Chain {
    /// One pass of the mutating chain: the plugins, the mutating policies, the webhooks.
    async fn mutate_pass(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        mut object: Value,
        old: Option<&Value>,
        reinvocation: &mut Reinvocation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let mut warnings = Vec::new();
        for plugin in &self.before {
            if plugin.handles(attributes).0 && !plugin.idle(registry) {
                plugin.admit(registry, attributes, &mut object, old).await?;
            }
        }
        let reinvocable = (self.mutating_policies.iter().cloned()).chain(
            self.webhooks
                .iter()
                .map(|w| Arc::clone(w) as Arc<dyn Reinvocable>),
        );
        for mutator in reinvocable {
            let (after, more) =
                (mutator.mutate_pass(registry, attributes, object, old, reinvocation)).await?;
            object = after;
            warnings.extend(more);
        }
        Ok((object, warnings))
    }
}

/// Whether a write is of `group`/`plural` itself (no subresource).
fn is(attributes: &Attributes<'_>, group: &str, plural: &str) -> bool {
    let info = attributes.kind.info;
    info.group == group && info.plural == plural && attributes.subresource.is_empty()
}

/// kube's `admission.NewForbidden`: 403 naming the object (the write's name, else the
/// object's name or `generateName`).
pub(crate) fn forbidden(
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    message: impl Into<String>,
) -> ApiError {
    let info = attributes.kind.info;
    let meta = |field: &str| {
        object
            .and_then(|o| o.pointer(&format!("/metadata/{field}")))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let name = Some(attributes.name.to_owned())
        .filter(|n| !n.is_empty())
        .or_else(|| meta("name"))
        .or_else(|| meta("generateName"))
        .unwrap_or_else(|| "Unknown".into());
    ApiError::Forbidden {
        resource: GroupResource::new(info.group, info.plural),
        name,
        message: message.into(),
    }
}

/// What a plugin reads of one kind, as kube's plugins read listers: every object from
/// the watch cache, as JSON in the storage version, grouped by namespace and built again
/// only when the kind changes (a write reads it without listing or decoding anything).
struct Lister {
    group: &'static str,
    plural: &'static str,
    objects: Derived<Objects>,
    /// The kind, found once per generation of the scheme (a scan of every kind costs
    /// more than the rest of a lookup).
    kind: std::sync::Mutex<Option<(u64, Option<Arc<KindEntry>>)>>,
}

/// The objects of a [`Lister`]'s kind.
#[derive(Default)]
struct Objects {
    /// By namespace (`""` for a cluster-scoped kind), as the cache lists them.
    by_namespace: HashMap<String, Vec<Value>>,
}

impl Objects {
    /// Those of `namespace` (`""`: a cluster-scoped kind's).
    fn of(&self, namespace: &str) -> &[Value] {
        self.by_namespace.get(namespace).map_or(&[], Vec::as_slice)
    }

    /// The one named `name` in `namespace`.
    fn named(&self, namespace: &str, name: &str) -> Option<&Value> {
        (self.of(namespace).iter()).find(|o| o["metadata"]["name"] == name)
    }
}

impl Lister {
    const fn new(group: &'static str, plural: &'static str) -> Lister {
        Lister {
            group,
            plural,
            objects: Derived::new(),
            kind: std::sync::Mutex::new(None),
        }
    }

    /// The kind listed, if the scheme serves it.
    fn kind(&self, registry: &Registry) -> Option<Arc<KindEntry>> {
        let scheme = registry.scheme();
        let generation = scheme.generation();
        let mut kind = self.kind.lock().unwrap_or_else(|e| e.into_inner());
        match kind.as_ref() {
            Some((at, found)) if *at == generation => found.clone(),
            _ => {
                let found = scheme.by_resource(self.group, self.plural);
                *kind = Some((generation, found.clone()));
                found
            }
        }
    }

    /// The objects now (none when the kind is not served).
    async fn objects(&self, registry: &Registry) -> Result<Arc<Objects>, ApiError> {
        let Some(kind) = self.kind(registry) else {
            return Ok(Arc::default());
        };
        let build = async || {
            let mut objects = Objects::default();
            for object in list(registry, self.group, self.plural, None).await? {
                let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
                (objects.by_namespace.entry(namespace.to_owned()))
                    .or_default()
                    .push(object);
            }
            Ok(objects)
        };
        self.objects.get(registry, &[&kind], build).await
    }

    /// Whether the kind has no object at all (read from its cache's count).
    fn is_empty(&self, registry: &Registry) -> bool {
        (self.kind(registry)).and_then(|kind| registry.cached_count(&kind)) == Some(0)
    }
}

/// The stored object of core `plural` (or `group`'s) named `name`, if any, as JSON.
async fn get(
    registry: &Registry,
    group: &str,
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Option<Value> {
    let kind = registry.scheme().by_resource(group, plural)?;
    let target = kapi_registry::Target {
        kind: &kind,
        version: kind.info.storage_version().name,
        namespace,
    };
    registry.get(target, name, None).await.ok()
}

/// Every object of core `plural` (or `group`'s) in `namespace` (all when `None`), as JSON.
async fn list(
    registry: &Registry,
    group: &str,
    plural: &str,
    namespace: Option<&str>,
) -> Result<Vec<Value>, ApiError> {
    let Some(kind) = registry.scheme().by_resource(group, plural) else {
        return Ok(Vec::new());
    };
    let target = kapi_registry::Target {
        kind: &kind,
        version: kind.info.storage_version().name,
        namespace,
    };
    let list = registry.list(target, &Default::default()).await?;
    Ok(list.items.iter().map(|item| item.value()).collect())
}
