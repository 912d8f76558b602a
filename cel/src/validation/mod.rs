//! A structural schema's `x-kubernetes-validations` rules, compiled once and applied to
//! objects as kube-apiserver applies them (`apiextensions-apiserver`'s
//! `pkg/apiserver/schema/cel`): every rule at every node the object has, `self` the value
//! there and `oldSelf` the correlated old value on update (object properties, map entries
//! of granular maps, list-map items by key), transition rules skipped where there is no old
//! value, a runtime budget for the whole object and a limit per rule, and kube's errors
//! (`<path>: Invalid value: "object": failed rule: ...`).
//!
//! Ratcheting (kube's `CRDValidationRatcheting`): a failed rule that does not read
//! `oldSelf`, on a value equal to its correlated old value, is reported as a warning,
//! not an error.
//!
//! The schema is JSON (the CustomResourceDefinition's `openAPIV3Schema`); this module
//! knows no resource types and reports errors as [`RuleError`]s for the caller to map.

mod convert;
mod field_path;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::checker::Reference;
use crate::environment::Feature;
use crate::interpreter::Failure;
use crate::library::Env;
use crate::program::{Compiled, compile};
use crate::ty::Type;
use crate::types::{DeclType, with_type_and_object_meta};
use crate::value::Value;

pub(crate) use convert::plain;
pub use convert::to_value;
pub use field_path::valid_field_path;

