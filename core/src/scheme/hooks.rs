//! A kind's [`Strategy`] behind function pointers, so that the scheme can call the rules
//! of a hub it only knows as an [`ErasedHub`].

use super::ErasedHub;
use crate::api::Strategy;
use crate::error::FieldError;
use crate::user::UserInfo;

/// A kind's [`Strategy`], erased.
#[derive(Clone, Copy)]
pub(super) struct StrategyHooks {
    pub(super) prepare_for_create: fn(&mut ErasedHub, Option<&UserInfo>),
    pub(super) prepare_for_update: fn(&mut ErasedHub, &ErasedHub),
    pub(super) validate: fn(&ErasedHub, &str) -> Vec<FieldError>,
    /// New, old, the request's API version, the subresource written ("" for the object).
    pub(super) validate_update: fn(&ErasedHub, &ErasedHub, &str, &str) -> Vec<FieldError>,
    /// New, and old for an update.
    pub(super) warnings: fn(&ErasedHub, Option<&ErasedHub>) -> Vec<String>,
    pub(super) canonicalize: Option<fn(&mut ErasedHub)>,
    pub(super) prepare_for_delete: Option<fn(&mut ErasedHub)>,
    pub(super) grace_period: Option<fn(&ErasedHub, Option<i64>) -> i64>,
    pub(super) delete_refused: Option<fn(&ErasedHub) -> Option<String>>,
    pub(super) allow_create_on_update: bool,
    pub(super) allow_unconditional_update: bool,
    pub(super) subresource_metadata: fn(&str) -> &'static [&'static str],
}

impl StrategyHooks {
    pub(super) fn of<Hub: Strategy + 'static>() -> StrategyHooks {
        // A hub of another type can only come from a mis-registered scheme, which
        // `KindEntry` rules out: every hub it sees was made by its own `to_hub`.
        StrategyHooks {
            prepare_for_create: |hub, user| {
                if let Some(hub) = hub.downcast_mut::<Hub>() {
                    hub.prepare_for_create_by(user);
                }
            },
            prepare_for_update: |hub, old| {
                if let (Some(hub), Some(old)) =
                    (hub.downcast_mut::<Hub>(), old.downcast_ref::<Hub>())
                {
                    hub.prepare_for_update(old);
                }
            },
            validate: |hub, api_version| {
                (hub.downcast_ref::<Hub>())
                    .map(|hub| hub.validate_in(api_version))
                    .unwrap_or_default()
            },
            validate_update: |hub, old, api_version, subresource| match (
                hub.downcast_ref::<Hub>(),
                old.downcast_ref::<Hub>(),
            ) {
                (Some(hub), Some(old)) if subresource.is_empty() => {
                    hub.validate_update_in(old, api_version)
                }
                (Some(hub), Some(old)) => hub.validate_subresource_update(old, subresource),
                _ => Vec::new(),
            },
            warnings: |hub, old| match (hub.downcast_ref::<Hub>(), old) {
                (Some(hub), None) => hub.warnings(),
                (Some(hub), Some(old)) => (old.downcast_ref::<Hub>())
                    .map(|old| hub.warnings_on_update(old))
                    .unwrap_or_default(),
                (None, _) => Vec::new(),
            },
            canonicalize: Hub::has_canonical_form().then_some(|hub: &mut ErasedHub| {
                if let Some(hub) = hub.downcast_mut::<Hub>() {
                    hub.canonicalize();
                }
            }),
            prepare_for_delete: Hub::has_delete_rules().then_some(|hub: &mut ErasedHub| {
                if let Some(hub) = hub.downcast_mut::<Hub>() {
                    hub.prepare_for_delete();
                }
            }),
            grace_period: Hub::deletes_gracefully().then_some(|hub: &ErasedHub, requested| {
                (hub.downcast_ref::<Hub>()).map_or(0, |hub| hub.grace_period(requested))
            }),
            delete_refused: Hub::refuses_deletes().then_some(|hub: &ErasedHub| {
                (hub.downcast_ref::<Hub>()).and_then(|hub| hub.delete_refused())
            }),
            allow_create_on_update: Hub::allow_create_on_update(),
            allow_unconditional_update: Hub::allow_unconditional_update(),
            subresource_metadata: Hub::subresource_metadata,
        }
    }
}

impl StrategyHooks {
    /// A kind without rules of its own (kube's custom resources: their schema is their
    /// validation, which the registry applies to every kind).
    pub(super) const NONE: StrategyHooks = StrategyHooks {
        prepare_for_create: |_, _| {},
        prepare_for_update: |_, _| {},
        validate: |_, _| Vec::new(),
        validate_update: |_, _, _, _| Vec::new(),
        warnings: |_, _| Vec::new(),
        canonicalize: None,
        prepare_for_delete: None,
        grace_period: None,
        delete_refused: None,
        allow_create_on_update: false,
        allow_unconditional_update: false,
        subresource_metadata: |_| &[],
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lower-cases its name when canonicalized.
    struct Canonical(String);

    impl Strategy for Canonical {
        fn has_canonical_form() -> bool {
            true
        }

        fn canonicalize(&mut self) {
            self.0 = self.0.to_lowercase();
        }
    }

    /// Says it has no canonical form: its `canonicalize` is never called.
    struct Plain(String);

    impl Strategy for Plain {
        fn canonicalize(&mut self) {
            self.0.clear();
        }
    }

    #[test]
    fn only_kinds_with_a_canonical_form_are_canonicalized() {
        let canonicalize = StrategyHooks::of::<Canonical>()
            .canonicalize
            .expect("a hook");
        let mut hub: ErasedHub = Box::new(Canonical("MixedCase".into()));
        canonicalize(&mut hub);
        assert_eq!(hub.downcast_ref::<Canonical>().unwrap().0, "mixedcase");

        assert!(StrategyHooks::of::<Plain>().canonicalize.is_none());
        assert!(StrategyHooks::NONE.canonicalize.is_none());
    }
}
