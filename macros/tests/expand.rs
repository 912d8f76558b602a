//! The derive's real output: two small kinds are derived here and their `INFO` is checked
//! value by value, so the expansion, not just the route builder, is what is tested.

// The fixtures declare kinds as users do, with `pub` items, in this file's private modules.
#![allow(unreachable_pub)]

use kapi::Resource;
use kapi::api::{Action, KindInfo, Method, Scope, VersionInfo};

/// A namespaced kind with two versions, a status and a scale subresource.
mod shop {
    use kapi::Resource;
    use kapi::api::{ProtoField, ProtoKind, ProtoMessage};
    use kapi::meta::ObjectMeta;

    /// The hub.
    #[derive(Clone, Default, Resource)]
    #[resource(
        group = "shop.example.dev",
        namespaced,
        short_name = "ord",
        short_name = "o",
        category = "all",
        category = "shop",
        status,
        scale(
            spec_replicas_path = ".spec.replicas",
            status_replicas_path = ".status.replicas",
            label_selector_path = ".status.selector"
        ),
        printer_column(name = "First Item", type = "string", json_path = ".spec.items[0].sku", description = "SKU"),
        printer_column(name = "Kind", type = "string", json_path = ".spec.type"),
        printer_column(name = "Replicas", type = "integer", json_path = ".spec.replicas", priority = 1, format = "int32"),
        printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
        selectable_field = ".spec.customerName",
        selectable_field(label = "customer", path = ".spec.customerName"),
        version(name = "v1", ty = v1::Order, deprecated),
        version(name = "v2", ty = "crate::shop::v2::Order", storage),
        protobuf = ORDER_PROTO
    )]
    pub(crate) struct Order {
        pub metadata: ObjectMeta,
        pub spec: OrderSpec,
        pub status: OrderStatus,
    }

    /// The protobuf shape the kind's `protobuf` names.
    pub(crate) static ORDER_PROTO: ProtoMessage = ProtoMessage {
        name: "dev.example.shop.v2.Order",
        fields: &[ProtoField::new(
            1,
            "metadata",
            ProtoKind::Message(&kapi::meta::OBJECT_META_PROTO),
        )],
    };

    #[derive(Clone, Default)]
    pub(crate) struct OrderSpec {
        pub replicas: i32,
        pub customer_name: String,
        pub items: Vec<Item>,
        pub r#type: String,
    }

    #[derive(Clone, Default)]
    pub(crate) struct Item {
        pub sku: String,
    }

    #[derive(Clone, Default)]
    pub(crate) struct OrderStatus {
        pub replicas: i32,
        pub selector: String,
    }

    /// Both versions only carry metadata: conversion is not what is tested here.
    macro_rules! version {
        ($name:ident) => {
            pub mod $name {
                use kapi::Convert;
                use kapi::meta::ObjectMeta;

                #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
                pub struct Order {
                    pub metadata: ObjectMeta,
                }

                impl Convert<super::Order> for Order {
                    fn into_hub(self, hub: &mut super::Order) {
                        hub.metadata = self.metadata;
                    }
                    fn from_hub(hub: &super::Order) -> Self {
                        Order {
                            metadata: hub.metadata.clone(),
                        }
                    }
                }
            }
        };
    }
    version!(v1);
    version!(v2);
}

/// A cluster-scoped kind that is its own only version, with names left to their defaults.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource)]
#[resource(group = "", version(name = "v1", storage))]
pub struct Policy {
    /// Standard object metadata.
    pub metadata: kapi::meta::ObjectMeta,
}

/// Another group's view of [`Policy`] objects, stored with them.
#[derive(Resource)]
#[resource(
    group = "audit.example.dev",
    kind = "Policy",
    stored_with = crate::Policy,
    selectable_field(label = "owner", path = ".metadata.name"),
    version(name = "v1")
)]
pub struct AuditPolicy;

#[test]
fn kind_stored_with_another() {
    let info = AuditPolicy::INFO;
    let stored_with = info.stored_with.expect("stored with Policy");
    assert_eq!((stored_with.group, stored_with.kind), ("", "Policy"));
    assert_eq!(info.storage_kind().rust_type, "expand::Policy");
    assert_eq!(info.rust_type, "expand::AuditPolicy");
    assert_eq!(info.hub_rust_type(), "expand::Policy");
    let [v1] = info.versions else {
        panic!("one version expected");
    };
    assert!(v1.served && !v1.storage, "stored in Policy's version");
    assert_eq!(
        v1.rust_type, "expand::Policy",
        "`ty` defaults to the shared hub"
    );
    assert!(info.storage_version().storage);
    assert_eq!(info.storage_version().rust_type, "expand::Policy");
    assert_eq!(info.scope, Scope::Cluster);
}

