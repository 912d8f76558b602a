//! How each of kube's kinds carries `metadata.generation`: what its strategy's
//! `PrepareForCreate` and `PrepareForUpdate` do in kube 1.32 (`pkg/registry/<group>/
//! <kind>/strategy.go`), as the derive's `generation(...)` says it. Facts of kube's code
//! that its published description does not hold, so kept here, by group and kind.

/// `generation(...)` of the kind `kind` of `group`, for its `#[resource(...)]`.
pub(crate) fn generation(group: &str, kind: &str) -> &'static str {
    match (group, kind) {
        // Spec changes and annotation changes (annotations are copied to ReplicaSets).
        ("apps", "Deployment") => "generation(path = \".spec\", path = \".metadata.annotations\")",
        ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job" | "CronJob")
        | ("", "ReplicationController")
        | ("networking.k8s.io", "Ingress" | "IngressClass" | "NetworkPolicy")
        | ("policy", "PodDisruptionBudget")
        | ("flowcontrol.apiserver.k8s.io", "FlowSchema" | "PriorityLevelConfiguration")
        | ("storage.k8s.io", "CSIDriver") => "generation(path = \".spec\")",
        ("apiextensions.k8s.io", "CustomResourceDefinition")
        | (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "MutatingAdmissionPolicy"
            | "MutatingAdmissionPolicyBinding",
        ) => "generation(path = \".spec\")",
        ("", "PodTemplate") => "generation(path = \".template\")",
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration")
        | ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            "generation(path = \".webhooks\")"
        }
        // Everything but metadata, and the labels (kube blanks the rest of metadata).
        ("discovery.k8s.io", "EndpointSlice") => {
            "generation(path = \".addressType\", path = \".endpoints\", path = \".ports\", \
             path = \".metadata.labels\")"
        }
        // Set on create; `PrepareForUpdate` never moves it.
        ("scheduling.k8s.io", "PriorityClass") => "generation(created)",
        // Pods, Services, HPAs (until kube 1.34's gate), storage and cluster kinds, ...
        _ => "generation(untracked)",
    }
}

#[cfg(test)]
mod tests {
    use super::generation;

    #[test]
    fn kinds_without_a_rule_are_untracked() {
        assert_eq!(generation("", "Pod"), "generation(untracked)");
        assert_eq!(
            generation("autoscaling", "HorizontalPodAutoscaler"),
            "generation(untracked)"
        );
        assert_eq!(generation("batch", "Job"), "generation(path = \".spec\")");
    }
}
