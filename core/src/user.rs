//! Who a request is from, as authentication concludes and every layer below reads it
//! (admission attributes, reviews, field managers' defaults): kube's
//! `k8s.io/apiserver/pkg/authentication/user`.

use std::collections::BTreeMap;

/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user of anonymous requests.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group kube's bootstrap policy makes cluster administrators.
pub const MASTERS: &str = "system:masters";

/// Who a request is from (kube's `user.Info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// `alice`, `system:anonymous`.
    pub name: String,
    /// A unique id, when the method knows one.
    pub uid: String,
    /// `devs`, `system:authenticated`.
    pub groups: Vec<String>,
    /// Other attributes (`scopes`, impersonation extras).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The anonymous user.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS.to_owned(),
            groups: vec![UNAUTHENTICATED.to_owned()],
            ..UserInfo::default()
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}
