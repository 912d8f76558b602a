//! kube's `PodSecurity` plugin (k8s.io/pod-security-admission): a namespace's
//! `pod-security.kubernetes.io/{enforce,warn}` labels (and their `-version` labels) choose
//! the Pod Security Standards level its Pods are held to: a Pod that breaks the enforced
//! level is refused with kube's 403; one that breaks the warned level (which defaults to
//! the enforced one) is admitted with kube's warning, as are workload templates (warned,
//! never refused). Invalid labels are refused on the namespace (kube's 422); a stricter
//! enforced level warns about the namespace's existing Pods. Every version is judged by
//! kube 1.32's checks (`checks`). Audit annotations and exemptions are not kept.

mod checks;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Lister, Plugin, forbidden, get, list};
use checks::Level;
use kapi_core::error::{ApiError, FieldError};
use kapi_registry::Registry;
use kapi_registry::admission::{Attributes, Operation, annotate};

/// The plugin.
pub(super) struct PodSecurity {
    namespaces: Lister,
}

impl Default for PodSecurity {
    fn default() -> Self {
        PodSecurity {
            namespaces: Lister::new("", "namespaces"),
        }
    }
}

const PREFIX: &str = "pod-security.kubernetes.io/";

/// The kinds whose pod templates are warned about, and where the template is.
const WORKLOADS: &[(&str, &str, &str)] = &[
    ("", "replicationcontrollers", "/spec/template"),
    ("", "podtemplates", "/template"),
    ("apps", "replicasets", "/spec/template"),
    ("apps", "deployments", "/spec/template"),
    ("apps", "statefulsets", "/spec/template"),
    ("apps", "daemonsets", "/spec/template"),
    ("batch", "jobs", "/spec/template"),
    ("batch", "cronjobs", "/spec/jobTemplate/spec/template"),
];

/// One mode's level and version, as the labels say them (`restricted:latest`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct LevelVersion {
    level: Level,
    version: String,
}

impl LevelVersion {
    fn shown(&self) -> String {
        format!("{}:{}", self.level.name(), self.version)
    }
}

/// A namespace's policy and its label errors.
struct Policy {
    enforce: LevelVersion,
    audit: LevelVersion,
    warn: LevelVersion,
    errors: Vec<FieldError>,
}

impl Policy {
    /// kube's `FullyPrivileged` with no label error: nothing to evaluate.
    fn fully_privileged(&self) -> bool {
        [&self.enforce, &self.audit, &self.warn]
            .iter()
            .all(|mode| mode.level == Level::Privileged)
            && self.errors.is_empty()
    }
}

/// The audit annotations kube's PodSecurity adds (under `pod-security.kubernetes.io/`).
const ENFORCE_POLICY: &str = "pod-security.kubernetes.io/enforce-policy";
const AUDIT_VIOLATIONS: &str = "pod-security.kubernetes.io/audit-violations";
const POLICY_ERROR: &str = "pod-security.kubernetes.io/error";

fn valid_version(version: &str) -> bool {
    version == "latest"
        || version.strip_prefix("v1.").is_some_and(|minor| {
            !minor.is_empty()
                && minor.chars().all(|c| c.is_ascii_digit())
                && (minor == "0" || !minor.starts_with('0'))
        })
}

