//! Reads: get (with its `status` and `scale` views) and list.
//!
//! A list reads one revision: the first page's (or the one `resourceVersion` names with
//! `resourceVersionMatch=Exact`); its continue token carries that revision and the last key
//! read, so every page reads the same snapshot even under concurrent writes. As in kube's
//! etcd store, a page with selectors keeps reading (doubling the batch) until it holds
//! `limit` matching objects or the collection ends. The token has kube's format
//! (base64url of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the prefix>\u0000"}`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::object::{self, internal};
use super::update::parse_resource_version;
use super::watch::{in_version, matches_cached};
use super::{GetOptions, ListOptions, ObjectList, Registry, SharedObject, Subresource, Target};
use kapi_core::api::ScaleInfo;
use kapi_core::error::{ApiError, FieldError, FieldErrorType};
use kapi_core::scheme::KindEntry;
use kapi_schema::selector::Selectors;
use kapi_storage::{self as storage, KeyValue, ListRequest, Revision};

/// kube's `expired` for a list at a compacted revision.
const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";
/// The largest batch a filtered page reads at once (kube's `maxLimit`).
const MAX_BATCH: usize = 10_000;

impl Registry {
    /// What list, watch and deletecollection share: the parsed selectors and the key prefix
    /// of the collection `target` addresses.
    pub(super) fn collection_scope(
        &self,
        target: Target<'_>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<(Selectors, String), ApiError> {
        let selectors = Selectors::parse(target.kind.info, label_selector, field_selector)?;
        if let Some(namespace) = target.namespace {
            object::check_namespace(namespace)?;
        }
        Ok((
            selectors,
            self.keys().collection(target.kind.info, target.namespace),
        ))
    }

