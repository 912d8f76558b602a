//! Subresources that take another kind's object (`SubresourceShape::Create`: kube's Pod
//! `binding` and `eviction`), and `create_only` kinds stored nowhere whose creates act on
//! other objects (kube's `bindings`): the registry checks what every such create shares
//! (the body names the body kind, in the path's namespace), then hands it to the
//! [`Action`] the server registered, which changes objects through the registry:
//! [`Registry::change_stored`] (kube's `GuaranteedUpdate`, no strategy or admission, as
//! kube's binding writes a pod; in `guaranteed`) or the ordinary verbs. The create itself
//! is admitted first, as kube's create handler admits every create: its body is the
//! object (of the body kind: a `policy/v1` `Eviction` on `pods/eviction`) that the
//! mutating side may change and the validating side judges, and the action runs on the
//! body as admission left it, answering with admission's warnings too.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::object::{self, meta_str};
use super::{Registry, Target, WriteOptions, Written};
use crate::admission::{Attributes, ObjectKind, Operation};
use kapi_core::api::SubresourceShape;
use kapi_core::error::ApiError;

/// A boxed future of an action's answer.
pub type Answer<'a> = Pin<Box<dyn Future<Output = Result<Written, ApiError>> + Send + 'a>>;

/// What one create does.
pub trait Action: Send + Sync {
    /// Answers `request`, changing objects through `registry`.
    fn create<'a>(&'a self, registry: &'a Registry, request: ActionRequest<'a>) -> Answer<'a>;

    /// Sets on `body` the defaults kube's decoding sets (its kind's defaulter: a
    /// TokenRequest's `spec.expirationSeconds`), before admission sees it. None by default.
    fn default_body(&self, body: &mut Value) {
        let _ = body;
    }
}

/// One create on a subresource, or of a `create_only` kind.
pub struct ActionRequest<'a> {
    /// The kind of the path (`pods` for `pods/{name}/eviction`, `bindings` for the
    /// collection) in its version, and the path's namespace.
    pub target: Target<'a>,
    /// The object the subresource belongs to (from the path), or for a `create_only` kind
    /// the body's `metadata.name`.
    pub name: &'a str,
    /// The body (JSON), its `apiVersion` and `kind` checked and set to the body kind's,
    /// as the mutating admission left it.
    pub body: Value,
    /// `dryRun`, the field manager, the user.
    pub options: &'a WriteOptions,
    /// The subresource (`eviction`); empty for a `create_only` kind's creates.
    pub subresource: &'a str,
    /// The body's kind when it is not the target's (`policy/v1` `Eviction`).
    pub body_kind: Option<ObjectKind<'static>>,
    /// Where admission's warnings go: the response carries them, whatever it answers.
    pub warnings: &'a mut Vec<String>,
}

impl ActionRequest<'_> {
    /// The validating admission of the create, `object` (the body as the action made it
    /// ready: named, defaulted) the object: kube's REST storages call it
    /// (`createValidation`) once their own checks of the body passed and before they
    /// change anything, and so does every action. Its warnings go to
    /// [`ActionRequest::warnings`].
    pub async fn validate(&mut self, registry: &Registry, object: &Value) -> Result<(), ApiError> {
        let admission_options = Registry::options_json("CreateOptions", self.options);
        let attributes = attributes(self, &admission_options);
        let (_, validating) = registry.webhooks_configured(&attributes).await?;
        if !validating {
            return Ok(());
        }
        let more = (registry.validating_admission(&attributes, Some(object), None, None)).await?;
        self.warnings.extend(more);
        Ok(())
    }
}

/// The admission attributes of `request`, its options `options`.
fn attributes<'r>(request: &'r ActionRequest<'_>, options: &'r Value) -> Attributes<'r> {
    Attributes {
        operation: Operation::Create,
        kind: request.target.kind,
        version: request.target.version,
        subresource: request.subresource,
        namespace: request.target.namespace,
        name: request.name,
        user: request.options.user.as_ref(),
        dry_run: request.options.dry_run,
        options,
        object_kind: request.body_kind,
    }
}

/// The registered actions, by group, resource and subresource (`""` for a kind's own
/// creates).
pub(crate) type Actions = super::hooks::ByResource<dyn Action>;

impl Registry {
    /// Answers creates on `group`/`plural`'s subresource `subresource` (`""`: the creates
    /// of the `create_only` kind `group`/`plural`) with `action`.
    pub fn set_action(
        &self,
        group: &str,
        plural: &str,
        subresource: &str,
        action: Arc<dyn Action>,
    ) {
        self.actions.set(group, plural, subresource, action);
    }

