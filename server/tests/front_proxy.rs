//! What an extension API server needs behind kube-apiserver. Front-proxy authentication
//! (`--requestheader-*`): a request presenting the front proxy's client certificate (its
//! own CA, an allowed common name) is from the user its `X-Remote-User`, `X-Remote-Group`
//! and `X-Remote-Extra-*` headers name, and is authorized (RBAC) as that user; the headers
//! of any other request are not believed. Delegated token authentication
//! (`--authentication-kubeconfig`) and authorization (`--authorization-kubeconfig`): tokens
//! and decisions of the core cluster (a second kapi server), asked there. Raw HTTPS, with
//! client certificates or tokens.

use crate::support;

use serde_json::{Value, json};
use support::http::Client;
use support::pki::Pki;
use support::{Backend, Server};

/// A server trusting the front proxy of `proxy` (certificates with the common name
/// `front-proxy-client`), and an administrator's client.
fn start(proxy: &Pki) -> (Server, Client) {
    let proxy_ca = proxy.ca.display().to_string();
    let server = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--requestheader-client-ca-file",
            &proxy_ca,
            "--requestheader-allowed-names",
            "front-proxy-client",
        ],
    );
    let admin = server.client();
    (server, admin)
}

/// Who the server says `client` is, given `headers`: the user of a SelfSubjectReview.
fn whoami(client: &Client, headers: &[(&str, &str)]) -> (u16, Value) {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let answer = client
        .request_with_headers("POST", path, Some(&review), headers)
        .unwrap();
    let user = answer.json()["status"]["userInfo"].clone();
    (answer.status, user)
}

#[test]
fn the_front_proxy_names_the_user_and_nobody_else_does() {
    let proxy = Pki::new();
    let (server, admin) = start(&proxy);
    let ca = server.pki().ca_pem();
    let through_proxy = Client::with_certificate(
        &server.url(),
        &ca,
        &proxy.client("front-proxy-client", None),
    );
    let headers = [
        ("X-Remote-User", "alice"),
        ("X-Remote-Group", "devs"),
        ("X-Remote-Group", "qa"),
        ("X-Remote-Extra-Scopes", "read"),
        ("X-Remote-Extra-Example.com%2FTeam", "a"),
    ];
    let (status, user) = whoami(&through_proxy, &headers);
    assert_eq!(status, 201, "{user}");
    assert_eq!(
        user,
        json!({"username": "alice", "groups": ["devs", "qa", "system:authenticated"],
            "extra": {"example.com/team": ["a"], "scopes": ["read"]}})
    );

    // Authorized as that user: nothing until a binding grants the group `devs` its view.
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let refused = through_proxy
        .request_with_headers("GET", configmaps, None, &headers)
        .unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(
        refused.json()["message"],
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API \
         group \"\" in the namespace \"default\""
    );
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "devs-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]});
    let created = admin
        .post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            &binding,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    support::wait_for(
        std::time::Duration::from_secs(10),
        "the binding to take effect",
        String::new,
        || {
            let listed = through_proxy.request_with_headers("GET", configmaps, None, &headers);
            (listed.ok()?.status == 200).then_some(())
        },
    );

    // The proxy's certificate without a user header names nobody: anonymous is refused
    // (the certificate is not one of --client-ca-file's).
    let (status, _) = whoami(&through_proxy, &[]);
    assert_eq!(status, 401);

    // Headers without the proxy's certificate are not believed: a client certificate of
    // the server's own CA names its own user, and no certificate is anonymous.
    let carol = Client::with_certificate(&server.url(), &ca, &server.pki().client("carol", None));
    let (status, user) = whoami(&carol, &headers);
    assert_eq!(
        (status, &user["username"]),
        (201, &json!("carol")),
        "{user}"
    );
    let (status, user) = whoami(
        &Client::with_certificate(&server.url(), &ca, &proxy.foreign_client("x")),
        &headers,
    );
    assert_eq!(status, 401, "another CA's certificate: {user}");

    let nobody = Client::with_tls(&server.url(), &ca, "unused").without_token();
    let refused = nobody
        .request_with_headers("GET", configmaps, None, &headers)
        .unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    let message = refused.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("User \"system:anonymous\""), "{message}");

    // The proxy's CA, but a common name not allowed.
    let impostor = Client::with_certificate(&server.url(), &ca, &proxy.client("impostor", None));
    let (status, user) = whoami(&impostor, &headers);
    assert_eq!(status, 401, "{user}");
}

