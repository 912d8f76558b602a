//! Admission expressions: the CEL that admission policies (`ValidatingAdmissionPolicy`)
//! and webhooks' `matchConditions` run on a request, as kube's `pkg/admission/plugin/cel`
//! compiles and evaluates it.
//!
//! - [`Compiler`]: the environment an expression compiles in (kube's
//!   `OptionalVariableDeclarations`): `object`, `oldObject` (`dyn`), `request`
//!   (`kubernetes.AdmissionRequest`), `namespaceObject` (`kubernetes.Namespace`), `params`
//!   (when the policy has a `paramKind`), `authorizer` and `authorizer.requestResource`
//!   (kube's authorizer library), and `variables`, the policy's named expressions, each
//!   typed as it compiled and visible to those after it.
//! - [`Evaluation`]: one request's inputs bound once, each variable evaluated when an
//!   expression first reads it ([`variables`]: one that fails fails only the expressions
//!   that read it, one nothing reads costs nothing), each expression run under the
//!   per-call limit and the evaluation's shared runtime budget, with kube's errors.
//!
//! - [`patches`]: what mutating policies' expressions build (`Object{...}`,
//!   `JSONPatch{...}`), declared with [`Declarations::patch_types`], and read back as JSON.
//!
//! Values are JSON read as kube reads unstructured objects (plain maps by JSON name,
//! [`value`]); this module knows no resource types.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value as Json, json};

use crate::environment::Feature;
use crate::library::Env;
use crate::program::{Compiled, compile};
use crate::ty::{ObjectType, Type};
use crate::types::{DeclType, Kind};
use crate::value::Value;

/// The runtime cost limit of one expression (kube's `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The runtime budget of one policy's expressions on one request (kube's
/// `RuntimeCELCostBudget`).
pub const POLICY_BUDGET: u64 = 10_000_000;
/// The runtime budget of one webhook's match conditions on one request (kube's
/// `RuntimeCELCostBudgetMatchConditions`).
pub const MATCH_CONDITIONS_BUDGET: u64 = 2_500_000;

/// The error of an evaluation that spent its budget (kube's, word for word).
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The optional variables an expression may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    /// `params` (a policy with a `paramKind`).
    pub params: bool,
    /// `authorizer` and `authorizer.requestResource`.
    pub authorizer: bool,
    /// The types mutations build (`Object`, `JSONPatch`) and `jsonpatch.escapeKey`
    /// (kube's `HasPatchTypes`: a mutating policy's mutations alone).
    pub patch_types: bool,
}

/// What an expression must evaluate to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    /// Anything (a variable).
    Any,
    /// A boolean (a validation, a match condition).
    Bool,
    /// A string (a message expression).
    String,
    /// A string or null (an audit annotation's value).
    StringOrNull,
    /// An `Object` (an apply configuration).
    Object,
    /// A `list(JSONPatch)` (a JSON patch).
    JsonPatches,
}

/// Compiles admission expressions in kube's environment, with the variables compiled so
/// far declared.
#[derive(Clone)]
pub struct Compiler {
    env: Env,
    /// The variables' names and output types, in order.
    variables: Vec<(String, Type)>,
}

impl Compiler {
    /// A compiler for expressions of the environment `features` with `declarations`.
    pub fn new(features: &[Feature], declarations: Declarations) -> Compiler {
        let mut env = Env::new(features);
        env.variable("object", Type::Dyn);
        env.variable("oldObject", Type::Dyn);
        env.variable("request", request_type());
        env.variable("namespaceObject", namespace_type());
        if declarations.params {
            env.variable("params", Type::Dyn);
        }
        if declarations.authorizer && env.has(Feature::Authz) {
            use crate::library::kube::authz::{AUTHORIZER, RESOURCE_CHECK};
            env.variable("authorizer", Type::opaque(AUTHORIZER));
            env.variable("authorizer.requestResource", Type::opaque(RESOURCE_CHECK));
        }
        if declarations.patch_types {
            patches::declare(&mut env);
        }
        let mut compiler = Compiler {
            env,
            variables: Vec::new(),
        };
        compiler.declare_variables();
        compiler
    }

    /// Declares `name` (`object`, `params`) as of `ty` rather than `dyn`: the type checking
    /// of a policy against the kinds it names.
    pub fn declare(&mut self, name: &str, ty: Type) {
        self.env.variable(name, ty);
    }

    /// Compiles `source`, which must evaluate to `returns`: the program, or kube's error
    /// (`compilation failed: ...`, `must evaluate to bool but got string`).
    pub fn compile(&self, source: &str, returns: Returns) -> Result<Compiled, String> {
        let compiled =
            compile(source, &self.env).map_err(|e| format!("compilation failed: {e}"))?;
        let output = compiled.checked.output();
        let accepted = match returns {
            Returns::Any => true,
            Returns::Bool => *output == Type::Bool,
            Returns::String => *output == Type::String,
            Returns::StringOrNull => matches!(output, Type::String | Type::Null),
            Returns::Object => *output == patches::object_type(),
            Returns::JsonPatches => *output == patches::json_patch_type(),
        };
        if !accepted {
            return Err(match returns {
                Returns::StringOrNull => {
                    format!("must evaluate to one of [string null_type] but got {output}")
                }
                Returns::Bool => format!("must evaluate to bool but got {output}"),
                Returns::Object => format!("must evaluate to Object but got {output}"),
                Returns::JsonPatches => {
                    format!("must evaluate to list(JSONPatch) but got {output}")
                }
                _ => format!("must evaluate to string but got {output}"),
            });
        }
        if let Some(error) = crate::program::instantiation_error(&compiled.checked) {
            return Err(format!("program instantiation failed: {error}"));
        }
        Ok(compiled)
    }

