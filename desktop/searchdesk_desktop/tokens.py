"""Short-lived access tokens for the server; the long-lived secret stays here.

``credentials/token`` on the agent socket is answered from a :class:`TokenProvider`. Each one is
synchronous and thread-safe: the listener calls it from a worker thread so that a slow Google never
stalls the UI or another client.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .keystore import SignInRecord
from .signin import TOKEN_URI, OAuthClient, RefreshFailed, RefreshRevoked, ServiceAccountKey, post_form

#: Refresh when less than this is left, so a token handed out lives long enough to be used.
MIN_LIFETIME = 300
#: A narrower scope is granted by a broader one (mirrors the server's catalogue).
IMPLIED: dict[str, frozenset[str]] = {
    "https://www.googleapis.com/auth/webmasters": frozenset({"https://www.googleapis.com/auth/webmasters.readonly"}),
    "https://www.googleapis.com/auth/siteverification": frozenset(
        {"https://www.googleapis.com/auth/siteverification.verify_only"}
    ),
}

TokenKind = Literal["oauth", "service_account", "demo"]


class ScopeNotGranted(Exception):
    def __init__(self, missing: Sequence[str]) -> None:
        self.missing = tuple(missing)
        super().__init__(
            "Your Google sign-in does not include what this tool needs "
            f"({', '.join(s.rsplit('/', 1)[-1] for s in missing)}). Sign in with Google again and allow it."
        )


@dataclass(frozen=True)
class AccessToken:
    token: str = field(repr=False)
    expires_at: float
    kind: TokenKind
    account: str

    def expires_in(self, now: float | None = None) -> int:
        return max(0, int(self.expires_at - (time.time() if now is None else now)))


class TokenProvider(Protocol):
    kind: TokenKind
    account: str

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken: ...


def covered(granted: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The wanted scopes that ``granted`` does not cover (a broad scope covers its narrow twin)."""
    have = set(granted)
    for scope in granted:
        have |= IMPLIED.get(scope, frozenset())
    return [s for s in wanted if s not in have]


class DemoTokens:
    """The demo has no Google: tokens are labelled, random and useless anywhere else."""

    kind: TokenKind = "demo"
    account = "demo@searchdesk.invalid"

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        return AccessToken("demo-" + secrets.token_urlsafe(24), time.time() + 3600, "demo", self.account)


class OAuthTokens:
    """Access tokens from the stored refresh token; one cached token covers every granted scope."""

    kind: TokenKind = "oauth"

    def __init__(
        self, client: OAuthClient, record: SignInRecord, *, token_uri: str = TOKEN_URI, http: Any | None = None
    ) -> None:
        self.client = client
        self.record = record
        self.account = record.account
        self._token_uri = token_uri
        self._http = http
        self._lock = threading.Lock()
        self._cached: AccessToken | None = None

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        missing = covered(self.record.scopes, scopes)
        if missing:
            raise ScopeNotGranted(missing)
        with self._lock:
            cached = self._cached
            if cached is None or force_refresh or cached.expires_in() < MIN_LIFETIME:
                self._cached = cached = self._refresh()
            return cached

    def _refresh(self) -> AccessToken:
        from .signin import http_client

        http = self._http or http_client()
        try:
            status, body = post_form(
                http,
                self._token_uri,
                {
                    "grant_type": "refresh_token",
                    "refresh_token": self.record.refresh_token,
                    "client_id": self.client.client_id,
                    "client_secret": self.client.client_secret,
                },
            )
        finally:
            if self._http is None:
                http.close()
        if status in (400, 401) and body.get("error") in ("invalid_grant", "unauthorized_client"):
            raise RefreshRevoked()
        token = body.get("access_token")
        if status != 200 or not isinstance(token, str) or not token:
            raise RefreshFailed(f"Google did not give a new access token (HTTP {status}). Try again shortly.")
        lifetime = body.get("expires_in", 3600)
        lifetime = lifetime if isinstance(lifetime, int) and 0 < lifetime <= 86400 else 3600
        return AccessToken(token, time.time() + lifetime, "oauth", self.account)


class ServiceAccountTokens:
    """Access tokens for a service-account key (JWT bearer grant), one cache entry per scope set."""

    kind: TokenKind = "service_account"

    def __init__(self, key: ServiceAccountKey, *, token_uri: str = TOKEN_URI, http: Any | None = None) -> None:
        self.key = key
        self.account = key.client_email
        self._token_uri = token_uri
        self._http = http
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, ...], AccessToken] = {}

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        wanted = tuple(sorted(set(scopes)))
        with self._lock:
            cached = self._cache.get(wanted)
            if cached is None or force_refresh or cached.expires_in() < MIN_LIFETIME:
                self._cache[wanted] = cached = self._mint(wanted)
            return cached

    def _mint(self, scopes: tuple[str, ...]) -> AccessToken:
        from google.auth import crypt, jwt

        from .signin import http_client

        now = int(time.time())
        signer = crypt.RSASigner.from_service_account_info(dict(self.key.info))
        assertion = jwt.encode(
            signer,
            {
                "iss": self.key.client_email,
                "scope": " ".join(scopes),
                "aud": TOKEN_URI,
                "iat": now,
                "exp": now + 3600,
            },
        )
        http = self._http or http_client()
        try:
            status, body = post_form(
                http,
                self._token_uri,
                {
                    "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                    "assertion": assertion.decode() if isinstance(assertion, bytes) else assertion,
                },
            )
        finally:
            if self._http is None:
                http.close()
        token = body.get("access_token")
        if status != 200 or not isinstance(token, str) or not token:
            raise RefreshFailed(
                f"Google did not accept the service-account key (HTTP {status}). The key may have been "
                "deleted in Google Cloud; create a new one and choose it again."
            )
        lifetime = body.get("expires_in", 3600)
        lifetime = lifetime if isinstance(lifetime, int) and 0 < lifetime <= 86400 else 3600
        return AccessToken(token, time.time() + lifetime, "service_account", self.account)
