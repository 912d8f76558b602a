//! Hub conversion end to end, with the real server and kubectl 1.32: an object written
//! through `apps.example.dev/v1` and updated through the deprecated `v1beta1`, which cannot
//! express `env`, `paused` or more than one port, keeps them (ARCHITECTURE.md, "Hub
//! conversion"); each version reads what the other wrote, with the fields mapped.

mod support;

use serde_json::{Value, json};
use support::{Kubectl, Server, Version};

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

fn start() -> (Server, Kubectl) {
    Version::V1_32.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    kubectl.ok(&["create", "namespace", "team-a"]);
    (server, kubectl)
}

/// The object through `version` (`v1`, `v1beta1`), as JSON.
fn get(kubectl: &Kubectl, version: &str, name: &str) -> Value {
    let resource = format!("webapps.{version}.apps.example.dev");
    kubectl
        .ok(&["get", &resource, name, "-n", "team-a", "-o", "json"])
        .json()
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

#[test]
fn kubectl_1_32_replace_through_v1beta1_keeps_v1_fields() {
    let (_server, kubectl) = start();
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    let beta = kubectl.write_file("rich-v1beta1.yaml", RICH_V1BETA1);
    kubectl.ok(&["create", "-f", &v1, "-n", "team-a"]);

    kubectl
        .ok(&["replace", "-f", &beta, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich replaced");
    check_rich_kept(&kubectl, 5);
}

#[test]
fn kubectl_1_32_apply_through_v1beta1_keeps_v1_fields() {
    let (_server, kubectl) = start();
    let v1 = kubectl.write_file("rich-v1.yaml", RICH_V1);
    let beta = kubectl.write_file("rich-v1beta1.yaml", RICH_V1BETA1);
    kubectl
        .ok(&["apply", "-f", &v1, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich created");

    kubectl
        .ok(&["apply", "-f", &beta, "-n", "team-a"])
        .stdout_is("webapp.apps.example.dev/rich configured");
    check_rich_kept(&kubectl, 5);
}

#[test]
fn kubectl_1_32_each_version_reads_what_the_other_wrote() {
    let (_server, kubectl) = start();
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
