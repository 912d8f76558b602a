//! The `Defaults` impls of the generated types, as kube's defaulter-gen makes its
//! `SetObjectDefaults_*`: a type with a defaulting function of its own (`SetDefaults_<Type>`
//! in kube's `pkg/apis/<group>/<version>/defaults.go`, listed in the facts' `defaulters`)
//! calls it first (kapi's is hand-written, `crate::defaults::<group>_<version>::<type>`),
//! then each field in declaration order gets its `+default=` marker's value when unset and
//! is walked into when its type has defaults of its own. A type is walked only when
//! something in it sets a default, so most types get no impl at all.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::facts::{Api, Field, Resources, Type};
use crate::render::{Shape, module_name, rust_field_name, rust_type};

/// Which types of the facts set defaults, and how.
pub struct Defaulting<'a> {
    api: &'a Api,
    /// Types with a hand-written defaulting function (`core/v1.PodSpec`).
    defaulters: BTreeSet<String>,
    /// Types whose objects get defaults: the above, those with a marker default, and those
    /// with a field of such a type.
    needs: BTreeSet<String>,
}

impl<'a> Defaulting<'a> {
    /// The defaulting the facts describe.
    pub fn new(api: &'a Api, resources: &Resources) -> Result<Defaulting<'a>> {
        let defaulters: BTreeSet<String> = resources.defaulters.iter().cloned().collect();
        for qualified in &defaulters {
            if lookup(api, qualified).is_none() {
                bail!("defaulters: `{qualified}` is not a type of the facts");
            }
        }
        let mut needs = defaulters.clone();
        let all: Vec<(String, &Type)> = (api.packages.iter())
            .flat_map(|(package, facts)| {
                (facts.types.iter()).map(move |(name, ty)| (format!("{package}.{name}"), ty))
            })
            .collect();
        loop {
            let before = needs.len();
            for (qualified, ty) in &all {
                let Some(fields) = &ty.fields else { continue };
                let walked = fields.iter().any(|field| {
                    marker_default(field).is_some() || needs.contains(&base_type(&field.ty))
                });
                if walked {
                    needs.insert(qualified.clone());
                }
            }
            if needs.len() == before {
                break;
            }
        }
        Ok(Defaulting {
            api,
            defaulters,
            needs,
        })
    }

    /// Whether objects of a type (`apps/v1.Deployment`) get defaults.
    pub fn needs(&self, qualified: &str) -> bool {
        self.needs.contains(qualified)
    }

    /// `impl Defaults for <name>`: its function, then its fields'. With `forced`, an impl
    /// that sets nothing when the type has no defaults (another version of a kind whose
    /// versions all must have one).
    pub fn render(
        &self,
        out: &mut String,
        package: &str,
        name: &str,
        fields: &[Field],
        forced: bool,
    ) -> Result<()> {
        let qualified = format!("{package}.{name}");
        if !self.needs(&qualified) && !forced {
            return Ok(());
        }
        let mut body = String::new();
        if self.defaulters.contains(&qualified) {
            let _ = writeln!(body, "        {}(self);", function_path(&qualified)?);
        }
        for field in fields {
            self.field(&mut body, package, &qualified, field)
                .with_context(|| format!("{qualified}.{}", field.go))?;
        }
        let _ = writeln!(
            out,
            "impl kapi::defaults::Defaults for {name} {{\n    fn set_defaults(&mut self) {{\n{body}    }}\n}}\n"
        );
        Ok(())
    }

    fn field(&self, out: &mut String, package: &str, owner: &str, field: &Field) -> Result<()> {
        let rust = rust_field_name(field.json.as_deref().unwrap_or(&field.go));
        let shape = rust_type(self.api, package, &field.ty)?;
        if let Some(value) = marker_default(field) {
            match value {
                // A constant's name: the type's own function sets it.
                Marker::Reference(constant) => {
                    if !self.defaulters.contains(owner) {
                        bail!("`+default=ref({constant})` needs `{owner}` among the defaulters");
                    }
                }
                Marker::Literal(value) => set_unset(out, &rust, &shape, &value)?,
            }
        }
        let base = base_type(&field.ty);
        if !self.needs(&base) {
            return Ok(());
        }
        let is_struct = lookup(self.api, &base).is_some_and(|ty| ty.fields.is_some());
        if is_struct {
            let _ = writeln!(
                out,
                "        kapi::defaults::Defaults::set_defaults(&mut self.{rust});"
            );
            return Ok(());
        }
        // A named map or list with a function of its own (`ResourceList`).
        let function = function_path(&base)?;
        match shape {
            Shape::Option(_) => {
                let _ = writeln!(
                    out,
                    "        if let Some(value) = self.{rust}.as_mut() {{\n            {function}(value);\n        }}"
                );
            }
            _ if field.ty.starts_with("[]") => {
                let _ = writeln!(
                    out,
                    "        for value in &mut self.{rust} {{\n            {function}(value);\n        }}"
                );
            }
            _ => {
                let _ = writeln!(out, "        {function}(&mut self.{rust});");
            }
        }
        Ok(())
    }
}

/// What a `+default=` marker says.
enum Marker {
    /// A JSON literal (`"TCP"`, `false`).
    Literal(Value),
    /// `ref(Constant)`: a Go constant's name.
    Reference(String),
}

/// A field's `+default=` value, unless it is its type's zero (`""` on a string sets
/// nothing).
fn marker_default(field: &Field) -> Option<Marker> {
    let text = field.markers.get("default")?.first()?;
    if let Some(constant) = text.strip_prefix("ref(").and_then(|t| t.strip_suffix(')')) {
        return Some(Marker::Reference(constant.to_string()));
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let pointer = field.ty.starts_with('*');
    let zero = matches!(&value, Value::String(s) if s.is_empty())
        || value == Value::Bool(false)
        || value.as_i64() == Some(0);
    (pointer || !zero).then_some(Marker::Literal(value))
}

/// `if <unset> { self.<field> = <value> }`.
fn set_unset(out: &mut String, rust: &str, shape: &Shape, value: &Value) -> Result<()> {
    let literal = match value {
        Value::String(text) => format!("{text:?}.into()"),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        other => bail!("a `+default` of {other} is not supported"),
    };
    let (unset, set) = match (shape, value) {
        (Shape::Option(_), _) => (format!("self.{rust}.is_none()"), format!("Some({literal})")),
        (Shape::Scalar(_), Value::String(_)) => (format!("self.{rust}.is_empty()"), literal),
        (Shape::Scalar(_), Value::Number(_)) => (format!("self.{rust} == 0"), literal),
        (Shape::Scalar(_), Value::Bool(_)) => (format!("!self.{rust}"), literal),
        _ => bail!("a `+default` on a field of this shape is not supported"),
    };
    let _ = writeln!(
        out,
        "        if {unset} {{\n            self.{rust} = {set};\n        }}"
    );
    Ok(())
}

/// The named type a field's type is made of (`[]*core/v1.Container` → `core/v1.Container`).
fn base_type(go: &str) -> String {
    let mut ty = go;
    loop {
        if let Some(rest) = ty.strip_prefix('*').or_else(|| ty.strip_prefix("[]")) {
            ty = rest;
        } else if let Some(rest) = ty.strip_prefix("map[") {
            ty = rest.split_once(']').map_or(rest, |(_, value)| value);
        } else {
            return ty.to_string();
        }
    }
}

fn lookup<'a>(api: &'a Api, qualified: &str) -> Option<&'a Type> {
    let (package, name) = qualified.rsplit_once('.')?;
    api.packages.get(package)?.types.get(name)
}

