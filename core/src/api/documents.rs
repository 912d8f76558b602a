//! The static OpenAPI and discovery documents of an API, as `cargo xtask generate` renders
//! them: the generated crate builds one [`Documents`] value, the HTTP layer serves it.

/// The static OpenAPI and discovery documents of the API, as generated.
#[derive(Clone, Copy, Debug)]
pub struct Documents {
    /// `/openapi/v2` as JSON.
    pub openapi_v2_json: &'static str,
    /// `/openapi/v2` as the gnostic `openapi_v2.Document` protobuf.
    pub openapi_v2_protobuf: &'static [u8],
    /// `/openapi/v3`: the index of the group-version documents.
    pub openapi_v3_index: &'static str,
    /// `/openapi/v3/<path>`: one document per group-version.
    pub openapi_v3: &'static [OpenApiV3Document],
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
    /// The document.
    pub json: &'static str,
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