    /// The action answering creates of the `create_only` kind `target`, if any.
    pub(super) fn own_action(&self, target: Target<'_>) -> Option<Arc<dyn Action>> {
        let info = target.kind.info;
        self.actions.get(info.group, info.plural, "")
    }

    /// A create of the `create_only` kind `target` answered by its `action`.
    pub(super) async fn act_on_kind(
        &self,
        target: Target<'_>,
        action: Arc<dyn Action>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let info = target.kind.info;
        let api_version = target.kind.api_version(target.version);
        check_body(&body, &api_version, info.kind, target.namespace)?;
        let name = meta_str(&body, "name").unwrap_or_default().to_owned();
        // What admission warns of goes with the answer (lost, as the create path's are,
        // when the create fails after it).
        let mut warnings = Vec::new();
        let request = ActionRequest {
            target,
            name: &name,
            body,
            options,
            subresource: "",
            body_kind: None,
            warnings: &mut warnings,
        };
        let answer = self.act(action, request).await;
        let mut written = answer?;
        warnings.append(&mut written.warnings);
        written.warnings = warnings;
        Ok(written)
    }

    /// `POST .../{name}/<subresource>` of a `Create` subresource: the body checked against
    /// the body kind, then answered by the subresource's action; admission's warnings go
    /// to `warnings`, whatever the answer.
    pub async fn create_on(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: &str,
        body: Value,
        options: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Written, ApiError> {
        let info = target.kind.info;
        let Some(SubresourceShape::Create(kind)) =
            info.subresources.other(subresource).map(|s| &s.shape)
        else {
            return Err(ApiError::NoRoute);
        };
        check_body(&body, &kind.api_version(), kind.kind, target.namespace)?;
        let Some(action) = self.actions.get(info.group, info.plural, subresource) else {
            return Err(not_supported(info, "create"));
        };
        let request = ActionRequest {
            target,
            name,
            body,
            options,
            subresource,
            body_kind: Some(ObjectKind {
                group: kind.group,
                version: kind.version,
                kind: kind.kind,
            }),
            warnings,
        };
        self.act(action, request).await
    }

    /// Runs `action` on `request` once the mutating admission has had the body, in the
    /// body kind's `apiVersion` and `kind` (kube decodes it into that kind first: a
    /// `policy/v1beta1` Eviction is admitted as `policy/v1`).
    async fn act(
        &self,
        action: Arc<dyn Action>,
        mut request: ActionRequest<'_>,
    ) -> Result<Written, ApiError> {
        let api_version = match request.body_kind {
            Some(kind) if kind.group.is_empty() => kind.version.to_owned(),
            Some(kind) => format!("{}/{}", kind.group, kind.version),
            None => (request.target.kind).api_version(request.target.version),
        };
        let kind = request
            .body_kind
            .map_or(request.target.kind.info.kind, |k| k.kind);
        if let Some(body) = request.body.as_object_mut() {
            body.insert("apiVersion".into(), Value::from(api_version));
            body.insert("kind".into(), Value::from(kind));
        }
        action.default_body(&mut request.body);
        let body = std::mem::take(&mut request.body);
        let (body, more) = {
            let admission_options = Registry::options_json("CreateOptions", request.options);
            let attributes = attributes(&request, &admission_options);
            match self.webhooks_configured(&attributes).await?.0 {
                true => self.mutating_admission(&attributes, body, None).await?,
                false => (body, Vec::new()),
            }
        };
        request.body = body;
        request.warnings.extend(more);
        action.create(self, request).await
    }
}

fn not_supported(info: &kapi_core::api::KindInfo, action: &str) -> ApiError {
    ApiError::MethodNotSupported {
        resource: object::resource(info),
        action: action.into(),
    }
}

/// What kube's create handler checks of any body: it is of the body kind's group (kube's
/// evictions accept `policy/v1beta1` as well as `policy/v1`), of its kind, and in the
/// path's namespace.
fn check_body(
    body: &Value,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    let group = |v: &str| v.split_once('/').map(|(group, _)| group.to_owned());
    if let Some(given) = body
        .get("apiVersion")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        && given != api_version
        && (group(given).is_none() || group(given) != group(api_version))
    {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({given}) does not match the expected API version ({api_version})"
        )));
    }
    if let Some(given) = body
        .get("kind")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        && given != kind
    {
        return Err(ApiError::BadRequest(format!(
            "the kind in the data ({given}) does not match the expected kind ({kind})"
        )));
    }
    if let (Some(given), Some(namespace)) = (
        meta_str(body, "namespace").filter(|n| !n.is_empty()),
        namespace,
    ) && given != namespace
    {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request"
                .into(),
        ));
    }
    Ok(())
}
