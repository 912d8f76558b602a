//! In-process admission: checks the server registers (`Registry::add_admission`) that
//! judge a write by the user who makes it, after the kind's validation and before storage,
//! as kube's validating admission plugins and policy-based REST storage do (the RBAC
//! escalation check is one). Writes the server makes itself (no user: bootstrap, the
//! built-in controllers) are not judged, as kube's loopback client is a cluster
//! administrator.

use std::sync::{Arc, RwLock};

use serde_json::Value;

use kapi_core::api::KindInfo;
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;

/// One admission check.
pub trait Admit: Send + Sync {
    /// Judges a create (`old` is `None`) or update of an object of `kind` by `user`: `new`
    /// and `old` are hub JSON, `namespace` the object's.
    fn admit(
        &self,
        kind: &KindInfo,
        user: &UserInfo,
        namespace: Option<&str>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError>;
}

/// The registered checks, in the order added.
#[derive(Default)]
pub struct Checks(RwLock<Vec<Arc<dyn Admit>>>);

impl Checks {
    /// Adds `check` to every later write.
    pub fn add(&self, check: Arc<dyn Admit>) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(check);
    }

    /// Runs every check on a write by `user` (none for the server's own writes).
    pub fn run(
        &self,
        kind: &KindInfo,
        user: Option<&UserInfo>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(user) = user else {
            return Ok(());
        };
        let checks = self.0.read().unwrap_or_else(|e| e.into_inner()).clone();
        let namespace = new.pointer("/metadata/namespace").and_then(Value::as_str);
        for check in checks {
            check.admit(kind, user, namespace, new, old)?;
        }
        Ok(())
    }
}
