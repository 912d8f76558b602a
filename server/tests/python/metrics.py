"""Scrapes `/metrics` as a Prometheus server would, with the official Python client's
parsers (`prometheus_client`): the text format by default, OpenMetrics when `Accept` asks
for it. The second argument is the scraper's token. Prints each format's samples as
`{"format": ..., "content_type": ..., "samples": [[name, labels, value], ...]}`."""

import sys

from kapi import configuration, emit, expect
from kubernetes import client
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families

settings = configuration(token=sys.argv[2])
api = client.ApiClient(settings)

FORMATS = [
    ("text", "*/*", text_families, "text/plain; version=0.0.4"),
    (
        "openmetrics",
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        openmetrics_families,
        "application/openmetrics-text; version=1.0.0",
    ),
]

for name, accept, parse, content_type in FORMATS:
    headers = {"Accept": accept, "Authorization": settings.api_key["authorization"]}
    response = api.call_api("GET", settings.host + "/metrics", header_params=headers)
    expect(response.status, 200, f"the status of the {name} scrape")
    response.read()
    served_as = response.headers["Content-Type"]
    expect(served_as.startswith(content_type), True, f"the {name} content type ({served_as})")
    samples = [
        [sample.name, sample.labels, sample.value]
        for family in parse(response.data.decode())
        for sample in family.samples
    ]
    emit(format=name, content_type=served_as, samples=samples)