    pub(super) async fn get_object(
        &self,
        target: Target<'_>,
        name: &str,
        subresource: Option<Subresource>,
        options: &GetOptions,
    ) -> Result<SharedObject, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        if info.read_only {
            return self.get_computed(target, name).await;
        }
        let resource = object::resource(info);
        let key = self.keys().object(info, target.namespace, name)?;
        let scale = match subresource {
            Some(Subresource::Status) if !info.subresources.status => {
                return Err(ApiError::NoRoute);
            }
            Some(Subresource::Scale) => {
                Some(info.subresources.scale.as_ref().ok_or(ApiError::NoRoute)?)
            }
            Some(Subresource::Fields(name)) => {
                object::fields_of(info, name)?;
                None
            }
            _ => None,
        };
        let not_found = || ApiError::NotFound {
            resource: resource.clone(),
            name: name.to_owned(),
        };
        // `0`: any state, the cache's; `N`: not older than `N`, the cache's once it has
        // reached `N`; none: the latest (a consistent read), the cache's when it has
        // reached storage's current revision, else storage's. A cache found behind a
        // moment ago (other kinds' writes move storage's revision, and etcd before v3.4.31
        // cannot report progress) is likely behind still: the object is read from storage
        // at once, which costs what the revision read would (GETs' reads are shared,
        // `storage::coalesce`).
        let resource_version = (options.resource_version.as_deref()).filter(|v| !v.is_empty());
        let cached = match resource_version.map(parse_resource_version).transpose()? {
            None => {
                let cache = self.ready_cache(kind).await?;
                let cache = &*cache;
                !self.caches.behind_recently(cache) && self.cache_is_current(kind, cache).await?
            }
            Some(0) => true,
            Some(at_least) => {
                let cache = self.ready_cache(kind).await?;
                let cache = &*cache;
                self.cache_reaches(kind, cache, at_least).await?
            }
        };
        if cached {
            let cache = self.ready_cache(kind).await?;
            let cache = &*cache;
            let (object, _) = cache.get(&key).map_err(object::cache_error)?;
            let object = object.ok_or_else(not_found)?;
            return match scale {
                Some(scale) => scale_view(kind, scale, &object.kv),
                // The memoized encoding every list and watch of this version shares.
                None => in_version(kind, &object, target.version),
            };
        }
        let kv = (self.storage.get(&key, 0).await)
            .map_err(|e| object::storage_error(e, &resource, name))?
            .ok_or_else(not_found)?;
        if let Some(scale) = scale {
            return scale_view(kind, scale, &kv);
        }
        // The cache may hold this very state though it has not reached storage's revision:
        // a key's mod revision names one write. Its shared encoding then serves, with no
        // decoding or conversion.
        let prefix = self.keys().kind_prefix(info);
        if let Some(cache) = self.caches.for_prefix(&prefix)
            && let Ok((Some(object), _)) = cache.get(&key)
            && object.kv.mod_revision == kv.mod_revision
        {
            return in_version(kind, &object, target.version);
        }
        (object::stored_in_version(kind, &kv, target.version, kv.mod_revision))
            .map(SharedObject::from)
    }

    pub(super) async fn list_objects(
        &self,
        target: Target<'_>,
        options: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let kind = target.kind;
        validate_list_options(options)?;
        if kind.info.read_only {
            return self.list_computed(target, options).await;
        }
        let (selectors, prefix) = self.collection_scope(
            target,
            options.label_selector.as_deref(),
            options.field_selector.as_deref(),
        )?;

        let consistent = (options.resource_version.as_deref()).is_none_or(str::is_empty);
        let (listed, fallback) = match self
            .list_cached(target, options, &selectors, &prefix)
            .await?
        {
            Cached::Served(list) => (Ok(list), false),
            Cached::FellBack => (
                self.list_stored(target, options, &selectors, prefix).await,
                true,
            ),
            Cached::Delegated => {
                return self.list_stored(target, options, &selectors, prefix).await;
            }
        };
        if consistent {
            consistent_read(kind, listed.is_ok(), fallback);
        }
        listed
    }

    /// A list read from storage: a page (`limit`, `continue`) at a revision.
    async fn list_stored(
        &self,
        target: Target<'_>,
        options: &ListOptions,
        selectors: &Selectors,
        prefix: String,
    ) -> Result<ObjectList, ApiError> {
        let kind = target.kind;
        let info = kind.info;
        let resource = object::resource(info);
        let resource_version = (options.resource_version.as_deref()).filter(|v| !v.is_empty());
        let continue_token = (options.continue_token.as_deref()).filter(|t| !t.is_empty());
        let mut revision: Revision = 0;
        let mut start_after = None;
        let mut at_least: Revision = 0;
        match continue_token {
            Some(token) => {
                if resource_version.is_some_and(|v| v != "0") {
                    return Err(ApiError::BadRequest(
                        "specifying resource version is not allowed when using continue".into(),
                    ));
                }
                let (key, token_revision) = decode_continue(token, &prefix)
                    .map_err(|e| ApiError::BadRequest(format!("invalid continue token: {e}")))?;
                // A negative revision continues at the latest one (kube's `-1`).
                revision = Revision::try_from(token_revision).unwrap_or(0);
                start_after = Some(key);
            }
            None => match (resource_version, options.resource_version_match.as_deref()) {
                (Some(v), Some("Exact")) => revision = parse_resource_version(v)?,
                // kube's legacy rule: a paginated list at `N` without a match is read at
                // exactly `N` (its continue tokens stay at that revision).
                (Some(v), None | Some("")) if options.limit > 0 => {
                    match parse_resource_version(v)? {
                        0 => {}
                        exact => revision = exact,
                    }
                }
                (Some(v), _) => at_least = parse_resource_version(v)?,
                (None, _) => {}
            },
        }

        // kube's `handleCompactedErrorForPaging`: the 410 carries a token to go on from
        // the same key at the latest revision (`-1`), an inconsistent but complete rest.
        let continue_key = start_after.clone();
        let list_error = |error: storage::Error| match (error, &continue_key) {
            (storage::Error::Compacted { .. }, Some(key)) => ApiError::InconsistentContinue {
                continue_token: encode_continue(key, &prefix, -1),
            },
            (error, _) => match error {
                storage::Error::Compacted { .. } => ApiError::Expired(LIST_EXPIRED.into()),
                other => object::storage_error(other, &resource, ""),
            },
        };
        let limit = usize::try_from(options.limit).unwrap_or(usize::MAX);
        let unfiltered = selectors.is_empty();
        // What follows a page is counted in the loaded watch cache's index (kube documents
        // `remainingItemCount` as an estimate), not by a storage scan of every following
        // key, which made each page of a large collection cost the whole collection.
        let cache = (self.caches.for_prefix(&self.keys().kind_prefix(info)))
            .filter(|cache| cache.revision().is_some());
        let counter = cache.as_ref().filter(|_| unfiltered);
        let mut batch = limit;
        let mut items = Vec::new();
        let mut last_key: Option<String> = None;
        let mut more = false;
        let mut remaining = None;
        loop {
            let request = ListRequest {
                prefix: prefix.clone(),
                start_after: start_after.clone(),
                limit: batch,
                revision,
                skip_remaining: counter.is_some(),
                keys_only: false,
            };
            let response = self.storage.list(request).await.map_err(list_error)?;
            revision = response.revision;
            let mut full = false;
            for kv in &response.items {
                if limit > 0 && items.len() >= limit {
                    full = true;
                    break;
                }
                last_key = Some(kv.key.clone());
                // The cache may hold this very write (a key's mod revision names one): its
                // shared encoding then serves, with no decoding or conversion, as for a GET.
                let cached = (cache.as_ref())
                    .and_then(|cache| cache.get(&kv.key).ok()?.0)
                    .filter(|cached| cached.kv.mod_revision == kv.mod_revision);
                match cached {
                    Some(cached) => {
                        if matches_cached(kind, &cached, selectors)? {
                            items.push(in_version(kind, &cached, target.version)?);
                        }
                    }
                    None => {
                        if let Some(object) = select(kind, kv, target.version, selectors)? {
                            items.push(SharedObject::from(object));
                        }
                    }
                }
            }
            if full {
                more = true;
                break;
            }
            if !response.more || limit == 0 {
                break;
            }
            if items.len() >= limit {
                more = true;
                if unfiltered {
                    remaining = match (counter, &last_key) {
                        (Some(cache), Some(key)) => (cache.count_after(&prefix, key).ok())
                            .and_then(|count| i64::try_from(count).ok()),
                        _ => i64::try_from(response.remaining).ok(),
                    };
                }
                break;
            }
            batch = batch.saturating_mul(2).min(MAX_BATCH).max(batch);
            start_after = last_key.clone();
        }
        if at_least > revision {
            return Err(ApiError::Timeout {
                message: format!("Too large resource version: {at_least}, current: {revision}"),
                retry_after_seconds: 1,
            });
        }
        let continue_token = match (more, &last_key) {
            (true, Some(key)) => Some(encode_continue(
                key,
                &prefix,
                i64::try_from(revision).unwrap_or(i64::MAX),
            )),
            _ => None,
        };
        Ok(ObjectList {
            items,
            resource_version: revision.to_string(),
            continue_token,
            remaining_item_count: remaining,
        })
    }
}

