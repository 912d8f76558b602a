//! Authorization: whether a user may do what a request asks, as kube-apiserver decides it.
//!
//! `--authorization-mode` names [`Mode`]s, asked in order (kube's union authorizer): the
//! first that allows or denies decides; when none has an opinion the request is denied.
//! [`forbidden`] is the 403 kube answers then, with its exact message. `rbac` (feature
//! `rbac`) is the RBAC authorizer: rules of Roles and ClusterRoles granted by bindings, read from an
//! in-memory index fed by the watch caches. [`delegated`] asks a core cluster
//! (SubjectAccessReviews), as an extension API server does.

pub mod delegated;
#[cfg(feature = "rbac")]
pub mod rbac;
#[cfg(feature = "rbac")]
pub mod reviews;

use std::sync::Arc;

use crate::authn::UserInfo;
use crate::http::RequestInfo;
use kapi_core::error::{ApiError, GroupResource};
#[cfg(feature = "rbac")]
use kapi_kinds::rbac::PolicyRule;
#[cfg(feature = "rbac")]
pub use reviews::RulesFor;

/// What is asked, by whom (kube's `authorizer.Attributes`).
#[derive(Clone, Debug)]
pub struct Attributes<'a> {
    /// The user.
    pub user: &'a UserInfo,
    /// The request.
    pub request: &'a RequestInfo,
}

/// Why a decision was made, for reviews and logs; shared, so that deciding allocates
/// nothing (an RBAC grant's reason is written once, when the index is built).
pub type Reason = Arc<str>;

/// The empty reason.
pub fn no_reason() -> Reason {
    static EMPTY: std::sync::LazyLock<Reason> = std::sync::LazyLock::new(|| Arc::from(""));
    Arc::clone(&EMPTY)
}

/// An authorizer's answer (kube's `authorizer.Decision` and reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed; the reason says by what.
    Allow(Reason),
    /// Denied outright: later modes are not asked.
    Deny(Reason),
    /// Neither; the reason (possibly empty) says what got in the way.
    NoOpinion(Reason),
}

/// One authorization mode.
pub trait Authorizer: Send + Sync {
    /// The decision about `attributes`.
    fn authorize(&self, attributes: &Attributes<'_>) -> Decision;

    /// The rules that apply to `user` in `namespace` (kube's `RuleResolver`), for rules
    /// reviews; a mode that cannot list them says the list is incomplete.
    #[cfg(feature = "rbac")]
    fn rules_for(&self, user: &UserInfo, namespace: &str) -> RulesFor {
        let _ = (user, namespace);
        RulesFor {
            incomplete: true,
            ..RulesFor::default()
        }
    }
}

/// `AlwaysAllow`.
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::Allow(no_reason())
    }

    #[cfg(feature = "rbac")]
    fn rules_for(&self, _: &UserInfo, _: &str) -> RulesFor {
        let all = vec!["*".to_owned()];
        RulesFor {
            rules: vec![
                PolicyRule {
                    verbs: all.clone(),
                    api_groups: all.clone(),
                    resources: all.clone(),
                    ..PolicyRule::default()
                },
                PolicyRule {
                    verbs: all.clone(),
                    non_resource_urls: all,
                    ..PolicyRule::default()
                },
            ],
            ..RulesFor::default()
        }
    }
}

/// `--authorization-always-allow-paths`: non-resource paths anyone may request (kube's
/// path authorizer); a path ending in `*` allows every path it prefixes.
pub struct AlwaysAllowPaths(pub Vec<String>);

impl Authorizer for AlwaysAllowPaths {
    fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let request = attributes.request;
        let allowed = !request.resource_request
            && self.0.iter().any(|path| match path.strip_suffix('*') {
                Some(prefix) => request.path.starts_with(prefix),
                None => request.path == *path,
            });
        match allowed {
            true => Decision::Allow(no_reason()),
            false => Decision::NoOpinion(no_reason()),
        }
    }
}

/// `AlwaysDeny`.
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::NoOpinion(Arc::from("Everything is forbidden."))
    }

    #[cfg(feature = "rbac")]
    fn rules_for(&self, _: &UserInfo, _: &str) -> RulesFor {
        RulesFor::default()
    }
}

/// Where the server's authorization modes are put once they are built, for what needs
/// them but is made before them (the admission policies, in the admission chain the
/// registry takes first).
pub type AuthorizerSlot = Arc<std::sync::OnceLock<Mode>>;

/// The modes of `--authorization-mode`, in order. Cloned by every request that passes
/// the chain: the list is shared.
#[derive(Clone, Default)]
pub struct Mode {
    modes: Arc<Vec<(String, Arc<dyn Authorizer>)>>,
}

impl Mode {
    /// No mode: everything denied.
    pub fn new() -> Mode {
        Mode::default()
    }

