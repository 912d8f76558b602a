//! What a kind's store does around its writes besides storing them (kube's `BeginCreate`,
//! `BeginUpdate` and `AfterDelete` of a generic store): a Service takes its cluster IPs and
//! node ports before it is stored, and gives them back when the write fails or when the
//! Service no longer needs them.
//!
//! The registry calls a kind's [`WriteHooks`] on the object as stored (its hub JSON): at a
//! create after the server-set metadata and field management, before the kind's
//! validation; at an update after the strategy's `prepare_for_update`, before validation;
//! after the object is gone from storage. What a begin hook makes is finished once the
//! write's outcome is known: [`Finish::finish`] with `true` once stored, `false` when the
//! write failed afterwards (a validation error, a conflict, a name taken). A write
//! abandoned without either (the request dropped) finishes as failed on its own.

use serde_json::Value;

use crate::Registry;
use kapi_core::error::ApiError;

/// What a begin hook does once the write is done (`true`) or failed (`false`).
#[async_trait::async_trait]
pub trait Finish: Send {
    /// Finishes: commits what the hook took, or gives it back.
    async fn finish(self: Box<Self>, success: bool);
}

/// A kind's hooks around its writes.
#[async_trait::async_trait]
pub trait WriteHooks: Send + Sync {
    /// Before a create of `object` (hub JSON, which it may change). A dry run takes
    /// nothing it would have to give back.
    async fn begin_create(
        &self,
        registry: &Registry,
        object: &mut Value,
        dry_run: bool,
    ) -> Result<Option<Box<dyn Finish>>, ApiError>;

    /// Before an update of `old` into `object` (hub JSON, which it may change).
    async fn begin_update(
        &self,
        registry: &Registry,
        object: &mut Value,
        old: &Value,
        dry_run: bool,
    ) -> Result<Option<Box<dyn Finish>>, ApiError>;

    /// After `old` was deleted from storage (not called for a dry run).
    async fn after_delete(&self, registry: &Registry, old: &Value);
}

/// The registered hooks, by group and resource.
pub(crate) type Hooks = super::hooks::ByResource<dyn WriteHooks>;

/// A begin hook's [`Finish`], finished as failed when dropped unfinished (on its own task:
/// dropping cannot wait).
pub(crate) struct Finishing(Option<Box<dyn Finish>>);

impl Finishing {
    pub(crate) fn new(finish: Option<Box<dyn Finish>>) -> Finishing {
        Finishing(finish)
    }

    /// The write is done.
    pub(crate) async fn succeeded(mut self) {
        if let Some(finish) = self.0.take() {
            finish.finish(true).await;
        }
    }

    /// The write failed, or will be tried again from a fresh read.
    pub(crate) async fn failed(mut self) {
        if let Some(finish) = self.0.take() {
            finish.finish(false).await;
        }
    }
}

impl Drop for Finishing {
    fn drop(&mut self) {
        if let Some(finish) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(finish.finish(false));
        }
    }
}

impl Registry {
    /// Runs `hooks` around every write of `group`/`plural` from now on.
    pub fn set_write_hooks(
        &self,
        group: &str,
        plural: &str,
        hooks: std::sync::Arc<dyn WriteHooks>,
    ) {
        self.write_hooks.set(group, plural, "", hooks);
    }

    /// The write hooks of `info`'s kind, if any.
    pub(crate) fn write_hooks_of(
        &self,
        info: &kapi_core::api::KindInfo,
    ) -> Option<std::sync::Arc<dyn WriteHooks>> {
        self.write_hooks.get(info.group, info.plural, "")
    }
}
