//! The HTTP layer in process: the generated example API served by `endpoints::router` over
//! a fresh embedded store, driven with `tower::ServiceExt::oneshot`. Each test states
//! requests and what kube-apiserver would answer, through one `check` helper.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use kapi::registry::Registry;
use kapi::server::endpoints::{self, Config, ServerVersion};
use kapi::storage::Storage;
use kapi::storage::embedded::EmbeddedStorage;
use serde_json::{Value, json};
use tempfile::TempDir;
use tower::ServiceExt;

const KUBECTL_TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const KUBECTL_DISCOVERY: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const AGGREGATED_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const PROTOBUF_V2_ACCEPT: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PROTOBUF_V2_CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const WEBAPPS: &str = "/apis/apps.example.dev/v1/namespaces/default/webapps";
const WEBAPPS_V1BETA1: &str = "/apis/apps.example.dev/v1beta1/namespaces/default/webapps";

/// The example API over a store in a temporary directory.
struct Api {
    router: Router,
    _dir: TempDir,
}

async fn api() -> Api {
    api_with(Default::default()).await
}

/// The example API with `health`'s checks besides the endpoints' own.
async fn api_with(health: Arc<kapi::server::health::Health>) -> Api {
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    let registry = Registry::new(
        Arc::new(kapi_generated::scheme()),
        Arc::clone(&storage),
        "/registry",
    )
    .await
    .unwrap();
    let router = endpoints::router(Config {
        routes: kapi_generated::ROUTES,
        registry: Arc::new(registry),
        storage,
        documents: kapi_generated::documents::DOCUMENTS,
        renderer: None,
        version: ServerVersion::default(),
        filters: Default::default(),
        min_request_timeout: endpoints::DEFAULT_MIN_REQUEST_TIMEOUT,
        lifecycle: Default::default(),
        health,
        profiling: false,
        extra: Default::default(),
        aggregator: None,
        render_documents: false,
    });
    Api { router, _dir: dir }
}

/// A request: method, path, headers, body.
struct Req {
    method: Method,
    uri: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn req(method: Method, uri: impl Into<String>) -> Req {
    Req {
        method,
        uri: uri.into(),
        headers: Vec::new(),
        body: Vec::new(),
    }
}

fn get(uri: impl Into<String>) -> Req {
    req(Method::GET, uri)
}

impl Req {
    fn header(mut self, name: &'static str, value: impl Into<String>) -> Req {
        self.headers.push((name, value.into()));
        self
    }

    fn accept(self, accept: &str) -> Req {
        self.header("accept", accept)
    }

    fn json(self, body: Value) -> Req {
        self.body(body.to_string().into_bytes(), "application/json")
    }

