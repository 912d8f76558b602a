//! OpenID Connect tokens end to end: the test is the issuer (its discovery document and
//! JWK set served over HTTPS on loopback, ID tokens signed with its own P-256 key), a
//! secure `kapi-server` trusts it (`--oidc-*`), and kubectl presents the tokens: a valid
//! one authenticates with its claims mapped (user from `email`, groups prefixed), RBAC
//! applies to the mapped groups, and expired, wrongly signed or foreign-audience tokens
//! are 401.

use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcgen::KeyPair;
use serde_json::{Value, json};
use support::pki::Pki;
use support::{Backend, Kubectl, Server, Version, manifest, wait_for};

/// The issuer: its URL, and the task serving it.
struct Issuer {
    url: String,
    _runtime: tokio::runtime::Runtime,
}

/// A JWK of `key`'s public half, as `kid`.
fn jwk(key: &KeyPair, kid: &str) -> Value {
    let raw = key.public_key_raw();
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    // Uncompressed point: 0x04 || x || y.
    json!({"kty": "EC", "crv": "P-256", "x": b64(&raw[1..33]), "y": b64(&raw[33..65]),
           "kid": kid, "alg": "ES256", "use": "sig"})
}

fn start_issuer(pki: &Pki, key: &KeyPair) -> Issuer {
    use axum::routing::get;

    // JSON answers (axum's `json` feature is not built).
    let answer = |value: Value| ([("content-type", "application/json")], value.to_string());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let url = format!("https://{addr}");
    let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/keys")});
    let keys = json!({"keys": [jwk(key, "k1")]});
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(move || async move { answer(discovery) }),
        )
        .route("/keys", get(move || async move { answer(keys) }));
    let (cert, private_key) = pki.serving.clone();
    runtime.spawn(async move {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, private_key)
            .await
            .unwrap();
        axum_server::tls_rustls::from_tcp_rustls(listener, tls)
            .unwrap()
            .serve(app.into_make_service())
            .await
            .unwrap();
    });
    Issuer {
        url,
        _runtime: runtime,
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An ID token of `issuer` signed by `key`.
fn token(issuer: &str, key: &KeyPair, audience: &str, expires_in: i64) -> String {
    let claims = json!({
        "iss": issuer,
        "sub": "user-7",
        "aud": audience,
        "email": "dora@example.dev",
        "email_verified": true,
        "groups": ["devs", "ops"],
        "iat": now(),
        "exp": now() as i64 + expires_in,
    });
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".into());
    let key = EncodingKey::from_ec_der(&key.serialize_der());
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

#[test]
fn oidc_tokens_authenticate_with_their_claims() {
    let pki = Pki::new();
    let key = KeyPair::generate().unwrap();
    let issuer = start_issuer(&pki, &key);
    let ca = pki.ca.display().to_string();
    let server = Server::start_secure(
        pki,
        Backend::Embedded,
        &[
            "--oidc-issuer-url",
            &issuer.url,
            "--oidc-client-id",
            "kapi",
            "--oidc-ca-file",
            &ca,
            "--oidc-signing-algs",
            "ES256",
            "--oidc-username-claim",
            "email",
            "--oidc-groups-claim",
            "groups",
            "--oidc-groups-prefix",
            "oidc:",
        ],
    );
    let admin = Kubectl::new(Version::V1_32, &server);
    let dora = Kubectl::with_token(
        Version::V1_32,
        &server,
        &token(&issuer.url, &key, "kapi", 600),
    );

    // The server fetches the keys in the background; the token works once it has them.
    let log = server.log();
    let whoami = wait_for(
        Duration::from_secs(10),
        "the OIDC token to authenticate",
        || log.tail(20),
        || {
            let run = dora.run(&["auth", "whoami", "-o", "json"]);
            run.succeeded().then(|| run.json())
        },
    );
    assert_eq!(whoami["status"]["userInfo"]["username"], "dora@example.dev");
    assert_eq!(
        whoami["status"]["userInfo"]["groups"],
        json!(["oidc:devs", "oidc:ops", "system:authenticated"])
    );

    // RBAC on the mapped group.
    admin.ok(&["create", "-f", &manifest("namespaces.yaml")]);
    dora.fails(&["get", "webapps", "-n", "team-a"])
        .stderr_has("User \"dora@example.dev\" cannot list resource \"webapps\"");
    admin.ok(&[
        "create",
        "clusterrolebinding",
        "oidc-devs",
        "--clusterrole=view",
        "--group=oidc:devs",
    ]);
    wait_for(
        Duration::from_secs(10),
        "the binding to reach the RBAC index",
        || log.tail(20),
        || {
            dora.run(&["get", "webapps", "-n", "team-a"])
                .succeeded()
                .then_some(())
        },
    );

    // Expired, signed by another key (same key id), or for another audience: 401.
    let other = KeyPair::generate().unwrap();
    for (what, bad) in [
        ("expired", token(&issuer.url, &key, "kapi", -60)),
        ("wrongly signed", token(&issuer.url, &other, "kapi", 600)),
        (
            "for another audience",
            token(&issuer.url, &key, "someone-else", 600),
        ),
    ] {
        let client = Kubectl::with_token(Version::V1_32, &server, &bad);
        let run = client.run(&["get", "webapps", "-n", "team-a"]);
        run.check(!run.succeeded(), &format!("an {what} token is refused"))
            .stderr_has("You must be logged in to the server");
    }
}
