//! kube's feature gates (`k8s.io/component-base/featuregate`): every gate kube-apiserver
//! 1.34 knows, with its stage, default and lock (`kube_feature_gates.json`, facts from
//! kube's sources), the gates kapi acts on ([`GATES`]), and what `--feature-gates` sets
//! ([`FeatureGates`]), read as kube-apiserver 1.34 reads the flag (pairs `Name=bool`,
//! comma-separated, the flag repeatable, `kube:` as an optional prefix): a name kube does
//! not know, or a locked gate set against its lock, refused with kube's messages; a GA or
//! deprecated gate set warned of as kube warns; a gate kapi does not act on accepted, and
//! warned of when set off its default (it changes nothing here). A gate may hold back
//! resources: while it is off they are not served, whatever `--runtime-config` says, as
//! kube's registry installs no storage for them.

use std::sync::OnceLock;

use serde::Deserialize;

use kapi_core::strconv::parse_bool;

/// A gate's stage (kube's `featuregate.prerelease`), which `AllAlpha` and `AllBeta` select by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `ALPHA`.
    Alpha,
    /// `BETA`.
    Beta,
}

/// One of kube's feature gates.
#[derive(Debug)]
pub struct Gate {
    /// Its name (`MutatingAdmissionPolicy`).
    pub name: &'static str,
    /// Its stage in kube 1.34.
    pub stage: Stage,
    /// Whether it is on unless `--feature-gates` says otherwise, in kube 1.34.
    pub default: bool,
    /// The resources (group, plural) served only while it is on.
    pub resources: &'static [(&'static str, &'static str)],
}

/// kube's special gates, which set every gate of their stage not set by name.
const ALL_ALPHA: &str = "AllAlpha";
const ALL_BETA: &str = "AllBeta";

/// The gates kapi knows, with kube 1.34's stages and defaults.
pub const GATES: &[Gate] = &[
    Gate {
        name: ALL_ALPHA,
        stage: Stage::Alpha,
        default: false,
        resources: &[],
    },
    Gate {
        name: ALL_BETA,
        stage: Stage::Beta,
        default: false,
        resources: &[],
    },
    Gate {
        name: "MutatingAdmissionPolicy",
        stage: Stage::Beta,
        default: false,
        resources: &[
            ("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
            (
                "admissionregistration.k8s.io",
                "mutatingadmissionpolicybindings",
            ),
        ],
    },
];

/// One of kube-apiserver 1.34's gates, as `kube_feature_gates.json` has it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KubeGate {
    name: String,
    /// `ALPHA`, `BETA`, `GA` or `DEPRECATED`.
    pre_release: String,
    default: bool,
    lock_to_default: bool,
}

/// kube-apiserver 1.34's gates, by name.
fn kube_gates() -> &'static [KubeGate] {
    #[derive(Deserialize)]
    struct Facts {
        gates: Vec<KubeGate>,
    }
    static GATES: OnceLock<Vec<KubeGate>> = OnceLock::new();
    GATES.get_or_init(|| {
        let facts: Facts = serde_json::from_str(include_str!("kube_feature_gates.json"))
            .expect("kube_feature_gates.json is kube's gates");
        facts.gates
    })
}

/// Which gates are on: each of [`GATES`], by its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    on: [bool; GATES.len()],
}

impl Default for FeatureGates {
    /// Every gate at its default.
    fn default() -> FeatureGates {
        FeatureGates {
            on: std::array::from_fn(|index| GATES[index].default),
        }
    }
}

