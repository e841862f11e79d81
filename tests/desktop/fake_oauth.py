"""A fake Google OAuth server on loopback: the consent page, and the token and revoke endpoints.

The test plays the browser: it follows the authorization URL (plain HTTP on loopback, as only the
browser ever opens it), which answers with a redirect to the app's loopback listener. The token and
revoke endpoints answer as oauth2.googleapis.com over real TLS, behind a CONNECT proxy: the app
reaches them at Google's own addresses through its hardened client, as a user behind a company proxy
would (the fake Google's servers and certificate authority, tests/fakegoogle). The token endpoint
checks PKCE (S256) exactly as Google does; `fail()` scripts a misbehaving answer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tests.fakegoogle.backend import FakeRequest, FakeResponse, Fault
from tests.fakegoogle.certs import make_pki
from tests.fakegoogle.servers import ConnectProxy, TLSServer, serve_in_thread

CLIENT_ID = "test-client.apps.googleusercontent.com"
CLIENT_SECRET = "test-secret"
EMAIL = "owner@example.com"


def unsigned_id_token(email: str) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part({'email': email, 'aud': CLIENT_ID})}.sig"


@dataclass
class FakeOAuth:
    base: str = ""
    email: str = EMAIL  # the Google account the person signs in with in the browser
    deny: bool = False
    grant_scopes: list[str] | None = None  # None: grant what was asked
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    refresh_tokens: dict[str, list[str]] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    auth_requests: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    issued: list[str] = field(default_factory=list)
    service_accounts: dict[str, bytes] = field(default_factory=dict)  # client_email -> public key PEM
    faults: list[Fault] = field(default_factory=list)

    @property
    def auth_uri(self) -> str:
        return self.base + "/auth"

    def fail(self, path: str, *, status: int, headers: list[tuple[str, str]] | None = None, size: int = 0) -> Fault:
        """The next request to `path` ("/token", "/revoke") gets this answer (`size`: padded to that many
        bytes) instead of the real one."""
        fault = Fault(re.compile(re.escape(path) + "$"), "POST", 1, status, headers or [], b"{}", size=size or None)
        self.faults.append(fault)
        return fault

    def handle(self, request: FakeRequest, via: str) -> FakeResponse:
        """oauth2.googleapis.com, as the TLS server behind the proxy calls it."""
        for fault in self.faults:
            if fault.matches(request):
                fault.remaining -= 1
                return fault.response()
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        if request.method == "POST" and request.host == "oauth2.googleapis.com" and request.path == "/token":
            status, payload = self.token(form)
        elif request.method == "POST" and request.host == "oauth2.googleapis.com" and request.path == "/revoke":
            self.revoked.add(form.get("token", ""))
            status, payload = 200, {}
        else:
            status, payload = 404, {}
        return FakeResponse.json(status, payload)

    def browser(self, url: str) -> httpx.Response:
        """What a person's browser does: open Google's page, consent, follow the redirect home."""
        first = httpx.get(url, follow_redirects=False, trust_env=False)
        if first.status_code != 302:
            return first
        return httpx.get(first.headers["location"], trust_env=False)

    # --- endpoints ---
    def authorize(self, q: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.auth_requests.append(q)
        if q.get("client_id") != CLIENT_ID or q.get("response_type") != "code":
            return 400, {}, b"bad client"
        if q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43:
            return 400, {}, b"PKCE S256 required"
        redirect = q.get("redirect_uri", "")
        if not redirect.startswith("http://127.0.0.1:"):
            return 400, {}, b"loopback redirect required"
        if self.deny:
            params = {"error": "access_denied", "state": q.get("state", "")}
        else:
            code = secrets.token_urlsafe(16)
            self.codes[code] = q
            params = {"code": code, "state": q.get("state", ""), "scope": q.get("scope", "")}
        return 302, {"Location": redirect + "?" + urlencode(params)}, b""

    def token(self, f: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.token_requests.append(f)
        grant = f.get("grant_type")
        if "jwt-bearer" not in str(grant) and (
            f.get("client_id") != CLIENT_ID or f.get("client_secret") != CLIENT_SECRET
        ):
            return 401, {"error": "invalid_client"}
        if grant == "authorization_code":
            asked = self.codes.pop(f.get("code", ""), None)
            if asked is None or f.get("redirect_uri") != asked["redirect_uri"]:
                return 400, {"error": "invalid_grant"}
            digest = hashlib.sha256(f.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != asked["code_challenge"]:
                return 400, {"error": "invalid_grant", "error_description": "code_verifier mismatch"}
            scopes = self.grant_scopes if self.grant_scopes is not None else asked["scope"].split()
            refresh = "1//refresh-" + secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = scopes
            return 200, {
                "access_token": self._access(),
                "expires_in": 3599,
                "refresh_token": refresh,
                "scope": " ".join(scopes),
                "token_type": "Bearer",
                "id_token": unsigned_id_token(self.email),
            }
        if grant == "refresh_token":
            refresh = f.get("refresh_token", "")
            if refresh not in self.refresh_tokens or refresh in self.revoked:
                return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
            return 200, {"access_token": self._access(), "expires_in": 3599, "token_type": "Bearer"}
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            from google.auth import jwt

            try:
                unverified = jwt.decode(f.get("assertion", ""), verify=False)
                pem = self.service_accounts[unverified["iss"]]
                claims = jwt.decode(f["assertion"], certs=pem, audience="https://oauth2.googleapis.com/token")
            except (KeyError, ValueError):
                return 400, {"error": "invalid_grant"}
            return 200, {"access_token": self._access() + "-" + claims["scope"], "expires_in": 3599}
        return 400, {"error": "unsupported_grant_type"}

    def _access(self) -> str:
        token = "ya29.fake-" + secrets.token_urlsafe(16)
        self.issued.append(token)
        return token


@contextmanager
def fake_oauth_server() -> Iterator[FakeOAuth]:
    """The fake, with this process's environment pointing new HTTP clients at it (the proxy and the
    fake's certificate authority) until the block ends."""
    fake = FakeOAuth()

    class ConsentPage(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/auth":
                self.send_error(404)
                return
            status, headers, body = fake.authorize({k: v[0] for k, v in parse_qs(parts.query).items()})
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    with tempfile.TemporaryDirectory(prefix="searchdesk-fake-oauth-") as folder:
        pki = make_pki(Path(folder))
        stop = threading.Event()
        tls = TLSServer(fake, pki.cert_pem, pki.key_pem, stop)  # type: ignore[arg-type]
        proxy = ConnectProxy(tls.server_address[1])
        page = ThreadingHTTPServer(("127.0.0.1", 0), ConsentPage)
        page.daemon_threads = True
        fake.base = f"http://127.0.0.1:{page.server_address[1]}"
        servers = (page, tls, proxy)
        threads = [serve_in_thread(server, "fake-oauth") for server in servers]
        env = {"HTTPS_PROXY": f"http://127.0.0.1:{proxy.server_address[1]}", "SSL_CERT_FILE": str(pki.ca_pem)}
        env |= {"https_proxy": env["HTTPS_PROXY"], "NO_PROXY": "", "no_proxy": ""}
        env |= {name: "" for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
        saved = {name: os.environ.get(name) for name in (*env, "SSL_CERT_DIR")}
        os.environ.pop("SSL_CERT_DIR", None)  # the fake's authority alone
        os.environ.update(env)
        try:
            yield fake
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            stop.set()
            proxy.stop.set()
            for server in servers:
                server.shutdown()
            tls.close_connections()
            for server in servers:
                server.server_close()
            for thread in threads:
                thread.join(timeout=5)
