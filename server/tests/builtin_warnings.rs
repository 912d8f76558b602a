//! kube's warnings on its built-in kinds (its strategies' `WarningsOnCreate` and
//! `WarningsOnUpdate`, kube 1.32), as kubectl prints them (`Warning: ...`): deprecated
//! node labels and annotations, duplicate environment variables and ports, fractions of a
//! byte, names that are not DNS labels; a template's again when an update changes the
//! spec, not when it changes a label; none on a Pod's updates.

use crate::support;

use support::{Kubectl, Server, Version};

support::for_both_versions! {
    kubectl_shows_kubes_warnings =>
        kubectl_1_32_shows_kubes_warnings,
        kubectl_1_20_shows_kubes_warnings;
}

/// The `Warning:` lines of a run, without the prefix.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("Warning: "))
        .collect()
}

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web.v1
  annotations:
    scheduler.alpha.kubernetes.io/critical-pod: ""
spec:
  nodeSelector:
    beta.kubernetes.io/os: linux
  terminationGracePeriodSeconds: -5
  volumes:
  - name: repo
    gitRepo: {repository: "https://example.com/app.git"}
  containers:
  - name: app
    image: nginx:1.27
    env:
    - {name: MODE, value: a}
    - {name: MODE, value: b}
    - {name: PATH, value: /bin}
    - {name: PATH, value: "$(PATH):/opt/bin"}
    ports:
    - {containerPort: 80}
    - {containerPort: 80, name: http}
    resources:
      limits: {memory: 1500m}
  - name: side
    image: busybox
    ports:
    - {containerPort: 80, hostPort: 8080}
"#;

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: failure-domain.beta.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
      containers:
      - name: app
        image: nginx:1.27
        resources:
          requests: {ephemeral-storage: 100m}
"#;

fn kubectl_shows_kubes_warnings(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);

    let pod = kubectl.write_file("pod.yaml", POD);
    let run = kubectl.ok(&["create", "-f", &pod]);
    assert_eq!(
        warnings(&run.stderr),
        [
            r#"metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"#,
            r#"spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead"#,
            r#"metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead"#,
            "spec.volumes[0].gitRepo: deprecated in v1.11",
            r#"spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer"#,
            // The request kube defaults from the limit.
            r#"spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer"#,
            r#"spec.containers[0].env[1]: hides previous definition of "MODE", which may be dropped when using apply"#,
            "spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]",
            "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[0]",
            "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[1]",
            "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
        ],
        "{}",
        run.stderr
    );
    // None on a Pod's updates.
    let run = kubectl.ok(&["label", "pod", "web.v1", "tier=front"]);
    assert_eq!(warnings(&run.stderr), Vec::<&str>::new(), "{}", run.stderr);

    let deployment = kubectl.write_file("deployment.yaml", DEPLOYMENT);
    let template_warnings = [
        r#"spec.template.spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
        "spec.template.spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
        r#"spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "100m" is invalid, must be an integer"#,
    ];
    let run = kubectl.ok(&["apply", "-f", &deployment]);
    assert_eq!(warnings(&run.stderr), template_warnings, "{}", run.stderr);
    // A label moves no generation: no warnings; a new image does: the template's again.
    let run = kubectl.ok(&["label", "deployment", "web", "tier=front"]);
    assert_eq!(warnings(&run.stderr), Vec::<&str>::new(), "{}", run.stderr);
    let run = kubectl.ok(&["set", "image", "deployment/web", "app=nginx:1.28"]);
    assert_eq!(warnings(&run.stderr), template_warnings, "{}", run.stderr);

    let service = kubectl.write_file(
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n    service.kubernetes.io/topology-aware-hints: auto\nspec:\n  externalName: web.example.com\n  ports:\n  - port: 80\n",
    );
    let run = kubectl.ok(&["create", "-f", &service]);
    assert_eq!(
        warnings(&run.stderr),
        [
            "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead",
            r#"spec.externalName is ignored when spec.type is not "ExternalName""#,
        ],
        "{}",
        run.stderr
    );

    let ingress = kubectl.write_file(
        "ingress.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n  annotations:\n    kubernetes.io/ingress.class: nginx\nspec:\n  defaultBackend:\n    service:\n      name: web\n      port:\n        number: 80\n",
    );
    let run = kubectl.ok(&["create", "-f", &ingress]);
    assert_eq!(
        warnings(&run.stderr),
        [
            r#"annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead"#
        ],
        "{}",
        run.stderr
    );

    let claim = kubectl.write_file(
        "claim.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  annotations:\n    volume.beta.kubernetes.io/storage-class: fast\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1500m\n",
    );
    let run = kubectl.ok(&["create", "-f", &claim]);
    assert_eq!(
        warnings(&run.stderr),
        [
            r#"metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead"#,
            r#"spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer"#,
        ],
        "{}",
        run.stderr
    );
}

/// A PersistentVolume's: its recycling, deprecated node labels and plugins.
#[test]
fn persistent_volumes_are_warned_as_kube_warns() {
    let server = Server::start();
    let kubectl = Kubectl::new(Version::V1_32, &server);
    let volume = kubectl.write_file(
        "volume.yaml",
        "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: old\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  persistentVolumeReclaimPolicy: Recycle\n  glusterfs: {endpoints: gluster, path: vol}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n        - {key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [a]}\n",
    );
    let run = kubectl.ok(&["create", "-f", &volume]);
    assert_eq!(
        warnings(&run.stderr),
        [
            "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
            r#"spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
            "spec.glusterfs: deprecated in v1.25, non-functional in v1.26+",
        ],
        "{}",
        run.stderr
    );
}
