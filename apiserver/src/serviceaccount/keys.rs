//! The keys of service-account tokens, as kube-apiserver reads them: the signing key of
//! `--service-account-signing-key-file` (an RSA or ECDSA private key, PKCS#1, SEC1 or
//! PKCS#8 PEM) and the verifying keys of `--service-account-key-file` (public keys,
//! `RSA PUBLIC KEY`, certificates, or private keys whose public half is taken). Each public
//! key is known by kube's key id, the unpadded base64url SHA-256 of its PKIX
//! (`SubjectPublicKeyInfo`) DER, which tokens name in their `kid` header and the issuer's
//! JWKS document lists.
//!
//! Signing uses ring directly (the JWT crate signs RSA only from PKCS#1, which a PKCS#8
//! key cannot give back); verification is the JWT crate's. The few DER structures written
//! here (a key's PKIX wrapper, a SEC1 key's PKCS#8 wrapper) are fixed shapes, written by
//! [`der`] rather than with an ASN.1 crate.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use serde_json::{Value, json};

/// Why a key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Not PEM.
    #[error("{0}: not PEM: {1}")]
    Pem(String, String),
    /// PEM, without a key of a kind kube signs or verifies with.
    #[error("{0}: no RSA or ECDSA key (P-256, P-384) in it")]
    NoKey(String),
    /// A block that names a key but does not hold a usable one.
    #[error("{0}: {1}")]
    Invalid(String, String),
}

/// An ECDSA curve ring signs and verifies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Curve {
    P256,
    P384,
}

impl Curve {
    /// The curve of an uncompressed point, by its length.
    fn of_point(point: &[u8]) -> Option<Curve> {
        match point.len() {
            65 => Some(Curve::P256),
            97 => Some(Curve::P384),
            _ => None,
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Curve::P256 => Algorithm::ES256,
            Curve::P384 => Algorithm::ES384,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
        }
    }

    /// The DER of the curve's object identifier.
    fn oid(self) -> &'static [u8] {
        match self {
            Curve::P256 => der::OID_P256,
            Curve::P384 => der::OID_P384,
        }
    }

    fn signing(self) -> &'static signature::EcdsaSigningAlgorithm {
        match self {
            Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
        }
    }
}

/// A key tokens are verified with.
#[derive(Clone)]
pub struct PublicKey {
    /// kube's key id.
    pub kid: String,
    /// The one algorithm tokens signed by its private half use.
    pub algorithm: Algorithm,
    decoding: DecodingKey,
    jwk: Value,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish()
    }
}

impl PublicKey {
    /// The key of a PKIX `SubjectPublicKeyInfo` (DER).
    fn from_spki(spki: &[u8], source: &str) -> Result<PublicKey, KeyError> {
        use x509_parser::prelude::FromDer as _;
        use x509_parser::public_key::PublicKey as Parsed;
        let invalid = |why: String| KeyError::Invalid(source.to_owned(), why);
        let (_, info) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki)
            .map_err(|e| invalid(format!("not a public key: {e}")))?;
        let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, spki));
        match info.parsed().map_err(|e| invalid(e.to_string()))? {
            Parsed::RSA(rsa) => {
                let n = strip_zeros(rsa.modulus);
                let e = strip_zeros(rsa.exponent);
                Ok(PublicKey {
                    jwk: json!({
                        "use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                        "n": URL_SAFE_NO_PAD.encode(n), "e": URL_SAFE_NO_PAD.encode(e),
                    }),
                    kid,
                    algorithm: Algorithm::RS256,
                    decoding: DecodingKey::from_rsa_raw_components(n, e),
                })
            }
            Parsed::EC(point) => {
                let point = point.data();
                let curve = Curve::of_point(point).ok_or_else(|| {
                    invalid("an ECDSA key on a curve other than P-256 or P-384".into())
                })?;
                let size = (point.len() - 1) / 2;
                let (x, y) = point[1..].split_at(size);
                Ok(PublicKey {
                    jwk: json!({
                        "use": "sig", "kty": "EC", "kid": kid, "crv": curve.name(),
                        "alg": format!("{:?}", curve.algorithm()),
                        "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
                    }),
                    kid,
                    algorithm: curve.algorithm(),
                    decoding: DecodingKey::from_ec_der(point),
                })
            }
            _ => Err(KeyError::NoKey(source.to_owned())),
        }
    }

    /// The key for the JWT crate's verification.
    pub fn decoding(&self) -> &DecodingKey {
        &self.decoding
    }

    /// The key as a JSON Web Key (the issuer's JWKS document).
    pub fn jwk(&self) -> &Value {
        &self.jwk
    }
}

