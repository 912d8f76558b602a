//! The registry's side of admission ([`crate::admission`]): the write paths call these with
//! what they hold (the request's version of the object, the stored hubs), in kube's
//! order: [`Registry::mutating_admission`] on the decoded, defaulted request object,
//! [`Registry::validating_admission`] after validation, before storage.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Registry, WriteOptions};
use crate::admission::{Admit, Attributes, Operation};
use kapi_core::api::KindInfo;
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;

impl Registry {
    /// Adds an in-process admission check to every later write.
    pub fn add_admission(&self, check: Arc<dyn Admit>) {
        self.checks.add(check);
    }

    /// Whether mutating and validating admission webhooks are configured for a write.
    pub(super) async fn webhooks_configured(
        &self,
        attributes: &Attributes<'_>,
    ) -> Result<(bool, bool), ApiError> {
        match &self.admission {
            Some(admission) => admission.configured(self, attributes).await,
            None => Ok((false, false)),
        }
    }

    /// The options of a write as admission webhooks are sent them (`CreateOptions`,
    /// `UpdateOptions`).
    pub(super) fn options_json(kind: &str, options: &WriteOptions) -> Value {
        let mut json = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
        if options.dry_run {
            json["dryRun"] = json!(["All"]);
        }
        if let Some(manager) = &options.field_manager {
            json["fieldManager"] = json!(manager);
        }
        json
    }

    /// The mutating admission on `object` (in the request's version; `old` in the same
    /// version for an update or delete; null for a delete, a connect's options for a
    /// connect): the object as it leaves it, and its warnings. A written object is seen
    /// with the defaults its type sets by code, as kube's webhooks see objects defaulted
    /// on decode (one that does not decode is refused with its reason after).
    pub(super) async fn mutating_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Value,
        old: Option<&Value>,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let written = matches!(attributes.operation, Operation::Create | Operation::Update);
        let object = match written && attributes.object_kind.is_none() {
            true => match attributes.kind.default_in(&object, attributes.version) {
                Ok(Some(defaulted)) => defaulted,
                _ => object,
            },
            false => object,
        };
        match &self.admission {
            Some(admission) => admission.mutate(self, attributes, object, old).await,
            None => Ok((object, Vec::new())),
        }
    }

    /// Both sides of admission on an object nothing else happens to between them (a
    /// connect's options; a delete's, null: the validating side is given none), as
    /// `configured` (what [`Registry::webhooks_configured`] said) asks: the object as the
    /// mutating side leaves it, the warnings of both added to `warnings`.
    pub(super) async fn admit_through(
        &self,
        attributes: &Attributes<'_>,
        configured: (bool, bool),
        object: Value,
        old: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        let (mutating, validating) = configured;
        let object = match mutating {
            true => {
                let (object, more) = self.mutating_admission(attributes, object, old).await?;
                warnings.extend(more);
                object
            }
            false => object,
        };
        if validating {
            let given = (!object.is_null()).then_some(&object);
            warnings.extend(
                self.validating_admission(attributes, given, old, None)
                    .await?,
            );
        }
        Ok(object)
    }

    /// The validating admission webhooks on a write (`object` and `old` in the request's
    /// version; no object for a delete), then the in-process checks on its hubs (`new` and
    /// `old_hub`; none for a delete): the webhooks' warnings.
    pub(super) async fn validating_admission(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        hubs: Option<(&Value, Option<&Value>)>,
    ) -> Result<Vec<String>, ApiError> {
        let warnings = match &self.admission {
            Some(admission) => admission.validate(self, attributes, object, old).await?,
            None => Vec::new(),
        };
        if let Some((new, old_hub)) = hubs {
            self.admit(attributes.kind.info, attributes.user, new, old_hub)?;
        }
        Ok(warnings)
    }

    /// The in-process checks on a write by `user` (hub JSON).
    pub(super) fn admit(
        &self,
        kind: &KindInfo,
        user: Option<&UserInfo>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        self.checks.run(kind, user, new, old)
    }
}
