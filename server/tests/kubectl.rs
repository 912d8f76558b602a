//! kubectl against the real `kapi-server`: each scenario runs with kubectl 1.32 and with
//! kubectl 1.20, default flags (validation on), as the administrator of a secure server
//! (HTTPS, token authentication, RBAC), one fresh server per test, on the embedded
//! store and (with the `etcd` feature, as `etcd::*`) on an etcd of its own. What kubectl
//! prints is checked as it prints it against kube-apiserver.
//!
//! The binaries: `$KAPI_KUBECTL` / `$KAPI_KUBECTL_1_20`, else the paths `cargo xtask test`
//! installs them to (see `support::kubectl`).

use crate::support;

use std::collections::BTreeSet;

use serde_json::json;
use support::pki::Pki;
use support::{Backend, Kubectl, Server, Version, manifest, on_both_backends};

on_both_backends! {
    kubectl_1_32_discovery_and_explain => discovery_and_explain(Version::V1_32);
    kubectl_1_20_discovery_and_explain => discovery_and_explain(Version::V1_20);
    kubectl_1_32_create_namespace_and_configmap =>
        create_namespace_and_configmap(Version::V1_32);
    kubectl_1_20_create_namespace_and_configmap =>
        create_namespace_and_configmap(Version::V1_20);
    kubectl_1_32_create_and_get => create_and_get(Version::V1_32);
    kubectl_1_20_create_and_get => create_and_get(Version::V1_20);
    kubectl_1_32_apply => apply(Version::V1_32);
    kubectl_1_20_apply => apply(Version::V1_20);
    kubectl_1_32_replace_and_delete => replace_and_delete(Version::V1_32);
    kubectl_1_20_replace_and_delete => replace_and_delete(Version::V1_20);
    kubectl_1_32_errors => errors(Version::V1_32);
    kubectl_1_20_errors => errors(Version::V1_20);
    kubectl_1_32_rejects_unknown_fields => rejects_unknown_fields(Version::V1_32);
    kubectl_1_20_rejects_unknown_fields => rejects_unknown_fields(Version::V1_20);
}

/// The deprecation warning of `apps.example.dev/v1beta1`, as kubectl prints it.
const V1BETA1_WARNING: &str =
    "Warning: apps.example.dev/v1beta1 WebApp is deprecated; use apps.example.dev/v1 WebApp";

