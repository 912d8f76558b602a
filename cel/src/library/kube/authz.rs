//! kube's authorizer library: admission expressions ask the server's own authorizer
//! whether a user may do something else. `authorizer` (the requesting user) or
//! `authorizer.serviceAccount(namespace, name)` starts a check; `.path("/healthz")` asks
//! about a non-resource path, `.group("apps").resource("deployments")` with optional
//! `.subresource()`, `.namespace()`, `.name()`, `.fieldSelector()` and `.labelSelector()`
//! about a resource; `.check(verb)` asks, and the decision answers `allowed()`, `reason()`,
//! `errored()` and `error()`.
//!
//! The library knows no authorizer: the value bound to `authorizer` carries one
//! ([`Authorize`], which the API server implements over its authorization modes) and the
//! user it asks for, so checks run through whatever the server runs.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use kapi_core::user::UserInfo;

use super::opaque;
use crate::environment::Feature;
use crate::library::{Env, Overload as O, string};
use crate::ty::Type;
use crate::value::{Opaque, Value};

/// `kubernetes.authorization.Authorizer`.
pub const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
/// `kubernetes.authorization.PathCheck`.
pub const PATH_CHECK: &str = "kubernetes.authorization.PathCheck";
/// `kubernetes.authorization.GroupCheck`.
pub const GROUP_CHECK: &str = "kubernetes.authorization.GroupCheck";
/// `kubernetes.authorization.ResourceCheck`.
pub const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
/// `kubernetes.authorization.Decision`.
pub const DECISION: &str = "kubernetes.authorization.Decision";

/// What a check asks (kube's `authorizer.AttributesRecord`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    /// Who.
    pub user: UserInfo,
    /// The verb (`get`, `create`, ...).
    pub verb: String,
    /// A non-resource path (`/healthz`); `None` for a resource check.
    pub path: Option<String>,
    /// The API group.
    pub group: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource.
    pub subresource: String,
    /// The namespace.
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// A field selector the request would carry, as written.
    pub field_selector: Option<String>,
    /// A label selector the request would carry, as written.
    pub label_selector: Option<String>,
}

/// An authorizer's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// Whether it allows.
    pub allowed: bool,
    /// Why, as the authorizer says.
    pub reason: String,
    /// What went wrong while deciding, if anything.
    pub error: Option<String>,
}

/// The server's authorizer, as checks reach it.
pub trait Authorize: Send + Sync {
    /// The decision about `request`.
    fn authorize(&self, request: &Request) -> Decision;
}

/// An authorizer and the user it asks for.
#[derive(Clone)]
pub struct AuthorizerValue {
    authorizer: Arc<dyn Authorize>,
    user: Arc<UserInfo>,
}

impl fmt::Debug for AuthorizerValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "authorizer for {:?}", self.user.name)
    }
}

impl AuthorizerValue {
    /// `authorizer` for `user`.
    pub fn value(authorizer: Arc<dyn Authorize>, user: UserInfo) -> Value {
        Value::Opaque(Arc::new(AuthorizerValue {
            authorizer,
            user: Arc::new(user),
        }))
    }

    /// `authorizer.requestResource`: a resource check of the request's own resource.
    pub fn request_resource(
        authorizer: Arc<dyn Authorize>,
        user: UserInfo,
        target: &Request,
    ) -> Value {
        Value::Opaque(Arc::new(ResourceCheck {
            authz: AuthorizerValue {
                authorizer,
                user: Arc::new(user),
            },
            group: target.group.clone(),
            resource: target.resource.clone(),
            subresource: target.subresource.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            field_selector: None,
            label_selector: None,
        }))
    }
}

/// `authorizer.path(...)`.
#[derive(Clone, Debug)]
struct PathCheck {
    authz: AuthorizerValue,
    path: String,
}

/// `authorizer.group(...)`.
#[derive(Clone, Debug)]
struct GroupCheck {
    authz: AuthorizerValue,
    group: String,
}