    /// Adds a mode named `name` (`RBAC`), asked after those added before.
    #[must_use]
    pub fn with(mut self, name: &str, authorizer: Arc<dyn Authorizer>) -> Mode {
        Arc::make_mut(&mut self.modes).push((name.to_owned(), authorizer));
        self
    }

    /// The names of the modes, in order.
    pub fn names(&self) -> Vec<&str> {
        self.modes.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// Whether the only mode allows everything.
    pub fn allows_everything(&self) -> bool {
        self.names() == ["AlwaysAllow"]
    }

    /// Every mode's rules for `user` in `namespace`, together.
    #[cfg(feature = "rbac")]
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> RulesFor {
        let mut all = RulesFor::default();
        for (_, authorizer) in self.modes.iter() {
            let found = authorizer.rules_for(user, namespace);
            all.rules.extend(found.rules);
            all.incomplete |= found.incomplete;
            all.errors.extend(found.errors);
        }
        all
    }

    /// The union decision: the first mode's allow or deny, else a denial with every
    /// reason given (kube joins them with newlines).
    pub fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let mut reasons = Vec::new();
        for (_, authorizer) in self.modes.iter() {
            match authorizer.authorize(attributes) {
                Decision::NoOpinion(reason) => {
                    if !reason.is_empty() {
                        reasons.push(reason.to_string());
                    }
                }
                decided => return decided,
            }
        }
        match reasons.len() {
            0 => Decision::NoOpinion(no_reason()),
            _ => Decision::NoOpinion(Arc::from(reasons.join("\n"))),
        }
    }
}

/// kube's `responsewriters.Forbidden`: the 403 of a denied request.
pub fn forbidden(attributes: &Attributes<'_>, reason: &str) -> ApiError {
    let request = attributes.request;
    let user = &attributes.user.name;
    let mut message = if !request.resource_request {
        format!(
            "User {user:?} cannot {} path {:?}",
            request.verb, request.path
        )
    } else {
        let mut resource = request.resource.clone();
        if !request.subresource.is_empty() {
            resource = format!("{resource}/{}", request.subresource);
        }
        let scope = if request.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace {:?}", request.namespace)
        };
        format!(
            "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
            request.verb, request.api_group
        )
    };
    if !reason.is_empty() {
        message = format!("{message}: {reason}");
    }
    ApiError::Forbidden {
        resource: GroupResource::new(request.api_group.clone(), request.resource.clone()),
        name: request.name.clone(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str) -> UserInfo {
        UserInfo {
            name: name.to_owned(),
            ..UserInfo::default()
        }
    }

    #[test]
    fn forbidden_messages_are_kubes() {
        let alice = user("alice");
        let cases = [
            (
                "GET",
                "/apis/apps.example.dev/v1/namespaces/team-a/webapps",
                "webapps.apps.example.dev is forbidden: User \"alice\" cannot list resource \"webapps\" in API group \"apps.example.dev\" in the namespace \"team-a\"",
            ),
            (
                "GET",
                "/api/v1/namespaces/default/configmaps/foo",
                "configmaps \"foo\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\"",
            ),
            (
                "PUT",
                "/apis/platform.example.dev/v1/tenants/t/status",
                "tenants.platform.example.dev \"t\" is forbidden: User \"alice\" cannot update resource \"tenants/status\" in API group \"platform.example.dev\" at the cluster scope",
            ),
            (
                "GET",
                "/foo",
                "forbidden: User \"alice\" cannot get path \"/foo\"",
            ),
        ];
        for (method, path, message) in cases {
            let request = RequestInfo::new(&method.parse().unwrap(), path, None);
            let attributes = Attributes {
                user: &alice,
                request: &request,
            };
            let error = forbidden(&attributes, "");
            assert_eq!(error.to_string(), message);
            assert_eq!(error.code(), 403);
        }
    }

    #[test]
    fn the_first_mode_with_an_opinion_decides() {
        let request = RequestInfo::new(&axum::http::Method::GET, "/healthz", None);
        let alice = user("alice");
        let attributes = Attributes {
            user: &alice,
            request: &request,
        };
        let modes = Mode::new()
            .with("AlwaysDeny", Arc::new(AlwaysDeny))
            .with("AlwaysAllow", Arc::new(AlwaysAllow));
        assert_eq!(modes.authorize(&attributes), Decision::Allow(no_reason()));
        let deny = Mode::new().with("AlwaysDeny", Arc::new(AlwaysDeny));
        assert_eq!(
            deny.authorize(&attributes),
            Decision::NoOpinion("Everything is forbidden.".into())
        );
        assert!(matches!(
            Mode::new().authorize(&attributes),
            Decision::NoOpinion(_)
        ));
    }
}