/// kube's `PolicyToEvaluate` of a namespace's labels.
fn policy(labels: &Map<String, Value>) -> Policy {
    let mut errors = Vec::new();
    let label = |name: &str| {
        labels
            .get(&format!("{PREFIX}{name}"))
            .and_then(Value::as_str)
    };
    let mut mode = |name: &str, invalid: Level| {
        let level = match label(name) {
            None => Level::Privileged,
            Some(value) => Level::parse(value).unwrap_or_else(|| {
                errors.push(FieldError::invalid(
                    format!("metadata.labels[{PREFIX}{name}]"),
                    value,
                    "must be one of privileged, baseline, restricted",
                ));
                invalid
            }),
        };
        let version_label = format!("{name}-version");
        let version = match label(&version_label) {
            None => "latest".to_owned(),
            Some(value) if valid_version(value) => value.to_owned(),
            Some(value) => {
                errors.push(FieldError::invalid(
                    format!("metadata.labels[{PREFIX}{version_label}]"),
                    value,
                    "must be \"latest\" or \"v1.x\"",
                ));
                "latest".to_owned()
            }
        };
        LevelVersion { level, version }
    };
    let enforce = mode("enforce", Level::Restricted);
    let audit = mode("audit", Level::Privileged);
    let mut warn = mode("warn", Level::Privileged);
    let enforce_valid = label("enforce").and_then(Level::parse).is_some();
    if label("warn").is_none() && enforce_valid && enforce.level > warn.level {
        warn.level = enforce.level;
        if label("warn-version").is_none() {
            warn.version = enforce.version.clone();
        }
    }
    Policy {
        enforce,
        audit,
        warn,
        errors,
    }
}

/// `reason (detail), ...` of what `level` forbids in a Pod.
fn forbidden_detail(level: Level, metadata: &Value, spec: &Value) -> Option<String> {
    let found = checks::check(level, metadata, spec);
    (!found.is_empty()).then(|| {
        let parts: Vec<String> = (found.iter())
            .map(|v| match v.detail.is_empty() {
                true => v.reason.clone(),
                false => format!("{} ({})", v.reason, v.detail),
            })
            .collect();
        parts.join(", ")
    })
}

fn labels_of(object: &Value) -> Map<String, Value> {
    object["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[async_trait::async_trait]
impl Plugin for PodSecurity {
    fn handles(&self, attributes: &Attributes<'_>) -> (bool, bool) {
        let info = attributes.kind.info;
        let write = matches!(attributes.operation, Operation::Create | Operation::Update);
        let (group, plural, sub) = (info.group, info.plural, attributes.subresource);
        let handled = match (group, plural) {
            ("", "pods") => sub.is_empty() || sub == "ephemeralcontainers",
            ("", "namespaces") => sub.is_empty(),
            _ => {
                sub.is_empty()
                    && WORKLOADS
                        .iter()
                        .any(|(g, p, _)| *g == group && *p == plural)
            }
        };
        (false, write && handled)
    }

    async fn validate(
        &self,
        registry: &Registry,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let Some(object) = object else {
            return Ok(Vec::new());
        };
        let info = attributes.kind.info;
        if info.plural == "namespaces" {
            return namespace(registry, object, old).await;
        }
        let Some(namespace) = attributes.namespace else {
            return Ok(Vec::new());
        };
        // kube's lister, and a live read for a namespace it has not seen yet.
        let namespaces = self.namespaces.objects(registry).await?;
        let labels = match namespaces.named("", namespace) {
            Some(stored) => labels_of(stored),
            None => match get(registry, "", "namespaces", None, namespace).await {
                Some(stored) => labels_of(&stored),
                None => {
                    return Err(ApiError::Internal(format!(
                        "failed to lookup namespace {namespace:?}"
                    )));
                }
            },
        };
        let policy = policy(&labels);
        let pod = info.plural == "pods";
        // kube's short-circuit for a namespace privileged in every mode: a Pod's audit
        // event still says which policy it was admitted under.
        if policy.fully_privileged() {
            if pod {
                annotate(ENFORCE_POLICY, "privileged:latest");
            }
            return Ok(Vec::new());
        }
        let (metadata, spec) = match pod {
            true => (&object["metadata"], &object["spec"]),
            false => {
                let at = (WORKLOADS
                    .iter()
                    .find(|(g, p, _)| *g == info.group && *p == info.plural))
                .map_or("/spec/template", |(_, _, at)| at);
                let Some(template) = object.pointer(at) else {
                    return Ok(Vec::new());
                };
                (&template["metadata"], &template["spec"])
            }
        };
        if pod
            && attributes.operation == Operation::Update
            && !old.is_some_and(|old| significant(object, old))
        {
            return Ok(Vec::new());
        }
        if !policy.errors.is_empty() {
            let errors: Vec<String> = policy.errors.iter().map(ToString::to_string).collect();
            let errors = match errors.len() {
                1 => errors[0].clone(),
                _ => format!("[{}]", errors.join(", ")),
            };
            annotate(POLICY_ERROR, format!("Failed to parse policy: {errors}"));
        }
        let refused = match pod {
            true => {
                annotate(ENFORCE_POLICY, policy.enforce.shown());
                forbidden_detail(policy.enforce.level, metadata, spec)
            }
            false => None,
        };
        // The audit level is judged whether or not the enforced one refuses.
        if let Some(detail) = forbidden_detail(policy.audit.level, metadata, spec) {
            let violations = format!(
                "would violate PodSecurity \"{}\": {detail}",
                policy.audit.shown()
            );
            annotate(AUDIT_VIOLATIONS, violations);
        }
        if let Some(detail) = refused {
            let message = format!(
                "violates PodSecurity \"{}\": {detail}",
                policy.enforce.shown()
            );
            return Err(forbidden(attributes, Some(object), message));
        }
        match forbidden_detail(policy.warn.level, metadata, spec) {
            Some(detail) => Ok(vec![format!(
                "would violate PodSecurity \"{}\": {detail}",
                policy.warn.shown()
            )]),
            None => Ok(Vec::new()),
        }
    }
}

/// kube's `isSignificantPodUpdate`: containers added or removed, or an image changed.
fn significant(new: &Value, old: &Value) -> bool {
    let images = |pod: &Value, field: &str| -> Vec<Value> {
        (pod["spec"][field].as_array().into_iter().flatten())
            .map(|c| c["image"].clone())
            .collect()
    };
    let ephemeral = |pod: &Value| -> BTreeMap<String, Value> {
        (pod["spec"]["ephemeralContainers"]
            .as_array()
            .into_iter()
            .flatten())
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["image"].clone(),
            )
        })
        .collect()
    };
    ["containers", "initContainers"]
        .iter()
        .any(|f| images(new, f) != images(old, f))
        || {
            let before = ephemeral(old);
            ephemeral(new)
                .iter()
                .any(|(name, image)| before.get(name) != Some(image))
        }
}

