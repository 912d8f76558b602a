//! A small HTTP client for the checks kubectl does not cover. Every status is a response,
//! not an error; only transport failures (refused, reset, timed out) are errors.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// A client of one server address.
pub(crate) struct Client {
    base: String,
    agent: ureq::Agent,
    /// The agent of watches: the same connections, without the global timeout (a watch
    /// lasts as long as the server keeps it open).
    watch_agent: ureq::Agent,
    /// A bearer token sent with every request (the peer kube-apiserver's admin token).
    token: Option<String>,
}

/// A response: status, content type, `Warning` headers and body.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub content_type: String,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<String>,
    /// Every `Warning` header, in order (`299 - "..."`).
    pub warnings: Vec<String>,
    /// The `Audit-Id` header, if any.
    pub audit_id: Option<String>,
    /// API Priority and Fairness's `X-Kubernetes-PF-FlowSchema-UID` and
    /// `X-Kubernetes-PF-PriorityLevel-UID` headers, if any.
    pub priority_and_fairness: Option<(String, String)>,
    pub body: String,
}

impl Response {
    /// The body as JSON, or a panic showing it.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("response body is not JSON ({e}): {self:?}"))
    }
}

impl Client {
    pub(crate) fn new(addr: SocketAddr) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(30)))
            // Each request on its own connection: a killed server cannot leave a stale
            // pooled connection behind for the next request.
            .max_idle_connections(0)
            .build();
        let watch = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .max_idle_connections(0)
            .build();
        Client {
            base: format!("http://{addr}"),
            agent: ureq::Agent::new_with_config(config),
            watch_agent: ureq::Agent::new_with_config(watch),
            token: None,
        }
    }

    /// A client of an HTTPS server whose certificate `ca_pem` signed, authenticating with
    /// `token`: the real kube-apiserver of `shared/peer/`.
    pub(crate) fn with_tls(base: &str, ca_pem: &[u8], token: &str) -> Client {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(ca_pem).expect("the CA certificate is PEM");
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::Specific(std::sync::Arc::new(vec![
                ca.to_owned(),
            ])))
            .build();
        Client::over_tls(base, tls, Some(token))
    }

    /// A client of an HTTPS server whose certificate `ca_pem` signed, with no credentials.
    pub(crate) fn anonymous_tls(base: &str, ca_pem: &[u8]) -> Client {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(ca_pem).expect("the CA certificate is PEM");
        let roots = RootCerts::Specific(std::sync::Arc::new(vec![ca.to_owned()]));
        Client::over_tls(base, TlsConfig::builder().root_certs(roots).build(), None)
    }

    /// A client of `base` with `tls`, sending `token`.
    fn over_tls(base: &str, tls: ureq::tls::TlsConfig, token: Option<&str>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(30)))
            .tls_config(tls.clone())
            .build();
        let watch = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .tls_config(tls)
            .build();
        Client {
            base: base.trim_end_matches('/').to_owned(),
            agent: ureq::Agent::new_with_config(config),
            watch_agent: ureq::Agent::new_with_config(watch),
            token: token.map(str::to_owned),
        }
    }

    /// A client of an HTTPS server whose certificate `ca_pem` signed, presenting the client
    /// certificate and key of `identity` (PEM files), and no token.
    pub(crate) fn with_certificate(
        base: &str,
        ca_pem: &[u8],
        identity: &(PathBuf, PathBuf),
    ) -> Client {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(ca_pem).expect("the CA certificate is PEM");
        let cert = std::fs::read(&identity.0).expect("the client certificate");
        let key = std::fs::read(&identity.1).expect("the client key");
        let cert = Certificate::from_pem(&cert).expect("PEM").to_owned();
        let key = PrivateKey::from_pem(&key).expect("PEM").to_owned();
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::Specific(std::sync::Arc::new(vec![
                ca.to_owned(),
            ])))
            .client_cert(Some(ClientCert::new_with_certs(&[cert], key)))
            .build();
        Client::over_tls(base, tls, None)
    }

    /// `method path` asking for JSON, with the client's token.
    fn builder(&self, method: &str, path: &str) -> ureq::http::request::Builder {
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("Accept", "application/json");
        match &self.token {
            Some(token) => request.header("Authorization", format!("Bearer {token}")),
            None => request,
        }
    }

    /// `method path` (a JSON `body` when given) with `headers` beside the client's own.
    pub(crate) fn request_with_headers(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Response, ureq::Error> {
        let mut request = self
            .builder(method, path)
            .header("Content-Type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = body.map(Value::to_string).unwrap_or_default();
        read(
            self.agent
                .run(request.body(body).expect("a valid request"))?,
        )
    }

    /// `method path` with an optional body of `content_type`: any method, for tables of
    /// requests.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&str>,
    ) -> Result<Response, ureq::Error> {
        let request = self.builder(method, path);
        let response = match body {
            Some(body) => {
                let request = (request.header("Content-Type", content_type))
                    .body(body.to_owned())
                    .expect("a valid request");
                self.agent.run(request)?
            }
            None => self.agent.run(request.body(()).expect("a valid request"))?,
        };
        read(response)
    }

    /// `GET path`, asking for JSON.
    pub(crate) fn get(&self, path: &str) -> Result<Response, ureq::Error> {
        self.request("GET", path, "", None)
    }

    /// `GET path`: the status and the body's bytes (a binary body).
    pub(crate) fn get_bytes(&self, path: &str) -> Result<(u16, Vec<u8>), ureq::Error> {
        self.get_accepting(path, "*/*")
    }

    /// `GET path` with `Accept: accept`: the status and the body's bytes.
    pub(crate) fn get_accepting(
        &self,
        path: &str,
        accept: &str,
    ) -> Result<(u16, Vec<u8>), ureq::Error> {
        let mut request = (self.agent.get(format!("{}{path}", self.base))).header("Accept", accept);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request.call()?;
        let status = response.status().as_u16();
        Ok((status, response.body_mut().read_to_vec()?))
    }

    /// `GET path` with `Accept: accept`: the status, the `Content-Type` and the body's
    /// bytes.
    pub(crate) fn get_typed(
        &self,
        path: &str,
        accept: &str,
    ) -> Result<(u16, String, Vec<u8>), ureq::Error> {
        let mut request = (self.agent.get(format!("{}{path}", self.base))).header("Accept", accept);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request.call()?;
        let status = response.status().as_u16();
        let content_type = (response.headers().get("content-type"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Ok((status, content_type, response.body_mut().read_to_vec()?))
    }

    /// The same client, sending no token (anonymous).
    pub(crate) fn without_token(mut self) -> Client {
        self.token = None;
        self
    }

    /// `POST path` with a JSON body.
    pub(crate) fn post(&self, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        self.send("POST", path, body)
    }

    /// `PUT path` with a JSON body.
    pub(crate) fn put(&self, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        self.send("PUT", path, body)
    }

    /// `PATCH path` with a JSON merge patch.
    pub(crate) fn merge_patch(&self, path: &str, patch: &Value) -> Result<Response, ureq::Error> {
        self.send_raw(
            "PATCH",
            path,
            "application/merge-patch+json",
            &patch.to_string(),
        )
    }

    /// `DELETE path`.
    pub(crate) fn delete(&self, path: &str) -> Result<Response, ureq::Error> {
        self.request("DELETE", path, "", None)
    }

    fn send(&self, method: &str, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        self.send_raw(method, path, "application/json", &body.to_string())
    }

    /// `method path` with `body` of `content_type`, asking for `accept` rather than JSON.
    pub(crate) fn send_accepting(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
        accept: &str,
    ) -> Result<Response, ureq::Error> {
        let mut request = (self.builder(method, path))
            .header("Content-Type", content_type)
            .body(body.to_owned())
            .expect("a valid request");
        let accept = accept.parse().expect("a valid Accept header");
        request.headers_mut().insert("Accept", accept);
        read(self.agent.run(request)?)
    }

    /// `method path` with a binary `body` of `content_type` (protobuf), asking for
    /// `accept`: the status and the body's bytes.
    pub(crate) fn send_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
        accept: &str,
    ) -> Result<(u16, Vec<u8>), ureq::Error> {
        let mut request = (self.builder(method, path))
            .header("Content-Type", content_type)
            .body(body.to_vec())
            .expect("a valid request");
        let accept = accept.parse().expect("a valid Accept header");
        request.headers_mut().insert("Accept", accept);
        let mut response = self.agent.run(request)?;
        let status = response.status().as_u16();
        Ok((status, response.body_mut().read_to_vec()?))
    }

    /// `method path` (`POST`, `PUT`, `PATCH`) with `body` as it is (a JSON `Value` cannot
    /// repeat a field) and its `Content-Type`.
    pub(crate) fn send_raw(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &str,
    ) -> Result<Response, ureq::Error> {
        self.request(method, path, content_type, Some(body))
    }
}

fn read(mut response: ureq::http::Response<ureq::Body>) -> Result<Response, ureq::Error> {
    let status = response.status().as_u16();
    let content_type = (response.headers().get("content-type"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let retry_after = (response.headers().get("retry-after"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let warnings = (response.headers().get_all("warning").iter())
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let audit_id = (response.headers().get("audit-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let header = |name: &str| {
        (response.headers().get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let priority_and_fairness =
        header("x-kubernetes-pf-flowschema-uid").zip(header("x-kubernetes-pf-prioritylevel-uid"));
    let body = response.body_mut().read_to_string()?;
    Ok(Response {
        status,
        content_type,
        retry_after,
        warnings,
        audit_id,
        priority_and_fairness,
        body,
    })
}

/// A watch in progress: its lines, read by a thread as the server sends them.
pub(crate) struct Watch {
    pub status: u16,
    pub content_type: String,
    lines: std::sync::mpsc::Receiver<Option<String>>,
    ended: bool,
}

impl Client {
    /// `GET path` as a stream (a watch), with `accept`; returns once the headers arrived.
    pub(crate) fn watch(&self, path: &str, accept: &str) -> Result<Watch, ureq::Error> {
        let mut request =
            (self.watch_agent.get(format!("{}{path}", self.base))).header("Accept", accept);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.call()?;
        let status = response.status().as_u16();
        let content_type = (response.headers().get("content-type"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = response.into_body().into_reader();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if tx.send(Some(line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(None);
        });
        Ok(Watch {
            status,
            content_type,
            lines: rx,
            ended: false,
        })
    }
}

impl Watch {
    /// The next line, or `None` when the stream ended; panics after `timeout`.
    #[track_caller]
    pub(crate) fn next_line(&mut self, timeout: Duration) -> Option<String> {
        if self.ended {
            return None;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Some(line)) => Some(line),
            Ok(None) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                self.ended = true;
                None
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("no watch line within {timeout:?}")
            }
        }
    }

    /// The next event as JSON; panics when the stream ended or after `timeout`.
    #[track_caller]
    pub(crate) fn next_event(&mut self, timeout: Duration) -> Value {
        let line = (self.next_line(timeout)).unwrap_or_else(|| panic!("the watch ended"));
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("watch line is not JSON ({e}): {line}"))
    }

    /// Whether a line arrives within `within` (without failing when none does).
    pub(crate) fn poll_line(&mut self, within: Duration) -> Option<Option<String>> {
        if self.ended {
            return Some(None);
        }
        match self.lines.recv_timeout(within) {
            Ok(Some(line)) => Some(Some(line)),
            Ok(None) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                self.ended = true;
                Some(None)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
        }
    }
}

/// A protobuf watch in progress: its frames (a 4-byte big-endian length, then that many
/// bytes), read by a thread as the server sends them.
pub(crate) struct Frames {
    pub status: u16,
    pub content_type: String,
    frames: std::sync::mpsc::Receiver<Vec<u8>>,
}

impl Client {
    /// `GET path` as a length-framed stream (a protobuf watch), with `accept`.
    pub(crate) fn watch_frames(&self, path: &str, accept: &str) -> Result<Frames, ureq::Error> {
        let mut request =
            (self.watch_agent.get(format!("{}{path}", self.base))).header("Accept", accept);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.call()?;
        let status = response.status().as_u16();
        let content_type = (response.headers().get("content-type"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut reader = response.into_body().into_reader();
        std::thread::spawn(move || {
            use std::io::Read;
            loop {
                let mut length = [0_u8; 4];
                if reader.read_exact(&mut length).is_err() {
                    return;
                }
                let mut frame = vec![0_u8; u32::from_be_bytes(length) as usize];
                if reader.read_exact(&mut frame).is_err() || tx.send(frame).is_err() {
                    return;
                }
            }
        });
        Ok(Frames {
            status,
            content_type,
            frames: rx,
        })
    }
}

impl Frames {
    /// The next frame; panics when the stream ended or after `timeout`.
    #[track_caller]
    pub(crate) fn next(&mut self, timeout: Duration) -> Vec<u8> {
        match self.frames.recv_timeout(timeout) {
            Ok(frame) => frame,
            Err(e) => panic!("no frame within {timeout:?}: {e}"),
        }
    }
}

/// The collection path of `resource` (`{group, version, resource}`) in `namespace`.
pub(crate) fn collection(resource: &Value, namespace: Option<&str>) -> String {
    let group = resource["group"].as_str().unwrap_or_default();
    let version = resource["version"].as_str().unwrap_or("v1");
    let plural = resource["resource"].as_str().unwrap();
    let root = match group {
        "" => format!("/api/{version}"),
        group => format!("/apis/{group}/{version}"),
    };
    match namespace {
        Some(namespace) => format!("{root}/namespaces/{namespace}/{plural}"),
        None => format!("{root}/{plural}"),
    }
}

/// Waits until `probe` answers as `ready` wants (what admission reads from a watch cache
/// takes a moment to reach it): that answer; on the deadline, the test fails showing the
/// last one.
#[track_caller]
pub(crate) fn wait_for_answer(
    what: &str,
    probe: impl Fn() -> Response,
    ready: impl Fn(&Response) -> bool,
) -> Response {
    let last = std::cell::RefCell::new(String::new());
    super::wait_for(
        Duration::from_secs(10),
        what,
        || last.borrow().clone(),
        || {
            let response = probe();
            *last.borrow_mut() = format!("{response:?}");
            ready(&response).then_some(response)
        },
    )
}
