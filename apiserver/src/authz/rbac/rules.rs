//! Whether one RBAC rule allows a request (kube's `rbac.RuleAllows` and its matchers).

use crate::http::RequestInfo;
use kapi_kinds::rbac::PolicyRule;

const ALL: &str = "*";

/// Whether `rule` allows `request`.
pub fn allows(rule: &PolicyRule, request: &RequestInfo) -> bool {
    if !verb_matches(rule, &request.verb) {
        return false;
    }
    if !request.resource_request {
        return non_resource_url_matches(rule, &request.path);
    }
    api_group_matches(rule, &request.api_group)
        && resource_matches(rule, &request.resource, &request.subresource)
        && resource_name_matches(rule, &request.name)
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == ALL || g == group)
}

/// `*`, the exact `resource[/subresource]`, or `*/subresource` (compared in parts: a
/// decision allocates nothing).
fn resource_matches(rule: &PolicyRule, resource: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        if r == ALL {
            return true;
        }
        if subresource.is_empty() {
            return r == resource;
        }
        let (head, tail) = r.split_once('/').unwrap_or((r, ""));
        tail == subresource && (head == resource || head == ALL)
    })
}

/// No names: every object; otherwise only those named.
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

/// `*`, the exact path, or a prefix ending in `*` (`/apis/*`).
fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|url| {
        url == ALL
            || url == path
            || url
                .strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
    })
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        PolicyRule {
            verbs: owned(verbs),
            api_groups: owned(groups),
            resources: owned(resources),
            resource_names: owned(names),
            non_resource_urls: Vec::new(),
        }
    }

    fn request(method: Method, path: &str) -> RequestInfo {
        RequestInfo::new(&method, path, None)
    }

    #[test]
    fn resource_rules_match_as_kubes() {
        let webapps = "/apis/apps.example.dev/v1/namespaces/a/webapps";
        let list = request(Method::GET, webapps);
        let status = request(Method::PUT, &format!("{webapps}/w/status"));
        let get_w = request(Method::GET, &format!("{webapps}/w"));
        let g = ["apps.example.dev"];

        assert!(allows(&rule(&["list"], &g, &["webapps"], &[]), &list));
        assert!(allows(&rule(&["*"], &["*"], &["*"], &[]), &status));
        assert!(!allows(&rule(&["get"], &g, &["webapps"], &[]), &list));
        assert!(!allows(&rule(&["list"], &[""], &["webapps"], &[]), &list));
        assert!(!allows(&rule(&["update"], &g, &["webapps"], &[]), &status));
        assert!(allows(
            &rule(&["update"], &g, &["webapps/status"], &[]),
            &status
        ));
        assert!(allows(&rule(&["update"], &g, &["*/status"], &[]), &status));
        assert!(!allows(&rule(&["update"], &g, &["*/scale"], &[]), &status));
        assert!(allows(&rule(&["get"], &g, &["webapps"], &["w"]), &get_w));
        assert!(!allows(&rule(&["get"], &g, &["webapps"], &["v"]), &get_w));
        // A list is not of one name, so a rule limited to names does not allow it.
        assert!(!allows(&rule(&["list"], &g, &["webapps"], &["w"]), &list));
    }

    #[test]
    fn non_resource_rules_match_paths_and_prefixes() {
        let mut urls = rule(&["get"], &[], &[], &[]);
        urls.non_resource_urls = vec!["/healthz".into(), "/apis/*".into()];
        assert!(allows(&urls, &request(Method::GET, "/healthz")));
        assert!(allows(
            &urls,
            &request(Method::GET, "/apis/apps.example.dev")
        ));
        assert!(allows(&urls, &request(Method::GET, "/apis/")));
        assert!(!allows(&urls, &request(Method::GET, "/apis")));
        assert!(!allows(&urls, &request(Method::POST, "/healthz")));
        assert!(!allows(&urls, &request(Method::GET, "/version")));
        // Resource rules never match non-resource requests, nor URL rules resources.
        let all = rule(&["*"], &["*"], &["*"], &[]);
        assert!(!allows(&all, &request(Method::GET, "/healthz")));
        assert!(!allows(&urls, &request(Method::GET, "/api/v1/namespaces")));
    }
}
