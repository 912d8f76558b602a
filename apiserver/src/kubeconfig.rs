//! A kubeconfig's current context as an HTTPS client of that cluster: what an extension
//! API server uses to ask the core cluster about its requests
//! (`--authentication-kubeconfig`: TokenReviews). The cluster's `server`, its CA
//! (`certificate-authority` or `-data`), and the user's bearer `token` (or `tokenFile`) or
//! client certificate (`client-certificate`/`client-key`, or their `-data`) are read;
//! relative file paths are relative to the kubeconfig, as kubectl reads them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::Value;

/// Why a kubeconfig cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("kubeconfig {path}: {message}")]
pub struct KubeconfigError {
    path: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct File {
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    users: Vec<Named<User>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default)]
    current_context: String,
}

#[derive(Deserialize)]
struct Named<T> {
    name: String,
    #[serde(alias = "cluster", alias = "user", alias = "context")]
    value: T,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case", default)]
struct Cluster {
    server: String,
    certificate_authority: Option<PathBuf>,
    certificate_authority_data: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case", default)]
struct User {
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<PathBuf>,
    client_certificate: Option<PathBuf>,
    client_certificate_data: Option<String>,
    client_key: Option<PathBuf>,
    client_key_data: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Context {
    cluster: String,
    user: String,
}

/// A client of the cluster a kubeconfig's current context names.
#[derive(Clone)]
pub struct Remote {
    agent: ureq::Agent,
    server: String,
    token: Option<String>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// The client of `path`'s current context, each call taking at most `timeout`.
    pub fn load(path: &Path, timeout: Duration) -> Result<Remote, KubeconfigError> {
        let error = |message: String| KubeconfigError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        let file: File = serde_yaml_ng::from_str(&text).map_err(|e| error(e.to_string()))?;
        let context = match file
            .contexts
            .iter()
            .find(|c| c.name == file.current_context)
        {
            Some(context) => &context.value,
            None if file.contexts.len() == 1 => &file.contexts[0].value,
            None => return Err(error(format!("no context {:?}", file.current_context))),
        };
        let cluster = (file.clusters.iter().find(|c| c.name == context.cluster))
            .map(|c| &c.value)
            .ok_or_else(|| error(format!("no cluster {:?}", context.cluster)))?;
        let user = (file.users.iter().find(|u| u.name == context.user)).map(|u| &u.value);
        let base = path.parent().unwrap_or(Path::new("."));
        let bytes = |data: &Option<String>,
                     file: &Option<PathBuf>|
         -> Result<Option<Vec<u8>>, KubeconfigError> {
            match (data, file) {
                (Some(data), _) => STANDARD
                    .decode(data)
                    .map(Some)
                    .map_err(|e| error(e.to_string())),
                (None, Some(file)) => std::fs::read(base.join(file))
                    .map(Some)
                    .map_err(|e| error(format!("{}: {e}", base.join(file).display()))),
                (None, None) => Ok(None),
            }
        };
        use ureq::tls::{ClientCert, PrivateKey, TlsConfig};
        let mut tls = TlsConfig::builder();
        if let Some(ca) = bytes(
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        )? {
            let roots = kapi_webhook::tls::roots(Some(&ca)).ok_or_else(|| {
                error("the cluster's certificate authority holds no certificate".into())
            })?;
            tls = tls.root_certs(roots);
        }
        let mut token = None;
        if let Some(user) = user {
            token = match (&user.token, &user.token_file) {
                (Some(token), _) => Some(token.clone()),
                (None, Some(file)) => Some(
                    std::fs::read_to_string(base.join(file))
                        .map_err(|e| error(e.to_string()))?
                        .trim()
                        .to_owned(),
                ),
                (None, None) => None,
            };
            let certificate = bytes(&user.client_certificate_data, &user.client_certificate)?;
            let key = bytes(&user.client_key_data, &user.client_key)?;
            if let (Some(certificate), Some(key)) = (certificate, key) {
                let chain = kapi_webhook::tls::certificates(&certificate);
                let key = PrivateKey::from_pem(&key)
                    .map_err(|e| error(e.to_string()))?
                    .to_owned();
                tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
            }
        }
        Ok(Remote {
            agent: kapi_webhook::tls::agent(tls.build(), timeout),
            server: cluster.server.trim_end_matches('/').to_owned(),
            token,
        })
    }

    /// Creates a review (`kind` in `group`'s `v1`, with `spec`) in the cluster, blocking
    /// the thread (moved off the runtime's workers): the answered review's `status`.
    pub fn review(&self, group: &str, kind: &str, spec: &Value) -> Result<Value, String> {
        let review = serde_json::json!({"apiVersion": format!("{group}/v1"), "kind": kind,
            "spec": spec});
        let path = format!("/apis/{group}/v1/{}s", kind.to_lowercase());
        let call = || self.post(&path, &review);
        let answered = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(call)
            }
            _ => call(),
        };
        let (code, mut answer) = answered.map_err(|e| format!("asking the core cluster: {e}"))?;
        if !(200..300).contains(&code) {
            let message = answer["message"].as_str().unwrap_or_default();
            return Err(format!(
                "the core cluster answered the {kind} with {code}: {message}"
            ));
        }
        Ok(answer["status"].take())
    }

    /// GETs `path` (blocking): the answer's status and JSON.
    pub fn get(&self, path: &str) -> Result<(u16, Value), String> {
        let mut request = self.agent.get(format!("{}{path}", self.server));
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request.call().map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let answer = response
            .body_mut()
            .read_json::<Value>()
            .map_err(|e| e.to_string())?;
        Ok((status, answer))
    }

    /// POSTs `body` to `path` (blocking): the answer's status and JSON.
    pub fn post(&self, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let mut request = self.agent.post(format!("{}{path}", self.server));
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request.send_json(body).map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let answer = response
            .body_mut()
            .read_json::<Value>()
            .map_err(|e| e.to_string())?;
        Ok((status, answer))
    }
}
