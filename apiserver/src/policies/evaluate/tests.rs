//! kube's `validator_test.go` (`TestValidate`), ported: its cases feed the validator fake
//! evaluation results; here each is the expression that produces that result (`true`,
//! `false`, an error, a message expression's string), so the same mapping is checked
//! through real evaluation. Case names are kube's.

use serde_json::json;

use kapi_cel::admission::{Inputs, value};
use kapi_kinds::admissionregistration::ValidatingAdmissionPolicy;

use super::*;

/// A policy of `spec` (its match constraints are not read here).
fn policy(spec: serde_json::Value) -> CompiledPolicy {
    let policy: ValidatingAdmissionPolicy =
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap();
    CompiledPolicy::new(policy)
}

fn inputs() -> Inputs {
    Inputs {
        object: value(&json!({"metadata": {"name": "endpoints1"}, "subsets": []})),
        request: value(&json!({"operation": "CREATE"})),
        ..Inputs::default()
    }
}

fn verdict(spec: serde_json::Value) -> Verdict {
    evaluate(&policy(spec), &inputs(), &inputs().request).expect("the policy applies")
}

/// (deny, error, message, reason) of each decision.
fn decided(verdict: &Verdict) -> Vec<(bool, bool, String, Option<String>)> {
    (verdict.decisions.iter())
        .map(|d| (d.deny, d.error, d.message.clone(), d.reason.clone()))
        .collect()
}

const ERROR: &str = "object.nothing == 1";

#[test]
fn test_pass() {
    let v = verdict(json!({"validations": [{"expression": "true"}]}));
    assert_eq!(decided(&v), [(false, false, String::new(), None)]);
}

#[test]
fn errors_follow_the_failure_policy() {
    // "test error with failurepolicy ignore"
    let v = verdict(json!({"failurePolicy": "Ignore", "validations": [{"expression": ERROR}]}));
    assert!(!v.decisions[0].deny && v.decisions[0].error);
    // "test error with failurepolicy nil"
    let v = verdict(json!({"validations": [{"expression": ERROR}]}));
    assert!(v.decisions[0].deny && v.decisions[0].error);
    assert_eq!(
        v.decisions[0].message,
        "expression 'object.nothing == 1' resulted in error: no such key: nothing"
    );
    // "test fail with failurepolicy nil with multiple validations"
    let v = verdict(json!({"validations": [{"expression": "true"}, {"expression": ERROR}]}));
    assert_eq!(
        (v.decisions.iter()).map(|d| d.deny).collect::<Vec<_>>(),
        [false, true]
    );
}

#[test]
fn reasons_and_messages_of_failed_validations() {
    // "reason for fail, no reason set": kube reports Invalid (the dispatcher's default).
    let v = verdict(json!({"failurePolicy": "Fail", "validations": [{"expression": "1 == 2"}]}));
    assert_eq!(
        decided(&v),
        [(true, false, "failed expression: 1 == 2".to_owned(), None)]
    );
    // "reasons for multiple failed validations"
    let v = verdict(json!({"validations": [
        {"expression": "1 == 2", "reason": "Forbidden"},
        {"expression": "2 == 3", "reason": "Unauthorized"}]}));
    assert_eq!(
        decided(&v),
        [
            (
                true,
                false,
                "failed expression: 1 == 2".to_owned(),
                Some("Forbidden".to_owned())
            ),
            (
                true,
                false,
                "failed expression: 2 == 3".to_owned(),
                Some("Unauthorized".to_owned())
            ),
        ]
    );
    // "message for failed validation"
    let v = verdict(
        json!({"validations": [{"expression": "false", "reason": "Forbidden",
        "message": "test"}]}),
    );
    assert_eq!(v.decisions[0].message, "test");
}

