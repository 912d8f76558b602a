//! Delegated token authentication (`--authentication-kubeconfig`), as kube's delegating
//! authenticator of an extension API server: a bearer token this server does not know is
//! sent in a `TokenReview` to the core cluster the kubeconfig names, whose answer (the
//! user, or not authenticated) is kept for ten seconds, as kube caches it. A core cluster
//! that cannot be asked fails the request (401), and nothing is kept.
//!
//! The method is synchronous, as every [`Method`] is: the call blocks its thread, moved
//! off the runtime's workers (`block_in_place`), as kube's webhook blocks its goroutine.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Method, Outcome, Request, UserInfo};
use crate::kubeconfig::Remote;

/// How long an answer is kept (kube's delegated `CacheTTL`).
const TTL: Duration = Duration::from_secs(10);

/// Past this many kept answers, the expired ones are dropped.
const PRUNE_AT: usize = 4096;

/// The delegated token method.
pub struct TokenReviewer {
    remote: Remote,
    /// Answers by token: the user, or `None` when the core cluster did not authenticate it.
    answers: Mutex<HashMap<String, (Instant, Option<UserInfo>)>>,
}

impl TokenReviewer {
    /// Asks the core cluster `remote` about tokens.
    pub fn new(remote: Remote) -> TokenReviewer {
        TokenReviewer {
            remote,
            answers: Mutex::new(HashMap::new()),
        }
    }

    fn review(&self, token: &str) -> Result<Option<UserInfo>, String> {
        let spec = json!({"token": token});
        let status = self
            .remote
            .review("authentication.k8s.io", "TokenReview", &spec)?;
        if status["authenticated"] != true {
            return Ok(None);
        }
        let user = &status["user"];
        let strings = |value: &Value| -> Vec<String> {
            (value.as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        Ok(Some(UserInfo {
            name: user["username"].as_str().unwrap_or_default().to_owned(),
            uid: user["uid"].as_str().unwrap_or_default().to_owned(),
            groups: strings(&user["groups"]),
            extra: (user["extra"].as_object().into_iter().flatten())
                .map(|(key, values)| (key.clone(), strings(values)))
                .collect(),
        }))
    }
}

impl Method for TokenReviewer {
    fn authenticate(&self, request: &Request<'_>) -> Outcome {
        let Some(token) = request.bearer_token() else {
            return Outcome::NotPresented;
        };
        let now = Instant::now();
        let kept = (self.answers.lock().unwrap_or_else(|e| e.into_inner()))
            .get(token)
            .filter(|(at, _)| now.duration_since(*at) < TTL)
            .map(|(_, user)| user.clone());
        let answer = match kept {
            Some(answer) => answer,
            None => match self.review(token) {
                Ok(answer) => {
                    let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
                    if answers.len() >= PRUNE_AT {
                        answers.retain(|_, (at, _)| now.duration_since(*at) < TTL);
                    }
                    answers.insert(token.to_owned(), (now, answer.clone()));
                    answer
                }
                Err(why) => return Outcome::Rejected(format!("token review: {why}")),
            },
        };
        match answer {
            Some(user) => Outcome::User(user),
            None => Outcome::Rejected(
                "token review: the core cluster did not authenticate the token".into(),
            ),
        }
    }
}
