//! Kinds whose objects are made when they are read, never stored (`#[resource(read_only)]`:
//! kube's ComponentStatuses, each a probe of one component run on every read). A get or a
//! list asks the [`Computed`] the server registered for the kind; a list keeps the objects
//! the request's label and field selectors match, as kube's does. Their routes are get and
//! list alone, so nothing writes them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::{ListOptions, ObjectList, Registry, Target};
use kapi_core::error::{ApiError, GroupResource};
use kapi_schema::selector::Selectors;
use kapi_storage::cache::SharedObject;

/// The objects of one read-only kind.
pub trait Computed: Send + Sync {
    /// Every object of the kind, made now: each its hub as JSON (in the kind's one version)
    /// with `metadata.name`.
    fn objects(&self) -> Pin<Box<dyn Future<Output = Vec<Value>> + Send + '_>>;

    /// The answer to a get of a name no object has. kube's ComponentStatus storage answers
    /// with a plain error (a 500), not a NotFound; another kind may say otherwise.
    fn not_found(&self, resource: &GroupResource, name: &str) -> ApiError {
        ApiError::NotFound {
            resource: resource.clone(),
            name: name.to_owned(),
        }
    }
}

impl Registry {
    /// Answers gets and lists of the `read_only` kind `group`/`kind` with `computed`.
    pub fn set_computed(&self, group: &str, kind: &str, computed: Arc<dyn Computed>) {
        let mut all = self.computed.write().unwrap_or_else(|e| e.into_inner());
        all.insert((group.to_owned(), kind.to_owned()), computed);
    }

    /// What makes the objects of `target`'s kind; none registered: the server does not
    /// make them (405, as for a review nobody answers).
    fn computed_for(&self, target: Target<'_>, verb: &str) -> Result<Arc<dyn Computed>, ApiError> {
        let info = target.kind.info;
        let all = self.computed.read().unwrap_or_else(|e| e.into_inner());
        let computed = all
            .get(&(info.group.to_owned(), info.kind.to_owned()))
            .cloned();
        computed.ok_or_else(|| ApiError::MethodNotSupported {
            resource: super::object::resource(info),
            action: verb.into(),
        })
    }

    /// The kind's objects, each with its `apiVersion` and `kind`.
    async fn computed_objects(&self, target: Target<'_>, computed: &dyn Computed) -> Vec<Value> {
        let info = target.kind.info;
        let api_version = target.kind.api_version(target.version);
        let mut objects = computed.objects().await;
        for object in &mut objects {
            if let Some(fields) = object.as_object_mut() {
                fields.insert("apiVersion".into(), Value::String(api_version.clone()));
                fields.insert("kind".into(), Value::String(info.kind.to_owned()));
            }
        }
        objects
    }

    pub(super) async fn get_computed(
        &self,
        target: Target<'_>,
        name: &str,
    ) -> Result<SharedObject, ApiError> {
        let computed = self.computed_for(target, "get")?;
        let objects = self.computed_objects(target, &*computed).await;
        let named = |object: &Value| object["metadata"]["name"].as_str() == Some(name);
        match objects.into_iter().find(named) {
            Some(object) => Ok(SharedObject::from(object)),
            None => Err(computed.not_found(&super::object::resource(target.kind.info), name)),
        }
    }

    pub(super) async fn list_computed(
        &self,
        target: Target<'_>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let info = target.kind.info;
        let selectors = Selectors::parse(
            info,
            options.label_selector.as_deref(),
            options.field_selector.as_deref(),
        )?;
        let computed = self.computed_for(target, "list")?;
        let objects = self.computed_objects(target, &*computed).await;
        let items = (objects.into_iter())
            .filter(|object| selectors.matches_labels(object))
            .filter(|object| !selectors.selects_fields() || selectors.matches_fields(info, object))
            .map(SharedObject::from)
            .collect();
        Ok(ObjectList {
            items,
            // Made now, from no storage: kube's list of them has no resourceVersion.
            resource_version: String::new(),
            continue_token: None,
            remaining_item_count: None,
        })
    }
}
