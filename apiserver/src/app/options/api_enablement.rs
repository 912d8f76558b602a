//! API enablement (kube's `APIEnablementOptions`): `--runtime-config`, which switches
//! group-versions the server has compiled off at start (or, after `api/all=false`, back on).
//!
//! As kube's, some beta group-versions are off unless `--runtime-config` turns them on
//! (the versions declared `off_by_default`, kube's `betaAPIGroupVersionsDisabledByDefault`
//! for its own kinds), and a resource behind a feature gate that is off is not served
//! whatever its group-version ([`super::FeatureGates`]). kapi turns a kind off whole: a
//! kind served in several versions is off only when all of them are (a key that would
//! leave some on is an error; a version off only by default stays on with the kind's
//! others), and the core group (Namespaces) is always on. A disabled group-version has no
//! routes; the generated discovery and OpenAPI documents describe the API as served by
//! default, so any other choice has them rendered again for what is served.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use kapi_core::api::RouteBinding;
use kapi_core::scheme::Scheme;

use super::FeatureGates;

/// Which group-versions are served.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "API enablement")]
pub struct ApiEnablementOptions {
    /// Group-versions to switch off or on, `<group>/<version>=<bool>`
    /// (`rbac.authorization.k8s.io/v1=false`); `api/all` names every one, `api/ga`,
    /// `api/beta` and `api/alpha` those of a level (a key naming one wins over them). The
    /// core group (`api/v1`) is always on; admissionregistration.k8s.io/v1beta1 is off
    /// unless turned on, as in kube.
    #[arg(long, value_name = "KEY=VALUE[,...]", value_delimiter = ',')]
    pub runtime_config: Vec<String>,
}

/// A compiled kind's group and plural.
type Resource = (&'static str, &'static str);

/// A compiled kind's versions served, each with whether it is off by default.
type Versions = BTreeMap<&'static str, bool>;

/// What `--runtime-config` says.
#[derive(Default)]
struct Enablement {
    /// `api/all`.
    all: Option<bool>,
    /// `api/ga`, `api/beta`, `api/alpha`, by level.
    levels: BTreeMap<Level, bool>,
    /// Each group-version named.
    versions: BTreeMap<(String, String), bool>,
}

/// A version's stability, as kube's `api/ga`, `api/beta` and `api/alpha` select it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ga,
    Beta,
    Alpha,
}

impl Level {
    /// `v1` is GA, `v1beta2` beta, `v2alpha1` alpha; anything else none of them.
    fn of(version: &str) -> Option<Level> {
        let rest = version.strip_prefix('v')?;
        let major = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (number, rest) = rest.split_at(major);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(number) {
            return None;
        }
        match rest {
            "" => Some(Level::Ga),
            _ => match (rest.strip_prefix("beta"), rest.strip_prefix("alpha")) {
                (Some(n), _) if digits(n) => Some(Level::Beta),
                (_, Some(n)) if digits(n) => Some(Level::Alpha),
                _ => None,
            },
        }
    }
}

impl Enablement {
    /// Whether `version` of `group` is served: a key naming it wins over its level's, which
    /// wins over `api/all`, which wins over the default (on, unless the version is
    /// `off_by_default`); the core group always is.
    fn enabled(&self, group: &str, version: &str, off_by_default: bool) -> bool {
        if group.is_empty() {
            return true;
        }
        self.said(group, version).unwrap_or(!off_by_default)
    }

    /// What the keys say of `version` of `group`, if any says anything.
    fn said(&self, group: &str, version: &str) -> Option<bool> {
        let named = self.versions.get(&(group.to_owned(), version.to_owned()));
        let level = Level::of(version).and_then(|level| self.levels.get(&level));
        named.or(level).or(self.all.as_ref()).copied()
    }
}

/// Go's `strconv.ParseBool`, which kube reads the values with (empty is true).
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "" => Some(true),
        value => kapi_core::strconv::parse_bool(value),
    }
}

impl ApiEnablementOptions {
    /// The checks that need no I/O: each pair's form.
    pub fn validate(&self) -> Vec<String> {
        match self.enablement() {
            Ok(_) => Vec::new(),
            Err(errors) => errors,
        }
    }

