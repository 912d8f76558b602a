//! CustomResourceDefinitions with kubectl 1.32 and 1.20 against the real `kapi-server`:
//! `kubectl apply` of a CRD stores it with kube's defaults (singular and list kind from the
//! kind, `None` conversion) and its storage version in `status.storedVersions`; `kubectl
//! get crd` lists it; an invalid one is refused with kube's field paths and messages; its
//! group and plural cannot change; `kubectl delete` removes it. (kube's exact answers to
//! the same requests are the CustomResourceDefinition rows of `differential/builtin.yaml`.)

mod support;

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
    assert_eq!(table.column("CREATED AT").len(), 1);

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

for_both_versions! {
    crds_are_stored_validated_and_deleted => kubectl_1_32_crds_are_stored_validated_and_deleted,
        kubectl_1_20_crds_are_stored_validated_and_deleted;
}
