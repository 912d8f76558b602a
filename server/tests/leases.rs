//! Leases (`coordination.k8s.io/v1`), as controllers' leader election uses them: the
//! Python client's typed `CoordinationV1Api` creates, reads, renews and deletes one, a
//! renewal from a stale resourceVersion is a 409, invalid specs are 422 with kube's field
//! paths; kubectl 1.32 and 1.20 list them across namespaces with their holder.

use crate::support;

use serde_json::json;
use support::python::Script;
use support::{Kubectl, Server, Version, for_both_versions};

#[test]
fn the_python_client_elects_with_a_lease() {
    let server = Server::start();
    let lines = Script::run("leases.py", &server);
    let step = |name: &str| {
        (lines.iter())
            .find(|line| line["step"] == name)
            .unwrap_or_else(|| panic!("no step {name} in {lines:?}"))
            .clone()
    };
    assert_eq!(
        step("read"),
        json!({"step": "read", "holder": "controller-a", "duration": 15, "renewMicros": true})
    );
    assert_eq!(step("renewed")["moved"], true);
    assert_eq!(
        step("conflict")["message"],
        "Operation cannot be fulfilled on leases.coordination.k8s.io \"webapp-controller\": \
         the object has been modified; please apply your changes to the latest version and \
         try again"
    );
    assert_eq!(
        step("invalid"),
        json!({"step": "invalid",
            "message": "Lease.coordination.k8s.io \"invalid\" is invalid: \
                [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, \
                spec.leaseTransitions: Invalid value: -1: must to greater or equal than 0]",
            "fields": ["spec.leaseDurationSeconds", "spec.leaseTransitions"]})
    );
    step("deleted");
}

fn kubectl_lists_leases(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);
    kubectl.ok(&["create", "namespace", "controllers"]);
    let manifest = kubectl.write_file(
        "lease.yaml",
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: webapp-controller\n  \
         namespace: controllers\nspec:\n  holderIdentity: controller-a\n  \
         leaseDurationSeconds: 15\n",
    );
    kubectl.ok(&["apply", "-f", &manifest]);
    let table = kubectl.ok(&["get", "leases", "-A"]).table();
    assert_eq!(
        table.header,
        ["NAMESPACE", "NAME", "HOLDER", "AGE"],
        "{table:?}"
    );
    let row = table
        .row_where("NAME", "webapp-controller")
        .expect("the lease's row");
    assert_eq!(
        (row["NAMESPACE"], row["HOLDER"]),
        ("controllers", "controller-a")
    );
    kubectl
        .ok(&[
            "get",
            "lease",
            "webapp-controller",
            "-n",
            "controllers",
            "-o",
            "jsonpath={.spec.leaseDurationSeconds}",
        ])
        .stdout_is("15");
}

for_both_versions! {
    kubectl_lists_leases => kubectl_1_32_lists_leases, kubectl_1_20_lists_leases;
}
