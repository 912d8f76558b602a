//! What every operation shares: storage keys, stored values, the JSON metadata of objects,
//! server-set values (uids, timestamps, generated names), and the one mapping of storage
//! errors to [`ApiError`]s.

use bytes::Bytes;
use serde_json::Value;

use super::Written;
use kapi_core::api::{KindInfo, Scope};
use kapi_core::error::{ApiError, GroupResource};
use kapi_core::scheme::{ErasedHub, KindEntry};
pub(crate) use kapi_core::unstructured::{generation, meta, meta_str, new_uid, now, set_meta};
use kapi_core::validation as names;
use kapi_storage::cache::CacheError;
use kapi_storage::{self as storage, KeyValue, Revision};

/// `OptimisticLockErrorMsg`: the reason of a 409 on a stale resourceVersion.
pub(crate) const OPTIMISTIC_LOCK: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// How many times an unconditional write re-reads after losing a race before giving up
/// with a 409 (kube's `GuaranteedUpdate` retries forever; a bound keeps a hot key from
/// pinning a request).
pub(crate) const MAX_RETRIES: usize = 32;

/// The resource as messages name it (`webapps.apps.example.dev`).
pub(crate) fn resource(info: &KindInfo) -> GroupResource {
    GroupResource::new(info.group, info.plural)
}

/// Maps a storage failure to a Status: the one place this happens.
pub(crate) fn storage_error(
    error: storage::Error,
    resource: &GroupResource,
    name: &str,
) -> ApiError {
    use storage::Error;
    match error {
        Error::NotFound { .. } => ApiError::NotFound {
            resource: resource.clone(),
            name: name.to_owned(),
        },
        Error::AlreadyExists { .. } => ApiError::AlreadyExists {
            resource: resource.clone(),
            name: name.to_owned(),
        },
        Error::Conflict { .. } => ApiError::Conflict {
            resource: resource.clone(),
            name: name.to_owned(),
            message: OPTIMISTIC_LOCK.to_owned(),
        },
        Error::Compacted {
            requested,
            compacted,
        } => ApiError::Expired(format!(
            "too old resource version: {requested} ({compacted})"
        )),
        Error::FutureRevision { requested, current } => {
            ApiError::TooLargeResourceVersion { requested, current }
        }
        Error::TooLarge { limit, .. } => {
            ApiError::RequestEntityTooLarge(format!("limit is {limit}"))
        }
        error @ Error::Unavailable(_) => ApiError::ServiceUnavailable(error.to_string()),
        error @ Error::Timeout(_) => ApiError::Timeout {
            message: error.to_string(),
            retry_after_seconds: 1,
        },
        error @ (Error::Lagged { .. } | Error::InvalidArgument(_) | Error::Internal(_)) => {
            ApiError::Internal(error.to_string())
        }
    }
}

/// Maps a watch cache failure to a Status.
pub(crate) fn cache_error(error: CacheError) -> ApiError {
    match error {
        CacheError::NotReady => ApiError::TooManyRequests {
            message: error.to_string(),
            retry_after_seconds: 1,
        },
        CacheError::TooOld { .. } => ApiError::Expired(error.to_string()),
        CacheError::ShuttingDown => ApiError::ServiceUnavailable(error.to_string()),
    }
}

/// An internal error about stored data or the scheme: a bug or corruption, never the
/// client's fault.
pub(crate) fn internal(what: impl std::fmt::Display) -> ApiError {
    ApiError::Internal(what.to_string())
}

/// A key prefix (`--etcd-prefix`) as kube-apiserver's etcd3 store takes it
/// (`path.Join("/", prefix)`): rooted at `/`, empty and `.` segments dropped, `..` going
/// up; without the trailing `/`, which [`Keys`] adds. So `registry`, `/registry/` and
/// `//registry` all give keys under `/registry/`, and `/` keys under `/`: servers given the
/// same prefix in different spellings (and kube-apiserver) share one layout.
pub(crate) fn clean_prefix(prefix: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in prefix.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    segments.iter().map(|s| format!("/{s}")).collect()
}

/// kube's key layout: `<prefix>/<group>/<plural>/<namespace>/<name>` (or the kind's own
/// `storage_key` for `<group>/<plural>`), the group segment
/// omitted for the core group and the namespace segment for cluster-scoped kinds.
#[derive(Clone, Debug)]
pub(crate) struct Keys<'a> {
    prefix: &'a str,
}

