"""Admission webhooks, as a policy author serves them: HTTPS on a free loopback port with
the certificate and key given as arguments, answering AdmissionReview v1 requests.

- `/label`: a mutating webhook that labels every object it sees `admitted-by: test`
  (a JSON patch), with a warning.
- `/annotate`: a mutating webhook that annotates it `annotated-by: test`.
- `/policy` (and any other path): a validating webhook that refuses WebApps whose image
  is tagged `:edge`, and the deletion of objects named `keep`.
- `/connect`: a validating webhook for connects, whose object is the connect's options:
  it refuses an exec of `reboot`.
- `/exec-in-app`: a mutating webhook for connects that sends every exec to the container
  `app` (a JSON patch of the options), with a warning.

Prints `listening on PORT` first, then one JSON line per review received (path,
operation, kinds, name, namespace, dryRun, user, and the object's labels), for the Rust
test to check."""

import base64
import json

from webhook_server import serve


def label(request):
    obj = request.get("object") or {}
    labels = (obj.get("metadata") or {}).get("labels")
    if labels is None:
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"admitted-by": "test"}}]
    else:
        patch = [{"op": "add", "path": "/metadata/labels/admitted-by", "value": "test"}]
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
        "warnings": ["labelled by the test webhook"],
    }


def annotate(request):
    obj = request.get("object") or {}
    annotations = (obj.get("metadata") or {}).get("annotations")
    if annotations is None:
        patch = [{"op": "add", "path": "/metadata/annotations",
                  "value": {"annotated-by": "test"}}]
    else:
        patch = [{"op": "add", "path": "/metadata/annotations/annotated-by", "value": "test"}]
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode()}


def policy(request):
    if request["operation"] == "DELETE":
        if request.get("name") == "keep":
            return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                 "message": "objects named keep stay"}}
        return {"allowed": True}
    obj = request.get("object") or {}
    image = ((obj.get("spec") or {}).get("container") or {}).get("image", "")
    if image.endswith(":edge"):
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                             "message": "images tagged :edge are not allowed"}}
    return {"allowed": True}


def connect(request):
    command = (request.get("object") or {}).get("command") or []
    if "reboot" in command:
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                             "message": "reboots are not allowed"}}
    return {"allowed": True}


def exec_in_app(request):
    patch = [{"op": "add", "path": "/container", "value": "app"}]
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
            "warnings": ["exec sent to app"]}


def answer(review, full_path):
    request = review["request"]
    path, _, query = full_path.partition("?")
    obj = request.get("object") or request.get("oldObject") or {}
    print(json.dumps({
        "path": path,
        "query": query,
        "apiVersion": review.get("apiVersion"),
        "operation": request["operation"],
        "kind": request["kind"],
        "requestKind": request.get("requestKind"),
        "subResource": request.get("subResource"),
        "name": request.get("name"),
        "namespace": request.get("namespace"),
        "dryRun": request.get("dryRun"),
        "user": request.get("userInfo", {}).get("username"),
        "objectVersion": obj.get("apiVersion"),
        "labels": (obj.get("metadata") or {}).get("labels"),
        "annotations": (obj.get("metadata") or {}).get("annotations"),
        "hasObject": request.get("object") is not None,
        "hasOldObject": request.get("oldObject") is not None,
        "spec": obj.get("spec"),
        "object": obj,
    }), flush=True)
    handlers = {"/label": label, "/annotate": annotate, "/connect": connect,
                "/exec-in-app": exec_in_app}
    response = handlers.get(path, policy)(request)
    response["uid"] = request["uid"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


serve(answer)
