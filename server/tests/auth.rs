//! Authentication and RBAC authorization end to end: a secure `kapi-server` (HTTPS, a
//! client CA, a token file, `--authorization-mode RBAC`) driven by kubectl 1.32 and 1.20 as
//! different users, and by raw HTTPS where kubectl hides the answer.
//!
//! Bindings take effect once the RBAC index has seen them (it follows the watch caches),
//! so a test that has just bound a role waits, with a deadline, for the access to come.

use crate::support;

use std::time::Duration;

use support::pki::{ALICE_TOKEN, BOB_TOKEN, Pki};
use support::{Backend, Kubectl, Server, Version, for_both_versions, manifest, wait_for};

for_both_versions! {
    users_are_authenticated_and_authorized => kubectl_1_32_users_are_authenticated_and_authorized,
        kubectl_1_20_users_are_authenticated_and_authorized;
    auth_can_i => kubectl_1_32_auth_can_i, kubectl_1_20_auth_can_i;
    no_one_grants_what_they_do_not_hold => kubectl_1_32_no_one_grants_what_they_do_not_hold,
        kubectl_1_20_no_one_grants_what_they_do_not_hold;
    development_servers_ignore_credentials =>
        kubectl_1_32_development_servers_ignore_credentials,
        kubectl_1_20_development_servers_ignore_credentials;
}

/// How long a new binding may take to reach the RBAC index.
const PROPAGATION: Duration = Duration::from_secs(10);

fn users_are_authenticated_and_authorized(version: Version) {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = Kubectl::new(version, &server);
    let alice = Kubectl::with_token(version, &server, ALICE_TOKEN);
    let bob = Kubectl::with_token(version, &server, BOB_TOKEN);
    let carol = Kubectl::with_certificate(
        version,
        &server,
        &server.pki().client("carol", Some("devs")),
    );
    let stranger = Kubectl::with_token(version, &server, "not-a-token");
    let foreign =
        Kubectl::with_certificate(version, &server, &server.pki().foreign_client("mallory"));

    // A wrong token, and a certificate of another CA, are 401 (kubectl 1.32 words it as it
    // does against kube-apiserver, after its discovery failed).
    let unauthorized = match version {
        Version::V1_32 => {
            "error: You must be logged in to the server (the server has asked for the client \
             to provide credentials)"
        }
        Version::V1_20 => "error: You must be logged in to the server (Unauthorized)",
    };
    for client in [&stranger, &foreign] {
        client
            .fails(&["get", "webapps", "-n", "team-a"])
            .stderr_has(unauthorized);
    }

    admin.ok(&["create", "-f", &manifest("namespaces.yaml")]);
    admin.ok(&["create", "-f", &manifest("webapp.yaml"), "-n", "team-a"]);

    // Without bindings: kube's 403, for a token user and a certificate user.
    alice.fails(&["get", "webapps", "-n", "team-a"]).stderr_has(
        "Error from server (Forbidden): webapps.apps.example.dev is forbidden: User \"alice\" \
         cannot list resource \"webapps\" in API group \"apps.example.dev\" in the namespace \
         \"team-a\"",
    );
    carol
        .fails(&["get", "webapps", "web", "-n", "team-a"])
        .stderr_has(
            "Error from server (Forbidden): webapps.apps.example.dev \"web\" is forbidden: User \
         \"carol\" cannot get resource \"webapps\" in API group \"apps.example.dev\" in the \
         namespace \"team-a\"",
        );

    // Every authenticated user may discover the API (system:discovery).
    alice.ok(&["api-resources"]).stdout_has("webapps");

    // A Role and a RoleBinding in team-a: alice reads WebApps there, not in team-b, and
    // cannot write them.
    admin.ok(&[
        "create",
        "role",
        "webapp-reader",
        "-n",
        "team-a",
        "--verb=get,list,watch",
        "--resource=webapps.apps.example.dev",
    ]);
    admin.ok(&[
        "create",
        "rolebinding",
        "alice-reads",
        "-n",
        "team-a",
        "--role=webapp-reader",
        "--user=alice",
    ]);
    wait_until_allowed(&alice, &["get", "webapps", "-n", "team-a"], &server);
    alice
        .ok(&["get", "webapps", "-n", "team-a"])
        .stdout_has("web");
    alice
        .fails(&["get", "webapps", "-n", "team-b"])
        .stderr_has("in the namespace \"team-b\"");
    alice
        .fails(&["delete", "webapp", "web", "-n", "team-a"])
        .stderr_has("cannot delete resource \"webapps\"");

    // A ClusterRoleBinding of kube's `view` to the group devs admits a token user (bob)
    // and a certificate user (carol) of that group, everywhere; `view` holds the example
    // API's kinds through aggregation.
    admin.ok(&[
        "create",
        "clusterrolebinding",
        "devs-view",
        "--clusterrole=view",
        "--group=devs",
    ]);
    wait_until_allowed(&bob, &["get", "webapps", "-A"], &server);
    bob.ok(&["get", "webapps", "-A"]).stdout_has("web");
    wait_until_allowed(&carol, &["get", "webapps", "web", "-n", "team-a"], &server);
    carol.ok(&["get", "configmaps", "-n", "team-b"]);
    carol
        .fails(&["create", "configmap", "x", "-n", "team-b"])
        .stderr_has("User \"carol\" cannot create resource \"configmaps\"");

    // The bootstrap roles are there, and the administrator sees them.
    let roles = admin.ok(&["get", "clusterroles"]);
    for role in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        roles.check(
            roles.table().row_where("NAME", role).is_some(),
            &format!("clusterroles should list {role}"),
        );
    }
    admin
        .ok(&[
            "get",
            "clusterrolebinding",
            "cluster-admin",
            "-o",
            "jsonpath={.subjects[0].name}",
        ])
        .stdout_is("system:masters");
}

