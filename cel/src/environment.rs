//! The CEL environment kube-apiserver compiles rules in, as data: what each Kubernetes
//! version adds to it or takes out of it (kube's `k8s.io/apiserver/pkg/cel/environment`,
//! `baseOpts`), and which of it a rule gets.
//!
//! kube keeps two environments. A rule written now (a definition created, or one whose
//! rule changed) compiles in the **new expressions** environment: what the previous
//! Kubernetes version already had (kube's compatibility version, the binary's minor version
//! less one), so that the rule still compiles after a rollback. A rule already stored
//! compiles in the **stored expressions** environment: everything the binary has, so that
//! an upgrade never refuses what is stored. kapi speaks kube 1.32's API
//! ([`KUBERNETES`]).

/// A Kubernetes `major.minor` version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32);

/// The Kubernetes version whose environment kapi's rules compile in.
pub const KUBERNETES: Version = Version(1, 32);

/// One part of the environment: a language option, a library, or a library's version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Feature {
    /// List and map literals hold values of one type.
    HomogeneousAggregateLiterals,
    /// Timestamps without a zone are UTC.
    DefaultUtcTimeZone,
    /// `has()` costs nothing (kube keeps cel-go's cost from before v0.17.7).
    PresenceTestWithoutCost,
    /// kube's URL library (`url()`, `isURL()`).
    Urls,
    /// kube's regex library (`find()`, `findAll()`).
    Regex,
    /// kube's list library, version 0 (`isSorted()`, `sum()`, `min()`, `max()`,
    /// `indexOf()`, `lastIndexOf()`).
    KubeListsV0,
    /// kube's list library, version 1.
    KubeListsV1,
    /// kube's authorizer library.
    Authz,
    /// `1 < 1.5` and the other comparisons across numeric types.
    CrossTypeNumericComparisons,
    /// Optional values (`?.`, `optional.of()`).
    OptionalTypes,
    /// kube's quantity library (`quantity()`, `isQuantity()`).
    Quantity,
    /// Literals checked at compile time: durations, timestamps, regexes, homogeneous
    /// aggregates.
    LiteralValidators,
    /// cel-go's strings extension, version 0.
    StringsV0,
    /// cel-go's strings extension, version 2.
    StringsV2,
    /// cel-go's sets extension.
    Sets,
    /// kube's IP library.
    Ip,
    /// kube's CIDR library.
    Cidr,
    /// kube's format library (`format.dns1123Label()`, ...).
    Format,
    /// kube's authorizer selectors.
    AuthzSelectors,
    /// Two-variable comprehensions (`all(k, v, ...)`, `transformMap`, ...).
    TwoVarComprehensions,
    /// kube's semver library, version 1.
    SemverV1,
    /// cel-go's lists extension, version 3.
    ExtListsV3,
}

impl Feature {
    /// The feature that replaced this one when it was removed: a newer version of the same
    /// library, compatible with it (kube removes a library only so).
    pub fn replaced_by(self) -> Option<Feature> {
        match self {
            Feature::StringsV0 => Some(Feature::StringsV2),
            Feature::KubeListsV0 => Some(Feature::KubeListsV1),
            _ => None,
        }
    }
}

/// Each feature with the version that introduced it and the one that removed it, as kube's
/// `baseOpts` lists them.
pub const BASE: &[(Feature, Version, Option<Version>)] = &[
    (Feature::HomogeneousAggregateLiterals, Version(1, 0), None),
    (Feature::DefaultUtcTimeZone, Version(1, 0), None),
    (Feature::PresenceTestWithoutCost, Version(1, 0), None),
    (Feature::Urls, Version(1, 0), None),
    (Feature::Regex, Version(1, 0), None),
    (Feature::KubeListsV0, Version(1, 0), Some(Version(1, 37))),
    (Feature::Authz, Version(1, 27), None),
    (Feature::CrossTypeNumericComparisons, Version(1, 28), None),
    (Feature::OptionalTypes, Version(1, 28), None),
    (Feature::Quantity, Version(1, 28), None),
    (Feature::LiteralValidators, Version(1, 29), None),
    (Feature::StringsV0, Version(1, 0), Some(Version(1, 29))),
    (Feature::StringsV2, Version(1, 29), None),
    (Feature::Sets, Version(1, 29), None),
    (Feature::Ip, Version(1, 30), None),
    (Feature::Cidr, Version(1, 30), None),
    (Feature::Format, Version(1, 31), None),
    (Feature::AuthzSelectors, Version(1, 31), None),
    (Feature::TwoVarComprehensions, Version(1, 32), None),
    (Feature::SemverV1, Version(1, 33), None),
    (Feature::ExtListsV3, Version(1, 34), None),
    (Feature::KubeListsV1, Version(1, 37), None),
];

/// The features of an environment at `version`: those introduced at or before it and not
/// removed at or before it.
fn at(version: Version) -> Vec<Feature> {
    (BASE.iter())
        .filter(|(_, introduced, removed)| {
            *introduced <= version && removed.is_none_or(|removed| version < removed)
        })
        .map(|(feature, _, _)| *feature)
        .collect()
}

/// The environment a new or changed rule compiles in, for a server of `kubernetes`: that of
/// the version before it.
pub fn new_expressions(kubernetes: Version) -> Vec<Feature> {
    let Version(major, minor) = kubernetes;
    at(Version(major, minor.saturating_sub(1)))
}

/// The environment a stored rule compiles in, for a server of `kubernetes`: all it has.
pub fn stored_expressions(kubernetes: Version) -> Vec<Feature> {
    at(kubernetes)
}
