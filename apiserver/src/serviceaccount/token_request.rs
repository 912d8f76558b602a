//! `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token` (kube's `TokenREST`): a
//! token for the service account, answered as a TokenRequest with `status.token` and
//! `status.expirationTimestamp`. Nothing is stored.
//!
//! In kube's order: the body's name must be the account's; the account must exist; the
//! audiences default to the API audiences and the lifetime to an hour, at least ten
//! minutes and at most 2^32 seconds; a bound object (a Pod running as the account, a
//! Secret, a Node; any version of the core group) must exist with the uid the reference
//! gives, if it gives one; `--service-account-max-token-expiration` shortens the lifetime
//! with a warning; a Pod-bound token asked for 3607 seconds for the API audiences lives a
//! year and is reported stale after 3607 seconds (kube's extended projected tokens). A dry
//! run issues a real token, as kube's.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::Tokens;
use super::claims::{Binding, Issue as Claims, Ref};
use kapi_core::error::{ApiError, FieldError, FieldErrorType, GroupResource};
use kapi_core::unstructured::meta_str;
use kapi_kinds::builtin::authentication::v1::{TokenRequest, TokenRequestStatus};
use kapi_registry::{Action, ActionRequest, Answer, Registry, Written};

/// kube's shortest token (`MinTokenAgeSec`).
const MIN_SECONDS: i64 = 10 * 60;
/// kube's longest token.
const MAX_SECONDS: i64 = 1 << 32;
/// The lifetime a TokenRequest gets when it names none.
const DEFAULT_SECONDS: i64 = 60 * 60;
/// The lifetime of the projected tokens kube's ServiceAccount admission asks for, which
/// are issued for [`EXTENDED_SECONDS`] instead and reported stale after it.
const WARN_ONLY_SECONDS: i64 = 60 * 60 + 7;
/// A year.
const EXTENDED_SECONDS: i64 = 24 * 365 * 60 * 60;

/// The audit annotation naming the token issued.
pub const ISSUED_CREDENTIAL_ID: &str = "authentication.kubernetes.io/issued-credential-id";

/// The action.
pub struct Issue(pub Arc<Tokens>);

impl Action for Issue {
    fn create<'a>(&'a self, registry: &'a Registry, request: ActionRequest<'a>) -> Answer<'a> {
        Box::pin(issue(&self.0, registry, request))
    }

    /// kube's `SetDefaults_TokenRequestSpec`: an hour unless the request says.
    fn default_body(&self, body: &mut Value) {
        let Some(body) = body.as_object_mut() else {
            return;
        };
        let spec = body
            .entry("spec")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(spec) = spec.as_object_mut()
            && spec.get("expirationSeconds").is_none_or(Value::is_null)
        {
            spec.insert("expirationSeconds".into(), Value::from(DEFAULT_SECONDS));
        }
    }
}

fn invalid(name: &str, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        group: "authentication.k8s.io".into(),
        kind: "TokenRequest".into(),
        name: name.into(),
        causes,
    }
}