    fn body(mut self, body: impl Into<Vec<u8>>, content_type: &str) -> Req {
        self.body = body.into();
        self.header("content-type", content_type)
    }
}

/// A response.
struct Res {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Res {
    fn header(&self, name: &str) -> &str {
        (self.headers.get(name))
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

impl Api {
    async fn send(&self, request: Req) -> Res {
        let mut builder = Request::builder().method(request.method).uri(&request.uri);
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        let request = builder.body(Body::from(request.body)).unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        Res {
            status: parts.status,
            headers: parts.headers,
            body: body.collect().await.unwrap().to_bytes(),
        }
    }

    /// Sends `request`; checks the status, the content type and that the JSON body contains
    /// `expected` (every field of `expected`, recursively; arrays element by element).
    #[track_caller]
    fn check(
        &self,
        request: Req,
        status: u16,
        content_type: &'static str,
        expected: Value,
    ) -> impl Future<Output = Res> + '_ {
        let caller = std::panic::Location::caller();
        let what = format!("{} {}", request.method, request.uri);
        async move {
            let response = self.send(request).await;
            let body = String::from_utf8_lossy(&response.body).into_owned();
            assert_eq!(
                response.status.as_u16(),
                status,
                "{what} (at {caller}): {body}"
            );
            assert_eq!(
                response.header("content-type"),
                content_type,
                "{what} (at {caller}): {body}"
            );
            if !expected.is_null() {
                let actual = response.json();
                if let Err(path) = contains(&actual, &expected, "") {
                    panic!(
                        "{what} (at {caller}): mismatch at {path}\nexpected {expected:#}\nin {actual:#}"
                    );
                }
            }
            response
        }
    }
}

/// `actual` has every field `expected` has, with the same values.
fn contains(actual: &Value, expected: &Value, path: &str) -> Result<(), String> {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => {
            for (key, value) in expected {
                let path = format!("{path}.{key}");
                contains(actual.get(key).unwrap_or(&Value::Null), value, &path)?;
            }
            Ok(())
        }
        (Value::Array(actual), Value::Array(expected)) if actual.len() == expected.len() => {
            for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
                contains(a, e, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ if actual == expected => Ok(()),
        _ => Err(path.to_owned()),
    }
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "code": code, "reason": reason, "message": message})
}

fn webapp(name: &str) -> Value {
    json!({
        "apiVersion": "apps.example.dev/v1",
        "kind": "WebApp",
        "metadata": {"name": name},
        "spec": {"replicas": 2, "container": {"image": "nginx:1.27"}},
    })
}

const JSON: &str = "application/json";

#[tokio::test]
async fn unknown_paths_and_methods_are_statuses() {
    let api = api().await;
    let not_found = status(
        404,
        "NotFound",
        "the server could not find the requested resource",
    );
    api.check(get("/nope"), 404, JSON, not_found.clone()).await;
    api.check(
        get("/apis/apps.example.dev/v2/webapps"),
        404,
        JSON,
        not_found.clone(),
    )
    .await;
    api.check(
        get("/openapi/v3/apis/nope/v1"),
        404,
        JSON,
        not_found.clone(),
    )
    .await;
    api.check(get("/readyz/nope"), 404, JSON, not_found).await;
    let not_allowed = status(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    );
    api.check(req(Method::PUT, WEBAPPS), 405, JSON, not_allowed.clone())
        .await;
    api.check(req(Method::POST, "/apis"), 405, JSON, not_allowed.clone())
        .await;
    api.check(req(Method::DELETE, "/version"), 405, JSON, not_allowed)
        .await;
}

#[tokio::test]
async fn watches_stream_json_lines_until_their_timeout() {
    let api = api().await;
    api.check(
        req(Method::POST, WEBAPPS).json(webapp("web")),
        201,
        JSON,
        json!({}),
    )
    .await;
    for uri in [
        format!("{WEBAPPS}?watch=true&timeoutSeconds=1"),
        format!("{WEBAPPS}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        "/apis/apps.example.dev/v1/watch/namespaces/default/webapps?timeoutSeconds=1".to_owned(),
    ] {
        let res = api.send(get(&uri)).await;
        assert_eq!(res.status, StatusCode::OK, "{uri}");
        assert_eq!(res.header("content-type"), JSON, "{uri}");
        for line in res.text().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            assert_eq!(event["type"], "ADDED", "{uri}: {line}");
            assert_eq!(event["object"]["metadata"]["name"], "web", "{uri}: {line}");
        }
        assert!(res.text().is_empty() || res.text().ends_with('\n'), "{uri}");
    }
}

#[tokio::test]
async fn request_errors_are_kube_statuses() {
    let api = api().await;
    // Nothing acceptable.
    api.check(
        get(WEBAPPS).accept("application/vnd.kubernetes.protobuf"),
        406,
        JSON,
        status(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml",
        ),
    )
    .await;
    // A Table is no answer to a write.
    api.check(
        req(Method::POST, WEBAPPS)
            .json(webapp("web"))
            .accept("application/json;as=Table;v=v1;g=meta.k8s.io"),
        406,
        JSON,
        json!({"reason": "NotAcceptable"}),
    )
    .await;
    // Bodies in formats not served.
    api.check(
        req(Method::POST, WEBAPPS).body(vec![0x6b, 0x38, 0x73, 0], "application/vnd.kubernetes.protobuf"),
        415,
        JSON,
        status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        ),
    )
    .await;
    api.check(
        req(Method::PATCH, format!("{WEBAPPS}/web")).json(json!({"spec": {}})),
        415,
        JSON,
        status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
        ),
    )
    .await;
    // Malformed bodies: the parser's position.
    let response = api
        .check(
            req(Method::POST, WEBAPPS).body("{\"metadata\": {\"name\": }}", JSON),
            400,
            JSON,
            json!({"reason": "BadRequest", "code": 400}),
        )
        .await;
    let message = response.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("line 1 column 23"), "{message}");
    let response = api
        .check(
            req(Method::POST, WEBAPPS).body("metadata:\n  name: web\n bad: [", "application/yaml"),
            400,
            JSON,
            json!({"reason": "BadRequest"}),
        )
        .await;
    let message = response.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("error converting YAML to JSON: "),
        "{message}"
    );
    assert!(message.contains("line 3"), "{message}");
    // Bodies over 3 MiB.
    api.check(
        req(Method::POST, WEBAPPS).body(vec![b' '; 3 * 1024 * 1024 + 1], JSON),
        413,
        JSON,
        status(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728",
        ),
    )
    .await;
    // Options: unparsable is 400, unsupported is 422 on the options kind.
    api.check(
        get(format!("{WEBAPPS}?limit=ten")),
        400,
        JSON,
        json!({"reason": "BadRequest"}),
    )
    .await;
    api.check(
        req(Method::POST, format!("{WEBAPPS}?dryRun=Yes")).json(webapp("web")),
        422,
        JSON,
        status(
            422,
            "Invalid",
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"Yes\": supported values: \"All\"",
        ),
    )
    .await;
    api.check(
        req(Method::PUT, format!("{WEBAPPS}/web?fieldValidation=Loose")).json(webapp("web")),
        422,
        JSON,
        json!({"reason": "Invalid", "details": {"group": "meta.k8s.io", "kind": "UpdateOptions",
            "causes": [{"reason": "FieldValueNotSupported", "field": "fieldValidation"}]}}),
    )
    .await;
    api.check(
        req(Method::PATCH, format!("{WEBAPPS}/web")).body("{}", "application/apply-patch+yaml"),
        422,
        JSON,
        json!({"reason": "Invalid", "message": "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"}),
    )
    .await;
    api.check(
        req(Method::DELETE, format!("{WEBAPPS}/web"))
            .json(json!({"propagationPolicy": "Sometimes"})),
        422,
        JSON,
        json!({"reason": "Invalid", "details": {"kind": "DeleteOptions"}}),
    )
    .await;
    // A body for another object than the path's.
    api.check(
        req(Method::PUT, format!("{WEBAPPS}/other")).json(webapp("web")),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "the name of the object (web) does not match the name on the URL (other)",
        ),
    )
    .await;
    api.check(
        req(Method::POST, WEBAPPS).json(json!({"apiVersion": "apps.example.dev/v1beta1", "kind": "WebApp", "metadata": {"name": "web"}})),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "the API version in the data (apps.example.dev/v1beta1) does not match the expected API version (apps.example.dev/v1)",
        ),
    )
    .await;
    // Registry errors go through the same mapping.
    api.check(
        get(format!("{WEBAPPS}/missing")),
        404,
        JSON,
        status(
            404,
            "NotFound",
            "webapps.apps.example.dev \"missing\" not found",
        ),
    )
    .await;
}