/// `version`, `api-resources`, `api-versions`, `explain`.
fn discovery_and_explain(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);

    let run = kubectl.ok(&["version"]);
    run.stdout_has("Server Version");
    match version {
        Version::V1_32 => run.stdout_has("Server Version: v1."),
        Version::V1_20 => run.stdout_has("Server Version: version.Info{Major:\"1\""),
    };

    let run = kubectl.ok(&["api-resources"]);
    let table = run.table();
    run.check(
        table.header == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
        "api-resources header",
    );
    for (name, short, api_version, namespaced, kind) in [
        ("webapps", "wa", "apps.example.dev/v1", "true", "WebApp"),
        (
            "tenants",
            "tn",
            "platform.example.dev/v1",
            "false",
            "Tenant",
        ),
        ("configmaps", "cm", "v1", "true", "ConfigMap"),
        ("namespaces", "ns", "v1", "false", "Namespace"),
    ] {
        let row = table.row_where("NAME", name);
        let expected = [
            ("APIVERSION", api_version),
            ("KIND", kind),
            ("NAME", name),
            ("NAMESPACED", namespaced),
            ("SHORTNAMES", short),
        ];
        run.check(
            row.is_some_and(|row| row.into_iter().eq(expected)),
            &format!("api-resources should list {name} once as {expected:?}"),
        );
    }
    run.check(
        !table.column("NAME").iter().any(|name| name.contains('/')),
        "api-resources should not list subresources",
    );

    let run = kubectl.ok(&["api-versions"]);
    let versions: BTreeSet<&str> = run.stdout.lines().collect();
    let expected = [
        "admissionregistration.k8s.io/v1",
        "apiextensions.k8s.io/v1",
        "apiregistration.k8s.io/v1",
        "apps.example.dev/v1",
        "apps.example.dev/v1beta1",
        "apps/v1",
        "authentication.k8s.io/v1",
        "authorization.k8s.io/v1",
        "autoscaling/v1",
        "autoscaling/v2",
        "batch/v1",
        "certificates.k8s.io/v1",
        "coordination.k8s.io/v1",
        "discovery.k8s.io/v1",
        "events.k8s.io/v1",
        "flowcontrol.apiserver.k8s.io/v1",
        "networking.k8s.io/v1",
        "node.k8s.io/v1",
        "platform.example.dev/v1",
        "policy/v1",
        "rbac.authorization.k8s.io/v1",
        "scheduling.k8s.io/v1",
        "storage.k8s.io/v1",
        "v1",
    ];
    run.check(
        versions == expected.into(),
        &format!("api-versions should be {expected:?}"),
    );

    let run = kubectl.ok(&["explain", "webapps.spec"]);
    run.check(
        explained_fields(&run.stdout) == ["container", "paused", "replicas"],
        "explain webapps.spec (v1) should list container, paused, replicas",
    );
    match version {
        Version::V1_32 => run
            .stdout_has("GROUP:      apps.example.dev")
            .stdout_has("KIND:       WebApp")
            .stdout_has("VERSION:    v1\n"),
        Version::V1_20 => run
            .stdout_has("KIND:     WebApp")
            .stdout_has("VERSION:  apps.example.dev/v1\n"),
    };
    run.stdout_has("Desired state.");

    let run = kubectl.ok(&[
        "explain",
        "webapps.spec",
        "--api-version=apps.example.dev/v1beta1",
    ]);
    run.check(
        explained_fields(&run.stdout) == ["image", "port", "replicas"],
        "explain webapps.spec (v1beta1) should list image, port, replicas",
    );
    match version {
        Version::V1_32 => run.stdout_has("VERSION:    v1beta1\n"),
        Version::V1_20 => run.stdout_has("VERSION:  apps.example.dev/v1beta1\n"),
    };

    let run = kubectl.ok(&["explain", "wa.spec.container"]);
    run.check(
        explained_fields(&run.stdout) == ["env", "image", "ports"],
        "explain wa.spec.container should list env, image, ports",
    );
    let run = kubectl.ok(&["explain", "tenants.spec"]);
    run.check(
        explained_fields(&run.stdout) == ["displayName", "owners", "quota"],
        "explain tenants.spec should list displayName, owners, quota",
    );
    let run = kubectl.ok(&["explain", "configmaps"]);
    let fields = explained_fields(&run.stdout);
    run.check(
        ["apiVersion", "data", "kind"]
            .iter()
            .all(|f| fields.iter().any(|g| g == f)),
        "explain configmaps should list apiVersion, data, kind",
    );
}

/// `create namespace` and `create configmap --from-literal`: kubectl's typed client (which
/// in 1.32 sends Protobuf bodies, as it does for every built-in kind).
fn create_namespace_and_configmap(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);

    kubectl
        .ok(&["create", "namespace", "team-a"])
        .stdout_is("namespace/team-a created");
    let run = kubectl.ok(&["get", "ns", "team-a"]);
    let table = run.table();
    run.check(
        table.header == ["NAME", "STATUS", "AGE"]
            && table
                .row_where("NAME", "team-a")
                .is_some_and(|r| r["STATUS"] == "Active"),
        "namespace team-a should be Active",
    );
    let run = kubectl.ok(&["get", "namespaces"]);
    run.check(
        // kube-apiserver's system namespaces, made at start.
        run.table().column("NAME")
            == [
                "default",
                "kube-node-lease",
                "kube-public",
                "kube-system",
                "team-a",
            ],
        "namespaces should be kube's four and team-a",
    );
    let literal = "--from-literal=a=b";
    kubectl
        .ok(&["create", "configmap", "x", literal, "-n", "team-a"])
        .stdout_is("configmap/x created");
    kubectl
        .ok(&["get", "cm", "x", "-n", "team-a", "-o", "jsonpath={.data.a}"])
        .stdout_is("b");
    kubectl
        .fails(&["create", "namespace", "team-a"])
        .stderr_has("Error from server (AlreadyExists): namespaces \"team-a\" already exists");
    // The failed create leaves the namespace and what it holds alone.
    kubectl
        .ok(&["get", "cm", "x", "-n", "team-a", "-o", "jsonpath={.data.a}"])
        .stdout_is("b");
    let literals = ["--from-literal=k=v", "--from-literal=l=w"];
    kubectl
        .ok(&["create", "configmap", "y", literals[0], literals[1]])
        .stdout_is("configmap/y created");
    let run = kubectl.ok(&["get", "configmap", "y", "--namespace=default", "-o", "json"]);
    run.check(
        run.json()["data"] == json!({"k": "v", "l": "w"}),
        "configmap y should hold k=v and l=w",
    );
    kubectl
        .fails(&[
            "create",
            "configmap",
            "x",
            "--from-literal=a=b",
            "-n",
            "team-a",
        ])
        .stderr_has("configmaps \"x\" already exists");
    kubectl
        .fails(&[
            "create",
            "configmap",
            "z",
            "--from-literal=a=b",
            "-n",
            "missing",
        ])
        .stderr_has("namespaces \"missing\" not found");
}