impl FeatureGates {
    /// The gates the values of `--feature-gates` set (one value per occurrence of the
    /// flag), or kube's error: the first one kube meets, as kube stops there.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<FeatureGates, String> {
        Self::parse_warned(values).map(|(gates, _)| gates)
    }

    /// [`FeatureGates::parse`], with what is to be warned of: kube's warnings of GA and
    /// deprecated gates set, and kapi's of gates it does not act on set off their default.
    pub fn parse_warned<S: AsRef<str>>(
        values: &[S],
    ) -> Result<(FeatureGates, Vec<String>), String> {
        // kube's `ColonSeparatedMultimapStringString`: pairs split on commas, each with an
        // optional `component:` prefix (none meaning kube's).
        let mut components: Vec<(&str, Vec<&str>)> = Vec::new();
        for pair in values.iter().flat_map(|v| v.as_ref().split(',')) {
            if pair.is_empty() {
                continue;
            }
            let (component, value) = match pair.split_once(':') {
                Some((component, value)) => (component.trim(), value.trim()),
                None => ("", pair.trim()),
            };
            match components.iter_mut().find(|(c, _)| *c == component) {
                Some((_, pairs)) => pairs.push(value),
                None => components.push((component, vec![value])),
            }
        }
        // kube's `ComponentGlobalsRegistry.Set`: kube is the only component here.
        let named = |name: &str| components.iter().any(|(c, _)| *c == name);
        if named("") && named("kube") {
            return Err(
                "set kube feature gates with default empty prefix or kube: prefix \
                        consistently, do not mix use"
                    .to_owned(),
            );
        }
        let mut gates = FeatureGates::default();
        let mut warnings = Vec::new();
        for (component, pairs) in &components {
            if !matches!(*component, "" | "kube") {
                return Err(format!("component not registered: {component}"));
            }
            gates.set(pairs, &mut warnings)?;
        }
        Ok((gates, warnings))
    }

    /// kube's `featureGate.Set` of the pairs given to one component, then `SetFromMap`.
    fn set(&mut self, pairs: &[&str], warnings: &mut Vec<String>) -> Result<(), String> {
        let mut settings: Vec<(&str, bool)> = Vec::new();
        for pair in pairs.iter().flat_map(|p| p.split(',')) {
            if pair.is_empty() {
                continue;
            }
            let Some((name, value)) = pair.split_once('=') else {
                return Err(format!("missing bool value for {}", pair.trim()));
            };
            let (name, value) = (name.trim(), value.trim());
            let Some(on) = parse_bool(value) else {
                return Err(format!(
                    "invalid value of {name}={value}, err: strconv.ParseBool: parsing \
                     {value:?}: invalid syntax"
                ));
            };
            // A map in kube: the last value of a name wins.
            match settings.iter_mut().find(|(n, _)| *n == name) {
                Some((_, setting)) => *setting = on,
                None => settings.push((name, on)),
            }
        }
        let mut named = [false; GATES.len()];
        let mut special = Vec::new();
        for (name, on) in settings {
            let Some(kube) = kube_gates().iter().find(|gate| gate.name == name) else {
                return Err(format!("unrecognized feature gate: {name}"));
            };
            if kube.lock_to_default && on != kube.default {
                return Err(format!(
                    "cannot set feature gate {name} to {on}, feature is locked to {}",
                    kube.default
                ));
            }
            match kube.pre_release.as_str() {
                "GA" => warnings.push(format!(
                    "Setting GA feature gate {name}={on}. It will be removed in a future release."
                )),
                "DEPRECATED" => warnings.push(format!(
                    "Setting deprecated feature gate {name}={on}. It will be removed in a future release."
                )),
                _ => {}
            }
            let Some(index) = GATES.iter().position(|gate| gate.name == name) else {
                if on != kube.default {
                    warnings.push(format!(
                        "kapi does not implement feature gate {name}: setting it to {on} changes nothing"
                    ));
                }
                continue;
            };
            self.on[index] = on;
            named[index] = true;
            match name {
                ALL_ALPHA => special.push((Stage::Alpha, on)),
                ALL_BETA => special.push((Stage::Beta, on)),
                _ => {}
            }
        }
        // `AllAlpha` and `AllBeta` set the gates of their stage that no name set, whatever
        // the order.
        for (stage, on) in special {
            for (index, gate) in GATES.iter().enumerate() {
                if gate.stage == stage
                    && !named[index]
                    && ![ALL_ALPHA, ALL_BETA].contains(&gate.name)
                {
                    self.on[index] = on;
                }
            }
        }
        Ok(())
    }

    /// Whether the gate `name` is on; `false` for a gate kapi does not know (kube panics).
    pub fn enabled(&self, name: &str) -> bool {
        let index = GATES.iter().position(|gate| gate.name == name);
        debug_assert!(index.is_some(), "feature gate {name} is not known");
        index.is_some_and(|index| self.on[index])
    }

    /// `MutatingAdmissionPolicy`: MutatingAdmissionPolicies are served (their
    /// group-version enabled too) and the admission plugin runs.
    pub fn mutating_admission_policy(&self) -> bool {
        self.enabled("MutatingAdmissionPolicy")
    }

    /// The resources (group, plural) the gates that are off hold back.
    pub fn held_back(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        (GATES.iter().zip(self.on))
            .filter(|(_, on)| !on)
            .flat_map(|(gate, _)| gate.resources.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "MutatingAdmissionPolicy";

    fn parse(values: &[&str]) -> Result<FeatureGates, String> {
        FeatureGates::parse(values)
    }

    #[test]
    fn gates_are_at_kube_1_34_defaults_without_the_flag() {
        let gates = parse(&[]).unwrap();
        assert_eq!(gates, FeatureGates::default());
        assert!(!gates.mutating_admission_policy());
        assert!(!gates.enabled(ALL_BETA));
        let gate = GATES.iter().find(|g| g.name == MAP).unwrap();
        assert_eq!((gate.stage, gate.default), (Stage::Beta, false));
        let held: Vec<_> = gates.held_back().collect();
        assert_eq!(
            held,
            [
                ("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
                (
                    "admissionregistration.k8s.io",
                    "mutatingadmissionpolicybindings"
                ),
            ]
        );
    }

    #[test]
    fn pairs_are_read_as_kube_reads_them() {
        for values in [
            &["MutatingAdmissionPolicy=true"][..],
            &[" MutatingAdmissionPolicy = T ,"],
            &["kube:MutatingAdmissionPolicy=1"],
            &[
                "MutatingAdmissionPolicy=false",
                "MutatingAdmissionPolicy=true",
            ],
            &["MutatingAdmissionPolicy=false,MutatingAdmissionPolicy=True"],
            &["AllBeta=true"],
            &[",,AllAlpha=false,AllBeta=TRUE"],
        ] {
            let gates = parse(values).unwrap();
            assert!(gates.mutating_admission_policy(), "{values:?}");
            assert_eq!(gates.held_back().count(), 0, "{values:?}");
        }
        for values in [
            &["MutatingAdmissionPolicy=false"][..],
            &["MutatingAdmissionPolicy=true,MutatingAdmissionPolicy=0"],
            &["AllAlpha=true"],
            // A gate named wins over `AllBeta`, before or after it.
            &["AllBeta=true,MutatingAdmissionPolicy=false"],
            &["MutatingAdmissionPolicy=false,AllBeta=true"],
            &[""],
        ] {
            let gates = parse(values).unwrap();
            assert!(!gates.mutating_admission_policy(), "{values:?}");
        }
    }

    #[test]
    fn errors_are_kube_s() {
        for (values, error) in [
            (&["Nope=true"][..], "unrecognized feature gate: Nope"),
            (
                &["MutatingAdmissionPolicy=true,Nope=false"],
                "unrecognized feature gate: Nope",
            ),
            (
                &["MutatingAdmissionPolicy=maybe"],
                "invalid value of MutatingAdmissionPolicy=maybe, err: strconv.ParseBool: \
                 parsing \"maybe\": invalid syntax",
            ),
            // Go's `ParseBool` takes no empty value, unlike `--runtime-config`'s.
            (
                &["MutatingAdmissionPolicy="],
                "invalid value of MutatingAdmissionPolicy=, err: strconv.ParseBool: parsing \
                 \"\": invalid syntax",
            ),
            // Every value is read before any name is looked up.
            (
                &["Nope=true", "MutatingAdmissionPolicy=yes"],
                "invalid value of MutatingAdmissionPolicy=yes",
            ),
            (
                &["MutatingAdmissionPolicy"],
                "missing bool value for MutatingAdmissionPolicy",
            ),
            (&["wardle:Foo=true"], "component not registered: wardle"),
            // A gate kube locked (GA) cannot be turned off.
            (
                &["APIServerTracing=false"],
                "cannot set feature gate APIServerTracing to false, feature is locked to true",
            ),
            (
                &["kube:AllBeta=true", "MutatingAdmissionPolicy=true"],
                "set kube feature gates with default empty prefix or kube: prefix \
                 consistently, do not mix use",
            ),
        ] {
            let got = parse(values).unwrap_err();
            assert!(got.starts_with(error), "{values:?}: {got}");
        }
    }

    #[test]
    fn kube_s_other_gates_are_accepted_and_warned_of() {
        let values = [
            "APIServerTracing=true,APIResponseCompression=false",
            "MutatingAdmissionPolicy=true,AllowDNSOnlyNodeCSR=false",
        ];
        let (gates, warnings) = FeatureGates::parse_warned(&values).unwrap();
        assert!(gates.mutating_admission_policy());
        assert_eq!(
            warnings,
            [
                "Setting GA feature gate APIServerTracing=true. It will be removed in a future release.",
                "kapi does not implement feature gate APIResponseCompression: setting it to false changes nothing",
                "Setting deprecated feature gate AllowDNSOnlyNodeCSR=false. It will be removed in a future release.",
            ]
        );
        // Gates of later releases, and those kube removed before 1.34, are unknown.
        for gone in ["ValidatingAdmissionPolicy", "ServerSideApply"] {
            let error = parse(&[&format!("{gone}=true")]).unwrap_err();
            assert_eq!(error, format!("unrecognized feature gate: {gone}"));
        }
    }

    #[test]
    fn the_gates_kapi_acts_on_are_kube_s() {
        assert!(kube_gates().len() > 200);
        for gate in GATES {
            let kube = (kube_gates().iter().find(|k| k.name == gate.name)).expect(gate.name);
            let stage = match gate.stage {
                Stage::Alpha => "ALPHA",
                Stage::Beta => "BETA",
            };
            let facts = (
                kube.pre_release.as_str(),
                kube.default,
                kube.lock_to_default,
            );
            assert_eq!(facts, (stage, gate.default, false), "{}", gate.name);
        }
    }
}
