//! `#[derive(Convert)]`'s real output: every key and every field shape, converted both ways,
//! and onto a base hub that keeps the fields the version does not express.

use kapi::Convert;

/// The hub side.
mod hub {
    #[derive(Clone, Debug, Default, PartialEq)]
    pub(crate) struct Shop {
        pub name: String,
        pub owner: Option<String>,
        pub spec: Spec,
        pub status: Status,
        pub notes: Vec<String>,
    }

    #[derive(Clone, Debug, Default, PartialEq)]
    pub(crate) struct Spec {
        pub r#type: String,
        pub inventory: Inventory,
        pub items: Vec<Item>,
        pub paused: bool,
    }

    #[derive(Clone, Debug, Default, PartialEq)]
    pub(crate) struct Inventory {
        pub capacity: i32,
        pub location: String,
    }

    #[derive(Clone, Debug, Default, PartialEq)]
    pub(crate) struct Item {
        pub sku: String,
        pub count: i32,
    }

    #[derive(Clone, Debug, Default, PartialEq)]
    pub(crate) struct Status {
        pub ready: Option<bool>,
    }
}

/// A version that renames, moves, computes and skips fields.
mod version {
    use kapi::Convert;

    #[derive(Clone, Debug, Default, PartialEq, Convert)]
    #[convert(hub = super::hub::Shop)]
    pub(crate) struct Shop {
        #[convert(rename = "name")]
        pub title: String,
        pub owner: Option<String>,
        pub spec: Spec,
        pub status: Option<Status>,
        pub notes: Vec<String>,
    }

    #[derive(Clone, Debug, Default, PartialEq, Convert)]
    #[convert(hub = "super::hub::Spec")]
    pub(crate) struct Spec {
        #[convert(rename = "type")]
        pub kind: String,
        #[convert(path = "inventory.capacity")]
        pub capacity: i32,
        pub items: Vec<Item>,
        #[convert(with = total)]
        pub total: i32,
        #[convert(skip)]
        pub comment: String,
    }

    /// `total` is the sum of the item counts, written as the first item's count.
    mod total {
        pub(super) fn into_hub(total: i32, hub: &mut super::super::hub::Spec) {
            let rest: i32 = hub.items.iter().skip(1).map(|i| i.count).sum();
            if let Some(first) = hub.items.first_mut() {
                first.count = total - rest;
            }
        }

        pub(super) fn from_hub(hub: &super::super::hub::Spec) -> i32 {
            hub.items.iter().map(|i| i.count).sum()
        }
    }

    #[derive(Clone, Debug, Default, PartialEq, Convert)]
    #[convert(hub = super::hub::Item)]
    pub(crate) struct Item {
        pub sku: String,
    }

    #[derive(Clone, Debug, Default, PartialEq, Convert)]
    #[convert(hub = super::hub::Status)]
    pub(crate) struct Status {
        pub ready: Option<bool>,
    }
}

fn hub() -> hub::Shop {
    hub::Shop {
        name: "corner".into(),
        owner: Some("ann".into()),
        spec: hub::Spec {
            r#type: "books".into(),
            inventory: hub::Inventory {
                capacity: 10,
                location: "cellar".into(),
            },
            items: vec![
                hub::Item {
                    sku: "a".into(),
                    count: 2,
                },
                hub::Item {
                    sku: "b".into(),
                    count: 3,
                },
            ],
            paused: true,
        },
        status: hub::Status { ready: Some(true) },
        notes: vec!["n".into()],
    }
}

#[test]
fn reads_every_key_and_shape() {
    let version = version::Shop::from_hub(&hub());
    let expected = version::Shop {
        title: "corner".into(),
        owner: Some("ann".into()),
        spec: version::Spec {
            kind: "books".into(),
            capacity: 10,
            items: vec![
                version::Item { sku: "a".into() },
                version::Item { sku: "b".into() },
            ],
            total: 5,
            comment: String::new(),
        },
        status: Some(version::Status { ready: Some(true) }),
        notes: vec!["n".into()],
    };
    assert_eq!(version, expected);
}

#[test]
fn reading_then_writing_onto_the_same_hub_loses_nothing() {
    let stored = hub();
    let mut hub = stored.clone();
    version::Shop::from_hub(&stored).into_hub(&mut hub);
    assert_eq!(hub, stored);
}

#[test]
fn writes_only_what_the_version_expresses() {
    let mut version = version::Shop::from_hub(&hub());
    version.title = "renamed".into();
    version.spec.capacity = 20;
    version.spec.total = 9;
    version.spec.comment = "ignored".into();
    version.owner = None;
    version.status = None;
    let mut written = hub();
    version.into_hub(&mut written);

    let mut expected = hub();
    expected.name = "renamed".into();
    expected.spec.inventory.capacity = 20;
    expected.spec.items[0].count = 6;
    expected.owner = None;
    expected.status = hub::Status::default();
    assert_eq!(written, expected);
    // A default status reads back as `None`.
    assert_eq!(version::Shop::from_hub(&written).status, None);
}

#[test]
fn onto_a_default_hub_a_longer_list_grows() {
    let version = version::Shop {
        spec: version::Spec {
            items: vec![version::Item { sku: "x".into() }],
            ..Default::default()
        },
        status: Some(version::Status { ready: None }),
        ..Default::default()
    };
    let mut written = hub::Shop::default();
    version.into_hub(&mut written);
    assert_eq!(
        written.spec.items,
        vec![hub::Item {
            sku: "x".into(),
            count: 0
        }]
    );
    assert_eq!(written.status, hub::Status::default());
}
