//! One call of an admission webhook: an `AdmissionReview` (`admission.k8s.io/v1`, or
//! `v1beta1` for a webhook that speaks only that) POSTed over HTTPS to its URL (with
//! `?timeout=<n>s`, as kube sends it), trusting its CA bundle, within its timeout; the answer checked as kube's dispatchers check it (an
//! `AdmissionReview` of the same version, a response with the request's uid, `allowed`, a
//! `JSONPatch` when it patches) and read into a [`Verdict`].
//!
//! The HTTP client is `kapi_webhook`'s, the conversion webhooks' too; its blocking call
//! runs on tokio's blocking pool, not on the runtime's workers. A failure is a [`Failure`]
//! (the failure policy decides what it does), worded as kube's dispatchers word it.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use kapi_webhook::{CallError, NoCertificate, Webhook};

use kapi_kinds::admissionregistration::WebhookClientConfig;

/// The review versions this server speaks, preferred first.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// Why a webhook cannot be called at all: every call fails with it.
#[derive(Clone, Debug, thiserror::Error)]
pub(super) enum Unreachable {
    /// It speaks no review version this server does.
    #[error(
        "webhook does not accept known AdmissionReview versions {offered:?} (this server \
         speaks {})",
        REVIEW_VERSIONS.join(", ")
    )]
    NoReviewVersion {
        /// The versions it accepts.
        offered: Vec<String>,
    },
    /// It is reached through a Service, which this server does not resolve.
    #[error(
        "a webhook reached through a Service is not supported by this server: give \
         clientConfig.url"
    )]
    ThroughService,
    /// Its CA bundle holds no certificate.
    #[error(transparent)]
    NoCertificate(#[from] NoCertificate),
}

/// Why a call gave no verdict.
#[derive(Debug, thiserror::Error)]
pub(super) enum Failure {
    /// The webhook cannot be called.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// No answer (the connection, TLS, the timeout), a failing status, or not JSON.
    #[error("failed to call webhook: Post {url:?}: {error}")]
    Call {
        /// Its URL.
        url: String,
        /// What went wrong.
        error: CallError,
    },
    /// The call's task ended without an answer (it panicked, or the runtime is stopping).
    #[error("failed to call webhook: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// An answer, not one kube accepts.
    #[error("received invalid webhook response: {0}")]
    Invalid(#[from] Invalid),
}

/// What is wrong with an answer, as kube's dispatchers say it.
#[derive(Debug, thiserror::Error)]
pub(super) enum Invalid {
    /// Not an `AdmissionReview` of the version sent.
    #[error(
        "expected webhook response of {expected}, Kind=AdmissionReview, got {api_version}, \
         Kind={kind}"
    )]
    Type {
        /// `admission.k8s.io/<version>`.
        expected: String,
        /// The answer's `apiVersion`.
        api_version: String,
        /// The answer's `kind`.
        kind: String,
    },
    /// No `response`.
    #[error("webhook response was absent")]
    Absent,
    /// The response is to another request.
    #[error("expected response.uid={expected:?}, got {got:?}")]
    Uid {
        /// The request's uid.
        expected: String,
        /// The response's.
        got: String,
    },
    /// A patch without its type.
    #[error("webhook returned response.patch but not response.patchType")]
    PatchWithoutType,
    /// A patch of a type kube does not apply.
    #[error("unsupported patch type {0:?}")]
    PatchType(String),
    /// A patch that is not base64.
    #[error("response.patch is not base64: {0}")]
    PatchEncoding(base64::DecodeError),
    /// A patch that is not a JSON patch.
    #[error("response.patch is not a JSON patch: {0}")]
    Patch(serde_json::Error),
}

/// How to call one webhook: its client and URL, or why it cannot be called (every call
/// then fails with that reason, and its failure policy decides).
pub(super) struct Client {
    target: Result<Webhook, Unreachable>,
    /// The review version it is sent.
    pub review_version: &'static str,
}

impl Client {
    /// The client of a webhook reached as `config` says, within `timeout`, speaking the
    /// first of `versions` this server speaks.
    pub(super) fn new(
        config: &WebhookClientConfig,
        timeout: Duration,
        versions: &[String],
    ) -> Client {
        let review_version = (versions.iter())
            .find_map(|v| REVIEW_VERSIONS.iter().find(|known| **known == v))
            .copied();
        let target = match review_version {
            Some(_) => agent(config, timeout),
            None => Err(Unreachable::NoReviewVersion {
                offered: versions.to_vec(),
            }),
        };
        Client {
            target,
            review_version: review_version.unwrap_or("v1"),
        }
    }