/// `kubectl auth can-i` (a SelfSubjectAccessReview) and `--list` (a
/// SelfSubjectRulesReview) answer as the bindings say; `kubectl auth whoami` (a
/// SelfSubjectReview, kubectl 1.32) names the user and groups.
fn auth_can_i(version: Version) {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = Kubectl::new(version, &server);
    let bob = Kubectl::with_token(version, &server, BOB_TOKEN);
    admin.ok(&["create", "-f", &manifest("namespaces.yaml")]);

    let can_list = [
        "auth",
        "can-i",
        "list",
        "webapps.apps.example.dev",
        "-n",
        "team-a",
    ];
    let no = bob.run(&can_list);
    no.check(!no.succeeded(), "can-i says no with exit status 1")
        .stdout_is("no");
    admin
        .ok(&["auth", "can-i", "delete", "clusterroles"])
        .stdout_is("yes");
    admin
        .ok(&["auth", "can-i", "get", "/healthz"])
        .stdout_is("yes");

    admin.ok(&[
        "create",
        "rolebinding",
        "devs-edit",
        "-n",
        "team-a",
        "--clusterrole=edit",
        "--group=devs",
    ]);
    wait_until_allowed(&bob, &can_list, &server);
    bob.ok(&can_list).stdout_is("yes");
    let elsewhere = bob.run(&[
        "auth",
        "can-i",
        "list",
        "webapps.apps.example.dev",
        "-n",
        "team-b",
    ]);
    elsewhere
        .check(!elsewhere.succeeded(), "not in team-b")
        .stdout_is("no");
    let run = bob.run(&["auth", "can-i", "create", "roles", "-n", "team-a"]);
    run.check(!run.succeeded(), "edit does not manage roles")
        .stdout_is("no");

    // The rules that apply in team-a: edit's (aggregated from the API's kinds) and the
    // discovery rules every authenticated user has.
    let list = bob.ok(&["auth", "can-i", "--list", "-n", "team-a"]);
    let line = |start: &str| {
        list.stdout
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or("")
    };
    list.check(
        line("webapps.apps.example.dev ")
            .contains("[create delete deletecollection patch update get list watch]"),
        "--list shows what edit allows on webapps",
    );
    list.check(
        line("selfsubjectaccessreviews.authorization.k8s.io ").contains("[create]"),
        "--list shows system:basic-user's reviews",
    );
    list.check(
        (list.stdout.lines()).any(|l| l.contains("[/healthz]") && l.contains("[get]")),
        "--list shows the non-resource URLs of system:discovery",
    );
    list.check(!list.stdout.contains("roles"), "edit holds no RBAC rules");

    if version == Version::V1_32 {
        let carol = Kubectl::with_certificate(
            version,
            &server,
            &server.pki().client("carol", Some("devs")),
        );
        let whoami = carol.ok(&["auth", "whoami", "-o", "json"]).json();
        assert_eq!(whoami["kind"], "SelfSubjectReview");
        assert_eq!(whoami["status"]["userInfo"]["username"], "carol");
        assert_eq!(
            whoami["status"]["userInfo"]["groups"],
            serde_json::json!(["devs", "system:authenticated"])
        );
        bob.ok(&["auth", "whoami"]).stdout_has("bob");
    }
}

