//! Everything `cargo xtask generate` writes into `generated/`, rendered from one model.
//!
//! Layout (paths relative to `generated/`):
//!
//! - `README.md`: says the directory is generated, and how to regenerate it.
//! - `src/{lib,scheme,routes,documents}.rs`: the `generated` crate ([`crate::glue`]);
//!   `src/round_trip.rs`: its round-trip property tests.
//! - `openapi/v2.json`, `openapi/v2.pb`: the whole-API OpenAPI 2.0 document, and its gnostic
//!   protobuf encoding.
//! - `openapi/v3/api/v1.json`, `openapi/v3/apis/<group>/<version>.json`: one OpenAPI 3.0
//!   document per group-version; `openapi/v3/index.json`: the `/openapi/v3` index.
//! - `discovery/api.json`, `discovery/api/v1.json`, `discovery/apis.json`,
//!   `discovery/apis/<group>.json`, `discovery/apis/<group>/<version>.json`: the legacy
//!   discovery documents, named after their URL paths; `discovery/aggregated/{api,apis}.json`:
//!   the aggregated ones ([`crate::discovery`]).
//! - `docs/api-reference.md`: the API reference, read from the v3 documents.
//!
//! Output is deterministic: files sorted by path, JSON pretty-printed with a trailing
//! newline and the key order of the model. Rust sources are returned unformatted
//! ([`FileKind::Rust`]); the caller formats them with `rustfmt`.

use crate::glue::{self, DiscoveryFile, DocumentIndex, GlueError, OpenApiV2Files, OpenApiV3File};
use crate::model::{ApiModel, GroupVersionModel};
use crate::{discovery, openapi};

/// One file of `generated/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to `generated/`, with `/` separators: `openapi/v3/api/v1.json`.
    pub path: String,
    /// The contents.
    pub contents: Vec<u8>,
    /// What the file is; Rust sources still need formatting.
    pub kind: FileKind,
}

/// What a generated file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// Rust source, unformatted: pipe it through `rustfmt --edition 2024`.
    Rust,
    /// Pretty-printed JSON with a trailing newline.
    Json,
    /// Bytes (the OpenAPI v2 protobuf).
    Binary,
    /// Markdown.
    Markdown,
}

