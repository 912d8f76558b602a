//! The kinds' own create and update rules. Until kube's strategies are ported (defaulting,
//! validation, tables), every built-in kind follows kube's generic rules for its own kinds:
//! a `PUT` needs no resourceVersion.

macro_rules! kube_defaults {
    ($($path:path),* $(,)?) => {
        $(impl kapi::Strategy for $path {
            fn allow_unconditional_update() -> bool {
                true
            }
        })*
    };
}

pub(crate) use kube_defaults;
