//! kube's two conformance scenarios of the policies' API operations
//! (kubernetes/kubernetes `test/e2e/apimachinery/validatingadmissionpolicy.go`, 1.30 and
//! later: `should support ValidatingAdmissionPolicy API operations` and
//! `...Binding API operations`), followed step by step with kube-rs against the real
//! server: discovery, three creates from one `generateName` template, get, list by label,
//! a watch from the list's resourceVersion, a merge patch and an update (seen by the
//! watch), the policy's `/status` read, patched and updated, a delete, and a delete of the
//! labelled collection.

use std::fmt::Debug;

use futures_util::TryStreamExt;
use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::Server;

const GROUP_VERSION: &str = "admissionregistration.k8s.io/v1";

/// What kube's test asks of discovery: the group, its v1, and `resources` in it.
async fn discovered(client: &kube::Client, resources: &[&str]) {
    let groups = client.list_api_groups().await.unwrap();
    let group = (groups.groups.iter())
        .find(|g| g.name == "admissionregistration.k8s.io")
        .expect("the group in /apis");
    assert!(group.versions.iter().any(|v| v.version == "v1"));
    let listed = client
        .list_api_group_resources(GROUP_VERSION)
        .await
        .unwrap();
    for resource in resources {
        assert!(
            listed.resources.iter().any(|r| r.name == *resource),
            "{resource}: {:?}",
            listed.resources
        );
    }
}

/// The steps both scenarios share, on `api` with three objects made from `template`
/// (labelled `label`): `patch` is the merge patch kube sends, `patched` what it checks of
/// the result; `update` what it changes before its update, `updated` what it checks.
async fn operations<K>(
    api: &Api<K>,
    template: K,
    label: &str,
    patch: Value,
    patched: impl Fn(&K) -> bool,
    update: impl Fn(&mut K),
    updated: impl Fn(&K) -> bool,
) -> K
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    let pp = PostParams::default();
    api.create(&pp, &template).await.unwrap();
    api.create(&pp, &template).await.unwrap();
    let created = api.create(&pp, &template).await.unwrap();
    let name = created.meta().name.clone().unwrap();
    let read = api.get(&name).await.unwrap();
    assert_eq!(read.meta().uid, created.meta().uid);
    let version: u64 = (read.meta().resource_version.as_deref().unwrap())
        .parse()
        .expect("a resourceVersion kube can compare");
    let list = api
        .list(&ListParams::default().labels(label))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 3);
    let since = list.metadata.resource_version.clone().unwrap();
    let watch = (api.watch(&WatchParams::default().labels(label), &since))
        .await
        .unwrap();
    let done = api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert!(patched(&done), "{done:?}");
    assert!(
        (done.meta().resource_version.as_deref().unwrap())
            .parse::<u64>()
            .unwrap()
            > version
    );
    // kube retries its update on conflicts; nothing else writes here.
    let mut changed = api.get(&name).await.unwrap();
    (changed.meta_mut().annotations.get_or_insert_default())
        .insert("updated".into(), "true".into());
    update(&mut changed);
    let done = api.replace(&name, &pp, &changed).await.unwrap();
    assert!(updated(&done), "{done:?}");
    assert_eq!(done.meta().annotations.as_ref().unwrap()["updated"], "true");
    // Every event is a modification, until one carries the patch's annotation.
    let mut events = Box::pin(watch);
    let seen = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Some(event) = events.try_next().await.unwrap() {
            match event {
                WatchEvent::Modified(object) => {
                    let annotations = object.meta().annotations.clone().unwrap_or_default();
                    if annotations.get("patched").is_some_and(|v| v == "true") {
                        return true;
                    }
                }
                other => panic!("a modification, got {other:?}"),
            }
        }
        false
    })
    .await;
    assert_eq!(seen, Ok(true), "the watch saw the patch");
    created
}

/// Deletes `name`, then the labelled collection, as kube's scenario ends.
async fn deletes<K>(api: &Api<K>, name: &str, label: &str)
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    api.delete(name, &DeleteParams::default()).await.unwrap();
    match api.get(name).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 404),
        other => panic!("deleted, got {other:?}"),
    }
    let lp = ListParams::default().labels(label);
    assert_eq!(api.list(&lp).await.unwrap().items.len(), 2);
    api.delete_collection(&DeleteParams::default(), &lp)
        .await
        .unwrap();
    assert!(api.list(&lp).await.unwrap().items.is_empty());
}