    /// POSTs `review` and returns the answer's JSON, or why the call failed.
    pub(super) async fn call(&self, review: Value) -> Result<Value, Failure> {
        let webhook = self.target.clone()?;
        let url = webhook.url().to_owned();
        let posted = tokio::task::spawn_blocking(move || webhook.post(&review));
        posted.await?.map_err(|error| Failure::Call { url, error })
    }
}

/// The webhook `config` names, its URL telling it `timeout` as kube's does.
fn agent(config: &WebhookClientConfig, timeout: Duration) -> Result<Webhook, Unreachable> {
    let Some(url) = config.url.clone() else {
        return Err(Unreachable::ThroughService);
    };
    let bundle = Some(config.ca_bundle.0.as_slice()).filter(|b| !b.is_empty());
    // kube tells the webhook its timeout in the query.
    let separator = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{separator}timeout={}s", timeout.as_secs());
    Ok(Webhook::new(url, bundle, timeout)?)
}

/// What a webhook answered.
#[derive(Debug, Default)]
pub(super) struct Verdict {
    /// Whether it allows the write.
    pub allowed: bool,
    /// Its `status` (the reason of a refusal).
    pub status: Option<Value>,
    /// Its JSON patch, decoded.
    pub patch: Option<json_patch::Patch>,
    /// Its warnings.
    pub warnings: Vec<String>,
}

/// The review to send for `request` (its `uid` set by the caller) in `version`.
pub(super) fn review(version: &str, request: Value) -> Value {
    json!({
        "apiVersion": format!("admission.k8s.io/{version}"),
        "kind": "AdmissionReview",
        "request": request,
    })
}

/// Reads a webhook's answer to the review of `uid` sent in `version`.
pub(super) fn verdict(answer: &Value, version: &str, uid: &str) -> Result<Verdict, Invalid> {
    let api_version = answer
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = answer.get("kind").and_then(Value::as_str).unwrap_or("");
    let expected = format!("admission.k8s.io/{version}");
    if version == "v1" && (api_version != expected || kind != "AdmissionReview") {
        return Err(Invalid::Type {
            expected,
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        });
    }
    let Some(response) = answer.get("response").filter(|r| r.is_object()) else {
        return Err(Invalid::Absent);
    };
    let answered = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if version == "v1" && answered != uid {
        return Err(Invalid::Uid {
            expected: uid.to_owned(),
            got: answered.to_owned(),
        });
    }
    let mut verdict = Verdict {
        allowed: response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        warnings: (response.get("warnings").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        patch: None,
    };
    if let Some(patch) = response.get("patch").and_then(Value::as_str) {
        let patch_type = response
            .get("patchType")
            .and_then(Value::as_str)
            .unwrap_or("");
        if version == "v1" && patch_type.is_empty() {
            return Err(Invalid::PatchWithoutType);
        }
        if !patch_type.is_empty() && patch_type != "JSONPatch" {
            return Err(Invalid::PatchType(patch_type.to_owned()));
        }
        let bytes = STANDARD.decode(patch).map_err(Invalid::PatchEncoding)?;
        let operations = serde_json::from_slice(&bytes).map_err(Invalid::Patch)?;
        verdict.patch = Some(operations);
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_as_kube_checks_them() {
        let answer = |response: Value| {
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": response})
        };
        let denied = verdict(
            &answer(
                json!({"uid": "u", "allowed": false, "status": {"message": "no"},
                "warnings": ["careful"]}),
            ),
            "v1",
            "u",
        )
        .unwrap();
        assert!(!denied.allowed);
        assert_eq!(denied.status, Some(json!({"message": "no"})));
        assert_eq!(denied.warnings, ["careful"]);

        let patch =
            STANDARD.encode(r#"[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#);
        let patched = verdict(
            &answer(json!({"uid": "u", "allowed": true, "patchType": "JSONPatch", "patch": patch})),
            "v1",
            "u",
        )
        .unwrap();
        assert!(patched.allowed && patched.patch.is_some());

        assert_eq!(
            (verdict(&answer(json!({"uid": "other", "allowed": true})), "v1", "u"))
                .unwrap_err()
                .to_string(),
            r#"expected response.uid="u", got "other""#
        );
        assert_eq!(
            verdict(
                &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
                "v1",
                "u"
            )
            .unwrap_err()
            .to_string(),
            "webhook response was absent"
        );
        let untyped = answer(json!({"uid": "u", "allowed": true, "patch": patch}));
        assert!(
            verdict(&untyped, "v1", "u")
                .unwrap_err()
                .to_string()
                .contains("patchType")
        );
    }
}
