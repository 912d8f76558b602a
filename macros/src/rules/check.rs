//! What a rule's site lets the attribute judge: each key as kube's definition checks judge
//! it (with kube's wording), the rule and its message expression parsed with CEL's grammar
//! (cel-go's, through the `cel` crate), and, for a struct's own rules, that every field
//! they select from `self` (or `oldSelf`) and the first step of their `field_path` is one
//! of its fields. What needs the whole schema (types, nested fields, costs) is
//! `cargo xtask generate`'s.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use syn::{Data, DeriveInput, Fields, LitStr};

use super::attr::{Rule, Sites};
use crate::serde_names::{camel, serde_flag, serde_values};

/// The `reason`s kube accepts.
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// CEL's reserved words, which a property name is escaped from (`__namespace__`).
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

pub(super) fn check(input: &DeriveInput, sites: &Sites, errors: &mut darling::error::Accumulator) {
    let any = !sites.item.is_empty() || !sites.fields.is_empty();
    if any && !derives_json_schema(input) {
        errors.push(
            darling::Error::custom(
                "#[kapi::rules] publishes rules in the schema schemars derives: put it above \
                 a #[derive(..., JsonSchema)]",
            )
            .with_span(&input.ident),
        );
    }
    let fields = struct_fields(input);
    for rule in &sites.item {
        let parsed = check_rule(rule, errors);
        if let (Some(ast), Some(fields)) = (parsed, &fields) {
            check_selected_fields(&ast, rule, &input.ident, fields, errors);
            check_field_path(rule, &input.ident, fields, errors);
        }
    }
    for (_, rules) in &sites.fields {
        for rule in rules {
            check_rule(rule, errors);
        }
    }
}

/// The checks of one rule on its own; its parsed expression when it parses.
fn check_rule(rule: &Rule, errors: &mut darling::error::Accumulator) -> Option<IdedExpr> {
    let error = |lit: &LitStr, message: String| darling::Error::custom(message).with_span(lit);
    let source = rule.rule.value();
    let mut parsed = None;
    if source.trim().is_empty() {
        errors.push(error(&rule.rule, "rule is not specified".into()));
    } else {
        match parse(&source) {
            Ok(ast) => parsed = Some(ast),
            Err(message) => errors.push(error(
                &rule.rule,
                format!("the rule does not parse: {message}"),
            )),
        }
    }
    match &rule.message {
        Some(message) if message.value().trim().is_empty() => {
            errors.push(error(
                message,
                "message must be non-empty if specified".into(),
            ));
        }
        Some(message) if message.value().contains('\n') => {
            errors.push(error(
                message,
                "message must not contain line breaks".into(),
            ));
        }
        None if source.contains('\n') => errors.push(error(
            &rule.rule,
            "message must be specified if rule contains line breaks".into(),
        )),
        _ => {}
    }
    if let Some(expression) = &rule.message_expression {
        let text = expression.value();
        if text.trim().is_empty() {
            let detail = "messageExpression must be non-empty if specified";
            errors.push(error(expression, detail.into()));
        } else if let Err(message) = parse(&text) {
            errors.push(error(
                expression,
                format!("the message expression does not parse: {message}"),
            ));
        }
    }
    if let Some(reason) = &rule.reason
        && !REASONS.contains(&reason.value().as_str())
    {
        let message = format!("reason must be one of {}", REASONS.join(", "));
        errors.push(error(reason, message));
    }
    if let Some(path) = &rule.field_path {
        let text = path.value();
        if text.trim().is_empty() {
            errors.push(error(
                path,
                "fieldPath must be non-empty if specified".into(),
            ));
        } else if text.contains('\n') {
            errors.push(error(path, "fieldPath must not contain line breaks".into()));
        } else if !text.starts_with('.') && !text.starts_with('[') {
            let message = "fieldPath must be a valid path: it starts with `.field` or `['field']`";
            errors.push(error(path, message.into()));
        }
    }
    if let (Some(span), Some(ast)) = (rule.optional_old_self, &parsed)
        && !mentions(ast, "oldSelf")
    {
        errors.push(
            darling::Error::custom(
                "optional_old_self may not be set if oldSelf is not used in rule",
            )
            .with_span(&span),
        );
    }
    parsed
}

/// `source` parsed as kube parses rules (optional syntax on), or cel-go's error text.
fn parse(source: &str) -> Result<IdedExpr, String> {
    cel::Env::stdlib()
        .parser()
        .enable_optional_syntax(true)
        .parse(source)
        .map_err(|errors| {
            let shown = errors.errors.iter().map(|e| {
                format!(
                    "ERROR: <input>:{}:{}: {}",
                    e.pos.0.max(1),
                    e.pos.1.max(0),
                    e.msg
                )
            });
            shown.collect::<Vec<_>>().join("; ")
        })
}

/// A struct's fields as CEL names them (serde's JSON names, escaped as kube escapes
/// property names); `None` when they cannot be told (a flattened field, a tuple struct,
/// an enum).
fn struct_fields(input: &DeriveInput) -> Option<Vec<String>> {
    let Data::Struct(data) = &input.data else {
        return None;
    };
    let Fields::Named(fields) = &data.fields else {
        return None;
    };
    let camel_case =
        (serde_values(&input.attrs, "rename_all").iter()).any(|v| v.value() == "camelCase");
    let mut names = Vec::new();
    for field in &fields.named {
        if serde_flag(&field.attrs, "flatten") {
            return None;
        }
        if serde_flag(&field.attrs, "skip") {
            continue;
        }
        let rust = field.ident.as_ref()?.to_string();
        let rust = rust.trim_start_matches("r#");
        let json = match serde_values(&field.attrs, "rename").first() {
            Some(rename) => rename.value(),
            None if camel_case => camel(rust),
            None => rust.to_owned(),
        };
        names.push(escape(&json));
    }
    Some(names)
}

