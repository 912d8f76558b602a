//! kube's reinvocation of mutating admission (`admission.ReinvocationContext`): the
//! mutating chain runs once, and once more when a mutating admission policy or webhook
//! changed the object (every in-process plugin again, and those policies and webhooks
//! with `reinvocationPolicy: IfNeeded` that something changed the object after).
//!
//! Each reinvocable plugin keeps an [`Invoked`] record in the write's [`Reinvocation`]:
//! which of its `IfNeeded` hooks ran since the object last changed, which are to run
//! again, and the object as it last left the plugin (a change by anything else between
//! its passes counts as a change after all of them).

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use kapi_core::error::ApiError;
use kapi_registry::Registry;
use kapi_registry::admission::Attributes;

use super::Reinvocable;

/// Runs `mutator`'s passes over a write: once, and again when it asked (kube's
/// `reinvoker`): the object as they leave it, and their warnings.
pub async fn reinvoking(
    mutator: &(impl Reinvocable + ?Sized),
    registry: &Registry,
    attributes: &Attributes<'_>,
    object: Value,
    old: Option<&Value>,
) -> Result<(Value, Vec<String>), ApiError> {
    let mut reinvocation = Reinvocation::default();
    let (object, mut warnings) =
        (mutator.mutate_pass(registry, attributes, object, old, &mut reinvocation)).await?;
    if !reinvocation.wanted {
        return Ok((object, warnings));
    }
    reinvocation.again = true;
    let (object, more) =
        (mutator.mutate_pass(registry, attributes, object, old, &mut reinvocation)).await?;
    warnings.extend(more);
    Ok((object, warnings))
}

/// One write's reinvocation context.
#[derive(Default)]
pub struct Reinvocation {
    /// This is the second pass.
    pub again: bool,
    /// Something changed the object: the chain runs a second time.
    pub wanted: bool,
    records: HashMap<&'static str, Invoked>,
}

impl Reinvocation {
    /// The record of the plugin `name`.
    pub fn record(&mut self, name: &'static str) -> &mut Invoked {
        self.records.entry(name).or_default()
    }
}

/// A reinvocable plugin's record, its hooks named by keys of its own.
#[derive(Default)]
pub struct Invoked {
    /// `IfNeeded` hooks that ran since the object last changed.
    previously: Vec<String>,
    /// Those to run in the second pass.
    again: BTreeSet<String>,
    /// The object as the plugin last left it.
    last_output: Option<Value>,
}

impl Invoked {
    /// Starts a pass on `object`: a change since the plugin's last pass (by the plugins
    /// between) asks for its `IfNeeded` hooks again.
    pub fn begin(&mut self, object: &Value) {
        if self.last_output.as_ref().is_some_and(|last| last != object) {
            self.changed();
        }
    }

    /// Whether hook `key` runs in this pass (`again`: the second pass).
    pub fn runs(&self, key: &str, again: bool) -> bool {
        !again || self.again.contains(key)
    }

    /// Hook `key` ran (`if_needed`: its policy is `IfNeeded`), changing the object or not.
    pub fn ran(&mut self, key: String, if_needed: bool, changed: bool) {
        if changed {
            self.changed();
        }
        if if_needed {
            self.previously.push(key);
        }
    }

    /// The object changed: every `IfNeeded` hook that ran before runs again.
    pub fn changed(&mut self) {
        self.again.extend(self.previously.drain(..));
    }

    /// Ends a pass, the object as the plugin leaves it (kept only while an `IfNeeded` hook
    /// could run again for a later change: nothing to compare otherwise).
    pub fn end(&mut self, object: &Value) {
        self.last_output = (!self.previously.is_empty()).then(|| object.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_if_needed_hook_runs_again_only_after_a_later_change() {
        let mut record = Invoked::default();
        record.begin(&json!(1));
        record.ran("a".into(), true, true);
        record.ran("never".into(), false, false);
        record.ran("b".into(), true, false);
        record.end(&json!(2));
        // Nothing changed after `a` or `b`.
        assert!(!record.runs("a", true) && !record.runs("b", true));
        // A later plugin changed the object: both run again, `never` does not.
        record.begin(&json!(3));
        assert!(record.runs("a", true) && record.runs("b", true));
        assert!(!record.runs("never", true));
        assert!(record.runs("never", false));
    }

    #[test]
    fn a_change_by_a_later_hook_of_the_same_plugin_counts() {
        let mut record = Invoked::default();
        record.begin(&json!(1));
        record.ran("a".into(), true, false);
        record.ran("b".into(), false, true);
        record.end(&json!(2));
        record.begin(&json!(2));
        assert!(record.runs("a", true));
        assert!(!record.runs("b", true));
    }
}