/// Why `generated/` could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The Rust glue.
    #[error(transparent)]
    Glue(#[from] GlueError),
    /// The API as served by default does not make a model (a kind stored with one off by
    /// default).
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// An OpenAPI document.
    #[error("OpenAPI: {0}")]
    OpenApi(#[from] openapi::Error),
    /// A document the renderers should have made is missing (a bug).
    #[error("no {0} was rendered")]
    Missing(String),
    /// A kind's CustomResourceDefinition could not be made.
    #[error("CustomResourceDefinition: {0}")]
    Definition(String),
    /// A document did not serialize (a bug: every document is a `serde_json::Value`).
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Renders every file of `generated/`, sorted by path: the glue, the reference and the
/// definitions of the whole API, the discovery and OpenAPI documents of the API as served
/// by default ([`ApiModel::served_by_default`]: a server switching more on renders its
/// own).
pub fn render(model: &ApiModel) -> Result<Vec<GeneratedFile>, RenderError> {
    let mut files = Vec::new();
    let mut index = DocumentIndex::default();

    let served = model.served_by_default()?;
    openapi(&served, &mut files, &mut index)?;
    let v3_documents = off_by_default(model, &mut files, &mut index)?;

    for document in discovery_documents(&served)? {
        let path = discovery_file(&document);
        files.push(GeneratedFile {
            path: path.clone(),
            contents: document.bytes,
            kind: FileKind::Json,
        });
        index.discovery.push(DiscoveryFile {
            path: document.path,
            aggregated: document.aggregated,
            file: path,
        });
    }

    for file in glue::render(model, &index)? {
        files.push(GeneratedFile {
            path: file.path.into(),
            contents: file.source.into_bytes(),
            kind: FileKind::Rust,
        });
    }
    files.push(GeneratedFile {
        path: "README.md".into(),
        contents: glue::readme(model)?.into_bytes(),
        kind: FileKind::Markdown,
    });
    let schemas = |gv: &GroupVersionModel| {
        let (_, document) = v3_documents
            .iter()
            .find(|(key, _)| *key == gv.openapi_v3_key())?;
        document.get("components")?.get("schemas")?.as_object()
    };
    files.push(GeneratedFile {
        path: "docs/api-reference.md".into(),
        contents: glue::api_reference(model, schemas)?.into_bytes(),
        kind: FileKind::Markdown,
    });

    // The API's own kinds as CustomResourceDefinitions, for kube-apiserver.
    for (name, definition) in
        crate::crd::custom_resource_definitions(model).map_err(RenderError::Definition)?
    {
        files.push(json(format!("crds/{name}"), &definition)?);
    }

    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The OpenAPI documents: v2 (JSON and protobuf), v3 per group-version, and the v3 index
/// with the hash of each v3 file as written (its `?hash=` and `ETag`).
fn openapi(
    model: &ApiModel,
    files: &mut Vec<GeneratedFile>,
    index: &mut DocumentIndex,
) -> Result<(), RenderError> {
    let v2 = openapi::v2::render(model)?;
    let proto = openapi::v2_proto::encode(&v2);
    files.push(json("openapi/v2.json".into(), &v2)?);
    files.push(GeneratedFile {
        path: "openapi/v2.pb".into(),
        contents: proto,
        kind: FileKind::Binary,
    });
    index.openapi_v2 = Some(OpenApiV2Files {
        json: "openapi/v2.json".into(),
        proto: "openapi/v2.pb".into(),
    });

    for gv in model.group_versions() {
        let key = gv.openapi_v3_key();
        let document = serde_json::to_value(openapi::v3::render(gv)?)?;
        let file = json(format!("openapi/v3/{key}.json"), &document)?;
        index.openapi_v3.push(OpenApiV3File {
            hash: openapi::v3::hash(&file.contents),
            file: file.path.clone(),
            key,
        });
        files.push(file);
    }
    let entries = (index.openapi_v3.iter()).map(|d| (d.key.clone(), d.hash.clone()));
    let v3_index = json(
        "openapi/v3/index.json".into(),
        &openapi::v3::index_of(entries),
    )?;
    index.openapi_v3_index = Some(v3_index.path.clone());
    files.push(v3_index);
    Ok(())
}

/// The OpenAPI v3 documents of the whole API, and the files of those the API as served by
/// default lacks or describes otherwise (group-versions of kinds off by default), under
/// `openapi/v3-off-by-default/`: not served, but where the schemas of those kinds are read
/// from for validation and defaulting once a server turns them on. Returns every v3
/// document by key (the reference describes every kind).
fn off_by_default(
    model: &ApiModel,
    files: &mut Vec<GeneratedFile>,
    index: &mut DocumentIndex,
) -> Result<Vec<(String, serde_json::Value)>, RenderError> {
    let mut documents = Vec::new();
    for gv in model.group_versions() {
        let key = gv.openapi_v3_key();
        let document = serde_json::to_value(openapi::v3::render(gv)?)?;
        let file = json(format!("openapi/v3-off-by-default/{key}.json"), &document)?;
        let served = format!("openapi/v3/{key}.json");
        if !(files.iter()).any(|f| f.path == served && f.contents == file.contents) {
            index.openapi_v3_off_by_default.push(OpenApiV3File {
                hash: openapi::v3::hash(&file.contents),
                file: file.path.clone(),
                key: key.clone(),
            });
            files.push(file);
        }
        documents.push((key, document));
    }
    Ok(documents)
}

/// One discovery document as served.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoveryDocument {
    /// Its URL path (`/apis`, `/apis/apps.example.dev/v1`).
    pub path: String,
    /// The aggregated (`apidiscovery.k8s.io/v2`) form of `/api` or `/apis`.
    pub aggregated: bool,
    /// Its bytes: what `generated/discovery/` holds for it.
    pub bytes: Vec<u8>,
}

/// Every discovery document of `model`, serialized as `generated/` holds them: what the
/// server renders again when kinds are installed while it runs.
pub fn discovery_documents(model: &ApiModel) -> Result<Vec<DiscoveryDocument>, RenderError> {
    (discovery::documents(model).into_iter())
        .map(|document| {
            Ok(DiscoveryDocument {
                bytes: json(String::new(), &document.body)?.contents,
                path: document.path,
                aggregated: document.aggregated,
            })
        })
        .collect()
}

/// Every document the server serves for `model`, as `generated/` holds them: what the
/// server renders again when kinds are installed while it runs.
pub fn served_documents(
    model: &ApiModel,
) -> Result<kapi_core::api::RenderedDocuments, RenderError> {
    let mut files = Vec::new();
    let mut index = DocumentIndex::default();
    openapi(model, &mut files, &mut index)?;
    let take = |path: &str| -> Result<Vec<u8>, RenderError> {
        (files.iter())
            .find(|file| file.path == path)
            .map(|file| file.contents.clone())
            .ok_or_else(|| RenderError::Missing(path.to_owned()))
    };
    let v2 =
        (index.openapi_v2.as_ref()).ok_or_else(|| RenderError::Missing("openapi/v2".into()))?;
    let (v2_json, v2_proto) = (take(&v2.json)?, take(&v2.proto)?);
    let v3_index = (index.openapi_v3_index.as_deref())
        .ok_or_else(|| RenderError::Missing("openapi/v3/index.json".into()))?;
    Ok(kapi_core::api::RenderedDocuments {
        discovery: (discovery_documents(model)?.into_iter())
            .map(|document| kapi_core::api::RenderedDocument {
                path: document.path,
                aggregated: document.aggregated,
                bytes: document.bytes,
            })
            .collect(),
        openapi_v2_json: v2_json,
        openapi_v2_protobuf: v2_proto,
        openapi_v3_index: take(v3_index)?,
        openapi_v3: (index.openapi_v3.iter())
            .map(|document| {
                Ok(kapi_core::api::RenderedOpenApiV3 {
                    path: document.key.clone(),
                    hash: document.hash.clone(),
                    json: take(&document.file)?,
                })
            })
            .collect::<Result<_, RenderError>>()?,
    })
}

/// `discovery/apis/apps.example.dev/v1.json`, `discovery/aggregated/apis.json`.
fn discovery_file(document: &DiscoveryDocument) -> String {
    if document.aggregated {
        format!("discovery/aggregated{}.json", document.path)
    } else {
        format!("discovery{}.json", document.path)
    }
}

/// Pretty-printed, with a trailing newline.
fn json<T: serde::Serialize>(path: String, value: &T) -> Result<GeneratedFile, RenderError> {
    let mut contents = serde_json::to_vec_pretty(value)?;
    contents.push(b'\n');
    Ok(GeneratedFile {
        path,
        contents,
        kind: FileKind::Json,
    })
}
