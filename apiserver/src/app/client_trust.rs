//! Whom the server believes about users: client certificates signed by the client CA
//! (`--client-ca-file`), and the front proxy whose certificate the request-header CA signs
//! (`--requestheader-client-ca-file` with the `--requestheader-*` names and headers).
//!
//! An extension API server given `--authentication-kubeconfig` without those flags reads
//! them where its core cluster publishes them, as kube's delegating authentication does:
//! the ConfigMap `kube-system/extension-apiserver-authentication` (`client-ca-file`,
//! `requestheader-client-ca-file`, and the JSON lists `requestheader-allowed-names`,
//! `-username-headers`, `-group-headers`, `-extra-headers-prefix`). Flags win over the
//! ConfigMap; a missing ConfigMap means nothing to add; `--authentication-skip-lookup`
//! skips the lookup, and `--authentication-tolerate-lookup-failure` starts without it
//! when the core cluster cannot be asked. The ConfigMap is read once, at start-up.

use crate::authn::request_header::RequestHeader;
use crate::authn::x509::ClientCa;
use crate::controllers::client_trust::{self, Published};
use crate::kubeconfig::Remote;
use anyhow::{Context, Result, bail};

use super::options::AuthenticationOptions;

/// Where the core cluster publishes what it trusts.
const CONFIG_MAP: &str =
    "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

/// A PEM bundle and where it came from.
type Bundle = (String, Vec<u8>);

/// The front proxy's CA and headers.
pub(super) struct FrontProxy {
    ca: Bundle,
    allowed_names: Vec<String>,
    username_headers: Vec<String>,
    group_headers: Vec<String>,
    extra_headers_prefix: Vec<String>,
}

/// The client CA and the front proxy, from the flags or the core cluster.
#[derive(Default)]
pub struct ClientTrust {
    client_ca: Option<Bundle>,
    front_proxy: Option<FrontProxy>,
}

impl ClientTrust {
    /// Reads the flags' files and, when they leave something out and the server delegates
    /// authentication, the core cluster's ConfigMap.
    pub fn resolve(flags: &AuthenticationOptions) -> Result<ClientTrust> {
        let read = |path: &std::path::Path, flag: &str| -> Result<Bundle> {
            let pem = std::fs::read(path).with_context(|| format!("{flag}: {}", path.display()))?;
            Ok((path.display().to_string(), pem))
        };
        let mut trust = ClientTrust {
            client_ca: (flags.client_ca_file.as_deref())
                .map(|path| read(path, "--client-ca-file"))
                .transpose()?,
            front_proxy: match &flags.requestheader_client_ca_file {
                Some(path) => Some(FrontProxy {
                    ca: read(path, "--requestheader-client-ca-file")?,
                    allowed_names: flags.requestheader_allowed_names.clone(),
                    username_headers: flags.requestheader_username_headers.clone(),
                    group_headers: flags.requestheader_group_headers.clone(),
                    extra_headers_prefix: flags.requestheader_extra_headers_prefix.clone(),
                }),
                None => None,
            },
        };
        let wanted = trust.client_ca.is_none() || trust.front_proxy.is_none();
        let Some(kubeconfig) = (flags.authentication_kubeconfig.as_ref())
            .filter(|_| wanted && !flags.authentication_skip_lookup)
        else {
            return Ok(trust);
        };
        let looked_up = Remote::load(kubeconfig, std::time::Duration::from_secs(10))
            .map_err(anyhow::Error::new)
            .and_then(|remote| published(&remote));
        let published = match looked_up {
            Ok(published) => published,
            Err(error) if flags.authentication_tolerate_lookup_failure => {
                tracing::warn!(%error, "cannot read the core cluster's client trust; going on without");
                return Ok(trust);
            }
            Err(error) => {
                return Err(error.context(
                    "reading kube-system/extension-apiserver-authentication from the core \
                     cluster (--authentication-skip-lookup to not, \
                     --authentication-tolerate-lookup-failure to go on without)",
                ));
            }
        };
        if trust.client_ca.is_none() {
            trust.client_ca = published.client_ca;
        }
        if trust.front_proxy.is_none() {
            trust.front_proxy = published.front_proxy;
        }
        Ok(trust)
    }

