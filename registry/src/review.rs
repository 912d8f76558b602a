//! Kinds that are only created, never stored (`#[resource(create_only)]`, kube's reviews:
//! `SelfSubjectAccessReview`, `TokenReview`): a create checks and decodes the body as every
//! create does (type meta, unknown fields, the version's schema, the kind's `validate`),
//! then hands the object, with the requesting user, to the [`Review`] the server
//! registered for the kind, and answers 201 with what it returns. No name is needed, and
//! nothing reaches storage.

use std::sync::Arc;

use serde_json::Value;

use super::body::{self, Expected};
use super::field_paths;
use super::object::{internal, meta_str};
use super::{Registry, Target, WriteOptions, Written};
use kapi_core::error::ApiError;
use kapi_core::user::UserInfo;

/// The answer to one kind of question.
pub trait Review: Send + Sync {
    /// `object` (the kind's hub as JSON, validated) answered for `user` (`None`: the
    /// server itself asks): the object with its status.
    fn review(&self, user: Option<&UserInfo>, object: Value) -> Result<Value, ApiError>;
}

impl Registry {
    /// Answers creates of the `create_only` kind `group`/`kind` with `review`.
    pub fn set_review(&self, group: &str, kind: &str, review: Arc<dyn Review>) {
        let mut reviews = self.reviews.write().unwrap_or_else(|e| e.into_inner());
        reviews.insert((group.to_owned(), kind.to_owned()), review);
    }

    pub(super) fn review_object(
        &self,
        target: Target<'_>,
        mut body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let review = {
            let reviews = self.reviews.read().unwrap_or_else(|e| e.into_inner());
            reviews
                .get(&(info.group.to_owned(), info.kind.to_owned()))
                .cloned()
        };
        let Some(review) = review else {
            return Err(ApiError::MethodNotSupported {
                resource: super::object::resource(info),
                action: "create".into(),
            });
        };
        let api_version = kind.api_version(target.version);
        let expected = Expected {
            api_version: &api_version,
            kind: info.kind,
        };
        let warnings = body::check_new(target, &body, options, expected)?;
        body::ensure_namespace(&mut body, info, target.namespace)?;
        let (mut errors, _) = self.apply_schema(target, &mut body, None)?;
        let name = meta_str(&body, "name").unwrap_or_default().to_owned();
        let invalid = |causes| ApiError::Invalid {
            group: info.group.into(),
            kind: info.kind.into(),
            name: name.clone(),
            causes,
        };
        let hub = match kind.to_hub(body, target.version) {
            Ok(hub) => hub,
            Err(_) if !errors.is_empty() => return Err(invalid(errors)),
            Err(e) => return Err(expected.decode_error(e)),
        };
        let json = kind.hub_json(&hub).map_err(internal)?;
        let own = kind.validate(&hub, target.version);
        errors.extend(field_paths::to_version(kind, target.version, &json, own));
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let answered = review.review(options.user.as_ref(), json)?;
        let hub = kind.hub_from_json(answered).map_err(internal)?;
        let object = kind.from_hub(hub, target.version).map_err(internal)?;
        Ok(Written::new(object, true, warnings))
    }
}