    /// Compiles the variable `name` and declares it to what compiles after: its program,
    /// or its error (a variable that does not compile is declared `dyn`).
    pub fn variable(&mut self, name: &str, source: &str) -> Result<Compiled, String> {
        let compiled = self.compile(source, Returns::Any);
        let ty = match &compiled {
            Ok(compiled) => compiled.checked.output().clone(),
            Err(_) => Type::Dyn,
        };
        self.variables.push((name.to_owned(), ty));
        self.declare_variables();
        compiled
    }

    /// `variables`: an object whose fields are the variables declared.
    fn declare_variables(&mut self) {
        let fields: BTreeMap<String, Type> = self.variables.iter().cloned().collect();
        let decl = DeclType {
            kind: Kind::Object(BTreeMap::new()),
            max_elements: 0,
            min_serialized_size: 2,
        };
        self.env.variable(
            "variables",
            Type::Object(Arc::new(ObjectType {
                name: "kubernetes.variables".to_owned(),
                fields,
                decl,
            })),
        );
    }
}

/// JSON as admission expressions see it: maps by JSON name, integers as `int`, other
/// numbers as `double`, lists as lists (kube's unstructured values).
pub fn value(json: &Json) -> Value {
    crate::validation::plain(json)
}

/// The values one request binds.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// `object` (null for a delete).
    pub object: Value,
    /// `oldObject` (null for a create).
    pub old_object: Value,
    /// `request`.
    pub request: Value,
    /// `params` (null without a param).
    pub params: Value,
    /// `namespaceObject` (null for cluster-scoped requests).
    pub namespace_object: Value,
    /// `authorizer` and `authorizer.requestResource`, when an authorizer is at hand.
    pub authorizer: Option<(Value, Value)>,
}

impl Default for Inputs {
    /// Everything null, no authorizer.
    fn default() -> Inputs {
        Inputs {
            object: Value::Null,
            old_object: Value::Null,
            request: Value::Null,
            params: Value::Null,
            namespace_object: Value::Null,
            authorizer: None,
        }
    }
}

/// What an expression made.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Its value.
    Value(Value),
    /// It failed: kube's `expression '<source>' resulted in error: <error>`.
    Error(String),
}

/// One request's evaluation: its inputs, its variables (each evaluated when first read),
/// and what is left of its budget.
pub struct Evaluation<'p> {
    activation: Vec<(&'static str, Value)>,
    variables: Variables<'p>,
    remaining: u64,
}