impl<'a> Keys<'a> {
    pub(crate) fn new(prefix: &'a str) -> Keys<'a> {
        Keys { prefix }
    }

    /// The prefix of a kind's objects (all namespaces), ending in `/`: the prefix of the
    /// kind that stores them, for a kind `stored_with` another.
    pub(crate) fn kind_prefix(&self, info: &KindInfo) -> String {
        let info = info.stored_with.unwrap_or(info);
        // Made several times per request: sized once (with room for the namespace and
        // name most callers add), with no formatting machinery.
        let length = self.prefix.len() + info.group.len() + info.plural.len() + 3;
        let mut key = String::with_capacity(length + 64);
        key.push_str(self.prefix);
        key.push('/');
        if let Some(storage_key) = info.storage_key {
            key.push_str(storage_key);
            key.push('/');
            return key;
        }
        if !info.group.is_empty() {
            key.push_str(info.group);
            key.push('/');
        }
        key.push_str(info.plural);
        key.push('/');
        key
    }

    /// The prefix a list reads: one namespace, or every namespace when `namespace` is
    /// `None` (and always for cluster-scoped kinds).
    pub(crate) fn collection(&self, info: &KindInfo, namespace: Option<&str>) -> String {
        let mut key = self.kind_prefix(info);
        if let (Scope::Namespaced, Some(namespace)) = (info.scope, namespace) {
            key.push_str(namespace);
            key.push('/');
        }
        key
    }

    /// The key of one object. Namespaced kinds need a namespace (kube's
    /// `NamespaceKeyFunc`); names and namespaces must be valid path segments, so that no
    /// name reaches another key.
    pub(crate) fn object(
        &self,
        info: &KindInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, ApiError> {
        check_segment("Name", name)?;
        if info.scope == Scope::Namespaced {
            let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
                return Err(ApiError::BadRequest("Namespace parameter required.".into()));
            };
            check_segment("Namespace", namespace)?;
        }
        let mut key = self.collection(info, namespace);
        key.push_str(name);
        Ok(key)
    }
}

/// A namespace from a request must be a valid path segment.
/// The fields a write through `info`'s `Fields` subresource `name` changes; a route to
/// anything else is not served.
pub(crate) fn fields_of(info: &KindInfo, name: &str) -> Result<&'static [&'static str], ApiError> {
    match info.subresources.other(name).map(|s| &s.shape) {
        Some(kapi_core::api::SubresourceShape::Fields(paths)) => Ok(paths),
        _ => Err(ApiError::NoRoute),
    }
}

pub(crate) fn check_namespace(namespace: &str) -> Result<(), ApiError> {
    check_segment("Namespace", namespace)
}

fn check_segment(what: &str, value: &str) -> Result<(), ApiError> {
    let problems = names::path_segment_name(value);
    if value.is_empty() || !problems.is_empty() {
        let detail = if value.is_empty() {
            "may not be empty".to_owned()
        } else {
            problems.join(";")
        };
        return Err(ApiError::BadRequest(format!(
            "{what} parameter invalid: {value:?}: {detail}"
        )));
    }
    Ok(())
}

/// Sets `metadata.resourceVersion` to a revision.
pub(crate) fn set_resource_version(object: &mut Value, revision: Revision) {
    set_meta(
        object,
        "resourceVersion",
        Some(Value::String(revision.to_string())),
    );
}

/// kube's `SimpleNameGenerator`: the prefix (cut to 58 bytes) and 5 random characters
/// from an alphabet without vowels or confusable characters.
pub(crate) fn generate_name(base: &str) -> String {
    generated_name(base, &name_suffix())
}

/// [`generate_name`]'s random part.
pub(crate) fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let random = uuid::Uuid::new_v4();
    (random.as_bytes().iter().take(5))
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// [`generate_name`] with its random part drawn already.
pub(crate) fn generated_name(base: &str, suffix: &str) -> String {
    const MAX_PREFIX: usize = 63 - 5;
    let mut cut = base.len().min(MAX_PREFIX);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &base[..cut])
}