/// A private key of RSA or ECDSA, as ring signs with it.
enum Signer {
    Rsa(RsaKeyPair),
    Ecdsa(EcdsaKeyPair),
}

/// The key tokens are signed with, with its public half.
pub struct SigningKey {
    signer: Signer,
    rng: SystemRandom,
    /// Its public half, which verifies what it signs.
    pub public: PublicKey,
}

impl SigningKey {
    /// The first private key of the PEM `text` (`source` names it in errors).
    pub fn from_pem(text: &[u8], source: &str) -> Result<SigningKey, KeyError> {
        let blocks =
            pem::parse_many(text).map_err(|e| KeyError::Pem(source.into(), e.to_string()))?;
        for block in &blocks {
            if let Some(key) = private_key(block, source)? {
                return Ok(key);
            }
        }
        Err(KeyError::NoKey(source.to_owned()))
    }

    /// A new ECDSA P-256 key, for a server given none (kube's development setups make one
    /// with a file; kapi makes it in memory, so tokens die with the process).
    pub fn ephemeral() -> SigningKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(Curve::P256.signing(), &rng)
            .expect("the system's random source works");
        ecdsa(pkcs8.as_ref(), "a new key")
            .expect("ring reads the key it made")
            .expect("a P-256 key")
    }

    /// A compact JWS of `claims` (`header.payload.signature`), with kube's header: the
    /// algorithm and the key id.
    pub fn sign(&self, claims: &Value) -> String {
        let header = json!({"alg": format!("{:?}", self.public.algorithm), "kid": self.public.kid});
        let mut token = URL_SAFE_NO_PAD.encode(header.to_string());
        token.push('.');
        token.push_str(&URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = match &self.signer {
            Signer::Rsa(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &self.rng,
                    token.as_bytes(),
                    &mut signature,
                )
                .expect("an RSA signature of a valid key");
                signature
            }
            Signer::Ecdsa(key) => key
                .sign(&self.rng, token.as_bytes())
                .expect("an ECDSA signature of a valid key")
                .as_ref()
                .to_vec(),
        };
        token.push('.');
        token.push_str(&URL_SAFE_NO_PAD.encode(signature));
        token
    }
}

/// The verifying keys of the PEM `text`: every public key, certificate and private key in
/// it (kube's `keyutil.ParsePublicKeysPEM`); none is an error.
pub fn public_keys_from_pem(text: &[u8], source: &str) -> Result<Vec<PublicKey>, KeyError> {
    let blocks = pem::parse_many(text).map_err(|e| KeyError::Pem(source.into(), e.to_string()))?;
    let mut keys = Vec::new();
    for block in &blocks {
        let key = match block.tag() {
            "PUBLIC KEY" => Some(PublicKey::from_spki(block.contents(), source)?),
            "RSA PUBLIC KEY" => Some(PublicKey::from_spki(
                &der::rsa_spki(block.contents()),
                source,
            )?),
            "CERTIFICATE" => {
                let (_, certificate) = x509_parser::parse_x509_certificate(block.contents())
                    .map_err(|e| KeyError::Invalid(source.into(), e.to_string()))?;
                Some(PublicKey::from_spki(certificate.public_key().raw, source)?)
            }
            _ => private_key(block, source)?.map(|key| key.public),
        };
        keys.extend(key);
    }
    match keys.is_empty() {
        true => Err(KeyError::NoKey(source.to_owned())),
        false => Ok(keys),
    }
}