impl<'p> Evaluation<'p> {
    /// Binds `inputs` and `variables` (name, program or compile error, in order), with
    /// `budget` to spend.
    pub fn new(inputs: Inputs, variables: &[Variable<'p>], budget: u64) -> Evaluation<'p> {
        let mut activation: Vec<(&'static str, Value)> = vec![
            ("object", inputs.object),
            ("oldObject", inputs.old_object),
            ("request", inputs.request),
            ("params", inputs.params),
            ("namespaceObject", inputs.namespace_object),
        ];
        if let Some((authorizer, request_resource)) = inputs.authorizer {
            activation.push(("authorizer", authorizer));
            activation.push(("authorizer.requestResource", request_resource));
        }
        Evaluation {
            activation,
            variables: Variables::new(variables),
            remaining: budget,
        }
    }

    /// Runs `program` (whose text is `source`): its value or kube's error; `Err` when the
    /// evaluation's budget is spent (no further expression runs).
    pub fn eval(&mut self, program: &Compiled, source: &str) -> Result<Outcome, String> {
        Ok(match self.run(program)? {
            Ok(value) => Outcome::Value(value),
            Err(error) => Outcome::Error(resulted_in(source, &error)),
        })
    }

    /// Runs `program`: its value or its error as CEL words it; `Err` when the budget is
    /// spent, by the variables it read first (as kube counts them), or by itself.
    fn run(&mut self, program: &Compiled) -> Result<Result<Value, String>, String> {
        let lazy = self.variables.in_activation(&self.activation);
        let (result, cost) =
            (program.program).eval_with(&self.activation, Some(&lazy), PER_CALL_LIMIT);
        for cost in [self.variables.take_cost(), cost] {
            if cost > self.remaining {
                self.remaining = 0;
                return Err(OUT_OF_BUDGET.to_owned());
            }
            self.remaining -= cost;
        }
        Ok(variables::outcome(result))
    }

    /// What is left of the budget.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }
}

/// kube's error of an expression that failed.
fn resulted_in(source: &str, error: &str) -> String {
    format!("expression '{source}' resulted in error: {error}")
}

/// kube's `kubernetes.AdmissionRequest` (`BuildRequestType`): what `request` has.
fn request_type() -> Type {
    let gvk = json!({"type": "object", "required": ["group", "version", "kind"], "properties": {
        "group": {"type": "string"}, "version": {"type": "string"}, "kind": {"type": "string"}}});
    let gvr = json!({"type": "object", "required": ["group", "version", "resource"], "properties": {
        "group": {"type": "string"}, "version": {"type": "string"}, "resource": {"type": "string"}}});
    let schema = json!({"type": "object", "properties": {
        "kind": gvk, "resource": gvr, "subResource": {"type": "string"},
        "requestKind": gvk, "requestResource": gvr, "requestSubResource": {"type": "string"},
        "name": {"type": "string"}, "namespace": {"type": "string"},
        "operation": {"type": "string"},
        "userInfo": {"type": "object", "properties": {
            "username": {"type": "string"}, "uid": {"type": "string"},
            "groups": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object", "additionalProperties":
                {"type": "array", "items": {"type": "string"}}}}},
        "dryRun": {"type": "boolean"},
        "options": {"x-kubernetes-preserve-unknown-fields": true}}});
    named(
        &schema,
        "kubernetes.AdmissionRequest",
        &[
            ("kind", "kubernetes.GroupVersionKind"),
            ("requestKind", "kubernetes.GroupVersionKind"),
            ("resource", "kubernetes.GroupVersionResource"),
            ("requestResource", "kubernetes.GroupVersionResource"),
            ("userInfo", "kubernetes.UserInfo"),
        ],
    )
}

/// kube's `kubernetes.Namespace` (`BuildNamespaceType`): a Namespace's metadata without
/// its managed fields and owners, its spec and status. (kube declares the uid `UID`.)
fn namespace_type() -> Type {
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let list = json!({"type": "array", "items": {"type": "string"}});
    let time = json!({"type": "string", "format": "date-time"});
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {
            "name": {"type": "string"}, "generateName": {"type": "string"},
            "namespace": {"type": "string"}, "labels": strings, "annotations": strings,
            "UID": {"type": "string"}, "creationTimestamp": time,
            "deletionGracePeriodSeconds": {"type": "integer"}, "deletionTimestamp": time,
            "generation": {"type": "integer"}, "resourceVersion": {"type": "string"},
            "finalizers": list}},
        "spec": {"type": "object", "properties": {"finalizers": list}},
        "status": {"type": "object", "properties": {
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
                "status": {"type": "string"}, "type": {"type": "string"},
                "lastTransitionTime": time, "message": {"type": "string"},
                "reason": {"type": "string"}}}},
            "phase": {"type": "string"}}}}});
    named(
        &schema,
        "kubernetes.Namespace",
        &[
            ("metadata", "kubernetes.NamespaceMetadata"),
            ("spec", "kubernetes.NamespaceSpec"),
            ("status", "kubernetes.NamespaceStatus"),
        ],
    )
}

/// `ty` with its objects' fields named as the JSON names them: kube declares the types of
/// admission's variables with their plain names (`request.namespace`), where a schema's
/// properties are escaped (`__namespace__`).
fn plain_names(ty: &Type) -> Type {
    match ty {
        Type::Object(object) => Type::Object(Arc::new(ObjectType {
            name: object.name.clone(),
            fields: (object.fields.iter())
                .map(|(field, ty)| {
                    let plain = crate::escape::unescape(field).unwrap_or_else(|| field.clone());
                    (plain, plain_names(ty))
                })
                .collect(),
            decl: object.decl.clone(),
        })),
        Type::List(item) => Type::list(plain_names(item)),
        Type::Map(key, value) => Type::map((**key).clone(), plain_names(value)),
        other => other.clone(),
    }
}

/// The object type of `schema` named `name`, its fields' object types named as `names`
/// says (by field).
fn named(schema: &Json, name: &str, names: &[(&str, &str)]) -> Type {
    let decl = DeclType::of_schema(schema, false).unwrap_or(DeclType {
        kind: Kind::Dyn,
        max_elements: 0,
        min_serialized_size: 1,
    });
    let Type::Object(object) = plain_names(&Type::of_decl(&decl, name)) else {
        return Type::Dyn;
    };
    let fields = (object.fields.iter())
        .map(|(field, ty)| {
            let ty = match (ty, names.iter().find(|(f, _)| f == field)) {
                (Type::Object(inner), Some((_, kube))) => Type::Object(Arc::new(ObjectType {
                    name: (*kube).to_owned(),
                    fields: inner.fields.clone(),
                    decl: inner.decl.clone(),
                })),
                _ => ty.clone(),
            };
            (field.clone(), ty)
        })
        .collect();
    Type::Object(Arc::new(ObjectType {
        name: name.to_owned(),
        fields,
        decl: object.decl.clone(),
    }))
}

pub mod patches;
mod variables;

pub use variables::Variable;
use variables::Variables;
#[cfg(test)]
mod tests;
