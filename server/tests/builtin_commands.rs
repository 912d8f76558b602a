//! kubectl's everyday commands on the built-in kinds, with both kubectls where their
//! versions can: the secrets `create secret tls` and `docker-registry` make, `create
//! ingress` and `priorityclass`, `autoscale`, and the `set image`, `set env`, `set
//! resources`, `scale`, `label` and `annotate` of a Deployment leave what kube stores for
//! them. (kubectl 1.20 writes a CronJob and a PodDisruptionBudget in versions kube no longer
//! serves, batch/v1beta1 and policy/v1beta1: those are kubectl 1.32's alone.)

use crate::support;

use base64::Engine as _;
use serde_json::{Value, json};
use support::pki::Pki;
use support::{Kubectl, Server, Version};

support::for_both_versions! {
    kubectl_commands_write_what_kube_stores =>
        kubectl_1_32_commands_write_what_kube_stores,
        kubectl_1_20_commands_write_what_kube_stores;
}

fn get(kubectl: &Kubectl, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend(what);
    args.extend(["-o", "json"]);
    kubectl.ok(&args).json()
}

fn decoded(value: &Value) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value.as_str().expect("base64 data"))
        .expect("base64");
    String::from_utf8(bytes).expect("text")
}

fn kubectl_commands_write_what_kube_stores(version: Version) {
    let server = Server::start();
    let kubectl = Kubectl::new(version, &server);

    let pki = Pki::new();
    let (cert, key) = pki.client("web.example.com", None);
    let (cert, key) = (
        cert.to_string_lossy().into_owned(),
        key.to_string_lossy().into_owned(),
    );
    kubectl.ok(&[
        "create", "secret", "tls", "web-tls", "--cert", &cert, "--key", &key,
    ]);
    let secret = get(&kubectl, &["secret", "web-tls"]);
    assert_eq!(secret["type"], "kubernetes.io/tls");
    assert!(decoded(&secret["data"]["tls.crt"]).contains("BEGIN CERTIFICATE"));
    assert!(decoded(&secret["data"]["tls.key"]).contains("PRIVATE KEY"));

    kubectl.ok(&[
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server=registry.example.com",
        "--docker-username=robot",
        "--docker-password=secret",
    ]);
    let secret = get(&kubectl, &["secret", "pull"]);
    assert_eq!(secret["type"], "kubernetes.io/dockerconfigjson");
    let config: Value =
        serde_json::from_str(&decoded(&secret["data"][".dockerconfigjson"])).unwrap();
    assert_eq!(config["auths"]["registry.example.com"]["username"], "robot");

    kubectl.ok(&[
        "create",
        "ingress",
        "web",
        "--class=nginx",
        "--rule=web.example.com/=web:80,tls=web-tls",
    ]);
    let ingress = get(&kubectl, &["ingress", "web"]);
    assert_eq!(ingress["spec"]["ingressClassName"], "nginx");
    let rule = &ingress["spec"]["rules"][0];
    assert_eq!(rule["host"], "web.example.com");
    assert_eq!(
        rule["http"]["paths"][0],
        json!({"path": "/", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 80}}}})
    );
    assert_eq!(
        ingress["spec"]["tls"],
        json!([{"hosts": ["web.example.com"], "secretName": "web-tls"}])
    );

    kubectl.ok(&[
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=important",
    ]);
    let class = get(&kubectl, &["priorityclass", "high"]);
    // `globalDefault: false` is left out, as kube's `omitempty` leaves it.
    assert_eq!(
        (&class["value"], &class["globalDefault"]),
        (&json!(1000), &Value::Null)
    );
    assert_eq!(
        class["preemptionPolicy"], "PreemptLowerPriority",
        "kube's default"
    );

    kubectl.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    kubectl.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--min=2",
        "--max=5",
        "--cpu-percent=80",
    ]);
    let hpa = get(
        &kubectl,
        &["horizontalpodautoscalers.v1.autoscaling", "web"],
    );
    assert_eq!(hpa["spec"]["minReplicas"], 2);
    assert_eq!(hpa["spec"]["maxReplicas"], 5);
    assert_eq!(hpa["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(
        hpa["spec"]["scaleTargetRef"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
    );

    kubectl.ok(&["set", "image", "deployment/web", "nginx=nginx:1.28"]);
    kubectl.ok(&["set", "env", "deployment/web", "MODE=prod"]);
    kubectl.ok(&[
        "set",
        "resources",
        "deployment/web",
        "--limits=cpu=200m,memory=128Mi",
        "--requests=cpu=100m",
    ]);
    kubectl.ok(&["scale", "deployment", "web", "--replicas=3"]);
    kubectl.ok(&["label", "deployment", "web", "tier=front"]);
    kubectl.ok(&["annotate", "deployment", "web", "owner=team-a"]);
    let deployment = get(&kubectl, &["deployment", "web"]);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.28");
    assert_eq!(container["env"], json!([{"name": "MODE", "value": "prod"}]));
    assert_eq!(
        container["resources"],
        json!({"limits": {"cpu": "200m", "memory": "128Mi"}, "requests": {"cpu": "100m"}})
    );
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(deployment["metadata"]["labels"]["tier"], "front");
    assert_eq!(deployment["metadata"]["annotations"]["owner"], "team-a");
    // Each command but `label` changed the template, the replicas or (which kube's
    // Deployment strategy counts too: ReplicaSets copy them) the annotations.
    assert_eq!(deployment["metadata"]["generation"], 6, "{deployment}");

    if version == Version::V1_32 {
        kubectl.ok(&[
            "create",
            "cronjob",
            "nightly",
            "--image=busybox",
            "--schedule=0 3 * * *",
        ]);
        kubectl.ok(&["create", "job", "now", "--from=cronjob/nightly"]);
        let job = get(&kubectl, &["job", "now"]);
        assert_eq!(
            job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
            "manual"
        );
        assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
        assert_eq!(
            job["spec"]["template"]["spec"]["restartPolicy"],
            "OnFailure"
        );

        kubectl.ok(&[
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=1",
        ]);
        let budget = get(&kubectl, &["pdb", "web"]);
        assert_eq!(budget["spec"]["minAvailable"], 1);
        assert_eq!(
            budget["spec"]["selector"],
            json!({"matchLabels": {"app": "web"}})
        );
    }
}