#[tokio::test]
async fn objects_negotiate_json_yaml_and_tables() {
    let api = api().await;
    let created = api
        .check(
            req(Method::POST, WEBAPPS).json(webapp("web")),
            201,
            JSON,
            json!({"apiVersion": "apps.example.dev/v1", "kind": "WebApp",
                "metadata": {"name": "web", "namespace": "default"}}),
        )
        .await;
    let resource_version = created.json()["metadata"]["resourceVersion"].clone();
    assert!(resource_version.is_string(), "{}", created.text());
    assert!(created.headers.get("warning").is_none());

    // JSON, compact unless asked; YAML.
    let response = api
        .check(
            get(format!("{WEBAPPS}/web")),
            200,
            JSON,
            json!({"metadata": {"name": "web"}}),
        )
        .await;
    assert_eq!(response.text().lines().count(), 1, "{}", response.text());
    let response = api
        .check(
            get(format!("{WEBAPPS}/web?pretty=true")),
            200,
            JSON,
            json!({"kind": "WebApp"}),
        )
        .await;
    assert!(
        response.text().contains("\n  \"kind\": \"WebApp\""),
        "{}",
        response.text()
    );
    let response = api
        .check(
            get(format!("{WEBAPPS}/web")).accept("application/yaml"),
            200,
            "application/yaml",
            Value::Null,
        )
        .await;
    assert!(
        response.text().contains("kind: WebApp\n"),
        "{}",
        response.text()
    );

    // Tables, for one object and for a list.
    api.check(
        get(format!("{WEBAPPS}/web")).accept(KUBECTL_TABLE),
        200,
        JSON,
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "rows": [{"object": {"kind": "PartialObjectMetadata", "metadata": {"name": "web"}}}]}),
    )
    .await;
    api.check(
        get(WEBAPPS).accept("application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
        200,
        JSON,
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1beta1", "rows": [{}]}),
    )
    .await;
    let table = api
        .check(
            get(format!("{WEBAPPS}?limit=500")).accept(KUBECTL_TABLE),
            200,
            JSON,
            json!({"kind": "Table"}),
        )
        .await
        .json();
    assert!(
        table["metadata"]["resourceVersion"].is_string(),
        "{table:#}"
    );
    let names: Vec<_> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Image"), "{names:?}");

    // Lists.
    api.check(
        get("/apis/apps.example.dev/v1/webapps"),
        200,
        JSON,
        json!({"apiVersion": "apps.example.dev/v1", "kind": "WebAppList",
            "items": [{"kind": "WebApp", "metadata": {"name": "web"}}]}),
    )
    .await;

    // A deprecated version warns, on every answer.
    let response = api
        .check(
            get(format!("{WEBAPPS_V1BETA1}/web")),
            200,
            JSON,
            json!({"apiVersion": "apps.example.dev/v1beta1", "spec": {"image": "nginx:1.27"}}),
        )
        .await;
    assert_eq!(
        response.header("warning"),
        "299 - \"apps.example.dev/v1beta1 WebApp is deprecated; use apps.example.dev/v1 WebApp\""
    );
    let response = api
        .check(
            get(format!("{WEBAPPS_V1BETA1}/nope")),
            404,
            JSON,
            Value::Null,
        )
        .await;
    assert!(response.header("warning").contains("is deprecated"));

    // Update (200), dry-run create (201, not stored), delete (200 with the object).
    let mut updated = webapp("web");
    updated["metadata"]["resourceVersion"] = resource_version;
    updated["spec"]["replicas"] = json!(3);
    api.check(
        req(Method::PUT, format!("{WEBAPPS}/web")).json(updated),
        200,
        JSON,
        json!({"spec": {"replicas": 3}}),
    )
    .await;
    api.check(
        req(Method::POST, format!("{WEBAPPS}?dryRun=All")).json(webapp("dry")),
        201,
        JSON,
        json!({"metadata": {"name": "dry"}}),
    )
    .await;
    api.check(
        get(format!("{WEBAPPS}/dry")),
        404,
        JSON,
        json!({"reason": "NotFound"}),
    )
    .await;
    api.check(
        req(Method::PATCH, format!("{WEBAPPS}/web")).body(
            r#"{"spec":{"paused":true}}"#,
            "application/merge-patch+json",
        ),
        200,
        JSON,
        json!({"spec": {"paused": true}}),
    )
    .await;
    api.check(
        req(Method::DELETE, format!("{WEBAPPS}/web"))
            .json(json!({"propagationPolicy": "Background"})),
        200,
        JSON,
        json!({"kind": "WebApp", "metadata": {"name": "web"}}),
    )
    .await;
    api.check(
        get(format!("{WEBAPPS}/web")),
        404,
        JSON,
        json!({"reason": "NotFound"}),
    )
    .await;

    // The registry's warnings (unknown fields, under the default `fieldValidation=Warn`).
    let mut unknown = webapp("unknown");
    unknown["spec"]["bogus"] = json!(1);
    let response = api
        .check(
            req(Method::POST, WEBAPPS).json(unknown),
            201,
            JSON,
            Value::Null,
        )
        .await;
    let warning = response.header("warning");
    assert!(
        warning.starts_with("299 - \"") && warning.contains("bogus"),
        "{warning:?}"
    );

    // YAML bodies.
    api.check(
        req(Method::POST, "/api/v1/namespaces/default/configmaps").body(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
            "application/yaml",
        ),
        201,
        JSON,
        json!({"kind": "ConfigMap", "data": {"color": "blue"}}),
    )
    .await;
}

