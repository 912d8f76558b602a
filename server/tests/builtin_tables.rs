//! kube's tables and refusals of its built-in kinds, through kubectl: `kubectl get` and
//! `get -o wide` print kube's columns and cells (its printers, computed on the server:
//! READY, STATUS and RESTARTS of Pods, a Deployment's replicas, a Service's ports, a Job's
//! completions), and an invalid object is refused with kube's field paths and messages as
//! kubectl shows them. The column-by-column comparison with kube is the differential
//! tables' (`differential/tables.yaml`, `differential/validation.yaml`).

use crate::support;

use support::{Kubectl, Server, Version};

support::for_both_versions! {
    kubectl_prints_and_refuses_as_kube =>
        kubectl_1_32_prints_and_refuses_as_kube,
        kubectl_1_20_prints_and_refuses_as_kube;
}

/// The whitespace-separated fields of each line of kubectl's table output.
fn table(output: &str) -> Vec<Vec<String>> {
    (output.lines())
        .map(|line| {
            // Columns are separated by two or more spaces; a cell may hold one (`0/1 of 3`).
            let mut cells = Vec::new();
            for cell in line.split("  ").map(str::trim).filter(|c| !c.is_empty()) {
                cells.push(cell.to_owned());
            }
            cells
        })
        .collect()
}

/// `kubectl get <what> -o wide` as rows of cells, the header first.
fn get_wide(kubectl: &Kubectl, what: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["get"];
    args.extend(what);
    args.extend(["-o", "wide"]);
    table(&kubectl.ok(&args).stdout)
}

fn kubectl_prints_and_refuses_as_kube(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);

    kubectl.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    let rows = get_wide(&kubectl, &["deployment", "web"]);
    assert_eq!(
        rows[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(rows[1][..4], ["web", "0/2", "0", "0"]);
    assert_eq!(rows[1][5..], ["nginx", "nginx:1.27", "app=web"]);
    // The plain table leaves the wide columns out.
    let narrow = table(&kubectl.ok(&["get", "deployment", "web"]).stdout);
    assert_eq!(
        narrow[0],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );

    kubectl.ok(&["run", "one", "--image=busybox", "--restart=Never"]);
    let rows = get_wide(&kubectl, &["pod", "one"]);
    assert_eq!(
        rows[0],
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ]
    );
    assert_eq!(rows[1][..4], ["one", "0/1", "Pending", "0"]);
    assert_eq!(rows[1][5..], ["<none>", "<none>", "<none>", "<none>"]);

    kubectl.ok(&[
        "create",
        "service",
        "clusterip",
        "db",
        "--tcp=5432:5432",
        "--tcp=5433:5433",
    ]);
    let rows = get_wide(&kubectl, &["service", "db"]);
    assert_eq!(
        rows[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ]
    );
    assert_eq!(rows[1][..2], ["db", "ClusterIP"]);
    assert_eq!(rows[1][3..5], ["<none>", "5432/TCP,5433/TCP"]);
    assert_eq!(rows[1][6], "app=db");

    kubectl.ok(&["create", "job", "once", "--image=busybox"]);
    let rows = get_wide(&kubectl, &["job", "once"]);
    // kubectl prints the server's columns, both versions: kube 1.28+ has the Job's status.
    assert_eq!(rows[0][..4], ["NAME", "STATUS", "COMPLETIONS", "DURATION"]);
    assert_eq!(rows[1][..3], ["once", "Running", "0/1"]);

    kubectl.ok(&[
        "create",
        "secret",
        "generic",
        "keys",
        "--from-literal=a=1",
        "--from-literal=b=2",
    ]);
    let rows = get_wide(&kubectl, &["secret", "keys"]);
    assert_eq!(rows[0], ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(rows[1][..3], ["keys", "Opaque", "2"]);

    // Kinds kube 1.20 did not serve as they are now (no differential row): a storage
    // capacity (no age column), and the default class's name.
    let manifest = kubectl.write_file(
        "capacity.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata:\n  name: fast-zone-a\nstorageClassName: fast\ncapacity: 1536Mi\n---\napiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata:\n  name: unreported\nstorageClassName: fast\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\n  annotations:\n    storageclass.beta.kubernetes.io/is-default-class: \"true\"\nprovisioner: example.com/disk\n",
    );
    kubectl.ok(&["apply", "-f", &manifest]);
    let rows = get_wide(&kubectl, &["csistoragecapacities"]);
    assert_eq!(rows[0], ["NAME", "STORAGECLASSNAME", "CAPACITY"]);
    assert_eq!(rows[1], ["fast-zone-a", "fast", "1536Mi"]);
    assert_eq!(rows[2], ["unreported", "fast", "<unset>"]);
    let rows = get_wide(&kubectl, &["storageclass", "fast"]);
    assert_eq!(rows[1][0], "fast (default)");

    // Refusals read as kube's.
    let manifest = kubectl.write_file(
        "bad.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: -1\n  selector:\n    matchLabels:\n      app: a\n  template:\n    metadata:\n      labels:\n        app: b\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: Web_1\n",
    );
    let refused = kubectl.fails(&["apply", "-f", &manifest]);
    for part in [
        "The Deployment \"bad\" is invalid",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`",
        "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
        "spec.template.spec.containers[0].image: Required value",
        "spec.template.spec.containers[0].name: Invalid value: \"Web_1\"",
    ] {
        assert!(
            refused.stderr.contains(part),
            "{part:?} in:\n{}",
            refused.stderr
        );
    }
    // An update a Pod may not take.
    let refused = kubectl.fails(&[
        "patch",
        "pod",
        "one",
        "--type=merge",
        "-p",
        r#"{"spec":{"restartPolicy":"Always"}}"#,
    ]);
    assert!(
        refused
            .stderr
            .contains("spec: Forbidden: pod updates may not change fields other than"),
        "{}",
        refused.stderr
    );
}