/// With no security flags there is no authenticator but anonymous, and kube-apiserver then
/// looks at no credential: a kubeconfig with a token works against a development server,
/// as `system:anonymous`.
fn development_servers_ignore_credentials(version: Version) {
    let server = Server::start();
    let with_token = Kubectl::at(version, &server.url(), vec!["--token=any-token".to_owned()]);
    with_token.ok(&["create", "namespace", "tokens"]);
    with_token
        .ok(&["get", "namespaces", "tokens"])
        .stdout_has("tokens");
    if version == Version::V1_32 {
        let whoami = with_token.ok(&["auth", "whoami", "-o", "json"]).json();
        assert_eq!(whoami["status"]["userInfo"]["username"], "system:anonymous");
    }
    let review = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let answer = server
        .client()
        .request_with_headers(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some(&review),
            &[("Authorization", "Bearer not-known-anywhere")],
        )
        .unwrap();
    assert_eq!(answer.status, 201, "{answer:?}");
    assert_eq!(
        answer.json()["status"]["userInfo"],
        serde_json::json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
    );
}

/// kube's escalation check: a user who may create roles and bindings cannot put into them
/// rules they do not hold, unless they may `bind` (or `escalate`).
fn no_one_grants_what_they_do_not_hold(version: Version) {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let admin = Kubectl::new(version, &server);
    let alice = Kubectl::with_token(version, &server, ALICE_TOKEN);
    admin.ok(&["create", "-f", &manifest("namespaces.yaml")]);
    admin.ok(&[
        "create",
        "role",
        "role-admin",
        "-n",
        "team-a",
        "--verb=create,get",
        "--resource=roles,rolebindings",
    ]);
    admin.ok(&[
        "create",
        "rolebinding",
        "alice-role-admin",
        "-n",
        "team-a",
        "--role=role-admin",
        "--user=alice",
    ]);
    let small = [
        "create",
        "role",
        "small",
        "-n",
        "team-a",
        "--verb=get",
        "--resource=roles",
    ];
    wait_until_allowed(&alice, &small, &server);

    alice
        .fails(&[
            "create",
            "role",
            "big",
            "-n",
            "team-a",
            "--verb=delete,get",
            "--resource=configmaps,webapps.apps.example.dev",
        ])
        .stderr_has(
            "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"big\" is \
             forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to \
             grant RBAC permissions not currently held:\n{APIGroups:[\"\"], \
             Resources:[\"configmaps\"], Verbs:[\"delete\" \"get\"]}\n\
             {APIGroups:[\"apps.example.dev\"], Resources:[\"webapps\"], Verbs:[\"delete\" \
             \"get\"]}",
        );
    // `edit` holds rules once the aggregation controller has filled it and the authorizer's
    // cache (which the escalation check reads, not storage) has seen them: a probe user
    // bound to `edit` is allowed what it grants.
    admin.ok(&[
        "create",
        "rolebinding",
        "edit-probe",
        "-n",
        "team-a",
        "--clusterrole=edit",
        "--user=edit-probe",
    ]);
    let probe = [
        "auth",
        "can-i",
        "delete",
        "configmaps",
        "-n",
        "team-a",
        "--as=edit-probe",
    ];
    wait_until_allowed(&admin, &probe, &server);
    let bind_edit = [
        "create",
        "rolebinding",
        "alice-edit",
        "-n",
        "team-a",
        "--clusterrole=edit",
        "--user=alice",
    ];
    alice
        .fails(&bind_edit)
        .stderr_has(
            "rolebindings.rbac.authorization.k8s.io \"alice-edit\" is forbidden: user \"alice\"",
        )
        .stderr_has("is attempting to grant RBAC permissions not currently held");
    // A role she holds herself, she may grant.
    alice.ok(&[
        "create",
        "rolebinding",
        "bob-small",
        "-n",
        "team-a",
        "--role=small",
        "--user=bob",
    ]);

    // With `bind` on the ClusterRole edit, she may grant it though she does not hold it.
    admin.ok(&[
        "create",
        "clusterrole",
        "bind-edit",
        "--verb=bind",
        "--resource=clusterroles",
        "--resource-name=edit",
    ]);
    admin.ok(&[
        "create",
        "rolebinding",
        "alice-bind-edit",
        "-n",
        "team-a",
        "--clusterrole=bind-edit",
        "--user=alice",
    ]);
    wait_until_allowed(&alice, &bind_edit, &server);
    wait_until_allowed(
        &alice,
        &["delete", "configmap", "--all", "-n", "team-a"],
        &server,
    );
}