    fn enablement(&self) -> Result<Enablement, Vec<String>> {
        let mut enablement = Enablement::default();
        let mut errors = Vec::new();
        // As kube's `ConfigurationMap`: items trimmed, empty ones skipped.
        for pair in (self.runtime_config.iter())
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let Some(on) = parse_bool(value.trim()) else {
                errors.push(format!(
                    "--runtime-config {pair:?}: the value must be true or false"
                ));
                continue;
            };
            match key.trim().split_once('/') {
                Some(("api", "all")) => enablement.all = Some(on),
                Some(("api", "ga")) => _ = enablement.levels.insert(Level::Ga, on),
                Some(("api", "beta")) => _ = enablement.levels.insert(Level::Beta, on),
                Some(("api", "alpha")) => _ = enablement.levels.insert(Level::Alpha, on),
                Some(("api", "v1" | "legacy")) if !on => errors.push(format!(
                    "--runtime-config {pair:?}: the core group is always served"
                )),
                Some(("api", "v1" | "legacy")) => {}
                Some((group, version))
                    if !group.is_empty() && !version.is_empty() && !version.contains('/') =>
                {
                    let key = (group.to_owned(), version.to_owned());
                    enablement.versions.insert(key, on);
                }
                _ => errors.push(format!(
                    "--runtime-config {pair:?}: a key is <group>/<version>, api/all, api/ga, \
                     api/beta or api/alpha"
                )),
            }
        }
        match errors.is_empty() {
            true => Ok(enablement),
            false => Err(errors),
        }
    }

    /// What `--runtime-config` and `gates` leave of the API of `scheme` and `routes`, or
    /// why kapi cannot serve it so.
    fn plan(
        &self,
        scheme: &Scheme,
        routes: &[RouteBinding],
        gates: &FeatureGates,
    ) -> Result<Plan, Vec<String>> {
        let enablement = self.enablement()?;
        let served: BTreeSet<(&str, &str)> =
            (routes.iter()).map(|b| (b.kind.group, b.version)).collect();
        let mut errors = Vec::new();
        for (group, version) in enablement.versions.keys() {
            if !served.contains(&(group.as_str(), version.as_str())) {
                errors.push(format!(
                    "--runtime-config: {group}/{version} is not an API of this server"
                ));
            }
        }
        let compiled = scheme.kinds();
        let kinds = (compiled.iter()).map(|kind| {
            let info = kind.info;
            let versions = (routes.iter())
                // By name: a kind's `&'static KindInfo` may have more than one address.
                .filter(|b| (b.kind.group, b.kind.kind) == (info.group, info.kind))
                .map(|b| {
                    let version = (info.versions.iter()).find(|v| v.name == b.version);
                    (b.version, version.is_some_and(|v| v.off_by_default))
                })
                .collect();
            (info.group, info.kind, info.plural, versions)
        });
        let plan = Plan::new(enablement, gates, kinds);
        errors.extend(plan.errors.iter().cloned());
        match errors.is_empty() {
            true => Ok(plan),
            false => Err(errors),
        }
    }

    /// The checks against the API (`api`'s scheme and routes, with the feature `gates`):
    /// every group-version named is the server's, and no kind is left served in some of
    /// its versions only.
    pub fn check(
        &self,
        scheme: &Scheme,
        routes: &[RouteBinding],
        gates: &FeatureGates,
    ) -> Vec<String> {
        self.plan(scheme, routes, gates).err().unwrap_or_default()
    }

    /// Takes the disabled group-versions, and the resources `gates` hold back, out of
    /// `scheme` and `routes`: what is served.
    pub fn apply(
        &self,
        scheme: &Scheme,
        routes: &'static [RouteBinding],
        gates: &FeatureGates,
    ) -> Result<Served> {
        let plan = self
            .plan(scheme, routes, gates)
            .map_err(|errors| anyhow::anyhow!(errors.join("; ")))?;
        let left: Vec<RouteBinding> = (routes.iter())
            .filter(|b| plan.keeps(b.kind.group, b.kind.kind, b.kind.plural, b.version))
            .copied()
            .collect();
        for &(group, plural) in &plan.off {
            scheme.switch_off(group, plural);
        }
        Ok(Served {
            routes: match left.len() == routes.len() {
                true => routes,
                // Made once at start-up and served for the program's life, as the
                // generated table.
                false => left.leak(),
            },
            as_by_default: plan.as_by_default,
        })
    }
}

/// What `--runtime-config` and the feature gates leave served.
pub struct Served {
    /// The routes served.
    pub routes: &'static [RouteBinding],
    /// Exactly the kinds served by default are ([`KindInfo::off_by_default`]): those the
    /// generated documents describe.
    ///
    /// [`KindInfo::off_by_default`]: kapi_core::api::KindInfo::off_by_default
    pub as_by_default: bool,
}

/// What `--runtime-config` and the feature gates leave of an API.
struct Plan {
    enablement: Enablement,
    /// The compiled kinds switched off (group and plural).
    off: Vec<Resource>,
    /// The kinds served in all their versions though some are off by default (group and
    /// kind): kapi cannot serve a kind in some of its versions only.
    whole: BTreeSet<(&'static str, &'static str)>,
    /// The group-versions off by default (group and version).
    off_by_default: BTreeSet<(&'static str, &'static str)>,
    /// The kinds switched off are exactly those all of whose versions are off by default.
    as_by_default: bool,
    /// Why some kinds cannot be served as asked.
    errors: Vec<String>,
}

