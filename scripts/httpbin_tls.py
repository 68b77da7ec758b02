"""httpbin over TLS (HTTP/2 where the client offers it) for Errand's integration tests.

Run with hypercorn, which serves this WSGI app:

    hypercorn --bind 127.0.0.1:PORT --certfile server.pem --keyfile server.key httpbin_tls:app

Every httpbin route, plus one of its own: `GET /errand/connection` answers
`{"protocol": "HTTP/2", "port": 41234}`, the HTTP version the request came over and the
client's port, so that a test can see which protocol was negotiated and whether two requests
shared a connection.
"""

import json

import hypercorn.app_wrappers as wrappers
from httpbin import app as httpbin

_build_environ = wrappers._build_environ


def _build_environ_with_port(scope, body):
    # hypercorn's WSGI environ has the client's address but not its port.
    environ = _build_environ(scope, body)
    client = scope.get("client")
    environ["REMOTE_PORT"] = str(client[1]) if client else ""
    return environ


wrappers._build_environ = _build_environ_with_port


def app(environ, start_response):
    if environ.get("PATH_INFO") != "/errand/connection":
        return _at_least_one_chunk(httpbin(environ, start_response))
    port = environ.get("REMOTE_PORT", "")
    body = json.dumps(
        {
            "protocol": environ.get("SERVER_PROTOCOL", ""),
            "port": int(port) if port.isdigit() else None,
        }
    ).encode()
    start_response(
        "200 OK",
        [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
    )
    return [body]


def _at_least_one_chunk(result):
    # hypercorn sends a WSGI response's head with its first chunk, so a response without any
    # (httpbin's /status/200) would otherwise end in a server error.
    try:
        empty = True
        for chunk in result:
            empty = False
            yield chunk
        if empty:
            yield b""
    finally:
        close = getattr(result, "close", None)
        if close:
            close()