#[tokio::test]
async fn discovery_follows_accept() {
    let api = api().await;
    // Legacy for plain JSON (kubectl 1.20, Python).
    api.check(
        get("/api").accept(JSON),
        200,
        JSON,
        json!({"kind": "APIVersions", "versions": ["v1"]}),
    )
    .await;
    api.check(
        get("/api/v1"),
        200,
        JSON,
        json!({"kind": "APIResourceList", "groupVersion": "v1"}),
    )
    .await;
    let groups = api
        .check(
            get("/apis").accept(JSON),
            200,
            JSON,
            json!({"kind": "APIGroupList"}),
        )
        .await
        .json();
    let names: Vec<_> = (groups["groups"].as_array().unwrap().iter())
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            "apiregistration.k8s.io",
            "apps",
            "apps.example.dev",
            "authentication.k8s.io",
            "authorization.k8s.io",
            "autoscaling",
            "batch",
            "certificates.k8s.io",
            "coordination.k8s.io",
            "discovery.k8s.io",
            "events.k8s.io",
            "flowcontrol.apiserver.k8s.io",
            "networking.k8s.io",
            "node.k8s.io",
            "platform.example.dev",
            "policy",
            "rbac.authorization.k8s.io",
            "scheduling.k8s.io",
            "storage.k8s.io",
        ]
    );
    api.check(
        get("/apis/apps.example.dev"),
        200,
        JSON,
        json!({"kind": "APIGroup", "name": "apps.example.dev", "preferredVersion": {"version": "v1"}}),
    )
    .await;
    api.check(
        get("/apis/apps.example.dev/v1beta1"),
        200,
        JSON,
        json!({"kind": "APIResourceList", "groupVersion": "apps.example.dev/v1beta1"}),
    )
    .await;

    // Aggregated for kubectl 1.32, named in the content type.
    let response = api
        .check(
            get("/apis").accept(KUBECTL_DISCOVERY),
            200,
            AGGREGATED_V2,
            json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2"}),
        )
        .await;
    assert_eq!(response.header("vary"), "Accept");
    let etag = response.header("etag").to_owned();
    assert!(!etag.is_empty());
    let unchanged = api
        .send(
            get("/apis")
                .accept(KUBECTL_DISCOVERY)
                .header("if-none-match", etag),
        )
        .await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    api.check(
        get("/api").accept(AGGREGATED_V2),
        200,
        AGGREGATED_V2,
        json!({"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v1"}]}]}),
    )
    .await;
    api.check(
        get("/apis").accept(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
        ),
        200,
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2beta1"}),
    )
    .await;
    api.check(
        get("/apis").accept("application/vnd.kubernetes.protobuf"),
        406,
        JSON,
        json!({"reason": "NotAcceptable"}),
    )
    .await;
}