/// kube's CEL name of a property: reserved words wrapped, `__`, `.`, `-` and `/` escaped.
fn escape(name: &str) -> String {
    if RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    name.replace("__", "__underscores__")
        .replace('.', "__dot__")
        .replace('-', "__dash__")
        .replace('/', "__slash__")
}

/// Every field the rule selects from `self` or `oldSelf` is one of `fields`.
fn check_selected_fields(
    ast: &IdedExpr,
    rule: &Rule,
    ident: &syn::Ident,
    fields: &[String],
    errors: &mut darling::error::Accumulator,
) {
    let mut selected = Vec::new();
    selections(ast, &mut selected);
    let mut reported = Vec::new();
    for (variable, field) in selected {
        if fields.contains(&field) || reported.contains(&field) {
            continue;
        }
        let message = format!(
            "`{variable}` has no field `{field}`: the fields of {ident} are {}",
            list(fields)
        );
        errors.push(darling::Error::custom(message).with_span(&rule.rule));
        reported.push(field);
    }
}

/// The first step of the rule's `field_path` is one of `fields`.
fn check_field_path(
    rule: &Rule,
    ident: &syn::Ident,
    fields: &[String],
    errors: &mut darling::error::Accumulator,
) {
    let Some(path) = &rule.field_path else {
        return;
    };
    let text = path.value();
    let Some(rest) = text.strip_prefix('.') else {
        return;
    };
    let first = rest.split(['.', '[']).next().unwrap_or_default();
    if !first.is_empty() && !fields.iter().any(|f| f == first) {
        let message = format!(
            "fieldPath names no field of {ident}: `{first}` is not one of {}",
            list(fields)
        );
        errors.push(darling::Error::custom(message).with_span(path));
    }
}

fn list(fields: &[String]) -> String {
    match fields.is_empty() {
        true => "none".into(),
        false => fields.join(", "),
    }
}

/// `(variable, field)` for each `self.field`, `has(self.field)` and `self.?field` (and
/// `oldSelf`'s) in `e`.
fn selections(e: &IdedExpr, out: &mut Vec<(&'static str, String)>) {
    let variable = |e: &IdedExpr| match &e.expr {
        Expr::Ident(name) if name == "self" => Some("self"),
        Expr::Ident(name) if name == "oldSelf" => Some("oldSelf"),
        _ => None,
    };
    match &e.expr {
        Expr::Select(select) => {
            if let Some(v) = variable(&select.operand) {
                out.push((v, select.field.clone()));
            }
            selections(&select.operand, out);
        }
        Expr::Call(call) => {
            if call.func_name == "_?._"
                && let [operand, field] = call.args.as_slice()
                && let (Some(v), Expr::Literal(LiteralValue::String(name))) =
                    (variable(operand), &field.expr)
            {
                out.push((v, name.inner().to_string()));
            }
            call.target.iter().for_each(|t| selections(t, out));
            call.args.iter().for_each(|a| selections(a, out));
        }
        _ => children(e).into_iter().for_each(|c| selections(c, out)),
    }
}

/// Whether the identifier `name` appears in `e`.
fn mentions(e: &IdedExpr, name: &str) -> bool {
    match &e.expr {
        Expr::Ident(ident) => ident == name,
        Expr::Select(select) => mentions(&select.operand, name),
        Expr::Call(call) => {
            call.target.iter().any(|t| mentions(t, name))
                || call.args.iter().any(|a| mentions(a, name))
        }
        _ => children(e).into_iter().any(|c| mentions(c, name)),
    }
}

/// The direct children of a list, map, struct or comprehension node.
fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&IdedExpr> {
        (entries.iter())
            .flat_map(|entry| match &entry.expr {
                EntryExpr::StructField(field) => vec![&field.value],
                EntryExpr::MapEntry(entry) => vec![&entry.key, &entry.value],
            })
            .collect()
    }
    match &e.expr {
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Select(select) => vec![&select.operand],
        Expr::Call(call) => call.target.iter().map(|t| &**t).chain(&call.args).collect(),
        _ => Vec::new(),
    }
}

/// Whether a `#[derive(...)]` on the item names `JsonSchema` (or `schemars::JsonSchema`).
pub(super) fn derives_json_schema(input: &DeriveInput) -> bool {
    let mut found = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "JsonSchema")
            {
                found = true;
            }
            Ok(())
        });
    }
    found
}

#[cfg(test)]
mod tests {
    /// The attribute escapes names as `kapi-cel` does (which the proc-macro cannot depend
    /// on: built for the host, it would compile k8s-openapi a second time).
    #[test]
    fn names_are_escaped_as_kapi_cel_escapes_them() {
        for word in super::RESERVED {
            assert!(kapi_cel::escape::is_reserved(word), "{word}");
        }
        for name in [
            "namespace",
            "in",
            "minReplicas",
            "a__b",
            "x-y",
            "a.b",
            "a/b",
            "self_link",
        ] {
            assert_eq!(
                Some(super::escape(name)),
                kapi_cel::escape::escape(name),
                "{name}"
            );
        }
    }
}
