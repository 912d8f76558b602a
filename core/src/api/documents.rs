//! The static OpenAPI and discovery documents of an API, as `cargo xtask generate` renders
//! them: the generated crate builds one [`Documents`] value, the HTTP layer serves it.
//!
//! The OpenAPI documents are most of an API's description by size (several megabytes for
//! Kubernetes' kinds, ten times what they compress to), and most servers serve them
//! rarely: they are compiled in deflated ([`Deflated`], `kapi::deflated!`) and inflated
//! when first needed.

/// The static OpenAPI and discovery documents of the API, as generated.
#[derive(Clone, Copy, Debug)]
pub struct Documents {
    /// `/openapi/v2` as JSON.
    pub openapi_v2_json: Deflated,
    /// `/openapi/v2` as the gnostic `openapi_v2.Document` protobuf.
    pub openapi_v2_protobuf: Deflated,
    /// `/openapi/v3`: the index of the group-version documents.
    pub openapi_v3_index: &'static str,
    /// `/openapi/v3/<path>`: one document per group-version.
    pub openapi_v3: &'static [OpenApiV3Document],
    /// The documents every kind's schema is read from for validation and defaulting:
    /// `openapi_v3`, then the group-versions of kinds off by default as they are once
    /// turned on (a later document of a path wins).
    pub schemas_v3: &'static [OpenApiV3Document],
    /// The legacy discovery document at a path (`/api`, `/api/v1`, `/apis`, `/apis/<g>`,
    /// `/apis/<g>/<v>`).
    pub discovery: fn(&str) -> Option<&'static str>,
    /// The aggregated discovery document (`apidiscovery.k8s.io/v2`) at `/api` or `/apis`.
    pub aggregated_discovery: fn(&str) -> Option<&'static str>,
}

/// One group-version's OpenAPI v3 document.
#[derive(Clone, Copy, Debug)]
pub struct OpenApiV3Document {
    /// Its key in the index: `api/v1`, `apis/apps.example.dev/v1`.
    pub path: &'static str,
    /// Upper-case hex SHA-512 of `json`: the `?hash=` of its URL in the index, and its `ETag`.
    pub hash: &'static str,
    /// The document (JSON).
    pub json: Deflated,
}

/// A file compiled into the program deflated (RFC 1951) by `kapi::deflated!`.
#[derive(Clone, Copy, Debug)]
pub struct Deflated {
    deflated: &'static [u8],
    len: usize,
}

impl Deflated {
    /// `deflated`, which inflates to `len` bytes: what `kapi::deflated!` writes.
    pub const fn new(deflated: &'static [u8], len: usize) -> Deflated {
        Deflated { deflated, len }
    }

    /// The file's bytes.
    ///
    /// # Panics
    ///
    /// When the bytes compiled in are not what `kapi::deflated!` wrote (they are, unless
    /// written by hand).
    pub fn inflate(&self) -> Vec<u8> {
        match miniz_oxide::inflate::decompress_to_vec_with_limit(self.deflated, self.len) {
            Ok(bytes) if bytes.len() == self.len => bytes,
            _ => panic!("a compiled-in document does not inflate to its length"),
        }
    }

    /// The file's text.
    ///
    /// # Panics
    ///
    /// As [`Deflated::inflate`], or when the file was not UTF-8.
    pub fn inflate_text(&self) -> String {
        String::from_utf8(self.inflate()).expect("a compiled-in document is UTF-8")
    }

    /// How many bytes the file has.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the file is empty.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One document rendered while the server runs.
#[derive(Clone, Debug)]
pub struct RenderedDocument {
    /// Its URL path (`/apis`, `/apis/stable.example.com/v1`).
    pub path: String,
    /// The aggregated (`apidiscovery.k8s.io/v2`) form of `/api` or `/apis`.
    pub aggregated: bool,
    /// The document, as [`Documents`] would hold it.
    pub bytes: Vec<u8>,
}

/// One group-version's OpenAPI v3 document rendered while the server runs.
#[derive(Clone, Debug)]
pub struct RenderedOpenApiV3 {
    /// Its key in the index: `apis/stable.example.com/v1`.
    pub path: String,
    /// Its `?hash=`.
    pub hash: String,
    /// The document.
    pub json: Vec<u8>,
}

/// Every document of a set of kinds, as [`Documents`] holds those of the compiled ones.
#[derive(Clone, Debug, Default)]
pub struct RenderedDocuments {
    /// The discovery documents, legacy and aggregated.
    pub discovery: Vec<RenderedDocument>,
    /// `/openapi/v2` as JSON.
    pub openapi_v2_json: Vec<u8>,
    /// `/openapi/v2` as the gnostic protobuf.
    pub openapi_v2_protobuf: Vec<u8>,
    /// `/openapi/v3`.
    pub openapi_v3_index: Vec<u8>,
    /// `/openapi/v3/<path>`.
    pub openapi_v3: Vec<RenderedOpenApiV3>,
}

/// Renders the documents of a set of kinds with the model and renderers `cargo xtask
/// generate` uses: how the server describes the kinds installed while it runs (the binary
/// provides it, so that the runtime does not depend on the code generator).
pub type Renderer = std::sync::Arc<
    dyn Fn(&[&'static super::KindInfo]) -> Result<RenderedDocuments, String> + Send + Sync,
>;
