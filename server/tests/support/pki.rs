//! A throw-away PKI and token file for a secure test server: a CA, a serving certificate
//! for `127.0.0.1`, client certificates on demand (CN the user, O the groups), and a
//! `--token-auth-file` with an administrator (`system:masters`) and two users.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use tempfile::TempDir;

/// The administrator's token: user `admin` in `system:masters`.
pub(crate) const ADMIN_TOKEN: &str = "admin-token-for-tests";
/// `alice`, in no group.
pub(crate) const ALICE_TOKEN: &str = "alice-token-for-tests";
/// `bob`, in `devs`.
pub(crate) const BOB_TOKEN: &str = "bob-token-for-tests";
/// `prometheus`, in `system:monitoring` (a scraper).
pub(crate) const MONITORING_TOKEN: &str = "prometheus-token-for-tests";

/// The files of a secure server and its clients.
pub(crate) struct Pki {
    dir: TempDir,
    issuer: Issuer<'static, KeyPair>,
    /// The CA certificate (PEM): `--client-ca-file`, and what clients trust.
    pub ca: PathBuf,
    /// The serving certificate and key.
    pub serving: (PathBuf, PathBuf),
    /// The token file.
    pub tokens: PathBuf,
}

impl Pki {
    /// A new CA, serving certificate and token file in a temporary directory.
    pub(crate) fn new() -> Pki {
        let dir = tempfile::Builder::new()
            .prefix("kapi-pki-")
            .tempdir()
            .expect("creating the PKI directory");
        let ca_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        (params.distinguished_name).push(DnType::CommonName, "kapi test CA");
        let ca = params.self_signed(&ca_key).unwrap();
        let ca_path = write(dir.path(), "ca.crt", &ca.pem());
        let issuer = Issuer::new(params, ca_key);
        let tokens = write(
            dir.path(),
            "tokens.csv",
            &format!(
                "{ADMIN_TOKEN},admin,admin-uid,system:masters\n\
                 {ALICE_TOKEN},alice,alice-uid\n\
                 {BOB_TOKEN},bob,bob-uid,\"devs,qa\"\n\
                 {MONITORING_TOKEN},prometheus,prometheus-uid,system:monitoring\n"
            ),
        );
        let mut pki = Pki {
            serving: (PathBuf::new(), PathBuf::new()),
            dir,
            issuer,
            ca: ca_path,
            tokens,
        };
        pki.serving = pki.leaf("serving", None, ExtendedKeyUsagePurpose::ServerAuth);
        pki
    }

    /// A client certificate and key for user `name` in `group` (rcgen keeps one value per
    /// subject attribute, so one group at most), signed by the CA.
    pub(crate) fn client(&self, name: &str, group: Option<&str>) -> (PathBuf, PathBuf) {
        self.leaf(name, group, ExtendedKeyUsagePurpose::ClientAuth)
    }

    /// A client certificate from another CA, which the server must not trust.
    pub(crate) fn foreign_client(&self, name: &str) -> (PathBuf, PathBuf) {
        let other = Pki::new();
        let (cert, key) = other.client(name, None);
        let copy = |from: &Path, to: &str| {
            let to = self.dir.path().join(to);
            std::fs::copy(from, &to).unwrap();
            to
        };
        (
            copy(&cert, &format!("foreign-{name}.crt")),
            copy(&key, &format!("foreign-{name}.key")),
        )
    }

    fn leaf(
        &self,
        name: &str,
        group: Option<&str>,
        usage: ExtendedKeyUsagePurpose,
    ) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        (params.distinguished_name).push(DnType::CommonName, name);
        if let Some(group) = group {
            (params.distinguished_name).push(DnType::OrganizationName, group);
        }
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (
            write(self.dir.path(), &format!("{name}.crt"), &cert.pem()),
            write(
                self.dir.path(),
                &format!("{name}.key"),
                &key.serialize_pem(),
            ),
        )
    }

    /// The flags of a server with TLS, certificate and token authentication and RBAC.
    pub(crate) fn server_flags(&self) -> Vec<String> {
        let path = |p: &PathBuf| p.display().to_string();
        vec![
            "--tls-cert-file".into(),
            path(&self.serving.0),
            "--tls-private-key-file".into(),
            path(&self.serving.1),
            "--client-ca-file".into(),
            path(&self.ca),
            "--token-auth-file".into(),
            path(&self.tokens),
            "--authorization-mode".into(),
            "RBAC".into(),
        ]
    }

    /// Audit flags: a policy auditing every request at `Metadata` level, written beside the
    /// certificates, and a log there too ([`Pki::audit_log`]).
    pub(crate) fn audit_flags(&self) -> Vec<String> {
        let policy = write(
            self.dir.path(),
            "audit-policy.yaml",
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        );
        vec![
            "--audit-policy-file".into(),
            policy.display().to_string(),
            "--audit-log-path".into(),
            self.audit_log().display().to_string(),
        ]
    }

    /// Where [`Pki::audit_flags`] sends the audit log.
    pub(crate) fn audit_log(&self) -> PathBuf {
        self.dir.path().join("audit.log")
    }

    /// The CA certificate's PEM.
    pub(crate) fn ca_pem(&self) -> Vec<u8> {
        std::fs::read(&self.ca).expect("reading the CA certificate")
    }
}

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("writing a PKI file");
    path
}
