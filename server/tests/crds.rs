//! CustomResourceDefinitions with kubectl 1.32 and 1.20 against the real `kapi-server`:
//! `kubectl apply` of a CRD stores it with kube's defaults (singular and list kind from the
//! kind, `None` conversion) and its storage version in `status.storedVersions`; `kubectl
//! get crd` lists it; an invalid one is refused with kube's field paths and messages; its
//! group and plural cannot change; `kubectl delete` removes it. (kube's exact answers to
//! the same requests are the CustomResourceDefinition rows of `differential/builtin.yaml`.)
//!
//! The kind it defines, through kubectl once `kubectl wait` sees it Established: found by
//! discovery (`api-resources`, short names), described (`explain`), applied (client- and
//! server-side), listed
//! with its printer columns (`-o wide` for the wide ones), patched, scaled, watched, and
//! gone with its definition.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::{Kubectl, Server, Version, for_both_versions};

const CRONTABS: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              replicas: {type: integer, default: 1}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

fn crds_are_stored_validated_and_deleted(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let manifest = kubectl.write_file("crontabs.yaml", CRONTABS);
    kubectl.ok(&["apply", "-f", &manifest]).stdout_has(
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created",
    );

    let crd = kubectl
        .ok(&["get", "crd", "crontabs.stable.example.com", "-o", "json"])
        .json();
    let names = &crd["spec"]["names"];
    assert_eq!(names["singular"], "crontab", "{crd}");
    assert_eq!(names["listKind"], "CronTabList", "{crd}");
    assert_eq!(crd["spec"]["conversion"]["strategy"], "None", "{crd}");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));
    assert_eq!(crd["metadata"]["generation"], 1, "{crd}");
    let table = kubectl.ok(&["get", "crds"]).table();
    assert_eq!(table.column("NAME"), ["crontabs.stable.example.com"]);
    // kube's default table convertor prints the creation time, not an age.
    assert_eq!(
        table.column("CREATED AT"),
        [crd["metadata"]["creationTimestamp"].as_str().unwrap()],
    );

    // Applying it again with a change to a version keeps the status and bumps the
    // generation.
    let changed = CRONTABS.replace(
        "deprecated: true",
        "deprecated: true\n    deprecationWarning: use v1",
    );
    let manifest = kubectl.write_file("crontabs.yaml", &changed);
    kubectl
        .ok(&["apply", "-f", &manifest])
        .stdout_has("configured");
    let crd = kubectl
        .ok(&["get", "crd", "crontabs.stable.example.com", "-o", "json"])
        .json();
    assert_eq!(crd["metadata"]["generation"], 2, "{crd}");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));

    // The group names the object: it cannot change.
    kubectl
        .fails(&[
            "patch",
            "crd",
            "crontabs.stable.example.com",
            "--type=merge",
            "-p",
            r#"{"spec":{"group":"other.example.com"}}"#,
        ])
        .stderr_has("spec.group: Invalid value: \"other.example.com\": field is immutable");

    // kube's rules, with its paths and messages.
    let invalid = CRONTABS
        .replace("group: stable.example.com", "group: stable")
        .replace("storage: false", "storage: true")
        .replace("scope: Namespaced", "scope: Everywhere")
        .replace("name: crontabs.stable.example.com", "name: crontabs.stable");
    let manifest = kubectl.write_file("invalid.yaml", &invalid);
    kubectl
        .fails(&["apply", "-f", &manifest])
        .stderr_has("The CustomResourceDefinition \"crontabs.stable\" is invalid")
        .stderr_has("spec.group: Invalid value: \"stable\": should be a domain with at least one dot")
        .stderr_has(
            "spec.scope: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Namespaced\"",
        )
        .stderr_has("must have exactly one version marked as storage version");
    kubectl
        .fails(&["get", "crd", "crontabs.stable"])
        .stderr_has("not found");

    kubectl
        .ok(&["delete", "crd", "crontabs.stable.example.com"])
        .stdout_has("deleted");
    kubectl
        .fails(&["get", "crd", "crontabs.stable.example.com"])
        .stderr_has("not found");
}

const NIGHTLY: &str = r#"apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
spec:
  cronSpec: "0 0 * * *"
  extra: {anything: {nested: true}}
"#;

