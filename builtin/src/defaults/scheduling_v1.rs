//! `scheduling.k8s.io/v1`: a priority class preempts lower priorities unless said.

use super::or;
use crate::api::scheduling::v1::PriorityClass;

pub(crate) fn priority_class(class: &mut PriorityClass) {
    or(
        &mut class.preemption_policy,
        "PreemptLowerPriority".to_owned(),
    );
}
