//! The aggregator at start-up (feature `aggregation`): made when the API serves
//! APIServices, with the proxy's client certificate (`--proxy-client-cert-file`), its
//! local APIServices registered and the stored ones read before the server serves.

use super::Options;
use crate::filters::Aggregation;
use anyhow::Result;
use kapi_registry::Registry;

/// The aggregator, when the API has APIServices.
#[cfg(feature = "aggregation")]
pub(super) async fn start(flags: &Options, registry: &Registry) -> Result<Aggregation> {
    use crate::aggregator::{Aggregator, OpenApiV2Encoder, ProxyIdentity};
    use crate::controllers::apiservices;
    use anyhow::Context as _;
    use kapi_kinds::apiregistration;
    use std::sync::Arc;

    let scheme = registry.scheme();
    if (scheme.by_kind(apiregistration::GROUP, "APIService")).is_none() {
        return Ok(None);
    }
    let identity = match (
        &flags.aggregator.proxy_client_cert_file,
        &flags.aggregator.proxy_client_key_file,
    ) {
        (Some(certificate), Some(key)) => Some(
            ProxyIdentity::load(certificate, key)
                .map_err(anyhow::Error::msg)
                .context("--proxy-client-cert-file")?,
        ),
        _ => None,
    };
    let encoder: OpenApiV2Encoder = Arc::new(kapi_codegen::openapi::v2_proto::encode);
    let aggregator = Arc::new(Aggregator::new(identity, Some(encoder)));
    if let Err(error) = apiservices::register_local_now(registry).await {
        tracing::warn!(%error, "cannot register the local APIServices yet");
    }
    if let Err(error) = apiservices::load_now(registry, &aggregator).await {
        tracing::warn!(%error, "cannot read the APIServices yet");
    }
    Ok(Some(aggregator))
}

/// Without the `aggregation` set there is no aggregator; `--proxy-client-cert-file` was
/// refused by `AggregatorOptions::validate`.
#[cfg(not(feature = "aggregation"))]
pub(super) async fn start(_: &Options, _: &Registry) -> Result<Aggregation> {
    Ok(None)
}
