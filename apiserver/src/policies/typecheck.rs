//! The type checking of ValidatingAdmissionPolicies (kube's `validating/typechecking.go`):
//! each validation's expression and message expression compiled with `object` and
//! `oldObject` typed as each kind the policy's rules name (at most ten, rules with
//! wildcards left out) and `params` as the param kind (left undeclared when its schema
//! is unknown), so that a field a kind does not have is a warning in the policy's
//! `status.typeChecking` before any write meets it. Admission never reads these
//! warnings; `controllers::policy_status` writes them.

use kapi_cel::admission::{Compiler, Declarations, Returns};
use kapi_cel::environment::{KUBERNETES, stored_expressions};
use kapi_cel::ty::Type;
use kapi_cel::types::DeclType;
use kapi_kinds::admissionregistration::{ExpressionWarning, ValidatingAdmissionPolicy};
use kapi_registry::Registry;

/// The most kinds a policy is checked against.
const MAX_KINDS: usize = 10;

/// A kind a policy's rules name: group, version, kind, and its type.
struct Checked {
    group: String,
    version: String,
    kind: String,
    ty: Type,
}

/// The type of the objects of `group`/`version` `kind`, from the server's schemas.
fn object_type(registry: &Registry, group: &str, version: &str, kind: &str) -> Option<Type> {
    let entry = registry.scheme().by_kind(group, kind)?;
    let schemas = registry.kind_schemas(&entry)?;
    let schema = schemas.kind(group, version, kind)?.structural_json();
    let decl = DeclType::of_schema(&schema, true)?;
    Some(Type::of_decl(&decl, kind))
}

/// The kinds `policy`'s rules name, in kube's order (group, version, kind).
fn kinds(registry: &Registry, policy: &ValidatingAdmissionPolicy) -> Vec<Checked> {
    let mut kinds: Vec<(String, String, String)> = Vec::new();
    let rules = (policy.spec.match_constraints.iter()).flat_map(|c| c.resource_rules.iter());
    for rule in rules {
        let rule = &rule.rule_with_operations.rule;
        let wild = |values: &[String]| values.iter().any(|v| v == "*");
        if wild(&rule.api_groups) || wild(&rule.api_versions) {
            continue;
        }
        for group in &rule.api_groups {
            for version in &rule.api_versions {
                for resource in &rule.resources {
                    if resource.contains('*') || resource.contains('/') {
                        continue;
                    }
                    let Some(entry) = registry.scheme().by_resource(group, resource) else {
                        continue;
                    };
                    let key = (group.clone(), version.clone(), entry.info.kind.to_owned());
                    if entry.versions().any(|v| v == version) && !kinds.contains(&key) {
                        kinds.push(key);
                    }
                }
            }
        }
    }
    kinds.sort();
    (kinds.into_iter())
        .filter_map(|(group, version, kind)| {
            let ty = object_type(registry, &group, &version, &kind)?;
            Some(Checked {
                group,
                version,
                kind,
                ty,
            })
        })
        .take(MAX_KINDS)
        .collect()
}

/// The warnings of `policy`'s validations, kube's `expressionWarnings`.
pub(crate) fn type_check(
    registry: &Registry,
    policy: &ValidatingAdmissionPolicy,
) -> Vec<ExpressionWarning> {
    let kinds = kinds(registry, policy);
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = (policy.spec.param_kind.as_ref())
        .and_then(|kind| super::inputs::param_kind(registry, kind).ok())
        .and_then(|(entry, version)| {
            object_type(registry, entry.info.group, &version, entry.info.kind)
        });
    let compilers: Vec<(&Checked, Compiler)> = (kinds.iter())
        .map(|checked| {
            let mut compiler = Compiler::new(
                &stored_expressions(KUBERNETES),
                Declarations {
                    params: params.is_some(),
                    authorizer: true,
                    ..Default::default()
                },
            );
            compiler.declare("object", checked.ty.clone());
            compiler.declare("oldObject", checked.ty.clone());
            if let Some(params) = &params {
                compiler.declare("params", params.clone());
            }
            for variable in &policy.spec.variables {
                let _ = compiler.variable(&variable.name, &variable.expression);
            }
            (checked, compiler)
        })
        .collect();
    let mut warnings = Vec::new();
    for (i, validation) in policy.spec.validations.iter().enumerate() {
        let expressions = [
            ("expression", validation.expression.as_str()),
            ("messageExpression", validation.message_expression.as_str()),
        ];
        for (field, source) in expressions {
            if source.trim().is_empty() {
                continue;
            }
            let issues: Vec<String> = (compilers.iter())
                .filter_map(|(checked, compiler)| {
                    let error = compiler.compile(source, Returns::Any).err()?;
                    let issues = error.strip_prefix("compilation failed: ").unwrap_or(&error);
                    Some(format!(
                        "{}/{}, Kind={}: {issues}\n",
                        checked.group, checked.version, checked.kind
                    ))
                })
                .collect();
            if !issues.is_empty() {
                warnings.push(ExpressionWarning {
                    field_ref: format!("spec.validations[{i}].{field}"),
                    warning: issues.join("\n"),
                });
            }
        }
    }
    warnings
}