#[test]
fn message_expressions_and_their_fallbacks() {
    let message = |expression: &str| {
        let v = verdict(
            json!({"validations": [{"expression": "false", "message": "test1",
            "messageExpression": expression}]}),
        );
        v.decisions[0].message.clone()
    };
    // "messageExpression successful" / "overrides message"
    assert_eq!(message("'evaluated message'"), "evaluated message");
    // "messageExpression error -> message"
    assert_eq!(message("object.nothing"), "test1");
    // "messageExpression ' ' -> message"
    assert_eq!(message("' '"), "test1");
    // "messageExpression multi-line -> message"
    assert_eq!(message("'hello\\nthere'"), "test1");
    // "messageExpression too long (5*1024+1 'x') -> message"
    assert_eq!(message("'x' * 1"), "test1", "does not compile: falls back");
    assert_eq!(message("'xxxxxxxxxx'.repeat(513)"), "test1");
    // "messageExpression for multiple validations (only 2nd has messageExpression)"
    let v = verdict(json!({"validations": [
        {"expression": "false", "message": "I am not overwritten"},
        {"expression": "false", "message": "I am overwritten",
         "messageExpression": "'evaluated message'"}]}));
    assert_eq!(v.decisions[0].message, "I am not overwritten");
    assert_eq!(v.decisions[1].message, "evaluated message");
    // A passing validation's message expression runs too, and changes nothing.
    let v = verdict(json!({"validations": [{"expression": "true",
        "messageExpression": "'unused'"}]}));
    assert_eq!(decided(&v), [(false, false, String::new(), None)]);
}

#[test]
fn audit_annotations() {
    // "empty validations with audit annotation" and "audit annotation null return"
    let v = verdict(json!({"auditAnnotations": [
        {"key": "excluded", "valueExpression": "null"},
        {"key": "published", "valueExpression": "' string value '"}]}));
    assert!(v.decisions.is_empty());
    assert_eq!(
        v.annotations,
        [("published".to_owned(), "string value".to_owned())]
    );
    // "audit annotation error, Fail"
    let erring = json!([{"key": "k", "valueExpression": "string(object.nothing)"}]);
    let v = verdict(json!({"failurePolicy": "Fail", "auditAnnotations": erring}));
    assert!(
        v.decisions[0].forced,
        "denies whatever the binding's actions"
    );
    assert_eq!(
        decided(&v),
        [(
            true,
            true,
            "expression 'string(object.nothing)' resulted in error: no such key: nothing"
                .to_owned(),
            None
        )]
    );
    // "audit annotation error, Ignore"
    let v = verdict(json!({"failurePolicy": "Ignore", "auditAnnotations": erring}));
    assert!(v.decisions.is_empty() && v.annotations.is_empty());
}

#[test]
fn match_conditions_come_first() {
    // "matchConditions no match suppresses failure"
    let spec = json!({"matchConditions": [{"name": "never", "expression": "false"}],
        "validations": [{"expression": ERROR}]});
    assert_eq!(evaluate(&policy(spec), &inputs(), &inputs().request), None);
    // "matchCondition error => deny (Fail)": the error is the decision's message.
    let spec = json!({"matchConditions": [{"name": "erring", "expression": ERROR}],
        "validations": [{"expression": "true"}]});
    let v = evaluate(&policy(spec), &inputs(), &inputs().request).unwrap();
    assert_eq!(
        decided(&v),
        [(
            true,
            true,
            "expression 'object.nothing == 1' resulted in error: no such key: nothing".to_owned(),
            None
        )]
    );
    // Under Ignore, an erring condition keeps the policy from applying.
    let spec = json!({"failurePolicy": "Ignore",
        "matchConditions": [{"name": "erring", "expression": ERROR}],
        "validations": [{"expression": "false"}]});
    assert_eq!(evaluate(&policy(spec), &inputs(), &inputs().request), None);
    // A false condition wins over an earlier error.
    let spec = json!({"matchConditions": [{"name": "erring", "expression": ERROR},
        {"name": "never", "expression": "false"}], "validations": [{"expression": "false"}]});
    assert_eq!(evaluate(&policy(spec), &inputs(), &inputs().request), None);
}

#[test]
fn a_spent_budget_is_one_error() {
    let within = |spec, budget| {
        evaluate_within(&policy(spec), &inputs(), &inputs().request, budget).unwrap()
    };
    // The validations spend it: one error in place of every decision.
    let v = within(
        json!({"validations": [{"expression": "1 < 2"}, {"expression": "2 < 3"}]}),
        1,
    );
    assert_eq!(
        decided(&v),
        [(
            true,
            true,
            kapi_cel::admission::OUT_OF_BUDGET.to_owned(),
            None
        )]
    );
    // kube's "messageExpression out of budget": the message expressions spend what is
    // left, and every decision becomes the budget error.
    let v = within(
        json!({"validations": [{"expression": "false", "message": "test1",
            "messageExpression": "'a' + 'b' + 'c' + 'd'"}]}),
        2,
    );
    assert_eq!(
        decided(&v),
        [(
            true,
            true,
            format!(
                "failed messageExpression: {}",
                kapi_cel::admission::OUT_OF_BUDGET
            ),
            None
        )]
    );
}
