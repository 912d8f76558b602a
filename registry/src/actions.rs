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
}

/// One create on a subresource, or of a `create_only` kind.
pub struct ActionRequest<'a> {
    /// The kind of the path (`pods` for `pods/{name}/eviction`, `bindings` for the
    /// collection) in its version, and the path's namespace.
    pub target: Target<'a>,
    /// The object the subresource belongs to (from the path), or for a `create_only` kind
    /// the body's `metadata.name`.
    pub name: &'a str,
    /// The body (JSON), its `apiVersion` and `kind` checked.
    pub body: Value,
    /// `dryRun`, the field manager, the user.
    pub options: &'a WriteOptions,
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
        let (body, warnings) = (self.admit_action(target, &name, "", None, body, options)).await?;
        let request = ActionRequest {
            target,
            name: &name,
            body,
            options,
        };
        warned(action.create(self, request).await, warnings)
    }

    /// `POST .../{name}/<subresource>` of a `Create` subresource: the body checked against
    /// the body kind, then answered by the subresource's action.
    pub async fn create_on(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: &str,
        body: Value,
        options: &WriteOptions,
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
        let body_kind = ObjectKind {
            group: kind.group,
            version: kind.version,
            kind: kind.kind,
        };
        let admitted = self.admit_action(target, name, subresource, Some(body_kind), body, options);
        let (body, warnings) = admitted.await?;
        let request = ActionRequest {
            target,
            name,
            body,
            options,
        };
        warned(action.create(self, request).await, warnings)
    }

    /// The admission of a create an action answers, its body the object (`body_kind`, when
    /// it is not `target`'s kind): the mutating side, then the validating side on what it
    /// made: the body as they leave it, and their warnings.
    async fn admit_action(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: &str,
        body_kind: Option<ObjectKind<'_>>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let admission_options = Registry::options_json("CreateOptions", options);
        let attributes = Attributes {
            operation: Operation::Create,
            kind: target.kind,
            version: target.version,
            subresource,
            namespace: target.namespace,
            name,
            user: options.user.as_ref(),
            dry_run: options.dry_run,
            options: &admission_options,
            object_kind: body_kind,
        };
        let (mutating, validating) = self.webhooks_configured(&attributes).await?;
        let (body, mut warnings) = match mutating {
            true => self.mutating_admission(&attributes, body, None).await?,
            false => (body, Vec::new()),
        };
        if validating {
            let more = (self.validating_admission(&attributes, Some(&body), None, None)).await?;
            warnings.extend(more);
        }
        Ok((body, warnings))
    }
}

/// An action's answer with admission's `warnings` before its own.
fn warned(
    answer: Result<Written, ApiError>,
    mut warnings: Vec<String>,
) -> Result<Written, ApiError> {
    let mut written = answer?;
    warnings.append(&mut written.warnings);
    written.warnings = warnings;
    Ok(written)
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
