//! The registry's use of the compiled schemas (`kapi_schema`): a write's object defaulted
//! and validated against its version's schema, and the errors a kind's own checks already
//! reported left out.

use serde_json::Value;

use super::{Registry, Target};
use kapi_core::error::{ApiError, FieldError};

/// `errors` less those about a field `reported` already has an error for: the replica
/// paths' own checks (`.spec.replicas`) repeat what the schema says of `spec.replicas`.
pub(super) fn not_reported(errors: Vec<FieldError>, reported: &[FieldError]) -> Vec<FieldError> {
    let seen = |error: &FieldError| {
        let field = error.field.trim_start_matches('.');
        reported.iter().any(|r| r.field == field)
    };
    errors.into_iter().filter(|e| !seen(e)).collect()
}

impl Registry {
    /// Defaults `object` (in `target.version`) from its schema and validates it, its
    /// validation rules included; with `old` (the stored object in the same version), also
    /// checks immutable fields and transition rules. Returns the errors and the warnings
    /// (rule failures on unchanged values, ratcheted). No schemas configured: nothing to do.
    pub(super) fn apply_schema(
        &self,
        target: Target<'_>,
        object: &mut Value,
        old: Option<&Value>,
    ) -> Result<(Vec<FieldError>, Vec<String>), ApiError> {
        let Some(schemas) = self.checking_schemas(target) else {
            return Ok(Default::default());
        };
        let info = target.kind.info;
        let schema = schemas
            .kind(info.group, target.version, info.kind)
            .ok_or_else(|| {
                ApiError::Internal(format!(
                    "no schema for {} {}",
                    target.kind.api_version(target.version),
                    info.kind
                ))
            })?;
        // Rules may cost up to kube's budget of CPU: an object whose rules cost more than a
        // little is evaluated off the async workers, so that it never stalls other requests.
        Ok(schema.judge(object, old, |run| blocking(run)))
    }

    /// Whether the schema of `target` marks any field immutable or has validation rules
    /// (updates then need the stored object in the request's version).
    pub(super) fn has_immutable_fields(&self, target: Target<'_>) -> bool {
        let Some(schemas) = self.checking_schemas(target) else {
            return false;
        };
        let info = target.kind.info;
        (schemas.kind(info.group, target.version, info.kind))
            .is_some_and(|schema| schema.has_immutable_fields() || schema.has_rules())
    }
}

impl Registry {
    /// The schemas that judge objects of `target`: none for a kind its strategy alone
    /// judges (kube's own kinds), nor when no schemas are configured.
    fn checking_schemas(&self, target: Target<'_>) -> Option<std::sync::Arc<kapi_schema::Schemas>> {
        match target.kind.info.strategy_validates {
            true => None,
            false => self.schemas_for(target.kind),
        }
    }
}

/// Runs `f` where it may take a while: on a multi-threaded runtime the worker hands its
/// other tasks over first; elsewhere (tests, a current-thread runtime) it just runs. For
/// CPU work too short for a hop to the blocking pool and too long for a worker (costly
/// rules; compiling an admission policy).
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