#[tokio::test]
async fn openapi_v2_in_json_and_protobuf() {
    let api = api().await;
    // The file `generate` wrote, as served after its trip through `kapi::deflated!`.
    let generated = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../generated/openapi/v2.pb"
    ))
    .unwrap();
    let response = api
        .check(get("/openapi/v2"), 200, JSON, json!({"swagger": "2.0"}))
        .await;
    let etag = response.header("etag").to_owned();
    assert!(etag.starts_with('"'), "{etag}");
    for accept in [
        PROTOBUF_V2_ACCEPT,
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
    ] {
        let response = api
            .check(
                get("/openapi/v2").accept(accept),
                200,
                PROTOBUF_V2_CONTENT_TYPE,
                Value::Null,
            )
            .await;
        assert_eq!(&response.body[..], &generated[..]);
        assert_ne!(response.header("etag"), etag);
    }
    let unchanged = api
        .send(get("/openapi/v2").header("if-none-match", etag))
        .await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    api.check(
        get("/openapi/v2").accept("text/html"),
        406,
        JSON,
        json!({"code": 406}),
    )
    .await;
}

#[tokio::test]
async fn openapi_v3_index_documents_and_hashes() {
    let api = api().await;
    let index = api
        .check(get("/openapi/v3"), 200, JSON, Value::Null)
        .await
        .json();
    let url = index["paths"]["apis/apps.example.dev/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let hash = url.split_once("?hash=").unwrap().1.to_owned();

    let response = api
        .check(get(url.clone()), 200, JSON, json!({"openapi": "3.0.0"}))
        .await;
    assert_eq!(response.header("cache-control"), "public, immutable");
    assert_eq!(response.header("etag"), format!("\"{hash}\""));
    assert!(!response.header("expires").is_empty());

    let response = api
        .check(
            get("/openapi/v3/apis/apps.example.dev/v1"),
            200,
            JSON,
            Value::Null,
        )
        .await;
    assert_eq!(response.header("cache-control"), "");

    let response = api
        .check(
            get("/openapi/v3/apis/apps.example.dev/v1?hash=STALE"),
            301,
            "",
            Value::Null,
        )
        .await;
    assert_eq!(response.header("location"), url);
}

/// kube-apiserver's discovery routes answer with a trailing slash too: the Python
/// client's typed APIs call `/api/`, `/api/v1/`, `/apis/` (and `/apis/<group>/` for
/// built-in groups).
#[tokio::test]
async fn discovery_answers_with_a_trailing_slash() {
    let api = api().await;
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps.example.dev",
        "/apis/apps.example.dev/v1",
        "/apis/platform.example.dev/v1",
    ] {
        let plain = api
            .check(get(path).accept(JSON), 200, JSON, Value::Null)
            .await;
        let slash = (api.check(get(format!("{path}/")).accept(JSON), 200, JSON, Value::Null)).await;
        assert_eq!(slash.body, plain.body, "{path}/");
        // Aggregated discovery too.
        let aggregated = api
            .send(get(format!("{path}/")).accept(KUBECTL_DISCOVERY))
            .await;
        assert_eq!(aggregated.status.as_u16(), 200, "{path}/");
    }
    // The slash ends the path: what follows is still unknown.
    api.check(get("/apis/apps.example.dev/v2/"), 404, JSON, Value::Null)
        .await;
}