impl Registry {
    /// A list the watch cache answers, as kube's cacher does (`shouldDelegateList`, with
    /// `ConsistentListFromCache`): not a continuation, matched "not older than", at `0`
    /// whatever the limit (which the cache ignores, as kube's); otherwise with a limit only
    /// when the whole collection fits in it (one page, which storage would answer alike:
    /// `kubectl get` asks for 500); without a `resourceVersion` (a consistent read) only
    /// once the cache has reached storage's current revision, or, when it cannot be
    /// caught up, holds storage's keys at their revisions ([`Registry::verified`]).
    async fn list_cached(
        &self,
        target: Target<'_>,
        options: &ListOptions,
        selectors: &Selectors,
        prefix: &str,
    ) -> Result<Cached, ApiError> {
        let kind = target.kind;
        let resource_version = (options.resource_version.as_deref()).filter(|v| !v.is_empty());
        let continues = (options.continue_token.as_deref()).is_some_and(|t| !t.is_empty());
        let not_older_than = matches!(
            options.resource_version_match.as_deref(),
            None | Some("" | "NotOlderThan")
        );
        if continues || !not_older_than {
            return Ok(Cached::Delegated);
        }
        let at_least = resource_version.map(parse_resource_version).transpose()?;
        if options.limit > 0 && at_least != Some(0) {
            return match at_least {
                None => {
                    self.list_one_page_cached(target, options, selectors, prefix)
                        .await
                }
                // Exact for a paginated list at `N` (kube's legacy rule): storage's.
                Some(_) => Ok(Cached::Delegated),
            };
        }
        let cache = self.ready_cache(kind).await?;
        let cache = &*cache;
        let fresh = match at_least {
            None => self.cache_is_current(kind, cache).await?,
            Some(0) => true,
            Some(at_least) => self.cache_reaches(kind, cache, at_least).await?,
        };
        let snapshot = match (fresh, at_least) {
            (true, _) => cache.list(prefix).map_err(object::cache_error)?,
            (false, None) => match self.verified(kind, cache, prefix).await? {
                Some(snapshot) => snapshot,
                None => return Ok(Cached::FellBack),
            },
            (false, Some(_)) => return Ok(Cached::Delegated),
        };
        self.list_from(snapshot, target, selectors)
            .map(Cached::Served)
    }

