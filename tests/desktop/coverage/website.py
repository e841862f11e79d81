"""A person's website on loopback over HTTPS: the hostile ground the sitemap reader is tested on.

It serves whatever each test puts in ``routes`` (path -> status, headers, body) and logs every request
it gets with its Host, Cookie and Authorization headers, so the tests can see what reached it. The
certificate is the fake Google's machinery (tests/fakegoogle/certs.py) made for the site's names.
"""

from __future__ import annotations

import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakegoogle.certs import make_pki

HOSTS = ("site.test", "www.site.test", "other.test", "rebind.test", "local.test", "mapped.test")


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    path: str
    host: str
    cookie: str | None
    authorization: str | None


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        site = self.server.site
        site.seen.append(
            Seen(self.path, self.headers.get("Host", ""), self.headers.get("Cookie"), self.headers.get("Authorization"))
        )
        route = site.routes.get(self.path, Route(b"not here", 404))
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        try:
            self.wfile.write(route.body)
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: Website) -> None:
        self.site = site
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, addr = super().get_request()
        return self.site.server_context.wrap_socket(sock, server_side=True), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class Website:
    """The fake website: ``port`` on 127.0.0.1, ``client_context`` trusting its certificate."""

    def __init__(self, folder: Path) -> None:
        pki = make_pki(folder, label="SearchDesk test website CA", hosts=HOSTS)
        self.server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_context.load_cert_chain(pki.cert_pem, pki.key_pem)
        self.client_context = ssl.create_default_context(cafile=str(pki.ca_pem))
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self._server = _Server(self)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
