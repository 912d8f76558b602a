//! Impersonation (kube's `WithImpersonation`): `Impersonate-User`, `Impersonate-Group`
//! (repeatable), `Impersonate-Uid` and `Impersonate-Extra-<key>` make the request act as
//! another user, once the authorizer allows the real user the `impersonate` verb on each:
//! `users` (or the `serviceaccounts` object of a service account's name) and `groups` in
//! the core group, `uids` and `userextras/<key>` in `authentication.k8s.io`. A denial is
//! kube's 403, about the first thing refused; groups, a uid or extras without a user are
//! a 400. The impersonated user gets `system:authenticated` (or, for
//! `system:anonymous`, `system:unauthenticated`) as kube adds it; the headers are removed.

use axum::extract::Request;
use axum::http::HeaderMap;
use axum::response::Response;

use super::RequestInfo;
use crate::authn::{ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, UserInfo};
use crate::authz::{self, Attributes, Decision, Mode};
use crate::http::ErrorResponse as _;
use kapi_core::error::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The user a request acts as, when it impersonates one (kube's `user.DefaultInfo` of the
/// impersonation), with the real user kept for audit.
#[derive(Clone, Debug)]
pub struct Impersonator(pub UserInfo);

/// Applies `request`'s impersonation headers, if any.
pub async fn impersonate(modes: &Mode, mut request: Request, next: impl super::Next) -> Response {
    let headers = request.headers();
    let wanted = match requested(headers) {
        Ok(Some(wanted)) => wanted,
        Ok(None) => return next.run(request).await,
        Err(error) => return error.into_response(),
    };
    let Some(real) = request.extensions().get::<UserInfo>().cloned() else {
        return ApiError::Internal("impersonation before authentication".into()).into_response();
    };
    for check in checks(&wanted) {
        let attributes = Attributes {
            user: &real,
            request: &check,
        };
        match modes.authorize(&attributes) {
            Decision::Allow(_) => {}
            Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                return authz::forbidden(&attributes, &reason).into_response();
            }
        }
    }
    let acting = acting_user(wanted);
    let headers = request.headers_mut();
    let names: Vec<_> = (headers.keys())
        .filter(|name| name.as_str().starts_with("impersonate-"))
        .cloned()
        .collect();
    for name in names {
        headers.remove(name);
    }
    if let Some(notes) = request.extensions().get::<super::audit::AuditNotes>() {
        notes.impersonated(&acting);
    }
    request.extensions_mut().insert(Impersonator(real));
    request.extensions_mut().insert(acting);
    next.run(request).await
}

/// The user the headers ask for; `None` without impersonation headers.
fn requested(headers: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
    let values = |name: &str| -> Vec<String> {
        (headers.get_all(name).iter())
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    };
    let mut wanted = UserInfo {
        name: values(USER).into_iter().next().unwrap_or_default(),
        uid: values(UID).into_iter().next().unwrap_or_default(),
        groups: values(GROUP),
        ..UserInfo::default()
    };
    for name in headers.keys() {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            // kube unescapes the key (`%2F` for `/`), as HTTP header names cannot hold it.
            let key = form_urlencoded::parse(format!("k={key}").as_bytes())
                .next()
                .map_or_else(|| key.to_owned(), |(_, k)| k.into_owned());
            wanted.extra.insert(key, values(name.as_str()));
        }
    }
    let others = !wanted.groups.is_empty() || !wanted.uid.is_empty() || !wanted.extra.is_empty();
    if wanted.name.is_empty() {
        if others {
            return Err(ApiError::BadRequest(
                "impersonating user info: requested groups, uid or extra without impersonating a user"
                    .into(),
            ));
        }
        return Ok(None);
    }
    Ok(Some(wanted))
}

/// The authorization questions of an impersonation, in kube's order: the user, each
/// group, each extra value, the uid.
fn checks(wanted: &UserInfo) -> Vec<RequestInfo> {
    let ask = |group: &str, resource: &str, namespace: &str, name: &str| RequestInfo {
        resource_request: true,
        verb: "impersonate".to_owned(),
        api_group: group.to_owned(),
        namespace: namespace.to_owned(),
        resource: resource.to_owned(),
        name: name.to_owned(),
        ..RequestInfo::default()
    };
    let mut checks = Vec::new();
    match service_account(&wanted.name) {
        Some((namespace, name)) => checks.push(ask("", "serviceaccounts", namespace, name)),
        None => checks.push(ask("", "users", "", &wanted.name)),
    }
    for group in &wanted.groups {
        checks.push(ask("", "groups", "", group));
    }
    for (key, values) in &wanted.extra {
        for value in values {
            let mut check = ask("authentication.k8s.io", "userextras", "", value);
            check.subresource = key.clone();
            checks.push(check);
        }
    }
    if !wanted.uid.is_empty() {
        checks.push(ask("authentication.k8s.io", "uids", "", &wanted.uid));
    }
    checks
}

/// `system:serviceaccount:<namespace>:<name>`.
fn service_account(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// The impersonated user with the groups kube adds.
fn acting_user(mut wanted: UserInfo) -> UserInfo {
    if let Some((namespace, _)) = service_account(&wanted.name) {
        let namespace_group = format!("system:serviceaccounts:{namespace}");
        for group in ["system:serviceaccounts", namespace_group.as_str()] {
            if !wanted.in_group(group) {
                wanted.groups.push(group.to_owned());
            }
        }
    }
    if wanted.name == ANONYMOUS {
        if !wanted.in_group(UNAUTHENTICATED) {
            wanted.groups.push(UNAUTHENTICATED.to_owned());
        }
    } else if !wanted.in_group(AUTHENTICATED) && !wanted.in_group(UNAUTHENTICATED) {
        wanted.groups.push(AUTHENTICATED.to_owned());
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_headers_and_adds_kubes_groups() {
        let mut headers = HeaderMap::new();
        assert!(requested(&headers).unwrap().is_none());
        headers.append(GROUP, "devs".parse().unwrap());
        assert_eq!(requested(&headers).unwrap_err().code(), 400);
        headers.append(USER, "alice".parse().unwrap());
        headers.append(GROUP, "qa".parse().unwrap());
        headers.append("impersonate-extra-scopes%2Fa", "x".parse().unwrap());
        let wanted = requested(&headers).unwrap().unwrap();
        assert_eq!(wanted.groups, ["devs", "qa"]);
        assert_eq!(wanted.extra["scopes/a"], ["x"]);
        let checks: Vec<_> = (checks(&wanted).into_iter())
            .map(|c| {
                format!(
                    "{}/{}/{}/{}",
                    c.api_group, c.resource, c.subresource, c.name
                )
            })
            .collect();
        assert_eq!(
            checks,
            [
                "/users//alice",
                "/groups//devs",
                "/groups//qa",
                "authentication.k8s.io/userextras/scopes/a/x"
            ]
        );
        assert_eq!(acting_user(wanted).groups, ["devs", "qa", AUTHENTICATED]);

        let sa = acting_user(UserInfo {
            name: "system:serviceaccount:ns:robot".into(),
            ..UserInfo::default()
        });
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                AUTHENTICATED
            ]
        );
        let anonymous = acting_user(UserInfo {
            name: ANONYMOUS.into(),
            ..UserInfo::default()
        });
        assert_eq!(anonymous.groups, [UNAUTHENTICATED]);
    }
}
