"""An API server behind the aggregator, for the aggregation tests: it serves one empty
group-version (argv[4], `group/version`), answers `GET .../headers` with the request's
headers and the common name of the client certificate it was shown, and switches an
upgrade request (`GET .../echo` with `Connection: Upgrade`) to echoing every byte back.
HTTPS with the certificate argv[1] and key argv[2], asking for client certificates of the
CA argv[3]; prints `listening on PORT` first."""

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GROUP_VERSION = sys.argv[4]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == f"/apis/{GROUP_VERSION}":
            self.json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                            "groupVersion": GROUP_VERSION, "resources": []})
        elif path.endswith("/headers"):
            certificate = self.connection.getpeercert() or {}
            subject = dict(pair[0] for pair in certificate.get("subject", ()))
            headers = {}
            for name, value in self.headers.items():
                headers.setdefault(name.lower(), []).append(value)
            self.json(200, {"headers": headers, "client": subject.get("commonName")})
        elif path.endswith("/echo") and "upgrade" in self.headers.get("Connection", "").lower():
            self.send_response(101)
            self.send_header("Connection", "Upgrade")
            self.send_header("Upgrade", self.headers.get("Upgrade", ""))
            self.end_headers()
            while True:
                data = self.rfile.read1(4096)
                if not data:
                    break
                self.wfile.write(data)
                self.wfile.flush()
            self.close_connection = True
        else:
            self.json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "NotFound", "code": 404, "message": "not found"})

    def json(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


cert, key, ca = sys.argv[1], sys.argv[2], sys.argv[3]
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
context.load_verify_locations(ca)
context.verify_mode = ssl.CERT_OPTIONAL
server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
