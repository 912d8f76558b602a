//! A small HTTP client for the checks kubectl does not cover. Every status is a response,
//! not an error; only transport failures (refused, reset, timed out) are errors.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

/// A client of one server address.
pub struct Client {
    base: String,
    agent: ureq::Agent,
}

/// A response: status, content type and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Response {
    /// The body as JSON, or a panic showing it.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("response body is not JSON ({e}): {self:?}"))
    }
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(30)))
            // Each request on its own connection: a killed server cannot leave a stale
            // pooled connection behind for the next request.
            .max_idle_connections(0)
            .build();
        Client {
            base: format!("http://{addr}"),
            agent: ureq::Agent::new_with_config(config),
        }
    }

    /// `GET path`, asking for JSON.
    pub fn get(&self, path: &str) -> Result<Response, ureq::Error> {
        let response = (self.agent.get(format!("{}{path}", self.base)))
            .header("Accept", "application/json")
            .call()?;
        read(response)
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        self.send("POST", path, body)
    }

    /// `PUT path` with a JSON body.
    pub fn put(&self, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        self.send("PUT", path, body)
    }

    /// `DELETE path`.
    pub fn delete(&self, path: &str) -> Result<Response, ureq::Error> {
        let response = (self.agent.delete(format!("{}{path}", self.base)))
            .header("Accept", "application/json")
            .call()?;
        read(response)
    }

    fn send(&self, method: &str, path: &str, body: &Value) -> Result<Response, ureq::Error> {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "POST" => self.agent.post(url),
            "PUT" => self.agent.put(url),
            _ => unreachable!("{method}"),
        };
        let response = request
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body.to_string())?;
        read(response)
    }
}

fn read(mut response: ureq::http::Response<ureq::Body>) -> Result<Response, ureq::Error> {
    let status = response.status().as_u16();
    let content_type = (response.headers().get("content-type"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.body_mut().read_to_string()?;
    Ok(Response {
        status,
        content_type,
        body,
    })
}