    /// What the server publishes for extension API servers behind it
    /// (`controllers::client_trust`): nothing when it trusts neither a client CA nor a front
    /// proxy.
    pub fn published(&self) -> Option<Published> {
        let pem = |bundle: &Bundle| String::from_utf8_lossy(&bundle.1).into_owned();
        let mut data = Published::new();
        if let Some(bundle) = &self.client_ca {
            data.insert("client-ca-file".into(), pem(bundle));
        }
        if let Some(proxy) = &self.front_proxy {
            data.insert("requestheader-client-ca-file".into(), pem(&proxy.ca));
            for (key, values) in [
                ("requestheader-allowed-names", &proxy.allowed_names),
                ("requestheader-username-headers", &proxy.username_headers),
                ("requestheader-group-headers", &proxy.group_headers),
                (
                    "requestheader-extra-headers-prefix",
                    &proxy.extra_headers_prefix,
                ),
            ] {
                data.insert(key.into(), client_trust::list(values));
            }
        }
        (!data.is_empty()).then_some(data)
    }

    /// The client CA, when there is one.
    pub fn client_ca(&self) -> Result<Option<ClientCa>> {
        (self.client_ca.as_ref())
            .map(|bundle| ClientCa::from_pems(std::slice::from_ref(bundle)))
            .transpose()
            .context("the client CA")
    }

    /// The CAs the TLS handshake asks client certificates of: the client CA's and the
    /// front proxy's.
    pub fn handshake_cas(&self) -> Result<Option<ClientCa>> {
        let bundles: Vec<Bundle> = (self.client_ca.iter())
            .chain(self.front_proxy.iter().map(|proxy| &proxy.ca))
            .cloned()
            .collect();
        if bundles.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            ClientCa::from_pems(&bundles).context("the client CAs")?,
        ))
    }

    /// The front proxy's authenticator, when there is a front proxy.
    pub fn request_header(&self) -> Result<Option<RequestHeader>> {
        let Some(proxy) = &self.front_proxy else {
            return Ok(None);
        };
        let ca = ClientCa::from_pems(std::slice::from_ref(&proxy.ca))
            .context("the request-header CA")?;
        tracing::info!(ca = %proxy.ca.0, "front-proxy authentication");
        Ok(Some(RequestHeader::new(
            ca,
            proxy.allowed_names.clone(),
            proxy.username_headers.clone(),
            proxy.group_headers.clone(),
            proxy.extra_headers_prefix.clone(),
        )))
    }
}

/// What the core cluster publishes (nothing when it has no such ConfigMap).
fn published(remote: &Remote) -> Result<ClientTrust> {
    let (status, config_map) = remote.get(CONFIG_MAP).map_err(anyhow::Error::msg)?;
    match status {
        200 => {}
        404 => {
            tracing::info!("the core cluster publishes no extension-apiserver-authentication");
            return Ok(ClientTrust::default());
        }
        _ => bail!(
            "the core cluster answered {status}: {}",
            config_map["message"].as_str().unwrap_or_default()
        ),
    }
    let data = &config_map["data"];
    let source = |key: &str| format!("configmap/extension-apiserver-authentication[{key}]");
    let bundle = |key: &str| {
        (data[key].as_str())
            .filter(|pem| !pem.trim().is_empty())
            .map(|pem| (source(key), pem.as_bytes().to_vec()))
    };
    let list = |key: &str| -> Result<Vec<String>> {
        match data[key].as_str() {
            None | Some("") => Ok(Vec::new()),
            Some(text) => serde_json::from_str::<Vec<String>>(text)
                .with_context(|| format!("{}: not a JSON list of strings", source(key))),
        }
    };
    let front_proxy = match bundle("requestheader-client-ca-file") {
        Some(ca) => Some(FrontProxy {
            ca,
            allowed_names: list("requestheader-allowed-names")?,
            username_headers: list("requestheader-username-headers")?,
            group_headers: list("requestheader-group-headers")?,
            extra_headers_prefix: list("requestheader-extra-headers-prefix")?,
        }),
        None => None,
    };
    tracing::info!(
        client_ca = data["client-ca-file"].is_string(),
        front_proxy = front_proxy.is_some(),
        "read the core cluster's client trust"
    );
    Ok(ClientTrust {
        client_ca: bundle("client-ca-file"),
        front_proxy,
    })
}
