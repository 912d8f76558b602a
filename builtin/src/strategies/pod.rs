//! kube's Pod strategy: a new Pod is `Pending`, with the quality of service its
//! containers' resources give it, and held back from scheduling while it has gates; a
//! scheduled Pod is deleted gracefully.

use kapi::error::FieldError;
use kapi::validation::Path;

use crate::api::core::v1::{Container, Pod, PodCondition, PodSpec, PodStatus};
use crate::validation::pod;

impl kapi::Strategy for Pod {
    fn prepare_for_create(&mut self) {
        let mut status = PodStatus {
            phase: "Pending".into(),
            qos_class: qos_class(&self.spec).into(),
            ..PodStatus::default()
        };
        if !self.spec.scheduling_gates.is_empty() {
            status.conditions.push(PodCondition {
                r#type: "PodScheduled".into(),
                status: "False".into(),
                reason: "SchedulingGated".into(),
                message: "Scheduling is blocked due to non-empty scheduling gates".into(),
                ..PodCondition::default()
            });
        }
        self.status = status;
    }

    fn validate(&self) -> Vec<FieldError> {
        pod::pod(self)
    }

    /// On create only: kube warns nothing on a Pod's updates.
    fn warnings(&self) -> Vec<String> {
        crate::warnings::pod(self)
    }

    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        let mut errors = pod::pod_spec(&self.spec, &Path::new("spec"));
        errors.extend(pod::pod_update(self, old));
        errors
    }

    /// kube's status and ephemeral containers strategies: the spec a status write keeps
    /// is the stored one; `ephemeralcontainers` adds ephemeral containers alone.
    fn validate_subresource_update(&self, old: &Self, subresource: &str) -> Vec<FieldError> {
        match subresource {
            "ephemeralcontainers" => {
                let mut errors = pod::pod_spec(&self.spec, &Path::new("spec"));
                errors.extend(pod::ephemeral_containers_update(self, old));
                errors
            }
            _ => Vec::new(),
        }
    }

    fn allow_unconditional_update() -> bool {
        true
    }

    /// kube's Pod status strategy keeps the stored owner references (old kubelets corrupt
    /// them); labels, annotations and finalizers may change.
    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["labels", "annotations", "finalizers"],
            _ => &[],
        }
    }

    fn deletes_gracefully() -> bool {
        true
    }

    /// kube's `CheckGracefulDelete`: the period asked for, else the Pod's
    /// `terminationGracePeriodSeconds`; none for a Pod no node runs (unscheduled) or that
    /// finished, which nothing has to stop.
    fn grace_period(&self, requested: Option<i64>) -> i64 {
        let finished = matches!(self.status.phase.as_str(), "Succeeded" | "Failed");
        if self.spec.node_name.is_empty() || finished {
            return 0;
        }
        requested
            .or(self.spec.termination_grace_period_seconds)
            .unwrap_or(0)
    }
}

/// The resources quality of service is judged by.
const JUDGED: [&str; 2] = ["cpu", "memory"];

/// kube's `GetPodQOS`: `BestEffort` when no container requests or limits CPU or memory,
/// `Guaranteed` when every container limits both and the pod requests what it limits,
/// `Burstable` otherwise. Quantities are summed in thousandths.
fn qos_class(spec: &PodSpec) -> &'static str {
    let mut requests = std::collections::BTreeMap::<&str, i64>::new();
    let mut limits = std::collections::BTreeMap::<&str, i64>::new();
    let mut guaranteed = true;
    let containers: Vec<&Container> = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .collect();
    for container in containers {
        let resources = &container.resources;
        for name in JUDGED {
            if let Some(milli) = positive(resources.requests.get(name)) {
                *requests.entry(name).or_default() += milli;
            }
        }
        let mut limited = 0;
        for name in JUDGED {
            if let Some(milli) = positive(resources.limits.get(name)) {
                *limits.entry(name).or_default() += milli;
                limited += 1;
            }
        }
        if limited < JUDGED.len() {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    let requested_as_limited = (requests.iter())
        .all(|(name, value)| limits.get(name) == Some(value))
        && requests.len() == limits.len();
    if guaranteed && requested_as_limited {
        return "Guaranteed";
    }
    "Burstable"
}

/// A quantity in thousandths, when it parses and is above zero.
fn positive(quantity: Option<&kapi::meta::Quantity>) -> Option<i64> {
    let parsed = kapi::quantity::Quantity::parse(&quantity?.0).ok()?;
    let milli = parsed.milli_value();
    (milli > 0).then_some(milli)
}
