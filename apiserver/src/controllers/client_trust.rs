//! kube's cluster authentication trust controller: publishes whom this server believes
//! about users (its client CA, and its front proxy's CA, names and headers) in the
//! ConfigMap `kube-system/extension-apiserver-authentication`, where extension API servers
//! behind it read them (their `--authentication-kubeconfig` lookup). Written at start-up
//! and put back every minute if changed; `kube-system` is made when missing.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use kapi_core::error::ApiError;
use kapi_registry::{Registry, Target, WriteOptions};

/// The ConfigMap's namespace and name.
pub const NAMESPACE: &str = "kube-system";
/// See [`NAMESPACE`].
pub const NAME: &str = "extension-apiserver-authentication";

/// The ConfigMap's data: `client-ca-file` and `requestheader-client-ca-file` (PEM), and the
/// JSON lists `requestheader-allowed-names`, `-username-headers`, `-group-headers`,
/// `-extra-headers-prefix`, as kube writes them.
pub type Published = BTreeMap<String, String>;

/// One pass: the ConfigMap holds `data` (made or replaced when it does not).
pub async fn sync(registry: &Registry, data: &Published) -> Result<bool, ApiError> {
    let scheme = registry.scheme();
    let (Some(namespaces), Some(config_maps)) = (
        scheme.by_kind("", "Namespace"),
        scheme.by_kind("", "ConfigMap"),
    ) else {
        return Ok(false);
    };
    let in_namespace = Target {
        kind: &config_maps,
        version: "v1",
        namespace: Some(NAMESPACE),
    };
    let options = WriteOptions {
        field_manager: Some("kube-apiserver".into()),
        ..WriteOptions::default()
    };
    let wanted = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data});
    match registry.get(in_namespace, NAME, None).await {
        Ok(existing) if existing["data"] == wanted["data"] => Ok(false),
        Ok(mut existing) => {
            existing["data"] = wanted["data"].clone();
            registry
                .update(in_namespace, NAME, existing, None, &options)
                .await?;
            Ok(false)
        }
        Err(ApiError::NotFound { .. }) => {
            let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": NAMESPACE}});
            let cluster = Target {
                kind: &namespaces,
                version: "v1",
                namespace: None,
            };
            match registry.create(cluster, namespace, &options).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
                Err(error) => return Err(error),
            }
            match registry.create(in_namespace, wanted, &options).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(false),
                Err(error) => Err(error),
            }
        }
        Err(error) => Err(error),
    }
}

/// The JSON list kube writes for a list of strings.
pub fn list(values: &[String]) -> String {
    Value::from(values.to_vec()).to_string()
}