/// Runs `args` as `kubectl` until it succeeds: a binding reaches the RBAC index shortly
/// after it is written.
#[track_caller]
fn wait_until_allowed(kubectl: &Kubectl, args: &[&str], server: &Server) {
    let log = server.log();
    wait_for(
        PROPAGATION,
        &format!("kubectl {} to be allowed", args.join(" ")),
        || log.tail(20),
        || kubectl.run(args).succeeded().then_some(()),
    );
}

/// Anonymous requests: allowed to health and version (system:public-info-viewer),
/// forbidden elsewhere with kube's message; refused outright (401) with
/// `--anonymous-auth=false`.
#[test]
fn anonymous_requests() {
    let server = Server::start_secure(Pki::new(), Backend::Embedded, &[]);
    let ca = server.pki().ca_pem();
    let anonymous = support::http::Client::with_tls(&server.url(), &ca, "");
    let anonymous = anonymous.without_token();
    assert_eq!(anonymous.get("/healthz").unwrap().status, 200);
    assert_eq!(anonymous.get("/version").unwrap().status, 200);
    let denied = anonymous.get("/api/v1/namespaces").unwrap();
    assert_eq!(denied.status, 403, "{denied:?}");
    assert_eq!(
        denied.json()["message"],
        "namespaces is forbidden: User \"system:anonymous\" cannot list resource \
         \"namespaces\" in API group \"\" at the cluster scope"
    );
    let path = anonymous.get("/metrics-nowhere").unwrap();
    assert_eq!(path.status, 403, "{path:?}");
    assert_eq!(
        path.json()["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics-nowhere\""
    );

    let strict = Server::start_secure(Pki::new(), Backend::Embedded, &["--anonymous-auth=false"]);
    let ca = strict.pki().ca_pem();
    let anonymous = support::http::Client::with_tls(&strict.url(), &ca, "").without_token();
    let refused = anonymous.get("/healthz").unwrap();
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(refused.json()["reason"], "Unauthorized");
    assert_eq!(strict.client().get("/healthz").unwrap().status, 200);
}

/// A server that would be reachable from the network without TLS and authentication
/// does not start, and says which flags it needs.
#[test]
fn an_unprotected_server_is_not_exposed() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--listen", "0.0.0.0:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for flag in ["--tls-cert-file", "--client-ca-file", "--token-auth-file"] {
        assert!(stderr.contains(flag), "{stderr}");
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--authorization-mode", "RBAC,Node", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown mode \"Node\""));
    // The Webhook mode asks the cluster of --authorization-kubeconfig: one needs the other.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kapi-server"))
        .args(["--authorization-mode", "RBAC,Webhook", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--authorization-kubeconfig"), "{stderr}");
}