/// `core/v1.HTTPGetAction` → `crate::defaults::core_v1::http_get_action`.
fn function_path(qualified: &str) -> Result<String> {
    let (package, name) = qualified.rsplit_once('.').context("a qualified type")?;
    let (group, version) = package.split_once('/').context("a package")?;
    Ok(format!(
        "crate::defaults::{}_{version}::{}",
        module_name(group),
        snake(name)
    ))
}

/// A Go type's name in snake case, acronyms kept whole (`HTTPGetAction` → `http_get_action`,
/// `ISCSIVolumeSource` → `iscsi_volume_source`).
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if previous.is_lowercase() || previous.is_ascii_digit() || next_lower {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The defaulted kinds' version types that must implement `Defaults` though nothing in them
/// sets a default: every version of a kind one of whose versions has defaults.
pub fn forced(
    defaulting: &Defaulting<'_>,
    versions: &BTreeMap<String, Vec<String>>,
) -> BTreeSet<String> {
    let mut forced = BTreeSet::new();
    for types in versions.values() {
        if types.iter().any(|t| defaulting.needs(t)) {
            forced.extend(types.iter().cloned());
        }
    }
    forced
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_snake_cased_with_acronyms_whole() {
        assert_eq!(snake("HTTPGetAction"), "http_get_action");
        assert_eq!(snake("ISCSIVolumeSource"), "iscsi_volume_source");
        assert_eq!(snake("PodSpec"), "pod_spec");
        assert_eq!(snake("RBDVolumeSource"), "rbd_volume_source");
        assert_eq!(snake("ResourceList"), "resource_list");
        assert_eq!(snake("CSIDriver"), "csi_driver");
    }

    #[test]
    fn a_field_is_made_of_its_named_type() {
        assert_eq!(base_type("[]core/v1.Container"), "core/v1.Container");
        assert_eq!(base_type("*core/v1.Probe"), "core/v1.Probe");
        assert_eq!(base_type("map[string]core/v1.X"), "core/v1.X");
        assert_eq!(base_type("core/v1.ResourceList"), "core/v1.ResourceList");
    }
}
