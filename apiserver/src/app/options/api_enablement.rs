//! API enablement (kube's `APIEnablementOptions`): `--runtime-config`, which switches
//! group-versions the server has compiled off at start (or, after `api/all=false`, back on).
//!
//! kapi turns a kind off whole: a kind served in several versions is off only when all
//! of them are (a key that would leave some on is an error), and the core group
//! (Namespaces) is always on. A disabled group-version has no routes, and the discovery
//! and OpenAPI documents are rendered again without it.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use kapi_core::api::RouteBinding;
use kapi_core::scheme::Scheme;

/// Which group-versions are served.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "API enablement")]
pub struct ApiEnablementOptions {
    /// Group-versions to switch off or on, `<group>/<version>=<bool>`
    /// (`rbac.authorization.k8s.io/v1=false`); `api/all` names every one (a key naming one
    /// wins over it). The core group (`api/v1`) is always on.
    #[arg(long, value_name = "KEY=VALUE[,...]", value_delimiter = ',')]
    pub runtime_config: Vec<String>,
}

/// A compiled kind's group and plural.
type Resource = (&'static str, &'static str);

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
    /// wins over `api/all`; the core group always is.
    fn enabled(&self, group: &str, version: &str) -> bool {
        if group.is_empty() {
            return true;
        }
        let named = self.versions.get(&(group.to_owned(), version.to_owned()));
        let level = Level::of(version).and_then(|level| self.levels.get(&level));
        *named.or(level).or(self.all.as_ref()).unwrap_or(&true)
    }
}

/// Go's `strconv.ParseBool`, which kube reads the values with (empty is true).
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "" | "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
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

    /// The compiled kinds `--runtime-config` switches off in the API of `scheme` and
    /// `routes` (group and plural), or why it cannot.
    fn plan(
        &self,
        scheme: &Scheme,
        routes: &[RouteBinding],
    ) -> Result<(Enablement, Vec<Resource>), Vec<String>> {
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
        let mut off = Vec::new();
        for kind in scheme.kinds().iter() {
            let info = kind.info;
            let versions: BTreeSet<&str> = (routes.iter())
                // By name: a kind's `&'static KindInfo` may have more than one address.
                .filter(|b| (b.kind.group, b.kind.kind) == (info.group, info.kind))
                .map(|b| b.version)
                .collect();
            let (on, switched): (Vec<&str>, Vec<&str>) =
                (versions.iter()).partition(|version| enablement.enabled(info.group, version));
            match (on.is_empty(), switched.is_empty()) {
                (_, true) => {}
                (true, false) => off.push((info.group, info.plural)),
                (false, false) => errors.push(format!(
                    "--runtime-config serves {} ({}) in {} but not in {}; kapi switches a \
                     kind's versions on and off together",
                    info.kind,
                    info.group,
                    on.join(", "),
                    switched.join(", ")
                )),
            }
        }
        match errors.is_empty() {
            true => Ok((enablement, off)),
            false => Err(errors),
        }
    }

    /// The checks against the API (`api`'s scheme and routes): every group-version named is
    /// the server's, and no kind is left served in some of its versions only.
    pub fn check(&self, scheme: &Scheme, routes: &[RouteBinding]) -> Vec<String> {
        self.plan(scheme, routes).err().unwrap_or_default()
    }

    /// Takes the disabled group-versions out of `scheme` and `routes`: the routes left, or
    /// `None` when everything stays on.
    pub fn apply(
        &self,
        scheme: &Scheme,
        routes: &'static [RouteBinding],
    ) -> Result<Option<&'static [RouteBinding]>> {
        let (enablement, off) = self
            .plan(scheme, routes)
            .map_err(|errors| anyhow::anyhow!(errors.join("; ")))?;
        if off.is_empty() {
            return Ok(None);
        }
        for (group, plural) in off {
            scheme.switch_off(group, plural);
        }
        let left: Vec<RouteBinding> = (routes.iter())
            .filter(|b| enablement.enabled(b.kind.group, b.version))
            .copied()
            .collect();
        // Made once at start-up and served for the program's life, as the generated table.
        Ok(Some(left.leak()))
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
        assert!(!enablement.enabled("g.io", "v1"));
        assert!(enablement.enabled("g.io", "v2beta1"));
        assert!(!enablement.enabled("g.io", "v1beta1"));
        assert!(enablement.enabled("", "v1"));
    }
}