/// The runtime cost budget of one object's rules (kube's `RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// The runtime cost limit of one rule's evaluation (kube's `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The longest message a `messageExpression` may make.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// One rule as a schema declares it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// `rule`.
    pub rule: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`.
    pub message_expression: String,
    /// `reason`.
    pub reason: Option<String>,
    /// `fieldPath`.
    pub field_path: String,
    /// `optionalOldSelf`.
    pub optional_old_self: bool,
}

impl Rule {
    /// The rules of a schema node's `x-kubernetes-validations`.
    pub fn of(schema: &Json) -> Vec<Rule> {
        let text = |v: &Json, key: &str| v.get(key).and_then(Json::as_str).unwrap_or("").to_owned();
        (schema
            .get("x-kubernetes-validations")
            .and_then(Json::as_array))
        .into_iter()
        .flatten()
        .map(|v| Rule {
            rule: text(v, "rule"),
            message: text(v, "message"),
            message_expression: text(v, "messageExpression"),
            reason: v.get("reason").and_then(Json::as_str).map(str::to_owned),
            field_path: text(v, "fieldPath"),
            optional_old_self: v.get("optionalOldSelf").and_then(Json::as_bool) == Some(true),
        })
        .collect()
    }

    /// What errors name the rule by: its message, else its source (kube's
    /// `ruleErrorString`).
    fn name(&self) -> &str {
        match self.message.trim() {
            "" => self.rule.trim(),
            message => message,
        }
    }
}

/// A rule compiled, or why it did not compile.
#[derive(Debug)]
pub struct CompiledRule {
    /// The rule.
    pub rule: Rule,
    /// Its program, or kube's error (`compilation failed: ...`).
    pub program: Result<Option<Compiled>, String>,
    /// Its message expression's program, or its error.
    pub message: Result<Option<Compiled>, String>,
    /// Whether it reads `oldSelf` (a transition rule).
    pub uses_old_self: bool,
    /// The rule's estimated cost at most (kube's `MaxCost`, [`crate::cost::estimate`]);
    /// 0 when it did not compile.
    pub max_cost: u64,
    /// The message expression's estimated cost at most (kube's
    /// `MessageExpressionMaxCost`); 0 when there is none or it did not compile.
    pub message_max_cost: u64,
    /// The rule's `fieldPath` as kube prints it (`spec.items`), when valid: where its
    /// errors are reported, below the node.
    pub field_path: Option<String>,
}

/// Compiles the rules of one schema node (`root` at a resource's root) in the environment
/// of `features`.
pub fn compile_rules(schema: &Json, root: bool, features: &[Feature]) -> Vec<CompiledRule> {
    let rules = Rule::of(schema);
    if rules.is_empty() {
        return Vec::new();
    }
    let decl = DeclType::of_schema(schema, root);
    let self_type = match &decl {
        Some(decl) => Type::of_decl(decl, "selfType0"),
        None => Type::Dyn,
    };
    let mut env = Env::new(features);
    env.variable("self", self_type.clone());
    env.variable("oldSelf", self_type.clone());
    let mut optional_env = env.clone();
    optional_env.variable("oldSelf", Type::optional(self_type));
    rules
        .into_iter()
        .map(|rule| {
            let env = if rule.optional_old_self {
                &optional_env
            } else {
                &env
            };
            let mut compiled = compile_rule(rule, env, decl.as_ref());
            if !compiled.rule.field_path.is_empty() {
                compiled.field_path = valid_field_path(&compiled.rule.field_path, schema).ok();
            }
            compiled
        })
        .collect()
}

fn compile_rule(rule: Rule, env: &Env, decl: Option<&DeclType>) -> CompiledRule {
    let mut compiled = CompiledRule {
        program: Ok(None),
        message: Ok(None),
        uses_old_self: false,
        max_cost: 0,
        message_max_cost: 0,
        field_path: None,
        rule,
    };
    if compiled.rule.rule.trim().is_empty() {
        return compiled;
    }
    compiled.program = match compile(&compiled.rule.rule, env) {
        Err(issues) => Err(format!("compilation failed: {issues}")),
        Ok(program) if *program.checked.output() != Type::Bool => {
            Err("cel expression must evaluate to a bool".to_owned())
        }
        Ok(program) => match crate::program::instantiation_error(&program.checked) {
            Some(error) => Err(format!("program instantiation failed: {error}")),
            None => {
                compiled.uses_old_self = (program.checked.references.values())
                    .any(|r| matches!(r, Reference::Variable(name) if name == "oldSelf"));
                Ok(Some(program))
            }
        },
    };
    if !compiled.rule.message_expression.is_empty() {
        compiled.message = match compile(&compiled.rule.message_expression, env) {
            Err(issues) => Err(format!("messageExpression compilation failed: {issues}")),
            Ok(program) if *program.checked.output() != Type::String => {
                Err("messageExpression must evaluate to a string".to_owned())
            }
            Ok(program) => Ok(Some(program)),
        };
    }
    let max_cost = |c: &Result<Option<Compiled>, String>| match c {
        Ok(Some(c)) => crate::cost::estimate(&c.checked, decl).max,
        _ => 0,
    };
    (compiled.max_cost, compiled.message_max_cost) =
        (max_cost(&compiled.program), max_cost(&compiled.message));
    compiled
}

/// How a rule's failure is reported (a rule's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `InternalError`.
    Internal,
}

/// An error of a rule, for the caller to turn into its field error.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleError {
    /// kube's field path (`spec.items[0]`), `<nil>` at the root.
    pub path: String,
    /// How it is reported.
    pub kind: ErrorKind,
    /// The value shown: the schema node's type (`"object"`).
    pub value: String,
    /// The message.
    pub detail: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self.kind {
            ErrorKind::Invalid => "Invalid value",
            ErrorKind::Forbidden => "Forbidden",
            ErrorKind::Required => "Required value",
            ErrorKind::Duplicate => "Duplicate value",
            ErrorKind::Internal => "Internal error",
        };
        match self.kind {
            ErrorKind::Invalid | ErrorKind::Duplicate => write!(
                f,
                "{}: {label}: {:?}: {}",
                self.path, self.value, self.detail
            ),
            _ => write!(f, "{}: {label}: {}", self.path, self.detail),
        }
    }
}

/// A schema node with the rules of it and of its descendants.
#[derive(Debug, Default)]
pub struct Validator {
    /// The node's type (`object`, `string`, ...; empty for int-or-string).
    ty: String,
    rules: Vec<CompiledRule>,
    properties: BTreeMap<String, Validator>,
    additional: Option<Box<Validator>>,
    items: Option<Box<Validator>>,
    /// The rules of the node's `allOf` branches, typed by the node's own schema (as kube
    /// types them), applied to the same value.
    all_of: Vec<Validator>,
    /// The node's schema, to convert values at it.
    schema: Arc<Json>,
    /// Whether map entries correlate with the old object's (not `x-kubernetes-map-type: atomic`).
    correlatable_map: bool,
    /// `x-kubernetes-list-map-keys` of a list-map: items correlate by them.
    map_keys: Option<Vec<String>>,
}

/// How a node's value relates to the old object's (kube's `CorrelatedObject`): what
/// `oldSelf` is, and whether an error there ratchets.
#[derive(Clone, Copy)]
enum Correlation<'a> {
    /// No old object (a create), or type meta: nothing ratchets.
    None,
    /// The node's old value, if the old object has one there.
    Correlated(Option<&'a Json>),
    /// Under a list or map whose items cannot be matched with the old ones: no `oldSelf`,
    /// and errors ratchet when the nearest matched node above is unchanged.
    Uncorrelated {
        /// Whether that node is unchanged.
        parent_unchanged: bool,
    },
}

/// The outcome of validating an object.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    /// The errors.
    pub errors: Vec<RuleError>,
    /// Errors of unchanged values, ratcheted into warnings.
    pub warnings: Vec<String>,
    /// Message expressions that failed, and why (kube logs them and falls back to the
    /// rule's message).
    pub logs: Vec<String>,
    /// The limit of each evaluation.
    per_call_limit: u64,
    /// Whether the object's budget (not a rule's limit) ran out.
    pub budget_exhausted: bool,
    /// What is left of the budget; negative when it ran out.
    pub remaining: i64,
}

impl Outcome {
    /// Takes `cost` from what is left of the budget; `false` (the budget spent, for good)
    /// when it does not fit.
    fn spend(&mut self, cost: u64) -> bool {
        if cost as i64 > self.remaining {
            self.budget_exhausted = true;
            self.remaining = -1;
            return false;
        }
        self.remaining -= cost as i64;
        true
    }
}

impl Validator {
    /// The validator of a resource's structural `schema`, or `None` when it has no rules.
    /// Rules compile in the environment of `features` (kube's stored-expressions
    /// environment, so that what was accepted once always compiles).
    pub fn new(schema: &Json, features: &[Feature]) -> Option<Validator> {
        Validator::new_at(schema, true, features)
    }

    /// [`Validator::new`] of a schema that is a resource's root only when `resource_root`.
    pub fn new_at(schema: &Json, resource_root: bool, features: &[Feature]) -> Option<Validator> {
        let validator = Validator::node(schema, resource_root, features);
        validator.has_rules().then_some(validator)
    }

    fn node(schema: &Json, root: bool, features: &[Feature]) -> Validator {
        let embedded = schema
            .get("x-kubernetes-embedded-resource")
            .and_then(Json::as_bool)
            == Some(true);
        let mut validator = Validator {
            ty: schema
                .get("type")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_owned(),
            rules: compile_rules(schema, root || embedded, features),
            schema: Arc::new(if root || embedded {
                with_type_and_object_meta(schema)
            } else {
                schema.clone()
            }),
            correlatable_map: schema.get("x-kubernetes-map-type").and_then(Json::as_str)
                != Some("atomic"),
            map_keys: (schema.get("x-kubernetes-list-type").and_then(Json::as_str) == Some("map"))
                .then(|| {
                    (schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Json::as_array))
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .map(str::to_owned)
                    .collect()
                }),
            ..Validator::default()
        };
        for (name, property) in schema
            .get("properties")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            let child = Validator::node(property, false, features);
            if child.has_rules() {
                validator.properties.insert(name.clone(), child);
            }
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            let child = Validator::node(additional, false, features);
            if child.has_rules() {
                validator.additional = Some(Box::new(child));
            }
        }
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            let child = Validator::node(items, false, features);
            if child.has_rules() {
                validator.items = Some(Box::new(child));
            }
        }
        for branch in schema
            .get("allOf")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let shadow = overlay(&strip(schema), branch);
            let child = Validator::node(&shadow, root, features);
            if child.has_rules() {
                validator.all_of.push(child);
            }
        }
        validator
    }

    fn has_rules(&self) -> bool {
        !self.all_of.is_empty()
            || !self.rules.is_empty()
            || !self.properties.is_empty()
            || self.additional.is_some()
            || self.items.is_some()
    }

    /// Applies the rules to `object` (and `old`, on update) within `budget`.
    pub fn validate(&self, object: &Json, old: Option<&Json>, budget: u64) -> Outcome {
        self.validate_limited(object, old, budget, PER_CALL_LIMIT)
    }

    /// [`Validator::validate`] if it costs at most `slice`: `None` when it would cost more
    /// (run it again with [`Validator::validate`], somewhere an expensive object may take
    /// its time). The rules of most objects cost little; those of some can cost kube's
    /// whole budget.
    pub fn validate_within(
        &self,
        object: &Json,
        old: Option<&Json>,
        slice: u64,
    ) -> Option<Outcome> {
        let outcome = self.validate_limited(object, old, slice, PER_CALL_LIMIT);
        (!outcome.budget_exhausted).then_some(outcome)
    }

    /// [`Validator::validate`] with each evaluation limited to `per_call_limit`.
    pub fn validate_limited(
        &self,
        object: &Json,
        old: Option<&Json>,
        budget: u64,
        per_call_limit: u64,
    ) -> Outcome {
        let mut outcome = Outcome {
            remaining: budget.min(i64::MAX as u64) as i64,
            per_call_limit,
            ..Outcome::default()
        };
        let mut path = String::new();
        let correlation = match old {
            Some(old) => Correlation::Correlated(Some(old)),
            None => Correlation::None,
        };
        self.walk(object, correlation, &mut path, &mut outcome);
        outcome
    }

    fn walk<'a>(
        &self,
        value: &Json,
        correlation: Correlation<'a>,
        path: &mut String,
        outcome: &mut Outcome,
    ) {
        if value.is_null() || outcome.remaining < 0 {
            return;
        }
        let old = match correlation {
            Correlation::Correlated(old) => old.filter(|o| !o.is_null()),
            _ => None,
        };
        let unchanged = match correlation {
            Correlation::Correlated(old) => old.is_some_and(|o| o == value),
            Correlation::Uncorrelated { parent_unchanged } => parent_unchanged,
            Correlation::None => false,
        };
        if !self.rules.is_empty() {
            self.apply(value, old, path, unchanged, outcome);
            if outcome.remaining < 0 {
                return;
            }
        }
        for branch in &self.all_of {
            branch.walk(value, correlation, path, outcome);
            if outcome.remaining < 0 {
                return;
            }
        }
        // What a child's old value is, when it has one: kube's `CorrelatedObject`.
        let child = |old_child: Option<&'a Json>, correlatable: bool| match correlation {
            Correlation::Correlated(_) if correlatable => Correlation::Correlated(old_child),
            Correlation::Correlated(_) => Correlation::Uncorrelated {
                parent_unchanged: unchanged,
            },
            other => other,
        };
        match value {
            Json::Object(fields) => {
                for (key, field) in fields {
                    let validator = match self.properties.get(key) {
                        Some(child) => child,
                        None => match &self.additional {
                            Some(child) if !self.properties.contains_key(key) => child,
                            _ => continue,
                        },
                    };
                    let old_field = old.and_then(|o| o.get(key));
                    // A resource's type meta never ratchets.
                    let correlation =
                        match path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind") {
                            true => Correlation::None,
                            false => child(old_field, self.correlatable_map),
                        };
                    let len = path.len();
                    if self.properties.contains_key(key) {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(key);
                    } else {
                        path.push_str(&format!("[{key}]"));
                    }
                    validator.walk(field, correlation, path, outcome);
                    path.truncate(len);
                    if outcome.remaining < 0 {
                        return;
                    }
                }
            }
            Json::Array(items) => {
                let Some(validator) = &self.items else { return };
                for (i, item) in items.iter().enumerate() {
                    let old_item = match (&self.map_keys, old) {
                        (Some(keys), Some(Json::Array(old_items))) => old_items
                            .iter()
                            .find(|o| keys.iter().all(|k| o.get(k) == item.get(k))),
                        _ => None,
                    };
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    validator.walk(
                        item,
                        child(old_item, self.map_keys.is_some()),
                        path,
                        outcome,
                    );
                    path.truncate(len);
                    if outcome.remaining < 0 {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    /// This node's rules on `value`.
    fn apply(
        &self,
        value: &Json,
        old: Option<&Json>,
        path: &str,
        unchanged: bool,
        outcome: &mut Outcome,
    ) {
        let shown_path = if path.is_empty() { "<nil>" } else { path };
        let invalid = |detail: String| RuleError {
            path: shown_path.to_owned(),
            kind: ErrorKind::Invalid,
            value: self.ty.clone(),
            detail,
        };
        if outcome.remaining <= 0 {
            outcome.errors.push(invalid(
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            ));
            outcome.budget_exhausted = true;
            outcome.remaining = -1;
            return;
        }
        let this = to_value(value, &self.schema);
        let old_value = old.map(|o| to_value(o, &self.schema));
        for compiled in &self.rules {
            let rule = &compiled.rule;
            let program = match &compiled.program {
                Err(error) => {
                    outcome
                        .errors
                        .push(invalid(format!("rule compile error: {error}")));
                    continue;
                }
                Ok(None) => continue,
                Ok(Some(program)) => program,
            };
            if compiled.uses_old_self && old_value.is_none() && !rule.optional_old_self {
                continue;
            }
            let old_self = match (rule.optional_old_self, &old_value) {
                (true, Some(v)) => Value::Optional(Some(Arc::new(v.clone()))),
                (true, None) => Value::Optional(None),
                (false, Some(v)) => v.clone(),
                (false, None) => Value::Null,
            };
            let variables = [("self", this.clone()), ("oldSelf", old_self)];
            // Stopped as soon as it would pass the object's budget too: kube finds that
            // after the rule, with the same verdict.
            let limit = outcome
                .per_call_limit
                .min(outcome.remaining.max(0) as u64 + 1);
            let (result, cost) = program.program.eval(&variables, limit);
            if !outcome.spend(cost) {
                outcome.errors.push(invalid(
                    "validation failed due to running out of cost budget, no further validation rules will be run".into(),
                ));
                return;
            }
            let passed = match result {
                Ok(Value::Bool(true)) => true,
                Ok(_) => false,
                Err(Failure::CostLimitExceeded) => {
                    outcome.errors.push(invalid(format!(
                        "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                        rule.name()
                    )));
                    outcome.remaining = -1;
                    return;
                }
                Err(Failure::Error(e)) if e.0.starts_with("no such overload") => {
                    outcome.errors.push(invalid(format!(
                        "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.name()
                    )));
                    continue;
                }
                Err(Failure::Error(e)) => {
                    outcome
                        .errors
                        .push(invalid(format!("{e} evaluating rule: {}", rule.name())));
                    continue;
                }
            };
            if passed {
                continue;
            }
            let field_path = match compiled.field_path.as_deref() {
                None | Some("") => shown_path.to_owned(),
                Some(extra) if path.is_empty() => extra.to_owned(),
                Some(extra) => format!("{path}.{extra}"),
            };
            let mut detail = match rule.message.trim() {
                "" => format!("failed rule: {}", rule.name()),
                message => message.to_owned(),
            };
            if let Ok(Some(message)) = &compiled.message {
                let limit = outcome.per_call_limit;
                let (result, cost) = message.program.eval(&variables, limit);
                if !outcome.spend(cost) {
                    outcome.errors.push(invalid(
                        "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".into(),
                    ));
                    return;
                }
                match result {
                    Ok(Value::String(s)) => {
                        let s = s.trim();
                        match () {
                            _ if s.len() > MAX_MESSAGE_BYTES => outcome.logs.push(format!(
                                "messageExpression beyond allowable length of {MAX_MESSAGE_BYTES}"
                            )),
                            _ if s.contains('\n') => outcome
                                .logs
                                .push("messageExpression should not contain line breaks".into()),
                            _ if s.is_empty() => outcome.logs.push(
                                "messageExpression should evaluate to a non-empty string".into(),
                            ),
                            _ => detail = s.to_owned(),
                        }
                    }
                    Ok(_) => outcome
                        .logs
                        .push("messageExpression failed to convert to string".into()),
                    Err(Failure::Error(e)) => outcome
                        .logs
                        .push(format!("messageExpression evaluation failed due to: {e}")),
                    Err(Failure::CostLimitExceeded) => {
                        outcome.errors.push(invalid(format!(
                            "no further validation rules will be run due to call cost exceeds limit for messageExpression: {:?}",
                            rule.message_expression
                        )));
                        outcome.remaining = -1;
                        return;
                    }
                }
            }
            let kind = match rule.reason.as_deref() {
                Some("FieldValueForbidden") => ErrorKind::Forbidden,
                Some("FieldValueRequired") => ErrorKind::Required,
                Some("FieldValueDuplicate") => ErrorKind::Duplicate,
                _ => ErrorKind::Invalid,
            };
            let error = RuleError {
                path: field_path,
                kind,
                value: self.ty.clone(),
                detail,
            };
            if unchanged && !compiled.uses_old_self {
                outcome.warnings.push(error.to_string());
            } else {
                outcome.errors.push(error);
            }
        }
    }
}

/// The `allOf` branches of `schema` as schemas of their own with `schema`'s types and the
/// branch's rules (kube checks and applies a branch's rules against the node's type).
pub fn all_of_branches(schema: &Json) -> Vec<Json> {
    let stripped = strip(schema);
    (schema
        .get("allOf")
        .and_then(Json::as_array)
        .into_iter()
        .flatten())
    .map(|branch| overlay(&stripped, branch))
    .collect()
}

/// `schema` without its rules and `allOf` branches, at every level: the types an `allOf`
/// branch's rules are checked against.
fn strip(schema: &Json) -> Json {
    match schema {
        Json::Object(fields) => Json::Object(
            (fields.iter())
                .filter(|(k, _)| !matches!(k.as_str(), "x-kubernetes-validations" | "allOf"))
                .map(|(k, v)| match k.as_str() {
                    "properties" => (
                        k.clone(),
                        Json::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, p)| (n.clone(), strip(p)))
                                .collect(),
                        ),
                    ),
                    "items" | "additionalProperties" => (k.clone(), strip(v)),
                    _ => (k.clone(), v.clone()),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `base` (stripped) with the rules and `allOf` branches of `branch` where `branch` has
/// them, down its properties, items and map values.
fn overlay(base: &Json, branch: &Json) -> Json {
    let mut out = base.clone();
    let Some(fields) = out.as_object_mut() else {
        return out;
    };
    for key in ["x-kubernetes-validations", "allOf"] {
        if let Some(v) = branch.get(key) {
            fields.insert(key.to_owned(), v.clone());
        }
    }
    if let Some(properties) = branch.get("properties").and_then(Json::as_object) {
        for (name, sub) in properties {
            if let Some(target) = fields.get_mut("properties").and_then(|p| p.get_mut(name)) {
                *target = overlay(target, sub);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let (Some(sub), Some(target)) = (branch.get(key), fields.get_mut(key))
            && target.is_object()
        {
            *target = overlay(target, sub);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::{KUBERNETES, stored_expressions};
    use serde_json::json;

    fn validator(schema: Json) -> Validator {
        Validator::new(&schema, &stored_expressions(KUBERNETES)).expect("rules")
    }

    #[test]
    fn rules_apply_at_their_nodes_with_kube_messages() {
        let v = validator(json!({
            "type": "object",
            "properties": {"spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                    {"rule": "self.name == oldSelf.name", "message": "name is immutable", "reason": "FieldValueForbidden"}
                ],
                "properties": {
                    "min": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"},
                    "items": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}}
                }
            }}
        }));
        let good = json!({"spec": {"min": 1, "max": 2, "name": "x", "items": ["ab"]}});
        assert_eq!(v.validate(&good, None, RUNTIME_BUDGET).errors, vec![]);
        let bad = json!({"spec": {"min": 3, "max": 2, "name": "y", "items": ["ab", "b"]}});
        let outcome = v.validate(&bad, Some(&good), RUNTIME_BUDGET);
        let errors: Vec<String> = outcome.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            vec![
                "spec: Invalid value: \"object\": min must not exceed max".to_owned(),
                "spec: Forbidden: name is immutable".to_owned(),
                "spec.items[1]: Invalid value: \"string\": failed rule: self.startsWith('a')"
                    .to_owned(),
            ]
        );
    }

    #[test]
    fn unchanged_values_ratchet() {
        let v = validator(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}, "b": {"type": "string"}}}}}),
        );
        let old = json!({"spec": {"a": "long", "b": "1"}});
        let new = json!({"spec": {"a": "long", "b": "2"}});
        let outcome = v.validate(&new, Some(&old), RUNTIME_BUDGET);
        assert_eq!(outcome.errors, vec![]);
        assert_eq!(outcome.warnings.len(), 1);
        assert_eq!(v.validate(&new, None, RUNTIME_BUDGET).errors.len(), 1);
    }

    #[test]
    fn formats_convert_as_kube_converts_them() {
        let v = validator(
            json!({"type": "object", "properties": {"d": {"type": "string", "format": "duration",
            "x-kubernetes-validations": [{"rule": "self >= duration('1h')"}]}}}),
        );
        for ok in ["1d", "5 minutes 3 hours", "2h"] {
            assert_eq!(
                v.validate(&json!({"d": ok}), None, RUNTIME_BUDGET).errors,
                vec![],
                "{ok}"
            );
        }
        let errors = v
            .validate(&json!({"d": "bogus"}), None, RUNTIME_BUDGET)
            .errors;
        assert_eq!(
            errors[0].detail,
            "Invalid duration bogus: unable to parse bogus as duration evaluating rule: self >= duration('1h')"
        );
    }
}
