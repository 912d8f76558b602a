//! Real clients on the built-in kinds controllers use most (Pods, Services, Secrets,
//! Deployments, Jobs), as a controller's tests drive them against envtest: the Python
//! client's typed APIs (`tests/python/builtin.py`) and kube-rs on `k8s-openapi`'s types,
//! each creating, reading, listing by label, patching (strategic merge), replacing (and a
//! stale replace refused), watching and deleting an object of each kind.

use crate::support;

use std::fmt::Debug;

use k8s_openapi::ByteString;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodSpec, PodTemplateSpec, Secret, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use support::Server;
use support::python::Script;

#[test]
fn the_python_client_drives_the_everyday_kinds() {
    let server = Server::start();
    let lines = Script::run("builtin.py", &server);
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        ["Pod", "Service", "Secret", "Deployment", "Job"],
        "{lines:#?}"
    );
    // A delete answers as kube's store of the kind does: Pods and Services with the
    // object (`ReturnDeletedObject`), the others with a Status.
    for (line, (resource, name, deleted)) in lines.iter().zip([
        ("pods", "web", "Pod"),
        ("services", "web", "Service"),
        ("secrets", "creds", "Status"),
        ("deployments.apps", "web", "Status"),
        ("jobs.batch", "once", "Status"),
    ]) {
        assert_eq!(line["deleted"], deleted, "{line}");
        assert_eq!(
            line["conflict"],
            format!(
                "Operation cannot be fulfilled on {resource} {name:?}: the object has been \
                 modified; please apply your changes to the latest version and try again"
            ),
            "{line}"
        );
        assert_eq!(line["uid"].as_str().map(str::len), Some(36), "{line}");
    }
}

fn labels() -> Option<std::collections::BTreeMap<String, String>> {
    Some([("app".to_owned(), "web".to_owned())].into())
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        labels: labels(),
        ..ObjectMeta::default()
    }
}

/// A pod spec restarting its containers by `restart_policy` (a Job's pods may not restart
/// always, a Deployment's must).
fn pod_spec(restart_policy: &str) -> PodSpec {
    PodSpec {
        containers: vec![Container {
            name: "app".into(),
            image: Some("nginx:1.27".into()),
            ..Container::default()
        }],
        restart_policy: Some(restart_policy.into()),
        ..PodSpec::default()
    }
}

fn template(restart_policy: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: labels(),
            ..ObjectMeta::default()
        }),
        spec: Some(pod_spec(restart_policy)),
    }
}

/// One object's life through kube-rs: create, get, list by label, a strategic merge
/// `patch` that `changed` sees, a replace and a stale one (409), delete, and gone (404).
async fn lifecycle<K>(api: Api<K>, object: K, patch: Value, changed: impl Fn(&K) -> bool)
where
    K: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
{
    let created = api.create(&PostParams::default(), &object).await.unwrap();
    let name = created.meta().name.clone().unwrap();
    assert!(created.meta().uid.is_some(), "{created:?}");
    let got = api.get(&name).await.unwrap();
    assert_eq!(got.meta().labels, labels());
    let listed = api
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    let names: Vec<_> = listed.items.iter().map(|o| o.meta().name.clone()).collect();
    assert_eq!(names, [Some(name.clone())]);
    let patched = (api.patch(&name, &PatchParams::default(), &Patch::Strategic(patch)))
        .await
        .unwrap();
    assert!(changed(&patched), "{patched:?}");
    let mut replace = patched.clone();
    replace.meta_mut().annotations = Some([("replaced".to_owned(), "yes".to_owned())].into());
    let replaced = api
        .replace(&name, &PostParams::default(), &replace)
        .await
        .unwrap();
    assert_eq!(replaced.meta().annotations, replace.meta().annotations);
    let mut stale = replaced.clone();
    stale.meta_mut().resource_version = created.meta().resource_version.clone();
    match api.replace(&name, &PostParams::default(), &stale).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 409, "{status:?}"),
        other => panic!("a stale replace of {name}: {other:?}"),
    }
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    match api.get(&name).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 404, "{status:?}"),
        other => panic!("{name} after its delete: {other:?}"),
    }
}

#[test]
fn kube_rs_drives_the_everyday_kinds_with_k8s_openapi_types() {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = kube::Config::new(server.url().parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let api = || client.clone();
        let pod = Pod {
            metadata: meta("web"),
            spec: Some(pod_spec("Never")),
            ..Pod::default()
        };
        let patch = json!({"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}});
        lifecycle(
            Api::<Pod>::namespaced(api(), "default"),
            pod,
            patch,
            |p: &Pod| {
                let containers = &p.spec.as_ref().unwrap().containers;
                containers
                    .iter()
                    .map(|c| c.image.as_deref())
                    .collect::<Vec<_>>()
                    == [Some("nginx:1.28")]
            },
        )
        .await;

        let service = Service {
            metadata: meta("web"),
            spec: Some(ServiceSpec {
                selector: labels(),
                ports: Some(vec![ServicePort {
                    name: Some("http".into()),
                    port: 80,
                    target_port: Some(IntOrString::Int(8080)),
                    ..ServicePort::default()
                }]),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        };
        let patch =
            json!({"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}});
        lifecycle(
            Api::<Service>::namespaced(api(), "default"),
            service,
            patch,
            |s: &Service| {
                // Merged by port, the patch's first (kube's strategic merge order).
                let ports = s.spec.as_ref().unwrap().ports.as_ref().unwrap();
                let names: Vec<_> = ports.iter().filter_map(|p| p.name.as_deref()).collect();
                names == ["https", "http"]
            },
        )
        .await;

        let secret = Secret {
            metadata: meta("creds"),
            data: Some([("user".to_owned(), ByteString(b"admin".to_vec()))].into()),
            ..Secret::default()
        };
        let patch = json!({"data": {"password": "c2VjcmV0"}});
        lifecycle(
            Api::<Secret>::namespaced(api(), "default"),
            secret,
            patch,
            |s: &Secret| {
                let data = s.data.as_ref().unwrap();
                data.get("password") == Some(&ByteString(b"secret".to_vec()))
                    && data.contains_key("user")
            },
        )
        .await;

        let deployment = Deployment {
            metadata: meta("web"),
            spec: DeploymentSpec {
                replicas: Some(2),
                selector: LabelSelector {
                    match_labels: labels(),
                    ..LabelSelector::default()
                },
                template: template("Always"),
                ..DeploymentSpec::default()
            },
            ..Deployment::default()
        };
        let patch = json!({"spec": {"replicas": 3}});
        lifecycle(
            Api::<Deployment>::namespaced(api(), "default"),
            deployment,
            patch,
            |d: &Deployment| d.spec.replicas == Some(3),
        )
        .await;

        let job = Job {
            metadata: meta("once"),
            spec: Some(JobSpec {
                template: template("Never"),
                ..JobSpec::default()
            }),
            ..Job::default()
        };
        let patch = json!({"spec": {"parallelism": 2}});
        lifecycle(
            Api::<Job>::namespaced(api(), "default"),
            job,
            patch,
            |j: &Job| j.spec.as_ref().unwrap().parallelism == Some(2),
        )
        .await;
    });
}
