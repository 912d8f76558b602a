//! The environments of kube 1.32 (`k8s.io/apiserver/pkg/cel/environment/base.go`): a rule
//! written now gets what 1.31 had; a stored rule all that 1.32 has.

use kapi_cel::environment::{Feature, KUBERNETES, Version, new_expressions, stored_expressions};

#[test]
fn a_new_rule_gets_what_the_previous_version_had() {
    let new = new_expressions(KUBERNETES);
    for feature in [
        Feature::OptionalTypes,
        Feature::CrossTypeNumericComparisons,
        Feature::Quantity,
        Feature::LiteralValidators,
        Feature::StringsV2,
        Feature::Sets,
        Feature::Ip,
        Feature::Cidr,
        Feature::Format,
        Feature::KubeListsV0,
        Feature::Urls,
        Feature::Regex,
    ] {
        assert!(new.contains(&feature), "{feature:?}");
    }
    // Introduced by 1.32 itself, later, or replaced.
    for feature in [
        Feature::TwoVarComprehensions,
        Feature::SemverV1,
        Feature::ExtListsV3,
        Feature::KubeListsV1,
        Feature::StringsV0,
    ] {
        assert!(!new.contains(&feature), "{feature:?}");
    }
}

#[test]
fn a_stored_rule_gets_all_the_version_has() {
    let stored = stored_expressions(KUBERNETES);
    assert!(stored.contains(&Feature::TwoVarComprehensions));
    assert!(stored.contains(&Feature::KubeListsV0));
    assert!(!stored.contains(&Feature::StringsV0));
    assert!(!stored.contains(&Feature::SemverV1));
    // Every new rule's feature is a stored rule's too, or its compatible replacement is: an
    // upgrade refuses nothing stored.
    for version in (28..=37).map(|minor| Version(1, minor)) {
        let stored = stored_expressions(version);
        for feature in new_expressions(version) {
            let kept = stored.contains(&feature)
                || feature
                    .replaced_by()
                    .is_some_and(|next| stored.contains(&next));
            assert!(kept, "{version:?}: {feature:?}");
        }
    }
    // A library replaced at a version: the old one up to it, the new one from it.
    assert!(stored_expressions(Version(1, 28)).contains(&Feature::StringsV0));
    assert!(!stored_expressions(Version(1, 29)).contains(&Feature::StringsV0));
    assert!(new_expressions(Version(1, 29)).contains(&Feature::StringsV0));
    assert!(new_expressions(Version(1, 30)).contains(&Feature::StringsV2));
}