/// `--authentication-kubeconfig`: a token the extension server does not know is reviewed by
/// the core cluster (a second kapi server) in a TokenReview, and its user is the request's;
/// a token neither knows is 401, and so is one asked about while the core is down.
/// `--authorization-mode=Webhook` with `--authorization-kubeconfig`: what the extension
/// server's own RBAC does not allow is asked of the core cluster (SubjectAccessReviews).
#[test]
fn tokens_are_reviewed_by_the_core_cluster() {
    use std::io::Write;
    let core_pki = Pki::new();
    let mut tokens = std::fs::OpenOptions::new()
        .append(true)
        .open(&core_pki.tokens)
        .unwrap();
    writeln!(tokens, "dave-token,dave,dave-uid,\"devs,ops\"").unwrap();
    writeln!(tokens, "eve-token,eve,eve-uid").unwrap();
    let mut core = Server::start_secure(core_pki, Backend::Embedded, &[]);
    let path = support::kubeconfig(&core.url(), &core.pki().ca, support::pki::ADMIN_TOKEN);
    // dave may read the ConfigMaps of `default`, says the core cluster's RBAC.
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "ops-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"}]});
    let created = core
        .client()
        .post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            &binding,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{created:?}");
    // (Once the core's RBAC has it: a decision is kept ten seconds, a refusal too.)
    let dave_on_core = Client::with_tls(&core.url(), &core.pki().ca_pem(), "dave-token");
    support::wait_for(
        std::time::Duration::from_secs(10),
        "the core cluster's binding to take effect",
        String::new,
        || {
            let listed = dave_on_core
                .get("/api/v1/namespaces/default/configmaps")
                .ok()?;
            (listed.status == 200).then_some(())
        },
    );
    // Its own RBAC first (which knows nothing of dave), then the core cluster.
    let extension = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &[
            "--authentication-kubeconfig",
            &path,
            "--authorization-mode",
            "Webhook",
            "--authorization-kubeconfig",
            &path,
        ],
    );
    let ca = extension.pki().ca_pem();
    let as_token = |token: &str| Client::with_tls(&extension.url(), &ca, token);

    // The RBAC of the extension server needs no binding for a review of oneself.
    let (status, user) = whoami(&as_token("dave-token"), &[]);
    assert_eq!(status, 201, "{user}");
    assert_eq!(
        user,
        json!({"username": "dave", "uid": "dave-uid",
            "groups": ["devs", "ops", "system:authenticated"]})
    );
    // Its own tokens still name their users; a token nobody knows is 401.
    let (status, user) = whoami(&as_token(support::pki::ALICE_TOKEN), &[]);
    assert_eq!((status, &user["username"]), (201, &json!("alice")));
    let (status, _) = whoami(&as_token("nobody-token"), &[]);
    assert_eq!(status, 401);

    // Decisions are the core cluster's: dave reads `default`, nothing else.
    let dave = as_token("dave-token");
    let listed = dave.get("/api/v1/namespaces/default/configmaps").unwrap();
    assert_eq!(listed.status, 200, "{listed:?}");
    let refused = dave.get("/api/v1/namespaces/other/configmaps").unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(
        refused
            .body
            .contains(r#"User \"dave\" cannot list resource \"configmaps\""#)
    );

    // A core cluster that cannot be asked fails the request.
    core.kill_9();
    let (status, _) = whoami(&as_token("eve-token"), &[]);
    assert_eq!(status, 401);
}

/// `--authorization-always-allow-paths`: those non-resource paths are anyone's, before
/// RBAC is asked; everything else is still RBAC's.
#[test]
fn always_allowed_paths_skip_authorization() {
    let server = Server::start_secure(
        Pki::new(),
        Backend::Embedded,
        &["--authorization-always-allow-paths", "/metrics,/debug/*"],
    );
    let ca = server.pki().ca_pem();
    let anonymous = Client::with_tls(&server.url(), &ca, "unused").without_token();
    assert_eq!(anonymous.get("/metrics").unwrap().status, 200);
    let configmaps = anonymous
        .get("/api/v1/namespaces/default/configmaps")
        .unwrap();
    assert_eq!(configmaps.status, 403, "{configmaps:?}");
    // `/metrics` exactly: a path it prefixes is not allowed.
    assert_eq!(anonymous.get("/metricsz").unwrap().status, 403);
}
