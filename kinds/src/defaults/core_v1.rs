//! kube's defaults of `core/v1` kinds in this crate (`pkg/apis/core/v1/defaults.go`).

use crate::core::{NAMESPACE_NAME_LABEL, Namespace, NamespaceStatus};

/// `SetDefaults_NamespaceStatus`: a namespace without a phase is active.
pub(crate) fn namespace_status(status: &mut NamespaceStatus) {
    if status.phase.is_empty() {
        status.phase = crate::core::NAMESPACE_ACTIVE.to_owned();
    }
}

/// `SetDefaults_Namespace`: a namespace is labelled with its name (once it has one: a
/// generated name is labelled when the strategy canonicalizes the namespace).
pub(crate) fn namespace(namespace: &mut Namespace) {
    if let Some(name) = namespace.metadata.name.clone().filter(|n| !n.is_empty()) {
        (namespace
            .metadata
            .labels
            .get_or_insert_with(Default::default))
        .insert(NAMESPACE_NAME_LABEL.to_owned(), name);
    }
}