/// `....resource(...)` and what refines it.
#[derive(Clone, Debug)]
struct ResourceCheck {
    authz: AuthorizerValue,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: Option<String>,
    label_selector: Option<String>,
}

/// A decision, as CEL sees it.
#[derive(Clone, Debug)]
struct DecisionValue(Decision);

macro_rules! opaque_type {
    ($ty:ty, $name:expr) => {
        impl Opaque for $ty {
            fn type_name(&self) -> &'static str {
                $name
            }
            // kube's values of these types are never equal to anything.
            fn equals(&self, _: &dyn Opaque) -> bool {
                false
            }
            fn as_any(&self) -> &dyn Any {
                self
            }
        }
    };
}

opaque_type!(AuthorizerValue, AUTHORIZER);
opaque_type!(PathCheck, PATH_CHECK);
opaque_type!(GroupCheck, GROUP_CHECK);
opaque_type!(ResourceCheck, RESOURCE_CHECK);
opaque_type!(DecisionValue, DECISION);

fn value(v: impl Opaque) -> Value {
    Value::Opaque(Arc::new(v))
}

/// The cost of a check, estimated and at run time: a fixed, large figure (a check runs the
/// server's authorizer).
pub const CHECK_COST: u64 = 350_000;

impl ResourceCheck {
    fn with(&self, change: impl FnOnce(&mut ResourceCheck)) -> Value {
        let mut next = self.clone();
        change(&mut next);
        value(next)
    }

    fn check(&self, verb: &str) -> Decision {
        let request = Request {
            user: (*self.authz.user).clone(),
            verb: verb.to_owned(),
            path: None,
            group: self.group.clone(),
            resource: self.resource.clone(),
            subresource: self.subresource.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            field_selector: self.field_selector.clone(),
            label_selector: self.label_selector.clone(),
        };
        self.authz.authorizer.authorize(&request)
    }
}

/// The service account `namespace`/`name` as a user, as kube's authenticator makes it.
fn service_account(namespace: &str, name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        groups: vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        ..UserInfo::default()
    }
}

