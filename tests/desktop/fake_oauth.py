"""A fake Google OAuth server on loopback (real HTTP): authorization, token and revoke endpoints.

The test plays the browser: it follows the authorization URL, which answers with a redirect to the
app's loopback listener. The token endpoint checks PKCE (S256) exactly as Google does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

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

    @property
    def auth_uri(self) -> str:
        return self.base + "/auth"

    @property
    def token_uri(self) -> str:
        return self.base + "/token"

    @property
    def revoke_uri(self) -> str:
        return self.base + "/revoke"

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
    fake = FakeOAuth()

    class Handler(BaseHTTPRequestHandler):
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

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if self.path == "/token":
                status, payload = fake.token(form)
            elif self.path == "/revoke":
                fake.revoked.add(form.get("token", ""))
                status, payload = 200, {}
            else:
                status, payload = 404, {}
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=lambda: server.serve_forever(poll_interval=0.05), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
