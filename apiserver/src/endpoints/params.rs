//! Query parameters, decoded and validated as kube-apiserver's handlers do: a value that
//! does not parse is 400 `BadRequest`; a value that parses but is not allowed is 422
//! `Invalid` on the options kind (`CreateOptions.meta.k8s.io "" is invalid: dryRun: ...`).

use serde_json::json;

use kapi_core::error::{ApiError, FieldError, FieldErrorType};
use kapi_core::meta::DeleteOptions;
use kapi_core::strconv::parse_bool;
use kapi_registry::{FieldValidation, ListOptions, PatchType, WatchOptions, WriteOptions};

/// The longest `fieldManager` kube-apiserver accepts.
const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The decoded query string: every `key=value` pair in order.
#[derive(Debug, Default)]
pub(super) struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub(super) fn parse(query: Option<&str>) -> Query {
        let pairs = form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Query { pairs }
    }

    /// The first value of `key`.
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        (self.pairs.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub(super) fn all(&self, key: &str) -> Vec<&str> {
        (self.pairs.iter())
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Every pair, in order.
    pub(super) fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// `key` is present, with or without a value (`?verbose`).
    pub(super) fn has(&self, key: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == key)
    }

    /// A boolean parameter; absent or empty is `None`.
    pub(super) fn bool(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(value) => parse_bool(value).map(Some).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "invalid value {value:?} for query parameter {key:?}: expected a boolean"
                ))
            }),
        }
    }

    /// An integer parameter; absent or empty is `None`.
    pub(super) fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(value) => value.parse().map(Some).map_err(|_| {
                ApiError::BadRequest(format!(
                    "invalid value {value:?} for query parameter {key:?}: expected an integer"
                ))
            }),
        }
    }

    /// A string parameter; absent or empty is `None`.
    pub(super) fn string(&self, key: &str) -> Option<String> {
        self.get(key).filter(|v| !v.is_empty()).map(str::to_owned)
    }

    /// `pretty`.
    pub(super) fn pretty(&self) -> Result<Option<bool>, ApiError> {
        self.bool("pretty")
    }

    /// `watch=true` (or `1`, ...).
    pub(super) fn watch(&self) -> Result<bool, ApiError> {
        Ok(self.bool("watch")?.unwrap_or(false))
    }

    /// `includeObject` of Tables: `None`, `Metadata` (default) or `Object`.
    pub(super) fn include_object(&self) -> Result<&str, ApiError> {
        match self.get("includeObject") {
            None | Some("") => Ok("Metadata"),
            Some(value @ ("None" | "Metadata" | "Object")) => Ok(value),
            Some(other) => Err(ApiError::BadRequest(format!(
                "includeObject {other:?} is not supported: use None, Metadata or Object"
            ))),
        }
    }

    /// `dryRun`: every value must be `All`.
    fn dry_run(&self, errors: &mut Vec<FieldError>) -> bool {
        let values = self.all("dryRun");
        dry_run_values(&values, errors)
    }

    /// Options of a read or list.
    pub(super) fn list_options(&self) -> Result<ListOptions, ApiError> {
        let options = ListOptions {
            label_selector: self.string("labelSelector"),
            field_selector: self.string("fieldSelector"),
            limit: self.int("limit")?.unwrap_or(0).max(0) as u64,
            continue_token: self.string("continue"),
            resource_version: self.string("resourceVersion"),
            resource_version_match: self.string("resourceVersionMatch"),
        };
        let mut errors = Vec::new();
        if let Some(rv_match) = &options.resource_version_match {
            let field = "resourceVersionMatch";
            if !["NotOlderThan", "Exact"].contains(&rv_match.as_str()) {
                errors.push(FieldError::new(
                    FieldErrorType::NotSupported,
                    field,
                    Some(json!(rv_match)),
                    "supported values: \"Exact\", \"NotOlderThan\"",
                ));
            } else if options.resource_version.is_none() {
                errors.push(FieldError::new(
                    FieldErrorType::Forbidden,
                    field,
                    None,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            } else if options.continue_token.is_some() {
                errors.push(FieldError::new(
                    FieldErrorType::Forbidden,
                    field,
                    None,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            } else if rv_match == "Exact" && options.resource_version.as_deref() == Some("0") {
                errors.push(FieldError::new(
                    FieldErrorType::Forbidden,
                    field,
                    None,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        invalid("ListOptions", errors)?;
        Ok(options)
    }

    /// Options of a watch: selectors, `resourceVersion`, `resourceVersionMatch`,
    /// `allowWatchBookmarks`, `sendInitialEvents` and `timeoutSeconds` (the registry
    /// validates how they combine).
    pub(super) fn watch_options(&self) -> Result<WatchOptions, ApiError> {
        let timeout = self.int("timeoutSeconds")?;
        Ok(WatchOptions {
            label_selector: self.string("labelSelector"),
            field_selector: self.string("fieldSelector"),
            resource_version: self.string("resourceVersion"),
            resource_version_match: self.string("resourceVersionMatch"),
            allow_watch_bookmarks: self.bool("allowWatchBookmarks")?.unwrap_or(false),
            send_initial_events: self.bool("sendInitialEvents")?,
            timeout: timeout
                .filter(|t| *t > 0)
                .map(|t| std::time::Duration::from_secs(t.unsigned_abs())),
            bookmark_interval: None,
        })
    }

    /// Options of a create (`CreateOptions`) or update (`UpdateOptions`).
    pub(super) fn write_options(
        &self,
        kind: &str,
        user_agent: Option<&str>,
    ) -> Result<WriteOptions, ApiError> {
        let mut errors = Vec::new();
        let dry_run = self.dry_run(&mut errors);
        let field_validation = self.field_validation(&mut errors);
        let field_manager = self.field_manager(&mut errors);
        invalid(kind, errors)?;
        Ok(WriteOptions {
            dry_run,
            field_manager: Some(
                field_manager.unwrap_or_else(|| manager_from_user_agent(user_agent)),
            ),
            field_validation,
            duplicate_fields: Vec::new(),
            force: false,
            user: None,
        })
    }

    /// Options of a patch (`PatchOptions`): `force` only with apply, which needs a
    /// `fieldManager`.
    pub(super) fn patch_options(
        &self,
        patch_type: PatchType,
        user_agent: Option<&str>,
    ) -> Result<WriteOptions, ApiError> {
        let mut errors = Vec::new();
        let dry_run = self.dry_run(&mut errors);
        let field_validation = self.field_validation(&mut errors);
        let field_manager = self.field_manager(&mut errors);
        let force = self.bool("force")?;
        if patch_type == PatchType::Apply {
            if field_manager.is_none() {
                errors.push(FieldError::new(
                    FieldErrorType::Required,
                    "fieldManager",
                    None,
                    "is required for apply patch",
                ));
            }
        } else if force.is_some() {
            errors.push(FieldError::new(
                FieldErrorType::Forbidden,
                "force",
                None,
                "may not be specified for non-apply patch",
            ));
        }
        invalid("PatchOptions", errors)?;
        Ok(WriteOptions {
            dry_run,
            field_manager: Some(
                field_manager.unwrap_or_else(|| manager_from_user_agent(user_agent)),
            ),
            field_validation,
            duplicate_fields: Vec::new(),
            force: force.unwrap_or(false),
            user: None,
        })
    }

    /// `DeleteOptions` from the query, for a DELETE without a body.
    pub(super) fn delete_options(&self) -> Result<DeleteOptions, ApiError> {
        let dry_run = self.all("dryRun");
        Ok(DeleteOptions {
            grace_period_seconds: self.int("gracePeriodSeconds")?,
            propagation_policy: self.string("propagationPolicy"),
            orphan_dependents: self.bool("orphanDependents")?,
            dry_run: (!dry_run.is_empty())
                .then(|| dry_run.iter().map(|v| (*v).to_owned()).collect()),
            ..DeleteOptions::default()
        })
    }

    fn field_validation(&self, errors: &mut Vec<FieldError>) -> FieldValidation {
        match self.get("fieldValidation") {
            None | Some("") => FieldValidation::default(),
            Some("Strict") => FieldValidation::Strict,
            Some("Warn") => FieldValidation::Warn,
            Some("Ignore") => FieldValidation::Ignore,
            Some(other) => {
                errors.push(FieldError::new(
                    FieldErrorType::NotSupported,
                    "fieldValidation",
                    Some(json!(other)),
                    "supported values: \"Ignore\", \"Strict\", \"Warn\"",
                ));
                FieldValidation::default()
            }
        }
    }

    fn field_manager(&self, errors: &mut Vec<FieldError>) -> Option<String> {
        let manager = self.string("fieldManager")?;
        if manager.len() > FIELD_MANAGER_MAX_LENGTH {
            errors.push(FieldError::new(
                FieldErrorType::TooLong,
                "fieldManager",
                None,
                format!("may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
            ));
        } else if manager.chars().any(|c| c.is_control()) {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                "fieldManager",
                Some(json!(manager)),
                "must only contain printable characters",
            ));
        }
        Some(manager)
    }
}

/// Validates `DeleteOptions` (from the body or the query) as kube-apiserver does.
pub(super) fn validate_delete_options(options: &DeleteOptions) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    if let Some(policy) = &options.propagation_policy
        && !["Foreground", "Background", "Orphan"].contains(&policy.as_str())
    {
        errors.push(FieldError::new(
            FieldErrorType::NotSupported,
            "propagationPolicy",
            Some(json!(policy)),
            "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
        ));
    }
    let dry_run: Vec<&str> = (options.dry_run.iter().flatten())
        .map(String::as_str)
        .collect();
    dry_run_values(&dry_run, &mut errors);
    invalid("DeleteOptions", errors)
}

fn dry_run_values(values: &[&str], errors: &mut Vec<FieldError>) -> bool {
    for value in values {
        if *value != "All" {
            errors.push(FieldError::new(
                FieldErrorType::NotSupported,
                "dryRun",
                Some(json!(value)),
                "supported values: \"All\"",
            ));
        }
    }
    !values.is_empty()
}

/// 422 on the options kind when there are errors.
fn invalid(kind: &str, causes: Vec<FieldError>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid {
        group: "meta.k8s.io".into(),
        kind: kind.into(),
        name: String::new(),
        causes,
    })
}

/// The default field manager: the user agent up to its first `/` (`kubectl`), as
/// kube-apiserver derives it when a write names none.
fn manager_from_user_agent(user_agent: Option<&str>) -> String {
    let agent = user_agent.unwrap_or("");
    let prefix = agent.split('/').next().unwrap_or("");
    let printable: String = prefix.chars().filter(|c| !c.is_control()).collect();
    printable.chars().take(FIELD_MANAGER_MAX_LENGTH).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_options_name_the_options_kind() {
        let query = Query::parse(Some("dryRun=Some&fieldValidation=Loose"));
        let error = query.write_options("CreateOptions", None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "CreateOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: \"Some\": supported values: \"All\", fieldValidation: Unsupported value: \"Loose\": supported values: \"Ignore\", \"Strict\", \"Warn\"]"
        );
        let query = Query::parse(Some("force=true"));
        let error = query.patch_options(PatchType::Merge, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        let query = Query::parse(Some("limit=ten"));
        assert_eq!(query.list_options().unwrap_err().code(), 400);
    }

    #[test]
    fn field_manager_defaults_to_the_user_agent_prefix() {
        let query = Query::parse(Some("dryRun=All"));
        let options = query
            .write_options(
                "CreateOptions",
                Some("kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"),
            )
            .unwrap();
        assert!(options.dry_run);
        assert_eq!(options.field_manager.as_deref(), Some("kubectl"));
    }
}