#[tokio::test]
async fn version_and_health() {
    let api = api().await;
    let version = api
        .check(get("/version"), 200, JSON, Value::Null)
        .await
        .json();
    let fields: Vec<_> = version.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        fields,
        [
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform"
        ]
    );
    assert_eq!(version["major"], "1");
    // kube's route is `/version/` (the Python client's `VersionApi.get_code` calls it).
    let slash = api.check(get("/version/"), 200, JSON, Value::Null).await;
    assert_eq!(slash.json(), version);
    assert_eq!(version["gitVersion"], "v1.32.0-kapi");

    // Ready once every watch cache has listed (`informer-sync`).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while api.send(get("/readyz")).await.status != StatusCode::OK {
        assert!(std::time::Instant::now() < deadline, "/readyz never passed");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let index = api.check(get("/"), 200, JSON, Value::Null).await.json();
    let paths: Vec<_> = (index["paths"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap())
        .collect();
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps.example.dev/v1beta1",
        "/openapi/v2",
        "/readyz/etcd",
        "/readyz/informer-sync",
        "/livez/log",
        "/version",
    ] {
        assert!(paths.contains(&path), "{path} in {paths:?}");
    }
    for path in paths {
        assert_eq!(api.send(get(path)).await.status, StatusCode::OK, "{path}");
    }

    let text = "text/plain; charset=utf-8";
    for path in [
        "/healthz",
        "/livez",
        "/readyz",
        "/readyz/ping",
        "/readyz/etcd",
        "/readyz/shutdown",
        "/livez/etcd",
    ] {
        let response = api.check(get(path), 200, text, Value::Null).await;
        assert_eq!(response.text(), "ok", "{path}");
    }
    // `informer-sync` and `shutdown` are `/readyz`'s only.
    api.check(get("/livez/shutdown"), 404, JSON, Value::Null)
        .await;
    let response = api
        .check(get("/readyz?verbose"), 200, text, Value::Null)
        .await;
    assert_eq!(
        response.text(),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n[+]shutdown ok\n\
         readyz check passed\n"
    );
    // Excluded checks pass; names matching none are warned about after the checks.
    let response = api
        .check(
            get("/healthz?verbose=1&exclude=etcd&exclude=nope&exclude=also"),
            200,
            text,
            Value::Null,
        )
        .await;
    assert_eq!(
        response.text(),
        "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n\
         warn: some health checks cannot be excluded: no matches for \"also\",\"nope\"\n\
         healthz check passed\n"
    );
}

/// A check that fails fails its endpoints as kube-apiserver's: 500, every check listed
/// (the reason withheld) whether or not `verbose` is asked, `<endpoint> check failed`;
/// its own path says why. A post-start hook fails until its part reports itself started.
#[tokio::test]
async fn a_failing_health_check_fails_the_endpoint() {
    let health = Arc::new(kapi::server::health::Health::new());
    let hook = health.post_start_hook("crd-informer-synced");
    let api = api_with(health).await;
    let text = "text/plain; charset=utf-8";
    for path in ["/livez", "/livez?verbose"] {
        let response = api.check(get(path), 500, text, Value::Null).await;
        assert_eq!(
            response.text(),
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n\
             [-]poststarthook/crd-informer-synced failed: reason withheld\n\
             livez check failed\n",
            "{path}"
        );
        assert_eq!(response.header("x-content-type-options"), "nosniff");
    }
    let response = api
        .check(
            get("/healthz/poststarthook/crd-informer-synced"),
            500,
            text,
            Value::Null,
        )
        .await;
    assert_eq!(response.text(), "internal server error: not finished\n");
    // Excluded, it no longer fails the endpoint.
    let response = api
        .check(
            get("/livez?exclude=poststarthook/crd-informer-synced"),
            200,
            text,
            Value::Null,
        )
        .await;
    assert_eq!(response.text(), "ok");
    hook.done();
    api.check(get("/livez"), 200, text, Value::Null).await;
    api.check(
        get("/healthz/poststarthook/crd-informer-synced"),
        200,
        text,
        Value::Null,
    )
    .await;
}

/// `kubectl create namespace team-a` (kubectl 1.32), byte for byte: the `k8s\0` envelope
/// (`v1`, `Namespace`) around a Namespace whose empty strings, zero generation and zero
/// `creationTimestamp` are all on the wire, as Go writes them.
const KUBECTL_NAMESPACE: &[u8] = b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x1e\x0a\x16\x0a\x06team-a\x12\x00\x1a\x00\x22\x00\x2a\x002\x008\x00B\x00\x12\x00\x1a\x02\x0a\x00\x1a\x00\x22\x00";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const KUBECTL_PROTOBUF_ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

