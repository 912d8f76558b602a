//! apiserver's `ValidateWebhookURL`: the URL rules admission webhooks and APIServices'
//! `spec.url` share.

use kapi_core::error::FieldError;

/// apiserver's `ValidateWebhookURL` (HTTPS only).
pub(crate) fn url_errors(text: &str, path: &str) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let url = match url::Url::parse(text) {
        Ok(url) => url,
        Err(error) => {
            return vec![FieldError::required(
                path,
                format!("url must be a valid URL: {error}{FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if url.scheme() != "https" {
        errors.push(FieldError::invalid(
            path,
            url.scheme(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    let host = url.host_str().unwrap_or_default();
    if host.is_empty() {
        errors.push(FieldError::invalid(
            path,
            host,
            format!("host must be provided{FORM}"),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        let user = match url.password() {
            Some(password) => format!("{}:{password}", url.username()),
            None => url.username().to_owned(),
        };
        errors.push(FieldError::invalid(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if let Some(fragment) = url.fragment().filter(|f| !f.is_empty()) {
        errors.push(FieldError::invalid(
            path,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if let Some(query) = url.query().filter(|q| !q.is_empty()) {
        errors.push(FieldError::invalid(
            path,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errors
}
