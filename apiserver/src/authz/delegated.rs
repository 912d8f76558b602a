//! Delegated authorization (`--authorization-kubeconfig`), as kube's delegating authorizer
//! of an extension API server: each decision is asked of the core cluster the kubeconfig
//! names, in a `SubjectAccessReview` (the user, groups, uid and extras; the resource or
//! non-resource attributes), and kept for ten seconds, allowed or not, as kube caches
//! them. A core cluster that cannot be asked has no opinion (the request is then denied,
//! unless a later mode allows it), and nothing is kept.
//!
//! The call blocks its thread, moved off the runtime's workers (`block_in_place`), as
//! kube's webhook blocks its goroutine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Attributes, Authorizer, Decision};
use crate::kubeconfig::Remote;

/// How long a decision is kept (kube's delegated allow and deny TTLs).
const TTL: Duration = Duration::from_secs(10);

/// Past this many kept decisions, the expired ones are dropped.
const PRUNE_AT: usize = 4096;

/// The delegated authorization mode.
pub struct SubjectAccessReviewer {
    remote: Remote,
    /// Decisions by review (its JSON).
    decisions: Mutex<HashMap<String, (Instant, Decision)>>,
}

impl SubjectAccessReviewer {
    /// Asks the core cluster `remote` for decisions.
    pub fn new(remote: Remote) -> SubjectAccessReviewer {
        SubjectAccessReviewer {
            remote,
            decisions: Mutex::new(HashMap::new()),
        }
    }

    /// The `SubjectAccessReview` spec of `attributes`.
    fn spec(attributes: &Attributes<'_>) -> Value {
        let user = attributes.user;
        let request = attributes.request;
        let mut spec = json!({"user": user.name, "groups": user.groups, "extra": user.extra});
        if !user.uid.is_empty() {
            spec["uid"] = json!(user.uid);
        }
        if request.resource_request {
            spec["resourceAttributes"] = json!({
                "namespace": request.namespace, "verb": request.verb,
                "group": request.api_group, "version": request.api_version,
                "resource": request.resource, "subresource": request.subresource,
                "name": request.name,
            });
        } else {
            spec["nonResourceAttributes"] = json!({"path": request.path, "verb": request.verb});
        }
        spec
    }

    fn review(&self, spec: &Value) -> Result<Decision, String> {
        let status = (self.remote).review("authorization.k8s.io", "SubjectAccessReview", spec)?;
        let reason: Arc<str> = Arc::from(status["reason"].as_str().unwrap_or_default());
        Ok(if status["allowed"] == true {
            Decision::Allow(reason)
        } else if status["denied"] == true {
            Decision::Deny(reason)
        } else {
            Decision::NoOpinion(reason)
        })
    }
}

impl Authorizer for SubjectAccessReviewer {
    fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let spec = SubjectAccessReviewer::spec(attributes);
        let key = spec.to_string();
        let now = Instant::now();
        let kept = (self.decisions.lock().unwrap_or_else(|e| e.into_inner()))
            .get(&key)
            .filter(|(at, _)| now.duration_since(*at) < TTL)
            .map(|(_, decision)| decision.clone());
        if let Some(decision) = kept {
            return decision;
        }
        match self.review(&spec) {
            Ok(decision) => {
                let mut decisions = self.decisions.lock().unwrap_or_else(|e| e.into_inner());
                if decisions.len() >= PRUNE_AT {
                    decisions.retain(|_, (at, _)| now.duration_since(*at) < TTL);
                }
                decisions.insert(key, (now, decision.clone()));
                decision
            }
            Err(why) => {
                tracing::warn!("delegated authorization: {why}");
                Decision::NoOpinion(Arc::from(why.as_str()))
            }
        }
    }
}
