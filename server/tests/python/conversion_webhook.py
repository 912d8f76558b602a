"""A conversion webhook, as a CRD author serves one: HTTPS on a free loopback port with
the certificate and key given as arguments, answering ConversionReview v1 requests for
CronTab between v1 (`spec.cronSpec`) and v2 (`spec.schedule`).

Prints `listening on PORT` first, then one JSON line per review received (its
`desiredAPIVersion` and the apiVersions of its objects), for the Rust test to check.
A CronTab named `broken` is refused, to show how a failed conversion surfaces."""

import json

from webhook_server import serve


def convert(obj, desired):
    obj = dict(obj)
    spec = dict(obj.get("spec") or {})
    if desired == "stable.example.com/v2" and "cronSpec" in spec:
        spec["schedule"] = spec.pop("cronSpec")
    if desired == "stable.example.com/v1" and "schedule" in spec:
        spec["cronSpec"] = spec.pop("schedule")
    obj["spec"] = spec
    obj["apiVersion"] = desired
    return obj


def answer(review, _path):
    request = review["request"]
    desired = request["desiredAPIVersion"]
    objects = request["objects"]
    print(json.dumps({"desired": desired, "from": [o["apiVersion"] for o in objects]}), flush=True)
    broken = any(o["metadata"].get("name") == "broken" for o in objects)
    if broken:
        result = {"status": "Failure", "message": "cannot convert broken"}
        converted = []
    else:
        result = {"status": "Success"}
        converted = [convert(o, desired) for o in objects]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": request["uid"], "convertedObjects": converted, "result": result},
    }


serve(answer)