async fn issue(
    tokens: &Tokens,
    registry: &Registry,
    mut request: ActionRequest<'_>,
) -> Result<Written, ApiError> {
    let Some(signing_key) = &tokens.signing_key else {
        return Err(ApiError::Internal(
            "no key signs service-account tokens".into(),
        ));
    };
    let name = request.name;
    let namespace = request.target.namespace.unwrap_or_default();
    let mut token_request: TokenRequest = serde_json::from_value(std::mem::take(&mut request.body))
        .map_err(|e| ApiError::BadRequest(format!("the TokenRequest: {e}")))?;
    let metadata = &mut token_request.metadata;
    if metadata
        .name
        .as_deref()
        .is_some_and(|given| !given.is_empty() && given != name)
    {
        let given = metadata.name.clone().unwrap_or_default();
        return Err(invalid(
            name,
            vec![FieldError::new(
                FieldErrorType::Invalid,
                "metadata.name",
                Some(Value::from(given)),
                "must match the service account name if specified",
            )],
        ));
    }
    let account = registry.get(request.target, name, None).await?;
    let account = Ref {
        name: name.to_owned(),
        uid: meta_str(&account, "uid").unwrap_or_default().to_owned(),
    };
    let spec = &mut token_request.spec;
    if spec.audiences.is_empty() {
        spec.audiences = tokens.api_audiences.clone();
    }
    let seconds = *spec.expiration_seconds.get_or_insert(DEFAULT_SECONDS);
    let now = SystemTime::now();
    // Whole seconds, as the claims and the answer's timestamp carry them.
    let now_seconds = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let now = UNIX_EPOCH + Duration::from_secs(now_seconds as u64);
    let metadata = &mut token_request.metadata;
    metadata.name = Some(name.to_owned());
    metadata.namespace = Some(namespace.to_owned());
    metadata.creation_timestamp = Some(kapi_core::meta::Time(kapi_core::meta::timestamp(now)));
    metadata.uid = None;
    metadata.resource_version = None;
    token_request.status = TokenRequestStatus::default();
    let mut causes = Vec::new();
    if seconds < MIN_SECONDS {
        causes.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.expirationSeconds",
            Some(Value::from(seconds)),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > MAX_SECONDS {
        causes.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.expirationSeconds",
            Some(Value::from(seconds)),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if !causes.is_empty() {
        return Err(invalid("", causes));
    }
    // kube's `createValidation`: the request as it will be answered, once it is valid.
    let mut admitted = serde_json::to_value(&token_request)
        .map_err(|e| ApiError::Internal(format!("encoding the TokenRequest: {e}")))?;
    admitted["apiVersion"] = Value::from("authentication.k8s.io/v1");
    admitted["kind"] = Value::from("TokenRequest");
    request.validate(registry, &admitted).await?;
    let spec = &mut token_request.spec;
    let binding = match &spec.bound_object_ref {
        Some(reference) => bind(registry, namespace, name, reference).await?,
        None => Binding::default(),
    };
    let mut warnings = Vec::new();
    let mut seconds = seconds;
    if tokens.max_expiration_seconds > 0 && seconds > tokens.max_expiration_seconds {
        warnings.push(format!(
            "requested expiration of {seconds} seconds shortened to {} seconds",
            tokens.max_expiration_seconds
        ));
        seconds = tokens.max_expiration_seconds;
        spec.expiration_seconds = Some(seconds);
    }
    let kube_audiences = (spec.audiences.iter()).all(|a| tokens.api_audiences.contains(a));
    let (lifetime, warn_after) = match tokens.extend_expiration
        && binding.pod.is_some()
        && seconds == WARN_ONLY_SECONDS
        && kube_audiences
    {
        true => (EXTENDED_SECONDS, Some(WARN_ONLY_SECONDS)),
        false => (seconds, None),
    };
    let id = uuid::Uuid::new_v4().to_string();
    let claims = Claims {
        issuer: tokens.issuer(),
        audiences: &spec.audiences,
        now: now_seconds,
        lifetime,
        warn_after,
        namespace,
        account: &account,
        binding: &binding,
        id: &id,
    }
    .claims();
    token_request.status = TokenRequestStatus {
        token: signing_key.sign(&claims),
        expiration_timestamp: Some(kapi_core::meta::Time(kapi_core::meta::timestamp(
            now + Duration::from_secs(seconds as u64),
        ))),
    };
    kapi_registry::admission::annotate(ISSUED_CREDENTIAL_ID, format!("JTI={id}"));
    // Type meta first, as kube writes it.
    let mut answer = serde_json::Map::new();
    answer.insert("kind".into(), Value::from("TokenRequest"));
    answer.insert("apiVersion".into(), Value::from("authentication.k8s.io/v1"));
    let Value::Object(fields) =
        serde_json::to_value(&token_request).map_err(|e| ApiError::Internal(e.to_string()))?
    else {
        return Err(ApiError::Internal("a TokenRequest is an object".into()));
    };
    answer.extend(fields);
    Ok(Written::new(Value::Object(answer), true, warnings))
}

/// What a token for `account` bound to `reference` is bound to, read now.
async fn bind(
    registry: &Registry,
    namespace: &str,
    account: &str,
    reference: &kapi_kinds::builtin::authentication::v1::BoundObjectReference,
) -> Result<Binding, ApiError> {
    let group = (reference.api_version.split_once('/')).map_or("", |(group, _)| group);
    let kind = reference.kind.as_str();
    let (plural, scoped) = match (group, kind) {
        ("", "Pod") => ("pods", true),
        ("", "Secret") => ("secrets", true),
        ("", "Node") => ("nodes", false),
        _ => {
            let version = (reference.api_version.split_once('/'))
                .map_or(reference.api_version.as_str(), |(_, version)| version);
            return Err(ApiError::BadRequest(format!(
                "cannot bind token to object of type {group}/{version}, Kind={kind}"
            )));
        }
    };
    let object = get(
        registry,
        plural,
        scoped.then_some(namespace),
        &reference.name,
    )
    .await?;
    let uid = meta_str(&object, "uid").unwrap_or_default().to_owned();
    let mut binding = Binding::default();
    let found = Ref {
        name: reference.name.clone(),
        uid: uid.clone(),
    };
    match kind {
        "Pod" => {
            let runs_as = (object
                .pointer("/spec/serviceAccountName")
                .and_then(Value::as_str))
            .unwrap_or_default();
            if runs_as != account {
                return Err(ApiError::BadRequest(format!(
                    "cannot bind token for serviceaccount {account:?} to pod running with different serviceaccount name."
                )));
            }
            // The node of a scheduled Pod, for its name and uid (a Node not found: its
            // name alone).
            if let Some(node) =
                (object.pointer("/spec/nodeName").and_then(Value::as_str)).filter(|n| !n.is_empty())
            {
                let uid = match get(registry, "nodes", None, node).await {
                    Ok(node) => meta_str(&node, "uid").unwrap_or_default().to_owned(),
                    Err(ApiError::NotFound { .. }) => String::new(),
                    Err(e) => return Err(e),
                };
                binding.node = Some(Ref {
                    name: node.to_owned(),
                    uid,
                });
            }
            binding.pod = Some(found);
        }
        "Secret" => binding.secret = Some(found),
        _ => binding.node = Some(found),
    }
    if !reference.uid.is_empty() && reference.uid != uid {
        return Err(ApiError::Conflict {
            resource: GroupResource::new("", kind),
            name: reference.name.clone(),
            message: format!(
                "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                reference.uid
            ),
        });
    }
    Ok(binding)
}

/// The core object `name` of `plural`, read through the registry.
async fn get(
    registry: &Registry,
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, ApiError> {
    let kind = crate::builtin::core_kind(registry, plural)?;
    registry
        .get(crate::builtin::target(&kind, namespace), name, None)
        .await
}