/// A protobuf field: its key, and then its varint or its length-delimited bytes.
fn pb_varint(number: u32, value: u64) -> Vec<u8> {
    [varint(u64::from(number) << 3), varint(value)].concat()
}

fn pb_bytes(number: u32, value: &[u8]) -> Vec<u8> {
    [
        varint((u64::from(number) << 3) | 2),
        varint(value.len() as u64),
        value.to_vec(),
    ]
    .concat()
}

fn pb_string(number: u32, value: &str) -> Vec<u8> {
    pb_bytes(number, value.as_bytes())
}

fn pb_message(number: u32, fields: &[Vec<u8>]) -> Vec<u8> {
    pb_bytes(number, &fields.concat())
}

fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out
}

/// `k8s\0` + `runtime.Unknown {typeMeta {apiVersion, kind}, raw, "", ""}`, as kubectl frames
/// every protobuf body.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    [
        b"k8s\0".to_vec(),
        pb_message(1, &[pb_string(1, api_version), pb_string(2, kind)]),
        pb_bytes(2, raw),
        pb_string(3, ""),
        pb_string(4, ""),
    ]
    .concat()
}

/// ObjectMeta as Go writes it: every value field, even empty; labels as map entries.
fn object_meta(name: &str, namespace: &str, labels: &[(&str, &str)]) -> Vec<u8> {
    let mut fields = vec![
        pb_string(1, name),
        pb_string(2, ""),
        pb_string(3, namespace),
        pb_string(4, ""),
        pb_string(5, ""),
        pb_string(6, ""),
        pb_varint(7, 0),
        pb_message(8, &[]),
    ];
    for (key, value) in labels {
        fields.push(pb_message(11, &[pb_string(1, key), pb_string(2, value)]));
    }
    pb_message(1, &fields)
}

/// A ConfigMap as `kubectl create configmap` encodes it (`data`, `binaryData`), plus labels
/// and `immutable`.
fn config_map(
    name: &str,
    namespace: &str,
    data: &[(&str, &str)],
    binary: &[(&str, &[u8])],
    immutable: Option<bool>,
) -> Vec<u8> {
    let mut fields = vec![object_meta(name, namespace, &[("app", "web")])];
    for (key, value) in data {
        fields.push(pb_message(2, &[pb_string(1, key), pb_string(2, value)]));
    }
    for (key, value) in binary {
        fields.push(pb_message(3, &[pb_string(1, key), pb_bytes(2, value)]));
    }
    if let Some(immutable) = immutable {
        fields.push(pb_varint(4, u64::from(immutable)));
    }
    envelope("v1", "ConfigMap", &fields.concat())
}