/// A namespace's labels checked; a stricter enforced level judged against its Pods.
async fn namespace(
    registry: &Registry,
    object: &Value,
    old: Option<&Value>,
) -> Result<Vec<String>, ApiError> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let new = policy(&labels_of(object));
    let before = old.map(|old| policy(&labels_of(old)));
    let unchanged_errors = before
        .as_ref()
        .is_some_and(|b| !b.errors.is_empty() && b.errors == new.errors);
    if !new.errors.is_empty() && !unchanged_errors {
        return Err(ApiError::Invalid {
            group: String::new(),
            kind: "Namespace".into(),
            name,
            causes: new.errors,
        });
    }
    let Some(before) = before else {
        return Ok(Vec::new());
    };
    let (now, then) = (&new.enforce, &before.enforce);
    let stricter = now.level > then.level || now.version != then.version;
    if now == then || now.level == Level::Privileged || !stricter {
        return Ok(Vec::new());
    }
    let pods = list(registry, "", "pods", Some(&name)).await?;
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pod in pods.iter().take(3000) {
        let found = checks::check(now.level, &pod["metadata"], &pod["spec"]);
        if found.is_empty() {
            continue;
        }
        let reasons: Vec<&str> = found.iter().map(|v| v.reason.as_str()).collect();
        let pod_name = pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        groups.entry(reasons.join(", ")).or_default().push(pod_name);
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let mut lines: Vec<String> = (groups.into_iter())
        .map(|(reasons, mut names)| {
            names.sort();
            match names.len() {
                1 => format!("{}: {reasons}", names[0]),
                2 => format!("{} (and 1 other pod): {reasons}", names[0]),
                n => format!("{} (and {} other pods): {reasons}", names[0], n - 1),
            }
        })
        .collect();
    lines.sort();
    let mut warnings = vec![format!(
        "existing pods in namespace \"{name}\" violate the new PodSecurity enforce level \"{}\"",
        now.shown()
    )];
    warnings.extend(lines);
    Ok(warnings)
}