/// Routes as lines of `METHOD path action [subresource] operationId`.
fn routes(version: &VersionInfo) -> String {
    version
        .routes
        .iter()
        .map(|r| {
            let sub = r.subresource.map(|s| format!("[{s}] ")).unwrap_or_default();
            format!(
                "{} {} {} {sub}{}\n",
                r.method.as_str(),
                r.path,
                r.action.as_str(),
                r.operation_id
            )
        })
        .collect()
}

fn lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn namespaced_kind() {
    let info: &KindInfo = shop::Order::INFO;
    assert_eq!(info.group, "shop.example.dev");
    assert_eq!(info.kind, "Order");
    assert_eq!(info.plural, "orders");
    assert_eq!(info.singular, "order");
    assert_eq!(info.scope, Scope::Namespaced);
    assert_eq!(info.short_names, ["ord", "o"]);
    assert_eq!(info.categories, ["all", "shop"]);
    let fields: Vec<_> = (info.selectable_fields.iter())
        .map(|f| (f.label, f.path))
        .collect();
    assert_eq!(
        fields,
        [
            ("spec.customerName", ".spec.customerName"),
            ("customer", ".spec.customerName")
        ]
    );
    assert!(info.stored_with.is_none());
    assert_eq!(info.rust_type, "expand::shop::Order");
    assert_eq!(info.qualified_resource(), "orders.shop.example.dev");
    assert!(std::ptr::eq(
        info.versions[0].protobuf.unwrap(),
        &shop::ORDER_PROTO
    ));

    assert!(info.subresources.status);
    let scale = info.subresources.scale.as_ref().expect("scale subresource");
    assert_eq!(scale.spec_replicas_path, ".spec.replicas");
    assert_eq!(scale.status_replicas_path, ".status.replicas");
    assert_eq!(scale.label_selector_path, Some(".status.selector"));

    let columns: Vec<_> = (info.printer_columns.iter())
        .map(|c| {
            (
                c.name,
                c.column_type,
                c.json_path,
                c.priority,
                c.format,
                c.description,
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("First Item", "string", ".spec.items[0].sku", 0, "", "SKU"),
            ("Kind", "string", ".spec.type", 0, "", ""),
            ("Replicas", "integer", ".spec.replicas", 1, "int32", ""),
            ("Age", "date", ".metadata.creationTimestamp", 0, "", ""),
        ]
    );

    let [v1, v2] = info.versions else {
        panic!("two versions expected, got {}", info.versions.len());
    };
    assert_eq!(
        (v1.name, v1.served, v1.storage, v1.deprecated),
        ("v1", true, false, true)
    );
    assert_eq!(v1.deprecation_warning, None);
    assert_eq!(v1.rust_type, "expand::shop::v1::Order");
    assert_eq!(
        (v2.name, v2.served, v2.storage, v2.deprecated),
        ("v2", true, true, false)
    );
    assert_eq!(v2.rust_type, "expand::shop::v2::Order");
    assert_eq!(info.storage_version().name, "v2");

    // `schema` registers the version's own type.
    let mut generator = schemars::SchemaGenerator::default();
    let kapi::api::VersionSchema::Type(schema) = v2.schema else {
        panic!("a derived version's schema is its type's");
    };
    let schema = schema(&mut generator);
    assert_eq!(
        schema.get("$ref").and_then(|r| r.as_str()),
        Some("#/$defs/Order")
    );
    assert!(generator.definitions().contains_key("Order"));

    let p = "/apis/shop.example.dev/v2";
    let expected = lines(&format!(
        "
        GET {p}/namespaces/{{namespace}}/orders list listNamespacedOrder
        POST {p}/namespaces/{{namespace}}/orders post createNamespacedOrder
        DELETE {p}/namespaces/{{namespace}}/orders deletecollection deletecollectionNamespacedOrder
        GET {p}/namespaces/{{namespace}}/orders/{{name}} get readNamespacedOrder
        PUT {p}/namespaces/{{namespace}}/orders/{{name}} put replaceNamespacedOrder
        PATCH {p}/namespaces/{{namespace}}/orders/{{name}} patch patchNamespacedOrder
        DELETE {p}/namespaces/{{namespace}}/orders/{{name}} delete deleteNamespacedOrder
        GET {p}/orders list listOrderForAllNamespaces
        GET {p}/watch/namespaces/{{namespace}}/orders watchlist watchNamespacedOrderList
        GET {p}/watch/namespaces/{{namespace}}/orders/{{name}} watch watchNamespacedOrder
        GET {p}/watch/orders watchlist watchOrderListForAllNamespaces
        GET {p}/namespaces/{{namespace}}/orders/{{name}}/status get [status] readNamespacedOrderStatus
        PUT {p}/namespaces/{{namespace}}/orders/{{name}}/status put [status] replaceNamespacedOrderStatus
        PATCH {p}/namespaces/{{namespace}}/orders/{{name}}/status patch [status] patchNamespacedOrderStatus
        GET {p}/namespaces/{{namespace}}/orders/{{name}}/scale get [scale] readNamespacedOrderScale
        PUT {p}/namespaces/{{namespace}}/orders/{{name}}/scale put [scale] replaceNamespacedOrderScale
        PATCH {p}/namespaces/{{namespace}}/orders/{{name}}/scale patch [scale] patchNamespacedOrderScale
        "
    ));
    assert_eq!(routes(v2), expected);
    // Same routes in v1, under its own prefix.
    assert_eq!(routes(v1), expected.replace("/v2/", "/v1/"));

    // The route flags agree with the paths, and every verb is one discovery knows.
    let verbs: Vec<_> = v2
        .routes
        .iter()
        .filter(|r| r.subresource.is_none())
        .map(|r| r.action.verb())
        .collect();
    assert_eq!(
        verbs,
        [
            "list",
            "create",
            "deletecollection",
            "get",
            "update",
            "patch",
            "delete",
            "list",
            "watch",
            "watch",
            "watch"
        ]
    );
    let all_namespaces = v2.routes.iter().filter(|r| !r.is_namespaced()).count();
    assert_eq!(all_namespaces, 2);
    assert!(
        v2.routes
            .iter()
            .filter(|r| r.subresource.is_some())
            .all(|r| r.is_object())
    );
    let watch = v2
        .routes
        .iter()
        .find(|r| r.action == Action::Watch)
        .expect("a watch route");
    assert_eq!(watch.method, Method::Get);
}

#[test]
fn cluster_kind_with_defaults() {
    let info = Policy::INFO;
    assert_eq!(info.group, "");
    assert!(info.is_core());
    assert_eq!(info.kind, "Policy");
    assert_eq!(info.plural, "policies");
    assert_eq!(info.singular, "policy");
    assert_eq!(info.scope, Scope::Cluster);
    assert!(info.short_names.is_empty() && info.categories.is_empty());
    assert!(!info.subresources.status && info.subresources.scale.is_none());
    assert!(info.printer_columns.is_empty() && info.selectable_fields.is_empty());
    assert_eq!(info.rust_type, "expand::Policy");
    assert!(info.versions.iter().all(|v| v.protobuf.is_none()));

    let [v1] = info.versions else {
        panic!("one version expected");
    };
    assert!(v1.served && v1.storage && !v1.deprecated);
    assert_eq!(v1.rust_type, info.rust_type, "the hub is its own version");
    assert_eq!(
        routes(v1),
        lines(
            "
            GET /api/v1/policies list listPolicy
            POST /api/v1/policies post createPolicy
            DELETE /api/v1/policies deletecollection deletecollectionPolicy
            GET /api/v1/policies/{name} get readPolicy
            PUT /api/v1/policies/{name} put replacePolicy
            PATCH /api/v1/policies/{name} patch patchPolicy
            DELETE /api/v1/policies/{name} delete deletePolicy
            GET /api/v1/watch/policies watchlist watchPolicyList
            GET /api/v1/watch/policies/{name} watch watchPolicy
            "
        )
    );
}

/// `#[resource(crate = "...")]` and `#[convert(crate = "...")]`: a crate that reaches kapi's
/// items by another path (here kapi-core, which the facade re-exports; `kapi-kinds` declares
/// Kubernetes' kinds so). No `kapi` path is named in the module.
mod renamed {
    use kapi_core::meta::ObjectMeta;
    use kapi_macros::{Convert, Resource};

    /// A hub reached through `::kapi_core`.
    #[derive(
        Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Resource,
    )]
    #[resource(crate = "::kapi_core", group = "renamed.example.dev", version(name = "v1", ty = v1::Gadget, storage))]
    pub(crate) struct Gadget {
        pub metadata: ObjectMeta,
        pub size: i32,
    }

    pub(crate) mod v1 {
        use super::{Convert, ObjectMeta};

        /// A version converting through the same path.
        #[derive(
            Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Convert,
        )]
        #[convert(crate = "::kapi_core", hub = super::Gadget)]
        pub(crate) struct Gadget {
            pub metadata: ObjectMeta,
            pub size: i32,
        }
    }
}

#[test]
fn a_kind_names_kapi_by_the_path_its_attribute_gives() {
    let info = <renamed::Gadget as kapi_core::Resource>::INFO;
    assert_eq!(
        (info.group, info.kind, info.plural),
        ("renamed.example.dev", "Gadget", "gadgets")
    );
    let mut hub = renamed::Gadget::default();
    kapi_core::Convert::into_hub(
        renamed::v1::Gadget {
            size: 3,
            ..Default::default()
        },
        &mut hub,
    );
    assert_eq!(hub.size, 3);
}