fn defined_kinds_are_served_to_kubectl(version: Version) {
    version.binary();
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    let with_wide_column = CRONTABS
        .replace(
            "- {name: Spec, type: string, jsonPath: .spec.cronSpec}",
            "- {name: Spec, type: string, jsonPath: .spec.cronSpec}\n    - {name: Replicas, type: integer, jsonPath: .spec.replicas, priority: 1}",
        )
        .replacen(
            "replicas: {type: integer, default: 1}",
            "replicas: {type: integer, default: 1}\n              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}",
            1,
        );
    let manifest = kubectl.write_file("crontabs.yaml", &with_wide_column);
    kubectl.ok(&["apply", "-f", &manifest]);
    kubectl
        .ok(&[
            "wait",
            "--for=condition=Established",
            "crd/crontabs.stable.example.com",
            "--timeout=20s",
        ])
        .stdout_has("condition met");
    kubectl
        .ok(&["api-resources", "--api-group=stable.example.com"])
        .stdout_has("crontabs")
        .stdout_has("ct")
        .stdout_has("CronTab");
    // The OpenAPI documents describe it (v3 for kubectl 1.32, v2 for 1.20).
    kubectl
        .ok(&["explain", "crontab.spec"])
        .stdout_has("CronTab")
        .stdout_has("cronSpec")
        .stdout_has("replicas");
    // `metadata` is published as kube publishes it, a reference to ObjectMeta: kubectl
    // prints ObjectMeta's description and its fields.
    kubectl
        .ok(&["explain", "crontabs.metadata"])
        .stdout_has("ObjectMeta is metadata that all persisted resources must have")
        .stdout_has("annotations")
        .stdout_has("creationTimestamp")
        .stdout_has("ownerReferences");

    // An unknown field: kubectl 1.32 asks for strict field validation and is refused;
    // 1.20 refuses it itself from the published OpenAPI v2 schema, and without that check
    // the server prunes it.
    let bogus = NIGHTLY.replace("spec:\n", "spec:\n  bogus: dropped\n");
    let manifest = kubectl.write_file("bogus.yaml", &bogus);
    match version {
        Version::V1_32 => {
            kubectl.fails(&["apply", "-f", &manifest]).stderr_has(
                r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus""#,
            );
        }
        Version::V1_20 => {
            kubectl.fails(&["apply", "-f", &manifest]).stderr_has(
                r#"ValidationError(CronTab.spec): unknown field "bogus" in com.example.stable.v1.CronTab.spec"#,
            );
            kubectl.ok(&["apply", "--validate=false", "-f", &manifest]);
            let object = kubectl.ok(&["get", "ct", "nightly", "-o", "json"]).json();
            assert!(object["spec"].get("bogus").is_none(), "pruned: {object}");
            kubectl.ok(&["delete", "ct", "nightly"]);
        }
    }
    let manifest = kubectl.write_file("nightly.yaml", NIGHTLY);
    kubectl
        .ok(&["apply", "-f", &manifest])
        .stdout_has("crontab.stable.example.com/nightly created");
    // What the schema keeps unknown fields of is kept, and neither kubectl refuses it
    // (1.20 validates against OpenAPI v2, where kube publishes that subtree untyped).
    let object = kubectl.ok(&["get", "ct", "nightly", "-o", "json"]).json();
    assert_eq!(
        object["spec"]["extra"],
        serde_json::json!({"anything": {"nested": true}})
    );
    let table = kubectl.ok(&["get", "ct"]).table();
    assert_eq!(table.column("NAME"), ["nightly"]);
    assert_eq!(table.column("SPEC"), ["0 0 * * *"]);
    let wide = kubectl.ok(&["get", "crontabs", "-o", "wide"]).table();
    assert_eq!(wide.column("REPLICAS"), ["1"], "the schema's default");
    kubectl
        .ok(&["apply", "--server-side", "-f", &manifest])
        .stdout_has("serverside-applied");
    kubectl
        .ok(&[
            "patch",
            "ct",
            "nightly",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ])
        .stdout_has("patched");
    kubectl
        .ok(&["scale", "ct", "nightly", "--replicas=5"])
        .stdout_has("scaled");
    let object = kubectl.ok(&["get", "ct", "nightly", "-o", "json"]).json();
    assert_eq!(object["spec"]["replicas"], 5, "{object}");

    let mut watch = kubectl.spawn(&["get", "ct", "-w"]);
    watch.wait_line(Duration::from_secs(20), "the row of nightly", |l| {
        l.starts_with("nightly ")
    });
    kubectl.ok(&[
        "patch",
        "ct",
        "nightly",
        "--type=merge",
        "-p",
        r#"{"spec":{"cronSpec":"1 * * * *"}}"#,
    ]);
    watch.wait_line(Duration::from_secs(20), "the changed row", |l| {
        l.starts_with("nightly ") && l.contains("1 * * * *")
    });
    drop(watch);

    // Deleting the definition deletes its objects, then it goes (kubectl waits for that).
    kubectl
        .ok(&["delete", "crd", "crontabs.stable.example.com"])
        .stdout_has("deleted");
    kubectl
        .fails(&["get", "crd", "crontabs.stable.example.com"])
        .stderr_has("not found");
}

/// A definition without a validation schema (`x-kubernetes-preserve-unknown-fields` at the
/// root) is published in `/openapi/v2` as kube publishes it: under kube's name, the group
/// reversed (`com.example.free.v1.Looser`), with its group-version-kind (clients wait for
/// it there). It takes about half a second in this debug build on an idle machine (the
/// documents are rendered again); the deadline leaves room for a loaded one.
#[test]
fn a_definition_without_a_schema_is_published() {
    let server = Server::start();
    let client = server.client();
    let definition = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "loosers.free.example.com"},
        "spec": {
            "group": "free.example.com",
            "scope": "Namespaced",
            "names": {"plural": "loosers", "singular": "looser", "kind": "Looser"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }}]
        }
    });
    let created_at = std::time::Instant::now();
    let created = client
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &definition,
        )
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let published = support::wait_for(
        Duration::from_secs(10),
        "the definition in /openapi/v2",
        || format!("{} after {:?}", server.log().tail(10), created_at.elapsed()),
        || {
            let document = client.get("/openapi/v2").ok()?.json();
            document["definitions"]
                .get("com.example.free.v1.Looser")
                .cloned()
        },
    );
    // kube's `buildKubeNative` (and kube-apiserver 1.20.2, asked the same): a root that
    // keeps unknown fields is a bare object in v2, or kubectl would refuse the fields it
    // does not know; e2e's "works for CRD without validation schema" waits for this.
    assert_eq!(
        published,
        json!({
            "type": "object",
            "x-kubernetes-group-version-kind":
                [{"group": "free.example.com", "kind": "Looser", "version": "v1"}],
        }),
    );
}

for_both_versions! {
    crds_are_stored_validated_and_deleted => kubectl_1_32_crds_are_stored_validated_and_deleted,
        kubectl_1_20_crds_are_stored_validated_and_deleted;
    defined_kinds_are_served_to_kubectl => kubectl_1_32_defined_kinds_are_served_to_kubectl,
        kubectl_1_20_defined_kinds_are_served_to_kubectl;
}
