//! API enablement (kube's `APIEnablementOptions`): `--runtime-config`, which switches
//! group-versions the server has compiled off at start (or, after `api/all=false`, back on).
//!
//! kapi turns a kind off whole: a kind served in several versions is off only when all
//! of them are (a key that would leave some on is an error), and the core group
//! (Namespaces) is always on. A disabled group-version has no routes, and the discovery
//! and OpenAPI documents are rendered again without it.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
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

/// What `--runtime-config` says.
#[derive(Default)]
struct Enablement {
    /// `api/all`.
    all: Option<bool>,
    /// Each group-version named.
    versions: BTreeMap<(String, String), bool>,
}

impl Enablement {
    /// Whether `version` of `group` is served.
    fn enabled(&self, group: &str, version: &str) -> bool {
        let named = self.versions.get(&(group.to_owned(), version.to_owned()));
        group.is_empty() || *named.or(self.all.as_ref()).unwrap_or(&true)
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
        for pair in &self.runtime_config {
            let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
            // kube reads an empty value as true.
            let on = match value {
                "" | "true" => true,
                "false" => false,
                _ => {
                    errors.push(format!(
                        "--runtime-config {pair:?}: the value must be true or false"
                    ));
                    continue;
                }
            };
            match key.split_once('/') {
                Some(("api", "all")) => enablement.all = Some(on),
                Some(("api", "v1")) if !on => errors.push(format!(
                    "--runtime-config {pair:?}: the core group is always served"
                )),
                Some(("api", "v1")) => {}
                Some((group, version))
                    if !group.is_empty() && !version.is_empty() && !version.contains('/') =>
                {
                    enablement
                        .versions
                        .insert((group.to_owned(), version.to_owned()), on);
                }
                _ => errors.push(format!(
                    "--runtime-config {pair:?}: a key is <group>/<version> or api/all"
                )),
            }
        }
        match errors.is_empty() {
            true => Ok(enablement),
            false => Err(errors),
        }
    }

    /// Takes the disabled group-versions out of `scheme` and `routes`: the routes left, or
    /// `None` when everything stays on.
    pub fn apply(
        &self,
        scheme: &Scheme,
        routes: &'static [RouteBinding],
    ) -> Result<Option<&'static [RouteBinding]>> {
        let enablement = self
            .enablement()
            .map_err(|errors| anyhow::anyhow!(errors.join("; ")))?;
        let served: BTreeSet<(&str, &str)> =
            (routes.iter()).map(|b| (b.kind.group, b.version)).collect();
        for (group, version) in enablement.versions.keys() {
            if !served.contains(&(group.as_str(), version.as_str())) {
                bail!("--runtime-config: {group}/{version} is not an API of this server");
            }
        }
        if routes
            .iter()
            .all(|b| enablement.enabled(b.kind.group, b.version))
        {
            return Ok(None);
        }
        for kind in scheme.kinds().iter() {
            let info = kind.info;
            let versions: BTreeSet<&str> = (routes.iter())
                // By name: a kind's `&'static KindInfo` may have more than one address.
                .filter(|b| (b.kind.group, b.kind.kind) == (info.group, info.kind))
                .map(|b| b.version)
                .collect();
            let (on, off): (Vec<&str>, Vec<&str>) =
                (versions.iter()).partition(|version| enablement.enabled(info.group, version));
            match (on.is_empty(), off.first()) {
                (_, None) => {}
                (true, Some(_)) => scheme.remove(info.group, info.plural),
                (false, Some(off)) => bail!(
                    "--runtime-config: switching {}/{off} off would leave {} served in {}; \
                     kapi switches a kind's versions off together",
                    info.group,
                    info.kind,
                    on.join(", ")
                ),
            }
        }
        let left: Vec<RouteBinding> = (routes.iter())
            .filter(|b| enablement.enabled(b.kind.group, b.version))
            .copied()
            .collect();
        // Made once at start-up and served for the program's life, as the generated table.
        Ok(Some(left.leak()))
    }
}
