//! kube-controller-manager's root CA publisher (`rootcacertpublisher`): every namespace
//! that is not terminating holds the `kube-root-ca.crt` ConfigMap with the cluster's CA
//! bundle (kapi's `--client-ca-file`), made when missing and put back when changed, so
//! that Pods (and the service account token volumes kube projects) can verify the API
//! server. A pass does nothing while neither namespaces nor ConfigMaps changed.

use serde_json::json;

use kapi_core::error::ApiError;
use kapi_registry::{Passes, Registry, Target};

/// The ConfigMap's name (kube's).
pub const NAME: &str = "kube-root-ca.crt";

/// Its key (kube's).
const KEY: &str = "ca.crt";

/// kube's description of it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The publisher of one CA bundle.
pub struct Publisher {
    bundle: String,
    /// Whether namespaces or ConfigMaps changed since a pass published everything.
    passes: Passes,
}

impl Publisher {
    /// Publishes `bundle` (PEM).
    pub fn new(bundle: String) -> Publisher {
        Publisher {
            bundle,
            passes: Passes::default(),
        }
    }

    /// One pass over the namespaces; whether work is left.
    pub async fn sync(&self, registry: &Registry) -> Result<bool, ApiError> {
        let scheme = registry.scheme();
        let (Some(namespaces), Some(configmaps)) = (
            scheme.by_resource("", "namespaces"),
            scheme.by_resource("", "configmaps"),
        ) else {
            return Ok(false);
        };
        let Some(stamp) = self.passes.start(registry, &[&namespaces, &configmaps]) else {
            return Ok(false);
        };
        let all = Target {
            kind: &namespaces,
            version: "v1",
            namespace: None,
        };
        let options = super::manager_writes();
        let mut left = false;
        for item in &registry.list(all, &Default::default()).await?.items {
            let namespace = item.value();
            let Some(name) = namespace["metadata"]["name"].as_str() else {
                continue;
            };
            if namespace.pointer("/metadata/deletionTimestamp").is_some()
                || namespace["status"]["phase"] == "Terminating"
            {
                continue;
            }
            let target = Target {
                kind: &configmaps,
                version: "v1",
                namespace: Some(name),
            };
            let written = match registry.get(target, NAME, None).await {
                Ok(current) if current["data"][KEY] == self.bundle.as_str() => continue,
                Ok(mut current) => {
                    current["data"] = json!({KEY: self.bundle});
                    let annotations = &mut current["metadata"]["annotations"];
                    if !annotations.is_object() {
                        *annotations = json!({});
                    }
                    annotations["kubernetes.io/description"] = json!(DESCRIPTION);
                    registry
                        .update(target, NAME, current, None, &options)
                        .await
                        .map(|_| ())
                }
                Err(ApiError::NotFound { .. }) => {
                    let map = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": NAME, "annotations": {"kubernetes.io/description": DESCRIPTION}},
                        "data": {KEY: self.bundle}});
                    registry.create(target, map, &options).await.map(|_| ())
                }
                Err(error) => Err(error),
            };
            match written {
                Ok(()) => {}
                // Terminating meanwhile, or written by another server: the next pass sees.
                Err(
                    ApiError::Conflict { .. }
                    | ApiError::AlreadyExists { .. }
                    | ApiError::Forbidden { .. },
                ) => left = true,
                Err(error) => {
                    tracing::warn!(%error, namespace = name, "cannot publish the root CA");
                    left = true;
                }
            }
        }
        self.passes.finish(stamp, left);
        Ok(left)
    }
}