/// Adds the library to `env` (`selectors`: `fieldSelector()` and `labelSelector()`, kube
/// 1.31's addition).
pub fn install(env: &mut Env) {
    let selectors = env.has(Feature::AuthzSelectors);
    for name in [
        AUTHORIZER,
        PATH_CHECK,
        GROUP_CHECK,
        RESOURCE_CHECK,
        DECISION,
    ] {
        env.variable(name, Type::of_type(Type::opaque(name)));
    }
    env.add(
        "path",
        [O::new(
            "authorizer_path",
            "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.PathCheck",
            |a| {
                let authz = opaque::<AuthorizerValue>(a, 0)?.clone();
                Ok(value(PathCheck {
                    authz,
                    path: string(a, 1)?.to_string(),
                }))
            },
        )],
    );
    env.add(
        "group",
        [O::new(
            "authorizer_group",
            "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.GroupCheck",
            |a| {
                let authz = opaque::<AuthorizerValue>(a, 0)?.clone();
                Ok(value(GroupCheck {
                    authz,
                    group: string(a, 1)?.to_string(),
                }))
            },
        )],
    );
    env.add(
        "serviceAccount",
        [O::new(
            "authorizer_serviceaccount",
            "kubernetes.authorization.Authorizer.(string, string) -> kubernetes.authorization.Authorizer",
            |a| {
                let authz = opaque::<AuthorizerValue>(a, 0)?;
                Ok(value(AuthorizerValue {
                    authorizer: Arc::clone(&authz.authorizer),
                    user: Arc::new(service_account(string(a, 1)?, string(a, 2)?)),
                }))
            },
        )],
    );
    env.add(
        "resource",
        [O::new(
            "groupcheck_resource",
            "kubernetes.authorization.GroupCheck.(string) -> kubernetes.authorization.ResourceCheck",
            |a| {
                let group = opaque::<GroupCheck>(a, 0)?;
                Ok(value(ResourceCheck {
                    authz: group.authz.clone(),
                    group: group.group.clone(),
                    resource: string(a, 1)?.to_string(),
                    subresource: String::new(),
                    namespace: String::new(),
                    name: String::new(),
                    field_selector: None,
                    label_selector: None,
                }))
            },
        )],
    );
    let refine: [(&str, &'static str, crate::library::Implementation); 3] = [
        ("subresource", "resourcecheck_subresource", |a| {
            let text = string(a, 1)?.to_string();
            Ok(opaque::<ResourceCheck>(a, 0)?.with(|c| c.subresource = text))
        }),
        ("namespace", "resourcecheck_namespace", |a| {
            let text = string(a, 1)?.to_string();
            Ok(opaque::<ResourceCheck>(a, 0)?.with(|c| c.namespace = text))
        }),
        ("name", "resourcecheck_name", |a| {
            let text = string(a, 1)?.to_string();
            Ok(opaque::<ResourceCheck>(a, 0)?.with(|c| c.name = text))
        }),
    ];
    for (name, id, implementation) in refine {
        env.add(
            name,
            [O::new(
                id,
                "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
                implementation,
            )],
        );
    }
    if selectors {
        env.add(
            "fieldSelector",
            [O::new(
                "authorizer_fieldselector",
                "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
                |a| {
                    let text = string(a, 1)?.to_string();
                    Ok(opaque::<ResourceCheck>(a, 0)?.with(|c| c.field_selector = Some(text)))
                },
            )],
        );
        env.add(
            "labelSelector",
            [O::new(
                "authorizer_labelselector",
                "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
                |a| {
                    let text = string(a, 1)?.to_string();
                    Ok(opaque::<ResourceCheck>(a, 0)?.with(|c| c.label_selector = Some(text)))
                },
            )],
        );
    }
    env.add(
        "check",
        [
            O::new(
                "pathcheck_check",
                "kubernetes.authorization.PathCheck.(string) -> kubernetes.authorization.Decision",
                |a| {
                    let check = opaque::<PathCheck>(a, 0)?;
                    let request = Request {
                        user: (*check.authz.user).clone(),
                        verb: string(a, 1)?.to_string(),
                        path: Some(check.path.clone()),
                        ..Request::default()
                    };
                    Ok(value(DecisionValue(
                        check.authz.authorizer.authorize(&request),
                    )))
                },
            )
            .cost(|_, _| CHECK_COST),
            O::new(
                "resourcecheck_check",
                "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.Decision",
                |a| {
                    let check = opaque::<ResourceCheck>(a, 0)?;
                    Ok(value(DecisionValue(check.check(string(a, 1)?))))
                },
            )
            .cost(|_, _| CHECK_COST),
        ],
    );
    env.add(
        "allowed",
        [O::new(
            "decision_allowed",
            "kubernetes.authorization.Decision.() -> bool",
            |a| Ok(Value::Bool(opaque::<DecisionValue>(a, 0)?.0.allowed)),
        )],
    );
    env.add(
        "reason",
        [O::new(
            "decision_reason",
            "kubernetes.authorization.Decision.() -> string",
            |a| {
                Ok(Value::string(
                    opaque::<DecisionValue>(a, 0)?.0.reason.as_str(),
                ))
            },
        )],
    );
    env.add(
        "errored",
        [O::new(
            "decision_errored",
            "kubernetes.authorization.Decision.() -> bool",
            |a| {
                Ok(Value::Bool(
                    opaque::<DecisionValue>(a, 0)?.0.error.is_some(),
                ))
            },
        )],
    );
    env.add(
        "error",
        [O::new(
            "decision_error",
            "kubernetes.authorization.Decision.() -> string",
            |a| {
                let decision = &opaque::<DecisionValue>(a, 0)?.0;
                Ok(Value::string(decision.error.as_deref().unwrap_or("")))
            },
        )],
    );
}
