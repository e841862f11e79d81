"""The fake Google's brain, shared by the loopback HTTPS server and the in-process transport.

Requests arrive as FakeRequest, leave as FakeResponse (whose body is an iterator, so a 100 MB answer
is never held in memory). Three layers, in order: scripted faults, the token endpoint, then the
API — bearer-token and scope checks in front of the demo's in-memory Search Console.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from tests.fakegoogle import bodies
from tests.fakegoogle.inspection_quotas import InspectionQuotas
from tests.fakegoogle.inspection_quotas import message as inspection_message
from tests.fakegoogle.quotas import Quotas
from tests.fakegoogle.scopes import ALL_SCOPES, required_scopes

TOKEN_URL = "https://oauth2.googleapis.com/token"
TOKEN_HOST = "oauth2.googleapis.com"
Framing = Literal["length", "chunked", "close"]
_INSPECT = "/v1/urlInspection/index:inspect"
_ANALYTICS = re.compile(r"/webmasters/v3/sites/([^/]+)/searchAnalytics/query")


@dataclass(frozen=True)
class FakeRequest:
    method: str
    host: str  # without port
    path: str  # raw (percent-encoded), without the query
    query: str  # raw query string
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    @property
    def bearer(self) -> str | None:
        value = self.headers.get("authorization", "")
        if value[:7].lower() == "bearer ":
            return value[7:]
        return None


@dataclass
class FakeResponse:
    status: int
    headers: list[tuple[str, str]]
    chunks: Iterable[bytes]
    framing: Framing = "length"
    content_length: int | None = None  # with "length": the header to send (None: the true length)
    delay: float = 0.0  # seconds between chunks
    reset_after: int | None = None  # abort the connection after this many body bytes

    @classmethod
    def json(
        cls, status: int, doc: object, headers: Iterable[tuple[str, str]] = (), *, pretty: bool = True
    ) -> FakeResponse:
        body = bodies.encode(doc, pretty=pretty)
        return cls(status, [("content-type", "application/json; charset=UTF-8"), *headers], [body])


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    host: str
    path: str
    query: str
    authorized: bool  # an Authorization header was present
    token: str | None  # the bearer token, if any
    body: bytes
    via: str  # "https" (loopback TLS) or "transport" (in-process)


@dataclass(frozen=True)
class TokenRequest:
    grant: str  # "jwt-bearer" or "refresh_token"
    scopes: tuple[str, ...]  # as requested (sorted)
    ok: bool


def _padded(body: bytes, size: int | None, chunk: int, endless: bool) -> Iterator[bytes]:
    """The body, then spaces up to ``size`` (JSON stays valid), produced lazily."""
    view = memoryview(body)
    for start in range(0, len(body), chunk):
        yield bytes(view[start : start + chunk])
    if endless:
        filler = b" " * chunk
        while True:
            yield filler
    left = max(0, (size or 0) - len(body))
    filler = b" " * chunk
    while left > 0:
        n = min(chunk, left)
        yield filler[:n]
        left -= n


@dataclass
class Fault:
    """One scripted misbehaviour, used for the next ``remaining`` matching requests."""

    pattern: re.Pattern[str]
    method: str | None
    remaining: int
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    size: int | None = None
    compact: bytes | None = None  # the body for a request with prettyPrint=false (None: ``body`` either way)
    framing: Framing = "length"
    content_length: int | None = None
    chunk_size: int = 65536
    delay: float = 0.0
    reset_after: int | None = None
    endless: bool = False
    hits: int = 0
    bytes_out: int = 0  # body bytes handed to the server so far (how far a reader pulled)

    def matches(self, request: FakeRequest) -> bool:
        if self.remaining <= 0:
            return False
        if self.method is not None and self.method != request.method:
            return False
        return self.pattern.search(request.host + request.path) is not None

    def _counted(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.bytes_out += len(chunk)
            yield chunk

    def response(self, pretty: bool = True, gzip: bool = False) -> FakeResponse:
        """The scripted answer; a plain JSON document (a dict body, whole, neither padded nor cut nor
        slowed) is gzipped when the request asks as Google requires (`bodies.gzip_wanted`)."""
        framing = self.framing
        body = self.body if pretty or self.compact is None else self.compact
        plain = self.size is None and not self.endless and self.reset_after is None and not self.delay
        if gzip and self.compact is not None and plain and framing == "length" and self.content_length is None:
            return FakeResponse(
                self.status,
                [*self.headers, ("content-encoding", "gzip")],
                self._counted(iter([bodies.gzipped(body)])),
            )
        if self.size is not None and framing == "length" and self.content_length is None:
            length: int | None = max(self.size, len(body))
        else:
            length = self.content_length
        return FakeResponse(
            self.status,
            list(self.headers),
            self._counted(_padded(body, self.size, self.chunk_size, self.endless)),
            framing=framing,
            content_length=length if framing == "length" and (length is not None) else None,
            delay=self.delay,
            reset_after=self.reset_after,
        )


def _as_asked(response: FakeResponse, gzip: bool) -> FakeResponse:
    """An API's whole JSON answer, gzipped when the request asked as Google requires (errors too)."""
    json_body = "json" in dict(response.headers).get("content-type", "")
    if not gzip or not json_body or not isinstance(response.chunks, list) or response.framing != "length":
        return response
    body = bodies.gzipped(b"".join(response.chunks))
    return dataclasses.replace(response, headers=[*response.headers, ("content-encoding", "gzip")], chunks=[body])