/// The private key of one PEM block, if it is one.
fn private_key(block: &pem::Pem, source: &str) -> Result<Option<SigningKey>, KeyError> {
    let invalid = |e: ring::error::KeyRejected| KeyError::Invalid(source.into(), e.to_string());
    match block.tag() {
        "RSA PRIVATE KEY" => rsa(
            RsaKeyPair::from_der(block.contents()).map_err(invalid)?,
            source,
        ),
        "PRIVATE KEY" => match RsaKeyPair::from_pkcs8(block.contents()) {
            Ok(key) => rsa(key, source),
            Err(_) => ecdsa(block.contents(), source)?.map(Some).ok_or_else(|| {
                KeyError::Invalid(
                    source.into(),
                    "not an RSA or ECDSA (P-256, P-384) key".into(),
                )
            }),
        },
        "EC PRIVATE KEY" => {
            // ring reads PKCS#8 alone: wrapped for each curve until one fits.
            for curve in [Curve::P256, Curve::P384] {
                if let Some(key) = ecdsa(&der::sec1_pkcs8(block.contents(), curve.oid()), source)? {
                    return Ok(Some(key));
                }
            }
            Err(KeyError::Invalid(
                source.into(),
                "an ECDSA key on a curve other than P-256 or P-384".into(),
            ))
        }
        _ => Ok(None),
    }
}

fn rsa(key: RsaKeyPair, source: &str) -> Result<Option<SigningKey>, KeyError> {
    let public = PublicKey::from_spki(&der::rsa_spki(key.public().as_ref()), source)?;
    Ok(Some(SigningKey {
        signer: Signer::Rsa(key),
        rng: SystemRandom::new(),
        public,
    }))
}

/// The ECDSA key of PKCS#8 `pkcs8` on whichever curve it is, if it is one.
fn ecdsa(pkcs8: &[u8], source: &str) -> Result<Option<SigningKey>, KeyError> {
    let rng = SystemRandom::new();
    for curve in [Curve::P256, Curve::P384] {
        if let Ok(key) = EcdsaKeyPair::from_pkcs8(curve.signing(), pkcs8, &rng) {
            let spki = der::ec_spki(key.public_key().as_ref(), curve.oid());
            let public = PublicKey::from_spki(&spki, source)?;
            return Ok(Some(SigningKey {
                signer: Signer::Ecdsa(key),
                rng,
                public,
            }));
        }
    }
    Ok(None)
}

/// An unsigned big-endian integer without its leading zero bytes (JWK's form).
fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