#[tokio::test]
async fn protobuf_bodies_of_kinds_that_declare_their_shape() {
    let api = api().await;
    let namespaces = "/api/v1/namespaces";
    let configmaps = "/api/v1/namespaces/team-a/configmaps";
    // The answers compared here are JSON; kubectl's own Accept (protobuf first) gets
    // protobuf answers, checked below and in the server's `protobuf` tests.
    let post = |uri: &str, body: Vec<u8>| req(Method::POST, uri).body(body, PROTOBUF).accept(JSON);

    // kubectl's own bytes.
    api.check(
        post(namespaces, KUBECTL_NAMESPACE.to_vec()),
        201,
        JSON,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"},
            "status": {"phase": "Active"}}),
    )
    .await;
    // With kubectl's Accept, the answer is protobuf: a Namespace in its envelope.
    let answer = api
        .send(req(Method::GET, format!("{namespaces}/team-a")).accept(KUBECTL_PROTOBUF_ACCEPT))
        .await;
    assert_eq!(answer.header("content-type"), PROTOBUF);
    let answered = kapi::api::protobuf::decode_envelope(&answer.body).unwrap();
    assert_eq!(
        (answered.api_version.as_str(), answered.kind.as_str()),
        ("v1", "Namespace")
    );
    let namespace = api
        .check(
            get(format!("{namespaces}/team-a")),
            200,
            JSON,
            json!({"metadata": {"name": "team-a"}}),
        )
        .await
        .json();
    let metadata = namespace["metadata"].as_object().unwrap();
    for absent in ["generateName", "namespace", "selfLink"] {
        assert!(!metadata.contains_key(absent), "{absent}: {namespace}");
    }
    // Then it is a JSON body like any other: the registry's rules apply.
    api.check(
        post(namespaces, KUBECTL_NAMESPACE.to_vec()),
        409,
        JSON,
        status(409, "AlreadyExists", "namespaces \"team-a\" already exists"),
    )
    .await;

    // A ConfigMap: maps (values over 127 bytes), bytes, a bool, labels.
    let long = "x".repeat(200);
    let body = config_map(
        "c1",
        "team-a",
        &[("a", "b"), ("long", &long)],
        &[("bin", &[0, 1, 2, 0xff])],
        Some(false),
    );
    let created = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c1", "namespace": "team-a", "labels": {"app": "web"}},
        "data": {"a": "b", "long": long},
        "binaryData": {"bin": "AAEC/w=="},
        "immutable": false,
    });
    api.check(post(configmaps, body), 201, JSON, created.clone())
        .await;
    api.check(get(format!("{configmaps}/c1")), 200, JSON, created)
        .await;
    // An update (PUT) too, with the resourceVersion unset: last write wins.
    let body = config_map("c1", "team-a", &[("a", "c")], &[], None);
    let updated = api
        .check(
            req(Method::PUT, format!("{configmaps}/c1")).body(body, PROTOBUF),
            200,
            JSON,
            json!({"data": {"a": "c"}}),
        )
        .await
        .json();
    assert!(updated.get("binaryData").is_none(), "{updated}");
    // The path's namespace and the envelope's version are checked as for JSON.
    api.check(
        post(configmaps, config_map("c2", "other", &[], &[], None)),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    )
    .await;
    let raw = object_meta("c2", "", &[]);
    api.check(
        post(configmaps, envelope("v2", "ConfigMap", &raw)),
        400,
        JSON,
        json!({"reason": "BadRequest",
            "message": "the API version in the data (v2) does not match the expected API version (v1)"}),
    )
    .await;

    // Malformed protobuf: 400 with the reason, never a panic.
    let truncated = &KUBECTL_NAMESPACE[..KUBECTL_NAMESPACE.len() - 10];
    api.check(
        post(namespaces, truncated.to_vec()),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "error decoding the request body as protobuf: unexpected end of data: the message is truncated (at Unknown)",
        ),
    )
    .await;
    api.check(
        post(namespaces, br#"{"metadata": {"name": "x"}}"#.to_vec()),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "error decoding the request body as protobuf: not a Kubernetes protobuf body: it does not start with the 4-byte prefix \"k8s\\x00\"",
        ),
    )
    .await;
    let wrong_wire_type = envelope("v1", "ConfigMap", &pb_varint(1, 7));
    api.check(
        post(configmaps, wrong_wire_type),
        400,
        JSON,
        status(
            400,
            "BadRequest",
            "error decoding the request body as protobuf: wire type 0 (varint) where 2 (length-delimited) was expected (at ConfigMap.metadata)",
        ),
    )
    .await;
    api.check(
        post(namespaces, Vec::new()),
        400,
        JSON,
        status(400, "BadRequest", "the request body is empty"),
    )
    .await;

    // DELETE bodies: protobuf DeleteOptions, validated as JSON ones are.
    let delete_options = |policy: &str| {
        let raw = [pb_varint(1, 0), pb_string(4, policy)].concat();
        req(Method::DELETE, format!("{configmaps}/c1"))
            .body(envelope("v1", "DeleteOptions", &raw), PROTOBUF)
    };
    api.check(
        delete_options("Sometimes"),
        422,
        JSON,
        json!({"reason": "Invalid", "details": {"kind": "DeleteOptions"}}),
    )
    .await;
    api.check(
        delete_options("Background"),
        200,
        JSON,
        json!({"kind": "Status", "status": "Success", "details": {"name": "c1"}}),
    )
    .await;
    api.check(
        get(format!("{configmaps}/c1")),
        404,
        JSON,
        json!({"reason": "NotFound"}),
    )
    .await;

    // Kinds without a protobuf shape, and patches, still answer 415; kinds with one list it.
    api.check(
        post(WEBAPPS, envelope("apps.example.dev/v1", "WebApp", &[])),
        415,
        JSON,
        status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        ),
    )
    .await;
    api.check(
        req(Method::PATCH, format!("{namespaces}/team-a"))
            .body(KUBECTL_NAMESPACE.to_vec(), PROTOBUF),
        415,
        JSON,
        json!({"reason": "UnsupportedMediaType"}),
    )
    .await;
    api.check(
        req(Method::POST, namespaces).body("team-a", "text/plain"),
        415,
        JSON,
        status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        ),
    )
    .await;
}