@dataclass
class OAuthClient:
    client_id: str
    client_secret: str
    refresh_token: str
    granted: frozenset[str] = ALL_SCOPES
    revoked: bool = False


@dataclass
class Backend:
    """Everything the fake knows: issued tokens, faults, logs and the API behind them."""

    api: Callable[[httpx.Request], httpx.Response]
    service_account_email: str
    service_account_kid: str
    service_account_public_pem: str
    oauth: OAuthClient
    token_lifetime: int = 3600
    log: list[LoggedRequest] = field(default_factory=list)
    token_requests: list[TokenRequest] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    tokens: dict[str, frozenset[str]] = field(default_factory=dict)
    #: Further Google accounts, each with its own Search Console (FakeGoogle.add_account): name -> API.
    accounts: dict[str, Callable[[httpx.Request], httpx.Response]] = field(default_factory=dict)
    token_accounts: dict[str, str] = field(default_factory=dict)  # access token -> account, when not the default
    #: Further service accounts the token endpoint accepts: key id -> (client_email, public key PEM).
    service_account_keys: dict[str, tuple[str, str]] = field(default_factory=dict)
    disabled_services: set[str] = field(default_factory=set)
    #: Google's Search Analytics quotas, when a test turns them on (FakeGoogle.enforce_quotas).
    quotas: Quotas | None = None
    #: URL Inspection's per-property (and project) quotas, when a test turns them on.
    inspection_quotas: InspectionQuotas | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _api_lock: threading.Lock = field(default_factory=threading.Lock)  # the demo is not thread-safe
    _counter: Iterator[int] = field(default_factory=itertools.count)

    # -- scripting --------------------------------------------------------------------------------

    def add_fault(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def mint_token(self, scopes: Iterable[str] = ALL_SCOPES, account: str | None = None) -> str:
        """A token for `account` (one added with FakeGoogle.add_account); None: the default account."""
        token = f"ya29.fake-{next(self._counter)}-{secrets.token_urlsafe(18)}"
        with self._lock:
            self.tokens[token] = frozenset(scopes)
            if account is not None:
                self.token_accounts[token] = account
        return token

    def account_of(self, token: str | None) -> str | None:
        """Whose token it is: an added account's name, or None for the default account."""
        with self._lock:
            return self.token_accounts.get(token or "")

    def revoke_tokens(self) -> None:
        """Every access token issued so far stops working (the next call gets a 401)."""
        with self._lock:
            self.tokens.clear()

    def scopes_for_token(self, token: str | None) -> frozenset[str] | None:
        """The hook DemoGoogle uses for its own scope checks: None for an unknown token."""
        if token is None:
            return None
        with self._lock:
            return self.tokens.get(token)

    # -- serving ----------------------------------------------------------------------------------

    def handle(self, request: FakeRequest, via: str) -> FakeResponse:
        token = request.bearer
        with self._lock:
            self.log.append(
                LoggedRequest(
                    method=request.method,
                    host=request.host,
                    path=request.path,
                    query=request.query,
                    authorized="authorization" in request.headers,
                    token=token,
                    body=request.body,
                    via=via,
                )
            )
            for fault in self.faults:
                if fault.matches(request):
                    fault.remaining -= 1
                    fault.hits += 1
                    return fault.response(bodies.pretty_wanted(request.query), bodies.gzip_wanted(request.headers))
        if request.host == TOKEN_HOST:
            return self._token_endpoint(request)
        return _as_asked(self._api(request, token), bodies.gzip_wanted(request.headers))

    def _api(self, request: FakeRequest, token: str | None) -> FakeResponse:
        pretty = bodies.pretty_wanted(request.query)  # every API's answers, errors too, as asked
        scopes = self.scopes_for_token(token)
        if scopes is None:
            challenge = [("www-authenticate", 'Bearer realm="x"')]
            return FakeResponse.json(401, bodies.unauthenticated(), challenge, pretty=pretty)
        needed = required_scopes(request.method, request.host, request.path)
        if needed is not None:
            accepted, service = needed
            if service in self.disabled_services:
                return FakeResponse.json(403, bodies.api_not_enabled(service), pretty=pretty)
            if not accepted & scopes:
                return FakeResponse.json(403, bodies.scope_insufficient(service), pretty=pretty)
        url = f"https://{request.host}{request.path}" + (f"?{request.query}" if request.query else "")
        account = self.account_of(token)
        quotas = self.quotas
        match = _ANALYTICS.fullmatch(request.path)
        if quotas is not None and match is not None and request.method == "POST":
            exceeded = quotas.check(urllib.parse.unquote(match[1]), account or "")
            if exceeded is not None:
                retry = [("retry-after", str(quotas.retry_after))]
                return FakeResponse.json(429, bodies.analytics_quota(exceeded), retry, pretty=pretty)
        inspection = self.inspection_quotas
        if inspection is not None and request.path == _INSPECT and request.method == "POST":
            try:
                site = str(json.loads(request.body or b"{}").get("siteUrl", ""))
            except ValueError:
                site = ""
            exceeded = inspection.check(site)
            if exceeded is not None:
                retry = [("retry-after", str(inspection.retry_after))] if exceeded == "minute" else []
                error = bodies.google_error(429, inspection_message(exceeded), reason="rateLimitExceeded")
                return FakeResponse.json(429, error, retry, pretty=pretty)
        api = self.accounts[account] if account is not None else self.api  # each account its own Search Console
        upstream = api(httpx.Request(request.method, url, headers=dict(request.headers), content=request.body))
        body = upstream.read()
        headers = [(k, v) for k, v in upstream.headers.items() if k.lower() in ("content-type", "retry-after")]
        if "json" in upstream.headers.get("content-type", ""):
            body = bodies.reshaped(body, pretty=pretty)
        return FakeResponse(upstream.status_code, headers, [body])

    # -- oauth2.googleapis.com/token --------------------------------------------------------------

    def _token_endpoint(self, request: FakeRequest) -> FakeResponse:
        if request.method != "POST" or request.path != "/token":
            return FakeResponse.json(404, bodies.not_found())
        form = {k: v[-1] for k, v in urllib.parse.parse_qs(request.body.decode("ascii", "replace")).items()}
        grant = form.get("grant_type", "")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self._jwt_grant(form.get("assertion", ""))
        if grant == "refresh_token":
            return self._refresh_grant(form)
        return FakeResponse.json(400, bodies.token_error("unsupported_grant_type", "Invalid grant_type."))

    def _issue(self, grant: str, scopes: frozenset[str], account: str | None = None) -> FakeResponse:
        token = self.mint_token(scopes, account if account in self.accounts else None)
        with self._lock:
            self.token_requests.append(TokenRequest(grant, tuple(sorted(scopes)), True))
        return FakeResponse.json(
            200,
            {
                "access_token": token,
                "expires_in": self.token_lifetime,
                "token_type": "Bearer",
                "scope": " ".join(sorted(scopes)),
            },
        )

    def _refuse(self, grant: str, scopes: Iterable[str], status: int, error: str, text: str) -> FakeResponse:
        with self._lock:
            self.token_requests.append(TokenRequest(grant, tuple(sorted(scopes)), False))
        return FakeResponse.json(status, bodies.token_error(error, text))

    def _jwt_grant(self, assertion: str) -> FakeResponse:
        from google.auth import exceptions, jwt

        keys = {self.service_account_kid: (self.service_account_email, self.service_account_public_pem)}
        keys.update(self.service_account_keys)
        try:
            claims = jwt.decode(assertion, certs={kid: pem for kid, (_, pem) in keys.items()}, audience=TOKEN_URL)
            kid = jwt.decode_header(assertion).get("kid")
        except (exceptions.GoogleAuthError, ValueError):
            return self._refuse("jwt-bearer", (), 400, "invalid_grant", "Invalid JWT Signature.")
        scopes = frozenset(str(claims.get("scope", "")).split())
        if kid not in keys or claims.get("iss") != keys[kid][0]:
            return self._refuse("jwt-bearer", scopes, 400, "invalid_grant", "Invalid issuer.")
        if not scopes:
            return self._refuse("jwt-bearer", scopes, 400, "invalid_scope", "Empty or missing scope not allowed.")
        if int(claims.get("exp", 0)) - int(claims.get("iat", 0)) > 3600 or claims["exp"] < time.time():
            return self._refuse("jwt-bearer", scopes, 400, "invalid_grant", "Invalid JWT: bad exp/iat.")
        return self._issue("jwt-bearer", scopes, str(claims["iss"]))

    def _refresh_grant(self, form: Mapping[str, str]) -> FakeResponse:
        client = self.oauth
        requested = frozenset(form.get("scope", "").split())
        if form.get("client_id") != client.client_id or form.get("client_secret") != client.client_secret:
            return self._refuse("refresh_token", requested, 401, "invalid_client", "The OAuth client was not found.")
        if client.revoked or form.get("refresh_token") != client.refresh_token:
            return self._refuse("refresh_token", requested, 400, "invalid_grant", "Token has been expired or revoked.")
        if requested and not requested <= client.granted:
            return self._refuse("refresh_token", requested, 400, "invalid_scope", "Some requested scopes were invalid.")
        return self._issue("refresh_token", requested or client.granted)


def summarise(log: Iterable[LoggedRequest]) -> list[tuple[str, str, str]]:
    """(method, host, path) triples: handy in assertion messages."""
    return [(entry.method, entry.host, entry.path) for entry in log]


def json_body(entry: LoggedRequest) -> Any:
    return json.loads(entry.body) if entry.body else None
