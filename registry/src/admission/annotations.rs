//! Audit annotations from admission (kube's `Attributes.AddAnnotation`): what a plugin
//! says about a write for the audit log (PodSecurity's `enforce-policy` and
//! `audit-violations`). The caller of a write (the API server's audit filter) runs it
//! within [`AuditAnnotations::scope`], and reads what was added after; outside one,
//! [`annotate`] does nothing. A task-local keeps the registry's write paths and their
//! attributes free of a channel only the audit log reads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

tokio::task_local! {
    static CURRENT: AuditAnnotations;
}

/// The audit annotations of one request.
#[derive(Clone, Default)]
pub struct AuditAnnotations(Arc<Mutex<BTreeMap<String, String>>>);

impl AuditAnnotations {
    /// Runs `future` (a request) collecting the annotations admission adds into these.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }

    /// What was added.
    pub fn taken(&self) -> BTreeMap<String, String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Adds `key: value` to the audit annotations of the request being admitted, if any
/// (the last value of a key stands, as kube's `AddAnnotation` keeps the first: a plugin
/// says each key once).
pub fn annotate(key: impl Into<String>, value: impl Into<String>) {
    let _ = CURRENT.try_with(|current| {
        (current.0.lock().unwrap_or_else(|e| e.into_inner())).insert(key.into(), value.into());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn annotations_are_kept_within_their_scope_only() {
        annotate("outside", "lost");
        let annotations = AuditAnnotations::default();
        annotations
            .clone()
            .scope(async {
                annotate(
                    "pod-security.kubernetes.io/enforce-policy",
                    "privileged:latest",
                )
            })
            .await;
        assert_eq!(
            annotations.taken().into_iter().collect::<Vec<_>>(),
            vec![(
                "pod-security.kubernetes.io/enforce-policy".to_owned(),
                "privileged:latest".to_owned()
            )]
        );
    }
}