/// `create -f` of each kind, then `get` in every form.
fn create_and_get(version: Version, backend: Backend) {
    let (server, kubectl) = start(version, backend);
    create_namespaces(&kubectl);

    kubectl
        .ok(&["create", "-f", &manifest("webapp.yaml"), "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/web created");
    kubectl
        .ok(&[
            "create",
            "-f",
            &manifest("webapp-updated.yaml"),
            "-n",
            "team-b",
        ])
        .stdout_is("webapp.apps.example.dev/web created");
    kubectl
        .ok(&["create", "-f", &manifest("tenant.yaml")])
        .stdout_is("tenant.platform.example.dev/acme created");
    kubectl
        .ok(&["create", "-f", &manifest("configmap.yaml"), "-n", "team-a"])
        .stdout_is("configmap/settings created");

    // Tables with the printer columns, by short name, plural, resource.group and
    // resource.version.group. READY is blank: the WebApp has no status yet.
    for resource in [
        "wa",
        "webapps",
        "webapp.apps.example.dev",
        "webapps.v1.apps.example.dev",
    ] {
        let run = kubectl.ok(&["get", resource, "-n", "team-a"]);
        let table = run.table();
        run.check(
            table.header == ["NAME", "IMAGE", "REPLICAS", "READY", "AGE"],
            "header NAME IMAGE REPLICAS READY AGE",
        );
        run.check(
            table.rows.len() == 1
                && table.row_where("NAME", "web").is_some_and(|r| {
                    r["IMAGE"] == "nginx:1.25" && r["REPLICAS"] == "2" && r["READY"].is_empty()
                }),
            "one row: web, nginx:1.25, 2, READY blank",
        );
    }
    // One object: a one-row table.
    let run = kubectl.ok(&["get", "wa", "web", "-n", "team-a"]);
    let table = run.table();
    run.check(
        table.rows.len() == 1 && table.rows[0][..3] == ["web", "nginx:1.25", "2"],
        "one row: web, nginx:1.25, 2",
    );
    // `-o wide` adds the priority-1 column.
    let run = kubectl.ok(&["get", "wa", "-n", "team-a", "-o", "wide"]);
    let table = run.table();
    run.check(
        table.header == ["NAME", "IMAGE", "REPLICAS", "READY", "PAUSED", "AGE"],
        "-o wide header NAME IMAGE REPLICAS READY PAUSED AGE",
    );
    run.check(
        table
            .row_where("NAME", "web")
            .is_some_and(|r| r["PAUSED"] == "false"),
        "web is not paused (the default)",
    );
    // `-A` adds the namespace.
    let run = kubectl.ok(&["get", "wa", "-A"]);
    let table = run.table();
    run.check(
        table.header == ["NAMESPACE", "NAME", "IMAGE", "REPLICAS", "READY", "AGE"],
        "-A header NAMESPACE NAME IMAGE REPLICAS READY AGE",
    );
    let rows: Vec<_> = (table.rows.iter())
        .map(|r| (&*r[0], &*r[1], &*r[2]))
        .collect();
    run.check(
        rows == [
            ("team-a", "web", "nginx:1.25"),
            ("team-b", "web", "nginx:1.27"),
        ],
        "-A should list web in team-a and in team-b",
    );
    kubectl
        .ok(&["get", "webapps", "--all-namespaces", "-o", "name"])
        .stdout_is("webapp.apps.example.dev/web\nwebapp.apps.example.dev/web");

    // -o yaml and -o json show the stored object, with defaults applied.
    let run = kubectl.ok(&["get", "wa", "web", "-n", "team-a", "-o", "yaml"]);
    for line in [
        "apiVersion: apps.example.dev/v1\n",
        "kind: WebApp\n",
        "  name: web\n",
        "  namespace: team-a\n",
        "  uid: ",
        "  resourceVersion: ",
        "  creationTimestamp: ",
        "    app: web\n",
        "    image: nginx:1.25\n",
        "  replicas: 2\n",
    ] {
        run.stdout_has(line);
    }
    let run = kubectl.ok(&["get", "wa", "-n", "team-a", "-o", "json"]);
    let list = run.json();
    run.check(
        list["items"]
            .as_array()
            .is_some_and(|items| items.len() == 1),
        "-o json: one item",
    );
    let web = &list["items"][0];
    run.check(
        web["apiVersion"] == "apps.example.dev/v1"
            && web["kind"] == "WebApp"
            && web["metadata"]["name"] == "web"
            && web["metadata"]["namespace"] == "team-a"
            && web["metadata"]["uid"]
                .as_str()
                .is_some_and(|uid| !uid.is_empty())
            && web["spec"]["replicas"] == 2
            && web["spec"]["paused"] == false
            && web["spec"]["container"]["ports"][0]["containerPort"] == 80
            && web["spec"]["container"]["ports"][0]["protocol"] == "TCP",
        "-o json: web as created, with paused and protocol defaulted",
    );

    // The cluster-scoped Tenant: no namespace column or field.
    let run = kubectl.ok(&["get", "tn"]);
    let table = run.table();
    run.check(
        table.header == ["NAME", "DISPLAY NAME", "MAX WEBAPPS", "WEBAPPS", "AGE"],
        "tenants header NAME DISPLAY NAME MAX WEBAPPS WEBAPPS AGE",
    );
    run.check(
        table.row_where("NAME", "acme").is_some_and(|r| {
            r["DISPLAY NAME"] == "Acme Corp" && r["MAX WEBAPPS"] == "5" && r["WEBAPPS"].is_empty()
        }),
        "acme: Acme Corp, 5, WEBAPPS blank",
    );
    let run = kubectl.ok(&["get", "tenants.platform.example.dev", "acme", "-o", "json"]);
    let acme = run.json();
    run.check(
        acme["kind"] == "Tenant"
            && acme["metadata"].get("namespace").is_none()
            && acme["spec"]["owners"] == json!(["alice@example.dev"]),
        "acme as created, without a namespace",
    );

    // ConfigMaps: DATA counts the entries, as kube-apiserver's printer does.
    let run = kubectl.ok(&["get", "cm", "-n", "team-a"]);
    let table = run.table();
    run.check(
        table.header == ["NAME", "DATA", "AGE"]
            && table
                .row_where("NAME", "settings")
                .is_some_and(|r| r["DATA"] == "2"),
        "configmaps: settings with DATA 2",
    );
    kubectl
        .ok(&[
            "get",
            "configmap",
            "settings",
            "--namespace=team-a",
            "-o",
            "jsonpath={.data.size}",
        ])
        .stdout_is("large");

    // The deprecated version: readable and writable, with kube's deprecation warning.
    let run = kubectl.ok(&["get", "webapps.v1beta1.apps.example.dev", "-n", "team-a"]);
    run.stderr_has(V1BETA1_WARNING);
    run.check(
        run.table().row_where("NAME", "web").is_some(),
        "web through v1beta1",
    );
    let v1beta1 = "webapps.v1beta1.apps.example.dev";
    let run = kubectl.ok(&["get", v1beta1, "web", "-n", "team-a", "-o", "yaml"]);
    run.stderr_has(V1BETA1_WARNING)
        .stdout_has("apiVersion: apps.example.dev/v1beta1\n")
        .stdout_has("  image: nginx:1.25\n")
        .stdout_has("  port: 80\n");
    let run = kubectl.ok(&[
        "create",
        "-f",
        &manifest("webapp-v1beta1.yaml"),
        "-n",
        "team-a",
    ]);
    run.stdout_is("webapp.apps.example.dev/legacy created")
        .stderr_has(V1BETA1_WARNING);
    let run = kubectl.ok(&["get", "wa", "legacy", "-n", "team-a", "-o", "json"]);
    let legacy = run.json();
    run.check(
        legacy["apiVersion"] == "apps.example.dev/v1"
            && legacy["spec"]["container"]["image"] == "httpd:2.4"
            && legacy["spec"]["container"]["ports"][0]["containerPort"] == 8081,
        "legacy read through v1: image and port converted",
    );
    run.stderr_lacks("Warning:");

    // The administrator's requests are audited (every request at Metadata level).
    let log = server.pki().audit_log();
    support::wait_for(
        std::time::Duration::from_secs(10),
        "the audit event of the WebApp's create",
        || std::fs::read_to_string(&log).unwrap_or_default(),
        || {
            let text = std::fs::read_to_string(&log).ok()?;
            text.lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .any(|event| {
                    event["verb"] == "create"
                        && event["stage"] == "ResponseComplete"
                        && event["user"]["username"] == "admin"
                        && event["objectRef"]["resource"] == "webapps"
                        && event["responseStatus"]["code"] == 201
                })
                .then_some(())
        },
    );
}

/// `apply -f` on each kind: created, then (same manifest) unchanged, then configured.
fn apply(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);
    create_namespaces(&kubectl);

    // Applying the same manifest again patches nothing. kubectl 1.32 sends a strategic
    // merge patch, merging `ports` by the published merge key; kubectl 1.20 sends a JSON
    // merge patch for kinds it was not built with, which replaces the list whole, and
    // `ports` differs from the stored one by the defaulted `protocol` (as against
    // kube-apiserver with a custom resource).
    let webapp_again = match version {
        Version::V1_32 => "unchanged",
        Version::V1_20 => "configured",
    };
    for (original, updated, object, again) in [
        (
            "webapp.yaml",
            "webapp-updated.yaml",
            "webapp.apps.example.dev/web",
            webapp_again,
        ),
        (
            "tenant.yaml",
            "tenant-updated.yaml",
            "tenant.platform.example.dev/acme",
            "unchanged",
        ),
        (
            "configmap.yaml",
            "configmap-updated.yaml",
            "configmap/settings",
            "unchanged",
        ),
    ] {
        kubectl
            .ok(&["apply", "-f", &manifest(original), "-n", "team-a"])
            .stdout_is(&format!("{object} created"));
        kubectl
            .ok(&["apply", "-f", &manifest(original), "-n", "team-a"])
            .stdout_is(&format!("{object} {again}"));
        kubectl
            .ok(&["apply", "-f", &manifest(updated), "-n", "team-a"])
            .stdout_is(&format!("{object} configured"));
    }

    let run = kubectl.ok(&["get", "wa", "web", "-n", "team-a", "-o", "json"]);
    let web = run.json();
    let annotations = &web["metadata"]["annotations"];
    let last_applied = annotations["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok());
    run.check(
        web["spec"]["replicas"] == 3
            && web["spec"]["container"]["image"] == "nginx:1.27"
            && web["spec"]["container"]["env"][0]["value"] == "production"
            && web["metadata"]["labels"]["app"] == "web"
            && last_applied.is_some_and(|a| a["spec"]["replicas"] == 3),
        "web updated by apply, with the last applied configuration",
    );
    let run = kubectl.ok(&["get", "tn", "acme", "-o", "json"]);
    let acme = run.json();
    run.check(
        acme["spec"]["quota"]["maxWebApps"] == 8
            && acme["spec"]["owners"] == json!(["alice@example.dev", "bob@example.dev"]),
        "acme updated by apply",
    );
    let run = kubectl.ok(&["get", "cm", "settings", "-n", "team-a", "-o", "json"]);
    run.check(
        run.json()["data"] == json!({"color": "green"}),
        "apply should have removed the key the new manifest dropped",
    );
}

/// `replace -f` (and its Conflict on a stale resourceVersion), `delete`, then NotFound.
fn replace_and_delete(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);
    create_namespaces(&kubectl);
    kubectl.ok(&["create", "-f", &manifest("webapp.yaml"), "-n", "team-a"]);
    kubectl.ok(&["create", "-f", &manifest("tenant.yaml")]);
    kubectl.ok(&["create", "-f", &manifest("configmap.yaml"), "-n", "team-a"]);

    // Saved now, with the current resourceVersion: stale after the replace below.
    let stale = kubectl.ok(&["get", "wa", "web", "-n", "team-a", "-o", "yaml"]);
    let stale_version = resource_version(&kubectl, "wa", "web");
    let stale = kubectl.write_file("stale-web.yaml", &stale.stdout);

    kubectl
        .ok(&[
            "replace",
            "-f",
            &manifest("webapp-updated.yaml"),
            "-n",
            "team-a",
        ])
        .stdout_is("webapp.apps.example.dev/web replaced");
    let run = kubectl.ok(&["get", "wa", "web", "-n", "team-a", "-o", "json"]);
    let web = run.json();
    run.check(
        web["spec"]["replicas"] == 3
            && web["spec"]["container"]["image"] == "nginx:1.27"
            && web["metadata"]["resourceVersion"] != stale_version.as_str(),
        "web replaced, with a new resourceVersion",
    );
    kubectl
        .fails(&["replace", "-f", &stale])
        .stderr_has("Error from server (Conflict): ")
        .stderr_has(
            "Operation cannot be fulfilled on webapps.apps.example.dev \"web\": the object has \
             been modified; please apply your changes to the latest version and try again",
        );

    kubectl
        .ok(&["replace", "-f", &manifest("tenant-updated.yaml")])
        .stdout_is("tenant.platform.example.dev/acme replaced");
    kubectl
        .ok(&[
            "get",
            "tn",
            "acme",
            "-o",
            "jsonpath={.spec.quota.maxWebApps}",
        ])
        .stdout_is("8");
    kubectl
        .ok(&[
            "replace",
            "-f",
            &manifest("configmap-updated.yaml"),
            "-n",
            "team-a",
        ])
        .stdout_is("configmap/settings replaced");
    kubectl
        .ok(&[
            "get",
            "cm",
            "settings",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.data}",
        ])
        .stdout_is(r#"{"color":"green"}"#);

    kubectl
        .ok(&["delete", "wa", "web", "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev \"web\" deleted");
    kubectl
        .fails(&["get", "wa", "web", "-n", "team-a"])
        .stderr_has("Error from server (NotFound): webapps.apps.example.dev \"web\" not found");
    kubectl
        .ok(&["get", "wa", "-n", "team-a"])
        .stderr_has("No resources found in team-a namespace.");
    kubectl
        .ok(&["delete", "tenant", "acme"])
        .stdout_is("tenant.platform.example.dev \"acme\" deleted");
    kubectl.fails(&["get", "tn", "acme"]).stderr_has(
        "Error from server (NotFound): tenants.platform.example.dev \"acme\" not found",
    );
    kubectl
        .ok(&["delete", "-f", &manifest("configmap.yaml"), "-n", "team-a"])
        .stdout_is("configmap \"settings\" deleted");
    kubectl
        .fails(&["get", "cm", "settings", "-n", "team-a"])
        .stderr_has("Error from server (NotFound): configmaps \"settings\" not found");
}

/// Errors print as kubectl prints kube-apiserver's.
fn errors(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);
    create_namespaces(&kubectl);
    let webapp = manifest("webapp.yaml");
    kubectl.ok(&["create", "-f", &webapp, "-n", "team-a"]);

    kubectl
        .fails(&["create", "-f", &webapp, "-n", "team-a"])
        .stderr_has(&format!(
            "Error from server (AlreadyExists): error when creating \"{webapp}\": \
             webapps.apps.example.dev \"web\" already exists"
        ));
    let namespaces = manifest("namespaces.yaml");
    kubectl
        .fails(&["create", "-f", &namespaces])
        .stderr_has(&format!(
            "Error from server (AlreadyExists): error when creating \"{namespaces}\": \
             namespaces \"team-a\" already exists"
        ));
    // The failed create leaves the namespace and what it holds alone.
    kubectl
        .ok(&["get", "wa", "web", "-n", "team-a", "-o", "name"])
        .stdout_is("webapp.apps.example.dev/web");

    kubectl
        .fails(&["get", "wa", "nope", "-n", "team-a"])
        .stderr_has("Error from server (NotFound): webapps.apps.example.dev \"nope\" not found");
    kubectl.fails(&["get", "tn", "nope"]).stderr_has(
        "Error from server (NotFound): tenants.platform.example.dev \"nope\" not found",
    );
    kubectl
        .fails(&["get", "cm", "nope"])
        .stderr_has("Error from server (NotFound): configmaps \"nope\" not found");
    kubectl
        .fails(&["delete", "wa", "nope", "-n", "team-a"])
        .stderr_has("Error from server (NotFound): webapps.apps.example.dev \"nope\" not found");

    // A namespaced object in a namespace that does not exist.
    kubectl
        .fails(&["create", "-f", &webapp, "-n", "missing"])
        .stderr_has(&format!(
            "Error from server (NotFound): error when creating \"{webapp}\": \
             namespaces \"missing\" not found"
        ));
    kubectl
        .fails(&["apply", "-f", &webapp, "-n", "missing"])
        .stderr_has("Error from server (NotFound): ")
        .stderr_has("namespaces \"missing\" not found");
    let configmap = manifest("configmap.yaml");
    kubectl
        .fails(&["create", "-f", &configmap, "-n", "missing"])
        .stderr_has(&format!(
            "Error from server (NotFound): error when creating \"{configmap}\": \
             namespaces \"missing\" not found"
        ));
    kubectl
        .ok(&["get", "wa", "-n", "missing"])
        .stderr_has("No resources found in missing namespace.");
}

