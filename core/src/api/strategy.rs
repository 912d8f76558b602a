//! Per-kind hooks into the registry's create/update rules, on the hub type.
//!
//! The registry applies the generic rules of kube-apiserver itself (names, uid,
//! timestamps, generation, resourceVersion, the status/spec split of the status
//! subresource); a kind adds its own through [`Strategy`], in the order kube-apiserver's
//! `rest.BeforeCreate` / `rest.BeforeUpdate` call them:
//!
//! 1. `prepare_for_create` / `prepare_for_update`: clear or set server-owned fields;
//! 2. `validate` / `validate_update`: collect every field error;
//! 3. `canonicalize`: normalise the object before it is stored (kinds that say
//!    `has_canonical_form`).

use crate::error::FieldError;

/// What most of kube's status strategies let a status write change besides the status
/// (they reset only the spec): [`Strategy::subresource_metadata`] of their `status`.
pub const STATUS_METADATA: &[&str] = &["labels", "annotations", "finalizers", "ownerReferences"];

/// A kind's own create/update rules. Every method has a neutral default.
pub trait Strategy: Sized {
    /// Called on a new object before validation.
    fn prepare_for_create(&mut self) {}

    /// Called on a new object before validation, with who creates it (`None`: the
    /// server's own write), for kinds that record their requester (kube's
    /// CertificateSigningRequests). Defaults to
    /// [`prepare_for_create`](Self::prepare_for_create).
    fn prepare_for_create_by(&mut self, user: Option<&crate::user::UserInfo>) {
        let _ = user;
        self.prepare_for_create();
    }

    /// Called on the new version of an object before validation; `old` is what is stored.
    fn prepare_for_update(&mut self, old: &Self) {
        let _ = old;
    }

    /// Field errors of a new object: cross-field rules the schema cannot say. Paths are in
    /// the hub's JSON field names (`spec.container.image`); the registry reports each in
    /// the request's version (`v1beta1`'s `spec.image`), found through the conversion.
    fn validate(&self) -> Vec<FieldError> {
        Vec::new()
    }

    /// What a valid new object is warned about (kube's `WarningsOnCreate`: deprecated
    /// fields, values kube accepts but ignores), answered in `Warning` headers.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// What a valid update is warned about (kube's `WarningsOnUpdate`); not asked of
    /// writes through subresources. Defaults to none.
    fn warnings_on_update(&self, old: &Self) -> Vec<String> {
        let _ = old;
        Vec::new()
    }

    /// Field errors of an update, e.g. changes to immutable fields.
    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        let _ = old;
        self.validate()
    }

    /// Field errors of a new object written in `api_version` (`events.k8s.io/v1`), for
    /// rules that depend on the version a request speaks, as kube's Event strategy reads it
    /// from the request's context. Defaults to [`validate`](Self::validate).
    fn validate_in(&self, api_version: &str) -> Vec<FieldError> {
        let _ = api_version;
        self.validate()
    }

    /// Field errors of an update written in `api_version`. Defaults to
    /// [`validate_update`](Self::validate_update).
    fn validate_update_in(&self, old: &Self, api_version: &str) -> Vec<FieldError> {
        let _ = api_version;
        self.validate_update(old)
    }

    /// Field errors of an update through `subresource` (`status`, `scale`,
    /// `ephemeralcontainers`), for kinds whose subresources kube judges by rules of their
    /// own (a Pod's `ephemeralcontainers` may add containers its update may not). Defaults
    /// to [`validate_update`](Self::validate_update).
    fn validate_subresource_update(&self, old: &Self, subresource: &str) -> Vec<FieldError> {
        let _ = subresource;
        self.validate_update(old)
    }

    /// Whether a `PUT` of a missing object (without a resourceVersion) creates it: kube's
    /// `AllowCreateOnUpdate`, false for most kinds and for custom resources.
    fn allow_create_on_update() -> bool {
        false
    }

    /// Whether a `PUT` without a resourceVersion overwrites whatever is stored: kube's
    /// `AllowUnconditionalUpdate`, true for kube's own kinds, false for custom resources,
    /// whose clients must say which version they replace. Defaults to false.
    fn allow_unconditional_update() -> bool {
        false
    }

    /// Whether the kind normalises objects before they are stored
    /// ([`canonicalize`](Strategy::canonicalize)). Defaults to false, which lets the
    /// registry store the JSON it validated as it is instead of encoding the object again.
    fn has_canonical_form() -> bool {
        false
    }

    /// Normalises the object before it is stored. Only called when
    /// [`has_canonical_form`](Strategy::has_canonical_form).
    fn canonicalize(&mut self) {}

    /// Whether the kind changes an object on the first request to delete it
    /// ([`prepare_for_delete`](Strategy::prepare_for_delete)). Defaults to false.
    fn has_delete_rules() -> bool {
        false
    }

    /// Changes the object on the first request to delete it, before its finalizers are
    /// read: kube's REST `Delete` overrides, such as the CustomResourceDefinition's, which
    /// adds its cleanup finalizer so that its objects go first. Only called when
    /// [`has_delete_rules`](Strategy::has_delete_rules).
    fn prepare_for_delete(&mut self) {}

    /// Why the object may not be deleted, when it may not: kube's REST `Delete` overrides
    /// that refuse (a system PriorityClass), answered 403. Only called when
    /// [`refuses_deletes`](Strategy::refuses_deletes).
    fn delete_refused(&self) -> Option<String> {
        None
    }

    /// Whether some of the kind's objects may not be deleted
    /// ([`delete_refused`](Strategy::delete_refused)). Defaults to false.
    fn refuses_deletes() -> bool {
        false
    }

    /// Whether the kind's objects are deleted gracefully
    /// ([`grace_period`](Strategy::grace_period)). Defaults to false: a delete removes the
    /// object at once (or marks it for its finalizers).
    fn deletes_gracefully() -> bool {
        false
    }

    /// How many seconds the object is kept, marked for deletion, before it goes, when a
    /// delete asks for `requested` (`gracePeriodSeconds`; `None`: the kind's own default):
    /// kube's `CheckGracefulDelete` (a Pod's `terminationGracePeriodSeconds`, none for an
    /// unscheduled or finished one). 0 deletes at once. Only called when
    /// [`deletes_gracefully`](Strategy::deletes_gracefully).
    fn grace_period(&self, requested: Option<i64>) -> i64 {
        requested.unwrap_or(0)
    }

    /// The metadata fields (`labels`, `annotations`, `finalizers`, `ownerReferences`) a
    /// write through `subresource` (`status`, a CSR's `approval`) may change, as the
    /// kind's strategy for it in kube leaves them (an Ingress's status: all four; a
    /// Deployment's: all but its labels). Defaults to none: the write changes the
    /// subresource's fields only, as for custom resources.
    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        let _ = subresource;
        &[]
    }
}
