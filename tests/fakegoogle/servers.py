"""Real sockets on loopback: a TLS HTTP/1.1 server playing Google's hosts, and an HTTP CONNECT proxy
that tunnels to it — the path a user behind a company proxy takes.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import socketserver
import ssl
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakegoogle.backend import Backend, FakeRequest, FakeResponse
from tests.fakegoogle.certs import GOOGLE_HOSTS

_QUIET_ERRORS = (OSError, ssl.SSLError, ValueError)


def _no_delay(sock: socket.socket) -> None:
    """Send each write at once. Without it, a response's headers and body (two writes) met the client's
    delayed ACK: 40 ms a request, which a 16-month copy (some 3,000 requests) could not afford."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _reset(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0), as a crashing server or a cut line would."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _GoogleHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: TLSServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        host = (self.headers.get("host") or "").lower()
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        path, _, query = self.path.partition("?")
        request = FakeRequest(
            method=self.command,
            host=host,
            path=path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        try:
            self._write(self.server.backend.handle(request, "https"))
        except _QUIET_ERRORS:
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def _write(self, response: FakeResponse) -> None:
        chunks: Iterator[bytes] = iter(response.chunks)
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        declared: int | None = None
        if response.framing == "length":
            if response.content_length is None:
                whole = b"".join(chunks)
                chunks = iter([whole])
                declared = len(whole)
            else:
                declared = response.content_length
            self.send_header("Content-Length", str(declared))
        elif response.framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        sent = 0
        stop = self.server.stop
        for chunk in chunks:
            if stop.is_set():
                self.close_connection = True
                return
            if response.reset_after is not None and sent + len(chunk) >= response.reset_after:
                self._send(chunk[: max(0, response.reset_after - sent)], response.framing)
                self.close_connection = True
                _reset(self.connection)
                return
            self._send(chunk, response.framing)
            sent += len(chunk)
            if response.delay:
                stop.wait(response.delay)
        if response.framing == "chunked":
            self.wfile.write(b"0\r\n\r\n")
        if declared is not None and declared != sent:
            self.close_connection = True  # the framing was a lie; this connection is spent

    def _send(self, chunk: bytes, framing: str) -> None:
        if not chunk:
            return
        if framing == "chunked":
            self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        else:
            self.wfile.write(chunk)


class TLSServer(ThreadingHTTPServer):
    """HTTPS on 127.0.0.1:<random>; the TLS handshake runs in each connection's own thread."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, backend: Backend, cert: Path, key: Path, stop: threading.Event) -> None:
        self.backend = backend
        self.stop = stop
        self._live: set[socket.socket] = set()
        self._live_lock = threading.Lock()
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        super().__init__(("127.0.0.1", 0), _GoogleHandler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        _no_delay(request)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except _QUIET_ERRORS:  # e.g. the client did not trust our CA: that is its answer
            return
        with self._live_lock:
            self._live.add(tls)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except _QUIET_ERRORS:
            pass
        finally:
            with self._live_lock:
                self._live.discard(tls)
            with contextlib.suppress(OSError):
                tls.close()

    def close_connections(self) -> None:
        """End idle keep-alive connections now, rather than when their handler times out."""
        with self._live_lock:
            live = list(self._live)
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _ProxyHandler(socketserver.StreamRequestHandler):
    server: ConnectProxy

    def handle(self) -> None:
        line = self.rfile.readline(8192).decode("latin-1").strip()
        while self.rfile.readline(8192).strip():
            pass
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        target = parts[1]
        with self.server.lock:
            self.server.connects.append(target)
        host, _, port = target.rpartition(":")
        if host.lower() not in self.server.hosts or port != "443":
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        upstream = socket.create_connection(("127.0.0.1", self.server.tls_port))
        _no_delay(upstream)
        _no_delay(self.connection)
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        _pipe(self.connection, upstream, self.server.stop)


def _pipe(client: socket.socket, upstream: socket.socket, stop: threading.Event) -> None:
    """Copy both ways until both sides are done. A reset from the server is passed on as a reset,
    so the client sees what the server did."""
    peers = {client: upstream, upstream: client}
    open_reads = {client, upstream}
    with selectors.DefaultSelector() as selector:
        for sock in open_reads:
            selector.register(sock, selectors.EVENT_READ)
        while open_reads and not stop.is_set():
            for key, _ in selector.select(timeout=0.2):
                src: socket.socket = key.fileobj  # type: ignore[assignment]
                dst = peers[src]
                try:
                    data = src.recv(65536)
                except ConnectionResetError:
                    _reset(dst)
                    _reset(src)
                    return
                except OSError:
                    data = b""
                if data:
                    try:
                        dst.sendall(data)
                    except OSError:
                        _reset(src)
                        return
                    continue
                selector.unregister(src)
                open_reads.discard(src)
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)
    with contextlib.suppress(OSError):
        upstream.close()


class ConnectProxy(socketserver.ThreadingTCPServer):
    """An HTTP CONNECT proxy that tunnels only the hosts it is given (Google's by default) to the fake,
    and records each CONNECT."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, tls_port: int, hosts: tuple[str, ...] = GOOGLE_HOSTS) -> None:
        self.tls_port = tls_port
        self.hosts = hosts  # the hosts it tunnels (the update check's tests: GitHub's)
        self.stop = threading.Event()
        self.connects: list[str] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def serve_in_thread(server: socketserver.BaseServer, name: str) -> threading.Thread:
    # shutdown() waits for the loop to look at its flag: at 0.1 s a fake took 0.2 s to close, in every
    # test that has one; at 0.02 s it takes 0.04 s (the idle wake-ups cost nothing measurable).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, name=name, daemon=True)
    thread.start()
    return thread
