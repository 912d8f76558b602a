//! kube's `GuaranteedUpdate`: a change of a stored object read, changed and written back
//! with compare-and-swap, read again and changed again on a conflict, with no strategy,
//! admission or field management. What kube's Pod binding and eviction write, what the
//! namespace controller sets on a namespace, and (as kube's `finalize` does) a namespace
//! deleted once nothing holds it.

use serde_json::Value;

use super::object::{self, MAX_RETRIES, OPTIMISTIC_LOCK};
use super::{Registry, Target};
use kapi_core::error::ApiError;
use kapi_storage as storage;

/// What a guaranteed update does with the object its change made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Write {
    /// Stores it (when it changed).
    Store,
    /// Deletes the object instead, as stored when it was read.
    Delete,
}

impl Registry {
    /// Applies `change` to the stored object `name` of `target` (its hub JSON, as stored,
    /// and its resourceVersion) and stores the result (compare-and-swap, retried on conflicts), with no strategy,
    /// admission or field management: kube's `GuaranteedUpdate`, as its Pod binding writes
    /// a pod. `change` refuses with an error; an unchanged object is not written. A dry run
    /// stores nothing. Returns the object after, in `target.version`.
    pub async fn change_stored(
        &self,
        target: Target<'_>,
        name: &str,
        dry_run: bool,
        mut change: impl FnMut(&mut Value, u64) -> Result<(), ApiError> + Send,
    ) -> Result<Value, ApiError> {
        let store =
            move |object: &mut Value, revision| change(object, revision).map(|()| Write::Store);
        let (object, _) = self.guaranteed_update(target, name, dry_run, store).await?;
        Ok(object)
    }

    /// [`Registry::change_stored`] whose `change` may also say that the object goes
    /// ([`Write::Delete`]). Returns the object as changed, in `target.version`, and whether
    /// it was deleted.
    pub(crate) async fn guaranteed_update(
        &self,
        target: Target<'_>,
        name: &str,
        dry_run: bool,
        mut change: impl FnMut(&mut Value, u64) -> Result<Write, ApiError> + Send,
    ) -> Result<(Value, bool), ApiError> {
        let kind = target.kind;
        let resource = object::resource(kind.info);
        let key = self.keys().object(kind.info, target.namespace, name)?;
        let not_found = || ApiError::NotFound {
            resource: resource.clone(),
            name: name.to_owned(),
        };
        for _ in 0..MAX_RETRIES {
            let kv = (self.storage.get(&key, 0).await)
                .map_err(|e| object::storage_error(e, &resource, name))?
                .ok_or_else(not_found)?;
            let stored = object::decode(&kv)?;
            let mut changed = stored.clone();
            let write = change(&mut changed, kv.mod_revision)?;
            // The object as changed, at the revision it was read at.
            let as_read = |changed: Value| {
                let kv = storage::KeyValue {
                    value: object::encode(changed)?,
                    ..kv.clone()
                };
                object::stored_in_version(kind, &kv, target.version, kv.mod_revision)
            };
            let unchanged = write == Write::Store && changed == stored;
            if unchanged || dry_run {
                return Ok((as_read(changed)?, false));
            }
            let result = match write {
                Write::Store => (self.storage)
                    .update(&kv.key, object::encode(changed.clone())?, kv.mod_revision)
                    .await
                    .map(Some),
                Write::Delete => (self.storage)
                    .delete(&kv.key, Some(kv.mod_revision))
                    .await
                    .map(|_| None),
            };
            match result {
                Ok(Some(updated)) => {
                    let revision = updated.mod_revision;
                    let object =
                        object::stored_in_version(kind, &updated, target.version, revision)?;
                    return Ok((object, false));
                }
                Ok(None) => return Ok((as_read(changed)?, true)),
                Err(storage::Error::Conflict { .. }) => continue,
                Err(storage::Error::NotFound { .. }) => return Err(not_found()),
                Err(e) => return Err(object::storage_error(e, &resource, name)),
            }
        }
        Err(ApiError::Conflict {
            resource,
            name: name.to_owned(),
            message: OPTIMISTIC_LOCK.into(),
        })
    }
}
