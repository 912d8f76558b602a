//! `rbac.authorization.k8s.io/v1`: who may do what. Roles hold rules (verbs on resources
//! of API groups, or on non-resource URLs); bindings grant a role to subjects (users,
//! groups, service accounts), in a namespace (RoleBinding) or everywhere
//! (ClusterRoleBinding). A ClusterRole with an `aggregationRule` holds the rules of the
//! ClusterRoles its selectors match, kept up to date by the server.
//!
//! The rules on the objects themselves are kube's `pkg/apis/rbac/validation`
//! (`validation`); kube's defaults for the API group of subjects and role references are
//! `crate::defaults::rbac_v1`'s.

mod validation;

use kapi_core::error::FieldError;

pub use crate::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef,
    Subject,
};

/// The group of the RBAC kinds.
pub const GROUP: &str = "rbac.authorization.k8s.io";

impl kapi_core::Strategy for Role {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn validate(&self) -> Vec<FieldError> {
        validation::rules(&self.rules, true)
    }
}

impl kapi_core::Strategy for ClusterRole {
    /// kube's own kinds may be replaced without a resourceVersion.
    fn allow_unconditional_update() -> bool {
        true
    }

    fn validate(&self) -> Vec<FieldError> {
        let mut errors = validation::rules(&self.rules, false);
        errors.extend(validation::aggregation_rule(self.aggregation_rule.as_ref()));
        errors
    }
}

/// The strategy of a binding kind: kube's rules (`namespaced` for RoleBindings), `roleRef`
/// immutable.
macro_rules! binding_strategy {
    ($kind:ty, namespaced = $namespaced:expr) => {
        impl kapi_core::Strategy for $kind {
            /// kube's own kinds may be replaced without a resourceVersion.
            fn allow_unconditional_update() -> bool {
                true
            }

            fn validate(&self) -> Vec<FieldError> {
                validation::binding(&self.role_ref, &self.subjects, $namespaced)
            }

            fn validate_update(&self, old: &Self) -> Vec<FieldError> {
                let mut errors = self.validate();
                let changed = validation::role_ref_unchanged(&self.role_ref, &old.role_ref);
                errors.extend(changed);
                errors
            }
        }
    };
}

binding_strategy!(RoleBinding, namespaced = true);
binding_strategy!(ClusterRoleBinding, namespaced = false);
