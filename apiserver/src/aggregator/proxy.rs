//! The aggregator's filter: requests for a remote APIService's group-version go to its
//! server; the merged documents are answered here; everything else goes on to the local
//! router.
//!
//! A proxied request keeps its path and query, loses the credentials this server consumed
//! (`Authorization`, `Impersonate-*`, incoming `X-Remote-*`) and its hop-by-hop headers,
//! and carries the authenticated user in kube's front-proxy headers. Bodies stream both
//! ways, so watches work; an upgrade (`Connection: Upgrade`) is answered with the
//! server's 101 and the two connections are joined. Failures answer as kube-aggregator's
//! do: plain-text 503s (`service unavailable`, `error trying to reach service: ...`), and a
//! failed connection asks the availability controller to check again at once.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;

use super::{Aggregator, Entry, discovery, openapi};
use crate::authn::UserInfo;
use crate::http::Next;

/// kube's `aggregatedDiscoveryTimeout`: a group-version's discovery answers within this.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Headers that belong to one connection, never forwarded (RFC 9110 and Go's
/// `httputil.ReverseProxy`).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The filter (after authorization, before the router).
pub(crate) async fn layer(
    aggregator: Option<&Aggregator>,
    request: Request,
    next: impl Next,
) -> Response {
    let Some(aggregator) = aggregator.filter(|a| a.any_remote()) else {
        return next.run(request).await;
    };
    // Boxed: what proxies and merges would otherwise make every request's future larger,
    // whether the API has APIServices or not.
    Box::pin(aggregated(aggregator, request, next)).await
}

/// `request` with APIServices registered: proxied, merged, or passed on.
async fn aggregated(aggregator: &Aggregator, request: Request, next: impl Next) -> Response {
    let registered = aggregator.registered();
    let path = request.uri().path().to_owned();
    if request.method() == Method::GET {
        if path == "/apis" || path == "/apis/" {
            return discovery::apis(&registered, request, next).await;
        }
        if let Some(group) = group_path(&path)
            && registered.is_remote_group(group)
        {
            return discovery::group(&registered, group, request.headers());
        }
        if path == "/openapi/v2" {
            return openapi::v2(aggregator, &registered, request, next).await;
        }
        if path == "/openapi/v3" {
            return openapi::v3_index(&registered, request, next).await;
        }
        if let Some(rest) = path.strip_prefix("/openapi/v3/apis/")
            && let Some((group, version)) = rest.split_once('/')
            && let Some(entry) = registered.remote(group, version)
        {
            return openapi::v3_document(entry, &request);
        }
    }
    if let Some((group, version)) = group_version(&path)
        && let Some(entry) = registered.remote(group, version)
    {
        let entry = Arc::clone(entry);
        return forward(aggregator, &entry, request).await;
    }
    next.run(request).await
}

/// `g` of `/apis/g` or `/apis/g/`.
fn group_path(path: &str) -> Option<&str> {
    let group = path.strip_prefix("/apis/")?;
    let group = group.strip_suffix('/').unwrap_or(group);
    (!group.is_empty() && !group.contains('/')).then_some(group)
}

/// `(g, v)` of `/apis/g/v` and of every path below it.
fn group_version(path: &str) -> Option<(&str, &str)> {
    let mut parts = path.strip_prefix("/apis/")?.splitn(3, '/');
    let group = parts.next().filter(|g| !g.is_empty())?;
    let version = parts.next().filter(|v| !v.is_empty())?;
    Some((group, version))
}

/// A plain-text answer, as Go's `http.Error` writes it.
pub(super) fn text(status: StatusCode, message: &str) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// An error and its causes, as one line (`client error (Connect): tcp connect error:
/// Connection refused (os error 111)`).
pub(super) fn error_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Sends `request` to `entry`'s server and streams its answer back.
async fn forward(aggregator: &Aggregator, entry: &Entry, mut request: Request) -> Response {
    if !entry.available() {
        // Its server may be back: the controller checks again soon (not on every request).
        aggregator.recheck(entry.name());
        return text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
    }
    let remote = match entry.remote() {
        Some(Ok(remote)) => Arc::clone(remote),
        Some(Err(error)) => return text(StatusCode::INTERNAL_SERVER_ERROR, error),
        None => return text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable"),
    };
    let Some(user) = request.extensions().get::<UserInfo>().cloned() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "missing user");
    };
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("{}{target}", remote.base).parse::<Uri>() else {
        return text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
    };
    let upgrade = is_upgrade(request.headers());
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut request));
    let discovery = group_version(request.uri().path())
        .is_some_and(|_| request.uri().path().trim_matches('/').split('/').count() == 3);
    let (mut parts, body) = request.into_parts();
    let upgrade_headers = upgrade.then(|| {
        (
            parts.headers.get(header::CONNECTION).cloned(),
            parts.headers.get(header::UPGRADE).cloned(),
        )
    });
    strip_hop_by_hop(&mut parts.headers);
    if let Some((connection, protocol)) = upgrade_headers {
        parts.headers.extend(
            [
                (header::CONNECTION, connection),
                (header::UPGRADE, protocol),
            ]
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?))),
        );
    }
    if let Err(error) = set_user_headers(&mut parts.headers, &user) {
        return text(StatusCode::INTERNAL_SERVER_ERROR, &error);
    }
    parts.headers.remove(header::HOST);
    parts.uri = uri;
    // Clients may speak HTTP/2 to this server; the servers behind it are spoken to in
    // HTTP/1.1, which also carries upgrades.
    parts.version = axum::http::Version::HTTP_11;
    let mut outgoing = Request::from_parts(parts, body);
    *outgoing.extensions_mut() = Default::default();
    let sent = remote.client.request(outgoing);
    let answered = if discovery {
        match tokio::time::timeout(DISCOVERY_TIMEOUT, sent).await {
            Ok(answered) => answered.map_err(|e| error_text(&e)),
            Err(_) => Err("context deadline exceeded".to_owned()),
        }
    } else {
        sent.await.map_err(|e| error_text(&e))
    };
    let mut response = match answered {
        Ok(response) => response,
        Err(error) => {
            tracing::warn!(apiservice = entry.name(), %error, "cannot reach the APIService's server");
            aggregator.recheck(entry.name());
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("error trying to reach service: {error}"),
            );
        }
    };
    // An upgrade the server neither took nor refused is kube's 503.
    let status = response.status();
    if upgrade && status != StatusCode::SWITCHING_PROTOCOLS && status.as_u16() < 400 {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("invalid upgrade response: status code {}", status.as_u16()),
        );
    }
    if let Some(client_upgrade) = client_upgrade
        && status == StatusCode::SWITCHING_PROTOCOLS
    {
        let server_upgrade = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            let (Ok(client), Ok(server)) = tokio::join!(client_upgrade, server_upgrade) else {
                return;
            };
            let (mut client, mut server) = (TokioIo::new(client), TokioIo::new(server));
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        });
        let (parts, _) = response.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, Body::new(body))
}

