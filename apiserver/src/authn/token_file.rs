//! Static bearer tokens (`--token-auth-file`), kube's CSV: `token,user,uid,"group1,group2"`,
//! one per line, at least three columns; later columns are ignored. Read once at start:
//! kube does not reload the file either.

use std::collections::HashMap;
use std::path::Path;

use super::{Method, Outcome, Request, UserInfo};

/// The tokens of a token file.
pub struct TokenFile {
    users: HashMap<String, UserInfo>,
}

/// Why a token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// It cannot be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a record kube accepts.
    #[error("{path}, line {line}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// 1-based.
        line: u64,
        /// What is wrong (never the token).
        message: String,
    },
}

impl TokenFile {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<TokenFile, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        TokenFile::parse(&text).map_err(|(line, message)| TokenFileError::Invalid {
            path: path.display().to_string(),
            line,
            message,
        })
    }

    /// Parses the file's text; an error names the line.
    pub fn parse(text: &str) -> Result<TokenFile, (u64, String)> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::Fields)
            .from_reader(text.as_bytes());
        let mut users = HashMap::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, csv::Position::line);
                (line, format!("not CSV: {}", e.kind_message()))
            })?;
            let line = record.position().map_or(0, csv::Position::line);
            if record.len() < 3 {
                return Err((
                    line,
                    format!(
                        "token file is missing data: {} columns, at least 3 needed \
                         (token,user,uid[,\"group1,group2\"])",
                        record.len()
                    ),
                ));
            }
            let token = record[0].to_owned();
            if token.is_empty() {
                // kube skips records without a token (with a warning).
                tracing::warn!(line, "token file: a record without a token is ignored");
                continue;
            }
            let groups = match record.get(3) {
                Some(groups) if !groups.is_empty() => {
                    groups.split(',').map(|g| g.trim().to_owned()).collect()
                }
                _ => Vec::new(),
            };
            if users.contains_key(&token) {
                tracing::warn!(
                    line,
                    "token file: a duplicate token replaces the earlier one"
                );
            }
            let user = UserInfo {
                name: record[1].to_owned(),
                uid: record[2].to_owned(),
                groups,
                ..UserInfo::default()
            };
            users.insert(token, user);
        }
        Ok(TokenFile { users })
    }

    /// How many tokens the file holds.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether the file holds no token.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// csv's error kinds, described without the record (which holds a token).
trait KindMessage {
    fn kind_message(&self) -> String;
}

impl KindMessage for csv::Error {
    fn kind_message(&self) -> String {
        match self.kind() {
            csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_owned(),
            csv::ErrorKind::UnequalLengths { .. } => "unequal record lengths".to_owned(),
            csv::ErrorKind::Io(e) => e.to_string(),
            _ => "malformed record".to_owned(),
        }
    }
}

impl Method for TokenFile {
    fn authenticate(&self, request: &Request<'_>) -> Outcome {
        // A token the file does not hold may be another method's.
        match request.bearer_token().and_then(|t| self.users.get(t)) {
            Some(user) => Outcome::User(user.clone()),
            None => Outcome::NotPresented,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kube_token_files() {
        let file = TokenFile::parse(
            "admin-token,admin,admin-uid,system:masters\n\
             t2, bob ,bob-uid,\"devs, qa\",ignored\n\
             t3,carol,carol-uid\n",
        )
        .unwrap();
        assert_eq!(file.len(), 3);
        assert_eq!(file.users["t2"].name, "bob");
        assert_eq!(file.users["t2"].groups, ["devs", "qa"]);
        assert_eq!(file.users["admin-token"].groups, ["system:masters"]);
        assert!(file.users["t3"].groups.is_empty());

        let error = TokenFile::parse("ok,u,1\nsecret-token,only-user\n")
            .err()
            .unwrap();
        assert_eq!(error.0, 2);
        assert!(error.1.contains("2 columns"), "{}", error.1);
        assert!(!error.1.contains("secret-token"));
    }
}