/// A typo in a manifest is an error, with validation on by default: kubectl 1.32 has the
/// server check (`fieldValidation=Strict`), kubectl 1.20 checks against `/openapi/v2`.
fn rejects_unknown_fields(version: Version, backend: Backend) {
    let (_server, kubectl) = start(version, backend);
    let typo = manifest("webapp-unknown-field.yaml");
    let run = kubectl.fails(&["create", "-f", &typo]);
    match version {
        Version::V1_32 => run
            .stderr_has("Error from server (BadRequest): ")
            .stderr_has("unknown field \"spec.replica\""),
        Version::V1_20 => run
            .stderr_has(
                "error validating data: ValidationError(WebApp.spec): unknown field \"replica\"",
            )
            .stderr_has("turn validation off with --validate=false"),
    };
    kubectl
        .fails(&["get", "wa", "typo"])
        .stderr_has("(NotFound)");
    kubectl
        .ok(&["create", "-f", &typo, "--validate=false"])
        .stdout_is("webapp.apps.example.dev/typo created");
}

/// A fresh secure server on `backend` (HTTPS, token and certificate authentication,
/// RBAC, every request audited) and `version` pointed at it as the administrator (checked
/// to be there first): the whole suite runs as a cluster administrator does.
fn start(version: Version, backend: Backend) -> (Server, Kubectl) {
    version.binary();
    let pki = Pki::new();
    let audit = pki.audit_flags();
    let audit: Vec<&str> = audit.iter().map(String::as_str).collect();
    let server = Server::start_secure(pki, backend, &audit);
    let kubectl = Kubectl::new(version, &server);
    (server, kubectl)
}

