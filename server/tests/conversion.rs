//! Hub conversion end to end, with the real server and kubectl 1.32 and 1.20: an object
//! written through `apps.example.dev/v1` and updated through the deprecated `v1beta1`,
//! which cannot express `env`, `paused` or more than one port, keeps them (ARCHITECTURE.md,
//! "Hub conversion"); each version reads what the other wrote, with the fields mapped.

use crate::support;

use serde_json::{Value, json};
use support::{Kubectl, Server, Version, for_both_versions};

/// A v1 WebApp with everything v1beta1 cannot express.
const RICH_V1: &str = "\
apiVersion: apps.example.dev/v1
kind: WebApp
metadata:
  name: rich
spec:
  replicas: 2
  paused: true
  container:
    image: nginx:1.27
    ports:
    - name: http
      containerPort: 80
    - name: https
      containerPort: 443
    - containerPort: 53
      protocol: UDP
    env:
    - name: MODE
      value: prod
";

/// The same WebApp as a v1beta1 manifest, with another replica count.
const RICH_V1BETA1: &str = "\
apiVersion: apps.example.dev/v1beta1
kind: WebApp
metadata:
  name: rich
spec:
  replicas: 5
  image: nginx:1.27
  port: 80
";

for_both_versions! {
    replace_through_v1beta1_keeps_v1_fields =>
        kubectl_1_32_replace_through_v1beta1_keeps_v1_fields,
        kubectl_1_20_replace_through_v1beta1_keeps_v1_fields;
    apply_through_v1beta1_keeps_v1_fields =>
        kubectl_1_32_apply_through_v1beta1_keeps_v1_fields,
        kubectl_1_20_apply_through_v1beta1_keeps_v1_fields;
    read_and_write_back_through_v1beta1_keeps_v1_fields =>
        kubectl_1_32_read_and_write_back_through_v1beta1_keeps_v1_fields,
        kubectl_1_20_read_and_write_back_through_v1beta1_keeps_v1_fields;
    each_version_reads_what_the_other_wrote =>
        kubectl_1_32_each_version_reads_what_the_other_wrote,
        kubectl_1_20_each_version_reads_what_the_other_wrote;
}

/// The deprecation warning of `apps.example.dev/v1beta1`, as kubectl prints it.
const V1BETA1_WARNING: &str =
    "Warning: apps.example.dev/v1beta1 WebApp is deprecated; use apps.example.dev/v1 WebApp";

fn start(version: Version) -> (Server, Kubectl) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    kubectl.ok(&["create", "namespace", "team-a"]);
    (server, kubectl)
}

/// The object through `version` (`v1`, `v1beta1`), as JSON; reads through v1beta1 carry
/// its deprecation warning.
fn get(kubectl: &Kubectl, version: &str, name: &str) -> Value {
    let resource = format!("webapps.{version}.apps.example.dev");
    let run = kubectl.ok(&["get", &resource, name, "-n", "team-a", "-o", "json"]);
    if version == "v1beta1" {
        run.stderr_has(V1BETA1_WARNING);
    } else {
        run.stderr_lacks("Warning:");
    }
    run.json()
}

/// `rich` read through v1 still has its env, paused and three ports, with `replicas`.
fn check_rich_kept(kubectl: &Kubectl, replicas: i64) {
    let web = get(kubectl, "v1", "rich");
    let spec = &web["spec"];
    assert_eq!(spec["replicas"], replicas, "replicas: {web:#}");
    assert_eq!(spec["paused"], true, "paused kept: {web:#}");
    assert_eq!(
        spec["container"]["env"],
        json!([{"name": "MODE", "value": "prod"}]),
        "env kept: {web:#}"
    );
    assert_eq!(
        spec["container"]["ports"],
        json!([
            {"name": "http", "containerPort": 80, "protocol": "TCP"},
            {"name": "https", "containerPort": 443, "protocol": "TCP"},
            {"containerPort": 53, "protocol": "UDP"},
        ]),
        "all ports kept: {web:#}"
    );
}

