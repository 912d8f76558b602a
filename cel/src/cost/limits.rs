//! What kube does with the estimates when a CustomResourceDefinition is created or
//! updated (`apiextensions-apiserver`'s `pkg/apis/apiextensions/validation`): each rule's
//! estimated cost is multiplied by how many times its schema node can occur in one object,
//! checked against a limit per expression, and added to a total for the whole schema,
//! checked against a limit of its own. A `messageExpression`'s cost counts once, not
//! multiplied.
//!
//! How many times a node can occur (its cardinality) is the product of the `maxItems` and
//! `maxProperties` of the lists and maps above it ([`child_cardinality`], starting from 1 at
//! the root); when one of them has no such bound, it is what fits in a request given the
//! node's smallest serialized size ([`super::max_cardinality`]).
//!
//! The walk over the schema is the caller's: for each node with rules, compile them
//! ([`crate::validation::compile_rules`]), then ask a [`CostLimits`] for each rule's errors
//! ([`CostLimits::rule`], [`CostLimits::message_expression`]) in kube's order, and at the end
//! for the total's ([`CostLimits::total_errors`]).

use serde_json::Value as Json;

use crate::validation::CompiledRule;

/// The most a rule's estimated cost, times its node's cardinality, may be (kube's
/// `StaticEstimatedCostLimit`); also the most for a `messageExpression`.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The most all the rules of a schema may cost together (kube's
/// `StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// How many of the most expensive rules the total's errors name.
const MOST_EXPENSIVE: usize = 4;

/// A cost error of a definition: kube's `field.Forbidden(path, detail)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostError {
    /// The field path, as kube prints it
    /// (`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`).
    pub path: String,
    /// The message.
    pub detail: String,
}

impl std::fmt::Display for CostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: Forbidden: {}", self.path, self.detail)
    }
}

