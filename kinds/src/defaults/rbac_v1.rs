//! `rbac.authorization.k8s.io/v1`: a binding's role, users and groups are in the RBAC
//! group unless said; service accounts in none.

use crate::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use crate::rbac::GROUP;

fn role_ref(role_ref: &mut RoleRef) {
    if role_ref.api_group.is_empty() {
        role_ref.api_group = GROUP.to_owned();
    }
}

pub(crate) fn role_binding(binding: &mut RoleBinding) {
    role_ref(&mut binding.role_ref);
}

pub(crate) fn cluster_role_binding(binding: &mut ClusterRoleBinding) {
    role_ref(&mut binding.role_ref);
}

pub(crate) fn subject(subject: &mut Subject) {
    if subject.api_group.is_empty() && (subject.kind == "User" || subject.kind == "Group") {
        subject.api_group = GROUP.to_owned();
    }
}