/// Creates namespaces `team-a` and `team-b` from a manifest.
fn create_namespaces(kubectl: &Kubectl) {
    kubectl
        .ok(&["create", "-f", &manifest("namespaces.yaml")])
        .stdout_is("namespace/team-a created\nnamespace/team-b created");
}

/// The field names `kubectl explain` lists under `FIELDS:`, sorted.
fn explained_fields(explain: &str) -> Vec<String> {
    let Some((_, fields)) = explain.split_once("FIELDS:\n") else {
        return Vec::new();
    };
    let names: BTreeSet<String> = (fields.lines())
        .filter_map(|line| {
            // `   name\t<type>`, indented less than the descriptions under it.
            let mut words = line.split_whitespace();
            let (name, kind) = (words.next()?, words.next()?);
            let indented = line.starts_with("  ") && !line.starts_with("     ");
            (indented && kind.starts_with('<')).then(|| name.to_owned())
        })
        .collect();
    names.into_iter().collect()
}

/// The resourceVersion of object `name` in `team-a`.
fn resource_version(kubectl: &Kubectl, resource: &str, name: &str) -> String {
    let jsonpath = "jsonpath={.metadata.resourceVersion}";
    let run = kubectl.ok(&["get", resource, name, "-n", "team-a", "-o", jsonpath]);
    run.check(!run.stdout.is_empty(), "a resourceVersion");
    run.stdout.clone()
}