/// kube's message for a cost of `cost` over `limit`: `<what> exceeds budget by factor of
/// <factor> (try simplifying the rule, ...)`, the factor printed as kube prints it
/// (`1.500000x` below 1.5, `more than 100x` above 100, else `2.5x`).
pub fn cost_error_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The cardinality of a child of `parent` (a schema node whose own cardinality is
/// `parent_cardinality`, `None` for unbounded): times the parent's `maxItems` for an
/// array's items, its `maxProperties` for a map's values, 1 for an object's properties;
/// unbounded under an array or a map without the bound (kube's `childContext` with
/// `extractMaxElements`). The root's cardinality is `Some(1)`.
pub fn child_cardinality(parent_cardinality: Option<u64>, parent: &Json) -> Option<u64> {
    let cardinality = parent_cardinality?;
    let bound = |name: &str| {
        (parent.get(name))
            .and_then(Json::as_i64)
            .map(|n| n.max(0) as u64)
    };
    let factor = match parent.get("type").and_then(Json::as_str) {
        Some("object") if parent.get("additionalProperties").is_some() => bound("maxProperties")?,
        Some("array") => bound("maxItems")?,
        _ => 1,
    };
    Some(times(cardinality, factor))
}

/// `cost * cardinality`, `u64::MAX` when it does not fit; 0 for a rule that costs nothing.
fn times(cost: u64, cardinality: u64) -> u64 {
    cost.saturating_mul(cardinality)
}

/// The cost kube charges a rule of a node: its estimate times the node's cardinality, or
/// when that is unbounded, times what fits in a request ([`super::max_cardinality`] of the
/// node type's [`crate::types::DeclType::min_serialized_size`]).
pub fn expression_cost(max_cost: u64, cardinality: Option<u64>, min_serialized_size: i64) -> u64 {
    let cardinality = cardinality.unwrap_or_else(|| super::max_cardinality(min_serialized_size));
    times(max_cost, cardinality)
}

/// The cost checks of one definition's schema: per expression, and the total.
#[derive(Clone, Debug)]
pub struct CostLimits {
    /// Whether the per-expression limit applies: kube skips it for a version whose schema
    /// did not change on update.
    per_expression: bool,
    /// The total so far.
    total: u64,
    /// The most expensive expressions so far (at least 1% of the total limit each), most
    /// expensive first, with their paths.
    most_expensive: Vec<(String, u64)>,
}

impl CostLimits {
    /// Checks with the per-expression limit applied when `per_expression`.
    pub fn new(per_expression: bool) -> CostLimits {
        CostLimits {
            per_expression,
            total: 0,
            most_expensive: Vec::new(),
        }
    }

    /// The total cost so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        // After those of equal cost already there, as Go's (unstable but here
        // order-keeping) sort of the appended list leaves them.
        let at = (self.most_expensive.iter())
            .position(|(_, c)| *c < cost)
            .unwrap_or(self.most_expensive.len());
        self.most_expensive.insert(at, (path, cost));
        self.most_expensive.truncate(MOST_EXPENSIVE);
    }

    /// The cost error of the rule at `rule_path` (`...x-kubernetes-validations[i]`) of a
    /// node of cardinality `cardinality` (`None`: unbounded, see [`expression_cost`]), whose
    /// type's smallest serialized size is `min_serialized_size`; its cost counts towards
    /// the total. kube reports it before the rule's compile error.
    pub fn rule(
        &mut self,
        rule: &CompiledRule,
        rule_path: &str,
        cardinality: Option<u64>,
        min_serialized_size: i64,
    ) -> Option<CostError> {
        let cost = expression_cost(rule.max_cost, cardinality, min_serialized_size);
        let path = format!("{rule_path}.rule");
        let error =
            (self.per_expression && cost > STATIC_ESTIMATED_COST_LIMIT).then(|| CostError {
                path: path.clone(),
                detail: cost_error_message(
                    "estimated rule cost",
                    cost,
                    STATIC_ESTIMATED_COST_LIMIT,
                ),
            });
        self.observe(path, cost);
        error
    }

    /// The cost error of the rule's `messageExpression`, when it and the rule compiled (its
    /// cost is not multiplied by the cardinality); its cost counts towards the total. kube
    /// reports it where it would report the message expression's compile error.
    pub fn message_expression(
        &mut self,
        rule: &CompiledRule,
        rule_path: &str,
    ) -> Option<CostError> {
        // kube compiles the message expression only once the rule compiled.
        if !matches!((&rule.program, &rule.message), (Ok(Some(_)), Ok(Some(_)))) {
            return None;
        }
        let cost = rule.message_max_cost;
        let path = format!("{rule_path}.messageExpression");
        let error =
            (self.per_expression && cost > STATIC_ESTIMATED_COST_LIMIT).then(|| CostError {
                path: path.clone(),
                detail: cost_error_message(
                    "estimated messageExpression cost",
                    cost,
                    STATIC_ESTIMATED_COST_LIMIT,
                ),
            });
        self.observe(path, cost);
        error
    }

    /// The errors of the total, once every rule was seen: when it is over
    /// [`STATIC_ESTIMATED_CRD_COST_LIMIT`], one for each of the (up to 4) most expensive
    /// expressions, then one at `schema_path` (`spec.validation.openAPIV3Schema`, or
    /// `spec.versions[i].schema.openAPIV3Schema`).
    pub fn total_errors(&self, schema_path: &str) -> Vec<CostError> {
        if self.total <= STATIC_ESTIMATED_CRD_COST_LIMIT {
            return Vec::new();
        }
        let mut errors: Vec<CostError> = (self.most_expensive.iter())
            .map(|(path, _)| CostError {
                path: path.clone(),
                detail: "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".to_owned(),
            })
            .collect();
        errors.push(CostError {
            path: schema_path.to_owned(),
            detail: cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                self.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        });
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_print_the_factor_as_kube_does() {
        let message = cost_error_message("estimated rule cost", 12_000_000, 10_000_000);
        assert!(message.starts_with("estimated rule cost exceeds budget by factor of 1.200000x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"), "{message}");
        let message = cost_error_message("x", 25_000_000, 10_000_000);
        assert!(message.contains("factor of 2.5x"), "{message}");
        let message = cost_error_message("x", u64::MAX, 10_000_000);
        assert!(message.contains("factor of more than 100x"), "{message}");
    }

    #[test]
    fn totals_name_the_most_expensive_rules() {
        let schema = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "true"}, {"rule": "true"}, {"rule": "true", "messageExpression": "'m'"},
        ]});
        let features = crate::environment::new_expressions(crate::environment::KUBERNETES);
        let mut rules = crate::validation::compile_rules(&schema, false, &features);
        for (rule, cost) in rules.iter_mut().zip([30_000_000, 60_000_000, 5]) {
            rule.max_cost = cost;
        }
        rules[2].message_max_cost = 20_000_000;
        let mut limits = CostLimits::new(true);
        let base = "spec.validation.openAPIV3Schema.x-kubernetes-validations";
        let mut errors = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let path = format!("{base}[{i}]");
            errors.extend(limits.rule(rule, &path, Some(1), 2));
            errors.extend(limits.message_expression(rule, &path));
        }
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                format!("{base}[0].rule"),
                format!("{base}[1].rule"),
                format!("{base}[2].messageExpression")
            ]
        );
        assert!(
            errors[1]
                .to_string()
                .contains(": Forbidden: estimated rule cost exceeds budget by factor of 6.0x"),
            "{}",
            errors[1]
        );
        assert_eq!(limits.total(), 110_000_005);
        let totals = limits.total_errors("spec.validation.openAPIV3Schema");
        let paths: Vec<&str> = totals.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                format!("{base}[1].rule").as_str(),
                &format!("{base}[0].rule"),
                &format!("{base}[2].messageExpression"),
                "spec.validation.openAPIV3Schema"
            ]
        );
        assert!(totals[3].detail.starts_with("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.100000x"), "{}", totals[3].detail);
        assert!(
            CostLimits::new(false)
                .rule(&rules[1], base, None, 2)
                .is_none()
        );
    }

    #[test]
    fn cardinality_multiplies_down_the_schema() {
        let list = json!({"type": "array", "maxItems": 10});
        let map = json!({"type": "object", "additionalProperties": {}, "maxProperties": 3});
        let unbounded = json!({"type": "array"});
        let object = json!({"type": "object", "properties": {}});
        assert_eq!(child_cardinality(Some(1), &list), Some(10));
        assert_eq!(child_cardinality(Some(10), &map), Some(30));
        assert_eq!(child_cardinality(Some(10), &object), Some(10));
        assert_eq!(child_cardinality(Some(10), &unbounded), None);
        assert_eq!(child_cardinality(None, &object), None);
        assert_eq!(expression_cost(5, None, 2), 5 * 1_048_576);
        assert_eq!(expression_cost(0, Some(u64::MAX), 2), 0);
    }
}
