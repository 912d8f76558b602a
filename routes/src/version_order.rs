//! Kubernetes' version ordering (`v1` > `v2beta1` > `v1beta2` > `v1alpha1` > `foo`,
//! apimachinery's `CompareKubeAwareVersionStrings`), which decides the preferred version of a group and the order discovery lists versions in:
//! shared by the generator's documents, the runtime's deprecation warnings and the
//! aggregator's merged discovery.

use std::cmp::Ordering;

/// The kind of a version string, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stability {
    Other,
    Alpha,
    Beta,
    Ga,
}

/// Parses `v<major>[(alpha|beta)<minor>]`.
fn parse(version: &str) -> (Stability, u64, u64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (Stability::Other, 0, 0);
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let Ok(major) = rest[..digits].parse::<u64>() else {
        return (Stability::Other, 0, 0);
    };
    let tail = &rest[digits..];
    let (stability, minor) = if tail.is_empty() {
        (Stability::Ga, "0")
    } else if let Some(m) = tail.strip_prefix("beta") {
        (Stability::Beta, m)
    } else if let Some(m) = tail.strip_prefix("alpha") {
        (Stability::Alpha, m)
    } else {
        return (Stability::Other, 0, 0);
    };
    match minor.parse::<u64>() {
        Ok(minor) => (stability, major, minor),
        Err(_) => (Stability::Other, 0, 0),
    }
}

/// Orders versions from most to least preferred, as kube-apiserver does; versions that
/// do not look like Kubernetes versions come last, alphabetically.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (sa, ma, na) = parse(a);
    let (sb, mb, nb) = parse(b);
    match (sa, sb) {
        (Stability::Other, Stability::Other) => a.cmp(b),
        _ => sb.cmp(&sa).then(mb.cmp(&ma)).then(nb.cmp(&na)),
    }
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn kube_aware_order() {
        let mut versions = vec![
            "foo1",
            "v1alpha1",
            "v10",
            "v1beta1",
            "v2",
            "v11alpha2",
            "v12alpha1",
            "v1",
            "v2beta1",
            "v10beta3",
            "v3beta1",
            "foo10",
        ];
        versions.sort_by(|a, b| compare(a, b));
        assert_eq!(
            versions,
            [
                "v10",
                "v2",
                "v1",
                "v10beta3",
                "v3beta1",
                "v2beta1",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10"
            ]
        );
    }
}
