//! kube's defaulting functions (`SetDefaults_<Type>` in kube 1.32's
//! `pkg/apis/<group>/<version>/defaults.go`), one module per group-version, one function per
//! type, named as the generated `Defaults` impls call them: the generator walks each kind's
//! types (kube's defaulter-gen) and sets `+default=` markers' values; what a marker cannot
//! say is here. Features kube 1.32 ships off (`PodLevelResources`,
//! `InPlacePodVerticalScaling`, `MaxUnavailableStatefulSet`, `ImageVolume`) set nothing,
//! as in a default kube-apiserver.

pub(crate) mod apps_v1;
pub(crate) mod autoscaling_v1;
pub(crate) mod autoscaling_v2;
pub(crate) mod batch_v1;
pub(crate) mod core_v1;
pub(crate) mod discovery_v1;
pub(crate) mod flowcontrol_v1;
pub(crate) mod networking_v1;
pub(crate) mod scheduling_v1;
pub(crate) mod storage_v1;

/// Sets `field` to `value` when it is `None`.
pub(crate) fn or<T>(field: &mut Option<T>, value: T) {
    field.get_or_insert(value);
}

/// Sets `field` to `value` when it is zero (kube's unset number).
pub(crate) fn or_zero(field: &mut i32, value: i32) {
    if *field == 0 {
        *field = value;
    }
}

/// Sets `field` to `value` when it is empty.
pub(crate) fn or_str(field: &mut String, value: &str) {
    if field.is_empty() {
        *field = value.to_owned();
    }
}
