//! Conversion of a served version to and from its kind's hub type, and the helpers
//! `#[derive(Convert)]` expands to.
//!
//! A version converts *onto* a base hub: [`Convert::into_hub`] overwrites only the hub
//! fields the version expresses and leaves the others as they were in the base. The registry
//! passes the stored object's hub as the base of an update or patch, and the hub's default
//! on create, so a version that cannot express some hub fields never loses them.

/// Conversion of one served version (or a struct nested in one) to and from the
/// corresponding hub type.
///
/// Every version converts through the hub, so any version converts to any other.
/// A kind with one version uses its hub as that version; the blanket identity impl covers
/// it (and every leaf type: `i32`, `String`, `ObjectMeta`, ...), where "overwrite what the
/// version expresses" is "replace".
///
/// Laws, checked for every kind and served version by the generated round-trip property
/// tests (`generated/src/round_trip.rs`, `kapi::testing`):
/// - `V::from_hub(&h)` then `into_hub(&mut h)` leaves `h` unchanged (nothing is lost, and
///   nothing is invented: a hand-written `with` function given the value it reads from a
///   hub must leave that hub alone);
/// - `into_hub` onto a new hub then `from_hub` is the identity on the version;
/// - for the storage version, which expresses every hub field, `from_hub` then `into_hub`
///   onto a new hub is the identity on the hub.
pub trait Convert<Hub>: Sized {
    /// Writes the hub fields this version expresses into `hub`, leaving the others as they
    /// are.
    fn into_hub(self, hub: &mut Hub);
    /// The hub as this version.
    fn from_hub(hub: &Hub) -> Self;
}

impl<T: Clone> Convert<T> for T {
    fn into_hub(self, hub: &mut T) {
        *hub = self;
    }
    fn from_hub(hub: &T) -> T {
        hub.clone()
    }
}

/// Items `#[derive(Convert)]` expands to. Not a public API: may change at any time.
///
/// A version field of type `Option<T>` may map to a hub field `Option<U>` or `U`. Which one
/// is known only to rustc, so the expansion dispatches on the hub field's type by method
/// resolution ("autoref specialization"): [`OptSlot`](__private::OptSlot) by value matches only `Option<U>`
/// hub fields, `&mut OptSlot` (the fallback) any other.
#[doc(hidden)]
pub mod __private {
    use super::Convert;

    /// `Vec<T>` onto `Vec<U>` element by element: the i-th element converts onto the base's
    /// i-th element (a default one past its end), and the list takes the version's length.
    pub fn vec_into_hub<T: Convert<U>, U: Default>(values: Vec<T>, hub: &mut Vec<U>) {
        hub.truncate(values.len());
        for (i, value) in values.into_iter().enumerate() {
            if i == hub.len() {
                hub.push(U::default());
            }
            value.into_hub(&mut hub[i]);
        }
    }

    /// `Vec<U>` as `Vec<T>`.
    pub fn vec_from_hub<T: Convert<U>, U>(hub: &[U]) -> Vec<T> {
        hub.iter().map(T::from_hub).collect()
    }

    /// The hub field an `Option<T>` version field converts onto.
    pub struct OptSlot<'a, H>(pub &'a mut H);

    /// `Option<T>` onto `Option<U>`: `None` clears it, `Some` converts onto its value (or a
    /// default one).
    pub trait OptionIntoOption<T> {
        fn merge_option(self, value: Option<T>);
    }

    impl<T: Convert<U>, U: Default> OptionIntoOption<T> for OptSlot<'_, Option<U>> {
        fn merge_option(self, value: Option<T>) {
            match value {
                None => *self.0 = None,
                Some(value) => value.into_hub(self.0.get_or_insert_with(U::default)),
            }
        }
    }

    /// Leaf types with no `Default` (k8s-openapi's `Time` and `MicroTime`), which
    /// [`OptionIntoOption`] cannot start a hub value of: an `Option` of one converts by
    /// identity, through [`OptionOfLeaf`].
    pub trait Leaf: Clone {}

    impl Leaf for crate::meta::Time {}
    impl Leaf for crate::meta::MicroTime {}

    /// `Option<U>` onto `Option<U>` for a [`Leaf`] `U`: replaced. Chosen by method
    /// resolution over [`OptionIntoOption`], whose impl needs `U: Default`.
    pub trait OptionOfLeaf<T> {
        fn merge_option(self, value: Option<T>);
    }

    impl<U: Leaf> OptionOfLeaf<U> for OptSlot<'_, Option<U>> {
        fn merge_option(self, value: Option<U>) {
            *self.0 = value;
        }
    }

    /// `Option<T>` onto a plain `U`: `None` is `U`'s default.
    pub trait OptionIntoPlain<T> {
        fn merge_option(self, value: Option<T>);
    }

    impl<T: Convert<U>, U: Default> OptionIntoPlain<T> for &mut OptSlot<'_, U> {
        fn merge_option(self, value: Option<T>) {
            match value {
                None => *self.0 = U::default(),
                Some(value) => value.into_hub(self.0),
            }
        }
    }

    /// The hub field an `Option<T>` version field is read from.
    pub struct OptRead<'a, H>(pub &'a H);

    /// `Option<U>` as `Option<T>`.
    pub trait OptionFromOption<T> {
        fn read_option(self) -> Option<T>;
    }

    impl<T: Convert<U>, U> OptionFromOption<T> for OptRead<'_, Option<U>> {
        fn read_option(self) -> Option<T> {
            self.0.as_ref().map(T::from_hub)
        }
    }

    /// A plain `U` as `Option<T>`: `None` when it is `U`'s default.
    pub trait OptionFromPlain<T> {
        fn read_option(self) -> Option<T>;
    }

    impl<T: Convert<U>, U: Default + PartialEq> OptionFromPlain<T> for &OptRead<'_, U> {
        fn read_option(self) -> Option<T> {
            (*self.0 != U::default()).then(|| T::from_hub(self.0))
        }
    }
}
