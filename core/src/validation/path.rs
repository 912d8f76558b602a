//! A field's path as kube's field errors name it (`field.Path`): `spec.containers[0].name`,
//! `data[tls.key]`. Validators build it as they descend, so that every error they report
//! names the field the client wrote.

use std::fmt;

/// The path of a field within an object; cheap to extend, rendered as kube renders it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// The path of a top-level field (`spec`), or the root when `name` is empty.
    pub fn new(name: &str) -> Path {
        Path(name.to_owned())
    }

    /// A field of this one: `spec` → `spec.template`.
    pub fn child(&self, name: &str) -> Path {
        match self.0.is_empty() {
            true => Path(name.to_owned()),
            false => Path(format!("{}.{name}", self.0)),
        }
    }

    /// Several nested fields at once: `child_path(&["template", "metadata"])`.
    pub fn children(&self, names: &[&str]) -> Path {
        names
            .iter()
            .fold(self.clone(), |path, name| path.child(name))
    }

    /// An item of a list: `containers` → `containers[0]`.
    pub fn index(&self, index: usize) -> Path {
        Path(format!("{}[{index}]", self.0))
    }

    /// An entry of a map: `data` → `data[tls.key]`.
    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&Path> for String {
    fn from(path: &Path) -> String {
        path.0.clone()
    }
}

impl From<Path> for String {
    fn from(path: Path) -> String {
        path.0
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn renders_as_kube_does() {
        let spec = Path::new("spec");
        assert_eq!(
            spec.child("containers").index(0).child("name").as_str(),
            "spec.containers[0].name"
        );
        assert_eq!(Path::new("data").key("tls.key").as_str(), "data[tls.key]");
        assert_eq!(Path::new("").child("type").as_str(), "type");
        assert_eq!(
            spec.children(&["template", "spec"]).as_str(),
            "spec.template.spec"
        );
    }
}