impl Plan {
    /// The plan for the compiled `kinds` (group, kind, plural and the versions served, each
    /// with whether it is off by default).
    fn new(
        enablement: Enablement,
        gates: &FeatureGates,
        kinds: impl Iterator<Item = (&'static str, &'static str, &'static str, Versions)>,
    ) -> Plan {
        let held_back: BTreeSet<Resource> = gates.held_back().collect();
        let kinds: Vec<_> = kinds
            .filter(|(.., versions)| !versions.is_empty())
            .collect();
        let mut plan = Plan {
            enablement,
            off: Vec::new(),
            whole: BTreeSet::new(),
            off_by_default: (kinds.iter())
                .flat_map(|(group, .., versions)| {
                    (versions.iter())
                        .filter(|(_, off)| **off)
                        .map(|(v, _)| (*group, *v))
                })
                .collect(),
            as_by_default: true,
            errors: Vec::new(),
        };
        for (group, kind, plural, versions) in kinds {
            let off_by_default = versions.values().all(|off| *off);
            if held_back.contains(&(group, plural)) {
                plan.off.push((group, plural));
                plan.as_by_default &= off_by_default;
                continue;
            }
            let enablement = &plan.enablement;
            let (mut on, mut switched): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
            for (&version, &off) in &versions {
                match enablement.enabled(group, version, off) {
                    true => on.push(version),
                    false => switched.push(version),
                }
            }
            plan.as_by_default &= on.is_empty() == off_by_default;
            match (on.is_empty(), switched.is_empty()) {
                (_, true) => {}
                (true, false) => plan.off.push((group, plural)),
                (false, false)
                    if (switched.iter())
                        .all(|version| enablement.said(group, version).is_none()) =>
                {
                    _ = plan.whole.insert((group, kind));
                }
                (false, false) => plan.errors.push(format!(
                    "--runtime-config serves {kind} ({group}) in {} but not in {}; kapi \
                     switches a kind's versions on and off together",
                    on.join(", "),
                    switched.join(", ")
                )),
            }
        }
        plan
    }

    /// Whether the route of `version` of the kind `kind` (`plural`) of `group` is served.
    fn keeps(
        &self,
        group: &'static str,
        kind: &'static str,
        plural: &'static str,
        version: &str,
    ) -> bool {
        let off_by_default = self.off_by_default.contains(&(group, version));
        !self.off.contains(&(group, plural))
            && (self.enablement.enabled(group, version, off_by_default)
                || self.whole.contains(&(group, kind)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_read_from_versions_as_kube_reads_them() {
        for (version, level) in [
            ("v1", Some(Level::Ga)),
            ("v12", Some(Level::Ga)),
            ("v1beta1", Some(Level::Beta)),
            ("v2alpha3", Some(Level::Alpha)),
            ("v1beta", None),
            ("v1gamma1", None),
            ("version1", None),
            ("1", None),
        ] {
            assert_eq!(Level::of(version), level, "{version}");
        }
    }

    #[test]
    fn a_named_version_wins_over_its_level_which_wins_over_all() {
        let options = ApiEnablementOptions {
            runtime_config: [
                "api/all=false",
                "api/beta=true",
                " g.io/v1beta1 = false ",
                "",
            ]
            .map(str::to_owned)
            .to_vec(),
        };
        let enablement = options.enablement().unwrap();
        assert!(!enablement.enabled("g.io", "v1", false));
        assert!(enablement.enabled("g.io", "v2beta1", true));
        assert!(!enablement.enabled("g.io", "v1beta1", false));
        assert!(enablement.enabled("", "v1", false));
    }

    const GROUP: &str = "admissionregistration.k8s.io";

    fn options(pairs: &[&str]) -> ApiEnablementOptions {
        ApiEnablementOptions {
            runtime_config: pairs.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn gates(values: &[&str]) -> FeatureGates {
        FeatureGates::parse(values).unwrap()
    }

    /// The admission registration kinds kapi compiles, in the versions they are served in
    /// (v1beta1 off by default, as kube's).
    fn kinds() -> impl Iterator<Item = (&'static str, &'static str, &'static str, Versions)> {
        [
            (
                "ValidatingAdmissionPolicy",
                "validatingadmissionpolicies",
                &["v1"][..],
            ),
            (
                "MutatingAdmissionPolicy",
                "mutatingadmissionpolicies",
                &["v1beta1"],
            ),
            (
                "MutatingAdmissionPolicyBinding",
                "mutatingadmissionpolicybindings",
                &["v1beta1"],
            ),
        ]
        .into_iter()
        .map(|(kind, plural, versions)| {
            let versions = versions.iter().map(|v| (*v, *v == "v1beta1"));
            (GROUP, kind, plural, versions.collect())
        })
    }

    /// The plurals served under `pairs` of `--runtime-config` and `gates`, or the errors.
    fn served(pairs: &[&str], gates: FeatureGates) -> Result<Vec<&'static str>, Vec<String>> {
        let plan = Plan::new(options(pairs).enablement()?, &gates, kinds());
        if !plan.errors.is_empty() {
            return Err(plan.errors);
        }
        let served = kinds()
            .filter(|(_, kind, plural, versions)| {
                (versions.keys()).any(|version| plan.keeps(GROUP, kind, plural, version))
            })
            .map(|(_, _, plural, _)| plural);
        Ok(served.collect())
    }

    #[test]
    fn versions_off_by_default_are_off_unless_turned_on() {
        let enablement = options(&[]).enablement().unwrap();
        assert!(!enablement.enabled(GROUP, "v1beta1", true));
        assert!(enablement.enabled(GROUP, "v1", false));
        // Other betas are on.
        assert!(enablement.enabled("apps.example.dev", "v1beta1", false));
        for pairs in [
            &["admissionregistration.k8s.io/v1beta1=true"][..],
            &["api/beta=true"],
            &["api/all=true"],
            &["api/all=false", "admissionregistration.k8s.io/v1beta1"],
        ] {
            let enablement = options(pairs).enablement().unwrap();
            assert!(enablement.enabled(GROUP, "v1beta1", true), "{pairs:?}");
        }
        for pairs in [
            &["admissionregistration.k8s.io/v1beta1=false"][..],
            &["api/all=true", "api/beta=false"],
            &["api/all=true", "admissionregistration.k8s.io/v1beta1=false"],
            &["api/ga=true"],
        ] {
            let enablement = options(pairs).enablement().unwrap();
            assert!(!enablement.enabled(GROUP, "v1beta1", true), "{pairs:?}");
        }
    }

    #[test]
    fn gated_resources_need_their_gate_and_their_version() {
        let on = gates(&["MutatingAdmissionPolicy=true"]);
        let off = FeatureGates::default();
        let all = [
            "validatingadmissionpolicies",
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
        ];
        let v1beta1 = "admissionregistration.k8s.io/v1beta1=true";
        assert_eq!(served(&[], off).unwrap(), all[..1]);
        assert_eq!(served(&[], on).unwrap(), all[..1]);
        assert_eq!(served(&[v1beta1], off).unwrap(), all[..1]);
        assert_eq!(served(&["api/all=true"], off).unwrap(), all[..1]);
        assert_eq!(served(&[v1beta1], on).unwrap(), all);
        assert_eq!(
            served(&["api/beta=true"], gates(&["AllBeta=true"])).unwrap(),
            all
        );
        assert_eq!(
            served(&["admissionregistration.k8s.io/v1=false", v1beta1], on).unwrap(),
            all[1..]
        );
    }

    #[test]
    fn only_what_is_served_by_default_is_as_by_default() {
        let as_by_default = |pairs: &[&str], gates: FeatureGates| {
            Plan::new(options(pairs).enablement().unwrap(), &gates, kinds()).as_by_default
        };
        let on = || gates(&["MutatingAdmissionPolicy=true"]);
        let v1beta1 = "admissionregistration.k8s.io/v1beta1=true";
        assert!(as_by_default(&[], FeatureGates::default()));
        // Half of what serves them changes nothing.
        assert!(as_by_default(&[v1beta1], FeatureGates::default()));
        assert!(as_by_default(&[], on()));
        assert!(!as_by_default(&[v1beta1], on()));
        assert!(!as_by_default(
            &["admissionregistration.k8s.io/v1=false"],
            FeatureGates::default()
        ));
    }

    #[test]
    fn a_version_off_by_default_stays_on_with_its_kind_s_others() {
        let versions = BTreeMap::from([("v1", false), ("v1beta1", true)]);
        let kinds = [(GROUP, "Thing", "things", versions)];
        let plan = Plan::new(
            Enablement::default(),
            &FeatureGates::default(),
            kinds.clone().into_iter(),
        );
        assert!(plan.errors.is_empty() && plan.off.is_empty() && plan.as_by_default);
        assert!(plan.keeps(GROUP, "Thing", "things", "v1beta1"));
        assert!(plan.keeps(GROUP, "Thing", "things", "v1"));
        // Switched off by a key, it is the usual error.
        let enablement = options(&["api/beta=false"]).enablement().unwrap();
        let plan = Plan::new(enablement, &FeatureGates::default(), kinds.into_iter());
        assert_eq!(
            plan.errors,
            [
                "--runtime-config serves Thing (admissionregistration.k8s.io) in v1 but not in \
              v1beta1; kapi switches a kind's versions on and off together"
            ]
        );
    }
}