/// `Connection` names `upgrade` (apimachinery's `IsUpgradeRequest`).
fn is_upgrade(headers: &HeaderMap) -> bool {
    (headers.get_all(header::CONNECTION).iter())
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("upgrade"))
}

/// Removes the hop-by-hop headers, and those `Connection` names.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = (headers.get_all(header::CONNECTION).iter())
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .collect();
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

/// client-go's `SetAuthProxyHeaders`: the user as kube's front-proxy headers, after
/// removing what the client sent under those names and the credentials this server used.
/// Names are sent as their UTF-8 bytes, as Go sends them; one that cannot be a header
/// value (a control character) fails the request rather than going without it, which the
/// server behind would read as another user.
fn set_user_headers(headers: &mut HeaderMap, user: &UserInfo) -> Result<(), String> {
    let consumed: Vec<HeaderName> = (headers.keys())
        .filter(|name| {
            let name = name.as_str();
            name == "authorization"
                || name.starts_with("impersonate-")
                || name == "x-remote-user"
                || name == "x-remote-group"
                || name.starts_with("x-remote-extra-")
        })
        .cloned()
        .collect();
    for name in consumed {
        headers.remove(name);
    }
    let value = |text: &str| {
        HeaderValue::from_bytes(text.as_bytes())
            .map_err(|_| format!("the user {:?} cannot be sent in a header", user.name))
    };
    headers.insert("x-remote-user", value(&user.name)?);
    for group in &user.groups {
        headers.append("x-remote-group", value(group)?);
    }
    for (key, values) in &user.extra {
        let name = HeaderName::from_bytes(format!("x-remote-extra-{}", escape(key)).as_bytes())
            .map_err(|_| format!("the extra {key:?} cannot be sent in a header"))?;
        for extra in values {
            headers.append(name.clone(), value(extra)?);
        }
    }
    Ok(())
}

/// client-go's `headerKeyEscape`: bytes that are not RFC 7230 token characters, and `%`,
/// percent-encoded.
fn escape(key: &str) -> String {
    const TOKEN: &[u8] = b"!#$&'*+-.^_`|~";
    key.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || TOKEN.contains(&byte) {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_headers() {
        assert_eq!(group_path("/apis/example.com/"), Some("example.com"));
        assert_eq!(group_path("/apis/example.com/v1"), None);
        assert_eq!(
            group_version("/apis/example.com/v1/namespaces/a/things"),
            Some(("example.com", "v1"))
        );
        assert_eq!(group_version("/apis/example.com"), None);
        assert_eq!(
            escape("example.com/team scope%"),
            "example.com%2Fteam%20scope%25"
        );

        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("Bearer secret"));
        headers.insert("x-remote-user", HeaderValue::from_static("mallory"));
        headers.insert("x-remote-extra-evil", HeaderValue::from_static("yes"));
        headers.insert("impersonate-user", HeaderValue::from_static("root"));
        headers.insert("accept", HeaderValue::from_static("application/json"));
        let user = UserInfo {
            name: "alice".into(),
            uid: String::new(),
            groups: vec!["devs".into(), "system:authenticated".into()],
            extra: [("scopes".to_owned(), vec!["a".to_owned(), "b".to_owned()])].into(),
        };
        set_user_headers(&mut headers, &user).unwrap();
        let all = |name: &str| -> Vec<&str> {
            (headers.get_all(name).iter())
                .map(|v| v.to_str().unwrap())
                .collect()
        };
        assert_eq!(all("x-remote-user"), ["alice"]);
        assert_eq!(all("x-remote-group"), ["devs", "system:authenticated"]);
        assert_eq!(all("x-remote-extra-scopes"), ["a", "b"]);
        assert!(all("authorization").is_empty());
        assert!(all("impersonate-user").is_empty());
        assert!(all("x-remote-extra-evil").is_empty());
        assert_eq!(all("accept"), ["application/json"]);

        // Names beyond ASCII go as their UTF-8 bytes; a control character fails.
        let user = UserInfo {
            name: "zoë".into(),
            ..UserInfo::anonymous()
        };
        set_user_headers(&mut headers, &user).unwrap();
        let sent = headers.get("x-remote-user").unwrap().as_bytes();
        assert_eq!(sent, "zoë".as_bytes());
        let user = UserInfo {
            name: "eve\r\nX-Remote-Group: system:masters".into(),
            ..UserInfo::anonymous()
        };
        assert!(set_user_headers(&mut headers, &user).is_err());
    }
}
