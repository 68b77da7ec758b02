"""A server that requires a client certificate (mutual TLS), for Errand's integration tests.

    python mtls_server.py PORT CERTFILE KEYFILE CLIENT_CA

It listens on 127.0.0.1:PORT over TLS with CERTFILE and KEYFILE, refuses every handshake whose
client presents no certificate, or one that does not lead to CLIENT_CA (OpenSSL sends the TLS
alert that says so), and answers every request with `{"client": "<the first name in the
certificate>", "path": "<the request's path>"}`, so a test sees which certificate reached it. HTTP/1.1
only; one thread per connection. It stops when its parent (the CI script) stops it.
"""

import http.server
import json
import socket
import ssl
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle(self) -> None:
        try:
            super().handle()
        except ssl.SSLError:
            # The handshake was refused and OpenSSL has sent its alert. In TLS 1.3 the client
            # may already be writing its request: read what it sends (the raw bytes, past the
            # TLS layer) until it closes, so that it reads the alert rather than a reset.
            self.request.settimeout(2)
            try:
                while socket.socket.recv(self.request, 65536):
                    pass
            except OSError:
                pass

    def do_GET(self) -> None:
        names = [value for kind, value in self.connection.getpeercert().get("subjectAltName", ())]
        body = json.dumps({"client": names[0] if names else "", "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a refused handshake is what the tests ask for


def main() -> None:
    port, certfile, keyfile, client_ca = sys.argv[1:5]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    context.load_verify_locations(client_ca)
    context.verify_mode = ssl.CERT_REQUIRED
    server = Server(("127.0.0.1", int(port)), Handler)
    # The handshake happens in each connection's thread, at its first read: a slow client never
    # holds up the others.
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