/// The stored bytes of an object: compact JSON, without `metadata.resourceVersion`
/// ([`kapi_core::scheme::stored_value_bytes`], which a write's own encoding falls back on).
pub(crate) fn encode(object: Value) -> Result<Bytes, ApiError> {
    (kapi_core::scheme::stored_value_bytes(object))
        .map_or_else(|e| Err(internal(e)), |b| Ok(b.into()))
}

/// A stored object as JSON, in the version it was stored in.
pub(crate) fn decode(kv: &KeyValue) -> Result<Value, ApiError> {
    decode_bytes(&kv.key, &kv.value)
}

/// An object's stored bytes (at `key`) as JSON.
pub(crate) fn decode_bytes(key: &str, bytes: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| undecodable(key, e))
}

/// A stored object of `kind` as its hub, decoded straight from its bytes
/// ([`KindEntry::from_stored_bytes`]).
pub(crate) fn decode_hub(kind: &KindEntry, kv: &KeyValue) -> Result<ErasedHub, ApiError> {
    (kind.from_stored_bytes(&kv.value)).map_err(|e| undecodable(&kv.key, e))
}

fn undecodable(key: &str, error: impl std::fmt::Display) -> ApiError {
    internal(format!("decoding the object at {key}: {error}"))
}

/// A stored object in `version`, with its resourceVersion.
pub(crate) fn stored_in_version(
    kind: &KindEntry,
    kv: &KeyValue,
    version: &str,
    revision: Revision,
) -> Result<Value, ApiError> {
    stored_value_in_version(kind, &kv.key, decode(kv)?, version, revision)
}

/// What a write answers with: the object it just stored (`stored`, at `key`, as
/// [`KindEntry::stored_bytes`] made it) in `version`, with its resourceVersion. In the
/// storage version of a kind that stores its own objects that is the stored bytes with the
/// resourceVersion inserted: neither decoded nor encoded again (decoded only if something
/// but a JSON answer asks for the object).
pub(crate) fn written_in_version(
    kind: &KindEntry,
    key: &str,
    stored: &[u8],
    version: &str,
    revision: Revision,
) -> Result<Written, ApiError> {
    let decoded = || decode_bytes(key, stored);
    let info = kind.info;
    if info.stored_with.is_none() && info.storage_version().name == version {
        // Stored bytes never hold a resourceVersion (`KindEntry::stored_bytes`).
        if let Some(json) = super::written_json::with_resource_version(stored, revision) {
            #[cfg(debug_assertions)]
            {
                let mut object = decoded()?;
                set_resource_version(&mut object, revision);
                let encoded = serde_json::to_vec(&object).map_err(internal)?;
                debug_assert_eq!(
                    String::from_utf8_lossy(&json),
                    String::from_utf8_lossy(&encoded),
                    "the stored bytes with the resourceVersion inserted are not the answer's encoding"
                );
            }
            return Ok(Written::encoded(json, false, Vec::new()));
        }
        let mut object = decoded()?;
        set_resource_version(&mut object, revision);
        return Ok(Written::new(object, false, Vec::new()));
    }
    let object = stored_value_in_version(kind, key, decoded()?, version, revision)?;
    Ok(Written::new(object, false, Vec::new()))
}

/// A stored object already decoded (`stored`, at `key`) in `version`, with its
/// resourceVersion.
fn stored_value_in_version(
    kind: &KindEntry,
    key: &str,
    stored: Value,
    version: &str,
    revision: Revision,
) -> Result<Value, ApiError> {
    let mut object = kind
        .stored_to(stored, version)
        .map_err(|e| internal(format!("converting the object at {key}: {e}")))?;
    set_resource_version(&mut object, revision);
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_cleaned_as_kube_apiserver_does() {
        for (flag, prefix) in [
            ("/registry", "/registry"),
            ("registry", "/registry"),
            ("/registry/", "/registry"),
            ("//a//b/./c/../d/", "/a/b/d"),
            ("/", ""),
            ("", ""),
            ("..", ""),
        ] {
            assert_eq!(clean_prefix(flag), prefix, "{flag:?}");
        }
    }

    #[test]
    fn generated_names_are_kubes() {
        let name = generate_name("web-");
        assert_eq!(name.len(), 9);
        assert!(name.starts_with("web-"));
        assert!(
            name[4..]
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
        assert_eq!(generate_name(&"a".repeat(70)).len(), 63);
    }

    #[test]
    fn timestamps_are_rfc3339_seconds_utc() {
        let now = now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z'));
    }
}