/// The fixed DER shapes keys are wrapped in.
mod der {
    /// rsaEncryption (1.2.840.113549.1.1.1) and its NULL parameters.
    const RSA_ALGORITHM: &[u8] = &[
        0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    /// id-ecPublicKey (1.2.840.10045.2.1).
    const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    /// prime256v1 (1.2.840.10045.3.1.7).
    pub(super) const OID_P256: &[u8] =
        &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    /// secp384r1 (1.3.132.0.34).
    pub(super) const OID_P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

    /// One DER element: its tag, its length (short or long form), its contents.
    fn element(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
        let length: usize = parts.iter().map(|p| p.len()).sum();
        let mut out = vec![tag];
        if length < 0x80 {
            out.push(length as u8);
        } else {
            let bytes = length.to_be_bytes();
            let skip = bytes
                .iter()
                .position(|b| *b != 0)
                .unwrap_or(bytes.len() - 1);
            out.push(0x80 | (bytes.len() - skip) as u8);
            out.extend_from_slice(&bytes[skip..]);
        }
        for part in parts {
            out.extend_from_slice(part);
        }
        out
    }

    /// A `SubjectPublicKeyInfo` of `algorithm` (its identifier's contents) and `key`.
    fn spki(algorithm: &[&[u8]], key: &[u8]) -> Vec<u8> {
        let algorithm = element(0x30, algorithm);
        let key = element(0x03, &[&[0], key]);
        element(0x30, &[&algorithm, &key])
    }

    /// The PKIX form of a PKCS#1 `RSAPublicKey`.
    pub(super) fn rsa_spki(pkcs1: &[u8]) -> Vec<u8> {
        spki(&[RSA_ALGORITHM], pkcs1)
    }

    /// The PKIX form of an uncompressed point on `curve`.
    pub(super) fn ec_spki(point: &[u8], curve: &[u8]) -> Vec<u8> {
        spki(&[EC_PUBLIC_KEY, curve], point)
    }

    /// The PKCS#8 form of a SEC1 `ECPrivateKey` on `curve`.
    pub(super) fn sec1_pkcs8(sec1: &[u8], curve: &[u8]) -> Vec<u8> {
        let version = [0x02, 0x01, 0x00];
        let algorithm = element(0x30, &[EC_PUBLIC_KEY, curve]);
        let key = element(0x04, &[sec1]);
        element(0x30, &[&version, &algorithm, &key])
    }

    #[cfg(test)]
    #[test]
    fn lengths_take_the_long_form_past_127() {
        assert_eq!(element(0x04, &[&[7; 3]]), [0x04, 3, 7, 7, 7]);
        let long = element(0x04, &[&[0; 200]]);
        assert_eq!(&long[..3], [0x04, 0x81, 200]);
        let longer = element(0x04, &[&[0; 300]]);
        assert_eq!(&longer[..4], [0x04, 0x82, 0x01, 0x2c]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys made by `openssl` (test data, no secret): a 2048-bit RSA key in PKCS#1 and
    /// PKCS#8, its public half in PKIX and PKCS#1, and a P-256 key in SEC1.
    const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");
    const RSA_PKCS8: &str = include_str!("testdata/rsa-pkcs8.pem");
    const RSA_PUBLIC: &str = include_str!("testdata/rsa-public.pem");
    const RSA_PUBLIC_PKCS1: &str = include_str!("testdata/rsa-public-pkcs1.pem");
    const EC_SEC1: &str = include_str!("testdata/ec-sec1.pem");
    const EC_PUBLIC: &str = include_str!("testdata/ec-public.pem");

    fn verify(token: &str, key: &PublicKey) -> Value {
        let mut validation = jsonwebtoken::Validation::new(key.algorithm);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        jsonwebtoken::decode::<Value>(token, key.decoding(), &validation)
            .unwrap()
            .claims
    }

    #[test]
    fn every_form_of_one_rsa_key_has_one_key_id() {
        let pkcs1 = SigningKey::from_pem(RSA_PKCS1.as_bytes(), "pkcs1").unwrap();
        let pkcs8 = SigningKey::from_pem(RSA_PKCS8.as_bytes(), "pkcs8").unwrap();
        let public = public_keys_from_pem(RSA_PUBLIC.as_bytes(), "public").unwrap();
        let public_pkcs1 = public_keys_from_pem(RSA_PUBLIC_PKCS1.as_bytes(), "pkcs1").unwrap();
        let from_private = public_keys_from_pem(RSA_PKCS1.as_bytes(), "private").unwrap();
        for key in [
            &pkcs8.public,
            &public[0],
            &public_pkcs1[0],
            &from_private[0],
        ] {
            assert_eq!(key.kid, pkcs1.public.kid);
        }
        assert_eq!(pkcs1.public.algorithm, Algorithm::RS256);
        let claims = json!({"sub": "someone"});
        assert_eq!(verify(&pkcs8.sign(&claims), &public[0]), claims);
        assert_eq!(public[0].jwk()["kty"], "RSA");
        assert_eq!(public[0].jwk()["e"], "AQAB");
    }

    #[test]
    fn ecdsa_keys_sign_es256_in_jws_form() {
        let key = SigningKey::from_pem(EC_SEC1.as_bytes(), "sec1").unwrap();
        let public = public_keys_from_pem(EC_PUBLIC.as_bytes(), "public").unwrap();
        assert_eq!(key.public.kid, public[0].kid);
        assert_eq!(key.public.algorithm, Algorithm::ES256);
        let claims = json!({"iss": "https://kapi"});
        let token = key.sign(&claims);
        assert_eq!(verify(&token, &public[0]), claims);
        // A fixed-size (r, s) signature of 64 bytes, as JWS wants, not DER.
        let signature = token.rsplit('.').next().unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(signature).unwrap().len(), 64);
        assert_eq!(public[0].jwk()["crv"], "P-256");
        assert_eq!(public[0].jwk()["alg"], "ES256");
    }

    #[test]
    fn an_ephemeral_key_signs_what_its_public_half_verifies() {
        let key = SigningKey::ephemeral();
        let claims = json!({"n": 1});
        assert_eq!(verify(&key.sign(&claims), &key.public), claims);
        let other = SigningKey::ephemeral();
        assert_ne!(key.public.kid, other.public.kid);
    }

    #[test]
    fn files_without_a_usable_key_are_refused_with_their_name() {
        let none = public_keys_from_pem(b"", "empty.pem").unwrap_err();
        assert_eq!(
            none.to_string(),
            "empty.pem: no RSA or ECDSA key (P-256, P-384) in it"
        );
        let junk = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert!(SigningKey::from_pem(junk.as_bytes(), "junk.pem").is_err());
        assert!(SigningKey::from_pem(RSA_PUBLIC.as_bytes(), "public.pem").is_err());
    }
}