fn template<K: DeserializeOwned>(kind: &str, generate: &str, label: &str, spec: Value) -> K {
    let (key, value) = label.split_once('=').unwrap();
    serde_json::from_value(json!({"apiVersion": GROUP_VERSION, "kind": kind,
        "metadata": {"generateName": generate, "labels": {key: value}}, "spec": spec}))
    .unwrap()
}

#[test]
fn kubes_api_operations_scenarios() {
    let server = Server::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = kube::Config::new(server.url().parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();

        // ValidatingAdmissionPolicy, with its status.
        discovered(
            &client,
            &[
                "validatingadmissionpolicies",
                "validatingadmissionpolicies/status",
            ],
        )
        .await;
        let api: Api<ValidatingAdmissionPolicy> = Api::all(client.clone());
        let label = "example-e2e-vap-label=vap";
        let spec = json!({"validations": [{"expression": "object.spec.replicas <= 100"}],
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
                "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]}});
        let failure = |p: &ValidatingAdmissionPolicy| p.spec.as_ref()?.failure_policy.clone();
        let created = operations(
            &api,
            template("ValidatingAdmissionPolicy", "e2e-example-vap-", label, spec),
            label,
            json!({"metadata": {"annotations": {"patched": "true"}},
                "spec": {"failurePolicy": "Ignore"}}),
            |p| failure(p).as_deref() == Some("Ignore"),
            |p| p.spec.as_mut().unwrap().failure_policy = Some("Fail".into()),
            |p| failure(p).as_deref() == Some("Fail"),
        )
        .await;
        let name = created.metadata.name.clone().unwrap();
        let status = api.get_status(&name).await.unwrap();
        assert_eq!(status.metadata.uid, created.metadata.uid);
        let conditions = |p: &ValidatingAdmissionPolicy| -> Vec<String> {
            let status = p.status.as_ref();
            (status
                .and_then(|s| s.conditions.as_ref())
                .into_iter()
                .flatten())
            .map(|c| c.type_.clone())
            .collect()
        };
        let patch = json!({"status": {"conditions": [{"type": "PatchStatusFailed",
            "status": "False", "reason": "e2e", "message": "Set from an e2e test",
            "lastTransitionTime": "2024-01-01T00:00:00Z"}]}});
        let patched = (api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch)))
            .await
            .unwrap();
        assert!(conditions(&patched).contains(&"PatchStatusFailed".to_owned()));
        let mut policy = api.get(&name).await.unwrap();
        let condition = serde_json::from_value(json!({"type": "StatusUpdateFailed",
            "status": "False", "reason": "E2E", "message": "Set from an e2e test",
            "lastTransitionTime": "2024-01-01T00:00:01Z"}))
        .unwrap();
        (policy
            .status
            .get_or_insert_default()
            .conditions
            .get_or_insert_default())
        .push(condition);
        let updated = (api.replace_status(&name, &PostParams::default(), &policy))
            .await
            .unwrap();
        assert!(conditions(&updated).contains(&"StatusUpdateFailed".to_owned()));
        deletes(&api, &name, label).await;

        // ValidatingAdmissionPolicyBinding.
        discovered(&client, &["validatingadmissionpolicybindings"]).await;
        let api: Api<ValidatingAdmissionPolicyBinding> = Api::all(client.clone());
        let label = "example-e2e-vapb-label=vapb";
        let spec = json!({"policyName": "replicalimit-policy.example.com",
            "validationActions": ["Deny"]});
        let actions = |b: &ValidatingAdmissionPolicyBinding| b.spec.validation_actions.clone();
        let created = operations(
            &api,
            template(
                "ValidatingAdmissionPolicyBinding",
                "e2e-example-vapb-",
                label,
                spec,
            ),
            label,
            json!({"metadata": {"annotations": {"patched": "true"}},
                "spec": {"validationActions": ["Warn"]}}),
            |b| actions(b) == ["Warn"],
            |b| b.spec.validation_actions = vec!["Deny".into()],
            |b| actions(b) == ["Deny"],
        )
        .await;
        deletes(&api, &created.metadata.name.unwrap(), label).await;
    });
}