fn replace_through_v1beta1_keeps_v1_fields(version: Version) {
    let (_server, kubectl) = start(version);
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    let beta = kubectl.write_file("rich-v1beta1.yaml", RICH_V1BETA1);
    kubectl.ok(&["create", "-f", &v1, "-n", "team-a"]);

    kubectl
        .ok(&["replace", "-f", &beta, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich replaced")
        .stderr_has(V1BETA1_WARNING);
    check_rich_kept(&kubectl, 5);
}

fn apply_through_v1beta1_keeps_v1_fields(version: Version) {
    let (_server, kubectl) = start(version);
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    let beta = kubectl.write_file("rich-v1beta1.yaml", RICH_V1BETA1);
    kubectl
        .ok(&["apply", "-f", &v1, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich created");

    kubectl
        .ok(&["apply", "-f", &beta, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich configured")
        .stderr_has(V1BETA1_WARNING);
    check_rich_kept(&kubectl, 5);
}

/// What a v1beta1 client reads, changed and written back (`get -o json`, edit, `replace`),
/// keeps what v1beta1 cannot express; and a v1 WebApp without ports, which v1beta1 reads
/// with its default port 8080, gets no port from being written back.
fn read_and_write_back_through_v1beta1_keeps_v1_fields(version: Version) {
    let (_server, kubectl) = start(version);
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    kubectl.ok(&["create", "-f", &v1, "-n", "team-a"]);
    let mut read = get(&kubectl, "v1beta1", "rich");
    read["spec"]["replicas"] = json!(4);
    let edited = kubectl.write_file("rich-read.json", &read.to_string());
    kubectl
        .ok(&["replace", "-f", &edited])
        .stdout_is("webapp.apps.example.dev/rich replaced");
    check_rich_kept(&kubectl, 4);

    let portless = kubectl.write_file(
        "portless.yaml",
        "apiVersion: apps.example.dev/v1\nkind: WebApp\nmetadata:\n  name: portless\n\
         spec:\n  container:\n    image: nginx:1.27\n",
    );
    kubectl.ok(&["create", "-f", &portless, "-n", "team-a"]);
    let mut read = get(&kubectl, "v1beta1", "portless");
    assert_eq!(read["spec"]["port"], 8080, "{read:#}");
    read["spec"]["replicas"] = json!(2);
    let edited = kubectl.write_file("portless-read.json", &read.to_string());
    kubectl.ok(&["replace", "-f", &edited]);
    let web = get(&kubectl, "v1", "portless");
    assert_eq!(web["spec"]["replicas"], 2, "{web:#}");
    assert_eq!(
        web["spec"]["container"].get("ports"),
        None,
        "no port added: {web:#}"
    );
}

fn each_version_reads_what_the_other_wrote(version: Version) {
    let (_server, kubectl) = start(version);
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    kubectl.ok(&["create", "-f", &v1, "-n", "team-a"]);
    let legacy = kubectl.write_file(
        "legacy.yaml",
        "\
apiVersion: apps.example.dev/v1beta1
kind: WebApp
metadata:
  name: legacy
spec:
  replicas: 3
  image: httpd:2.4
  port: 8081
",
    );
    kubectl.ok(&["create", "-f", &legacy, "-n", "team-a"]);

    // v1beta1 -> v1: `image` is `container.image`, `port` the only container port.
    let web = get(&kubectl, "v1", "legacy");
    assert_eq!(web["apiVersion"], "apps.example.dev/v1");
    assert_eq!(
        web["spec"],
        json!({
            "replicas": 3,
            "container": {
                "image": "httpd:2.4",
                "ports": [{"containerPort": 8081, "protocol": "TCP"}],
            },
            "paused": false,
        }),
        "{web:#}"
    );

    // v1 -> v1beta1: the image, and the first port.
    let web = get(&kubectl, "v1beta1", "rich");
    assert_eq!(web["apiVersion"], "apps.example.dev/v1beta1");
    assert_eq!(
        web["spec"],
        json!({"replicas": 2, "image": "nginx:1.27", "port": 80}),
        "{web:#}"
    );
}