    /// The cache's objects under `prefix` standing for storage's current state, when the
    /// cache holds exactly storage's keys there at their last writes, as a keys-only
    /// read of storage (keys and revisions, no values; `Storage::same_write`) tells: the
    /// snapshot is then the collection at that read's revision. For a cache behind
    /// storage that could not be caught up (other kinds' writes on etcd before v3.4.31):
    /// one read of the keys, not a read and a decoding of every object.
    ///
    /// When they differ, the kind's own changes up to that read may still be on their way
    /// to the cache (a kind written while others are): once the cache has the newest of
    /// the keys' revisions, each change it takes is another chance to agree, until it
    /// reaches the read's revision (it is then current itself) or
    /// [`CATCH_UP_WAIT`](kapi_storage::cache::CATCH_UP_WAIT) has passed (`None`: storage
    /// answers).
    async fn verified(
        &self,
        kind: &KindEntry,
        cache: &kapi_storage::cache::Cache,
        prefix: &str,
    ) -> Result<Option<kapi_storage::cache::Snapshot>, ApiError> {
        if cache.revision().is_none() {
            // Not loaded (a relist, or start-up): nothing to compare.
            return Ok(None);
        }
        let request = ListRequest::prefix(prefix).keys_only();
        let stored = (self.storage.list(request).await)
            .map_err(|e| object::storage_error(e, &object::resource(kind.info), ""))?;
        let deadline = std::time::Instant::now() + kapi_storage::cache::CATCH_UP_WAIT;
        // The cache cannot agree before it has the newest of those writes: waited for
        // first, with no snapshot taken meanwhile (one costs a clone per object).
        let newest = (stored.items.iter()).map(|kv| kv.mod_revision).max();
        if let Some(newest) = newest.filter(|n| cache.revision().is_some_and(|r| r < *n))
            && (cache
                .wait_for(newest, kapi_storage::cache::CATCH_UP_WAIT)
                .await)
                .is_none()
        {
            return Ok(None);
        }
        loop {
            let Ok(mut snapshot) = cache.list(prefix) else {
                return Ok(None);
            };
            if snapshot.revision >= stored.revision {
                return Ok(Some(snapshot));
            }
            let same = snapshot.objects.len() == stored.items.len()
                && (snapshot.objects.iter().zip(&stored.items)).all(|(cached, kv)| {
                    cached.kv.key == kv.key
                        && (self.storage).same_write(cached.kv.mod_revision, kv.mod_revision)
                });
            if same {
                snapshot.revision = stored.revision;
                return Ok(Some(snapshot));
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || (cache.wait_for(snapshot.revision + 1, left).await).is_none() {
                return Ok(None);
            }
        }
    }

    /// A consistent list with a limit, from the cache when the whole collection fits in
    /// one page (storage would answer the same page, without a continue token): what
    /// `kubectl get` asks for (`limit=500`). Otherwise storage's, at once when the cache is
    /// not loaded (storage serves paginated lists whatever the cache's state, as kube's).
    async fn list_one_page_cached(
        &self,
        target: Target<'_>,
        options: &ListOptions,
        selectors: &Selectors,
        prefix: &str,
    ) -> Result<Cached, ApiError> {
        let kind = target.kind;
        let limit = usize::try_from(options.limit).unwrap_or(usize::MAX);
        let cache = self.caches.for_prefix(&self.keys().kind_prefix(kind.info));
        let Some(cache) = cache.filter(|cache| cache.revision().is_some()) else {
            return Ok(Cached::Delegated);
        };
        // Not worth catching up for a collection larger than one page.
        if !cache.fits(prefix, limit) {
            return Ok(Cached::Delegated);
        }
        let snapshot = match self.cache_is_current(kind, &cache).await? {
            // The cache may have grown while it caught up.
            true => cache.list_at_most(prefix, limit).ok().flatten(),
            false => match self.verified(kind, &cache, prefix).await? {
                Some(snapshot) => Some(snapshot).filter(|s| s.objects.len() <= limit),
                None => return Ok(Cached::FellBack),
            },
        };
        match snapshot {
            Some(snapshot) => self
                .list_from(snapshot, target, selectors)
                .map(Cached::Served),
            None => Ok(Cached::Delegated),
        }
    }

    /// The objects of `snapshot` that match the selectors, in `target`'s version.
    fn list_from(
        &self,
        snapshot: kapi_storage::cache::Snapshot,
        target: Target<'_>,
        selectors: &Selectors,
    ) -> Result<ObjectList, ApiError> {
        let kind = target.kind;
        let mut items = Vec::new();
        for cached in &snapshot.objects {
            if matches_cached(kind, cached, selectors)? {
                items.push(in_version(kind, cached, target.version)?);
            }
        }
        Ok(ObjectList {
            items,
            resource_version: snapshot.revision.to_string(),
            continue_token: None,
            remaining_item_count: None,
        })
    }
}

/// Who answers a list: the watch cache, or storage (a consistent read the cache could not
/// answer, or a list kube's cacher delegates).
enum Cached {
    Served(ObjectList),
    FellBack,
    Delegated,
}

/// Counts a consistent list (`apiserver_watch_cache_consistent_read_total`, as kube's
/// cacher counts its `GetList`s): whether it succeeded, and whether storage answered.
fn consistent_read(kind: &KindEntry, success: bool, fallback: bool) {
    let labels = kapi_metrics::ConsistentReadLabels {
        resource: kind.info.qualified_resource(),
        success: if success { "true" } else { "false" },
        fallback: if fallback { "true" } else { "false" },
    };
    (kapi_metrics::global().consistent_reads).with_or_new(&labels, |c| c.inc());
}

/// The object at `kv` in `version` when it matches the selectors.
fn select(
    kind: &KindEntry,
    kv: &KeyValue,
    version: &str,
    selectors: &Selectors,
) -> Result<Option<Value>, ApiError> {
    let stored = object::decode(kv)?;
    if !selectors.matches_labels(&stored) {
        return Ok(None);
    }
    let hub = kind.from_stored(stored).map_err(internal)?;
    if selectors.selects_fields() {
        let json = kind.hub_json(&hub).map_err(internal)?;
        if !selectors.matches_fields(kind.info, &json) {
            return Ok(None);
        }
    }
    let mut object = kind.from_hub(hub, version).map_err(internal)?;
    object::set_resource_version(&mut object, kv.mod_revision);
    Ok(Some(object))
}

/// kube's `ValidateListOptions` for what a plain list reads.
fn validate_list_options(options: &ListOptions) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    let resource_version = options.resource_version.as_deref().unwrap_or("");
    let continues = options
        .continue_token
        .as_deref()
        .is_some_and(|t| !t.is_empty());
    let forbidden = |detail: &str| {
        FieldError::new(
            FieldErrorType::Forbidden,
            "resourceVersionMatch",
            None,
            detail,
        )
    };
    match options.resource_version_match.as_deref().unwrap_or("") {
        "" => {}
        matching @ ("Exact" | "NotOlderThan") => {
            if resource_version.is_empty() {
                errors.push(forbidden(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if continues {
                errors.push(forbidden(
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matching == "Exact" && resource_version == "0" {
                errors.push(forbidden(
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        other => errors.push(FieldError::new(
            FieldErrorType::NotSupported,
            "resourceVersionMatch",
            Some(Value::String(other.to_owned())),
            "supported values: \"Exact\", \"NotOlderThan\"",
        )),
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid {
        group: "meta.k8s.io".into(),
        kind: "ListOptions".into(),
        name: String::new(),
        causes: errors,
    })
}

/// kube's `continueToken`.
#[derive(Serialize, Deserialize)]
struct ContinueToken {
    #[serde(rename = "v")]
    api_version: String,
    #[serde(rename = "rv")]
    resource_version: i64,
    #[serde(rename = "start")]
    start_key: String,
}

/// A token to continue after `key` (which starts with `prefix`) at `revision` (`-1`: the
/// latest).
fn encode_continue(key: &str, prefix: &str, revision: i64) -> String {
    let token = ContinueToken {
        api_version: "meta.k8s.io/v1".into(),
        resource_version: revision,
        start_key: format!("{}\0", key.strip_prefix(prefix).unwrap_or(key)),
    };
    let json = serde_json::to_vec(&token).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(json)
}

/// The key to continue after, and the revision, of a token (kube's `DecodeContinue`: the
/// start key cannot leave `prefix`).
fn decode_continue(token: &str, prefix: &str) -> Result<(String, i64), String> {
    let invalid = |detail: &dyn std::fmt::Display| format!("continue key is not valid: {detail}");
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|e| invalid(&e))?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|e| invalid(&e))?;
    if token.api_version != "meta.k8s.io/v1" {
        return Err(invalid(&format_args!(
            "server does not recognize this encoded version {:?}",
            token.api_version
        )));
    }
    if token.resource_version == 0 {
        return Err(invalid(
            &"incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    if token.start_key.is_empty() {
        return Err(invalid(&"encoded start key empty (version meta.k8s.io/v1)"));
    }
    let key = if token.start_key.starts_with('/') {
        token.start_key.clone()
    } else {
        format!("/{}", token.start_key)
    };
    let clean = (key[1..].split('/')).all(|segment| !matches!(segment, "" | "." | ".."));
    if !clean {
        return Err(invalid(&token.start_key));
    }
    // kube's tokens start at `<last key>\0`: the first key after the last one read.
    let relative = &key[1..];
    let start = relative.strip_suffix('\0').unwrap_or(relative);
    Ok((format!("{prefix}{start}"), token.resource_version))
}

/// The `Scale` of the stored object `kv` of `kind`, at its revision.
fn scale_view(
    kind: &KindEntry,
    scale: &ScaleInfo,
    kv: &KeyValue,
) -> Result<SharedObject, ApiError> {
    let hub = object::decode_hub(kind, kv)?;
    let hub = kind.hub_json(&hub).map_err(internal)?;
    Ok(SharedObject::from(super::scale::view(
        scale,
        &hub,
        kv.mod_revision,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_stay_under_the_prefix() {
        let prefix = "/registry/configmaps/default/";
        let token = encode_continue("/registry/configmaps/default/b", prefix, 12);
        let json = String::from_utf8(URL_SAFE_NO_PAD.decode(&token).unwrap()).unwrap();
        assert_eq!(json, r#"{"v":"meta.k8s.io/v1","rv":12,"start":"b\u0000"}"#);
        assert_eq!(
            decode_continue(&token, prefix),
            Ok(("/registry/configmaps/default/b".to_owned(), 12))
        );
        let forged = |start: &str, rv: i64| {
            let json = serde_json::json!({"v": "meta.k8s.io/v1", "rv": rv, "start": start});
            URL_SAFE_NO_PAD.encode(json.to_string())
        };
        assert_eq!(
            decode_continue(&forged("../secrets/x", 3), prefix),
            Err("continue key is not valid: ../secrets/x".to_owned())
        );
        assert_eq!(
            decode_continue(&forged("b", 0), prefix),
            Err("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_owned())
        );
        assert!(
            decode_continue("%%%", prefix)
                .unwrap_err()
                .starts_with("continue key is not valid: ")
        );
    }
}
