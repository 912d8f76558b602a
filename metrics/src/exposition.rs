//! Rendering the metrics for a scrape: Prometheus' text format 0.0.4 (what kube-apiserver
//! answers), or OpenMetrics text when the scraper's `Accept` asks for it (Prometheus does,
//! when it may).

use fastmetrics::format::text::{self, TextProfile};

use super::global;

/// The content type of the Prometheus text format.
pub const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of OpenMetrics 1.0.0.
pub const OPENMETRICS_1: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The content type of OpenMetrics 0.0.1.
pub const OPENMETRICS_0: &str = "application/openmetrics-text; version=0.0.1; charset=utf-8";

/// The format `accept` asks for: OpenMetrics when it names it (1.0.0 unless only 0.0.1 is
/// named), else the text format, whatever else it names.
fn negotiate(accept: Option<&str>) -> (TextProfile, &'static str) {
    let openmetrics: Vec<&str> = (accept.unwrap_or_default().split(','))
        .map(str::trim)
        .filter(|range| range.starts_with("application/openmetrics-text"))
        .collect();
    if openmetrics.is_empty() {
        return (TextProfile::PrometheusV0_0_4, TEXT);
    }
    let only_old = openmetrics
        .iter()
        .all(|range| range.replace(' ', "").contains("version=0.0.1"));
    if only_old {
        (TextProfile::OpenMetricsV0_0_1, OPENMETRICS_0)
    } else {
        (
            TextProfile::OpenMetricsV1_0_0 {
                escaping_scheme: Default::default(),
            },
            OPENMETRICS_1,
        )
    }
}

/// Every metric in the format `accept` asks for, and its content type.
pub fn render(accept: Option<&str>) -> Result<(&'static str, String), String> {
    let (profile, content_type) = negotiate(accept);
    let mut out = String::with_capacity(64 * 1024);
    let openmetrics = !matches!(profile, TextProfile::PrometheusV0_0_4);
    text::encode(&mut out, global().registry(openmetrics), profile).map_err(|e| e.to_string())?;
    Ok((content_type, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_only_when_asked_for() {
        assert_eq!(negotiate(None).1, TEXT);
        assert_eq!(negotiate(Some("*/*")).1, TEXT);
        assert_eq!(negotiate(Some("text/plain;version=0.0.4")).1, TEXT);
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
                          application/openmetrics-text;version=0.0.1;q=0.4,\
                          text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        assert_eq!(negotiate(Some(prometheus)).1, OPENMETRICS_1);
        assert_eq!(
            negotiate(Some("application/openmetrics-text; version=0.0.1")).1,
            OPENMETRICS_0
        );
    }

    #[test]
    fn both_formats_render() {
        global().requests.with_or_new(
            &crate::RequestLabels {
                route: crate::RouteLabels {
                    verb: "GET",
                    group: "g",
                    version: "v1",
                    resource: "things",
                    subresource: "",
                    scope: "resource",
                    component: "apiserver",
                },
                dry_run: "",
            }
            .with_code(404),
            |c| c.inc(),
        );
        let (_, text) = render(None).unwrap();
        assert!(
            text.contains("# TYPE apiserver_request_total counter"),
            "{text}"
        );
        assert!(text.contains("process_resident_memory_bytes "), "{text}");
        assert!(!text.contains("# EOF"));
        let (_, open) = render(Some("application/openmetrics-text")).unwrap();
        assert!(open.contains("# TYPE apiserver_request counter"), "{open}");
        assert!(open.ends_with("# EOF\n"), "{open}");
    }
}
