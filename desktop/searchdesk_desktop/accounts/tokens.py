"""Short-lived access tokens for the server; the long-lived secret stays here.

``credentials/token`` on the agent socket is answered from a :class:`TokenProvider`. Each one is
synchronous and thread-safe: the listener calls it from a worker thread so that a slow Google never
stalls the UI or another client. The grants, and the client they go through, are the server's
(``searchdesk_server.google.grants``).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from searchdesk_server.agent.protocol import ErrorCode
from searchdesk_server.deadlines import TOKEN_HANDED_OUT_SECONDS
from searchdesk_server.google import grants
from searchdesk_server.google.errors import GoogleError

from ..refusals import Refusal
from .keystore import SignInRecord
from .signin import OAuthClient, ServiceAccountKey, SignInRevoked, TokenRequestFailed, blocking, google_failure

#: Refresh when less than this is left, so a token handed out lives long enough to be used.
MIN_LIFETIME = TOKEN_HANDED_OUT_SECONDS

TokenKind = Literal["oauth", "service_account", "demo"]


class ScopeNotGranted(Refusal):
    """The sign-in lacks a scope a server asked for (`missing`, sent along on the agent socket)."""

    code = ErrorCode.SCOPE_NOT_GRANTED

    def __init__(self, missing: Sequence[str]) -> None:
        self.missing = tuple(missing)
        self.data = {"missing": list(self.missing)}
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


class DemoTokens:
    """The demo has no Google: tokens are labelled, random and useless anywhere else."""

    kind: TokenKind = "demo"
    account = "demo@searchdesk.invalid"

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        return AccessToken("demo-" + secrets.token_urlsafe(24), time.time() + 3600, "demo", self.account)


class OAuthTokens:
    """Access tokens from the stored refresh token; one cached token covers every granted scope."""

    kind: TokenKind = "oauth"

    def __init__(self, client: OAuthClient, record: SignInRecord) -> None:
        self.client = client
        self.record = record
        self.account = record.account
        self._lock = threading.Lock()
        self._cached: AccessToken | None = None

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        missing = grants.missing_scopes(self.record.scopes, scopes)
        if missing:
            raise ScopeNotGranted(missing)
        with self._lock:
            cached = self._cached
            if cached is None or force_refresh or cached.expires_in() < MIN_LIFETIME:
                self._cached = cached = self._refresh()
            return cached

    def _refresh(self) -> AccessToken:
        form = grants.refresh_form(self.client.client_id, self.client.client_secret, self.record.refresh_token)
        try:
            grant = blocking(grants.request_grant, form, credential="oauth")
        except GoogleError as err:
            if err.reason in ("invalid_grant", "unauthorized_client"):
                raise SignInRevoked() from None
            refused = "Google turned down SearchDesk's request for access just now. Try again shortly."
            raise TokenRequestFailed(google_failure(err, refused)) from None
        return AccessToken(grant.access_token, time.time() + grant.lifetime, "oauth", self.account)


class ServiceAccountTokens:
    """Access tokens for a service-account key (JWT bearer grant), one cache entry per scope set."""

    kind: TokenKind = "service_account"

    def __init__(self, key: ServiceAccountKey) -> None:
        self.key = key
        self.account = key.client_email
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
        try:
            form = grants.assertion_form(self.key.info, scopes, origin=self.key.path.name)
            grant = blocking(grants.request_grant, form, credential="service_account")
        except GoogleError as err:
            refused = (
                "Google did not accept the service-account key. The key may have been "
                "deleted in Google Cloud; create a new one and choose it again."
            )
            raise TokenRequestFailed(google_failure(err, refused)) from None
        return AccessToken(grant.access_token, time.time() + grant.lifetime, "service_account", self.account)
